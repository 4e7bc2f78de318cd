"""``lcr-pi run``: referee a game night at the table."""

from __future__ import annotations

import logging
import os
import sys
import threading
from dataclasses import replace

from lcr_pi.camera_dice import encode_evidence
from lcr_pi.errors import UserError
from lcr_pi.night import assemble
from lcr_pi.settings import load_settings, taught_sets_in, with_players
from lcr_pi.table import CONFIRM_REACTION, Table, run_loop
from lcr_pi.voice_setup import power_on_setup, remember_players

HELP = "referee a game night: camera (or typed rolls), speech, LEDs and buttons"

log = logging.getLogger("lcr_pi.run")

#: The exit status when the camera is given up on (a camera let go that cannot be opened again): not 0
#: and not 2 (which the unit does not restart), so that systemd's Restart=on-failure starts lcr-pi
#: again, the camera freed, and the saved game resumes as after a power cut.
CAMERA_RESTART_STATUS = 3
#: Seconds after a camera stuck in a capture was let go with no frame from any camera since, before
#: ``lcr-pi run`` gives up and exits for a restart.
CAMERA_GIVE_UP_AFTER = 60.0
#: The seconds an exit for a restart may take before the process ends itself (a camera driver's
#: thread stuck at exit must not keep the table from its restart).
EXIT_GRACE = 15.0


def add_arguments(parser) -> None:
    parser.add_argument("--config", help="settings file (TOML); see README 'Settings'")
    parser.add_argument("--players", help="names in seat order, comma separated (overrides the config)")
    parser.add_argument("--dice", choices=["camera", "keyboard"], default="camera",
                        help="read the dice with the camera (default) or type each roll, e.g. 'L . C' or '4 1 6'")
    parser.add_argument("--camera", help="camera source: auto, picamera2, webcam:N, a video file or a folder of frames")
    parser.add_argument("--state-dir", help="where the game, its log and evidence frames are kept")
    parser.add_argument("--speech", choices=["auto", "espeak-ng", "print"], help="speech engine (overrides the config)")
    parser.add_argument("--new", action="store_true", help="start a new game even if a saved one exists")
    parser.add_argument("--setup", choices=["auto", "remembered", "ask", "off"], default="auto",
                        help="the voice setup: auto (use the remembered one and offer to change it when the choose "
                             "and confirm buttons are wired), remembered, ask (run it now), off (the config only)")
    parser.add_argument("--web", nargs="?", const="", metavar="HOST:PORT",
                        help="serve the live scoreboard page to phones on the local network, e.g. --web 8080 "
                             "(alone: the config's web.bind, 0.0.0.0:8080); see README 'Scoreboard'")


def players_option(args) -> list[str] | None:
    """``--players Ann,Bob,Cy`` as names, or None when not given."""
    return [p.strip() for p in args.players.split(",")] if args.players else None


def apply_overrides(settings, args):
    if args.players:
        settings = with_players(settings, players_option(args))
    if getattr(args, "camera", None):
        settings = replace(settings, camera=replace(settings.camera, source=args.camera))
    if getattr(args, "state_dir", None):
        settings = replace(settings, storage=replace(settings.storage, state_dir=args.state_dir))
    if getattr(args, "speech", None):
        settings = replace(settings, speech=replace(settings.speech, engine=args.speech))
    return settings


def _players_keeper(settings, args):
    """Where players changed on the scoreboard page are kept for the next power-on: the remembered setup,
    which power-on applies unless the command line names the players or the setup is off."""
    def keep(names) -> None:
        if args.players:
            raise UserError("the command line names the players (--players), so the new ones are not remembered")
        if args.setup == "off":
            raise UserError("the remembered setup is off (--setup off), so the new players are not remembered")
        remember_players(settings, names)

    return keep


