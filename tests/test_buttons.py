"""Buttons on gpiozero MockFactory pins, and the keyboard's commands, all into one action queue."""

from __future__ import annotations

import io
import queue
import threading
import time

import pytest
from gpiozero import LED

from lcr_pi.errors import UserError
from lcr_pi.inputs import ActionQueue
from lcr_pi.inputs.buttons import TableButtons
from lcr_pi.inputs.keyboard import KeyboardInput, parse_command

PINS = {"confirm": 5, "undo": 6, "repeat": 13, "status": 19, "choose": 26}
LONG = 0.15  # long press for the tests, in seconds


@pytest.fixture
def buttons(factory):
    with TableButtons(PINS, long_press_s=LONG, bounce_time=None) as buttons:
        yield buttons


def press(factory, number) -> None:
    """Buttons are wired to ground with the internal pull-up: pressed reads low."""
    factory.pin(number).drive_low()
    factory.pin(number).drive_high()


def drain(actions: queue.Queue) -> list:
    out = []
    while (item := actions.poll()) is not None:
        out.append(item)
    return out


def test_buttons_use_the_pull_up_so_an_idle_button_reads_high(buttons, factory):
    for number in PINS.values():
        assert factory.pin(number).pull == "up" and factory.pin(number).state
    assert not any(button.is_pressed for button in buttons.buttons.values())


def test_each_press_queues_its_action_in_order(buttons, factory):
    for name in ("undo", "repeat", "status", "choose", "choose", "confirm"):
        press(factory, PINS[name])
    assert drain(buttons.actions) == [
        ("undo", None), ("repeat", None), ("status", None), ("choose", None), ("choose", None), ("confirm", None)
    ]


def test_actions_fire_on_press_except_the_long_press_button_which_waits_for_release(buttons, factory):
    factory.pin(PINS["undo"]).drive_low()
    assert drain(buttons.actions) == [("undo", None)]
    factory.pin(PINS["confirm"]).drive_low()
    assert drain(buttons.actions) == []  # not yet known: a short press or a long one?
    factory.pin(PINS["confirm"]).drive_high()
    assert drain(buttons.actions) == [("confirm", None)]
    factory.pin(PINS["undo"]).drive_high()
    assert drain(buttons.actions) == []


def test_holding_confirm_starts_a_new_game_and_nothing_else(buttons, factory):
    pin = factory.pin(PINS["confirm"])
    pin.drive_low()
    assert buttons.actions.get(timeout=5) == ("new_game", None)  # fired while still held
    time.sleep(LONG * 2)  # holding on does not repeat it
    pin.drive_high()
    assert drain(buttons.actions) == []  # and the release is not also a confirm
    press(factory, PINS["confirm"])  # the next short press is an ordinary confirm again
    assert drain(buttons.actions) == [("confirm", None)]


def test_a_press_shorter_than_the_long_press_is_a_confirm(factory):
    with TableButtons(PINS, long_press_s=0.5) as buttons:  # ample margin for a busy machine
        pin = factory.pin(PINS["confirm"])
        pin.drive_low()
        time.sleep(0.05)
        pin.drive_high()
        time.sleep(0.7)  # the hold thread must not fire after the release
        assert drain(buttons.actions) == [("confirm", None)]


def test_next_is_confirm_and_another_button_can_carry_the_long_press(factory):
    with TableButtons({"next": 5, "undo": 6}, long_press_s=LONG, long_press_button="undo") as buttons:
        press(factory, 5)
        factory.pin(6).drive_low()
        assert buttons.actions.get(timeout=5) == ("confirm", None)
        assert buttons.actions.get(timeout=5) == ("new_game", None)
        factory.pin(6).drive_high()
        press(factory, 6)
        assert drain(buttons.actions) == [("undo", None)]


def test_callbacks_from_gpiozero_threads_reach_a_shared_queue(factory):
    actions = ActionQueue()
    seen_threads = set()

    def on_action(name, arg=None):
        seen_threads.add(threading.current_thread().name)
        actions.put_action(name, arg)

    with TableButtons({"confirm": 5, "status": 6}, on_action=on_action, long_press_s=LONG):
        press(factory, 6)
        factory.pin(5).drive_low()
        assert actions.get(timeout=5) == ("status", None)
        assert actions.get(timeout=5) == ("new_game", None)
        factory.pin(5).drive_high()
    assert len(seen_threads) == 2  # the long press came from gpiozero's hold thread


