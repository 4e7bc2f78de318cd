"""Seat LEDs on gpiozero: whose turn it is, where the chips went, who won.

One LED sits in front of each seat and one by the pot. The current player's LED is lit; after a roll the
LED of each player who receives chips blinks once per chip, and the pot's once per C, one after another,
then the next player's LED lights. Sequences play on a small worker thread so the camera loop never
waits for them, and any new command (the next turn, an undo) cuts the running sequence short.

The worker switches the LEDs itself, step by step, rather than starting gpiozero's own blink threads:
then one receiver's last blink has surely ended before the next one's first, even on a busy Pi.

Tests and the laptop demo drive the same code on gpiozero's MockFactory; :func:`render_lights` draws the
mock LEDs in the terminal.
"""

from __future__ import annotations

import logging
import threading
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence

from gpiozero import LED, Buzzer, Device
from gpiozero.exc import BadPinFactory, GPIOZeroError, PinFactoryFallback, PinInvalidPin

from lcr_pi.errors import UserError
from lcr_pi.rules.events import ChipMove

log = logging.getLogger("lcr_pi.lights")

PinSpec = int | str

PIN_HELP = "use a BCM GPIO number such as 17, or a name such as 'GPIO17', 'BOARD11' or 'J8:11'"


def pin_factory_or_default(pin_factory=None):
    """The factory to use: the given one, else gpiozero's default (explained if this computer has none)."""
    if pin_factory is not None:
        return pin_factory
    # gpiozero warns once for each pin library it cannot load before the one it uses (lgpio missing,
    # then RPi.GPIO...): on a laptop four tracebacks-like warnings came before the sentence that says
    # what to do (found 2026-12-04 in lcr-pi doctor's output). They go to the log, and name what was
    # tried when none loads.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PinFactoryFallback)
        try:
            Device.ensure_pin_factory()
            failure = None
        except (BadPinFactory, ImportError, OSError) as exc:
            failure = exc
    tried = []
    for warning in caught:
        if issubclass(warning.category, PinFactoryFallback):
            log.info("GPIO: %s", warning.message)
            tried.append(str(warning.message).removeprefix("Falling back from "))
        else:
            warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    if failure is not None:
        reasons = "; ".join(tried) if tried else str(failure)
        raise UserError(
            f"cannot drive GPIO pins on this computer ({reasons}); on a Raspberry Pi, the user running lcr-pi "
            "must be in the gpio group (sudo usermod -aG gpio,video,audio lcr-pi, then restart) and python3-lgpio "
            "installed; on a laptop run `lcr-pi demo`, or set GPIOZERO_PIN_FACTORY=mock to try with simulated pins"
        ) from None
    return Device.pin_factory


def resolve_pins(uses: Mapping[str, PinSpec], pin_factory, taken: Mapping[str, str] | None = None) -> dict[str, str]:
    """Check pins before any device is made: ``uses`` maps a use ("seat 1 LED (Ann)") to a pin spec.

    Returns use -> canonical pin name ("GPIO17"). Different spellings of one pin (17, "GPIO17",
    "BOARD11") are caught as the same pin; ``taken`` (pin -> use) holds pins already in use elsewhere.

    >>> from gpiozero.pins.mock import MockFactory
    >>> resolve_pins({"seat 1 LED": 17, "centre LED": "GPIO27"}, MockFactory())
    {'seat 1 LED': 'GPIO17', 'centre LED': 'GPIO27'}
    >>> resolve_pins({"seat 1 LED": 17, "centre LED": "BOARD11"}, MockFactory())
    Traceback (most recent call last):
    lcr_pi.errors.UserError: pin GPIO17 is used twice: for the seat 1 LED (given as 17) and for the centre LED (given as 'BOARD11')
    """
    owner: dict[str, tuple[str, PinSpec | None]] = {pin: (use, None) for pin, use in (taken or {}).items()}
    resolved: dict[str, str] = {}
    for use, spec in uses.items():
        if isinstance(spec, bool) or not isinstance(spec, int | str):
            raise UserError(f"pin for the {use} must be a number or a name, got {spec!r}: {PIN_HELP}")
        try:
            pin = pin_factory.board_info.to_gpio(spec)
        except (PinInvalidPin, ValueError) as exc:
            raise UserError(f"bad pin {spec!r} for the {use}: {exc}; {PIN_HELP}") from None
        if pin in owner:
            other, other_spec = owner[pin]
            given = f" (given as {other_spec!r})" if other_spec is not None else ""
            raise UserError(
                f"pin {pin} is used twice: for the {other}{given} and for the {use} (given as {spec!r})"
            )
        owner[pin] = (use, spec)
        resolved[use] = pin
    return resolved