def run(args) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    # A mistake that a default makes safe (the voice's rate, a pin name, an unknown key outside [game]
    # and [storage]) is said and left out; one in the game or where it is saved stops the night.
    file_problems: list[str] = []
    try:
        settings = load_settings(args.config, skipped=file_problems)
    except UserError as exc:
        _say_settings_error(exc)
        raise
    settings = apply_overrides(settings, args)  # a mistake on the command line is printed, not blamed on the file
    settings, setup_problems = power_on_setup(settings, mode=args.setup, players_fixed=bool(args.players))
    if args.players:  # the command line wins over the remembered setup
        settings = with_players(settings, players_option(args))
    # Players changed in the settings file or on the command line are not the ones named at the table.
    night = assemble(settings, new=args.new, players_remembered=args.setup != "off" and not args.players)
    night.problems[:0] = file_problems + setup_problems
    try:
        table = Table(night.referee, speaker=night.speaker, lights=night.lights, store=night.store,
                      sounds=settings.speech.sounds, encode_evidence=encode_evidence, skip_stale_words=True,
                      confirm_reaction=CONFIRM_REACTION,
                      remember_players=_players_keeper(settings, args))
        scoreboard = None
        if args.web is not None or settings.web.enabled:
            from lcr_pi.web import start_web

            # Started before the table says a word (the warnings below; the camera lost as it is first
            # opened), so that every word is on the page too (found by an audit: a player reading the
            # page never saw why the camera was not used).
            try:
                scoreboard = start_web(args.web, settings.web, table, night.actions, night.speaker)
            except UserError as exc:
                # The port in use, or an address the network has not given the Pi yet: the game is
                # played without its page rather than not at all (systemd does not restart exit 2).
                night.problems.append(f"the scoreboard page cannot start ({exc}). The game goes on without it")
        stop = threading.Event()
        gave_up: list[str] = []

        def give_up(reason: str) -> None:
            gave_up.append(reason)
            stop.set()

        try:
            dice_source = (_camera_dice(settings, night, table.announce, on_give_up=give_up)
                           if args.dice == "camera" else None)
            for problem in night.problems:
                log.error("%s", problem)
                # A problem may end in a sentence of its own ("It was kept as .../game-set-aside-....json."):
                # one full stop, not two.
                table.announce(f"Warning: {problem.rstrip('.')}.")
            if night.buttons:  # a player who cannot read a label hears what each button does
                from lcr_pi.referee import BUTTON_GUIDE

                table.announce(BUTTON_GUIDE)
            if dice_source is None:
                table.announce("Type each roll, for example L dot C, or 4 1 6.")
            run_loop(table, actions=night.actions, dice_source=dice_source, stop=stop)
            if gave_up:
                # Each counted roll is already on the card (the store writes game.json atomically at
                # each checkpoint, as a quit leaves it): the restart resumes it as after a power cut.
                log.error("exiting for a restart (status %d): %s", CAMERA_RESTART_STATUS, gave_up[0])
                table.announce("The camera stopped; restarting.")
                wait = getattr(night.speaker, "wait_until_idle", None)
                if wait is not None:
                    wait(10)
                _end_in_time(CAMERA_RESTART_STATUS)
                return CAMERA_RESTART_STATUS
        finally:
            if scoreboard is not None:
                scoreboard.stop()
    finally:
        night.close()
    return 0


def _end_in_time(status: int) -> None:
    """The process ends with ``status`` within ``EXIT_GRACE`` seconds even if a thread stuck in the camera
    driver holds up its exit (systemd restarts only a process that ended)."""
    def end() -> None:
        log.error("the exit took over %.0f s (a camera thread stuck?): ending now", EXIT_GRACE)
        logging.shutdown()
        os._exit(status)

    timer = threading.Timer(EXIT_GRACE, end)
    timer.daemon = True
    timer.start()


def _say_settings_error(exc: UserError) -> None:
    """A table without a screen must hear why it will not start (the service does not restart for this)."""
    from lcr_pi.outputs.speech import make_speaker

    log.error("%s", exc)
    speaker = make_speaker()
    speaker.say(f"The settings file has a mistake, so the game cannot start. {exc}.")
    speaker.wait_until_idle(30)
    speaker.close()