@pytest.mark.parametrize(
    "pins, options, message",
    [
        ({"confirm": 5, "jump": 6}, {}, "unknown button 'jump': the buttons are confirm, next, undo"),
        ({}, {}, "no button pins given"),
        ({"confirm": 5, "next": 6}, {}, "give a pin for 'confirm' or for 'next'"),
        ({"undo": 6}, {}, "the long-press button 'confirm' has no pin: buttons with pins are undo"),
        ({"confirm": 5, "undo": "GPIO5"}, {},
         r"pin GPIO5 is used twice: for the confirm button \(given as 5\) and for the undo button \(given as 'GPIO5'\)"),
        ({"confirm": "BOARD1"}, {}, r"bad pin 'BOARD1' for the confirm button: BOARD1 is not a GPIO pin"),
        ({"confirm": 77}, {}, "bad pin 77 for the confirm button"),
        ({"confirm": 5}, {"long_press_s": 0}, "long press time must be more than 0 seconds, got 0"),
    ],
)
def test_bad_button_settings_are_named(factory, pins, options, message):
    with pytest.raises(UserError, match=message):
        TableButtons(pins, **options)


def test_a_button_on_an_led_pin_is_refused_by_name(factory):
    led = LED(5)
    try:
        with pytest.raises(UserError, match="cannot use pin GPIO5 for the confirm button: pin GPIO5 is already in use"):
            TableButtons({"undo": 6, "confirm": 5})
        TableButtons({"undo": 6}, long_press_button="undo").close()  # the failed attempt released pin 6
    finally:
        led.close()



# -- one bad pin costs only its own button (with on_problem) ---------------------------------------------


def test_a_button_on_an_led_pin_is_named_by_both_uses_and_only_that_button_is_off(factory):
    led = LED(17)
    problems = []
    try:
        # "BOARD11" is GPIO17 too: the clash is found by pin, not by spelling
        with TableButtons({"confirm": 5, "undo": "BOARD11", "repeat": 13}, long_press_s=LONG, bounce_time=None,
                          taken={"GPIO17": "seat 1 LED (Ann)"}, on_problem=problems.append) as buttons:
            assert problems == ["the undo button is off: pin GPIO17 is used twice: for the seat 1 LED (Ann) "
                                "and for the undo button (given as 'BOARD11')"]
            assert set(buttons.buttons) == {"confirm", "repeat"} and buttons.off == ["undo"]
            press(factory, 5)
            press(factory, 13)
            assert drain(buttons.actions) == [("confirm", None), ("repeat", None)]
            factory.pin(5).drive_low()  # the long press still starts a new game
            assert buttons.actions.get(timeout=5) == ("new_game", None)
            factory.pin(5).drive_high()
            led.on()
            led.off()  # the LED keeps its pin, and no button listens on it
            assert factory.pin(17).function == "output" and drain(buttons.actions) == []
    finally:
        led.close()


def test_without_on_problem_a_clash_with_a_taken_pin_still_raises_and_frees_the_other_pins(factory):
    with pytest.raises(UserError, match=r"^pin GPIO17 is used twice: for the seat 1 LED \(Ann\) and for the undo "
                                        r"button \(given as 17\)$"):
        TableButtons({"confirm": 5, "undo": 17}, taken={"GPIO17": "seat 1 LED (Ann)"})
    TableButtons({"confirm": 5}).close()


def test_an_invalid_pin_name_loses_only_that_button(factory):
    problems = []
    with TableButtons({"confirm": 5, "undo": 6, "status": "GPIO99"}, long_press_s=LONG, bounce_time=None,
                      on_problem=problems.append) as buttons:
        [problem] = problems
        assert problem.startswith("the status button is off: bad pin 'GPIO99' for the status button: ")
        assert set(buttons.buttons) == {"confirm", "undo"} and buttons.off == ["status"]
        press(factory, 6)
        press(factory, 5)
        assert drain(buttons.actions) == [("undo", None), ("confirm", None)]


