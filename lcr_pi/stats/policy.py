"""Whom a Wild roll robs when no person is there to choose: the one policy statistics use.

In a real game the roller chooses the victims of his W faces and the engine asks him. The simulator and
the odds need a fixed choice, and it lives here only:

    Each W takes one chip, one at a time, from the richest other player; ties go to the nearest seat
    to the roller's left (the next to play). Nobody is robbed of a chip he does not have, and the
    roller never robs himself; a W that finds nobody with chips does nothing.

Taking chips one at a time means two W take 2 chips from one player when he is strictly richer than
everyone else even after losing one, and 1 each from the two richest otherwise.

>>> choose_victims((3, 3, 3, 3), roller=0, wilds=2)   # all tied: nearest to the left first
(1, 2)
>>> choose_victims((1, 0, 5, 2), roller=0, wilds=2)   # seat 2 is still richest after one
(2, 2)
>>> choose_victims((4, 0, 0), roller=0, wilds=1)      # no one else has chips: W does nothing
()
>>> choose_victims((0, 1, 0, 3), roller=3, wilds=2)   # the others hold fewer chips than W faces
(1,)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def choose_victims(chips: Sequence[int], roller: int, wilds: int) -> tuple[int, ...]:
    """The seats robbed by ``wilds`` W faces of ``roller``, one entry per chip taken, in order."""
    held = list(chips)
    n = len(held)
    taken: list[int] = []
    for _ in range(wilds):
        victim = None
        for distance in range(1, n):
            seat = (roller + distance) % n
            if held[seat] > 0 and (victim is None or held[seat] > held[victim]):
                victim = seat
        if victim is None:
            break
        held[victim] -= 1
        taken.append(victim)
    return tuple(taken)


def rob_richest(chips: np.ndarray, roller: np.ndarray, wilds: np.ndarray) -> None:
    """Apply :func:`choose_victims` to many games at once, in place.

    ``chips`` is (games, players); ``roller`` and ``wilds`` are per game. Chips move to the roller.
    """
    games, n = chips.shape
    if games == 0:
        return
    rows = np.arange(games)
    # Distance of each seat to the roller's left: 1 for the next player ... n-1 for the right neighbour.
    distance = (np.arange(n)[None, :] - roller[:, None]) % n
    tie_break = np.where(distance == 0, 0, n - distance)
    for step in range(1, int(wilds.max()) + 1):
        sub = np.flatnonzero(wilds >= step)
        if sub.size == 0:
            break
        held = chips[sub].astype(np.int64)
        key = held * n + tie_break[sub]
        key[(held <= 0) | (distance[sub] == 0)] = -1
        victim = key.argmax(axis=1)
        ok = key[rows[: sub.size], victim] >= 0
        sub, victim = sub[ok], victim[ok]
        chips[sub, victim] -= 1
        chips[sub, roller[sub]] += 1
