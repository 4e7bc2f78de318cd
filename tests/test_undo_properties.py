"""Random nights at the table with random undos and power cuts, through the shell and the files on disk.

Each example plays typed rolls and Wild picks through a :class:`~lcr_pi.table.Table` with a real
:class:`~lcr_pi.persist.GameStore`, presses undo at random (also on the first of two Wild picks, and
after the winning roll), long-presses for a new game at random during a Wild decision (undo brings that
game back, a first pick with it) and pulls the plug at random (a fresh referee from the file on disk). The test
keeps its own list of the turns still standing and checks, after every step, that the referee's game
is exactly those turns replayed by the rules engine (chips, pot, whose turn, the winner, the series
tally), that the file on disk resumes to it, that the log's last line agrees, and, after each undo,
that the words name what was taken back and whose turn it is, and the LED lit is that player's.
"""

from __future__ import annotations

import random
import tempfile
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from lcr_pi.announce import chips as chips_words
from lcr_pi.announce import dice, spoken_faces
from lcr_pi.persist import GameStore
from lcr_pi.referee import Referee
from lcr_pi.rules import Game, GameConfig, SeriesRules
from lcr_pi.table import Table

VARIANTS = ["classic", "wild", "wild-win", "last-chip", "wild+last-chip"]
LCR_FACES = ["L", "C", "R", ".", ".", "."]
WILD_FACES = ["L", "C", "R", "W", "W", "."]
NAMES = ["Ann", "Bob", "Cy", "Dee"]


class Speaker:
    def __init__(self):
        self.spoken = []

    def say(self, text):
        self.spoken.append(text)

    def cue(self, sound):
        pass


class Lights:
    def __init__(self):
        self.lit = None  # the seat whose LED is steady after the last command

    def show_turn(self, seat):
        self.lit = seat

    def show_moves(self, moves, then_turn=None):
        self.lit = then_turn

    def celebrate(self, seat):
        self.lit = seat

    def attention(self):
        pass

    def off(self):
        self.lit = None

    def close(self):
        pass


