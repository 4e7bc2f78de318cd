"""``lcr-pi calibrate``: find the tray, keep an empty-tray picture, measure the dice, lock the Pi camera.

From the camera: empty the tray, press Enter (the picture of the empty tray is the reference and the
tray is found in it), then roll the dice into the tray and press Enter again (the reader measures
their size); typing ``back`` (or ``undo``) and Enter at the dice's step takes the empty tray's picture
again. From the Pi camera, a picture burnt out (light dice on a black tray, which its automatic exposure
makes too bright) is taken again at a lower exposure compensation, and one too dark at a higher one, a
stop at a time, said as it is done; ``--ev STOPS`` sets the one to begin at. From an image: the tray
and, if there are dice in it, their size come from that image;
``--empty FILE`` adds a picture of the empty tray (same camera and place) as the reference.
The reference is kept as a guide for reading (only the part of the tray that changed is read) only
when the reader sees no dice in it.
The result goes to ``calibration/table.json`` (format: ``calibration/README.md``).
"""

from __future__ import annotations

import math
import sys
import time

from lcr_pi.errors import UserError
from lcr_pi.persist import check_writable
from lcr_pi.settings import CALIBRATION_DIR

HELP = "Find the tray, measure the dice and lock the camera's exposure; save calibration/table.json."


def add_arguments(parser) -> None:
    src = parser.add_mutually_exclusive_group()
    src.add_argument("--camera", metavar="SOURCE", default=None,
                     help="frame source: auto, picamera2, webcam:N, a video file or a folder (default: auto); "
                          "a recording's first frame is taken as the empty tray and its last as the dice")
    src.add_argument("--image", metavar="FILE", default=None, help="calibrate from one picture of the tray instead")
    parser.add_argument("--empty", metavar="FILE", default=None,
                        help="with --image: a picture of the empty tray from the same camera, kept as the reference")
    parser.add_argument("--out", default=str(CALIBRATION_DIR / "table.json"),
                        help="where to save (default: %(default)s, where lcr-pi run looks unless [reader] calibration names another file)")
    parser.add_argument("--tray", metavar="x0,y0,x1,y1", default=None, help="the tray box in pixels, instead of finding it")
    parser.add_argument("--die-px", type=float, default=None, help="the dice's top-face side in pixels, instead of measuring it")
    parser.add_argument("--width", type=int, default=1280, help="camera frame width (default: %(default)s)")
    parser.add_argument("--height", type=int, default=960, help="camera frame height (default: %(default)s)")
    parser.add_argument("--models", default=None, help="folder with the reader's model files (default: the shipped models/)")
    parser.add_argument("--yes", action="store_true", help="do not wait for Enter between the steps")
    parser.add_argument("--ev", metavar="STOPS", type=float, default=None,
                        help="the Pi camera's exposure compensation to begin at, in stops (-8 to 8, negative: darker; "
                             "default 0); calibrate lowers it by itself while the pictures are overexposed, and "
                             "raises it while they are too dark")


def parse_box(text: str) -> tuple[int, int, int, int]:
    """``"10,20,300,200"`` -> (10, 20, 300, 200), or a UserError saying what is wrong.

    >>> parse_box("10, 20,300,200")
    (10, 20, 300, 200)
    """
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 4 or not all(p.isascii() and p.lstrip("-").isdigit() for p in parts):
        raise UserError(f"--tray {text!r}: write four whole numbers x0,y0,x1,y1 (pixels)")
    x0, y0, x1, y1 = (int(p) for p in parts)
    if x1 <= x0 or y1 <= y0:
        raise UserError(f"--tray {text!r}: x1 must be greater than x0 and y1 greater than y0")
    return x0, y0, x1, y1


#: A camera that gives no frame for this long is given up (a webcam that opens but sends nothing, as
#: OpenCV's /dev/video0 on a Pi whose camera is read through picamera2).
NO_FRAME_SECONDS = 10.0
#: How long a live camera's automatic exposure is given to settle before the empty tray's picture and
#: before the dice's.
EMPTY_SETTLE_SECONDS = 2.0
DICE_SETTLE_SECONDS = 1.0
#: How long the Pi camera's automatic exposure is given to settle after its exposure compensation changed.
EV_SETTLE_SECONDS = 2.0


