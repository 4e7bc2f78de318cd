"""Labelled roll folders: load and validate ``labels.jsonl`` and its images.

A labelled roll folder holds ``labels.jsonl`` with one JSON object per line::

    {"image": "images/IMG_1.jpg", "faces": ["6", "4"], "boxes": [[x0, y0, x1, y1], ...]}

``boxes`` (around each whole die's top face) or ``pip_boxes`` (around only the pip pattern) are
optional and, when present, list one box per face in the same order. ``cocked`` (optional, one
true/false per face, as ``lcr-pi render --cocked`` writes it) marks dice leaning on another die or
the wall: the table re-rolls those, so the right reading of such a picture is "cocked", not a roll.

Validation happens up front so that a mistake is reported once, clearly, with the line number
and the key at fault, before any slow work starts.

>>> parse_label_line('{"image": "a.jpg", "faces": ["L", "dot"]}', 1, "x/labels.jsonl").faces
('L', 'dot')
>>> parse_label_line('{"image": "a.jpg", "faces": ["7"]}', 3, "x/labels.jsonl")
Traceback (most recent call last):
...
lcr_pi.errors.UserError: x/labels.jsonl line 3: unknown face name '7' (known: 1, 2, 3, 4, 5, 6, L, C, R, dot, W)
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from lcr_pi.errors import UserError

PIP_FACES = ("1", "2", "3", "4", "5", "6")
LCR_FACES = ("L", "C", "R", "dot", "W")
FACE_NAMES = PIP_FACES + LCR_FACES
#: The faces of each kind of dice a table names (``--kind``): Wild dice have the W that LCR dice lack.
KIND_FACES = {"pip": PIP_FACES, "lcr": ("L", "C", "R", "dot"), "wild": LCR_FACES}

Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class LabelledImage:
    """One labelled photo: its path, the top faces, and optional boxes.

    ``box_kind`` says what the boxes surround: ``"die"`` (whole top face), ``"pip"`` (only the
    pip pattern) or ``None`` (no boxes).
    """

    image_path: Path
    faces: tuple[str, ...]
    boxes: tuple[Box, ...] | None
    box_kind: str | None
    line_number: int
    cocked: tuple[bool, ...] = ()  # per face, when the labels say which dice lean; () when they do not

    @property
    def leaning(self) -> bool:
        """Whether a die in the picture leans on another or on the wall (the table re-rolls it)."""
        return any(self.cocked)


def _parse_boxes(value, key: str, n_faces: int, where: str) -> tuple[Box, ...]:
    if not isinstance(value, list):
        raise UserError(f"{where}: '{key}' must be a list of [x0, y0, x1, y1] boxes")
    if len(value) != n_faces:
        raise UserError(f"{where}: '{key}' has {len(value)} boxes but 'faces' has {n_faces} faces")
    boxes = []
    for i, box in enumerate(value):
        if (
            not isinstance(box, list)
            or len(box) != 4
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and abs(v) < 1e9 for v in box)
        ):
            raise UserError(f"{where}: '{key}' box {i + 1} must be four numbers of pixels [x0, y0, x1, y1]")
        x0, y0, x1, y1 = (float(v) for v in box)
        if not (x1 > x0 and y1 > y0):
            raise UserError(f"{where}: '{key}' box {i + 1} is empty or inverted: {box}")
        boxes.append((x0, y0, x1, y1))
    return tuple(boxes)


def parse_label_line(text: str, line_number: int, labels_name: str, folder: Path | None = None) -> LabelledImage:
    """Parse and validate one line of ``labels.jsonl`` (``line_number`` counts from 1)."""
    where = f"{labels_name} line {line_number}"
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"{where}: bad JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise UserError(f"{where}: bad JSON (nested too deep)") from None
    if not isinstance(record, dict):
        raise UserError(f"{where}: expected a JSON object, got {type(record).__name__}")
    image = record.get("image")
    if not isinstance(image, str) or not image:
        raise UserError(f"{where}: missing 'image' (a path relative to the folder)")
    faces = record.get("faces")
    if not isinstance(faces, list) or not all(isinstance(f, str) for f in faces):
        raise UserError(f"{where}: 'faces' must be a list of face names")
    for face in faces:
        if face not in FACE_NAMES:
            raise UserError(f"{where}: unknown face name {face!r} (known: {', '.join(FACE_NAMES)})")
    boxes, box_kind = None, None
    if "boxes" in record and record["boxes"] is not None:
        boxes, box_kind = _parse_boxes(record["boxes"], "boxes", len(faces), where), "die"
    elif "pip_boxes" in record and record["pip_boxes"] is not None:
        boxes, box_kind = _parse_boxes(record["pip_boxes"], "pip_boxes", len(faces), where), "pip"
    cocked = record.get("cocked")
    if cocked is None:
        cocked = ()
    elif not isinstance(cocked, list) or not all(isinstance(c, bool) for c in cocked):
        raise UserError(f"{where}: 'cocked' must be a list of true/false, one per face")
    elif len(cocked) != len(faces):
        raise UserError(f"{where}: 'cocked' has {len(cocked)} values but 'faces' has {len(faces)} faces")
    path = Path(image) if folder is None else folder / image
    return LabelledImage(path, tuple(faces), boxes, box_kind, line_number, tuple(cocked))


def load_roll_folder(folder: str | os.PathLike) -> list[LabelledImage]:
    """Read and validate a labelled roll folder; every listed image must exist.

    Raises :class:`UserError` naming the folder, line and key for any problem.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise UserError(f"{folder}: not a folder")
    labels = folder / "labels.jsonl"
    if not labels.is_file():
        raise UserError(f"{folder}: missing labels.jsonl (one JSON object per image)")
    try:
        text = labels.read_text(encoding="utf-8-sig")  # found by an audit: a BOM (Notepad) was "bad JSON" at line 1
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{labels}: cannot read ({exc})") from None
    items = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        item = parse_label_line(line, number, str(labels), folder)
        try:
            is_file = item.image_path.is_file()
        except OSError as exc:  # a name too long for the file system, and the like
            raise UserError(f"{labels} line {number}: image {str(item.image_path)[:80]}... cannot be looked up "
                            f"({exc.strerror or exc})") from None
        if not is_file:
            what = "is not a file" if item.image_path.exists() else "is missing"
            raise UserError(f"{labels} line {number}: image {item.image_path} {what}")
        items.append(item)
    if not items:
        raise UserError(f"{labels}: no labelled images")
    return items


