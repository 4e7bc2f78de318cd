"""Whole games, end to end: rendered frames -> settle -> the real reader -> the referee -> real speech
(espeak-ng writing WAV files) and real gpiozero LEDs on the mock pin factory; a crash mid-game, the
resume, and an undo."""

import wave

import numpy as np
import pytest

from lcr_pi.demo_table import RenderedRolls
from lcr_pi.inputs import ActionQueue
from lcr_pi.outputs.lights import TableLights
from lcr_pi.outputs.speech import EspeakSpeaker
from lcr_pi.persist import GameStore
from lcr_pi.referee import Prompt, Referee, RollObservation
from lcr_pi.rules import Game, GameConfig
from lcr_pi.table import Table, run_loop
from lcr_pi.vision.reader import DiceReader

SEAT_PINS, CENTRE_PIN = [17, 27, 22], 23


@pytest.fixture(scope="module")
def reader():
    return DiceReader()


@pytest.fixture
def pins(factory):
    return factory


class StopAfter:
    """A dice source that stops the loop once the game has ``rolls`` rolls: the plug is pulled."""

    def __init__(self, source, referee, rolls):
        self.source, self.referee, self.rolls = source, referee, rolls

    @property
    def exhausted(self):
        return self.referee.game.state.rolls >= self.rolls

    def poll(self):
        return None if self.exhausted else self.source.poll()


class AtMost:
    """Ends the loop after ``polls`` polls: a guard against a game that never ends, counted in frames
    rather than seconds so that a slow machine (a Pi, an emulator) runs the same test."""

    def __init__(self, source, polls):
        self.source, self.left = source, polls

    @property
    def exhausted(self):
        return self.left <= 0 or getattr(self.source, "exhausted", False)

    def poll(self):
        self.left -= 1
        return None if self.left < 0 else self.source.poll()


def night(tmp_path, reader, pins, seed, *, variant="classic", referee=None, stop_after=None, **filming):
    config = GameConfig.create(["Ann", "Bob", "Cy"], variant=variant)
    store = GameStore(tmp_path / "state")
    if referee is None:
        snapshot = store.load()
        referee = Referee.restore(snapshot) if snapshot else Referee(config)
    speaker = EspeakSpeaker(rate_wpm=450, output_dir=tmp_path / f"speech-{seed}", sounds=False)
    lights = TableLights(SEAT_PINS, CENTRE_PIN, pin_factory=pins, blink_on_s=0.001, blink_off_s=0.001,
                         gap_s=0.001, flash_s=0.001, celebrate_s=0.01, attention_s=0.001)
    actions = ActionQueue()
    rolls = RenderedRolls(referee, reader, np.random.default_rng(seed), wild=config.wild, actions=actions,
                          frames_per_roll=10, **filming)
    table = Table(referee, speaker=speaker, lights=lights, store=store)
    said, prompts = [], set()
    table.listeners.append(lambda outputs, _: said.extend(o.text for o in outputs if hasattr(o, "text")))
    table.listeners.append(lambda outputs, _: prompts.update(o.text for o in outputs if isinstance(o, Prompt)))
    source = rolls if stop_after is None else StopAfter(rolls, referee, stop_after)
    run_loop(table, actions=actions, dice_source=AtMost(source, 20_000))
    assert speaker.wait_until_idle(60)
    speaker.close()
    lights.wait_until_idle(5)
    lit = [pins.pin(p).state for p in SEAT_PINS]
    lights.close()
    return referee, rolls, said, tmp_path / f"speech-{seed}", lit, store, Spoken(speaker.spoken, prompts)


class Spoken:
    """What the speaker said of the sentences announced: all of them, but the Wild questions (prompts)
    that a pick answered before their turn came, which the table drops (or cuts while being said)."""

    def __init__(self, sentences, prompts):
        self.sentences, self.prompts = list(sentences), frozenset(prompts)

    def unsaid(self, announced):
        """The sentences announced that were not spoken; those spoken must be announced, in that order."""
        heard, left = 0, []
        for text in announced:
            if heard < len(self.sentences) and self.sentences[heard] == text:
                heard += 1
            else:
                left.append(text)
        assert heard == len(self.sentences), f"spoken, not announced in this order: {self.sentences[heard:]!r}"
        return left


def replayed(referee):
    """The state a fresh game of the same rules reaches from the rolls and choices the referee played,
    through the rules engine's public moves: the chips moved as the rules say for the faces announced."""
    replay = Game(referee.config)
    for action in referee.game.actions:
        if action.kind == "roll":
            replay.roll(action.faces)
        else:
            replay.choose(action.decider, action.victims)
    return replay.state


def wav_seconds(path):
    with wave.open(str(path)) as w:
        return w.getnframes() / w.getframerate()