def _settled_frame(source, seconds: float = EMPTY_SETTLE_SECONDS, *, last: bool = False):
    """A frame after the camera's automatic exposure had ``seconds`` to settle.

    A recording (a video file or a folder of frames: ``recording``) is read far faster than it was
    filmed, so its first frame is the empty tray and its last (``last``) the dice (found by an audit:
    the 2 s for the empty tray read the whole recording, and the dice step said "the camera gave no
    frames"). A live camera that gives no frame for :data:`NO_FRAME_SECONDS` is given up, rather than
    waited for without a word."""
    recording = bool(getattr(source, "recording", False))
    start = time.monotonic()
    frame = None
    while True:
        got = source.read()
        if got is not None:
            frame = got
        elif getattr(source, "exhausted", False):
            break
        else:
            time.sleep(0.01)  # no frame yet: do not spin a core
        waited = time.monotonic() - start
        if frame is not None and (not last if recording else waited >= seconds):
            break
        if frame is None and waited >= NO_FRAME_SECONDS:
            break
    if frame is None:
        if recording:
            raise UserError("the recording has no frame left for this step: it should show the empty tray first "
                            "and the dice in it last")
        raise UserError(f"the camera gave no frames in {NO_FRAME_SECONDS:g} s")
    return frame


def unfit_problem(picture, tray=None) -> str | None:
    """What makes ``picture`` no picture to calibrate from, in words; None when it is fit: blank (all one
    shade, as the reader calls a frame blank: a covered camera or the light off), overexposed or too dark
    (:func:`~lcr_pi.vision.calibration.exposure_problem`, measured on ``tray`` when given)."""
    from lcr_pi.vision.calibration import exposure_problem
    from lcr_pi.vision.reader import ReaderSettings

    if float(picture[::8, ::8].std()) < ReaderSettings().blank_std:
        return "the picture is blank (all one shade): is the camera covered or the light off?"
    return exposure_problem(picture, tray)


def refusal(name: str, problem: str) -> UserError:
    """The error that refuses the picture ``name`` for ``problem``."""
    return UserError(f"{name}: {problem}{'' if problem.endswith('?') else '.'} Nothing was saved")


def refuse_unfit(picture, name: str, tray=None):
    """``picture``, or a UserError when it is no picture to calibrate from (:func:`unfit_problem`). Found
    by audits: a blank picture was saved as the calibration ("the empty tray guides reading"), over the
    old one, the tray not found and, on the Pi, the exposure locked at what the dark gave; an
    overexposed one (a lamp too bright, the exposure not settled) was saved with a die size measured
    on burnt-out, merged dice, which steered every read of the night."""
    problem = unfit_problem(picture, tray)
    if problem:
        raise refusal(name, problem)
    return picture


def _stops(stops: float) -> str:
    """``1`` -> "one stop", ``0.5`` -> "half a stop", ``3`` -> "three stops"."""
    words = {0.5: "half a stop", 1.0: "one stop", 2.0: "two stops", 3.0: "three stops"}
    return words.get(round(stops, 6), f"{stops:g} stops")


def _no_further(problem: str, ev: float, start: float, found) -> str:
    """What is added to ``problem`` when the Pi camera's picture, taken at ``ev`` (calibrate began at
    ``start``; ``found``: each picture's exposure and problem so far), is refused though another
    exposure might have helped: the exposure is at its end, three stops from the start, or the picture
    had the opposite problem on the way (:func:`~lcr_pi.vision.calibration.opposite_exposure`)."""
    from lcr_pi.vision.calibration import EV_HIGHEST, EV_LOWEST, exposure_way, opposite_exposure

    way = exposure_way(problem)
    if not way:
        return ""
    opposite = opposite_exposure(problem, ev, found)
    if opposite is not None:
        dark, bright = (ev, opposite) if way > 0 else (opposite, ev)
        return (f". The Pi camera's picture was too dark at {dark:+g} EV and overexposed at {bright:+g} EV, so its "
                "exposure is not changed back: make the light on the tray even and steady (no lamp's bright spot on "
                "it, no light switched on or off or sunlight coming and going between the pictures), then calibrate "
                "again")
    if way < 0:
        changed, end, extreme, state, light = "lowered", EV_LOWEST, "lowest", "overexposed", "less"
        more = f"calibrate again with a lower --ev (down to {end:g})"
    else:
        changed, end, extreme, state, light = "raised", EV_HIGHEST, "highest", "too dark", "more"
        more = f"light the tray more brightly, or calibrate again with a higher --ev (up to {end:g})"
    if abs(ev - end) < 1e-6:
        return (f". Even at the Pi camera's {extreme} exposure compensation ({ev:+g} EV) it was: light the tray "
                f"{light} brightly")
    return (f". The Pi camera's exposure was {changed} by {_stops(abs(ev - start))}, to {ev:+g} EV, and the "
            f"picture was still {state}: {more}")