def labelled_kind(items) -> str:
    """The kind of dice a folder's labels show, as a night's settings would name it: "pip" when every
    face is 1-6, "wild" when they are LCR faces with a W, "lcr" when LCR faces without; "auto" (the
    frame decides) when both kinds appear, or no face at all. A lone die showing one pip is an LCR dot
    or a pip 1 alike to the camera: the labels say which the table plays.

    >>> def photo(*faces):
    ...     return parse_label_line(json.dumps({"image": "a.jpg", "faces": faces}), 1, "x/labels.jsonl")
    >>> labelled_kind([photo("1", "6")]), labelled_kind([photo("dot", "L")]), labelled_kind([photo("W", "C")])
    ('pip', 'lcr', 'wild')
    >>> labelled_kind([photo("1"), photo("W", "C")]), labelled_kind([])
    ('auto', 'auto')
    """
    faces = {face for item in items for face in item.faces}
    if not faces:
        return "auto"
    if faces <= set(PIP_FACES):
        return "pip"
    if faces <= set(LCR_FACES):
        return "wild" if "W" in faces else "lcr"
    return "auto"


def read_image(path: str | os.PathLike) -> np.ndarray:
    """Read an image file as a BGR uint8 array, or raise UserError naming the file.

    OpenCV returns ``None`` (not an exception) for unreadable files; a truncated JPEG may decode
    partly with a warning, which we accept as the camera would give us the same pixels.
    """
    import cv2

    path = Path(path)
    try:
        data = np.fromfile(str(path), dtype=np.uint8)
    except OSError as exc:
        raise UserError(f"{path}: cannot read image ({exc.strerror or exc})") from None
    if data.size == 0:
        raise UserError(f"{path}: image file is empty")
    image = cv2.imdecode(data, cv2.IMREAD_COLOR)
    if image is None or image.size == 0:
        raise UserError(f"{path}: not a readable image (corrupt, truncated or unknown format)")
    return image


@dataclass(frozen=True)
class LabelCorrection:
    """One die whose label is wrong, checked by eye: in ``folder`` (a path suffix such as
    ``nell-byler-d6/test``), ``image``'s die number ``die`` (from 1, in label order) is labelled
    ``labelled`` but shows ``face``; ``why`` says what the photo shows. A die the labels leave out
    has ``die`` 0, ``labelled`` None and its ``box`` (of the kind the folder's labels use)."""

    folder: str
    image: str
    die: int
    labelled: str | None
    face: str
    why: str
    box: Box | None = None


