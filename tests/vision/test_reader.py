"""The dice reader: real photos, rendered scenes, verdict logic and bad input."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from lcr_pi.errors import UserError
from lcr_pi.vision.classify import CLASSES, classify_crops, crops_to_blob, softmax
from lcr_pi.vision.dataset import load_roll_folder, read_image
from lcr_pi.vision.detect import Detection, detector_window, prepare_detector_input, prepare_detector_window
from lcr_pi.vision.evaluate import score_image
from lcr_pi.vision.reader import _BACKGROUND, VERDICTS, DiceReader, ReaderSettings, interpret, read_dice
from lcr_pi.vision.render import random_scene

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
MODELS = Path(__file__).resolve().parents[2] / "models"


@pytest.fixture(scope="module")
def reader():
    return DiceReader()


def probs_for(*faces, share=0.97):
    """A probability row per die, ``share`` on the named class and the rest spread evenly."""
    rows = []
    for face in faces:
        row = np.full(len(CLASSES), (1 - share) / (len(CLASSES) - 1))
        row[CLASSES.index(face)] = share
        rows.append(row)
    return np.array(rows)


def dets(n, score=0.9):
    return [Detection(100 + 300 * i, 100, 50, 50, 0.0, score) for i in range(n)]


# ----------------------------------------------------------------------------- verdict logic (no models)

def test_clear_reading_names_faces_left_to_right():
    r = interpret(dets(3), probs_for("6", "2", "4"), (480, 1000), "pip", ReaderSettings())
    assert (r.verdict, r.faces, r.unsure_dice) == ("clear", ("6", "2", "4"), ())
    assert r.message == "Read 3 dice: 6, 2, 4."


def test_lcr_dot_and_auto_kind():
    r = interpret(dets(3), probs_for("L", "1", "R"), (480, 1000), "auto", ReaderSettings())
    assert r.kind == "lcr" and r.faces == ("L", "dot", "R")
    r = interpret(dets(2), probs_for("W", "C"), (480, 1000), "auto", ReaderSettings())
    assert r.kind == "wild" and r.faces == ("W", "C")
    r = interpret(dets(2), probs_for("1", "5"), (480, 1000), "auto", ReaderSettings())
    assert r.kind == "pip" and r.faces == ("1", "5")


def test_unsure_die_is_named_by_position():
    p = probs_for("3", "5")
    p[1] = 0
    p[1, CLASSES.index("5")], p[1, CLASSES.index("6")] = 0.55, 0.45
    r = interpret(dets(2), p, (480, 1000), "pip", ReaderSettings(sure_confidence=0.9))
    assert r.verdict == "unsure" and r.unsure_dice == (1,)
    assert "the die at the top" in r.message and not r.dice[1].sure


def test_a_die_doubted_only_for_its_face_says_which_faces_it_may_show():
    """``could_be``: the fewest faces whose shares reach the sure confidence, for a die found surely
    as one flat die; empty for a weak find, a leaning die, or faces spread too thin."""
    st = ReaderSettings(sure_confidence=0.9, sure_detection=0.4)
    p = probs_for("2", "5", "4", "6")
    p[0] = 0
    p[0, CLASSES.index("2")], p[0, CLASSES.index("3")], p[0, _BACKGROUND] = 0.55, 0.44, 0.01
    p[2] = 0
    p[2, CLASSES.index("4")], p[2, CLASSES.index("3")], p[2, CLASSES.index("1")] = 0.5, 0.3, 0.2
    p[3] = 0
    p[3, CLASSES.index("6")], p[3, CLASSES.index("5")], p[3, CLASSES.index("4")] = 0.7, 0.1, 0.2
    finds = dets(4)
    finds[3] = Detection(finds[3].cx, finds[3].cy, 50, 50, 0.0, 0.3)  # a weak peak
    r = interpret(finds, p, (480, 1400), "pip", st)
    assert r.verdict == "unsure" and r.unsure_dice == (0, 2, 3)
    assert [d.could_be for d in r.dice] == [("2", "3"), ("5",), ("4", "3", "1"), ()]
    leaning = probs_for("3", "cocked")
    leaning[1, CLASSES.index("cocked")], leaning[1, CLASSES.index("2")] = 0.6, 0.37
    r = interpret(dets(2), leaning, (480, 1000), "pip", st)
    assert r.verdict == "cocked" and r.dice[1].could_be == ()
    r = interpret(dets(2), probs_for("L", "1"), (480, 1000), "lcr", st)
    assert [d.could_be for d in r.dice] == [("L",), ("dot",)]
    thin = probs_for("2", "5")
    thin[0] = 0
    thin[0, CLASSES.index("2")], thin[0, CLASSES.index("3")], thin[0, _BACKGROUND] = 0.5, 0.3, 0.2
    r = interpret(dets(2), thin, (480, 1000), "pip", st)  # all faces together short of the sure share
    assert r.unsure_dice == (0,) and r.dice[0].could_be == ()


def test_a_weak_peak_is_sure_only_when_the_face_is_read_beyond_the_rescue_confidence():
    weak = [Detection(100, 100, 50, 50, 0.0, 0.9), Detection(400, 100, 50, 50, 0.0, 0.35)]
    strict = ReaderSettings(sure_detection=0.5, doubt_detection=0.2, sure_confidence=0.8)
    rescue = ReaderSettings(sure_detection=0.5, doubt_detection=0.2, sure_confidence=0.8,
                            rescue_detection=0.3, rescue_confidence=0.995)
    very_sure, fairly_sure = probs_for("4", "2", share=0.999), probs_for("4", "2", share=0.97)
    assert interpret(weak, very_sure, (480, 1000), "pip", strict).verdict == "unsure"  # off by default
    assert interpret(weak, very_sure, (480, 1000), "pip", rescue).verdict == "clear"
    assert interpret(weak, fairly_sure, (480, 1000), "pip", rescue).unsure_dice == (1,)
    weaker = [weak[0], Detection(400, 100, 50, 50, 0.0, 0.25)]  # below the rescue's detection floor
    assert interpret(weaker, very_sure, (480, 1000), "pip", rescue).unsure_dice == (1,)


def two_dice_and(side: float, score: float, belief: dict):
    """Two dice 50 px across read sure (a 3 and a 5), and a third find ``side`` px across with detector
    ``score`` whose class probabilities are ``belief``: the finds and their probabilities."""
    finds = dets(2) + [Detection(800, 300, side, side, 0.0, score)]
    p = probs_for("3", "5", "1")
    p[2] = 0
    for name, share in belief.items():
        p[2, CLASSES.index(name)] = share
    return finds, p


def test_a_find_far_larger_than_the_rolls_dice_that_shows_no_face_is_not_a_die():
    # Two dice 50 px across and a poker chip beside the tray found at 100 px, on which the classifier
    # sees no face and half a leaning die: without the rule the frame would be "cocked" for nothing.
    finds, p = two_dice_and(100, 0.6, {"cocked": 0.6, "background": 0.35, "1": 0.05})
    r = interpret(finds, p, (480, 1000), "pip", ReaderSettings())
    assert (r.verdict, r.faces) == ("clear", ("3", "5"))
    # Just under 1.8 times the dice it stays, and is said as a doubt.
    finds[2] = Detection(800, 300, 89, 89, 0.0, 0.6)
    assert interpret(finds, p, (480, 1000), "pip", ReaderSettings()).verdict == "cocked"
    # A large find on which the classifier sees a face is a die, doubted or not (a die seen much
    # larger than the others in a steep view must not go missing).
    finds[2] = Detection(800, 300, 100, 100, 0.0, 0.9)
    assert interpret(finds, probs_for("3", "5", "6", share=0.97), (480, 1000), "pip", ReaderSettings()).faces == ("3", "5", "6")
    finds, doubted = two_dice_and(100, 0.9, {"6": 0.3, "cocked": 0.7})
    r = interpret(finds, doubted, (480, 1000), "pip", ReaderSettings())
    assert r.faces == ("3", "5", "6") and r.verdict == "cocked"


def test_a_find_half_the_rolls_dice_size_that_shows_no_face_is_not_a_die():
    # Two dice 50 px across and the end of a cable found at 25 px, scored like a die, on which the
    # classifier sees a W (no pip die's face): it is left out instead of making the frame unsure.
    finds, p = two_dice_and(25, 0.5, {"W": 0.7, "background": 0.28, "4": 0.02})
    r = interpret(finds, p, (480, 1000), "pip", ReaderSettings())
    assert (r.verdict, r.faces) == ("clear", ("3", "5"))
    # At 30 px (0.6 of the dice) it may be a smaller die of the set: kept, and doubted.
    finds[2] = Detection(800, 300, 30, 30, 0.0, 0.5)
    assert interpret(finds, p, (480, 1000), "pip", ReaderSettings()).unsure_dice == (2,)
    # A small find showing a face is a die, however small.
    finds[2] = Detection(800, 300, 20, 20, 0.0, 0.9)
    assert interpret(finds, probs_for("3", "5", "6"), (480, 1000), "pip", ReaderSettings()).faces == ("3", "5", "6")


def test_a_side_face_beside_a_sure_die_is_not_a_die_but_a_touching_die_is():
    # An oblique view: the die's top face (a 1) and its side face (showing a 5) found 45 px apart,
    # closer than two flat dice of 50 px can lie; the pair network says the second is no die.
    finds = [Detection(100, 100, 50, 50, 0.0, 0.9), Detection(145, 100, 46, 46, 0.0, 0.5)]
    p = probs_for("1", "5")
    side_face = ([(0, 1)], np.array([[0.2, 0.0, 0.0, 0.0, 0.8]]))
    r = interpret(finds, p, (480, 1000), "pip", ReaderSettings(), pairs=side_face)
    assert (r.verdict, r.faces) == ("clear", ("1",))
    # Half as sure it is no die: it may be a die touching the other, so it is kept and doubted.
    unclear = ([(0, 1)], np.array([[0.6, 0.0, 0.0, 0.0, 0.4]]))
    assert interpret(finds, p, (480, 1000), "pip", ReaderSettings(), pairs=unclear).unsure_dice == (1,)
    # As sure it is no die but a full side and a half away: another die, kept and doubted.
    finds[1] = Detection(175, 100, 46, 46, 0.0, 0.5)
    assert interpret(finds, p, (480, 1000), "pip", ReaderSettings(), pairs=side_face).unsure_dice == (1,)


def test_cocked_die_gets_cocked_verdict():
    r = interpret(dets(2), probs_for("3", "cocked"), (480, 1000), "pip", ReaderSettings())
    assert r.verdict == "cocked" and 1 in r.unsure_dice and r.dice[1].cocked
    assert "cocked" in r.message


def _lcr(face, share, cocked):
    row = np.zeros(len(CLASSES))
    row[CLASSES.index(face)], row[CLASSES.index("cocked")] = share, cocked
    row[CLASSES.index("background")] = 1 - share - cocked
    return row


def test_at_the_table_an_lcr_dot_is_three_times_as_likely_as_a_letter_and_few_dice_lean():
    # The classifier hesitates between a dot and leaning (it was trained on as many dots as Ls and
    # on a leaning die half as often as either); at a table half an LCR die's faces are dots and one
    # die in twenty leans, so the same belief names the dot with confidence.
    p = np.array([_lcr("1", 0.8, 0.18)])
    as_trained = interpret(dets(1), p, (480, 1000), "lcr", ReaderSettings())
    at_table = interpret(dets(1), p, (480, 1000), "lcr", ReaderSettings(leaning_share=0.05))
    assert as_trained.verdict == "unsure" and at_table.verdict == "clear" and at_table.faces == ("dot",)
    # A letter gets no such help, and the background share is the classifier's.
    p = np.array([_lcr("L", 0.8, 0.18)])
    assert interpret(dets(1), p, (480, 1000), "lcr", ReaderSettings(leaning_share=0.05)).verdict == "unsure"
    # With pip dice every face is as likely: only the leaning prior changes.
    p = np.array([_lcr("4", 0.88, 0.08)])
    assert interpret(dets(1), p, (480, 1000), "pip", ReaderSettings()).verdict == "unsure"
    assert interpret(dets(1), p, (480, 1000), "pip", ReaderSettings(leaning_share=0.05)).verdict == "clear"


def test_the_pair_network_says_whether_touching_dice_lean():
    touching = [Detection(100, 100, 50, 50, 0.0, 0.9), Detection(150, 100, 50, 50, 0.0, 0.9),
                Detection(600, 100, 50, 50, 0.0, 0.9)]
    p = np.array([_lcr("L", 0.82, 0.17), _lcr("C", 0.82, 0.17), _lcr("R", 0.82, 0.17)])
    alone = interpret(touching, p, (480, 1000), "lcr", ReaderSettings())
    assert alone.verdict == "unsure" and alone.unsure_dice == (0, 1, 2)
    # Both touching dice lie flat, says the pair network: their own crops' doubt about leaning is
    # replaced; the die that touches none keeps it.
    flat = ([(0, 1)], np.array([[0.99, 0.005, 0.005, 0.0, 0.0]]))
    r = interpret(touching, p, (480, 1000), "lcr", ReaderSettings(), pairs=flat)
    assert r.verdict == "unsure" and r.unsure_dice == (2,)
    # The first leans on the second: "cocked", naming that die.
    leans = ([(0, 1)], np.array([[0.2, 0.75, 0.05, 0.0, 0.0]]))
    r = interpret(touching, p, (480, 1000), "lcr", ReaderSettings(), pairs=leans)
    assert r.verdict == "cocked" and r.dice[0].cocked and not r.dice[1].cocked
    # Weighed for a table where a pair holds a leaning die less often than in training, the same
    # belief is a doubt, not a verdict.
    table = ReaderSettings(pair_trained_share=0.35, pair_table_share=0.13)
    r = interpret(touching, p, (480, 1000), "lcr", table, pairs=leans)
    assert r.verdict == "unsure" and 0 in r.unsure_dice and not r.dice[0].cocked
    # The second find is a side face of the first die seen at a slant, says the pair network: no die
    # to announce, and no die leans.
    side_face = ([(0, 1)], np.array([[0.02, 0.0, 0.0, 0.0, 0.98]]))
    r = interpret(touching, p, (480, 1000), "lcr", ReaderSettings(), pairs=side_face)
    assert r.faces == ("L", "R") and r.unsure_dice == (1,)


def test_a_reader_without_a_pair_network_reads_as_before(tmp_path):
    import shutil

    for name in ("dice_detector.onnx", "dice_faces.onnx", "reader.json"):
        shutil.copy(MODELS / name, tmp_path / name)
    frame = random_scene(np.random.default_rng(3), size=(640, 480), n_dice=3, kind="lcr").image
    plain = DiceReader(tmp_path)
    assert plain.touching(frame, [], np.zeros((0, len(CLASSES)))) is None
    assert plain.read(frame, dice_kind="lcr").verdict in VERDICTS


def test_background_peaks_are_dropped_and_weak_peaks_make_it_unsure():
    r = interpret(dets(2), probs_for("4", "background"), (480, 1000), "pip", ReaderSettings())
    assert r.faces == ("4",) and r.verdict == "clear"
    weak = [Detection(100, 100, 50, 50, 0.0, 0.9), Detection(400, 100, 50, 50, 0.0, 0.3)]
    r = interpret(weak, probs_for("4", "2"), (480, 1000), "pip", ReaderSettings(sure_detection=0.4))
    assert r.verdict == "unsure" and r.unsure_dice == (1,)


# ----------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("frame, message", [
    (None, "numpy image array"),
    ([[0, 0, 0]], "numpy image array"),
    (np.zeros((100, 100, 3), np.float32), "uint8"),
    (np.zeros((100, 100, 5), np.uint8), "shape"),
    (np.zeros((100, 100, 3, 2), np.uint8), "shape"),
    (np.zeros((0, 0, 3), np.uint8), "empty"),
    (np.zeros((10, 10, 3), np.uint8), "too small"),
])
def test_bad_frames_get_clear_errors(reader, frame, message):
    with pytest.raises(UserError, match=message):
        reader.read(frame)


def test_bad_kind(reader):
    with pytest.raises(UserError, match="dice kind"):
        reader.read(np.zeros((100, 100, 3), np.uint8), dice_kind="d20")


@pytest.mark.parametrize("value", [0, 128, 255])
def test_blank_frames_have_no_dice(reader, value):
    r = reader.read(np.full((480, 640, 3), value, np.uint8))
    assert r.verdict == "no_dice" and r.dice == () and r.message


def test_noise_grey_and_bgra_frames_do_not_crash(reader):
    rng = np.random.default_rng(0)
    assert reader.read(rng.integers(0, 256, (480, 640, 3), dtype=np.uint8)).verdict in VERDICTS
    assert reader.read(rng.integers(0, 256, (480, 640), dtype=np.uint8)).verdict in VERDICTS
    assert reader.read(rng.integers(0, 256, (480, 640, 4), dtype=np.uint8)).verdict in VERDICTS


def test_missing_models_named(tmp_path):
    with pytest.raises(UserError, match="missing model file"):
        DiceReader(tmp_path)


def test_models_an_old_opencv_cannot_load_name_the_opencv_they_need(monkeypatch):
    import cv2

    def refuse(path, *args, **kwargs):
        raise cv2.error("ERROR during processing node [Add]")

    monkeypatch.setattr(cv2, "__version__", "4.10.0")
    monkeypatch.setattr(cv2.dnn, "readNetFromONNX", refuse)
    with pytest.raises(UserError, match=r"this is OpenCV 4\.10\.0 and the models need OpenCV 5 .*opencv-python>=5"):
        DiceReader()


def test_truncated_image_file(tmp_path):
    jpg = (DATA / "nell-byler-d6" / "test" / "images").glob("*.jpg")
    path = next(jpg, None)
    if path is None:
        pytest.skip(f"{DATA} is absent (real photos live outside the repository)")
    data = path.read_bytes()
    (tmp_path / "cut.jpg").write_bytes(data[: len(data) // 3])
    try:
        frame = read_image(tmp_path / "cut.jpg")  # OpenCV may decode the first part
    except UserError as exc:
        assert "cut.jpg" in str(exc)
        return
    assert read_dice(frame).verdict in VERDICTS
    (tmp_path / "head.jpg").write_bytes(data[:200])
    with pytest.raises(UserError, match="head.jpg"):
        read_image(tmp_path / "head.jpg")


# ----------------------------------------------------------------------------- real photos and rendered scenes

# Measured 2026-12-03 with the shipped models (sixth round) on the first six photos of each test half:
# nell-byler 68 of 83 dice read and sure (the fifth round 73), matteop65 8 of 8, no silent errors on either.
FIRST_SIX_MIN_READ = {"nell-byler-d6": 0.8, "matteop65-d6": 0.85}


@pytest.mark.parametrize("set_name", ["nell-byler-d6", "matteop65-d6"])
def test_real_test_photos_never_silently_wrong(reader, set_name):
    folder = DATA / set_name / "test"
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent (real photos live outside the repository)")
    items = load_roll_folder(folder)[:6]
    scores = [score_image(item, reader.read(read_image(item.image_path), dice_kind="pip")) for item in items]
    assert not any(s.silent_error for s in scores), [item.image_path.name for item, s in zip(items, scores) if s.silent_error]
    read_share = sum(s.correct_dice for s in scores) / sum(s.labelled_dice for s in scores)
    assert read_share >= FIRST_SIX_MIN_READ[set_name], read_share


def test_rendered_lcr_scenes(reader):
    render = pytest.importorskip("lcr_pi.vision.render", reason="renderer not present")
    rng = np.random.default_rng(2024)
    results = []
    for _ in range(6):
        scene = render.random_scene(rng, size=(1280, 960), n_dice=(1, 3), kind="lcr", pool="holdout")
        r = reader.read(scene.image, dice_kind="lcr")
        faces = sorted(d.face for d in scene.dice)
        results.append((r.verdict, sorted(r.faces) == faces))
        assert not (r.verdict == "clear" and sorted(r.faces) != faces), (r, faces)
    # Measured 2026-12-03 (sixth round): 4 of these 6 holdout scenes read clear and right, the other 2
    # unsure (the fifth round: all 6 clear and right).
    assert sum(ok and v == "clear" for v, ok in results) >= 3


class CornerNet:
    """A stand-in classifier: class logits from the four corner pixels of each crop's first channel."""

    def setInput(self, blob):
        self.blob = blob

    def forward(self):
        x = self.blob[:, 0]
        logits = np.zeros((len(x), len(CLASSES)), np.float32)
        logits[:, 0], logits[:, 1], logits[:, 2], logits[:, 3] = 9 * x[:, 0, 0], 9 * x[:, 0, -1], 9 * x[:, -1, -1], 9 * x[:, -1, 0]
        return logits