@pytest.mark.parametrize("variant, seed", [("classic", 1), ("wild", 2)])
def test_whole_games_from_frames_with_speech_and_leds(tmp_path, reader, pins, variant, seed):
    referee, rolls, said, speech_dir, lit, store, spoken = night(tmp_path, reader, pins, seed, variant=variant)
    state = referee.game.state
    assert state.is_over and referee.phase == "game_over"
    # Never a wrong call as a fact: every read the referee acted on matched the dice thrown.
    assert rolls.score.wrong == []
    # The camera path really decided turns (the reader's accuracy itself is measured by
    # tests/vision/test_accuracy_floor.py); an unsure read was confirmed by a player who saw its guess
    # was right, or thrown again, and typed after repeated doubt, as at a real table.
    assert rolls.score.agreed >= 3
    assert rolls.score.agreed + rolls.score.confirmed + rolls.score.typed + rolls.score.settled == state.rolls
    assert rolls.score.confirmed >= 1  # the confirm offer was taken (measured: 8 of 8 unsure reads, and 2 of 2)
    # The chips moved exactly as the rules say for the faces that were announced.
    assert replayed(referee) == state
    winner = referee.config.players[state.winner]
    assert any(line.startswith(f"{winner} ") and "wins the pot" in line for line in said)
    # Real speech: every sentence announced is spoken, in order, but a question made stale before it was
    # said (a Wild question the pick, made at once by the pretend player, answered; an unsure read's
    # guess when the dice were thrown again); one WAV per sentence spoken (numbered in the order
    # spoken), each as long as its words need, but a question cut while it was said, which leaves none.
    assert all(text in spoken.prompts for text in spoken.unsaid(said))
    files = {int(path.stem): path for path in speech_dir.glob("*.wav")}
    assert set(files) <= set(range(1, len(spoken.sentences) + 1))
    for number, text in enumerate(spoken.sentences, start=1):
        if number not in files:
            assert text in spoken.prompts, f"no WAV for {text!r}"
        elif text not in spoken.prompts:
            assert 0.1 < wav_seconds(files[number]) < 0.6 + 0.12 * len(text.split())
    # The winner's LED is the one left lit after the celebration.
    assert lit == [i == state.winner for i in range(3)]
    assert [r["what"] for r in store.read_log()][-1] == "turn"


def test_a_whole_game_read_through_the_tray_calibration(tmp_path, reader, pins):
    """One table, calibrated as ``lcr-pi calibrate`` does (the tray found in the empty-tray picture,
    the die size from the reader's reading of a roll, the empty tray kept as a reference); every
    roll of the game is filmed on it and read through the calibrated reader."""
    from lcr_pi.vision.calibration import CalibratedReader, make_calibration
    from lcr_pi.vision.render import roll_sequence

    table_seed, preset = 11, "felt-table"
    frames, _ = roll_sequence(np.random.default_rng(table_seed), size=(640, 480), faces=["L", "C", "R"], kind="lcr",
                              n_frames=10, preset=preset, empty_frames=1)
    empty, first_roll = frames[0], frames[-1]
    calibration = make_calibration(empty, reading=reader.read(first_roll, dice_kind="lcr"))
    assert calibration.die_px and not reader.read(empty, dice_kind="lcr").dice
    calibrated = CalibratedReader(reader, calibration, empty)
    referee, rolls, said, *_ = night(tmp_path, calibrated, pins, 3, table_seed=table_seed, preset=preset)
    state = referee.game.state
    assert state.is_over and rolls.score.wrong == []
    assert rolls.score.agreed >= 3 and rolls.score.agreed + rolls.score.confirmed + rolls.score.typed + rolls.score.settled == state.rolls
    assert any("wins the pot" in line for line in said)


def test_crash_mid_game_resume_and_undo(tmp_path, reader, pins):
    referee, _, said, *_ = night(tmp_path, reader, pins, 5, stop_after=4)
    before = referee.game.state
    assert not before.is_over and before.rolls == 4
    # Power cut: nothing in memory survives. The next start resumes from the files alone.
    again = Referee.restore(GameStore(tmp_path / "state").load())
    assert again.game.state == before
    speaker_words = []

    class Words:
        def say(self, text):
            speaker_words.append(text)

        def cue(self, sound): ...

    table = Table(again, speaker=Words(), store=GameStore(tmp_path / "state"))
    table.start()
    assert speaker_words[0] == "Welcome back. The game goes on where it stopped."
    table.action("undo")
    assert again.game.state.rolls == before.rolls - 1
    assert speaker_words[-1].startswith("Roll ")
    # A misread corrected: the player types the true roll, and the game goes on to the end.
    n = again.game.state.dice_to_roll
    table.roll_seen(RollObservation(tuple(["dot"] * n), source="keyboard"))
    assert again.game.state.rolls == before.rolls
    referee, rolls, *_ = night(tmp_path, reader, pins, 6)
    assert referee.game.state.is_over and rolls.score.wrong == []


@pytest.mark.parametrize("ordinary_dice", [True, False])
def test_a_wild_game_with_the_dice_left_to_the_reader_from_frames(tmp_path, reader, pins, ordinary_dice):
    """Wild rules on ordinary dice (a one is a W) or on Wild dice, the dice kind left to the reader as
    a night's ``dice = "auto"`` leaves it: every throw filmed and read as ``lcr-pi run`` reads it
    (:class:`~lcr_pi.camera_dice.WildGameDice`), the game played to its end without a wrong call."""
    from lcr_pi.camera_dice import WildGameDice

    read = WildGameDice(reader.read, wild_pip=1)
    referee, rolls, said, *_ = night(tmp_path, reader, pins, 3, variant="wild", ordinary_dice=ordinary_dice, read=read)
    state = referee.game.state
    assert state.is_over and rolls.score.wrong == [] and read.kind == ("pip" if ordinary_dice else "wild")
    assert rolls.score.agreed >= 3 and rolls.score.agreed + rolls.score.confirmed + rolls.score.typed + rolls.score.settled == state.rolls
    # The chips moved as the rules say for the faces announced, and the ones thrown were played as W.
    assert replayed(referee) == state
    if ordinary_dice:  # the ones thrown were played as W
        ones = [a.faces for a in referee.game.actions if a.kind == "roll" and "1" in a.faces]
        assert ones and any(line.startswith(("Wild!", "Three W")) or " rolled W" in line for line in said)
