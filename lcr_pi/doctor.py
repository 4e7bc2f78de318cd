"""``lcr-pi doctor``: check every part of the table, one by one, and say what works and what does not.

Each check is a small function that returns :class:`Check` rows (PASS, WARN, FAIL or SKIP with a sentence
naming the part, the pin, the file). Everything that touches hardware comes in as an argument (a pin
factory, a camera opener, a speaker, a disk-usage function), so the tests run every check on gpiozero's
MockFactory, a folder of frames and espeak-ng writing WAV files.

>>> print(format_report([Check("disk", "PASS", "12.0 GB free"), Check("camera", "FAIL", "no camera")]))
PASS  disk        12.0 GB free
FAIL  camera      no camera
<BLANKLINE>
1 passed, 1 failed.
"""

from __future__ import annotations

import errno
import json
import logging
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from lcr_pi.errors import UserError
from lcr_pi.persist import write_atomic
from lcr_pi.settings import CALIBRATION_DIR, Settings, taught_sets_in

log = logging.getLogger("lcr_pi.doctor")

STATUSES = ("PASS", "WARN", "FAIL", "SKIP")
TEST_SENTENCE = "This is l c r pi. If you can hear this sentence, the speech works."
REQUIRED_MODELS = ("dice_detector.onnx", "dice_faces.onnx")
# Optional models: the reader works without each, asking more often; what is lost without it.
OPTIONAL_MODELS = {
    "dice_pairs.onnx": "touching dice cannot be compared and more rolls are asked about as 'may be leaning'",
    "dice_pips.onnx": "pip dice the face classifier hesitates over get no second look and more pip rolls are asked about",
    "dice_embed.onnx": "taught dice are named without the face-embedding network and more of their rolls are asked about",
}
MIN_FREE_BYTES = 50 * 1024**2  # below this a turn's save or evidence frame may not fit: FAIL
LOW_FREE_BYTES = 500 * 1024**2  # below this: WARN


@dataclass(frozen=True)
class Check:
    """One line of the report: what was checked, PASS/WARN/FAIL/SKIP, and what was found."""

    name: str
    status: str
    detail: str

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")


def format_report(checks: Sequence[Check]) -> str:
    """The PASS/FAIL list as text, with a count line at the end."""
    width = max([len(c.name) for c in checks] + [10])
    lines = [f"{c.status:<5} {c.name:<{width}}  {c.detail}" for c in checks]
    counts = {s: sum(c.status == s for c in checks) for s in STATUSES}
    words = {"PASS": "passed", "WARN": "warned", "FAIL": "failed", "SKIP": "skipped"}
    summary = ", ".join(f"{counts[s]} {words[s]}" for s in STATUSES if counts[s] or s in ("PASS", "FAIL"))
    return "\n".join([*lines, "", summary + "."])


def spoken_summary(checks: Sequence[Check]) -> str:
    """What the doctor says at the end, for a person who cannot read the screen.

    Each failed check is said with its reason and what to do (found by an audit: "1 failed: camera"
    sent a person who cannot read the screen to someone who can, for a fix the screen spelled out).

    >>> spoken_summary([Check("camera", "FAIL", "no camera found. Plug it in"), Check("disk", "PASS", "y")])
    'Check finished: 1 passed, 1 failed. Camera: no camera found. Plug it in.'
    >>> spoken_summary([Check("disk", "PASS", "y")])
    'Check finished: everything passed.'

    With the service running, why the camera and the pins failed is said first (it is only a warning row):

    >>> spoken_summary([check_service(True), Check("camera", "FAIL", "cannot open it")])[:92]
    'Check finished: 0 passed, 1 failed. Service: the lcr-pi service is running and holds the cam'
    """
    failed = [c for c in checks if c.status == "FAIL"]
    passed = sum(c.status == "PASS" for c in checks)
    if not failed:
        return "Check finished: everything passed." if passed else "Check finished: nothing could be checked."
    held = [c for c in checks if c.name == "service" and c.status == "WARN"]
    reasons = " ".join(f"{c.name[:1].upper()}{c.name[1:]}: {c.detail.rstrip('. ')}." for c in held + failed)
    return f"Check finished: {passed} passed, {len(failed)} failed. {reasons}"


