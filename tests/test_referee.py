"""The referee's decisions, exactly: what it says and does for each settled roll and button."""

import random
import re

import pytest

from lcr_pi.errors import UserError
from lcr_pi.referee import (
    Attention,
    Celebrate,
    Checkpoint,
    KeepEvidence,
    Prompt,
    Referee,
    RollObservation,
    ShowMoves,
    ShowTurn,
    said,
)
from lcr_pi.rules import GameConfig, Series, SeriesRules

PLAYERS = ["Ann", "Bob", "Cy"]


def clear(*faces, **kw):
    return RollObservation(tuple(faces), **kw)


def table(variant="classic", players=PLAYERS, **kw):
    ref = Referee(GameConfig.create(players, variant=variant), **kw)
    ref.start()
    return ref


def test_a_clear_roll_moves_chips_lights_the_moves_and_checkpoints():
    ref = table()
    out = ref.on_roll(clear("L", "dot", "C", evidence="frame"))
    assert ref.game.state.chips == (1, 4, 3)
    moves = next(o for o in out if isinstance(o, ShowMoves))
    assert [m.face for m in moves.moves] == ["L", "C"] and moves.next_seat == 1
    assert any(isinstance(o, KeepEvidence) for o in out)
    checkpoint = next(o for o in out if isinstance(o, Checkpoint))
    assert checkpoint.record["roll"] == ["L", "dot", "C"] and checkpoint.record["chips"] == [1, 4, 3]


@pytest.mark.parametrize(
    "obs, words",
    [
        (RollObservation(("L", "C", "R"), verdict="unsure", message="the die at the top left is unclear"),
         "The die at the top left is unclear. Ann, please roll again. Or, if the dice show L, C, R, press confirm."),
        (RollObservation(("L", "C", "R"), verdict="cocked"),
         "A die may be leaning, so it cannot be read. Ann, please roll again. "
         "Or, if the dice lie flat and show L, C, R, press confirm."),
        (RollObservation(("L", "C", "R"), verdict="cocked", message="the die at the left may be leaning (cocked), so it cannot be read."),
         "The die at the left may be leaning (cocked), so it cannot be read. Ann, please roll again. "
         "Or, if the dice lie flat and show L, C, R, press confirm."),
        (clear("L", "C", "R", "dot"),
         "Ann rolls three dice, but I see four. Please take one die out and roll all three dice again."),
        (clear("L"), "Ann rolls three dice, but I see one. Please roll all three dice again."),
        (clear("W", ".", "."), "I see a W face, but this game is not played with Wild dice. Ann, please roll again."),
        # A W the reader doubts is not told as a fact (found by an audit: ordinary dice read unsure).
        (RollObservation(("W", "4", "3"), verdict="unsure", message="not sure about the die at the left"),
         "Not sure about the die at the left. Ann, please roll again."),
    ],
)
def test_doubtful_rolls_move_nothing_and_say_why(obs, words):
    ref = table()
    out = ref.on_roll(obs)
    assert said(out) == words
    assert isinstance(out[0], Attention)
    assert ref.game.state.chips == (3, 3, 3) and ref.game.state.rolls == 0


def test_an_unsure_read_is_settled_by_confirm_or_by_a_new_roll():
    ref = table()
    ref.on_roll(RollObservation(("L", "C", "R"), verdict="unsure", message="die 2 is unclear"))
    assert ref.phase == "confirm_read"
    ref.on_action("confirm")
    assert ref.game.state.chips == (0, 4, 4)
    ref.on_roll(RollObservation((".", ".", "."), verdict="unsure", message="die 1 is unclear"))
    ref.on_roll(clear("C", ".", "."))  # Bob rolled again; the clear read wins
    assert ref.game.state.chips == (0, 3, 4) and ref.phase == "await_roll"


def test_the_offered_guess_stands_only_while_the_referee_waits_for_confirm():
    ref = table()
    assert ref.offered_guess is None
    ref.on_roll(RollObservation(("L", "C", "R", "dot"), verdict="unsure", doubtful=(3,)))
    assert ref.offered_guess == ("L", "C", "R")
    ref.on_action("confirm")
    assert ref.offered_guess is None and ref.phase == "await_roll"


@pytest.mark.parametrize("again", [clear("R", "R"), clear("W", "R", "R"), clear("R", "R", "7")],
                         ids=["two dice seen", "a W in a classic game", "an unreadable face"])
def test_a_guess_is_no_longer_offered_once_the_dice_were_thrown_again(again):
    # Found by an audit (2026-12-03): a re-roll the referee refused (wrong count, a W, a face it
    # cannot read) left the first roll's guess on offer, and confirm applied it to dice since thrown.
    ref = table()
    ref.on_roll(RollObservation(("L", "dot", "C"), verdict="unsure", message="not sure about the die at the left"))
    assert ref.offered_guess == ("L", "dot", "C")
    out = ref.on_roll(again)
    assert "roll" in said(out) and ref.offered_guess is None and ref.phase == "await_roll"
    assert said(ref.on_action("confirm")) == "Nothing to confirm."
    assert ref.game.state.chips == (3, 3, 3) and ref.game.state.current_player == "Ann"
    ref.on_roll(RollObservation(("R", "dot", "dot"), verdict="unsure", message="not sure"))  # a new guess
    ref.on_action("confirm")
    assert ref.game.state.chips == (2, 3, 4)


def test_a_die_that_may_be_leaning_is_settled_like_an_unsure_read():
    ref = table()
    ref.on_roll(RollObservation(("L", "C", "R"), verdict="cocked", message="the die at the left may be leaning (cocked), so it cannot be read."))
    assert ref.phase == "confirm_read" and ref.game.state.chips == (3, 3, 3)
    ref.on_action("confirm")  # someone who sees the dice lying flat confirms the guess
    assert ref.game.state.chips == (0, 4, 4)
    ref.on_roll(RollObservation((".", ".", "."), verdict="cocked"))
    ref.on_roll(clear("C", ".", "."))  # Bob rolled again: the new read is announced
    assert ref.game.state.chips == (0, 3, 4) and ref.phase == "await_roll"


def test_more_dice_than_rolled_whose_surplus_is_doubted_is_offered_as_the_rolled_number():
    # The reader saw four things for Ann's three dice; the fourth (a side face, a chip) is the one it
    # doubts most: the other three are its guess, which someone who sees the dice can confirm.
    ref = table()
    seen = RollObservation(("L", "dot", "R", "C"), verdict="unsure", doubtful=(3, 2))
    out = ref.on_roll(seen)
    assert said(out) == ("I see four things where Ann rolled three dice, and one of them may be no die. "
                         "Ann, please roll again. Or, if the dice show L, dot, R, press confirm.")
    assert ref.phase == "confirm_read" and ref.game.state.chips == (3, 3, 3)
    ref.on_action("confirm")
    assert ref.game.state.chips == (1, 4, 4)
    # Bob's turn: two surplus dice but only one of them doubted: more dice were rolled, so roll again.
    out = ref.on_roll(RollObservation((".", ".", ".", ".", "C"), verdict="unsure", doubtful=(4,)))
    assert said(out) == "Bob rolls three dice, but I see five. Please take two dice out and roll all three dice again."
    # A clear reading of too many dice is never trimmed (the reader is sure of each: a die too many).
    out = ref.on_roll(RollObservation((".", ".", ".", "C"), doubtful=(3,)))
    assert said(out).startswith("Bob rolls three dice, but I see four.")
    assert ref.game.state.chips == (1, 4, 4) and ref.phase == "await_roll"


def test_a_trimmed_reading_with_a_die_that_may_lean_asks_for_dice_lying_flat():
    ref = table()
    out = ref.on_roll(RollObservation(("L", "dot", "R", "C"), verdict="cocked", doubtful=(3, 0)))
    assert said(out) == ("I see four things where Ann rolled three dice, one of them may be no die, and a die may be "
                         "leaning. Ann, please roll again. Or, if the dice lie flat and show L, dot, R, press confirm.")
    assert ref.phase == "confirm_read" and ref.game.state.chips == (3, 3, 3)


def test_empty_tray_and_hands_are_ignored():
    ref = table()
    assert ref.on_roll(RollObservation((), verdict="no_dice")) == []
    assert ref.on_roll(RollObservation((), verdict="obstructed")) == []


def test_players_without_chips_are_skipped_aloud():
    ref = table(players=["Ann", "Bob", "Cy", "Dee"])
    out = ref.on_roll(clear("L", "L", "L"))  # Ann 0, Bob 6
    assert "Ann has no chips left." in said(out)
    ref.on_roll(clear(".", ".", "."))  # Bob
    ref.on_roll(clear(".", ".", "."))  # Cy
    out = ref.on_roll(clear(".", ".", "."))  # Dee; Ann is skipped
    assert said(out).endswith("Ann has no chips and skips this turn. Bob, your turn: roll three dice.")
    assert ShowMoves((), 1) in out


def test_winning_then_confirm_starts_the_next_game():
    ref = Referee(GameConfig.create(PLAYERS))
    ref.start()
    for faces in (("L", "L", "L"), ("L", "L", "L"), ("L", "L", "L")):
        ref.on_roll(clear(*faces))
    # Ann 3->0 gives Bob 6; Bob gives Cy 3 -> Bob 3, Cy 6; Cy gives Ann 3 -> Cy 3, Ann 3: keep going
    ref.on_roll(clear("C", "C", "C"))  # Ann 0
    ref.on_roll(clear("C", "C", "C"))  # Bob 0 -> Cy is the last holder
    assert ref.phase == "game_over" and ref.game.state.winner == 2
    out = ref.on_roll(clear("L", "L", "L"))
    assert said(out) == "Press confirm for a new game."
    out = ref.on_action("confirm")
    assert said(out).startswith("A new game of LCR") and ref.game.state.chips == (3, 3, 3)


def test_wild_decision_by_buttons_names_each_choice():
    ref = table("wild", players=["Ann", "Bob", "Cy", "Dee"])
    out = ref.on_roll(clear("W", "W", "."))
    assert "Choose from Bob, Cy or Dee" in said(out) and ref.phase == "await_decision"
    assert said(ref.on_action("confirm")) == "Press choose to hear each name, then confirm to pick one."
    assert said(ref.on_action("choose")) == "Bob, with three chips? Press confirm to take from Bob."
    out = ref.on_action("choose")
    assert said(out) == "Cy, with three chips? Press confirm to take from Cy." and ShowTurn(2) in out
    assert said(ref.on_action("repeat")) == "Cy, with three chips? Press confirm to take from Cy."  # who confirm takes
    ref.on_action("choose")  # Dee
    assert said(ref.on_action("choose")) == ("Bob, with three chips (back to the first name)? "
                                             "Press confirm to take from Bob.")
    ref.on_action("choose")  # Cy
    assert said(ref.on_action("confirm")) == "One chip from Cy. Choose the second."
    assert "takes one chip from Cy and must choose whom to take the second from" in said(ref.on_action("status"))
    # A wrong first pick is taken back alone, not the whole roll (found by an audit).
    assert said(ref.on_action("undo")).startswith("Taken back: the chip from Cy. Ann must first choose whom")
    assert ref.phase == "await_decision" and ref.game.state.chips == (3, 3, 3, 3)
    ref.on_action("choose", "Cy")
    assert said(ref.on_action("choose")) == "Bob, with three chips? Press confirm to take from Bob."
    out = ref.on_action("confirm")
    assert "Ann takes one chip from Bob and one chip from Cy." in said(out)
    assert ref.game.state.chips == (5, 2, 2, 3) and ref.phase == "await_roll"


