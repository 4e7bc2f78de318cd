"""The simulator: reproducible, conserves chips, ends games by the rules, agrees with the exact odds."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lcr_pi.errors import UserError
from lcr_pi.rules.config import MAX_DICE
from lcr_pi.stats.dice import ROLLS, outcome_distribution, roll_tables
from lcr_pi.stats.exact import exact_table
from lcr_pi.stats.policy import choose_victims, rob_richest
from lcr_pi.stats.simulate import simulate, simulate_from, table_config
from lcr_pi.stats.turns import Rules

VARIANTS = ["classic", "wild", "wild-win", "last-chip", "wild+last-chip", "wild-win+last-chip"]


def test_seeded_runs_are_reproducible():
    a = simulate({"players": 4, "chips": 3, "variant": "wild"}, 3000, np.random.default_rng(42))
    b = simulate({"players": 4, "chips": 3, "variant": "wild"}, 3000, np.random.default_rng(42))
    c = simulate({"players": 4, "chips": 3, "variant": "wild"}, 3000, np.random.default_rng(43))
    assert np.array_equal(a.winners, b.winners) and np.array_equal(a.rolls, b.rolls)
    assert not np.array_equal(a.winners, c.winners)


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_game_conserves_chips_and_ends_by_the_rules(variant):
    config = table_config(4, 3, variant)
    result = simulate(config, 4000, np.random.default_rng(7))
    total = config.total_chips
    assert np.all(result.final_chips.sum(axis=1) + result.final_pot == total)
    assert np.all(result.final_chips >= 0) and np.all(result.final_pot >= 0)
    assert np.all(result.rolls >= 1)
    assert sum(result.wins) == result.games
    assert sum(result.win_rate) == pytest.approx(1.0)
    holders = (result.final_chips > 0).sum(axis=1)
    if config.last_chip_wins:
        # Every chip ends in the pot, except when three W win a wild-win game outright.
        ended_by_last_chip = result.final_pot == total
        if config.three_wilds == "win":
            assert ended_by_last_chip.mean() > 0.5
        else:
            assert ended_by_last_chip.all()
    else:
        lone = holders == 1
        if config.wild and config.three_wilds == "win":
            assert lone.mean() > 0.5
        else:
            assert lone.all()
        winners_hold = result.final_chips[np.arange(result.games), result.winners] > 0
        assert winners_hold[lone].all()


def test_three_wilds_winning_makes_games_shorter():
    rng = np.random.default_rng(3)
    box = simulate({"players": 5, "variant": "wild"}, 20000, rng)
    house = simulate({"players": 5, "variant": "wild-win"}, 20000, rng)
    assert house.mean_rolls < box.mean_rolls - 1.0


def test_rolls_statistics_are_ordered():
    result = simulate({"players": 5}, 5000, np.random.default_rng(0))
    p = result.rolls_percentiles
    assert p["p5"] <= p["p25"] <= p["p50"] <= p["p75"] <= p["p95"] <= p["max"]
    assert p["p5"] <= result.mean_rolls <= p["p95"]
    # Four of the five players must empty their hands, one roll each at the very least.
    assert result.rolls.min() >= 4


@pytest.mark.parametrize(
    "players, variant, games",
    [(3, "classic", 60000), (4, "classic", 60000), (5, "classic", 60000), (3, "wild", 40000),
     (4, "wild-win", 40000), (3, "last-chip", 40000), (3, "wild+last-chip", 40000)],
)
def test_simulator_agrees_with_exact_odds(players, variant, games):
    config = table_config(players, 3, variant)
    result = simulate(config, games, np.random.default_rng(2024 + players))
    exact = exact_table(Rules.of(config), config.total_chips).lookup((3,) * players, 0)
    for rate, err, p in zip(result.win_rate, result.std_error, exact):
        assert abs(rate - p) < 4.5 * err, (rate, p, err)


def test_simulating_from_a_decided_position_needs_no_roll():
    result = simulate_from(table_config(3, 3), (0, 7, 0), 0, 10, np.random.default_rng(0), pot=2)
    assert set(result.winners.tolist()) == {1} and result.rolls.max() == 0


def test_simulating_from_a_position_skips_a_seat_without_chips():
    # Seat 0 has no chips, so seat 1 rolls first: with 1 chip in last-chip rules, seat 1 is the roller of
    # a symmetric random walk and wins half the time (see test_stats_odds).
    config = table_config(3, 3, "last-chip")
    result = simulate_from(config, (0, 1, 0), 0, 40000, np.random.default_rng(5), pot=8)
    assert abs(result.win_rate[1] - 0.5) < 4.5 * result.std_error[1]


def test_bad_games_are_refused():
    with pytest.raises(UserError, match="games must be"):
        simulate({"players": 3}, 0, np.random.default_rng(0))
    with pytest.raises(UserError, match="at least 3 players"):
        simulate({"players": 2}, 10, np.random.default_rng(0))
    with pytest.raises(UserError, match="unknown simulation parameter"):
        simulate({"players": 3, "seats": 4}, 10, np.random.default_rng(0))


@pytest.mark.parametrize("wild", [False, True])
def test_roll_tables_match_the_multinomial_outcomes(wild):
    tables = roll_tables(wild)
    for dice in range(1, MAX_DICE + 1):
        seen: dict[tuple, int] = {}
        for r in range(ROLLS):
            key = tuple(int(x) for x in tables[:, dice, r])
            seen[key] = seen.get(key, 0) + 1
        expected = dict(outcome_distribution(dice, wild))
        assert set(seen) == set(expected)
        for key, count in seen.items():
            assert count / ROLLS == pytest.approx(expected[key])
    # Classic: a die shows a dot half of the time, so one die moves nothing with probability 1/2.
    assert dict(outcome_distribution(1, wild))[(0, 0, 0, 0)] == pytest.approx(1 / 3 if wild else 1 / 2)


@settings(max_examples=200, deadline=None)
@given(
    chips=st.lists(st.integers(0, 6), min_size=3, max_size=7),
    roller=st.integers(0, 6),
    wilds=st.integers(1, 2),
)
def test_vectorised_robbing_follows_the_policy(chips, roller, wilds):
    roller %= len(chips)
    array = np.array([chips])
    rob_richest(array, np.array([roller]), np.array([wilds]))
    expected = list(chips)
    for victim in choose_victims(chips, roller, wilds):
        assert victim != roller and expected[victim] > 0
        expected[victim] -= 1
        expected[roller] += 1
    assert array[0].tolist() == expected
    assert len(choose_victims(chips, roller, wilds)) == min(wilds, sum(chips) - chips[roller])