#: A stop higher, the automatic exposure doubles the exposure time times the gain; less than this growth
#: means it has none left to give (its longest exposure at its highest gain, in a dim room).
BRIGHTENED = 2 ** 0.5


def _still_brightening(problem: str, name: str, ev: float, last_dark: tuple | None, metadata: dict) -> tuple:
    """Refuse a picture too dark at ``ev`` (``problem``) when the last picture found too dark, at a lower
    compensation (``last_dark``: its compensation and exposure, None before any), was exposed about as
    much: ``ExposureTime`` times ``AnalogueGain`` of ``metadata`` grew by less than :data:`BRIGHTENED`.
    Raising the compensation changed nothing then, and a higher ``--ev`` would not either. Otherwise
    this picture's compensation and exposure are returned, the next one's ``last_dark``."""
    exposure = float(metadata.get("ExposureTime", 0)) * float(metadata.get("AnalogueGain", 0))
    if last_dark is not None and last_dark[0] < ev and exposure < BRIGHTENED * last_dark[1]:
        raise refusal(name, f"{problem}. The Pi camera's exposure compensation was raised to {ev:+g} EV and its "
                            "picture did not brighten: the camera is at its longest exposure and highest gain already "
                            f"(exposure {metadata.get('ExposureTime')} us, gain {metadata.get('AnalogueGain')}), so "
                            "only more light on the tray helps")
    return ev, exposure


