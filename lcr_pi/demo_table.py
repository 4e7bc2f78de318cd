"""The demo's pretend table: a simulated player throws dice, the renderer films them, the real reader reads.

:class:`RenderedRolls` is a dice source like the camera: the referee loop polls it once per frame. When
the referee is waiting for dice it throws the right number (seeded, so ``--seed`` repeats a night),
renders the frames of the dice tumbling into the tray, and feeds them one by one through the same
settle detector and reader as the real camera. It also acts for the players where buttons are needed
(whom to rob in a Wild game, "next game"; after an unsure read, a player who sees the dice presses
confirm when the referee's guess is what lies in the tray, else the dice are thrown again), and it
keeps score of how often the reader agreed with the dice it threw, so the demo says honestly how well
the reading went.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from lcr_pi.camera_dice import observe
from lcr_pi.referee import RollObservation
from lcr_pi.rules.config import MAX_DICE
from lcr_pi.stats.policy import choose_victims
from lcr_pi.vision.render import roll_sequence
from lcr_pi.vision.settle import SettleDetector

LCR_DIE = ("L", "C", "R", "dot", "dot", "dot")
WILD_DIE = ("L", "C", "R", "W", "dot", "dot")
PIP_DIE = ("1", "2", "3", "4", "5", "6")  # ordinary dice: 1-3 keep, 4 L, 5 C, 6 R (a Wild game's wild_pip is W)


@dataclass
class ReadingScore:
    """How the reader did on the dice the demo threw."""

    rolls: int = 0
    agreed: int = 0
    unsure: int = 0
    confirmed: int = 0  # unsure reads whose offered guess was the dice thrown: a player pressed confirm
    typed: int = 0  # rolls a player typed after the reader stayed unsure
    # Unsure reads the referee took without asking, the doubt only between faces that move chips alike
    # (a 2 or a 3 of ordinary dice) and the moves right; with a wrong move they are counted in ``wrong``.
    settled: int = 0
    wrong: list = field(default_factory=list)  # (thrown, read): read "clear", the right number of dice, wrong faces
    # (thrown, read): read "clear" with another number of dice than thrown. The referee does not act on
    # these (it says how many dice it saw and asks again), but the reader was sure and wrong.
    miscounted: list = field(default_factory=list)


class SimulatedPlayers:
    """The players' part in a demo: roll when asked, and name whom to rob in a Wild game."""

    def __init__(self, referee, actions):
        self.referee = referee
        self.actions = actions
        self.die = WILD_DIE if referee.config.wild else LCR_DIE
        self.exhausted = False
        self._decided_for: object = None

    def _players_act(self) -> bool:
        """Press the buttons the moment calls for; True when the referee now waits for dice."""
        ref = self.referee
        if ref.phase == "game_over":
            self.exhausted = True
            return False
        if ref.phase == "await_decision":
            state = ref.game.state
            if self._decided_for is not state:  # once per decision; the loop handles the presses next
                self._decided_for = state
                for victim in choose_victims(state.chips, state.pending.seat, state.pending.take):
                    self.actions.put(("choose", ref.config.players[victim]))
            return False
        return True

    def _dice_wanted(self) -> int:
        ref = self.referee
        return MAX_DICE if ref.phase == "roll_off" else ref.game.state.dice_to_roll


class TypedRolls(SimulatedPlayers):
    """The computer as a typist: random faces for every roll (``lcr-pi demo --typed``)."""

    def __init__(self, referee, rng, actions):
        super().__init__(referee, actions)
        self.rng = rng

    def poll(self):
        if not self._players_act():
            return None
        return RollObservation(tuple(self.rng.choice(self.die) for _ in range(self._dice_wanted())),
                               source="keyboard")