def test_wild_words_that_ask_for_a_choice_are_prompts_and_the_roll_and_the_picks_are_not():
    # The next press of choose drops the prompts still waiting to be said (lcr_pi.table), so a player
    # choosing by ear hears last the name confirm takes; the roll's moves and a pick are always said.
    def kinds(outputs):
        return [(type(o).__name__, o.text) for o in outputs if hasattr(o, "text")]

    ref = table("wild")
    assert kinds(ref.on_roll(clear("L", "W", "W"))) == [
        ("Say", "Ann rolled L, W, W."),
        ("Say", "Pass one chip to Bob on your left."),
        ("Say", "Ann has two chips."),
        ("Prompt", "Two wilds! Ann, take two chips: both from one player, or one each from two. "
                   "Choose from Bob or Cy."),
        ("Prompt", "Press choose to hear each name, and confirm to pick."),
    ]
    assert all(isinstance(o, Prompt) for o in ref.on_action("repeat")[-2:])
    assert kinds(ref.on_action("choose")) == [("Prompt", "Bob, with four chips? Press confirm to take from Bob.")]
    assert kinds(ref.on_action("repeat")) == [("Prompt", "Bob, with four chips? Press confirm to take from Bob.")]
    assert kinds(ref.on_roll(clear(".", ".", ".")))[0][0] == "Prompt"  # the reminder
    assert kinds(ref.on_action("confirm")) == [("Say", "One chip from Bob. Choose the second.")]
    ref.on_action("choose")
    assert all(type(o).__name__ == "Say" for o in ref.on_action("confirm") if hasattr(o, "text"))


def test_wild_decision_typed_by_name_refuses_impossible_choices():
    ref = table("wild")
    ref.on_roll(clear("W", ".", "."))
    assert said(ref.on_action("choose", "Ann")) == "Ann cannot be chosen. Choose Bob or Cy."
    assert "No player called 'Zed'" in said(ref.on_action("choose", "Zed"))
    assert "must first choose" in said(ref.on_roll(clear(".", ".", ".")))
    assert said(ref.on_action("choose", "3")) == "Choose a number from 1 to 2."
    ref.on_action("choose", "2")  # the second name offered: Cy
    assert ref.game.state.chips == (4, 3, 2)
    # With the voice setup's names, a number is the player of that number (found by an audit).
    numbered = table("wild", players=["Player 1", "Player 2", "Player 3", "Player 4"])
    numbered.on_roll(clear("W", ".", "."))
    numbered.on_action("choose", "2")
    assert numbered.game.state.chips == (4, 2, 3, 3)


def test_undo_repeat_and_status():
    ref = table()
    ref.on_roll(clear("L", ".", "."))
    words = said(ref.on_action("repeat"))
    assert words.startswith("Ann rolled L, dot, dot.")
    assert said(ref.on_action("status")) == (
        "Ann has two chips, Bob has four chips, Cy has three chips. No chips in the centre. It is Bob's turn: roll three dice."
    )
    out = ref.on_action("undo")
    assert said(out) == "Undone: Ann's roll of L, dot, dot. Ann, it is your turn again. Roll three dice."
    assert ref.game.state.chips == (3, 3, 3) and ShowTurn(0) in out
    assert said(ref.on_action("undo")) == "Nothing to undo."
    assert said(ref.on_action("help")).startswith("It is Ann's turn: roll three dice. Buttons: confirm, undo")
    with pytest.raises(UserError, match="unknown action 'dance'"):
        ref.on_action("dance")


def test_new_game_by_long_press_resets_the_chips_and_undo_brings_the_last_one_back():
    ref = table()
    ref.on_roll(clear("C", "C", "C"))
    ref.on_roll(clear("L", ".", "."))
    out = ref.on_action("new_game")
    assert said(out).startswith("Starting a new game. Undo brings the last one back. A new game of LCR")
    assert ref.game.state.chips == (3, 3, 3)
    ref.on_roll(clear("R", ".", "."))  # a turn of the new game: undone first
    ref.on_action("undo")
    assert ref.game.state.chips == (3, 3, 3)
    # Found by an audit (2026-12-03): a long press (a slow press, someone leaning on the button)
    # threw the game away for good.
    out = ref.on_action("undo")
    assert said(out).startswith("The new game is taken back; the last one goes on where it was.")
    assert ref.game.state.chips == (0, 2, 4) and ref.game.state.current_player == "Cy"
    assert any(isinstance(o, Checkpoint) for o in out)
    ref.on_action("undo")  # and its own turns are undone as before
    assert ref.game.state.chips == (0, 3, 3) and ref.game.state.current_player == "Bob"
    assert "Undo brings" not in said(table().on_action("new_game"))  # a game with no turn: nothing to bring back


def test_a_long_press_after_a_series_game_starts_the_next_as_confirm_would():
    # Found by an audit (2026-12-03): the long press restarted with the last game's first player,
    # not the series' next starter (or the roll-off).
    ref = Referee(GameConfig.create(PLAYERS), series_rules=SeriesRules(first_to=3, next_starter="winner"))
    ref.start()
    ref.on_roll(clear("R", "R", "R"))
    ref.on_roll(clear("L", "L", "L"))  # Cy holds every chip and wins
    assert ref.phase == "game_over"
    out = ref.on_action("new_game")
    assert "Cy goes first" in said(out) and ref.game.state.first == 2
    ref.on_roll(clear("C", ".", "."))
    out = ref.on_action("new_game")  # in the middle of a game: that game starts over, Cy first again
    assert ref.game.state.first == 2 and ref.game.state.chips == (3, 3, 3)
    rolling_off = Referee(GameConfig.create(PLAYERS), series_rules=SeriesRules(first_to=3, next_starter="roll-off"))
    rolling_off.start()
    rolling_off.on_roll(clear("C", "C", "C"))
    rolling_off.on_roll(clear("C", "C", "C"))
    assert rolling_off.phase == "game_over"
    rolling_off.on_action("new_game")
    assert rolling_off.phase == "roll_off"


def test_roll_off_decides_who_starts_and_ties_roll_again():
    ref = Referee(GameConfig.create(PLAYERS), first_player="roll-off")
    out = ref.start()
    assert said(out).startswith("Roll-off for who goes first") and ref.phase == "roll_off"
    ref.on_roll(clear("6", "6", "1"))
    ref.on_roll(clear("5", "5", "3"))
    out = ref.on_roll(clear("1", "1", "1"))
    assert "A tie! Ann and Bob, roll again." in said(out)
    ref.on_roll(clear("2", "2", "2"))
    out = ref.on_roll(clear("6", "6", "6"))
    assert "Bob goes first, with eighteen." in said(out) and ref.game.state.current == 1


def test_series_tally_next_starter_and_undoing_a_win():
    ref = Referee(GameConfig.create(PLAYERS), series_rules=SeriesRules(first_to=2, next_starter="winner"))
    ref.start()
    for faces in (("C", "C", "C"), ("C", "C", "C")):
        out = ref.on_roll(clear(*faces))
    assert "Games won so far: Ann has none, Bob has none, Cy has one win." in said(out)
    assert any(isinstance(o, Celebrate) for o in out)
    out = ref.on_action("undo")
    assert "That win is taken off the tally." in said(out) and ref.series.wins == (0, 0, 0)
    ref.on_roll(clear("C", "C", "C"))
    assert ref.series.wins == (0, 0, 1)
    ref.on_action("confirm")
    assert ref.game.state.first == 2  # the winner starts the next game


def test_snapshot_restores_mid_decision_and_mid_series():
    ref = Referee(GameConfig.create(PLAYERS, variant="wild"), series_rules=SeriesRules(best_of=3))
    ref.start()
    ref.on_roll(clear("W", ".", "."))
    snap = ref.snapshot()
    again = Referee.restore(snap)
    assert again.phase == "await_decision" and again.game.state == ref.game.state
    words = said(again.start())
    assert words.startswith("Welcome back. The game goes on where it stopped.")
    assert "Ann must first choose whom to take one chip from" in words
    assert again.snapshot() == snap
    with pytest.raises(UserError, match="not an lcr-pi table save"):
        Referee.restore({"format": "something else"})


def test_the_first_of_two_wild_picks_is_saved_and_a_restart_asks_only_for_the_second():
    # Found by a review: the first pick was kept in memory only (no Checkpoint, not in the snapshot), so a
    # power cut between the two picks lost it: the table had heard "One chip from Bob. Choose the second."
    # and after the restart heard the whole question again.
    import json

    from lcr_pi.web.board import board_snapshot

    ref = Referee(GameConfig.create(["Ann", "Bob", "Cy", "Dee"], variant="wild"))
    saved = None  # the table as last saved, at a Checkpoint (what a power cut resumes)

    def played(out):
        nonlocal saved
        if any(isinstance(o, Checkpoint) for o in out):
            saved = json.loads(json.dumps(ref.snapshot()))
        return out

    played(ref.start())
    played(ref.on_roll(clear("W", "W", ".")))
    assert said(played(ref.on_action("choose", "Bob"))) == "One chip from Bob. Choose the second."
    again = Referee.restore(saved)  # the power goes before the second pick
    out = again.start()
    reminder = ("Ann takes one chip from Bob and must choose whom to take the second from. "
                "Press choose to hear each name, and confirm to pick.")
    assert said(out).startswith("Welcome back. The game goes on where it stopped.")
    assert said(out).endswith(reminder) and "Two wilds!" not in said(out)
    assert [o for o in out if isinstance(o, Prompt)] == [Prompt(reminder)]
    assert said(again.on_action("repeat")) == said(out)
    assert again.decision_picks == (1,) and board_snapshot(again)["decision"]["picked"] == ["Bob"]
    assert board_snapshot(again)["turn"]["text"] == "Ann: choose whom to take the second chip from (one taken from Bob)"
    # Undo after the restart takes back the first pick, as before it, and that too is saved.
    out = again.on_action("undo")
    assert said(out).startswith("Taken back: the chip from Bob. Ann must first choose whom to take two chips from.")
    assert any(isinstance(o, Checkpoint) for o in out) and again.snapshot()["decision_picks"] == []
    assert again.phase == "await_decision" and again.game.state.chips == (3, 3, 3, 3)
    again.on_action("choose", "Cy")
    out = again.on_action("choose", "Dee")
    assert "Ann takes one chip from Cy and one chip from Dee." in said(out) and again.game.state.chips == (5, 3, 2, 2)


def test_a_save_without_decision_picks_still_loads_and_a_damaged_one_is_named():
    ref = table("wild")
    ref.on_roll(clear("W", "W", "."))
    snap = ref.snapshot()
    old = {key: value for key, value in snap.items() if key != "decision_picks"}  # saved before the key was
    again = Referee.restore(old)
    assert again.phase == "await_decision" and again.decision_picks == ()
    assert "Two wilds! Ann, take two chips" in said(again.start())
    for damaged in ("Bob", [0], [1, 2], [7], [True], [1.0]):  # Ann cannot rob herself; the roll takes two, not three
        with pytest.raises(UserError, match=r"^the saved game is damaged: decision_picks"):
            Referee.restore({**snap, "decision_picks": damaged}, source="the saved game")
    ref.on_action("choose", "Bob")
    ref.on_action("choose", "Cy")  # settled: no decision is waiting for a pick
    with pytest.raises(UserError, match=r"^the saved game is damaged: decision_picks"):
        Referee.restore({**ref.snapshot(), "decision_picks": [1]}, source="the saved game")


def test_status_names_the_favourite_when_odds_are_given():
    from lcr_pi.stats import odds_for_state

    ref = Referee(GameConfig.create(PLAYERS), odds=odds_for_state)
    ref.start()
    ref.on_roll(clear("L", "L", "."))  # Ann 1, Bob 5
    words = said(ref.on_action("status"))
    assert "Bob is favoured to win, with " in words and "percent." in words
    assert "about" not in words  # 3 players, 3 chips: the exact table answers


