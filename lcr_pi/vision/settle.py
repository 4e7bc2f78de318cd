"""Settle detection: watch the preview stream and say when the dice have come to rest.

The reader is asked about a frame only after the dice stopped moving and no hand is over the tray,
and only once per still scene (something that stays still at the edge for ``patience_seconds`` is no
hand, and that scene is reported like any other; :class:`~lcr_pi.camera_dice.CameraDice` then knows
dice left lying from a roll). The check runs on every preview frame, so it works on a small grey copy of
the frame (:data:`WORK_WIDTH` pixels wide, shrunk straight from the colour frame and smoothed so
sensor noise and JPEG shimmer melt away): a resize and a few small array operations, about 0.3-0.6 ms
for a 1280x960 frame on one core here. The heavier checks (a hand? a new scene?) run only on a frame
that is a candidate for a report.

How it decides, frame by frame:

* *motion*: the share of work pixels whose grey level changed by more than ``pixel_delta`` since
  the previous frame. Above ``motion_threshold`` the frame is ``moving`` and the detector is
  *armed* (something happened that may be a roll).
* *still*: armed, and no motion from frame to frame for ``still_seconds`` (and at least
  ``min_still_frames`` frames); and the frame also matches the one ``still_seconds`` back, so dice
  creeping to a halt (a little each frame) do not look still too early.
* *light*: both tests above, and the hand's below, first take out an overall change of brightness
  (the median ratio of the two images: a lamp, a cloud, the camera's exposure settling), so a change
  of light alone is no motion and no hand. A black frame (the camera starting, or covered) is
  passed over: it is no scene to compare with.
* *hand*: a hand reaches in from outside the view, so it shows as a large changed blob (against
  the scene before the motion began) that touches the edge of the watched area. While one is there
  the state is ``obstructed``; the detector waits for it to leave. A "hand" that has not moved for
  ``patience_seconds`` (a real hand trembles) is taken as part of the scene: a change of light the
  ratio could not take out (one lamp of two), a shadow reaching the edge, an arm resting on the
  table. The detector then looks at that scene as at any other still one, so the game never waits
  in silence for a hand that is not there.
* *new*: the still scene must differ from the scene last handed to the reader where a die could be
  (a changed blob of at least ``min_change_px`` work pixels, compared after dividing each image by
  its local brightness, so a lamp switched on or a shadow passing over the tray is not a roll; nor
  is a hand that reached in and left without touching the dice). Then the state is ``settled``,
  once, with the full-resolution frame to read.

``region`` (x0, y0, x1, y1 in frame pixels, e.g. the calibrated tray) limits the watch.

*Time*: the waits are in seconds, so that they last as long with any camera (a USB webcam gives
7.5 or 15 frames a second in dim light, some cameras 60, and a slow Pi handles fewer frames than its
camera gives). ``update(frame, at=...)`` takes the frame's capture time in seconds (any origin: only
differences count); a frame given without one is taken as one frame of a :data:`NOMINAL_FPS` preview
after the one before (tests, rendered films, a folder of frames), and a gap longer than
:data:`MAX_FRAME_GAP` between two frames (the camera away) counts as that long. No clock is read here.
Counted in frames, as before 2026-12-03, the 3 still frames were 50 ms at 60 fps, and a die
balanced on an edge for that long before falling was read as it stood (4 of 24 rendered throws
with a die toppling over an edge), and the 1.5 s patience lasted 6 s at 7.5 fps.

>>> import numpy as np
>>> watcher = SettleDetector(still_seconds=0.05)
>>> empty = np.full((120, 160, 3), 90, np.uint8)
>>> dice = empty.copy(); dice[40:60, 50:70] = 250
>>> [watcher.update(f).state for f in (empty, empty, dice, dice, dice, dice, dice)]
['quiet', 'quiet', 'moving', 'still', 'settled', 'quiet', 'quiet']
>>> watcher = SettleDetector()   # 0.1 s still: at 60 frames a second that is 6 frames, at 30 three
>>> [watcher.update(f, at=k / 60).state for k, f in enumerate([empty, dice] + [dice] * 7)][2:]
['still', 'still', 'still', 'still', 'still', 'settled', 'quiet']
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

import cv2
import numpy as np

from lcr_pi.vision.reader import check_frame

WORK_WIDTH = 320
HAND_DICE = 10  # dice (top-face areas) a change at the edge must cover to be a hand
LIGHT_SAMPLES_PER_SIGMA = 4  # grid samples per sigma of the local-brightness blur
HUGE_CHANGE = 0.25  # a change over a quarter of the view that reaches its edge is an arm, whatever its colour
BLACK_LEVEL, BLACK_STD = 24.0, 2.0  # a frame this dark and this flat is no picture (a camera starting, covered)
LIGHT_SAMPLE_STEP = 4  # the brightness ratio is the median over every 4th pixel of every 4th row
LIGHT_TOLERANCE = 0.02  # ratios closer to 1 than this are taken as no change of light
LIGHT_AGREEMENT = 0.85  # ...and a ratio is a change of light only when this share of pixels agrees with it
_CLOSE_KERNEL = np.ones((5, 5), np.uint8)  # bridges the gaps in a changed hand or die
STATES = ("quiet", "moving", "still", "settled", "obstructed")
NOMINAL_FPS = 30.0  # a frame given without its time comes 1/30 s after the one before
MAX_FRAME_GAP = 0.5  # s: a longer wait between two frames (the camera away, a stall) counts as this long
TIME_TOLERANCE = 1e-3  # s: a wait this much short of its length is over (frame times are rounded)
MAX_RECENT = 256  # work images kept for the still window at most (0.1 s at up to 2500 frames a second)


class FrameClock:
    """Time on the frames' own clock: :meth:`tick` with a frame's capture time (s, or None) advances
    :attr:`now` by the time since the frame before, never back, never by more than :data:`MAX_FRAME_GAP`;
    without a time (or without one for the frame before) by one frame of a :data:`NOMINAL_FPS` preview.

    >>> clock = FrameClock()
    >>> [round(clock.tick(at), 4) for at in (None, None, 10.0, 10.05, 10.0, 99.0, float("nan"))]
    [0.0333, 0.0333, 0.0333, 0.05, 0.0, 0.5, 0.0333]
    >>> round(clock.now, 4)
    0.6833
    """

    def __init__(self):
        self.now = 0.0
        self._at: float | None = None

    def tick(self, at: float | None = None) -> float:
        valid = at is not None and math.isfinite(at)
        if valid and self._at is not None:
            step = min(max(float(at) - self._at, 0.0), MAX_FRAME_GAP)
        else:
            step = 1.0 / NOMINAL_FPS
        self._at = float(at) if valid else None
        self.now += step
        return step


@dataclass(frozen=True)
class SettleUpdate:
    """What one frame told the detector: state is quiet, moving, still, settled or obstructed."""

    state: str
    motion: float
    frame: np.ndarray | None = None  # the frame to read, when state == "settled"


class SettleDetector:
    """Consumes frames one by one; reports ``settled`` once per roll, with the frame to read."""

    def __init__(
        self,
        *,
        still_seconds: float = 0.1,
        min_still_frames: int = 2,
        motion_threshold: float = 0.0005,
        pixel_delta: int = 10,
        change_delta: float = 0.18,
        min_change_px: int | None = None,
        hand_area: float = 0.04,
        patience_seconds: float = 1.5,
        region: tuple[int, int, int, int] | None = None,
        die_px: float | None = None,
        size: tuple[int, int] | None = None,
    ):
        """``die_px`` (the expected top-face side in frame pixels, from the calibration) sets how big a
        change counts as a die moved; without it ``min_change_px`` (work pixels, default 6) is used.
        ``size`` (width, height) is the frame size ``region`` and ``die_px`` are given for (the
        calibration's): frames of another size with the same shape have them scaled, frames of
        another shape are watched whole (a camera may not give the size it was asked for).

        ``still_seconds`` (0.1 s: 3 frames at 30 fps, 6 at 60) of no motion, over at least
        ``min_still_frames`` frames (2: 267 ms at 7.5 fps, where one frame's 133 ms would be enough
        time but a single look), make the dice still; ``patience_seconds`` (1.5 s) is how long
        something still at the edge is taken for a hand."""
        if not still_seconds > 0:
            raise ValueError(f"still_seconds must be more than 0, not {still_seconds}")
        if min_still_frames < 1:
            raise ValueError(f"min_still_frames must be at least 1, not {min_still_frames}")
        if not patience_seconds > 0:
            raise ValueError(f"patience_seconds must be more than 0, not {patience_seconds}")
        self.patience_seconds = float(patience_seconds)
        self.still_seconds = float(still_seconds)
        self.min_still_frames = int(min_still_frames)
        self.motion_threshold = motion_threshold
        self.pixel_delta = pixel_delta
        self.change_delta = change_delta
        self.hand_area = hand_area
        self.region = tuple(int(v) for v in region) if region is not None else None
        self.die_px = die_px
        self._given = (self.region, die_px, tuple(int(v) for v in size) if size is not None else None)
        self._fitted_to: tuple[int, int] | None = None  # the frame size region and die_px were fitted to
        self._min_change_px = min_change_px
        self._clock = FrameClock()
        # (time, work image) of the last frames: the newest is the previous frame, the oldest the
        # newest one at least still_seconds old.
        self._recent: deque[tuple[float, np.ndarray]] = deque(maxlen=MAX_RECENT)
        self._before: np.ndarray | None = None  # the scene before the current disturbance
        self._last_read: np.ndarray | None = None  # normalised scene last handed to the reader
        self._still = 0  # still frames in a row
        self._still_from = 0.0  # time of the frame before the first of them
        self._obstructed = 0  # still frames in a row taken for a hand
        self._obstructed_from = 0.0  # time of the frame before the first of them
        self._armed = False  # motion seen since the last report (or the start)
        self._scale = 1.0  # work pixels per frame pixel

    def reset(self) -> None:
        """Forget the last read scene, so that the next still scene is reported even if it is the same
        (:class:`~lcr_pi.camera_dice.CameraDice` asks for this when the reader found the frame blurred)."""
        self._last_read = None
        self._armed = True
        self._still = 0
        self._obstructed = 0

    # -- the work image ------------------------------------------------------------------------

    def _small(self, frame: np.ndarray) -> np.ndarray:
        """The grey work image: shrunk first, straight from the colour frame, then made grey and smoothed.

        Shrinking comes first because it is where the time goes. A bilinear shrink reads only the two
        frame rows (and columns) around each work pixel's centre: for a 1280x960 frame a quarter of the
        cost of a grey conversion of the whole frame followed by an area average. Each work pixel
        still averages a 2x2 patch (at a 2x shrink exactly the area average) and the 3x3 Gaussian
        averages neighbouring patches, so sensor noise up to sigma ~15 grey levels per channel
        (the renderer's dim Pi camera preset has up to 6) stays below ``pixel_delta``.
        """
        if self._fitted_to != (frame.shape[1], frame.shape[0]):
            self._fit(frame.shape[1], frame.shape[0])
        if self.region is not None:
            x0, y0, x1, y1 = self.region
            frame = frame[y0:y1, x0:x1]
        h, w = frame.shape[:2]
        work_w = min(WORK_WIDTH, w)
        self._scale = work_w / w
        if work_w < w:
            frame = cv2.resize(frame, (work_w, max(1, round(h * work_w / w))), interpolation=cv2.INTER_LINEAR)
        grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame
        return cv2.GaussianBlur(grey, (3, 3), 0)  # a new array: never the caller's frame

    def _fit(self, width: int, height: int) -> None:
        """Fit the given region and die size to frames of ``width`` x ``height``: scaled from the size
        they were given for when the shape is the same, else (or when the region lies outside) the
        whole frame is watched, and the die size is scaled or dropped with it."""
        region, die_px, size = self._given
        self._fitted_to = (width, height)
        if size is not None and size != (width, height):
            if region is not None and abs(width / height - size[0] / size[1]) > 0.01:
                region = die_px = None  # another shape: the calibrated tray is not where it was
            else:
                f = width / size[0]
                region = tuple(round(v * f) for v in region) if region is not None else None
                die_px = die_px * f if die_px else die_px
        if region is not None:
            x0, y0, x1, y1 = max(0, region[0]), max(0, region[1]), min(width, region[2]), min(height, region[3])
            region = (x0, y0, x1, y1) if x1 - x0 >= 8 and y1 - y0 >= 8 else None
            if region is None:
                die_px = None
        self.region, self.die_px = region, die_px

    def _light_scale(self, grey: np.ndarray) -> float:
        """Blur radius (work pixels) of the local brightness: wider than a die, so a die is not divided away."""
        die = self.die_px * self._scale if self.die_px else 0.0
        return max(2.0, grey.shape[1] / 16, 1.5 * die)

    def _moved(self, a: np.ndarray, b: np.ndarray) -> float:
        """Share of pixels that changed between two work images, the light's change taken out."""
        return float(np.count_nonzero(self._changed(a, b))) / a.size

    def _changed(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Where ``b`` differs from ``a`` by more than ``pixel_delta`` grey levels once ``a`` is brought
        to ``b``'s light (see :func:`light_ratio`)."""
        ratio = light_ratio(a, b)
        if abs(ratio - 1.0) > LIGHT_TOLERANCE:
            a = cv2.convertScaleAbs(a, alpha=ratio, beta=8.0 * (ratio - 1.0))
        return cv2.absdiff(a, b) > self.pixel_delta

    @property
    def min_change_px(self) -> int:
        """Work pixels a change must cover to count as a die: a quarter of a die's top face."""
        if self._min_change_px is not None:
            return self._min_change_px
        if self.die_px:
            return max(4, int(0.25 * (self.die_px * self._scale) ** 2))
        return 6

    # -- decisions -----------------------------------------------------------------------------

    def update(self, frame: np.ndarray, at: float | None = None) -> SettleUpdate:
        """What ``frame`` tells; ``at`` is its capture time in seconds, when known (see *Time* above)."""
        # A frame the reader would refuse (another type or shape, empty, too small) is refused here
        # in the same words, not with an OpenCV message (found by an audit).
        frame = check_frame(frame)
        if is_black(frame):
            return SettleUpdate("quiet", 0.0)  # no picture (yet): no scene to compare later ones with
        grey = self._small(frame)
        if self._recent and self._recent[-1][1].shape != grey.shape:
            self._recent.clear()  # the camera changed resolution: start over
            self._before = self._last_read = None
        before_now = self._clock.now
        self._clock.tick(at)
        now = self._clock.now
        previous = self._recent[-1][1] if self._recent else None
        self._recent.append((now, grey))
        while len(self._recent) > 1 and self._recent[1][0] <= now - self.still_seconds + TIME_TOLERANCE:
            self._recent.popleft()  # the oldest kept is the newest frame at least still_seconds old
        if previous is None:
            self._before = grey
            if self._last_read is None:
                self._last_read = normalised(grey, self._light_scale(grey))
            return SettleUpdate("quiet", 0.0)
        motion = self._moved(previous, grey)
        if motion > self.motion_threshold:
            if not self._armed:
                self._before = previous
            self._still = 0
            self._obstructed = 0
            self._armed = True
            return SettleUpdate("moving", motion)
        if not self._armed:
            self._before = grey
            return SettleUpdate("quiet", motion)
        self._still += 1
        if self._still == 1:
            self._still_from = before_now
        if self._still < self.min_still_frames or now - self._still_from < self.still_seconds - TIME_TOLERANCE:
            return SettleUpdate("still", motion)
        back_at, back = self._recent[0]
        if back_at > now - self.still_seconds + TIME_TOLERANCE:
            return SettleUpdate("still", motion)  # no frame that old yet (a start, a new resolution)
        if self._moved(back, grey) > self.motion_threshold:
            return SettleUpdate("still", motion)  # creeping: still frame to frame, not over the window
        if self._hand_in_view(grey):
            self._obstructed += 1
            if self._obstructed == 1:
                self._obstructed_from = before_now
            if now - self._obstructed_from < self.patience_seconds - TIME_TOLERANCE:
                return SettleUpdate("obstructed", motion)
            # Nothing that moved for this long is a hand: it is the scene now.
        self._obstructed = 0
        scene = normalised(grey, self._light_scale(grey))
        self._armed = False
        self._before = grey
        if self._last_read is not None and not self._new_scene(scene):
            return SettleUpdate("quiet", motion)  # a shadow, a light, a hand that left: not a roll
        self._last_read = scene
        return SettleUpdate("settled", motion, frame)

    def _hand_in_view(self, grey: np.ndarray) -> bool:
        """A large change against the scene before the motion, reaching in from the edge of the view.

        A hand and forearm cover dozens of dice; a die and its shadow about two. With the die size
        known (calibration) a change of ``HAND_DICE`` dice at the edge is a hand. Without it the dice
        that lie clear of the edge give the scale: a change at the edge ``HAND_DICE`` times larger than
        the largest of them is a hand (a close-up die at the edge can be as big as a hand in a wide
        view, so size alone cannot tell), and so is one covering a quarter of the view.
        """
        if self._before is None or self._before.shape != grey.shape:
            return False
        changed = self._changed(self._before, grey).astype(np.uint8)
        changed = cv2.morphologyEx(changed, cv2.MORPH_CLOSE, _CLOSE_KERNEL)
        die_least = HAND_DICE * (self.die_px * self._scale) ** 2 if self.die_px else None
        # No blob can be larger than all changed pixels together: when they are too few for a hand,
        # the blob labelling (most of this check's cost) is not needed.
        if cv2.countNonZero(changed) < (die_least if die_least is not None else self.hand_area * grey.size):
            return False
        count, _, stats, _ = cv2.connectedComponentsWithStats(changed, connectivity=8)
        if count <= 1:
            return False
        h, w = grey.shape
        x, y, bw, bh, area = (stats[1:, k] for k in range(5))
        at_edge = (x == 0) | (y == 0) | (x + bw >= w) | (y + bh >= h)
        if die_least is not None:
            least = die_least
        else:
            inner = area[~at_edge & (area >= 4)]
            least = HAND_DICE * float(inner.max()) / 2 if inner.size else HUGE_CHANGE * grey.size
            least = max(least, self.hand_area * grey.size)
        return bool(np.any(at_edge & (area >= least)))

    def _new_scene(self, scene: np.ndarray) -> bool:
        if scene.shape != self._last_read.shape:
            return True
        changed = (cv2.absdiff(scene, self._last_read) > self.change_delta).astype(np.uint8)
        if cv2.countNonZero(changed) < self.min_change_px:
            return False  # too few changed pixels for any blob to be a die: no labelling needed
        count, _, stats, _ = cv2.connectedComponentsWithStats(changed, connectivity=8)
        return count > 1 and int(stats[1:, cv2.CC_STAT_AREA].max()) >= self.min_change_px


def is_black(frame: np.ndarray) -> bool:
    """A whole camera frame that is dark and flat (sampled every 16th pixel): no picture, as a camera
    gives while it starts or when covered. Only the whole frame counts: a plain black tray, watched
    as the region, still has the table around it.

    >>> is_black(np.zeros((48, 64, 3), np.uint8)), is_black(np.full((48, 64, 3), 90, np.uint8))
    (True, False)
    """
    mean, std = cv2.meanStdDev(np.ascontiguousarray(frame[::16, ::16]))
    return float(mean.max()) < BLACK_LEVEL and float(std.max()) < BLACK_STD


def light_ratio(a: np.ndarray, b: np.ndarray) -> float:
    """How much brighter ``b`` is than ``a`` overall: the median of ``(b + 8) / (a + 8)`` over a grid of
    pixels, when most of them agree on it; else 1.0.

    The median follows the light (a lamp, a cloud, the exposure) and not what moved, as long as
    that covers less than half of the view (dice, most hands). A change of light changes nearly
    every pixel by the same ratio; a hand over much of the view (a close camera) changes its pixels
    by ratios that spread, so unless :data:`LIGHT_AGREEMENT` of them lie within 10 % of the median
    no change of light is measured (on rendered hands at most 78 % did; a lamp 90-100 %).

    >>> a = np.full((60, 80), 100, np.uint8); b = a.copy(); b[:20] = 250   # a hand over a third
    >>> light_ratio(a, b), round(light_ratio(a, (a * 0.7).astype(np.uint8)), 2)   # (70 + 8) / (100 + 8)
    (1.0, 0.72)
    >>> c = (a * 0.7).astype(np.uint8); c[:, 30:] = 250                     # a hand over most of it
    >>> light_ratio(a, c)
    1.0
    """
    sa = a[::LIGHT_SAMPLE_STEP, ::LIGHT_SAMPLE_STEP].astype(np.float32)
    sb = b[::LIGHT_SAMPLE_STEP, ::LIGHT_SAMPLE_STEP].astype(np.float32)
    sa += 8.0
    sb += 8.0
    ratios = sb / sa
    ratio = float(np.median(ratios))
    agreeing = np.count_nonzero(np.abs(ratios - ratio) < 0.1 * ratio)
    return ratio if agreeing >= LIGHT_AGREEMENT * ratios.size else 1.0


def normalised(grey: np.ndarray, sigma: float) -> np.ndarray:
    """The work image divided by its local brightness (a Gaussian of ``sigma`` pixels): a lamp or a
    soft shadow cancels out, dice stay.

    The local brightness is smooth, so a wide blur is taken on a coarse grid (a few samples per
    ``sigma``) and interpolated back: within about 0.01 of the full-size blur's result on camera images
    (0.02 on pure noise; scenes differ by ``change_delta`` = 0.18), at a tenth of its cost. The image is padded by mirroring first, as the full-size blur does at the edges.

    >>> g = np.full((40, 40), 100, np.uint8); g[10:20, 10:20] = 200
    >>> a, b = normalised(g, 5.0), normalised((g * 0.6).astype(np.uint8), 5.0)
    >>> float(np.abs(a - b).max()) < 0.05
    True
    >>> g = np.random.default_rng(0).integers(0, 256, (120, 160), dtype=np.uint8)
    >>> exact = (g + np.float32(8)) / cv2.GaussianBlur(g + np.float32(8), (0, 0), 20.0)
    >>> float(np.abs(normalised(g, 20.0) - exact).max()) < 0.02
    True
    """
    g = grey.astype(np.float32) + 8.0
    step = int(sigma // LIGHT_SAMPLES_PER_SIGMA)
    if step < 2:
        return g / cv2.GaussianBlur(g, (0, 0), sigma)
    h, w = g.shape
    pad = step * math.ceil(3 * sigma / step)  # the blur's reach, in whole grid cells
    padded = cv2.copyMakeBorder(g, pad, pad + (-h) % step, pad, pad + (-w) % step, cv2.BORDER_REFLECT_101)
    ph, pw = padded.shape
    coarse = cv2.resize(padded, (pw // step, ph // step), interpolation=cv2.INTER_AREA)
    coarse = cv2.GaussianBlur(coarse, (0, 0), sigma / step)
    local = cv2.resize(coarse, (pw, ph), interpolation=cv2.INTER_LINEAR)[pad:pad + h, pad:pad + w]
    return g / local
