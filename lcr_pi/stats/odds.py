"""Who is favoured: win probabilities from the opening or from any position of a game.

Exact where the game is small enough (a look-up in a solved table, see :mod:`lcr_pi.stats.exact`),
otherwise Monte Carlo from the given position with its standard error. Wild decisions that statistics
have to make follow :mod:`lcr_pi.stats.policy` (rob the richest other player).

>>> from lcr_pi.stats.simulate import table_config
>>> odds = opening_odds(table_config(3, 3))
>>> [round(p, 4) for p in odds.probabilities], odds.exact, odds.method
([0.3068, 0.328, 0.3651], True, 'exact')
>>> win_probabilities((0, 5, 0), 0, table_config(3, 3), pot=4).probabilities   # already decided
(0.0, 1.0, 0.0)
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from lcr_pi.errors import UserError
from lcr_pi.rules.config import GameConfig
from lcr_pi.stats.exact import cached_table, exact_feasible, exact_table, state_count
from lcr_pi.stats.policy import choose_victims
from lcr_pi.stats.simulate import simulate_from
from lcr_pi.stats.turns import Rules

#: Mid-game odds solve a table on the spot only when it is this small (solving takes about 40 ms at
#: ~700 positions here: 3 players with up to 5 chips). Larger tables are used once :func:`prepare` (or the odds command) built them.
QUICK_EXACT_STATES = 700

#: Monte Carlo games for the opening odds when the game is too big to solve.
DEFAULT_ESTIMATE_GAMES = 200_000

_PILOT_GAMES = 200


@dataclass(frozen=True)
class Odds:
    """Win probability of each seat, and how it was obtained.

    ``std_error`` is the largest standard error of the seats' probabilities (0 when exact); ``method`` is
    ``"exact"``, ``"decided"`` (the position has a winner already) or ``"monte-carlo"``; ``games`` is the
    number of simulated games behind an estimate.
    """

    probabilities: tuple[float, ...]
    exact: bool
    std_error: float
    method: str
    games: int = 0

    @property
    def favourite(self) -> int:
        """The seat most likely to win (the lowest seat among equals)."""
        return int(np.argmax(self.probabilities))


def prepare(config: GameConfig) -> bool:
    """Solve the exact table for a game in advance (seconds at most); return whether odds will be exact.

    The referee can call this when a game starts (on a worker thread) so that every mid-game answer is a
    look-up. Games too big to solve return False and get Monte Carlo answers.
    """
    rules = Rules.of(config)
    if not exact_feasible(rules, config.total_chips):
        return False
    exact_table(rules, config.total_chips)
    return True


def opening_odds(
    config: GameConfig,
    *,
    rng: np.random.Generator | None = None,
    games: int = DEFAULT_ESTIMATE_GAMES,
    exact_only: bool = False,
) -> Odds:
    """Win probabilities from the opening position (seat 0 rolls first).

    Exact when feasible (may take seconds the first time); otherwise an estimate from ``games`` simulated
    games, or a :class:`UserError` when ``exact_only``.
    """
    rules = Rules.of(config)
    start = (config.starting_chips,) * config.n_players
    if exact_feasible(rules, config.total_chips):
        table = exact_table(rules, config.total_chips)
        return Odds(table.lookup(start, 0), True, 0.0, "exact")
    if exact_only:
        raise UserError(
            f"exact odds for {config.n_players} players with {config.starting_chips} chips each need "
            f"{state_count(rules, config.total_chips):,} positions, too many to solve here"
        )
    return _monte_carlo(config, start, 0, 0, rng, games=games)


def win_probabilities(
    chips: Sequence[int],
    current: int,
    config: GameConfig,
    *,
    pot: int = 0,
    rng: np.random.Generator | None = None,
    budget_ms: float = 50,
    games: int | None = None,
    monte_carlo: bool = False,
) -> Odds:
    """Win probability of each seat from a position: ``chips`` by seat, ``current`` the seat to roll next.

    A ``current`` seat without chips is skipped as in the game. Exact when the exact table is solved
    already or small; otherwise (or with ``monte_carlo=True``) simulated from the position for about
    ``budget_ms`` milliseconds, or exactly ``games`` games for reproducible answers with a seeded ``rng``.
    """
    n = config.n_players
    held, pot, current = _check_position(chips, current, config, pot)
    rules = Rules.of(config)
    in_play = sum(held)
    holders = [seat for seat, c in enumerate(held) if c > 0]
    if not config.last_chip_wins:
        if not holders:
            raise UserError("no player holds chips: the game is over, but the position names no winner")
        if len(holders) == 1:
            return _certain(holders[0], n)
    elif in_play == 0:
        raise UserError("no chips are left outside the pot: the game is over, but the position names no winner")
    roller = next(seat % n for seat in range(current, current + n) if held[seat % n] > 0)

    total = in_play + pot
    table_total = total if rules.pot_matters else max(total, config.total_chips)
    table = None if monte_carlo else cached_table(rules, table_total)
    if table is None and not monte_carlo and state_count(rules, table_total) <= QUICK_EXACT_STATES:
        table = exact_table(rules, table_total)
    if table is not None:
        return Odds(table.lookup(held, roller), True, 0.0, "exact")
    return _monte_carlo(config, held, roller, pot, rng, games=games, budget_ms=budget_ms)


def odds_for_state(state, **kwargs) -> Odds:
    """:func:`win_probabilities` for the rules engine's ``GameState``.

    A finished game gives 1.0 to its winner. A Wild decision still pending is settled as the statistics
    policy would (rob the richest) before the odds are computed. Keyword arguments go to
    :func:`win_probabilities`.
    """
    config = state.config
    if state.winner is not None:
        return _certain(state.winner, config.n_players)
    chips = list(state.chips)
    current = state.current
    pending = getattr(state, "pending", None)
    if pending is not None:
        for victim in choose_victims(chips, pending.seat, pending.take):
            chips[victim] -= 1
            chips[pending.seat] += 1
        current = config.left_of(pending.seat)
    return win_probabilities(chips, current, config, pot=state.pot, **kwargs)


def _certain(winner: int, n: int) -> Odds:
    return Odds(tuple(1.0 if seat == winner else 0.0 for seat in range(n)), True, 0.0, "decided")


def _check_position(chips, current, config: GameConfig, pot) -> tuple[tuple[int, ...], int, int]:
    n = config.n_players
    try:
        held = tuple(int(c) for c in chips)
    except (TypeError, ValueError):
        raise UserError(f"chips must be a list of whole numbers by seat, got {chips!r}") from None
    if len(held) != n:
        raise UserError(f"chips must list {n} players (one per seat), got {len(held)}")
    if any(c < 0 for c in held):
        raise UserError(f"chips cannot be negative, got {list(held)}")
    if isinstance(pot, bool) or not isinstance(pot, (int, np.integer)) or pot < 0:
        raise UserError(f"pot must be a whole number of at least 0, got {pot!r}")
    if isinstance(current, bool) or not isinstance(current, (int, np.integer)) or not 0 <= current < n:
        raise UserError(f"current seat must be from 0 to {n - 1}, got {current!r}")
    return held, int(pot), int(current)


def _monte_carlo(config, chips, roller, pot, rng, *, games=None, budget_ms=None) -> Odds:
    rng = rng if rng is not None else np.random.default_rng()
    n = config.n_players
    started = time.perf_counter()
    result = simulate_from(config, chips, roller, games or _PILOT_GAMES, rng, pot=pot)
    wins = np.bincount(result.winners, minlength=n)
    played = result.games
    if games is None:
        more = _games_that_fit(result, time.perf_counter() - started, budget_ms / 1000)
        if more > 0:
            wins = wins + np.bincount(simulate_from(config, chips, roller, more, rng, pot=pot).winners, minlength=n)
            played += more
    p = wins / played
    std_error = float(np.sqrt(p * (1 - p) / played).max())
    return Odds(tuple(float(x) for x in p), False, std_error, "monte-carlo", played)


#: A simulation step costs a fixed overhead (numpy calls) plus a small cost per active game; one game's
#: roll costs about 1/_ROLLS_PER_STEP_COST of a step's overhead (measured here: ~70 us per step, ~0.17 us
#: per roll). Both are numpy-bound, so the ratio carries over to slower machines.
_ROLLS_PER_STEP_COST = 400


def _games_that_fit(pilot, elapsed: float, budget: float) -> int:
    """How many more games fit in what is left of the budget, judged from the pilot batch."""
    steps = float(pilot.rolls.max()) if pilot.games else 0.0
    rolls = float(pilot.rolls.sum())
    if steps == 0:
        return 0
    step_cost = elapsed / (steps + rolls / _ROLLS_PER_STEP_COST)
    left = 0.8 * (budget - elapsed) / step_cost - 1.1 * steps  # the second batch runs as many steps again
    return max(0, int(left * _ROLLS_PER_STEP_COST / max(pilot.rolls.mean(), 1.0)))
