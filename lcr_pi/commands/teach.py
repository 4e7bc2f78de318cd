"""``lcr-pi teach --name DESIGN``: teach the reader your own dice (a star for C, LEFT/RIGHT, odd colours).

From the camera: the program first asks for the empty tray (what is found there, clutter beside the
tray, is then not taken for your die), then for each face asks you to put one die in the tray
showing that face, a few times (turn it between views), pressing Enter each time; typing ``back``
(or ``undo``) and Enter takes the last view back (a wrong face shown, a blurred view). From a folder: a
labelled roll folder (``../shared/data/README.md`` format) of your dice; labels with ``corners`` or ``boxes`` are
used as they are, otherwise the reader finds the single die in each picture; ``--empty IMAGE``, a
picture of the empty tray from the same camera, does for a folder what the camera's empty tray does
(each die, labelled or not, is then measured as what changed since).
The taught set goes to ``calibration/teach-DESIGN.npz``; the game uses it when present.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from lcr_pi.errors import UserError
from lcr_pi.persist import check_writable
from lcr_pi.settings import CALIBRATION_DIR

HELP = "Teach the reader a dice design from a few views of each face (camera or a labelled folder)."


def add_arguments(parser) -> None:
    src = parser.add_mutually_exclusive_group()
    src.add_argument("--camera", metavar="SOURCE", default=None,
                     help="frame source: auto, picamera2, webcam:N, a video file or a folder (default: auto)")
    src.add_argument("--folder", metavar="DIR", default=None, help="a labelled roll folder of the dice instead")
    parser.add_argument("--empty", metavar="IMAGE", default=None,
                        help="with --folder: a picture of the empty tray from the same camera; what is found there is not "
                             "taken for a die, and each die is measured as what changed since (from the camera it is asked for)")
    parser.add_argument("--name", required=True, help="a name for the dice design, e.g. star-dice")
    parser.add_argument("--out", default=None,
                        help=f"where to save (default: {CALIBRATION_DIR}/teach-NAME.npz, where lcr-pi run looks unless [reader] teach names another file)")
    parser.add_argument("--kind", choices=["pip", "lcr", "wild"], default=None,
                        help="which faces the dice have (default: lcr from the camera, guessed from a folder)")
    parser.add_argument("--views", type=int, default=5, help="views of each face to take from the camera (default: %(default)s)")
    parser.add_argument("--models", default=None, help="folder with the reader's model files")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=960)


def _corners_from_box(box):
    x0, y0, x1, y1 = box
    return [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]


def single_die_outline(faces: Sequence[ArrayLike]) -> np.ndarray | None:
    """The rough outline of the one die shown, from the outlines of the top faces the reader found
    (four corner points each), or None when it finds none or several dice.

    The reader may find one die more than once (its top face and a side, or a mark on it): faces
    whose centres lie within one and a half sides of each other count as one die, outlined by a square
    around all of them (teaching finds the face inside it). Faces further apart are several dice.

    >>> one, side = ((10, 10), (30, 10), (30, 30), (10, 30)), ((28, 12), (40, 12), (40, 28), (28, 28))
    >>> single_die_outline([one, side]).tolist()
    [[10.0, 5.0], [40.0, 5.0], [40.0, 35.0], [10.0, 35.0]]
    >>> single_die_outline([one, ((100, 10), (120, 10), (120, 30), (100, 30))]) is None
    True
    """
    from lcr_pi.vision.teach import mean_side

    if not faces:
        return None
    quads = [np.asarray(face, np.float64).reshape(4, 2) for face in faces]
    sides = [mean_side(q) for q in quads]
    centres = np.array([q.mean(0) for q in quads])
    span = 1.5 * max(sides)
    if float(np.linalg.norm(centres[:, None] - centres[None], axis=2).max()) > span:
        return None
    pts = np.concatenate(quads)
    (x0, y0), (x1, y1) = pts.min(0), pts.max(0)
    cx, cy, half = (x0 + x1) / 2, (y0 + y1) / 2, max(x1 - x0, y1 - y0) / 2
    return np.array([[cx - half, cy - half], [cx + half, cy - half], [cx + half, cy + half], [cx - half, cy + half]])


def already_there(reader, empty) -> list[tuple[float, float, float]]:
    """Where something is found in a picture of the empty tray, before any die is shown: ``(x, y,
    side)`` of each of the detector's finds, weak ones too (of the reader's dice, for a reader
    without a detector of its own, ``find_dice``). :func:`die_shown` leaves such finds out.

    Found at dev table 705 of ``benchmarks/bench_teach_table.py`` (2026-12-03): a domino on the
    table beyond the round tray's rim, in a corner of every picture, was found surely (score
    0.41-0.55) and kept by the reader as one or two unsure dice beside the die shown, so 78 of the
    80 teaching pictures were refused as showing more than one die; the empty tray shows it too.
    """
    from lcr_pi.vision.teach import die_corners, mean_side

    if hasattr(reader, "find_dice"):
        return [(float(d.cx), float(d.cy), float(d.side)) for d in reader.find_dice(empty) or []]
    quads = [die_corners(d) for d in reader.read(empty).dice]
    return [(*map(float, q.mean(0)), mean_side(q)) for q in quads]


def _was_there(x: float, y: float, side: float, there) -> bool:
    """Whether a find at (x, y), ``side`` across, is one of ``there`` (:func:`already_there`): its
    middle within half that find's side of it and its size within a half of it either way.

    >>> _was_there(592, 455, 44, [(592, 454, 44)]), _was_there(592, 455, 20, [(592, 454, 44)])
    (True, False)
    >>> _was_there(560, 454, 44, [(592, 454, 44)])
    False
    """
    return any(np.hypot(x - tx, y - ty) < ts / 2 and ts / 1.5 <= side <= ts * 1.5 for tx, ty, ts in there)


#: The detector score a find needs for a teaching picture's die to be outlined from the detector's finds
#: when the reader keeps no die (:func:`die_shown`), if the reader's own sure score is lower. Measured
#: 2026-12-05 with the seventh round's models: in the 720 teaching pictures of bench_teach_table.py's
#: tables 1-3 such dice were found at 0.49-0.66 (9 pictures, 3 of them with no find at all), while a
#: phone beside dev table 101's empty tray was found at 0.33, over the reader's sure score of 0.3, and
#: was outlined as a die shown when no picture of the empty tray was given.
OUTLINE_FROM_FINDS = 0.45


def die_shown(reader, frame, *, dice_kind: str = "auto", there=()):
    """``(outline, dice)`` of a teaching picture: the rough outline of the one die shown (None when
    the picture shows no die or several, see :func:`single_die_outline`) and the reader's dice.

    ``there`` (:func:`already_there` of a picture of the empty tray) is what was found before any die
    was shown: clutter beside the tray that the reader takes for dice. Those finds, and the
    reader's dice on them, are left out, and the dice returned are the others.

    Teaching is for dice the reader's classifier does not know, and it may take such a die for no
    die at all: measured 2026-12-03 (sixth-round classifier), the violet LEFT/RIGHT faces of
    ``benchmarks/bench_teach_table.py`` were found by the detector on their top (score 0.48-0.74)
    and called background (0.90-1.0), so the reader kept nothing and the player was asked again.
    When the reader keeps no die, the detector's own finds outline the die instead, if one of them
    is found surely (at least the reader's sure detector score and :data:`OUTLINE_FROM_FINDS`) and
    all of them, the weak ones too, lie together: a find anywhere else (a phone beside the tray, a
    second die) still refuses the picture, and a picture where the detector finds nothing surely
    stays refused. A reader without a detector of its own (``find_dice``) is taken at its word.

    >>> from types import SimpleNamespace as Thing
    >>> from lcr_pi.vision.detect import Detection
    >>> from lcr_pi.vision.reader import Reading, ReaderSettings
    >>> def reader(*finds):
    ...     return Thing(read=lambda frame, dice_kind: Reading((), "no_dice"), settings=ReaderSettings(sure_detection=0.25),
    ...                  find_dice=lambda frame: list(finds))
    >>> die, its_side = Detection(100, 100, 40, 40, 0.0, 0.6), Detection(100, 135, 40, 30, 0.0, 0.12)
    >>> die_shown(reader(die, its_side), None)[0].tolist()
    [[65.0, 80.0], [135.0, 80.0], [135.0, 150.0], [65.0, 150.0]]
    >>> clutter = Detection(300, 100, 40, 40, 0.0, 0.5)
    >>> die_shown(reader(die, clutter), None)[0] is None  # something else, apart
    True
    >>> die_shown(reader(die, clutter), None, there=[(300, 101, 40)])[0].tolist()  # ... that was there before
    [[80.0, 80.0], [120.0, 80.0], [120.0, 120.0], [80.0, 120.0]]
    >>> die_shown(reader(Detection(100, 100, 40, 40, 0.0, 0.2)), None)[0] is None  # nothing found surely
    True
    """
    from lcr_pi.vision.teach import die_corners, mean_side

    def new(quad) -> bool:
        quad = np.asarray(quad, np.float64).reshape(4, 2)
        return not _was_there(*quad.mean(0), mean_side(quad), there)

    dice = tuple(d for d in reader.read(frame, dice_kind=dice_kind).dice if new(die_corners(d)))
    if dice or not hasattr(reader, "find_dice"):
        return single_die_outline([die_corners(d) for d in dice]), dice
    finds = [d for d in reader.find_dice(frame) or [] if new(d.corners())]
    if not any(d.score >= max(reader.settings.sure_detection, OUTLINE_FROM_FINDS) for d in finds):
        return None, dice
    return single_die_outline([d.corners() for d in finds]), dice


def _checked_corners(value, where: str) -> list:
    """A label's ``corners``: per face, four [x, y] points of finite pixel numbers; else a UserError
    naming the line (found by an audit: such labels raised numpy errors deep in the teaching)."""
    ok = all(isinstance(quad, list) and len(quad) == 4 and all(
        isinstance(p, list) and len(p) == 2 and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and abs(v) < 1e9 and v == v for v in p)
        for p in quad) for quad in value)
    if not ok:
        raise UserError(f"{where}: 'corners' must give each face four [x, y] points in pixels")
    return value


def examples_from_folder(folder, reader=None, empty: np.ndarray | None = None) -> dict:
    """Context crops of the faces in a labelled roll folder, ``{face: [crop, ...]}``; ``empty`` is a
    picture of the empty tray from the same camera, or None (see :func:`examples_from_camera`)."""
    from lcr_pi.vision.dataset import load_roll_folder, read_image
    from lcr_pi.vision.teach import face_context, view_context

    folder = Path(folder)
    items = load_roll_folder(folder)
    there = already_there(reader, empty) if reader is not None and empty is not None else ()
    told_other_size = False
    corners_by_line = {}
    for number, line in enumerate((folder / "labels.jsonl").read_text(encoding="utf-8-sig").splitlines(), start=1):
        if line.strip():
            record = json.loads(line)
            if isinstance(record.get("corners"), list):
                corners_by_line[number] = _checked_corners(record["corners"], f"{folder / 'labels.jsonl'} line {number}")
    examples: dict[str, list] = {}
    for item in items:
        image = read_image(item.image_path)
        same_camera = empty is not None and empty.shape == image.shape
        if empty is not None and not same_camera and not told_other_size:
            told_other_size = True
            print(f"note: {item.image_path.name} is {image.shape[1]}x{image.shape[0]} and the empty tray "
                  f"{empty.shape[1]}x{empty.shape[0]}; pictures of another size are not compared with it")
        corners = corners_by_line.get(item.line_number)
        labelled = True
        if corners is not None and len(corners) == len(item.faces):
            quads = corners
        elif item.boxes is not None and item.box_kind == "die":
            quads = [_corners_from_box(b) for b in item.boxes]
        elif reader is not None and len(item.faces) == 1:
            labelled = False
            try:
                outline, _ = die_shown(reader, image, there=there if same_camera else ())
            except UserError as exc:  # a picture the reader refuses (too small): which one
                raise UserError(f"{item.image_path}: {exc}") from None
            if outline is None:
                print(f"note: {item.image_path.name}: the reader did not see exactly one die; skipped")
                continue
            quads = [outline]
        else:
            print(f"note: {item.image_path.name}: no corners or boxes and not a single die; skipped")
            continue
        for face, quad in zip(item.faces, quads):
            # A labelled outline is used as it is, but for a picture the empty tray can be compared
            # with: measured without it, a die much the colour of its cloth is measured by its print
            # (a mark 0.2-0.5 of the die at dev table 708), which then replaces the label.
            view = face_context(image, quad) if labelled and not same_camera else view_context(image, quad, empty)
            examples.setdefault(face, []).append(view)
    return examples


def _newest_frame(source):
    frame = None
    for _ in range(5):  # the newest frame: drop what the camera buffered while we waited
        got = source.read()
        frame = got if got is not None else frame
    if frame is None:
        raise UserError("the camera gave no frames")
    return frame


#: Typed at a view's prompt (then Enter): the last view taken is taken back.
BACK_WORDS = ("back", "undo")


def examples_from_camera(source, reader, faces, views: int, *, ask=input, say=print) -> dict:
    """Prompted views: a picture of the empty tray (what is found there is not a die shown, see
    :func:`already_there`), then for each face ``views`` pictures of one die showing it.

    ``ask(prompt)`` returns what was typed before Enter (None or "" for nothing): ``back`` or ``undo``
    takes the last view taken back, of this face or the face before (a wrong face shown, a blurred
    view), says which, and asks for it again."""
    from lcr_pi.vision.teach import view_context

    ask("Empty the tray (no dice in it), then press Enter ")
    empty = _newest_frame(source)
    there = already_there(reader, empty)
    taken: list[tuple[str, np.ndarray]] = []
    while len(taken) < views * len(faces):
        face, k = faces[len(taken) // views], len(taken) % views
        typed = ask(f"Show the {face} face (view {k + 1} of {views}; turn the die a little each time), then press "
                    "Enter (or type back and Enter to take the last view back) ")
        if (typed or "").strip().lower() in BACK_WORDS:
            if not taken:
                say("There is no view to take back yet.")
            else:
                gone = taken.pop()[0]
                say(f"Took back view {len(taken) % views + 1} of the {gone} face; show it again.")
            continue
        frame = _newest_frame(source)
        outline, dice = die_shown(reader, frame, there=there)
        if outline is None:
            say(f"I see {'no' if not dice else 'more than one'} die; put exactly one die in the tray and try again.")
            continue
        taken.append((face, view_context(frame, outline, empty)))
    examples: dict[str, list] = {}
    for face, view in taken:
        examples.setdefault(face, []).append(view)
    return examples


def run(args) -> int:
    from lcr_pi.vision.reader import DiceReader
    from lcr_pi.vision.teach import KIND_FACES, save_taught, teach

    if not args.name.strip() or any(c in args.name for c in "/\\") or not args.name.isprintable():
        # It names the file calibration/teach-NAME.npz, where the game looks. Found by an audit: --name a/b
        # was saved as calibration/teach-a/b.npz, a folder the game never looks in, and "saved" was said.
        raise UserError(f"--name {args.name!r}: give the dice a name without '/' or '\\', e.g. star-dice "
                        f"(it is saved as {CALIBRATION_DIR}/teach-NAME.npz)")
    out = Path(args.out) if args.out else CALIBRATION_DIR / f"teach-{args.name}.npz"
    check_writable(out, "the taught dice")  # before the teaching, not after it
    if not 1 <= args.views <= 20:
        raise UserError(f"--views {args.views}: give 1 to 20 views of each face")
    if args.empty and not args.folder:
        raise UserError("--empty goes with --folder (from the camera, the empty tray is asked for first)")
    if args.folder:
        from lcr_pi.vision.dataset import read_image

        empty = read_image(args.empty) if args.empty else None
        try:
            reader = DiceReader(args.models)
        except UserError:
            reader = None  # labels with corners or boxes need no reader
        examples = examples_from_folder(args.folder, reader, empty)
    else:
        from lcr_pi.camera import open_frame_source

        reader = DiceReader(args.models)
        source = open_frame_source(args.camera or "auto", width=args.width, height=args.height)

        def ask(prompt):
            print(prompt, end="", flush=True)
            line = sys.stdin.readline()
            if not line:
                raise UserError("input ended before every face was shown")
            return line

        try:
            examples = examples_from_camera(source, reader, KIND_FACES[args.kind or "lcr"], args.views, ask=ask)
        finally:
            source.close()
    taught = teach(examples, name=args.name, kind=args.kind)
    save_taught(taught, out)
    views = ", ".join(f"{f} x{n}" for f, n in taught.views.items())
    print(f"saved {out}: {taught.kind} dice '{taught.name}', views {views}")
    dropped = [f for f in taught.views if taught.views[f] < len(examples.get(f, []))]
    if dropped:
        print(f"note: a view of face {', '.join(dropped)} looked unlike the others and was left out")
    alike = sorted({tuple(sorted((g, f))) for g, row in taught.confusion.items() for f, v in row.items() if v >= 1.0})
    if alike:
        pairs = ", ".join(f"{a} and {b}" for a, b in alike)
        print(f"note: faces {pairs} looked alike in some views; the reader will ask rather than guess between them. "
              f"Teaching again with the die turned to other spots of the tray helps.")
    return 0
