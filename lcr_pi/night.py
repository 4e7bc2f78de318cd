"""Assembling a night at the table from the settings: speaker, lights, buttons, keyboard, store, referee.

Every piece that can fail on a real table (a wrong pin, no GPIO chip, no camera, a read-only card)
is reported aloud and in the log, and the night goes on with what works: no LEDs, typed rolls, no saving.
"""

from __future__ import annotations

import logging
import shutil
import sys
import threading
import time
from dataclasses import dataclass, field, replace

from gpiozero.pins.mock import MockFactory

from lcr_pi.errors import UserError
from lcr_pi.inputs import ActionQueue
from lcr_pi.inputs.buttons import TableButtons, button_pins
from lcr_pi.inputs.keyboard import KeyboardInput
from lcr_pi.outputs.lights import TableLights, pin_factory_or_default, render_lights
from lcr_pi.announce import without_leds
from lcr_pi.outputs.speech import PrintSpeaker, make_speaker, voice_or_fallback
from lcr_pi.persist import GameStore
from lcr_pi.referee import Referee
from lcr_pi.settings import Settings
from lcr_pi.stats import odds_for_state, prepare

log = logging.getLogger("lcr_pi.night")


MOCK_SEAT_LEDS = 25  # seat LEDs the terminal draws on the mock board (GPIO 2-26; 27 is the pot's)


class TerminalLights:
    """LEDs drawn in the terminal: real gpiozero LEDs on mock pins, printed after each change."""

    def __init__(self, names, *, stream=None, pin_factory=None, fast: bool = False):
        self.stream = stream or sys.stdout
        self.pin_factory = pin_factory or MockFactory()
        self.timing = dict(blink_on_s=0.02, blink_off_s=0.02, gap_s=0.03, flash_s=0.02, celebrate_s=0.2,
                           attention_s=0.02) if fast else {}
        self._seat_lights(names)

    def _seat_lights(self, names) -> None:
        self.names = list(names)
        # The mock board has the Pi's GPIO 2-27: 25 seats and the pot. A larger table's other seats are
        # drawn without an LED (found by an audit: 26 players failed with "bad pin 28").
        n = min(len(self.names), MOCK_SEAT_LEDS)
        self.lights = TableLights(list(range(2, 2 + n)), 2 + n, pin_factory=self.pin_factory,
                                  names=self.names, **self.timing)

    def reseat(self, names) -> list[str]:
        """New players: drawn LEDs are free, so every seat the mock board holds gets one at once."""
        self.lights.close()
        self._seat_lights(names)
        return self.names[MOCK_SEAT_LEDS:]

    def _draw(self, note: str = "") -> None:
        print(f"  LEDs {render_lights(self.lights, self.names)}{note}", file=self.stream, flush=True)

    def show_turn(self, seat):
        self.lights.show_turn(seat)
        self._draw()

    def show_moves(self, moves, then_turn=None):
        moves = list(moves)
        self.lights.show_moves(moves, then_turn)
        blinks = {}
        for m in moves:
            target = "pot" if m.receiver is None else self.names[m.receiver]
            blinks[target] = blinks.get(target, 0) + 1
        if blinks:
            described = ", ".join(f"{who} x{n}" for who, n in blinks.items())
            print(f"  LEDs blink: {described}", file=self.stream, flush=True)

    def celebrate(self, seat):
        self.lights.celebrate(seat)
        print(f"  LEDs: {self.names[seat]}'s LED flashes to celebrate", file=self.stream, flush=True)

    def attention(self):
        self.lights.attention()

    def off(self):
        self.lights.off()

    def wait_until_idle(self, timeout):
        return self.lights.wait_until_idle(timeout)

    def close(self):
        self.lights.close()


@dataclass
class Night:
    """Everything a night needs, and what was set aside because it failed (``problems``)."""

    settings: Settings
    referee: Referee
    speaker: object
    lights: object
    store: GameStore | None
    actions: ActionQueue
    closers: list = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    buttons: bool = False  # the table's buttons work (so the night's first words say what they do)

    def close(self) -> None:
        for close in reversed(self.closers):
            try:
                close()
            except Exception as exc:  # noqa: BLE001 - closing must go on for the rest
                log.warning("closing: %s", exc)


