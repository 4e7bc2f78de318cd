"""Tray calibration: where the tray is, what it looks like empty, how big a die is, how to lock the camera.

A calibration is made once per table set-up (``lcr-pi calibrate``) and saved under ``calibration/``
as JSON plus the empty-tray reference image as PNG. The format is documented in
``calibration/README.md``. The game loads it with :func:`load_calibration_or_default`, which never
fails: a missing, corrupt or mismatched file gives a warning and the reader's defaults.

Pure parts (no files, no camera): :func:`find_tray`, :func:`measure_die_px`, :func:`make_calibration`,
:class:`CalibratedReader`. File parts: :func:`save_calibration`, :func:`load_calibration`.

>>> import numpy as np
>>> table = np.full((240, 320, 3), (40, 90, 160), np.uint8)       # an orange-brown table
>>> table[30:210, 60:260] = (60, 130, 40)                         # a green felt tray on it
>>> find_tray(table).box
(60, 30, 260, 210)
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import cv2
import numpy as np

from lcr_pi.errors import UserError
from lcr_pi.vision.reader import OTHER_SIZE, FrameMemo, asked, check_frame, describe_position, join_places, unsettled

log = logging.getLogger("lcr_pi.calibration")

FORMAT_VERSION = 1
DEFAULT_PATH = Path("calibration") / "table.json"
LOCKED_CONTROL_KEYS = ("ExposureTime", "AnalogueGain", "ColourGains")

Box = tuple[int, int, int, int]


@dataclass(frozen=True)
class TrayRegion:
    """The tray found in a frame: its bounding box (x0, y0, x1, y1), shape and outline (frame pixels)."""

    box: Box
    shape: str  # "round", "rect", "frame" (the tray fills the view) or "manual"
    outline: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class Calibration:
    """Everything the game needs to know about one camera over one tray."""

    resolution: tuple[int, int]  # (width, height) of the frames it was made from
    tray: Box  # x0, y0, x1, y1: the region the reader reads
    tray_shape: str = "frame"
    tray_outline: tuple[tuple[int, int], ...] = ()
    die_px: float | None = None  # expected top-face side in pixels
    camera_controls: dict = field(default_factory=dict)  # picamera2 controls that lock exposure and colour
    reference_image: str | None = None  # PNG file name, beside the JSON file
    reference_empty: bool = False  # the reader saw no dice in the reference: it may guide reading
    reference_sha256: str | None = None  # the reference file's sha256 (hex); None in files before it was written
    source: str = ""
    created: str = ""
    version: int = FORMAT_VERSION

    def scaled_to(self, width: int, height: int) -> "Calibration":
        """The same calibration for frames of another size with the same aspect (e.g. preview vs still).

        >>> Calibration((640, 480), (64, 48, 576, 432), die_px=40.0).scaled_to(1280, 960).tray
        (128, 96, 1152, 864)
        """
        w0, h0 = self.resolution
        if (width, height) == (w0, h0):
            return self
        if abs(width / height - w0 / h0) > 0.01:
            raise UserError(
                f"the calibration was made for {w0}x{h0} frames but the camera gives {width}x{height} "
                "(another shape): run lcr-pi calibrate again"
            )
        f = width / w0
        x0, y0, x1, y1 = self.tray
        return replace(
            self, resolution=(width, height), tray=(round(x0 * f), round(y0 * f), round(x1 * f), round(y1 * f)),
            tray_outline=tuple((round(x * f), round(y * f)) for x, y in self.tray_outline),
            die_px=None if self.die_px is None else self.die_px * f,
        )

    def to_json(self) -> dict:
        return {
            "version": self.version,
            "resolution": list(self.resolution),
            "tray": {"box": list(self.tray), "shape": self.tray_shape, "outline": [list(p) for p in self.tray_outline]},
            "die_px": None if self.die_px is None else round(float(self.die_px), 2),
            "camera_controls": self.camera_controls,
            "reference_image": self.reference_image,
            "reference_empty": self.reference_empty,
            "reference_sha256": self.reference_sha256,
            "source": self.source,
            "created": self.created,
        }


# --------------------------------------------------------------------------------------------
# Finding the tray


def find_tray(image: np.ndarray, *, work_side: int = 160) -> TrayRegion:
    """The tray floor: the region of the colour found around the middle of the view, holes (dice) filled.

    Works best on the empty tray. The floor colour is the median over the central half of the view;
    pixels close to it (lightness counts less than colour, so uneven light does not split the floor)
    connected to the middle make the floor; its convex hull is the tray. A coloured floor fading into
    shade towards an edge of the view reaches that edge (:func:`_to_shaded_edges`). When the floor
    reaches most of the view the tray fills it (``shape="frame"``).
    """
    h, w = image.shape[:2]
    f = work_side / max(h, w)
    small = cv2.resize(image, (max(8, round(w * f)), max(8, round(h * f))), interpolation=cv2.INTER_AREA)
    small = cv2.medianBlur(small, 5)
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2LAB).astype(np.float32)
    sh, sw = lab.shape[:2]
    cy0, cy1, cx0, cx1 = sh // 4, sh - sh // 4, sw // 4, sw - sw // 4
    floor = np.median(lab[cy0:cy1, cx0:cx1].reshape(-1, 3), axis=0)
    d = lab - floor
    dist = np.sqrt((0.35 * d[..., 0]) ** 2 + d[..., 1] ** 2 + d[..., 2] ** 2)
    otsu, _ = cv2.threshold(np.clip(dist * 2, 0, 255).astype(np.uint8), 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    limit = float(np.clip(otsu / 2, 6, 16))
    mask = cv2.erode((dist < limit).astype(np.uint8), np.ones((3, 3), np.uint8))
    count, labels, _, _ = cv2.connectedComponentsWithStats(mask, connectivity=4)
    full = TrayRegion((0, 0, w, h), "frame")
    if count <= 1:
        return full
    votes = np.bincount(labels[cy0:cy1, cx0:cx1].ravel(), minlength=count)
    votes[0] = 0
    floor_label = int(np.argmax(votes))
    pts = cv2.findNonZero(cv2.dilate((labels == floor_label).astype(np.uint8), np.ones((3, 3), np.uint8)))
    hull = cv2.convexHull(pts)
    hull_area = cv2.contourArea(hull)
    if hull_area < 0.1 * sh * sw:
        return full  # nothing tray-like around the middle: read the whole view
    x, y, bw, bh = cv2.boundingRect(hull)
    x, y, x1, y1 = _to_shaded_edges(small, (x, y, x + bw, y + bh))
    box = (int(math.floor(x / f)), int(math.floor(y / f)), min(w, int(math.ceil(x1 / f))), min(h, int(math.ceil(y1 / f))))
    outline = tuple((int(round(px / f)), int(round(py / f))) for px, py in hull.reshape(-1, 2))
    if (box[2] - box[0]) * (box[3] - box[1]) > 0.95 * w * h:
        return TrayRegion((0, 0, w, h), "frame", outline)
    perimeter = cv2.arcLength(hull, True)
    roundness = 4 * math.pi * hull_area / max(perimeter ** 2, 1e-9)  # 1 for a circle, 0.785 for a square
    shape = "round" if roundness > 0.86 else "rect"
    return TrayRegion(box, shape, outline)


# A coloured floor fades towards the view's edges (light falling off, the lens's vignetting) beyond
# what find_tray's colour distance takes for the floor: a cloth filling the view was cut a die or more
# short of an edge, and dice there fell outside the calibrated tray (bench_table_nights --calibrated,
# tables 1001, 2006, 2015). The colour's direction (its hue and saturation, whatever its brightness)
# does not fade, so a strip from the floor to the view's edge that keeps it is more floor, in shade.
# Only a coloured floor can tell: grey, white and black floors share their direction with the wall,
# the table and the room, so their box is left as found.
SHADE_MIN_CHROMA_DEG = 15.0  # the floor's colour at least this many degrees from grey
SHADE_SAME_DEG = 3.0  # a strip pixel within this many degrees of the floor's colour is the floor, shaded
SHADE_SHARE = 0.9  # ...and at least this share of the strip's pixels must be


def _colour_angle(pixels: np.ndarray, colour: np.ndarray) -> np.ndarray:
    """Degrees between each BGR pixel and ``colour`` as directions (their brightness left out)."""
    v = pixels.reshape(-1, 3).astype(np.float32) + 1.0
    c = colour.astype(np.float32) + 1.0
    cos = (v @ c) / (np.linalg.norm(v, axis=1) * float(np.linalg.norm(c)) + 1e-9)
    return np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))


def _to_shaded_edges(small: np.ndarray, box: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
    """``box`` (the floor found in ``small``, x0, y0, x1, y1) taken to each edge of the view whose strip
    beyond it is the floor in shade (see :data:`SHADE_MIN_CHROMA_DEG`).

    >>> cloth = np.full((60, 80, 3), (40, 40, 180), np.uint8)
    >>> cloth[:, 60:] = (20, 20, 90)                      # the same red cloth, half as bright
    >>> _to_shaded_edges(cloth, (0, 0, 60, 60))
    (0, 0, 80, 60)
    >>> cloth[:, 60:] = (60, 60, 60)                      # a grey table beside it
    >>> _to_shaded_edges(cloth, (0, 0, 60, 60))
    (0, 0, 60, 60)
    """
    sh, sw = small.shape[:2]
    floor = np.median(small[sh // 4: sh - sh // 4, sw // 4: sw - sw // 4].reshape(-1, 3), axis=0)
    if _colour_angle(floor[None], np.full(3, float(floor.mean())))[0] < SHADE_MIN_CHROMA_DEG:
        return box
    x0, y0, x1, y1 = box

    def shade(strip):
        return strip.size and (_colour_angle(strip, floor) <= SHADE_SAME_DEG).mean() >= SHADE_SHARE

    if x0 > 0 and shade(small[:, :x0]):
        x0 = 0
    if y0 > 0 and shade(small[:y0, :]):
        y0 = 0
    if x1 < sw and shade(small[:, x1:]):
        x1 = sw
    if y1 < sh and shade(small[y1:, :]):
        y1 = sh
    return x0, y0, x1, y1


def grow_box(box: Box, margin: float, width: int, height: int, include=()) -> Box:
    """``box`` grown by ``margin`` pixels on each side, widened to hold every box in ``include``, clipped.

    >>> grow_box((10, 10, 50, 50), 5, 100, 100, include=[(40, 40, 70, 60)])
    (5, 5, 75, 65)
    """
    x0, y0, x1, y1 = box
    for bx0, by0, bx1, by1 in include:
        x0, y0, x1, y1 = min(x0, bx0), min(y0, by0), max(x1, bx1), max(y1, by1)
    m = int(round(margin))
    return (max(0, int(x0) - m), max(0, int(y0) - m), min(width, int(math.ceil(x1)) + m), min(height, int(math.ceil(y1)) + m))


def measure_die_px(reading) -> float | None:
    """The median top-face side of the dice a reader saw (from their corners, else their boxes).

    A face's side is its longer edge, as the reader measures dice (``Detection.side``), so that the
    reader given this size chooses the scale it would choose by itself.
    """
    sides = []
    for die in getattr(reading, "dice", ()):
        if len(die.corners) >= 4:
            c = np.asarray(die.corners, np.float64)
            sides.append(float(np.max(np.linalg.norm(c - np.roll(c, 1, axis=0), axis=1))))
        else:
            x0, y0, x1, y1 = die.box
            sides.append(float(min(x1 - x0, y1 - y0)))
    return float(np.median(sides)) if sides else None


def make_calibration(image: np.ndarray, *, tray: Box | None = None, die_px: float | None = None, reading=None,
                     camera_controls: dict | None = None, source: str = "") -> Calibration:
    """A calibration from one frame (best: the empty tray; dice in it give the die size).

    ``tray`` overrides the automatic search; ``die_px`` overrides the size measured from ``reading``
    (a reader's :class:`~lcr_pi.vision.reader.Reading` of this frame). The region read is the tray with
    a margin of one die (dice leaning on the wall stick out), widened to hold every die the reader saw.
    """
    h, w = image.shape[:2]
    measured = measure_die_px(reading) if reading is not None else None
    if die_px is not None and not (isinstance(die_px, (int, float)) and math.isfinite(die_px)
                                   and MIN_DIE_PX <= die_px <= max(w, h) / 3):
        raise UserError(f"die size {die_px!r} is not a die's top face in a {w}x{h} frame: give its side in pixels, "
                        f"{MIN_DIE_PX:g} to {max(w, h) / 3:g}")
    die = float(die_px) if die_px else measured
    if tray is not None:
        x0, y0, x1, y1 = (int(v) for v in tray)
        if not (0 <= x0 < x1 <= w and 0 <= y0 < y1 <= h):
            raise UserError(f"tray {x0},{y0},{x1},{y1} is not a box inside the {w}x{h} frame (x0,y0,x1,y1)")
        least = 2 * die if die else 16
        if min(x1 - x0, y1 - y0) < least:
            raise UserError(f"tray {x0},{y0},{x1},{y1} is too small to roll dice in: give a box at least "
                            f"{least:g} pixels wide and high (two dice)")
        region = TrayRegion((x0, y0, x1, y1), "manual")
        box = region.box
    else:
        region = find_tray(image)
        dice_boxes = [d.box for d in getattr(reading, "dice", ())] if reading is not None else []
        box = grow_box(region.box, die if die else 0.03 * max(w, h), w, h, dice_boxes)
    return Calibration(
        resolution=(w, h), tray=box, tray_shape=region.shape, tray_outline=region.outline, die_px=die,
        camera_controls=dict(camera_controls or {}), source=source,
        created=time.strftime("%Y-%m-%dT%H:%M:%S"),
    )


# A picture too badly exposed to calibrate from (lcr-pi calibrate refuses it, as it refuses a blank one).
# Measured on rendered scenes made brighter (README "Fitting it to a table"): with more of the tray
# clipped, white dice and a light tray burn out together, dice merge or split, and the die size
# measured strays by a quarter and more; real photographs and well-lit renders clip almost nothing.
CLIPPED_LEVEL = 250  # a pixel with a colour channel at least this bright is burnt out
MAX_CLIPPED_SHARE = 0.25  # over this share of the tray burnt out: overexposed
DARK_LEVEL = 32  # the picture's brightest parts (its 99.9th grey percentile) under this: too dark
OVEREXPOSED = "the picture is overexposed"  # how both overexposure problems begin (see next_exposure)
TOO_DARK = "the picture is too dark"  # how the too-dark problem begins (see next_exposure)


def exposure_problem(image: np.ndarray, tray: Box | None = None) -> str | None:
    """What makes ``image`` too overexposed or too dark to calibrate from, in words; None when it is fit.

    Overexposed: more than :data:`MAX_CLIPPED_SHARE` of the tray (``tray``, else the one found) has a
    colour channel at :data:`CLIPPED_LEVEL` or above. Too dark: the brightest parts of the picture
    (99.9th percentile of grey) are under :data:`DARK_LEVEL`.

    >>> tray = np.full((240, 320, 3), 120, np.uint8)
    >>> exposure_problem(tray) is None
    True
    >>> exposure_problem(np.full((240, 320, 3), 255, np.uint8))[:27]
    'the picture is overexposed '
    >>> exposure_problem(tray // 5)[:26]
    'the picture is too dark (i'
    """
    if image.ndim == 2:
        image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    x0, y0, x1, y1 = tray or find_tray(image).box
    floor = image[max(0, y0):y1:2, max(0, x0):x1:2]
    if floor.size == 0:  # a tray given outside the picture (refused later, in its own words)
        floor = image[::2, ::2]
    clipped = float((floor >= CLIPPED_LEVEL).any(axis=2).mean())
    if clipped > MAX_CLIPPED_SHARE:
        return (f"{OVEREXPOSED} ({clipped:.0%} of the tray is burnt out to white, so dice merge "
                "and their size is measured wrong): dim the light or turn the lamp away, or wait for the "
                "camera's exposure to settle, then calibrate again")
    grey = cv2.cvtColor(np.ascontiguousarray(image[::2, ::2]), cv2.COLOR_BGR2GRAY)
    brightest = float(np.percentile(grey, 99.9))
    if brightest < DARK_LEVEL:
        return (f"{TOO_DARK} (its brightest parts are {brightest:.0f} of 255): turn the light on or "
                "up, or wait for the camera's exposure to settle, then calibrate again")
    return None


# Light dice on a dark tray: the tray does not burn out, the dice do (exposure_problem does not see it).
# Measured on black-tray renders made brighter (README "Fitting it to a table"): with the dice burnt
# out to white, touching dice merge and the die size measured strays. A lamp's hot spot burns out
# only the dice under it, a picture too bright all of them; clutter found as dice is seldom light.
DIE_MIDDLE = 0.6  # a die's top face shrunk to this size around its centre: its middle (the pips in it)
LIGHT_DIE_LEVEL = 200  # a die whose middle's brighter quarter is at least this grey is a light die
BURNT_DIE_SHARE = 0.5  # a die with over this share of its middle burnt out to white (grey at CLIPPED_LEVEL+)


def _die_middle(grey: np.ndarray, die) -> np.ndarray:
    """The grey levels of ``die``'s middle (its top face, else its box, shrunk to :data:`DIE_MIDDLE`)."""
    from lcr_pi.vision.teach import die_corners

    quad = np.asarray(die_corners(die), np.float64)
    quad = quad.mean(0) + DIE_MIDDLE * (quad - quad.mean(0))
    h, w = grey.shape
    (x0, y0), (x1, y1) = np.floor(quad.min(0)).astype(int), np.ceil(quad.max(0)).astype(int) + 1
    x0, y0, x1, y1 = max(0, x0), max(0, y0), min(w, x1), min(h, y1)
    if x1 <= x0 or y1 <= y0:
        return np.zeros(0, np.uint8)
    middle = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.fillConvexPoly(middle, np.round(quad - (x0, y0)).astype(np.int32), 1)
    return grey[y0:y1, x0:x1][middle > 0]


def burnt_dice_problem(image: np.ndarray, dice) -> str | None:
    """What makes ``image`` too overexposed to measure ``dice`` (a reader's dice in it), in words; None
    when it is fit.

    Overexposed: every light die (the brighter quarter of its middle at :data:`LIGHT_DIE_LEVEL` or
    more), and at least one, has over :data:`BURNT_DIE_SHARE` of its middle burnt out to white. On a
    dark tray :func:`exposure_problem` sees nothing (the tray itself stays dark) while light dice burn
    out first. Dark dice do not burn out, and are left out.

    >>> from lcr_pi.vision.reader import DieReading
    >>> tray = np.full((240, 320, 3), 30, np.uint8)          # a black tray
    >>> tray[100:140, 100:140] = 215                          # an ivory die
    >>> die = DieReading("4", 0.9, (100, 100, 140, 140), ((100, 100), (140, 100), (140, 140), (100, 140)),
    ...                  (120, 120), "centre", True)
    >>> bright = np.clip(tray * 3.0, 0, 255).astype(np.uint8)  # three times the light: the tray stays dark
    >>> burnt_dice_problem(tray, [die]) is None, exposure_problem(bright) is None
    (True, True)
    >>> burnt_dice_problem(bright, [die])[:62]
    'the picture is overexposed (the light die found is burnt out t'
    """
    grey = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    light = [m for m in (_die_middle(grey, d) for d in dice) if m.size and np.percentile(m, 75) >= LIGHT_DIE_LEVEL]
    if not light or any(float((m >= CLIPPED_LEVEL).mean()) <= BURNT_DIE_SHARE for m in light):
        return None
    found = "the light die found is" if len(light) == 1 else f"all {len(light)} light dice found are"
    return (f"{OVEREXPOSED} ({found} burnt out to white, so touching dice merge and their size is "
            "measured wrong; a dark tray stays dark while light dice burn out): lower the camera's exposure or "
            "dim the light on the tray (turn the lamp away), or wait for the camera's exposure to settle, then "
            "calibrate again")


# The Pi camera's exposure compensation (picamera2's ExposureValue control, in stops: the automatic
# exposure aims 2**EV times as bright; -8 to 8 in Raspberry Pi's libcamera, whose IPA declares it
# ControlInfo(-8.0f, 8.0f, 0.0f)). lcr-pi calibrate lowers it by itself when a picture is overexposed
# (on a black tray the automatic exposure, metering the mostly black picture, burns ivory dice out, and
# dimming the light changes nothing while it runs) and raises it when a picture is too dark (the
# exposure not settled, or begun at a low --ev; in a room so dim that the camera is at its longest
# exposure and highest gain already, raising it changes nothing and the light must change).
EV_STEP = 1.0  # stops changed at a time: from twice too bright (or half too dark) to the camera's own exposure
EV_STEPS = 3  # steps at most from where calibrate began (an eighth of its exposure, or eight times it)
EV_LOWEST, EV_HIGHEST = -8.0, 8.0


def exposure_way(problem: str | None) -> int:
    """-1 when a lower exposure is the answer to ``problem`` (it begins with :data:`OVEREXPOSED`), +1
    when a higher one is (it begins with :data:`TOO_DARK`), 0 when the exposure is not the answer.

    >>> exposure_way(OVEREXPOSED + " (...)"), exposure_way(TOO_DARK + " (...)"), exposure_way("the picture is blank")
    (-1, 1, 0)
    """
    if problem and problem.startswith(OVEREXPOSED):
        return -1
    if problem and problem.startswith(TOO_DARK):
        return 1
    return 0


def opposite_exposure(problem: str | None, ev: float, found=(), *, step: float = EV_STEP) -> float | None:
    """The exposure compensation, among ``found`` (``(ev, problem)`` of each picture taken so far), at
    which a picture had the opposite problem to ``problem`` (too dark against overexposed) and which a
    step from ``ev`` the way ``problem`` wants would go back to or beyond (lower than an exposure found
    too dark, higher than one found overexposed): the nearest to ``ev``; None when none. Taking that
    step would take the pictures back and forth between the two problems.

    >>> found = [(0.0, TOO_DARK + " (...)"), (1.0, OVEREXPOSED + " (...)")]
    >>> opposite_exposure(OVEREXPOSED + " (...)", 1.0, found), opposite_exposure(TOO_DARK + " (...)", 0.0, found)
    (0.0, 1.0)
    >>> opposite_exposure(TOO_DARK + " (...)", -2.0, found) is None         # +1 is a stop beyond -1
    True
    """
    way = exposure_way(problem)
    reached = [e for e, p in found if way and exposure_way(p) == -way and (ev + way * step - e) * way >= -1e-6]
    return min(reached, key=lambda e: abs(e - ev)) if reached else None


def next_exposure(problem: str | None, ev: float, start: float = 0.0, found=(), *, step: float = EV_STEP,
                  steps: int = EV_STEPS) -> float | None:
    """The exposure compensation (stops) to take a picture again at, after ``problem`` was found in one
    taken at ``ev``; None when another exposure is not the answer or may not be tried.

    An overexposed picture (:func:`exposure_problem`'s or :func:`burnt_dice_problem`'s problem, which
    begin with :data:`OVEREXPOSED`) is taken again ``step`` stops lower, a picture too dark
    (:data:`TOO_DARK`) ``step`` stops higher (:func:`exposure_way`); to no more than ``steps`` steps
    from ``start`` (where calibrate began: 0, or ``--ev``) and within :data:`EV_LOWEST` to
    :data:`EV_HIGHEST`. Never back and forth: not to, nor past, an exposure at which a picture had the
    opposite problem (``found``, see :func:`opposite_exposure`): then the light is what must change.

    >>> burnt = "the picture is overexposed (all 2 light dice found are burnt out to white ...)"
    >>> next_exposure(burnt, 0.0), next_exposure(burnt, -2.0), next_exposure(burnt, -3.0)
    (-1.0, -3.0, None)
    >>> dark = "the picture is too dark (its brightest parts are 20 of 255): turn the light on or up"
    >>> next_exposure(dark, 0.0), next_exposure(dark, 2.0), next_exposure(dark, 3.0), next_exposure(dark, 1.0, 1.0)
    (1.0, 3.0, None, 2.0)
    >>> next_exposure(burnt, -7.5, -7.5), next_exposure(burnt, -8.0, -7.5)   # not below -8
    (-8.0, None)
    >>> next_exposure(dark, 7.5, 7.5), next_exposure(dark, 8.0, 7.5)         # nor above +8
    (8.0, None)
    >>> next_exposure(dark, 1.0, 0.0, [(0.0, dark), (1.0, dark)])            # still too dark: on up
    2.0
    >>> next_exposure(burnt, 1.0, 0.0, [(0.0, dark), (1.0, burnt)]) is None  # too dark at 0: not back down
    True
    >>> next_exposure("the picture is blank (all one shade): is the camera covered or the light off?", 0.0) is None
    True
    """
    way = exposure_way(problem)
    if not way or opposite_exposure(problem, ev, found, step=step) is not None:
        return None
    furthest = min(EV_HIGHEST, max(EV_LOWEST, start + way * steps * step))
    if (furthest - ev) * way <= 1e-6:
        return None
    return round(ev + way * min(step, abs(furthest - ev)), 6)


def locked_controls(metadata: dict) -> dict:
    """picamera2 controls that freeze exposure and white balance at the values auto-exposure settled on.

    ``metadata`` is ``Picamera2.capture_metadata()``: ``ExposureTime`` (microseconds), ``AnalogueGain``
    and ``ColourGains`` (red, blue). Setting them turns the automatic loops off.

    The exposure compensation the automatic exposure ran at (``ExposureValue``, :func:`next_exposure`)
    is already in the exposure time and gain it chose (the metadata gives those the frame was taken
    at), so it is not among them: libcamera applies ``ExposureValue`` only while the automatic exposure
    runs, and with both of these fixed it does not.

    >>> locked_controls({"ExposureTime": 16000, "AnalogueGain": 2.5, "ColourGains": (1.8, 1.4), "Lux": 300})
    {'AeEnable': False, 'AwbEnable': False, 'ExposureTime': 16000, 'AnalogueGain': 2.5, 'ColourGains': [1.8, 1.4]}
    """
    missing = [k for k in LOCKED_CONTROL_KEYS if k not in metadata]
    if missing:
        raise UserError(f"the camera did not report {', '.join(missing)}: cannot lock exposure and white balance")
    return {
        "AeEnable": False, "AwbEnable": False,
        "ExposureTime": int(metadata["ExposureTime"]),
        "AnalogueGain": round(float(metadata["AnalogueGain"]), 3),
        "ColourGains": [round(float(g), 4) for g in metadata["ColourGains"]],
    }


# --------------------------------------------------------------------------------------------
# Files


def guides_reading(empty_reading) -> bool:
    """Whether a picture of the empty tray, read as ``empty_reading``, may guide reading (the
    :class:`CalibratedReader`'s ``reference``): unless the reader is sure of a die in it. Doubtful
    finds there are the tray's own marks or clutter beside it (at rendered table 6007, grey dots on
    a black object read as W at 0.36-0.49), which the reference is what keeps out: a find where
    nothing changed since is not read. A die really left on the tray and doubted by the reader
    stays where it was, outside what changed, and the referee's count of the dice asks.

    >>> from lcr_pi.vision.reader import DieReading, Reading
    >>> mark = DieReading("W", 0.4, (0, 0, 9, 9), (), (4, 4), "bottom right", False)
    >>> die = DieReading("4", 0.99, (50, 50, 90, 90), (), (70, 70), "centre", True)
    >>> guides_reading(Reading((), "no_dice")), guides_reading(Reading((mark,), "unsure"))
    (True, True)
    >>> guides_reading(Reading((mark, die), "unsure"))
    False
    """
    return not any(d.sure for d in empty_reading.dice)


def save_calibration(calibration: Calibration, path: str | Path, reference: np.ndarray | None = None,
                     reference_empty: bool = False) -> Path:
    """Write the JSON (and the reference image beside it, as ``<stem>-empty-<sha256's first 12>.png``).
    Returns the JSON path.

    The two files change as a pair: the picture is written under a name of its own content first, then
    the JSON (atomically), which names it and its sha256, and only then are the pictures of the
    calibration before removed. A save cut short anywhere leaves the JSON before naming its own picture,
    untouched (found by a review: the picture was written over first, and a JSON write that failed left
    the old JSON with the new picture).

    ``reference_empty``: the reader found no dice in ``reference``, so the game may use it to read
    only the part of the tray that changed (see :func:`changed_region`)."""
    from lcr_pi.persist import write_atomic

    # Readable by all (0644): README has the calibration made by the person setting up the Pi and read by
    # the service's own user. Found by an audit: written 0600, the service could not read it
    # ("Permission denied"), and every night ran uncalibrated.
    readable = 0o644
    path = Path(path)
    written = None
    try:
        if path.is_dir():
            raise UserError(f"{path} is a folder: give the calibration file's name (e.g. {path / 'table.json'})")
        path.parent.mkdir(parents=True, exist_ok=True)
        if reference is not None:
            ok, png = cv2.imencode(".png", reference)
            if not ok:
                raise UserError(f"{path.parent / (path.stem + '-empty.png')}: could not encode the reference image")
            data = png.tobytes()
            digest = hashlib.sha256(data).hexdigest()
            name = f"{path.stem}-empty-{digest[:12]}.png"
            if not (path.parent / name).exists():
                written = path.parent / name
            write_atomic(path.parent / name, data, mode=readable)
            calibration = replace(calibration, reference_image=name, reference_empty=bool(reference_empty),
                                  reference_sha256=digest)
        else:
            calibration = replace(calibration, reference_image=None, reference_empty=False, reference_sha256=None)
        write_atomic(path, (json.dumps(calibration.to_json(), indent=2) + "\n").encode("utf-8"), mode=readable)
    except (OSError, UserError) as exc:
        if written is not None:  # the new picture, that no JSON names: the calibration before stays as it was
            try:
                written.unlink()
            except OSError:
                pass
        if isinstance(exc, UserError):
            raise
        raise UserError(f"cannot save the calibration to {path} ({exc.strerror or exc})") from None
    # The pictures of the calibrations before (the old format's <stem>-empty.png too): nothing names them now.
    for old in path.parent.glob(f"{path.stem}-empty*.png"):
        if old.name != calibration.reference_image:
            try:
                old.unlink()
            except OSError as exc:
                log.warning("could not remove the old reference image %s (%s)", old, exc.strerror or exc)
    return path


MIN_DIE_PX = 4.0  # a die's top face smaller than this many pixels cannot be read


def _number(value, where: str, *, positive: bool = True) -> float:
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10 ** 9:
        raise UserError(f"{where} must be a number of pixels, not one of {len(str(abs(value)))} digits")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise UserError(f"{where} must be a number, not {value!r}")
    if positive and value <= 0:
        raise UserError(f"{where} must be positive, not {value!r}")
    return float(value)


def _check_controls(controls: dict, name: str) -> None:
    """The camera controls are those :func:`locked_controls` writes, of their types. Found by an audit:
    picamera2 refuses a control it does not know ("Control X is not advertised by libcamera") as the
    camera starts, so a stray key kept the camera shut all night, said as "is it connected?"."""
    for key, value in controls.items():
        where = f"{name}: 'camera_controls.{key}'"
        if key in ("AeEnable", "AwbEnable"):
            if not isinstance(value, bool):
                raise UserError(f"{where} must be true or false, not {value!r}")
        elif key == "ExposureTime":
            _number(value, where)
            if not isinstance(value, int):
                raise UserError(f"{where} must be a whole number of microseconds, not {value!r}")
        elif key == "AnalogueGain":
            _number(value, where)
        elif key == "ColourGains":
            if not (isinstance(value, list) and len(value) == 2):
                raise UserError(f"{where} must be [red, blue], not {value!r}")
            for gain in value:
                _number(gain, where)
        else:
            raise UserError(f"{name}: 'camera_controls' has {key!r}, which lcr-pi calibrate does not lock "
                            f"(it locks AeEnable, AwbEnable, {', '.join(LOCKED_CONTROL_KEYS)}): run lcr-pi calibrate again")


def parse_calibration(data, name: str) -> Calibration:
    """Validate a decoded calibration JSON object; errors name the file and the key."""
    if not isinstance(data, dict):
        raise UserError(f"{name}: expected a JSON object, got {type(data).__name__}")
    version = data.get("version")
    if version != FORMAT_VERSION:
        raise UserError(f"{name}: unknown format version {version!r} (this program reads version {FORMAT_VERSION})")
    res = data.get("resolution")
    if not (isinstance(res, list) and len(res) == 2):
        raise UserError(f"{name}: 'resolution' must be [width, height]")
    width, height = (int(_number(v, f"{name}: 'resolution'")) for v in res)
    tray = data.get("tray")
    if not isinstance(tray, dict) or not isinstance(tray.get("box"), list) or len(tray["box"]) != 4:
        raise UserError(f"{name}: 'tray' must be an object with 'box': [x0, y0, x1, y1]")
    x0, y0, x1, y1 = (int(_number(v, f"{name}: 'tray.box'", positive=False)) for v in tray["box"])
    if not (0 <= x0 < x1 <= width and 0 <= y0 < y1 <= height):
        raise UserError(f"{name}: 'tray.box' {tray['box']} is not inside the {width}x{height} frame")
    outline = tray.get("outline") or []
    if not isinstance(outline, list) or not all(isinstance(p, list) and len(p) == 2 for p in outline):
        raise UserError(f"{name}: 'tray.outline' must be a list of [x, y] points")
    outline = [[int(_number(v, f"{name}: 'tray.outline'", positive=False)) for v in p] for p in outline]
    die_px = data.get("die_px")
    if die_px is not None:
        die_px = _number(die_px, f"{name}: 'die_px'")
        if not MIN_DIE_PX <= die_px <= max(width, height) / 3:
            raise UserError(f"{name}: 'die_px' {die_px:g} is not a die's size in a {width}x{height} frame "
                            f"({MIN_DIE_PX} to {max(width, height) / 3:g} pixels)")
    # As lcr-pi calibrate refuses a --tray under two dice: such a box holds no roll, and a night read with
    # it heard "No dice seen on the tray" for every roll, the file never named (found by an audit).
    least = 2 * die_px if die_px else 16
    if min(x1 - x0, y1 - y0) < least:
        raise UserError(f"{name}: 'tray.box' {tray['box']} is too small to roll dice in (less than {least:g} pixels "
                        "wide or high, two dice): run lcr-pi calibrate again")
    controls = data.get("camera_controls") or {}
    if not isinstance(controls, dict):
        raise UserError(f"{name}: 'camera_controls' must be an object of picamera2 controls")
    _check_controls(controls, name)
    ref = data.get("reference_image")
    if ref is not None and not isinstance(ref, str):
        raise UserError(f"{name}: 'reference_image' must be a file name")
    empty = data.get("reference_empty", False)
    if not isinstance(empty, bool):
        raise UserError(f"{name}: 'reference_empty' must be true or false")
    digest = data.get("reference_sha256")
    if digest is not None and not (isinstance(digest, str) and len(digest) == 64
                                   and all(c in "0123456789abcdef" for c in digest)):
        raise UserError(f"{name}: 'reference_sha256' must be 64 lowercase hexadecimal digits")
    return Calibration(
        resolution=(width, height), tray=(x0, y0, x1, y1), tray_shape=str(tray.get("shape", "manual")),
        tray_outline=tuple((int(p[0]), int(p[1])) for p in outline), die_px=die_px, camera_controls=controls,
        reference_image=ref, reference_empty=empty and ref is not None,
        reference_sha256=digest if ref is not None else None, source=str(data.get("source", "")),
        created=str(data.get("created", "")),
    )


def load_calibration(path: str | Path, resolution: tuple[int, int] | None = None) -> Calibration:
    """Read and check a calibration file; ``resolution`` (width, height) is the camera's frame size.

    Raises :class:`UserError` naming the file and the problem (missing, not JSON, a bad key, made for
    frames of another shape).
    """
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no calibration file (make one with: lcr-pi calibrate)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UserError(f"{path}: cannot read the calibration ({exc})") from None
    except UnicodeDecodeError as exc:  # random bytes, a picture saved under its name: damaged, not unreadable
        raise UserError(f"{path}: corrupt calibration, not JSON text (byte {exc.start} is not UTF-8)") from None
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}: corrupt calibration, not JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise UserError(f"{path}: corrupt calibration (nested too deep to be one)") from None
    try:
        cal = parse_calibration(data, str(path))
    except (OverflowError, ValueError, TypeError) as exc:  # a number too large for any pixel, and the like
        raise UserError(f"{path}: corrupt calibration ({exc})") from None
    _check_reference_pair(cal, path)
    if resolution is not None:
        w, h = (int(v) for v in resolution)
        try:
            cal = cal.scaled_to(w, h)
        except UserError as exc:
            raise UserError(f"{path}: {exc}") from None
    return cal


def _check_reference_pair(cal: Calibration, path: Path) -> None:
    """A calibration that names its reference's sha256 is one with its picture: a picture missing or
    another than the one saved with it (a copy of half the pair, a card's damage) makes the pair
    unusable. (Files from before the sha256 was written are read as they were.)"""
    if cal.reference_image is None or cal.reference_sha256 is None:
        return
    picture = path.parent / cal.reference_image
    try:
        data = picture.read_bytes()
    except FileNotFoundError:
        raise UserError(f"{path}: its reference image {picture} is missing (copy both files, or run "
                        "lcr-pi calibrate again)") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read its reference image {picture} ({exc.strerror or exc})") from None
    if hashlib.sha256(data).hexdigest() != cal.reference_sha256:
        raise UserError(f"{path}: its reference image {picture} is not the one saved with it (its sha256 does "
                        "not match): run lcr-pi calibrate again")


def load_reference(calibration: Calibration, json_path: str | Path) -> np.ndarray | None:
    """The empty-tray reference image saved with a calibration, or None when there is none."""
    if not calibration.reference_image:
        return None
    path = Path(json_path).parent / calibration.reference_image
    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if image is None:
        raise UserError(f"{path}: the calibration's reference image is missing or unreadable")
    return image


def load_reference_or_none(calibration: Calibration | None, json_path: str | Path):
    """For the game: ``(empty-tray image, None)`` when the calibration has a reference the reader
    found empty, ``(None, None)`` when it has none, ``(None, warning)`` when it cannot be read."""
    if calibration is None or not calibration.reference_empty:
        return None, None
    try:
        return load_reference(calibration, json_path), None
    except UserError as exc:
        return None, f"{exc}; reading the whole tray every time"


def load_calibration_or_default(path: str | Path, resolution: tuple[int, int] | None = None):
    """For the game: ``(calibration, None)``, or ``(None, warning)`` when the file is missing or bad.

    A missing file is normal (no calibration made yet) and gives ``(None, None)``.
    """
    if not Path(path).exists():
        return None, None
    try:
        return load_calibration(path, resolution), None
    except UserError as exc:
        return None, f"{exc}; reading the whole frame without calibration"


# --------------------------------------------------------------------------------------------
# The reader, limited to the tray


# How the empty-tray reference narrows the search (see changed_region).
CHANGE_WORK_DIE = 6.0  # dice are compared at a scale where a die is at least this many pixels
CHANGE_MIN_LEVEL = 16.0  # a pixel changed when it differs by this many grey levels...
CHANGE_NOISE_FACTOR = 4.0  # ...and by this many times the tray's typical difference (noise, light)
CHANGE_MARGIN = 1.5  # the region read reaches this many dice beyond the changes (the detector needs context)
CHANGE_MAX_SHIFT = 24.0  # an overall change of more grey levels than this (or a hand over most of the tray): read it all
CHANGE_MAX_SHARE = 0.5  # changes over more of the tray than this (a hand, the light): read it all


def _change_scale(shape, die_px: float) -> tuple[float, tuple[int, int]]:
    """The scale at which trays are compared (a die at least CHANGE_WORK_DIE px) and that size."""
    h, w = shape[:2]
    f = min(1.0, max(CHANGE_WORK_DIE / die_px, 160.0 / max(h, w)))
    return f, (max(1, round(w * f)), max(1, round(h * f)))


def small_tray(tray: np.ndarray, die_px: float) -> np.ndarray:
    """The tray crop at the comparison scale (area-averaged; halvings first, as the detector does, a
    side of odd length trimmed by a pixel rather than shrunk the slow way)."""
    from lcr_pi.vision.detect import shrink

    _, (sw, sh) = _change_scale(tray.shape, die_px)
    return shrink(tray, sw, sh, trim_odd=True)


def _change_mask(tray_now: np.ndarray, tray_empty: np.ndarray, die_px: float):
    """``(mask, f)``: the pixels that changed since the empty tray, at scale ``f``; None when the
    comparison is no guide (see :func:`changed_region`). ``tray_empty`` may be given already at the
    comparison scale (:func:`small_tray`), as the calibrated reader keeps it."""
    if not die_px or die_px <= 0:
        return None
    f, size = _change_scale(tray_now.shape, die_px)
    if tray_empty.shape[:2] == (size[1], size[0]):
        small_empty = tray_empty.astype(np.int16)
    elif tray_empty.shape[:2] == tray_now.shape[:2]:
        small_empty = small_tray(tray_empty, die_px).astype(np.int16)
    else:
        return None
    small_now = small_tray(tray_now, die_px).astype(np.int16)
    if small_now.shape != small_empty.shape:
        return None
    diff = small_now - small_empty
    shift = np.median(diff.reshape(-1, diff.shape[-1] if diff.ndim == 3 else 1), axis=0)
    if float(np.abs(shift).max()) > CHANGE_MAX_SHIFT:
        return None  # the light changed a lot, or something covers most of the tray: no guide
    change = np.abs(diff - shift.astype(np.int16))
    if change.ndim == 3:
        change = change.max(axis=2)
    typical = float(np.median(change))
    # No clean-up of specks: a die's body may differ little from the tray (green on green felt),
    # so only its pips and edges stand out, a few small pixels; a speck of noise kept only widens
    # the region read (time), where a die dropped would be a die not read.
    mask = (change > max(CHANGE_MIN_LEVEL, CHANGE_NOISE_FACTOR * typical)).astype(np.uint8)
    count = int(mask.sum())
    if count == 0 or count > CHANGE_MAX_SHARE * mask.size:
        return None
    return mask, f


def changed_region(tray_now: np.ndarray, tray_empty: np.ndarray, die_px: float) -> Box | None:
    """The box (tray-crop pixels) around everything that differs from the empty tray, grown by
    :data:`CHANGE_MARGIN` dice on every side; ``None`` when the whole tray should be read instead.

    Both images are the same tray crop (the empty one from calibration). They are compared small
    (a die a few pixels across), after taking out an overall shift of brightness and colour (the
    room's light changed since calibration). A pixel changed when it differs by more than
    :data:`CHANGE_MIN_LEVEL` grey levels and :data:`CHANGE_NOISE_FACTOR` times the tray's median
    difference. ``None`` when nothing changed (a
    die the colour of the tray must not be missed: read it all) or changes cover more than
    :data:`CHANGE_MAX_SHARE` of the tray, or the overall shift is over :data:`CHANGE_MAX_SHIFT` (a hand
    over most of the tray, a lamp switched on: the shift measured then may be the hand's).

    >>> empty = np.full((200, 300, 3), 90, np.uint8)
    >>> now = empty.copy(); now[100:120, 40:60] = 230           # one die, 20 px
    >>> changed_region(now, empty, 20.0)          # the die (40-60, 100-120) and 1.5 dice around it
    (9, 69, 90, 152)
    >>> changed_region(empty, empty, 20.0) is None              # nothing changed: read it all
    True
    >>> changed_region(np.full((200, 300, 3), 200, np.uint8), empty, 20.0) is None  # light changed
    True
    """
    return _region_of(_change_mask(tray_now, tray_empty, die_px), die_px, tray_now.shape)


def _region_of(found, die_px: float, shape) -> Box | None:
    if found is None:
        return None
    h, w = shape[:2]
    mask, f = found
    x, y, bw, bh = cv2.boundingRect(mask)
    if bw * bh > CHANGE_MAX_SHARE * mask.size:
        return None
    return grow_box((x / f, y / f, (x + bw) / f, (y + bh) / f), CHANGE_MARGIN * die_px, w, h)


def unread_changes(tray_now: np.ndarray, tray_empty: np.ndarray, die_px: float, read_boxes) -> list[Box]:
    """Die-sized places (tray-crop boxes) where the tray changed since it was empty but no read die
    (``read_boxes``, tray-crop pixels, sure or not) lies: a die the reader missed, or something
    else on the tray. Changes less than half a die across are ignored (a pip's worth of noise), and
    a change touching a read die is that die (its shadow, its sides).

    >>> empty = np.full((200, 300, 3), 90, np.uint8)
    >>> now = empty.copy(); now[100:120, 40:60] = 230; now[30:50, 200:220] = 20
    >>> unread_changes(now, empty, 20.0, [(40, 100, 60, 120)])      # the dark die was not read
    [(199, 30, 221, 51)]
    >>> unread_changes(now, empty, 20.0, [(38, 98, 62, 122), (199, 31, 221, 49)])
    []
    """
    return _unread_of(_change_mask(tray_now, tray_empty, die_px), die_px, read_boxes)


def _unread_of(found, die_px: float, read_boxes) -> list[Box]:
    if found is None:
        return []
    mask, f = found
    reach = max(1, int(round(die_px * f / 4)))  # pips and edges of one die join into one place
    joined = cv2.dilate(mask, np.ones((2 * reach + 1, 2 * reach + 1), np.uint8))
    n, _, stats, _ = cv2.connectedComponentsWithStats(joined)
    near = 0.5 * die_px
    grown = [(b[0] - near, b[1] - near, b[2] + near, b[3] + near) for b in read_boxes]
    missed = []
    for i in range(1, n):
        x, y, bw, bh = stats[i, :4]
        # Back to tray pixels, without the joining reach.
        box = ((x + reach) / f, (y + reach) / f, (x + bw - reach) / f, (y + bh - reach) / f)
        if max(box[2] - box[0], box[3] - box[1]) < 0.5 * die_px:
            continue
        if any(g[0] < box[2] and box[0] < g[2] and g[1] < box[3] and box[1] < g[3] for g in grown):
            continue
        missed.append(tuple(int(round(v)) for v in box))
    return missed


class CalibratedReader:
    """Wraps a dice reader so it reads only the calibrated tray region, and describes dice on the tray.

    The reader is given the tray as the ``region`` to read (and, when known, the die size): its
    detector looks only there, at the scale and on the grid a whole-frame look would use, so a die
    on the tray scores as it would in the whole frame (within what it no longer sees around the
    tray), while the clutter outside the tray costs nothing and cannot be taken for a die. With the
    die size known, the scale is chosen at once (dice too small or too large for the usual scale
    are looked at at theirs, without a first look at the wrong one). With an empty-tray
    ``reference`` (a whole frame at the calibration's resolution, which the reader found empty)
    only the part of the tray that changed since (:func:`changed_region`) is read: three dice on a
    large tray cost a fraction of the tray. Die positions in messages ("the die at the top left")
    are positions on the tray. Frames of another size with the same shape use the calibration
    scaled; frames of another shape are read whole. A frame left unsure by the look at the die
    size is looked at once more as an uncalibrated reader would (its own scale, finds of any size),
    sharing the first look's model outputs, and that reading is taken when it is clear.
    """

    def __init__(self, reader, calibration: Calibration | None, reference: np.ndarray | None = None):
        self.reader = reader
        self.calibration = calibration
        self.reference = reference
        self._empty_trays: dict = {}  # frame size -> the reference's tray crop at that size

    def _empty_tray(self, cal: Calibration, w: int, h: int) -> np.ndarray | None:
        if self.reference is None:
            return None
        if (w, h) not in self._empty_trays:
            ref = self.reference
            if ref.ndim != 3 or abs(ref.shape[1] / ref.shape[0] - w / h) > 0.01:
                self._empty_trays[(w, h)] = None  # not this camera's shape: of no use
            else:
                if ref.shape[:2] != (h, w):
                    ref = cv2.resize(ref, (w, h), interpolation=cv2.INTER_AREA)
                x0, y0, x1, y1 = cal.tray
                # Kept at the comparison scale: shrinking a full-resolution tray costs milliseconds.
                self._empty_trays[(w, h)] = small_tray(np.ascontiguousarray(ref[y0:y1, x0:x1]), cal.die_px)
        return self._empty_trays[(w, h)]

    def read(self, frame, *, dice_kind: str = "auto", calibration=None):
        cal = calibration or self.calibration
        if cal is None:
            return self.reader.read(frame, dice_kind=dice_kind)
        # Refused in the reader's words before the tray is cut (found by an audit: a frame of no
        # height divided by zero, a tiny one cut an empty tray).
        frame = check_frame(frame)
        h, w = frame.shape[:2]
        try:
            cal = cal.scaled_to(w, h)
        except UserError:
            return self.reader.read(frame, dice_kind=dice_kind)
        x0, y0, x1, y1 = cal.tray
        if x1 - x0 < 2 or y1 - y0 < 2:  # a tray too small to cut at this frame's size: read it all
            return self.reader.read(frame, dice_kind=dice_kind)
        if not cal.die_px:
            if tuple(cal.tray) == (0, 0, w, h):
                return self.reader.read(frame, dice_kind=dice_kind)
            return on_tray(self.reader.read(frame, dice_kind=dice_kind, region=cal.tray), cal.tray)
        tray = frame[y0:y1, x0:x1]
        empty = self._empty_tray(cal, w, h) if frame.ndim == 3 and frame.dtype == np.uint8 else None
        change = _change_mask(tray, empty, cal.die_px) if empty is not None else None
        px0, py0, px1, py1 = _region_of(change, cal.die_px, tray.shape) or (0, 0, x1 - x0, y1 - y0)
        region = (x0 + px0, y0 + py0, x0 + px1, y0 + py1)
        memo = FrameMemo()
        reading = self.reader.read(frame, dice_kind=dice_kind, die_px=cal.die_px, region=region, memo=memo)
        if reading.verdict == "no_dice" and getattr(memo, "outsized", None):
            # Every find was another size than calibrated: dice, perhaps, with the calibration off
            # (the camera moved). Looked at again at their own scale; dice seen so are what is read,
            # and said to be of another size (found by a review: every roll read "no dice", and the
            # table said nothing).
            again = self.reader.read(frame, dice_kind=dice_kind, region=region, memo=memo)
            if again.dice:
                reading = asked(again, OTHER_SIZE)
        elif reading.verdict == "unsure":
            # A second look as the uncalibrated reader looks: every find, whatever its size, at a
            # scale chosen from the dice found. Across a wide view the dice's size varies, and
            # looked at once at the calibrated size a die is sometimes found as two finds, or a die
            # seen larger is left out. Taken only when it is clear (never over "cocked": a leaning
            # die is re-rolled). The memo runs the models only on what the first look did not see,
            # and a taught set's search only from where the first look did not start one (a taught
            # reader's second look cost up to twice the first at dev tables 709 and 710).
            # benchmarks/bench_calibration.py, README "Fitting it to a table".
            again = self.reader.read(frame, dice_kind=dice_kind, region=region, memo=memo)
            if again.verdict == "clear":
                reading = again
        reading = on_tray(reading, cal.tray)
        if change is not None and reading.verdict in ("clear", "unsure"):
            boxes = [(d.box[0] - x0, d.box[1] - y0, d.box[2] - x0, d.box[3] - y0) for d in reading.dice]
            missed = _unread_of(change, cal.die_px, boxes)
            if missed:
                # The tray changed where no die was read: a die the reader missed (or something
                # else on the tray). Announcing the dice read would be announcing a wrong roll, and
                # an unsure reading may not be settled by its dice's moves either (could_be).
                where = join_places([describe_position((b[0] + b[2]) / 2, (b[1] + b[3]) / 2, x1 - x0, y1 - y0)
                                     for b in missed])
                unread = f"Something on the tray at the {where} was not read as a die; please check or re-roll."
                if reading.verdict == "clear":
                    reading = asked(reading, unread)
                else:
                    reading = replace(unsettled(reading), message=f"{reading.message} {unread}")
        return reading


def on_tray(reading, tray: Box):
    """A reading of the whole frame with die positions ("the die at the top left") described on
    the tray (``tray``, frame pixels), in the dice and in the message's position words.

    >>> from lcr_pi.vision.reader import DieReading, Reading
    >>> die = DieReading("4", 0.5, (210, 120, 250, 160), (), (230, 140), "top", False)
    >>> on_tray(Reading((die,), "unsure", (0,), "Not sure about the die at the top; please check."),
    ...         (200, 100, 500, 400)).message
    'Not sure about the die at the top left; please check.'
    """
    tx0, ty0, tx1, ty1 = tray
    dice, renamed = [], {}
    for i, d in enumerate(reading.dice):
        where = describe_position(d.centre[0] - tx0, d.centre[1] - ty0, tx1 - tx0, ty1 - ty0)
        renamed[i] = (d.where, where)
        dice.append(replace(d, where=where))
    named = [i for i, d in enumerate(reading.dice) if d.cocked] if reading.verdict == "cocked" else list(reading.unsure_dice)
    message, cursor = reading.message, 0
    for i in named:  # the message names these dice's places, in this order
        old, new = renamed.get(i, ("", ""))
        at = message.find(old, cursor) if old else -1
        if at >= 0:
            message = message[:at] + new + message[at + len(old):]
            cursor = at + len(new)
    return replace(reading, dice=tuple(dice), message=message)