def load_corrections(path: str | os.PathLike) -> list[LabelCorrection]:
    """Read a JSON list of label corrections, or raise UserError naming the file, entry and key.

    >>> import tempfile
    >>> bad = Path(tempfile.mkdtemp()) / "c.json"
    >>> _ = bad.write_text('[{"folder": "a/test", "image": "x.jpg", "die": 0, "labelled": "5", "face": "6", "why": "w"}]')
    >>> load_corrections(bad)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    lcr_pi.errors.UserError: ...c.json entry 1: 'die' must be a die number from 1, got 0
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UserError(f"{path}: cannot read label corrections ({exc.strerror or exc})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"{path}: label corrections are not valid JSON ({exc})") from None
    if not isinstance(data, list):
        raise UserError(f"{path}: label corrections must be a JSON list of objects")
    out = []
    for n, entry in enumerate(data, start=1):
        where = f"{path} entry {n}"
        if not isinstance(entry, dict):
            raise UserError(f"{where}: expected an object")
        missing = entry.get("missing") is True
        for key in ("folder", "image", "face", "why") + (() if missing else ("labelled",)):
            if not isinstance(entry.get(key), str) or not entry[key]:
                raise UserError(f"{where}: missing '{key}' (text)")
        for key in ("face",) + (() if missing else ("labelled",)):
            if entry[key] not in FACE_NAMES:
                raise UserError(f"{where}: '{key}' is not a face name: {entry[key]!r}")
        if missing:
            box = _parse_boxes([entry.get("box")], "box", 1, where)[0]
            out.append(LabelCorrection(entry["folder"], entry["image"], 0, None, entry["face"], entry["why"], box))
            continue
        die = entry.get("die")
        if not isinstance(die, int) or isinstance(die, bool) or die < 1:
            raise UserError(f"{where}: 'die' must be a die number from 1, got {die!r}")
        out.append(LabelCorrection(entry["folder"], entry["image"], die, entry["labelled"], entry["face"], entry["why"]))
    return out


def _path_ends_with(path: str, suffix: str) -> bool:
    """Whether the posix ``path`` ends with the whole path parts of ``suffix``.

    >>> _path_ends_with("/data/nell/test", "nell/test"), _path_ends_with("/data/xnell/test", "nell/test")
    (True, False)
    """
    path, suffix = path.rstrip("/"), suffix.strip("/")
    return path == suffix or path.endswith("/" + suffix)


def _labelled_at(item: LabelledImage, box: Box) -> bool:
    """Whether a labelled die of ``item`` has its box centre inside ``box``."""
    return any(box[0] <= (b[0] + b[2]) / 2 <= box[2] and box[1] <= (b[1] + b[3]) / 2 <= box[3] for b in item.boxes or ())


def apply_corrections(items: list[LabelledImage], corrections: list[LabelCorrection], folder: str | os.PathLike):
    """Return ``(items with the corrections for this folder applied, applied, stale)``.

    A correction applies when ``folder`` ends with its ``folder`` and its image's die still carries
    the wrong label (or, for a missing die, no labelled die has its centre in the box); one whose
    label no longer says ``labelled`` (fixed upstream, or another file) is returned as stale and
    changes nothing.

    >>> item = LabelledImage(Path("d/test/images/a.jpg"), ("5", "2"), None, None, 1)
    >>> fix = LabelCorrection("d/test", "images/a.jpg", 1, "5", "6", "six pips")
    >>> fixed, applied, stale = apply_corrections([item], [fix], "data/d/test")
    >>> fixed[0].faces, len(applied), len(stale)
    (('6', '2'), 1, 0)
    """
    folder = Path(folder).resolve().as_posix()
    mine = [c for c in corrections if _path_ends_with(folder, c.folder)]
    applied, stale, out = [], [], list(items)
    for c in mine:
        for k, item in enumerate(out):
            if _path_ends_with(item.image_path.as_posix(), c.image):
                if c.die == 0 and not _labelled_at(item, c.box):
                    out[k] = replace(item, faces=item.faces + (c.face,),
                                     boxes=None if item.boxes is None else item.boxes + (c.box,),
                                     cocked=item.cocked + (False,) if item.cocked else ())
                    applied.append(c)
                elif c.die and c.die <= len(item.faces) and item.faces[c.die - 1] == c.labelled:
                    faces = list(item.faces)
                    faces[c.die - 1] = c.face
                    out[k] = replace(item, faces=tuple(faces))
                    applied.append(c)
                else:
                    stale.append(c)
                break
        else:
            stale.append(c)
    return out, applied, stale