def make_night_speaker(settings: Settings, *, echo: bool = False, problems: list[str] | None = None):
    """The night's voice. A voice espeak-ng does not know falls back to "en", and an espeak-ng that
    lists no voices at all (installed but broken) to printed words, each named in ``problems`` (said
    at start-up): a table without a screen must hear its game, not a silent exit."""
    engine = settings.speech.engine
    s = settings.speech
    problems = problems if problems is not None else []
    if engine == "print":
        return PrintSpeaker()
    if engine == "espeak-ng" and shutil.which("espeak-ng") is None:
        raise UserError("speech.engine is 'espeak-ng' but espeak-ng is not installed: sudo apt install espeak-ng")
    voice, problem = voice_or_fallback(s.voice)
    if problem:
        problems.append(problem)
    if voice is None:
        return PrintSpeaker()
    return make_speaker(voice, s.rate, s.volume, s.sounds, echo=echo)


def make_lights(settings: Settings, names, problems: list[str], *, terminal_fallback: bool = True):
    """Real LEDs when the settings give pins and this computer has GPIO; else drawn in the terminal."""
    gpio = settings.gpio
    if gpio.enabled and gpio.seat_leds:
        try:
            if gpio.centre_led is None:
                raise UserError("gpio.centre_led is missing: give the pin of the pot's LED")
            seat_leds = list(gpio.seat_leds)[: len(names)]  # more LEDs than players: the first ones
            if len(seat_leds) < len(names):
                # More players than LEDs (the voice setup offers up to 12, the guide wires 6): the
                # LEDs there are light their seats; the rest play by ear and the page.
                without = names[len(seat_leds):]
                problems.append(f"gpio.seat_leds has {len(seat_leds)} pins for {len(names)} players: "
                                f"{without_leds(without, first_seat=len(seat_leds) + 1)}")
            return TableLights(seat_leds, gpio.centre_led, gpio.buzzer, names=list(names))
        except UserError as exc:
            problems.append(f"LEDs are off: {exc}")
    return TerminalLights(names) if terminal_fallback else None


def make_buttons(settings: Settings, names, lights, actions: ActionQueue, problems: list[str],
                 *, pin_factory=None) -> TableButtons | None:
    """The table's buttons, sending into ``actions``; None when there are none or none can work.

    A mistake in one button's pin (a bad name, the pin of an LED, a pin given twice) turns off only the
    buttons it concerns and is added to ``problems``; the others work. A pin the LEDs hold is named with
    the LED's use, whatever spelling of the pin the settings give. What stops every button (no GPIO on
    this computer) is added as "buttons are off: ...".
    """
    pins = button_pins(settings.gpio)
    if not settings.gpio.enabled or not pins:
        return None
    try:
        factory = pin_factory_or_default(pin_factory)
        return TableButtons(pins, on_action=actions.put_action, pin_factory=factory,
                            long_press_s=settings.gpio.long_press_seconds,
                            taken=led_pins(lights, names, factory), on_problem=problems.append)
    except UserError as exc:
        problems.append(f"buttons are off: {exc}")
        return None


def led_pins(lights, names, pin_factory) -> dict[str, str]:
    """The pins real LEDs hold on ``pin_factory``: pin name ("GPIO17") -> use ("seat 1 LED (Ann)").

    Lights drawn in the terminal hold no real pins, so they give nothing.
    """
    if not isinstance(lights, TableLights):
        return {}
    uses = [(f"seat {i + 1} LED" + (f" ({names[i]})" if i < len(names) else ""), led)
            for i, led in enumerate(lights.seats)]
    uses.append(("centre LED", lights.centre))
    if lights.buzzer is not None:
        uses.append(("buzzer", lights.buzzer))
    return {device.pin.info.name: use for use, device in uses
            if device.pin_factory is pin_factory and device.pin is not None}


def open_store(settings: Settings, problems: list[str]) -> GameStore | None:
    try:
        return GameStore(settings.state_dir, evidence_frames=settings.storage.evidence_frames)
    except UserError as exc:
        problems.append(f"the game is not being saved: {exc}")
        return None


def resume_or_new(settings: Settings, store: GameStore | None, problems: list[str], *, new: bool = False,
                  players_remembered: bool = False) -> Referee:
    """The saved game when there is one for these players and rules, else a new night. Its rolls'
    photos are numbered on from those already kept (a new night's first is not ``000001.jpg`` beside
    the last night's ``000350.jpg``, where the ring would drop the new photos first). ``players_remembered``:
    the settings' players are the remembered setup's (power-on applied it), not the file's or the command
    line's."""
    referee = _resume_or_new(settings, store, problems, new=new, players_remembered=players_remembered)
    if store is not None:
        referee.turn_label = max(referee.turn_label, store.newest_evidence_number())
    return referee


