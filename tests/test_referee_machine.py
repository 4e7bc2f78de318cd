"""A stateful property test: random nights at the table, checked against the rules engine after every step.

A hypothesis ``RuleBasedStateMachine`` drives one :class:`~lcr_pi.referee.Referee` (3-6 players, every
variant, 3-5 chips, a series or not, a named first player or a roll-off) through clear rolls, rolls of
the wrong number of dice, unsure and cocked reads, an empty or obstructed tray, every button, and
restarts (``snapshot`` -> JSON -> ``Referee.restore`` -> ``start``). After each step it checks what the
referee promises (module and README): chips are conserved, a doubtful roll moves nothing until it is
confirmed, a clear roll moves exactly what the pure engine says, undo restores the turn before, the game
over phase has the winner the rules define, the series tally adds up, a restart resumes the same table,
and the words spoken are never empty or leak a Python value.
"""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from lcr_pi.announce import chips as chips_words
from lcr_pi.errors import UserError
from lcr_pi.referee import Checkpoint, Referee, RollObservation, Say, said
from lcr_pi.rules import GameConfig, RollOff, SeriesRules, parse_face
from lcr_pi.rules import engine
from lcr_pi.rules.faces import Face
from lcr_pi.rules.series import NEXT_STARTERS

NAMES = ["Ann", "Bob", "Cy", "Dee", "Eve", "Flo"]
VARIANTS = ["classic", "wild", "wild-win", "last-chip", "wild+last-chip", "wild-win+last-chip"]
LCR_FACES = ["L", "C", "R", "dot", ".", "W"]
PIPS = ["1", "2", "3", "4", "5", "6"]
PHASES = {"roll_off", "await_roll", "confirm_read", "await_decision", "game_over"}
# What a restart resumes as: an unsure read in flight is simply rolled again.
PHASE_AFTER_RESTART = {"confirm_read": "await_roll"}
# What a player may type for "choose" and for a face, odd ones included ("²" is isdigit() but no int()).
CHOOSE_TYPED = ["0", "1", "2", "3", "9", " 2 ", "02", "-1", "Zed", "", " ", "ann", "²"]
BAD_FACES = ["7", "0", "X", "66", "1.0", "²", "①"]
# Words that mean a Python value leaked into speech.
LEAKS = ("None", "Face.", "RollObservation", "<", ">", "[", "]", "{", "}", "()", "\n")


@st.composite
def setups(draw):
    n = draw(st.integers(3, 6))
    players = NAMES[:n]
    variant = draw(st.sampled_from(VARIANTS))
    chips = draw(st.integers(3, 5))
    wild_pip = draw(st.integers(1, 3))
    series = draw(st.one_of(
        st.none(),
        st.builds(lambda k, s: SeriesRules(first_to=k, next_starter=s), st.integers(1, 3), st.sampled_from(NEXT_STARTERS)),
        st.builds(lambda k, s: SeriesRules(best_of=k, next_starter=s), st.integers(1, 5), st.sampled_from(NEXT_STARTERS)),
    ))
    first = draw(st.one_of(st.just("roll-off"), st.just(""), st.sampled_from(players),
                           st.sampled_from(players).map(lambda p: f" {p.upper()} ")))
    return players, variant, chips, wild_pip, series, first