def test_status_names_no_favourite_an_estimate_cannot_tell_apart():
    # A big table's opening: the chances are close and the estimate's give or take is wider than the lead.
    from lcr_pi.stats import Odds

    close = Odds((0.30, 0.36, 0.34), False, 0.02, "monte-carlo", 200)
    ref = Referee(GameConfig.create(PLAYERS), odds=lambda state: close)
    ref.start()
    words = said(ref.on_action("status"))
    assert "No one is clearly favoured to win yet; the leader has about 36 percent." in words
    assert "Bob is favoured" not in words
    clear_lead = Odds((0.20, 0.50, 0.30), False, 0.02, "monte-carlo", 200)
    ref.odds = lambda state: clear_lead
    assert "Bob is favoured to win, with about 50 percent." in said(ref.on_action("status"))
    exact_but_close = Odds((0.30, 0.36, 0.34), True, 0.0, "exact")
    ref.odds = lambda state: exact_but_close
    assert "Bob is favoured to win, with 36 percent." in said(ref.on_action("status"))


def test_a_die_doubted_only_between_faces_that_move_alike_settles_the_move():
    # Ordinary dice: the reader is sure the first die is a 2 or a 3 (both keep the chip) and of the others.
    ref = table()
    out = ref.on_roll(RollObservation(("2", "4", "5"), verdict="unsure", message="Not sure about the die at the left",
                                      doubtful=(0,), could_be=(("2", "3"), ("4",), ("5",))))
    assert not any(isinstance(o, Attention) for o in out) and ref.phase == "await_roll"
    assert ref.game.state.chips == (1, 4, 3)  # L to Bob, C to the pot; the dot die keeps its chip
    checkpoint = next(o for o in out if isinstance(o, Checkpoint))
    assert checkpoint.record["roll"] == ["dot", "4", "5"]
    assert "Not sure" not in said(out)


@pytest.mark.parametrize("could_be", [
    (("3", "4"), ("4",), ("5",)),   # a 3 or a 4: keep or pass left
    ((), ("4",), ("5",)),           # doubted for another reason (a weak find, a split face)
    (("2", "3"), ("4",)),           # not one entry per die
    (("2",), ("4",), ("5",)),       # one face as sure as a sure one, yet doubted: doubted for something else
])
def test_a_doubt_between_different_moves_or_of_the_die_itself_is_still_asked(could_be):
    ref = table()
    out = ref.on_roll(RollObservation(("3", "4", "5"), verdict="unsure", doubtful=(0,), could_be=could_be))
    assert isinstance(out[0], Attention) and ref.phase == "confirm_read" and ref.game.state.chips == (3, 3, 3)


def test_move_settling_needs_a_doubted_die_and_never_applies_to_a_leaning_die_a_surplus_or_a_roll_off():
    ref = table()
    # Unsure with no die doubted: something on the tray was not read as a die.
    ref.on_roll(RollObservation(("2", "4", "5"), verdict="unsure", could_be=(("2",), ("4",), ("5",))))
    assert ref.phase == "confirm_read"
    ref = table()
    ref.on_roll(RollObservation(("2", "4", "5"), verdict="cocked", doubtful=(0,), could_be=(("2", "3"), ("4",), ("5",))))
    assert ref.phase == "confirm_read"
    ref = table()  # four things for three dice: the doubted surplus is dropped, the rest is asked, not settled
    ref.on_roll(RollObservation(("2", "4", "5", "1"), verdict="unsure", doubtful=(3, 0),
                                could_be=(("2", "3"), ("4",), ("5",), ())))
    assert ref.phase == "confirm_read" and ref.offered_guess == ("2", "4", "5")
    # In a roll-off pips are added up: a 2 is not a 3.
    ref = Referee(GameConfig.create(PLAYERS), first_player="roll-off")
    ref.start()
    assert ref.phase == "roll_off"
    out = ref.on_roll(RollObservation(("2", "6", "6"), verdict="unsure", doubtful=(0,), could_be=(("2", "3"), ("6",), ("6",))))
    assert isinstance(out[0], Attention) and ref.phase == "roll_off" and ref.roll_off.scores == ()


def test_with_wild_rules_on_ordinary_dice_the_wild_pip_is_its_own_move():
    config = GameConfig.create(PLAYERS, variant="wild", wild_pip=1)
    ref = Referee(config)
    ref.start()
    # A 1 is W here: a die that is a 1 or a 2 may take chips or keep its own, so it is asked.
    ref.on_roll(RollObservation(("1", "4", "5"), verdict="unsure", doubtful=(0,), could_be=(("1", "2"), ("4",), ("5",))))
    assert ref.phase == "confirm_read"
    ref = Referee(config)
    ref.start()
    ref.on_roll(RollObservation(("2", "4", "5"), verdict="unsure", doubtful=(0,), could_be=(("2", "3"), ("4",), ("5",))))
    assert ref.phase == "await_roll" and ref.game.state.rolls == 1


def test_a_misread_roll_off_roll_can_be_taken_back_also_the_one_that_decided_who_starts():
    ref = Referee(GameConfig.create(PLAYERS), first_player="roll-off")
    ref.start()
    ref.on_roll(clear("6", "6", "1"))
    ref.on_roll(clear("5", "5", "3"))
    out = ref.on_action("undo")  # Bob's 5 5 3 was misread
    assert "Bob's roll-off roll is taken back. Bob, roll three dice again." in said(out)
    assert ref.phase == "roll_off" and ref.roll_off.scores == ((0, 13),)
    ref.on_roll(clear("6", "6", "6"))
    out = ref.on_roll(clear("1", "1", "2"))
    assert "Bob goes first" in said(out) and ref.phase == "await_roll"
    out = ref.on_action("undo")  # Cy's deciding roll was misread: back to the roll-off, Cy to roll
    assert ref.phase == "roll_off" and ref.game is None and "Cy's roll-off roll is taken back. Cy, roll three dice again." in said(out)
    assert any(isinstance(o, Checkpoint) for o in out) and ref.snapshot()["game"] is None
    out = ref.on_roll(clear("6", "6", "6"))
    assert "A tie! Bob and Cy, roll again." in said(out)
    ref.on_roll(clear("1", "1", "1"))
    ref.on_roll(clear("2", "2", "2"))
    assert ref.game.state.first == 2
    ref.on_roll(clear("C", ".", "."))
    ref.on_action("undo")  # a game turn is undone first
    assert ref.phase == "await_roll" and ref.game.state.pot == 0
    ref.on_action("undo")  # then the roll-off roll that decided it
    assert ref.phase == "roll_off" and ref.roll_off.next_player == "Cy"
    # Taking every roll-off roll back leaves nothing more to undo.
    while ref._roll_offs_before:
        ref.on_action("undo")
    assert ref.roll_off.scores == () and said(ref.on_action("undo")) == "Nothing to undo."


def test_a_game_not_begun_by_a_roll_off_does_not_undo_into_an_old_one():
    ref = Referee(GameConfig.create(PLAYERS), first_player="roll-off")
    ref.start()
    for faces in (("6", "6", "1"), ("5", "5", "2"), ("6", "6", "6")):
        ref.on_roll(clear(*faces))
    assert ref.phase == "await_roll" and ref.game.state.first == 2
    ref.on_action("new_game")  # started over mid-game: Cy first again, no roll-off
    assert said(ref.on_action("undo")) == "Nothing to undo." and ref.phase == "await_roll"


def test_players_named_by_numbers_are_chosen_by_name():
    # Found by an audit (2026-12-03): with players called "1" to "4", the page's button for "2" took
    # a chip from the second name offered ("3").
    ref = Referee(GameConfig.create(["1", "2", "3", "4"], variant="wild"))
    ref.start()
    ref.on_roll(clear("W", ".", "."))
    assert ref.phase == "await_decision"
    ref.on_action("choose", "2")
    assert ref.game.state.chips == (4, 2, 3, 3)


def test_repeat_after_a_stray_press_repeats_the_game_not_the_reply():
    ref = table()
    ref.on_roll(clear("L", ".", "C"))
    for stray in (("confirm", None), ("choose", None), ("choose", "Bob")):
        ref.on_action(*stray)
        assert said(ref.on_action("repeat")).startswith("Ann rolled L, dot, C."), stray
    undone = Referee(GameConfig.create(PLAYERS))
    undone.start()
    undone.on_action("undo")  # nothing to undo yet
    assert "roll three dice" in said(undone.on_action("repeat"))


def test_help_says_what_to_do_now_and_what_the_buttons_do():
    # Found by an audit (2026-12-03): help gave the same list in a roll-off and after a win.
    off = Referee(GameConfig.create(PLAYERS), first_player="roll-off")
    off.start()
    words = said(off.on_action("help"))
    assert words.startswith("Ann rolls three dice for the roll-off") and "Buttons: confirm" in words
    ref = table()
    ref.on_roll(clear("C", "C", "C"))
    ref.on_roll(clear("C", "C", "C"))
    words = said(ref.on_action("help"))
    assert words.startswith("Press confirm for a new game.") and "Hold confirm for a new game." in words


def test_help_in_a_game_says_whose_turn_it_is_and_how_many_dice():
    # Found by an audit playing by ear (2026-12-04): help between turns said only what the buttons do, and a
    # player who cannot see the LEDs, pressing help because she lost track, did not hear whose turn it was.
    ref = table()
    ref.on_roll(clear("L", "dot", "C"))
    words = said(ref.on_action("help"))
    assert words.startswith("It is Bob's turn: roll three dice.") and "Hold confirm for a new game." in words
    ref.on_roll(clear("L", "L", "R"))  # Bob has one chip left after passing three
    assert said(ref.on_action("help")).startswith("It is Cy's turn: roll three dice.")


def test_a_second_long_press_keeps_the_game_the_first_one_ended():
    # Found by a review (2026-12-03): a second press before the new game's first turn (after hearing
    # "Starting a new game") threw the kept game away.
    ref = table()
    ref.on_roll(clear("C", "C", "C"))
    ref.on_action("new_game")
    assert "Undo brings the last one back." in said(ref.on_action("new_game"))
    ref.on_action("undo")
    assert ref.game.state.chips == (0, 3, 3) and ref.game.state.pot == 3
    assert "but I see none" in said(ref.on_roll(RollObservation((), "unsure")))


def test_an_unsure_reading_with_a_die_it_could_not_name_says_the_readers_words_not_a_parse_error():
    # Found by an audit: a taught reader reports a die-sized blob it cannot name as face "?"; with the
    # rolled number of dice the table heard "I could not read that roll (unknown face '?': expected
    # L, C, R, dot (or .), W, or a pip value 1-6)", and not where the doubt was.
    ref = table()
    out = ref.on_roll(RollObservation(("L", "?", "C"), "unsure", doubtful=(1,),
                                      message="Not sure about the die at the centre; please check or re-roll."))
    words = said(out)
    assert words == "Not sure about the die at the centre; please check or re-roll. Ann, please roll again."
    assert isinstance(out[0], Attention) and ref.phase == "await_roll" and ref.offered_guess is None
    # A typed roll with a face that is no face still names it: the person who typed it can fix it.
    assert "unknown face" in said(ref.on_roll(clear("L", "x", "C", source="keyboard")))


