"""Teach mode: the reader learns a dice set it was never trained on from a few views of each face.

A player shows each face a few times (``lcr-pi teach``). For each view the die's top face is cut out
and straightened from its four corners (:func:`rectify_face`), and turned into a descriptor
(:func:`face_descriptor`): a small, blurred, contrast-normalised grey patch plus the face's colours
(so red-on-white and blue-on-white faces differ). Corners are only known up to a quarter turn, so
every taught view is stored at its four quarter turns.

Reading (:class:`TaughtReader`): the ordinary reader finds the dice; each die that looks like the
taught set gets its face from its nearest taught views, and any other die (ordinary pip or LCR
dice) keeps the reader's own answer. The confidence falls with the distance: a face far from every
taught view or as close to two faces is *unsure*, never a guess. The distance scale comes from the
taught views themselves (how far apart views of one face are), so it adapts to each set.

Saved as ``.npz`` (see ``calibration/README.md``).

>>> import numpy as np
>>> patch = np.zeros((40, 40, 3), np.uint8); patch[10:30, 18:22] = 255
>>> face_descriptor(patch).shape
(439,)
"""

from __future__ import annotations

import json
import time
import zipfile
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

import cv2
import numpy as np

from lcr_pi.errors import UserError

FORMAT_VERSION = 1
PATCH = 20  # descriptor patch side (pixels)
RECTIFY = 48  # straightened face side before shrinking
MIN_VIEWS = 3
ROWS_PER_VIEW = 36  # each view is stored at 9 small jitters x 4 quarter turns
FAMILIAR = 4.5  # a face further than this many typical distances from every taught view is not of the set
KIND_FACES = {"pip": ("1", "2", "3", "4", "5", "6"), "lcr": ("L", "C", "R", "dot"), "wild": ("L", "C", "R", "dot", "W")}


# --------------------------------------------------------------------------------------------
# Descriptors


def rectify_face(frame: np.ndarray, corners, size: int = RECTIFY, inset: float = 0.2) -> np.ndarray:
    """The top face straightened into a ``size`` x ``size`` BGR square.

    The inset keeps to the middle of the face: a rough outline (the detector gives a square, the face
    in perspective is not one) would otherwise cut into the die's sides or the tray."""
    c = np.asarray(corners, np.float32).reshape(4, 2)
    centre = c.mean(0)
    c = centre + (c - centre) * (1 - inset)
    dst = np.array([[0, 0], [size - 1, 0], [size - 1, size - 1], [0, size - 1]], np.float32)
    # Corners may come clockwise or anticlockwise; a mirrored face would not match its taught views.
    cross = np.cross(c[1] - c[0], c[3] - c[0])
    if cross < 0:
        c = c[[0, 3, 2, 1]]
    H = cv2.getPerspectiveTransform(c, dst)
    return cv2.warpPerspective(frame, H, (size, size), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE)


def face_descriptor(face: np.ndarray) -> np.ndarray:
    """Unit-length descriptor of a straightened face: grey shape (400) + colour layout (39)."""
    small = cv2.resize(face, (PATCH, PATCH), interpolation=cv2.INTER_AREA)
    small = cv2.GaussianBlur(small, (3, 3), 0)
    grey = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY).astype(np.float32)
    grey -= grey.mean()
    grey /= max(float(np.linalg.norm(grey)), 1e-3)
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2LAB).astype(np.float32)
    # Colours of the body (bright half) and of the ink (dark half), and the share of ink.
    light = lab[..., 0]
    ink = light < np.median(light) - 10
    parts = []
    for m in (~ink, ink):
        sel = lab[m] if m.any() else lab.reshape(-1, 3)
        parts.append(sel.mean(0) / 255.0)
    parts.append(np.array([ink.mean()], np.float32))
    colour = np.concatenate(parts).astype(np.float32)
    colour = np.tile(colour, 5)  # 35 values + 4 padding: colour weighs about a fifth of the shape
    colour = np.concatenate([colour, np.zeros(4, np.float32)]) * 0.25
    return np.concatenate([grey.ravel(), colour]).astype(np.float32)


def quarter_turns(face: np.ndarray) -> list[np.ndarray]:
    return [np.ascontiguousarray(np.rot90(face, k)) for k in range(4)]


def jitters(face: np.ndarray) -> list[np.ndarray]:
    """The view as a reader's rough outline may cut it: turned a little, a little bigger or smaller."""
    h, w = face.shape[:2]
    out = []
    for angle in (-10.0, 0.0, 10.0):
        for scale in (0.92, 1.0, 1.08):
            m = cv2.getRotationMatrix2D((w / 2, h / 2), angle, scale)
            out.append(cv2.warpAffine(face, m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE))
    return out


# --------------------------------------------------------------------------------------------
# The taught set