class RefereeMachine(RuleBasedStateMachine):
    """One table's night."""

    @initialize(setup=setups())
    def begin(self, setup):
        players, variant, chips, wild_pip, series, first = setup
        self.config = GameConfig.create(players, variant=variant, starting_chips=chips, wild_pip=wild_pip)
        self.ref = Referee(self.config, series_rules=series, first_player=first)
        self.turns: list = []  # the game state before each turn of the current game (for undo)
        self.offs: list = []  # the roll-off before each of its rolls (for undo), while undo can reach it
        self.ended = None  # (game, its state, its turns) a long press ended, while undo can bring it back
        self.repeats = None
        self.saved = None  # the table as last saved at a Checkpoint (what a power cut resumes)
        out = self.ref.start()
        self._check_words(out, must_speak=True)
        self._check_new_game_first()
        name = first.strip()
        if name == "roll-off":
            assert self.ref.phase == "roll_off"
        else:
            assert self.ref.game.state.first == (self.config.seat_of(name) if name else 0)
        self._sync_turns(None)

    # -- helpers -----------------------------------------------------------------------------------

    @property
    def state(self):
        return self.ref.game.state if self.ref.game is not None else None

    def _expected_dice(self) -> int:
        if self.ref.phase == "roll_off":
            return 3
        if self.ref.phase in ("await_roll", "confirm_read"):
            return self.state.dice_to_roll
        return 3

    def _faces(self, data, n, *, c_heavy=False):
        if c_heavy:
            pool = ["C", "C", "C", "5", "L", "R", "W" if self.config.wild else "C"]
            return tuple(data.draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n)))
        kind = data.draw(st.sampled_from(["lcr", "pips", "mixed"]))
        lcr = LCR_FACES if self.config.wild else LCR_FACES[:-1]
        if data.draw(st.integers(0, 19)) == 0:
            lcr = LCR_FACES  # now and then a W in a game without Wild dice
        pool = {"lcr": lcr, "pips": PIPS, "mixed": lcr + PIPS}[kind]
        return tuple(data.draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n)))

    def _before(self, *, keeps_words=False):
        if not keeps_words:
            self.repeats = None  # what repeat must say: the last announcement, when the test knows it
        ref = self.ref
        return {
            "phase": ref.phase,
            "game": ref.game,
            "state": self.state,
            "roll_off": ref.roll_off,
            "series": ref.series.to_dict() if ref.series is not None else None,
            "series_obj": ref.series,
            "guess": ref.offered_guess,
            "can_undo": ref.game is not None and ref.game.can_undo,
            "picked": list(ref._picked),  # the first of two Wild picks, made and not yet settled
        }

    def _unchanged(self, before, *, phase=True):
        assert self.ref.game is before["game"]
        assert self.state == before["state"], "chips moved on a roll that was not settled"
        assert self.ref.roll_off == before["roll_off"]
        assert (self.ref.series.to_dict() if self.ref.series else None) == before["series"]
        if phase:
            assert self.ref.phase == before["phase"]

    def _check_words(self, out, *, must_speak):
        for o in out:
            if isinstance(o, Say):
                assert o.text.strip(), f"an empty sentence in {out!r}"
                for leak in LEAKS:
                    assert leak not in o.text, f"{leak!r} spoken: {o.text!r}"
        if must_speak:
            assert said(out).strip(), f"nothing said for {out!r}"
        if any(isinstance(o, Checkpoint) for o in out):
            # The table saves the referee's snapshot when it performs a Checkpoint (table.py).
            self.saved = json.loads(json.dumps(self.ref.snapshot()))

    def _sync_turns(self, before):
        """Keep ``self.turns`` (states before each turn of this game) in step with the game."""
        game = self.ref.game
        if game is None or game.state.rolls == 0:
            self.turns = []
        elif before is not None and before["game"] is game and before["state"] is not None \
                and game.state.rolls == before["state"].rolls + 1:
            self.turns.append(before["state"])

    def _check_new_game_first(self):
        """A game just begun has everyone on the starting chips (or is being decided by a roll-off)."""
        ref = self.ref
        if ref.game is None:
            assert ref.phase == "roll_off" and ref.roll_off is not None
            return
        state = ref.game.state
        assert state.rolls == 0 and state.pot == 0
        assert state.chips == (self.config.starting_chips,) * self.config.n_players
        assert ref.phase == "await_roll"

    # -- rolls -------------------------------------------------------------------------------------

    def _roll(self, obs, before):
        out = self.ref.on_roll(obs)
        self._check_words(out, must_speak=obs.verdict not in ("no_dice", "obstructed"))
        return out

    @rule(data=st.data())
    def roll_clear(self, data):
        self._clear_roll(data, c_heavy=False)

    @rule(data=st.data())
    def roll_clear_fast(self, data):
        """Mostly C, L and R: games end within a night's steps."""
        self._clear_roll(data, c_heavy=True)

    @rule(data=st.data(), turns=st.integers(1, 12))
    def play_on(self, data, turns):
        """Several quick turns in one step (Wild decisions picked by number), so that games end."""
        for _ in range(turns):
            if self.ref.phase == "game_over":
                return
            if self.ref.phase == "await_decision":
                self._choose(data.draw(st.sampled_from(["1", "2"])))
            else:
                self._clear_roll(data, c_heavy=True)
            self._check_all()

    def _clear_roll(self, data, *, c_heavy):
        before = self._before()
        faces = self._faces(data, self._expected_dice(), c_heavy=c_heavy)
        obs = RollObservation(faces, source=data.draw(st.sampled_from(["camera", "keyboard"])))
        out = self._roll(obs, before)
        self._after_settled_roll(before, faces, obs)
        if self.state is not None and before["state"] is not None and self.state.rolls == before["state"].rolls + 1:
            # A turn was played: its announcement is what repeat says, until other words replace it.
            self.repeats = said(out)
            roller = before["state"].current_player
            assert self.repeats.startswith(f"{roller} rolled "), self.repeats
        self._sync_turns(before)

    def _after_settled_roll(self, before, faces, obs):
        """A roll the referee takes as read (clear, or unsure but settled by its moves)."""
        ref = self.ref
        phase = before["phase"]
        if phase in ("game_over", "await_decision"):
            self._unchanged(before)
            return
        if phase == "roll_off":
            off = before["roll_off"]
            try:
                expected, _ = off.record(off.next_seat, faces)
            except UserError:
                self._unchanged(before)  # a roll-off roll that cannot be scored is asked again
                return
            self.offs.append(off)
            if expected.winner is None:
                assert ref.phase == "roll_off" and ref.roll_off == expected
            else:
                assert ref.phase == "await_roll" and ref.game.state.first == expected.winner
                self._check_new_game_first()
            return
        wild_pip = self.config.effective_wild_pip
        parsed = [parse_face(f, wild_pip=wild_pip) for f in faces]
        if Face.WILD in parsed and not self.config.wild:
            self._unchanged(before, phase=False)
            assert ref.phase == "await_roll"
            return
        step = engine.roll(before["state"], faces)
        assert ref.game is before["game"]
        assert ref.game.state == step.state, "the referee moved other chips than the rules"
        self._check_phase_of_state()

    @rule(data=st.data())
    def roll_unreadable(self, data):
        """A clear roll of the right number of dice with a face no die has."""
        before = self._before()
        n = self._expected_dice()
        faces = list(self._faces(data, n))
        faces[data.draw(st.integers(0, n - 1))] = data.draw(st.sampled_from(BAD_FACES))
        self._roll(RollObservation(tuple(faces)), before)
        if before["phase"] == "confirm_read":
            self._unchanged(before, phase=False)
            assert self.ref.phase == "await_roll"
        else:
            self._unchanged(before)

    @rule(data=st.data())
    def roll_wrong_count(self, data):
        before = self._before()
        expected = self._expected_dice()
        n = data.draw(st.integers(0, 4).map(lambda k: k if k < expected else k + 1))
        faces = self._faces(data, n)
        self._roll(RollObservation(faces), before)
        if before["phase"] == "roll_off":
            self._unchanged(before)
        elif before["phase"] == "confirm_read":
            self._unchanged(before, phase=False)  # the guess is dropped: the dice were thrown again
            assert self.ref.phase == "await_roll" and self.ref.offered_guess is None
        else:
            self._unchanged(before)

    @rule(data=st.data())
    def roll_unsure(self, data):
        before = self._before()
        expected = self._expected_dice()
        surplus = data.draw(st.sampled_from([0, 0, 0, 1, 2]))
        n = expected + surplus
        faces = self._faces(data, n)
        doubtful = tuple(data.draw(st.permutations(range(n)))[: data.draw(st.integers(0, n))]) if n else ()
        could_be = ()
        if data.draw(st.booleans()) and n:
            # Per die: its face alone, or a few faces it may show (a sure die gets its own face).
            could_be = tuple(
                tuple(data.draw(st.lists(st.sampled_from(PIPS + LCR_FACES[:4]), min_size=2, max_size=3, unique=True)))
                if i in doubtful else (faces[i],)
                for i in range(n)
            )
        message = data.draw(st.sampled_from(["", "the die at the top left is unclear"]))
        obs = RollObservation(faces, "unsure", message=message, doubtful=doubtful, could_be=could_be)
        self._doubtful_roll(obs, before, data)

    @rule(data=st.data())
    def roll_cocked(self, data):
        before = self._before()
        expected = self._expected_dice()
        surplus = data.draw(st.sampled_from([0, 0, 1]))
        n = expected + surplus
        faces = self._faces(data, n)
        doubtful = tuple(range(n - surplus, n)) if surplus else ()
        obs = RollObservation(faces, "cocked", doubtful=doubtful)
        self._doubtful_roll(obs, before, data)

    def _settles(self, obs, expected) -> bool:
        """Does this unsure read settle by its moves (README: 'A doubt that does not change the move
        is not asked')? Only for the rolled number of dice, a doubted die known to be one of 2+ faces."""
        if self.ref.phase == "roll_off" or obs.verdict != "unsure" or len(obs.faces) != expected:
            return False
        if not obs.doubtful or len(obs.could_be) != len(obs.faces):
            return False
        for i in obs.doubtful:
            if len(obs.could_be[i]) < 2:
                return False
            if len({parse_face(f, wild_pip=self.config.effective_wild_pip) for f in obs.could_be[i]}) != 1:
                return False
        return True

    def _settles_roll_off(self, obs) -> bool:
        if obs.verdict != "unsure" or not obs.doubtful or len(obs.could_be) != len(obs.faces):
            return False
        return all(set(obs.could_be[i]) == {"1", "dot"} for i in obs.doubtful)

    def _doubtful_roll(self, obs, before, data):
        expected = self._expected_dice()
        phase = before["phase"]
        if phase in ("await_roll", "confirm_read") and self._settles(obs, expected):
            self._roll(obs, before)
            faces = list(obs.faces)
            for i in obs.doubtful:
                faces[i] = parse_face(obs.could_be[i][0], wild_pip=self.config.effective_wild_pip).value
            self._after_settled_roll(before, tuple(faces), obs)
            self._sync_turns(before)
            return
        if phase == "roll_off" and self._settles_roll_off(obs):
            self._roll(obs, before)
            self._after_settled_roll(before, obs.faces, obs)
            self._sync_turns(before)
            return
        self._roll(obs, before)
        if phase in ("await_roll", "confirm_read"):
            self._unchanged(before, phase=False)
            assert self.ref.phase in ("await_roll", "confirm_read")
            if self.ref.phase == "confirm_read":
                guess = self.ref.offered_guess
                assert guess is not None and len(guess) == self.state.dice_to_roll
                assert set(guess) <= set(obs.faces)
        else:
            self._unchanged(before)
        self._sync_turns(before)

    @rule(verdict=st.sampled_from(["no_dice", "obstructed"]), faces=st.sampled_from([(), ("L",), ("4", "5", "6")]))
    def roll_nothing(self, verdict, faces):
        before = self._before(keeps_words=True)
        out = self.ref.on_roll(RollObservation(faces, verdict))
        assert out == [], "an empty tray or a hand over it is not called, in any phase"
        assert self.ref.offered_guess == before["guess"]
        self._check_words(out, must_speak=False)
        self._unchanged(before)

    # -- buttons -----------------------------------------------------------------------------------

    def _act(self, name, argument=None):
        before = self._before(keeps_words=name in ("repeat", "status", "help"))
        out = self.ref.on_action(name, argument)
        self._check_words(out, must_speak=True)
        return before, out

    @rule()
    def confirm(self):
        before, out = self._act("confirm")
        phase = before["phase"]
        if phase == "confirm_read":
            step = engine.roll(before["state"], before["guess"])
            assert self.ref.game is before["game"] and self.ref.game.state == step.state
            self._check_phase_of_state()
        elif phase == "game_over":
            self._check_confirm_new_game(before)
            self.offs = []
            self.ended = None
        elif phase == "await_decision":
            pass  # a pick (checked below by the invariants) or a request to choose first
        else:
            self._unchanged(before)
        self._sync_turns(before)

    def _check_confirm_new_game(self, before):
        ref = self.ref
        self._check_new_game_first()
        series = before["series_obj"]
        if series is not None and not series.is_over:
            want = series.next_first()
            assert ref.series.to_dict() == before["series"]
        else:
            if series is not None:
                assert ref.series.games == 0 and sum(ref.series.wins) == 0
            first = ref.first_player.strip()
            want = None if first == "roll-off" else (self.config.seat_of(first) if first else 0)
        if want is None:
            assert ref.phase == "roll_off" and ref.game is None
        else:
            assert ref.game.state.first == want

    @rule(argument=st.one_of(st.none(), st.none(), st.sampled_from(NAMES), st.sampled_from(CHOOSE_TYPED)))
    def choose(self, argument):
        self._choose(argument)

    def _choose(self, argument):
        before, out = self._act("choose", argument)
        if before["phase"] != "await_decision":
            self._unchanged(before)
        elif self.ref.phase == "await_decision":
            self._unchanged(before)  # still choosing: a name offered, a first pick, or a refusal
        else:
            # The decision is settled: the chips taken are what the rules take for that choice.
            game = self.ref.game
            action = game.actions[-1]
            assert action.kind == "choose"
            step = engine.choose_victims(before["state"], action.decider, list(action.victims))
            assert game.state == step.state
            assert set(action.victims) <= set(before["state"].pending.eligible)
        self._sync_turns(before)

    @rule()
    def undo(self):
        before, out = self._act("undo")
        ref = self.ref
        if before["phase"] == "await_decision" and before["picked"]:
            # The first of two picks is taken back, not the roll.
            self._unchanged(before)
            assert ref._picked == before["picked"][:-1] and said(out).startswith("Taken back: the chip from")
            return
        if before["can_undo"]:
            assert ref.game is before["game"]
            assert self.turns, "the referee undid a turn the test did not see"
            want = self.turns.pop()
            assert ref.game.state == want, "undo did not restore the chips before the turn"
            assert ref.phase == "await_roll" and ref.offered_guess is None
            if before["phase"] == "game_over" and before["series_obj"] is not None:
                # Undoing the winning roll takes that win off the tally.
                assert ref.series.games == before["series_obj"].games - 1
        elif self.offs and (before["game"] is None or before["state"].rolls == 0):
            # README: undo also takes back a roll-off roll, even the one that decided who starts,
            # until that game's first turn (an unsure first read waiting for confirm is no turn yet).
            assert ref.game is None and ref.phase == "roll_off"
            assert ref.roll_off == self.offs.pop(), "undo did not restore the roll-off before its last roll"
        elif self.ended is not None and before["phase"] in ("await_roll", "confirm_read", "roll_off") and \
                (before["game"] is None or not before["can_undo"]):
            # A long press's new game, taken back: the game it ended goes on where it was.
            game, state, turns = self.ended
            assert ref.game is game and ref.game.state == state
            assert "The new game is taken back" in said(out)
            self.ended, self.offs = None, []
            self._check_phase_of_state()
            self.turns = list(turns)
            return
        else:
            self._unchanged(before)  # nothing to undo
        self._sync_turns(None if ref.game is not before["game"] else before)

    @rule()
    def repeat(self):
        before, out = self._act("repeat")
        self._unchanged(before)
        if self.repeats is not None:
            assert said(out) == self.repeats, "repeat did not say the last announcement again"

    @rule()
    def status(self):
        before, out = self._act("status")
        self._unchanged(before)
        if self.state is not None:
            words = said(out)
            for name, n in zip(self.config.players, self.state.chips):
                assert f"{name} has {chips_words(n)}" in words
            if self.ref.series is not None:
                assert "Games won:" in words

    @rule()
    def help(self):
        before, out = self._act("help")
        self._unchanged(before)

    @rule()
    def new_game(self):
        turns = list(self.turns)
        before, out = self._act("new_game")
        self.offs = []
        keep = before["game"] is not None and (before["can_undo"] or before["phase"] == "game_over")
        if keep:
            self.ended = (before["game"], before["state"], turns)
        # A second press before the new game's first turn keeps the game the first one ended.
        assert ("Undo brings the last one back." in said(out)) == (self.ended is not None)
        ref = self.ref
        self._check_new_game_first()
        if before["phase"] == "game_over":
            self._check_confirm_new_game(before)  # as confirm would
        elif before["game"] is not None:
            # README: a long press starts the game in play over, with the same first player.
            assert ref.game.state.first == before["state"].first
            assert (ref.series.to_dict() if ref.series else None) == before["series"] or before["series_obj"].is_over
        self._sync_turns(None)

    @rule(name=st.sampled_from(["jump", "redo", "", "CONFIRM"]))
    def unknown_action(self, name):
        before = self._before(keeps_words=True)
        try:
            self.ref.on_action(name)
        except UserError:
            pass
        else:
            raise AssertionError(f"unknown action {name!r} was accepted")
        self._unchanged(before)

    @rule()
    def restart(self):
        """A power cut: the saved table, as JSON, is loaded by a fresh referee."""
        before = self._before()
        old = self.ref
        snap = json.loads(json.dumps(old.snapshot()))
        new = Referee.restore(snap)
        out = new.start()
        self.offs = []  # not saved: after a restart a roll-off simply starts again
        self.ended = None  # nor the game a long press ended
        self.ref = new
        self._check_words(out, must_speak=True)
        if before["game"] is None:
            # Saved during a roll-off: it simply starts again.
            assert new.phase == "roll_off" and new.game is None
            assert new.roll_off.round == 1 and new.roll_off.scores == ()
        else:
            assert new.game.state == before["state"]
            assert new.game.actions == before["game"].actions
            assert new.phase == PHASE_AFTER_RESTART.get(before["phase"], before["phase"])
            assert list(new.decision_picks) == before["picked"], "a first Wild pick was lost by a restart"
        assert (new.series.to_dict() if new.series else None) == before["series"]
        assert new.turn_label == old.turn_label
        assert new.first_player == old.first_player
        # Saving the resumed table saves the same table.
        again = new.snapshot()
        if before["game"] is not None:
            assert again["game"] == snap["game"]
            assert again["series_before_win"] == snap["series_before_win"]
        if before["game"] is None or new.game is not None and new.game.state.rolls == 0:
            self.turns = []

    def _check_all(self):
        self.phases_match_the_game()
        self.chips_are_conserved()
        self.the_winner_is_the_one_the_rules_name()
        self.the_series_tally_adds_up()
        self.undo_history_matches_the_game()
        self.the_last_save_holds_the_game_in_play()

    @precondition(lambda self: self.saved is not None)
    @rule()
    def power_cut(self):
        """The realistic restart: the table as saved at the last Checkpoint is loaded."""
        before = self._before()
        new = Referee.restore(json.loads(json.dumps(self.saved)))
        out = new.start()
        self.offs = []
        self.ended = None
        self.ref = new
        self._check_words(out, must_speak=True)
        if before["game"] is not None and new.game is not None:
            assert new.game.state == before["state"], "a change of the game was not saved"
        game = new.game
        self.turns = [] if game is None else [e.before for e in game._entries if e.action.kind == "roll"]

    # -- invariants --------------------------------------------------------------------------------

    def _check_phase_of_state(self):
        ref = self.ref
        state = self.state
        if state.is_over:
            assert ref.phase == "game_over"
        elif state.pending is not None:
            assert ref.phase == "await_decision"
        else:
            assert ref.phase == "await_roll"

    @invariant()
    def phases_match_the_game(self):
        ref = getattr(self, "ref", None)
        if ref is None:
            return
        assert ref.phase in PHASES
        event(f"phase {ref.phase}")
        if ref.series is not None and ref.series.is_over:
            event("series won")
        # The guess stands only while the referee waits for confirm, and then it always stands.
        assert (ref.offered_guess is not None) == (ref.phase == "confirm_read")
        if ref.phase == "roll_off":
            assert ref.game is None and ref.roll_off is not None and ref.roll_off.winner is None
            return
        assert ref.game is not None
        state = ref.game.state
        if ref.phase == "confirm_read":
            assert len(ref.offered_guess) == state.dice_to_roll
            assert state.winner is None and state.pending is None
        else:
            self._check_phase_of_state()
        if ref.phase in ("await_roll", "confirm_read"):
            assert state.chips[state.current] > 0 and 1 <= state.dice_to_roll <= 3

    @invariant()
    def the_last_save_holds_the_game_in_play(self):
        ref = getattr(self, "ref", None)
        if ref is None or ref.game is None or self.saved is None:
            return
        assert self.saved["game"] is not None, "a game in play was never saved"
        assert self.saved["game"]["state"] == json.loads(json.dumps(ref.game.state.to_dict()))
        assert self.saved["series"] == (json.loads(json.dumps(ref.series.to_dict())) if ref.series else None)
        # Found by a review: the first of two Wild picks was not saved, so a power cut asked it again.
        assert self.saved.get("decision_picks", []) == list(ref.decision_picks), "a Wild pick (or its undo) was not saved"

    @invariant()
    def the_last_save_holds_the_roll_off_in_play(self):
        # A roll-off begun at a game's end was not saved (found by a review): a power cut in it brought
        # back the finished game, whose winning roll undo then took back.
        ref = getattr(self, "ref", None)
        if ref is None or ref.phase != "roll_off" or self.saved is None:
            return
        assert self.saved["game"] is None, "a roll-off in play was saved as the game before it"

    @invariant()
    def chips_are_conserved(self):
        ref = getattr(self, "ref", None)
        if ref is None or ref.game is None:
            return
        state = ref.game.state
        assert all(n >= 0 for n in state.chips) and state.pot >= 0
        assert sum(state.chips) + state.pot == self.config.n_players * self.config.starting_chips

    @invariant()
    def the_winner_is_the_one_the_rules_name(self):
        ref = getattr(self, "ref", None)
        if ref is None or ref.game is None:
            return
        state = ref.game.state
        config = self.config
        holders = state.holders
        if state.winner is None:
            if config.last_chip_wins:
                assert holders, "nobody holds a chip, yet the game goes on"
            else:
                assert len(holders) >= 2, "one player holds every chip, yet the game goes on"
            return
        won = [e for e in ref.game.last_events if e.kind == "game_won"]
        assert len(won) == 1 and won[0].seat == state.winner
        reason = won[0].reason
        if reason == "three-wilds":
            assert config.three_wilds == "win"
        elif config.last_chip_wins:
            assert reason == "last-chip" and holders == ()
        else:
            assert reason == "last-holder" and holders == (state.winner,)

    @invariant()
    def the_series_tally_adds_up(self):
        ref = getattr(self, "ref", None)
        if ref is None or ref.series is None:
            return
        series = ref.series
        assert sum(series.wins) == series.games and max(series.wins) <= series.games
        rules = series.rules
        if rules.first_to is not None:
            assert (series.champion is not None) == (max(series.wins) >= rules.first_to)
        if series.champion is not None:
            assert series.wins[series.champion] == max(series.wins)
            assert sorted(series.wins).count(max(series.wins)) == 1
            assert ref.phase == "game_over", "a finished series outside the game that finished it"
        if ref.phase == "game_over":
            # The game just won is on the tally.
            assert series.games >= 1
            assert series.last_winner == ref.game.state.winner and series.last_first == ref.game.state.first

    @invariant()
    def undo_history_matches_the_game(self):
        ref = getattr(self, "ref", None)
        if ref is None or ref.game is None:
            return
        assert len(self.turns) == ref.game.state.rolls


