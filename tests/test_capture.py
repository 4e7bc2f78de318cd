"""lcr-pi capture: settled frames from a frame source become a labelled roll folder that eval can read."""

from __future__ import annotations

import io
import json

import cv2
import numpy as np
import pytest

from lcr_pi.camera import FolderSource, ListSource
from lcr_pi.cli import main
from lcr_pi.commands.capture import capture, parse_roll
from lcr_pi.errors import UserError
from lcr_pi.vision.dataset import load_roll_folder
from lcr_pi.vision.reader import DieReading, Reading
from lcr_pi.vision.render import roll_sequence


@pytest.fixture(scope="module")
def two_rolls():
    fa, a = roll_sequence(np.random.default_rng(9), size=(480, 360), faces=["2", "5"], n_frames=24)
    fb, b = roll_sequence(np.random.default_rng(9), size=(480, 360), faces=["6", "3"], n_frames=24)
    return fa + fb, (a, b)


class GuessReader:
    """Guesses the faces of the roll being shown (first roll right, second one wrong)."""

    def __init__(self, guesses):
        self.guesses = list(guesses)

    def __call__(self, frame):
        faces = self.guesses.pop(0)
        dice = tuple(DieReading(f, 0.95, (0, 0, 10, 10), (), (5, 5), "centre", True) for f in faces)
        return Reading(dice, "clear", message="Read.")


def test_each_settled_roll_is_saved_with_the_accepted_or_typed_faces(tmp_path, two_rolls):
    frames, _ = two_rolls
    answers = iter(["", "6 3"])  # Enter accepts the guess; the second guess is corrected
    prompts, said = [], []

    def ask(prompt):
        prompts.append(prompt)
        return next(answers)

    n = capture(ListSource(frames), GuessReader([("2", "5"), ("6", "6")]), tmp_path / "mine", ask=ask, say=said.append)
    assert n == 2
    assert "faces [2 5]" in prompts[0] and "faces [6 6]" in prompts[1]
    items = load_roll_folder(tmp_path / "mine")
    assert [i.faces for i in items] == [("2", "5"), ("6", "3")]
    lines = [json.loads(x) for x in (tmp_path / "mine" / "labels.jsonl").read_text().splitlines()]
    assert lines[1]["reader"] == ["6", "6"] and "boxes" not in lines[1]
    saved = cv2.imread(str(items[0].image_path))
    assert saved.shape == frames[0].shape


def test_skip_quit_typos_and_adding_to_a_folder(tmp_path, two_rolls):
    frames, _ = two_rolls
    said = []
    answers = iter(["s", "L x", "q"])
    n = capture(ListSource(frames), None, tmp_path / "mine", ask=lambda p: next(answers), say=said.append)
    assert n == 0 and "'x' is not a face" in said[0]
    assert not (tmp_path / "mine" / "labels.jsonl").exists()
    answers = iter(["6 3"])
    assert capture(ListSource(frames[24:]), None, tmp_path / "mine", ask=lambda p: next(answers), say=said.append) == 1
    answers = iter(["2 5"])
    assert capture(ListSource(frames[:24]), None, tmp_path / "mine", ask=lambda p: next(answers), say=said.append) == 1
    assert [i.image_path.name for i in load_roll_folder(tmp_path / "mine")] == ["0000.jpg", "0001.jpg"]


def test_capture_command_from_a_folder_of_frames_with_typed_faces(tmp_path, two_rolls, monkeypatch, capsys):
    frames, _ = two_rolls
    src = tmp_path / "frames"
    src.mkdir()
    for i, f in enumerate(frames):
        cv2.imwrite(str(src / f"{i:03d}.png"), f)
    monkeypatch.setattr("sys.stdin", io.StringIO("2 5\n6 3\n"))
    assert main(["capture", "--camera", str(src), "--kind", "pip", "--calibration", str(tmp_path / "none.json"),
                 str(tmp_path / "out")]) == 0
    assert "2 rolls saved" in capsys.readouterr().out
    assert [i.faces for i in load_roll_folder(tmp_path / "out")] == [("2", "5"), ("6", "3")]
    assert FolderSource(tmp_path / "out" / "images").paths  # the saved frames replay as a frame source


