"""Turn rule events into the sentences the referee speaks. Pure: events in, strings out.

Players who cannot see the dice play by ear alone, so every sentence names people, says what moves
where, and says what the roller has left.

>>> from lcr_pi.rules import Game, GameConfig
>>> game = Game(GameConfig.create(["Ann", "Bob", "Cy", "Dee"]))
>>> print(" ".join(announce(game.opening, game.config.players)))
A new game of LCR: Ann, Bob, Cy and Dee, three chips each. Ann goes first. Ann, your turn: roll three dice.
>>> print(" ".join(announce(game.roll("L . C"), game.config.players)))
Ann rolled L, dot, C. Pass one chip to Bob on your left and one to the centre. Ann has one chip left. Bob, your turn: roll three dice.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from lcr_pi.rules import events as ev
from lcr_pi.rules.config import parse_variant

_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty"
).split()


def number(n: int) -> str:
    """Small numbers as words (they are clearer when spoken fast), larger ones as digits.

    >>> number(3), number(42)
    ('three', '42')
    """
    return _WORDS[n] if 0 <= n < len(_WORDS) else str(n)


#: From this many players (a table of 8 to 20) the referee says the table in groups rather than player by
#: player: status (:mod:`lcr_pi.referee`), the games won after each game of a series and at a restart
#: (:func:`games_won_words`), the roll-off as it stands, and the roll-off itself (:func:`roll_off_scored`,
#: :func:`roll_off_turn`), and a game's opening (:func:`game_started`). Said one by one, a table of 20 heard 79
#: words of games won after each game (27 s at 175 words a minute), status at a table of 12 took 74 words (25 s)
#: before whose turn it was, at 20 players 106 (36 s), a roll-off of 20 players 178 words (61 s), and a game's
#: opening 38 (13 s). Smaller tables are said player by player.
BIG_TABLE = 8

#: From this many players to choose from in a Wild decision (only a big table, :data:`BIG_TABLE`, has so many),
#: each name the choose button offers says where it is in the round ("name 3 of 12") and the help says that
#: holding choose steps back one name (:mod:`lcr_pi.referee`): stepping through up to 19 names by ear, a player
#: who overshot had to go round again, and nobody knew how far it was. The question says how many can be chosen
#: and the help that choose says the names one at a time, instead of naming them all first (at 20 players it
#: named 19, 46 words with how to choose, 16 s). Fewer, at any table, are named as at a table of 3 to 7.
MANY_TO_CHOOSE = 7


def games_won_words(players, wins, lead: str = "Games won") -> str:
    """A series' tally as a sentence: at a table of 3 to 7 each player's games won one by one; at a big
    table (:data:`BIG_TABLE`) grouped as status groups the chips, and "No games won yet." before any.

    >>> games_won_words(["Ann", "Bob", "Cy"], [0, 0, 1], "Games won so far")
    'Games won so far: Ann has none, Bob has none, Cy has one win.'
    >>> big = "Ann Bob Cy Di Ed Flo Gus Hal".split()
    >>> games_won_words(big, [0, 0, 1, 0, 0, 2, 0, 0])
    'Games won: Flo has two wins; Cy has one; everyone else has none.'
    >>> games_won_words(big, [0] * 8)
    'No games won yet.'
    """
    if len(players) < BIG_TABLE:
        return f"{lead}: {wins_tally(players, wins)}."
    if not any(wins):
        return "No games won yet."
    return f"{lead}: {grouped_counts(players, wins, games_won)}."


def wins_tally(players, wins) -> str:
    """Each player's games won, with "has" and "win" around the number (a name may end in one).

    >>> wins_tally(["Ann", "Player 2"], [1, 0])
    'Ann has one win, Player 2 has none'
    """
    return ", ".join(f"{p} has {games_won(w)}" for p, w in zip(players, wins))


def grouped_counts(players, counts, unit) -> str:
    """Players grouped by what they hold, for a big table's status: said one by one, 20 players' chips took
    80 words. The most first, none last; the biggest group of three or more is said last as "everyone
    else". Only the first group and "everyone else" say the unit; "has" or "have" keeps each number from
    running into a name (a name may end in one).

    >>> grouped_counts(["Ann", "Bob", "Cy", "Di", "Ed", "Flo"], [1, 3, 3, 0, 3, 5], chips)
    'Flo has five chips; Ann has one; Di has none; everyone else has three chips'
    >>> grouped_counts(["Ann", "Bob", "Cy", "Di"], [4, 4, 1, 0], chips)
    'Ann and Bob have four chips; Cy has one; Di has none'
    >>> grouped_counts(["Ann", "Bob", "Cy"], [3, 3, 3], chips)
    'Everyone has three chips'
    """
    groups: dict[int, list[str]] = {}
    for name, n in zip(players, counts):
        groups.setdefault(n, []).append(name)
    if len(groups) == 1:
        return f"Everyone has {unit(next(iter(groups)))}"
    order = sorted(groups, reverse=True)
    rest = max(order, key=lambda n: len(groups[n]))  # a tie goes to the group with more
    if len(groups[rest]) < 3:
        rest = None
    named = [n for n in order if n != rest]
    parts = [f"{join_names(groups[n])} {'has' if len(groups[n]) == 1 else 'have'} "
             f"{unit(n) if i == 0 else 'none' if n == 0 else number(n)}" for i, n in enumerate(named)]
    if rest is not None:
        parts.append(f"everyone else has {unit(rest)}")
    return "; ".join(parts)


def games_won(n: int) -> str:
    """
    >>> games_won(0), games_won(1), games_won(2)
    ('none', 'one win', 'two wins')
    """
    return "none" if n == 0 else number(n) + (" win" if n == 1 else " wins")


def series_opening(first_to: int | None, best_of: int | None) -> str:
    """What a series is played to, said as it begins (a player who cannot read the settings hears it).

    >>> series_opening(3, None), series_opening(None, 1)
    ('A new series: first to three wins.', 'A new series: best of one game.')
    """
    if first_to is not None:
        return f"A new series: first to {number(first_to)} win{'' if first_to == 1 else 's'}."
    return f"A new series: best of {number(best_of)} game{'' if best_of == 1 else 's'}."


def series_goes_on(series) -> str:
    """After a best of N's games with the top tied, why the series goes on; else "". Found by an audit:
    the table heard "Press confirm for the next game" after the last of the N games (and the page
    showed N played and no winner), with nothing to say that the series was not over, nor why."""
    rules, wins = series.rules, series.wins
    if series.is_over or rules.best_of is None or series.games < rules.best_of:
        return ""
    top = max(wins)
    tied = [name for name, won in zip(series.config.players, wins) if won == top]
    return (f"{join_names(tied)} are tied for the lead with {number(top)} win{'' if top == 1 else 's'} each, "
            "so the series goes on until one player leads alone.")


#: From this many players without an LED (a big table, more players than the LEDs wired), they are said by
#: their seats, first and last, not name by name: 20 players at the six LEDs of the wiring guide named 14.
MANY_WITHOUT_LEDS = 4


def without_leds(names, first_seat: int | None = None) -> str:
    """The players who have no LED, said so. They are the last seats (the LEDs light the first ones), so
    with ``first_seat`` (the first's seat, counted from 1) and :data:`MANY_WITHOUT_LEDS` or more of them,
    they are said by seat, first and last.

    >>> without_leds(["Di"]), without_leds(["Di", "Ed"])
    ('Di has no LED', 'Di and Ed have no LED')
    >>> without_leds([f"P{n}" for n in range(7, 21)], first_seat=7)
    'the 14 players in seats 7 (P7) to 20 (P20) have no LED'
    """
    names = list(names)
    if first_seat is not None and len(names) >= MANY_WITHOUT_LEDS:
        last = first_seat + len(names) - 1
        return f"the {len(names)} players in seats {first_seat} ({names[0]}) to {last} ({names[-1]}) have no LED"
    return f"{join_names(names, 'and')} {'has' if len(names) == 1 else 'have'} no LED"


def chips(n: int) -> str:
    """
    >>> chips(1), chips(0), chips(4)
    ('one chip', 'no chips', 'four chips')
    """
    if n == 0:
        return "no chips"
    return f"{number(n)} chip{'' if n == 1 else 's'}"


def dice(n: int) -> str:
    return f"{number(n)} {'die' if n == 1 else 'dice'}"


def join_names(names: Iterable[str], conjunction: str = "and") -> str:
    """
    >>> join_names(["Ann"]), join_names(["Ann", "Bob"]), join_names(["Ann", "Bob", "Cy"], "or")
    ('Ann', 'Ann and Bob', 'Ann, Bob or Cy')
    """
    names = list(names)
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} {conjunction} {names[-1]}"


def spoken_face(face: str) -> str:
    return "dot" if face in (".", "dot") else face


def spoken_faces(faces) -> str:
    """A roll's faces as said aloud.

    >>> spoken_faces(["L", ".", "C"])
    'L, dot, C'
    """
    return ", ".join(spoken_face(f) for f in faces)


def rules_words(variant: str) -> list[str]:
    """What a variant changes, said as a game begins: a player who cannot read the settings hears the
    rules played (found by an audit: a Wild or last-chip game began as a classic one did).

    >>> rules_words("classic"), rules_words("wild-win")
    ([], ['Wild rules: each wild takes a chip from another player, and three wilds win the game at once.'])
    >>> rules_words("wild+last-chip")[1]
    'Last chip wins: the game goes on until a C puts the last chip in the centre, and that player wins.'
    """
    flags = parse_variant(variant)
    words = []
    if "wild" in flags or "wild-win" in flags:
        three = "win the game at once" if "wild-win" in flags else "take the pot"
        words.append(f"Wild rules: each wild takes a chip from another player, and three wilds {three}.")
    if "last-chip" in flags:
        words.append("Last chip wins: the game goes on until a C puts the last chip in the centre, "
                     "and that player wins.")
    return words


def one_chip_each(take: int, eligible, held) -> bool:
    """Whether two W must take one chip each from two players: no one they may take from holds two.

    >>> one_chip_each(2, (1, 2), (3, 1, 1)), one_chip_each(2, (1, 2), (3, 2, 1)), one_chip_each(1, (1,), (3, 1))
    (True, False, False)
    """
    return take == 2 and bool(held) and all(held[s] < 2 for s in eligible)


def announce(events: Iterable[ev.Event], players: tuple[str, ...], chips_held: tuple[int, ...] = (),
             roll_off_scores: tuple[tuple[int, int], ...] = ()) -> list[str]:
    """Sentences for a batch of events, in order; ``players`` in seat order names the seats in moves.
    ``chips_held``: each seat's chips before the batch, when a batch without a roll needs them (a Wild
    choice said again). ``roll_off_scores``: the roll-off round's (seat, score) before the batch, for the
    standing a big table hears with a roll-off roll (:func:`roll_off_scored`)."""
    events = list(events)
    lines: list[str] = []
    held = chips_held  # the chips as the last roll left them, for what three W add to the roller's
    scores = tuple(roll_off_scores)  # the roll-off round's so far
    # Players skipped in a row are said in one sentence: late in a game at a big table a sentence for
    # each (six words) kept the next roller waiting, e.g. 18 s at 175 words a minute for nine players
    # out of twelve and 50 s at twenty, before "your turn" (found by an audit of a big table).
    skipped: list[str] = []
    for i, event in enumerate(events):
        if isinstance(event, ev.PlayerSkipped):
            skipped.append(event.player)
            continue
        if skipped:
            lines.append(_skipped(skipped))
            skipped = []
        if isinstance(event, ev.RollOffRolled):
            # The roll that ends a round is followed by who goes first or who tied, in the same batch.
            decides = i + 1 < len(events) and isinstance(events[i + 1], (ev.RollOffWon, ev.RollOffStarted))
            lines.append(roll_off_scored(event, players, scores, decides=decides))
            scores += ((event.seat, event.score),)
            continue
        if isinstance(event, ev.RollOffStarted):
            scores = ()
        lines.extend(_sentences(event, players, held))
        if isinstance(event, ev.RollResolved):
            held = event.chips
        elif isinstance(event, ev.PotTaken) and held:
            # Found by an audit: the roller was last said to hold what the roll left, not the pot added.
            lines.append(_holding(event.player, held[event.seat] + event.chips))
    if skipped:
        lines.append(_skipped(skipped))
    return lines


def _skipped(names: list[str]) -> str:
    """
    >>> _skipped(["Bob"]), _skipped(["Bob", "Cy", "Di"])
    ('Bob has no chips and skips this turn.', 'Bob, Cy and Di have no chips and skip this turn.')
    """
    if len(names) == 1:
        return f"{names[0]} has no chips and skips this turn."
    return f"{join_names(names)} have no chips and skip this turn."


def _sentences(e: ev.Event, players: tuple[str, ...], held: tuple[int, ...] = ()) -> list[str]:
    def name(seat: int) -> str:
        return players[seat]

    if isinstance(e, ev.GameStarted):
        return game_started(e)
    if isinstance(e, ev.TurnStarted):
        return [f"{e.player}, your turn: roll {dice(e.dice)}."]
    if isinstance(e, ev.PlayerSkipped):
        return [_skipped([e.player])]
    if isinstance(e, ev.RollResolved):
        out = [f"{e.player} rolled {spoken_faces(e.faces)}."]
        out.append(_moves_sentence(e, players))
        out.append(_holding(e.player, e.chips[e.seat], after_roll=True))
        return [s for s in out if s]
    if isinstance(e, ev.DecisionNeeded):
        return _wild_question(e, players, held)
    if isinstance(e, ev.ChipsTaken):
        taken = Counter(e.victims)
        parts = [f"{chips(n)} from {name(v)}" for v, n in taken.items()]
        return [f"{e.player} takes {join_names(parts)}.", _holding(e.player, e.chips[e.seat])]
    if isinstance(e, ev.WildsWasted):
        return [f"No one else has chips, so the {'wild does' if e.wilds == 1 else 'wilds do'} nothing."]
    if isinstance(e, ev.PotTaken):
        if e.chips == 0:
            return [f"Three wilds! {e.player} takes the pot, but it is empty."]
        return [f"Three wilds! {e.player} takes the pot of {chips(e.chips)}."]
    if isinstance(e, ev.GameWon):
        if e.reason == "three-wilds":
            pot = f", and the pot of {chips(e.pot)}" if e.pot else " (the pot is empty)"
            return [f"Three wilds! {e.player} wins the game at once{pot}."]
        if e.reason == "last-chip":
            return [f"{e.player} put the last chip in the centre and wins the pot of {chips(e.pot)}!"]
        return [f"{e.player} is the last player with chips and wins the pot of {chips(e.pot)}!"]
    if isinstance(e, ev.TurnUndone):
        rolled = spoken_faces(e.faces)
        return [f"Undone: {e.player}'s roll of {rolled}. {e.player}, it is your turn again."]
    if isinstance(e, ev.RollOffStarted):
        who = join_names(e.players)
        if e.round > 1:
            return [f"A tie! {who}, roll again."]  # a tie-break names only the tied, at any table
        if len(players) >= BIG_TABLE:
            # Said by number and the first to roll, not name by name (at 20 players that was 33 words, 11 s,
            # before the first roll): each roller is named as their roll comes.
            return [f"Roll-off for who goes first: {number(len(e.players))} players each roll three dice, "
                    f"in seat order from {e.players[0]}; highest score starts."]
        return [f"Roll-off for who goes first: {who}, each roll three dice, highest score starts."]
    if isinstance(e, ev.RollOffWon):
        return [f"{e.player} goes first, with {number(e.score)}."]
    if isinstance(e, ev.SeriesTally):
        return [games_won_words([name(s) for s in range(len(e.wins))], e.wins, "Games won so far")]
    if isinstance(e, ev.SeriesWon):
        wins = e.wins[e.seat]
        return [
            f"{e.player} wins the series, with {number(wins)} win{'' if wins == 1 else 's'} "
            f"in {number(e.games)} game{'' if e.games == 1 else 's'}!"
        ]
    return []


def _wild_question(e: ev.DecisionNeeded, players, held=()) -> list[str]:
    """The Wild choice's question: whom the roller may take chips from (``held``: each seat's chips, which
    tell whether two W must take one chip each). The referee follows it with how to choose. With
    :data:`MANY_TO_CHOOSE` or more to choose from (a big table) it says how many, as the choose button names
    them one at a time; fewer are named, as at a table of 3 to 7.

    >>> big = tuple("Ann Bob Cy Di Ed Flo Gus Hal".split())
    >>> _wild_question(ev.DecisionNeeded(0, "Ann", 1, (1, 2, 3, 4, 5, 6, 7)), big)
    ['Wild! Ann, choose one of seven players to take a chip from.']
    >>> print(_wild_question(ev.DecisionNeeded(0, "Ann", 2, (1, 2, 3, 4, 5, 6, 7)), big, (3,) * 8)[0])
    Two wilds! Ann, take two chips: both from one player, or one each from two. Choose from seven players.
    >>> _wild_question(ev.DecisionNeeded(0, "Ann", 1, (1, 5)), big)
    ['Wild! Ann, choose one player to take a chip from: Bob or Flo.']
    """
    many = number(len(e.eligible)) if len(e.eligible) >= MANY_TO_CHOOSE else ""
    choices = join_names([players[s] for s in e.eligible], "or")
    if e.take == 1:
        if many:
            return [f"Wild! {e.player}, choose one of {many} players to take a chip from."]
        return [f"Wild! {e.player}, choose one player to take a chip from: {choices}."]
    choose = f"Choose from {many} players." if many else f"Choose from {choices}."
    if one_chip_each(e.take, e.eligible, held):
        # No one can give both chips: "both from one player" would offer what the buttons then
        # refuse (found by an audit of the variants by ear).
        return [f"Two wilds! {e.player}, take one chip each from two players. {choose}"]
    return [f"Two wilds! {e.player}, take two chips: both from one player, or one each from two. {choose}"]


#: Why the first player of a game starts, as :func:`game_started` says it at a big table: the roll-off
#: won (said just before, with the winning score), or the series' rule for its next game.
FIRST_BECAUSE = ("", "roll-off", "winner", "next-seat")


def game_started(e: ev.GameStarted, *, because: str = "", seats_new: bool = False) -> list[str]:
    """A game's opening: the players, the chips each starts with, the rules if not the box's, who goes first.

    At a big table (:data:`BIG_TABLE`) the players are said by number, not name by name (at 20 players that
    was 20 of the opening's 38 words, 13 s before the first roll), and who goes first says why
    (``because``, one of :data:`FIRST_BECAUSE`): after a roll-off it is not said again, as the roll-off's
    last words said it with the winning score; in a series the last game's winner, or who started it.
    ``seats_new`` (the night's first opening) adds where the seat order is heard: status says it at a game's
    opening (:func:`seat_order`). Smaller tables hear every name, and nothing of
    ``because`` or ``seats_new``, as before.

    >>> big = tuple("Ann Bob Cy Di Ed Flo Gus Hal".split())
    >>> game_started(ev.GameStarted(big, 3, "classic", 0), seats_new=True)
    ['A new game of LCR: eight players, three chips each.', 'Press status for the seat order.', 'Ann goes first.']
    >>> game_started(ev.GameStarted(big, 3, "classic", 7), because="winner")
    ['A new game of LCR: eight players, three chips each.', 'Hal won the last game and goes first.']
    >>> game_started(ev.GameStarted(big, 3, "classic", 0), because="next-seat")[-1]
    'Hal started the last game, so Ann goes first.'
    >>> game_started(ev.GameStarted(big, 5, "classic", 2), because="roll-off")
    ['A new game of LCR: eight players, five chips each.']
    >>> game_started(ev.GameStarted(big[:3], 3, "classic", 2), because="roll-off", seats_new=True)
    ['A new game of LCR: Ann, Bob and Cy, three chips each.', 'Cy goes first.']
    """
    if because not in FIRST_BECAUSE:
        raise ValueError(f"because must be one of {FIRST_BECAUSE}, got {because!r}")
    players, first = e.players, e.players[e.first_seat]
    if len(players) < BIG_TABLE:
        return [f"A new game of LCR: {join_names(players)}, {chips(e.starting_chips)} each.",
                *rules_words(e.variant), f"{first} goes first."]
    words = [f"A new game of LCR: {number(len(players))} players, {chips(e.starting_chips)} each."]
    if seats_new:
        words.append("Press status for the seat order.")
    words += rules_words(e.variant)
    if because == "winner":
        words.append(f"{first} won the last game and goes first.")
    elif because == "next-seat":
        # The series' next-seat rule: the seat on the left of the last game's first player, who sits before.
        words.append(f"{players[e.first_seat - 1]} started the last game, so {first} goes first.")
    elif because != "roll-off":
        words.append(f"{first} goes first.")
    return words


def seat_order(players) -> str:
    """Every player in seat order, the order of play, for a big table's status at a game's opening and its
    help, as its opening does not name them.

    >>> seat_order(["Ann", "Bob", "Cy"])
    'Seat order: Ann, Bob and Cy.'
    """
    return f"Seat order: {join_names(players)}."


def roll_off_scored(e: ev.RollOffRolled, players, scores=(), *, decides: bool = False) -> str:
    """A roll-off roll's score, the roller's own fact. At a big table (:data:`BIG_TABLE`) it also says the
    standing when the roll changes it, from ``scores`` (the round's (seat, score) before it), so no one must
    keep 19 scores in mind to know what leads; a lower score says nothing more. Not with the roll that
    ``decides`` the round: who goes first, or who tied, is said next.

    >>> big = "Ann Bob Cy Di Ed Flo Gus Hal".split()
    >>> cy = ev.RollOffRolled(2, "Cy", ("6", "6", "2"), 14)
    >>> roll_off_scored(cy, big, ()), roll_off_scored(cy, big, ((0, 9), (1, 7)))
    ('Cy scores fourteen and leads.', 'Cy scores fourteen and leads.')
    >>> roll_off_scored(cy, big, ((0, 14), (1, 14))), roll_off_scored(cy, big, ((0, 9), (1, 16)))
    ('Cy scores fourteen and ties with Ann and Bob.', 'Cy scores fourteen.')
    >>> roll_off_scored(cy, big, ((0, 14), (1, 14), (3, 14)))
    'Cy scores fourteen and ties for the lead.'
    >>> roll_off_scored(cy, big, ((0, 9),), decides=True), roll_off_scored(cy, big[:7], ((0, 9),))
    ('Cy scores fourteen.', 'Cy scores fourteen.')
    """
    said = f"{e.player} scores {number(e.score)}"
    best = max((n for _, n in scores), default=-1)
    if len(players) < BIG_TABLE or decides or e.score < best:
        return f"{said}."
    if e.score > best:
        return f"{said} and leads."
    leaders = [players[s] for s, n in scores if n == best]
    if len(leaders) > 2:
        # Not named past two: with LCR dice (a score of nought to three) a dozen players of twenty may tie,
        # and each roll that joined them would name all the others again. The roll that ends the round
        # names them all, as they roll again.
        return f"{said} and ties for the lead."
    return f"{said} and ties with {join_names(leaders)}."


def roll_off_turn(player: str, n_players: int, *, first_of_round: bool = True) -> str:
    """Whose roll-off roll it is. At a big table (:data:`BIG_TABLE`) the three dice are said to a round's
    first roller, after the opening said that everyone rolls three; the others are named: said to each,
    they were 38 of a 20-player roll-off's words (13 s). The number never changes in a roll-off, and a
    roll of another number is asked again with it ("Bob rolls three dice, but I see one").

    >>> roll_off_turn("Bob", 7, first_of_round=False), roll_off_turn("Bob", 8, first_of_round=False)
    ('Bob, roll three dice.', 'Bob, roll.')
    >>> roll_off_turn("Ann", 20)
    'Ann, roll three dice.'
    """
    if first_of_round or n_players < BIG_TABLE:
        return f"{player}, roll three dice."
    return f"{player}, roll."


def capitalised(text: str) -> str:
    """``text`` with a capital first letter, the rest as it is (a name in it keeps its own case).

    >>> capitalised("the 5 players in seats 4 (Di) to 8 (Hal) have no LED"), capitalised("")
    ('The 5 players in seats 4 (Di) to 8 (Hal) have no LED', '')
    """
    return text[:1].upper() + text[1:]


def as_sentence(text: str) -> str:
    """A message (an error's words) said as a sentence: a capital first, a full stop last.

    >>> as_sentence("the command line names the players"), as_sentence("Done!"), as_sentence("  ")
    ('The command line names the players.', 'Done!', '')
    """
    text = text.strip()
    if not text:
        return ""
    text = capitalised(text)
    return text if text.endswith((".", "!", "?")) else text + "."


def _moves_sentence(e: ev.RollResolved, players) -> str:
    if not e.moves:
        # With a W the Wild sentence that follows says what happens; otherwise every die was a dot.
        return "Keep your chips." if e.faces and "W" not in e.faces else ""
    to_left = sum(1 for m in e.moves if m.face == "L")
    to_right = sum(1 for m in e.moves if m.face == "R")
    to_pot = sum(1 for m in e.moves if m.face == "C")
    parts = []
    left_seat = next((m.receiver for m in e.moves if m.face == "L"), None)
    right_seat = next((m.receiver for m in e.moves if m.face == "R"), None)
    # Say the first kind of move with "chip(s)", the others with a bare number, as people do.
    for count, where in (
        (to_left, f"to {players[left_seat]} on your left" if left_seat is not None else ""),
        (to_right, f"to {players[right_seat]} on your right" if right_seat is not None else ""),
        (to_pot, "to the centre"),
    ):
        if count:
            parts.append(f"{chips(count) if not parts else number(count)} {where}")
    return f"Pass {join_names(parts)}."


def _holding(player: str, n: int, *, after_roll: bool = False) -> str:
    if n == 0:
        return f"{player} has no chips left."
    if after_roll and n == 1:
        return f"{player} has one chip left."
    return f"{player} has {chips(n)}."
