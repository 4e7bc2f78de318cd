"""Exact win probabilities: the game's Markov chain solved over every reachable position.

A position is the chips of each player counted from the seat about to roll (the roller is seat 0 of the
position; he holds chips, since players without chips are skipped). Rotating like this divides the states
by the number of players. The pot is not part of a position: it is the game's total minus the chips in
play, and outside Wild's box rule (three W take the pot back) it never matters.

Chips in play never rise except through three W under the box rule, so positions are solved level by
level, from few chips in play upwards. Within a level only L, R, W and dot faces move chips, a linear
system ``x = b + A x`` with ``A`` a contraction (every roll has at least a 1/6 chance of a C, which leaves
the level, and some positions end the game), solved by iteration to a change below 1e-14. Under the box
rule three W jump back to the full level, so the level sweep is repeated until nothing changes.

The values of a level are stored as a table: sorted position keys and, for each, the probability that
each seat (counted from the roller) wins. Tables are cached per rules and total.

>>> from lcr_pi.stats.turns import Rules
>>> table = exact_table(Rules(3), 9)
>>> [round(p, 4) for p in table.lookup((3, 3, 3), 0)]
[0.3068, 0.328, 0.3651]
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from math import comb

import numpy as np

from lcr_pi.errors import UserError
from lcr_pi.rules.config import MAX_DICE
from lcr_pi.stats.dice import outcome_distribution
from lcr_pi.stats.turns import NO_WINNER, Rules, resolve_rolls

#: Above this many positions the exact solution takes too long (or too much memory) for a command that
#: should answer in seconds; callers fall back to Monte Carlo. Measured here: 6 players x 3 chips (100,946
#: positions) 2 s, 5 x 5 (118,754) 2 s; 7 x 3 (888,029) would take 38 s and 1.4 GB.
EXACT_STATE_LIMIT = 150_000
#: The box rule (three W take the pot) couples all levels, so the sweep repeats: 5 x 4 Wild (42,503) 5 s.
EXACT_STATE_LIMIT_POT = 50_000

_TOLERANCE = 1e-14
_MAX_ITERATIONS = 20_000


def state_count(rules: Rules, total: int) -> int:
    """How many positions the exact table for ``total`` chips holds (before the classic filter).

    >>> state_count(Rules(5), 15)
    11627
    """
    n = rules.players
    first = 1 if rules.last_chip_wins else 2
    # Positions with t chips in play and the roller holding at least one: compositions of t - 1.
    return sum(comb(t - 1 + n - 1, n - 1) for t in range(first, total + 1))


def exact_feasible(rules: Rules, total: int) -> bool:
    """Whether :func:`exact_table` answers in reasonable time (see :data:`EXACT_STATE_LIMIT`)."""
    limit = EXACT_STATE_LIMIT_POT if rules.pot_matters else EXACT_STATE_LIMIT
    return state_count(rules, total) <= limit and (total + 1) ** rules.players < 2**62


@dataclass(frozen=True, eq=False)
class ExactTable:
    """Win probabilities of every position with at most ``total`` chips in play."""

    rules: Rules
    total: int
    keys: np.ndarray  # (positions,) sorted
    values: np.ndarray  # (positions, players): chance that the seat so far left of the roller wins

    def covers(self, chips_in_play: int, pot: int) -> bool:
        """Whether a position with these chips belongs to this table."""
        if self.rules.pot_matters:
            return chips_in_play + pot == self.total
        return chips_in_play <= self.total

    def lookup(self, chips, roller: int) -> tuple[float, ...]:
        """Win probability by seat for ``chips`` (by seat) with ``roller`` about to roll (he holds chips)."""
        n = self.rules.players
        relative = np.roll(np.asarray(chips, dtype=np.int64), -roller)
        index = _find(self.keys, _encode(relative[None, :], self.total))[0]
        if index < 0:
            raise UserError(f"position {tuple(chips)} with seat {roller} to roll is not a game position")
        by_seat = np.roll(self.values[index], roller)
        return tuple(float(x) for x in by_seat[:n])


def _encode(states: np.ndarray, total: int) -> np.ndarray:
    base = total + 1
    weights = base ** np.arange(states.shape[1], dtype=np.int64)
    return states.astype(np.int64) @ weights


def _find(keys: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Index of each wanted key in sorted ``keys``, or -1."""
    pos = np.searchsorted(keys, wanted)
    pos_clipped = np.minimum(pos, keys.size - 1)
    return np.where((pos < keys.size) & (keys[pos_clipped] == wanted), pos_clipped, -1)


@lru_cache(maxsize=None)
def _compositions(total: int, parts: int) -> np.ndarray:
    """All vectors of ``parts`` non-negative integers summing to ``total``."""
    if parts == 1:
        return np.array([[total]], dtype=np.int64)
    blocks = []
    for first in range(total + 1):
        rest = _compositions(total - first, parts - 1)
        blocks.append(np.hstack([np.full((rest.shape[0], 1), first, dtype=np.int64), rest]))
    return np.vstack(blocks)


def _level_states(rules: Rules, level: int) -> np.ndarray:
    """Positions with ``level`` chips in play, the roller (column 0) holding at least one."""
    states = _compositions(level - 1, rules.players).copy()
    states[:, 0] += 1
    if not rules.last_chip_wins:
        states = states[(states > 0).sum(axis=1) >= 2]  # one holder: the game is over
    return states