# -- settings --------------------------------------------------------------------------------------------


def check_settings(config: str | Path | None, load: Callable) -> tuple[Settings, Check]:
    """Load the settings; a bad file is a FAIL and the other checks go on with the defaults. A mistake
    that ``lcr-pi run`` leaves out (see :func:`~lcr_pi.settings.parse_settings`) is a FAIL too, and the
    other checks use the rest of the file, as the night does."""
    if config is None:
        return Settings(), Check("settings", "WARN", "no --config given: checking with the default settings")
    skipped: list[str] = []
    try:
        settings = load(config, skipped=skipped)
    except UserError as exc:
        return Settings(), Check("settings", "FAIL", f"{exc} (lcr-pi run will not start; the other checks use the "
                                                     "defaults)")
    if skipped:
        return settings, Check("settings", "FAIL", "; ".join(skipped) + " (lcr-pi run says so and plays on; the "
                                                                        "other checks use the rest of the file)")
    return settings, Check("settings", "PASS", f"{config} is valid")


# -- camera ----------------------------------------------------------------------------------------------


def check_camera(open_source: Callable[[], object], describe: str, *, tries: int = 50,
                 pause_s: float = 0.1, sleep: Callable[[float], None] = time.sleep) -> Check:
    """Open the camera, wait for one frame (a Pi camera needs a moment), report its size."""
    try:
        source = open_source()
    except UserError as exc:
        return Check("camera", "FAIL", f"{describe}: {exc}. Without a camera, play with typed rolls (--dice keyboard)")
    try:
        frame = None
        for _ in range(tries):
            try:
                frame = source.read()
            except Exception as exc:  # noqa: BLE001 - a camera driver fails in its own ways
                return Check("camera", "FAIL", f"{describe}: reading a frame failed ({exc})")
            if frame is not None:
                break
            if getattr(source, "exhausted", False):
                break
            sleep(pause_s)
    finally:
        try:
            source.close()
        except Exception:  # noqa: BLE001 - closing must not hide the result
            pass
    if frame is None:
        return Check("camera", "FAIL", f"{describe}: opened, but no frame came after {tries} tries")
    height, width = frame.shape[:2]
    if float(frame.std()) < 4.0:
        return Check("camera", "WARN",
                     f"{describe}: {width}x{height} frame, but it is blank: lens cap, or the light off?")
    return Check("camera", "PASS", f"{describe}: got a {width}x{height} frame")


# -- speech ----------------------------------------------------------------------------------------------


def check_speech(make_speaker: Callable[[], object], *, engine: str = "auto", sentence: str = TEST_SENTENCE,
                 timeout_s: float = 30.0):
    """Say the test sentence. Returns (check, speaker): the speaker is reused for the prompts that follow
    (None when speech does not work; the caller prints the prompts then)."""
    if engine == "print":
        return Check("speech", "SKIP", "speech.engine is 'print' in the settings: words are printed"), None
    try:
        speaker = make_speaker()
    except UserError as exc:
        return Check("speech", "FAIL", str(exc)), None
    if not hasattr(speaker, "failure"):  # a PrintSpeaker: espeak-ng is not installed
        return Check("speech", "FAIL",
                     "espeak-ng is not installed, so nothing is spoken: sudo apt install espeak-ng"), None
    speaker.say(sentence)
    if not speaker.wait_until_idle(timeout_s):
        speaker.close()
        return Check("speech", "FAIL", f"espeak-ng did not finish the test sentence within {timeout_s:g} s"), None
    if speaker.failure is not None:
        speaker.close()
        hint = " (is a speaker plugged in, and the sound card enabled?)" if "sound card" in speaker.failure else ""
        return Check("speech", "FAIL", f"speech failed: {speaker.failure}{hint}"), None
    return Check("speech", "PASS", f"said the test sentence with espeak-ng (voice {speaker.voice}, "
                                   f"{speaker.rate_wpm} words a minute)"), speaker