def test_a_roll_off_roll_of_the_wrong_number_of_things_says_what_it_sees_as_a_game_roll_does():
    # Found by an audit: in a roll-off, a poker chip beside the dice read as a doubted fourth die was
    # said as the reader's doubt ("Not sure about the die at the right ... please roll again") after
    # every throw, word for word, while the chip stayed: nothing said that a thing too many lay there.
    ref = table(first_player="roll-off")
    chip = RollObservation(("4", "5", "6", "2"), "unsure", doubtful=(3,),
                           message="Not sure about the die at the right; please check or re-roll.")
    words = said(ref.on_roll(chip))
    assert words == ("I see four things where Ann rolled three dice, and one of them may be no die. "
                     "Ann, please roll again.")
    assert ref.phase == "roll_off" and ref.roll_off.scores == ()
    # A die missing (off the tray) or one too many, read surely or not, is said as in a game.
    assert said(ref.on_roll(RollObservation(("4", "5"), "unsure", doubtful=(0,), message="Not sure about "
                                            "the die at the left; please check or re-roll."))) == \
        "Ann rolls three dice, but I see two. Please roll all three dice again."
    assert said(ref.on_roll(clear("4", "5", "6", "1"))) == \
        "Ann rolls three dice, but I see four. Please take one die out and roll all three dice again."
    assert said(ref.on_roll(clear("4", "5", "6"))) == "Ann scores fifteen. Bob, roll three dice."


# -- new players at the table (the scoreboard page, or typed) ----------------------------------------


def test_new_players_before_the_first_roll_start_a_new_game_with_them_and_are_to_be_remembered():
    from lcr_pi.referee import NewPlayers

    ref = Referee(GameConfig.create(PLAYERS, starting_chips=4, variant="wild"), first_player="Bob")
    ref.start()
    assert ref.can_change_players()
    out = ref.on_action("players", "Ann\nGrandma\nCy\nDi")
    assert out[0] == NewPlayers(("Ann", "Grandma", "Cy", "Di"))
    assert "The players are now Ann, Grandma, Cy and Di, in seat order." in said(out)
    assert ref.config.players == ("Ann", "Grandma", "Cy", "Di")
    assert ref.config.starting_chips == 4 and ref.config.variant_name == "wild"  # the rules stay
    assert ref.game.state.chips == (4, 4, 4, 4) and ref.game.state.current == 0  # Bob, to start, has gone
    assert any(isinstance(o, Checkpoint) for o in out)  # the new game is saved
    ref.on_roll(clear("L", "dot", "C"))  # at most three dice
    assert not ref.can_change_players()
    out = ref.on_action("players", "Ann\nBob\nCy")
    assert "can be changed before the first roll" in said(out) and len(ref.config.players) == 4
    ref.on_action("undo")  # back at the opening: the players can be changed again
    assert ref.can_change_players()


def test_new_players_keep_the_named_first_player_who_stays_and_refuse_bad_names():
    ref = table(first_player="Cy")
    ref.on_action("players", "Cy\nDi\nEd")
    assert ref.game.state.current == 0 and ref.config.players[0] == "Cy"
    for names, reason in (("Ann\nBob", "at least 3 players"), ("Ann\nann\nBob", "Two players are called")):
        out = ref.on_action("players", names)
        assert said(out).startswith("The players were not changed:") and reason in said(out)
        assert ref.config.players == ("Cy", "Di", "Ed")
    assert said(ref.on_action("players", "Cy\nDi\nEd")) == "The players are already Cy, Di and Ed."


def test_new_players_after_a_game_is_won_start_the_next_one_and_a_series_over_again():
    ref = table(series_rules=SeriesRules(first_to=2))
    ref.on_roll(clear("C", "C", "C"))  # Ann: all three in the pot
    ref.on_roll(clear("C", "C", "C"))  # Bob too: Cy alone holds chips and wins
    assert ref.phase == "game_over" and ref.series.wins == (0, 0, 1)
    assert ref.can_change_players()
    out = ref.on_action("players", "Ann\nBob\nCy\nDi")
    # Said, not only done (found by a review: the tally went without a word).
    assert "The players are now Ann, Bob, Cy and Di, in seat order. The series starts over." in said(out)
    assert ref.phase == "await_roll" and ref.game.state.chips == (3, 3, 3, 3)
    assert ref.series.wins == (0, 0, 0, 0)  # a series of other players is not this one's
    assert said(ref.on_action("undo")) == "Nothing to undo."  # the game before cannot come back with other players


def test_repeat_in_a_roll_off_says_its_opening_and_the_deciding_roll():
    # Found by an audit: repeat after the roll-off's opening said only "Ann, roll three dice.", and
    # after the deciding roll only the game's opening, not what that roll scored.
    ref = Referee(GameConfig.create(PLAYERS), first_player="roll-off")
    opening = said(ref.start())
    assert said(ref.on_action("repeat")) == opening
    ref.on_roll(clear("6", "6", "1"))
    ref.on_roll(clear("5", "5", "3"))
    deciding = said(ref.on_roll(clear("6", "6", "6")))
    assert deciding.startswith("Cy scores eighteen. Cy goes first, with eighteen. A new game of LCR")
    assert said(ref.on_action("repeat")) == deciding


def a_series_at_its_second_roll_off():
    """A first to two wins whose next starter is rolled for, after Cy won its first game: in the roll-off."""
    ref = Referee(GameConfig.create(PLAYERS), series_rules=SeriesRules(first_to=2, next_starter="roll-off"))
    ref.start()
    ref.on_roll(clear("C", "C", "C"))
    ref.on_roll(clear("C", "C", "C"))  # Cy wins the first game
    ref.on_action("confirm")
    return ref


def test_status_in_a_roll_off_says_the_scores_a_tie_and_the_series_standing():
    # Found by an audit: status in a roll-off said only "Roll-off for who goes first. Bob, roll three
    # dice.": not what was scored, not who tied, not the series tally between games.
    ref = a_series_at_its_second_roll_off()
    assert ref.phase == "roll_off"
    assert said(ref.on_action("status")) == ("Roll-off for who goes first. Games won: Ann has none, Bob has none, "
                                             "Cy has one win. Ann, roll three dice.")
    ref.on_roll(clear("6", "6", "1"))
    ref.on_roll(clear("L", ".", "C"))
    assert said(ref.on_action("status")) == ("Roll-off for who goes first. Ann scored thirteen and Bob scored one. "
                                             "Games won: Ann has none, Bob has none, Cy has one win. "
                                             "Cy, roll three dice.")
    ref.on_roll(clear("5", "5", "3"))  # Ann and Cy tie
    assert said(ref.on_action("status")).startswith(
        "Roll-off for who goes first: Ann and Cy tied and roll again. Games won:")
    ref.on_roll(clear("5", "5", "5"))
    assert "Ann scored fifteen. Games won" in said(ref.on_action("status"))


def test_a_restart_saved_in_a_roll_off_welcomes_the_table_back_with_the_series_tally():
    # Found by an audit: a save made in a roll-off (its deciding roll taken back) was resumed with a
    # roll-off said as at a new night: no "Welcome back", nothing of the series in play.
    ref = a_series_at_its_second_roll_off()
    for faces in (("1", "1", "1"), ("2", "2", "2"), ("3", "3", "3")):
        ref.on_roll(clear(*faces))
    ref.on_action("undo")  # Cy's deciding roll: saved with no game
    again = Referee.restore(ref.snapshot())
    words = said(again.start())
    assert words.startswith("Welcome back. The roll-off starts again from the first roll. Games won so far: "
                            "Ann has none, Bob has none, Cy has one win. Roll-off for who goes first:")
    assert again.phase == "roll_off" and said(again.on_action("repeat")) == words
    fresh = Referee(GameConfig.create(PLAYERS), first_player="roll-off")
    assert said(fresh.start()).startswith("Roll-off for who goes first")


def test_the_roll_off_a_games_end_begins_is_saved_and_a_restart_resumes_it():
    # Found by a review: confirm at the end of a game whose series rolls for the next starter began the
    # roll-off unsaved. A power cut in it brought back the finished game ("The last game was won"),
    # confirm had to be pressed again, and undo there took back the winning roll (and the win), which it
    # could not before the cut. A long press at a game's end is the same.
    for press in ("confirm", "new_game"):
        ref = Referee(GameConfig.create(PLAYERS), series_rules=SeriesRules(first_to=2, next_starter="roll-off"))
        saved = None  # the table as last saved, at a Checkpoint (what a power cut resumes)

        def played(out):
            nonlocal saved
            if any(isinstance(o, Checkpoint) for o in out):
                saved = ref.snapshot()
            return out

        played(ref.start())
        played(ref.on_roll(clear("C", "C", "C")))
        played(ref.on_roll(clear("C", "C", "C")))  # Cy wins the first game
        played(ref.on_action(press))
        assert ref.phase == "roll_off"
        played(ref.on_roll(clear("6", "6", "6")))  # Ann's roll-off roll, then the power goes
        again = Referee.restore(saved)
        words = said(again.start())
        assert words.startswith("Welcome back. The roll-off starts again from the first roll. Games won so far: "
                                "Ann has none, Bob has none, Cy has one win. Roll-off for who goes first:"), press
        assert again.phase == "roll_off" and again.series.games == 1 and again.series.wins == (0, 0, 1)
        assert said(again.on_action("undo")) == "Nothing to undo."  # the win stays, as before the cut
        for faces in (("1", "1", "1"), ("2", "2", "2"), ("3", "3", "3")):
            out = again.on_roll(clear(*faces))
        assert "Cy goes first, with nine." in said(out) and again.game.state.first == 2


def test_status_and_a_restart_at_the_end_of_a_series_say_who_won_it():
    # Found by an audit: they said who won the last game and "Press confirm for a new series", not
    # who won the series.
    ref = Referee(GameConfig.create(PLAYERS), series_rules=SeriesRules(first_to=1))
    ref.start()
    ref.on_roll(clear("C", "C", "C"))
    ref.on_roll(clear("C", "C", "C"))
    assert ref.series.champion == 2
    assert "Cy won this game and the series. Press confirm for a new series." in said(ref.on_action("status"))
    assert "Cy won this game and the series." in said(Referee.restore(ref.snapshot()).start())
    # A best of N can be settled by another player's win: Ann leads 3-1 with one game left when Dee wins.
    four = Referee(GameConfig.create(["Ann", "Bob", "Cy", "Dee"]), series_rules=SeriesRules(best_of=6))
    four.start()
    four.series = Series.from_dict(four.config, {**four.series.to_dict(), "wins": [3, 1, 0, 0], "games": 4,
                                                 "last_first": 3, "last_winner": 0})
    for _ in range(3):
        four.on_roll(clear("C", "C", "C"))
    assert four.series.champion == 0 and four.game.state.winner == 3
    assert "Dee won this game, and Ann the series. Press confirm for a new series." in said(four.on_action("status"))


def test_a_best_of_n_tied_at_the_top_after_n_games_says_that_the_series_goes_on():
    # Found by an audit: after the last of the N games, tied, the table heard only "Press confirm for
    # the next game".
    ref = Referee(GameConfig.create(PLAYERS), series_rules=SeriesRules(best_of=3))  # next seat starts
    ref.start()
    for game in range(3):  # the starter and the next player empty their chips: Cy, then Ann, then Bob win
        ref.on_roll(clear("C", "C", "C"))
        out = ref.on_roll(clear("C", "C", "C"))
        if game < 2:
            assert "tied for the lead" not in said(out)
            ref.on_action("confirm")
    assert ref.series.wins == (1, 1, 1) and not ref.series.is_over
    assert said(out).endswith("Games won so far: Ann has one win, Bob has one win, Cy has one win. Ann, Bob and Cy "
                              "are tied for the lead with one win each, so the series goes on until one player "
                              "leads alone. Press confirm for the next game.")
    # Status, and "Welcome back" after a restart, say it too (found by an audit of the page's series).
    goes_on = ("Bob won this game. Ann, Bob and Cy are tied for the lead with one win each, so the series goes on "
               "until one player leads alone. Press confirm for the next game.")
    assert said(ref.on_action("status")).endswith(goes_on)
    assert said(Referee.restore(ref.snapshot()).start()).endswith(goes_on)


