"""The face-embedding network and the made-up dice designs it is trained on (teach mode's third cue)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lcr_pi.vision.reader import DEFAULT_MODELS, DiceReader
from lcr_pi.vision.render import Table
from lcr_pi.vision.render_generic import FACES, generic_mark, random_generic_design, _unlike
from lcr_pi.vision.teach import (EMBED_CONFIDENCE, EMBED_MODEL_FILE, EMBED_RENAME_FLOOR, EmbeddingMatcher, TaughtDie,
                                 TaughtReader, _both_name, by_embedding, face_context, straight_crop, teach)


# The teach benchmark's designs, never trained on (as tests/vision/test_teach.py uses them).
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import bench_teach  # noqa: E402


@pytest.mark.parametrize("seed", range(12))
def test_a_made_up_designs_faces_differ_at_every_quarter_turn(seed):
    design = random_generic_design(np.random.default_rng(seed))
    marks = [(generic_mark(design.generic_seed, f, 96) * 255).astype(np.uint8) for f in FACES]
    assert all(m.max() > 0 for m in marks)
    for i in range(len(marks)):
        for j in range(i + 1, len(marks)):
            assert _unlike(marks[i], marks[j]), (seed, FACES[i], FACES[j])


def test_a_made_up_design_is_rendered_on_a_table_with_its_own_marks():
    rng = np.random.default_rng(4)
    design = random_generic_design(rng)
    table = Table(rng, size=(320, 240), max_dice=2, kind="lcr", pool="train")
    regular = table.roll(2)
    table.design = design
    scene = table.roll(2)
    assert scene.style["designs"] == [design.name] * 2 and regular.style["designs"][0] != design.name
    # The die's top face shows the mark in the design's ink on its body colour: both are there.
    die = scene.dice[0]
    crop = straight_crop(face_context(scene.image, die.corners)).reshape(-1, 3).astype(float)
    to_body = np.linalg.norm(crop - design.body, axis=1).min()
    to_ink = np.linalg.norm(crop - design.ink, axis=1).min()
    assert to_body < 80 and to_ink < 80, (to_body, to_ink)


@pytest.fixture(scope="module")
def embedder():
    path = DEFAULT_MODELS / EMBED_MODEL_FILE
    assert path.is_file(), f"{path} is shipped"
    return cv2.dnn.readNetFromONNX(str(path))


@pytest.mark.parametrize("design", ["green-engraved", "violet-words"])
def test_the_embedding_names_an_unseen_designs_faces_from_its_taught_views(design, embedder):
    """Neither design was trained on (nor its font, nor the words LEFT and RIGHT): each held-out die's
    crop lies nearest the taught views of its own face."""
    examples = bench_teach.teaching_examples(bench_teach.design_scenes(1, 24, design=design), 5)
    taught = teach(examples, name=design, kind="lcr")
    matcher = EmbeddingMatcher(embedder, taught.crops, taught.crop_faces)
    named = [matcher.best(matcher.similarities([straight_crop(face_context(image, die.corners))])[0])[0] == die.face
             for image, scene in bench_teach.design_scenes(2, 12, design=design) for die in scene.dice if not die.cocked]
    assert len(named) >= 20 and np.mean(named) >= 0.95, (sum(named), len(named))


def test_the_taught_reader_asks_the_embedding_only_when_the_models_have_one(tmp_path):
    examples = bench_teach.teaching_examples(bench_teach.design_scenes(1, 24, design="violet-words"), 5)
    taught = teach(examples, name="words", kind="lcr")
    assert TaughtReader(DiceReader(), taught).embedding is not None
    for f in DEFAULT_MODELS.iterdir():
        if f.name != EMBED_MODEL_FILE:
            shutil.copy(f, tmp_path / f.name)
    without = DiceReader(tmp_path)
    assert without.embedder is None and TaughtReader(without, taught).embedding is None
    image, scene = bench_teach.design_scenes(2, 1, design="violet-words")[0]
    assert len(TaughtReader(without, taught).read(image, dice_kind="lcr").dice) >= 1  # read by the other two cues
    (tmp_path / EMBED_MODEL_FILE).write_bytes(b"not a model")  # a damaged file: the same, not a failed game
    damaged = DiceReader(tmp_path)
    assert damaged.embedder is None and TaughtReader(damaged, taught).embedding is None


def test_training_renders_made_up_tables_and_exports_an_embedding_opencv_runs(tmp_path):
    pytest.importorskip("torch", reason="the training extra (pip install -e '.[train]') is not installed")
    pytest.importorskip("onnx", reason="the training extra (pip install -e '.[train]') is not installed")
    from lcr_pi.vision.classify import crops_to_blob
    from lcr_pi.vision.training import EMBED_VIEWS, embed_example, embed_table_views, train_embedder

    contexts, faces = [], []
    designs = []
    for index in (3, 4):
        ctx, fs = embed_table_views(index)
        assert set(fs) == set(FACES) and max(fs.count(f) for f in FACES) <= EMBED_VIEWS
        contexts += ctx
        faces += fs
        designs += [index] * len(fs)
    assert embed_example(contexts[0], np.random.default_rng(0)).shape == (48, 48, 3)
    path = train_embedder(np.stack(contexts), np.array(designs), np.array(faces), DEFAULT_MODELS / "dice_faces.onnx",
                          tmp_path, seed=0, steps=2, threads=1, designs_per_step=2, views=2)
    net = cv2.dnn.readNetFromONNX(str(path))
    net.setInput(crops_to_blob([embed_example(c, np.random.default_rng(1)) for c in contexts[:3]]))
    assert net.forward().shape == (3, 128) and path.name == EMBED_MODEL_FILE


FACE_NAMES = ("L", "C", "R", "dot")
_similarities = st.fixed_dictionaries({f: st.floats(-1.0, 1.0) for f in FACE_NAMES})


@settings(max_examples=300, deadline=None)
@given(shown=st.sampled_from(FACE_NAMES), confidence=st.floats(0.0, 1.0), tied=st.booleans(), aside=st.booleans(),
       alone=st.booleans(), embedded=_similarities, features=_similarities)
def test_the_two_networks_never_name_surely_a_die_set_aside_or_rename_one_the_descriptors_lost(
        shown, confidence, tied, aside, alone, embedded, features):
    """by_embedding's promises, over any beliefs: a die set aside as maybe a side face, or touching
    another find, is left as it is; the descriptors' face may be confirmed however unsure they were,
    but another face is taken only where they were not lost (EMBED_RENAME_FLOOR, or a tie), and a die
    they were sure of is never renamed, only doubted."""
    die = TaughtDie(shown, confidence, np.zeros((4, 2)), 1.0, tied=tied, aside=aside)
    judged = by_embedding(die, embedded, features, 0.6, alone=alone)
    named = _both_name(embedded, features)
    if aside or not alone or named is None:
        assert judged == die
    elif named == shown:
        assert judged.face == shown and judged.confidence == max(confidence, EMBED_CONFIDENCE)
    elif confidence >= 0.6:
        assert judged.face == shown and judged.confidence == min(confidence, 0.5)
    elif confidence < EMBED_RENAME_FLOOR and not tied:
        assert judged == die
    else:
        assert judged.face == named and judged.confidence == EMBED_CONFIDENCE