# -- GPIO ------------------------------------------------------------------------------------------------


def led_uses(settings: Settings, names: Sequence[str]) -> dict[str, object]:
    """Each LED's use ("seat 1 LED (Ann)") -> its pin spec, from the settings."""
    gpio = settings.gpio
    uses = {}
    for i, spec in enumerate(gpio.seat_leds):
        who = f" ({names[i]})" if i < len(names) else ""
        uses[f"seat {i + 1} LED{who}"] = spec
    if gpio.centre_led is not None:
        uses["centre LED"] = gpio.centre_led
    if gpio.buzzer is not None:
        uses["buzzer"] = gpio.buzzer
    return uses


def button_uses(settings: Settings) -> dict[str, object]:
    gpio = settings.gpio
    pins = {"confirm": gpio.confirm_button, "undo": gpio.undo_button, "repeat": gpio.repeat_button,
            "status": gpio.status_button, "choose": gpio.choose_button}
    return {f"{name} button": pin for name, pin in pins.items() if pin is not None}


def check_pins(settings: Settings, names: Sequence[str], factory) -> Check:
    """Every pin in the settings is a real GPIO and none is used twice (LEDs and buttons together)."""
    from lcr_pi.outputs.lights import resolve_pins

    uses = {**led_uses(settings, names), **button_uses(settings)}
    if not uses:
        return Check("pins", "SKIP", "no GPIO pins in the settings ([gpio] section)")
    problems = []
    gpio = settings.gpio
    few = (f"gpio.seat_leds has {len(gpio.seat_leds)} pins for {len(names)} players: the seats past the last "
           "LED have none (the game still lights the others)") if gpio.seat_leds and len(gpio.seat_leds) < len(names) else ""
    if gpio.seat_leds and gpio.centre_led is None:
        problems.append("gpio.centre_led is missing: give the pin of the pot's LED")
    try:
        resolved = resolve_pins(uses, factory)
    except UserError as exc:
        problems.insert(0, str(exc))
        resolved = {}
    if problems:
        return Check("pins", "FAIL", "; ".join(problems + ([few] if few else [])))
    listed = f"{len(resolved)} pins, each used once: " + ", ".join(f"{use} {pin}" for use, pin in resolved.items())
    return Check("pins", "WARN", f"{few}; {listed}") if few else Check("pins", "PASS", listed)


def check_leds(settings: Settings, names: Sequence[str], factory, say: Callable[[str], None], *,
               blinks: int = 3, on_s: float = 0.3, off_s: float = 0.3) -> list[Check]:
    """Blink each LED in turn, after saying whose it is, so a person can watch them one by one.

    A wrong or busy pin fails that LED only; the others are still blinked.
    """
    from gpiozero import LED, Buzzer

    from lcr_pi.outputs.lights import make_device, resolve_pins

    uses = led_uses(settings, names)
    if not uses:
        return [Check("LEDs", "SKIP", "no LED pins in the settings (gpio.seat_leds, gpio.centre_led)")]
    checks, devices = [], []
    try:
        for use, spec in uses.items():
            try:
                pin = resolve_pins({use: spec}, factory)[use]
                device = make_device(Buzzer if use == "buzzer" else LED, pin, use, factory)
            except UserError as exc:
                checks.append(Check(use, "FAIL", str(exc)))
                continue
            devices.append(device)
            what = "beeps" if use == "buzzer" else "blinks"
            say(f"Watch the {use}: it {what} {blinks} times.")
            device.blink(on_time=on_s, off_time=off_s, n=blinks, background=False)
            checks.append(Check(use, "PASS", f"{pin} {what} {blinks} times (watch that it is the right one)"))
    finally:
        for device in devices:
            device.close()
    return checks


