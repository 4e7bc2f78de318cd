"""Unit tests of every rule of the engine, variant by variant."""

import json

import pytest

from lcr_pi.errors import UserError
from lcr_pi.rules import Game, GameConfig, GameState, RollOff, Series, SeriesRules, choose_victims, roll
from lcr_pi.rules.events import ChipMove
from lcr_pi.rules.faces import Face, parse_face, parse_faces


def kinds(events):
    return [e.kind for e in events]


def state(chips, current=0, pot=None, variant="classic", players=None):
    players = players or [f"P{i}" for i in range(len(chips))]
    config = GameConfig.create(players, variant=variant)
    if pot is None:
        pot = config.total_chips - sum(chips)
    return GameState(config, tuple(chips), pot, current)


# -- setup --------------------------------------------------------------------------------------


def test_defaults_three_chips_seat_order_and_neighbours():
    cfg = GameConfig.create(["Ann", "Bob", "Cy", "Dee"])
    assert cfg.starting_chips == 3
    assert cfg.left_of(0) == 1 and cfg.right_of(0) == 3
    assert cfg.left_of(3) == 0


@pytest.mark.parametrize("n", [3, 8, 20])
def test_tables_of_three_to_twenty(n):
    game = Game(GameConfig.create([f"P{i}" for i in range(n)], starting_chips=5))
    assert game.state.chips == (5,) * n
    assert game.state.dice_to_roll == 3


@pytest.mark.parametrize(
    "players, message",
    [
        (["Ann", "Bob"], "at least 3 players"),
        (["Ann", "Bob", "ann"], "two players are called 'ann'"),
        (["Ann", "", "Cy"], "player 2 has no name"),
    ],
)
def test_bad_tables_are_refused_by_name(players, message):
    with pytest.raises(UserError, match=message):
        GameConfig.create(players)


@pytest.mark.parametrize("chips", [0, -1, 2.5, True])
def test_bad_starting_chips(chips):
    with pytest.raises(UserError, match="starting chips"):
        GameConfig.create(["A", "B", "C"], starting_chips=chips)


def test_unknown_variant_is_named():
    with pytest.raises(UserError, match="unknown variant 'turbo'"):
        GameConfig.create(["A", "B", "C"], variant="turbo")
    with pytest.raises(UserError, match="either 'wild' or 'wild-win'"):
        GameConfig.create(["A", "B", "C"], variant="wild+wild-win")


# -- faces --------------------------------------------------------------------------------------


def test_ordinary_dice_map_to_lcr_faces():
    assert parse_faces("1 2 3 4 5 6") == (Face.DOT,) * 3 + (Face.LEFT, Face.CENTER, Face.RIGHT)
    assert parse_faces([4, "C", "dot"]) == (Face.LEFT, Face.CENTER, Face.DOT)


def test_wild_pip_counts_as_w_only_in_wild_games():
    assert parse_face("1", wild_pip=1) is Face.WILD
    game = Game(GameConfig.create(["A", "B", "C"]))
    game.roll("1 1 1")
    assert game.state.chips == (3, 3, 3)


@pytest.mark.parametrize("bad", ["X", "7", "0", "", "LL"])
def test_unknown_faces_are_named(bad):
    with pytest.raises(UserError, match="unknown face"):
        parse_face(bad)


# -- a classic turn -----------------------------------------------------------------------------


def test_each_face_moves_one_chip():
    game = Game(GameConfig.create(["Ann", "Bob", "Cy", "Dee"]))
    events = game.roll("L R C")
    resolved = events[0]
    assert resolved.moves == (ChipMove("L", 0, 1), ChipMove("R", 0, 3), ChipMove("C", 0, None))
    assert game.state.chips == (0, 4, 3, 4) and game.state.pot == 1
    assert game.state.current_player == "Bob"


def test_dots_keep_chips_and_dice_follow_chips():
    game = Game(GameConfig.create(["Ann", "Bob", "Cy"]))
    game.roll("L L .")  # Ann 1, Bob 5
    assert game.state.dice_to_roll == 3  # Bob holds 5 but rolls at most 3
    game.roll(". . .")
    game.roll(". . .")  # Cy
    assert game.state.current_player == "Ann" and game.state.dice_to_roll == 1


