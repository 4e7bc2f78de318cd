"""Eval metrics on tiny constructed folders, with a reader double so the arithmetic is exact."""

from __future__ import annotations

import json
from types import SimpleNamespace

import cv2
import numpy as np
import pytest

from lcr_pi.cli import main
from lcr_pi.commands.eval import evaluate_folder
from lcr_pi.errors import UserError
from lcr_pi.vision.evaluate import score_image


def make_folder(tmp_path, records, write_images=True):
    (tmp_path / "images").mkdir(parents=True, exist_ok=True)
    lines = []
    for i, rec in enumerate(records):
        rec = {"image": f"images/{i}.png", **rec}
        if write_images:
            img = np.full((64, 80, 3), i * 10 % 255, np.uint8)  # pixel value tells the double which image
            cv2.imwrite(str(tmp_path / rec["image"]), img)
        lines.append(json.dumps(rec))
    (tmp_path / "labels.jsonl").write_text("\n".join(lines) + "\n")
    return tmp_path


def die(face, box):
    return SimpleNamespace(face=face, box=box)


def reading(dice, verdict="clear", unsure=()):
    return SimpleNamespace(dice=tuple(dice), verdict=verdict, unsure_dice=tuple(unsure))


class ScriptedReader:
    """Answers by image index (encoded in the pixel value) with a prepared reading."""

    def __init__(self, answers):
        self.answers = answers
        self.kinds = []

    def __call__(self, frame, dice_kind="auto"):
        self.kinds.append(dice_kind)
        return self.answers[int(frame[0, 0, 0]) // 10]


B1, B2 = [0, 0, 10, 10], [20, 0, 30, 10]


def test_metrics_with_boxes_are_exact(tmp_path):
    folder = make_folder(tmp_path, [
        {"faces": ["6", "4"], "boxes": [B1, B2]},  # read right: correct
        {"faces": ["3"], "boxes": [B1]},  # read wrong and sure: silent error
        {"faces": ["2", "5"], "boxes": [B1, B2]},  # one die unsure: unsure image
        {"faces": ["1"], "boxes": [B1]},  # missed, plus an extra die far away: silent
    ])
    double = ScriptedReader([
        reading([die("6", (1, 0, 11, 10)), die("4", (20, 1, 30, 11))]),
        reading([die("5", (0, 0, 10, 10))]),
        reading([die("2", (0, 0, 10, 10)), die("5", (20, 0, 30, 10))], "unsure", (1,)),
        reading([die("1", (50, 50, 60, 60))]),
    ])
    metrics, rows = evaluate_folder(folder, double, kind="lcr")
    assert double.kinds == ["lcr"] * 4
    assert metrics["dice"] == 6 and metrics["images"] == 4
    assert metrics["die_accuracy"] == pytest.approx(3 / 6)  # 6, 4, 2
    assert metrics["image_accuracy"] == pytest.approx(1 / 4)
    assert metrics["unsure_rate"] == pytest.approx(1 / 4)
    assert metrics["silent_error_rate"] == pytest.approx(2 / 4)
    # Both silent errors have the right number of dice (one die misread; one missed and one made up),
    # so the referee's count would not catch them.
    assert metrics["silent_error_rate_counted"] == pytest.approx(2 / 4)
    assert metrics["recall"] == pytest.approx(5 / 6)
    assert metrics["precision"] == pytest.approx(5 / 6)
    assert metrics["image_accuracy"] + metrics["unsure_rate"] + metrics["silent_error_rate"] == pytest.approx(1)
    # Best guesses, sure or not: 6, 4, and the unsure picture's 2 and 5; its guess is the whole roll.
    assert metrics["guess_accuracy"] == pytest.approx(4 / 6)
    assert metrics["unsure_guess_right_rate"] == 1.0


def test_metrics_by_multiset_without_boxes(tmp_path):
    folder = make_folder(tmp_path, [
        {"faces": ["L", "dot", "C"]},
        {"faces": ["R", "R"]},
        {"faces": ["W"]},
    ])
    double = ScriptedReader([
        reading([die("C", (0, 0, 1, 1)), die("L", (0, 0, 1, 1)), die("dot", (0, 0, 1, 1))]),
        reading([die("R", (0, 0, 1, 1)), die("L", (0, 0, 1, 1)), die("R", (0, 0, 1, 1))]),
        reading([die("W", (0, 0, 1, 1))], "obstructed"),
    ])
    metrics, _ = evaluate_folder(folder, double)
    assert metrics["die_accuracy"] == pytest.approx(5 / 6)  # obstructed W counts as unsure
    assert metrics["precision"] == pytest.approx(6 / 7)  # min(3,3) + min(2,3) + min(1,1) over 7 read
    assert metrics["recall"] == pytest.approx(1.0)
    assert (metrics["image_accuracy"], metrics["silent_error_rate"], metrics["unsure_rate"]) == pytest.approx((1 / 3, 1 / 3, 1 / 3))
    assert metrics["silent_error_rate_counted"] == 0.0  # three dice read for two: the referee asks again
    assert metrics["guess_accuracy"] == pytest.approx(1.0)  # the obstructed W is guessed right
    assert metrics["unsure_guess_right_rate"] == 1.0


def sure_die(face, box, confidence):
    return SimpleNamespace(face=face, box=box, confidence=confidence)


def test_best_guesses_of_unsure_pictures(tmp_path):
    far = (50, 50, 60, 60)
    folder = make_folder(tmp_path, [
        {"faces": ["L", "C"], "boxes": [B1, B2]},  # unsure, guessed right: one press confirms
        {"faces": ["L", "C"], "boxes": [B1, B2]},  # unsure, one die guessed wrong
        {"faces": ["R"], "boxes": [B1]},  # unsure, right, and a die too many that the reader doubts most
        {"faces": ["C", "L"], "boxes": [B1, B2]},  # unsure, and a die too many that it does not doubt
        {"faces": ["dot"], "boxes": [B1]},  # sure and right: not counted among the unsure
    ])
    double = ScriptedReader([
        reading([die("L", B1), die("C", B2)], "unsure", (1,)),
        reading([die("L", B1), die("R", B2)], "unsure", (1,)),
        reading([sure_die("R", B1, 0.95), sure_die("L", far, 0.3)], "unsure", (1,)),  # the offer leaves L out
        reading([sure_die("C", B1, 0.6), sure_die("L", B2, 0.99), sure_die("R", far, 0.97)], "unsure", (0,)),
        reading([die("dot", B1)]),
    ])
    metrics, _ = evaluate_folder(folder, double)
    assert metrics["guess_accuracy"] == pytest.approx(7 / 8)
    # The fourth offer leaves out the doubted C (a real die) and keeps the sure R: wrong, so a person
    # who sees the dice does not confirm it.
    assert metrics["unsure_guess_right_rate"] == pytest.approx(2 / 4)
    sure_only = make_folder(tmp_path / "sure", [{"faces": ["dot"], "boxes": [B1]}])
    metrics, _ = evaluate_folder(sure_only, ScriptedReader([reading([die("dot", B1)])]))
    assert metrics["unsure_guess_right_rate"] is None and metrics["guess_accuracy"] == 1.0


def test_pictures_with_a_leaning_die_are_judged_apart(tmp_path, capsys):
    """A die labelled cocked is re-rolled at the table: its picture has no roll to get right. Such
    pictures leave the other metrics alone and are counted by what the reader said about them."""
    folder = make_folder(tmp_path, [
        {"faces": ["6", "4"], "boxes": [B1, B2]},  # flat dice read right
        {"faces": ["L", "dot"], "boxes": [B1, B2], "cocked": [False, True]},  # read "cocked": caught
        {"faces": ["R", "C"], "boxes": [B1, B2], "cocked": [True, False]},  # read clear: a roll announced
        {"faces": ["W"], "boxes": [B1], "cocked": [True]},  # unsure: the referee asks
    ])
    answers = [
        reading([die("6", B1), die("4", B2)]),
        reading([die("L", B1), die("dot", B2)], "cocked", (1,)),
        reading([die("R", B1), die("C", B2)]),
        reading([die("W", B1)], "unsure", (0,)),
    ]
    metrics, _ = evaluate_folder(folder, ScriptedReader(answers))
    assert (metrics["images"], metrics["dice"], metrics["die_accuracy"], metrics["image_accuracy"]) == (1, 2, 1.0, 1.0)
    assert metrics["silent_error_rate"] == 0.0 and metrics["unsure_rate"] == 0.0
    assert metrics["leaning_images"] == 3
    assert metrics["leaning_caught_rate"] == pytest.approx(1 / 3) and metrics["leaning_announced_rate"] == pytest.approx(1 / 3)
    # Without leaning dice in the labels the rates are not numbers: nothing was measured.
    flat, _ = evaluate_folder(make_folder(tmp_path / "flat", [{"faces": ["6"], "boxes": [B1]}]), ScriptedReader(answers[:1]))
    assert flat["leaning_images"] == 0 and flat["leaning_caught_rate"] is None and flat["leaning_announced_rate"] is None


def test_pip_boxes_match_by_centre():
    label = SimpleNamespace(faces=("1", "6"), boxes=((4, 4, 6, 6), (22, 2, 28, 8)), box_kind="pip")
    read = reading([die("6", (20, 0, 30, 10)), die("1", (0, 0, 10, 10))])
    s = score_image(label, read)
    assert (s.matched_labels, s.correct_dice, s.correct) == (2, 2, True)
    read = reading([die("6", (0, 0, 10, 10)), die("1", (20, 0, 30, 10))])
    assert score_image(label, read).silent_error


def test_no_dice_verdict_counts(tmp_path):
    empty = SimpleNamespace(faces=(), boxes=None, box_kind=None)
    assert score_image(empty, reading([], "no_dice")).correct
    full = SimpleNamespace(faces=("3",), boxes=None, box_kind=None)
    assert score_image(full, reading([], "no_dice")).silent_error


@pytest.mark.parametrize("content, message", [
    ('{"image": "images/0.png", "faces": ["7"]}', "line 1: unknown face name '7'"),
    ('{"image": "images/0.png", "faces": ["1"]}\n{"image": ', "line 2: bad JSON"),
    ('{"image": "images/9.png", "faces": ["1"]}', "images/9.png is missing"),
    # Found by an audit (2026-12-03): tracebacks before.
    ('{"image": "images/0.png", "faces": ["1"], "boxes": [[0, 0, 1' + "0" * 400 + ', 10]]}', "four numbers of pixels"),
    ('[' * 100000 + ']' * 100000, "nested too deep"),
    ('{"image": "' + "a" * 5000 + '.png", "faces": ["1"]}', "cannot be looked up"),
    ('{"image": "images", "faces": ["1"]}', "images is not a file"),
    ('{"faces": ["1"]}', "line 1: missing 'image'"),
    ('{"image": "images/0.png", "faces": ["1"], "boxes": [[0, 0, 1]]}', "box 1 must be four numbers"),
    ('{"image": "images/0.png", "faces": ["1", "2"], "boxes": [[0, 0, 1, 1]]}', "has 1 boxes but 'faces' has 2"),
    ('{"image": "images/0.png", "faces": ["1", "2"], "cocked": [false]}', "'cocked' has 1 values but 'faces' has 2"),
    ('{"image": "images/0.png", "faces": ["1"], "cocked": ["yes"]}', "'cocked' must be a list of true/false"),
])
def test_folder_validation_messages(tmp_path, content, message):
    make_folder(tmp_path, [{"faces": ["1"]}])
    (tmp_path / "labels.jsonl").write_text(content)
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace("[", r"\[")):
        evaluate_folder(tmp_path, ScriptedReader([]))


