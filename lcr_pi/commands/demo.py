"""``lcr-pi demo``: a complete game on any computer, no camera or Pi needed.

For now the dice are rolled by the computer (seeded, so ``--seed`` repeats a game) and refereed by the
real rules engine, with every announcement printed as the speaker would say it. The camera-frame demo of
the full referee replaces the dice source once the referee loop exists.
"""

from __future__ import annotations

import random
import sys
import time

from lcr_pi.announce import announce
from lcr_pi.errors import UserError
from lcr_pi.rules import VARIANTS, Game, GameConfig
from lcr_pi.stats.policy import choose_victims

HELP = "play a demonstration game (no camera or Pi needed)"

DEFAULT_PLAYERS = "Ann,Bob,Cy,Dee"
LCR_DIE = ("L", "C", "R", "dot", "dot", "dot")
WILD_DIE = ("L", "C", "R", "W", "dot", "dot")


def add_arguments(parser) -> None:
    parser.add_argument("--players", default=DEFAULT_PLAYERS, help="names in seat order, comma separated, "
                        "or a number of players (default: %(default)s)")
    parser.add_argument("--chips", type=int, default=3, help="starting chips (default: 3)")
    parser.add_argument("--variant", default="classic", help=f"one of {', '.join(VARIANTS)}; combine with '+'")
    parser.add_argument("--seed", type=int, default=None, help="repeat the same game")
    parser.add_argument("--pause", type=float, default=0.0, help="seconds to wait between turns")


def parse_players(text: str) -> list[str]:
    """``"Ann,Bob,Cy"`` or a count such as ``"5"`` (named Player 1 ... Player 5)."""
    text = text.strip()
    if text.isdigit():
        return [f"Player {i + 1}" for i in range(int(text))]
    return [name.strip() for name in text.split(",")]


def board(game: Game) -> str:
    s = game.state
    seats = " | ".join(
        f"{'>' if seat == s.current and not s.is_over else ' '}{name} {n}"
        for seat, (name, n) in enumerate(zip(game.config.players, s.chips))
    )
    return f"[{seats} | pot {s.pot}]"


def run(args) -> int:
    config = GameConfig.create(parse_players(args.players), starting_chips=args.chips, variant=args.variant)
    if args.pause < 0:
        raise UserError(f"--pause must be 0 or more seconds, got {args.pause}")
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    rng = random.Random(seed)
    game = Game(config)
    die = WILD_DIE if config.wild else LCR_DIE
    say = _printer(config.players)
    print(f"lcr-pi demo (seed {seed}): the computer rolls the dice; the referee calls every turn.")
    say(game.opening)
    while not game.state.is_over:
        state = game.state
        if state.pending is not None:
            victims = choose_victims(state.chips, state.pending.seat, state.pending.take)
            say(game.choose(state.pending.seat, list(victims)))
        else:
            say(game.roll([rng.choice(die) for _ in range(state.dice_to_roll)]))
        print(board(game))
        if args.pause:
            time.sleep(args.pause)
    print(f"Game over after {game.state.rolls} rolls. Replay it with: lcr-pi demo --seed {seed} "
          f"--players {','.join(config.players)} --chips {config.starting_chips} --variant {config.variant_name}")
    return 0


def _printer(players):
    def say(events):
        for line in announce(events, players):
            print(f"  {line}")
        sys.stdout.flush()

    return say
