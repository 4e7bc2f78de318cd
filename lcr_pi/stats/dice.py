"""What a roll of k LCR dice can do, as small precomputed tables.

A roll of k dice matters only through how many L, C, R (and W) faces it shows: a multinomial outcome.
Two forms are kept:

* :func:`roll_tables` — for the simulator. All 6**3 = 216 equally likely ordered rolls of three dice,
  indexed 0..215; the first k base-6 digits of the index are the faces of a k-dice roll (uniform over
  6**k, since 6**k divides 216). One random integer per turn and one table look-up give the counts, which
  is exactly the multinomial distribution without rolling each die.
* :func:`outcome_distribution` — for the exact solver: each distinct (L, C, R, W) count with its
  probability.

Faces: classic dice are L, C, R, dot, dot, dot; Wild dice are L, C, R, W, dot, dot.

>>> dist = outcome_distribution(1, wild=False)
>>> [(o, round(p, 4)) for o, p in dist]
[((0, 0, 0, 0), 0.5), ((0, 0, 1, 0), 0.1667), ((0, 1, 0, 0), 0.1667), ((1, 0, 0, 0), 0.1667)]
>>> round(sum(p for _, p in outcome_distribution(3, wild=True)), 12)
1.0
"""

from __future__ import annotations

from functools import lru_cache
from itertools import product

import numpy as np

from lcr_pi.rules.config import MAX_DICE

#: Number of equally likely ordered rolls of MAX_DICE dice.
ROLLS = 6**MAX_DICE

# Face codes on the six sides of a die: 0 dot, 1 L, 2 C, 3 R, 4 W.
_CLASSIC_SIDES = (1, 2, 3, 0, 0, 0)
_WILD_SIDES = (1, 2, 3, 4, 0, 0)


def _sides(wild: bool) -> tuple[int, ...]:
    return _WILD_SIDES if wild else _CLASSIC_SIDES


@lru_cache(maxsize=None)
def roll_tables(wild: bool) -> np.ndarray:
    """Counts of L, C, R, W for every (dice, roll index): an int8 array of shape (4, MAX_DICE+1, ROLLS).

    ``tables[:, k, r]`` are the counts shown by the first ``k`` dice of ordered roll ``r``.

    >>> t = roll_tables(False)
    >>> t.shape, int(t[:, 0].sum())
    ((4, 4, 216), 0)
    >>> [int(x) for x in t[:, 3].sum(axis=1)]  # over all 216 rolls of 3 dice: 3*216/6 of each face
    [108, 108, 108, 0]
    """
    sides = _sides(wild)
    tables = np.zeros((4, MAX_DICE + 1, ROLLS), dtype=np.int8)
    for r in range(ROLLS):
        digits = [(r // 6**i) % 6 for i in range(MAX_DICE)]
        for k in range(MAX_DICE + 1):
            for d in digits[:k]:
                face = sides[d]
                if face:
                    tables[face - 1, k, r] += 1
    tables.setflags(write=False)
    return tables


@lru_cache(maxsize=None)
def outcome_distribution(dice: int, wild: bool) -> tuple[tuple[tuple[int, int, int, int], float], ...]:
    """Distinct (L, C, R, W) counts of a roll of ``dice`` dice with their probabilities, sorted."""
    sides = _sides(wild)
    counts: dict[tuple[int, int, int, int], int] = {}
    for faces in product(range(6), repeat=dice):
        tally = [0, 0, 0, 0]
        for d in faces:
            if sides[d]:
                tally[sides[d] - 1] += 1
        key = tuple(tally)
        counts[key] = counts.get(key, 0) + 1
    total = 6**dice
    return tuple((key, n / total) for key, n in sorted(counts.items()))
