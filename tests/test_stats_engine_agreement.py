"""The statistics' vectorised rules move chips exactly as the rules engine does, roll by roll."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from lcr_pi.rules import engine
from lcr_pi.rules.config import MAX_DICE, GameConfig
from lcr_pi.stats.policy import choose_victims
from lcr_pi.stats.turns import NO_WINNER, Rules, resolve_rolls

FACES = ["L", "C", "R", "dot", "W"]
VARIANTS = ["classic", "wild", "wild-win", "last-chip", "wild+last-chip", "wild-win+last-chip"]


@st.composite
def positions(draw):
    n = draw(st.integers(3, 6))
    variant = draw(st.sampled_from(VARIANTS))
    config = GameConfig.create([f"P{i}" for i in range(n)], variant=variant)
    chips = draw(st.lists(st.integers(0, 5), min_size=n, max_size=n))
    roller = draw(st.integers(0, n - 1))
    if chips[roller] == 0:
        chips[roller] = draw(st.integers(1, 5))
    if not config.last_chip_wins and sum(1 for c in chips if c > 0) < 2:
        chips[(roller + 1) % n] += 1  # a classic game with one holder is over already
    pot = draw(st.integers(0, 6))
    faces = draw(
        st.lists(st.sampled_from(FACES if config.wild else FACES[:4]),
                 min_size=min(chips[roller], MAX_DICE), max_size=min(chips[roller], MAX_DICE))
    )
    return config, chips, pot, roller, faces


@settings(max_examples=400, deadline=None)
@given(positions())
def test_one_roll_matches_the_engine(position):
    config, chips, pot, roller, faces = position
    state = engine.GameState(config, tuple(chips), pot, roller)
    step = engine.roll(state, faces)
    after = step.state
    if after.pending is not None:
        victims = choose_victims(after.chips, after.pending.seat, after.pending.take)
        after = engine.choose_victims(after, after.pending.seat, list(victims)).state

    counts = np.array([[faces.count("L")], [faces.count("C")], [faces.count("R")], [faces.count("W")]])
    array = np.array([chips], dtype=np.int64)
    pots = np.array([pot], dtype=np.int64)
    winner, following = resolve_rolls(array, pots, np.array([roller]), counts, Rules.of(config), sum(chips) + pot)

    assert tuple(array[0].tolist()) == after.chips
    assert int(pots[0]) == after.pot
    if after.winner is not None:
        assert int(winner[0]) == after.winner
    else:
        assert int(winner[0]) == NO_WINNER
        assert int(following[0]) == after.current
