"""Exact odds (the solved Markov chain) and mid-game odds (exact or Monte Carlo)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lcr_pi.errors import UserError
from lcr_pi.rules import engine
from lcr_pi.rules.config import GameConfig
from lcr_pi.stats.exact import exact_feasible, exact_table, state_count
from lcr_pi.stats.odds import Odds, odds_for_state, opening_odds, prepare, win_probabilities
from lcr_pi.stats.simulate import table_config
from lcr_pi.stats.turns import Rules

VARIANTS = ["classic", "wild", "wild-win", "last-chip", "wild+last-chip", "wild-win+last-chip"]


def test_three_players_three_chips_seat_0_wins_30_68_percent():
    odds = opening_odds(table_config(3, 3))
    assert odds.exact and odds.method == "exact" and odds.std_error == 0
    assert round(odds.probabilities[0], 4) == 0.3068
    assert sum(odds.probabilities) == pytest.approx(1, abs=1e-12)
    # Rolling first is a disadvantage: the last seat is favoured.
    assert odds.probabilities[0] < odds.probabilities[1] < odds.probabilities[2]


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("players, chips", [(3, 3), (4, 2), (3, 4)])
def test_probabilities_sum_to_one_in_every_variant(variant, players, chips):
    odds = opening_odds(table_config(players, chips, variant))
    assert odds.exact
    assert sum(odds.probabilities) == pytest.approx(1, abs=1e-12)
    assert all(0 < p < 1 for p in odds.probabilities)


def test_a_lone_holder_has_won():
    odds = win_probabilities((0, 0, 5, 0), 1, table_config(4, 3), pot=7)
    assert odds == Odds((0.0, 0.0, 1.0, 0.0), True, 0.0, "decided")


@pytest.mark.parametrize(
    "players, expected",
    # Last chip wins with one chip left: a symmetric random walk. The holder's chance q0 solves
    # q_d = [d == 0]/6 + q_d/2 + (q_{d-1} + q_{d+1})/6; for 3 seats q = (1/2, 1/4, 1/4),
    # for 4 seats q = (7/15, 1/5, 2/15, 1/5).
    [(3, (Fraction(1, 2), Fraction(1, 4), Fraction(1, 4))),
     (4, (Fraction(7, 15), Fraction(1, 5), Fraction(2, 15), Fraction(1, 5)))],
)
def test_one_chip_left_in_last_chip_wins_is_a_random_walk(players, expected):
    config = table_config(players, 3, "last-chip")
    chips = [0] * players
    chips[1] = 1
    assert prepare(config)
    odds = win_probabilities(chips, 0, config, pot=config.total_chips - 1)  # seat 0 is skipped
    assert odds.exact
    shifted = expected[-1:] + expected[:-1]  # the holder is seat 1
    assert odds.probabilities == pytest.approx([float(q) for q in shifted], abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    chips=st.lists(st.integers(0, 3), min_size=4, max_size=4).filter(lambda c: sum(x > 0 for x in c) >= 2),
    current=st.integers(0, 3),
    turn=st.integers(0, 3),
)
def test_turning_the_table_turns_the_odds(chips, current, turn):
    config = table_config(4, 3)
    assert prepare(config)
    odds = win_probabilities(chips, current, config)
    assert odds.exact
    turned = win_probabilities(chips[turn:] + chips[:turn], (current - turn) % 4, config)
    assert turned.probabilities == pytest.approx(odds.probabilities[turn:] + odds.probabilities[:turn], abs=1e-12)


def test_unsolved_tables_are_not_built_mid_game_when_big():
    from lcr_pi.stats import exact

    config = table_config(4, 4, "wild")
    exact._TABLES.pop((Rules.of(config), config.total_chips), None)
    odds = win_probabilities((4, 4, 4, 4), 0, config, rng=np.random.default_rng(0), budget_ms=20)
    assert odds.method == "monte-carlo"
    assert prepare(config)
    assert win_probabilities((4, 4, 4, 4), 0, config).method == "exact"


def test_skipped_seat_changes_nothing():
    config = table_config(4, 3)
    prepare(config)
    assert win_probabilities((0, 0, 4, 3), 0, config) == win_probabilities((0, 0, 4, 3), 2, config)


@pytest.mark.parametrize(
    "variant, chips, pot, current",
    [("classic", (2, 0, 4, 1), 5, 1), ("wild", (1, 3, 0, 2), 6, 3), ("last-chip", (0, 2, 1, 0), 9, 0)],
)
def test_monte_carlo_agrees_with_exact_within_its_error(variant, chips, pot, current):
    config = table_config(4, 3, variant)
    assert prepare(config)
    exact = win_probabilities(chips, current, config, pot=pot)
    assert exact.exact and exact.std_error == 0
    estimate = win_probabilities(chips, current, config, pot=pot, rng=np.random.default_rng(11),
                                 games=20000, monte_carlo=True)
    assert not estimate.exact and estimate.method == "monte-carlo" and estimate.games == 20000
    assert 0 < estimate.std_error < 0.01
    for p, q in zip(estimate.probabilities, exact.probabilities):
        assert abs(p - q) < 4.5 * estimate.std_error


def test_big_games_get_a_monte_carlo_answer_within_budget():
    config = table_config(10, 3)
    assert not exact_feasible(Rules.of(config), config.total_chips)
    odds = win_probabilities((3,) * 10, 0, config, rng=np.random.default_rng(1), budget_ms=50)
    assert not odds.exact and odds.games >= 200
    assert sum(odds.probabilities) == pytest.approx(1)
    assert 0 < odds.std_error < 0.05
    opening = opening_odds(config, rng=np.random.default_rng(1), games=2000)
    assert opening.method == "monte-carlo" and opening.games == 2000
    with pytest.raises(UserError, match="too many to solve"):
        opening_odds(config, exact_only=True)


def test_the_state_count_is_the_table_size():
    rules = Rules(4, last_chip_wins=True)  # no filter: every counted position is in the table
    assert exact_table(rules, 8).keys.size == state_count(rules, 8)


def test_odds_for_engine_states():
    config = GameConfig.create(["Ann", "Bob", "Cy"])
    state = engine.GameState.start(config)
    assert odds_for_state(state).probabilities == pytest.approx(opening_odds(config).probabilities)
    step = engine.roll(state, "L C .")
    assert odds_for_state(step.state) == win_probabilities((1, 4, 3), 1, config, pot=1)
    finished = engine.GameState(config, (0, 8, 0), 1, 1, winner=1)
    assert odds_for_state(finished).probabilities == (0.0, 1.0, 0.0)


def test_odds_for_a_pending_wild_decision_rob_the_richest():
    config = GameConfig.create(["Ann", "Bob", "Cy"], variant="wild")
    step = engine.roll(engine.GameState.start(config), "W . .")
    assert step.state.pending is not None
    # Rob the richest, ties to the left: Ann takes from Bob, then Bob rolls.
    assert odds_for_state(step.state) == win_probabilities((4, 2, 3), 1, config, pot=0)


@pytest.mark.parametrize(
    "chips, current, pot, message",
    [((3, 3), 0, 0, "list 3 players"), ((3, -1, 3), 0, 0, "negative"), ((3, 3, 3), 3, 0, "current seat"),
     ((3, 3, 3), 0, -1, "pot"), ((0, 0, 0), 0, 9, "no player holds chips")],
)
def test_bad_positions_are_refused(chips, current, pot, message):
    with pytest.raises(UserError, match=message):
        win_probabilities(chips, current, table_config(3, 3), pot=pot)
