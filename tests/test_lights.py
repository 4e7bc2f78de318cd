"""Seat LEDs: the real gpiozero LED and Buzzer on MockFactory pins; the tests read the pin timelines."""

from __future__ import annotations

import pytest
from gpiozero import Button
from gpiozero.pins.mock import MockFactory

from lcr_pi.errors import UserError
from lcr_pi.outputs.lights import TableLights, render_lights
from lcr_pi.rules.events import ChipMove

SEATS = [17, 27, 22, 5]
CENTRE, BUZZER = 23, 24
ON, OFF, GAP, FLASH = 0.03, 0.03, 0.06, 0.02  # short blinks keep the tests fast
LOW, HIGH = False, True


@pytest.fixture
def lights(factory):
    with TableLights(SEATS, CENTRE, BUZZER, blink_on_s=ON, blink_off_s=OFF, gap_s=GAP, flash_s=FLASH,
                     celebrate_s=0.2, attention_s=0.03) as lights:
        yield lights


def pin(factory, number):
    return factory.pin(number)


def timeline(mock_pin) -> list[tuple[float, bool]]:
    """(monotonic time, state) of each change, from MockPin.states (which stores gaps between changes)."""
    gaps = [s.timestamp for s in mock_pin.states]
    t = mock_pin._last_change - sum(gaps)
    out = []
    for gap, state in zip(gaps, (s.state for s in mock_pin.states)):
        t += gap
        out.append((t, bool(state)))
    return out


def on_periods(mock_pin) -> list[tuple[float, float]]:
    """(start, end) of each time the pin was high; end is None while it still is."""
    changes = timeline(mock_pin)[1:]
    periods, start = [], None
    for t, state in changes:
        if state and start is None:
            start = t
        elif not state and start is not None:
            periods.append((start, t))
            start = None
    if start is not None:
        periods.append((start, None))
    return periods


def clear(factory):
    for number in (*SEATS, CENTRE, BUZZER):
        factory.pin(number).clear_states()


def test_show_turn_lights_only_that_seat(lights, factory):
    lights.show_turn(0)
    lights.show_turn(2)
    pin(factory, 17).assert_states([LOW, HIGH, LOW])
    pin(factory, 22).assert_states([LOW, HIGH])
    for other in (27, 5, CENTRE, BUZZER):
        pin(factory, other).assert_states([LOW])
    lights.off()
    pin(factory, 22).assert_states([LOW, HIGH, LOW])


def test_moves_blink_the_receiver_per_chip_then_the_pot_then_light_the_next_player(lights, factory):
    lights.show_turn(0)
    moves = [ChipMove("L", 0, 1), ChipMove("C", 0, None), ChipMove("L", 0, 1)]  # Ann rolled L, C, L
    lights.show_moves(moves, then_turn=1)
    assert not lights.wait_until_idle(0)  # show_moves returned while the sequence still plays
    assert lights.wait_until_idle(10)

    pin(factory, 17).assert_states([LOW, HIGH, LOW])  # Ann's turn ended as the sequence began
    pin(factory, 27).assert_states([LOW, HIGH, LOW, HIGH, LOW, HIGH])  # Bob: two chips, then his turn
    pin(factory, CENTRE).assert_states([LOW, HIGH, LOW])  # one C
    for other in (22, 5, BUZZER):
        pin(factory, other).assert_states([LOW])

    bob, pot = on_periods(pin(factory, 27)), on_periods(pin(factory, CENTRE))
    (first, second, turn), (pot_blink,) = bob, pot
    assert first[1] <= second[0] < second[1] <= pot_blink[0] < pot_blink[1] <= turn[0]  # one at a time
    assert turn[1] is None  # Bob's LED stays lit for his turn
    for start, end in (first, second, pot_blink):
        assert ON * 0.9 <= end - start < ON + 0.3  # each blink is one on_time (generous: a busy machine)
    assert pot_blink[0] - second[1] >= OFF + GAP * 0.9  # a pause before the next receiver blinks
    assert turn[0] - pot_blink[1] >= OFF + GAP * 0.9


def test_a_steal_blinks_the_thief_and_a_quiet_roll_just_passes_the_turn(lights, factory):
    lights.show_moves([ChipMove("W", 2, 0), ChipMove("W", 3, 0)], then_turn=1)  # seat 0 took two chips
    assert lights.wait_until_idle(10)
    pin(factory, 17).assert_states([LOW, HIGH, LOW, HIGH, LOW])
    pin(factory, 27).assert_states([LOW, HIGH])
    clear(factory)
    lights.show_moves([], then_turn=2)  # dot, dot, dot
    assert lights.wait_until_idle(10)
    pin(factory, 27).assert_states([HIGH, LOW])
    pin(factory, 22).assert_states([LOW, HIGH])
    pin(factory, CENTRE).assert_states([LOW])