def test_a_series_says_what_it_is_played_to_as_it_begins_and_again_when_a_new_one_begins():
    # Found by an audit: nothing said that a series was played, nor to what, nor after "Press confirm
    # for a new series" that a new one had begun.
    ref = Referee(GameConfig.create(PLAYERS), series_rules=SeriesRules(first_to=1), first_player="roll-off")
    assert said(ref.start()).startswith("A new series: first to one win. Roll-off for who goes first:")
    for faces in (("6", "6", "6"), ("1", "1", "1"), ("2", "2", "2")):
        out = ref.on_roll(clear(*faces))
    assert "A new series" not in said(out)  # the game the roll-off began is the series' first
    ref.on_roll(clear("C", "C", "C"))
    ref.on_roll(clear("C", "C", "C"))
    assert ref.series.is_over
    assert said(ref.on_action("confirm")).startswith("A new series: first to one win. Roll-off")
    best_of = table(series_rules=SeriesRules(best_of=3))
    assert said(best_of.on_action("repeat")).startswith("A new series: best of three games. A new game of LCR")
    best_of.on_roll(clear("C", "C", "C"))
    best_of.on_roll(clear("C", "C", "C"))
    assert not said(best_of.on_action("confirm")).startswith("A new series")  # its second game
    assert not said(best_of.on_action("new_game")).startswith("A new series")
    assert not said(table().on_action("repeat")).startswith("A new series")  # no series


def test_a_restart_after_a_game_was_won_does_not_say_that_the_game_goes_on():
    # Found by an audit: "Welcome back. The game goes on where it stopped." and then who won it.
    ref = table(series_rules=SeriesRules(first_to=2))
    ref.on_roll(clear("C", "C", "C"))
    ref.on_roll(clear("C", "C", "C"))
    words = said(Referee.restore(ref.snapshot()).start())
    assert words.startswith("Welcome back. The last game was won before it stopped. The last roll I counted was Bob's")
    assert words.endswith("Games won: Ann has none, Bob has none, Cy has one win. Cy won this game. "
                          "Press confirm for the next game.")


def test_more_players_than_the_remembered_setup_holds_are_refused():
    # Found by a review: 21 typed names were played and written to setup.json, which holds 3 to 20
    # players; the next power-on refused it as damaged, played the settings file's players and set the
    # saved game aside ("other players"), so a pulled plug lost the night's game.
    ref = table()
    out = ref.on_action("players", "\n".join(f"P{n}" for n in range(1, 22)))
    assert said(out) == ("The players were not changed: at most twenty players can be named at the table, got 21.")
    assert ref.config.players == tuple(PLAYERS) and not any(isinstance(o, Checkpoint) for o in out)
    ref.on_action("players", "\n".join(f"P{n}" for n in range(1, 21)))
    assert len(ref.config.players) == 20


def test_new_players_can_be_named_while_an_unsure_first_read_waits_for_confirm():
    # Found by a review: an unsure read of a game's first roll refused the change ("Undo the turns, or
    # finish the game, first") and undo said "Nothing to undo": no roll was counted, nothing to take back.
    ref = table()
    ref.on_roll(clear("L", "dot", "C", verdict="unsure"))
    assert ref.phase == "confirm_read" and ref.can_change_players()
    assert "The players are now Ann, Bob, Cy and Di" in said(ref.on_action("players", "Ann\nBob\nCy\nDi"))
    assert ref.phase == "await_roll" and ref.offered_guess is None  # the guess was of the game before
    assert said(ref.on_action("confirm")) == "Nothing to confirm."
    ref.on_roll(clear("L", "dot", "C"))
    ref.on_roll(clear("L", "dot", "C", verdict="unsure"))  # an unsure read after a counted roll: no change
    assert ref.phase == "confirm_read" and not ref.can_change_players()


def test_new_players_before_a_series_has_a_winner_hear_what_it_is_played_to_but_not_that_it_starts_over():
    # Nothing of the tally was lost; the new players' series is said as any series is when it begins.
    ref = table(series_rules=SeriesRules(first_to=2))
    words = said(ref.on_action("players", "Ann\nBob\nCy\nDi"))
    assert "starts over" not in words
    assert words.startswith("The players are now Ann, Bob, Cy and Di, in seat order. A new series: first to two wins. "
                            "A new game of LCR")


def test_new_players_at_a_big_table_are_said_by_number_with_status_for_the_seat_order():
    # Found by a review of a big table by ear: the change named every new player, 20 names, and then the
    # opening said "twenty players": 47 words (16 s) before the first roll. Now said as the night's first
    # opening is: the number, and that status says the seat order, which it does.
    eight = [f"P{n}" for n in range(1, 9)]
    ref = table(players=eight, series_rules=SeriesRules(first_to=2))
    twenty = [f"Q{n}" for n in range(1, 21)]
    words = said(ref.on_action("players", "\n".join(twenty)))
    assert words == ("The players were changed. A new series: first to two wins. A new game of LCR: twenty players, "
                     "three chips each. Press status for the seat order. Q1 goes first. Q1, your turn: roll three dice.")
    assert "Q2" not in words and said(ref.on_action("status")).endswith(f"Seat order: {', '.join(twenty[:-1])} and Q20.")
    assert said(ref.on_action("players", "\n".join(twenty))) == "Those are the players already, in the same seat order."
    # A series with a game won starts over, said as at a small table.
    while ref.phase != "game_over":
        ref.on_roll(clear(*("C",) * ref.game.state.dice_to_roll))
    assert said(ref.on_action("players", "\n".join(eight))).startswith(
        "The players were changed. The series starts over. A new series: first to two wins. A new game of LCR: "
        "eight players, three chips each. Press status for the seat order.")
    # A roll-off first says the number and each roller in seat order; its game's opening then says status.
    off = Referee(GameConfig.create(eight), first_player="roll-off")
    off.start()
    assert said(off.on_action("players", "\n".join(twenty[:12]))) == (
        "The players were changed. Roll-off for who goes first: twelve players each roll three dice, in seat order "
        "from Q1; highest score starts. Q1, roll three dice.")
    for seat in range(12):
        out = off.on_roll(clear(*(("6", "6", "6") if seat == 11 else ("1", "2", "3"))))
    assert "twelve players, three chips each. Press status for the seat order." in said(out)
    assert said(off.on_action("status")).endswith(f"Seat order: {', '.join(twenty[:11])} and Q12.")
    # Seven new players are named as before.
    assert said(table(players=eight).on_action("players", "\n".join(twenty[:7]))).startswith(
        "The players are now Q1, Q2, Q3, Q4, Q5, Q6 and Q7, in seat order. A new game of LCR: Q1, Q2")


def test_undoing_the_roll_that_won_a_series_says_the_series_is_not_won_yet():
    # Found by an audit (2026-12-04): the table heard who won the series, then only "That win is taken
    # off the tally"; nothing said the series was open again.
    ref = Referee(GameConfig.create(PLAYERS), series_rules=SeriesRules(first_to=1))
    ref.start()
    ref.on_roll(clear("C", "C", "C"))
    ref.on_roll(clear("C", "C", "C"))  # Cy wins the game and the series
    assert ref.series.is_over
    words = said(ref.on_action("undo"))
    assert "That win is taken off the tally. The series is not won yet. Roll three dice." in words
    assert not ref.series.is_over
    # A win that did not end the series says only that it is taken off.
    two = Referee(GameConfig.create(PLAYERS), series_rules=SeriesRules(first_to=2))
    two.start()
    two.on_roll(clear("C", "C", "C"))
    two.on_roll(clear("C", "C", "C"))
    assert "not won yet" not in said(two.on_action("undo"))


def unsure(*faces):
    return RollObservation(tuple(faces), verdict="unsure", message="I am not sure of the die at the left")


def test_an_unsure_first_read_does_not_hide_the_game_a_long_press_ended_from_undo():
    # Found by a review: told "Undo brings the last one back", the table pressed undo while the new
    # game's first read waited for confirm (no roll counted yet) and heard "Nothing to undo."
    ref = table()
    ref.on_roll(clear("L", ".", "C"))
    ref.on_action("new_game")
    ref.on_roll(unsure("L", ".", "C"))
    assert ref.phase == "confirm_read"
    out = ref.on_action("undo")
    assert said(out).startswith("The new game is taken back; the last one goes on where it was.")
    assert ref.game.state.chips == (1, 4, 3) and ref.phase == "await_roll" and ref.offered_guess is None
    assert any(isinstance(o, Checkpoint) for o in out)


def test_an_unsure_first_read_does_not_hide_the_roll_off_roll_that_decided_who_starts_from_undo():
    # As above: the README's "until that game's first turn" is a counted roll, not a read offered for confirm.
    ref = Referee(GameConfig.create(PLAYERS), first_player="roll-off")
    ref.start()
    for faces in (("6", "6", "1"), ("5", "5", "2"), ("6", "6", "6")):
        ref.on_roll(clear(*faces))
    ref.on_roll(unsure("L", ".", "C"))
    assert ref.phase == "confirm_read"
    out = ref.on_action("undo")
    assert "Cy's roll-off roll is taken back. Cy, roll three dice again." in said(out)
    assert ref.phase == "roll_off" and ref.game is None and ref.offered_guess is None
    assert any(isinstance(o, Checkpoint) for o in out) and ref.snapshot()["game"] is None


def test_undoing_a_wild_turn_says_whom_the_chips_taken_go_back_to():
    # Found by a review: undo said "Undone: Ann's roll of W, W, dot" and nothing of the choice, so a
    # player at the table by ear could not know whose chips to hand back (the faces do not say it).
    ref = table("wild", players=["Ann", "Bob", "Cy", "Dee"])
    ref.on_roll(clear("W", "W", "."))
    ref.on_action("choose", "Bob")
    ref.on_action("choose", "Dee")
    assert ref.game.state.chips == (5, 2, 3, 2)
    assert said(ref.on_action("undo")) == ("Undone: Ann's roll of W, W, dot. Ann, it is your turn again. "
                                           "Ann gives back one chip to Bob and one chip to Dee. Roll three dice.")
    assert ref.game.state.chips == (3, 3, 3, 3)
    ref.on_roll(clear("W", "W", "."))
    ref.on_action("choose", "Cy")
    ref.on_action("choose", "Cy")
    assert "Ann gives back two chips to Cy." in said(ref.on_action("undo"))
    # The only choice there was, taken by the rules without asking, is named too.
    ref = table("wild")
    ref.on_roll(clear("C", "C", "C"))
    assert "Bob takes one chip from Cy." in said(ref.on_roll(clear("W", ".", ".")))
    assert "Bob gives back one chip to Cy." in said(ref.on_action("undo"))
    # A W roll taken back before its choice took nothing: nothing is given back.
    ref = table("wild")
    ref.on_roll(clear("W", ".", "."))
    assert ref.phase == "await_decision" and "gives back" not in said(ref.on_action("undo"))
    ref.on_roll(clear("L", ".", "."))
    assert "gives back" not in said(ref.on_action("undo"))


def test_undoing_a_first_wild_pick_lights_the_chooser_not_the_player_taken_back():
    # Found by a review: the LED of the player offered and picked stayed lit after the pick was taken
    # back, as if that chip were still taken; a restart there lights the chooser.
    ref = table("wild")
    ref.on_roll(clear("W", "W", "."))
    assert ShowTurn(1) in ref.on_action("choose")  # Bob offered: his LED
    ref.on_action("confirm")
    out = ref.on_action("undo")
    assert said(out).startswith("Taken back: the chip from Bob.") and ShowTurn(0) in out
    assert [o for o in Referee.restore(ref.snapshot()).start() if isinstance(o, ShowTurn)] == [ShowTurn(0)]


