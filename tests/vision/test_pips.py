"""The pip network's second look at hesitant pip dice (lcr_pi.vision.pips) and how the reader asks it."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lcr_pi.vision.classify import CLASSES
from lcr_pi.vision.detect import Detection
from lcr_pi.vision.pips import (MODEL_FILE, PIP_CLASSES, PIP_CROP_SIZE, hesitant, look_again, pip_crop,
                                seconded)
from lcr_pi.vision.reader import DEFAULT_MODELS, DiceReader, FrameMemo, ReaderSettings
from lcr_pi.vision.render import random_scene

beliefs = st.lists(st.floats(0.0, 1.0), min_size=len(CLASSES), max_size=len(CLASSES)).filter(lambda v: sum(v) > 1e-3)
second_beliefs = st.lists(st.floats(0.0, 1.0), min_size=len(PIP_CLASSES), max_size=len(PIP_CLASSES)).filter(
    lambda v: sum(v) > 1e-3)


@settings(max_examples=300, deadline=None)
@given(beliefs, second_beliefs, st.sampled_from([0.99, 0.999]))
def test_a_second_look_only_ever_makes_the_classifiers_own_choice_surer(p, second, agree):
    p = np.array(p) / sum(p)
    second = np.array(second) / sum(second)
    out = seconded(p, second, agree)
    assert abs(float(out.sum()) - 1.0) < 1e-9
    best = int(np.argmax(p))
    if (out != p).any():
        # Changed: the second look named the classifier's likeliest face, surely enough; that face
        # now holds ``agree`` of the belief, the rest keeps its proportions.
        assert PIP_CLASSES[int(np.argmax(second))] == CLASSES[best] and second.max() >= agree
        assert int(np.argmax(out)) == best and out[best] == pytest.approx(agree) and p[best] < agree
        others = [i for i in range(len(CLASSES)) if i != best]
        np.testing.assert_allclose(out[others] * (1 - p[best]), p[others] * (1 - agree), atol=1e-12)


def one_face(face: str, share: float, rest: str = "cocked") -> np.ndarray:
    p = np.zeros(len(CLASSES))
    p[CLASSES.index(face)], p[CLASSES.index(rest)] = share, 1 - share
    return p


def pip_look(face: str, share: float) -> np.ndarray:
    q = np.full(len(PIP_CLASSES), (1 - share) / (len(PIP_CLASSES) - 1))
    q[PIP_CLASSES.index(face)] = share
    return q


def test_the_second_look_is_asked_only_about_pip_faces_the_classifier_leans_to_without_being_sure():
    assert hesitant(one_face("3", 0.7), 0.5, 0.95)
    assert not hesitant(one_face("3", 0.96), 0.5, 0.95)  # sure already
    split = one_face("3", 0.45, "4")
    split[CLASSES.index("4")], split[CLASSES.index("cocked")] = 0.35, 0.2
    assert not hesitant(split, 0.5, 0.95)  # split between two faces, neither at 0.5
    assert not hesitant(one_face("L", 0.7), 0.5, 0.95)  # a letter: the pip network knows none
    assert not hesitant(one_face("3", 0.4), 0.5, 0.95)  # leans to "cocked"


def test_the_second_look_names_no_other_face_and_needs_to_be_very_sure():
    p = one_face("3", 0.8)
    assert seconded(p, pip_look("3", 0.9995), 0.999)[CLASSES.index("3")] == pytest.approx(0.999)
    for second in (pip_look("2", 0.9995), pip_look("3", 0.998), pip_look("other", 0.9995)):
        assert (seconded(p, second, 0.999) == p).all()


class StandInNet:
    """A pip network that names every crop as ``face`` with ``share`` and counts the crops it sees."""

    def __init__(self, face: str, share: float):
        self.logits = np.log(pip_look(face, share)).astype(np.float32)
        self.shown, self.blob = 0, None

    def setInput(self, blob):
        self.blob = blob
        self.shown += len(blob)

    def forward(self, *names):
        return np.tile(self.logits, (len(self.blob), 1))


def test_look_again_averages_the_crop_and_its_quarter_turn():
    class HalfBright:  # says "6" by how bright the crop's left half is
        def setInput(self, blob):
            self.blob = blob

        def forward(self):
            left = self.blob[:, :, :, : PIP_CROP_SIZE // 2].mean(axis=(1, 2, 3))
            out = np.zeros((len(self.blob), len(PIP_CLASSES)), np.float32)
            out[:, PIP_CLASSES.index("6")] = 10 * left
            return out

    crop = np.zeros((PIP_CROP_SIZE, PIP_CROP_SIZE, 3), np.uint8)
    crop[:, : PIP_CROP_SIZE // 2] = 255  # left half white: turned a quarter, the white is at the top
    net = HalfBright()
    probs = look_again(net, [crop])
    assert net.blob.shape == (2, 3, PIP_CROP_SIZE, PIP_CROP_SIZE)
    straight = np.exp(10.0) / (np.exp(10.0) + 6)
    turned = np.exp(5.0) / (np.exp(5.0) + 6)
    assert probs[0, PIP_CLASSES.index("6")] == pytest.approx((straight + turned) / 2, rel=1e-4)
    assert look_again(net, []).shape == (0, len(PIP_CLASSES))


def test_the_crop_is_closer_than_the_classifiers():
    frame = np.zeros((400, 400, 3), np.uint8)
    frame[150:250, 150:250] = 255  # a 100 px white face
    crop = pip_crop(frame, Detection(199.5, 199.5, 100, 100, 0.0, 0.9))
    assert crop.shape == (PIP_CROP_SIZE, PIP_CROP_SIZE, 3)
    inside = (crop[..., 0] > 128).mean()
    assert inside == pytest.approx(1 / 1.35 ** 2, abs=0.03)  # the face is 1 / 1.35 of the crop across


@pytest.fixture(scope="module")
def pip_scene():
    """A rendered roll of pip dice; the classifier's belief about them comes from the shipped models."""
    return random_scene(np.random.default_rng(3), size=(1280, 960), n_dice=3, kind="pip", pool="holdout").image