class RenderedRolls(SimulatedPlayers):
    """A dice source that throws and films dice whenever the referee waits for a roll."""

    #: After this many unsure reads of one turn's dice, the player types the roll instead, as a
    #: player at a real table would after a couple of re-rolls.
    TYPE_AFTER_UNSURE = 3

    def __init__(self, referee, reader, rng: np.random.Generator, *, wild: bool, actions,
                 size=(640, 480), frames_per_roll: int = 10, on_throw=None, table_seed: int | None = None,
                 preset: str | None = None, ordinary_dice: bool = False, read=None, pool: str = "holdout"):
        """``table_seed``: film every throw on one table (camera, tray, light and where the dice
        come to rest drawn from this seed; only the faces differ), as a calibrated table is;
        by default each throw gets a new table. ``preset``: a named look of the renderer.
        ``ordinary_dice``: throw pip dice instead of LCR (or Wild) dice. ``read``: how a settled frame
        is read (``read(frame)``, as :class:`~lcr_pi.camera_dice.CameraDice` reads it); by default the
        reader, told the kind of dice thrown. ``pool``: the renderer's dice designs; by default its
        holdout pool, designs the reader's models never trained on, so that what the demo says of the
        reading is what a table with dice of its own can expect, not how well the models learnt the
        dice they were trained on."""
        super().__init__(referee, actions)
        self._unsure_in_a_row = 0
        self.reader = reader
        self.rng = rng
        self.wild = wild
        self.kind = "pip" if ordinary_dice else "wild" if wild else "lcr"  # the dice thrown
        if ordinary_dice:
            self.die = PIP_DIE
        self.read = read or (lambda frame: reader.read(frame, dice_kind=self.kind))
        self.size = size
        self.table_seed = table_seed
        self.preset = preset
        self.pool = pool
        self.frames_per_roll = frames_per_roll
        self.on_throw = on_throw
        self.settle = SettleDetector()
        self.frames: list[np.ndarray] = []
        self.thrown: tuple[str, ...] = ()
        self.score = ReadingScore()
        self._confirmed: object = None

    def poll(self):
        if not self.frames:
            if self._confirm_a_right_guess():
                return None
            if self._players_act():
                if self._unsure_in_a_row >= self.TYPE_AFTER_UNSURE:
                    return self._type_it()
                self._throw()
            return None
        frame = self.frames.pop(0)
        update = self.settle.update(frame)
        if update.state != "settled":
            return None
        self.frames.clear()  # the rest of this throw's frames show the same dice at rest
        reading = self.read(update.frame)
        seen = observe(reading, update.frame)
        self._score(reading, seen)
        return seen

    def _confirm_a_right_guess(self) -> bool:
        """After an unsure read, a player who sees the dice presses confirm when the guess the referee
        offers is what lies in the tray (True: the press is on its way); otherwise the dice are
        thrown again. The demo's dice always come to rest flat (its filmed throws never lean a die), so
        a right guess is also right about a die the reader thought might be leaning."""
        guess = self.referee.offered_guess
        if guess is None or sorted(guess) != sorted(self.thrown):
            return False
        if self._confirmed is not guess:  # once per offer; the loop handles the press next
            self._confirmed = guess
            self._unsure_in_a_row = 0  # this turn's roll is settled
            self.score.confirmed += 1
            self.actions.put(("confirm", None))
        return True

    def _throw(self) -> None:
        self.thrown = tuple(str(self.rng.choice(self.die)) for _ in range(self._dice_wanted()))
        film = self.rng if self.table_seed is None else np.random.default_rng(self.table_seed)
        frames, _ = roll_sequence(film, size=self.size, faces=list(self.thrown), kind=self.kind,
                                  n_frames=self.frames_per_roll, preset=self.preset, pool=self.pool)
        self.frames = list(frames)
        # A rendered throw may be filmed over a new tray by a new camera, so the settle detector starts
        # afresh: against the last tray the whole view would look changed (like a hand in the way).
        self.settle = SettleDetector()
        if self.on_throw:
            self.on_throw(self.thrown)

    def _counted(self, faces) -> list:
        """The faces as the rules count them now, sorted (:meth:`~lcr_pi.referee.Referee.counted_as`)."""
        return sorted(self.referee.counted_as(f) for f in faces)

    def _type_it(self) -> RollObservation:
        self._unsure_in_a_row = 0
        self.score.typed += 1
        faces = tuple(str(self.rng.choice(self.die)) for _ in range(self._dice_wanted()))
        return RollObservation(faces, source="keyboard")

    def _score(self, reading, seen: RollObservation) -> None:
        self.score.rolls += 1
        if reading.verdict != "clear":
            self.score.unsure += 1
            taken = self.referee.taken_as(seen)
            if taken.verdict == "clear" and len(taken.faces) == len(self.thrown):
                # Such a roll is played without a press: counted apart, or the demo's summary (agreed,
                # confirmed, typed) does not add up to the rolls played.
                self._unsure_in_a_row = 0
                if self._counted(taken.faces) == self._counted(self.thrown):
                    self.score.settled += 1
                else:
                    self.score.wrong.append((self.thrown, tuple(taken.faces)))
                return
            self._unsure_in_a_row += 1
            return
        self._unsure_in_a_row = 0
        if sorted(reading.faces) == sorted(self.thrown):
            self.score.agreed += 1
        elif len(reading.faces) != len(self.thrown):
            self.score.miscounted.append((self.thrown, tuple(reading.faces)))
        else:
            self.score.wrong.append((self.thrown, tuple(reading.faces)))
