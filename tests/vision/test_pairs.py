"""The pair network's input and how its looks are combined (lcr_pi.vision.pairs), without its model."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from lcr_pi.vision.detect import Detection
from lcr_pi.vision.pairs import (PAIR_CLASSES, PAIR_HEIGHT, PAIR_SPAN, PAIR_WIDTH, SWAPPED, TOUCHING, pair_beliefs,
                                 pair_crop, touching_pairs)


def two_dice(side: int, angle_deg: float, size=(1600, 1200)):
    """A grey frame with a white square die at ``a`` and a black one at ``b``, one side apart."""
    frame = np.full((size[1], size[0], 3), 128, np.uint8)
    mx, my = size[0] / 2, size[1] / 2
    dx, dy = math.cos(math.radians(angle_deg)) * side / 2, math.sin(math.radians(angle_deg)) * side / 2
    a, b = (mx - dx, my - dy), (mx + dx, my + dy)
    for (cx, cy), value in ((a, 255), (b, 0)):
        h = side * 0.45
        cv2.rectangle(frame, (int(cx - h), int(cy - h)), (int(cx + h), int(cy + h)), (value,) * 3, -1)
    return frame, a, b


@pytest.mark.parametrize("side", [30, 120, 400])  # no shrink, and the two shrinking paths (k >= 2)
@pytest.mark.parametrize("angle", [0, 37, 90, 200])
def test_the_first_die_is_on_the_left_whatever_the_direction_and_size(side, angle):
    frame, a, b = two_dice(side, angle)
    crop = pair_crop(frame, a, b, side)
    assert crop.shape == (PAIR_HEIGHT, PAIR_WIDTH, 3)
    # Each face is a side across: about a third of the crop's width (PAIR_SPAN[0] sides), centred a
    # half side either side of the middle.
    left = crop[PAIR_HEIGHT // 2 - 4:PAIR_HEIGHT // 2 + 4, int(PAIR_WIDTH * 0.25):int(PAIR_WIDTH * 0.40)]
    right = crop[PAIR_HEIGHT // 2 - 4:PAIR_HEIGHT // 2 + 4, int(PAIR_WIDTH * 0.60):int(PAIR_WIDTH * 0.75)]
    assert left.mean() > 240 and right.mean() < 15
    # Beyond the faces, across the line between them, the table shows.
    assert abs(float(crop[2, PAIR_WIDTH // 2].mean()) - 128) < 10
    assert PAIR_SPAN[0] > 2 * 1.0  # both faces, one side apart, fit in the crop


def test_the_shrunk_crop_matches_one_cut_from_the_whole_frame_shrunk():
    # The reader shrinks only the part of the frame around the pair, averaging blocks first; the
    # crop must be what shrinking the whole frame by area averaging and cutting would give.
    rng = np.random.default_rng(5)
    frame = cv2.GaussianBlur(rng.integers(0, 255, (1200, 1600, 3), dtype=np.uint8), (0, 0), 6)
    a, b, side = (700.0, 560.0), (930.0, 690.0), 240.0
    crop = pair_crop(frame, a, b, side)
    scale = PAIR_WIDTH / (PAIR_SPAN[0] * side)
    pre = scale * 1.5
    small = cv2.resize(frame, (round(1600 * pre), round(1200 * pre)), interpolation=cv2.INTER_AREA)
    m = cv2.getRotationMatrix2D(((a[0] + b[0]) / 2, (a[1] + b[1]) / 2), math.degrees(math.atan2(130, 230)), scale)
    m[:, 2] += (PAIR_WIDTH / 2 - (a[0] + b[0]) / 2, PAIR_HEIGHT / 2 - (a[1] + b[1]) / 2)
    m = m @ np.diag([1600 / small.shape[1], 1200 / small.shape[0], 1.0])
    reference = cv2.warpAffine(small, m, (PAIR_WIDTH, PAIR_HEIGHT), flags=cv2.INTER_LINEAR)
    assert np.abs(crop.astype(int) - reference).mean() < 1.5


def test_touching_pairs_reach():
    d = [Detection(100, 100, 40, 40, 0, 0.9), Detection(100 + 40 * (TOUCHING - 0.05), 100, 40, 40, 0, 0.9),
         Detection(100, 100 + 40 * (TOUCHING + 0.05), 40, 40, 0, 0.9)]
    assert touching_pairs(d) == [(0, 1)]


class CountingNet:
    """A stand-in for the pair network: answers each crop by how bright its left half is, and
    counts the batches it is asked."""

    def __init__(self):
        self.batches = []

    def setInput(self, blob):
        self.blob = blob

    def forward(self):
        self.batches.append(len(self.blob))
        left = self.blob[:, :, :, : PAIR_WIDTH // 2].mean(axis=(1, 2, 3))
        logits = np.zeros((len(self.blob), len(PAIR_CLASSES)), np.float32)
        logits[:, 1] = 8 * left  # "the first leans" when the left die is bright
        return logits


@pytest.mark.parametrize("again_below, batches", [(0.0, [1]), (1.0, [1, 1])])
def test_a_pair_is_looked_at_again_the_other_way_round_only_when_asked(again_below, batches):
    frame, a, b = two_dice(60, 0)
    dets = [Detection(a[0], a[1], 60, 60, 0, 0.9), Detection(b[0], b[1], 60, 60, 0, 0.9)]
    net = CountingNet()
    p = pair_beliefs(net, frame, dets, [(0, 1)], again_below=again_below)
    assert net.batches == batches and p.shape == (1, len(PAIR_CLASSES))
    assert np.isclose(p.sum(), 1.0)
    if again_below == 0.0:
        assert p[0, 1] > 0.9  # the bright die is first: it "leans"
    else:
        # Turned round, the dark die is first and the net says the first leans less; put back in
        # the pair's order (SWAPPED) the two looks agree that the first die is the one.
        assert SWAPPED[1] == 2 and p[0, 1] > p[0, 2]


def test_a_sure_first_look_is_not_repeated():
    frame, a, b = two_dice(60, 0)
    dets = [Detection(a[0], a[1], 60, 60, 0, 0.9), Detection(b[0], b[1], 60, 60, 0, 0.9)]
    net = CountingNet()
    pair_beliefs(net, frame, dets, [(0, 1)], again_below=0.5)  # the first look is over 0.9 sure
    assert net.batches == [1]
    assert pair_beliefs(CountingNet(), frame, dets, []).shape == (0, len(PAIR_CLASSES))