def _camera_dice(settings, night, say, *, on_give_up=None):
    """The camera, the settle detector and the reader (fitted to the table when calibrated and taught);
    when the reader cannot start, typed rolls. ``say(text)`` tells the table that the camera stopped or
    came back, or gives frames the calibration does not fit: in a night ``Table.announce``, so that the
    page says it too (found by an audit: the page went on saying "roll three dice" while the speaker
    said the camera had stopped) and a roll does not drop it as stale."""
    from lcr_pi.camera import ReopeningSource, SizeWatch, live_capture, open_frame_source
    from lcr_pi.camera_dice import CameraDice, WildGameDice
    from lcr_pi.vision.calibration import CalibratedReader, load_calibration_or_default, load_reference_or_none
    from lcr_pi.vision.reader import DiceReader
    from lcr_pi.vision.settle import SettleDetector
    from lcr_pi.vision.teach import KIND_NAMES, TaughtReader, kind_fits, load_taught_or_default

    try:
        reader = DiceReader()
    except UserError as exc:
        night.problems.append(f"the dice reader cannot start ({exc}); type the rolls instead")
        return None
    cam = settings.camera
    # Loaded as made, not for the size the settings ask the camera for: a webcam may give another size
    # (and a video file always gives its own), and the reader and the settle detector fit the
    # calibration to each frame. Found by an audit: a calibration made from a 1280x720 camera was
    # dropped because the settings asked for 1280x960 ("run lcr-pi calibrate again", which made the
    # same file). Frames of another shape than the calibration's are said when they come (below).
    calibration, warning = load_calibration_or_default(settings.reader.calibration_path())
    if warning:
        night.problems.append(warning)
    elif calibration is None and settings.reader.calibration:  # named in the settings, but not there
        night.problems.append(f"the calibration file {settings.reader.calibration_path()} named in the settings "
                              "does not exist; reading the whole frame without calibration")
    teach_path = settings.reader.teach_path()
    several = taught_sets_in() if teach_path is None else []
    if len(several) > 1:
        # None is chosen among them (found by an audit: a second design taught, or a file a failed save
        # left, and the night read with the standard faces without a word; only the doctor said so).
        night.problems.append(f"{len(several)} taught dice sets in {several[0].parent} "
                              f"({', '.join(f.name for f in several)}) and none chosen; reading dice with the "
                              "standard faces (set teach in [reader] to the dice on the table)")
    if teach_path is not None:
        taught, warning = load_taught_or_default(teach_path)
        if warning:
            night.problems.append(warning)
        elif taught is None:  # only a file named in the settings can be missing
            night.problems.append(f"the taught dice file {teach_path} named in the settings does not exist; "
                                  "reading dice with the standard faces")
        if taught is not None and not kind_fits(taught.kind, settings.reader.dice):
            night.problems.append(f"the taught dice {taught.name!r} ({teach_path}) are {KIND_NAMES[taught.kind]} "
                                  f"dice but the settings say dice = {settings.reader.dice!r}: they are not used "
                                  f"(set dice to \"auto\" or \"{taught.kind}\" in [reader] to use them)")
        elif taught is not None:
            reader = TaughtReader(reader, taught)
    settle = SettleDetector()
    controls = None
    if calibration is not None:
        reference, warning = load_reference_or_none(calibration, settings.reader.calibration_path())
        if warning:
            night.problems.append(warning)
        reader = CalibratedReader(reader, calibration, reference)
        # Fitted to each frame's own size: a webcam may not give the size the settings ask for.
        settle = SettleDetector(region=calibration.tray, die_px=calibration.die_px, size=calibration.resolution)
        controls = calibration.camera_controls or None

    def open_camera():
        # Read on a thread of its own: a camera that stops mid-frame must not freeze the buttons.
        return live_capture(open_frame_source(cam.source, width=cam.width, height=cam.height, controls=controls))

    # Under the service there is no keyboard (input is /dev/null): offering to type the rolls would
    # send the table looking for one.
    typing = bool(getattr(sys.stdin, "isatty", lambda: False)())

    def lost(reason):
        meanwhile = "you can type the rolls meanwhile" if typing else "the game waits for it"
        say(f"The camera has stopped ({reason}). I keep trying; {meanwhile}.")

    def back():
        say("The camera is back.")

    frames = ReopeningSource(open_camera, on_lost=lost, on_back=back, on_give_up=on_give_up,
                             give_up_after=CAMERA_GIVE_UP_AFTER)
    if calibration is not None:
        def sized(width, height):
            try:
                calibration.scaled_to(width, height)
            except UserError as exc:  # the camera's frames are of another shape: read whole
                problem = f"{settings.reader.calibration_path()}: {exc}; reading the whole frame without calibration"
                log.error("%s", problem)
                say(f"Warning: {problem}.")

        frames = SizeWatch(frames, sized)
    dice_kind, game = settings.reader.dice, settings.game_config()
    if dice_kind == "lcr" and game.wild:
        # Told "no W face", the reader names a W as another face, now and then surely (1 of 40
        # rendered W dice read as a clear L): a Wild game's LCR dice are Wild dice.
        night.problems.append('the game is Wild but the settings say dice = "lcr", which have no W face; '
                              'reading them as Wild dice (set dice to "wild" in [reader])')
        dice_kind = "wild"
    if dice_kind == "auto" and game.wild:
        # Wild LCR dice or ordinary dice with a pip that counts as W: the rolls tell which.
        return CameraDice(frames, WildGameDice(reader.read, game.effective_wild_pip), settle)
    return CameraDice(frames, lambda frame: reader.read(frame, dice_kind=dice_kind), settle)
