"""Benchmark: a big table (8, 10, 12, 20 players, 3 and 5 chips, classic and Wild) through the referee.

Usage: python benchmarks/bench_big_table.py [--games 3] [--asks 7]

Per table, one result line: whether exact odds are in reach (positions of the exact table), how long
``prepare`` (the night's warm-up) takes, the status report's odds (50 ms budget, on the referee's thread)
and the page's (150 ms, on its own thread) with their games and give or take, the peak memory of one
answer, and the words of each turn's speech in whole games of typed random rolls (median, 95th
percentile and longest, with its seconds at 175 words a minute) and of the status report.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402

import numpy as np  # noqa: E402

from by_ear import NAMES, seconds, words  # noqa: E402

from lcr_pi.referee import Referee, RollObservation  # noqa: E402
from lcr_pi.rules import GameConfig  # noqa: E402
from lcr_pi.stats import odds_for_state, prepare  # noqa: E402
from lcr_pi.stats.exact import exact_feasible, state_count  # noqa: E402
from lcr_pi.stats.odds import win_probabilities  # noqa: E402
from lcr_pi.stats.policy import choose_victims  # noqa: E402
from lcr_pi.stats.turns import Rules  # noqa: E402


def _turn_words(config: GameConfig, seed: int) -> tuple[list[int], int]:
    """Words said after each roll of one whole game, and the status report's words after five rolls."""
    rng = np.random.default_rng(seed)
    die = ["L", "C", "R", "W", ".", "."] if config.wild else ["L", "C", "R", ".", ".", "."]
    referee = Referee(config, odds=odds_for_state)
    referee.start()
    turns, status = [], 0
    while referee.phase != "game_over":
        if referee.phase == "await_decision":
            state = referee.game.state
            for victim in choose_victims(state.chips, state.pending.seat, state.pending.take):
                turns[-1] += words(referee.on_action("choose", config.players[victim]))
            continue
        faces = tuple(str(rng.choice(die)) for _ in range(referee.game.state.dice_to_roll))
        turns.append(words(referee.on_roll(RollObservation(faces, source="keyboard"))))
        if len(turns) == 5:
            status = words(referee.on_action("status"))
    return turns, status


def _odds_ms(config: GameConfig, budget_ms: float, asks: int, rng) -> tuple[float, float, int, float]:
    start = (config.starting_chips,) * config.n_players
    times, answers = [], []
    for _ in range(asks):
        started = time.perf_counter()
        answers.append(win_probabilities(start, 0, config, rng=rng, budget_ms=budget_ms))
        times.append((time.perf_counter() - started) * 1000)
    return (statistics.median(times), max(times), int(statistics.median(a.games for a in answers)),
            statistics.median(200 * a.std_error for a in answers))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=3, help="whole games per table for the speech")
    parser.add_argument("--asks", type=int, default=7, help="odds answers per table and budget")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    for variant in ("classic", "wild"):
        for players in (8, 10, 12, 20):
            for chips in (3, 5):
                config = GameConfig.create(NAMES[:players], starting_chips=chips, variant=variant)
                rules = Rules.of(config)
                started = time.perf_counter()
                exact = prepare(config)
                prepare_ms = (time.perf_counter() - started) * 1000
                status = _odds_ms(config, 50, args.asks, rng)
                page = _odds_ms(config, 150, args.asks, rng)
                tracemalloc.start()
                win_probabilities((chips,) * players, 0, config, rng=rng, budget_ms=150)
                peak = tracemalloc.get_traced_memory()[1] / 1e6
                tracemalloc.stop()
                words, status_words = [], 0
                for seed in range(args.games):
                    turns, status_words = _turn_words(config, seed)
                    words += turns
                longest = max(words)
                print(
                    f"bench_big_table {variant} {players}x{chips}: exact {exact} "
                    f"({state_count(rules, config.total_chips):,} positions, feasible "
                    f"{exact_feasible(rules, config.total_chips)}), prepare {prepare_ms:.1f} ms; "
                    f"status odds {status[0]:.0f} ms median (max {status[1]:.0f}), {status[2]:,} games, "
                    f"+-{status[3]:.1f} points; page odds {page[0]:.0f} ms (max {page[1]:.0f}), "
                    f"{page[2]:,} games, +-{page[3]:.1f}; peak {peak:.2f} MB; words a turn median "
                    f"{statistics.median(words):.0f}, p95 {np.percentile(words, 95):.0f}, longest {longest} "
                    f"({seconds(longest):.0f} s); status {status_words} words "
                    f"({seconds(status_words):.0f} s)",
                    flush=True,
                )


if __name__ == "__main__":
    main()