def test_undo_after_a_long_press_between_two_wild_picks_brings_back_the_first_pick():
    # Found by a review: with two W, a long press (a new game) while the second player was being chosen,
    # then undo, brought the game back without the first pick, and the whole question was asked again.
    ref = table("wild", players=["Ann", "Bob", "Cy", "Dee"])
    ref.on_roll(clear("W", "W", "."))
    assert said(ref.on_action("choose", "Bob")) == "One chip from Bob. Choose the second."
    ref.on_action("choose")  # Bob again, offered for the second chip
    assert said(ref.on_action("new_game")).startswith("Starting a new game. Undo brings the last one back.")
    assert ref.decision_picks == () and ref.phase == "await_roll"
    out = ref.on_action("undo")
    reminder = ("Ann takes one chip from Bob and must choose whom to take the second from. "
                "Press choose to hear each name, and confirm to pick.")
    assert said(out).startswith("The new game is taken back; the last one goes on where it was.")
    assert said(out).endswith(reminder) and "Two wilds!" not in said(out)
    assert [o for o in out if isinstance(o, Prompt)] == [Prompt(reminder)]  # the next press of choose makes it stale
    assert ref.phase == "await_decision" and ref.decision_picks == (1,)
    assert ref.snapshot()["decision_picks"] == [1]  # saved so: a power cut now asks only for the second
    checkpoint = next(o for o in out if isinstance(o, Checkpoint))
    assert checkpoint.record["what"] == "undo new game" and checkpoint.record["picked"] == ["Bob"]
    assert said(ref.on_action("repeat")) == said(out)
    # The second choice goes on from the first name; the first pick still counts.
    assert said(ref.on_action("choose")).startswith("Bob, with two chips?")  # one of Bob's three is taken
    out = ref.on_action("choose", "Cy")
    assert "Ann takes one chip from Bob and one chip from Cy." in said(out)
    assert ref.game.state.chips == (5, 2, 2, 3)
    # A second long press before the new game has a turn still brings back the same decision.
    ref2 = table("wild", players=["Ann", "Bob", "Cy", "Dee"])
    ref2.on_roll(clear("W", "W", "."))
    ref2.on_action("choose", "Dee")
    ref2.on_action("new_game")
    ref2.on_action("new_game")
    assert said(ref2.on_action("undo")).endswith(reminder.replace("Bob", "Dee"))
    assert ref2.decision_picks == (3,)


def test_undo_after_a_long_press_before_any_wild_pick_asks_the_whole_question_again():
    ref = table("wild", players=["Ann", "Bob", "Cy", "Dee"])
    ref.on_roll(clear("W", "W", "."))
    ref.on_action("new_game")
    out = ref.on_action("undo")
    assert "Two wilds! Ann, take two chips" in said(out) and ref.decision_picks == ()
    assert ref.phase == "await_decision"


def test_at_a_big_table_each_name_offered_says_its_place_and_holding_choose_steps_back():
    # Found by a review: at a table of 8 to 20 the choose button stepped through up to 19 names with no
    # way back and no word of how far it was; a player who overshot had to go round again.
    players = [f"P{n}" for n in range(1, 13)]
    ref = table("wild", players=players)
    out = ref.on_roll(clear("W", ".", "."))
    assert said(out).endswith("Wild! P1, choose one of eleven players to take a chip from. Press choose to hear "
                              "the names one at a time, hold choose to go back one, and confirm to pick.")
    assert said(ref.on_action("choose")) == "P2, with three chips (name 1 of 11)? Press confirm to take from P2."
    ref.on_action("choose")
    ref.on_action("choose")  # P4: one too far
    out = ref.on_action("choose_back")
    assert said(out) == "P3, with three chips (name 2 of 11)? Press confirm to take from P3."
    assert ShowTurn(2) in out and all(isinstance(o, Prompt) for o in out if hasattr(o, "text"))
    assert said(ref.on_action("repeat")) == said(out)
    ref.on_action("choose_back")  # P2, the first
    assert said(ref.on_action("choose_back")) == ("P12, with three chips (back to the last name, name 11 of 11)? "
                                                 "Press confirm to take from P12.")
    assert said(ref.on_action("choose")) == ("P2, with three chips (back to the first name, name 1 of 11)? "
                                            "Press confirm to take from P2.")
    assert "hold choose to go back one" in said(ref.on_action("status"))
    ref.on_action("choose_back")
    ref.on_action("confirm")
    assert ref.game.state.chips[11] == 2 and ref.game.state.chips[0] == 4  # P12, the name heard last


def test_holding_choose_before_any_name_offers_the_last_and_small_tables_sound_as_before():
    ref = table("wild", players=["Ann", "Bob", "Cy", "Dee"])
    out = ref.on_roll(clear("W", ".", "."))
    assert said(out).endswith("Press choose to hear each name, and confirm to pick.")  # unchanged
    assert said(ref.on_action("choose_back")) == "Dee, with three chips (the last name)? Press confirm to take from Dee."
    assert said(ref.on_action("choose_back")) == "Cy, with three chips? Press confirm to take from Cy."
    assert said(ref.on_action("choose")) == "Dee, with three chips? Press confirm to take from Dee."
    assert said(ref.on_action("choose")) == ("Bob, with three chips (back to the first name)? "
                                            "Press confirm to take from Bob.")
    # A table of seven has at most six to choose from: said as before.
    seven = table("wild", players=["A1", "A2", "A3", "A4", "A5", "A6", "A7"])
    assert said(seven.on_roll(clear("W", ".", "."))).endswith("Press choose to hear each name, and confirm to pick.")
    assert said(seven.on_action("choose")) == "A2, with three chips? Press confirm to take from A2."
    # Outside a decision there is nothing to step back to.
    assert said(table().on_action("choose_back")) == "There is nothing to choose now."


def test_at_a_big_table_the_place_counts_only_the_players_who_can_be_robbed():
    players = [f"P{n}" for n in range(1, 9)]
    ref = table("wild", players=players)
    ref.on_roll(clear("W", ".", "."))
    assert said(ref.on_action("choose")).startswith("P2, with three chips (name 1 of 7)?")
    ref.on_action("confirm")
    # Two W at a big table: the second choice counts the names left (P2 still has two chips).
    ref2 = table("wild", players=players)
    ref2.on_roll(clear("W", "W", "."))
    ref2.on_action("choose", "P3")
    assert "hold choose to go back one" in said(ref2.on_action("status"))
    assert said(ref2.on_action("choose_back")).startswith("P8, with three chips (the last name, name 7 of 7)?")


# -- status at a big table ----------------------------------------------------------------------------

BIG = "Ann Bob Cy Di Ed Flo Gus Hal Ivy Jo Kim Lu Max Ned Oli Pam Quin Ros Sam Tess".split()
NUMBER_WORDS = {w: n for n, w in enumerate("none one two three four five six seven eight nine ten eleven twelve "
                                           "thirteen fourteen fifteen sixteen seventeen eighteen nineteen "
                                           "twenty".split())} | {"no": 0}


def close_odds(state):
    from lcr_pi.stats import Odds

    n = len(state.chips)
    return Odds((1 / n,) * n, False, 0.02, "monte-carlo", 200)


def heard_chips(sentence, players):
    """Each player's chips as a listener takes them from a big table's grouped sentence."""
    heard, rest = {}, None
    for part in sentence.rstrip(".").split("; "):
        if part.startswith("everyone else has ") or part.startswith("Everyone has "):
            rest = NUMBER_WORDS[part.split(" has ")[1].split()[0]]
            continue
        names, count = part.rsplit(" have " if " have " in part else " has ", 1)
        for name in names.replace(" and ", ", ").split(", "):
            heard[name] = NUMBER_WORDS[count.split()[0]]
    return tuple(heard.get(name, rest) for name in players)


def test_status_at_a_big_table_says_whose_turn_first_and_groups_the_chips():
    # Found by an audit playing by ear: at 12 players status said every player's chips, one by one, for 74
    # words (25 s at espeak's 175 words a minute) before whose turn it was, and 106 words (36 s) at 20.
    ref = table(players=BIG[:12], odds=close_odds)
    opening = said(ref.on_action("status"))
    # At a game's opening it ends with the seat order, which the big table's opening no longer says.
    assert opening == ("It is Ann's turn: roll three dice. Everyone has three chips. No chips in the centre. "
                      "No clear favourite yet. Seat order: Ann, Bob, Cy, Di, Ed, Flo, Gus, Hal, Ivy, Jo, Kim and Lu.")
    assert len(opening.split()) == 35  # 12 s, the seats 15 of them; it was 74 (25 s)
    ref.on_roll(clear("L", ".", "C"))  # Ann 1, Bob 4
    ref.on_roll(clear("R", "R", "C"))  # Bob 1, Ann 3
    ref.on_roll(clear("C", "C", "C"))  # Cy 0
    assert said(ref.on_action("status")) == (
        "It is Di's turn: roll three dice. Bob has one chip; Cy has none; everyone else has three chips. "
        "Five chips in the centre. No clear favourite yet.")


def test_status_at_a_big_table_is_short_all_game_and_every_count_is_heard():
    import random

    from lcr_pi.announce import dice

    for players in (8, 12, 20):
        rng = random.Random(players)
        ref = table(players=BIG[:players], odds=close_odds)
        longest = 0
        while ref.phase != "game_over":
            words = said(ref.on_action("status"))
            assert words.startswith(f"It is {ref.game.state.current_player}'s turn: roll "
                                    f"{dice(ref.game.state.dice_to_roll)}. "), words
            grouped = words.split(". ")[1]
            assert heard_chips(grouped, BIG[:players]) == ref.game.state.chips, words
            longest = max(longest, len(words.split()))
            ref.on_roll(clear(*(rng.choice("LCR...") for _ in range(ref.game.state.dice_to_roll))))
        # Before: every player one by one, 58 words at 8 players, 74 at 12, 106 at 20 (36 s).
        assert longest <= {8: 40, 12: 46, 20: 55}[players], (players, longest)


def test_status_at_a_big_table_keeps_an_offer_and_a_decision_as_the_last_words():
    ref = table(players=BIG[:8], variant="wild")
    ref.on_roll(RollObservation(("L", "C", "R"), verdict="unsure"))
    out = ref.on_action("status")
    assert said(out).startswith("It is Ann's turn. Everyone has three chips. No chips in the centre.")
    assert out[-1] == Prompt("It is Ann's turn: roll again, or, if the dice show L, C, R, press confirm.")
    ref.on_roll(clear("W", ".", "."))
    out = ref.on_action("status")
    assert said(out).startswith("It is Ann's turn. Everyone has three chips.")
    assert out[-1].text.startswith("Ann must first choose whom to take one chip from.")
    assert isinstance(out[-1], Prompt)


def test_status_at_a_big_table_groups_the_games_won():
    ref = Referee(GameConfig.create(BIG[:8]), series_rules=SeriesRules(first_to=3), odds=close_odds)
    ref.start()
    assert "No games won yet." in said(ref.on_action("status"))
    ref.series = Series.from_dict(ref.config, {**ref.series.to_dict(), "wins": [2, 0, 1, 0, 0, 1, 0, 0],
                                               "games": 4, "last_first": 3, "last_winner": 0})
    assert ("Games won: Ann has two wins; Cy and Flo have one; everyone else has none."
            in said(ref.on_action("status")))


def test_status_at_a_table_of_seven_is_said_player_by_player_as_before():
    ref = table(players=BIG[:7], odds=close_odds)
    assert said(ref.on_action("status")) == (
        "Ann has three chips, Bob has three chips, Cy has three chips, Di has three chips, Ed has three chips, "
        "Flo has three chips, Gus has three chips. No chips in the centre. No one is clearly favoured to win yet; "
        "the leader has about 14 percent. It is Ann's turn: roll three dice.")