def test_wrong_number_of_dice_is_refused_with_the_reason():
    game = Game(GameConfig.create(["Ann", "Bob", "Cy"]))
    with pytest.raises(UserError, match="Ann holds 3 chips and rolls 3 dice, but the roll has 2"):
        game.roll("L C")
    assert game.state.chips == (3, 3, 3)  # nothing moved


def test_player_without_chips_is_skipped_but_stays_in():
    # P1 has no chips: after P0 it's P2's turn, and P1 gets back in when passed a chip.
    s = state([3, 0, 3, 3], current=0)
    step = roll(s, ". . .")
    assert kinds(step.events) == ["roll_resolved", "player_skipped", "turn_started"]
    assert step.state.current == 2
    step = roll(step.state, ". . R")  # P2 passes right, to P1
    assert step.state.chips[1] == 1
    step = roll(step.state, ". . .")  # P3
    step = roll(step.state, ". . .")  # P0
    assert step.state.current == 1 and step.state.dice_to_roll == 1


def test_game_ends_when_one_player_holds_chips_and_winner_does_not_roll():
    s = state([1, 1, 0], current=0)
    step = roll(s, "C")
    won = step.events[-1]
    assert won.kind == "game_won" and won.player == "P1" and won.pot == 8 and won.reason == "last-holder"
    assert step.state.is_over and step.state.winner == 1 and step.state.dice_to_roll == 0
    with pytest.raises(UserError, match="the game is over: P1 has won"):
        roll(step.state, ".")


def test_passing_the_last_chip_to_a_neighbour_ends_the_game():
    s = state([1, 2, 0], current=0)
    step = roll(s, "L")
    assert step.state.winner == 1


def test_no_w_faces_in_classic_games():
    game = Game(GameConfig.create(["A", "B", "C"]))
    with pytest.raises(UserError, match="not played with Wild dice"):
        game.roll("W . .")


# -- wild -------------------------------------------------------------------------------------


def wild_state(chips, current=0, pot=None, variant="wild"):
    return state(chips, current, pot, variant=variant)


def test_one_w_asks_whom_to_rob_and_refuses_impossible_choices():
    s = wild_state([3, 3, 0, 3])
    step = roll(s, "W . .")
    assert kinds(step.events) == ["roll_resolved", "decision_needed"]
    assert step.events[-1].eligible == (1, 3)
    with pytest.raises(UserError, match="P2 has no chips to take"):
        choose_victims(step.state, 0, [2])
    with pytest.raises(UserError, match="cannot take chips from themself"):
        choose_victims(step.state, 0, [0])
    with pytest.raises(UserError, match="it is P0 who chooses"):
        choose_victims(step.state, "P1", ["P3"])
    with pytest.raises(UserError, match="name 1 player"):
        choose_victims(step.state, 0, [1, 3])
    with pytest.raises(UserError, match="must first choose"):
        roll(step.state, ". . .")
    step = choose_victims(step.state, "P0", "P3")
    assert step.state.chips == (4, 3, 0, 2)
    assert step.state.current == 1


def test_two_w_take_two_from_one_or_one_each_from_two():
    s = wild_state([3, 3, 1, 3])
    step = roll(s, "W W .")
    assert step.state.pending.take == 2
    both = choose_victims(step.state, 0, [1, 1])
    assert both.state.chips == (5, 1, 1, 3)
    split = choose_victims(step.state, 0, [1, 3])
    assert split.state.chips == (5, 2, 1, 2)
    with pytest.raises(UserError, match="P2 has only 1 chip, cannot take 2"):
        choose_victims(step.state, 0, [2, 2])


def test_a_single_legal_choice_is_applied_without_asking():
    s = wild_state([2, 0, 1, 0])
    step = roll(s, "W W")
    taken = [e for e in step.events if e.kind == "chips_taken"][0]
    assert not taken.chosen and taken.victims == (2,)
    # P2 had only one chip: the roller takes what there is, and now holds everything.
    assert step.state.chips == (3, 0, 0, 0) and step.state.winner == 0


def test_w_with_no_one_to_rob_does_nothing():
    s = wild_state([1, 0, 0], variant="wild+last-chip")
    step = roll(s, "W")
    assert "wilds_wasted" in kinds(step.events)
    assert step.state.chips == (1, 0, 0)


def test_lcr_faces_resolve_before_w():
    # P0 passes its chip left to P1, then the W can take it back from P1.
    s = wild_state([2, 0, 0, 1], pot=9)
    step = roll(s, "L W")
    assert step.events[0].moves == (ChipMove("L", 0, 1),)
    assert step.state.pending.eligible == (1, 3)


