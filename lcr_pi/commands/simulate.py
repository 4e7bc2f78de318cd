"""``lcr-pi simulate``: play many games at once and report each seat's win rate and rolls per game.

The thin shell over :func:`lcr_pi.stats.simulate.simulate`: it reads options, seeds the random
generator, times the run and prints.
"""

from __future__ import annotations

import json
import secrets
import time

import numpy as np

from lcr_pi.errors import UserError
from lcr_pi.rules.config import VARIANTS

HELP = "Simulate many games and report each seat's win rate and rolls per game."

DEFAULT_GAMES = 100_000
#: Far beyond any useful precision; keeps a typo from filling memory for minutes.
MAX_GAMES = 100_000_000


def add_arguments(parser) -> None:
    parser.add_argument("--players", type=int, required=True, help="number of players (3 or more)")
    parser.add_argument("--chips", type=int, default=3, help="starting chips per player (default 3)")
    parser.add_argument("--games", type=int, default=DEFAULT_GAMES, help=f"games to play (default {DEFAULT_GAMES:,})")
    parser.add_argument("--seed", type=int, default=None, help="random seed, for a reproducible run")
    parser.add_argument(
        "--variant",
        default="classic",
        help=f"rules: {', '.join(VARIANTS)}; combine with '+', e.g. wild+last-chip (default classic)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")


def run(args) -> int:
    from lcr_pi.stats.simulate import table_config, simulate

    config = table_config(args.players, args.chips, args.variant)
    if not 1 <= args.games <= MAX_GAMES:
        raise UserError(f"--games must be from 1 to {MAX_GAMES:,}, got {args.games}")
    if args.seed is not None and args.seed < 0:
        raise UserError(f"--seed must be a whole number of at least 0, got {args.seed}")
    seed = args.seed if args.seed is not None else secrets.randbelow(2**32)
    started = time.perf_counter()
    result = simulate(config, args.games, np.random.default_rng(seed))
    elapsed = time.perf_counter() - started

    percentiles = result.rolls_percentiles
    report = {
        "players": config.n_players,
        "chips": config.starting_chips,
        "variant": config.variant_name,
        "games": result.games,
        "seed": seed,
        "win_rate": list(result.win_rate),
        "win_rate_std_error": list(result.std_error),
        "wins": list(result.wins),
        "mean_rolls": result.mean_rolls,
        "rolls_percentiles": percentiles,
        "elapsed_seconds": round(elapsed, 4),
        "games_per_second": round(result.games / elapsed) if elapsed > 0 else None,
    }
    if args.json:
        print(json.dumps(report))
        return 0
    print(
        f"{result.games:,} games of {config.variant_name} LCR, {config.n_players} players with "
        f"{config.starting_chips} chips each (seed {seed}), in {elapsed:.2f} s"
    )
    print("seat 0 rolls first, then play passes to the left (seat 1, 2, ...); +/- is one standard error")
    print()
    print(f"{'seat':>5}  {'wins':>10}  {'win rate':>9}  {'+/-':>7}")
    for seat, (wins, rate, err) in enumerate(zip(result.wins, result.win_rate, result.std_error)):
        print(f"{seat:>5}  {wins:>10,}  {rate:>9.2%}  {err:>7.2%}")
    print()
    print(f"rolls per game: mean {result.mean_rolls:.1f}")
    print("  " + "  ".join(f"{name} {value:g}" for name, value in percentiles.items()))
    return 0