def camera_pictures(source, tray=None, *, ask, say=print, dice_problem=None, ev=None):
    """``(empty, with_dice, controls)`` from a camera: the empty tray's picture, then the dice's, each
    after a prompt (``ask(prompt)`` returns what was typed before Enter: None or "" for nothing), and on
    the Pi the controls that lock the exposure the empty tray's picture was taken at.

    Typing ``back`` (or ``undo``, as in ``lcr-pi teach``) at the dice's prompt takes the empty tray's
    picture again (a die was left in it, a hand was over it); at the empty tray's prompt there is no
    picture yet to take back, and it is said. A recording (its first frame is the empty tray) cannot be
    taken again: that is said too. A picture unfit to calibrate from (:func:`unfit_problem`, and for
    the dice's ``dice_problem(picture)``: the reader's look at them, a problem in words or None) is
    refused at its step.

    From the Pi camera an overexposed or too dark picture is not refused at once: the automatic
    exposure's compensation is lowered or raised (:func:`~lcr_pi.vision.calibration.next_exposure`: a
    stop at a time, three times at most), and the picture taken again once the exposure has settled, as
    is said; never back towards an exposure at which a picture had the opposite problem (too dark at one,
    overexposed a stop higher: the light must change, and it is said), and not on up once a stop higher
    left the camera's exposure as it was (:func:`_still_brightening`: it is at its longest exposure and
    highest gain, in a dim room). The empty tray and the dice are
    pictured at the same compensation (the controls locked come from the empty tray's picture, and the
    dice were found fit at it), so when the dice's picture needed another one, the empty tray's is asked
    for again. ``ev``: the compensation to begin at (``--ev``), for the Pi camera only. A webcam's or a
    recording's overexposed or too dark picture is refused: lcr-pi sets no other camera's exposure.
    """
    from lcr_pi.camera import PiCameraSource
    from lcr_pi.commands.teach import BACK_WORDS
    from lcr_pi.vision.calibration import exposure_way, locked_controls, next_exposure

    recording = bool(getattr(source, "recording", False))
    pi = isinstance(source, PiCameraSource)
    if ev is not None and not pi:
        why = ("a recording's pictures are as they were filmed" if recording
               else "this camera is not the Pi camera (lcr-pi sets no other camera's exposure)")
        raise UserError(f"--ev sets the Pi camera's exposure compensation, and {why}")
    start = now = 0.0 if ev is None else float(ev)
    if ev is not None:
        source.set_exposure_value(now)  # the empty tray's picture waits for the exposure to settle
    again = "" if recording else " (or type back and Enter to take the empty tray's picture again)"
    taken: dict = {}  # "empty", "dice" -> (picture, the exposure compensation it was taken at)
    found: list = []  # (exposure compensation, problem) of every picture refused at it, both steps
    last_dark = None  # (exposure compensation, exposure time x gain) of the last picture found too dark
    controls: dict = {}

    def fit(step, name, seconds, check=None):
        """A picture fit to calibrate from at this step, at another exposure if need be (the Pi camera)."""
        nonlocal now, last_dark
        while True:
            picture = _settled_frame(source, seconds, last=step == "dice")
            problem = unfit_problem(picture, tray)
            of_dice = not problem and check is not None
            problem = problem or (check(picture) if check is not None else None)
            if not problem:
                return picture
            if pi and exposure_way(problem) > 0:
                last_dark = _still_brightening(problem, name, now, last_dark, source.camera.capture_metadata())
            after = next_exposure(problem, now, start, found) if pi else None
            if after is None:
                raise refusal(name, problem + (_no_further(problem, now, start, found) if pi else ""))
            found.append((now, problem))
            what = "the empty tray was" if step == "empty" else "the dice were" if of_dice else "the tray was"
            other = "dice" if step == "empty" else "empty"
            how = "burnt out: exposure lowered" if exposure_way(problem) < 0 else "too dark: exposure raised"
            say(f"{what} {how} by {_stops(abs(after - now))} (to {after:+g} EV), taking "
                f"{'the pictures' if other in taken else 'its picture'} again")
            source.set_exposure_value(after)
            now, seconds = after, EV_SETTLE_SECONDS

    while True:
        empty, dice = taken.get("empty"), taken.get("dice")
        if empty is None or empty[1] != now:
            step = "empty"
            prompt = ("Take the dice out of the tray, then press Enter: the empty tray's picture is taken again at "
                      f"the {'lower' if empty and now < empty[1] else 'higher'} exposure." if dice
                      else "Empty the tray, then press Enter.")
        elif dice is None or dice[1] != now:
            step = "dice"
            prompt = f"Now roll the dice into the tray{' again' if dice else ''}, then press Enter{again}."
        else:
            return empty[0], dice[0], controls
        back = (ask(prompt) or "").strip().lower() in BACK_WORDS
        if step == "empty" and back:
            say("There is no picture to take back yet." if dice is None else "There is no picture to take back now.")
        elif step == "empty":
            picture = fit("empty", "the camera's picture of the empty tray", EMPTY_SETTLE_SECONDS)
            taken["empty"] = (picture, now)
            if pi:
                controls = locked_controls(source.camera.capture_metadata())
                said = f" (exposure compensation {now:+g} EV)" if now else ""
                say(f"camera locked at exposure {controls['ExposureTime']} us, gain {controls['AnalogueGain']}, "
                    f"colour gains {controls['ColourGains']}{said}")
        elif back and recording:
            say("A recording's first frame is the empty tray: it cannot be taken again.")
        elif back:
            say("Took back the picture of the empty tray; take it again.")
            taken.clear()
        else:
            taken["dice"] = (fit("dice", "the camera's picture of the dice", DICE_SETTLE_SECONDS, dice_problem), now)


def _reader_or_none(models):
    from lcr_pi.vision.reader import DiceReader

    try:
        return DiceReader(models)
    except UserError as exc:
        print(f"note: {exc}; the die size is not measured (give --die-px)")
        return None


