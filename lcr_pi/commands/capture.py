"""``lcr-pi capture OUT``: save settled camera frames as a labelled roll folder, asking for the faces.

Each time the dice come to rest the reader's guess is shown ready to accept; type the faces instead
when it is wrong (``L C dot``, ``6 4 1``), ``s`` to skip the roll, ``q`` to stop. A ``*`` after a
face marks a die that leans on another or on the wall (``L C* dot``; the guess shows the dice the
reader thinks may lean that way): ``eval`` then judges that picture apart, by whether the reader
said "cocked" rather than announcing a roll. The folder then
measures the reader on your own dice: ``lcr-pi eval OUT``. Format: ``../shared/data/README.md``
(``images/NNNN.jpg`` and ``labels.jsonl``); the labels carry no boxes (the reader's boxes would
grade the reader by its own answer), so ``eval`` matches dice by their faces.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from lcr_pi.errors import UserError
from lcr_pi.persist import check_writable
from lcr_pi.settings import CALIBRATION_DIR
from lcr_pi.vision.dataset import KIND_FACES, PIP_FACES

HELP = "Save settled camera frames into a labelled roll folder, asking for the faces (for lcr-pi eval)."

#: A camera that gives no frame for this long ends the capture (unplugged, or a webcam that opens but
#: sends nothing); the rolls saved so far are kept.
NO_FRAME_SECONDS = 10.0

FACE_WORDS = {"l": "L", "left": "L", "c": "C", "centre": "C", "center": "C", "r": "R", "right": "R",
              "dot": "dot", ".": "dot", "w": "W", "wild": "W"}
# Not "star": some dice show the centre's C as a star, others the wild face; the player names which
# (found by a review: "star" was saved as a W, silently, for dice whose C is a star).
STOP_WORDS, SKIP_WORDS = ("q", "quit", "stop"), ("s", "skip")


def add_arguments(parser) -> None:
    parser.add_argument("out", metavar="OUT", help="folder to write (created; an existing one is added to)")
    parser.add_argument("--camera", metavar="SOURCE", default="auto",
                        help="frame source: auto, picamera2, webcam:N, a video file or a folder (default: auto)")
    parser.add_argument("--kind", choices=["auto", "pip", "lcr", "wild"], default="auto", help="which dice are rolled")
    parser.add_argument("--calibration", default=str(CALIBRATION_DIR / "table.json"),
                        help="tray calibration, if made (default: %(default)s)")
    parser.add_argument("--models", default=None, help="folder with the reader's model files")
    parser.add_argument("--limit", type=int, default=None, help="stop after N saved rolls")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=960)


def parse_roll(text: str, kind: str = "auto") -> tuple[tuple[str, ...], tuple[bool, ...]]:
    """Typed faces -> (face names, which dice lean), or a UserError naming the word that is not a
    face, or a face that is not on the dice of ``kind``; a ``*`` after a face marks a leaning die.
    The dice of one roll are of one kind: a roll mixing pip and LCR faces is refused (found by an
    audit: "R . 1" was saved as a pip 1 beside an LCR R, and eval then read the whole folder as of
    no kind).

    >>> parse_roll("l c* Dot")
    (('L', 'C', 'dot'), (False, True, False))
    >>> parse_roll("6, 4 1")[0]
    ('6', '4', '1')
    """
    faces, leaning = [], []
    for word in text.replace(",", " ").split():
        w = word.strip().lower()
        leans = w.endswith("*") and len(w) > 1
        w = w[:-1] if leans else w
        if w in {"1", "2", "3", "4", "5", "6"}:
            faces.append(w)
        elif w in FACE_WORDS:
            faces.append(FACE_WORDS[w])
        elif w == "star":
            raise UserError("'star' is not a face: type C for a centre face shown as a star, or W for the wild face")
        else:
            raise UserError(f"{word!r} is not a face (1-6, L, C, R, dot, W; a * after a face marks a leaning die; "
                            "s skips the picture, q stops)")
        leaning.append(leans)
    wrong = [f for f in faces if kind in KIND_FACES and f not in KIND_FACES[kind]]
    if wrong:
        raise UserError(f"{wrong[0]!r} is not a face of {kind} dice (--kind {kind}: {', '.join(KIND_FACES[kind])})")
    pips, letters = [f for f in faces if f in PIP_FACES], [f for f in faces if f not in PIP_FACES]
    if pips and letters:
        raise UserError(f"{pips[0]!r} is a pip face and {letters[0]!r} an LCR one: the dice of a roll are of one kind "
                        f"(an LCR die's dot is 'dot' or '.')")
    return tuple(faces), tuple(leaning)


def _shown(faces, leaning) -> str:
    return " ".join(f + ("*" if lean else "") for f, lean in zip(faces, leaning))


def next_index(images: Path, labels: Path | None = None) -> int:
    """The number of the next picture: after every ``NNNN.jpg`` in ``images`` and every one that
    ``labels`` names (found by an audit: a labelled picture deleted by hand was the next roll's name,
    and its old label then graded the new picture, silently)."""
    names = [p.name for p in images.glob("*.jpg")]
    if labels is not None and labels.is_file():
        for line in labels.read_text(encoding="utf-8-sig", errors="replace").splitlines():
            try:
                image = json.loads(line).get("image")
            except (ValueError, AttributeError, RecursionError):  # a torn line, or not a label
                continue
            if isinstance(image, str) and Path(image).parent == Path("images"):
                names.append(Path(image).name)
    stems = [Path(n).stem for n in names if n.endswith(".jpg")]
    taken = [int(stem) for stem in stems if stem.isascii() and stem.isdigit()]
    return max(taken, default=-1) + 1


def capture(source, read, out, *, ask=input, say=print, limit=None, settle=None, kind="auto") -> int:
    """The capture loop over any frame source; ``read(frame)`` gives the reader's guess (or None).

    Returns the number of saved rolls. ``ask(prompt)`` returns the typed line (EOFError ends).
    """
    import cv2

    from lcr_pi.vision.settle import SettleDetector

    out = Path(out)
    images = out / "images"
    labels = out / "labels.jsonl"
    try:  # before the first roll is asked for, not after a player typed it
        images.mkdir(parents=True, exist_ok=True)
        if labels.exists() and not labels.is_file():
            raise UserError(f"{labels} is not a file: give another folder to capture into")
        check_writable(labels, "the labels")
        # A read-only images folder or labels.jsonl, too (found by an audit: named only once the first
        # roll's faces were typed, the latter after its picture was saved).
        index = next_index(images, labels)
        check_writable(images / f"{index:04d}.jpg", "the pictures")
    except OSError as exc:
        raise UserError(f"cannot capture into {out} ({exc.strerror or exc})") from None
    try:
        if labels.exists():
            labels.open("ab").close()
    except OSError as exc:
        raise UserError(f"cannot add to {labels} ({exc.strerror or exc})") from None
    settle = settle or SettleDetector()
    saved = 0
    last_frame = time.monotonic()
    while limit is None or saved < limit:
        frame = source.read()
        if frame is None:
            if getattr(source, "exhausted", False):
                break
            if time.monotonic() - last_frame >= NO_FRAME_SECONDS:
                # Found by an audit: an unplugged webcam kept the capture spinning a core, silent, forever.
                say(f"the camera gave no frames for {NO_FRAME_SECONDS:g} s: is it plugged in? Stopping.")
                break
            time.sleep(0.01)
            continue
        last_frame = time.monotonic()
        update = settle.update(frame, at=getattr(source, "frame_time", None))
        if update.state != "settled":
            continue
        try:
            reading = read(update.frame) if read is not None else None
        except UserError as exc:  # the guess is a help only: the player types the faces
            say(f"no guess for this picture ({exc})")
            reading = None
        guess = tuple(reading.faces) if reading is not None else ()
        guess_leaning = tuple(bool(getattr(d, "cocked", False)) for d in reading.dice) if reading is not None else ()
        note = f" ({reading.verdict}: {reading.message})" if reading is not None and reading.verdict != "clear" else ""
        while True:
            try:
                typed = ask(f"Roll {saved + 1}: faces [{_shown(guess, guess_leaning)}]{note} "
                            f"(Enter accepts, s skips, q stops; * after a face: that die leans): ")
            except EOFError:
                say("")  # the summary after it starts on a line of its own, not on the prompt's
                return saved
            typed = typed.strip()
            if typed.lower() in STOP_WORDS:
                return saved
            if typed.lower() in SKIP_WORDS:
                faces = None
                break
            try:
                faces, leaning = parse_roll(typed, kind) if typed else (guess, guess_leaning)
            except UserError as exc:
                say(str(exc))
                continue
            if not faces:
                say("no faces given: type them, or s to skip")
                continue
            break
        last_frame = time.monotonic()  # the time the faces were typed in is no camera's silence
        if faces is None:
            continue
        name = f"images/{index:04d}.jpg"
        if not cv2.imwrite(str(out / name), update.frame, [cv2.IMWRITE_JPEG_QUALITY, 95]):
            raise UserError(f"could not write {out / name}")
        record = {"image": name, "faces": list(faces), "reader": list(guess)}
        if any(leaning):
            record["cocked"] = list(leaning)
        try:
            with labels.open("a+b") as f:
                line = (json.dumps(record) + "\n").encode("utf-8")
                # A line torn by a power cut is left as it is; ours starts on a line of its own.
                if f.seek(0, 2) > 0:
                    f.seek(-1, 2)
                    if f.read(1) != b"\n":
                        line = b"\n" + line
                f.write(line)
        except OSError as exc:
            raise UserError(f"cannot write {labels} ({exc.strerror or exc})") from None
        counted = ""
        if guess and len(faces) != len(guess):
            # The player's count is kept (the reader may have missed or added a die), but said beside the
            # reader's, so that a die left out of the typed faces is caught now (found by an audit).
            counted = (f" ({len(faces)} {'face' if len(faces) == 1 else 'faces'} typed; the reader found "
                       f"{len(guess)} {'die' if len(guess) == 1 else 'dice'}: check the roll if one was left out)")
        say(f"saved {name}: {_shown(faces, leaning)}{counted}")
        index += 1
        saved += 1
    return saved


def run(args) -> int:
    if args.limit is not None and args.limit < 1:  # found by an audit: 0 opened the camera to save no roll
        raise UserError(f"--limit must be 1 or more rolls, not {args.limit}")
    from lcr_pi.camera import open_frame_source
    from lcr_pi.vision.calibration import CalibratedReader, load_calibration_or_default, load_reference_or_none
    from lcr_pi.vision.reader import DiceReader

    try:
        reader = DiceReader(args.models)
    except UserError as exc:
        print(f"note: {exc}; you will type every roll's faces")
        reader = None
    from lcr_pi.vision.settle import SettleDetector

    cal, warning = load_calibration_or_default(args.calibration)
    if warning:
        print(f"note: {warning}")
    # The Pi camera locked as the game locks it (exposure and white balance from the calibration):
    # the rolls measure the reader on the pictures a night reads (found by an audit: captured with
    # automatic exposure, they were not).
    controls = (cal.camera_controls or None) if cal is not None else None
    source = open_frame_source(args.camera, width=args.width, height=args.height, controls=controls)
    settle = (SettleDetector(region=cal.tray, die_px=cal.die_px, size=cal.resolution) if cal is not None
              else SettleDetector())
    read = None
    if reader is not None:
        reference, warning = load_reference_or_none(cal, args.calibration)
        if warning:
            print(f"note: {warning}")
        wrapped = CalibratedReader(reader, cal, reference)
        read = lambda frame: wrapped.read(frame, dice_kind=args.kind)  # noqa: E731
    print("Roll the dice; each roll is saved when they come to rest.")

    def ask(prompt):
        print(prompt, end="", flush=True)
        line = sys.stdin.readline()
        if not line:
            raise EOFError
        return line

    try:
        n = capture(source, read, args.out, ask=ask, limit=args.limit, settle=settle, kind=args.kind)
    finally:
        source.close()
    print(f"{n} rolls saved in {args.out}; measure the reader with: lcr-pi eval {args.out}")
    return 0
