"""Table buttons on gpiozero: confirm (or next), undo, repeat, status, choose; a long press starts anew.

Buttons are wired between a GPIO pin and ground, using the Pi's internal pull-up (gpiozero's default),
so a pressed button reads low. Most buttons act when pressed. The long-press button (confirm, unless
configured otherwise) must wait for the release to know which was meant: a short press is its own
action, holding it for ``long_press_s`` is "new_game" and nothing else. Choose (unless it is the
long-press button) waits too: held as long, it is "choose_back", the name before in a Wild decision (at
a big table a player who pressed once too often need not go round again), the option before in the
voice setup.

A pin mistake in the settings costs only the buttons it concerns when an ``on_problem`` callback is
given (the night at the table does this): for a player who cannot see the screen the buttons are the way
to confirm, undo and repeat, so a wrong undo pin must not also silence confirm.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping

from gpiozero import Button

from lcr_pi.errors import UserError
from lcr_pi.inputs import ActionQueue
from lcr_pi.outputs.lights import PinSpec, make_device, pin_factory_or_default, resolve_pins

#: Button name in the config -> the action it sends. "next" is another name for "confirm".
BUTTON_ACTIONS = {
    "confirm": "confirm",
    "next": "confirm",
    "undo": "undo",
    "repeat": "repeat",
    "status": "status",
    "choose": "choose",
}

LONG_PRESS_LOST = "and so is the long press that starts a new game"


class TableButtons:
    """gpiozero Buttons that send actions to ``on_action(name)`` (by default into ``self.actions``).

    ``on_action`` is called on gpiozero's threads: give it something thread-safe, such as
    :meth:`ActionQueue.put_action`.

    ``taken`` maps pins already in use elsewhere (canonical names such as "GPIO17", as
    :func:`~lcr_pi.outputs.lights.resolve_pins` takes them) to their use ("seat 1 LED (Ann)"), so a
    button on an LED's pin is named as a clash, whatever spelling of the pin the settings use.

    Without ``on_problem`` any mistake raises a :class:`UserError` and no button is made. With it, a
    mistake in one button's pin (a bad pin name, a pin taken by an LED, a pin gpiozero refuses) turns off
    that button only: ``on_problem`` gets one sentence ("the undo button is off: pin GPIO17 is used twice:
    for the seat 1 LED (Ann) and for the undo button (given as 17)"), the other buttons work, and
    ``self.off`` lists the buttons that were turned off. The long press is not moved to another button
    when its button is lost: holding undo or repeat is something a player may do on purpose, and a new
    game nobody asked for is worse than no long press; the sentence says that the long press is gone too
    (a new game can still be started from the keyboard or the scoreboard page). Likewise a long-press
    button without a pin is said, and the other buttons work. Two buttons given the same pin are both
    turned off: which of them is wired there is not known, and a press that sends another button's action
    (confirm for undo) would be worse than none. Mistakes that are not about one button's pin (an unknown
    button name, no pins at all, bad timings) raise in both modes.
    """

    def __init__(
        self,
        pins: Mapping[str, PinSpec],
        *,
        on_action: Callable[[str], None] | None = None,
        pin_factory=None,
        long_press_s: float = 2.0,
        long_press_button: str = "confirm",
        bounce_time: float | None = 0.05,
        taken: Mapping[str, str] | None = None,
        on_problem: Callable[[str], None] | None = None,
    ):
        unknown = [name for name in pins if name not in BUTTON_ACTIONS]
        if unknown:
            raise UserError(
                f"unknown button {unknown[0]!r}: the buttons are {', '.join(BUTTON_ACTIONS)}"
            )
        if not pins:
            raise UserError(f"no button pins given: name at least one of {', '.join(BUTTON_ACTIONS)}")
        if "confirm" in pins and "next" in pins:
            raise UserError("give a pin for 'confirm' or for 'next' (two names for the same button), not both")
        if long_press_button == "confirm" and "next" in pins:
            long_press_button = "next"
        no_long_press = None
        if long_press_button not in pins:
            no_long_press = (f"the long-press button {long_press_button!r} has no pin: buttons with pins are "
                             f"{', '.join(pins)}")
            if on_problem is None:
                raise UserError(no_long_press)
        if isinstance(long_press_s, bool) or not isinstance(long_press_s, int | float) or long_press_s <= 0:
            raise UserError(f"long press time must be more than 0 seconds, got {long_press_s!r}")
        if bounce_time is not None and not 0 <= bounce_time < long_press_s:
            raise UserError(f"button bounce time must be 0 to {long_press_s} seconds, got {bounce_time!r}")

        self.actions = ActionQueue()
        self.on_action = on_action or self.actions.put_action
        self.long_press_s = long_press_s
        self.buttons: dict[str, Button] = {}
        #: What was said to ``on_problem``, in order (only with it; without it a mistake raised).
        self.problems: list[str] = []
        #: Each button turned off by a mistake in its pin -> the sentence said about it.
        self.off_because: dict[str, str] = {}
        factory = pin_factory_or_default(pin_factory)
        resolved, mistakes = check_button_pins(pins, factory, taken)
        if mistakes and on_problem is None:
            raise UserError(mistakes[0][1])

        def say(sentence: str) -> None:
            self.problems.append(sentence)
            on_problem(sentence)

        def lose(names: list[str], reason: str) -> None:
            sentence = off_sentence(names, reason, long_press=long_press_button in names)
            self.off_because.update(dict.fromkeys(names, sentence))
            say(sentence)

        if no_long_press is not None:
            say(f"no button starts a new game with a long press: {no_long_press}")
        for names, reason in mistakes:
            lose(names, reason)
        try:
            for name, pin in resolved.items():
                use = f"{name} button"
                try:
                    self.buttons[name] = make_device(
                        Button, pin, use, factory, bounce_time=bounce_time, hold_time=long_press_s
                    )
                except UserError as exc:
                    if on_problem is None:
                        raise
                    lose([name], str(exc))
        except UserError:
            self.close()
            raise
        for name, button in self.buttons.items():
            action = BUTTON_ACTIONS[name]
            if name == long_press_button:
                self._wire_long_press(button, action)
            elif name == "choose":
                self._wire_long_press(button, action, long_action="choose_back")
            else:
                button.when_pressed = lambda action=action: self.on_action(action)

    def _wire_long_press(self, button: Button, short_action: str, long_action: str = "new_game") -> None:
        held = threading.Event()  # set by gpiozero's hold thread, read by its event thread

        def pressed() -> None:
            held.clear()

        def long_press() -> None:
            held.set()
            self.on_action(long_action)

        def released() -> None:
            if not held.is_set():
                self.on_action(short_action)

        button.when_pressed = pressed
        button.when_held = long_press
        button.when_released = released

    @property
    def off(self) -> list[str]:
        """Buttons turned off by a mistake in their pin, in the order they were found."""
        return list(self.off_because)

    def close(self) -> None:
        for button in getattr(self, "buttons", {}).values():
            button.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def button_pins(gpio) -> dict[str, PinSpec]:
    """The button pins given in the settings' ``[gpio]`` section: button name -> pin, the unset left out."""
    pins = {
        "confirm": gpio.confirm_button,
        "undo": gpio.undo_button,
        "repeat": gpio.repeat_button,
        "status": gpio.status_button,
        "choose": gpio.choose_button,
    }
    return {name: pin for name, pin in pins.items() if pin is not None}