def a_big_series_rolling_off_after_its_first_game(players):
    """A first to two wins among ``players``, each game's starter rolled for: the last player won the
    first game, and the roll-off for the second is under way."""
    ref = Referee(GameConfig.create(players), series_rules=SeriesRules(first_to=2, next_starter="roll-off"))
    ref.start()
    while ref.phase != "game_over":
        out = ref.on_roll(clear("C", "C", "C"))
    ref.on_action("confirm")
    return ref, out


def test_a_big_series_says_its_games_won_grouped_after_a_game_and_at_a_restart():
    # Found by an audit playing by ear: the tally after each game and at "Welcome back" said every
    # player's wins one by one, 65 words at 20 players (22 s), as status no longer did.
    ref, won = a_big_series_rolling_off_after_its_first_game(BIG)
    tally = "Games won so far: Tess has one win; everyone else has none."
    assert said(won).endswith(f"wins the pot of 57 chips! {tally} Press confirm for the next game.")
    ref.on_roll(clear("1", "2", "3"))
    ref.on_action("undo")  # saved with no game
    words = said(Referee.restore(ref.snapshot()).start())
    assert words.startswith(f"Welcome back. The roll-off starts again from the first roll. {tally} Roll-off")
    assert len(tally.split()) == 12  # was 65
    seven, won = a_big_series_rolling_off_after_its_first_game(BIG[:7])
    tally = ("Games won so far: Ann has none, Bob has none, Cy has none, Di has none, Ed has none, Flo has none, "
             "Gus has one win.")
    assert said(won).endswith(f"wins the pot of eighteen chips! {tally} Press confirm for the next game.")
    seven.on_roll(clear("1", "2", "3"))
    seven.on_action("undo")
    words = said(Referee.restore(seven.snapshot()).start())
    assert words.startswith(f"Welcome back. The roll-off starts again from the first roll. {tally} Roll-off")


def test_status_at_a_big_tables_game_over_says_the_winner_first():
    # Found by a review: at a table of 8 or more status said whose turn it was first, but at a game's end
    # it still said the chips and the games won first and the winner last, as a small table does.
    ref = Referee(GameConfig.create(BIG[:8]), series_rules=SeriesRules(first_to=1), odds=close_odds)
    ref.start()
    while ref.phase != "game_over":
        ref.on_roll(clear("C", "C", "C"))
    words = said(ref.on_action("status"))
    assert words == ("Hal won this game and the series. Hal has three chips; everyone else has no chips. "
                     "Hal won the pot of 21 chips. Games won: Hal has one win; everyone else has none. "
                     "Press confirm for a new series.")
    assert len(words.split()) == 39  # two more than before (the pot is said won); the winner is first, not after 24 words
    assert said(Referee.restore(ref.snapshot()).start()).endswith(words)
    seven = table(players=BIG[:7], odds=close_odds)
    while seven.phase != "game_over":
        seven.on_roll(clear("C", "C", "C"))
    assert said(seven.on_action("status")) == (
        "Ann has no chips, Bob has no chips, Cy has no chips, Di has no chips, Ed has no chips, Flo has no chips, "
        "Gus has three chips. Gus won the pot of eighteen chips. Gus won this game. Press confirm for a new game.")


def test_status_in_a_big_tables_roll_off_says_who_leads_and_who_is_still_to_roll():
    # Found by a review: status in a roll-off said every score of the round one by one, 58 words of them
    # at 20 players (67 in all, 23 s), though only the lead and the players still to roll decide anything.
    ref = Referee(GameConfig.create(BIG), first_player="roll-off")
    ref.start()
    for seat in range(19):
        ref.on_roll(clear("6", "5", "4") if seat == 2 else clear("1", "2", "3"))
    words = said(ref.on_action("status"))
    assert words == ("Roll-off for who goes first. Cy leads with fifteen. Still to roll: Tess; sixteen or more leads. "
                     "Tess, roll three dice.")
    assert len(words.split()) == 21  # was 67
    ref.on_action("undo")
    ref.on_action("undo")
    assert said(ref.on_action("status")) == (
        "Roll-off for who goes first. Cy leads with fifteen. Still to roll: Ros, Sam and Tess; sixteen or more "
        "leads. Ros, roll three dice.")
    ref.on_roll(clear("6", "5", "4"))  # Ros ties with Cy
    ref.on_roll(clear("6", "6", "6"))  # Sam has the most a roll can score
    assert said(ref.on_action("status")).startswith(
        "Roll-off for who goes first. Sam leads with eighteen. Still to roll: Tess; only eighteen ties.")
    ref.on_roll(clear("6", "6", "6"))  # Tess ties with Sam
    ref.on_roll(clear("L", "dot", "dot"))
    assert said(ref.on_action("status")) == (
        "Roll-off for who goes first: Sam and Tess tied and roll again. Sam leads with two. "
        "Still to roll: Tess; more than two leads. Tess, roll three dice.")
    lcr = table(players=BIG[:9], first_player="roll-off")
    for faces in (("dot", "dot", "dot"), ("L", "C", "dot"), ("R", "dot", "L")):
        lcr.on_roll(clear(*faces))
    assert said(lcr.on_action("status")) == (
        "Roll-off for who goes first. Ann leads with three. Still to roll: six players, from Di to Ivy; "
        "more than three leads. Di, roll three dice.")  # not "only three ties": 1, 1, 1 scores three too


def test_status_before_a_big_tables_first_roll_off_roll_says_the_seat_order_as_at_a_games_opening():
    # Found by a review: the roll-off's opening says the players roll "in seat order from Ann" without naming
    # them, and status there said only "Roll-off for who goes first. Ann, roll three dice."; a game's
    # opening at a big table is followed by the seat order on status. Once rolls are scored, the standing.
    seats = ("Seat order: Ann, Bob, Cy, Di, Ed, Flo, Gus, Hal, Ivy, Jo, Kim, Lu, Max, Ned, Oli, Pam, Quin, Ros, "
             "Sam and Tess.")
    ref = Referee(GameConfig.create(BIG), first_player="roll-off")
    assert said(ref.start()).startswith("Roll-off for who goes first: twenty players each roll three dice, in seat order")
    assert said(ref.on_action("status")) == f"Roll-off for who goes first. {seats} Ann, roll three dice."
    ref.on_roll(clear("1", "2", "3"))
    assert "Seat order" not in said(ref.on_action("status"))
    ref.on_action("undo")
    assert said(ref.on_action("status")) == f"Roll-off for who goes first. {seats} Ann, roll three dice."
    # A tie's round again is between the tied players only, said by name: no seat order.
    for seat in range(20):
        ref.on_roll(clear("6", "6", "6") if seat in (3, 9) else clear("1", "2", "3"))
    assert said(ref.on_action("status")) == "Roll-off for who goes first: Di and Jo tied and roll again. Di, roll three dice."
    # Seven players heard every name in the opening: status as before.
    seven = Referee(GameConfig.create(BIG[:7]), first_player="roll-off")
    seven.start()
    assert said(seven.on_action("status")) == "Roll-off for who goes first. Ann, roll three dice."


def test_status_in_a_roll_off_at_a_table_of_seven_says_each_score_as_before():
    ref = table(players=BIG[:7], first_player="roll-off")
    for faces in (("1", "2", "3"), ("6", "5", "4"), ("2", "2", "2")):
        ref.on_roll(clear(*faces))
    assert said(ref.on_action("status")) == (
        "Roll-off for who goes first. Ann scored six, Bob scored fifteen and Cy scored six. Di, roll three dice.")


def test_a_roll_off_at_a_table_of_seven_is_said_as_before_and_at_eight_by_number_with_the_standing():
    # Found by a review: at a big table the roll-off was the one speech still said player by player, its
    # opening naming everyone and each roll followed by "roll three dice". Seven players hear it as before.
    rolls = ("1 2 3", "6 5 3", "6 6 2", "2 2 2", "6 6 2", "1 1 1", "6 6 1", "6 4 2", "6 6 3", "6 6 2")
    seven = Referee(GameConfig.create(BIG[:7]), first_player="roll-off")
    assert [said(seven.start())] + [said(seven.on_roll(clear(*faces.split()))) for faces in rolls][:-1] == [
        "Roll-off for who goes first: Ann, Bob, Cy, Di, Ed, Flo and Gus, each roll three dice, highest score starts. "
        "Ann, roll three dice.",
        "Ann scores six. Bob, roll three dice.", "Bob scores fourteen. Cy, roll three dice.",
        "Cy scores fourteen. Di, roll three dice.", "Di scores six. Ed, roll three dice.",
        "Ed scores fourteen. Flo, roll three dice.", "Flo scores three. Gus, roll three dice.",
        "Gus scores thirteen. A tie! Bob, Cy and Ed, roll again. Bob, roll three dice.",
        "Bob scores twelve. Cy, roll three dice.", "Cy scores fifteen. Ed, roll three dice.",
    ]
    assert said(seven.on_action("repeat")).startswith("Ed scores fourteen. Cy goes first, with fifteen. A new game")
    eight = Referee(GameConfig.create(BIG[:8]), first_player="roll-off")
    rolls = rolls[:7] + ("4 4 4",) + rolls[7:]  # Hal's twelve leads nothing
    assert [said(eight.start())] + [said(eight.on_roll(clear(*faces.split()))) for faces in rolls][:-1] == [
        "Roll-off for who goes first: eight players each roll three dice, in seat order from Ann; highest score "
        "starts. Ann, roll three dice.",
        "Ann scores six and leads. Bob, roll.", "Bob scores fourteen and leads. Cy, roll.",
        "Cy scores fourteen and ties with Bob. Di, roll.", "Di scores six. Ed, roll.",
        "Ed scores fourteen and ties with Bob and Cy. Flo, roll.", "Flo scores three. Gus, roll.",
        "Gus scores thirteen. Hal, roll.",
        "Hal scores twelve. A tie! Bob, Cy and Ed, roll again. Bob, roll three dice.",
        "Bob scores twelve and leads. Cy, roll.", "Cy scores fifteen and leads. Ed, roll.",
    ]
    # The deciding roll says its score, then who goes first, not that it leads.
    assert said(eight.on_action("repeat")).startswith("Ed scores fourteen. Cy goes first, with fifteen. A new game")
    assert eight.game.state.current == 2


def test_a_roll_off_of_twenty_players_through_the_referee_is_short_and_every_roller_hears_their_score():
    ref = Referee(GameConfig.create(BIG), first_player="roll-off")
    words = [said(ref.start())]
    assert words[0] == ("Roll-off for who goes first: twenty players each roll three dice, in seat order from Ann; "
                        "highest score starts. Ann, roll three dice.")  # 23 words; naming everyone, it was 37
    scores = [6, 13, 15] + [6] * 14 + [15, 15, 9]  # Cy, Ros and Sam tie on fifteen
    faces = {6: "1 2 3", 13: "6 4 3", 15: "6 5 4", 9: "3 3 3", 10: "4 4 2", 17: "6 6 5", 11: "6 4 1"}
    for seat, score in enumerate(scores):
        assert ref.phase == "roll_off" and ref.roll_off.next_player == BIG[seat]
        words.append(said(ref.on_roll(clear(*faces[score].split()))))
    assert words[1:4] == ["Ann scores six and leads. Bob, roll.", "Bob scores thirteen and leads. Cy, roll.",
                          "Cy scores fifteen and leads. Di, roll."]
    assert words[4:18] == [f"{BIG[seat]} scores six. {BIG[seat + 1]}, roll." for seat in range(3, 17)]
    assert words[18:] == ["Ros scores fifteen and ties with Cy. Sam, roll.",
                          "Sam scores fifteen and ties with Cy and Ros. Tess, roll.",
                          "Tess scores nine. A tie! Cy, Ros and Sam, roll again. Cy, roll three dice."]
    # The tie-break names only the tied players, and who wins it goes first.
    for player, score in (("Cy", 10), ("Ros", 17), ("Sam", 11)):
        assert ref.roll_off.next_player == player
        words.append(said(ref.on_roll(clear(*faces[score].split()))))
    assert words[-3:-1] == ["Cy scores ten and leads. Ros, roll.", "Ros scores seventeen and leads. Sam, roll."]
    deciding = words[-1]
    assert deciding.startswith("Sam scores eleven. Ros goes first, with seventeen. A new game of LCR: ")
    assert ref.phase == "await_roll" and ref.game.state.current == 17
    assert said(ref.on_action("repeat")) == deciding
    words[-1] = deciding[:deciding.index(" A new game")]
    assert sum(len(w.split()) for w in words) == 171  # was 207 (71 s at 175 words a minute); now 59 s