def run(args) -> int:
    from lcr_pi.vision.calibration import (EV_HIGHEST, EV_LOWEST, burnt_dice_problem, guides_reading, make_calibration,
                                           save_calibration)
    from lcr_pi.vision.dataset import read_image
    from lcr_pi.vision.reader import join_places

    check_writable(args.out, "the calibration")  # before the camera steps, not after them
    tray = parse_box(args.tray) if args.tray else None
    controls: dict = {}
    if args.empty and not args.image:
        raise UserError("--empty goes with --image (from the camera, the empty tray is pictured first)")
    if args.ev is not None and not (math.isfinite(args.ev) and EV_LOWEST <= args.ev <= EV_HIGHEST):
        raise UserError(f"--ev {args.ev:g}: give the Pi camera's exposure compensation in stops, {EV_LOWEST:g} to "
                        f"{EV_HIGHEST:g} (negative: darker)")
    if args.ev is not None and args.image:
        raise UserError("--ev sets the Pi camera's exposure compensation, and a picture from a file is as it was taken")
    # The empty-tray picture may guide reading only if it really is empty: a die left in it would
    # hide a die lying in the same place later. A single picture (--image without --empty) is kept
    # as the reference, dice and all, for information only: there is no empty tray to check.
    has_empty_picture = not args.image or bool(args.empty)
    reader = _reader_or_none(args.models) if args.die_px is None or has_empty_picture else None
    dice_name = args.image or "the camera's picture of the dice"
    readings = []  # the reader's reading of each picture of the dice, the last one's last

    def dice_problem(picture):
        """Light dice on a dark tray burn out while the tray stays dark (unfit_problem sees nothing):
        their size measured on burnt-out, merged dice would steer every read of the night."""
        try:
            readings.append(reader.read(picture))
        except UserError as exc:  # a picture the reader refuses: say which one
            raise UserError(f"{dice_name}: {exc}") from None
        return burnt_dice_problem(picture, readings[-1].dice)

    measuring = args.die_px is None and reader is not None
    if args.image:
        with_dice = refuse_unfit(read_image(args.image), args.image, tray)
        empty = with_dice
        if args.empty:
            empty = refuse_unfit(read_image(args.empty), args.empty, tray)
            if empty.shape != with_dice.shape:
                raise UserError(f"--empty {args.empty} is {empty.shape[1]}x{empty.shape[0]} but --image {args.image} "
                                f"is {with_dice.shape[1]}x{with_dice.shape[0]}: take both with the same camera")
        burnt = dice_problem(with_dice) if measuring else None
        if burnt:
            raise refusal(dice_name, burnt)
        source_name = f"image:{args.image}"
    else:
        from lcr_pi.camera import open_frame_source

        spec = args.camera or "auto"
        source = open_frame_source(spec, width=args.width, height=args.height)
        source_name = f"camera:{spec}"

        def ask(prompt):
            print(prompt, flush=True)
            return "" if args.yes else sys.stdin.readline()  # input ended: on as with --yes

        try:
            empty, with_dice, controls = camera_pictures(source, tray, ask=ask, ev=args.ev,
                                                         dice_problem=dice_problem if measuring else None)
        finally:
            source.close()
    reading = readings[-1] if readings else None
    if reading is not None and not reading.dice:
        print("note: no dice seen, so the die size is not measured (roll dice into the tray, or give --die-px)")
    empty_checked = False
    if has_empty_picture and reader is None:
        print("note: the reader is not available to check the empty tray, so it will not guide reading")
    elif has_empty_picture:
        try:
            empty_reading = reader.read(empty)
        except UserError as exc:
            raise UserError(f"{args.empty or args.image or 'the empty-tray picture'}: {exc}") from None
        empty_checked = guides_reading(empty_reading)
        seen = empty_reading.dice
        if not empty_checked:
            print(f"note: {len(seen)} {'die' if len(seen) == 1 else 'dice'} seen in the empty-tray picture, so it will not "
                  "guide reading (empty the tray and calibrate again)")
        elif seen:
            places = join_places(list(dict.fromkeys(d.where for d in seen)))  # each place once
            print(f"note: {len(seen)} doubtful {'find' if len(seen) == 1 else 'finds'} in the empty-tray picture, at the "
                  f"{places}, taken for the tray's own marks: where nothing changes since, nothing is read")
    cal = make_calibration(empty, tray=tray, die_px=args.die_px, reading=reading, camera_controls=controls,
                           source=source_name)
    path = save_calibration(cal, args.out, reference=empty, reference_empty=empty_checked)
    w, h = cal.resolution
    x0, y0, x1, y1 = cal.tray
    share = (x1 - x0) * (y1 - y0) / (w * h)
    die = f"{cal.die_px:.0f} px" if cal.die_px else "not measured"
    guide = "; the empty tray guides reading" if empty_checked else ""
    print(f"saved {path}: {w}x{h} frames, tray {cal.tray_shape} at {x0},{y0},{x1},{y1} ({share:.0%} of the view), die {die}{guide}")
    if cal.tray_shape == "frame" and tray is None:
        print("the tray fills the view (or was not found): the reader reads the whole frame; give --tray to limit it")
    return 0
