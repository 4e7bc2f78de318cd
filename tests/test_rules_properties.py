"""Property-based tests: random whole games in every variant keep the rules' invariants."""

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from lcr_pi.rules import MAX_DICE, Game, GameConfig, victim_choices

LCR_FACES = ["L", "C", "R", ".", ".", "."]
WILD_FACES = ["L", "C", "R", "W", ".", "."]
VARIANTS = ["classic", "wild", "wild-win", "last-chip", "wild+last-chip", "wild-win+last-chip"]


@st.composite
def configs(draw):
    n = draw(st.integers(3, 12))
    chips = draw(st.integers(1, 5))
    variant = draw(st.sampled_from(VARIANTS))
    return GameConfig.create([f"P{i}" for i in range(n)], starting_chips=chips, variant=variant)


def play(config, seed, *, max_turns=5000, pip_dice=False, on_step=None):
    """Play a whole random game; Wild choices are random legal ones."""
    rng = random.Random(seed)
    game = Game(config, first=rng.randrange(config.n_players))
    faces = WILD_FACES if config.wild else LCR_FACES
    for _ in range(max_turns):
        state = game.state
        if state.is_over:
            break
        if state.pending is not None:
            choice = rng.choice(victim_choices(state, state.pending.seat, state.pending.take))
            game.choose(state.pending.seat, list(choice))
        else:
            roll = [rng.choice(faces) for _ in range(state.dice_to_roll)]
            if pip_dice:
                roll = [_as_pips(f, config, rng) for f in roll]
            game.roll(roll)
        if on_step:
            on_step(game)
    return game


def _as_pips(face, config, rng):
    if face == ".":
        dots = [p for p in (1, 2, 3) if not (config.wild and p == config.wild_pip)]
        return str(rng.choice(dots))
    if face == "W":
        return str(config.wild_pip)
    return {"L": "4", "C": "5", "R": "6"}[face]


@settings(max_examples=150, deadline=None)
@given(configs(), st.integers(0, 2**32 - 1), st.booleans())
def test_chips_are_conserved_and_every_game_ends_with_exactly_one_winner(config, seed, pip_dice):
    def check(game):
        s = game.state
        assert sum(s.chips) + s.pot == config.total_chips
        assert all(n >= 0 for n in s.chips)
        if not s.is_over and s.pending is None:
            assert s.chips[s.current] > 0  # the player to roll always holds chips
            assert 1 <= s.dice_to_roll <= MAX_DICE

    game = play(config, seed, pip_dice=pip_dice, on_step=check)
    s = game.state
    assert s.is_over
    won = [e for e in game.events if e.kind == "game_won"]
    assert len(won) == 1 and won[0].seat == s.winner
    if config.last_chip_wins and won[0].reason != "three-wilds":
        assert s.pot == config.total_chips
    elif won[0].reason == "last-holder":
        assert s.holders == (s.winner,)


@settings(max_examples=100, deadline=None)
@given(configs(), st.integers(0, 2**32 - 1), st.integers(0, 400))
def test_undo_then_redo_restores_the_identical_state(config, seed, cut):
    game = play(config, seed)
    n_rolls = sum(1 for a in game.actions if a.kind == "roll")
    k = min(cut, n_rolls)
    before_json = game.to_json()
    before_state = game.state
    for _ in range(k):
        game.undo()
    for _ in range(k):
        game.redo()
    assert game.state == before_state
    assert game.to_json() == before_json


@settings(max_examples=100, deadline=None)
@given(configs(), st.integers(0, 2**32 - 1), st.integers(0, 400))
def test_undo_all_the_way_returns_to_the_opening(config, seed, cut):
    game = play(config, seed, max_turns=cut)
    opening = Game(config, first=game.state.first).state
    while game.can_undo:
        game.undo()
    assert game.state == opening


@settings(max_examples=100, deadline=None)
@given(configs(), st.integers(0, 2**32 - 1), st.integers(0, 400))
def test_json_round_trips_exactly_at_any_point(config, seed, cut):
    game = play(config, seed, max_turns=cut)
    if game.can_undo and cut % 3 == 0:
        game.undo()  # keep a redo stack in the saved form too
    text = game.to_json()
    loaded = Game.from_json(text)
    assert loaded.state == game.state
    assert loaded.events == game.events
    assert loaded.to_json() == text