RefereeMachine.TestCase.settings = settings(
    max_examples=int(os.environ.get("LCR_MACHINE_EXAMPLES", "200")),
    stateful_step_count=int(os.environ.get("LCR_MACHINE_STEPS", "50")), deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestRefereeMachine = RefereeMachine.TestCase


# -- defects the machine found (2026-12-03), fixed ----------------------------------------------------


def test_choose_with_a_superscript_digit_is_refused_not_crashed():
    ref = Referee(GameConfig.create(["Ann", "Bob", "Cy"], variant="wild"))
    ref.start()
    ref.on_roll(RollObservation(("W", "dot", "dot")))
    assert ref.phase == "await_decision"
    assert said(ref.on_action("choose", "²"))


@pytest.mark.parametrize("first", ["", "roll-off"])
def test_a_roll_with_a_superscript_digit_is_asked_again_not_crashed(first):
    ref = Referee(GameConfig.create(["Ann", "Bob", "Cy"]), first_player=first)
    ref.start()
    assert said(ref.on_roll(RollObservation(("4", "²", "1"))))


@pytest.mark.parametrize("verdict", ["no_dice", "obstructed"])
def test_an_empty_tray_after_the_winning_roll_is_ignored(verdict):
    ref = Referee(GameConfig.create(["Ann", "Bob", "Cy"]))
    ref.start()
    ref.on_roll(RollObservation(("C", "C", "C")))
    win = said(ref.on_roll(RollObservation(("C", "C", "C"))))
    assert ref.phase == "game_over"
    assert ref.on_roll(RollObservation((), verdict)) == []
    assert said(ref.on_action("repeat")) == win