def test_missing_labels_file_via_cli(tmp_path, capsys):
    assert main(["eval", str(tmp_path)]) == 2
    assert "missing labels.jsonl" in capsys.readouterr().err


@pytest.mark.parametrize("content", [b"\x89PNG\r\n\x1a\n not really", b""])
def test_corrupt_or_empty_image_is_named(tmp_path, content):
    make_folder(tmp_path, [{"faces": ["1"]}])
    (tmp_path / "images" / "0.png").write_bytes(content)
    with pytest.raises(UserError, match=r"0\.png: (not a readable image|image file is empty)"):
        evaluate_folder(tmp_path, ScriptedReader([reading([])]))


def test_a_picture_the_reader_refuses_is_named_via_cli(tmp_path, capsys):
    # Found by an audit (2026-12-03): "frame is too small to hold dice (2000x20 pixels)" without the file.
    make_folder(tmp_path, [{"faces": ["1"]}])
    cv2.imwrite(str(tmp_path / "images" / "0.png"), np.full((20, 2000, 3), 90, np.uint8))
    assert main(["eval", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'images' / '0.png'}: frame is too small to hold dice (2000x20 pixels)" in err


def test_label_corrections_fix_the_named_die_only(tmp_path):
    from lcr_pi.vision.dataset import apply_corrections, load_corrections, load_roll_folder

    folder = make_folder(tmp_path / "set" / "test", [
        {"faces": ["5", "2"], "boxes": [B1, B2]},
        {"faces": ["4"], "boxes": [B1]},
    ])
    fixes = tmp_path / "fixes.json"
    fixes.write_text(json.dumps([
        {"folder": "set/test", "image": "images/0.png", "die": 1, "labelled": "5", "face": "6", "why": "six pips"},
        {"folder": "set/test", "image": "images/1.png", "die": 1, "labelled": "3", "face": "1", "why": "stale"},
        {"folder": "other/test", "image": "images/0.png", "die": 2, "labelled": "2", "face": "3", "why": "not this set"},
    ]))
    items, applied, stale = apply_corrections(load_roll_folder(folder), load_corrections(fixes), folder)
    assert [i.faces for i in items] == [("6", "2"), ("4",)]
    # A die the labels leave out is added with its box, once: not where a labelled die already is.
    fixes.write_text(json.dumps([
        {"folder": "set/test", "image": "images/1.png", "missing": True, "face": "3", "box": B2, "why": "second die"},
        {"folder": "set/test", "image": "images/1.png", "missing": True, "face": "5", "box": B1, "why": "already there"},
    ]))
    added, done, old = apply_corrections(load_roll_folder(folder), load_corrections(fixes), folder)
    assert added[1].faces == ("4", "3") and added[1].boxes[1] == tuple(B2)
    assert [c.why for c in done] == ["second die"] and [c.why for c in old] == ["already there"]
    assert [c.why for c in applied] == ["six pips"] and [c.why for c in stale] == ["stale"]
    # The reader that read a 6 is right once the label is: no silent error.
    answers = [reading([die("6", B1), die("2", B2)]), reading([die("4", B1)])]
    metrics, _ = evaluate_folder(folder, ScriptedReader(answers), items=items)
    assert metrics["silent_error_rate"] == 0.0 and metrics["die_accuracy"] == 1.0


@pytest.mark.parametrize("content, message", [
    ("{", "not valid JSON"),
    ('{"a": 1}', "must be a JSON list"),
    ('[{"folder": "a", "image": "b", "die": 1, "labelled": "5", "face": "7", "why": "w"}]', "entry 1: 'face' is not a face name"),
    ('[{"folder": "a", "image": "b", "die": 1, "labelled": "5", "face": "6"}]', "entry 1: missing 'why'"),
    ('[{"folder": "a", "image": "b", "missing": true, "face": "6", "why": "w"}]', "entry 1: 'box' box 1 must be four numbers"),
])
def test_bad_corrections_file_is_named_via_cli(tmp_path, capsys, content, message):
    folder = make_folder(tmp_path / "f", [{"faces": ["5"], "boxes": [B1]}])
    fixes = tmp_path / "fixes.json"
    fixes.write_text(content)
    assert main(["eval", str(folder), "--corrections", str(fixes)]) != 0
    err = capsys.readouterr().err
    assert "fixes.json" in err and message in err and "Traceback" not in err


def test_shipped_corrections_file_is_valid():
    from pathlib import Path

    from lcr_pi.vision.dataset import load_corrections

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "label_corrections.json"
    fixes = load_corrections(path)
    assert fixes and all(c.folder.endswith(("/test", "/train")) and c.labelled != c.face for c in fixes)
    assert all((c.die == 0) == (c.labelled is None) == (c.box is not None) for c in fixes)


def test_eval_reports_leaning_dice_of_a_rendered_folder(tmp_path, capsys):
    """``lcr-pi render --cocked`` marks the leaning dice; ``lcr-pi eval`` judges those pictures apart."""
    folder = tmp_path / "rolls"
    assert main(["render", str(folder), "--n", "6", "--kind", "lcr", "--size", "640x480", "--dice", "2-3",
                 "--cocked", "--seed", "5"]) == 0
    labels = [json.loads(line) for line in (folder / "labels.jsonl").read_text().splitlines()]
    leaning = sum(any(rec["cocked"]) for rec in labels)
    assert 0 < leaning < len(labels)  # this seed renders both kinds of picture
    capsys.readouterr()
    assert main(["eval", str(folder), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["kind"] == "lcr"  # the kind of dice the labels show, as a night's settings would tell the reader
    assert out["leaning_images"] == leaning and out["images"] == len(labels) - leaning
    assert 0.0 <= out["leaning_caught_rate"] <= 1.0 and 0.0 <= out["leaning_announced_rate"] <= 1.0
    assert out["die_accuracy"] <= out["guess_accuracy"] <= 1.0 and "unsure_guess_right_rate" in out
    assert main(["eval", str(folder)]) == 0
    text = capsys.readouterr().out
    assert f"and {leaning} with a leaning die, judged apart" in text and "best guesses" in text
    assert "dice kind         lcr (from the labels)" in text
    assert main(["eval", str(folder), "--json", "--kind", "auto"]) == 0
    assert json.loads(capsys.readouterr().out)["kind"] == "auto"  # each frame decides, when asked
    # --why accounts for every labelled die of the other pictures, once.
    assert main(["eval", str(folder), "--json", "--why"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert sum(out["why"].values()) == out["dice"]
    assert out["why"].get("read", 0) == round(out["die_accuracy"] * out["dice"])


def test_what_became_of_each_die(tmp_path, capsys):
    from lcr_pi.commands.eval import dice_outcomes, print_outcomes
    from lcr_pi.vision.classify import CLASSES
    from lcr_pi.vision.evaluate import outcomes

    label = SimpleNamespace(faces=("L", "C", "R", "dot"), boxes=(B1, B2, [40, 0, 50, 10], [60, 0, 70, 10]), box_kind="die")

    def row(**share):
        p = np.zeros(len(CLASSES))
        for name, v in share.items():
            p[CLASSES.index(name)] = v
        return tuple(p)

    dice = (SimpleNamespace(face="L", box=B1, confidence=0.99),                                # read
            SimpleNamespace(face="C", box=B2, confidence=0.7),                                 # doubted: may lean
            SimpleNamespace(face="L", box=(40, 0, 50, 10), confidence=0.6),                    # doubted: L or R?
            SimpleNamespace(face="dot", box=(60, 0, 70, 10), confidence=0.95))                 # doubted: outline
    reading = SimpleNamespace(dice=dice, verdict="unsure", unsure_dice=(1, 2, 3), kind="lcr",
                              probabilities=(row(L=1.0), row(C=0.7, cocked=0.3), row(L=0.6, R=0.4), row(**{"1": 0.95, "cocked": 0.05})))
    assert outcomes(label, reading, 0.9) == {"read": 1, "leaning share": 1, "between faces": 1, "other doubt": 1}
    # A flat die touching another, held under 0.95 by the pair network's leaning share of 0.075: the
    # leaning doubt, not a hesitation between faces (matteop65 test photos, 2026-12-07).
    touching = SimpleNamespace(faces=("4",), boxes=(B1,), box_kind="die")
    held_back = SimpleNamespace(dice=(SimpleNamespace(face="4", box=B1, confidence=0.924),), verdict="unsure",
                                unsure_dice=(0,), kind="pip", probabilities=(row(**{"4": 0.924, "cocked": 0.075, "5": 0.001}),))
    assert outcomes(touching, held_back, 0.95) == {"leaning share": 1}
    # One held back by the belief that it is no die (a side face, a mark) is told apart too.
    faint = SimpleNamespace(**{**vars(held_back), "probabilities": (row(**{"4": 0.821, "background": 0.16, "5": 0.019}),)})
    assert outcomes(touching, faint, 0.95) == {"no-die share": 1}
    blurred = SimpleNamespace(**{**vars(reading), "verdict": "obstructed"})
    assert outcomes(label, blurred, 0.9) == {"blurred": 4}
    unboxed = SimpleNamespace(faces=("L",), boxes=None, box_kind=None)
    assert outcomes(unboxed, reading, 0.9) is None
    flat = SimpleNamespace(leaning=False)
    assert dice_outcomes([(unboxed, reading, flat)], 0.9) is None
    print_outcomes(None)
    assert "no boxes" in capsys.readouterr().out
    print_outcomes(dice_outcomes([(label, reading, flat)], 0.9))
    said = capsys.readouterr().out
    assert "what became of the 4 dice" in said and "the classifier hesitates between faces" in said


@pytest.mark.parametrize("limit", ["0", "-1"])
def test_a_limit_of_no_image_is_refused_via_cli(tmp_path, capsys, limit):
    # Found by an audit (2026-12-04): --limit 0 reported "0 images, 0 dice" and a 100 % die accuracy,
    # --limit -1 silently left the last picture out.
    make_folder(tmp_path, [{"faces": ["1"]}, {"faces": ["2"]}])
    assert main(["eval", str(tmp_path), "--limit", limit]) == 2
    assert f"--limit must be 1 or more images, not {limit}" in capsys.readouterr().err


def test_labels_saved_with_a_byte_order_mark_are_read(tmp_path):
    # Found by an audit (2026-12-04): labels.jsonl saved by Windows Notepad starts with a BOM, and its
    # first line was "bad JSON (Unexpected UTF-8 BOM (decode using utf-8-sig) at column 1)".
    make_folder(tmp_path, [{"faces": ["6"]}, {"faces": ["2"]}])
    labels = tmp_path / "labels.jsonl"
    labels.write_bytes(b"\xef\xbb\xbf" + labels.read_bytes())
    metrics, rows = evaluate_folder(tmp_path, ScriptedReader([reading([die("6", B1)]), reading([die("2", B1)])]))
    assert [item.faces for item, _, _ in rows] == [("6",), ("2",)] and metrics["image_accuracy"] == 1.0
