"""What the referee says: names, moves, chips left, for every kind of event."""

from lcr_pi.announce import announce
from lcr_pi.rules import Game, GameConfig, GameState, RollOff, Series, SeriesRules, roll


def say(events, players):
    return " ".join(announce(events, players))


PLAYERS = ("Ann", "Bob", "Cy", "Dee")


def test_roll_names_neighbours_counts_and_what_is_left():
    game = Game(GameConfig.create(PLAYERS))
    text = say(game.roll("L R R"), PLAYERS)
    assert text.startswith("Ann rolled L, R, R. Pass one chip to Bob on your left and two to Dee on your right.")
    assert "Ann has no chips left." in text and text.endswith("Bob, your turn: roll three dice.")


def test_dots_keep_chips_and_one_die():
    config = GameConfig.create(PLAYERS)
    s = GameState(config, (1, 3, 3, 3), 2, 0)
    text = say(roll(s, ".").events, PLAYERS)
    assert text.startswith("Ann rolled dot. Keep your chips. Ann has one chip left.")


def test_skips_and_the_winner_are_spoken():
    config = GameConfig.create(PLAYERS)
    s = GameState(config, (3, 0, 3, 3), 3, 0)
    assert "Bob has no chips and skips this turn." in say(roll(s, ". . .").events, PLAYERS)
    s = GameState(config, (1, 1, 0, 0), 10, 0)
    assert say(roll(s, "C").events, PLAYERS).endswith(
        "Bob is the last player with chips and wins the pot of eleven chips!"
    )


def test_players_skipped_in_a_row_are_said_in_one_sentence():
    # A big table late in a game: a sentence for each of nine players kept the next roller waiting.
    players = tuple(f"P{i}" for i in range(12))
    config = GameConfig.create(players)
    s = GameState(config, (1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 3), 10, 0)
    text = say(roll(s, ".").events, players)
    assert text.endswith("P1, P2, P3, P4, P5, P6, P7, P8 and P9 have no chips and skip this turn. "
                         "P10, your turn: roll three dice.")
    assert text.count("no chips") == 1


def test_wild_decision_names_each_choice_then_the_taking():
    game = Game(GameConfig.create(PLAYERS, variant="wild"))
    text = say(game.roll("W W ."), PLAYERS)
    assert "Two wilds! Ann, take two chips: both from one player, or one each from two. Choose from Bob, Cy or Dee." in text
    assert "Ann takes one chip from Bob and one chip from Dee." in say(game.choose("Ann", ["Bob", "Dee"]), PLAYERS)


def test_undo_roll_off_and_series_are_spoken():
    config = GameConfig.create(PLAYERS[:3])
    game = Game(config)
    game.roll("C . .")
    assert say([game.undo()], config.players) == "Undone: Ann's roll of C, dot, dot. Ann, it is your turn again."
    off = RollOff.start(config)
    events = list(off.opening_events())
    for who, faces in (("Ann", "6 6 6"), ("Bob", "1 2 3"), ("Cy", "4 4 4")):
        off, new = off.record(who, faces)
        events += new
    text = say(events, config.players)
    assert "Roll-off for who goes first: Ann, Bob and Cy" in text and text.endswith("Ann goes first, with eighteen.")
    series = Series.start(config, SeriesRules(first_to=1))
    _, events = series.record_game(2, first=0)
    assert say(events, config.players) == "Games won so far: Ann has none, Bob has none, Cy has one win. Cy wins the series, with one win in one game!"


def test_wilds_that_find_no_chips_to_take_are_said_in_the_plural_for_two():
    # Found by an audit: two W with nobody else holding chips (last chip wins) said "the wild do nothing".
    config = GameConfig.create(PLAYERS[:3], variant="wild+last-chip")
    s = GameState(config, (3, 0, 0), 6, 0)
    assert "No one else has chips, so the wilds do nothing." in say(roll(s, "W W .").events, PLAYERS[:3])
    assert "No one else has chips, so the wild does nothing." in say(roll(s, "W . .").events, PLAYERS[:3])