def test_three_w_take_the_pot_and_play_goes_on():
    s = wild_state([3, 2, 1], pot=3)
    step = roll(s, "W W W")
    assert "pot_taken" in kinds(step.events)
    assert step.state.chips == (6, 2, 1) and step.state.pot == 0 and not step.state.is_over


def test_three_w_win_at_once_by_house_rule():
    s = wild_state([3, 2, 1], pot=3, variant="wild-win")
    step = roll(s, "W W W")
    assert step.events[-1].kind == "game_won" and step.events[-1].reason == "three-wilds"
    assert step.state.winner == 0


def test_ordinary_dice_wild_pip_is_configurable():
    config = GameConfig.create(["A", "B", "C"], variant="wild", wild_pip=3)
    game = Game(config)
    events = game.roll("3 1 2")
    assert events[-1].kind == "decision_needed"
    with pytest.raises(UserError, match="wild pip must be 1, 2 or 3"):
        GameConfig.create(["A", "B", "C"], variant="wild", wild_pip=6)


# -- last chip wins -----------------------------------------------------------------------------


def test_last_chip_wins_keeps_the_sole_holder_rolling():
    s = state([2, 0, 0], pot=7, variant="last-chip")
    step = roll(s, "C .")
    assert not step.state.is_over
    assert kinds(step.events) == ["roll_resolved", "player_skipped", "player_skipped", "turn_started"]
    assert step.state.current == 0 and step.state.dice_to_roll == 1
    step = roll(step.state, "C")
    won = step.events[-1]
    assert won.kind == "game_won" and won.reason == "last-chip" and won.seat == 0 and won.pot == 9


def test_last_chip_passed_on_keeps_the_game_going():
    s = state([1, 0, 0], pot=8, variant="last-chip")
    step = roll(s, "L")
    assert step.state.current == 1 and not step.state.is_over


# -- undo, redo, JSON ------------------------------------------------------------------------


def test_undo_repeatedly_back_to_the_start_then_no_further():
    game = Game(GameConfig.create(["Ann", "Bob", "Cy"]))
    snapshots = [game.state]
    for roll_ in ["L . .", "C R .", ". . L"]:
        game.roll(roll_)
        snapshots.append(game.state)
    for expected in reversed(snapshots[:-1]):
        game.undo()
        assert game.state == expected
    with pytest.raises(UserError, match="nothing to undo"):
        game.undo()


def test_undo_takes_back_a_wild_roll_with_its_choice_and_redo_restores_both():
    game = Game(GameConfig.create(["Ann", "Bob", "Cy"], variant="wild"))
    game.roll("W . .")
    game.choose("Ann", ["Cy"])
    after = game.state
    undone = game.undo()
    assert undone.player == "Ann" and undone.faces == ("W", "dot", "dot")  # as announced: "dot", not "."
    assert game.state.chips == (3, 3, 3) and game.state.pending is None
    game.redo()
    assert game.state == after


def test_a_new_roll_clears_redo():
    game = Game(GameConfig.create(["Ann", "Bob", "Cy"]))
    game.roll("L . .")
    game.undo()
    game.roll("R . .")
    with pytest.raises(UserError, match="nothing to redo"):
        game.redo()


def test_json_round_trip_mid_decision():
    game = Game(GameConfig.create(["Ann", "Bob", "Cy"], variant="wild+last-chip", starting_chips=4), first=2)
    game.roll("W . .")
    text = game.to_json()
    loaded = Game.from_json(text)
    assert loaded.state == game.state and loaded.events == game.events
    assert loaded.to_json() == text


def test_damaged_saves_are_refused_with_the_source_named():
    game = Game(GameConfig.create(["Ann", "Bob", "Cy"]))
    game.roll("L . .")
    data = json.loads(game.to_json())
    data["state"]["chips"] = [3, 3, 3]
    with pytest.raises(UserError, match="state.json: its saved state does not match"):
        Game.from_dict(data, source="state.json")
    data = json.loads(game.to_json())
    data["actions"][0] = {"roll": ["L", "."]}
    with pytest.raises(UserError, match="action 1 cannot be replayed"):
        Game.from_dict(data, source="state.json")
    with pytest.raises(UserError, match="state.json is not valid JSON"):
        Game.from_json('{"format": "lcr-pi-game", ', source="state.json")
    with pytest.raises(UserError, match="not an lcr-pi game"):
        Game.from_json("[]", source="state.json")