def _resume_or_new(settings: Settings, store: GameStore | None, problems: list[str], *, new: bool = False,
                   players_remembered: bool = False) -> Referee:
    config = settings.game_config()
    fresh = Referee(config, series_rules=settings.series_rules(), first_player=settings.game.first_player,
                    odds=odds_for_state)
    if store is None or new:
        if store is not None:
            store.discard()
        return fresh
    try:
        snapshot = store.load()
        if snapshot is None:
            return fresh
        referee = Referee.restore(snapshot, source=str(store.state_path), odds=odds_for_state)
    except UserError as exc:
        problems.append(f"{exc}. {_set_aside(store)} Starting a new game")
        return fresh
    if referee.config != config:
        log.info("saved game was for %s; settings say %s", referee.config, config)
        if _nothing_in_play(referee) or (players_remembered and _players_named_at_table(referee, settings)):
            # No roll made, or a game won outside a series still going, or a table whose players were
            # named at the table: nothing for a person to keep, and nothing to say (found by a review: a
            # plug pulled between remembering players named at the table and saving their new game said
            # "the saved game had other players" at the next start).
            return fresh
        problems.append(f"the saved game had other players or rules, so a new game starts. {_set_aside(store)}")
        return fresh
    referee.follow_settings(series_rules=settings.series_rules(), first_player=settings.game.first_player)
    return referee


def _nothing_in_play(referee: Referee) -> bool:
    """Whether a saved table holds nothing a new game would lose: no game, or one with no roll yet or
    already won, and no series with games won still going."""
    game = referee.game
    game_in_play = game is not None and game.state.rolls > 0 and not game.state.is_over
    series_in_play = referee.series is not None and referee.series.games > 0 and not referee.series.is_over
    return not game_in_play and not series_in_play


def _players_named_at_table(referee: Referee, settings: Settings) -> bool:
    """Whether the saved table is the one the players named at the table (remembered, and played now)
    replaced as it was being saved: a game with no roll yet or won, of the same rules. Its series starts
    over, as the table was told when it named them (found by killing lcr-pi run at random: a plug pulled
    between remembering the players and saving their game, after a game of a series still going, set the
    series aside and said so)."""
    from lcr_pi.voice_setup import load_remembered

    game, config = referee.game, settings.game_config()
    if game is not None and game.state.rolls > 0 and not game.state.is_over:
        return False  # a game in play is never replaced by new players
    remembered, _ = load_remembered(settings.state_dir)
    return (remembered is not None and remembered.names == config.players
            and replace(referee.config, players=config.players) == config)


def _set_aside(store: GameStore) -> str:
    """Keep an unusable save for a person to look at, out of the way of the new game; says where."""
    stamp = int(time.time())
    for n in range(100):
        kept = store.state_path.with_name(f"game-set-aside-{stamp}{f'-{n}' if n else ''}.json")
        if kept.exists():
            continue  # two set aside within a second: keep both
        try:
            store.state_path.rename(kept)
        except OSError as exc:
            return f"It could not be set aside ({exc.strerror}) and will be written over."
        return f"It was kept as {kept}."
    return "It will be written over (too many saves set aside)."


def warm_odds(config) -> None:
    """Solve the exact odds table in the background (half a second for 5 x 3), so that status
    reports answer at once; if the game is too large for it, status uses a quick simulation."""
    threading.Thread(target=prepare, args=(config,), name="odds-warm-up", daemon=True).start()


def assemble(settings: Settings, *, new: bool = False, keyboard: bool = True, echo: bool = False,
             lights=None, players_remembered: bool = False) -> Night:
    problems: list[str] = []
    names = settings.game_config().players
    warm_odds(settings.game_config())
    speaker = make_night_speaker(settings, echo=echo, problems=problems)
    closers = [speaker.close]
    if lights is None:
        lights = make_lights(settings, names, problems)
    if lights is not None and hasattr(lights, "close"):
        closers.append(lights.close)
    store = open_store(settings, problems)
    referee = resume_or_new(settings, store, problems, new=new, players_remembered=players_remembered)
    actions = ActionQueue()
    buttons = make_buttons(settings, names, lights, actions, problems)
    if buttons is not None:
        closers.append(buttons.close)
    if keyboard:
        typed = KeyboardInput(on_action=actions.put_action, players=lambda: referee.config.players,
                              on_error=lambda message: print(message, file=sys.stderr, flush=True))
        closers.append(typed.close)
    return Night(settings, referee, speaker, lights, store, actions, closers, problems, buttons=buttons is not None)