# -- a big table's opening ----------------------------------------------------------------------------

WILD = "Wild rules: each wild takes a chip from another player, and three wilds take the pot."


def openings_of_a_series(players, next_starter):
    """A Wild first to two wins among ``players``: the first game's opening, status there, and the next game's
    opening (after a roll-off the seat 2 wins), each word for word, with status there."""
    ref = Referee(GameConfig.create(players, variant="wild"),
                  series_rules=SeriesRules(first_to=2, next_starter=next_starter))
    words = [said(ref.start()), said(ref.on_action("status"))]
    while ref.phase != "game_over":
        ref.on_roll(clear(*("C",) * ref.game.state.dice_to_roll))
    out = ref.on_action("confirm")
    while ref.phase == "roll_off":
        out = ref.on_roll(clear("6", "6", "6") if ref.roll_off.next_seat == 2 else clear("1", "2", "3"))
    return words + [said(out), said(ref.on_action("status"))]


def test_the_opening_at_a_table_of_seven_is_said_as_before_and_at_eight_by_number_with_who_starts_and_why():
    # Found by an audit of a big table by ear: its opening named every player, at 20 players 38 words (13 s)
    # before the first roll. Seven players hear it as before, name by name.
    names = "Ann, Bob, Cy, Di, Ed, Flo and Gus"
    tally = "Games won: Ann has none, Bob has none, Cy has none, Di has none, Ed has none, Flo has none, Gus has one win."
    chips_each = ("Ann has three chips, Bob has three chips, Cy has three chips, Di has three chips, Ed has three chips, "
                  "Flo has three chips, Gus has three chips. No chips in the centre.")
    seven = f"A new game of LCR: {names}, three chips each. {WILD}"
    first = f"A new series: first to two wins. {seven} Ann goes first. Ann, your turn: roll three dice."
    assert openings_of_a_series(BIG[:7], "winner") == [
        first, f"{chips_each} {tally.replace('one win', 'none')} It is Ann's turn: roll three dice.",
        f"{seven} Gus goes first. Gus, your turn: roll three dice.",
        f"{chips_each} {tally} It is Gus's turn: roll three dice."]
    assert openings_of_a_series(BIG[:7], "next-seat")[2:] == [
        f"{seven} Bob goes first. Bob, your turn: roll three dice.",
        f"{chips_each} {tally} It is Bob's turn: roll three dice."]
    assert openings_of_a_series(BIG[:7], "roll-off")[2] == (
        f"Gus scores six. Cy goes first, with eighteen. {seven} Cy goes first. Cy, your turn: roll three dice.")

    eight = "A new game of LCR: eight players, three chips each."
    seats = "Seat order: Ann, Bob, Cy, Di, Ed, Flo, Gus and Hal."
    tally = "Games won: Hal has one win; everyone else has none."
    assert openings_of_a_series(BIG[:8], "winner") == [
        f"A new series: first to two wins. {eight} Press status for the seat order. {WILD} Ann goes first. "
        "Ann, your turn: roll three dice.",
        f"It is Ann's turn: roll three dice. Everyone has three chips. No chips in the centre. No games won yet. {seats}",
        f"{eight} {WILD} Hal won the last game and goes first. Hal, your turn: roll three dice.",
        f"It is Hal's turn: roll three dice. Everyone has three chips. No chips in the centre. {tally} {seats}"]
    assert openings_of_a_series(BIG[:8], "next-seat")[2] == (
        f"{eight} {WILD} Ann started the last game, so Bob goes first. Bob, your turn: roll three dice.")
    # The roll-off's last words say who goes first, with the winning score; the opening does not say it again.
    assert openings_of_a_series(BIG[:8], "roll-off")[2] == (
        f"Hal scores six. Cy goes first, with eighteen. {eight} {WILD} Cy, your turn: roll three dice.")


def test_a_twenty_player_game_starts_through_the_referee_by_number_and_the_seat_order_is_there_on_request():
    ref = Referee(GameConfig.create(BIG), series_rules=SeriesRules(first_to=2, next_starter="next-seat"),
                  odds=close_odds)
    opening = said(ref.start())
    assert opening == ("A new series: first to two wins. A new game of LCR: twenty players, three chips each. "
                       "Press status for the seat order. Ann goes first. Ann, your turn: roll three dice.")
    assert len(opening.split()) == 32  # 25 after the series' seven; naming everyone, the game's took 38 (13 s)
    assert said(ref.on_action("repeat")) == opening
    seats = ("Seat order: Ann, Bob, Cy, Di, Ed, Flo, Gus, Hal, Ivy, Jo, Kim, Lu, Max, Ned, Oli, Pam, Quin, Ros, "
             "Sam and Tess.")
    assert said(ref.on_action("status")) == ("It is Ann's turn: roll three dice. Everyone has three chips. "
                                             f"No chips in the centre. No games won yet. No clear favourite yet. {seats}")
    # Help (typed, or on the page) says the seats at any moment; status only at the opening, and not a restart.
    assert said(ref.on_action("help")).startswith(f"It is Ann's turn: roll three dice. {seats} Buttons: ")
    ref.on_roll(clear("L", ".", "C"))
    assert "Seat order" not in said(ref.on_action("status"))
    assert said(ref.on_action("help")).startswith(f"It is Bob's turn: roll three dice. {seats} Buttons: ")
    ref.on_action("undo")
    assert said(ref.on_action("status")).endswith(seats)
    ref.on_roll(clear("L", ".", "C", verdict="unsure"))
    out = ref.on_action("status")
    assert said(out).endswith(f"{seats} It is Ann's turn: roll again, or, if the dice show L, dot, C, press confirm.")
    assert isinstance(out[-1], Prompt) and out[-2].text == seats
    ref.on_action("confirm")
    while ref.phase != "game_over":
        ref.on_roll(clear(*("C",) * ref.game.state.dice_to_roll))
    assert ref.game.state.first == 0
    next_game = said(ref.on_action("confirm"))
    assert next_game == ("A new game of LCR: twenty players, three chips each. Ann started the last game, so Bob "
                         "goes first. Bob, your turn: roll three dice.")  # 24 words
    back = said(Referee.restore(ref.snapshot()).start())
    assert back == ("Welcome back. The game goes on where it stopped. It is Bob's turn: roll three dice. "
                    "Everyone has three chips. No chips in the centre. Games won: Bob has one win; everyone else has none.")
    # A long press starts the series' game over, with the same first player, for the same reason.
    ref.on_roll(clear(".", ".", "."))
    assert said(ref.on_action("new_game")) == f"Starting a new game. Undo brings the last one back. {next_game}"


# -- the Wild choice at a big table ------------------------------------------------------------------

MANY_HELP = "Press choose to hear the names one at a time, hold choose to go back one, and confirm to pick."
FEW_HELP = "Press choose to hear each name, and confirm to pick."


def _step_round(ref):
    """Press choose until the names start over: the names heard, one a press, in the order heard."""
    heard = []
    while True:
        out = ref.on_action("choose")
        texts = [o.text for o in out if isinstance(o, Prompt)]
        assert len(texts) == 1 and len(said(out).split("?")) == 2, said(out)  # one name a press
        if "back to the first name" in texts[0]:
            assert texts[0].startswith(f"{heard[0]}, with")
            return heard
        heard.append(texts[0].split(",")[0])


def test_a_big_tables_wild_question_says_how_many_and_the_choose_button_steps_through_exactly_those():
    # Whole Wild games of twelve, every choice made with the choose button: what the question says (how many
    # can be chosen, or their names when fewer than seven) and its help are checked against the buttons.
    rng = random.Random(12)
    players = BIG[:12]
    asked = {"by number": 0, "by name": 0, "two wilds": 0}
    for _ in range(3):
        ref = table("wild", players=players)
        while ref.phase != "game_over":
            out = ref.on_roll(clear(*(rng.choice("LCRW..") for _ in range(ref.game.state.dice_to_roll))))
            if ref.phase != "await_decision":
                continue
            state = ref.game.state
            roller = state.pending.seat
            can = [players[s] for s, n in enumerate(state.chips) if n and s != roller]  # the rules' own
            question, how = [o.text for o in out if isinstance(o, Prompt)]
            count = re.search(r"(?:choose one of|Choose from) (\w+) players(?: to take a chip from)?\.$", question)
            if count:
                asked["by number"] += 1
                assert NUMBER_WORDS[count[1]] == len(can) >= 7 and how == MANY_HELP
            else:
                asked["by name"] += 1
                named = re.split(r", | or ", re.search(r"(?:from:|Choose from) (.*)\.$", question)[1])
                assert named == can and len(can) < 7 and how == FEW_HELP
            assert question.startswith((f"Wild! {players[roller]},", f"Two wilds! {players[roller]},"))
            chosen = []
            asked["two wilds"] += state.pending.take == 2
            for pick in range(state.pending.take):
                heard = _step_round(ref)
                assert heard == [p for p in can if state.chips[players.index(p)] > chosen.count(p)]
                if len(heard) >= 7:  # each name says its place; holding choose goes back one
                    assert said(ref.on_action("choose_back")).startswith(
                        f"{heard[-1]}, with") and f"name {len(heard)} of {len(heard)}" in said(ref.on_action("repeat"))
                    assert said(ref.on_action("choose")).startswith(f"{heard[0]}, with")
                steps = rng.randrange(len(heard))
                for _ in range(steps):
                    ref.on_action("choose")
                chosen.append(heard[steps])  # the name heard last is the one confirm takes
                out = ref.on_action("confirm")
                if pick + 1 < state.pending.take:
                    assert said(out) == f"One chip from {chosen[0]}. Choose the second."
            for name in set(chosen):
                assert ref.game.state.chips[players.index(name)] == state.chips[players.index(name)] - chosen.count(name)
    assert asked["by number"] >= 5 and asked["by name"] >= 5 and asked["two wilds"] >= 5, asked


def test_a_big_tables_wild_question_is_said_by_number_again_after_a_restart_and_a_typed_refusal():
    ref = table("wild", players=BIG)
    ref.on_roll(clear("W", "W", "."))
    question = ("Two wilds! Ann, take two chips: both from one player, or one each from two. "
                "Choose from nineteen players.")
    assert said(ref.on_action("repeat")).endswith(f"Ann has three chips. {question} {MANY_HELP}")
    back = said(Referee.restore(ref.snapshot()).start())
    assert back.endswith(question) and "Bob, Cy" not in back
    assert said(ref.on_action("choose", "Ann")) == f"Ann cannot be chosen. Choose one of nineteen players. {MANY_HELP}"
    assert said(ref.on_action("status")).endswith(f"Ann must first choose whom to take two chips from. {MANY_HELP}")
    few = table("wild", players=["Ann", "Bob", "Cy"])
    few.on_roll(clear("W", ".", "."))
    assert said(few.on_action("choose", "Ann")) == "Ann cannot be chosen. Choose Bob or Cy."  # as before
