"""``lcr-pi demo``: a complete game on any computer, no camera or Pi needed.

A simulated player throws dice; the renderer films them tumbling into a tray; the real settle detector
and dice reader read the frames; the real referee calls every turn. LEDs are drawn in the terminal from
gpiozero's mock pins, and the words are printed and, where espeak-ng exists, spoken.
``--typed`` skips the camera part: the computer types each roll, as ``lcr-pi run --dice keyboard`` would.
"""

from __future__ import annotations

import random
import shlex
import sys
import tempfile
import threading
import time
from dataclasses import replace

import numpy as np

from lcr_pi.camera_dice import encode_evidence
from lcr_pi.errors import UserError
from lcr_pi.inputs import ActionQueue
from lcr_pi.night import TerminalLights, make_night_speaker
from lcr_pi.persist import GameStore
from lcr_pi.referee import Referee
from lcr_pi.rules import VARIANTS, GameConfig
from lcr_pi.settings import Settings
from lcr_pi.table import Table, run_loop

HELP = "play a demonstration game on synthetic camera frames (no camera or Pi needed)"

DEFAULT_PLAYERS = "Ann,Bob,Cy,Dee"


def add_arguments(parser) -> None:
    parser.add_argument("--players", default=DEFAULT_PLAYERS, help="names in seat order, comma separated, "
                        "or a number of players (default: %(default)s)")
    parser.add_argument("--chips", type=int, default=3, help="starting chips (default: 3)")
    parser.add_argument("--variant", default="classic", help=f"one of {', '.join(VARIANTS)}; combine with '+'")
    parser.add_argument("--seed", type=int, default=None, help="repeat the same game")
    parser.add_argument("--speech", choices=["auto", "espeak-ng", "print"], default="auto",
                        help="speak with espeak-ng where installed (default), or only print")
    parser.add_argument("--typed", action="store_true", help="no camera frames: the computer types the rolls")
    parser.add_argument("--keep", metavar="DIR", help="keep the game, its log and the evidence frames in DIR")
    parser.add_argument("--web", nargs="?", const="8080", metavar="HOST:PORT",
                        help="serve the live scoreboard page (default port 8080, local network only) with a PIN "
                             "printed here; typed turns are paced for watching; the page stays up until Ctrl-C")


def parse_players(text: str) -> list[str]:
    """``"Ann,Bob,Cy"`` or a count such as ``"5"`` (named Player 1 ... Player 5)."""
    text = text.strip()
    if text.isascii() and text.isdigit():
        return [f"Player {i + 1}" for i in range(int(text))]
    return [name.strip() for name in text.split(",")]


def run(args) -> int:
    config = GameConfig.create(parse_players(args.players), starting_chips=args.chips, variant=args.variant)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    settings = Settings()
    settings = replace(settings, speech=replace(settings.speech, engine=args.speech, rate=220))
    speaker = make_night_speaker(settings, echo=True)
    lights = TerminalLights(config.players, fast=True)
    referee = Referee(config)
    actions = ActionQueue()
    how = "the computer types the rolls" if args.typed else "rendered camera frames, read by the dice reader"
    print(f"lcr-pi demo (seed {seed}): {how}.", flush=True)
    started = time.monotonic()
    keep = args.keep or tempfile.mkdtemp(prefix="lcr-pi-demo-")
    store = GameStore(keep, evidence_frames=1000)
    table = Table(referee, speaker=speaker, lights=lights, store=store, encode_evidence=encode_evidence)
    scoreboard = None
    if args.web is not None:
        import secrets

        from lcr_pi.settings import WebSettings
        from lcr_pi.web import start_web

        pin = f"{secrets.randbelow(10000):04d}"
        scoreboard = start_web(args.web, WebSettings(pin=pin), table, actions, speaker)
        print(f"Scoreboard PIN for this demo: {pin}", flush=True)
    try:
        if args.typed:
            from lcr_pi.demo_table import TypedRolls

            source = TypedRolls(referee, random.Random(seed), actions)
            if scoreboard is not None:
                source = Paced(source, seconds=2.0)
        else:
            source = _rendered(referee, config, seed, actions)
        run_loop(table, actions=actions, dice_source=source, max_seconds=600 if scoreboard is None else None)
        speaker.wait_until_idle(timeout=30)
        if scoreboard is not None:
            print("The game is over; the scoreboard stays up. Press Ctrl-C to end.", flush=True)
            try:
                threading.Event().wait()
            except KeyboardInterrupt:
                pass
    finally:
        if scoreboard is not None:
            scoreboard.stop()
        lights.close()
        speaker.close()
    state = referee.game.state if referee.game else None
    elapsed = time.monotonic() - started
    if state is None or not state.is_over:
        raise UserError("the demo game did not finish")
    print(f"Game over after {state.rolls} rolls in {elapsed:.0f} s. Saved in {keep}.")
    if not args.typed:
        score = source.score
        print(f"Reader: {score.agreed} of {score.rolls} reads matched the dice thrown, {score.unsure} were "
              f"called unsure ({score.confirmed} settled by a press of confirm, the guess being right; "
              f"{score.settled} played without asking, the doubt only between faces that move chips alike; "
              f"the others thrown again), {len(score.wrong)} {'was' if len(score.wrong) == 1 else 'were'} wrong "
              f"(announced as read), "
              f"{len(score.miscounted)} saw another number of dice (the referee asked again); "
              f"{score.typed} rolls were typed after repeated unsure reads.")
        for thrown, read in score.wrong:
            print(f"  WRONG: thrown {' '.join(thrown)}, read {' '.join(read)}")
        for thrown, read in score.miscounted:
            print(f"  MISCOUNTED: thrown {' '.join(thrown)}, read {' '.join(read)}")
    print(f"Replay it with: lcr-pi demo --seed {seed} --players {shlex.quote(','.join(config.players))} "
          f"--chips {config.starting_chips} --variant {config.variant_name}{' --typed' if args.typed else ''}")
    sys.stdout.flush()
    return 0


def _rendered(referee, config, seed, actions):
    from lcr_pi.demo_table import RenderedRolls
    from lcr_pi.vision.reader import DiceReader

    reader = DiceReader()
    return RenderedRolls(referee, reader, np.random.default_rng(seed), wild=config.wild, actions=actions)


class Paced:
    """A dice source that lets ``seconds`` pass after each roll, so that people can follow on the scoreboard."""

    def __init__(self, source, seconds: float):
        self.source = source
        self.seconds = seconds
        self._next_roll = 0.0

    @property
    def exhausted(self) -> bool:
        return getattr(self.source, "exhausted", False)

    def poll(self):
        wait = self._next_roll - time.monotonic()
        if wait > 0:
            time.sleep(min(0.05, wait))  # the loop polls again at once: sleep a little, never spin
            return None
        obs = self.source.poll()
        if obs is not None:
            self._next_roll = time.monotonic() + self.seconds
        return obs