def check_buttons(settings: Settings, factory, say: Callable[[str], None], *, timeout_s: float = 15.0,
                  skip: bool = False, clock: Callable[[], float] = time.monotonic) -> list[Check]:
    """Ask for each button in turn ("press the undo button") and wait for the press."""
    from gpiozero import Button

    from lcr_pi.outputs.lights import make_device, resolve_pins

    uses = button_uses(settings)
    if not uses:
        return [Check("buttons", "SKIP", "no button pins in the settings (gpio.confirm_button, ...)")]
    if skip:
        return [Check(use, "SKIP", "skipped (--skip-buttons)") for use in uses]
    checks = []
    for use, spec in uses.items():
        try:
            pin = resolve_pins({use: spec}, factory)[use]
            button = make_device(Button, pin, use, factory)
        except UserError as exc:
            checks.append(Check(use, "FAIL", str(exc)))
            continue
        try:
            if button.is_pressed:
                checks.append(Check(use, "FAIL", f"{pin} reads pressed before anyone touches it: is the button "
                                                 "wired to 3.3 V instead of ground, or stuck?"))
                continue
            # Listen from before the prompt: a person may press while it is still being spoken.
            pressed = threading.Event()
            button.when_pressed = lambda: pressed.set()
            say(f"Press the {use}.")
            started = clock()
            if pressed.wait(timeout_s):
                checks.append(Check(use, "PASS", f"{pin} pressed after {clock() - started:.1f} s"))
                button.wait_for_release(timeout=timeout_s)
            else:
                checks.append(Check(use, "FAIL", f"no press on {pin} within {timeout_s:g} s: is the button wired "
                                                 "between that pin and a ground pin?"))
        finally:
            button.close()
    return checks


# -- files -----------------------------------------------------------------------------------------------