def one_view(crop):
    net = CornerNet()
    net.setInput(crops_to_blob([np.ascontiguousarray(crop)]))
    return softmax(net.forward())[0]


def test_test_time_augmentation_averages_the_four_turns():
    bright, dim = np.zeros((48, 48, 3), np.uint8), np.zeros((48, 48, 3), np.uint8)
    bright[0, 0] = 255  # only the top-left corner is lit: each quarter turn moves it to the next corner
    dim[0, 0] = 51
    single = classify_crops(CornerNet(), [bright, dim], rotations=1)
    assert single[0].argmax() == 0 and single[0, 0] > 0.99 and single[1, 0] < 0.5
    turned = classify_crops(CornerNet(), [bright, dim], rotations=4)
    for i, crop in enumerate((bright, dim)):
        views = [one_view(np.rot90(crop, -k)) for k in range(4)]
        assert np.allclose(turned[i], np.mean(views, axis=0), atol=1e-6)
        assert np.allclose(turned[i, :4], turned[i, 0])  # the corner visited every class once
    # Only crops below ``recheck_below`` are looked at again: the sure one keeps its single view.
    mixed = classify_crops(CornerNet(), [bright, dim], rotations=4, recheck_below=0.9)
    assert np.allclose(mixed[0], single[0]) and np.allclose(mixed[1], turned[1])
    assert classify_crops(CornerNet(), [], rotations=4).shape == (0, len(CLASSES))