def test_typed_faces_are_checked():
    assert parse_roll("right centre . W")[0] == ("R", "C", "dot", "W")
    with pytest.raises(UserError, match="'7' is not a face"):
        parse_roll("7")


def test_a_leaning_die_is_marked_with_a_star_and_eval_judges_its_picture_apart(tmp_path, two_rolls):
    """``*`` after a face: that die leans (the table re-rolls it). The reader's guess shows the dice it
    thinks may lean the same way, so Enter keeps them; typed faces replace the guess's marks."""
    frames, _ = two_rolls

    class LeaningGuess:
        def __call__(self, frame):
            dice = (DieReading("2", 0.95, (0, 0, 10, 10), (), (5, 5), "left", True),
                    DieReading("5", 0.4, (20, 0, 30, 10), (), (25, 5), "right", False, cocked=True))
            return Reading(dice, "cocked", (1,), "the die at the right may be leaning (cocked), so it cannot be read.")

    prompts, said = [], []
    answers = iter(["", "6 3*"])
    n = capture(ListSource(frames), LeaningGuess(), tmp_path / "mine",
                ask=lambda p: prompts.append(p) or next(answers), say=said.append)
    assert n == 2 and "faces [2 5*]" in prompts[0] and "saved images/0001.jpg: 6 3*" in said
    items = load_roll_folder(tmp_path / "mine")
    assert [i.cocked for i in items] == [(False, True), (False, True)] and all(i.leaning for i in items)
    answers = iter(["6 3"])  # no star: a flat roll, and no "cocked" key in its label
    capture(ListSource(frames[24:]), LeaningGuess(), tmp_path / "mine", ask=lambda p: next(answers), say=said.append)
    last = json.loads((tmp_path / "mine" / "labels.jsonl").read_text().splitlines()[-1])
    assert "cocked" not in last and load_roll_folder(tmp_path / "mine")[-1].cocked == ()


def test_typed_leaning_marks_are_parsed():
    assert parse_roll("L c* dot") == (("L", "C", "dot"), (False, True, False))
    assert parse_roll("6*, 4") == (("6", "4"), (True, False))
    with pytest.raises(UserError, match=r"'\*' is not a face"):
        parse_roll("6 *")


def test_an_output_that_cannot_hold_a_roll_folder_is_named_before_the_first_roll(tmp_path, two_rolls):
    # Found by an audit (2026-12-03): a file, a path under a file, or a labels.jsonl that is a folder
    # gave a traceback, the last after the player had typed the first roll.
    frames, _ = two_rolls
    (tmp_path / "afile").write_text("x")
    (tmp_path / "odd" / "labels.jsonl").mkdir(parents=True)
    for out, problem in ((tmp_path / "afile", "cannot capture into"), (tmp_path / "afile" / "sub", "cannot capture into"),
                         (tmp_path / "odd", "is not a file")):
        asked = []
        with pytest.raises(UserError, match=problem):
            capture(ListSource(frames), None, out, ask=asked.append, say=lambda s: None)
        assert asked == []


def test_a_roll_is_added_on_a_line_of_its_own_after_a_torn_last_line(tmp_path, two_rolls):
    frames, _ = two_rolls
    out = tmp_path / "mine"
    capture(ListSource(frames[:24]), None, out, ask=lambda p: "2 5", say=lambda s: None)
    labels = out / "labels.jsonl"
    labels.write_text(labels.read_text() + '{"image": "images/9')  # a power cut tore the last line
    capture(ListSource(frames[24:]), None, out, ask=lambda p: "6 3", say=lambda s: None)
    lines = labels.read_text().splitlines()
    assert len(lines) == 3 and json.loads(lines[2])["faces"] == ["6", "3"]


def test_a_picture_the_reader_refuses_gets_no_guess_and_the_capture_goes_on(tmp_path, two_rolls):
    frames, _ = two_rolls
    said = []

    def refuse(frame):
        raise UserError("frame is too small to hold dice (16x16 pixels)")

    n = capture(ListSource(frames), refuse, tmp_path / "mine", ask=lambda p: "2 5", say=said.append)
    assert n == 2 and any("no guess for this picture" in s for s in said)