def check_calibration(path: Path, resolution: tuple[int, int] | None = None) -> Check:
    """The table's calibration, checked as ``lcr-pi run`` loads it: for the camera's frame size
    (``resolution``, the settings' [camera] width and height) and with its empty-tray picture (found
    by an audit: a calibration for another camera passed here, and run then read without it)."""
    try:
        from lcr_pi.vision.calibration import load_calibration_or_default, load_reference_or_none
    except ImportError:
        load_calibration_or_default = None
    if load_calibration_or_default is not None:
        try:
            calibration, warning = load_calibration_or_default(path, resolution)
        except UserError as exc:
            return Check("calibration", "FAIL", str(exc))
        if calibration is None and warning is None:
            return Check("calibration", "WARN", f"no calibration at {path} (the reader works without it; "
                                                "run lcr-pi calibrate for this table)")
        if calibration is None:  # a damaged file, or one for another camera: the game reads without it
            return Check("calibration", "FAIL", f"{warning}; run lcr-pi calibrate again")
        _, reference_warning = load_reference_or_none(calibration, path)
        warning = "; ".join(w for w in (warning, reference_warning) if w)
        return Check("calibration", "WARN" if warning else "PASS", warning or f"{path} loaded")
    files = sorted(path.glob("*.json")) if path.is_dir() else [path] if path.exists() else []
    if not files:
        return Check("calibration", "WARN", f"no calibration file in {path} (the reader works without it; "
                                            "run lcr-pi calibrate for this table)")
    for file in files:
        try:
            json.loads(file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            return Check("calibration", "FAIL", f"{file} is damaged ({exc}); run lcr-pi calibrate again")
    return Check("calibration", "PASS", f"{', '.join(f.name for f in files)} in {path} read as JSON")


def check_taught_dice(reader, folder: Path | None = None) -> Check:
    """The players' own dice (``lcr-pi teach``) for the ``[reader]`` settings ``reader`` (taught sets
    are looked for in ``folder``): which taught set a night would use, whether it loads, and whether it
    fits the dice the settings name."""
    from lcr_pi.vision.teach import KIND_NAMES, kind_fits, load_taught_or_default

    path = reader.teach_path(folder)
    if path is None:
        several = [] if reader.teach else taught_sets_in(folder)
        if len(several) > 1:
            return Check("taught dice", "WARN", f"{len(several)} taught sets in {folder or CALIBRATION_DIR} "
                                                f"({', '.join(f.name for f in several)}) and none chosen: "
                                                "set teach in [reader] to the dice on the table")
        return Check("taught dice", "PASS", "none taught (lcr-pi teach adds your own dice)")
    taught, warning = load_taught_or_default(path)
    if warning:
        return Check("taught dice", "FAIL", f"{warning}; run lcr-pi teach again")
    if taught is None:
        return Check("taught dice", "FAIL", f"{path}, named in [reader] teach, does not exist")
    if not kind_fits(taught.kind, reader.dice):
        return Check("taught dice", "WARN", f"{taught.name!r} ({path}) is a set of {KIND_NAMES[taught.kind]} dice, "
                                            f"but dice = {reader.dice!r} in [reader]: a night leaves it out")
    views = ", ".join(f"{face} {n}" for face, n in sorted(taught.views.items()))
    return Check("taught dice", "PASS", f"{taught.name!r}, {KIND_NAMES[taught.kind]} dice, views {views} ({path})")


def check_models(models_dir: Path, load_net: Callable[[str], object] | None = None) -> Check:
    """Every ONNX model in the models folder loads with OpenCV's dnn; the reader's two are there."""
    if load_net is None:
        import cv2

        load_net = cv2.dnn.readNetFromONNX
    if not models_dir.is_dir():
        return Check("models", "FAIL", f"the models folder {models_dir} does not exist: the camera cannot read "
                                       "dice (play with typed rolls: --dice keyboard)")
    files = sorted(models_dir.glob("*.onnx"))
    missing = [name for name in REQUIRED_MODELS if not (models_dir / name).is_file()]
    broken = []
    for file in files:
        try:
            load_net(str(file))
        except Exception as exc:  # noqa: BLE001 - cv2.error and friends: name the file
            broken.append(f"{file.name} ({str(exc).strip().splitlines()[-1] if str(exc).strip() else exc!r})")
    problems = []
    if broken:
        problems.append(f"cannot load {', '.join(broken)} from {models_dir}")
        from lcr_pi.vision.classify import opencv_too_old

        if hint := opencv_too_old():
            problems.append(hint)
    if missing:
        problems.append(f"missing {', '.join(missing)} in {models_dir}")
    if problems:
        return Check("models", "FAIL", "; ".join(problems) + ": the camera cannot read dice until this is fixed")
    loaded = f"{len(files)} model files load: {', '.join(f.name for f in files)}"
    absent = [f"{name} is missing, so {loss}" for name, loss in OPTIONAL_MODELS.items() if not (models_dir / name).is_file()]
    if absent:
        return Check("models", "WARN", f"{loaded}; " + "; ".join(absent))
    return Check("models", "PASS", loaded)


def _existing_parent(path: Path) -> Path:
    path = path.absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def check_disk(path: Path, *, disk_usage: Callable = shutil.disk_usage, min_free: int = MIN_FREE_BYTES,
               low_free: int = LOW_FREE_BYTES) -> Check:
    """Free space where the game is saved."""
    where = _existing_parent(path)
    try:
        free = disk_usage(where).free
    except OSError as exc:
        return Check("disk", "FAIL", f"cannot measure the free space at {where} ({exc.strerror})")
    text = f"{free / 1024**3:.1f} GB free at {where}" if free >= 1024**3 else f"{free / 1024**2:.0f} MB free at {where}"
    if free < min_free:
        return Check("disk", "FAIL", f"only {text}: the game cannot be saved safely; delete files or use a bigger card")
    if free < low_free:
        return Check("disk", "WARN", f"only {text}: the card is nearly full")
    return Check("disk", "PASS", text)


def check_state_dir(path: Path, *, write: Callable[[Path, bytes], None] = write_atomic) -> Check:
    """The state folder can be created and written (the game is saved there after every turn)."""
    probe = path / ".doctor-probe"
    try:
        path.mkdir(parents=True, exist_ok=True)
        write(probe, b"lcr-pi doctor\n")
        if probe.read_bytes() != b"lcr-pi doctor\n":
            return Check("state folder", "FAIL", f"{path}: a test file read back wrong (a failing card?)")
        probe.unlink()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        if exc.errno == errno.EROFS:
            reason += ": the card is mounted read-only"
        elif exc.errno == errno.ENOSPC:
            reason += ": the card is full"
        return Check("state folder", "FAIL", f"cannot write in {path} ({reason}); the game will not be saved")
    return Check("state folder", "PASS", f"{path} is writable")


#: The service the Pi runs at power-on (``systemd/lcr-pi.service``).
SERVICE = "lcr-pi"


def service_is_running(unit: str = SERVICE, *, run: Callable = subprocess.run) -> bool:
    """Whether systemd runs ``unit`` now (``systemctl is-active``); False where there is no systemd or
    it cannot tell (a laptop, a container), or it does not answer within 5 seconds."""
    try:
        # Its own words are not the doctor's: without systemd (a container) it says "System has not been
        # booted with systemd" on the terminal.
        return run(["systemctl", "is-active", "--quiet", unit], timeout=5, check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def check_service(running: bool, unit: str = SERVICE) -> Check | None:
    """A warning when the service runs: it holds the camera and the pins, so the doctor's camera, LED
    and button checks would fail for that alone. None when it does not (nothing to say). Before
    2026-12-05 the doctor always printed "stop the service first", on a laptop too.

    >>> check_service(True).detail.startswith("the lcr-pi service is running")
    True
    >>> check_service(False) is None
    True
    """
    if not running:
        return None
    return Check("service", "WARN", f"the {unit} service is running and holds the camera and the pins, so "
                                    f"their checks fail for that alone: stop it (sudo systemctl stop {unit}), run "
                                    f"the doctor again, then start it (sudo systemctl start {unit})")


# -- all together ----------------------------------------------------------------------------------------


@dataclass
class DoctorRig:
    """The hardware and the outside world, injectable for tests. None means the real thing."""

    pin_factory: object = None
    make_speaker: Callable[[Settings], object] | None = None
    open_camera: Callable[[str, Settings], object] | None = None
    disk_usage: Callable = shutil.disk_usage
    write: Callable[[Path, bytes], None] = write_atomic
    load_net: Callable[[str], object] | None = None
    models_dir: Path | None = None
    calibration: Path | None = None
    teach_folder: Path | None = None  # where taught sets are looked for (calibration/)
    stream: object = None  # where prompts and the report are printed (stdout)
    button_timeout_s: float = 15.0
    blink_on_s: float = 0.3
    blink_off_s: float = 0.3
    camera_tries: int = 50
    service_running: Callable[[], bool] = service_is_running


def _default_speaker(settings: Settings):
    from lcr_pi.outputs.speech import make_speaker

    s = settings.speech
    return make_speaker(s.voice, s.rate, s.volume, sounds=False)


def _as_the_night_plays(settings: Settings) -> tuple[Settings, Check | None]:
    """The settings with the remembered button setup applied, as ``lcr-pi run`` does, and a line
    saying so (None when there is no remembered setup)."""
    from lcr_pi.voice_setup import apply_choices, load_remembered

    remembered, problem = load_remembered(settings.state_dir)
    if problem:
        return settings, Check("game setup", "WARN", problem)
    if remembered is None:
        return settings, None
    try:
        return apply_choices(settings, remembered), Check(
            "game setup", "PASS", f"the game set up with the buttons is used: {remembered.summary()} "
                                  "(checked below as the night plays it)")
    except UserError as exc:
        return settings, Check("game setup", "WARN", f"the remembered game setup cannot be used ({exc}); "
                                                     "the settings file is used")


def _default_camera(spec: str, settings: Settings):
    from lcr_pi.camera import open_frame_source

    return open_frame_source(spec, width=settings.camera.width, height=settings.camera.height)


def run_doctor(settings: Settings, rig: DoctorRig | None = None, *, camera: str | None = None,
               skip_buttons: bool = False, first: Sequence[Check] = ()) -> list[Check]:
    """Run every check in order (speech first, so the prompts that follow can be heard)."""
    import sys

    rig = rig or DoctorRig()
    out = rig.stream or sys.stdout
    checks = list(first)

    def show(check: Check) -> None:
        checks.append(check)
        log.info("%s %s: %s", check.status, check.name, check.detail)
        print(f"{check.status:<5} {check.name}: {check.detail}", file=out, flush=True)

    for check in checks:
        print(f"{check.status:<5} {check.name}: {check.detail}", file=out, flush=True)
    service = check_service(rig.service_running())
    if service is not None:
        show(service)

    # The game the night would play: a setup made with the buttons wins over the file (found by an
    # audit: the pins were checked for the file's players, run warned of the remembered ones').
    settings, setup_check = _as_the_night_plays(settings)
    if setup_check is not None:
        show(setup_check)

    speech, speaker = check_speech(lambda: (rig.make_speaker or _default_speaker)(settings),
                                   engine=settings.speech.engine)
    show(speech)

    def say(text: str) -> None:
        print(f"  >> {text}", file=out, flush=True)
        if speaker is not None:
            speaker.say(text)
            speaker.wait_until_idle(30)

    try:
        spec = camera or settings.camera.source
        sizes = []  # the camera's frame size, when it gave a frame

        def open_camera():
            from lcr_pi.camera import SizeWatch

            return SizeWatch((rig.open_camera or _default_camera)(spec, settings), lambda w, h: sizes.append((w, h)))

        show(check_camera(open_camera, f"camera {spec!r}", tries=rig.camera_tries))
        try:
            names = settings.game_config().players
        except UserError:
            names = settings.game.players
        if not settings.gpio.enabled:
            show(Check("GPIO", "SKIP", "gpio.enabled is false in the settings"))
        else:
            from lcr_pi.outputs.lights import pin_factory_or_default

            try:
                factory = pin_factory_or_default(rig.pin_factory)
            except UserError as exc:
                show(Check("GPIO", "FAIL", str(exc)))
                factory = None
            if factory is not None:
                show(check_pins(settings, names, factory))
                for check in check_leds(settings, names, factory, say, on_s=rig.blink_on_s, off_s=rig.blink_off_s):
                    show(check)
                for check in check_buttons(settings, factory, say, timeout_s=rig.button_timeout_s,
                                           skip=skip_buttons):
                    show(check)
        # For the size the camera gives, which may not be the size the settings ask for (found by an
        # audit: a 1280x720 camera's own calibration failed here against the settings' 1280x960).
        show(check_calibration(rig.calibration or settings.reader.calibration_path(),
                               sizes[-1] if sizes else (settings.camera.width, settings.camera.height)))
        show(check_taught_dice(settings.reader, rig.teach_folder))
        if rig.models_dir is not None:
            models_dir = rig.models_dir
        else:
            from lcr_pi.vision.reader import DEFAULT_MODELS as models_dir
        show(check_models(models_dir, rig.load_net))
        show(check_disk(settings.state_dir, disk_usage=rig.disk_usage))
        show(check_state_dir(settings.state_dir, write=rig.write))
        if speaker is not None:
            speaker.say(spoken_summary(checks))
            speaker.wait_until_idle(30)
    finally:
        if speaker is not None:
            speaker.close()
    return checks
