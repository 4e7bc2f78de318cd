"""One turn of many games at once: the rules of LCR written over numpy arrays.

The simulator advances every unfinished game by one roll per step with these functions, and the exact
solver applies them to every state of a level at once, so both read the rules from one place. They follow
the rules engine (``lcr_pi.rules``) exactly:

* the roller moves one chip left (to seat + 1) per L, right (to seat - 1) per R, into the pot per C;
* Wild: after L/C/R, three W take the whole pot (``three_wilds == "pot"``) or win at once (``"win"``);
  one or two W rob other players as :mod:`lcr_pi.stats.policy` chooses;
* classic: when exactly one player holds chips he wins; last chip wins: when no chip is left outside the
  pot, the roller (whose C put the last chip in) wins;
* otherwise the next roller is the next player to the left who holds chips (players with none are
  skipped; with last chip wins that may be the roller again).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lcr_pi.rules.config import GameConfig
from lcr_pi.stats.policy import rob_richest

#: Marks "no winner yet" in winner arrays.
NO_WINNER = -1

#: Below this many games a whole-row search for the next holder is faster than a loop over seats.
_SMALL_BATCH = 1000


@dataclass(frozen=True)
class Rules:
    """The parts of a :class:`GameConfig` that decide how chips move (names do not matter here)."""

    players: int
    wild: bool = False
    three_wilds: str = "pot"
    last_chip_wins: bool = False

    @classmethod
    def of(cls, config: GameConfig) -> "Rules":
        return cls(config.n_players, config.wild, config.three_wilds, config.last_chip_wins)

    @property
    def pot_matters(self) -> bool:
        """Only three W under the box rule bring chips back out of the pot."""
        return self.wild and self.three_wilds == "pot"


def next_holder(
    chips: np.ndarray,
    after: np.ndarray,
    *,
    include_self: bool,
    start: int = 1,
    rows: np.ndarray | None = None,
) -> np.ndarray:
    """For each game, the first seat at ``after + start, after + start + 1, ...`` (to the left) holding chips.

    ``include_self`` lets the search come round to ``after`` itself (last chip wins: a lone holder rolls
    again). ``rows`` restricts the search to those games (``after`` is then given for them only). Games
    where nobody qualifies get :data:`NO_WINNER`.

    >>> next_holder(np.array([[2, 0, 0, 1]]), np.array([0]), include_self=False).tolist()
    [3]
    >>> next_holder(np.array([[2, 0, 0, 0]]), np.array([0]), include_self=True).tolist()
    [0]
    """
    n = chips.shape[1]
    if rows is None:
        rows = np.arange(chips.shape[0])
    stop = n + 1 if include_self else n
    if rows.size == 0 or stop <= start:
        return np.full(rows.size, NO_WINNER, dtype=np.int64)
    if rows.size <= _SMALL_BATCH:
        # Few games: all candidate seats in one gather (fewer numpy calls than a loop over seats).
        seats = (after[:, None] + np.arange(start, stop)[None, :]) % n
        has = chips[rows[:, None], seats] > 0
        first = has.argmax(axis=1)
        pick = np.arange(rows.size)
        return np.where(has[pick, first], seats[pick, first], NO_WINNER)
    # Many games: most find a holder at the first seat or two, so search seat by seat among the rest.
    found = np.full(rows.size, NO_WINNER, dtype=np.int64)
    todo = np.arange(rows.size)
    for step in range(start, stop):
        if todo.size == 0:
            break
        seat = (after[todo] + step) % n
        has = chips[rows[todo], seat] > 0
        found[todo[has]] = seat[has]
        todo = todo[~has]
    return found


def resolve_rolls(
    chips: np.ndarray,
    pot: np.ndarray,
    roller: np.ndarray,
    counts: np.ndarray,
    rules: Rules,
    total: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Apply one roll to each game, in place; return (winner, next roller) per game.

    ``chips`` (games, players) and ``pot`` (games,) are updated; ``roller`` is the seat rolling in each game
    and ``counts`` a (4, games) array of the L, C, R, W faces it showed (the roller must hold at least
    L + C + R chips). ``total`` is every chip of the game, players' and pot's. ``winner`` is the winning
    seat, or :data:`NO_WINNER` where the game goes on; ``next roller`` is meaningful only there.
    """
    games, n = chips.shape
    n_left, n_center, n_right, n_wild = counts
    # Flat indices into the (games, players) array: one gather/scatter per move, each game once.
    flat = chips.reshape(-1)
    base = np.arange(games) * n
    at_roller = base + roller
    at_left = base + (roller + 1) % n
    at_right = base + (roller - 1) % n
    flat[at_roller] -= n_left + n_center + n_right
    flat[at_left] += n_left
    flat[at_right] += n_right
    pot += n_center
    if not np.shares_memory(flat, chips):  # reshape copied a non-contiguous array
        chips[...] = flat.reshape(games, n)
    winner = np.full(games, NO_WINNER, dtype=np.int64)

    if rules.wild:
        three = np.flatnonzero(n_wild == 3)
        if three.size:
            if rules.three_wilds == "win":
                # The roller wins at once; like the engine, the chips stay where the roll left them.
                winner[three] = roller[three]
            else:
                chips[three, roller[three]] += pot[three]
                pot[three] = 0
        robbed = np.flatnonzero((n_wild > 0) & (n_wild < 3))
        if robbed.size:
            block = chips[robbed]
            rob_richest(block, roller[robbed], n_wild[robbed])
            chips[robbed] = block

    open_games = winner == NO_WINNER
    if rules.last_chip_wins:
        ended = open_games & (pot >= total)
        winner[ended] = roller[ended]
    else:
        ended = open_games & ((chips > 0).sum(axis=1) == 1)
        winner[ended] = (chips[ended] > 0).argmax(axis=1)
    going = np.flatnonzero(winner == NO_WINNER)
    following = np.full(games, NO_WINNER, dtype=np.int64)
    following[going] = next_holder(chips, roller[going], include_self=rules.last_chip_wins, rows=going)
    return winner, following
