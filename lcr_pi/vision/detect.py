"""Find dice in a frame: a tiny CenterNet-style detector run by OpenCV's dnn module.

The frame is scaled so its long side is :data:`DETECT_LONG_SIDE` pixels (padded to a multiple of
32) whatever the camera resolution, so a 640x480 webcam frame and a 3280x2464 Pi frame cost the
same. The network outputs, at stride 4:

* channel 0: a heatmap (logit) of top-face centres;
* channels 1-2: log of the top face's box width and height, in detector pixels / 4;
* channels 3-4: sub-cell offset of the centre (0..1);
* channels 5-6: ``cos 4a, sin 4a`` of the top face's rotation ``a`` (a square repeats every 90
  degrees), used to draw the outline.

Decoding keeps local maxima of the heatmap; a peak above ``sure`` is a die, a peak between
``doubt`` and ``sure`` is something die-like the reader cannot vouch for (it makes the frame
unsure rather than being silently dropped).

Everything here is plain numpy/OpenCV over arrays; loading the model file is the caller's job.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

DETECT_LONG_SIDE = 448
STRIDE = 4
OUTPUT_CHANNELS = 7
# The detector reads a die best when its top face is about this many detector pixels across (the
# training photos' dice are 15-45 px at the detector's input, most near 25). When the frame's dice
# are much smaller (a wide full-resolution view) or larger (a close-up), the reader runs the
# detector again at the scale that brings them to this size (see :func:`long_side_for_die`).
TARGET_DIE_SIDE = 24.0
MIN_LONG_SIDE, MAX_LONG_SIDE = 160, 1024
# The detector's input is padded to a multiple of GRID pixels, and its cells repeat on that grid: a
# die shifted against it by a few pixels scores differently (by up to 0.27 on 1280x960 renders),
# shifted by GRID pixels it scores the same. WINDOW_CONTEXT: detector pixels of picture kept around a region read
# alone, because the network's scores also use what lies around a die (measured on 1280x960
# renders: cut 52 px around the dice, scores fell by 0.03 on average; 105 px, by under 0.01).
GRID = 32
WINDOW_CONTEXT = 64


@dataclass(frozen=True)
class Detection:
    """A candidate die in frame pixels: centre, top-face box size, rotation (radians), score."""

    cx: float
    cy: float
    w: float
    h: float
    angle: float
    score: float

    @property
    def box(self) -> tuple[float, float, float, float]:
        return (self.cx - self.w / 2, self.cy - self.h / 2, self.cx + self.w / 2, self.cy + self.h / 2)

    @property
    def side(self) -> float:
        """The top face's side (frame pixels): the box is a square of this side turned by ``angle``.

        >>> round(Detection(0, 0, 10 * 2 ** 0.5, 10 * 2 ** 0.5, math.pi / 4, 1.0).side, 6)
        10.0
        """
        c, s = abs(math.cos(self.angle)), abs(math.sin(self.angle))
        return max(self.w, self.h) / (c + s)

    def corners(self) -> np.ndarray:
        """Approximate top-face outline: the square of the box's size turned by ``angle``.

        >>> Detection(10, 10, 4, 4, 0.0, 1.0).corners().tolist()
        [[8.0, 8.0], [12.0, 8.0], [12.0, 12.0], [8.0, 12.0]]
        """
        c, s = abs(math.cos(self.angle)), abs(math.sin(self.angle))
        # An axis-aligned box of width w around a square of side L turned by a has w = L (c + s).
        side_w, side_h = self.w / (c + s), self.h / (c + s)
        ca, sa = math.cos(self.angle), math.sin(self.angle)
        pts = []
        for dx, dy in ((-0.5, -0.5), (0.5, -0.5), (0.5, 0.5), (-0.5, 0.5)):
            x, y = dx * side_w, dy * side_h
            pts.append((self.cx + x * ca - y * sa, self.cy + x * sa + y * ca))
        return np.round(np.array(pts, dtype=np.float64), 6)


def detector_scale(shape: tuple[int, ...], long_side: int = DETECT_LONG_SIDE) -> float:
    """Factor from frame pixels to detector pixels.

    >>> detector_scale((480, 640))
    0.7
    """
    return long_side / max(shape[0], shape[1])


def long_side_for_die(shape: tuple[int, ...], die_side: float) -> int:
    """Detector input long side that shows a die of ``die_side`` frame pixels at :data:`TARGET_DIE_SIDE`.

    Kept within ``MIN_LONG_SIDE..MAX_LONG_SIDE`` and never above the frame's own long side (upscaling
    adds no detail).

    >>> long_side_for_die((2464, 3280), 117.0)      # a full-resolution Pi frame, small dice
    673
    >>> long_side_for_die((480, 640), 200.0)        # a close-up
    160
    >>> long_side_for_die((480, 640), 10.0)         # never beyond the frame itself
    640
    """
    frame_long = max(shape[0], shape[1])
    wanted = frame_long * TARGET_DIE_SIDE / max(float(die_side), 1.0)
    return int(round(min(frame_long, MAX_LONG_SIDE, max(MIN_LONG_SIDE, wanted))))


def prepare_detector_input(frame: np.ndarray, long_side: int = DETECT_LONG_SIDE) -> tuple[np.ndarray, float]:
    """Scale and pad a BGR frame to the detector's NCHW float input; return it and the scale."""
    scale = detector_scale(frame.shape, long_side)
    h = max(1, round(frame.shape[0] * scale))
    w = max(1, round(frame.shape[1] * scale))
    return _padded_blob(shrink(frame, w, h)), scale