def hesitant_classifier(share: float):
    """A stand-in for the reader's ``classify_crops`` that hesitates over every find: the real
    classifier's likeliest class gets ``share`` of the belief and ``cocked`` the rest."""
    from lcr_pi.vision import reader as reader_module

    real = reader_module.classify_crops

    def doubting(net, crops, *args, **kwargs):
        probs = real(net, crops, *args, **kwargs)
        out = np.zeros_like(probs)
        for row, p in zip(out, probs):
            row[int(np.argmax(p))], row[CLASSES.index("cocked")] = share, 1 - share
        return out

    return doubting


def test_the_reader_asks_the_pip_network_about_hesitant_pip_dice_only(monkeypatch, pip_scene):
    from lcr_pi.vision import reader as reader_module

    reader = DiceReader()
    truth = reader.read(pip_scene, dice_kind="pip")
    assert truth.clear and len(truth.dice) == 3
    monkeypatch.setattr(reader_module, "classify_crops", hesitant_classifier(0.8))
    reader._pips = None
    assert reader.read(pip_scene, dice_kind="pip").verdict == "unsure"
    # A pip network that names each die's face with 0.9995 (as the stand-in does, the same face for
    # all three dice, it can second only the dice the classifier reads as that face).
    faces = sorted(truth.faces)
    reader._pips = StandInNet(faces[0], 0.9995)
    reading = reader.read(pip_scene, dice_kind="pip")
    seconded_dice = [d for d in reading.dice if d.sure]
    assert {d.face for d in seconded_dice} == {faces[0]} and len(seconded_dice) == faces.count(faces[0])
    assert reader._pips.shown == 2 * len(truth.dice)  # each hesitant die, straight and turned
    # The roll holds another face too (1, 1, 4): the die the stand-in cannot second stays in doubt.
    assert len(set(faces)) > 1 and reading.verdict == "unsure"
    # Not for LCR dice, and not when the classifier is sure already.
    shown = reader._pips.shown
    reader.read(pip_scene, dice_kind="lcr")
    assert reader._pips.shown == shown
    monkeypatch.setattr(reader_module, "classify_crops", hesitant_classifier(0.97))
    reader.read(pip_scene, dice_kind="pip")
    assert reader._pips.shown == shown


def test_a_memo_asks_the_pip_network_once_per_die(monkeypatch, pip_scene):
    from lcr_pi.vision import reader as reader_module

    reader = DiceReader()
    monkeypatch.setattr(reader_module, "classify_crops", hesitant_classifier(0.8))
    reader._pips = StandInNet("4", 0.9995)
    memo = FrameMemo()
    first = reader.read(pip_scene, dice_kind="pip", memo=memo)
    shown = reader._pips.shown
    assert shown and memo.pips
    assert reader.read(pip_scene, dice_kind="pip", memo=memo) == first and reader._pips.shown == shown


