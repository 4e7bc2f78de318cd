"""Is one of two touching dice leaning on the other? Asked of both dice in one picture.

One die's own crop does not tell a die leaning on its neighbour from a flat die beside it whose sides
show (the face classifier's ``cocked`` share doubted about a fifth of the flat dice that touch
another, and missed many leaning ones). Seen together, the two differ: a leaning die's top face is
narrower than its neighbour's along the line between them, tilted against it, and closer to it than
a flat die's can be. So every two finds that are close enough to touch are cut out together,
turned so that the line between their centres runs across the picture and scaled to their size
(:func:`pair_crop`), and a small network (``models/dice_pairs.onnx``) says whether the first
leans, the second leans, or both lie flat, or whether one of the two finds is no die at all
(:data:`PAIR_CLASSES`): beside a die, the detector also finds its side faces seen at a slant, a
dot or a letter like any face, which one die's crop often takes for a die that leans.

>>> frame = np.zeros((200, 300, 3), np.uint8)
>>> pair_crop(frame, (100, 100), (140, 100), 40).shape
(48, 96, 3)
>>> from lcr_pi.vision.detect import Detection
>>> touching_pairs([Detection(100, 100, 40, 40, 0, 0.9), Detection(140, 100, 40, 40, 0, 0.9),
...                 Detection(260, 100, 40, 40, 0, 0.9)])
[(0, 1)]
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from lcr_pi.vision.classify import crops_to_blob, softmax

PAIR_WIDTH, PAIR_HEIGHT = 96, 48
# The crop spans this many face sides along the line between the two centres and across it: both
# top faces (about two sides from edge to edge) with a little of what lies beyond them.
PAIR_SPAN = (2.8, 1.4)
# Two finds whose centres are at most this many face sides apart may touch. Flat dice touching side
# to side are one side apart and a die leaning on another 0.9-1.0 (renders, true outlines); but the
# detector sees a leaning die's top face narrower than it is and its centre off the die's, so of the
# dev renders' leaning dice read as a clear roll at 1.3, most were 1.3-1.5 found sides from the die
# they lean on.
TOUCHING = 1.6
PAIR_CLASSES = ("flat", "first leans", "second leans", "first is no die", "second is no die")
# The classes with the first and second finds swapped (the pair seen from its other end).
SWAPPED = (0, 2, 1, 4, 3)
MODEL_FILE = "dice_pairs.onnx"


def pair_crop(frame: np.ndarray, a, b, side: float) -> np.ndarray:
    """The ``PAIR_HEIGHT`` x ``PAIR_WIDTH`` BGR crop of two dice centred at ``a`` and ``b`` (frame
    pixels, faces about ``side`` pixels): the middle between them at its centre, ``a`` on the left
    and ``b`` on the right, :data:`PAIR_SPAN` face sides wide and high. Outside the frame the border
    is repeated."""
    (ax, ay), (bx, by) = (float(a[0]), float(a[1])), (float(b[0]), float(b[1]))
    mx, my = (ax + bx) / 2, (ay + by) / 2
    angle = math.degrees(math.atan2(by - ay, bx - ax))
    scale = PAIR_WIDTH / (PAIR_SPAN[0] * max(float(side), 1.0))
    m = cv2.getRotationMatrix2D((mx, my), angle, scale)
    m[:, 2] += (PAIR_WIDTH / 2 - mx, PAIR_HEIGHT / 2 - my)
    if scale < 0.7:
        # Shrink with area averaging first, as crop_die does, so that small pips do not alias away;
        # only the upright box around the turned crop (and a few pixels for the interpolation) is
        # shrunk: area averaging costs by the pixels it reads (3 ms for a pair of 300 px dice).
        pre = min(1.0, scale * 1.5)
        c, s = abs(math.cos(math.radians(angle))), abs(math.sin(math.radians(angle)))
        span_x, span_y = PAIR_SPAN[0] * max(float(side), 1.0), PAIR_SPAN[1] * max(float(side), 1.0)
        margin = 2 / pre + 2
        reach_x = int(math.ceil((span_x * c + span_y * s) / 2 + margin))
        reach_y = int(math.ceil((span_x * s + span_y * c) / 2 + margin))
        x0, y0 = max(0, int(mx) - reach_x), max(0, int(my) - reach_y)
        x1, y1 = min(frame.shape[1], int(mx) + reach_x + 1), min(frame.shape[0], int(my) + reach_y + 1)
        if x1 > x0 and y1 > y0:
            region = frame[y0:y1, x0:x1]
            k = int(1 / pre)
            if k >= 2 and region.shape[0] >= k and region.shape[1] >= k:
                # Averaging k x k blocks first is several times cheaper than area averaging at a
                # fractional ratio, and the same but for rounding; the rest is done on the small copy.
                region = region[:region.shape[0] // k * k, :region.shape[1] // k * k]
                blocks = cv2.resize(region, (region.shape[1] // k, region.shape[0] // k), interpolation=cv2.INTER_AREA)
            else:
                blocks = region
            w, h = max(1, round(region.shape[1] * pre)), max(1, round(region.shape[0] * pre))
            small = cv2.resize(blocks, (w, h), interpolation=cv2.INTER_AREA)
            shift = np.array([[1.0, 0.0, x0], [0.0, 1.0, y0], [0.0, 0.0, 1.0]])
            unscale = np.diag([region.shape[1] / w, region.shape[0] / h, 1.0])
            m = m @ shift @ unscale
            return cv2.warpAffine(small, m, (PAIR_WIDTH, PAIR_HEIGHT), flags=cv2.INTER_LINEAR,
                                  borderMode=cv2.BORDER_REPLICATE)
    return cv2.warpAffine(frame, m, (PAIR_WIDTH, PAIR_HEIGHT), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def sides_apart(a, b) -> float:
    """How far apart two finds' centres are, in their mean face side."""
    return math.hypot(a.cx - b.cx, a.cy - b.cy) / ((a.side + b.side) / 2)