def test_losing_the_long_press_button_says_the_long_press_is_lost_and_does_not_move_it(factory):
    problems = []
    with TableButtons({"confirm": "J8:1", "undo": 6, "repeat": 13}, long_press_s=LONG, bounce_time=None,
                      on_problem=problems.append) as buttons:
        [problem] = problems
        assert problem.startswith("the confirm button is off, and so is the long press that starts a new game: "
                                  "bad pin 'J8:1' for the confirm button")
        pin = factory.pin(6)
        pin.drive_low()
        assert buttons.actions.get(timeout=5) == ("undo", None)  # undo still acts on the press
        time.sleep(LONG * 3)  # and holding it is only undo
        pin.drive_high()
        assert drain(buttons.actions) == []


def test_two_buttons_on_one_pin_are_both_off_and_the_others_work(factory):
    problems = []
    with TableButtons({"confirm": 5, "undo": 6, "repeat": "GPIO6", "status": 19}, long_press_s=LONG,
                      bounce_time=None, on_problem=problems.append) as buttons:
        assert problems == ["the undo and repeat buttons are off: pin GPIO6 is used twice: for the undo button "
                            "(given as 6) and for the repeat button (given as 'GPIO6')"]
        assert set(buttons.buttons) == {"confirm", "status"} and buttons.off == ["undo", "repeat"]
        press(factory, 6)  # neither undo nor repeat: which one is wired there is not known
        press(factory, 19)
        assert drain(buttons.actions) == [("status", None)]


def test_a_pin_gpiozero_refuses_loses_only_that_button(factory):
    led = LED(6)  # held by something that did not say so in ``taken``
    problems = []
    try:
        with TableButtons({"confirm": 5, "undo": 6}, long_press_s=LONG, bounce_time=None,
                          on_problem=problems.append) as buttons:
            [problem] = problems
            assert problem.startswith("the undo button is off: cannot use pin GPIO6 for the undo button: ")
            assert set(buttons.buttons) == {"confirm"}
            press(factory, 5)
            assert drain(buttons.actions) == [("confirm", None)]
    finally:
        led.close()


def test_a_long_press_button_without_a_pin_is_said_and_the_others_work(factory):
    problems = []
    with TableButtons({"undo": 6}, bounce_time=None, on_problem=problems.append) as buttons:
        assert problems == ["no button starts a new game with a long press: the long-press button 'confirm' has "
                            "no pin: buttons with pins are undo"]
        press(factory, 6)
        assert drain(buttons.actions) == [("undo", None)]


def test_mistakes_that_are_not_about_one_pin_still_raise_with_on_problem(factory):
    with pytest.raises(UserError, match="unknown button 'jump'"):
        TableButtons({"confirm": 5, "jump": 6}, on_problem=print)
    with pytest.raises(UserError, match="long press time must be more than 0 seconds"):
        TableButtons({"confirm": 5}, long_press_s=0, on_problem=print)

# -- the keyboard ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line, expected",
    [
        ("L . C", ("roll", "L . C")),
        ("  4   1 6 ", ("roll", "4 1 6")),
        ("l,c,r", ("roll", "l,c,r")),
        ("dot dot W", ("roll", "dot dot W")),
        ("R", ("roll", "R")),
        ("", ("confirm", None)),
        ("   ", ("confirm", None)),
        ("confirm", ("confirm", None)),
        ("OK", ("confirm", None)),
        ("undo", ("undo", None)),
        ("Repeat", ("repeat", None)),
        ("status", ("status", None)),
        ("new", ("new_game", None)),
        ("new game", ("new_game", None)),
        ("choose", ("choose", None)),
        ("choose 2", ("choose", "2")),
        ("choose cy", ("choose", "Cy")),
        ("cy", ("choose", "Cy")),
        ("Mary Ann", ("choose", "Mary Ann")),
        ("help", ("help", None)),
        ("quit", ("quit", None)),
    ],
)
def test_typed_commands(line, expected):
    assert parse_command(line, players=["Ann", "Cy", "Mary Ann"]) == expected