def test_a_new_command_cuts_the_running_sequence(lights, factory):
    lights.show_moves([ChipMove("R", 0, 3)] * 3 + [ChipMove("C", 0, None)], then_turn=1)
    lights.show_turn(2)  # e.g. an undo before the blinks finished
    assert lights.wait_until_idle(10)
    pin(factory, 22).assert_states([LOW, HIGH])
    assert [state for _, state in timeline(pin(factory, 5))][-1] is LOW
    pin(factory, CENTRE).assert_states([LOW])  # the pot's blink never started
    pin(factory, 27).assert_states([LOW])  # nor was the cancelled next turn shown


def test_the_winner_celebrates_with_the_buzzer_then_stays_lit(lights, factory):
    lights.show_turn(3)
    lights.celebrate(2)
    assert lights.wait_until_idle(10)
    flashes = on_periods(pin(factory, 22))
    assert len(flashes) == 5 + 1  # 0.2 s of 0.02 s flashes, then steady
    assert flashes[-1][1] is None
    assert all(FLASH * 0.9 <= end - start < FLASH + 0.3 for start, end in flashes[:-1])
    beeps = on_periods(pin(factory, BUZZER))
    assert len(beeps) == 3 and all(end is not None for _, end in beeps)
    pin(factory, 5).assert_states([LOW, HIGH, LOW])


def test_attention_blinks_everything_twice_and_restores_the_turn(lights, factory):
    lights.show_turn(1)
    clear(factory)
    lights.attention()
    assert lights.wait_until_idle(10)
    pin(factory, 27).assert_states([HIGH, LOW, HIGH, LOW, HIGH, LOW, HIGH])  # off, 2 blinks, lit again
    for other in (17, 22, 5, CENTRE):
        pin(factory, other).assert_states([LOW, HIGH, LOW, HIGH, LOW])
    pin(factory, BUZZER).assert_states([LOW])


def test_lights_render_in_the_terminal(lights):
    lights.show_turn(1)
    assert render_lights(lights, ["Ann", "Bob", "Cy", "Dee"]) == "[Ann ○ ][Bob ● ][Cy ○ ][Dee ○ ][pot ○ ]"
    lights.centre.on()
    lights.buzzer.on()
    assert render_lights(lights, ["Ann", "Bob", "Cy", "Dee"]).endswith("[pot ● ][♪]")
    with pytest.raises(ValueError, match="3 names for 4 seat LEDs"):
        render_lights(lights, ["Ann", "Bob", "Cy"])


def test_an_explicit_pin_factory_is_used():
    factory = MockFactory()
    with TableLights(["GPIO17", "BOARD13"], "J8:15", pin_factory=factory) as lights:
        lights.show_turn(1)
        assert factory.pin(27).state and not factory.pin(17).state and not factory.pin(22).state


@pytest.mark.parametrize(
    "seats, centre, buzzer, message",
    [
        ([17, 27, 99], 23, None, r"bad pin 99 for the seat 3 LED \(Cy\): 99 is not a valid pin name; use a BCM GPIO number"),
        ([17, 27, 22], "BOARD6", None, r"bad pin 'BOARD6' for the centre LED: BOARD6 is not a GPIO pin"),
        ([17, "banana", 22], 23, None, r"bad pin 'banana' for the seat 2 LED \(Bob\)"),
        ([17, 27, 22], "BOARD11", None,
         r"pin GPIO17 is used twice: for the seat 1 LED \(Ann\) \(given as 17\) and for the centre LED "
         r"\(given as 'BOARD11'\)"),
        ([17, 27, 22], 23, 27, r"pin GPIO27 is used twice: for the seat 2 LED \(Bob\) .* and for the buzzer"),
        ([17, 27, 22], 23, 1.5, r"pin for the buzzer must be a number or a name, got 1.5"),
    ],
)
def test_bad_pins_are_named_with_their_use(factory, seats, centre, buzzer, message):
    with pytest.raises(UserError, match=message):
        TableLights(seats, centre, buzzer, names=["Ann", "Bob", "Cy"])
    TableLights([17, 27, 22], 23).close()  # nothing was left reserved by the failed attempt