@dataclass(frozen=True)
class TaughtSet:
    """Taught views of one dice design: descriptors (N x D, each view at ``ROWS_PER_VIEW`` jitters and turns) and faces."""

    name: str
    kind: str  # "pip", "lcr" or "wild"
    descriptors: np.ndarray
    faces: tuple[str, ...]  # one per descriptor row
    scale: float  # typical distance between views of one face
    views: dict  # face -> number of views shown
    created: str = ""
    version: int = FORMAT_VERSION

    def classify(self, face: np.ndarray) -> tuple[str, float, bool]:
        """The nearest taught face, a confidence in 0..1 (low when far from all, or close to two), and
        whether the face looks like this set at all (within ``FAMILIAR`` typical distances of a view)."""
        d = face_descriptor(face)
        dist = np.linalg.norm(self.descriptors - d, axis=1)
        best: dict[str, float] = {}
        for f, x in zip(self.faces, dist):
            if x < best.get(f, np.inf):
                best[f] = float(x)
        ranked = sorted(best.items(), key=lambda kv: kv[1])
        name, d1 = ranked[0]
        d2 = ranked[1][1] if len(ranked) > 1 else np.inf
        familiar = float(np.exp(-max(0.0, d1 - 3.0 * self.scale) / self.scale))  # far from every view: unsure
        distinct = 1.0 - float(np.clip((d1 / max(d2, 1e-6) - 0.7) / 0.25, 0.0, 1.0))  # as close to two faces
        return name, round(min(familiar, distinct), 4), d1 <= FAMILIAR * self.scale


def teach(examples: dict[str, list[np.ndarray]], *, name: str, kind: str | None = None,
          min_views: int = MIN_VIEWS) -> TaughtSet:
    """Build a taught set from straightened face images, ``{face: [image, ...]}``.

    Every face of the kind (``pip``: 1-6; ``lcr``: L, C, R, dot; ``wild``: and W) needs at least
    ``min_views`` views; a missing or under-shown face is a :class:`UserError` naming it.
    """
    faces_shown = {f for f, v in examples.items() if v}
    if kind is None:
        kind = "pip" if faces_shown <= set(KIND_FACES["pip"]) else "wild" if "W" in faces_shown else "lcr"
    if kind not in KIND_FACES:
        raise UserError(f"dice kind must be one of {', '.join(KIND_FACES)}, not {kind!r}")
    unknown = sorted(faces_shown - set(KIND_FACES[kind]))
    if unknown:
        raise UserError(f"teach {name}: faces {', '.join(unknown)} are not faces of {kind} dice")
    short = [f"{f} ({len(examples.get(f, []))})" for f in KIND_FACES[kind] if len(examples.get(f, [])) < min_views]
    if short:
        raise UserError(f"teach {name}: too few views of face {', '.join(short)}; show each face at least {min_views} times")
    rows, labels, view_of = [], [], []
    plain: list[tuple[str, int, np.ndarray]] = []
    for f in KIND_FACES[kind]:
        for img in examples[f]:
            view = len(plain)
            plain.append((f, view, face_descriptor(img)))
            for j in jitters(img):
                for q in quarter_turns(j):
                    rows.append(face_descriptor(q))
                    labels.append(f)
                    view_of.append(view)
    desc = np.stack(rows)
    labels_arr, view_arr = np.array(labels), np.array(view_of)
    # Scale: median distance from a view of a face to the nearest stored row of another view of that face.
    near = []
    for f, view, d in plain:
        others = desc[(labels_arr == f) & (view_arr != view)]
        near.append(float(np.linalg.norm(others - d, axis=1).min()))
    scale = max(float(np.median(near)), 0.05)
    return TaughtSet(name=name, kind=kind, descriptors=desc, faces=tuple(labels), scale=scale,
                     views={f: len(examples[f]) for f in KIND_FACES[kind]}, created=time.strftime("%Y-%m-%dT%H:%M:%S"))


# --------------------------------------------------------------------------------------------
# Files


