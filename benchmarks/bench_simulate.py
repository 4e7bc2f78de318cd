"""Benchmark: simulated LCR games per second on one core.

Usage: python benchmarks/bench_simulate.py [--games 100000] [--runs 5] [--players 5] [--chips 3]

Pins numpy to one thread, plays ``--games`` games per run for each variant and prints the median games per
second over ``--runs`` runs, one result line per variant. The target is 100,000 classic 5-player games per
second here.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from lcr_pi.stats.simulate import simulate, table_config  # noqa: E402

VARIANTS = ("classic", "wild", "wild-win", "last-chip", "wild+last-chip")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--players", type=int, default=5)
    parser.add_argument("--chips", type=int, default=3)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    args = parser.parse_args()
    simulate(table_config(args.players, args.chips), 1000, np.random.default_rng(0))  # warm-up
    for variant in args.variants.split(","):
        config = table_config(args.players, args.chips, variant)
        times = []
        for run in range(args.runs):
            started = time.perf_counter()
            result = simulate(config, args.games, np.random.default_rng(run))
            times.append(time.perf_counter() - started)
        median = statistics.median(times)
        print(
            f"bench_simulate {variant} {args.players}x{args.chips}: {args.games / median:,.0f} games/s "
            f"(median of {args.runs} runs of {args.games:,}; {median:.3f} s per run; "
            f"mean rolls {result.mean_rolls:.1f})",
            flush=True,
        )


if __name__ == "__main__":
    main()