def test_a_save_from_an_earlier_lcr_pi_with_every_event_in_it_still_loads_and_is_checked():
    # Saves no longer carry the events (the actions replay to them); one written before still resumes.
    game = Game(GameConfig.create(["Ann", "Bob", "Cy"], variant="wild"))
    game.roll("W R .")
    game.choose("Ann", ["Bob"])
    game.roll("L .")
    data = game.to_dict()
    assert "events" not in data
    data["events"] = [e.to_dict() for e in game.events]
    loaded = Game.from_dict(json.loads(json.dumps(data)))
    assert loaded.state == game.state and loaded.events == game.events and loaded.to_dict() == game.to_dict()
    data["events"][-2]["player"] = "Cy"
    with pytest.raises(UserError, match="state.json: its saved event log does not match"):
        Game.from_dict(data, source="state.json")


# -- roll-off and series -------------------------------------------------------------------------


def test_roll_off_ordinary_dice_ties_roll_again():
    config = GameConfig.create(["Ann", "Bob", "Cy"])
    off = RollOff.start(config)
    off, _ = off.record("Ann", "6 6 6")
    off, _ = off.record("Bob", "6 6 6")
    off, events = off.record("Cy", "1 1 1")
    assert kinds(events) == ["roll_off_rolled", "roll_off_started"]
    assert off.contenders == (0, 1) and off.round == 2
    with pytest.raises(UserError, match="it is Ann's roll"):
        off.record("Cy", "6 6 6")
    off, _ = off.record("Ann", "2 2 2")
    off, events = off.record("Bob", "2 2 1")
    assert off.winner == 0 and events[-1].player == "Ann"


def test_roll_off_lcr_dice_count_dots():
    config = GameConfig.create(["Ann", "Bob", "Cy"])
    off = RollOff.start(config)
    off, _ = off.record(0, "L . .")
    off, _ = off.record(1, ". . .")
    off, _ = off.record(2, "C R .")
    assert off.winner == 1
    with pytest.raises(UserError, match="mixes pip dice and LCR dice"):
        RollOff.start(config).record(0, "6 L .")


def test_series_best_of_ends_early_and_ties_play_on():
    config = GameConfig.create(["Ann", "Bob", "Cy"])
    s = Series.start(config, SeriesRules(best_of=3, next_starter="next-seat"))
    s, _ = s.record_game(0, first=0)
    assert s.next_first() == 1
    s, events = s.record_game(0, first=1)
    assert s.champion == 0 and events[-1].kind == "series_won"  # 2 wins, 1 game left: uncatchable
    s = Series.start(config, SeriesRules(best_of=3))
    for winner in (0, 1, 2):
        s, _ = s.record_game(winner, first=0)
    assert s.champion is None  # three-way tie after three games: play on
    s, _ = s.record_game(2, first=0)
    assert s.champion == 2


def test_series_rules_are_validated():
    with pytest.raises(UserError, match="exactly one"):
        SeriesRules()
    with pytest.raises(UserError, match="next_starter"):
        SeriesRules(first_to=2, next_starter="loser")
    roll_off = Series.start(GameConfig.create(["A", "B", "C"]), SeriesRules(first_to=3, next_starter="roll-off"))
    roll_off, _ = roll_off.record_game(1, first=0)
    assert roll_off.next_first() is None


def test_undo_names_the_faces_as_they_were_announced_not_as_they_were_given():
    # Found by an audit (2026-12-04): after "Bob rolled W, W, dot" (ordinary dice in a Wild game) the table
    # heard "Undone: Bob's roll of 1, 1, 2"; classic pip dice said "4, 1, 6" after "L, dot, R".
    game = Game(GameConfig.create(["Ann", "Bob", "Cy"]))
    game.roll("4 1 6")
    assert game.undo().faces == ("L", "dot", "R")
    wild = Game(GameConfig.create(["Ann", "Bob", "Cy"], variant="wild", wild_pip=1))
    wild.roll("1 1 2")
    wild.choose(0, (1, 2))
    assert wild.undo().faces == ("W", "W", "dot")  # the roll with its choice
    wild.redo()
    assert wild.state.rolls == 1 and wild.undo().faces == ("W", "W", "dot")