def touching_pairs(dets, reach: float = TOUCHING) -> list[tuple[int, int]]:
    """Index pairs (i < j) of finds whose centres are within ``reach`` of their mean face side."""
    return [(i, j) for i in range(len(dets)) for j in range(i + 1, len(dets)) if sides_apart(dets[i], dets[j]) <= reach]


def pair_beliefs(net, frame: np.ndarray, dets, pairs: list[tuple[int, int]], again_below: float = 1.0) -> np.ndarray:
    """Probabilities ``(len(pairs), len(PAIR_CLASSES))`` for each pair of finds. A pair whose first
    look's likeliest class has less than ``again_below`` of the belief is looked at again the other
    way round (the second die on the left) and the two looks averaged (1.0: every pair twice; 0:
    once). A look takes about 1.7 ms here and its crop 0.2-1.5 ms (2026-12-01, one core): a
    1280x960 frame of three dice that all touch pays about 13 ms."""
    if not pairs:
        return np.zeros((0, len(PAIR_CLASSES)), np.float32)
    crops = []
    for i, j in pairs:
        a, b = dets[i], dets[j]
        side = (a.side + b.side) / 2
        crops.append(pair_crop(frame, (a.cx, a.cy), (b.cx, b.cy), side))
    p = _softmax_forward(net, crops)
    again = [k for k in range(len(pairs)) if p[k].max() < again_below]
    if again:
        turned = _softmax_forward(net, [crops[k][::-1, ::-1] for k in again])  # the second die on the left
        p[again] = (p[again] + turned[:, list(SWAPPED)]) / 2  # in the turned look the first die is the pair's second
    return p.astype(np.float32)


def _softmax_forward(net, crops: list[np.ndarray]) -> np.ndarray:
    net.setInput(crops_to_blob(crops))  # the pair network takes its crops as the classifier does
    # in float64 as it always was: the beliefs are byte for byte those the thresholds were chosen on
    return softmax(np.asarray(net.forward(), np.float64).reshape(len(crops), len(PAIR_CLASSES)))


def leaning_by_pairs(n: int, pairs: list[tuple[int, int]], beliefs: np.ndarray, trained_share: float = 0.0,
                     table_share: float = 0.0) -> tuple[list[float | None], list[float]]:
    """For each of ``n`` finds: the probability that it leans on a die it touches (the most any of its
    pairs gives; None for a find that touches none), and the probability that it is no die (the most
    any of its pairs gives; 0 for a find in no pair).

    A find leans on its partner only if both are dice: its leaning belief given two dice counts as
    much as the network believes both are (``flat`` and the two leaning classes together). Without
    that, a pair the network was sure held no second die (a die beside its own side face seen at a
    slant) took the die's leaning belief from the ratio of two leftovers under a thousandth: up to a
    tenth, enough to doubt a flat die alone on the tray. The network's belief carries the share of
    two-dice pairs with a leaning die it was trained on (``trained_share``); with ``table_share``
    given, the belief is weighed for that share instead (Bayes' rule on the odds of "a die of this
    pair leans" against "both lie flat").

    >>> b = np.array([[0.6, 0.2, 0.1, 0.1, 0.0]])
    >>> lean, no_die = leaning_by_pairs(3, [(0, 2)], b)
    >>> [round(x, 3) if x is not None else None for x in lean], [round(x, 3) for x in no_die]
    ([0.2, None, 0.1], [0.1, 0.0, 0.0])
    >>> lean, _ = leaning_by_pairs(3, [(0, 2)], b, 0.3, 0.1)
    >>> [round(x, 3) if x is not None else None for x in lean]
    [0.069, None, 0.034]
    >>> side_face = np.array([[4e-5, 6e-6, 1e-6, 2e-5, 0.99993]])   # sure the second find is no die
    >>> lean, _ = leaning_by_pairs(2, [(0, 1)], side_face, 0.3, 0.1)
    >>> lean[0] < 1e-5
    True
    """
    lean: list[float | None] = [None] * n
    no_die = [0.0] * n
    factor = 1.0
    if 0 < trained_share < 1 and 0 < table_share < 1:
        factor = (table_share / (1 - table_share)) / (trained_share / (1 - trained_share))
    for (i, j), p in zip(pairs, beliefs):
        flat, first, second, first_none, second_none = (float(v) for v in p)
        leaning = first + second
        odds = leaning / max(flat, 1e-9) * factor
        # the pair's leaning belief given two dice, reweighed, as far as both are dice
        scale = (odds / (1 + odds)) / max(leaning, 1e-9) * (flat + leaning)
        for k, share in ((i, first * scale), (j, second * scale)):
            lean[k] = share if lean[k] is None else max(lean[k], share)
        no_die[i] = max(no_die[i], first_none)
        no_die[j] = max(no_die[j], second_none)
    return lean, no_die
