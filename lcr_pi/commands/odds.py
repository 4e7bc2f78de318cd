"""``lcr-pi odds``: each seat's chance to win from the opening position.

Exact (the game's Markov chain solved, :mod:`lcr_pi.stats.exact`) up to about 150,000 positions — e.g.
6 players x 3 chips, 5 x 5, 4 x 8 — and estimated by simulation beyond, which the output says plainly.
"""

from __future__ import annotations

import json
import secrets
import time

import numpy as np

from lcr_pi.errors import UserError
from lcr_pi.rules.config import VARIANTS

HELP = "Each seat's chance to win from the opening position: exact for small games, else estimated."


def add_arguments(parser) -> None:
    from lcr_pi.stats.odds import DEFAULT_ESTIMATE_GAMES

    parser.add_argument("--players", type=int, required=True, help="number of players (3 or more)")
    parser.add_argument("--chips", type=int, default=3, help="starting chips per player (default 3)")
    parser.add_argument(
        "--variant",
        default="classic",
        help=f"rules: {', '.join(VARIANTS)}; combine with '+', e.g. wild+last-chip (default classic)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.add_argument("--exact-only", action="store_true", help="refuse rather than estimate when too big")
    parser.add_argument(
        "--games",
        type=int,
        default=DEFAULT_ESTIMATE_GAMES,
        help=f"games to simulate when exact odds are out of reach (default {DEFAULT_ESTIMATE_GAMES:,})",
    )
    parser.add_argument("--seed", type=int, default=None, help="random seed for an estimate")


def run(args) -> int:
    from lcr_pi.stats.exact import state_count
    from lcr_pi.stats.odds import opening_odds
    from lcr_pi.stats.simulate import table_config
    from lcr_pi.stats.turns import Rules

    config = table_config(args.players, args.chips, args.variant)
    if args.games < 1:
        raise UserError(f"--games must be at least 1, got {args.games}")
    if args.seed is not None and args.seed < 0:
        raise UserError(f"--seed must be a whole number of at least 0, got {args.seed}")
    seed = args.seed if args.seed is not None else secrets.randbelow(2**32)
    started = time.perf_counter()
    odds = opening_odds(config, rng=np.random.default_rng(seed), games=args.games, exact_only=args.exact_only)
    elapsed = time.perf_counter() - started
    report = {
        "players": config.n_players,
        "chips": config.starting_chips,
        "variant": config.variant_name,
        "win_probability": list(odds.probabilities),
        "exact": odds.exact,
        "method": odds.method,
        "std_error": odds.std_error,
        "positions": state_count(Rules.of(config), config.total_chips),
        "elapsed_seconds": round(elapsed, 4),
    }
    if not odds.exact:
        report.update(games=odds.games, seed=seed)
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"{config.variant_name} LCR, {config.n_players} players with {config.starting_chips} chips each; seat 0 rolls first")
    if odds.exact:
        print(f"exact: solved {report['positions']:,} positions in {elapsed:.2f} s")
    else:
        print(
            f"estimated, +/- {odds.std_error:.2%} (one standard error) from {odds.games:,} simulated games "
            f"(seed {seed}): {report['positions']:,} positions are too many to solve exactly"
        )
    print()
    print(f"{'seat':>5}  {'chance to win':>13}")
    for seat, p in enumerate(odds.probabilities):
        print(f"{seat:>5}  {p:>13.4%}")
    return 0