def make_device(cls: Callable, pin: str, use: str, pin_factory, **options):
    """Construct a gpiozero device, turning its errors into a UserError naming the use."""
    try:
        return cls(pin, pin_factory=pin_factory, **options)
    except GPIOZeroError as exc:
        raise UserError(f"cannot use pin {pin} for the {use}: {exc}") from None


class TableLights:
    """One LED per seat (in seat order), one for the pot, and an optional buzzer.

    Timings are in seconds; tests shorten them. ``names`` label the pins in error messages; there may
    be more names than seat LEDs (a table of eight with six LEDs wired): the seats past the last LED
    have none, and what would light theirs lights nothing.
    """

    def __init__(
        self,
        seat_pins: Sequence[PinSpec],
        centre_pin: PinSpec,
        buzzer_pin: PinSpec | None = None,
        *,
        pin_factory=None,
        names: Sequence[str] | None = None,
        blink_on_s: float = 0.3,
        blink_off_s: float = 0.3,
        gap_s: float = 0.6,
        flash_s: float = 0.08,
        celebrate_s: float = 3.0,
        attention_s: float = 0.25,
    ):
        if len(seat_pins) < 2:
            raise UserError(f"need an LED pin for each of at least two seats, got {list(seat_pins)!r}")
        if names is not None and len(names) < len(seat_pins):
            raise UserError(f"{len(seat_pins)} seat LED pins for {len(names)} players: give one pin per seat")
        for label, value in (("blink_on_s", blink_on_s), ("blink_off_s", blink_off_s), ("gap_s", gap_s),
                             ("flash_s", flash_s), ("celebrate_s", celebrate_s), ("attention_s", attention_s)):
            if not value > 0:
                raise UserError(f"LED timing {label} must be more than 0 seconds, got {value!r}")
        self.timing = dict(on=blink_on_s, off=blink_off_s, gap=gap_s, flash=flash_s,
                           celebrate=celebrate_s, attention=attention_s)
        factory = pin_factory_or_default(pin_factory)
        uses = {
            f"seat {i + 1} LED" + (f" ({names[i]})" if names else ""): spec for i, spec in enumerate(seat_pins)
        }
        uses["centre LED"] = centre_pin
        if buzzer_pin is not None:
            uses["buzzer"] = buzzer_pin
        pins = resolve_pins(uses, factory)
        self._devices = []
        try:
            for use, pin in pins.items():
                cls = Buzzer if use == "buzzer" else LED
                self._devices.append(make_device(cls, pin, use, factory))
        except UserError:
            self.close()
            raise
        self.seats: list[LED] = self._devices[: len(seat_pins)]
        self.n_seats = len(names) if names is not None else len(seat_pins)
        self.centre: LED = self._devices[len(seat_pins)]
        self.buzzer: Buzzer | None = self._devices[-1] if buzzer_pin is not None else None
        self._lock = threading.Lock()
        self._cancel = threading.Event()
        self._sequence: threading.Thread | None = None
        self._steady: LED | None = None  # lit between sequences: the current player's (or winner's) LED

    # -- commands: each returns at once and replaces whatever was showing --------------------------------

    def show_turn(self, seat: int | None) -> None:
        """Light ``seat``'s LED steadily, all others off (None, or a seat without an LED: all off)."""
        led = self._seat(seat) if seat is not None else None
        with self._lock:
            self._interrupt()
            self._steady = led
            if led is not None:
                led.on()

    def show_moves(self, moves: Iterable[ChipMove], then_turn: int | None) -> None:
        """Blink each receiver once per chip it got (the pot once per C), then light ``then_turn``'s LED.

        Receivers blink in the order they first appear in ``moves`` (die order), with a pause between
        them so a watcher can count.
        """
        counts: dict[LED, int] = {}
        for move in moves:
            led = self.centre if move.receiver is None else self._seat(move.receiver)
            if led is not None:
                counts[led] = counts.get(led, 0) + 1
        next_led = self._seat(then_turn) if then_turn is not None else None
        t = self.timing
        steps: list[tuple[Callable[[], None], float]] = []
        for led, n in counts.items():
            steps += [(led.on, t["on"]), (led.off, t["off"])] * n
            steps.append((_nothing, t["gap"]))
        self._play(steps, steady=next_led)

    def celebrate(self, seat: int) -> None:
        """The winner's LED flashes fast for a few seconds (the buzzer beeps with the first three), then
        stays lit."""
        winner = self._seat(seat) or self.centre  # a winner without an LED: the pot's flashes
        t = self.timing
        flashes = max(1, round(t["celebrate"] / (2 * t["flash"])))
        steps: list[tuple[Callable[[], None], float]] = []
        for i in range(flashes):
            devices = [winner, self.buzzer] if self.buzzer is not None and i < 3 else [winner]
            steps += [(_switch(devices, True), t["flash"]), (_switch(devices, False), t["flash"])]
        self._play(steps, steady=winner)

    def attention(self) -> None:
        """All LEDs blink twice together (the referee needs someone), then the lit LED comes back."""
        t = self.timing
        every = [*self.seats, self.centre]
        with self._lock:
            steady = self._steady
        self._play([(_switch(every, True), t["attention"]), (_switch(every, False), t["attention"])] * 2,
                   steady=steady)

    def off(self) -> None:
        self.show_turn(None)

    def reseat(self, names: Sequence[str]) -> list[str]:
        """New players at the table (names in seat order): the LEDs light their seats from now on, all
        off until the next command; returns the players past the last LED, who have none.

        >>> from gpiozero.pins.mock import MockFactory
        >>> lights = TableLights([2, 3, 4], 5, pin_factory=MockFactory(), names=["Ann", "Bob", "Cy"])
        >>> lights.reseat(["Ann", "Rose", "Cy", "Di"]), lights.n_seats
        (['Di'], 4)
        >>> lights.close()
        """
        with self._lock:
            self._interrupt()
            self._steady = None
            self.n_seats = len(names)
        return list(names[len(self.seats):])

    def wait_until_idle(self, timeout: float) -> bool:
        """Wait for the running sequence to finish; False if ``timeout`` seconds passed first."""
        with self._lock:
            sequence = self._sequence
        if sequence is not None:
            sequence.join(timeout)
            return not sequence.is_alive()
        return True

    def close(self) -> None:
        lock = getattr(self, "_lock", None) or threading.Lock()  # a failed __init__ has no lock yet
        with lock:
            if hasattr(self, "_cancel"):
                self._cancel.set()
            for device in getattr(self, "_devices", []):
                device.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- the sequence player ---------------------------------------------------------------------------

    def _seat(self, seat: int) -> LED | None:
        if not 0 <= seat < self.n_seats:
            raise ValueError(f"no seat {seat}: there are {self.n_seats} seats")
        return self.seats[seat] if seat < len(self.seats) else None

    def _interrupt(self) -> None:
        """Stop the running sequence and every blink (call with the lock held)."""
        self._cancel.set()
        for device in self._devices:
            device.off()

    def _play(self, steps: list[tuple[Callable[[], None], float]], steady: LED | None) -> None:
        with self._lock:
            self._interrupt()
            self._steady = steady
            self._cancel = cancel = threading.Event()
            self._sequence = threading.Thread(target=self._run, args=(steps, steady, cancel), daemon=True,
                                              name="table-lights")
            self._sequence.start()

    def _run(self, steps, steady: LED | None, cancel: threading.Event) -> None:
        # Each step starts under the lock, after checking ``cancel``, so a command from the caller either
        # comes first (and the step never starts) or stops the step's blink.
        for start, seconds in steps:
            with self._lock:
                if cancel.is_set():
                    return
                start()
            if cancel.wait(seconds):
                return
        with self._lock:
            if not cancel.is_set() and steady is not None:
                steady.on()


