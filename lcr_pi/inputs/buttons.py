"""Table buttons on gpiozero: confirm (or next), undo, repeat, status, choose; a long press starts anew.

Buttons are wired between a GPIO pin and ground, using the Pi's internal pull-up (gpiozero's default),
so a pressed button reads low. Most buttons act when pressed. The long-press button (confirm, unless
configured otherwise) must wait for the release to know which was meant: a short press is its own
action, holding it for ``long_press_s`` is "new_game" and nothing else.
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


class TableButtons:
    """gpiozero Buttons that send actions to ``on_action(name)`` (by default into ``self.actions``).

    ``on_action`` is called on gpiozero's threads: give it something thread-safe, such as
    :meth:`ActionQueue.put_action`.
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
        if long_press_button not in pins:
            raise UserError(
                f"the long-press button {long_press_button!r} has no pin: buttons with pins are {', '.join(pins)}"
            )
        if isinstance(long_press_s, bool) or not isinstance(long_press_s, int | float) or long_press_s <= 0:
            raise UserError(f"long press time must be more than 0 seconds, got {long_press_s!r}")
        if bounce_time is not None and not 0 <= bounce_time < long_press_s:
            raise UserError(f"button bounce time must be 0 to {long_press_s} seconds, got {bounce_time!r}")

        self.actions = ActionQueue()
        self.on_action = on_action or self.actions.put_action
        self.long_press_s = long_press_s
        factory = pin_factory_or_default(pin_factory)
        resolved = resolve_pins({f"{name} button": spec for name, spec in pins.items()}, factory)
        self.buttons: dict[str, Button] = {}
        try:
            for name in pins:
                use = f"{name} button"
                self.buttons[name] = make_device(
                    Button, resolved[use], use, factory, bounce_time=bounce_time, hold_time=long_press_s
                )
        except UserError:
            self.close()
            raise
        for name, button in self.buttons.items():
            action = BUTTON_ACTIONS[name]
            if name == long_press_button:
                self._wire_long_press(button, action)
            else:
                button.when_pressed = lambda action=action: self.on_action(action)

    def _wire_long_press(self, button: Button, short_action: str) -> None:
        held = threading.Event()  # set by gpiozero's hold thread, read by its event thread

        def pressed() -> None:
            held.clear()

        def long_press() -> None:
            held.set()
            self.on_action("new_game")

        def released() -> None:
            if not held.is_set():
                self.on_action(short_action)

        button.when_pressed = pressed
        button.when_held = long_press
        button.when_released = released

    def close(self) -> None:
        for button in getattr(self, "buttons", {}).values():
            button.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