@pytest.mark.parametrize(
    "line, message",
    [
        ("jump", "unknown command 'jump': type a roll such as 'L . C' or '4 1 6', confirm .* undo, repeat, "
                 "status, new .* quit"),
        ("L . X", r"not a roll: 'L . X': unknown face 'X'"),
        ("4 1 9", "not a roll: '4 1 9': unknown face '9': a die shows 1 to 6 pips"),
        ("undo it", "'undo' takes nothing after it"),
        ("choose Zed", "no player named 'Zed': choose one of Ann, Cy"),
        ("Zed", "unknown command 'Zed'"),
    ],
)
def test_typed_mistakes_are_named(line, message):
    with pytest.raises(UserError, match=message):
        parse_command(line, players=["Ann", "Cy"])


def test_keyboard_lines_become_queued_actions_and_mistakes_are_reported():
    errors = []
    keyboard = KeyboardInput(io.StringIO("L . C\n\nfly\nundo\nchoose Cy\n"), players=["Ann", "Cy"],
                             on_error=errors.append)
    assert keyboard.join(5)
    assert drain(keyboard.actions) == [("roll", "L . C"), ("confirm", None), ("undo", None), ("choose", "Cy")]
    assert len(errors) == 1 and errors[0].startswith("unknown command 'fly'")


def test_a_typed_superscript_digit_is_a_mistake_and_typing_goes_on():
    # Found by a property test (2026-12-03): "4 ² 1" ('²'.isdigit(), but int() refuses it) ended the
    # keyboard thread, and every later line was ignored.
    errors = []
    keyboard = KeyboardInput(io.StringIO("4 ² 1\nchoose ²\nundo\nstatus\n"), players=["Ann", "Cy"],
                             on_error=errors.append)
    assert keyboard.join(5)
    assert drain(keyboard.actions) == [("undo", None), ("status", None)]
    assert len(errors) == 2 and "'²'" in errors[0]


def test_keyboard_and_buttons_share_one_queue_and_the_end_of_a_pipe_does_not_quit(factory):
    actions = ActionQueue()
    read_end, write_end = _pipe()
    with TableButtons({"confirm": 5, "undo": 6}, on_action=actions.put_action, long_press_s=LONG):
        keyboard = KeyboardInput(read_end, on_action=actions.put_action)
        write_end.write("4 1 6\n")
        write_end.flush()
        assert actions.get(timeout=5) == ("roll", "4 1 6")
        press(factory, 6)
        write_end.write("status\n")
        write_end.close()
        assert keyboard.join(5)
    assert drain(actions) == [("undo", None), ("status", None)]  # no "quit" at the end of a non-terminal


def test_end_of_a_terminal_means_quit():
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    keyboard = KeyboardInput(Terminal("status\n"))
    assert keyboard.join(5)
    assert drain(keyboard.actions) == [("status", None), ("quit", None)]


def _pipe():
    import os

    read_fd, write_fd = os.pipe()
    return os.fdopen(read_fd, "r"), os.fdopen(write_fd, "w")


def test_holding_choose_steps_back_and_a_short_press_waits_for_the_release(buttons, factory):
    pin = factory.pin(PINS["choose"])
    pin.drive_low()
    assert drain(buttons.actions) == []  # not yet known: a short press or a long one?
    pin.drive_high()
    assert drain(buttons.actions) == [("choose", None)]
    pin.drive_low()
    assert buttons.actions.get(timeout=5) == ("choose_back", None)  # fired while still held
    time.sleep(LONG * 2)
    pin.drive_high()
    assert drain(buttons.actions) == []  # the release is not also a choose


def test_choose_as_the_long_press_button_starts_a_new_game_and_has_no_step_back(factory):
    with TableButtons({"choose": 5, "undo": 6}, long_press_s=LONG, long_press_button="choose") as buttons:
        factory.pin(5).drive_low()
        assert buttons.actions.get(timeout=5) == ("new_game", None)
        factory.pin(5).drive_high()
        assert drain(buttons.actions) == []


def test_choose_back_is_typed_unless_a_player_is_called_back():
    assert parse_command("choose back") == ("choose_back", None)
    assert parse_command("Choose  BACK", players=["Ann", "Bob"]) == ("choose_back", None)
    assert parse_command("choose back", players=["Ann", "Back"]) == ("choose", "Back")
