"""Teach mode: unseen dice designs read after a few views of each face; other dice left alone; bad files."""

from __future__ import annotations

import functools
import importlib.util
import json
import math
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from lcr_pi.cli import main
from lcr_pi.errors import UserError
from lcr_pi.vision.detect import Detection
from lcr_pi.vision.reader import DiceReader, DieReading, Reading, ReaderSettings
from lcr_pi.vision.render import random_scene, write_roll_folder
from lcr_pi.vision.teach import (
    TaughtDie, TaughtReader, _one_per_die, face_context, load_taught, load_taught_or_default, save_taught, teach,
    view_context,
)

def _benchmark(name: str):
    """A script of ``benchmarks/`` loaded as a module (its helpers are tested here)."""
    spec = importlib.util.spec_from_file_location(name, Path(__file__).resolve().parents[2] / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench_teach = _benchmark("bench_teach")


def detector_corners(die, grow: float = 1.0, shift=(0.0, 0.0)) -> tuple:
    """An outline as a detector gives it: a square from the face's box size and angle (not the true
    perspective corners), optionally too big and off centre, as outlines of an unseen design are."""
    c = np.asarray(die.corners, np.float64)
    (cx, cy), side = c.mean(0), float(np.mean(np.linalg.norm(c - np.roll(c, 1, 0), axis=1)))
    edge = c[1] - c[0]
    angle = math.atan2(edge[1], edge[0]) % (math.pi / 2)
    span = side * (abs(math.cos(angle)) + abs(math.sin(angle))) * grow
    return tuple(map(tuple, Detection(cx + shift[0] * side, cy + shift[1] * side, span, span, angle, 1.0).corners()))


class BoxReader:
    """Stands in for the reader with the rendered truth: rough outlines of some dice (a square off
    the face, too big, or only a mark on it), every face 'dot' and unsure, as the shipped reader
    would read a design it has never seen. ``skip`` leaves out every n-th die (a detector miss)."""

    def __init__(self, scenes, skip: int = 0, classifier=None):
        self.by_id = {id(img): sc for img, sc in scenes}
        self.skip = skip
        if classifier is not None:
            self._classifier = classifier  # the face classifier whose features name taught faces again

    def read(self, frame, *, dice_kind="auto", calibration=None):
        scene = self.by_id[id(frame)]
        dice = []
        for k, d in enumerate(scene.dice):
            if self.skip and k % self.skip == 1:
                continue
            rough = detector_corners(d, grow=(1.0, 1.3, 0.5)[k % 3], shift=((0, 0), (0.15, -0.1), (0.1, 0.1))[k % 3])
            dice.append(DieReading("dot", 0.3, d.box, rough, tuple(np.mean(rough, 0)), "centre", False))
        return Reading(tuple(dice), "unsure", tuple(range(len(dice))), "Not sure.", "lcr")


def taught_from(scenes, views: int = 5, name: str = "x"):
    """A taught set from the first ``views`` views of each face, each cut as the reader would
    outline it (a rough square), measured from the picture as ``lcr-pi teach`` does."""
    examples: dict[str, list] = {}
    for image, scene in scenes:
        for die in scene.dice:
            if len(examples.setdefault(die.face, [])) < views:
                examples[die.face].append(view_context(image, detector_corners(die, grow=1.2)))
    assert all(len(v) == views for v in examples.values()) and set(examples) == {"L", "C", "R", "dot"}
    return teach(examples, name=name, kind="lcr")


def read_all(taught, scenes, skip: int = 0, classifier=None):
    reader = TaughtReader(BoxReader(scenes, skip, classifier), taught)
    assert (reader.features is not None) == (classifier is not None)
    right = wrong = unsure = 0
    for image, scene in scenes:
        reading = reader.read(image, dice_kind="lcr")
        for truth in scene.dice:
            on = [d for d in reading.dice if _covers(truth, d.centre)]
            if not on or not on[0].sure:
                unsure += 1
            elif on[0].face == truth.face:
                right += 1
            else:
                wrong += 1
        extra = [d for d in reading.dice if d.sure and not any(_covers(t, d.centre) for t in scene.dice)]
        wrong += len(extra)  # a sure die where there is none is as wrong as a wrong face
    return right, wrong, unsure


def _covers(truth, point) -> bool:
    import cv2

    return cv2.pointPolygonTest(np.asarray(truth.corners, np.float32), (float(point[0]), float(point[1])), False) >= 0


@pytest.fixture(scope="module")
def painted():
    """The benchmark's unseen design (words, star, ring) painted on rendered dice."""
    return taught_from(bench_teach.design_scenes(1, 24, design="violet-painted"), name="violet"), \
        bench_teach.design_scenes(2, 16, design="violet-painted")


def test_an_unseen_design_is_read_after_five_views_of_each_face(painted):
    taught, scenes = painted
    right, wrong, unsure = read_all(taught, scenes)
    n = right + wrong + unsure
    assert n >= 30
    assert wrong == 0, f"{wrong} of {n} dice read wrong with confidence"
    # With rough outlines of an unseen look (the bench measures the real reader on 60 scenes).
    assert right / n >= 0.8, (right, unsure, n)


def test_dice_the_reader_missed_are_found_by_their_colour_and_never_left_out(painted):
    """A die the reader did not detect is found by the taught body colour; as nothing but its colour
    vouches for it (it could be a die's side), it makes the frame unsure instead of being announced,
    and no die is silently missing from a frame read as clear."""
    taught, scenes = painted
    reader = TaughtReader(BoxReader(scenes, skip=2), taught)  # every other die not detected at all
    covered = wrong = 0
    for image, scene in scenes:
        reading = reader.read(image, dice_kind="lcr")
        for truth in scene.dice:
            on = [d for d in reading.dice if _covers(truth, d.centre)]
            covered += bool(on)
            wrong += bool(on and on[0].sure and on[0].face != truth.face)
        if reading.verdict == "clear":
            assert all(any(_covers(t, d.centre) for d in reading.dice) for t in scene.dice)
    n = sum(len(sc.dice) for _, sc in scenes)
    assert wrong == 0 and covered / n >= 0.9, (covered, n)


class FindingBoxReader(BoxReader):
    """BoxReader whose detector also finds the dice it leaves out of its reading, surely, as the real
    reader's does where its classifier calls a die of a design it never saw no die: it keeps those
    finds in the frame's memo, as :class:`DiceReader` does. ``grow`` sizes them (1.0: the die's)."""

    def __init__(self, scenes, skip: int, grow: float = 1.0):
        super().__init__(scenes, skip)
        self.grow = grow

    def read(self, frame, *, dice_kind="auto", calibration=None, memo=None):
        if memo is not None:
            for k, d in enumerate(self.by_id[id(frame)].dice):
                c = np.asarray(detector_corners(d, grow=self.grow), np.float64)
                edge = c[1] - c[0]
                memo.faces[Detection(*c.mean(0), *(np.ptp(c, 0)), math.atan2(edge[1], edge[0]) % (math.pi / 2), 0.8)] = None
        return super().read(frame, dice_kind=dice_kind, calibration=calibration)


def test_a_sure_find_of_the_detector_vouches_for_a_die_only_the_colour_found(painted):
    """The reader kept no die where its classifier called a taught die no die; its detector's sure
    find there vouches for the die, which the taught set then names as surely as the dice the reader
    kept. A find of another size (a mark on the die) vouches for nothing."""
    taught, scenes = painted

    def left_out(reader):
        right = wrong = 0
        for image, scene in scenes:
            reading = reader.read(image, dice_kind="lcr")
            for truth in scene.dice[1::2]:  # the dice the reader left out (skip=2)
                on = [d for d in reading.dice if _covers(truth, d.centre) and d.sure]
                right += bool(on and on[0].face == truth.face)
                wrong += bool(on and on[0].face != truth.face)
        return right, wrong

    n = sum(len(scene.dice[1::2]) for _, scene in scenes)
    assert n >= 10
    assert left_out(TaughtReader(BoxReader(scenes, skip=2), taught)) == (0, 0)  # only the colour: never sure
    right, wrong = left_out(TaughtReader(FindingBoxReader(scenes, skip=2), taught))
    assert wrong == 0 and right >= 0.7 * n, (right, n)
    assert left_out(TaughtReader(FindingBoxReader(scenes, skip=2, grow=0.4), taught)) == (0, 0)


def test_a_second_look_at_a_frame_reuses_the_taught_sets_searches_and_reads_the_same(painted, monkeypatch):
    """A calibrated reader looks at an unsure frame twice, with one memo (CalibratedReader): the taught
    set is not asked again from where it was asked before, nor its body colour mapped again, and the
    second reading is the first."""
    from lcr_pi.vision import teach as teach_module
    from lcr_pi.vision.reader import FrameMemo
    from lcr_pi.vision.teach import TaughtSet

    taught, scenes = painted
    asked, mapped = [], []
    search = TaughtSet.match
    monkeypatch.setattr(TaughtSet, "match", lambda self, ctx: asked.append(1) or search(self, ctx))
    body_map = teach_module.BodyMap
    monkeypatch.setattr(teach_module, "BodyMap", lambda frame, body: mapped.append(1) or body_map(frame, body))
    reader = TaughtReader(FindingBoxReader(scenes, skip=0), taught)
    for image, _ in scenes[:4]:
        asked.clear()
        mapped.clear()
        memo = FrameMemo()
        first = reader.read(image, dice_kind="lcr", memo=memo)
        searches = len(asked)
        assert searches > 0 and len(mapped) == 1
        again = reader.read(image, dice_kind="lcr", memo=memo)
        assert len(asked) == searches and len(mapped) == 1  # all from the memo
        assert [(d.face, d.confidence, d.centre) for d in again.dice] == [(d.face, d.confidence, d.centre) for d in first.dice]
        assert again.verdict == first.verdict
        asked.clear()
        reader.read(image, dice_kind="lcr", memo=FrameMemo())  # a new frame's memo: searched anew
        assert len(asked) == searches
        assert sum(len(m) for m in memo.taught.values()) == searches


def test_a_second_look_asks_a_matcher_only_about_dice_it_was_not_asked_about():
    """A matcher's similarities (the features' and the embedding's network runs) are kept in the
    frame's memo by outline: a second look at the frame asks only about a die found anew, and gets
    for the others what the first look got."""
    from lcr_pi.vision.reader import FrameMemo
    from lcr_pi.vision.teach import _Crops, _similarities

    class Counting:
        def __init__(self):
            self.asked = 0

        def similarities(self, crops):
            self.asked += len(crops)
            return [{"L": float(c.mean()), "R": 0.0} for c in crops]

    frame = np.random.default_rng(3).integers(0, 255, (120, 160, 3), np.uint8)
    square = lambda x, y: np.array([[x, y], [x + 30, y], [x + 30, y + 30], [x, y + 30]], np.float64)
    one, two = TaughtDie("L", 0.9, square(10, 10), 0.1, {}), TaughtDie("R", 0.9, square(90, 50), 0.1, {})
    matcher, memo = Counting(), FrameMemo()
    first = _similarities(matcher, _Crops(frame, [one]), memo)
    assert matcher.asked == 1
    again = _similarities(matcher, _Crops(frame, [two, one]), memo)
    assert matcher.asked == 2 and again[1] == first[0] and again[0] != first[0]
    # another matcher asks for itself; without a memo every die is asked about
    other = Counting()
    _similarities(other, _Crops(frame, [one, two]), memo)
    assert other.asked == 2
    assert _similarities(matcher, _Crops(frame, [one, two])) == [first[0], again[0]] and matcher.asked == 4


def in_box(point, box) -> bool:
    return box[0] <= point[0] <= box[2] and box[1] <= point[1] <= box[3]


class RegionBoxReader(BoxReader):
    """BoxReader that, given a ``region`` (a calibrated tray), outlines only the dice centred in it,
    as the reader looks only there."""

    def read(self, frame, *, dice_kind="auto", calibration=None, region=None, memo=None):
        reading = super().read(frame, dice_kind=dice_kind, calibration=calibration)
        if region is None:
            return reading
        inside = [in_box(np.mean(t.corners, 0), region) for t in self.by_id[id(frame)].dice]
        dice = tuple(d for d, keep in zip(reading.dice, inside) if keep)
        return Reading(dice, "unsure", tuple(range(len(dice))), "Not sure.", "lcr")


def test_with_a_calibrated_region_the_taught_dice_are_looked_for_only_there(painted):
    """Read with a region (the part of a calibrated tray the reader reads), the taught set looks for
    its body colour only there: a die off the tray is not looked for (nor said to be something
    unread), as the calibrated reader does not look for dice there. Without a region the body colour
    finds the dice the reader did not outline."""
    from lcr_pi.vision.teach import relabel

    taught, scenes = painted
    reader = TaughtReader(RegionBoxReader(scenes), taught)
    outside_without = 0
    for image, scene in scenes:
        if len(scene.dice) < 2:
            continue
        x0, y0, x1, y1 = scene.dice[0].box
        grow = 0.3 * (x1 - x0)
        region = (max(0, int(x0 - grow)), max(0, int(y0 - grow)), int(x1 + grow), int(y1 + grow))
        inside = [t for t in scene.dice if in_box(np.mean(t.corners, 0), region)]
        outside = [t for t in scene.dice if t not in inside]
        within = reader.read(image, dice_kind="lcr", region=region)
        # every die read is one of the dice in the region, and the first die is read
        assert within.dice and all(any(_covers(t, d.centre) for t in inside) for d in within.dice)
        assert any(_covers(scene.dice[0], d.centre) for d in within.dice)
        # The same outlines (the dice in the region) read with the whole frame to look in.
        anywhere = relabel(RegionBoxReader(scenes).read(image, dice_kind="lcr", region=region), image, taught)
        outside_without += sum(any(_covers(t, d.centre) for d in anywhere.dice) for t in outside)
    assert outside_without >= 3


def test_a_second_unseen_design_drawn_by_the_renderer():
    """Green dice with dark green engraved serif letters and a white dot, every face drawn and lit by
    the renderer (sides the same colour as the top): the same rules, no tuning for it."""
    taught = taught_from(bench_teach.design_scenes(1, 24, design="green-engraved"), name="green")
    right, wrong, unsure = read_all(taught, bench_teach.design_scenes(2, 12, design="green-engraved"))
    n = right + wrong + unsure
    # Known weakness (measured, not hidden): one engraved C in these 12 scenes (a steep view, the
    # letter half in shadow) is read as an L with confidence; bench_teach.py measures 60 scenes.
    assert wrong <= 1, f"{wrong} of {n} dice read wrong with confidence"
    assert right / n >= 0.6, (right, unsure, n)


@pytest.fixture(scope="module")
def face_classifier():
    from lcr_pi.vision.classify import load_classifier
    from lcr_pi.vision.reader import DEFAULT_MODELS

    return load_classifier(DEFAULT_MODELS / "dice_faces.onnx")  # as the reader loads it


@pytest.mark.parametrize("design", ["green-engraved", "violet-words"])
def test_the_face_classifiers_features_name_an_unseen_designs_faces(design, face_classifier):
    """The reader's classifier never saw engraved green letters or the words LEFT/RIGHT, yet its
    features put each held-out face nearest the taught views of the same face."""
    from lcr_pi.vision.teach import FeatureMatcher, straight_crop

    taught = taught_from(bench_teach.design_scenes(1, 24, design=design), name=design)
    kept = sum(taught.views.values())  # one crop per view kept (a badly cut view is left out)
    assert taught.crops.shape == (kept, 48, 48, 3) and kept >= 16 and sorted(set(taught.crop_faces)) == ["C", "L", "R", "dot"]
    features = FeatureMatcher(face_classifier, taught.crops, taught.crop_faces)
    named = [features.best(features.similarities([straight_crop(face_context(image, die.corners))])[0])[0] == die.face
             for image, scene in bench_teach.design_scenes(2, 12, design=design) for die in scene.dice if not die.cocked]
    assert len(named) >= 20 and np.mean(named) >= 0.9, (sum(named), len(named))


def test_a_classifier_without_the_pooled_features_leaves_the_descriptors_alone(painted):
    """Another classifier (a retrained one of another shape) has no tensor by that name: the taught
    set then reads by its descriptors, as before, instead of failing the game."""
    import cv2

    class OtherClassifier:
        def setInput(self, blob):
            pass

        def forward(self, name=None):
            raise cv2.error("DNN: tensor '/12/Flatten_output_0' is not found in the graph")

    taught, scenes = painted
    reader = BoxReader(scenes)
    reader._classifier = OtherClassifier()
    assert TaughtReader(reader, taught).features is None


def test_the_features_second_opinion_reads_more_dice_and_none_wrong(face_classifier):
    taught = taught_from(bench_teach.design_scenes(1, 24, design="violet-words"), name="words")
    scenes = bench_teach.design_scenes(2, 12, design="violet-words")
    alone, with_features = read_all(taught, scenes), read_all(taught, scenes, classifier=face_classifier)
    assert with_features[1] == 0 and with_features[0] >= alone[0], (alone, with_features)


def test_ordinary_dice_keep_the_readers_answer(painted):
    taught, _ = painted
    rng = np.random.default_rng(7)
    for kind in ("pip", "lcr", "wild"):
        for _ in range(3):
            scene = random_scene(rng, size=(480, 360), n_dice=(1, 3), kind=kind)
            plain = Reading(tuple(DieReading(d.face, 0.97, d.box, tuple(map(tuple, d.corners)), (0, 0), "centre", True)
                                  for d in scene.dice), "clear", message="Read.")

            class Plain:
                def read(self, frame, *, dice_kind="auto", calibration=None):
                    return plain

            assert TaughtReader(Plain(), taught).read(scene.image) is plain


def test_with_a_taught_set_no_doubt_is_settled_by_its_move(painted):
    """The reader's could_be names faces of the dice it knows; with a taught design on the table they
    may be that design's faces misread, so the taught reader passes on none (the referee asks)."""
    taught, scenes = painted
    image, scene = scenes[0]
    doubting = Reading(tuple(DieReading("2", 0.6, d.box, detector_corners(d), tuple(np.mean(d.corners, 0)), "centre",
                                        False, could_be=("2", "3")) for d in scene.dice),
                       "unsure", tuple(range(len(scene.dice))), "Not sure.", kind="pip")

    class Doubting:
        def read(self, frame, *, dice_kind="auto", calibration=None):
            return doubting

    for kind in ("lcr", "auto", "pip-or-wild"):
        reading = TaughtReader(Doubting(), taught).read(image, dice_kind=kind)
        assert reading.dice and all(d.could_be == () for d in reading.dice)
    blank = np.full_like(image, 90)  # no taught die in the frame: the reading as it was, but for could_be
    reading = TaughtReader(Doubting(), taught).read(blank, dice_kind="lcr")
    assert reading.faces == doubting.faces and all(d.could_be == () for d in reading.dice)


class Answering:
    """A reader double that answers every frame with one reading."""

    def __init__(self, reading):
        self.reading = reading

    def read(self, frame, *, dice_kind="auto", calibration=None):
        return self.reading


def sure_dice(scene, face) -> tuple:
    """A rendered scene's dice as a reader sure of ``face(die)`` for each, on its true outline, gives them."""
    return tuple(DieReading(face(d), 0.99, d.box, detector_corners(d), tuple(np.mean(d.corners, 0)), "centre", True)
                 for d in scene.dice)


def one_for_dot(die) -> str:
    """The face a pip reader names a taught dot face with: one pip."""
    return "1" if die.face == "dot" else die.face


def test_a_taught_lcr_set_stays_out_of_a_game_set_for_pip_dice(painted):
    taught, scenes = painted
    image, scene = scenes[0]
    wrong = {"L": "R", "R": "C", "C": "dot", "dot": "L"}
    sure = Reading(sure_dice(scene, lambda d: wrong[d.face]), "clear", message="Read.", kind="lcr")
    # Set for LCR dice (or left to the reader, also in a Wild game), the taught set doubts the reader's
    # wrong faces...
    for kind in ("lcr", "auto", "pip-or-wild"):
        assert TaughtReader(Answering(sure), taught).read(image, dice_kind=kind).verdict != "clear"
    # ...set for ordinary pip dice, it is not asked: the reader's reading is the answer.
    assert TaughtReader(Answering(sure), taught).read(image, dice_kind="pip") is sure


def test_when_the_reader_is_sure_too_agreeing_keeps_its_die_and_disagreeing_is_unsure(painted):
    taught, scenes = painted
    other = {"L": "R", "R": "C", "C": "dot", "dot": "L"}
    agreed = disagreed = 0
    for image, scene in scenes[:8]:
        for wrong in (False, True):
            sure = Reading(sure_dice(scene, lambda d: other[d.face] if wrong else d.face), "clear", message="Read.",
                           kind="lcr")
            reading = TaughtReader(Answering(sure), taught).read(image, dice_kind="lcr")
            for truth in scene.dice:
                on = [d for d in reading.dice if _covers(truth, d.centre)]
                assert on, "a die the reader read is never dropped"
                if wrong:
                    assert not (on[0].sure and on[0].face != truth.face)  # the reader's wrong face is not announced
                    disagreed += not on[0].sure
                else:
                    assert on[0].face == truth.face and (not on[0].sure or on[0] in sure.dice)
                    agreed += on[0] in sure.dice
    assert agreed >= 10 and disagreed >= 10, (agreed, disagreed)


def test_a_reader_that_knows_the_design_sure_of_a_face_the_set_lacks_keeps_its_die(painted):
    """The reader sure of a pip five where the taught LCR set finds one of its faces: a reader that
    knows the design reads a die of another kind (an ordinary die on the tray), and its die stands;
    one that does not know the design may say anything, and the die is unsure."""
    taught, scenes = painted
    image, scene = scenes[0]
    sure = Reading(sure_dice(scene, lambda d: "5"), "clear", message="Read.", kind="auto")
    for knows in (True, False):
        reader = TaughtReader(Answering(sure), taught)
        reader.reader_knows = knows  # a stand-in reader has no features, so TaughtReader takes it to know
        reading = reader.read(image, dice_kind="auto")
        for truth in scene.dice:
            on = [d for d in reading.dice if _covers(truth, d.centre)]
            assert on and (on[0].face == "5" and on[0].sure) is knows, (knows, on)


def test_a_readers_one_on_a_taught_dot_face_is_a_one_or_a_dot(painted):
    # Found by an audit (2026-12-03): where the reader was sure of a "1" on a taught design's dot face,
    # its die stood as "1", a W in a Wild game whose ordinary dice's one is W.
    from lcr_pi.camera_dice import observe
    from lcr_pi.referee import Referee
    from lcr_pi.rules import GameConfig

    taught, scenes = painted
    named = asked = 0
    for image, scene in scenes:
        if not any(d.face == "dot" for d in scene.dice):
            continue
        sure = Reading(sure_dice(scene, one_for_dot), "clear", message="Read.", kind="pip")
        reading = TaughtReader(Answering(sure), taught).read(image, dice_kind="auto")
        for truth in scene.dice:
            on = [d for d in reading.dice if _covers(truth, d.centre)]
            if truth.face == "dot" and on and on[0].face == "dot":
                # Seen by both as one mark, but whether a dot or an ordinary die's one is open:
                # doubted between the two, which the referee settles where they move alike.
                assert not on[0].sure and on[0].could_be == ("1", "dot")
                named += 1
        if len(reading.dice) == 3 and any(d.face == "dot" and d.could_be for d in reading.dice):
            ref = Referee(GameConfig.create(["Ann", "Bob", "Cy"], variant="wild", wild_pip=1))
            ref.start()
            ref.on_roll(observe(reading, image))
            assert ref.phase == "confirm_read" and ref.game.state.rolls == 0  # a W or a dot: asked
            asked += 1
    assert named >= 3 and asked >= 1, (named, asked)


def shaken(image: np.ndarray, side: float) -> np.ndarray:
    """``image`` as a camera shaken by a fifth of a die's ``side`` sees it."""
    return cv2.GaussianBlur(image, (0, 0), side / 5)


def test_a_blurred_picture_stays_blurred_when_the_taught_set_agrees_up_to_one_or_dot(painted):
    # Found by a review (2026-12-03): where every taught die agreed with the reader up to "1" or "dot",
    # the verdict was redone and a blurred ("obstructed") reading came out announceable.
    taught, scenes = painted
    checked = 0
    for image, scene in scenes:
        if not any(d.face == "dot" for d in scene.dice):
            continue
        dice = sure_dice(scene, one_for_dot)
        blurred = Reading(dice, "obstructed", tuple(range(len(dice))), "The picture is blurred.", kind="pip")
        side = max(d.box[2] - d.box[0] for d in scene.dice)
        reading = TaughtReader(Answering(blurred), taught).read(shaken(image, side), dice_kind="auto")
        checked += 1
        assert reading.verdict == "obstructed", reading
    assert checked >= 3


def test_a_still_picture_the_reader_took_for_blurred_is_read_with_the_taught_set(painted):
    # The reader's blur test is one threshold for every die; the taught dice are measured themselves
    # (taught_dice_sharp), and where they lie still the reader's dice are judged one by one.
    taught, scenes = painted
    image, scene = scenes[0]
    dice = sure_dice(scene, lambda d: d.face)
    blurred = Reading(dice, "obstructed", tuple(range(len(dice))), "The picture is blurred.", kind="lcr")
    assert TaughtReader(Answering(blurred), taught).read(image, dice_kind="lcr").verdict == "clear"


def test_taught_dice_are_still_when_as_sharp_as_their_taught_views():
    """Engraved dots under a soft lens: never as sharp as the reader's test asks of any die, but as
    sharp as the same face was when taught; smeared, they are not."""
    from types import SimpleNamespace

    from lcr_pi.vision.classify import crop_die, sharpness
    from lcr_pi.vision.teach import AS_SHARP_AS_TAUGHT, taught_dice_sharp

    frame = np.full((200, 200, 3), 90, np.uint8)
    frame[70:130, 70:130] = 120  # a dark green die, seen soft
    cv2.circle(frame, (100, 100), 8, (108, 108, 108), -1)  # its engraved dot, a faint shade
    frame = cv2.GaussianBlur(frame, (0, 0), 1.5)
    die = TaughtDie("dot", 1.0, np.array([[70, 70], [130, 70], [130, 130], [70, 130]], np.float64), 0.1)
    still = sharpness(crop_die(frame, 100, 100, 60))
    assert still < 0.09  # what the reader calls blurred
    as_taught = SimpleNamespace(sharpness={"dot": still})
    assert taught_dice_sharp(frame, as_taught, [die])
    assert not taught_dice_sharp(cv2.blur(frame, (20, 1)), as_taught, [die])  # smeared a third of the die
    assert not taught_dice_sharp(frame, SimpleNamespace(sharpness={"dot": still / AS_SHARP_AS_TAUGHT * 1.1}), [die])
    assert not taught_dice_sharp(frame, SimpleNamespace(sharpness={}), [die])  # a set taught before views were kept


def test_a_one_channel_frame_is_read_with_the_taught_set_as_the_reader_reads_it(painted):
    # Found by an audit (2026-12-03): an (H, W, 1) frame, which the reader takes, crashed the taught set.
    taught, scenes = painted
    image, _ = scenes[0]
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    reader = TaughtReader(DiceReader(), taught)
    for frame in (grey, grey[:, :, None]):
        assert reader.read(frame, dice_kind="lcr").verdict in ("clear", "unsure", "cocked", "obstructed", "no_dice")


def test_a_face_between_two_taught_faces_is_unsure_not_a_guess(painted):
    taught, scenes = painted
    image, scene = scenes[0]
    ctx = face_context(image, scene.dice[0].corners)
    body = np.median(ctx[40:56, 40:56].reshape(-1, 3), 0).astype(np.uint8)
    blank = np.full_like(ctx, body)  # the body colour, no mark
    name, confidence, familiar = taught.classify(blank)
    assert not (familiar and confidence >= 0.6)


def test_a_find_on_a_larger_dies_side_is_dropped_and_overlapping_finds_are_one_die():
    square = np.array([[0, 0], [40, 0], [40, 40], [0, 40]], np.float64)
    top = TaughtDie("R", 1.0, square, 0.1)
    side = TaughtDie("dot", 1.0, square * 0.5 + [-18, 10], 0.05)  # small, along its edge: a side face
    neighbour = TaughtDie("C", 1.0, square + [42, 0], 0.2)  # as large, beside it: another die
    kept = _one_per_die([top, side, neighbour])
    assert {d.face for d in kept} == {"R", "C"}
    # The same die found twice as two faces nearly as well: unsure.
    twice = _one_per_die([top, TaughtDie("L", 1.0, square + [2, 1], 0.11)])
    assert len(twice) == 1 and twice[0].confidence == 0.0


def test_a_touching_die_found_a_little_smaller_is_a_die_of_its_own_not_a_side():
    square = np.array([[0, 0], [40, 0], [40, 40], [0, 40]], np.float64)
    top = TaughtDie("R", 1.0, square, 0.1)
    # found at 0.7 of its neighbour's size, touching it: centred beyond where the sides end
    touching = TaughtDie("L", 1.0, square * 0.7 + [38, 6], 0.12)
    assert {d.face for d in _one_per_die([top, touching])} == {"R", "L"}
    # the same, but not a clear match: it may be a side or a mark, and is dropped as before
    assert [d.face for d in _one_per_die([top, replace(touching, confidence=0.8)])] == ["R"]
    # as large and sure, but centred on the die's sides: a side face
    side = TaughtDie("dot", 1.0, square * 0.7 + [30, 6], 0.05)
    assert [d.face for d in _one_per_die([top, side])] == ["R"]
    # much smaller (a mark on the neighbour's face, or a side seen edge on): dropped
    mark = TaughtDie("C", 1.0, square * 0.45 + [44, 10], 0.05)
    assert [d.face for d in _one_per_die([top, mark])] == ["R"]


def test_a_darker_find_a_side_away_towards_the_middle_of_the_view_is_unsure_as_a_side_face():
    """At a slant a die's side face lies a whole side from its top face, as a touching die's top
    does, but in another light: lit from above, a side is darker than the top (dev table 709,
    engraved: 0.53-0.62 of the top's lightness; touching dice at dev tables 701-710 0.76-2.2). Darker there, a find is
    unsure; as light as its neighbour, it is a touching die and stays sure."""
    from lcr_pi.vision.teach import _body_lightness, _unsure_if_a_side

    body_bgr = (60, 160, 60)
    body = _body_of(body_bgr, 10.0, 6.0)
    square = np.array([[0, 0], [40, 0], [40, 40], [0, 40]], np.float64)
    view_centre = (20.0, 300.0)  # below both: the nearer find to it is the inner one
    top = TaughtDie("L", 1.0, square + [200, 100], 0.1)
    inner = TaughtDie("dot", 1.0, square + [200, 141], 0.1)  # 1.02 sides away, towards the middle
    for inner_bgr, sure in ((body_bgr, True), ((20, 95, 20), False)):  # the side: 0.6 of the lightness
        frame = np.full((480, 640, 3), 200, np.uint8)
        frame[100:140, 200:240] = body_bgr
        frame[141:181, 200:240] = inner_bgr
        lightness = lambda die, frame=frame: _body_lightness(frame, die, body)  # noqa: E731
        judged = _unsure_if_a_side(inner, [top, inner], view_centre, lightness)
        assert (judged.confidence == 1.0) is sure, (inner_bgr, lightness(inner), lightness(top))
        assert _unsure_if_a_side(top, [top, inner], view_centre, lightness).confidence == 1.0
    # without a lightness to compare, only a find nearer than a side is taken for a side
    assert _unsure_if_a_side(inner, [top, inner], view_centre).confidence == 1.0


def test_near_another_die_the_pair_network_tells_a_touching_die_from_its_side_face():
    """Two finds nearer than SIDE_GAP cannot both be flat dice, so the inner one (towards the middle
    of the view, where side faces show) is set aside as a possible side face; yet found sides run
    large, and touching dice come that near. The reader's pair network learnt to tell two touching
    dice from a die and its side: where it believes the two flat dice (at least PAIR_FLAT), the inner
    find stays sure. Further off, up to SIDE_REACH_DARK, a side seen at a slant can be as large and
    light as a top face: where the network believes the inner find no die (at least PAIR_SIDE), it
    is set aside."""
    from lcr_pi.vision.teach import PAIR_FLAT, PAIR_SIDE, SIDE_GAP, SIDE_REACH_DARK, _unsure_if_a_side

    square = np.array([[0, 0], [40, 0], [40, 40], [0, 40]], np.float64)
    view_centre = (220.0, 400.0)  # below both: the lower find is the inner one
    top = TaughtDie("L", 1.0, square + [200, 100], 0.1)
    near = TaughtDie("dot", 1.0, square + [200, 135], 0.1)  # 0.88 sides away, towards the middle
    touching = TaughtDie("dot", 1.0, square + [200, 142], 0.1)  # 1.05 sides away
    assert 35 / 40 < SIDE_GAP < 42 / 40 < SIDE_REACH_DARK
    asked = []

    def seeing(flat, no_die):
        def pair(d, other):
            asked.append((d, other))
            return {"flat": flat, "no die": no_die}
        return pair

    def judged(d, pair=None):
        return _unsure_if_a_side(d, [top, d], view_centre, pair=pair)

    assert judged(near, seeing(PAIR_FLAT + 0.1, 0.0)).confidence == 1.0
    assert asked and all(d is near and other is top for d, other in asked)  # about the inner find beside the other
    assert judged(near, seeing(PAIR_FLAT - 0.1, 0.0)).aside
    assert judged(near).aside  # no network: set aside as before
    assert judged(touching, seeing(0.0, PAIR_SIDE - 0.1)).confidence == 1.0
    assert judged(touching, seeing(0.0, PAIR_SIDE + 0.1)).aside
    assert judged(touching).confidence == 1.0  # no network: a touching die, as before
    # the outer find is never asked about: it is no side of the inner one
    asked.clear()
    assert _unsure_if_a_side(top, [top, near], view_centre, pair=seeing(0.0, 1.0)).confidence == 1.0
    assert asked == []


def test_a_colour_only_find_on_a_dies_inner_side_is_vouched_for_where_the_pair_network_believes_two_flat_dice():
    """A find only the body colour found counts as a die where a sure detector find or the features
    vouch for it, but not where it lies on another find's side towards the middle of the view (it
    may be that die's side face). Where the reader's pair network believes the two flat dice by at
    least PAIR_VOUCH (touching painted dice, their tops the colour found), it is vouched for."""
    from lcr_pi.vision.detect import Detection
    from lcr_pi.vision.teach import PAIR_VOUCH, SIDE_GAP, SIDE_REACH_DARK, _features_vouch, vouched

    square = np.array([[0, 0], [40, 0], [40, 40], [0, 40]], np.float64)
    view_centre = (220.0, 400.0)  # below both: the lower find is the inner one
    top = TaughtDie("L", 1.0, square + [200, 100], 0.1)
    touching = TaughtDie("R", 1.0, square + [200, 138], 0.1)  # 0.95 sides away, towards the middle
    detector = [Detection(220.0, 158.0, 40.0, 40.0, 0.0, 0.8)]  # a sure find of the detector on it
    asked = []

    def seeing(flat):
        def pair(d, other):
            asked.append((d, other))
            return {"flat": flat, "no die": 0.0}
        return pair

    def by_features(pair=None):
        return _features_vouch(touching, True, [top, touching], [], view_centre, pair)

    for pair, vouches in ((seeing(PAIR_VOUCH + 0.05), True), (seeing(PAIR_VOUCH - 0.05), False), (None, False)):
        assert by_features(pair) is vouches
        assert vouched(touching, [], [top, touching], view_centre, by_features=by_features(pair), pair=pair) is vouches
        assert vouched(touching, detector, [top, touching], view_centre, pair=pair) is vouches
    assert asked and all(d is touching and other is top for d, other in asked)
    # the features must still name it clearly: the network's word alone vouches for nothing
    assert not _features_vouch(touching, False, [top, touching], [], view_centre, seeing(1.0))
    assert not vouched(touching, [], [top, touching], view_centre, pair=seeing(1.0))
    # a find further off than SIDE_REACH_DARK never needed the network's word, and it is not asked;
    # one nearer than SIDE_GAP is not a flat die where it was found, whatever the network believes
    far = TaughtDie("R", 1.0, square + [200, 100 + 40 * (SIDE_REACH_DARK + 0.1)], 0.1)
    asked.clear()
    assert _features_vouch(far, True, [top, far], [], view_centre, seeing(0.0)) and asked == []
    near = TaughtDie("R", 1.0, square + [200, 100 + 40 * (SIDE_GAP - 0.1)], 0.1)
    assert not _features_vouch(near, True, [top, near], [], view_centre, seeing(1.0))
    assert not vouched(near, detector, [top, near], view_centre, pair=seeing(1.0)) and asked == []


def test_a_loose_die_the_reader_is_unsure_of_keeps_the_features_from_vouching_only_if_it_may_be_the_finds_die():
    """A die of the reader's that no taught find accounts for, within a side of a find only the colour
    found, may be that die's side face or the find may be a side of it: the features do not vouch.
    Where the reader is unsure of it and the find lies further out than it (not on its inner side,
    where its sides show), it is the find's own side (a painted die's white sides beside its violet
    top, check tables 711-713): the features vouch. A sure one still stops them."""
    from lcr_pi.vision.reader import DieReading
    from lcr_pi.vision.teach import _features_vouch

    square = np.array([[0, 0], [40, 0], [40, 40], [0, 40]], np.float64)
    view_centre = (220.0, 400.0)  # below: a die's sides show below its top
    t = TaughtDie("R", 1.0, square + [200, 100], 0.1)

    def loose(y, sure):
        return DieReading(face="dot", confidence=0.9 if sure else 0.4, box=(200.0, y - 15.0, 230.0, y + 15.0),
                          corners=(), centre=(215.0, float(y)), where="", sure=sure)

    below, above = 150.0, 90.0  # 0.7 sides from t's middle: inward of t, or t inward of it
    assert _features_vouch(t, True, [t], [loose(below, sure=False)], view_centre)
    assert not _features_vouch(t, True, [t], [loose(below, sure=True)], view_centre)
    assert not _features_vouch(t, True, [t], [loose(above, sure=False)], view_centre)  # t may be its side
    assert _features_vouch(t, True, [t], [], view_centre)


def test_pair_view_asks_the_pair_network_about_the_two_finds_both_ways_round_once():
    """pair_view's beliefs are the network's "flat" and "second is no die" shares for the other find
    and the find, averaged over both looks, as pair_beliefs gives them for the two as detector finds;
    a pair is looked at once, also across views that share a frame memo's dict (a calibrated
    reader's second look)."""
    from lcr_pi.vision.detect import Detection
    from lcr_pi.vision.pairs import PAIR_CLASSES, pair_beliefs
    from lcr_pi.vision.reader import DiceReader
    from lcr_pi.vision.teach import pair_view

    assert pair_view(None, np.zeros((10, 10, 3), np.uint8)) is None
    net = DiceReader()._pairs
    rng = np.random.default_rng(3)
    frame = rng.integers(0, 255, (240, 320, 3), dtype=np.uint8)
    frame[100:140, 100:140] = 235  # two light squares side by side
    frame[100:140, 142:182] = 235
    square = np.array([[0, 0], [40, 0], [40, 40], [0, 40]], np.float64)
    left, right = TaughtDie("L", 1.0, square + [100, 100], 0.1), TaughtDie("R", 1.0, square + [142, 100], 0.1)
    pair = pair_view(net, frame)
    seen = pair(right, left)
    spots = [Detection(120.0, 120.0, 40.0, 40.0, 0.0, 1.0), Detection(162.0, 120.0, 40.0, 40.0, 0.0, 1.0)]
    expected = pair_beliefs(net, frame, spots, [(0, 1)], again_below=1.0)[0]
    assert seen["flat"] == pytest.approx(float(expected[PAIR_CLASSES.index("flat")]), abs=1e-6)
    assert seen["no die"] == pytest.approx(float(expected[PAIR_CLASSES.index("second is no die")]), abs=1e-6)
    kept: dict = {}
    assert pair_view(net, frame, kept)(right, left) == seen and len(kept) == 1
    frame[:] = 0  # asked again, the pair is not looked at again: by this view, nor by another keeping its word
    assert pair(right, left) == seen
    assert pair_view(net, frame, kept)(right, left) == seen


def test_within_a_side_a_find_the_detector_names_a_top_face_stays_sure_and_one_die_found_twice_does_not():
    """Two finds nearer than SIDE_GAP cannot both be flat dice, so the inner one (towards the middle
    of the view, where side faces show) was made unsure; yet a find can be 1.35 times its die, and
    touching dice come that near. A sure find of the reader's detector on the inner one (at least
    SIDE_VOUCH, centred on it, of its size) names it a top face: it stays sure. The detector scored
    side faces 0.30-0.58 at dev tables 705-712. Where the two are nearer than SAME_DIE they are one
    die found twice, and then the outer one, with no such word, is made unsure instead."""
    from lcr_pi.vision.detect import Detection
    from lcr_pi.vision.teach import SIDE_VOUCH, _unsure_if_a_side

    square = np.array([[0, 0], [40, 0], [40, 40], [0, 40]], np.float64)
    view_centre = (220.0, 400.0)  # below both: the lower find is the inner one
    top = TaughtDie("L", 1.0, square + [200, 100], 0.1)
    inner = TaughtDie("dot", 1.0, square + [200, 135], 0.1)  # 0.88 sides away, towards the middle

    def judged(d, dice, finds):
        return round(_unsure_if_a_side(d, dice, view_centre, finds=finds).confidence, 2)

    on_inner = lambda score, side=42.0: [Detection(221, 156, side, side, 0.0, score)]  # noqa: E731
    assert judged(inner, [top, inner], on_inner(0.8)) == 1.0 and judged(top, [top, inner], on_inner(0.8)) == 1.0
    assert judged(inner, [top, inner], on_inner(SIDE_VOUCH - 0.05)) == 0.0  # a side face's score
    assert judged(inner, [top, inner], on_inner(0.8, side=15.0)) == 0.0  # a find of another size
    assert judged(inner, [top, inner], []) == 0.0
    assert judged(replace(inner, confidence=0.8), [top, inner], on_inner(0.8)) == 0.0  # not a clear find
    # one die found twice, 0.45 sides apart: the detector on the inner find, so the outer is the copy
    again = TaughtDie("dot", 1.0, square + [200, 118], 0.1)
    on_again = [Detection(220, 138, 40, 40, 0.0, 0.8)]
    assert judged(again, [top, again], on_again) == 1.0 and judged(top, [top, again], on_again) == 0.0
    # at 0.88 sides the outer find is a touching die's top, not a copy: it stays sure
    assert judged(top, [top, inner], on_inner(0.8)) == 1.0


def test_at_a_tilted_table_a_die_touching_another_and_found_by_the_detector_is_read():
    """Dev table 712 (drawn words, camera tilted 17 degrees), roll 16: a dot die touching another was
    found 0.88 sides from it, on its side towards the middle of the view, and made unsure as a side
    face; the reader's detector is sure of it as a top face (0.70), and the roll is read as it lies."""
    reader = DiceReader()
    empty, _, teaching, test, _ = _table_bench().one_table(712, "violet-words", (640, 480), 17)
    examples, _ = bench_teach.player_examples(reader, teaching, 5, empty)
    image, scene = test[16]
    reading = TaughtReader(reader, teach(examples, name="violet-words", kind="lcr")).read(image, dice_kind="lcr")
    assert sorted(d.face for d in scene.dice) == ["C", "dot", "dot"]
    assert reading.verdict == "clear" and sorted(d.face for d in reading.dice) == ["C", "dot", "dot"]


def test_the_features_word_counts_only_between_faces_they_told_apart_on_the_taught_views(face_classifier):
    """On the taught views the features tell engraved letters apart, but hardly the words LEFT and
    RIGHT; their naming the other word then does not doubt a face the descriptors read."""
    from lcr_pi.vision.teach import FEATURES_SEPARATE, FeatureMatcher

    words = taught_from(bench_teach.design_scenes(1, 24, design="violet-words"), name="words")
    engraved = taught_from(bench_teach.design_scenes(1, 24, design="green-engraved"), name="engraved")
    by_words = FeatureMatcher(face_classifier, words.crops, words.crop_faces)
    by_letters = FeatureMatcher(face_classifier, engraved.crops, engraved.crop_faces)
    assert not by_words.tells_apart("L", "R") and not by_words.tells_apart("R", "L"), by_words.separation
    assert by_words.tells_apart("L", "C") and by_words.tells_apart("dot", "R"), by_words.separation
    assert min(by_letters.separation.values()) >= FEATURES_SEPARATE, by_letters.separation


def test_the_features_word_counts_where_the_descriptors_mixed_the_faces_up_too():
    from types import SimpleNamespace

    from lcr_pi.vision.teach import features_count

    blind = SimpleNamespace(tells_apart=lambda shown, named: False)  # features that never told L from R
    seeing = SimpleNamespace(tells_apart=lambda shown, named: True)
    apart = SimpleNamespace(confusion={"L": {"R": 0.8}})  # the descriptors' held-out L views stayed nearer L
    mixed = SimpleNamespace(confusion={"L": {"R": 1.2}})  # one was nearer R
    assert not features_count(blind, apart, "L", "R")
    assert features_count(blind, mixed, "L", "R") and features_count(seeing, apart, "L", "R")
    assert features_count(blind, SimpleNamespace(confusion={}), "L", "R")  # not known: their word counts


@pytest.mark.parametrize("design, seed, roll, truth, verdict", [
    # drawn words, camera tilted 25 degrees: the features named the L die R (lead 0.11), which they
    # told from L by 0.1 on the taught views; the descriptors read it right (1.0), and the roll is read
    ("violet-words", 709, 5, ["L", "R", "dot"], "clear"),
    # engraved letters: the descriptors read an R die as L (0.97), the features name it R, and they
    # told L from R by 1.07 on the taught views: the die stays unsure
    ("green-engraved", 705, 3, ["R", "dot"], "unsure"),
])
def test_at_one_table_the_features_word_decides_only_where_it_told_the_faces_apart(design, seed, roll, truth, verdict):
    reader = DiceReader()
    empty, _, teaching, test, _ = _table_bench().one_table(seed, design, (640, 480), roll + 1)
    examples, _ = bench_teach.player_examples(reader, teaching, 5, empty)
    image, scene = test[roll]
    reading = TaughtReader(reader, teach(examples, name=design, kind="lcr")).read(image, dice_kind="lcr")
    assert sorted(d.face for d in scene.dice) == truth
    assert reading.verdict == verdict
    if verdict == "clear":
        assert sorted(d.face for d in reading.dice) == truth


def _body_of(bgr, spread_l: float, spread_ab: float) -> tuple:
    """A taught set's body colour (``TaughtSet.body``: Lab 0-255 and its spreads) for a BGR colour."""
    L, a, b = cv2.cvtColor(np.uint8([[bgr]]), cv2.COLOR_BGR2LAB)[0, 0].astype(float)
    return (L, a, b, spread_l, spread_ab)


def _die_in_context(die_side: float, turn_deg: float = 0.0, body=(150, 40, 120), behind: float = 0.0,
                    word: bool = False) -> np.ndarray:
    """A context crop of a flat violet die with a yellow ring, ``die_side`` pixels wide, on a grey
    tray; ``behind`` > 0 draws a larger patch of the body colour under it (a neighbour's side, a
    reflection: what makes a die's measure wrong). ``word``: a yellow band from edge to edge
    instead of the ring (a word as wide as the face: its body colour is two strips)."""
    import cv2

    from lcr_pi.vision.teach import CONTEXT

    ctx = np.full((CONTEXT, CONTEXT, 3), (120, 120, 120), np.uint8)
    centre = ((CONTEXT - 1) / 2, (CONTEXT - 1) / 2)
    for side in (behind, die_side):
        if side:
            box = cv2.boxPoints((centre, (side, side), turn_deg))
            cv2.fillConvexPoly(ctx, np.round(box * 16).astype(np.int32), body, cv2.LINE_AA, 4)
    if word:
        band = cv2.boxPoints((centre, (die_side, 0.4 * die_side), turn_deg))
        cv2.fillConvexPoly(ctx, np.round(band * 16).astype(np.int32), (40, 215, 245), cv2.LINE_AA, 4)
    else:
        cv2.circle(ctx, (CONTEXT // 2, CONTEXT // 2), int(die_side * 0.22), (40, 215, 245), max(2, int(die_side * 0.08)), cv2.LINE_AA)
    return ctx


def test_taught_views_are_cut_at_the_size_of_their_die():
    """Aligned on each other, a face's views can all be cut at the wrong size (a ring matches the
    middle of a larger ring); each is cut again at its die's size as measured in its picture, and a
    view whose measure strays from its face's others takes theirs."""
    from lcr_pi.vision.teach import FACE_PX, _affine, _similar, _sized_to_dice

    contexts = [_die_in_context(FACE_PX, turn) for turn in (0, 10, 25)] + [_die_in_context(FACE_PX, 5, behind=1.45 * FACE_PX)]
    labels = ["dot"] * 4
    centre = (len(contexts[0]) - 1) / 2
    too_large = [_affine((centre, centre, 1.5 * FACE_PX, math.radians(t))) for t in (0, 10, 25, 5)]
    sized = _sized_to_dice(contexts, labels, too_large)
    sides = [_similar(h)[2] / FACE_PX for h in sized]
    assert all(abs(s - 1.0) < 0.08 for s in sides), sides
    turns = [round(math.degrees(_similar(h)[3])) for h in sized]
    assert turns == [0, 10, 25, 5]  # only the size changes
    # the fourth view alone (its die measured 1.45 times too large) would have been cut too large
    alone = _sized_to_dice(contexts[3:], labels[3:], too_large[3:])
    assert _similar(alone[0])[2] / FACE_PX > 1.3


def test_a_view_cut_at_part_of_its_die_takes_its_own_measure_not_its_faces_usual_ratio():
    """A view the alignment cut at part of its die (dev tables 701 and 708, engraved: R views at 0.78
    and 0.48 of their dice) while its die measures as its face's others do: its own measure is
    right, and its face's usual ratio of cut to die (1.5 here) would cut it at about half. Of the
    two, the view takes the one that makes its die the size of its face's other dice; a view whose
    measure is what strays (a neighbour in its blob) still takes the usual ratio."""
    from lcr_pi.vision.teach import FACE_PX, _affine, _similar, _sized_to_dice

    turns = (0, 10, 25, 5)
    contexts = [_die_in_context(FACE_PX, t) for t in turns]
    labels = ["dot"] * 4
    centre = (len(contexts[0]) - 1) / 2
    cuts = [_affine((centre, centre, k * FACE_PX, math.radians(t))) for k, t in zip((1.5, 1.5, 1.5, 0.8), turns)]
    sides = [_similar(h)[2] / FACE_PX for h in _sized_to_dice(contexts, labels, cuts)]
    assert all(abs(s - 1.0) < 0.08 for s in sides), sides
    # the fourth view's die measured 1.45 times too large (a patch of body colour behind it): the usual ratio
    contexts[3] = _die_in_context(FACE_PX, 5, behind=1.45 * FACE_PX)
    cuts[3] = _affine((centre, centre, 1.5 * FACE_PX, math.radians(5)))
    sides = [_similar(h)[2] / FACE_PX for h in _sized_to_dice(contexts, labels, cuts)]
    assert all(abs(s - 1.0) < 0.08 for s in sides), sides


def test_a_view_cut_well_off_the_middle_of_its_measured_die_is_moved_onto_it():
    """Aligned on each other, an engraved letter's views can settle on a part of the letter (dev table
    701: L views 0.23-0.43 of a side off their dice's middles, their size right): a view centred
    more than RECENTRE sides off its measured die is moved onto it; one a little off keeps its place
    (a die's measure at a slant takes in a side, and a well-aligned view is nearer right)."""
    from lcr_pi.vision.teach import FACE_PX, RECENTRE, _affine, _similar, _sized_to_dice

    turns = (0, 10, 25, 5)
    contexts = [_die_in_context(FACE_PX, t) for t in turns]
    centre = (len(contexts[0]) - 1) / 2
    shifts = (0.0, 0.0, 0.5 * RECENTRE, 1.75 * RECENTRE)
    cuts = [_affine((centre + k * FACE_PX, centre, FACE_PX, math.radians(t))) for k, t in zip(shifts, turns)]
    sized = [_similar(h) for h in _sized_to_dice(contexts, ["dot"] * 4, cuts)]
    offsets = [math.hypot(x - centre, y - centre) / FACE_PX for x, y, _, _ in sized]
    assert offsets[3] < 0.06, offsets
    assert abs(offsets[2] - 0.5 * RECENTRE) < 0.02, offsets
    assert all(abs(side / FACE_PX - 1.0) < 0.08 for _, _, side, _ in sized), sized


def test_the_features_make_a_find_beside_a_touching_die_sure_but_not_one_nearer_than_a_side():
    """The features' second opinion makes a find the descriptors named the same way sure only where
    no other find is near enough for this one to be its side face (nearer than NEIGHBOURS, a side).
    A touching die lies a side or more away: beside it the features make a find sure (dev tables
    705 and 709, painted: dice named right by both cues were doubted for a touching neighbour
    1.0-1.3 sides away); a find nearer than a side keeps its doubt (a ring on a side face, read as
    the dot face by both cues)."""
    from lcr_pi.vision.teach import _alone, second_opinion

    square = np.array([[0, 0], [40, 0], [40, 40], [0, 40]], np.float64)
    find = TaughtDie("L", 0.4, square + [100, 100], 0.2)
    features = {"L": 0.9, "R": 0.5}
    for gap, sure in ((1.1, True), (1.5, True), (0.85, False)):
        other = TaughtDie("dot", 1.0, square + [100 + 40 * gap, 100], 0.1)
        judged = second_opinion(find, features, 0.6, alone=_alone(find, [find, other]))
        assert (judged.confidence >= 0.6) is sure, (gap, judged.confidence)


def test_a_die_two_searches_named_differently_is_settled_by_the_features_but_a_side_is_not():
    """Two searches of one die naming different faces about as well leave it unsure, as tied; the
    features naming the nearer match's face with a clear lead settle it (dev tables 705 and 708,
    drawn words). A find zeroed as another die's side face is not tied, and stays unsure."""
    from lcr_pi.vision.teach import _one_per_die, _unsure_if_a_side, second_opinion

    square = np.array([[0, 0], [40, 0], [40, 40], [0, 40]], np.float64)
    (tie,) = _one_per_die([TaughtDie("L", 0.9, square + [100, 100], 0.10), TaughtDie("R", 0.8, square + [102, 101], 0.12)])
    assert (tie.face, tie.confidence, tie.tied) == ("L", 0.0, True)
    assert second_opinion(tie, {"L": 0.9, "R": 0.6}, 0.6).confidence == 0.6
    assert second_opinion(tie, {"R": 0.9, "L": 0.6}, 0.6).confidence == 0.0
    top = TaughtDie("dot", 1.0, square + [100, 300], 0.1)
    side = _unsure_if_a_side(replace(tie, corners=square + [110, 270]), [top, replace(tie, corners=square + [110, 270])], (320, 240))
    assert (side.confidence, side.tied) == (0.0, False)
    assert second_opinion(side, {"L": 0.9, "R": 0.6}, 0.6).confidence == 0.0


def test_a_face_whose_views_all_measure_wrong_takes_the_size_of_the_other_faces_dice():
    """A word as wide as the face splits its body colour in two strips: every view of that face
    measures a strip, not the die (dev table 706: the R views at a third of their size), so the
    face's own median is wrong too. A face measured so far from the other faces' dice (or not at
    all) is cut at the size their dice were measured at; one of its views whose own measure agrees
    with that keeps its own."""
    from lcr_pi.vision.teach import FACE_PX, _affine, _similar, _sized_to_dice

    centre = (_die_in_context(FACE_PX).shape[0] - 1) / 2
    turns = (0, 10, 25)
    contexts = [_die_in_context(FACE_PX, t) for t in turns] + [_die_in_context(FACE_PX, t, word=True) for t in turns]
    labels = ["dot"] * 3 + ["R"] * 3
    too_large = [_affine((centre, centre, 1.5 * FACE_PX, math.radians(t))) for t in turns * 2]
    sized = _sized_to_dice(contexts, labels, too_large)
    sides = [_similar(h)[2] / FACE_PX for h in sized]
    assert all(abs(s - 1.0) < 0.08 for s in sides), sides
    assert [round(math.degrees(_similar(h)[3])) for h in sized] == list(turns * 2)
    # the word's views alone measure a strip (too narrow to be a die of that cut) and stay as they were
    alone = _sized_to_dice(contexts[3:], labels[3:], too_large[3:])
    assert all(abs(_similar(h)[2] / FACE_PX - 1.0) > 0.3 for h in alone), [_similar(h)[2] / FACE_PX for h in alone]


def test_views_taken_in_the_shade_are_measured_by_their_own_body_colour():
    """The views of one face were taken in the shade (their dice darker than the taught body
    colour's brightness allows): each view's die is measured by the body colour of its own face,
    so they are cut at their own dice's size, not left as they were nor given the other face's."""
    from lcr_pi.vision.teach import FACE_PX, _affine, _similar, _sized_to_dice

    centre = (_die_in_context(FACE_PX).shape[0] - 1) / 2
    turns = (0, 10, 25, 35)
    contexts = [_die_in_context(1.2 * FACE_PX, t) for t in turns] + [_die_in_context(FACE_PX, t, body=(60, 20, 50)) for t in turns[:3]]
    labels = ["dot"] * 4 + ["C"] * 3
    too_large = [_affine((centre, centre, 1.5 * FACE_PX, math.radians(t))) for t in turns + turns[:3]]
    sides = [_similar(h)[2] / FACE_PX for h in _sized_to_dice(contexts, labels, too_large)]
    assert all(abs(s - 1.2) < 0.1 for s in sides[:4]), sides
    assert all(abs(s - 1.0) < 0.08 for s in sides[4:]), sides


def test_a_nearly_tied_coarse_cut_is_refined_too_and_the_nearer_result_wins(monkeypatch):
    """The fine search only refines around where it starts; where another coarse cut is nearly as
    good as the best (:func:`_other_start`), both are refined and the face takes the nearer result."""
    from lcr_pi.vision import teach as T

    ctx = _die_in_context(T.FACE_PX)
    h = T._affine(T._base_hypothesis(ctx))
    rows = T._Rows(T._describe(T._cut(T._prepare(ctx)[0], T._quarter_turns(h), T.PATCH)), np.array(["dot"] * 4))
    other = np.array([30.0, 30.0, 56.0, 0.0])
    monkeypatch.setattr(T, "_other_start", lambda grid, col, order: other)
    seen = []

    def descend(fine_ctx, rows_list, starts, fixed_size, min_cut):
        seen.append([np.asarray(s) for s in starts])
        # the tied start refines to the nearer cut
        return [(0.25, np.asarray(s)) if s is not other else (0.01, np.asarray(s)) for s in starts]

    monkeypatch.setattr(T, "_descend", descend)
    m = T._search(ctx, rows)
    assert len(seen[0]) == 2 and seen[0][1] is other
    assert m.distances == {"dot": 0.1} and np.array_equal(m.hypothesis, other)
    # a narrow search (from a given start) has no coarse cuts to be tied
    T._search(ctx, rows, start=h, wide=False)
    assert len(seen[1]) == 1


def test_a_descriptor_is_its_patchs_smoothed_grey_shape_and_its_two_colours():
    """The descriptor, made for a whole stack of patches at once, against the same arithmetic
    written out plainly for one patch at a time: the grey patch smoothed (1 2 1, edges
    replicated), centred and scaled to length one; then the mean colour (L, a, b) of the lighter
    part and of the darker part (under the middle lightness by more than 10 of 255) and the darker
    part's share, five times over at a quarter weight, and four zeros."""
    from lcr_pi.vision import teach as T

    rng = np.random.default_rng(7)
    patches = rng.random((6, T.PATCH, T.PATCH, 4)).astype(np.float32)
    patches[0, ..., 1] = 0.5  # a patch of one lightness has no darker part
    described = T._describe(patches)
    k = np.array([1.0, 2.0, 1.0])
    for patch, got in zip(patches, described):
        padded = np.pad(patch[..., 0].astype(np.float64), 1, mode="edge")
        grey = sum(k[i] * k[j] * padded[i:i + T.PATCH, j:j + T.PATCH] for i in range(3) for j in range(3)).ravel() / 16
        grey -= grey.mean()
        grey /= max(np.linalg.norm(grey), 1e-3)
        lab = patch[..., 1:].reshape(-1, 3).astype(np.float64)
        dark = lab[:, 0] < np.sort(lab[:, 0])[len(lab) // 2] - 10 / 255
        light_mean = lab[~dark].mean(0)
        dark_mean = lab[dark].mean(0) if dark.any() else lab.mean(0)
        colour = np.tile(np.concatenate([light_mean, dark_mean, [dark.mean()]]), 5) * 0.25
        assert got.shape == (T.PATCH * T.PATCH + 39,)
        assert np.allclose(got, np.concatenate([grey, colour, np.zeros(4)]), atol=2e-5)


def test_the_fine_search_measures_each_search_against_its_own_faces_rows():
    """The fine searches run side by side, each against its own face's rows (faces taught with
    fewer views padded in the stack): each result is the distance from the cut it settled on to
    the nearest row of its own face, and no farther than where it started."""
    from lcr_pi.vision import teach as T

    ctx = _die_in_context(T.FACE_PX)
    fine = T._prepare(ctx)[0]
    h = T._affine(T._base_hypothesis(ctx))
    dot_rows = T._describe(T._cut(fine, T._quarter_turns(h), T.PATCH))
    off = T._affine((40.0, 44.0, 0.8 * T.FACE_PX, 0.4))
    c_rows = T._describe(T._cut(fine, np.array([off, off + [3, 0, 0, 0, 0, 0]]), T.PATCH))
    rows = T._Rows(np.concatenate([dot_rows, c_rows]), np.array(["dot"] * 4 + ["C"] * 2), per_view=4)
    searched = ["dot", "C", "dot"]
    starts = [h + [4, -3, 0, 0, 0, 0], h, off + [2, 2, 0, 0, 0, 0]]
    results = T._descend(fine, rows.stacked(searched), starts)
    assert len(results) == 3
    for face, start, (distance, settled) in zip(searched, starts, results):
        own = rows.fine[rows.faces == face].astype(np.float64)
        nearest = lambda hyp: float(((own - T._describe(T._cut(fine, np.asarray(hyp)[None], T.PATCH))[0]) ** 2).sum(1).min())
        assert distance == pytest.approx(nearest(settled), abs=1e-4)
        assert distance <= nearest(start) + 1e-6
    assert results[0][0] < 0.05  # the dot, started a few pixels off, found where it was cut


def test_the_search_keeps_a_views_size_when_told_and_reading_never_cuts_small():
    from lcr_pi.vision.teach import FACE_PX, MIN_CUT, _affine, _coarse_grid, _neighbours

    start = _affine((48.0, 48.0, FACE_PX, 0.3))[None]
    size = lambda hs: np.sqrt(np.abs(hs[..., 2] * hs[..., 5] - hs[..., 3] * hs[..., 4]))
    free = _neighbours(start, 0.08)
    kept = _neighbours(start, 0.08, fixed_size=True)
    assert size(free).min() < 0.95 * FACE_PX < 1.05 * FACE_PX < size(free).max()  # free: grows and shrinks
    assert np.allclose(size(kept), FACE_PX)
    small = _affine((48.0, 48.0, 0.72 * FACE_PX, 0.0))[None]
    assert size(_neighbours(small, 0.08, min_cut=MIN_CUT)).min() >= MIN_CUT * FACE_PX - 1e-9
    assert size(_neighbours(small, 0.08)).min() < MIN_CUT * FACE_PX
    assert _coarse_grid(start[0], MIN_CUT)[:, 2].min() >= MIN_CUT * FACE_PX
    assert _coarse_grid(start[0])[:, 2].min() < MIN_CUT * FACE_PX  # teaching searches the whole range


def test_the_engraved_design_on_its_true_outlines_is_named_and_never_misnamed():
    """Green dice with dark engraved letters, taught from five views of each face: on the dice's
    true outlines the taught set names most faces and is never sure of a wrong one (the bowl of an
    engraved R looks like the dot face at half the size)."""
    taught = teach(bench_teach.teaching_examples(bench_teach.design_scenes(1, 40, design="green-engraved"), 5),
                   name="green", kind="lcr")
    right = wrong = n = 0
    for image, scene in bench_teach.design_scenes(2, 30, design="green-engraved"):
        for die in scene.dice:
            if die.cocked:
                continue
            face, confidence, familiar = taught.classify(face_context(image, die.corners))
            n += 1
            if familiar and confidence >= 0.6:
                right += face == die.face
                wrong += face != die.face
    assert n >= 50 and wrong == 0 and right / n >= 0.85, (right, wrong, n)  # measured: 52 of 58, none wrong


def test_a_small_best_cut_is_looked_at_again_at_the_dies_size(painted, monkeypatch):
    """A best cut under MIN_CUT of the die is part of a face or a mark: a clear match at the die's
    size names the die instead; without one the small cut stands, with no confidence (and is
    dropped as a mark when reading a frame)."""
    import lcr_pi.vision.teach as teach_module
    from lcr_pi.vision.teach import CONTEXT, FACE_PX, MIN_CUT, Match

    taught, _ = painted
    middle = (CONTEXT - 1) / 2
    small = Match((middle, middle, 0.5 * FACE_PX, 0.0, 0.0, 0.5 * FACE_PX), "dot", {"dot": 0.1, "L": 0.5, "C": 0.5, "R": 0.5})
    clear = Match((middle, middle, FACE_PX, 0.0, 0.0, FACE_PX), "R", {"dot": 0.5, "L": 0.5, "C": 0.5, "R": 0.1})
    doubtful = Match(clear.hypothesis, "R", {"dot": 0.5, "L": 0.5, "C": 0.5, "R": 0.45})
    calls = []

    def fake_search(ctx, rows, start=None, wide=True, fixed_size=False, min_cut=0.0):
        calls.append(min_cut)
        return small if min_cut == 0.0 else again

    monkeypatch.setattr(teach_module, "_search", fake_search)
    ctx = np.zeros((CONTEXT, CONTEXT, 3), np.uint8)
    again = clear
    assert taught.match(ctx) is clear and calls == [0.0, MIN_CUT]
    again = doubtful
    assert taught.match(ctx) is small
    assert taught.classify(ctx)[:2] == ("dot", 0.0)  # named by a small cut alone: no confidence
    calls.clear()
    small = clear  # a best cut of the die's size is not looked at again
    assert taught.match(ctx) is clear and calls == [0.0]


def test_save_load_and_the_games_fallback(painted, tmp_path):
    taught, _ = painted
    path = save_taught(taught, tmp_path / "teach-violet.npz")
    loaded = load_taught(path)
    assert loaded.name == "violet" and loaded.kind == "lcr" and loaded.faces == taught.faces
    assert np.allclose(loaded.descriptors, taught.descriptors) and loaded.views == taught.views
    assert loaded.body == taught.body and loaded.confusion == taught.confusion
    assert np.array_equal(loaded.crops, taught.crops) and loaded.crop_faces == taught.crop_faces
    # A file from before the classifier's views were kept still loads: its set reads by descriptors alone.
    older = save_taught(replace(taught, crops=None, crop_faces=()), tmp_path / "teach-older.npz")
    assert load_taught(older).crops is None and TaughtReader(object(), load_taught(older)).features is None
    assert load_taught_or_default(path)[1] is None
    assert load_taught_or_default(tmp_path / "none.npz") == (None, None)


def test_too_few_views_of_a_face_is_named():
    face = np.zeros((96, 96, 3), np.uint8)
    with pytest.raises(UserError, match=r"too few views of face R \(2\), dot \(0\)"):
        teach({"L": [face] * 3, "C": [face] * 3, "R": [face] * 2}, name="x", kind="lcr")
    with pytest.raises(UserError, match="faces 6 are not faces of lcr dice"):
        teach({"L": [face] * 3, "6": [face] * 3}, name="x", kind="lcr")
    # Every picture skipped: not "too few views of face 1 (0), 2 (0) ..." of a kind nobody showed.
    with pytest.raises(UserError, match="no view of any face was taken"):
        teach({}, name="x")


@pytest.mark.parametrize("content,problem", [
    (b"", "corrupt taught dice file"),
    (b"PK\x03\x04 broken zip", "corrupt taught dice file"),
    (b"this is not numpy", "corrupt taught dice file"),
])
def test_a_corrupt_teach_file_is_named_and_the_game_falls_back(tmp_path, content, problem):
    path = tmp_path / "teach-x.npz"
    path.write_bytes(content)
    with pytest.raises(UserError) as err:
        load_taught(path)
    assert str(path) in str(err.value) and problem in str(err.value)
    taught, warning = load_taught_or_default(path)
    assert taught is None and str(path) in warning and "standard faces" in warning


def test_teach_files_with_wrong_contents_are_named(painted, tmp_path):
    taught, _ = painted
    meta = {"version": 2, "name": "x", "kind": "lcr", "scale": 0.1, "views": {}, "descriptor": "patch20+colour"}
    cases = {
        "no-meta": ({"descriptors": taught.descriptors, "faces": np.array(taught.faces)}, "it needs the arrays descriptors, faces and meta"),
        "old": ({"descriptors": taught.descriptors, "faces": np.array(taught.faces),
                 "meta": np.array(json.dumps(meta | {"version": 1, "name": "star-dice"}))},
                "older lcr-pi (taught set format 1, views cut straight from the reader's outline); teach again: lcr-pi teach --name star-dice"),
        "version": ({"descriptors": taught.descriptors, "faces": np.array(taught.faces),
                     "meta": np.array(json.dumps(meta | {"version": 9}))}, "unknown format version 9"),
        "shape": ({"descriptors": taught.descriptors[:, :10], "faces": np.array(taught.faces),
                   "meta": np.array(json.dumps(meta))}, "do not fit this program"),
        "descriptor": ({"descriptors": taught.descriptors, "faces": np.array(taught.faces),
                        "meta": np.array(json.dumps(meta | {"descriptor": "patch20-flat+colour"}))},
                       "described as 'patch20-flat+colour', this program describes them as 'patch20+colour': teach again"),
        "no descriptor": ({"descriptors": taught.descriptors, "faces": np.array(taught.faces),
                           "meta": np.array(json.dumps({k: v for k, v in meta.items() if k != "descriptor"}))},
                          "described as None"),
        "few": ({"descriptors": taught.descriptors[:40], "faces": np.array(taught.faces[:40]),
                 "meta": np.array(json.dumps(meta))}, "too few views of face"),
        "body": ({"descriptors": taught.descriptors, "faces": np.array(taught.faces),
                  "meta": np.array(json.dumps(meta | {"body": [1, 2]}))}, "bad 'body' [1, 2]"),
        "confusion": ({"descriptors": taught.descriptors, "faces": np.array(taught.faces),
                       "meta": np.array(json.dumps(meta | {"confusion": {"L": {"6": 1.0}}}))}, "bad 'confusion'"),
        "crops": ({"descriptors": taught.descriptors, "faces": np.array(taught.faces), "meta": np.array(json.dumps(meta)),
                   "crops": taught.crops[:, :20], "crop_faces": np.array(taught.crop_faces)}, "'crops' must be N x 48 x 48 x 3"),
        "crop faces": ({"descriptors": taught.descriptors, "faces": np.array(taught.faces), "meta": np.array(json.dumps(meta)),
                        "crops": taught.crops, "crop_faces": np.array(["6"] * len(taught.crops))}, "'crops' must be"),
        # Found by an audit (2026-12-03): these crashed lcr-pi run and doctor with a traceback.
        "views": ({"descriptors": taught.descriptors, "faces": np.array(taught.faces),
                   "meta": np.array(json.dumps(meta | {"views": "abc"}))}, "bad 'views' 'abc'"),
        "views list": ({"descriptors": taught.descriptors, "faces": np.array(taught.faces),
                        "meta": np.array(json.dumps(meta | {"views": [1, 2]}))}, "bad 'views' [1, 2]"),
        "kind list": ({"descriptors": taught.descriptors, "faces": np.array(taught.faces),
                       "meta": np.array(json.dumps(meta | {"kind": ["lcr"]}))}, "unknown dice kind ['lcr']"),
        "faces 0-d": ({"descriptors": taught.descriptors, "faces": np.array("L"), "meta": np.array(json.dumps(meta))},
                      "corrupt taught dice file"),
        "scale huge": ({"descriptors": taught.descriptors, "faces": np.array(taught.faces),
                        "meta": np.array(json.dumps(meta).replace('"scale": 0.1', '"scale": 1' + "0" * 400))},
                       "holds a number that is not finite"),
        "deep meta": ({"descriptors": taught.descriptors, "faces": np.array(taught.faces),
                       "meta": np.array("[" * 100000 + "]" * 100000)}, "nested too deep"),
    }
    for name, (arrays, problem) in cases.items():
        path = tmp_path / f"{name}.npz"
        np.savez(path, **arrays)
        with pytest.raises(UserError) as err:
            load_taught(path)
        assert str(path) in str(err.value) and problem in str(err.value), name


def test_random_bytes_are_not_a_taught_set_and_the_message_does_not_suggest_unsafe_loading(tmp_path):
    path = tmp_path / "teach-x.npz"
    path.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(UserError) as err:
        load_taught(path)
    assert str(path) in str(err.value) and "allow_pickle" not in str(err.value)


def test_a_failed_save_of_a_taught_set_leaves_the_old_file_and_no_other(tmp_path, monkeypatch):
    # A full card (or the plug pulled) while teaching again: the old set stays the one the game finds.
    # A temporary file left beside it was a second teach-*.npz, so the game chose neither.
    import errno
    import os

    from lcr_pi.settings import taught_sets_in
    from lcr_pi.vision.teach import TaughtSet

    faces = tuple(f for f in ("L", "C", "R", "dot") for _ in range(3 * 24))
    taught = TaughtSet(name="x", kind="lcr", descriptors=np.zeros((len(faces), 439), np.float32), faces=faces,
                       scale=0.2, views={"L": 3, "C": 3, "R": 3, "dot": 3})
    path = save_taught(taught, tmp_path / "teach-x.npz")
    assert path.stat().st_mode & 0o777 == 0o644  # the service's own user reads it
    before = path.read_bytes()

    def full_card(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", full_card)
    with pytest.raises(UserError, match=r"cannot save the taught dice to .*teach-x\.npz \(No space left on device\)"):
        save_taught(replace(taught, name="y"), path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert sorted(tmp_path.iterdir()) == [path] and taught_sets_in(tmp_path) == [path]


def test_a_damaged_byte_inside_a_taught_sets_compressed_arrays_is_named_and_the_game_falls_back(tmp_path):
    # A worn card's damage inside the archive's compressed data, not its directory: zlib's own error
    # stopped the night and the doctor with a traceback.
    import zipfile

    from lcr_pi.vision.teach import TaughtSet

    faces = tuple(f for f in ("L", "C", "R", "dot") for _ in range(3 * 24))
    taught = TaughtSet(name="x", kind="lcr", descriptors=np.zeros((len(faces), 439), np.float32), faces=faces,
                       scale=0.2, views={"L": 3, "C": 3, "R": 3, "dot": 3})
    path = save_taught(taught, tmp_path / "teach-x.npz")
    with zipfile.ZipFile(path) as archive:
        member = archive.getinfo("descriptors.npy")
    data = bytearray(path.read_bytes())
    start = member.header_offset + 30 + int.from_bytes(data[member.header_offset + 26:member.header_offset + 28], "little") \
        + int.from_bytes(data[member.header_offset + 28:member.header_offset + 30], "little")
    data[start] = 0xFF  # a deflate block of the reserved type: "invalid block type"
    path.write_bytes(bytes(data))
    with pytest.raises(UserError, match=r"teach-x\.npz: corrupt taught dice file"):
        load_taught(path)
    taught, warning = load_taught_or_default(path)
    assert taught is None and str(path) in warning and "standard faces" in warning


def test_a_taught_set_the_game_may_not_read_is_said_to_be_unreadable_not_corrupt(tmp_path, monkeypatch):
    # Copied in as 0600 by another user: "corrupt" sent the person to teach again for nothing.
    import errno

    path = tmp_path / "teach-x.npz"
    path.write_bytes(b"PK")

    def denied(file, *args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied", str(file))

    monkeypatch.setattr(np, "load", denied)
    taught, warning = load_taught_or_default(path)
    assert taught is None and f"{path}: cannot read the taught dice file (Permission denied)" in warning
    assert "corrupt" not in warning and "standard faces" in warning


def test_teach_refuses_a_name_that_is_no_file_name(tmp_path, capsys):
    # --name a/b was saved as calibration/teach-a/b.npz, a folder the game never looks in ("saved").
    from lcr_pi.settings import CALIBRATION_DIR

    for name in ("a/b", "..\\x", "", "  "):
        assert main(["teach", "--name", name, "--folder", str(tmp_path)]) == 2, name
        err = capsys.readouterr().err
        assert f"--name {name!r}: give the dice a name without '/'" in err and "teach-NAME.npz" in err, err
    assert not (CALIBRATION_DIR / "teach-a").exists()


def test_teach_command_from_a_labelled_folder(tmp_path, capsys):
    rng = np.random.default_rng(3)
    scenes = []
    for _ in range(20):
        scene = random_scene(rng, size=(480, 360), n_dice=3, kind="lcr", pool="holdout")
        scenes.append(type(scene)(image=bench_teach.paint_design(scene, rng), dice=scene.dice, style=scene.style))
    write_roll_folder(tmp_path / "rolls", scenes)
    out = tmp_path / "teach-violet.npz"
    assert main(["teach", "--folder", str(tmp_path / "rolls"), "--name", "violet", "--kind", "lcr", "--out", str(out)]) == 0
    assert "saved" in capsys.readouterr().out
    taught = load_taught(out)
    assert taught.kind == "lcr" and len(taught.crops) == sum(taught.views.values())  # the classifier's views too
    # Too few pictures of one face: named, nothing saved.
    write_roll_folder(tmp_path / "few", scenes[:1])
    assert main(["teach", "--folder", str(tmp_path / "few"), "--name", "v", "--kind", "lcr", "--out", str(tmp_path / "f.npz")]) == 2
    assert "too few views of face" in capsys.readouterr().err and not (tmp_path / "f.npz").exists()


def test_teaching_from_the_camera_asks_again_when_it_sees_no_die_or_two_apart():
    from lcr_pi.commands.teach import examples_from_camera

    scenes = bench_teach.design_scenes(5, 3, design="violet-painted", n_dice=1)
    two = bench_teach.design_scenes(6, 6, design="violet-painted", n_dice=2)
    two = next((img, sc) for img, sc in two if np.linalg.norm(np.subtract(sc.dice[0].box[:2], sc.dice[1].box[:2])) > 150)
    by_id = {id(img): sc for img, sc in scenes + [two]}
    # each press reads 5 frames (the newest wins): the empty tray asked for first, a blank tray, then
    # two dice apart, then one die each
    frames = iter([np.zeros((360, 480, 3), np.uint8)] * 10 + [two[0]] * 5 + [img for img, _ in scenes for _ in range(5)])

    class Source:
        def read(self):
            return next(frames)

    class Reader:
        def read(self, frame, *, dice_kind="auto", calibration=None):
            sc = by_id.get(id(frame))
            dice = () if sc is None else tuple(DieReading("dot", 0.3, d.box, detector_corners(d, grow=1.2), tuple(np.mean(d.corners, 0)),
                                                          "centre", False) for d in sc.dice)
            return Reading(dice, "unsure" if dice else "no_dice")

    said = []
    examples = examples_from_camera(Source(), Reader(), ["L"], 3, ask=lambda prompt: None, say=said.append)
    assert len(examples["L"]) == 3 and all(v.shape == (96, 96, 3) for v in examples["L"])
    assert said[0].startswith("I see no die") and said[1].startswith("I see more than one die")


def test_teaching_from_the_camera_takes_a_die_the_classifier_calls_no_die_but_not_one_beside_clutter():
    """A design the classifier does not know may be called background (the reader keeps no die): the
    detector's finds outline it when one is sure and all lie together; a find elsewhere refuses."""
    from lcr_pi.commands.teach import examples_from_camera

    die = Detection(240, 180, 60, 60, 0.0, 0.6)
    its_side, phone = Detection(240, 225, 50, 30, 0.0, 0.15), Detection(40, 30, 100, 100, 0.0, 0.15)
    pictures = {"empty tray": [], "beside a phone": [die, its_side, phone], "nothing sure": [replace(die, score=0.2)],
                "one die": [die, its_side]}
    frames = iter(np.full((360, 480, 3), k * 40, np.uint8) for k, name in enumerate(pictures) for _ in range(5))

    class Source:
        def read(self):
            return next(frames)

    class Reader:
        settings = ReaderSettings(sure_detection=0.25)

        def read(self, frame, *, dice_kind="auto", calibration=None):
            return Reading((), "no_dice")

        def find_dice(self, frame):
            return pictures[list(pictures)[int(frame[0, 0, 0]) // 40]]

    said = []
    examples = examples_from_camera(Source(), Reader(), ["L"], 1, ask=lambda prompt: None, say=said.append)
    assert len(said) == 2 and all(s.startswith("I see no die") for s in said)  # beside a phone; nothing sure
    assert len(examples["L"]) == 1  # the one die, with its side


def test_teaching_from_the_camera_leaves_out_what_the_empty_tray_shows_but_not_something_new():
    """Clutter beside the tray that the reader keeps as dice (dev table 705: a domino in a corner of
    every picture) was a second die in every teaching picture; found in the empty tray too, it is
    left out. Something found only once the die is shown (a second die, a phone) still refuses."""
    from lcr_pi.commands.teach import examples_from_camera

    def die(x, y, side=28.0, face="L"):
        h = side / 2
        return DieReading(face, 0.9, (x - h, y - h, x + h, y + h), ((x - h, y - h), (x + h, y - h), (x + h, y + h), (x - h, y + h)),
                          (x, y), "centre", False)

    domino = die(592, 454, 44, "dot")
    pictures = {"empty tray": (domino,), "a die and the domino": (die(385, 370), domino),
                "a die, the domino and a second die": (die(385, 370), domino, die(200, 100)),
                "the die again": (die(300, 200), replace(domino, centre=(593, 452)))}
    frames = iter(np.full((360, 480, 3), k * 40, np.uint8) for k, name in enumerate(pictures) for _ in range(5))

    class Source:
        def read(self):
            return next(frames)

    class Reader:  # no detector of its own: its dice are what it finds
        def read(self, frame, *, dice_kind="auto", calibration=None):
            dice = pictures[list(pictures)[int(frame[0, 0, 0]) // 40]]
            return Reading(dice, "unsure" if dice else "no_dice")

    said = []
    examples = examples_from_camera(Source(), Reader(), ["L"], 2, ask=lambda prompt: None, say=said.append)
    assert len(examples["L"]) == 2
    assert said == ["I see more than one die; put exactly one die in the tray and try again."]


class _OneDieCamera:
    """A camera whose n-th picture is all of shade n (0: the empty tray), and a reader that sees one
    die in the middle of every picture but the empty tray's."""

    def __init__(self):
        self.shown = 0
        self.reads = 0

    def read(self):
        self.reads += 1
        if self.reads % 5 == 1 and self.reads > 1:  # each press reads 5 frames (the newest wins)
            self.shown += 1
        return np.full((360, 480, 3), self.shown, np.uint8)

    def close(self):
        pass


class _MiddleDieReader:
    def read(self, frame, *, dice_kind="auto", calibration=None):
        if not frame[0, 0, 0]:
            return Reading((), "no_dice")
        box = ((225, 165), (255, 165), (255, 195), (225, 195))
        return Reading((DieReading("L", 0.9, (225, 165, 255, 195), box, (240, 180), "centre", False),), "unsure")


def test_teaching_from_the_camera_takes_back_the_last_view_when_back_or_undo_is_typed():
    # Found by an audit: a player who showed the wrong face (or a blurred view) could not take the
    # view back; it was taught as that face.
    from lcr_pi.commands.teach import examples_from_camera

    answers = iter(["", "back", "", "", "back", "", "", " Undo ", "", ""])
    prompts, said = [], []

    def ask(prompt):
        prompts.append(prompt)
        return next(answers)

    camera = _OneDieCamera()
    examples = examples_from_camera(camera, _MiddleDieReader(), ["L", "C"], 2, ask=ask, say=said.append)
    # Pictures 1-6 were taken; view 2 of L (picture 2) and view 1 of C (picture 4) were taken back.
    assert {f: [int(v[0, 0, 0]) for v in views] for f, views in examples.items()} == {"L": [1, 3], "C": [5, 6]}
    assert said == ["There is no view to take back yet.",
                    "Took back view 2 of the L face; show it again.",
                    "Took back view 1 of the C face; show it again."]
    assert "(view 2 of 2;" in prompts[5] and "Show the L face" in prompts[5]  # back to the L face's view 2
    assert all("type back" in p for p in prompts[1:])


def test_teach_command_from_the_camera_takes_back_a_view_typed_back(tmp_path, capsys, monkeypatch):
    import io

    import lcr_pi.camera
    import lcr_pi.vision.reader
    import lcr_pi.vision.teach

    taught = {}

    def teach(examples, **kw):
        taught.update(examples)
        raise UserError("stopped here by the test")

    monkeypatch.setattr(lcr_pi.camera, "open_frame_source", lambda spec, **kw: _OneDieCamera())
    monkeypatch.setattr(lcr_pi.vision.reader, "DiceReader", lambda models=None: _MiddleDieReader())
    monkeypatch.setattr(lcr_pi.vision.teach, "teach", teach)
    monkeypatch.setattr("sys.stdin", io.StringIO("\n" * 4 + "back\n" + "\n" * 10))
    assert main(["teach", "--name", "mine", "--views", "3", "--out", str(tmp_path / "t.npz")]) == 2
    assert "Took back view 3 of the L face; show it again." in capsys.readouterr().out
    assert [int(v[0, 0, 0]) for v in taught["L"]] == [1, 2, 4] and set(taught) == {"L", "C", "R", "dot"}


class _AsTheSixthRoundRead:
    """The shipped reader, made to do what the sixth-round reader (shipped 2026-12-03 to 2026-12-05) did
    at two dev tables of ``bench_teach_table.py``, which the reader shipped since no longer does:
    ``clutter`` (x, y, side) is found surely in every picture and kept as an unsure die (a domino beyond
    the tray's rim at table 705), and with ``no_dice`` the die shown is found by the detector but
    called background, so the reader keeps no die (the painted design at table 104)."""

    def __init__(self, reader, clutter=(), no_dice=False):
        self.reader, self.settings, self.clutter, self.no_dice = reader, reader.settings, list(clutter), no_dice

    def find_dice(self, frame):
        return list(self.reader.find_dice(frame) or []) + [Detection(x, y, s, s, 0.0, 0.5) for x, y, s in self.clutter]

    def read(self, frame, dice_kind="auto"):
        reading = self.reader.read(frame, dice_kind=dice_kind)
        dice = () if self.no_dice else reading.dice
        for x, y, s in self.clutter:
            box = (x - s / 2, y - s / 2, x + s / 2, y + s / 2)
            corners = ((box[0], box[1]), (box[2], box[1]), (box[2], box[3]), (box[0], box[3]))
            dice += (DieReading("dot", 0.6, box, corners, (x, y), "bottom right", False),)
        return Reading(dice, "unsure" if dice else "no_dice")


def test_a_teaching_picture_beside_clutter_the_reader_keeps_as_dice_is_outlined_given_the_empty_tray():
    """At dev table 705 (dice 28 px) the sixth-round reader found a domino beyond the tray's rim surely
    and kept it as dice in every picture, the empty tray's too; 78 of 80 teaching pictures were
    refused. Left out as found in the empty tray, the die shown is outlined. (The reader shipped since
    2026-12-05 does not find the domino: the domino is put back by :class:`_AsTheSixthRoundRead`.)"""
    from lcr_pi.commands.teach import already_there, die_shown

    empty, _, teaching, _, _ = _table_bench().one_table(705, "violet-words", (640, 480), 1, teach_pictures=1)
    reader = _AsTheSixthRoundRead(DiceReader(), clutter=[(610.0, 455.0, 30.0)])
    (image, scene), = teaching
    assert die_shown(reader, image, dice_kind="lcr")[0] is None  # the domino is a second die
    assert already_there(reader, empty) == [(610.0, 455.0, 30.0)]  # the shipped detector sees nothing else there
    outline, dice = die_shown(reader, image, dice_kind="lcr", there=already_there(reader, empty))
    (truth,) = scene.dice
    assert outline is not None and len(dice) == 1
    assert cv2.pointPolygonTest(outline.astype(np.float32), tuple(map(float, np.mean(truth.corners, 0))), False) > 0
    assert 0.6 < float(np.ptp(outline[:, 0])) / float(np.ptp(truth.corners[:, 0])) < 1.6


def test_a_teaching_picture_of_an_unknown_design_is_outlined():
    """On rendered dev tables (not the benchmark's 1-3): the sixth-round reader found the painted L of
    dev table 104 by the detector on its top, but its classifier called it background, so the reader
    kept no die; teaching outlines it there from the detector's finds (the reader shipped since
    2026-12-05 keeps it, unsure: :class:`_AsTheSixthRoundRead` leaves it out as the sixth round did).
    (An empty tray with a phone beside it: the next test.)"""
    from lcr_pi.commands.teach import die_shown

    reader = _AsTheSixthRoundRead(DiceReader(), no_dice=True)
    _, _, teaching, _, _ = _table_bench().one_table(104, "violet-painted", (640, 480), 1, teach_pictures=1)
    (image, scene), = teaching
    outline, dice = die_shown(reader, image, dice_kind="lcr")
    assert dice == () and outline is not None  # the reader alone keeps no die here
    (truth,) = scene.dice
    assert cv2.pointPolygonTest(outline.astype(np.float32), tuple(map(float, np.mean(truth.corners, 0))), False) > 0
    assert 0.6 < float(np.ptp(outline[:, 0])) / float(np.ptp(truth.corners[:, 0])) < 1.6


def test_an_empty_tray_with_a_phone_beside_it_is_no_die_shown():
    """The shipped detector finds a phone beside dev table 101's empty tray at 0.33, over the reader's sure
    score (0.3), and nothing else: without a picture of the empty tray to leave it out, it was outlined as
    the die shown. Outlining from the detector's finds now needs :data:`OUTLINE_FROM_FINDS`."""
    from lcr_pi.commands.teach import die_shown

    reader = DiceReader()
    empty, _, _, _, _ = _table_bench().one_table(101, "violet-painted", (640, 480), 1, teach_pictures=1)
    assert any(d.score >= reader.settings.sure_detection for d in reader.find_dice(empty))
    outline, dice = die_shown(reader, empty, dice_kind="lcr")
    assert outline is None and dice == ()


def test_a_night_set_for_pip_dice_says_it_leaves_a_taught_lcr_set_out(painted, tmp_path):
    import cv2
    from types import SimpleNamespace

    from lcr_pi.commands import run as run_command
    from lcr_pi.settings import parse_settings

    taught, scenes = painted
    teach_file = save_taught(taught, tmp_path / "teach-painted.npz")
    frames = tmp_path / "frames"
    frames.mkdir()
    cv2.imwrite(str(frames / "0001.png"), scenes[0][0])
    readings = {}
    for kind in ("pip", "lcr"):
        settings = parse_settings(f'[reader]\ndice = "{kind}"\nteach = "{teach_file}"\n'
                                  f'calibration = "{tmp_path / "none.json"}"\n[camera]\nsource = "{frames}"\n')
        night = SimpleNamespace(problems=[])
        camera_dice = run_command._camera_dice(settings, night, say=lambda text: None)
        readings[kind] = camera_dice.read(scenes[0][0])
        told = [p for p in night.problems if "taught dice" in p]
        if kind == "pip":
            assert told and "'violet'" in told[0] and "LCR dice" in told[0] and "dice = 'pip'" in told[0], night.problems
        else:
            assert not told, night.problems
    assert readings["pip"].kind == "pip"  # the reader's own reading: the taught set was not asked
    assert readings["lcr"].kind == "lcr"


def test_a_night_names_a_teach_or_calibration_file_the_settings_name_but_that_is_not_there(tmp_path):
    import cv2
    from types import SimpleNamespace

    from lcr_pi.commands import run as run_command
    from lcr_pi.settings import parse_settings

    frames = tmp_path / "frames"
    frames.mkdir()
    cv2.imwrite(str(frames / "0001.png"), np.full((96, 128, 3), 90, np.uint8))
    settings = parse_settings(f'[reader]\nteach = "{tmp_path / "teach-gone.npz"}"\n'
                              f'calibration = "{tmp_path / "gone.json"}"\n[camera]\nsource = "{frames}"\n')
    night = SimpleNamespace(problems=[])
    assert run_command._camera_dice(settings, night, say=lambda text: None) is not None  # the night goes on, reading as it can
    assert any("teach-gone.npz" in p and "does not exist" in p for p in night.problems), night.problems
    assert any("gone.json" in p and "does not exist" in p and "without calibration" in p for p in night.problems)


def test_a_night_says_when_several_taught_sets_lie_in_the_calibration_folder_and_none_is_chosen(tmp_path, monkeypatch):
    # A second design taught: the night reads with neither, and must say so (as the doctor does).
    from types import SimpleNamespace

    from lcr_pi import settings as settings_module
    from lcr_pi.commands import run as run_command
    from lcr_pi.settings import parse_settings

    frames = tmp_path / "frames"
    frames.mkdir()
    cv2.imwrite(str(frames / "0001.png"), np.full((96, 128, 3), 90, np.uint8))
    folder = tmp_path / "calibration"
    folder.mkdir()
    (folder / "teach-stars.npz").write_bytes(b"")
    monkeypatch.setattr(settings_module, "CALIBRATION_DIR", folder)
    settings = parse_settings(f'[reader]\ncalibration = "{tmp_path / "none.json"}"\n[camera]\nsource = "{frames}"\n')
    night = SimpleNamespace(problems=[])
    run_command._camera_dice(settings, night, say=lambda text: None)
    assert not any("taught dice sets" in p for p in night.problems), night.problems  # one set: it is the one used
    (folder / "teach-words.npz").write_bytes(b"")
    night = SimpleNamespace(problems=[])
    assert run_command._camera_dice(settings, night, say=lambda text: None) is not None
    told = [p for p in night.problems if "taught dice sets" in p]
    assert told and "teach-stars.npz, teach-words.npz" in told[0] and "none chosen" in told[0], night.problems
    assert "standard faces" in told[0] and "teach in [reader]" in told[0]


def test_a_face_whose_print_reaches_its_edge_is_still_a_top_face_and_a_side_is_not():
    # A violet die seen from above with its side showing below, a yellow star whose top point
    # reaches the face's edge: the body colour's blob has a bay where the star is, not a hole,
    # so its middle lay on the blob's edge and the face was taken for a side (dice on a table,
    # named right by their match, were left out of the roll).
    from lcr_pi.vision.teach import BodyMap

    frame = np.full((200, 240, 3), 110, np.uint8)
    body, ink = (150, 40, 120), (40, 215, 245)
    cv2.rectangle(frame, (60, 60), (120, 120), body, -1)  # the top face, 61 px
    cv2.rectangle(frame, (60, 121), (120, 140), (120, 32, 96), -1)  # a side face, in shade
    turns = np.linspace(-np.pi / 2, 1.5 * np.pi, 11)[:-1]
    radii = np.where(np.arange(10) % 2 == 0, 33, 13)
    star = np.stack([90 + radii * np.cos(turns), 90 + radii * np.sin(turns)], 1)
    cv2.fillPoly(frame, [np.round(star).astype(np.int32)], ink)
    colour = BodyMap(frame, _body_of(body, 30.0, 15.0))
    assert colour.usable and colour.dt[90, 90] == 0  # the star's middle is outside the blob itself
    assert colour.top_face((90, 90), 61)
    assert not colour.top_face((90, 131), 61)  # the side face lies along the blob's edge
    assert not colour.top_face((90, 90), 20)  # a mark a third of the die is no face


def test_a_face_split_by_a_word_wider_than_the_closing_is_still_a_top_face_and_its_side_is_not():
    # Dev table 702 (violet dice about 34 px, drawn words): RIGHT printed across the face, reaching
    # its edge, with letters 11 px tall, left a bay in the body colour too wide for the closing of a
    # fifth of a face; 11 of 108 top faces were taken for sides and their dice left to the reader
    # (whose classifier named one R as an L, sure).
    from lcr_pi.vision.teach import BodyMap

    frame = np.full((120, 160, 3), (60, 90, 120), np.uint8)  # a brown tray
    body, ink = (150, 40, 120), (40, 215, 245)
    cv2.rectangle(frame, (60, 40), (93, 73), body, -1)  # the top face, 34 px
    cv2.rectangle(frame, (60, 74), (93, 85), (120, 32, 96), -1)  # a side face, in shade
    cv2.rectangle(frame, (66, 51), (93, 61), ink, -1)  # the word, to the face's right edge
    colour = BodyMap(frame, _body_of(body, 30.0, 15.0))
    assert colour.usable and colour.dt[56, 77] == 0  # the word's middle is outside the blob itself
    assert float(colour._closed_dt(34)[51:62, 71:82].max()) < 0.3 * 34  # and the closing does not shut it
    assert colour.top_face((77, 56), 34)
    assert not colour.top_face((77, 80), 34)  # the side face lies along the blob's edge
    assert not colour.top_face((77, 56), 12)  # a mark a third of the die is no face


def test_the_table_benchmark_teaches_and_reads_rolls_of_one_table():
    table_bench = _table_bench()
    for design in ("violet-words", "violet-painted"):
        empty, (cal_image, cal_scene), teaching, test, style = table_bench.one_table(4, design, (320, 240), 3, teach_pictures=4)
        assert empty.shape == cal_image.shape == (240, 320, 3) and len(cal_scene.dice) == 3
        assert len(teaching) == 4 and all(len(scene.dice) == 1 for _, scene in teaching)
        assert len(test) == 3 and all(1 <= len(scene.dice) <= 3 for _, scene in test)
        assert all(scene.style["camera"] == style["camera"] for _, scene in teaching + test)
        assert all(d.face in ("L", "C", "R", "dot") for _, scene in teaching + test for d in scene.dice)
    # the violet design's own faces are drawn (its body colour), not the renderer's designs
    _, _, teaching, _, _ = table_bench.one_table(4, "violet-words", (320, 240), 1, teach_pictures=2)
    image, scene = teaching[0]
    x0, y0, x1, y1 = (int(v) for v in scene.dice[0].box)
    face = image[y0:y1, x0:x1].reshape(-1, 3).astype(float)
    assert np.linalg.norm(np.median(face, 0) - np.array(bench_teach.BODY)) < 90


@functools.cache
def _table_bench():
    return _benchmark("bench_teach_table")  # loaded once, when a test first needs it


# A floor for teaching at one table with the shipped reader (as benchmarks/bench_teach_table.py
# measures it, on a smaller night): table 1, 80 teaching pictures (the bench's; a player shows a die
# again when the reader sees none or several), 30 rolls of 1-3 dice. Measured 2026-12-03 with the
# sixth-round classifier: drawn violet words 83.9 % (the reader alone 39.3 %), green engraved 100 %
# (alone 71.4 %), no frame sure and wrong. (Fifth round, 60 pictures: 95.8 % and 97.9 %.) The reader
# shipped 2026-12-05 reads the engraved design alone (98.2 % here, taught 100 %): teaching must not
# make it worse; the drawn words it still cannot read untaught.
@pytest.mark.parametrize("design, floor, gain", [("violet-words", 0.8, 0.25), ("green-engraved", 0.95, 0.0)])
def test_teaching_at_one_table_reads_that_tables_rolls(design, floor, gain):
    from lcr_pi.vision.reader import DiceReader

    reader = DiceReader()
    _, _, teaching, test, _ = _table_bench().one_table(1, design, (640, 480), 30, teach_pictures=80)
    examples, _ = bench_teach.player_examples(reader, teaching, 5)
    assert all(4 <= len(views) <= 5 for views in examples.values()) and set(examples) == {"L", "C", "R", "dot"}
    measured, _ = bench_teach.score_reader(TaughtReader(reader, teach(examples, name=design, kind="lcr")).read, test)
    alone, _ = bench_teach.score_reader(reader.read, test)
    assert measured["die_accuracy"] >= floor and measured["silent_error_rate"] <= 1 / 30
    assert measured["die_accuracy"] >= alone["die_accuracy"] + gain  # teaching is what reads this design


def test_a_set_taught_at_one_table_is_sure_of_a_clear_face_beyond_two_of_its_close_views_spread():
    """Views taught at one table agree closely (typical distance 0.07-0.12 for the painted design at
    dev tables 701-704), and a die read elsewhere on that tray lay more than two such distances from
    every view though clearly nearest its own face: it was doubted. How sure the set is now judges
    distance by at least SURE_SCALE; which faces belong to the set at all (FAMILIAR) is unchanged."""
    from lcr_pi.vision.teach import FAMILIAR, SURE_SCALE, VARIANTS_PER_VIEW, TaughtSet

    rows = np.zeros((4 * VARIANTS_PER_VIEW, 439), np.float32)
    faces = tuple(f for f in ("L", "C", "R", "dot") for _ in range(VARIANTS_PER_VIEW))
    close = TaughtSet(name="x", kind="lcr", descriptors=rows, faces=faces, scale=0.07, views={})
    face, confidence, familiar = close.judge({"L": 0.2, "C": 0.6, "R": 0.5, "dot": 0.7})  # 2.9 of its 0.07
    assert (face, familiar) == ("L", True) and confidence >= 0.6
    assert close.judge({"L": 0.2, "C": 0.6, "R": 0.24, "dot": 0.7})[1] < 0.6  # as near R: still unsure
    assert close.judge({"L": 2 * SURE_SCALE + 0.05, "C": 0.9, "R": 0.9, "dot": 0.9})[1] < 0.6  # far by any yardstick
    assert not close.judge({"L": FAMILIAR * 0.07 + 0.01, "C": 0.9, "R": 0.9, "dot": 0.9})[2]  # not of the set
    wide = replace(close, scale=0.2)  # a set whose views spread more judges as before
    assert wide.judge({"L": 0.45, "C": 0.9, "R": 0.9, "dot": 0.9})[1] == 0.75


def _violet_die_on_blue_cloth(shadow: float | None = None):
    """A picture of the empty tray (blue cloth under broad light and dark bands) and one with a violet
    die on it, printed with a yellow ring; its true corners. Violet on blue differs from the cloth less
    than the bands do, as at dev table 708, so only the print stands out from the tray around it."""
    h, w = 480, 640
    x = np.linspace(0, 1, w)[None, :, None]
    shade = 0.55 + 0.45 * np.cos(2 * np.pi * (x * 1.3 + 0.1))
    grain = np.random.default_rng(0).normal(0, 3, (h, w, 3))
    empty = np.clip(np.array([170, 70, 40], np.float32) * shade * np.ones((h, 1, 1)) + grain, 0, 255).astype(np.uint8)
    corners = np.array([[420, 200], [560, 215], [545, 355], [405, 340]], np.float64)
    frame = empty.copy()
    if shadow is not None:  # the die's shadow, cast down and to the right
        under = np.zeros((h, w), np.uint8)
        cv2.fillConvexPoly(under, (corners + 30).astype(np.int32), 1)
        frame[under > 0] = (frame[under > 0] * shadow).astype(np.uint8)
    cv2.fillConvexPoly(frame, corners.astype(np.int32), (120, 40, 90))
    cv2.circle(frame, (483, 278), 28, (40, 200, 230), 9)
    return empty, frame, corners


def test_a_die_of_the_trays_colour_is_measured_whole_against_the_empty_tray():
    """Teaching at dev table 708 (violet dice on blue cloth, 116 px) measured most views by their
    print alone, so the taught faces were letters without their die (taught painted dice read 28 %).
    With the picture of the empty tray that teaching takes first, the die is what changed since: its
    shadow, a drift of the camera's exposure and an empty tray of another size are allowed for."""
    from lcr_pi.vision.teach import die_outline, mean_side, view_outline

    empty, frame, corners = _violet_die_on_blue_cloth()
    side, middle = mean_side(corners), corners.mean(0)
    mark = middle + (corners - middle) * 0.45  # the reader outlined the print only

    def size_and_offset(outline):
        return mean_side(outline) / side, float(np.linalg.norm(outline.mean(0) - middle)) / side

    alone = die_outline(frame, mark)
    assert alone is not None and size_and_offset(alone)[0] < 0.6  # without the empty tray: the print
    assert size_and_offset(view_outline(frame, mark))[0] < 0.6
    for tray in (empty, np.clip(empty * 1.12, 0, 255).astype(np.uint8)):  # as taken, and 12 % brighter
        size, offset = size_and_offset(view_outline(frame, mark, tray))
        assert 0.9 < size < 1.2 and offset < 0.05
    shaded_empty, shaded, _ = _violet_die_on_blue_cloth(shadow=0.6)
    size, offset = size_and_offset(view_outline(shaded, mark, shaded_empty))
    assert 0.9 < size < 1.2 and offset < 0.05  # not the die and its shadow
    # An empty tray of another size (the camera's resolution changed) is not compared: as without it.
    assert np.allclose(view_outline(frame, mark, empty[:240]), view_outline(frame, mark))


def test_teaching_at_a_table_of_dice_like_its_cloth_keeps_whole_faces():
    """Dev table 708, painted dice: the first teaching picture, cut by the die's true corners. Without
    the empty tray the die is measured by its print (an L) and the view is cut around that; with it,
    the view is cut around the die."""
    from lcr_pi.vision.teach import mean_side, view_outline

    empty, _, teaching, _, _ = _table_bench().one_table(708, "violet-painted", (640, 480), 1, teach_pictures=1)
    (image, scene), = teaching
    (die,) = scene.dice
    true_side = mean_side(die.corners)
    assert mean_side(view_outline(image, die.corners)) / true_side < 0.4
    with_empty = view_outline(image, die.corners, empty)
    assert 0.9 < mean_side(with_empty) / true_side < 1.3
    assert np.linalg.norm(with_empty.mean(0) - np.mean(die.corners, 0)) < 0.1 * true_side


def test_teaching_from_a_folder_without_the_empty_tray_cuts_each_view_at_its_labelled_corners(tmp_path):
    """Labelled corners are used as they are. Measured without the empty tray, the painted die of dev
    table 708's first teaching picture (violet on blue cloth) is measured by its print, under 0.4 of
    the die, and that measure used to replace the label: the view was cut around the print."""
    from lcr_pi.commands.teach import examples_from_folder
    from lcr_pi.vision.teach import mean_side, view_outline

    _, _, teaching, _, _ = _table_bench().one_table(708, "violet-painted", (640, 480), 1, teach_pictures=1)
    (image, scene), = teaching
    (die,) = scene.dice
    corners = np.asarray(die.corners, np.float64)
    assert mean_side(view_outline(image, corners)) / mean_side(corners) < 0.4  # what measuring it says
    folder = tmp_path / "rolls"
    (folder / "images").mkdir(parents=True)
    cv2.imwrite(str(folder / "images" / "die.png"), image)
    (folder / "labels.jsonl").write_text(json.dumps({"image": "images/die.png", "faces": [die.face], "corners": [corners.tolist()]}) + "\n")
    (view,) = examples_from_folder(folder)[die.face]
    assert np.array_equal(view, face_context(cv2.imread(str(folder / "images" / "die.png")), corners))


def test_teaching_from_a_folder_compares_each_picture_with_a_picture_of_the_empty_tray(tmp_path, capsys, monkeypatch):
    """``lcr-pi teach --folder DIR --empty IMAGE`` measures each die against the empty tray, as teaching
    from the camera does; a picture of another size is not compared, and a bad --empty is named."""
    import lcr_pi.vision.teach as teach_module

    empty, frame, corners = _violet_die_on_blue_cloth()
    folder = tmp_path / "rolls"
    (folder / "images").mkdir(parents=True)
    lines = []
    for k in range(4):
        for face in ("L", "C", "R", "dot"):
            name = f"{face}{k}.png"
            cv2.imwrite(str(folder / "images" / name), frame if k else cv2.resize(frame, (320, 240)))
            scale = 1.0 if k else 0.5
            lines.append(json.dumps({"image": f"images/{name}", "faces": [face], "corners": [(corners * scale).tolist()]}))
    (folder / "labels.jsonl").write_text("\n".join(lines) + "\n")
    cv2.imwrite(str(tmp_path / "empty.png"), empty)
    compared = []
    real_view_context = teach_module.view_context

    def spy(image, quad, tray=None):
        compared.append(tray is not None and tray.shape == image.shape)
        return real_view_context(image, quad, tray)

    monkeypatch.setattr(teach_module, "view_context", spy)
    out = tmp_path / "t.npz"
    args = ["teach", "--folder", str(folder), "--name", "v", "--kind", "lcr", "--out", str(out)]
    assert main(args + ["--empty", str(tmp_path / "empty.png")]) == 0
    said = capsys.readouterr().out
    # The 320x240 pictures are not compared: they are cut at their labelled corners as they are.
    assert compared == [True] * 12
    assert "is 320x240 and the empty tray 640x480" in said and "saved" in said
    (tmp_path / "broken.png").write_bytes(b"\x89PNG\r\n")
    assert main(args + ["--empty", str(tmp_path / "broken.png")]) == 2
    assert "broken.png: not a readable image" in capsys.readouterr().err
    assert main(["teach", "--name", "v", "--empty", str(tmp_path / "empty.png"), "--out", str(out)]) == 2
    assert "--empty goes with --folder" in capsys.readouterr().err


class _NetOfLogits:
    """Stands in for the face classifier: the given class logits, crop by crop (any turn alike)."""

    def __init__(self, logits):
        self.logits, self.n = np.asarray(logits, np.float32), 0

    def setInput(self, blob):
        self.n = len(blob)

    def forward(self, *names):
        return np.resize(self.logits, (self.n, self.logits.shape[1]))


def _views_read_as(faces_and_logit_leads, taught_faces):
    from lcr_pi.vision.reader import CLASSES

    logits = np.zeros((len(taught_faces), len(CLASSES)), np.float32)
    for row, (name, lead) in zip(logits, faces_and_logit_leads):
        row[CLASSES.index(name)] = lead
    reader = type("Reader", (), {})()
    reader._classifier, reader.settings = _NetOfLogits(logits), ReaderSettings(sure_confidence=0.95, tta_rotations=1)
    taught = type("Taught", (), {"crops": np.zeros((len(taught_faces), 48, 48, 3), np.uint8), "crop_faces": tuple(taught_faces),
                                 "kind": "lcr"})()
    return reader, taught


def test_the_reader_knows_a_design_when_it_names_half_its_taught_views_surely_and_none_wrong():
    from lcr_pi.vision.teach import reader_knows_design

    faces = ("L", "C", "R", "dot")
    assert reader_knows_design(*_views_read_as([("L", 9), ("C", 9), ("R", 1), ("1", 1)], faces))  # 2 of 4 sure, right
    assert not reader_knows_design(*_views_read_as([("L", 9), ("C", 1), ("R", 1), ("1", 1)], faces))  # 1 of 4
    assert not reader_knows_design(*_views_read_as([("L", 9), ("C", 9), ("L", 9), ("1", 9)], faces))  # an R named L surely
    assert reader_knows_design(object(), _views_read_as([], faces)[1])  # a stand-in reader: cannot tell, trusted
    reader, taught = _views_read_as([("L", 9), ("C", 9), ("R", 1), ("1", 1)], faces)
    reader.settings = type("Settings", (), {"sure_confidence": 0.95})()  # settings without the turns: one look
    assert reader_knows_design(reader, taught)


def _told_apart(self, shown: str, named: str) -> bool:
    """A features stand-in's ``tells_apart``: its word counts between any two faces."""
    return True


def test_a_clear_taught_face_stands_against_the_reader_only_where_the_reader_does_not_know_the_design(monkeypatch):
    """Dev table 702 (drawn words): the reader, which names 1-4 of 20 taught views of such designs
    surely, named an R die L at 0.95; the taught set named it R clearly, and the features agreed. The
    die was doubted; now the taught face stands, as long as the taught set is clear and the features
    do not clearly name another face (since 2026-12-06 they need not name the taught face with a clear
    lead: on drawn words they often cannot tell LEFT from RIGHT). The engraved design, whose views the
    reader names surely (17-19 of 20), keeps the doubt."""
    import lcr_pi.vision.teach as teach_module
    from lcr_pi.vision.teach import relabel

    frame = np.full((240, 320, 3), 90, np.uint8)
    corners = np.array([[140.0, 100.0], [180.0, 100.0], [180.0, 140.0], [140.0, 140.0]])
    reader_die = DieReading("L", 0.97, (140.0, 100.0, 180.0, 140.0), tuple(map(tuple, corners)), (160.0, 120.0), "centre", True)
    reading = Reading((reader_die,), "clear", kind="lcr")
    taught = type("Taught", (), {"kind": "lcr", "views": {"L": 5, "C": 5, "R": 5, "dot": 5}, "confusion": {}})()

    def read_with(confidence, features_say, knows):
        found = [TaughtDie("R", confidence, corners, 0.1, {"R": 0.1, "L": 0.4})]
        monkeypatch.setattr(teach_module, "find_taught_dice", lambda frame, taught, outlines, finds=(), matches=None, region=None, bodies=None, pairs=None, asked_pairs=None: (found, []))
        features = type("Features", (), {"similarities": lambda self, crops: [features_say], "tells_apart": _told_apart})()
        (die,) = relabel(reading, frame, taught, 0.6, features=features, reader_knows=knows).dice
        return die.face, die.sure

    agree, disagree = {"R": 0.9, "L": 0.6, "C": 0.2, "dot": 0.1}, {"L": 0.9, "R": 0.6, "C": 0.2, "dot": 0.1}
    assert read_with(0.95, agree, knows=False) == ("R", True)
    assert read_with(0.95, agree, knows=True) == ("R", False)  # the reader knows such dice: one of them is wrong
    assert read_with(0.8, agree, knows=False) == ("R", False)  # not clear enough to stand against it
    assert read_with(0.95, disagree, knows=False)[1] is False  # the features side with the reader
    assert read_with(0.95, {"R": 0.9, "L": 0.85, "C": 0.2, "dot": 0.1}, knows=False) == ("R", True)  # no clear lead
    assert read_with(0.95, {"L": 0.9, "R": 0.85, "C": 0.2, "dot": 0.1}, knows=False) == ("R", True)  # L by too little
    assert read_with(0.95, {"L": 0.9, "R": 0.75, "C": 0.2, "dot": 0.1}, knows=False)[1] is False  # L clearly


def test_a_die_only_the_colour_found_is_sure_where_the_features_name_it_clearly_as_the_taught_set_does(monkeypatch):
    """Dev tables 701-709, painted: dice the reader's detector did not find at all (or found only
    beside a touching die) were found by the taught colour, named right at 1.0 and by the features
    with a clear lead, yet left unsure. Both cues naming the die clearly vouch for it now, as a sure
    detector find does; not where a die of the reader's that no taught find accounts for lies within
    a side (dev table 706: a white die's R side face, read surely by the reader, beside the violet top
    the colour found: a die too many), nor on another find's side towards the view's middle within 1.2
    sides (engraved 706: a side face seen as large as its top, 1.07 sides from it), nor a find much
    smaller or larger than the frame's other finds, nor where either cue is unclear."""
    import lcr_pi.vision.teach as teach_module
    from lcr_pi.vision.teach import relabel

    frame = np.full((240, 320, 3), 90, np.uint8)
    square = np.array([[0.0, 0.0], [40.0, 0.0], [40.0, 40.0], [0.0, 40.0]])
    taught = type("Taught", (), {"kind": "lcr", "views": {"L": 5, "C": 5, "R": 5, "dot": 5}, "confusion": {}})()
    agree, unclear = {"C": 0.9, "R": 0.6, "L": 0.5, "dot": 0.1}, {"C": 0.9, "R": 0.85, "L": 0.5, "dot": 0.1}

    def read(confidence=1.0, features_say=agree, reader_die_at=None, find_at=None, size=1.0):
        found = [TaughtDie("C", confidence, square * size + [140, 160], 0.1, {"C": 0.1, "R": 0.5})]
        if find_at is not None:  # another taught find that many sides below (further from the view's middle)
            found.append(TaughtDie("dot", 1.0, square + [140, 160 + 40 * find_at], 0.1))
        monkeypatch.setattr(teach_module, "find_taught_dice", lambda frame, taught, outlines, finds=(), matches=None, region=None, bodies=None, pairs=None, asked_pairs=None: (found, []))
        features = type("Features", (), {"similarities": lambda self, crops: [features_say] * len(crops), "tells_apart": _told_apart})()
        dice = ()
        if reader_die_at is not None:  # the reader's die, a white die's top or side, that far above
            c = square + [140, 160 - 40 * reader_die_at]
            dice = (DieReading("R", 0.99, (*c.min(0), *c.max(0)), tuple(map(tuple, c)), tuple(c.mean(0)), "centre", True),)
        reading = relabel(Reading(dice, "clear", kind="lcr"), frame, taught, 0.6, features=features, reader_knows=False)
        (die,) = [d for d in reading.dice if d.face == "C"]
        return die.sure

    assert read()
    assert not read(confidence=0.8)  # the taught set not clear
    assert not read(features_say=unclear)  # the features not clear
    assert not read(reader_die_at=0.8)  # a die of the reader's a side away: one is the other's side
    assert read(reader_die_at=1.3)  # a die of its own beside it
    assert not read(find_at=1.1)  # on that die's side towards the view's middle: it may be its side face
    assert read(find_at=-1.1)  # further out than that die: not its side
    assert read(find_at=-3.0, size=0.8)  # another die far off, this one seen a little smaller
    assert not read(find_at=-3.0, size=0.6)  # a find much smaller than the frame's other die: a mark, a sliver


def test_a_die_the_reader_and_the_taught_set_agree_on_is_kept_though_a_neighbours_outline_reaches_it(monkeypatch):
    """Dev table 704, drawn words: three touching dice; the reader was sure of the top one's dot, and
    the taught set named it dot too. The taught find of the L beside it, turned 30 degrees, reached a
    corner to within 0.1 sides of the dot's middle, so the reader's die was taken for the L seen
    again and dropped: a roll read as clear with a die too few. It is kept, and sure."""
    import lcr_pi.vision.teach as teach_module
    from lcr_pi.vision.teach import _same_die, relabel

    frame = np.full((480, 640, 3), 90, np.uint8)
    dot_read = np.array([[66.0, 74.0], [158.0, 42.0], [190.0, 135.0], [98.0, 167.0]])  # the reader's outline
    left = TaughtDie("L", 1.0, np.array([[139.0, 121.0], [231.0, 199.0], [175.0, 296.0], [82.0, 218.0]]), 0.1)
    dot = TaughtDie("dot", 1.0, np.array([[202.0, 117.0], [115.0, 168.0], [54.0, 92.0], [141.0, 41.0]]), 0.1)
    reader_dot = DieReading("dot", 0.97, (*dot_read.min(0), *dot_read.max(0)), tuple(map(tuple, dot_read)),
                            (128.0, 105.0), "top left", True)
    reader_on_left = DieReading("dot", 0.61, (*left.corners.min(0), *left.corners.max(0)), tuple(map(tuple, left.corners)),
                                tuple(left.centre), "left", False)  # the reader unsure of the L (it never saw the design)
    assert _same_die(reader_dot, left)  # why it was dropped
    monkeypatch.setattr(teach_module, "find_taught_dice", lambda frame, taught, outlines, finds=(), matches=None, region=None, bodies=None, pairs=None, asked_pairs=None: ([left, dot], []))
    taught = type("Taught", (), {"kind": "lcr", "views": {"L": 5, "C": 5, "R": 5, "dot": 5}, "confusion": {}})()
    # The reader, sure of the dot, is taken to be sure of another face on the L too (it does not know
    # the design); the taught L stands, as the features do not name another face there.
    features = type("Features", (), {"similarities": lambda self, crops: [{"L": 0.9, "R": 0.6}, {"dot": 0.9, "C": 0.3}],
                            "tells_apart": _told_apart})()
    reading = relabel(Reading((reader_dot, reader_on_left), "unsure", kind="lcr"), frame, taught, 0.6,
                      features=features, reader_knows=False)
    assert sorted((d.face, d.sure) for d in reading.dice) == [("L", True), ("dot", True)]
    assert reading.verdict == "clear"


def test_a_sure_reading_of_a_taught_coloured_die_the_taught_set_cannot_find_is_doubted_where_the_reader_does_not_know_the_design(monkeypatch):
    """Dev table 705 (drawn words, steep view): where the taught set found no die, the reader's own
    sure L on a violet die stood, three times an R. A reader that names few of the design's views
    surely guesses at it, so there its sure face of a die of the taught colour is asked about; a
    die of another colour (an ordinary white die), a pip face, or a reader that knows the design,
    stands."""
    import lcr_pi.vision.teach as teach_module
    from lcr_pi.vision.teach import relabel

    violet = (150, 40, 120)
    taught = type("Taught", (), {"kind": "lcr", "body": _body_of(violet, 10.0, 8.0),
                                 "views": {"L": 5, "C": 5, "R": 5, "dot": 5}})()
    monkeypatch.setattr(teach_module, "find_taught_dice", lambda frame, taught, outlines, finds=(), matches=None, region=None, bodies=None, pairs=None, asked_pairs=None: ([], []))

    def read(colour, knows, face="L"):
        frame = np.full((240, 320, 3), 90, np.uint8)
        frame[100:140, 140:180] = colour
        corners = ((140.0, 100.0), (180.0, 100.0), (180.0, 140.0), (140.0, 140.0))
        die = DieReading(face, 0.97, (140.0, 100.0, 180.0, 140.0), corners, (160.0, 120.0), "centre", True)
        reading = relabel(Reading((die,), "clear", kind="lcr"), frame, taught, 0.6, reader_knows=knows)
        return reading.dice[0].sure, reading.verdict

    assert read(violet, knows=False) == (False, "unsure")
    assert read(violet, knows=True) == (True, "clear")
    assert read((235, 235, 235), knows=False) == (True, "clear")
    assert read(violet, knows=False, face="4") == (True, "clear")  # a violet pip die: the reader knows those


def test_an_unclear_find_is_looked_for_again_from_its_own_outline_and_kept_only_if_clear(monkeypatch):
    """A find under CLEAR_FIND is searched for again in the picture cut around the face found (its
    own corners), and if still not clear once more from where that search settled: a clear match
    names the die by the nearer match; an unclear one is not taken (a closer fit is found on side
    faces too); a clear find is not looked at again, nor is one on another find's side towards the
    middle of the view (within 1.2 sides), where a die's side face shows. (README, teach, "An unclear
    find looked at again".)"""
    import lcr_pi.vision.teach as teach_module
    from lcr_pi.vision.teach import find_taught_dice

    taught = type("Taught", (), {"body": ()})()  # no body colour: only the outlines are searched
    frame = np.full((240, 320, 3), 90, np.uint8)  # a plain picture: no die measured apart from the outlines

    def at(x, y):
        return np.array([[x - 20.0, y - 20.0], [x + 20.0, y - 20.0], [x + 20.0, y + 20.0], [x - 20.0, y + 20.0]])

    def found_with(first, again, outlines):
        """``first``: the outlines' finds by their x (else a clear L); ``again``: what each later
        search finds, in turn, 2 px to the right of where it looked."""
        looks = []

        def die_at(frame, taught, square, outlines, body, matches=None):
            looks.append(np.asarray(square, float).mean(0))
            if len(looks) <= len(outlines):  # the outlines' own searches
                face, confidence = first.get(round(float(looks[-1][0])), ("L", 1.0))
                return TaughtDie(face, confidence, square, 0.3, {face: 0.3, "C": 0.9})
            k = len(looks) - len(outlines) - 1
            face, confidence = again[k] if k < len(again) else again[-1]
            return TaughtDie(face, confidence, square + [2.0, 0.0], 0.1, {face: 0.1, "C": 0.9})

        monkeypatch.setattr(teach_module, "_taught_die_at", die_at)
        dice, _ = find_taught_dice(frame, taught, outlines)
        return sorted((d.face, d.confidence) for d in dice), [tuple(np.round(p)) for p in looks]

    dice, looks = found_with({160: ("R", 0.65)}, [("L", 1.0)], [at(160, 120)])
    assert dice == [("L", 1.0)] and looks == [(160, 120), (160, 120)]  # looked again at the find's corners
    dice, looks = found_with({160: ("R", 0.65)}, [("L", 0.8), ("L", 0.95)], [at(160, 120)])
    assert dice == [("L", 0.95)] and looks == [(160, 120), (160, 120), (162, 120)]  # once more, from there
    dice, looks = found_with({160: ("R", 0.65)}, [("L", 0.8), ("L", 0.85)], [at(160, 120)])
    assert dice == [("R", 0.65)] and len(looks) == 3  # looked again twice, never clearly: not taken
    dice, looks = found_with({160: ("R", 0.95)}, [("L", 1.0)], [at(160, 120)])
    assert dice == [("R", 0.95)] and len(looks) == 1  # clear already
    # Beside a clear die at (250, 120): one side towards the middle of the view (160, 120) it may be
    # that die's side face, and is not looked at again; one side further out it is.
    dice, looks = found_with({210: ("dot", 0.4)}, [("dot", 1.0)], [at(250, 120), at(210, 120)])
    assert dice == [("L", 1.0), ("dot", 0.4)] and len(looks) == 2
    dice, looks = found_with({290: ("dot", 0.4)}, [("dot", 1.0)], [at(250, 120), at(290, 120)])
    assert dice == [("L", 1.0), ("dot", 1.0)] and looks[-1] == (290, 120)


def test_at_a_tilted_table_a_die_found_unclearly_is_read_from_its_own_outline():
    """Dev table 706 (drawn words, 48 px dice, camera tilted 27 degrees), roll 44: the L die was found
    at 0.53 from the reader's outline and the roll read as unsure; looked for again from the face
    found, it is clear, and the roll is read as it lies."""
    reader = DiceReader()
    empty, _, teaching, test, _ = _table_bench().one_table(706, "violet-words", (640, 480), 44)
    examples, _ = bench_teach.player_examples(reader, teaching, 5, empty)
    image, scene = test[43]
    reading = TaughtReader(reader, teach(examples, name="violet-words", kind="lcr")).read(image, dice_kind="lcr")
    assert sorted(d.face for d in scene.dice) == ["C", "L"]
    assert reading.verdict == "clear" and sorted(d.face for d in reading.dice) == ["C", "L"]


def test_a_taught_die_found_unclearly_from_the_readers_outline_is_looked_for_again_from_the_die_measured_there(monkeypatch):
    """Dev table 702 (drawn words): searched from the reader's outline an L was found as R at 0.65, and
    from the die measured a few pixels away as L at 1.0; the outline's find alone was announced. A find
    that is not clear is now searched for again from the measured die, and the nearer match names
    the die. A clear find, or no find at all, is not looked for again."""
    import lcr_pi.vision.teach as teach_module
    from lcr_pi.vision.teach import find_taught_dice

    violet = (150, 40, 120)
    taught = type("Taught", (), {"body": _body_of(violet, 10.0, 8.0)})()
    frame = np.full((240, 320, 3), 90, np.uint8)
    frame[100:140, 140:180] = violet
    outline = np.array([[142.0, 102.0], [182.0, 102.0], [182.0, 142.0], [142.0, 142.0]])  # 2 px off the die

    def found_with(first):
        looks = []

        def die_at(frame, taught, square, outlines, body, matches=None):
            looks.append(square.mean(0))
            if len(looks) == 1:
                return first and TaughtDie(first[0], first[1], square, 0.3, {"R": 0.3, "L": 0.5})
            return TaughtDie("L", 1.0, square, 0.1, {"L": 0.1, "R": 0.4})

        monkeypatch.setattr(teach_module, "_taught_die_at", die_at)
        dice, _ = find_taught_dice(frame, taught, [outline])
        return [(d.face, d.confidence) for d in dice], looks

    dice, looks = found_with(("R", 0.65))
    assert dice == [("L", 1.0)] and len(looks) == 2
    assert np.allclose(looks[1], (159.5, 119.5), atol=1.5)  # the die as measured, not the outline
    dice, looks = found_with(("R", 0.95))
    assert dice == [("R", 0.95)] and len(looks) == 1
    dice, looks = found_with(None)
    assert dice == [] and len(looks) == 1


def test_a_die_of_a_design_the_reader_knows_is_sure_where_no_taught_find_names_it_and_both_cues_name_its_face(monkeypatch):
    """Dev tables 701-709, engraved (a design the reader names itself): 23 dice the reader read right
    but unsure (a touching die, an R taught at a slant) were named by no taught find, and the
    features and the embedding both named the reader's face; one more such die was a die's side
    face, 1.02 sides on its inner side. Such a die is sure now: only where the reader knows the
    design, both cues name its face, its leaning share is under LOOSE_LEAN, and every find within
    SIDE_REACH_DARK (a taught find, another of the reader's dice) is one the pair network believes a
    flat die beside it (never nearer than SIDE_GAP): either may be the other's side face."""
    import lcr_pi.vision.teach as teach_module
    from lcr_pi.vision.classify import CLASSES
    from lcr_pi.vision.teach import LOOSE_LEAN, PAIR_VOUCH, SIDE_GAP, relabel

    frame = np.full((480, 640, 3), 90, np.uint8)  # the view's middle at y = 240, below the die
    square = np.array([[0.0, 0.0], [40.0, 0.0], [40.0, 40.0], [0.0, 40.0]])
    taught = type("Taught", (), {"kind": "lcr", "views": {"L": 5, "C": 5, "R": 5, "dot": 5}, "confusion": {}})()
    names_r = {"R": 0.9, "L": 0.6, "C": 0.3, "dot": 0.1}
    flat = {"flat": PAIR_VOUCH}

    def read(knows=True, features_say=names_r, embedding_says=names_r, lean=0.0, face="R", find_at=None,
             reader_die_at=None, pair_says=None, sure=False, cocked=False):
        c = square + [300, 100]  # its middle 120 px above the view's
        p = np.zeros(len(CLASSES))
        p[CLASSES.index(face)], p[CLASSES.index("L")], p[CLASSES.index("cocked")] = 0.8 - lean, 0.2, lean
        die = DieReading(face, 0.8, (*c.min(0), *c.max(0)), tuple(map(tuple, c)), tuple(c.mean(0)), "top", sure, cocked)
        dice, probs = [die], [tuple(p)]
        found = []
        if find_at is not None:  # a taught find that many sides below (towards the view's middle) or above
            found.append(TaughtDie("dot", 1.0, square + [300, 100 + 40 * find_at], 0.1))
        if reader_die_at is not None:  # another die of the reader's, unsure, that many sides below or above
            o = square + [300, 100 + 40 * reader_die_at]
            dice.append(DieReading("C", 0.5, (*o.min(0), *o.max(0)), tuple(map(tuple, o)), tuple(o.mean(0)), "top", False))
            probs.append(tuple(np.eye(len(CLASSES))[CLASSES.index("C")] * 0.5 + 0.5 / len(CLASSES)))
        monkeypatch.setattr(teach_module, "find_taught_dice", lambda frame, taught, outlines, finds=(), matches=None,
                            region=None, bodies=None, pairs=None, asked_pairs=None: (list(found), []))
        monkeypatch.setattr(teach_module, "pair_view", lambda net, frame, asked=None: (
            None if pair_says is None else lambda d, other: {"flat": pair_says["flat"], "no die": 0.0}))
        features = type("Features", (), {"similarities": lambda self, crops: [features_say] * len(crops),
                                         "tells_apart": _told_apart})()
        embedding = type("Embedding", (), {"similarities": lambda self, crops: [embedding_says] * len(crops),
                                           "told_apart": lambda self, face: True})()
        reading = Reading(tuple(dice), "unsure", kind="lcr", probabilities=tuple(probs))
        out = relabel(reading, frame, taught, 0.6, features=features, embedding=embedding, reader_knows=knows)
        (mine,) = [d for d in out.dice if d.centre == die.centre]
        return mine.face, mine.sure

    assert read() == ("R", True)
    assert read(knows=False) == ("R", False)  # a reader guessing at a design it never saw
    assert read(features_say={"L": 0.9, "R": 0.6}) == ("R", False)  # the features name another face
    assert read(embedding_says={"R": 0.9, "L": 0.88}) == ("R", False)  # the embedding's lead too small
    assert read(embedding_says={"L": 0.9, "R": 0.6}) == ("R", False)
    assert read(lean=LOOSE_LEAN) == ("R", False)  # it may lean
    assert read(lean=LOOSE_LEAN - 0.05) == ("R", True)
    assert read(face="4") == ("4", False)  # not a face of the taught set
    assert read(cocked=True) == ("R", False)  # the reader's "cocked" stands
    assert read(find_at=-1.05) == ("R", False)  # on that die's inner side: it may be its side face...
    assert read(find_at=-1.05, pair_says=flat) == ("R", True)  # ...unless the pair network believes two flat dice
    assert read(find_at=1.05) == ("R", False)  # further in: that find may be this die's side face
    assert read(find_at=1.05, pair_says=flat) == ("R", True)
    assert read(find_at=-1.05, pair_says={"flat": PAIR_VOUCH - 0.01}) == ("R", False)
    assert read(find_at=-1.5) == ("R", True)  # further off than a side face reaches
    assert read(find_at=SIDE_GAP - 0.05, pair_says=flat) == ("R", False)  # too near for two flat dice
    assert read(reader_die_at=-1.05) == ("R", False)  # another of the reader's dice counts as a die too
    assert read(reader_die_at=-1.05, pair_says=flat) == ("R", True)


def test_a_find_beside_one_the_pair_network_believes_a_flat_die_counts_as_alone():
    """A find within NEIGHBOURS of another may be its side face, so the features and the embedding
    do not make it sure there (_alone). Where the pair network believes the two flat dice by at least
    PAIR_VOUCH (from SIDE_GAP sides apart: nearer, they cannot both be flat dice), the other is a
    touching die, and the find is judged as one alone (dev tables 701-709: dice both cues named right
    beside a touching die, doubted)."""
    from lcr_pi.vision.teach import PAIR_VOUCH, SIDE_GAP, _alone, second_opinion

    square = np.array([[0, 0], [40, 0], [40, 40], [0, 40]], np.float64)
    find = TaughtDie("L", 0.4, square + [100, 100], 0.2)

    def alone(gap, flat=None):
        other = TaughtDie("dot", 1.0, square + [100 + 40 * gap, 100], 0.1)
        pair = None if flat is None else (lambda d, o: {"flat": flat, "no die": 0.0})
        return _alone(find, [find, other], pair)

    assert not alone(0.95) and not alone(0.95, flat=PAIR_VOUCH - 0.01)
    assert alone(0.95, flat=PAIR_VOUCH)
    assert not alone(SIDE_GAP - 0.05, flat=1.0)  # too near for two flat dice, whatever the network says
    assert alone(1.5)  # far enough without asking
    other = TaughtDie("dot", 1.0, square + [138, 100], 0.1)
    flat = lambda d, o: {"flat": 0.9, "no die": 0.0}  # noqa: E731
    assert second_opinion(find, {"L": 0.9, "R": 0.5}, 0.6, alone=_alone(find, [find, other], flat)).confidence >= 0.6
