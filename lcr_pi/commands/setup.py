"""``lcr-pi setup``: the voice-guided game setup, with the table's buttons or typed words."""

from __future__ import annotations

import logging
import sys
from dataclasses import replace

from lcr_pi.errors import UserError
from lcr_pi.inputs import ActionQueue
from lcr_pi.inputs.keyboard import KeyboardInput
from lcr_pi.settings import load_settings
from lcr_pi.voice_setup import (
    SetupChoices,
    VoiceSetup,
    apply_choices,
    default_speaker_factory,
    load_remembered,
    names_kept,
    run_setup,
    save_choices,
    setup_buttons,
)

HELP = "set up the game by voice: players, chips, variant, speech rate and volume, with two buttons or typed words"

log = logging.getLogger("lcr_pi.setup")


def add_arguments(parser) -> None:
    parser.add_argument("--config", help="settings file (TOML)")
    parser.add_argument("--state-dir", help="where the setup is remembered (the service uses /var/lib/lcr-pi)")
    parser.add_argument("--speech", choices=["auto", "espeak-ng", "print"], help="speech engine (overrides the config)")
    parser.add_argument("--idle", type=float, default=300.0, metavar="SECONDS",
                        help="finish with the answers so far after this long without a press (default 300)")


def run(args, *, stdin=None, pin_factory=None, make_speaker=None) -> int:
    settings = load_settings(args.config)
    if args.state_dir:
        settings = replace(settings, storage=replace(settings.storage, state_dir=args.state_dir))
    if args.speech:
        settings = replace(settings, speech=replace(settings.speech, engine=args.speech))
    remembered, problem = load_remembered(settings.state_dir)
    if problem:
        print(f"Warning: {problem}.", file=sys.stderr, flush=True)
    if remembered is not None:
        settings = apply_choices(settings, remembered)
    actions = ActionQueue()
    closers = []
    try:
        buttons = setup_buttons(settings, actions.put_action, pin_factory)
        closers.append(buttons.close)
        for problem in buttons.problems:
            print(f"Warning: {problem}.", file=sys.stderr, flush=True)
    except UserError as exc:
        buttons = None
        print(f"Buttons are off ({exc}); type choose, confirm (or an empty line), repeat, undo or quit.",
              flush=True)
    typed = KeyboardInput(stdin, on_action=actions.put_action,
                          eof_action="tty" if buttons is not None else "quit")
    closers.append(typed.close)
    setup = VoiceSetup(SetupChoices.from_settings(settings), names=settings.game.players)
    speaker = None
    try:
        speaker = run_setup(setup, actions, make_speaker or default_speaker_factory(settings), idle_s=args.idle)
        if not setup.done:
            return 1
        try:
            # Names set at the table are kept, as at power-on (found by a review: this command dropped
            # them, and the next lcr-pi run set the game of those players aside as one of "other players").
            path = save_choices(settings.state_dir, names_kept(setup.choices, remembered),
                                settings_file=settings.source)
        except UserError:
            # The person at the buttons heard "Done"; without this they would leave believing the game
            # is set up (found by an audit). The reason, with its path, is printed: spoken, a path is noise.
            speaker.say("But it could not be saved, so the next game will not use it. The reason is on the screen.")
            raise
        speaker.say("Saved.")
        print(f"Saved to {path}: {setup.choices.summary()}.")
        return 0
    finally:
        if speaker is not None:
            speaker.wait_until_idle(30)
            speaker.close()
        for close in reversed(closers):
            close()