def _nothing() -> None:
    pass


def _switch(devices, on: bool) -> Callable[[], None]:
    def switch() -> None:
        for device in devices:
            device.on() if on else device.off()

    return switch


def render_lights(lights: TableLights, names: Sequence[str], centre_name: str = "pot") -> str:
    """The LEDs as text for a terminal: ``[Ann ● ][Bob ○ ][Cy ○ ][pot ○ ]``.

    >>> from gpiozero.pins.mock import MockFactory
    >>> lights = TableLights([17, 27, 22], 23, pin_factory=MockFactory())
    >>> lights.show_turn(1)
    >>> render_lights(lights, ["Ann", "Bob", "Cy"])
    '[Ann ○ ][Bob ● ][Cy ○ ][pot ○ ]'
    >>> lights.close()
    """
    if len(names) < len(lights.seats):
        raise ValueError(f"{len(names)} names for {len(lights.seats)} seat LEDs")
    leds = [*lights.seats, *[None] * (len(names) - len(lights.seats)), lights.centre]  # seats past the LEDs: none
    labels = [*names, centre_name]
    cells = [f"[{label} {'-' if led is None else '●' if led.value else '○'} ]" for label, led in zip(labels, leds)]
    if lights.buzzer is not None and lights.buzzer.value:
        cells.append("[♪]")
    return "".join(cells)