def test_a_camera_unplugged_during_the_capture_ends_it_and_the_saved_rolls_are_kept(tmp_path, two_rolls, monkeypatch):
    # Found by an audit: a webcam that stopped sending frames kept the capture spinning a core, silent, forever.
    from lcr_pi.commands import capture as capture_module

    frames, _ = two_rolls

    class Unplugged:
        """The first roll's frames, then nothing more (a live camera: never exhausted)."""

        def __init__(self):
            self.frames = list(frames[: len(frames) // 2])

        def read(self):
            return self.frames.pop(0) if self.frames else None

    monkeypatch.setattr(capture_module, "NO_FRAME_SECONDS", 0.3)
    said = []
    assert capture(Unplugged(), GuessReader([("2", "5")]), tmp_path / "out", ask=lambda prompt: "", say=said.append) == 1
    assert "the camera gave no frames for 0.3 s" in said[-1]
    assert len(load_roll_folder(tmp_path / "out")) == 1


def test_the_capture_locks_the_pi_camera_as_the_calibration_and_the_game_do(tmp_path, two_rolls, monkeypatch, capsys):
    # Found by an audit: lcr-pi run opens the Pi camera with the calibration's locked exposure and
    # white balance, capture opened it with automatic ones: the captured rolls were other pictures.
    import lcr_pi.camera

    frames, _ = two_rolls
    locked = {"AeEnable": False, "AwbEnable": False, "ExposureTime": 16000, "AnalogueGain": 2.5,
              "ColourGains": [1.8, 1.4]}
    h, w = frames[0].shape[:2]
    cal = tmp_path / "table.json"
    cal.write_text(json.dumps({"version": 1, "resolution": [w, h], "tray": {"box": [0, 0, w, h]},
                               "camera_controls": locked}))
    opened = []

    def open_frame_source(spec, **options):
        opened.append(options.get("controls"))
        return ListSource(frames)

    monkeypatch.setattr(lcr_pi.camera, "open_frame_source", open_frame_source)
    monkeypatch.setattr("sys.stdin", io.StringIO("q\n"))
    assert main(["capture", "--camera", "picamera2", "--calibration", str(cal), "--models", str(tmp_path / "none"),
                 str(tmp_path / "out")]) == 0
    assert opened == [locked]


def test_a_roll_mixing_pip_and_lcr_faces_or_faces_of_another_kind_is_refused(tmp_path, two_rolls):
    # Found by an audit (2026-12-04): "R . 1" was saved as an LCR R and dot beside a pip 1, and eval
    # then took the whole folder's dice kind for "auto"; with --kind lcr a typed 1 was saved as a pip 1.
    with pytest.raises(UserError, match="'1' is a pip face and 'R' an LCR one"):
        parse_roll("R . 1")
    with pytest.raises(UserError, match=r"'1' is not a face of lcr dice \(--kind lcr: L, C, R, dot\)"):
        parse_roll("L 1", "lcr")
    with pytest.raises(UserError, match="'W' is not a face of lcr dice"):
        parse_roll("W C", "lcr")
    with pytest.raises(UserError, match="'L' is not a face of pip dice"):
        parse_roll("L", "pip")
    assert parse_roll("dot W", "wild")[0] == ("dot", "W") and parse_roll("6 1", "pip")[0] == ("6", "1")
    frames, _ = two_rolls
    said = []
    answers = iter(["L C 1", "L C dot", "s"])
    assert capture(ListSource(frames), None, tmp_path / "mine", ask=lambda p: next(answers), say=said.append,
                   kind="lcr") == 1
    assert "'1' is not a face of lcr dice" in said[0]
    assert [i.faces for i in load_roll_folder(tmp_path / "mine")] == [("L", "C", "dot")]


def test_a_picture_deleted_by_hand_does_not_lend_its_name_and_label_to_the_next_roll(tmp_path, two_rolls):
    # Found by an audit (2026-12-04): with the last picture deleted (its label left), the next roll was
    # saved under its name, and the old label ("2 5") then graded the new picture ("6 3"), silently.
    frames, _ = two_rolls
    out = tmp_path / "mine"
    answers = iter(["2 5", "6 3"])
    assert capture(ListSource(frames), None, out, ask=lambda p: next(answers), say=lambda s: None) == 2
    (out / "images" / "0001.jpg").unlink()
    assert capture(ListSource(frames[24:]), None, out, ask=lambda p: "6 3", say=lambda s: None) == 1
    lines = [json.loads(x) for x in (out / "labels.jsonl").read_text().splitlines()]
    assert [x["image"] for x in lines] == ["images/0000.jpg", "images/0001.jpg", "images/0002.jpg"]
    assert sorted(p.name for p in (out / "images").iterdir()) == ["0000.jpg", "0002.jpg"]


@pytest.mark.parametrize("read_only", ["images", "labels.jsonl"])
def test_a_read_only_images_folder_or_labels_file_is_named_before_the_first_roll(tmp_path, two_rolls, monkeypatch,
                                                                                  read_only):
    # Found by an audit (2026-12-04): both were named only once the first roll's faces were typed, a
    # read-only labels.jsonl after that roll's picture had been saved beside the labels.
    import pathlib
    import tempfile

    frames, _ = two_rolls
    out = tmp_path / "mine"
    capture(ListSource(frames[:24]), None, out, ask=lambda p: "2 5", say=lambda s: None)
    mkstemp, path_open = tempfile.mkstemp, pathlib.Path.open

    def refused(path):  # as a read-only folder or file refuses, whoever runs the tests (root too)
        if path.endswith(read_only):
            raise PermissionError(13, "Permission denied")

    def refusing_mkstemp(*args, dir=None, **kwargs):
        refused(str(dir))
        return mkstemp(*args, dir=dir, **kwargs)

    def refusing_open(self, mode="r", *args, **kwargs):
        if mode.strip("b") != "r":
            refused(str(self))
        return path_open(self, mode, *args, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", refusing_mkstemp)
    monkeypatch.setattr(pathlib.Path, "open", refusing_open)
    asked = []
    with pytest.raises(UserError, match="Permission denied"):
        capture(ListSource(frames[24:]), None, out, ask=lambda p: asked.append(p) or "6 3", say=lambda s: None)
    assert asked == [] and sorted(p.name for p in (out / "images").iterdir()) == ["0000.jpg"]


def test_a_limit_of_no_roll_is_refused(tmp_path, two_rolls, capsys):
    assert main(["capture", "--camera", str(tmp_path), "--limit", "0", str(tmp_path / "out")]) == 2
    assert "--limit must be 1 or more rolls, not 0" in capsys.readouterr().err and not (tmp_path / "out").exists()


def test_quit_and_skip_as_words_star_asked_about_and_the_summary_on_a_line_of_its_own(tmp_path, two_rolls):
    # Found by a review (2026-12-04): only "q" and "s" were taken ("quit" was called no face); "star" was
    # saved as a W for dice whose C is a star; at the end of the input the summary ran on the prompt's line.
    frames, _ = two_rolls
    said = []
    answers = iter(["skip", "quit"])
    assert capture(ListSource(frames), None, tmp_path / "mine", ask=lambda p: next(answers), say=said.append) == 0
    assert not any("is not a face" in line for line in said)
    with pytest.raises(UserError, match="type C for a centre face shown as a star, or W for the wild face"):
        parse_roll("L star .")
    with pytest.raises(UserError, match="s skips the picture, q stops"):
        parse_roll("L x")

    def ended(prompt):
        raise EOFError

    said.clear()
    assert capture(ListSource(frames), None, tmp_path / "mine", ask=ended, say=said.append) == 0
    assert said[-1] == ""  # a new line after the prompt, before the command's summary


def test_a_typed_roll_of_another_number_of_dice_than_the_reader_found_is_kept_and_said(tmp_path, two_rolls):
    # Found by an audit (2026-12-04): nothing said that two faces were typed where the reader saw three.
    frames, _ = two_rolls
    said = []
    answers = iter(["2", "6 6"])
    n = capture(ListSource(frames), GuessReader([("2", "5"), ("6", "6")]), tmp_path / "mine",
                ask=lambda p: next(answers), say=said.append)
    assert n == 2 and [i.faces for i in load_roll_folder(tmp_path / "mine")] == [("2",), ("6", "6")]
    saved = [line for line in said if line.startswith("saved")]
    assert saved[0] == ("saved images/0000.jpg: 2 (1 face typed; the reader found 2 dice: check the roll if "
                        "one was left out)")
    assert saved[1] == "saved images/0001.jpg: 6 6"
