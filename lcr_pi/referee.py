"""The referee's decisions: what a settled roll or a button press means at this moment of the night.

This is the functional core of ``lcr-pi run``. It holds the game (and series) and answers every input
with a list of *outputs* — things to say, LED cues, a checkpoint to write — that the shell
(:mod:`lcr_pi.table`) carries out. No clock, camera, GPIO or file is touched here, so whole nights are
tested exactly.

The rule it lives by: never announce a wrong roll as a fact. A read the reader is unsure of, the wrong
number of dice or a cocked die ends in a spoken request, and no chip moves until it is settled.

>>> ref = Referee(GameConfig.create(["Ann", "Bob", "Cy"]))
>>> said(ref.start())
'A new game of LCR: Ann, Bob and Cy, three chips each. Ann goes first. Ann, your turn: roll three dice.'
>>> said(ref.on_roll(RollObservation(("L", "dot", "C"))))
'Ann rolled L, dot, C. Pass one chip to Bob on your left and one to the centre. Ann has one chip left. Bob, your turn: roll three dice.'
>>> said(ref.on_roll(RollObservation(("L", "C"))))
'Bob rolls three dice, but I see two. Please roll all three dice again.'
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

from lcr_pi.announce import (BIG_TABLE, MANY_TO_CHOOSE, announce, as_sentence, capitalised, chips, dice,
                             game_started, games_won_words, grouped_counts, join_names, number, one_chip_each,
                             roll_off_turn, seat_order, series_goes_on, series_opening, spoken_faces)
from lcr_pi.errors import UserError
from lcr_pi.rules import Game, GameConfig, RollOff, Series, SeriesRules
from lcr_pi.rules import events as ev
from lcr_pi.rules.faces import ONE_PIP, Face, parse_face, parse_faces
from lcr_pi.rules.rolloff import ROLL_OFF_DICE

TABLE_FORMAT = "lcr-pi-table"
TABLE_VERSION = 1

#: The most players that can be named at the table: the remembered setup (setup.json) holds up to 20,
#: as the voice setup and the scoreboard page offer, and a pulled plug must find them there.
MOST_PLAYERS_NAMED = 20

#: What an unsure reading whose every die shows one pip or dot says while the night's kind of dice is
#: not known (:func:`lcr_pi.camera_dice.one_pip_unknown`): in a game a one may be a W and a dot keeps
#: its chip. In a roll-off both score one, and confirm takes no roll-off roll, so it is left unsaid there.
ONE_PIP_QUESTION = ("Every die shows one pip or dot, and I do not know yet whether you play with ordinary dice, "
                    "where a one is a W, or with Wild dice, where a dot keeps its chip. With Wild dice, roll again; "
                    "with ordinary dice, press confirm.")


# -- inputs ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RollObservation:
    """What a dice source saw when the dice came to rest.

    ``faces`` is the best reading of each die's top face; ``verdict`` is the reader's word on it:
    "clear", "unsure" (``message`` says which die), "cocked", "obstructed" or "no_dice". Typed rolls are
    clear by definition: a person read them. ``doubtful`` lists the indices (into ``faces``) of the
    dice the reader doubts, the least believable first: when it sees more dice than were rolled and
    the surplus is among them, the referee can offer the rest as its guess. ``could_be`` gives, per
    die, the faces the reader is sure it shows one of when its only doubt is which (empty for a die
    in any other doubt, or when not known): a doubted die whose faces there all move chips alike
    settles the move (:meth:`Referee.on_roll`).
    """

    faces: tuple[str, ...]
    verdict: str = "clear"
    message: str = ""
    source: str = "camera"
    evidence: Any = field(default=None, compare=False, repr=False)
    doubtful: tuple[int, ...] = ()
    could_be: tuple[tuple[str, ...], ...] = ()


def _face_doubts(obs: RollObservation) -> list[tuple[int, tuple[str, ...]]] | None:
    """``(index, faces it may show)`` for each die an unsure reading doubts, when its only doubt is
    which of two or more faces each shows; None when the reading is unsure for another reason: no die
    doubted (something on the tray unread), no faces known for a die, or a doubted die with one face
    as sure as a sure face (doubted by a later step than its face: a side face beside a taught die).

    >>> _face_doubts(RollObservation(("2", "5"), "unsure", doubtful=(0,), could_be=(("2", "3"), ("5",))))
    [(0, ('2', '3'))]
    >>> _face_doubts(RollObservation(("2", "5"), "unsure", doubtful=(1,), could_be=(("2", "3"), ("5",)))) is None
    True
    """
    if not obs.doubtful or len(obs.could_be) != len(obs.faces):
        return None
    if not all(0 <= i < len(obs.faces) and len(obs.could_be[i]) >= 2 for i in obs.doubtful):
        return None
    return [(i, obs.could_be[i]) for i in obs.doubtful]


# -- outputs ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Say:
    text: str


@dataclass(frozen=True)
class Prompt(Say):
    """Words that ask the roller of a W to choose: the Wild choice's explanation and reminder, and each
    name the choose button offers. The next press of choose makes them stale (the table drops those
    still waiting to be said, and cuts one being said), so the name a player hears last is the one
    confirm takes; the roll's words around them are all said."""


@dataclass(frozen=True)
class Cue:
    """A short sound: "left", "centre", "right", "win" or "attention"."""

    sound: str


@dataclass(frozen=True)
class ShowTurn:
    seat: int


@dataclass(frozen=True)
class ShowMoves:
    moves: tuple[ev.ChipMove, ...]
    next_seat: int | None


@dataclass(frozen=True)
class Celebrate:
    seat: int


@dataclass(frozen=True)
class Attention:
    pass


@dataclass(frozen=True)
class Checkpoint:
    """Save the table now; ``record`` goes to the game log."""

    record: dict


@dataclass(frozen=True)
class NewPlayers:
    """The table's players were changed (names in seat order): the lights take their seats, and the names
    are remembered for the next power-on, so that the saved game is resumed with them."""

    names: tuple[str, ...]


@dataclass(frozen=True)
class KeepEvidence:
    """Keep this read roll's frame (with the reader's overlay) as evidence."""

    observation: RollObservation
    label: str


def said(outputs) -> str:
    """The words of a batch of outputs, as one string (for tests and the terminal)."""
    return " ".join(o.text for o in outputs if isinstance(o, Say))


_FACE_CUES = {"L": "left", "C": "centre", "R": "right"}


# -- the referee -----------------------------------------------------------------------------------