def test_three_wilds_that_take_the_pot_say_what_the_roller_holds_then():
    # Found by an audit: "Ann has three chips. Three wilds! Ann takes the pot of six chips." and no more,
    # so the table last heard that Ann held three; and an empty pot was "the pot of no chips".
    config = GameConfig.create(PLAYERS[:3], variant="wild")
    s = GameState(config, (3, 2, 1), 3, 0)
    assert "Ann has three chips. Three wilds! Ann takes the pot of three chips. Ann has six chips. Bob, your turn" in say(
        roll(s, "W W W").events, PLAYERS[:3])
    s = GameState(config, (3, 3, 3), 0, 0)
    assert "Three wilds! Ann takes the pot, but it is empty. Ann has three chips. Bob, your turn" in say(
        roll(s, "W W W").events, PLAYERS[:3])


def test_a_game_with_other_rules_than_the_box_says_them_as_it_begins():
    # Found by an audit: a Wild or last-chip game began with the same words as a classic one, so a
    # player who cannot read the settings did not know that a W robs or that one holder is no winner.
    def opening(variant):
        game = Game(GameConfig.create(PLAYERS[:3], variant=variant))
        return say(game.opening, PLAYERS[:3])

    assert opening("classic") == ("A new game of LCR: Ann, Bob and Cy, three chips each. Ann goes first. "
                                  "Ann, your turn: roll three dice.")
    assert opening("wild") == ("A new game of LCR: Ann, Bob and Cy, three chips each. Wild rules: each wild takes "
                               "a chip from another player, and three wilds take the pot. Ann goes first. "
                               "Ann, your turn: roll three dice.")
    assert "and three wilds win the game at once. Ann goes first." in opening("wild-win")
    assert opening("wild-win+last-chip").count("Wild rules") == 1
    assert ("three chips each. Last chip wins: the game goes on until a C puts the last chip in the centre, "
            "and that player wins. Ann goes first.") in opening("last-chip")


def test_three_wilds_that_win_at_once_say_the_pot_won_or_that_it_is_empty():
    config = GameConfig.create(PLAYERS[:3], variant="wild-win")
    assert say(roll(GameState(config, (3, 2, 1), 3, 0), "W W W").events, PLAYERS[:3]).endswith(
        "Three wilds! Ann wins the game at once, and the pot of three chips.")
    # Found by an audit: on the first roll it was "and the pot of no chips".
    assert say(roll(GameState(config, (3, 3, 3), 0, 0), "W W W").events, PLAYERS[:3]).endswith(
        "Three wilds! Ann wins the game at once (the pot is empty).")


def test_two_wilds_when_no_one_can_give_both_chips_ask_for_one_each_from_two():
    # Found by an audit (2026-12-04): "both from one player, or one each from two" was said when every
    # other player held one chip, offering a pick the buttons then refuse.
    from lcr_pi.referee import Referee, RollObservation, said

    config = GameConfig.create(PLAYERS, variant="wild")
    s = GameState(config, (3, 1, 1, 1), 6, 0)
    text = say(roll(s, "W W .").events, PLAYERS)
    assert "Two wilds! Ann, take one chip each from two players. Choose from Bob, Cy or Dee." in text
    assert "both from one player" not in text
    # Said so again when the choice comes back with no roll in its batch: a restart mid-decision.
    ref = Referee(config)
    ref.start()
    for faces in (". . .", "C C .", "C C .", "C C ."):  # Bob, Cy and Dee keep one chip each
        ref.on_roll(RollObservation(tuple(faces.split())))
    assert ref.game.state.chips == (3, 1, 1, 1)
    assert "take one chip each from two players" in said(ref.on_roll(RollObservation(("W", "W", "dot"))))
    again = Referee.restore(ref.snapshot())
    words = said(again.start())
    assert "Two wilds! Ann, take one chip each from two players." in words and "both from one" not in words
    one_holds_two = GameState(config, (3, 2, 1, 0), 6, 0)
    assert "both from one player, or one each from two" in say(roll(one_holds_two, "W W .").events, PLAYERS)


