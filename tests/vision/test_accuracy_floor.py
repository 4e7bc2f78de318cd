"""CI floor: ``lcr-pi eval`` on each real test set must not fall below what the shipped models reach.

The floors sit a little under the numbers measured when the models were trained (see
``models/README.md``) so that a regression fails CI while machine-to-machine float differences do
not. The real photos live outside the repository (``../shared/data``); without them this is skipped.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lcr_pi.commands.eval import evaluate_folder
from lcr_pi.vision.dataset import apply_corrections, load_corrections, load_roll_folder
from lcr_pi.vision.reader import DiceReader

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
CORRECTIONS = Path(__file__).resolve().parents[2] / "benchmarks" / "label_corrections.json"

# set -> (minimum die accuracy, maximum silent error rate), scored with the label corrections.
# Measured 2026-12-05 with the shipped models (seventh round: the detector trained 24 000 steps and its
# classifier, thresholds chosen by the rule on the corrected train labels; see models/README.md):
# nell-byler 91.6% die accuracy, no silent image of 50 (sixth round: 91.2%, none); matteop65 96.5%,
# 0 of 86 (96.9%, 0). Measured 2026-12-06 with the pip network's second look added (eighth round):
# nell-byler 92.2%, none silent; matteop65 96.9%, none. The floors allow about 2 points of accuracy
# and one silent image.
FLOORS = {
    "nell-byler-d6/test": (0.90, 0.02),
    "matteop65-d6/test": (0.95, 0.012),
}

# Rendered LCR scenes from the renderer's holdout pool (fonts, colours and trays never trained on):
# 40 scenes of seed 77 at 1280x960, measured 2026-12-05 95.2% die accuracy (10% of the frames
# unsure), no silent image of 40 (sixth round: 96.4%, 7.5% unsure; fifth: 97.6%, 7.5%).
LCR_HOLDOUT_FLOOR = (0.93, 0.025)
# The same pool, 40 scenes of seed 78 with 2-3 dice of which one may lean on another or the wall:
# measured 2026-12-05, of the 20 pictures with a leaning die 17 were read "cocked", 2 unsure and
# one clear: a dot and a leaning L read as one dot, a die too few, which the referee's count of the
# dice asks about (sixth round: 18, 2 and none). The ceiling allows one more.
LEANING_ANNOUNCED_CEILING = 0.1


@pytest.fixture(scope="module")
def reader():
    return DiceReader()


@pytest.mark.parametrize("set_name", sorted(FLOORS))
def test_real_test_set_floor(reader, set_name):
    folder = DATA / set_name
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent (real photos live outside the repository)")
    # Scored against the labels with the dice checked by eye corrected (a die read right is not
    # an error); the corrections file names each die and what the photo shows.
    items, _, _ = apply_corrections(load_roll_folder(folder), load_corrections(CORRECTIONS), folder)
    metrics, _ = evaluate_folder(folder, reader.read, "pip", items=items)
    min_accuracy, max_silent = FLOORS[set_name]
    assert metrics["die_accuracy"] >= min_accuracy, metrics
    assert metrics["silent_error_rate"] <= max_silent, metrics


def test_rendered_lcr_holdout_floor(reader):
    from types import SimpleNamespace

    import numpy as np

    from lcr_pi.vision.evaluate import score_image, summarize
    from lcr_pi.vision.render import random_scene

    rng = np.random.default_rng(77)
    scores = []
    for _ in range(40):
        scene = random_scene(rng, size=(1280, 960), n_dice=(1, 3), kind="lcr", pool="holdout")
        label = SimpleNamespace(faces=tuple(d.face for d in scene.dice), boxes=tuple(d.box for d in scene.dice),
                                box_kind="die")
        scores.append(score_image(label, reader.read(scene.image, dice_kind="lcr")))
    metrics = summarize(scores, [])
    min_accuracy, max_silent = LCR_HOLDOUT_FLOOR
    assert metrics["die_accuracy"] >= min_accuracy, metrics
    assert metrics["silent_error_rate"] <= max_silent, metrics


def test_rendered_leaning_dice_are_not_announced(reader):
    """A die leaning on another or on the wall is re-rolled at the table: a picture of one must not
    be read as a clear roll (the reader says "cocked", or it is unsure and the referee asks)."""
    from types import SimpleNamespace

    import numpy as np

    from lcr_pi.vision.evaluate import score_image, summarize
    from lcr_pi.vision.render import random_scene

    rng = np.random.default_rng(78)
    scores = []
    for _ in range(40):
        scene = random_scene(rng, size=(1280, 960), n_dice=(2, 3), kind="lcr", pool="holdout", allow_cocked=True)
        label = SimpleNamespace(faces=tuple(d.face for d in scene.dice), boxes=tuple(d.box for d in scene.dice),
                                box_kind="die", cocked=tuple(d.cocked for d in scene.dice))
        scores.append(score_image(label, reader.read(scene.image, dice_kind="lcr")))
    metrics = summarize(scores, [])
    assert metrics["leaning_images"] >= 15, metrics  # the seed renders enough leaning dice to measure
    assert metrics["leaning_announced_rate"] <= LEANING_ANNOUNCED_CEILING, metrics