def check_button_pins(
    pins: Mapping[str, PinSpec], pin_factory, taken: Mapping[str, str] | None = None
) -> tuple[dict[str, str], list[tuple[list[str], str]]]:
    """Each button's pin, checked on its own: (button -> canonical pin for the good ones, mistakes).

    A mistake is (the buttons it turns off, why), in the order of the buttons: a bad pin name, a pin in
    ``taken`` (pin -> its use), or one pin given for several buttons (all of them are named).

    >>> from gpiozero.pins.mock import MockFactory
    >>> pins = {"confirm": 5, "undo": 17, "repeat": 13, "status": "BOARD33", "choose": "GPIO99"}
    >>> good, mistakes = check_button_pins(pins, MockFactory(), taken={"GPIO17": "seat 1 LED (Ann)"})
    >>> good
    {'confirm': 'GPIO5'}
    >>> for names, why in mistakes:
    ...     print(names, why.split(";")[0])
    ['undo'] pin GPIO17 is used twice: for the seat 1 LED (Ann) and for the undo button (given as 17)
    ['repeat', 'status'] pin GPIO13 is used twice: for the repeat button (given as 13) and for the status button (given as 'BOARD33')
    ['choose'] bad pin 'GPIO99' for the choose button: GPIO99 is not a valid pin name
    """
    resolved: dict[str, str] = {}
    found: list[tuple[int, list[str], str]] = []  # (position of the first button named, names, why)
    order = {name: i for i, name in enumerate(pins)}
    for name, spec in pins.items():
        use = f"{name} button"
        try:
            resolved[name] = resolve_pins({use: spec}, pin_factory, taken)[use]
        except UserError as exc:
            found.append((order[name], [name], str(exc)))
    by_pin: dict[str, list[str]] = {}
    for name, pin in resolved.items():
        by_pin.setdefault(pin, []).append(name)
    for pin, names in by_pin.items():
        if len(names) > 1:
            times = "twice" if len(names) == 2 else f"{len(names)} times"
            uses = [f"for the {name} button (given as {pins[name]!r})" for name in names]
            why = f"pin {pin} is used {times}: {', '.join(uses[:-1])} and {uses[-1]}"
            found.append((order[names[0]], names, why))
            for name in names:
                del resolved[name]
    found.sort(key=lambda mistake: mistake[0])
    return resolved, [(names, why) for _, names, why in found]


def off_sentence(names: list[str], reason: str, *, long_press: bool = False) -> str:
    """What is said about buttons turned off by a mistake.

    >>> off_sentence(["undo"], "bad pin 77 for the undo button")
    'the undo button is off: bad pin 77 for the undo button'
    >>> off_sentence(["confirm", "undo"], "pin GPIO5 is used twice", long_press=True)
    'the confirm and undo buttons are off, and so is the long press that starts a new game: pin GPIO5 is used twice'
    """
    which = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    subject = f"the {which} button is off" if len(names) == 1 else f"the {which} buttons are off"
    return f"{subject}{', ' + LONG_PRESS_LOST if long_press else ''}: {reason}"