def test_a_wild_choice_among_seven_or_more_says_how_many_and_fewer_are_named_at_any_table():
    # Found by a review of a big table by ear: the question named every player who could be robbed, up to 19
    # at 20 players (46 words with how to choose), before the choose button named them again one at a time.
    big = tuple("Ann Bob Cy Di Ed Flo Gus Hal Ivy Jo".split())
    config = GameConfig.create(big, variant="wild")
    everyone = GameState(config, (3,) * 10, 0, 0)
    assert say(roll(everyone, "W . .").events, big).endswith(
        "Wild! Ann, choose one of nine players to take a chip from.")
    assert say(roll(everyone, "W W .").events, big).endswith(
        "Two wilds! Ann, take two chips: both from one player, or one each from two. Choose from nine players.")
    ones = GameState(config, (3,) + (1,) * 9, 18, 0)  # no one can give both chips: still said so
    assert say(roll(ones, "W W .").events, big).endswith(
        "Two wilds! Ann, take one chip each from two players. Choose from nine players.")
    seven = GameState(config, (3, 1, 1, 1, 1, 1, 1, 1, 0, 0), 20, 0)
    assert say(roll(seven, "W . .").events, big).endswith("choose one of seven players to take a chip from.")
    # Six or fewer are named at a big table too, as a table of seven names its six.
    six = GameState(config, (3, 1, 1, 1, 1, 1, 1, 0, 0, 0), 21, 0)
    assert say(roll(six, "W . .").events, big).endswith(
        "Wild! Ann, choose one player to take a chip from: Bob, Cy, Di, Ed, Flo or Gus.")
    small = GameConfig.create(big[:7], variant="wild")
    assert say(roll(GameState(small, (3,) * 7, 0, 0), "W . .").events, big[:7]).endswith(
        "Wild! Ann, choose one player to take a chip from: Bob, Cy, Di, Ed, Flo or Gus.")  # as before


def test_the_games_won_after_a_game_at_a_big_table_are_grouped_and_at_seven_said_one_by_one():
    # Found by an audit playing by ear: at 20 players the tally after each game of a series said every
    # player's wins, one by one: 65 words (22 s at 175 words a minute) between the winner and the prompt.
    big = tuple("Ann Bob Cy Di Ed Flo Gus Hal Ivy Jo Kim Lu Max Ned Oli Pam Quin Ros Sam Tess".split())
    series = Series.start(GameConfig.create(big), SeriesRules(first_to=3))
    series, events = series.record_game(19, first=0)
    assert say(events, big) == "Games won so far: Tess has one win; everyone else has none."  # 12 words, was 65
    series, events = series.record_game(2, first=1)
    series, events = series.record_game(19, first=2)
    assert say(events, big) == "Games won so far: Tess has two wins; Cy has one; everyone else has none."
    seven = big[:7]
    _, events = Series.start(GameConfig.create(seven), SeriesRules(first_to=3)).record_game(6, first=0)
    assert say(events, seven) == ("Games won so far: Ann has none, Bob has none, Cy has none, Di has none, "
                                  "Ed has none, Flo has none, Gus has one win.")


def roll_off_events(players, rolls):
    """The events of a roll-off among ``players``, opening first, as batches: one for the opening and one a roll,
    each with the round's scores before it (what the referee passes as ``roll_off_scores``)."""
    off = RollOff.start(GameConfig.create(players))
    batches = [(off.opening_events(), ())]
    for faces in rolls:
        scores = off.scores
        off, events = off.record(off.next_seat, faces)
        batches.append((events, scores))
    return batches


def roll_off_said(players, rolls):
    """What the referee says of each batch of :func:`roll_off_events` (its prompts left out)."""
    return [" ".join(announce(events, players, roll_off_scores=scores))
            for events, scores in roll_off_events(players, rolls)]