class Night:
    """The table, and the test's own account of the turns that stand."""

    def __init__(self, config, series_rules, folder):
        self.config = config
        self.store = GameStore(folder)
        self.turns: list[list[tuple]] = []  # each turn: its roll, then its Wild choice if one was made
        self.picks: list[int] = []  # the first of two Wild picks, made and not settled
        self.wins = [0] * config.n_players  # the series tally of the games finished before this one
        # The turns and first pick of the game a long press ended, which undo brings back (not saved).
        self.before_new: tuple[list, list[int]] | None = None
        self.table = None
        self._open(Referee(config, series_rules=series_rules))

    def _open(self, referee):
        self.speaker, self.lights = Speaker(), Lights()
        self.table = Table(referee, speaker=self.speaker, lights=self.lights, store=self.store)
        self.table.start()

    @property
    def ref(self):
        return self.table.referee

    def expected_game(self) -> Game:
        game = Game(self.config, first=self.ref.game.state.first)
        for turn in self.turns:
            for action in turn:
                if action[0] == "roll":
                    game.roll(action[1])
                else:
                    game.choose(action[1], list(action[2]))
        return game

    def said_since(self, n):
        return " ".join(self.speaker.spoken[n:])

    # -- steps --------------------------------------------------------------------------------------

    def roll(self, rng):
        state = self.ref.game.state
        faces = [rng.choice(WILD_FACES if self.config.wild else LCR_FACES) for _ in range(state.dice_to_roll)]
        self.table.action("roll", " ".join(faces))
        self.turns.append([("roll", tuple(faces))])

    def pick(self, rng):
        state = self.ref.game.state
        pending = state.pending
        can = [s for s in pending.eligible if state.chips[s] - self.picks.count(s) > 0]
        seat = rng.choice(can)
        self.table.action("choose", self.config.players[seat])
        self.picks.append(seat)
        if len(self.picks) == pending.take:
            self.turns[-1].append(("choose", pending.seat, tuple(self.picks)))
            self.picks = []

    def long_press(self):
        """A long press (a new game) during a Wild decision, perhaps between its two picks."""
        self.table.action("new_game")
        self.before_new = (self.turns, self.picks)
        self.turns, self.picks = [], []

    def undo(self):
        ref = self.ref
        n = len(self.speaker.spoken)
        was_over = ref.phase == "game_over"
        self.table.action("undo")
        words = self.said_since(n)
        if not self.picks and not self.turns and self.before_new is not None:
            # The game the long press ended comes back where it was, a first pick with it.
            (self.turns, self.picks), self.before_new = self.before_new, None
            assert words.startswith("The new game is taken back; the last one goes on where it was.")
            state = ref.game.state
            if self.picks:
                roller, first = state.current_player, self.config.players[self.picks[0]]
                assert words.endswith(f"{roller} takes one chip from {first} and must choose whom to take the "
                                      "second from. Press choose to hear each name, and confirm to pick.")
            assert self.lights.lit == state.current
            return
        if self.picks:
            seat = self.picks.pop()
            assert words.startswith(f"Taken back: the chip from {self.config.players[seat]}.")
            assert self.lights.lit == ref.game.state.current
            return
        if not self.turns:
            assert words == "Nothing to undo."
            return
        turn = self.turns.pop()
        state = ref.game.state
        player = state.current_player
        assert words.startswith(f"Undone: {player}'s roll of {spoken_faces(self._said_faces(turn))}. "
                                f"{player}, it is your turn again.")
        assert words.endswith(f"Roll {dice(state.dice_to_roll)}.")
        taken = [a for a in turn if a[0] == "choose"]
        if taken:
            given_back = Counter(taken[0][2])
            for seat, count in given_back.items():
                assert f"{chips_words(count)} to {self.config.players[seat]}" in words
        if was_over and ref.series is not None:
            assert "That win is taken off the tally." in words
        assert self.lights.lit == state.current, "the LED lit is not the player whose turn it is again"

    def _said_faces(self, turn):
        # The faces as the rules read them (pip faces are not typed here): "." is said "dot".
        return tuple("dot" if f == "." else f for f in turn[0][1])

    def power_cut(self):
        self._open(Referee.restore(self.store.load()))
        self.before_new = None  # the game a long press ended is not saved

    def next_game(self):
        winner = self.ref.game.state.winner
        self.wins[winner] += 1
        self.table.action("confirm")
        self.turns, self.picks = [], []
        self.before_new = None  # a game begun by confirm ends the chance to bring one back

    # -- checks -------------------------------------------------------------------------------------

    def check(self):
        ref = self.ref
        game = ref.game
        want = self.expected_game()
        assert game.state == want.state, "the game is not its standing turns replayed"
        assert game.actions == want.actions
        assert list(ref.decision_picks) == self.picks
        if ref.series is not None:
            tally = list(self.wins)
            if game.state.winner is not None:
                tally[game.state.winner] += 1
            assert list(ref.series.wins) == tally, "the series tally does not count the games won"
        # What a power cut now resumes: the file on disk, loaded by a fresh referee.
        resumed = Referee.restore(self.store.load())
        assert resumed.game.state == game.state and resumed.game.actions == game.actions
        assert list(resumed.decision_picks) == self.picks
        assert (resumed.series.wins if resumed.series else None) == (ref.series.wins if ref.series else None)
        last = self.store.read_log()[-1]
        state = game.state
        assert (last["chips"], last["pot"], last["current"], last["winner"]) == (
            list(state.chips), state.pot, state.current, state.winner), "the log's last line is not the game"


@settings(max_examples=60, deadline=None)
@given(variant=st.sampled_from(VARIANTS), players=st.integers(3, 4), series=st.booleans(),
       seed=st.integers(0, 2**32 - 1), steps=st.integers(10, 80))
def test_random_undos_and_power_cuts_leave_the_game_its_standing_turns_replayed(variant, players, series, seed, steps):
    rng = random.Random(seed)
    config = GameConfig.create(NAMES[:players], variant=variant)
    series_rules = SeriesRules(first_to=3) if series else None
    with tempfile.TemporaryDirectory() as folder:
        night = Night(config, series_rules, folder)
        for _ in range(steps):
            ref = night.ref
            if ref.series is not None and ref.series.is_over:
                break
            move = rng.random()
            if move < 0.3:
                night.undo()
            elif move < 0.38:
                night.power_cut()
            elif ref.phase == "game_over":
                night.next_game()
            elif ref.phase == "await_decision" and move < 0.5:
                night.long_press()
            elif ref.phase == "await_decision":
                night.pick(rng)
            else:
                night.roll(rng)
            night.check()