def _padded_blob(small: np.ndarray) -> np.ndarray:
    """The detector's NCHW float input (0..1): ``small`` at the top left, padded with black to a
    multiple of :data:`GRID` pixels each way."""
    h, w = small.shape[:2]
    padded = np.zeros((-(-h // GRID) * GRID, -(-w // GRID) * GRID, 3), np.uint8)
    padded[:h, :w] = small
    return cv2.dnn.blobFromImage(padded, 1 / 255.0)


@dataclass(frozen=True)
class Window:
    """Where a detector input cut from a frame lies: the frame pixel at its top left corner and how
    many frame pixels one detector pixel spans across and down."""

    x0: float
    y0: float
    fx: float
    fy: float

    def to_frame(self, d: Detection) -> Detection:
        """A detection in this window's detector pixels, in frame pixels.

        >>> Window(100, 50, 2.0, 2.0).to_frame(Detection(10, 10, 4, 4, 0.1, 0.9))
        Detection(cx=120.0, cy=70.0, w=8.0, h=8.0, angle=0.1, score=0.9)
        """
        return Detection(self.x0 + d.cx * self.fx, self.y0 + d.cy * self.fy, d.w * self.fx, d.h * self.fy, d.angle, d.score)


def detector_window(shape: tuple[int, ...], long_side: int, region, context: int = WINDOW_CONTEXT) -> tuple[int, int, int, int]:
    """The part (x0, y0, x1, y1 in detector pixels) of the whole frame's detector view at
    ``long_side`` to look at for ``region`` (x0, y0, x1, y1 frame pixels): the region with
    ``context`` pixels around it, its corner on the detector's grid, so that a die in it falls on
    the same cells as in the whole view and scores as it would there.

    >>> detector_window((960, 1280), 448, (400, 300, 700, 600))      # 1280x960 seen at 448x336
    (64, 32, 309, 274)
    >>> detector_window((960, 1280), 448, (0, 0, 1280, 960))
    (0, 0, 448, 336)
    """
    scale = detector_scale(shape, long_side)
    width, height = max(1, round(shape[1] * scale)), max(1, round(shape[0] * scale))
    rx0, ry0, rx1, ry1 = region
    x0 = max(0, int((rx0 * scale - context) // GRID * GRID))
    y0 = max(0, int((ry0 * scale - context) // GRID * GRID))
    x1 = min(width, max(x0 + 1, math.ceil(rx1 * scale + context)))
    y1 = min(height, max(y0 + 1, math.ceil(ry1 * scale + context)))
    return x0, y0, x1, y1


def prepare_detector_window(frame: np.ndarray, long_side: int, region, context: int = WINDOW_CONTEXT) -> tuple[np.ndarray, Window]:
    """The detector input for the part of ``frame`` around ``region`` (:func:`detector_window`),
    shrunk from that part of the frame alone, and where it lies (:class:`Window`).

    >>> blob, window = prepare_detector_window(np.zeros((960, 1280, 3), np.uint8), 448, (400, 300, 700, 600))
    >>> blob.shape, (window.x0, window.y0), round(window.fx, 3)
    ((1, 3, 256, 256), (182.0, 91.0), 2.857)
    """
    x0, y0, x1, y1 = detector_window(frame.shape, long_side, region, context)
    scale = detector_scale(frame.shape, long_side)
    fh, fw = frame.shape[:2]
    # The frame pixels under the window, rounded outwards, their far ends moved out (by at most 16
    # steps of the halvings) to sides that halve evenly: a side of odd length stops shrink's fast
    # halvings, and the crop then shrinks two to four times slower (half a 1280x960 frame 4.1 ->
    # 1.9 ms; a full-resolution tray 8 -> 4 ms). Of the first few such ends, the one whose side is
    # nearest a whole number of detector pixels keeps the whole look's scale; the window says
    # exactly which frame pixels it holds, so positions stay exact. The start is kept where it was:
    # moved to a whole step of the halvings as well, the dice scored further from the whole look's
    # (benchmarks/bench_calibration.py, README "Fitting it to a table").
    sx0, sy0 = int(x0 / scale), int(y0 / scale)
    sx1, sy1 = min(fw, math.ceil(x1 / scale)), min(fh, math.ceil(y1 / scale))
    multiple = 2 ** _halvings(sx1 - sx0, sy1 - sy0, x1 - x0, y1 - y0)
    # The whole look's own scales (its sides are rounded to whole pixels):
    scale_x, scale_y = max(1, round(fw * scale)) / fw, max(1, round(fh * scale)) / fh
    sx1, sy1 = _even_end(sx0, sx1, fw, multiple, scale_x), _even_end(sy0, sy1, fh, multiple, scale_y)
    w, h = max(1, round((sx1 - sx0) * scale_x)), max(1, round((sy1 - sy0) * scale_y))
    window = Window(float(sx0), float(sy0), (sx1 - sx0) / w, (sy1 - sy0) / h)
    return _padded_blob(shrink(frame[sy0:sy1, sx0:sx1], w, h)), window


def _halvings(width: int, height: int, w: int, h: int) -> int:
    """How many times :func:`shrink` can halve a ``width`` x ``height`` picture on its way to ``w`` x ``h``.

    >>> _halvings(3280, 2464, 448, 336), _halvings(1280, 960, 448, 336), _halvings(100, 100, 80, 80)
    (2, 1, 0)
    """
    if w < 1 or h < 1:
        return 0
    k = 0
    while width >= 2 ** (k + 1) * w and height >= 2 ** (k + 1) * h:
        k += 1
    return k


def _even_end(lo: int, hi: int, limit: int, multiple: int, scale: float) -> int:
    """An end at or past ``hi`` (within ``0..limit``) that gives ``lo..end`` a length that is a
    multiple of ``multiple`` and, of the first 16 or so such, the one nearest a whole number of pixels
    at ``scale``; at the frame's edge, the end pulled in (by less than ``multiple`` pixels).

    >>> _even_end(10, 23, 100, 4, 1.0), _even_end(90, 99, 100, 4, 1.0), _even_end(0, 99, 99, 4, 1.0)
    (26, 98, 96)
    >>> _even_end(0, 1301, 3280, 4, 448 / 3280)         # 183.02 detector px (1304 px would be 178.11)
    1340
    """
    if multiple == 1:
        return hi  # no halvings to keep in step with: the crop as it is
    ends = [end for end in range(hi + (-(hi - lo) % multiple), min(limit, hi + 16 * multiple) + 1, multiple)]
    if not ends:
        return max(lo + 1, hi - (hi - lo) % multiple)
    return min(ends, key=lambda end: (abs((end - lo) * scale - round((end - lo) * scale)), end))


def shrink(frame: np.ndarray, w: int, h: int, trim_odd: bool = False) -> np.ndarray:
    """Area-average ``frame`` down to ``w`` x ``h``: exact halvings first (OpenCV's fast path for a
    factor of two), then one area resize for the rest. Twice as fast as one area resize by an odd
    factor (3.6 -> 1.8 ms for 1280x960 -> 448x336 here), and the same picture within a grey level.

    A side of odd length stops the halvings. ``trim_odd`` drops its last row or column instead, at
    each halving (a few pixels at the edge, so the picture is stretched by up to 0.3 %): for
    comparisons where that does not matter, such as a tray against its empty picture (a 3147x2301
    full-resolution tray shrinks in 6 ms instead of 30 here).

    >>> shrink(np.zeros((960, 1280, 3), np.uint8), 448, 336).shape
    (336, 448, 3)
    >>> shrink(np.zeros((2301, 3147, 3), np.uint8), 236, 173, trim_odd=True).shape
    (173, 236, 3)
    """
    while frame.shape[1] >= 2 * w and frame.shape[0] >= 2 * h:
        if frame.shape[1] % 2 or frame.shape[0] % 2:
            if not trim_odd:
                break
            frame = frame[: frame.shape[0] // 2 * 2, : frame.shape[1] // 2 * 2]
        frame = cv2.resize(frame, (frame.shape[1] // 2, frame.shape[0] // 2), interpolation=cv2.INTER_AREA)
    if (frame.shape[1], frame.shape[0]) == (w, h):
        return frame
    return cv2.resize(frame, (w, h), interpolation=cv2.INTER_AREA if w < frame.shape[1] else cv2.INTER_LINEAR)


def decode_detections(output: np.ndarray, scale: float, doubt: float = 0.15, max_dice: int = 64) -> list[Detection]:
    """Turn the network output ``(1, 7, H/4, W/4)`` into detections above ``doubt``, best first."""
    out = output[0]
    heat = 1.0 / (1.0 + np.exp(-out[0]))
    peaks = cv2.dilate(heat, np.ones((3, 3), np.uint8))
    ys, xs = np.nonzero((heat >= peaks) & (heat >= doubt))
    order = np.argsort(-heat[ys, xs])[:max_dice]
    found = []
    for i in order:
        y, x = int(ys[i]), int(xs[i])
        w = math.exp(float(np.clip(out[1, y, x], -3, 6))) * STRIDE
        h = math.exp(float(np.clip(out[2, y, x], -3, 6))) * STRIDE
        ox = float(np.clip(out[3, y, x], 0, 1))
        oy = float(np.clip(out[4, y, x], 0, 1))
        angle = math.atan2(float(out[6, y, x]), float(out[5, y, x])) / 4
        found.append(
            Detection(
                cx=(x + ox) * STRIDE / scale,
                cy=(y + oy) * STRIDE / scale,
                w=w / scale,
                h=h / scale,
                angle=angle,
                score=float(heat[y, x]),
            )
        )
    return suppress_overlaps(found)


def suppress_overlaps(dets: list[Detection], max_distance: float = 0.7) -> list[Detection]:
    """Drop a weaker detection whose centre is within ``max_distance`` face sides of a stronger one's.

    Two flat dice's top faces cannot overlap, so their centres are at least one side apart (even
    turned 45 degrees and touching corner to edge, where their upright boxes do overlap): a peak
    closer than that is the same die seen twice.

    >>> a, b = Detection(454, 465, 64, 64, math.pi / 4, 0.6), Detection(421, 496, 64, 64, math.pi / 4, 0.5)
    >>> len(suppress_overlaps([a, b]))                        # two dice touching, turned 45 degrees
    2
    >>> len(suppress_overlaps([a, Detection(460, 470, 64, 64, math.pi / 4, 0.3)]))   # one die twice
    1
    """
    kept: list[Detection] = []
    for d in sorted(dets, key=lambda d: -d.score):
        if any(math.hypot(d.cx - k.cx, d.cy - k.cy) < max_distance * k.side for k in kept):
            continue
        kept.append(d)
    return kept