def test_a_big_tables_roll_off_says_how_many_roll_and_the_standing_when_a_roll_changes_it():
    # A roll-off at 8 players or more named every player before the first roll (33 words at 20), and each roll
    # said its score alone: who led was heard only from status. LCR dice score nought to three, so ties are many.
    big = tuple("Ann Bob Cy Di Ed Flo Gus Hal".split())
    rolls = (". . L", ". . .", ". . .", "L C R", ". . .", ". . .", ". L .", ". . .", ". . .", "L L L")
    said = roll_off_said(big, rolls)
    assert said == [
        "Roll-off for who goes first: eight players each roll three dice, in seat order from Ann; "
        "highest score starts.",
        "Ann scores two and leads.",
        "Bob scores three and leads.",
        "Cy scores three and ties with Bob.",
        "Di scores zero.",
        "Ed scores three and ties with Bob and Cy.",
        "Flo scores three and ties for the lead.",  # the leaders are named as they tie, and again below
        "Gus scores two.",
        "Hal scores three. A tie! Bob, Cy, Ed, Flo and Hal, roll again.",  # the round's end says the standing
        "Bob scores three and leads.",
        "Cy scores zero.",
    ]
    # The same in one batch: the scores are followed through it, and the tie-break begins afresh.
    assert say([e for events, _ in roll_off_events(big, rolls) for e in events], big) == " ".join(said)



# -- a big table's opening ----------------------------------------------------------------------------

BIG = tuple("Ann Bob Cy Di Ed Flo Gus Hal Ivy Jo Kim Lu Max Ned Oli Pam Quin Ros Sam Tess".split())


def test_a_big_tables_opening_says_the_players_by_number_word_for_word():
    # Found by an audit of a big table by ear: the opening named every player, 38 words (13 s) at 20 players
    # before the first roll, when the rest of a big table's speech was grouped.
    for n, count in ((8, "eight"), (12, "twelve"), (20, "twenty")):
        game = Game(GameConfig.create(BIG[:n]))
        assert say(game.opening, BIG[:n]) == (f"A new game of LCR: {count} players, three chips each. Ann goes first. "
                                              "Ann, your turn: roll three dice.")
    wild = Game(GameConfig.create(BIG, starting_chips=5, variant="wild-win"), first=3)
    assert say(wild.opening, BIG) == (
        "A new game of LCR: twenty players, five chips each. Wild rules: each wild takes a chip from another player, "
        "and three wilds win the game at once. Di goes first. Di, your turn: roll three dice.")


def test_a_big_tables_opening_says_why_its_first_player_starts_and_where_the_seat_order_is_heard():
    from lcr_pi.announce import game_started, seat_order
    from lcr_pi.rules.events import GameStarted

    first_seat = GameStarted(BIG, 3, "classic", 0)
    assert game_started(first_seat, seats_new=True) == [
        "A new game of LCR: twenty players, three chips each.", "Press status for the seat order.", "Ann goes first."]
    assert game_started(first_seat, because="next-seat") == [
        "A new game of LCR: twenty players, three chips each.", "Tess started the last game, so Ann goes first."]
    winner = GameStarted(BIG[:12], 4, "last-chip", 11)
    assert game_started(winner, because="winner") == [
        "A new game of LCR: twelve players, four chips each.",
        "Last chip wins: the game goes on until a C puts the last chip in the centre, and that player wins.",
        "Lu won the last game and goes first."]
    # After a roll-off its last words said who goes first, with the winning score: not said twice.
    assert game_started(GameStarted(BIG[:8], 3, "classic", 5), because="roll-off") == [
        "A new game of LCR: eight players, three chips each."]
    assert seat_order(BIG) == ("Seat order: Ann, Bob, Cy, Di, Ed, Flo, Gus, Hal, Ivy, Jo, Kim, Lu, Max, Ned, Oli, "
                               "Pam, Quin, Ros, Sam and Tess.")


def test_a_table_of_seven_opening_names_everyone_as_before_whatever_the_reason():
    from lcr_pi.announce import FIRST_BECAUSE, game_started
    from lcr_pi.rules.events import GameStarted

    seven = GameStarted(BIG[:7], 3, "wild", 2)
    before = ["A new game of LCR: Ann, Bob, Cy, Di, Ed, Flo and Gus, three chips each.",
              "Wild rules: each wild takes a chip from another player, and three wilds take the pot.", "Cy goes first."]
    assert announce([seven], BIG[:7]) == before
    for because in FIRST_BECAUSE:
        for seats_new in (False, True):
            assert game_started(seven, because=because, seats_new=seats_new) == before
