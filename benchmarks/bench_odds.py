"""Benchmark: exact tables (solve time, reach), mid-game look-ups and Monte Carlo odds, in milliseconds.

Usage: python benchmarks/bench_odds.py [--runs 15] [--no-reach]

Prints one result line per measurement: the median time of an exact mid-game look-up (5 players x 3
chips, table solved in advance), of a Monte Carlo answer for a 10-player game under the default 50 ms
budget (with its games and standard error), and how long the exact tables of common games take to solve.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from lcr_pi.stats import exact  # noqa: E402
from lcr_pi.stats.odds import prepare, win_probabilities  # noqa: E402
from lcr_pi.stats.simulate import table_config  # noqa: E402
from lcr_pi.stats.turns import Rules  # noqa: E402

REACH = [(3, 3, "classic"), (4, 3, "classic"), (5, 3, "classic"), (4, 4, "classic"), (3, 5, "classic"),
         (6, 3, "classic"), (5, 5, "classic"), (4, 8, "classic"), (5, 3, "wild"), (5, 3, "wild-win"),
         (5, 3, "last-chip"), (5, 4, "wild")]


def _median_ms(fn, runs: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(runs):
        started = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--no-reach", action="store_true", help="skip solving the bigger exact tables")
    args = parser.parse_args()

    config = table_config(5, 3)
    prepare(config)
    ms, odds = _median_ms(lambda: win_probabilities((2, 0, 5, 1, 3), 3, config, pot=4), args.runs)
    print(f"bench_odds exact look-up 5x3 mid-game: {ms:.3f} ms median ({odds.method})", flush=True)

    big = table_config(10, 3)
    rng = np.random.default_rng(0)
    position = (3, 0, 5, 2, 1, 4, 0, 3, 2, 1)
    results = []

    def monte_carlo():
        results.append(win_probabilities(position, 2, big, pot=9, rng=rng, budget_ms=50))
        return results[-1]

    ms, _ = _median_ms(monte_carlo, args.runs)
    games = statistics.median(r.games for r in results)
    error = statistics.median(r.std_error for r in results)
    worst = max(r.std_error for r in results)
    print(
        f"bench_odds monte-carlo 10x3 mid-game (budget 50 ms): {ms:.1f} ms median, {games:,.0f} games, "
        f"std error {error:.4f} (worst {worst:.4f})",
        flush=True,
    )
    ms, _ = _median_ms(lambda: win_probabilities((3,) * 10, 0, big, rng=rng, budget_ms=50), args.runs)
    print(f"bench_odds monte-carlo 10x3 opening (budget 50 ms): {ms:.1f} ms median", flush=True)

    if args.no_reach:
        return
    for players, chips, variant in REACH:
        cfg = table_config(players, chips, variant)
        rules = Rules.of(cfg)
        exact._TABLES.pop((rules, cfg.total_chips), None)
        if not exact.exact_feasible(rules, cfg.total_chips):
            print(f"bench_odds exact {players}x{chips} {variant}: beyond the limit", flush=True)
            continue
        started = time.perf_counter()
        exact.exact_table(rules, cfg.total_chips)
        seconds = time.perf_counter() - started
        print(
            f"bench_odds exact solve {players}x{chips} {variant}: {seconds:.2f} s "
            f"({exact.state_count(rules, cfg.total_chips):,} positions)",
            flush=True,
        )


if __name__ == "__main__":
    main()