def _pip_face(side: int, turn_degrees: float, size: int = 0):
    """A frame with one white square face of ``side`` px and three black pips on a diagonal, turned
    by ``turn_degrees`` about the frame's middle pixel."""
    import cv2

    size = size or 3 * side
    face = np.zeros((size, size, 3), np.uint8)
    c, h = (size - 1) / 2, side / 2
    face[int(round(c - h)):int(round(c + h)), int(round(c - h)):int(round(c + h))] = 255
    for k in (-1, 0, 1):
        cv2.circle(face, (int(round(c + k * side / 3.5)), int(round(c + k * side / 3.5))), max(1, side // 10), (0, 0, 0), -1)
    return cv2.warpAffine(face, cv2.getRotationMatrix2D((c, c), -turn_degrees, 1.0), (size, size), flags=cv2.INTER_LINEAR)


@pytest.mark.parametrize("side", [24, 60, 400])
@pytest.mark.parametrize("turn", [10.0, 30.0, 45.0, 80.0])
def test_each_die_is_seen_upright_and_sized_by_its_face(side, turn):
    """The classifier's crop of a turned die (turned back by the die's angle, sized by its face's side)
    shows what the crop of the same die lying straight shows, at every size (a 400 px die is shrunk
    by averaging first); the unturned crop of the box does not."""
    import math

    from lcr_pi.vision.classify import crop_die, crop_face

    straight, turned = _pip_face(side, 0.0), _pip_face(side, turn)
    c = (straight.shape[0] - 1) / 2
    want = crop_face(straight, c, c, side, 0.0).astype(int)
    got = crop_face(turned, c, c, side, math.radians(turn)).astype(int)
    assert np.abs(got - want).mean() < 12, np.abs(got - want).mean()
    box = side * (abs(math.cos(math.radians(turn))) + abs(math.sin(math.radians(turn))))
    assert np.abs(crop_die(turned, c, c, box).astype(int) - want).mean() > 25


def test_the_classifier_reads_and_gives_its_features_on_either_engine(tmp_path):
    """The reader runs the face classifier on OpenCV's classic engine (faster on a few crops, and
    OpenCV 4's only one); teach mode's features come out of it as out of OpenCV 5's new engine,
    which names that output otherwise."""
    import cv2

    from lcr_pi.vision.classify import crop_features, load_classifier
    from lcr_pi.vision.reader import DEFAULT_MODELS

    crops = [cv2.resize(random_scene(np.random.default_rng(seed), size=(320, 240), n_dice=(1, 1), kind="lcr").image,
                        (48, 48)) for seed in (1, 2, 3)]
    classic = load_classifier(DEFAULT_MODELS / "dice_faces.onnx")
    default = cv2.dnn.readNetFromONNX(str(DEFAULT_MODELS / "dice_faces.onnx"))
    assert np.allclose(classify_crops(classic, crops, 1), classify_crops(default, crops, 1), atol=1e-4)
    features = crop_features(classic, crops)
    assert features.shape == (3, 128) and features.std() > 0
    assert np.allclose(features, crop_features(default, crops), atol=1e-4)
    broken = tmp_path / "dice_faces.onnx"
    broken.write_bytes(b"not a network")
    with pytest.raises(cv2.error):
        load_classifier(broken)


def test_overlapping_faces_are_unsure_when_asked():
    split = [Detection(100, 100, 40, 40, 0.0, 0.9), Detection(124, 122, 40, 40, 0.0, 0.9)]
    r = interpret(split, probs_for("1", "1"), (480, 1000), "pip", ReaderSettings(max_face_overlap=0.1))
    assert r.verdict == "unsure" and r.unsure_dice == (0, 1)
    assert interpret(split, probs_for("1", "1"), (480, 1000), "pip", ReaderSettings()).verdict == "clear"


def test_blurred_frame_is_obstructed():
    r = interpret(dets(2), probs_for("3", "4"), (480, 1000), "pip", ReaderSettings(), sharpnesses=[0.05, 0.04])
    assert r.verdict == "obstructed" and r.unsure_dice == (0, 1) and "blurred" in r.message
    r = interpret(dets(2), probs_for("3", "4"), (480, 1000), "pip", ReaderSettings(), sharpnesses=[0.3, 0.25])
    assert r.verdict == "clear"


# ----------------------------------------------------------------------------- detector scale

class ScriptedDetector:
    """Stands in for the detector net: one die at the middle of whatever it is shown, ``side`` detector px."""

    def __init__(self, side_det_px):
        self.side = side_det_px
        self.shapes = []

    def setInput(self, blob):
        self.shapes.append(blob.shape)

    def forward(self):
        _, _, h, w = self.shapes[-1]
        out = np.full((1, 7, h // 4, w // 4), -10.0, np.float32)
        out[0, 0, h // 8, w // 8] = 5.0
        out[0, 1:3, h // 8, w // 8] = np.log(self.side / 4)
        out[0, 5:7, h // 8, w // 8] = (1.0, 0.0)  # cos 4a, sin 4a: upright
        return out


@pytest.mark.parametrize("side, second_look, above", [(12.0, 896, 0.0), (24.0, None, 0.0), (120.0, None, 0.0), (120.0, 160, 64.0)])
def test_dice_far_from_the_detectors_best_size_are_looked_for_again_at_their_scale(reader, side, second_look, above):
    """Small dice in a wide full-resolution view get a second detector pass; a close-up only when asked."""
    from dataclasses import replace

    from lcr_pi.vision.detect import long_side_for_die

    scripted = DiceReader(MODELS)
    scripted.settings = replace(scripted.settings, rescale_above=above)
    scripted._detector = ScriptedDetector(side)
    frame = np.random.default_rng(0).integers(0, 255, (1536, 2048, 3), dtype=np.uint8)
    scripted.read(frame, dice_kind="pip")
    long_sides = [max(s[2:]) for s in scripted._detector.shapes]
    if second_look is None:
        assert long_sides == [448]
    else:
        side_in_frame = side * 2048 / 448
        assert long_side_for_die(frame.shape, side_in_frame) == second_look
        assert long_sides == [448, -(-second_look // 32) * 32]


def test_a_region_is_read_as_the_whole_frame_reads_it(reader):
    """The detector looks at a region (the tray) on the whole frame's grid and scale: the dice score
    as in a whole-frame read (within what it no longer sees around the region), nothing outside is
    read, and a region must lie in the frame."""
    for seed in (3, 4, 5):
        scene = random_scene(np.random.default_rng(seed), size=(1280, 960), n_dice=3, kind="pip")
        whole = reader.find_dice(scene.image)
        xs = [c[0] for d in scene.dice for c in d.corners]
        ys = [c[1] for d in scene.dice for c in d.corners]
        pad = 2 * max(d.box[2] - d.box[0] for d in scene.dice)
        region = (max(0, min(xs) - pad), max(0, min(ys) - pad), min(1280, max(xs) + pad), min(960, max(ys) + pad))
        part = reader.find_dice(scene.image, region=region)
        assert all(region[0] <= d.cx < region[2] and region[1] <= d.cy < region[3] for d in part)
        for d in scene.dice:
            cx, cy = d.corners.mean(0)
            near = [w for w in whole if np.hypot(w.cx - cx, w.cy - cy) < 0.3 * (d.box[2] - d.box[0])]
            if near and near[0].score >= 0.3:
                same = [p for p in part if np.hypot(p.cx - near[0].cx, p.cy - near[0].cy) < 0.15 * near[0].side]
                assert same and abs(same[0].score - near[0].score) < 0.05, (seed, near[0], same)
    with pytest.raises(UserError, match="lies outside the 1280x960 frame"):
        reader.read(scene.image, region=(1300, 0, 1400, 100))


# The bound is the mean grey-level difference allowed; measured 0.9, 0.0 and 2.0 (one area resize of
# the odd-sided crop, before: 0.5, 0.0 and 0.6). At the frame's far edge the crop cannot grow and is
# cut by under a step of the halvings instead (here 3 px, a stretch of 0.3 % over this 128 px window). On rendered dice the
# detector's scores differ from the whole look's as little as before (mean 0.0135 both).
@pytest.mark.parametrize("region, bound", [((1001, 777, 2333, 1999), 1.2), ((0, 3, 3277, 2464), 0.1),
                                           ((2900, 2100, 3280, 2464), 2.5)])
def test_a_full_resolution_region_is_cut_to_halve_evenly_and_shows_what_the_whole_look_shows(region, bound):
    """A full-resolution window's frame crop has sides that halve evenly twice on the way to 448 px
    (shrink's fast path; a side of odd length would stop it), holds the region, says exactly which
    frame pixels it holds, and shows the detector what a whole-frame look shows there, on features
    the size of a die (within a grey level or so: the crop's ends are a few pixels off the grid)."""
    rng = np.random.default_rng(7)
    frame = cv2.resize(rng.integers(0, 255, (20, 27, 3), dtype=np.uint8), (3280, 2464), interpolation=cv2.INTER_CUBIC)
    blob, window = prepare_detector_window(frame, 448, region)
    seen = blob[0]
    rows, cols = np.flatnonzero(seen.any(axis=(0, 2))), np.flatnonzero(seen.any(axis=(0, 1)))
    h, w = rows[-1] + 1, cols[-1] + 1  # the picture; the rest is padding to the detector's grid
    crop_w, crop_h = window.fx * w, window.fy * h
    assert crop_w == pytest.approx(round(crop_w)) and crop_h == pytest.approx(round(crop_h))
    assert round(crop_w) % 4 == 0 and round(crop_h) % 4 == 0
    assert window.x0 <= region[0] and window.y0 <= region[1]
    # ...but for under a step of the halvings (4 px) at the frame's edge, where it cannot grow:
    assert region[2] - 4 < window.x0 + round(crop_w) <= 3280 and region[3] - 4 < window.y0 + round(crop_h) <= 2464
    assert (region[2] <= window.x0 + round(crop_w) or region[2] == 3280) and (region[3] <= window.y0 + round(crop_h) or region[3] == 2464)
    whole, _ = prepare_detector_input(frame, 448)
    x0, y0, _, _ = detector_window(frame.shape, 448, region)
    h, w = min(h, whole.shape[2] - y0), min(w, whole.shape[3] - x0)
    assert np.abs(seen[:, :h, :w] - whole[0, :, y0:y0 + h, x0:x0 + w]).mean() * 255 < bound


def test_a_window_for_a_region_off_the_frame_ends_instead_of_looping():
    """``prepare_detector_window`` is public: a region wholly outside the frame (which
    :meth:`DiceReader.read` refuses by name) must not hang it."""
    from lcr_pi.vision.detect import _halvings

    assert _halvings(640, 480, 0, 0) == 0 and _halvings(640, 480, -5, 10) == 0
    try:
        prepare_detector_window(np.zeros((480, 640, 3), np.uint8), 448, (2000, 2000, 2100, 2100))
    except cv2.error:
        pass  # OpenCV's own refusal of an empty picture is an answer too; a hang is not


def test_a_plain_region_has_no_dice_and_only_a_blank_frame_is_blank(reader):
    frame = np.random.default_rng(2).integers(0, 255, (480, 640, 3), dtype=np.uint8)
    frame[100:400, 150:500] = 20  # an empty black tray in a busy view
    r = reader.read(frame, region=(200, 150, 450, 350))
    assert r.verdict == "no_dice" and r.message == "No dice seen on the tray."
    r = reader.read(np.zeros((480, 640, 3), np.uint8), region=(200, 150, 450, 350))
    assert r.verdict == "no_dice" and "blank" in r.message
    with pytest.raises(UserError, match="four numbers"):
        reader.read(frame, region=(1, 2, 3))


def test_a_known_die_size_sets_the_detector_scale_at_once():
    scripted = DiceReader(MODELS)
    scripted._detector = ScriptedDetector(24.0)
    frame = np.random.default_rng(0).integers(0, 255, (2464, 3280, 3), dtype=np.uint8)
    scripted.read(frame, dice_kind="pip", die_px=117.0)  # one pass at the die's scale (673 px long side)
    assert [max(s[2:]) for s in scripted._detector.shapes] == [704]
    # A die of a good size for the usual scale: a region of the view is looked at at that scale
    # (448/3280), once, on a window of the view around it, so it costs less than the whole view.
    scripted._detector.shapes.clear()
    scripted.read(frame, dice_kind="pip", die_px=140.0, region=(0, 0, 1600, 1200))
    # 1600 * 448 / 3280 = 218.5, and 64 px around it, on the 32 px grid; 1200 -> 164 + 64
    assert [tuple(s[2:]) for s in scripted._detector.shapes] == [(256, 288)]
    with pytest.raises(UserError, match="die size must be a positive number"):
        scripted.read(frame, die_px=0)


def test_with_a_known_die_size_finds_of_another_size_are_not_dice():
    scripted = DiceReader(MODELS)
    scripted._detector = ScriptedDetector(24.0)  # one find, 24 detector px = 24 * 1280 / 448 = 68.6 frame px
    frame = np.random.default_rng(1).integers(0, 255, (960, 1280, 3), dtype=np.uint8)
    assert len(scripted.find_dice(frame, die_px=60.0)) == 1
    assert len(scripted.find_dice(frame, die_px=40.0)) == 1  # 1.7x: still a die
    # A find under half the die's size (a pip) or over twice it is none: nothing is left to read.
    assert scripted.find_dice(frame, die_px=150.0) == [] and scripted.find_dice(frame, die_px=12.0) == []  # 68.6 and 30 px
    assert scripted.read(frame, dice_kind="pip", die_px=150.0).verdict == "no_dice"


class CountingNet:
    """A model that counts the pictures it is shown (it wraps a real ``cv2.dnn`` net)."""

    def __init__(self, net):
        self.net, self.shown = net, 0

    def setInput(self, blob):
        self.shown += len(blob)
        self.net.setInput(blob)

    def forward(self, *names):
        return self.net.forward(*names)


def test_a_memo_lets_a_second_look_at_the_same_frame_run_the_models_only_on_what_is_new():
    from lcr_pi.vision.reader import FrameMemo

    reader = DiceReader()
    scene = random_scene(np.random.default_rng(11), size=(1280, 960), n_dice=3, kind="lcr")
    side = float(np.mean([d.box[2] - d.box[0] for d in scene.dice]))
    fresh_sized, fresh = reader.read(scene.image, die_px=side), reader.read(scene.image)
    reader._detector = CountingNet(reader._detector)
    reader._classifier, reader._pairs = CountingNet(reader._classifier), CountingNet(reader._pairs)
    nets = (reader._detector, reader._classifier, reader._pairs)
    memo = FrameMemo()
    assert reader.read(scene.image, die_px=side, memo=memo) == fresh_sized
    first = [n.shown for n in nets]
    assert all(first[:2]) and memo.looks and memo.faces
    # The same look again costs nothing; a look without the die size reads as a fresh read does,
    # showing the classifier only finds the first look did not have.
    assert reader.read(scene.image, die_px=side, memo=memo) == fresh_sized and [n.shown for n in nets] == first
    known = set(memo.faces)
    assert reader.read(scene.image, memo=memo) == fresh
    assert reader._classifier.shown - first[1] <= 4 * len(set(memo.faces) - known)  # four turns at most each
    # A fresh memo runs the models again.
    before = reader._classifier.shown
    assert reader.read(scene.image, memo=FrameMemo()) == fresh and reader._classifier.shown > before


def test_a_wild_game_reads_ordinary_dice_as_ordinary_dice_and_wild_dice_as_wild(reader):
    """A Wild game is played with Wild LCR dice or with ordinary dice whose one is a W. Told "wild",
    the reader named an ordinary die's pips as Wild faces (a one as a dot, which keeps its chip; on
    60 rendered rolls of ordinary dice 4 were announced so, 55 asked); told "pip-or-wild" it reads
    what the frame shows, and :class:`~lcr_pi.camera_dice.WildGameDice` remembers it for the rolls
    of ones, which do not show it."""
    from lcr_pi.camera_dice import WildGameDice
    from lcr_pi.vision.render import roll_sequence

    def settled(faces, kind, seed=1):
        frames, _ = roll_sequence(np.random.default_rng(seed), size=(640, 480), faces=faces, kind=kind, n_frames=6,
                                  preset="felt-table")
        return frames[-1]

    # Two ones the reader reads surely as ordinary dice (seed 7: dice of 86-89 px; the reader of
    # 2026-12-05 doubts seed 1's 35 px ones, whose side faces' pips show under a tilted camera).
    pips, ones = settled(["4", "1", "6"], "pip"), settled(["1", "1"], "pip", seed=7)
    assert reader.read(ones, dice_kind="pip").verdict == "clear"
    assert reader.read(ones, dice_kind="wild").faces == ("dot", "dot")  # the old way: a W called a dot
    night = WildGameDice(reader.read, wild_pip=1)
    first = night(pips)
    assert first.verdict == "clear" and sorted(first.faces) == ["1", "4", "6"]
    assert night.kind is None and night(ones).verdict == "unsure"  # one roll could be a misread: asked
    assert night(settled(["2", "5"], "pip")).faces == ("2", "5") and night.kind == "pip"
    again = night(ones)
    assert again.verdict == "clear" and again.faces == ("1", "1")  # two W
    # Wild dice: the letters show the kind, and later dots are read as dots.
    night = WildGameDice(reader.read, wild_pip=1)
    assert sorted(night(settled(["W", "L", "dot"], "wild")).faces) == ["L", "W", "dot"]
    assert sorted(night(settled(["C", "R"], "wild")).faces) == ["C", "R"] and night.kind == "wild"
    dots = night(settled(["dot", "dot"], "wild"))
    assert dots.verdict == "clear" and dots.faces == ("dot", "dot")
    # Before any roll has shown the kind, dots are asked about, never announced.
    assert WildGameDice(reader.read, wild_pip=1)(settled(["dot", "dot"], "wild")).verdict == "unsure"


@pytest.mark.parametrize("seed", [1, 14, 19, 29, 31, 36, 38])
def test_a_calibrated_die_size_that_no_longer_fits_leaves_no_die_out_silently(reader, seed):
    # Found by an audit (2026-12-03): told a die size much larger than the dice (the camera moved or
    # zoomed since calibration), the reader dropped the smaller dice and announced the rest as clear.
    from lcr_pi.vision.render import random_scene

    scene = random_scene(np.random.default_rng(seed), size=(640, 480), n_dice=(3, 4), kind="lcr", pool="holdout")
    box = float(np.median([max(d.box[2] - d.box[0], d.box[3] - d.box[1]) for d in scene.dice]))
    reading = reader.read(scene.image, dice_kind="lcr", die_px=1.44 * box)
    assert not (reading.verdict == "clear" and len(reading.dice) < len(scene.dice)), reading
    assert reader.read(scene.image, dice_kind="lcr", die_px=0.8 * box).verdict in ("clear", "unsure", "cocked")