def test_a_pin_held_by_another_device_is_named(factory):
    button = Button(23)
    try:
        with pytest.raises(UserError, match=r"cannot use pin GPIO23 for the centre LED: pin GPIO23 is already in use"):
            TableLights([17, 27], 23)
        TableLights([17, 27], 22).close()  # the seat LEDs of the failed attempt were released
    finally:
        button.close()


def test_bad_counts_and_timings_are_refused(factory):
    with pytest.raises(UserError, match="at least two seats"):
        TableLights([17], 23)
    with pytest.raises(UserError, match="3 seat LED pins for 2 players"):
        TableLights([17, 27, 22], 23, names=["Ann", "Bob"])
    with pytest.raises(UserError, match="blink_on_s must be more than 0 seconds, got 0"):
        TableLights([17, 27], 23, blink_on_s=0)


def test_more_players_than_seat_leds_light_the_leds_there_are(factory):
    # Found by an audit (2026-12-03): seven players with the guide's six seat LEDs turned every LED
    # off, the centre's too.
    from lcr_pi.night import make_lights
    from lcr_pi.settings import parse_settings

    names = ["Ann", "Bob", "Cy", "Di", "Ed", "Flo", "Gus"]
    settings = parse_settings("[gpio]\nenabled = true\nseat_leds = [17, 27, 22, 5, 6, 13]\ncentre_led = 23\n")
    problems = []
    lights = make_lights(settings, names, problems, terminal_fallback=False)
    try:
        assert isinstance(lights, TableLights) and len(lights.seats) == 6
        assert problems == ["gpio.seat_leds has 6 pins for 7 players: Gus has no LED"]
        lights.show_turn(6)  # Gus: no LED to light, none left lit
        assert not any(led.is_lit for led in lights.seats)
        lights.show_turn(2)
        assert lights.seats[2].is_lit
        lights.show_moves([ChipMove("L", 6, 0), ChipMove("C", 6, None)], then_turn=0)  # to Ann and the pot
        assert lights.wait_until_idle(10) and lights.seats[0].is_lit
        lights.celebrate(6)
        assert lights.wait_until_idle(10) and lights.centre.is_lit  # Gus won: the pot's LED shows it
        with pytest.raises(ValueError, match="no seat 7"):
            lights.show_turn(7)
    finally:
        lights.close()


def test_twenty_players_at_six_seat_leds_are_told_by_seat_not_name_by_name(factory):
    # A big table at the wiring guide's six LEDs named the 14 players past the last one (2026-12-05).
    from lcr_pi.night import make_lights
    from lcr_pi.settings import parse_settings

    names = [f"Player {n}" for n in range(1, 21)]
    settings = parse_settings("[gpio]\nenabled = true\nseat_leds = [17, 27, 22, 5, 6, 13]\ncentre_led = 23\n")
    problems = []
    lights = make_lights(settings, names, problems, terminal_fallback=False)
    try:
        assert problems == ["gpio.seat_leds has 6 pins for 20 players: "
                            "the 14 players in seats 7 (Player 7) to 20 (Player 20) have no LED"]
        lights.show_turn(6)  # seat 7: no LED to light
        assert not any(led.is_lit for led in lights.seats)
    finally:
        lights.close()


def test_without_a_pin_library_the_message_names_each_one_tried_and_nothing_else_is_printed(monkeypatch, recwarn):
    # Found 2026-12-04: on a laptop, lcr-pi doctor printed four gpiozero warnings before its own sentence.
    import warnings

    from gpiozero import Device
    from gpiozero.exc import BadPinFactory, PinFactoryFallback

    from lcr_pi.outputs.lights import pin_factory_or_default

    def no_gpio():
        warnings.warn(PinFactoryFallback("Falling back from lgpio: No module named 'lgpio'"))
        warnings.warn(PinFactoryFallback("Falling back from native: unable to locate Pi revision"))
        raise BadPinFactory("Unable to load any default pin factory!")

    monkeypatch.setattr(Device, "pin_factory", None)
    monkeypatch.setattr(Device, "ensure_pin_factory", staticmethod(no_gpio))
    with pytest.raises(UserError) as error:
        pin_factory_or_default()
    assert str(error.value).startswith("cannot drive GPIO pins on this computer (lgpio: No module named 'lgpio'; "
                                       "native: unable to locate Pi revision); on a Raspberry Pi")
    assert not [w for w in recwarn if issubclass(w.category, PinFactoryFallback)]