@dataclass
class _Level:
    states: np.ndarray
    keys: np.ndarray
    values: np.ndarray
    terminal: np.ndarray  # (positions, players): chance of winning on this very roll
    # Transitions to positions of a level: level -> (flat rows, flat columns, weights) over
    # positions x players, so that contribution = bincount(rows, weights * values[level].flat[columns]).
    links: dict


def _build_level(rules: Rules, total: int, level: int, keys_of: dict) -> _Level:
    n = rules.players
    states = _level_states(rules, level)
    keys = _encode(states, total)
    order = np.argsort(keys)
    states, keys = states[order], keys[order]
    terminal = np.zeros((states.shape[0], n))
    parts: dict[int, list] = {}
    seats = np.arange(n)
    for dice in range(1, MAX_DICE + 1):
        rows = np.flatnonzero(np.minimum(states[:, 0], MAX_DICE) == dice)
        if rows.size == 0:
            continue
        for outcome, prob in outcome_distribution(dice, rules.wild):
            chips = states[rows].copy()
            pot = np.full(rows.size, total - level, dtype=np.int64)
            counts = np.repeat(np.array(outcome, dtype=np.int64)[:, None], rows.size, axis=1)
            roller = np.zeros(rows.size, dtype=np.int64)
            winner, following = resolve_rolls(chips, pot, roller, counts, rules, total)
            won = winner != NO_WINNER
            np.add.at(terminal, (rows[won], winner[won]), prob)
            go = np.flatnonzero(~won)
            if go.size == 0:
                continue
            shift = following[go]
            rotated = chips[go[:, None], (seats[None, :] + shift[:, None]) % n]
            target_level = int(rotated[0].sum())
            target = _find(keys_of[target_level], _encode(rotated, total))
            if (target < 0).any():
                raise AssertionError("a move led outside the table of positions")
            # values[row, i] += prob * values'[target, (i - shift) % n]
            flat_rows = (rows[go][:, None] * n + seats[None, :]).ravel()
            flat_cols = (target[:, None] * n + (seats[None, :] - shift[:, None]) % n).ravel()
            parts.setdefault(target_level, []).append((flat_rows, flat_cols, np.full(flat_rows.size, prob)))
    links = {
        lvl: tuple(np.concatenate([p[i] for p in pieces]) for i in range(3)) for lvl, pieces in parts.items()
    }
    return _Level(states, keys, np.zeros_like(terminal), terminal, links)


def _apply(link, values: np.ndarray, size: int) -> np.ndarray:
    rows, cols, weights = link
    return np.bincount(rows, weights=weights * values.ravel()[cols], minlength=size)


def _solve_level(level: int, levels: dict[int, _Level]) -> float:
    """Update one level's values given the others'; return the largest change."""
    this = levels[level]
    size = this.terminal.size
    fixed = this.terminal.ravel().copy()
    for target, link in this.links.items():
        if target != level:
            fixed += _apply(link, levels[target].values, size)
    inner = this.links.get(level)
    x = this.values.ravel().copy()
    previous = x.copy()
    if inner is None:
        x = fixed
    else:
        for _ in range(_MAX_ITERATIONS):
            new = fixed + _apply(inner, x.reshape(this.values.shape), size)
            change = np.abs(new - x).max() if new.size else 0.0
            x = new
            if change < _TOLERANCE:
                break
        else:  # pragma: no cover - the contraction guarantees convergence long before
            raise RuntimeError(f"exact odds did not converge at level {level}")
    this.values = x.reshape(this.values.shape)
    return float(np.abs(x - previous).max()) if x.size else 0.0


_TABLES: dict[tuple[Rules, int], ExactTable] = {}
_TABLES_KEPT = 16


def cached_table(rules: Rules, total: int) -> ExactTable | None:
    """The table if it was solved already (a look-up costs microseconds), else None."""
    return _TABLES.get((rules, total))


def exact_table(rules: Rules, total: int) -> ExactTable:
    """Solve every position of a game with ``total`` chips (players' plus pot) under ``rules``. Cached."""
    table = _TABLES.get((rules, total))
    if table is None:
        table = _solve(rules, total)
        if len(_TABLES) >= _TABLES_KEPT:
            _TABLES.pop(next(iter(_TABLES)))
        _TABLES[(rules, total)] = table
    return table


def _solve(rules: Rules, total: int) -> ExactTable:
    if not exact_feasible(rules, total):
        raise UserError(
            f"exact odds for {rules.players} players and {total} chips need {state_count(rules, total):,} "
            "positions, too many to solve here"
        )
    first = 1 if rules.last_chip_wins else 2
    keys_of = {}
    for level in range(first, total + 1):
        keys_of[level] = np.sort(_encode(_level_states(rules, level), total))
    levels: dict[int, _Level] = {}
    if rules.pot_matters:
        for level in range(first, total + 1):
            levels[level] = _build_level(rules, total, level, keys_of)
        for _ in range(_MAX_ITERATIONS):
            change = max(_solve_level(level, levels) for level in range(first, total + 1))
            if change < _TOLERANCE:
                break
    else:
        for level in range(first, total + 1):
            levels[level] = _build_level(rules, total, level, keys_of)
            _solve_level(level, levels)
            levels[level].links = {}  # free memory: lower levels are final
    ordered = [levels[level] for level in range(first, total + 1)]
    keys = np.concatenate([lv.keys for lv in ordered]) if ordered else np.zeros(0, dtype=np.int64)
    values = np.vstack([lv.values for lv in ordered]) if ordered else np.zeros((0, rules.players))
    order = np.argsort(keys)
    keys, values = keys[order], values[order]
    keys.setflags(write=False)
    values.setflags(write=False)
    return ExactTable(rules, total, keys, values)
