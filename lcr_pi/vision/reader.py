"""Read the dice on the tray from one camera frame.

>>> reader = DiceReader()                                   # doctest: +SKIP
>>> reading = reader.read(frame, dice_kind="lcr")           # doctest: +SKIP
>>> reading.verdict, reading.faces, reading.message         # doctest: +SKIP
('clear', ('L', 'dot', 'C'), 'Read 3 dice: L, dot, C.')

Pipeline (all on plain arrays; the models are ONNX files run by ``cv2.dnn``, no torch):

1. check the frame (type, shape, blank);
2. :mod:`lcr_pi.vision.detect` finds top-face centres and sizes on a 448 px copy of the frame;
3. :mod:`lcr_pi.vision.classify` names each face from a crop of the full-resolution frame;
4. the dice kind (pip or LCR) is decided from all dice together unless the caller says;
5. each die gets a confidence; anything below the calibrated threshold, a die-like blob the
   detector only half believes in, or a die with no flat face makes the frame not ``clear``.

Verdicts: ``clear`` (every die read with confidence), ``unsure`` (``unsure_dice`` lists the dice
in doubt and ``message`` names them by position), ``cocked`` (a die leans on another or on the
wall: the table re-rolls it), ``obstructed`` (the frame is blurred by motion, so nothing in it can
be trusted), ``no_dice`` (nothing die-like, or a blank frame).
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass, field, replace
from pathlib import Path

import cv2
import numpy as np

from lcr_pi.errors import UserError
from lcr_pi.vision.classify import CLASSES, classify_crops, crop_face, load_classifier, opencv_too_old, sharpness
from lcr_pi.vision.detect import (DETECT_LONG_SIDE, decode_detections, detector_scale, long_side_for_die,
                                  prepare_detector_input, prepare_detector_window)
from lcr_pi.vision.pairs import MODEL_FILE as PAIR_MODEL_FILE
from lcr_pi.vision.pairs import PAIR_CLASSES, TOUCHING, leaning_by_pairs, pair_beliefs, sides_apart, touching_pairs
from lcr_pi.vision.pips import MODEL_FILE as PIP_MODEL_FILE
from lcr_pi.vision.pips import hesitant, look_again, pip_crop, seconded


def _shipped_models(beside: Path | None = None, installed_files=None) -> Path:
    """The shipped model folder: models/ beside the package (a source tree, an editable install), else
    the copy an installed wheel put in <prefix>/share/lcr-pi/models (pyproject's data-files), found
    through the install's file list (``installed_files``: importlib.metadata's, for lcr-pi). Found by an
    audit: after `pip install .` the demo and the reader looked in site-packages/models, which no install
    makes, and stopped ("missing model file")."""
    beside = beside if beside is not None else Path(__file__).resolve().parents[2] / "models"
    if (beside / "reader.json").is_file():
        return beside
    if installed_files is None:
        from importlib.metadata import PackageNotFoundError, files  # noqa: PLC0415 - an installed wheel only

        try:
            installed_files = files("lcr-pi") or ()
        except PackageNotFoundError:
            installed_files = ()
    for record in installed_files:
        if record.name == "reader.json" and record.parent.name == "models":
            return Path(record.locate()).resolve().parent
    return beside  # named by the error that follows


DEFAULT_MODELS = _shipped_models()

# What a caller may tell the reader about the dice on the tray: nothing ("auto"), their kind, or
# "pip-or-wild" (a Wild game's dice: ordinary or Wild LCR dice, whichever the frame shows).
DICE_KINDS = ("auto", "pip", "lcr", "wild", "pip-or-wild")
FRAME_CHOOSES = ("auto", "pip-or-wild")  # the kinds whose dice the frame decides
VERDICTS = ("clear", "unsure", "obstructed", "cocked", "no_dice")

# Sides (of the calibrated die size) a detection may have and still be a die. On rendered tables
# (1280x960, 40 tables, 245 finds on dice) the finds on dice were 0.62-1.29 of the calibrated size
# (perspective, the die's tilt on the detector's box); half the finds on no die were under 0.35.
DIE_SIZE_RANGE = (0.5, 2.0)
#: A clear reading at a calibrated die size whose sure finds' median side lies outside this share of it
#: is unsure: the calibration no longer fits (dice of another size may have been left out).
SIZE_AGREES = (0.7, 1.4)
# Without a calibrated size: a find more than OUTSIZED or under UNDERSIZED times the median size of
# the frame's sure finds, on which the classifier sees no face (its best face under FACELESS), is not
# a die. On the held-out calibration frames (78 photos, 600 renders) dice measured 0.56-1.69 times
# that median (99.9% under 1.57); 11 of 412 finds on no die were over 1.8 times it (on the
# pi-black-tray renders: poker chips beside the tray, taken for leaning dice), and in the oblique
# webcam photos the ends of cables and a phone's edge were found at half the dice's size. The face
# condition keeps a real die seen much larger than the others (a steep view) that the reader merely
# doubts: dropping it lost a die silently in a rendered teach scene.
OUTSIZED = 1.8
UNDERSIZED = 0.55
FACELESS = 0.1
# A find more likely no die than a die (the classifier's and the pair network's belief) that touches
# only one find, a sure one, nearer than SIDE_REACH times their mean side is that die's side face:
# flat dice's centres are at least a side apart, and the detector's centres and sides are rough by
# about a tenth. Chosen on the held-out train frames (2026-12-03, fifth-round models): at 0.9-1.0 two,
# at 1.1-1.3 three of the 78 real photos that such a side face (in the oblique webcam photos) left
# unsure read clear, and right; the held-out renders' unsure frames 43.2 -> 43.0 %, nothing else
# changed. UNDERSIZED 0.55 made two more photos clear (0.5: one), and nothing else changed either.
SIDE_REACH = 1.1

_PIP = [CLASSES.index(c) for c in ("1", "2", "3", "4", "5", "6")]
_LCR = [CLASSES.index(c) for c in ("1", "L", "C", "R")]
_WILD = _LCR + [CLASSES.index("W")]
_COCKED = CLASSES.index("cocked")
_BACKGROUND = CLASSES.index("background")
# How often each face comes up on a die of each kind, from its faces: an LCR die has three dots
# and one each of L, C and R; a Wild die two dots, L, C, R and W; a pip die each number once.
# (The classifier's class "1" is the single pip of a pip die and the dot of an LCR die.)
FACE_SHARES = {
    "pip": {c: 1 / 6 for c in ("1", "2", "3", "4", "5", "6")},
    "lcr": {"1": 3 / 6, "L": 1 / 6, "C": 1 / 6, "R": 1 / 6},
    "wild": {"1": 2 / 6, "L": 1 / 6, "C": 1 / 6, "R": 1 / 6, "W": 1 / 6},
}


@dataclass(frozen=True)
class ReaderSettings:
    """Thresholds; defaults are overridden by ``models/reader.json`` written by calibration."""

    sure_confidence: float = 0.9  # a face below this is "unsure"
    sure_detection: float = 0.4  # detector peaks below this are doubtful
    doubt_detection: float = 0.2  # ...and below this are ignored
    drop_background: float = 0.5  # a doubtful peak the classifier calls background is ignored
    sure_background: float = 0.9  # a sure peak the classifier is sure is background is ignored
    cocked_probability: float = 0.5  # a die whose "cocked" share is above this is cocked
    blank_std: float = 4.0  # grey-level spread below which a frame is blank
    blurred_sharpness: float = 0.09  # median die sharpness below this: motion blur, "obstructed"
    # Two top faces overlapping by more than this share of the smaller are both unsure (one face
    # split in two, e.g. the pips of a 2). Off (1.0) by default: on the held-out train photos any
    # value tried (0.1-0.3) only cost die accuracy (touching dice's rough outlines overlap).
    # Calibration chooses it: models/reader.json has 0.3 since the sixth round (2026-12-03).
    max_face_overlap: float = 1.0
    tta_rotations: int = 4  # a detection that could be sure, which the classifier is not already sure of, is looked at in 4 turns...
    tta_below: float = 0.999  # ...when its top class probability is below this
    # Dice whose median top face is smaller than rescale_below or larger than rescale_above detector
    # pixels are looked for again at the scale that suits the detector (small dice in a wide
    # full-resolution view, a close-up). 0 turns either off. Looking again at a smaller scale is
    # off: in the demo's close-up 640x480 frames it lost dice the first look had found.
    rescale_below: float = 16.0
    rescale_above: float = 0.0
    # A second way to be sure of a die: a peak the detector scores below sure_detection but at
    # least rescue_detection, whose face the classifier (which sees the die at full resolution)
    # names with at least rescue_confidence. Chosen by calibration like the others; 1.0 is off.
    rescue_detection: float = 1.0
    rescue_confidence: float = 1.0
    # What the table is like, against what the classifier was trained on (see :func:`at_the_table`):
    # the share of dice that come to rest leaning on another die or the wall, and, from training,
    # how often a leaning die was drawn against one face class (the classifier was trained with
    # every face drawn equally often, a leaning die half as often). 0 leaves the classifier's
    # belief as it is.
    leaning_share: float = 0.0
    trained_leaning_ratio: float = 0.5
    # The same for the pair network (models/dice_pairs.onnx, see lcr_pi.vision.pairs): the share of
    # touching pairs with a leaning die it was trained on, and at the table. 0 leaves its belief as it is.
    pair_trained_share: float = 0.0
    pair_table_share: float = 0.0
    # The pair network looks at a pair again the other way round (the dice swapped; the two beliefs
    # averaged) when its first look's likeliest class is under this: 1.0 always, 0 never.
    pair_again_below: float = 1.0
    # The pip network's second look (models/dice_pips.onnx, see lcr_pi.vision.pips) at a pip die the
    # classifier leans to by at least second_look_from without being sure: when it names the same
    # face with at least second_look_agree, the die takes that belief. Set by hand, not by calibration
    # (measured in the model card, "Eighth round"); second_look_from 1.0 turns it off.
    second_look_from: float = 0.5
    second_look_agree: float = 0.999

    @property
    def could_be_sure_from(self) -> float:
        """The lowest detector score at which a find may be announced: the sure score, or the rescue
        score for a find read very surely (see :func:`_judge`). Finds below it get no second look.

        >>> ReaderSettings(sure_detection=0.3, rescue_detection=0.2).could_be_sure_from
        0.2
        """
        return min(self.sure_detection, self.rescue_detection)

    def wants_other_scale(self, seen: float) -> bool:
        """Whether dice ``seen`` detector pixels across are outside the sizes read at the usual scale.

        >>> ReaderSettings().wants_other_scale(12.0), ReaderSettings().wants_other_scale(200.0)
        (True, False)
        """
        return bool((self.rescale_below and seen < self.rescale_below)
                    or (self.rescale_above and seen > self.rescale_above))

    @classmethod
    def from_json(cls, path: Path) -> "ReaderSettings":
        data = json.loads(path.read_text())
        known = {k: (int(v) if k == "tta_rotations" else float(v)) for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)


@dataclass(frozen=True)
class DieReading:
    """One die: its top face, how sure the reader is, and where it is (frame pixels)."""

    face: str
    confidence: float
    box: tuple[float, float, float, float]
    corners: tuple[tuple[float, float], ...]
    centre: tuple[float, float]
    where: str
    sure: bool
    cocked: bool = False
    # The faces this die shows one of, as sure as a sure face is (their shares of the belief add up
    # to sure_confidence), when the only doubt is its face: found surely as one flat die. Empty when
    # the find itself is in doubt (a weak peak, a face split in two, leaning) or not known. With
    # ordinary dice in an LCR game, a die that is a 2 or a 3 keeps its chip either way
    # (:meth:`lcr_pi.referee.Referee.on_roll`).
    could_be: tuple[str, ...] = ()


@dataclass(frozen=True)
class Reading:
    """Everything read from one frame; ``verdict`` says whether the faces can be announced."""

    dice: tuple[DieReading, ...]
    verdict: str
    unsure_dice: tuple[int, ...] = ()
    message: str = ""
    kind: str = "pip"
    probabilities: tuple = field(default=(), repr=False, compare=False)

    @property
    def faces(self) -> tuple[str, ...]:
        return tuple(d.face for d in self.dice)

    @property
    def clear(self) -> bool:
        return self.verdict == "clear"


def describe_position(cx: float, cy: float, width: int, height: int) -> str:
    """Where a point is in the frame, in words a person at the table understands.

    >>> describe_position(10, 10, 300, 300), describe_position(150, 150, 300, 300)
    ('top left', 'centre')
    >>> describe_position(290, 150, 300, 300)
    'right'
    """
    col = min(2, int(3 * cx / max(width, 1)))
    row = min(2, int(3 * cy / max(height, 1)))
    vertical = ("top", "", "bottom")[max(row, 0)]
    horizontal = ("left", "", "right")[max(col, 0)]
    return " ".join(p for p in (vertical, horizontal) if p) or "centre"


def check_frame(frame) -> np.ndarray:
    """Return the frame as a contiguous BGR uint8 array, or raise UserError saying what is wrong.

    Grey (H, W) and BGRA (H, W, 4) frames are converted.

    >>> check_frame(np.zeros((4, 4), np.float32))
    Traceback (most recent call last):
    ...
    lcr_pi.errors.UserError: frame must be 8-bit (uint8) pixels, got float32
    """
    if not isinstance(frame, np.ndarray):
        raise UserError(f"frame must be a numpy image array, got {type(frame).__name__}")
    if frame.dtype != np.uint8:
        raise UserError(f"frame must be 8-bit (uint8) pixels, got {frame.dtype}")
    if frame.ndim == 2:
        frame = cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR) if frame.size else frame
    elif frame.ndim == 3 and frame.shape[2] == 4:
        frame = cv2.cvtColor(frame, cv2.COLOR_BGRA2BGR) if frame.size else frame
    elif frame.ndim == 3 and frame.shape[2] == 1:
        frame = cv2.cvtColor(frame[:, :, 0], cv2.COLOR_GRAY2BGR) if frame.size else frame
    elif not (frame.ndim == 3 and frame.shape[2] == 3):
        raise UserError(f"frame must be a colour image of shape (height, width, 3), got shape {frame.shape}")
    if frame.size == 0:
        raise UserError(f"frame is empty (shape {frame.shape})")
    if min(frame.shape[:2]) < 32:
        raise UserError(f"frame is too small to hold dice ({frame.shape[1]}x{frame.shape[0]} pixels)")
    return np.ascontiguousarray(frame)


@dataclass
class FrameMemo:
    """What the models said about one frame, for more than one read of it (:meth:`DiceReader.read`):
    the detector's finds by look (input size, lowest score kept, region), the classifier's class
    probabilities and the crop's sharpness by find, the pair network's belief by pair of finds.
    Good for one frame only: a new frame needs a new memo."""

    looks: dict = field(default_factory=dict)
    faces: dict = field(default_factory=dict)
    pairs: dict = field(default_factory=dict)
    pips: dict = field(default_factory=dict)  # the pip network's belief by find (only those it was asked about)
    outsized: list = field(default_factory=list)  # sure finds left out for their size (die_px given)
    taught: dict = field(default_factory=dict)  # a taught set's searches by where they started (teach._matched), by set
    taught_bodies: dict = field(default_factory=dict)  # a taught set's body-colour map of the frame (teach.BodyMap), by set
    taught_views: dict = field(default_factory=dict)  # a matcher's similarities for a taught die, by matcher and outline
    taught_pairs: dict = field(default_factory=dict)  # the pair network's view of two taught finds, by their outlines (teach.pair_view)


EMBED_MODEL_FILE = "dice_embed.onnx"  # the face-embedding network, which only teach mode asks


class DiceReader:
    """Loads the models once; call :meth:`read` for each frame (it keeps no state between frames)."""

    def __init__(self, models_dir: str | Path | None = None, settings: ReaderSettings | None = None):
        models_dir = Path(models_dir) if models_dir is not None else DEFAULT_MODELS
        detector, classifier = models_dir / "dice_detector.onnx", models_dir / "dice_faces.onnx"
        for path in (detector, classifier):
            if not path.is_file():
                raise UserError(f"missing model file {path} (train with: python -m lcr_pi.vision.training all)")
        pairs = models_dir / PAIR_MODEL_FILE
        try:
            self._detector = cv2.dnn.readNetFromONNX(str(detector))
            self._classifier = load_classifier(classifier)
            # The pair network is optional: without it a die's own crop alone says whether it may lean.
            self._pairs = cv2.dnn.readNetFromONNX(str(pairs)) if pairs.is_file() else None
            # So is the pip network: without it a hesitant pip die stays in doubt.
            pips = models_dir / PIP_MODEL_FILE
            self._pips = cv2.dnn.readNetFromONNX(str(pips)) if pips.is_file() else None
        except cv2.error as exc:
            detail = (getattr(exc, "msg", None) or str(exc)).strip()
            if hint := opencv_too_old():
                detail = f"{hint}; {detail}"
            raise UserError(f"cannot load dice models from {models_dir}: {detail}") from None
        if settings is None:
            settings_file = models_dir / "reader.json"
            settings = ReaderSettings.from_json(settings_file) if settings_file.is_file() else ReaderSettings()
        self.settings = settings
        self._embed_path = models_dir / EMBED_MODEL_FILE

    @functools.cached_property
    def embedder(self) -> "cv2.dnn.Net | None":
        """The face-embedding network (optional), which only the taught reader asks
        (:mod:`lcr_pi.vision.teach`): loaded when first asked for, so that a reader with no taught
        dice does not hold it; None when the file is not there or cannot be loaded."""
        if not self._embed_path.is_file():
            return None
        try:
            return cv2.dnn.readNetFromONNX(str(self._embed_path))
        except cv2.error:
            return None  # a damaged file: taught dice are named by the other two cues (lcr-pi doctor says so)

    def read(self, frame, *, dice_kind: str = "auto", calibration=None, die_px: float | None = None,
             region=None, memo: "FrameMemo | None" = None) -> Reading:
        """Read one BGR frame.

        Without ``die_px`` the detector looks at the frame scaled to a long side of 448 px and, when
        the dice it finds there are far from the size it reads best, looks again at their scale.
        ``die_px`` (a top face's side in this frame's pixels, known from tray calibration) makes that
        choice at once, in one look. ``region`` (x0, y0, x1, y1 frame pixels: the tray, or the part
        of it that changed) limits the reading to the dice whose centres lie in it: the detector
        looks only there (and a little around, see :func:`~lcr_pi.vision.detect.detector_window`),
        at the scale and on the grid of a whole-frame look, so a die scores as it would in the whole
        frame while the clutter outside costs nothing. Positions in messages stay frame positions.
        ``calibration`` is accepted for wrappers' sake (:class:`~lcr_pi.vision.calibration.CalibratedReader`
        applies it) and ignored here. ``memo`` (a :class:`FrameMemo`, for more than one read of the
        *same* frame) keeps what the models said, so that another look at that frame (another die
        size, region or dice kind) runs them only on what the earlier looks did not see.
        """
        if dice_kind not in DICE_KINDS:
            raise UserError(f"dice kind must be one of {', '.join(DICE_KINDS)}, got {dice_kind!r}")
        frame = check_frame(frame)
        st = self.settings
        if die_px is not None and not (isinstance(die_px, (int, float)) and math.isfinite(die_px) and die_px > 0):
            raise UserError(f"die size must be a positive number of pixels, got {die_px!r}")
        region = _check_region(region, frame.shape)
        memo = FrameMemo() if memo is None else memo
        dets = self.find_dice(frame, die_px=die_px, region=region, memo=memo)
        if dets is None:
            return Reading((), "no_dice", message="The picture is blank: is the camera covered or the light off?")
        if not dets:
            return Reading((), "no_dice", message="No dice seen on the tray.")
        new = [d for d in dict.fromkeys(dets) if d not in memo.faces]
        if new:
            crops = [crop_face(frame, d.cx, d.cy, d.side, d.angle) for d in new]
            probs = classify_crops(self._classifier, crops, int(st.tta_rotations), st.tta_below,
                                   only=[d.score >= st.could_be_sure_from for d in new])
            memo.faces.update((d, (p, sharpness(c))) for d, p, c in zip(new, probs, crops))
        probs = np.stack([memo.faces[d][0] for d in dets])
        if dice_kind == "pip" and self._pips is not None:
            probs = self.second_look(frame, dets, probs, memo)
        reading = interpret(dets, probs, frame.shape, dice_kind, st, [memo.faces[d][1] for d in dets],
                            pairs=self.touching(frame, dets, probs, memo))
        sides = [d.side for d in dets if d.score >= st.sure_detection]
        if reading.verdict == "clear" and die_px is not None and sides and not (
                SIZE_AGREES[0] * die_px <= float(np.median(sides)) <= SIZE_AGREES[1] * die_px):
            # The dice found are another size than calibrated (the camera moved or zoomed): others,
            # of their size, may have been left out. Unsure, so the calibrated reader looks again.
            reading = asked(reading, OTHER_SIZE)
        if reading.verdict == "clear" and die_px is not None and memo.outsized:
            # Found by an audit (2026-12-03): with the calibrated size off, dice seen smaller were
            # left out and the rest announced as the roll. Unsure, so the calibrated reader looks
            # again at the dice's own scale.
            h, w = frame.shape[:2]
            where = join_places(list(dict.fromkeys(describe_position(d.cx, d.cy, w, h) for d in memo.outsized)))
            reading = asked(reading, f"Something like a die of another size at the {where}; please check or re-roll.")
        return reading

    def second_look(self, frame: np.ndarray, dets, probs: np.ndarray, memo: "FrameMemo | None" = None) -> np.ndarray:
        """``probs`` (the classifier's, a row per find of ``dets``) with the pip network's second look at
        the pip dice the classifier hesitates over (:func:`~lcr_pi.vision.pips.hesitant`) and that could
        be announced (detector score at least the sure or the rescue score): each takes the belief
        :func:`~lcr_pi.vision.pips.seconded` gives it. For pip dice only: the network knows no letters."""
        st = self.settings
        doubted = [i for i, d in enumerate(dets) if d.score >= st.could_be_sure_from
                   and hesitant(probs[i], st.second_look_from, st.sure_confidence)]
        if not doubted:
            return probs
        memo = FrameMemo() if memo is None else memo
        new = list(dict.fromkeys(dets[i] for i in doubted if dets[i] not in memo.pips))
        if new:
            memo.pips.update(zip(new, look_again(self._pips, [pip_crop(frame, d) for d in new])))
        out = np.array(probs, copy=True)
        for i in doubted:
            out[i] = seconded(probs[i], memo.pips[dets[i]], st.second_look_agree)
        return out

    def touching(self, frame: np.ndarray, dets, probs: np.ndarray, memo: "FrameMemo | None" = None):
        """The pairs of finds that may touch (indices into ``dets``) and the pair network's belief for
        each (see :mod:`lcr_pi.vision.pairs`); None without a pair network. Finds the classifier
        takes for background are left out of pairs."""
        if self._pairs is None:
            return None
        memo = FrameMemo() if memo is None else memo
        likely = [i for i in range(len(dets)) if probs[i, _BACKGROUND] < self.settings.drop_background]
        pairs = [(likely[a], likely[b]) for a, b in touching_pairs([dets[i] for i in likely])]
        new = list(dict.fromkeys((dets[i], dets[j]) for i, j in pairs if (dets[i], dets[j]) not in memo.pairs))
        if new:
            found = list(dict.fromkeys(d for pair in new for d in pair))
            beliefs = pair_beliefs(self._pairs, frame, found, [(found.index(a), found.index(b)) for a, b in new],
                                   self.settings.pair_again_below)
            memo.pairs.update(zip(new, beliefs))
        beliefs = [memo.pairs[(dets[i], dets[j])] for i, j in pairs]
        return pairs, (np.stack(beliefs) if beliefs else np.zeros((0, len(PAIR_CLASSES)), np.float32))

    def find_dice(self, frame: np.ndarray, *, die_px: float | None = None, doubt: float | None = None,
                  region=None, memo: "FrameMemo | None" = None) -> list | None:
        """The detector's candidates in a checked BGR frame (frame pixels, best first), looked for at
        the scale :meth:`read` describes, only in ``region`` when given, and only of about the die
        size ``die_px`` when given (:data:`DIE_SIZE_RANGE`); ``None`` for a blank frame. ``doubt``
        overrides the settings' lowest detector score kept (calibration looks at everything once)."""
        st = self.settings
        doubt = st.doubt_detection if doubt is None else doubt
        memo = FrameMemo() if memo is None else memo

        def look(long_side: int):
            key = (long_side, doubt, region)
            if key not in memo.looks:
                memo.looks[key] = self._look(frame, long_side, doubt, region)
            return memo.looks[key]

        long_side = DETECT_LONG_SIDE if die_px is None else self._long_side_for(frame.shape, die_px)
        dets = look(long_side)
        if dets and die_px is None:
            better = self._better_long_side(dets, detector_scale(frame.shape, long_side), frame.shape)
            if better is not None:
                dets = look(better) or []
        if dets and die_px is not None:
            # With the dice's size known, a find of another size is a pip, a chip or a blob, not a
            # die: it would cost a classification and could only make the frame unsure. But a sure
            # find of another size that lies on no kept find may be a die seen larger or smaller
            # than calibrated: it is remembered, and the reading is not clear without it.
            fits = [d for d in dets if DIE_SIZE_RANGE[0] * die_px <= d.side <= DIE_SIZE_RANGE[1] * die_px]
            memo.outsized = [d for d in dets if d not in fits and d.score >= st.doubt_detection
                             and not any(abs(d.cx - k.cx) < k.side / 2 + d.side / 2 and abs(d.cy - k.cy) < k.side / 2 + d.side / 2
                                         for k in fits)]
            dets = fits
        return dets

    def _look(self, frame: np.ndarray, long_side: int, doubt: float, region) -> list | None:
        """One look of the detector at ``long_side``; ``None`` when what it looks at is blank."""
        if region is None:
            blob, scale = prepare_detector_input(frame, long_side)
            if float(blob.std()) * 255 < self.settings.blank_std:
                return None
            self._detector.setInput(blob)
            return decode_detections(self._detector.forward(), scale, doubt=doubt)
        blob, window = prepare_detector_window(frame, long_side, region)
        if float(blob.std()) * 255 < self.settings.blank_std:
            # A plain region (an empty black tray) has no dice; only a blank *frame* is "blank".
            return None if float(frame[::8, ::8].std()) < self.settings.blank_std else []
        self._detector.setInput(blob)
        x0, y0, x1, y1 = region
        found = (window.to_frame(d) for d in decode_detections(self._detector.forward(), 1.0, doubt=doubt))
        return [d for d in found if x0 <= d.cx < x1 and y0 <= d.cy < y1]

    def _long_side_for(self, shape, die_px: float) -> int:
        """Detector input long side for a frame whose dice are ``die_px`` across: the usual scale
        when the dice are a good size there, else the scale that makes them so."""
        if self.settings.wants_other_scale(die_px * detector_scale(shape)):
            return long_side_for_die(shape, die_px)
        return DETECT_LONG_SIDE

    def _better_long_side(self, dets, scale: float, shape) -> int | None:
        """The detector input size to look again at, when the dice found are far from the size it reads best."""
        st = self.settings
        sure = [d for d in dets if d.score >= st.sure_detection] or dets
        side = float(np.median([d.side for d in sure]))
        if not st.wants_other_scale(side * scale):  # detector pixels
            return None
        better = long_side_for_die(shape, side)
        return better if abs(better - max(shape[:2]) * scale) >= 32 else None


def _check_region(region, shape):
    """``region`` as a box of whole frame pixels inside the frame, or None for the whole frame.

    >>> _check_region((-5, 10, 700, 200.5), (480, 640, 3))
    (0, 10, 640, 201)
    >>> _check_region((0, 0, 640, 480), (480, 640, 3)) is None
    True
    """
    if region is None:
        return None
    try:
        x0, y0, x1, y1 = (float(v) for v in region)
    except (TypeError, ValueError):
        raise UserError(f"a region to read must be four numbers (x0, y0, x1, y1), got {region!r}") from None
    h, w = shape[:2]
    box = (max(0, math.floor(x0)), max(0, math.floor(y0)), min(w, math.ceil(x1)), min(h, math.ceil(y1)))
    if box[2] <= box[0] or box[3] <= box[1]:
        raise UserError(f"the region to read {tuple(region)} lies outside the {w}x{h} frame")
    return None if box == (0, 0, w, h) else box


def _choose_kind(probs: np.ndarray, dice_kind: str) -> str:
    """The kind of dice a frame's finds (class probabilities, one row each) are read as: ``dice_kind``
    itself unless it leaves the choice to the frame. ``auto``: pip dice when the faces only pip dice
    have (2-6) weigh at least as much as the letters, else LCR dice, Wild ones when a W is half
    likely. ``pip-or-wild`` (a Wild game, whose dice are Wild LCR dice or ordinary dice with a pip
    that counts as W): the same, but the letters always mean Wild dice.

    >>> p = np.zeros((2, len(CLASSES))); p[0, CLASSES.index("L")], p[1, CLASSES.index("1")] = 1.0, 1.0
    >>> _choose_kind(p, "auto"), _choose_kind(p, "pip-or-wild"), _choose_kind(p[1:], "pip-or-wild")
    ('lcr', 'wild', 'pip')
    """
    if dice_kind not in FRAME_CHOOSES:
        return dice_kind
    if len(probs) == 0:
        return "pip"
    pip_only = probs[:, [CLASSES.index(c) for c in ("2", "3", "4", "5", "6")]].sum()
    lcr_only = probs[:, [CLASSES.index(c) for c in ("L", "C", "R", "W")]].sum()
    if lcr_only <= pip_only:
        return "pip"
    return "wild" if dice_kind == "pip-or-wild" or probs[:, CLASSES.index("W")].sum() >= 0.5 else "lcr"


def allowed_classes(kind: str) -> list[int]:
    """The classifier's class indices that are faces of ``kind`` dice (an LCR die's dot is class "1").

    >>> [CLASSES[i] for i in allowed_classes("lcr")]
    ['1', 'L', 'C', 'R']
    """
    return _PIP if kind == "pip" else _LCR if kind == "lcr" else _WILD


def at_the_table(probs: np.ndarray, kind: str, st: ReaderSettings) -> np.ndarray:
    """The classifier's class probabilities (one row per find) as belief about ``kind`` dice at a table.

    The classifier was trained with every face drawn equally often and a leaning ("cocked") die half
    as often as one face (``st.trained_leaning_ratio``), so its belief carries those shares as its
    prior. At the table an LCR die shows a dot half the time and each letter a sixth of the time
    (:data:`FACE_SHARES`), and a share ``st.leaning_share`` of dice lean. Bayes' rule changes the
    prior by weighting each allowed face and ``cocked`` by its share at the table over its share in
    training; what the finds' belief in a die (faces and cocked together) against ``background``
    was is kept. With ``st.leaning_share`` 0 the belief is returned as it is.

    >>> p = np.zeros((1, len(CLASSES))); p[0, CLASSES.index("1")], p[0, _COCKED], p[0, _BACKGROUND] = 0.6, 0.3, 0.1
    >>> table = at_the_table(p, "lcr", ReaderSettings(leaning_share=0.05))
    >>> [round(float(table[0, CLASSES.index(c)]), 3) for c in ("1", "cocked", "background")]
    [0.814, 0.086, 0.1]
    >>> at_the_table(p, "lcr", ReaderSettings()) is p
    True
    """
    lean = float(st.leaning_share)
    if lean <= 0 or len(probs) == 0:
        return probs
    weights = np.zeros(len(CLASSES))
    for face, share in FACE_SHARES[kind].items():
        weights[CLASSES.index(face)] = share * (1 - lean)
    weights[_COCKED] = lean / max(float(st.trained_leaning_ratio), 1e-9)
    die = allowed_classes(kind) + [_COCKED]
    out = np.array(probs, dtype=np.float64, copy=True)
    before = out[:, die]
    after = before * weights[die]
    out[:, die] = after * (before.sum(1) / np.maximum(after.sum(1), 1e-12))[:, None]
    return out


def face_belief(p: np.ndarray, allowed: list[int]) -> tuple[int, float, float]:
    """How a find's class probabilities ``p`` are read for dice whose faces are ``allowed``: the best
    allowed class, its share (the confidence) and the ``cocked`` share, both of the allowed faces,
    ``cocked`` and ``background`` together (the other kind's faces are no answer).

    >>> p = np.zeros(len(CLASSES)); p[CLASSES.index("L")], p[_COCKED], p[CLASSES.index("5")] = 0.6, 0.2, 0.2
    >>> best, confidence, cocked = face_belief(p, allowed_classes("lcr"))
    >>> CLASSES[best], round(confidence, 6), round(cocked, 6)
    ('L', 0.75, 0.25)
    """
    faces_p = p[allowed]
    total = _belief_total(p, allowed)
    best = int(np.argmax(faces_p))
    return allowed[best], float(faces_p[best] / total), float(p[_COCKED] / total)


def likely_faces(p: np.ndarray, allowed: list[int], kind: str, share: float) -> tuple[str, ...]:
    """The fewest faces (best first) among ``allowed`` whose shares of a find's belief ``p`` (as in
    :func:`face_belief`: of the faces, cocked and background) add up to ``share``; empty when all
    of them together do not. An LCR die's class "1" is named "dot".

    >>> p = np.zeros(len(CLASSES)); p[CLASSES.index("2")], p[CLASSES.index("3")], p[_BACKGROUND] = 0.6, 0.35, 0.05
    >>> likely_faces(p, allowed_classes("pip"), "pip", 0.9), likely_faces(p, allowed_classes("pip"), "pip", 0.99)
    (('2', '3'), ())
    """
    total = _belief_total(p, allowed)
    faces, held = [], 0.0
    for k in sorted(allowed, key=lambda k: -p[k]):
        if held >= share:
            break
        faces.append(face_name(CLASSES[k], kind))
        held += float(p[k]) / total
    return tuple(faces) if held >= share else ()


def _belief_total(p: np.ndarray, allowed: list[int]) -> float:
    """What a find's face shares are shares of: the allowed faces, cocked and background."""
    return max(float(p[allowed].sum() + p[_COCKED] + p[_BACKGROUND]), 1e-12)


def face_name(class_name: str, kind: str) -> str:
    """A face class as said for ``kind`` dice: the class "1" is the single pip of a pip die and the
    dot of an LCR die.

    >>> face_name("1", "pip"), face_name("1", "lcr"), face_name("L", "wild")
    ('1', 'dot', 'L')
    """
    return "dot" if class_name == "1" and kind != "pip" else class_name


def _judge(d, p: np.ndarray, allowed: list[int], st: ReaderSettings) -> tuple[str, float, bool, bool]:
    """One find's best allowed face, its confidence (its share of the faces, cocked and background),
    whether it is cocked, and whether it is sure (before the overlap rule)."""
    best, confidence, cocked_share = face_belief(p, allowed)
    is_cocked = cocked_share >= st.cocked_probability
    seen_sure = confidence >= st.sure_confidence and d.score >= st.sure_detection
    read_sure = confidence >= st.rescue_confidence and d.score >= st.rescue_detection
    return CLASSES[best], confidence, is_cocked, not is_cocked and (seen_sure or read_sure)


def _without_misfits(dets, probs: np.ndarray, keep: list[int], kind: str, st: ReaderSettings,
                     own: np.ndarray | None = None) -> list[int]:
    """``keep`` without the finds that cannot be dice beside the frame's sure ones (``probs``: the
    belief at the table, the pair network's included; ``own``: the belief at the table from each
    find's own crop, without it; ``probs`` when not given):

    - a find more than :data:`OUTSIZED` or under :data:`UNDERSIZED` times the median size of the
      sure finds on which the classifier sees no face in its own crop (best face under
      :data:`FACELESS`): the dice of one roll are one size, so it is a poker chip, a cup's rim or
      the end of a cable, not a die (and not a leaning one: its "cocked" would stop the game for
      nothing). Its own crop, because where the pair network believes it does not lean, its
      ``cocked`` share moves to its faces, however faint they were;
    - a find believed more likely no die than a die (``background`` at least ``drop_background``)
      that touches one other find only, a sure one, and lies nearer it than :data:`SIDE_REACH`
      times their mean side: two flat dice's centres are at least a side apart, so it is that
      die's side face, which an oblique view shows nearly as large as its top. A find touching two
      or more (within :data:`~lcr_pi.vision.pairs.TOUCHING` sides) is kept, doubted: between two
      dice it may be the face of a die leaning on them, the one sign that a roll is not flat.

    >>> from lcr_pi.vision.detect import Detection
    >>> dets = [Detection(100, 100, 40, 40, 0.0, 0.9), Detection(135, 100, 36, 36, 0.0, 0.5),
    ...         Detection(300, 100, 18, 18, 0.0, 0.4)]
    >>> p = np.zeros((3, len(CLASSES))); p[0, CLASSES.index("4")] = 1.0
    >>> p[1, CLASSES.index("5")], p[1, _BACKGROUND] = 0.4, 0.6  # beside the 4, more likely no die
    >>> p[2, CLASSES.index("W")], p[2, _BACKGROUND] = 0.7, 0.3  # half the 4's size, no pip face
    >>> _without_misfits(dets, p, [0, 1, 2], "pip", ReaderSettings(sure_detection=0.35))
    [0]
    >>> p[1, CLASSES.index("5")], p[1, _BACKGROUND] = 0.6, 0.4  # may be a die touching the 4: kept, doubted
    >>> _without_misfits(dets, p, [0, 1, 2], "pip", ReaderSettings(sure_detection=0.35))
    [0, 1]
    >>> dets.append(Detection(300, 300, 80, 80, 0.0, 0.5))   # twice the 4's size: a poker chip
    >>> own = np.vstack([p, np.zeros(len(CLASSES))])
    >>> own[3, _COCKED], own[3, _BACKGROUND], own[3, CLASSES.index("2")] = 0.6, 0.39, 0.01
    >>> flat = own.copy(); flat[3, _COCKED], flat[3, CLASSES.index("2")] = 0.0, 0.61   # "it does not lean"
    >>> st = ReaderSettings(sure_detection=0.35)
    >>> _without_misfits(dets, flat, [0, 1, 3], "pip", st), _without_misfits(dets, flat, [0, 1, 3], "pip", st, own)
    ([0, 1, 3], [0, 1])
    """
    allowed = allowed_classes(kind)
    own = probs if own is None else own
    judged = {i: _judge(dets[i], probs[i], allowed, st) for i in keep}
    sure = [i for i in keep if judged[i][3]]
    if not sure:
        return keep
    median = float(np.median([dets[i].side for i in sure]))

    def misfit(i: int) -> bool:
        if i in sure:
            return False
        faceless = face_belief(own[i], allowed)[1] < FACELESS
        if faceless and not UNDERSIZED * median <= dets[i].side <= OUTSIZED * median:
            return True
        if probs[i, _BACKGROUND] < st.drop_background:
            return False
        near = [j for j in keep if j != i and sides_apart(dets[i], dets[j]) < TOUCHING]
        return len(near) == 1 and near[0] in sure and sides_apart(dets[i], dets[near[0]]) < SIDE_REACH

    return [i for i in keep if not misfit(i)]


def with_pair_leaning(probs: np.ndarray, kind: str, st: ReaderSettings, pairs) -> np.ndarray:
    """``probs`` with what the pair network says of every find that touches another (``pairs``: index
    pairs and their beliefs, as :meth:`DiceReader.touching` gives; see
    :func:`lcr_pi.vision.pairs.leaning_by_pairs`): its ``cocked`` share becomes the pair network's
    belief that it leans (weighed for the table), and the pair network's belief that it is no die
    (a side face beside its die) moves that much of its belief in a die to ``background``. Its
    faces' shares among themselves stay the classifier's. Finds in no pair keep the classifier's
    belief.

    >>> p = np.zeros((2, len(CLASSES))); p[:, CLASSES.index("L")], p[:, _COCKED] = 0.7, 0.3
    >>> out = with_pair_leaning(p, "lcr", ReaderSettings(), ([(0, 1)], np.array([[0.95, 0.04, 0.01, 0.0, 0.0]])))
    >>> [round(float(out[k, _COCKED]), 2) for k in (0, 1)], round(float(out[1, CLASSES.index("L")]), 2)
    ([0.04, 0.01], 0.99)
    >>> out = with_pair_leaning(p, "lcr", ReaderSettings(), ([(0, 1)], np.array([[0.2, 0.0, 0.0, 0.0, 0.8]])))
    >>> round(float(out[1, _BACKGROUND]), 2), round(float(out[1, CLASSES.index("L")]), 2)
    (0.8, 0.2)
    """
    if not pairs or not len(pairs[0]):
        return probs
    index_pairs, beliefs = pairs
    lean, no_die = leaning_by_pairs(len(probs), index_pairs, beliefs, st.pair_trained_share, st.pair_table_share)
    allowed = allowed_classes(kind)
    out = np.array(probs, dtype=np.float64, copy=True)
    for i, q in enumerate(lean):
        if q is None:
            continue
        faces = out[i, allowed]
        die = float(faces.sum() + out[i, _COCKED])
        kept = die * (1 - no_die[i])
        out[i, allowed] = faces / max(float(faces.sum()), 1e-12) * (1 - q) * kept
        out[i, _COCKED] = q * kept
        out[i, _BACKGROUND] += die - kept
    return out


def interpret(dets, probs: np.ndarray, shape, dice_kind: str, st: ReaderSettings, sharpnesses=None,
              pairs=None) -> Reading:
    """Turn detections, class probabilities and crop sharpness into a Reading (pure; no models).

    ``pairs`` (index pairs of ``dets`` and the pair network's belief for each) says which touching
    dice may lean on each other (:func:`with_pair_leaning`)."""
    height, width = shape[:2]

    def dice_like(background: np.ndarray, among) -> list[int]:
        # A find the classifier is sure is background, or a doubtful peak it takes for background,
        # is no die.
        return [i for i in among if not (background[i] >= st.sure_background
                                         or (dets[i].score < st.sure_detection and background[i] >= st.drop_background))]

    keep = dice_like(probs[:, _BACKGROUND], range(len(dets)))
    if keep:
        first_kind = _choose_kind(probs[keep], dice_kind)
        own = at_the_table(probs, first_kind, st)
        first = with_pair_leaning(own, first_kind, st, pairs)
        keep = dice_like(first[:, _BACKGROUND], keep)  # the pair network may see a side face, not a die
    if not keep:
        return Reading((), "no_dice", message="No dice seen on the tray.")
    keep = _without_misfits(dets, first, keep, first_kind, st, own)
    kind = _choose_kind(probs[keep], dice_kind)
    # Without the misfits the kind is almost always the same, and then so is the belief.
    probs = first if kind == first_kind else with_pair_leaning(at_the_table(probs, kind, st), kind, st, pairs)
    probs_kept = probs[keep]
    blurred = sharpnesses is not None and float(np.median([sharpnesses[i] for i in keep])) < st.blurred_sharpness
    allowed = allowed_classes(kind)
    dice, unsure, cocked = [], [], []
    overlapping = overlapping_faces([dets[i] for i in keep], st.max_face_overlap)
    for j, i in enumerate(keep):
        d, p = dets[i], probs[i]
        name, confidence, is_cocked, could_be_sure = _judge(d, p, allowed, st)
        name = face_name(name, kind)
        sure = could_be_sure and j not in overlapping
        corners = tuple((float(x), float(y)) for x, y in d.corners())
        found_surely = d.score >= st.sure_detection and j not in overlapping and not is_cocked
        dice.append(DieReading(
            face=name, confidence=round(confidence, 4), box=tuple(float(v) for v in d.box),
            corners=corners, centre=(float(d.cx), float(d.cy)),
            where=describe_position(d.cx, d.cy, width, height), sure=sure, cocked=is_cocked,
            could_be=likely_faces(p, allowed, kind, st.sure_confidence) if found_surely else (),
        ))
        if is_cocked:
            cocked.append(j)
        elif not sure:
            unsure.append(j)
    order = sorted(range(len(dice)), key=lambda k: (dice[k].centre[1] // max(1.0, height / 6), dice[k].centre[0]))
    dice = [dice[k] for k in order]
    remap = {old: new for new, old in enumerate(order)}
    unsure = sorted(remap[k] for k in unsure)
    cocked = sorted(remap[k] for k in cocked)
    if blurred:
        return Reading(tuple(dice), "obstructed", tuple(range(len(dice))),
                       "The picture is blurred (dice still rolling or the camera moved): waiting for a still picture.",
                       kind, tuple(map(tuple, probs_kept[order])))
    return Reading(tuple(dice), kind=kind, probabilities=tuple(map(tuple, probs_kept[order])),
                   **verdict_for(dice, unsure, cocked))


#: Said when the dice are found at another size than the calibration's (the camera moved or zoomed).
OTHER_SIZE = ("The dice look another size than the calibration says; please check or re-roll "
              "(and calibrate again if the camera moved).")


def unsettled(reading):
    """The reading with no die's ``could_be`` left: no doubt in it may be settled by the moves its
    faces would make, so the referee asks (offering its guess for confirm)."""
    return replace(reading, dice=tuple(replace(d, could_be=()) for d in reading.dice))


def asked(reading, message: str):
    """The reading made unsure, with ``message``, and nothing in it settled by moves (:func:`unsettled`)."""
    return replace(unsettled(reading), verdict="unsure", message=message)


def doubted_dice(reading) -> tuple[int, ...]:
    """Indices of the dice a reading doubts (named unsure, not sure, or cocked), the least sure first:
    what the referee may leave out of its guess when it sees more dice than were rolled.

    >>> d = lambda confidence, sure: DieReading("4", confidence, (0, 0, 1, 1), (), (0, 0), "top", sure)
    >>> doubted_dice(Reading((d(0.99, True), d(0.7, False), d(0.3, False)), "unsure", (1, 2)))
    (2, 1)
    """
    dice = reading.dice
    doubted = set(reading.unsure_dice) | {i for i, die in enumerate(dice)
                                          if not getattr(die, "sure", True) or getattr(die, "cocked", False)}
    return tuple(sorted(doubted, key=lambda i: (getattr(dice[i], "confidence", 0.0), i)))


def verdict_for(dice, unsure: list[int], cocked: list[int]) -> dict:
    """``verdict``, ``unsure_dice`` and ``message`` of a reading of ``dice`` (in reading order) with
    the dice at indices ``unsure`` in doubt and those at ``cocked`` leaning.

    >>> d = DieReading("4", 0.5, (0, 0, 1, 1), (), (0, 0), "top left", False)
    >>> verdict_for([d, d], [], [])["message"], verdict_for([d, d], [1], [])["verdict"]
    ('Read 2 dice: 4, 4.', 'unsure')
    >>> verdict_for([d], [], [0])["message"]
    'the die at the top left may be leaning (cocked), so it cannot be read.'
    """
    if cocked:
        # "may be": on held-out rendered frames most dice the classifier calls cocked lie flat (the
        # cocked class is hard to tell from a flat die whose sides show), so it is said as a doubt.
        one = len(cocked) == 1
        return {"verdict": "cocked", "unsure_dice": tuple(sorted(cocked + unsure)),
                "message": f"{_name_dice([dice[k] for k in cocked])} may be leaning (cocked), "
                           f"so {'it' if one else 'they'} cannot be read."}
    if unsure:
        return {"verdict": "unsure", "unsure_dice": tuple(unsure),
                "message": f"Not sure about {_name_dice([dice[k] for k in unsure])}; please check or re-roll."}
    n = len(dice)
    return {"verdict": "clear", "unsure_dice": (),
            "message": f"Read {n} {'die' if n == 1 else 'dice'}: {', '.join(d.face for d in dice)}."}


def overlapping_faces(dets, max_overlap: float) -> set[int]:
    """Indices of detections whose top-face outlines overlap another's by more than
    ``max_overlap`` of the smaller face.

    Two flat dice cannot show overlapping top faces, so such a pair means the detector has split
    one face (say the two pips of a 2) or doubled a die: neither may be announced as sure.

    >>> from lcr_pi.vision.detect import Detection
    >>> sorted(overlapping_faces([Detection(0, 0, 40, 40, 0, 1), Detection(24, 22, 40, 40, 0, 1),
    ...                           Detection(100, 0, 40, 40, 0, 1)], 0.1))
    [0, 1]
    >>> overlapping_faces([Detection(0, 0, 40, 40, 0, 1), Detection(41, 0, 40, 40, 0, 1)], 0.1)
    set()
    """
    outlines = [d.corners().astype(np.float32) for d in dets]
    areas = [abs(float(cv2.contourArea(o))) for o in outlines]
    found = set()
    for a in range(len(dets)):
        for b in range(a + 1, len(dets)):
            da, db = dets[a], dets[b]
            if abs(da.cx - db.cx) * 2 >= da.w + db.w or abs(da.cy - db.cy) * 2 >= da.h + db.h:
                continue
            inter, _ = cv2.intersectConvexConvex(outlines[a], outlines[b])
            if inter > max_overlap * max(1e-6, min(areas[a], areas[b])):
                found.update((a, b))
    return found


def _name_dice(dice: list[DieReading]) -> str:
    """'the die at the top left' / 'the dice at the top left and centre'.

    >>> d = DieReading("4", 0.5, (0, 0, 1, 1), (), (0, 0), "top left", False)
    >>> _name_dice([d]), _name_dice([d, d])
    ('the die at the top left', 'the dice at the top left and top left')
    """
    return f"the {'die' if len(dice) == 1 else 'dice'} at the {join_places([d.where for d in dice])}"


def join_places(places: list[str]) -> str:
    """Places in words as one phrase.

    >>> join_places(["right"]), join_places(["top left", "centre", "right"])
    ('right', 'top left, centre and right')
    """
    return places[0] if len(places) == 1 else f"{', '.join(places[:-1])} and {places[-1]}"


_DEFAULT_READER: DiceReader | None = None


def read_dice(frame, *, dice_kind: str = "auto", calibration=None) -> Reading:
    """Read one frame with the shipped models (loaded on first use, then reused)."""
    global _DEFAULT_READER
    if _DEFAULT_READER is None:
        _DEFAULT_READER = DiceReader()
    return _DEFAULT_READER.read(frame, dice_kind=dice_kind, calibration=calibration)