def test_a_second_look_from_1_turns_it_off(monkeypatch, pip_scene):
    from dataclasses import replace

    from lcr_pi.vision import reader as reader_module

    reader = DiceReader()
    monkeypatch.setattr(reader_module, "classify_crops", hesitant_classifier(0.8))
    reader.settings = replace(reader.settings, second_look_from=1.0)
    reader._pips = StandInNet("4", 0.9995)
    assert reader.read(pip_scene, dice_kind="pip").verdict == "unsure" and reader._pips.shown == 0


def test_without_the_pip_network_the_reader_reads_as_before(tmp_path, pip_scene):
    for path in DEFAULT_MODELS.iterdir():
        if path.name != MODEL_FILE:
            shutil.copy(path, tmp_path / path.name)
    without = DiceReader(tmp_path)
    assert without._pips is None
    assert without.read(pip_scene, dice_kind="pip").faces == DiceReader().read(pip_scene, dice_kind="pip").faces


def test_the_shipped_pip_network_is_there_and_settings_default_to_the_measured_rule():
    assert (DEFAULT_MODELS / MODEL_FILE).is_file()
    assert DiceReader()._pips is not None
    st_ = ReaderSettings()
    assert (st_.second_look_from, st_.second_look_agree) == (0.5, 0.999)


def test_training_cuts_pip_regions_and_exports_a_network_opencv_runs(tmp_path):
    pytest.importorskip("torch", reason="the training extra (pip install -e '.[train]') is not installed")
    pytest.importorskip("onnx", reason="the training extra (pip install -e '.[train]') is not installed")
    import cv2

    from lcr_pi.vision.training import (PIP_REGION, gather_pip_regions, pip_example, pip_scene_samples,
                                        train_pip_net)

    samples = list(pip_scene_samples(8, seed=5))
    assert [s.held_out for s in samples] == [True] + [False] * 6 + [True]
    regions, labels, real, held = gather_pip_regions(samples, DEFAULT_MODELS / "dice_detector.onnx")
    assert regions.shape[1:] == (PIP_REGION, PIP_REGION, 3) and not real.any()
    faces = [f for s in samples for f in s.faces]
    assert set(labels.tolist()) <= set(range(len(PIP_CLASSES)))
    # every labelled die at least once (where its label says), and the finds beside dice as "other"
    assert sum(labels != PIP_CLASSES.index("other")) >= sum(f != "cocked" for f in faces)
    assert pip_example(regions[0], None).shape == (PIP_CROP_SIZE, PIP_CROP_SIZE, 3)
    assert pip_example(regions[0], np.random.default_rng(0)).shape == (PIP_CROP_SIZE, PIP_CROP_SIZE, 3)
    path = train_pip_net(regions, labels, real, held, tmp_path, seed=0, steps=2, threads=1, watch_every=1)
    net = cv2.dnn.readNetFromONNX(str(path))
    assert Path(path).name == MODEL_FILE
    assert look_again(net, [pip_example(r, None) for r in regions[:3]]).shape == (3, len(PIP_CLASSES))


@pytest.mark.parametrize("seed, faces", [(56, ("1", "2", "4")), (263, ("1", "2", "5"))])
def test_the_shipped_pip_network_settles_a_rendered_roll_the_classifier_hesitated_over(tmp_path, seed, faces):
    # Rendered rolls of the holdout pool (dice, trays and light never trained on) that the reader
    # without the pip network asks about (one die's face under 0.95) and with it reads clear and right.
    scene = random_scene(np.random.default_rng(seed), size=(1280, 960), n_dice=3, kind="pip", pool="holdout")
    assert tuple(sorted(str(d.face) for d in scene.dice)) == faces
    for path in DEFAULT_MODELS.iterdir():
        if path.name != MODEL_FILE:
            shutil.copy(path, tmp_path / path.name)
    before = DiceReader(tmp_path).read(scene.image, dice_kind="pip")
    assert before.verdict == "unsure" and tuple(sorted(before.faces)) == faces
    after = DiceReader().read(scene.image, dice_kind="pip")
    assert after.clear and tuple(sorted(after.faces)) == faces