def save_taught(taught: TaughtSet, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {"version": taught.version, "name": taught.name, "kind": taught.kind, "scale": taught.scale,
            "views": taught.views, "created": taught.created, "descriptor": f"patch{PATCH}+colour"}
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez_compressed(tmp, descriptors=taught.descriptors.astype(np.float32), faces=np.array(taught.faces),
                        meta=np.array(json.dumps(meta)))
    tmp.replace(path)
    return path


def load_taught(path: str | Path, *, min_views: int = MIN_VIEWS) -> TaughtSet:
    """Read and check a taught set; :class:`UserError` names the file and the problem."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no taught dice file (make one with: lcr-pi teach --name DESIGN)")
    try:
        with np.load(path, allow_pickle=False) as data:
            desc = np.asarray(data["descriptors"], np.float32)
            faces = tuple(str(f) for f in data["faces"])
            meta = json.loads(str(data["meta"]))
    except KeyError:
        raise UserError(f"{path}: not a taught dice file (it needs the arrays descriptors, faces and meta)") from None
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise UserError(f"{path}: corrupt taught dice file ({exc})") from None
    if not isinstance(meta, dict) or meta.get("version") != FORMAT_VERSION:
        raise UserError(f"{path}: unknown format version {meta.get('version') if isinstance(meta, dict) else meta!r} "
                        f"(this program reads version {FORMAT_VERSION})")
    dim = PATCH * PATCH + 39
    if desc.ndim != 2 or desc.shape[1] != dim or len(desc) != len(faces) or meta.get("descriptor") != f"patch{PATCH}+colour":
        raise UserError(f"{path}: descriptors of shape {desc.shape} do not fit this program (expected N x {dim}): teach again")
    kind = meta.get("kind")
    if kind not in KIND_FACES:
        raise UserError(f"{path}: unknown dice kind {kind!r}")
    counts = Counter(faces)
    per_view = ROWS_PER_VIEW
    short = [f"{f} ({counts.get(f, 0) // per_view})" for f in KIND_FACES[kind] if counts.get(f, 0) // per_view < min_views]
    if short:
        raise UserError(f"{path}: too few views of face {', '.join(short)}; teach again showing each face at least {min_views} times")
    scale = meta.get("scale")
    if not isinstance(scale, (int, float)) or not scale > 0:
        raise UserError(f"{path}: bad 'scale' {scale!r}")
    return TaughtSet(name=str(meta.get("name", path.stem)), kind=kind, descriptors=desc, faces=faces,
                     scale=float(scale), views=dict(meta.get("views", {})), created=str(meta.get("created", "")))


def load_taught_or_default(path: str | Path):
    """For the game: ``(taught_set, None)``, ``(None, None)`` when there is no file, ``(None, warning)`` when it is bad."""
    if not Path(path).exists():
        return None, None
    try:
        return load_taught(path), None
    except UserError as exc:
        return None, f"{exc}; reading dice with the standard faces"


# --------------------------------------------------------------------------------------------
# Reading with a taught set


def die_corners(die) -> np.ndarray:
    if len(die.corners) >= 4:
        return np.asarray(die.corners[:4], np.float32)
    x0, y0, x1, y1 = die.box
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], np.float32)


class TaughtReader:
    """Wraps a dice reader: it finds the dice, the taught set names their faces.

    Cocked dice stay cocked. A die whose face the taught set is not sure of makes the frame unsure.
    """

    def __init__(self, reader, taught: TaughtSet, *, sure_confidence: float = 0.6):
        self.reader = reader
        self.taught = taught
        self.sure_confidence = sure_confidence

    def read(self, frame, *, dice_kind: str = "auto", calibration=None):
        reading = self.reader.read(frame, dice_kind=dice_kind)
        if not reading.dice:
            return reading
        return relabel(reading, frame, self.taught, self.sure_confidence)


def relabel(reading, frame: np.ndarray, taught: TaughtSet, sure_confidence: float = 0.6):
    """The reading with the faces of the taught design named by the taught set; verdict and message redone.

    Dice that do not look like the taught design keep the reader's face and confidence.
    """
    dice, unsure, cocked, taught_any = [], [], [], False
    for i, d in enumerate(reading.dice):
        face, conf, familiar = taught.classify(rectify_face(frame, die_corners(d)))
        if familiar:
            taught_any = True
            d = replace(d, face=face, confidence=conf, sure=conf >= sure_confidence and not d.cocked)
        dice.append(d)
        sure = d.sure
        if d.cocked:
            cocked.append(i)
        elif not sure:
            unsure.append(i)
    if not taught_any:
        return reading
    return replace(reading, dice=tuple(dice), kind=taught.kind, probabilities=(), **_verdict(dice, unsure, cocked))


def _places(dice) -> str:
    where = [d.where for d in dice]
    if len(where) == 1:
        return f"the die at the {where[0]}"
    return f"the dice at the {', '.join(where[:-1])} and {where[-1]}"


def _verdict(dice, unsure: list[int], cocked: list[int]) -> dict:
    if cocked:
        one = len(cocked) == 1
        return {"verdict": "cocked", "unsure_dice": tuple(sorted(cocked + unsure)),
                "message": f"{_places([dice[k] for k in cocked])} {'is' if one else 'are'} cocked (not flat): "
                           f"re-roll {'it' if one else 'them'}."}
    if unsure:
        return {"verdict": "unsure", "unsure_dice": tuple(unsure),
                "message": f"Not sure about {_places([dice[k] for k in unsure])}; please check or re-roll."}
    n = len(dice)
    return {"verdict": "clear", "unsure_dice": (),
            "message": f"Read {n} {'die' if n == 1 else 'dice'}: {', '.join(d.face for d in dice)}."}