class Referee:
    """One table's night: games, an optional series, roll-offs, corrections.

    Phases: ``roll_off`` (rolls decide who starts), ``await_roll``, ``confirm_read`` (an unsure read
    waits for a button or a re-roll), ``await_decision`` (Wild: whom to rob), ``game_over``.
    """

    def __init__(self, config: GameConfig, *, series_rules: SeriesRules | None = None, first_player: str = "",
                 odds=None):
        """``odds(state)`` (optional) gives win chances by seat for the status report; it is passed in
        rather than imported so the referee stays deterministic in tests."""
        self.config = config
        self.odds = odds
        self.series_rules = series_rules
        self.series = Series.start(config, series_rules) if series_rules else None
        # A series begun and not yet said: its first game (or roll-off) says what it is played to.
        self._series_unsaid = self.series is not None
        # The night's first game opening is still to come: at a big table it says where the seat order is heard,
        # as it no longer names everyone (see game_started). New players are named in seat order as they sit.
        self._seats_unsaid = True
        self.first_player = first_player
        self.game: Game | None = None
        self.phase = "roll_off"
        self.roll_off: RollOff | None = None
        self._unsure: RollObservation | None = None
        # Counts the guesses unsure reads offered (not saved: a restart offers none), so that a press of
        # confirm can name the one it was for (:attr:`offer_number`).
        self._offers = 0
        self._choice_index: int | None = None
        self._cycled = False  # the choose button has named a candidate since the decision began
        self._picked: list[int] = []
        self._last_words: list[Say] = []  # what repeat says again, as it was said (prompts as prompts)
        self._series_before_win: Series | None = None
        # The roll-off before each of its rolls, so that undo can take a misread roll-off roll back,
        # also the one that decided who starts, until that game's first turn is rolled. Not saved:
        # after a restart a roll-off simply starts again.
        self._roll_offs_before: list[RollOff] = []
        # The game a long press (new_game) ended, with its series: undo brings it back. Not saved.
        self._before_new_game: tuple | None = None
        self.turn_label = 0  # counts read rolls, names evidence frames
        self._restored_without_game = False  # saved in a roll-off: start() welcomes the table back

    # -- starting -------------------------------------------------------------------------------

    def start(self) -> list:
        """The first words of the night (or of a resumed game)."""
        if self.game is not None:
            return self._resume_words()
        begun = self._begin_game(self._first_seat_for_new_game())
        if not self._restored_without_game:
            return begun
        # Saved in a roll-off (a roll-off roll was taken back), which starts again: the table is told
        # it was resumed and, in a series, the tally (found by an audit: after a power cut it heard a
        # roll-off begin as at a new night, and nothing of the series in play).
        self._restored_without_game = False
        words = ["Welcome back. The roll-off starts again from the first roll." if self.phase == "roll_off"
                 else "Welcome back."]
        if self.series is not None and self.series.games > 0:
            words.append(games_won_words(self.config.players, self.series.wins, "Games won so far"))
        welcome = [Say(line) for line in words]
        self._last_words = welcome + self._last_words
        return welcome + begun

    def _series_in_play(self) -> bool:
        """A series with a game played and not won: its rule says who starts its next game."""
        return self.series is not None and self.series.games > 0 and not self.series.is_over

    def _first_seat_for_new_game(self) -> int | None:
        if self._series_in_play():
            return self.series.next_first()
        first = self.first_player.strip()
        if first == "roll-off":
            return None
        return self.config.seat_of(first) if first else 0

    def _begin_game(self, first: int | None, *, after_roll_off: bool = False) -> list:
        self._clear_pending()
        self._series_before_win = None
        if not after_roll_off:
            self._before_new_game = None  # a game begun otherwise (confirm at game over) ends that chance
            self._roll_offs_before = []
        # Found by an audit: nothing said a series was played, nor to what, nor (after "Press confirm for
        # a new series") that a new one had begun.
        series_words = []
        if self._series_unsaid and self.series is not None:
            series_words = [series_opening(self.series.rules.first_to, self.series.rules.best_of)]
        self._series_unsaid = False
        if first is None:
            self.phase = "roll_off"
            self.game = None
            self.roll_off = RollOff.start(self.config)
            out = self._speak(series_words + announce(self.roll_off.opening_events(), self.config.players))
            out += [ShowTurn(self.roll_off.next_seat)]
            # Repeat says the roll-off's opening too, not only whose roll it is (found by an audit:
            # repeat after the opening said just "Ann, roll three dice").
            return out + self._speak([roll_off_turn(self.roll_off.next_player, self.config.n_players)], extend=True)
        self.roll_off = None
        self.game = Game(self.config, first=first)
        self.phase = "await_roll"
        # Why the first player starts, said at a big table: the roll-off won, or the series' rule (also when a
        # long press starts its game over, with the same first player).
        because = "roll-off" if after_roll_off else ""
        if not after_roll_off and self._series_in_play() and first == self.series.next_first():
            because = self.series.rules.next_starter
        started, *turn = self.game.opening
        opening = game_started(started, because=because, seats_new=self._seats_unsaid)
        self._seats_unsaid = False
        # After the roll-off's deciding roll, repeat says that roll's score and who won it before the
        # game's opening (found by an audit: it said the opening alone).
        out = self._speak(series_words + opening + announce(turn, self.config.players), extend=after_roll_off)
        out.append(ShowTurn(first))
        out.append(self._checkpoint("game_started"))
        return out

    def _resume_words(self) -> list:
        state = self.game.state
        # A game that was won does not go on (found by an audit: after a plug pulled between a series'
        # games the table heard that it did, then who had won it).
        words = ["Welcome back. The last game was won before it stopped." if state.is_over
                 else "Welcome back. The game goes on where it stopped."]
        # The game is saved before its roll is announced, so a plug pulled during the announcement
        # brings back a roll the table may not have heard (found by an audit: nothing said it).
        last = next((e for e in reversed(self.game.events) if isinstance(e, ev.RollResolved)), None)
        if last is not None:
            words.append(f"The last roll I counted was {last.player}'s: {spoken_faces(last.faces)}.")
        words += self._status_words()
        if self.phase == "await_decision" and self._picked:
            # The first of two chips was picked before it stopped: the status's reminder says that pick and
            # asks for the second, as after the pick, not the whole question again (found by a review: a
            # power cut between the two picks lost the first, and the table heard "Choose the second" and
            # then the roll's question anew). The reminder ends the status words; it is a prompt, as it is after
            # the pick, which the next press of choose makes stale.
            *words, reminder = words
            return self._speak(words) + self._speak([reminder], extend=True, prompt=True) + [ShowTurn(state.current)]
        out = self._speak(words)
        if self.phase == "await_decision":
            out += self._speak(self._decision_question(), keep=True, prompt=True)
        out.append(ShowTurn(state.current))
        return out

    # -- rolls ------------------------------------------------------------------------------------

    def on_roll(self, obs: RollObservation) -> list:
        """The dice came to rest (or a roll was typed)."""
        if obs.verdict in ("no_dice", "obstructed"):
            return []  # an empty tray (the dice picked up after a win, too), or a hand still in it: nothing to call
        if self.phase == "roll_off":
            return self._roll_off_roll(obs)
        if self.phase == "game_over":
            return self._speak([self._game_over_prompt()], keep=False)
        if self.phase == "await_decision":
            return self._speak([self._decision_reminder()], keep=False, prompt=True)
        if self.phase == "confirm_read":
            # The dice were thrown again since a guess was offered: the guess no longer describes
            # the tray, whatever this roll turns out to be (a new guess is offered if it is unsure).
            self._unsure = None
            self.phase = "await_roll"
        state = self.game.state
        player = state.current_player
        expected = state.dice_to_roll
        if len(obs.faces) > expected and obs.verdict in ("unsure", "cocked"):
            obs = self._without_doubtful_surplus(obs, player, expected)
        if len(obs.faces) != expected:
            return [Attention()] + self._speak([self._wrong_count(player, expected, len(obs.faces))])
        obs = self.taken_as(obs)
        try:
            parse_faces(obs.faces, wild_pip=self.config.effective_wild_pip)
        except UserError as exc:
            if obs.verdict != "clear":
                # A die the reader doubts and could not name (a taught reader's "?": a die on edge, half
                # hidden): its own words say where, not a parse error (found by an audit). No guess can
                # be confirmed: the dice are thrown again.
                reason = obs.message or "I am not sure of the dice"
                return [Attention()] + self._speak([f"{as_sentence(reason)} {player}, please roll again."])
            return [Attention()] + self._speak([f"I could not read that roll ({exc}). {player}, please roll again."])
        if "W" in obs.faces and not self.config.wild:
            if obs.verdict != "clear":
                # A W in a reading the reader doubts is no fact to tell the table (found by an audit:
                # ordinary dice, read unsure with finds off the dice, were said to show a W); its
                # guess cannot be confirmed either, so the dice are thrown again.
                reason = obs.message or "I am not sure of the dice"
                return [Attention()] + self._speak([f"{as_sentence(reason)} {player}, please roll again."])
            return [Attention()] + self._speak(
                [f"I see a W face, but this game is not played with Wild dice. {player}, please roll again."])
        if obs.verdict != "clear":
            # Unsure, or a die that may be leaning (most dice the reader calls cocked lie flat): a
            # new roll settles it, or someone who can see the dice confirms the reader's best guess.
            self._unsure = obs
            self._offers += 1
            self.phase = "confirm_read"
            cocked = obs.verdict == "cocked"
            reason = obs.message or ("a die may be leaning, so it cannot be read" if cocked else "I am not sure of the dice")
            return [Attention()] + self._speak([
                f"{as_sentence(reason)} {player}, please roll again. Or, if the dice {self._guess_words()}, press confirm."
            ], keep=True, prompt=True)  # a prompt: the next throw makes its guess stale (Table.roll_seen)
        return self._apply_roll(obs)

    def _apply_roll(self, obs: RollObservation) -> list:
        self.turn_label += 1
        out: list = []
        if obs.evidence is not None:
            out.append(KeepEvidence(obs, f"{self.turn_label:06d}"))
        events = self.game.roll(obs.faces)
        self.phase = "await_roll"
        self._unsure = None
        out += self._after_events(events, record={"roll": list(obs.faces), "source": obs.source})
        return out

    def _after_events(self, events, *, record: dict) -> list:
        out: list = []
        for e in events:
            if isinstance(e, ev.RollResolved):
                out += [Cue(_FACE_CUES[f]) for f in e.faces if f in _FACE_CUES]
        decision = isinstance(events[-1], ev.DecisionNeeded)
        # The roll's words are said whatever is pressed; the Wild choice's explanation is a prompt, which
        # the first press of choose makes stale.
        out += self._speak(announce(events[:-1] if decision else events, self.config.players))
        state = self.game.state
        moves = tuple(m for e in events if isinstance(e, (ev.RollResolved, ev.ChipsTaken)) for m in e.moves)
        won = next((e for e in events if isinstance(e, ev.GameWon)), None)
        if decision:
            self.phase = "await_decision"
            self._choice_index, self._cycled = None, False
            self._picked = []
            out += self._speak(announce(events[-1:], self.config.players, state.chips) + [self._choice_help()],
                               extend=True, prompt=True)
            out.append(ShowMoves(moves, None))
        elif won is not None:
            out.append(ShowMoves(moves, None))
            out += self._game_won(won)
        else:
            out.append(ShowMoves(moves, state.current))
        out.append(self._checkpoint("turn", **record))
        return out

    def _game_won(self, won: ev.GameWon) -> list:
        self.phase = "game_over"
        out: list = [Cue("win"), Celebrate(won.seat)]
        if self.series is not None:
            self._series_before_win = self.series
            self.series, events = self.series.record_game(won.seat, self.game.state.first)
            out += self._speak(announce(events, self.config.players) + [series_goes_on(self.series)], extend=True)
        out += self._speak([self._game_over_prompt()], extend=True)
        return out

    def _game_over_prompt(self) -> str:
        if self.series is not None and self.series.is_over:
            return "Press confirm for a new series." if self.series_rules else "Press confirm for a new game."
        if self.series is not None:
            return "Press confirm for the next game."
        return "Press confirm for a new game."

    def confirm_too_soon(self) -> str:
        """What a press of confirm for the guess offered that came before its words could be heard is told
        (the table times it: ``Table(confirm_reaction=...)``). Found by an audit playing by ear: such a press
        was not taken and nothing was said, so a blind player could not tell whether the button worked."""
        return f"Confirm came too soon: press it again if the dice {self._guess_words()}."

    def _guess_words(self) -> str:
        """The guess offered for an unsure read, as a condition: "show L, dot, C" ("lie flat and show" for a
        die that may be leaning)."""
        flat = "lie flat and " if self._unsure.verdict == "cocked" else ""
        return f"{flat}show {spoken_faces(self._unsure.faces)}"

    @property
    def offered_guess(self) -> tuple[str, ...] | None:
        """The faces an unsure read offered for a press of confirm, while that offer stands; else None."""
        return self._unsure.faces if self.phase == "confirm_read" and self._unsure is not None else None

    @property
    def offer_number(self) -> int | None:
        """Which guess is offered now (the guesses offered are numbered from 1, a new one for each unsure
        read, even of the same faces); None while none is. A press on the scoreboard page names the one it
        showed, and is taken only for the one offered now (:class:`lcr_pi.table.SeenOnPage`)."""
        return self._offers if self.offered_guess is not None else None

    @property
    def decision_picks(self) -> tuple[int, ...]:
        """The seats already chosen in a Wild decision of two chips (the first pick); else empty."""
        return tuple(self._picked) if self.phase == "await_decision" else ()

    @staticmethod
    def _without_doubtful_surplus(obs: RollObservation, player: str, expected: int) -> RollObservation:
        """An unsure reading of more dice than were rolled, whose surplus the reader doubts most (a side
        face, a chip or a shadow taken for a die), as an unsure reading of the rolled number of dice:
        its guess can be confirmed by someone who sees the dice, instead of asking for a new roll.
        Unchanged when the surplus is not among the doubtful dice (then more dice were rolled).

        A "cocked" verdict stays (the die that may lean may be one of those kept), so the guess is
        offered for dice that lie flat.

        >>> seen = RollObservation(("L", "dot", "C", "R"), "unsure", doubtful=(3, 1))
        >>> trimmed = Referee._without_doubtful_surplus(seen, "Ann", 3)
        >>> trimmed.faces, trimmed.verdict, trimmed.doubtful
        (('L', 'dot', 'C'), 'unsure', (1,))
        >>> trimmed.message
        'I see four things where Ann rolled three dice, and one of them may be no die'
        >>> Referee._without_doubtful_surplus(seen, "Ann", 1) is seen   # three surplus, two doubted
        True
        >>> Referee._without_doubtful_surplus(replace(seen, verdict="cocked"), "Ann", 3).message
        'I see four things where Ann rolled three dice, one of them may be no die, and a die may be leaning'
        """
        surplus = len(obs.faces) - expected
        if len(obs.doubtful) < surplus:
            return obs
        dropped = set(obs.doubtful[:surplus])
        faces = tuple(f for i, f in enumerate(obs.faces) if i not in dropped)
        kept = [i for i in range(len(obs.faces)) if i not in dropped]
        seen = f"I see {number(len(obs.faces))} things where {player} rolled {dice(expected)}"
        no_die = f"{number(surplus)} of them may be no die"
        message = (f"{seen}, {no_die}, and a die may be leaning" if obs.verdict == "cocked" else f"{seen}, and {no_die}")
        # could_be is dropped: with something there that may be no die, a person confirms the roll.
        return replace(obs, faces=faces, message=message, could_be=(),
                       doubtful=tuple(kept.index(i) for i in obs.doubtful if i in kept))

    def counted_as(self, face: str) -> str:
        """A read face as the rules count it now: faces counted alike need nobody to tell them apart.
        In a game a face counts by the chips it moves (with ordinary dice 1, 2 and 3 all keep the chip);
        in a roll-off by its score, where the pips are added up, so a 2 is not a 3, but a pip one and a
        dot are the same single pip and both score one (:data:`~lcr_pi.rules.faces.ONE_PIP`; see
        :class:`lcr_pi.camera_dice.WildGameDice`). A face the game's rules do not know raises
        :class:`~lcr_pi.errors.UserError`.

        >>> from lcr_pi.rules.config import GameConfig
        >>> players = GameConfig.create(["Ann", "Bob", "Cy"])
        >>> in_a_game, in_a_roll_off = Referee(players), Referee(players, first_player="roll-off")
        >>> _, _ = in_a_game.start(), in_a_roll_off.start()
        >>> [in_a_game.counted_as(f) for f in ("2", "3", "dot", "4")]
        ['dot', 'dot', 'dot', 'L']
        >>> [in_a_roll_off.counted_as(f) for f in ("2", "3", "1", "dot")]
        ['2', '3', 'dot', 'dot']
        """
        if self.phase == "roll_off":
            return Face.DOT.value if face in ONE_PIP else face
        return parse_face(face, wild_pip=self.config.effective_wild_pip).value

    def taken_as(self, obs: RollObservation) -> RollObservation:
        """The reading as the referee takes it now: an unsure one as clear when every die it doubts is
        doubted only between faces counted alike (:meth:`counted_as`), else as it is. In a game such a
        die is named by its move (a 2 or a 3 of ordinary dice as a dot); in a roll-off it keeps the
        reader's face, whose kind (a pip one among pips, a dot among letters) the score is counted by.
        Also for a pretend player (the demo) who must know whether a press of confirm is wanted.

        >>> from lcr_pi.rules.config import GameConfig
        >>> players = GameConfig.create(["Ann", "Bob", "Cy"])
        >>> in_a_game, in_a_roll_off = Referee(players), Referee(players, first_player="roll-off")
        >>> _, _ = in_a_game.start(), in_a_roll_off.start()
        >>> seen = RollObservation(("2", "5", "L"), "unsure", doubtful=(0,), could_be=(("2", "3"), ("5",), ("L",)))
        >>> in_a_game.taken_as(seen).faces, in_a_game.taken_as(seen).verdict
        (('dot', '5', 'L'), 'clear')
        >>> in_a_game.taken_as(RollObservation(("3", "5"), "unsure", doubtful=(0,), could_be=(("3", "4"), ()))).verdict
        'unsure'
        >>> in_a_roll_off.taken_as(seen).verdict
        'unsure'
        >>> ones = RollObservation(("1", "1", "5"), "unsure", doubtful=(0, 1), could_be=(("1", "dot"),) * 2 + (("5",),))
        >>> in_a_roll_off.taken_as(ones).faces, in_a_roll_off.taken_as(ones).verdict
        (('1', '1', '5'), 'clear')
        """
        doubts = _face_doubts(obs) if obs.verdict == "unsure" else None
        if doubts is None:
            return obs
        faces = list(obs.faces)
        for i, could_be in doubts:
            try:
                counted = {self.counted_as(f) for f in could_be}
            except UserError:
                return obs
            if len(counted) != 1:
                return obs
            if self.phase != "roll_off":
                faces[i] = counted.pop()
        return replace(obs, faces=tuple(faces), verdict="clear", message="", doubtful=())

    def _wrong_count(self, player: str, expected: int, seen: int) -> str:
        if seen > expected:
            extra = seen - expected
            return (f"{player} rolls {dice(expected)}, but I see {number(seen)}. "
                    f"Please take {number(extra)} {'die' if extra == 1 else 'dice'} out and roll {self._all(expected)} again.")
        return (f"{player} rolls {dice(expected)}, but I see {number(seen) if seen else 'none'}. "
                f"Please roll {self._all(expected)} again.")

    @staticmethod
    def _all(n: int) -> str:
        return {1: "the die", 2: "both dice"}.get(n, f"all {number(n)} dice")

    # -- roll-off ---------------------------------------------------------------------------------

    def _roll_off_roll(self, obs: RollObservation) -> list:
        if obs.verdict in ("no_dice", "obstructed"):
            return []
        player = self.roll_off.next_player
        # The number of dice is checked first, as in a game (found by an audit: a chip read as a
        # doubted fourth die was said as the reader's doubt of "the die at the right", throw after throw,
        # and never as a thing too many on the tray).
        if len(obs.faces) > ROLL_OFF_DICE and obs.verdict in ("unsure", "cocked"):
            obs = self._without_doubtful_surplus(obs, player, ROLL_OFF_DICE)
        if len(obs.faces) != ROLL_OFF_DICE:
            return [Attention()] + self._speak([self._wrong_count(player, ROLL_OFF_DICE, len(obs.faces))])
        obs = self.taken_as(obs)
        if obs.verdict != "clear":
            # Only the reader's other doubt is said: the question of ones and dots asks for a press of
            # confirm that a roll-off does not take ("Nothing to confirm"; found by an audit).
            reason = obs.message.replace(ONE_PIP_QUESTION, "").strip() or "I cannot read the dice"
            return [Attention()] + self._speak([f"{as_sentence(reason)} {player}, please roll again."])
        before = self.roll_off
        try:
            self.roll_off, events = self.roll_off.record(self.roll_off.next_seat, obs.faces)
        except UserError as exc:
            return [Attention()] + self._speak([f"{as_sentence(str(exc))} {player}, please roll three dice again."])
        self._roll_offs_before.append(before)
        out = self._speak(announce(events, self.config.players, roll_off_scores=before.scores))
        if self.roll_off.winner is not None:
            return out + self._begin_game(self.roll_off.winner, after_roll_off=True)
        out.append(ShowTurn(self.roll_off.next_seat))
        turn = roll_off_turn(self.roll_off.next_player, self.config.n_players, first_of_round=not self.roll_off.scores)
        return out + self._speak([turn], extend=True)

    # -- buttons and keys -------------------------------------------------------------------------

    def on_action(self, action: str, argument: str | None = None) -> list:
        """A button or key: confirm, choose, choose_back, undo, repeat, status, new_game."""
        handler = {
            "confirm": self._confirm,
            "choose": self._choose,
            "choose_back": self._choose_back,
            "undo": self._undo,
            "repeat": self._repeat,
            "status": self._status,
            "new_game": self._new_game,
            "help": self._help,
            "players": self._change_players,
        }.get(action)
        if handler is None:
            raise UserError(f"unknown action {action!r}")
        return handler(argument) if action in ("choose", "players") else handler()

    def can_change_players(self) -> bool:
        """Whether the players may be changed now: before a game's first roll, or once it is over."""
        # An unsure first read waiting for confirm is no roll yet (found by a review: the change was
        # refused with "undo the turns", and undo then said "Nothing to undo").
        return self.game is None or self.phase == "game_over" or (
            self.phase in ("await_roll", "confirm_read") and not self.game.can_undo)

    def _change_players(self, names: str | None) -> list:
        """New players (one name a line, in seat order from seat 1, clockwise): a new game with them and
        the same chips and rules (a series starts over). Only before a game's first roll or after its
        end, so that no game in play loses its turns; the names are checked as the settings file's are.
        The change is said with every name in seat order; at a big table (:data:`BIG_TABLE`) by number in the
        opening that follows, as the night's first opening says them (:func:`lcr_pi.announce.game_started`).

        >>> ref = Referee(GameConfig.create(["Ann", "Bob", "Cy"]))
        >>> _ = ref.start()
        >>> said(ref.on_action("players", "Cy\\nDi\\nEd"))
        'The players are now Cy, Di and Ed, in seat order. A new game of LCR: Cy, Di and Ed, three chips each. Cy goes first. Cy, your turn: roll three dice.'
        >>> said(ref.on_action("players", "\\n".join("Ann Bob Cy Di Ed Flo Gus Hal".split())))
        'The players were changed. A new game of LCR: eight players, three chips each. Press status for the seat order. Ann goes first. Ann, your turn: roll three dice.'
        """
        if not self.can_change_players():
            return self._speak(["The players can be changed before the first roll of a game or once it is "
                                "over. Undo the turns, or finish the game, first."], keep=False)
        wanted = [n for n in (names or "").splitlines() if n.strip()]
        if len(wanted) > MOST_PLAYERS_NAMED:
            # Typed names have no other limit (found by a review: 21 typed players were played and
            # written to setup.json, which the next power-on refused as damaged, and the game was lost).
            return self._speak([f"The players were not changed: at most {number(MOST_PLAYERS_NAMED)} players can "
                                f"be named at the table, got {number(len(wanted))}."], keep=False)
        try:
            config = GameConfig.create(wanted, starting_chips=self.config.starting_chips,
                                       variant=self.config.variant_name, wild_pip=self.config.wild_pip)
        except UserError as exc:
            return self._speak([f"The players were not changed: {as_sentence(str(exc))}"], keep=False)
        big = config.n_players >= BIG_TABLE
        if config.players == self.config.players:
            if big:  # not every name again, as the change is not said name by name
                return self._speak(["Those are the players already, in the same seat order."], keep=False)
            return self._speak([f"The players are already {join_names(config.players, 'and')}."], keep=False)
        self.config = config
        # Said next, in seat order, as the players were given; at a big table not name by name (20 names were
        # 47 words up to the first roll with the opening, 16 s): the opening says how many, and that status says
        # the seat order, as the night's first does (a roll-off first names each roller in seat order).
        self._seats_unsaid = big
        # Whoever was named to start may have left; a series of other players is not this one's.
        first = self.first_player.strip()
        if first and first != "roll-off" and first.casefold() not in {n.casefold() for n in config.players}:
            self.first_player = ""
        # A series with games won is said to start over: its tally is gone (found by a review: it went
        # without a word, and the table learnt it from status).
        tally_lost = self.series is not None and self.series.games > 0 and not self.series.is_over
        self.series = None
        self._series_for_next_game()
        out = [NewPlayers(config.players)]
        changed = "The players were changed." if big else \
            f"The players are now {join_names(config.players, 'and')}, in seat order."
        out += self._speak([changed + (" The series starts over." if tally_lost else "")])
        out += self._begin_game(self._first_seat_for_new_game())
        # A roll-off first is saved with no game (found by a review: the game before, of the players
        # before, stayed saved throughout the roll-off, and a plug pulled then brought "the saved game had
        # other players" and a set-aside file at power-on).
        return self._roll_off_saved(out, "new players", players=list(config.players))

    def _confirm(self) -> list:
        if self.phase == "confirm_read":
            return self._apply_roll(self._unsure)
        if self.phase == "await_decision":
            if self._choice_index is None:
                return self._speak(["Press choose to hear each name, then confirm to pick one."], prompt=True)
            return self._pick(self._candidates()[self._choice_index])
        if self.phase == "game_over":
            self._series_for_next_game()
            return self._roll_off_saved(self._begin_game(self._first_seat_for_new_game()))
        return self._speak(["Nothing to confirm."], keep=False)

    def _choose(self, name: str | None) -> list:
        if self.phase != "await_decision":
            return self._speak(["There is nothing to choose now."], keep=False)
        candidates = self._candidates()
        named = name is not None and any(p.casefold() == name.strip().casefold() for p in self.config.players)
        # A number of at most three plain digits ('²' is isdigit() but no int(); 5000 digits are more
        # than int() takes, and no table has a thousand players).
        digits = name is not None and not named and name.strip().isascii() and name.strip().isdigit() \
            and len(name.strip()) <= 3
        if digits:
            # A number that ends one player's name ("Player 2", the voice setup's names) is that
            # player; otherwise it is the Nth name offered (found by an audit: "choose 2" robbed
            # Player 3, the second offered).
            numbered = [p for p in self.config.players if p.split()[-1:] == [str(int(name))]]
            if len(numbered) == 1:
                name, named, digits = numbered[0], True, False
        if digits:  # typed: "choose 2", the second name offered
            number_ = int(name)
            if not 1 <= number_ <= len(candidates):
                return self._speak([f"Choose a number from 1 to {len(candidates)}."], keep=False)
            return self._pick(candidates[number_ - 1])
        if name is not None:  # typed: "choose Bob"
            try:
                # A name typed in full is looked up in full (found by an audit: the page's button for a
                # player with a name of more than 40 characters was refused); other text is cut short.
                seat = self.config.seat_of(name if named else name[:40])
            except UserError as exc:
                return self._speak([as_sentence(str(exc))], keep=False)
            if seat not in candidates:
                refused = f"{self.config.players[seat]} cannot be chosen."
                if len(candidates) >= MANY_TO_CHOOSE:  # said by number, as the question says them
                    return self._speak([f"{refused} Choose one of {number(len(candidates))} players. "
                                        f"{self._choice_help()}"], keep=False)
                names = join_names([self.config.players[s] for s in candidates], "or")
                return self._speak([f"{refused} Choose {names}."], keep=False)
            return self._pick(seat)
        before = self._choice_index
        self._choice_index = 0 if before is None else (before + 1) % len(candidates)
        return self._offer(candidates, note="back to the first name" if before == len(candidates) - 1 else "")

    def _choose_back(self) -> list:
        """A long press of choose (typed: ``choose back``): the name before the one offered last, the last
        name when none was offered yet, so a player who pressed once too often need not go round again."""
        if self.phase != "await_decision":
            return self._speak(["There is nothing to choose now."], keep=False)
        candidates = self._candidates()
        before = self._choice_index
        self._choice_index = len(candidates) - 1 if before is None else (before - 1) % len(candidates)
        note = "back to the last name" if before == 0 else "the last name" if before is None else ""
        return self._offer(candidates, note=note)

    def _offer(self, candidates: list[int], *, note: str) -> list:
        seat = candidates[self._choice_index]
        # Said with the chips left to take and kept for repeat, so a player choosing by ear hears
        # whom confirm would rob, and when the names start over (found by an audit). At a big table the
        # name's place in the round is said too ("name 3 of 12"), so the player hears how far it is.
        left = self.game.state.chips[seat] - self._picked.count(seat)
        if len(candidates) >= MANY_TO_CHOOSE:
            where = f"name {self._choice_index + 1} of {len(candidates)}"
            note = f"{note}, {where}" if note else where
        self._cycled = True
        return [ShowTurn(seat)] + self._speak(
            [f"{self.config.players[seat]}, with {chips(left)}{f' ({note})' if note else ''}? Press confirm to take from "
             f"{self.config.players[seat]}."], prompt=True)

    def _candidates(self) -> list[int]:
        state = self.game.state
        pending = state.pending
        return [s for s in pending.eligible if state.chips[s] - self._picked.count(s) > 0]

    def _pick(self, seat: int) -> list:
        self._picked.append(seat)
        pending = self.game.state.pending
        if len(self._picked) < pending.take:
            self._choice_index, self._cycled = None, False
            # Saved with the pick, so that a power cut before the second does not ask the first again.
            return (self._speak([f"One chip from {self.config.players[seat]}. Choose the second."])
                    + [self._checkpoint("first pick", picked=[self.config.players[seat]])])
        picked, self._picked, self._choice_index = self._picked, [], None
        try:
            events = self.game.choose(pending.seat, picked)
        except UserError as exc:
            # The picks are dropped; saved so, or a restart would bring back the first of them.
            return self._speak([as_sentence(str(exc)), self._choice_help()]) + [self._checkpoint("choice refused")]
        self.phase = "await_roll"
        return self._after_events(events, record={"choose": [self.config.players[s] for s in picked]})

    def _undo(self) -> list:
        if self.phase == "await_decision" and self._picked:
            # The first of two picks is taken back, not the whole roll (found by an audit: a wrong
            # pick cost the roll's W W).
            seat = self._picked.pop()
            self._choice_index, self._cycled = None, False
            words = [f"Taken back: the chip from {self.config.players[seat]}. {self._decision_reminder()}"]
            # The chooser's LED, as a restart here shows it: the one lit was the player offered and picked,
            # whose chip is no longer taken. Saved, as the pick was: a restart now must not bring the pick back.
            return self._speak(words) + [ShowTurn(self.game.state.pending.seat),
                                         self._checkpoint("undo pick", picked=[self.config.players[seat]])]
        # An unsure first read waiting for confirm is no turn yet: the offer is dropped with what undo
        # takes back (found by a review: told "Undo brings the last one back", the table heard "Nothing to
        # undo" while the new game's first read waited for confirm, and so after a roll-off).
        at_opening = self.phase in ("await_roll", "confirm_read")
        if self._roll_offs_before and (self.game is None or not self.game.can_undo and at_opening):
            return self._undo_roll_off_roll()
        if ((self.game is None or not self.game.can_undo) and self._before_new_game is not None
                and (at_opening or self.phase == "roll_off")):
            return self._undo_new_game()
        if self.game is None or not self.game.can_undo:
            return self._speak(["Nothing to undo."], keep=False)
        was_over = self.phase == "game_over"
        # A Wild turn's chips taken (chosen, or the only choice there was): the faces do not say whose
        # they were (found by a review: undo said "Undone: Ann's roll of W, W, dot" alone, and a table
        # playing by ear could not hand the chips back).
        taken = next((e for e in self.game.last_events if isinstance(e, ev.ChipsTaken)), None)
        undone = self.game.undo()
        self._clear_pending()
        self.phase = "await_roll"
        state = self.game.state
        words = announce([undone], self.config.players)
        if taken is not None:
            given = [f"{chips(n)} to {self.config.players[seat]}" for seat, n in Counter(taken.victims).items()]
            words.append(f"{taken.player} gives back {join_names(given)}.")
        if was_over and self._series_before_win is not None:
            # Undoing the roll that won a game also takes that win off the series tally.
            series_won = self.series.is_over
            self.series, self._series_before_win = self._series_before_win, None
            words.append("That win is taken off the tally.")
            if series_won and not self.series.is_over:
                # Found by an audit: the table had heard who won the series, and nothing said it was open again.
                words.append("The series is not won yet.")
        words.append(f"Roll {dice(state.dice_to_roll)}.")
        return self._speak(words) + [ShowTurn(state.current), self._checkpoint("undo", faces=list(undone.faces))]

    def _undo_roll_off_roll(self) -> list:
        """Take back the last roll-off roll (a misread one), also the one that decided who starts
        while that game has had no turn: the roll-off goes on from before it."""
        self._clear_pending()
        self.game = None
        self.phase = "roll_off"
        self.roll_off = self._roll_offs_before.pop()
        player = self.roll_off.next_player
        # The roll taken back is always the player's who rolls next: the last to roll rolls again.
        words = [f"{player}'s roll-off roll is taken back. {player}, roll three dice again."]
        # Saved with no game: a restart from here begins the roll-off again, not the game it started.
        return self._speak(words, keep=True) + [ShowTurn(self.roll_off.next_seat), Checkpoint({"what": "undo roll-off"})]

    def _help(self) -> list:
        if self.phase == "await_decision":
            return self._speak([self._decision_reminder()], keep=False, prompt=True)
        if self.phase == "confirm_read":
            return self._speak(["Roll again, or press confirm if the dice show what I said."], keep=False)
        now = {"roll_off": f"{self.roll_off.next_player if self.roll_off else 'The next player'} rolls three dice "
                           "for the roll-off; undo takes back the last roll-off roll.",
               "game_over": self._game_over_prompt()}.get(self.phase, "")
        if self.phase == "await_roll" and self.game is not None:
            # Whose turn it is, as in the other phases (found by an audit playing by ear: help in a game said
            # only the buttons, and the player who pressed it heard nothing of what to do now).
            state = self.game.state
            now = f"It is {state.current_player}'s turn: roll {dice(state.dice_to_roll)}."
        # A big table's opening does not name everyone: help says the seat order, at any moment of the night.
        seats = seat_order(self.config.players) if self.config.n_players >= BIG_TABLE else ""
        return self._speak([now, seats, BUTTON_GUIDE], keep=False)

    def _repeat(self) -> list:
        return list(self._last_words) or self._speak(self._status_words())

    def _status(self) -> list:
        if self.phase in ("confirm_read", "await_decision"):
            # Status's words end with what to do now as a prompt, as the offer or the decision asked it: the
            # next throw makes an offer stale, a pick or a press of choose the decision's reminder. Found by
            # reviews: status said "It is Ann's turn: roll three dice", and the table never heard the guess it
            # could confirm; and, as status no longer cuts the question, a pick made on the page while its
            # words waited was followed by "Ann must first choose whom to take one chip from".
            *words, now = self._status_words(seats=True)
            return self._speak(words, keep=False) + self._speak([now], keep=False, prompt=True)
        return self._speak(self._status_words(seats=True), keep=False)

    def _status_words(self, *, seats: bool = False) -> list[str]:
        """What status says; with ``seats``, at a big table's game opening (before its first roll), the seat
        order too, as the opening said the players by number. Only asked for: "Welcome back" and the rest
        that say the status words do not say it."""
        if self.game is None:
            return self._roll_off_status_words(seats=seats)
        state = self.game.state
        big = len(self.config.players) >= BIG_TABLE
        if big:
            held = grouped_counts(self.config.players, state.chips, chips)
        else:
            # "has" between a name and its number: "Player 1 has two chips", not "Player 1 two chips",
            # which a listener hears as twelve (found by an audit).
            held = ", ".join(f"{name} has {chips(n)}" for name, n in zip(self.config.players, state.chips))
        if not state.is_over:
            pot = f"{capitalised(chips(state.pot))} in the centre."
        elif state.pot:
            # The chips in the centre are the winner's now (found by a review: status after a win said
            # "Twenty-one chips in the centre" right after "Ann wins the pot of twenty-one chips!").
            pot = f"{self.config.players[state.winner]} won the pot of {chips(state.pot)}."
        else:
            pot = "The pot was empty."
        words = [f"{held}. {pot}"]
        if self.series is not None:
            words.append(self._games_won_words())
        favoured = self._favoured_words(state)
        if favoured:
            words.append(favoured)
        if seats and big and state.rolls == 0:
            words.append(seat_order(self.config.players))
        if self.phase == "game_over":
            won, then = self._game_over_words(state)
            # At a big table the winner is said first, as whose turn it is is in a game (found by a review:
            # it came after every group of chips and the games won); what to press stays last.
            return [won] + words + [then] if big else words + [f"{won} {then}"]
        now = self._status_now(state)
        if not big:
            return words + [now]
        if self.phase == "await_roll":
            return [now] + words  # whose turn, and how many dice, is what a player who lost track needs first
        # An offer or a decision is still said last, as a prompt (see _status), after whose turn it is first.
        return [f"It is {state.current_player}'s turn."] + words + [now]

    def _game_over_words(self, state) -> tuple[str, str]:
        """Status at a game's end: who won (the series too, once won), and what comes next."""
        won = f"{self.config.players[state.winner]} won this game"
        if self.series is not None and self.series.is_over:
            # Said at the series' end, and so after a restart there (found by an audit: status and
            # "Welcome back" said who won the game, and only "a new series" hinted it was over). The
            # champion may not be the game's winner: a best of N can be settled by another's win.
            champion = self.config.players[self.series.champion]
            won += " and the series" if self.series.champion == state.winner else f", and {champion} the series"
        # A best of N tied after its N games goes on, said here as at the game's end (found by an
        # audit: status and "Welcome back" there said only "Press confirm for the next game").
        play_on = series_goes_on(self.series) if self.series is not None else ""
        return f"{won}.", f"{play_on + ' ' if play_on else ''}{self._game_over_prompt()}"

    def _status_now(self, state) -> str:
        """What happens now in a game in play, the last of status's words (the first at a big table's roll)."""
        if self.phase == "await_decision":
            return self._decision_reminder()
        if self.phase == "confirm_read" and self._unsure is not None:
            return f"It is {state.current_player}'s turn: roll again, or, if the dice {self._guess_words()}, press confirm."
        return f"It is {state.current_player}'s turn: roll {dice(state.dice_to_roll)}."

    def _games_won_words(self) -> str:
        return games_won_words(self.config.players, self.series.wins)

    def _roll_off_status_words(self, *, seats: bool = False) -> list[str]:
        """The roll-off as it stands: who is in it, what each has scored this round, the series, and
        whose roll it is. Found by an audit: status said only whose roll it was, so a player who
        missed a score, a tie or the series tally between games could not hear it again. With ``seats``,
        at a big table before its first roll-off roll, the seat order too: its opening says the players
        roll in seat order without naming them, as a game's opening does (and status there says it)."""
        off, players = self.roll_off, self.config.players
        if off.round > 1:
            words = [f"Roll-off for who goes first: {join_names([players[s] for s in off.contenders])} "
                     "tied and roll again."]
        else:
            words = ["Roll-off for who goes first."]
        if off.scores and len(players) >= BIG_TABLE:
            words.append(self._roll_off_standing())
        elif off.scores:
            words.append(capitalised(join_names([f"{players[s]} scored {number(n)}" for s, n in off.scores])) + ".")
        if self.series is not None:
            words.append(self._games_won_words())
        if seats and len(players) >= BIG_TABLE and off.round == 1 and not off.scores:
            words.append(seat_order(players))
        words.append(f"{off.next_player}, roll three dice.")
        return words

    def _roll_off_standing(self) -> str:
        """A big table's roll-off round as it stands: who leads and with what, who is still to roll and what
        they need. Found by a review: status said every score of the round one by one, 58 words at 20
        players, though only the lead and who is still to roll decide anything (a lower score is out).

        >>> ref = Referee(GameConfig.create("Ann Bob Cy Di Ed Flo Gus Hal".split()), first_player="roll-off")
        >>> _ = ref.start()
        >>> for faces in (("1", "2", "3"), ("6", "5", "4"), ("2", "2", "2")):
        ...     _ = ref.on_roll(RollObservation(faces))
        >>> ref._roll_off_standing()
        'Bob leads with fifteen. Still to roll: five players, from Di to Hal; sixteen or more leads.'
        """
        off, players = self.roll_off, self.config.players
        best = max(n for _, n in off.scores)
        leaders = [players[s] for s, n in off.scores if n == best]
        rolled = {s for s, _ in off.scores}
        to_roll = [s for s in off.contenders if s not in rolled]  # in seat order, the order they roll in
        if len(to_roll) > 3 and to_roll == list(range(to_roll[0], to_roll[-1] + 1)):
            still = f"{number(len(to_roll))} players, from {players[to_roll[0]]} to {players[to_roll[-1]]}"
        else:  # a few, or a tie-break's players, who do not sit side by side
            still = join_names([players[s] for s in to_roll])
        # The most a roll scores is eighteen pips with ordinary dice and three dots with LCR dice. The referee
        # is not told which dice are rolled, and a lead of three or less can be either (ordinary dice score
        # three with 1, 1, 1), so it is said in words true of both: "more than three leads", never "only
        # three ties", which would be false of ordinary dice.
        if best >= 6 * ROLL_OFF_DICE:
            need = f"only {number(best)} ties"
        elif best > ROLL_OFF_DICE:
            need = f"{number(best + 1)} or more leads"
        else:
            need = f"more than {number(best)} leads"
        return (f"{join_names(leaders)} {'leads' if len(leaders) == 1 else 'lead'} with {number(best)}. "
                f"Still to roll: {still}; {need}.")

    def _favoured_words(self, state) -> str:
        if self.odds is None or state.is_over:
            return ""
        try:
            odds = self.odds(state)
        except Exception:  # noqa: BLE001 - the chances are a nicety; the status must still be spoken
            return ""
        if odds is None:
            return ""
        probabilities = list(odds.probabilities)
        best = max(range(len(probabilities)), key=probabilities.__getitem__)
        percent = round(100 * probabilities[best])
        about = "" if odds.exact else "about "
        # An estimate's favourite is named only when it leads by more than the estimate's give or take
        # (two standard errors, as the page shows it). Found by an audit of a big table: at the opening
        # of a 12-player game (true chances 7.9 to 8.7 percent, each estimate give or take 4 points)
        # status named 11 different players as the favourite in 20 asks.
        close = [seat for seat, p in enumerate(probabilities)
                 if seat != best and p >= probabilities[best] - 2 * odds.std_error]
        big = len(probabilities) >= BIG_TABLE  # a few words there: the leader's share of 8-20 tells little
        if not odds.exact and close:
            return ("No clear favourite yet." if big
                    else f"No one is clearly favoured to win yet; the leader has about {percent} percent.")
        return f"{self.config.players[best]} is favoured{'' if big else ' to win'}, with {about}{percent} percent."

    def _new_game(self) -> list:
        # A long press may be an accident (a slow press, someone leaning on the button): the game it
        # ends is kept, and undo brings it back until the new game's first turn is undone too
        # (found by an audit: three turns were lost for good, "Nothing to undo").
        # The first of two Wild picks goes with it (found by a review: a long press between the picks, then
        # undo, brought the game back without the first pick, and the whole question was asked again).
        before = ((self.game, self.series, self._series_before_win, list(self.decision_picks))
                  if self.game is not None else None)
        keep = before is not None and (self.game.can_undo or self.phase == "game_over")
        if not keep and self._before_new_game is not None:
            # A second press before the new game had a turn (often, after an accidental one): the
            # game the first press ended is still the one undo brings back (found by a review).
            before, keep = self._before_new_game, True
        out = self._speak(["Starting a new game." + (" Undo brings the last one back." if keep else "")])
        self._series_for_next_game()
        if self.game is not None and self.phase != "game_over":
            first = self.game.state.first  # the game in play starts over, with the same first player
        else:
            first = self._first_seat_for_new_game()  # as confirm would: the series' next, or a roll-off
        out += self._begin_game(first)
        self._before_new_game = before if keep else None
        return self._roll_off_saved(out)

    def _undo_new_game(self) -> list:
        """Bring back the game a long press ended (its series tally too), where it was."""
        self.game, self.series, self._series_before_win, picked = self._before_new_game
        self._before_new_game = None
        self._clear_pending()
        self.roll_off, self._roll_offs_before = None, []
        state = self.game.state
        self.phase = self._phase_of_game()
        self._picked = list(picked) if self.phase == "await_decision" else []
        words = ["The new game is taken back; the last one goes on where it was."] + self._status_words()
        details = {"picked": [self.config.players[s] for s in self._picked]} if self._picked else {}
        if self._picked:
            # As after a restart between the two picks: the status's reminder says the first pick and asks
            # for the second, a prompt (the next press of choose makes it stale), not the whole question.
            *words, reminder = words
            out = self._speak(words) + self._speak([reminder], extend=True, prompt=True)
        else:
            out = self._speak(words)
            if self.phase == "await_decision":
                out += self._speak(self._decision_question(), extend=True, prompt=True)
        return out + [ShowTurn(state.current), self._checkpoint("undo new game", **details)]

    # -- helpers ----------------------------------------------------------------------------------

    def _series_for_next_game(self) -> None:
        """Before a new game: a series in play goes on; after a finished one (or none), the next is
        played by ``series_rules``, or none when they are None."""
        if self.series is None or self.series.is_over:
            self.series = Series.start(self.config, self.series_rules) if self.series_rules else None
            self._series_unsaid = self.series is not None

    def follow_settings(self, *, series_rules: SeriesRules | None, first_player: str) -> None:
        """After :meth:`restore`: what has not begun yet follows the settings as they are now (found by
        an audit: the saved series rules and first player were kept for good, so a settings file
        whose series was changed or removed, or whose first player was, never took effect while a
        game was saved). The game and the series in play go on as they were saved."""
        self.series_rules = series_rules
        self.first_player = first_player

    def _decision_question(self) -> list[str]:
        """The Wild choice waiting, asked again (a restart, a game brought back), as the roll asked it."""
        state = self.game.state
        p = state.pending
        return announce([ev.DecisionNeeded(p.seat, self.config.players[p.seat], p.take, p.eligible)],
                        self.config.players, state.chips)

    def _decision_reminder(self) -> str:
        p = self.game.state.pending
        if self._picked:  # one chip of two chosen already
            first = self.config.players[self._picked[0]]
            return (f"{self.config.players[p.seat]} takes one chip from {first} and must choose whom to take "
                    f"the second from. {self._choice_help()}")
        if one_chip_each(p.take, p.eligible, self.game.state.chips):
            # As the Wild sentence says it (found by an audit: status and a restart said "whom to take two
            # chips from", then "take one chip each from two players").
            return (f"{self.config.players[p.seat]} must first choose two players to take one chip each from. "
                    f"{self._choice_help()}")
        return f"{self.config.players[p.seat]} must first choose whom to take {chips(p.take)} from. {self._choice_help()}"

    def _choice_help(self) -> str:
        if self.phase == "await_decision" and len(self._candidates()) >= MANY_TO_CHOOSE:
            # Said after a question that no longer names them (see MANY_TO_CHOOSE): one at a time, as choose says them.
            return "Press choose to hear the names one at a time, hold choose to go back one, and confirm to pick."
        return "Press choose to hear each name, and confirm to pick."

    def _clear_pending(self) -> None:
        self._unsure = None
        self._choice_index = None
        self._cycled = False
        self._picked = []

    def _speak(self, lines, *, keep: bool = True, extend: bool = False, prompt: bool = False) -> list:
        said = [(Prompt if prompt else Say)(line) for line in lines if line]
        if keep:
            self._last_words = (self._last_words + said) if extend else said
        return list(said)

    def _roll_off_saved(self, out: list, what: str = "roll-off", **details) -> list:
        """``out``, where a new game was begun, with a save when what began is a roll-off: a game saves
        itself as it starts, a roll-off did not. Saved with no game, a power cut in the roll-off resumes
        the roll-off (found by a review: after confirm at a game's end of a series rolled off for, a power
        cut in the roll-off brought back the finished game, "The last game was won", confirm had to be
        pressed again, and undo there took back the winning roll, which it could not before the cut)."""
        if self.game is None:
            out.append(Checkpoint({"what": what, **details}))
        return out

    def _checkpoint(self, what: str, **details) -> Checkpoint:
        state = self.game.state
        record = {"what": what, **details, "chips": list(state.chips), "pot": state.pot,
                  "current": state.current, "winner": state.winner}
        return Checkpoint(record)

    # -- saving -----------------------------------------------------------------------------------

    def snapshot(self) -> dict:
        """Everything needed to resume after a power cut, as plain JSON data."""
        return {
            "format": TABLE_FORMAT,
            "version": TABLE_VERSION,
            "config": self.config.to_dict(),
            "series": self.series.to_dict() if self.series is not None else None,
            "series_before_win": self._series_before_win.to_dict() if self._series_before_win else None,
            "first_player": self.first_player,
            "phase": self.phase,
            "game": self.game.to_dict() if self.game is not None else None,
            "turn_label": self.turn_label,
            # The first of two Wild picks, made and not settled (seats). Optional: a save without it has none.
            "decision_picks": list(self.decision_picks),
        }

    @classmethod
    def restore(cls, data: dict, *, source: str = "saved table", odds=None) -> "Referee":
        """Rebuild the table from :meth:`snapshot`; a damaged snapshot is refused with ``source`` named."""
        if not isinstance(data, dict) or data.get("format") != TABLE_FORMAT:
            raise UserError(f"{source} is not an lcr-pi table save")
        if data.get("version") != TABLE_VERSION:
            raise UserError(f"{source} has version {data.get('version')!r}; this lcr-pi reads {TABLE_VERSION}")
        try:
            config = GameConfig.from_dict(data["config"])
            series = Series.from_dict(config, data["series"]) if data.get("series") else None
            ref = cls(config, series_rules=series.rules if series else None, first_player=data.get("first_player", ""),
                      odds=odds)
            ref.series = series
            # A series resumed was said when it began (a roll-off saved before its first game starts again).
            ref._series_unsaid = series is not None and series.games == 0 and data.get("game") is None
            if data.get("series_before_win"):
                ref._series_before_win = Series.from_dict(config, data["series_before_win"])
            ref.turn_label = int(data.get("turn_label", 0))
            if data.get("game") is None:
                ref._restored_picks(data.get("decision_picks", []), source)  # none: there is no decision
                ref._restored_without_game = True
                return ref  # saved during a roll-off: it simply starts again
            ref.game = Game.from_dict(data["game"], source=source)
            ref._picked = ref._restored_picks(data.get("decision_picks", []), source)
        except KeyError as exc:
            raise UserError(f"{source} has no {exc.args[0]!r}") from None
        except (TypeError, ValueError, AttributeError) as exc:
            raise UserError(f"{source} is damaged: a value has the wrong type ({exc})") from None
        except UserError as exc:
            if str(exc).startswith(source):
                raise
            raise UserError(f"{source}: {exc}") from None  # a setting inside it that is not allowed
        ref.phase = ref._phase_of_game()  # an unsure read in flight is simply rolled again
        return ref

    def _restored_picks(self, saved, source: str) -> list[int]:
        """The first Wild pick of a snapshot (:meth:`snapshot`), checked against the restored game's
        decision: seats it may take a chip from, fewer than it takes. A value that is not is refused
        with ``source`` named, as the rest of a damaged save is."""
        pending = self.game.state.pending if self.game is not None else None
        if saved == []:
            return []
        if not isinstance(saved, list) or not all(type(seat) is int for seat in saved):
            raise UserError(f"{source} is damaged: decision_picks must be a list of seats, got {saved!r}")
        if pending is None or len(saved) >= pending.take:
            raise UserError(f"{source} is damaged: decision_picks {saved!r} are more than the game's decision "
                            "leaves to pick")
        chips = self.game.state.chips  # a seat picked twice must hold two chips
        if not all(seat in pending.eligible and chips[seat] >= saved.count(seat) for seat in saved):
            raise UserError(f"{source} is damaged: decision_picks {saved!r} are not seats the decision can "
                            "take a chip from")
        return list(saved)

    def _phase_of_game(self) -> str:
        """The phase a game in play is in, by its state alone (a restart, a game brought back)."""
        state = self.game.state
        return "game_over" if state.is_over else "await_decision" if state.pending is not None else "await_roll"


#: What the buttons do, said by help and at the start of a night with buttons wired.
BUTTON_GUIDE = ("Buttons: confirm, undo to take back the last turn, repeat to hear the last words again, "
                "status for everyone's chips, choose for a Wild choice. Hold confirm for a new game.")
