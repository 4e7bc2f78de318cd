"""The table's settings: a TOML file, checked key by key, with sensible defaults for everything.

Every refusal names the file, the key and the value, e.g.
``lcr-pi.toml: speech.rate must be a whole number from 80 to 450, got 900``.

>>> s = parse_settings('[game]\\nplayers = ["Ann", "Bob", "Cy"]\\nvariant = "wild"\\n', source="t.toml")
>>> s.game.players, s.game.variant, s.speech.rate
(('Ann', 'Bob', 'Cy'), 'wild', 175)
>>> parse_settings('[speech]\\nrate = 900\\n', source="t.toml")
Traceback (most recent call last):
...
lcr_pi.errors.UserError: t.toml: speech.rate must be a whole number from 80 to 450, got 900
"""

from __future__ import annotations

import difflib
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

from lcr_pi.errors import UserError
from lcr_pi.rules.config import GameConfig
from lcr_pi.rules.series import NEXT_STARTERS, SeriesRules

DEFAULT_PLAYERS = ("Player 1", "Player 2", "Player 3")


@dataclass(frozen=True)
class GameSettings:
    players: tuple[str, ...] = DEFAULT_PLAYERS
    starting_chips: int = 3
    variant: str = "classic"
    wild_pip: int = 1
    #: A player's name, "roll-off", or empty for the first seat.
    first_player: str = ""


@dataclass(frozen=True)
class SeriesSettings:
    first_to: int = 0  # 0: not a series
    best_of: int = 0
    next_starter: str = "next-seat"


@dataclass(frozen=True)
class SpeechSettings:
    engine: str = "auto"  # "auto" (espeak-ng when installed), "espeak-ng" or "print"
    voice: str = "en"
    rate: int = 175  # words per minute
    volume: int = 100  # percent
    sounds: bool = True  # short distinct sounds for L, C, R and a win


@dataclass(frozen=True)
class GpioSettings:
    enabled: bool = True
    seat_leds: tuple = ()
    centre_led: int | str | None = None
    buzzer: int | str | None = None
    confirm_button: int | str | None = None
    undo_button: int | str | None = None
    repeat_button: int | str | None = None
    status_button: int | str | None = None
    choose_button: int | str | None = None
    long_press_seconds: float = 2.0


@dataclass(frozen=True)
class CameraSettings:
    #: "auto" (the Pi camera, else the first webcam), "picamera2", "webcam:N", a video file or a folder.
    source: str = "auto"
    width: int = 1280
    height: int = 960


#: The project's calibration folder (``lcr-pi calibrate`` and ``lcr-pi teach`` write there).
CALIBRATION_DIR = Path(__file__).resolve().parent.parent / "calibration"


@dataclass(frozen=True)
class ReaderSettings:
    dice: str = "auto"  # "auto", "pip", "lcr" or "wild"
    #: The tray calibration; empty: calibration/table.json when it exists.
    calibration: str = ""
    #: A taught dice set (``lcr-pi teach``); empty: the one calibration/teach-*.npz, if exactly one exists.
    teach: str = ""

    def calibration_path(self) -> Path:
        return Path(self.calibration).expanduser() if self.calibration else CALIBRATION_DIR / "table.json"

    def teach_path(self, folder: Path | None = None) -> Path | None:
        """The taught set named by ``teach``, else the one ``teach-*.npz`` in ``folder`` (the calibration
        folder), else None (none there, or several and none chosen)."""
        if self.teach:
            return Path(self.teach).expanduser()
        found = taught_sets_in(folder)
        return found[0] if len(found) == 1 else None


def taught_sets_in(folder: Path | None = None) -> list[Path]:
    """The taught sets (``teach-*.npz``, as ``lcr-pi teach`` names them) in ``folder`` (the calibration folder)."""
    return sorted((folder or CALIBRATION_DIR).glob("teach-*.npz"))


@dataclass(frozen=True)
class StorageSettings:
    state_dir: str = "~/.local/state/lcr-pi"
    evidence_frames: int = 200  # read rolls' frames kept on disk, oldest dropped first


@dataclass(frozen=True)
class WebSettings:
    """The scoreboard page (README 'Scoreboard'): off unless ``--web`` is given or ``enabled``."""

    enabled: bool = False  # serve the page even without --web
    bind: str = "0.0.0.0:8080"  # all interfaces; only clients on the local network are served
    pin: str = ""  # the PIN of the page's controls; empty: the page is read-only
    allow_public: bool = False  # allow a public bind address and clients outside the local network


@dataclass(frozen=True)
class Settings:
    game: GameSettings = field(default_factory=GameSettings)
    series: SeriesSettings = field(default_factory=SeriesSettings)
    speech: SpeechSettings = field(default_factory=SpeechSettings)
    gpio: GpioSettings = field(default_factory=GpioSettings)
    camera: CameraSettings = field(default_factory=CameraSettings)
    reader: ReaderSettings = field(default_factory=ReaderSettings)
    storage: StorageSettings = field(default_factory=StorageSettings)
    web: WebSettings = field(default_factory=WebSettings)
    source: str = "defaults"

    def game_config(self) -> GameConfig:
        try:
            return GameConfig.create(
                self.game.players,
                starting_chips=self.game.starting_chips,
                variant=self.game.variant,
                wild_pip=self.game.wild_pip,
            )
        except UserError as exc:
            raise UserError(f"{self.source}: [game] {exc}") from None

    def series_rules(self) -> SeriesRules | None:
        if not self.series.first_to and not self.series.best_of:
            return None
        try:
            return SeriesRules(
                first_to=self.series.first_to or None,
                best_of=self.series.best_of or None,
                next_starter=self.series.next_starter,
            )
        except UserError as exc:
            raise UserError(f"{self.source}: [series] {exc}") from None

    @property
    def state_dir(self) -> Path:
        return Path(self.storage.state_dir).expanduser()


def _whole(lo, hi):
    def check(value):
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            return f"must be a whole number from {lo} to {hi}"
        return None

    return check


def _number(lo, hi):
    def check(value):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not lo <= value <= hi:
            return f"must be a number from {lo} to {hi}"
        return None

    return check


def _choice(*options):
    def check(value):
        if value not in options:
            return f"must be one of {', '.join(repr(o) for o in options)}"
        return None

    return check


def _text(value):
    return None if isinstance(value, str) and value.strip() else "must be a non-empty text"


def _text_or_empty(value):
    return None if isinstance(value, str) else "must be a text"


def _boolean(value):
    return None if isinstance(value, bool) else "must be true or false"


def _pin(value):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)) or (isinstance(value, int) and not 0 <= value <= 27):
        return "must be a GPIO number from 0 to 27 or a pin name such as 'GPIO17' or 'BOARD11'"
    return None


def _pins(value):
    if not isinstance(value, list) or not all(_pin(v) is None and v is not None for v in value):
        return "must be a list of GPIO numbers (0 to 27) or pin names, one per seat in seat order"
    return None


def _bind_address(value):
    from lcr_pi.web.lan import parse_bind

    if isinstance(value, str):
        try:
            parse_bind(value)
            return None
        except UserError:
            pass
    return "must be HOST:PORT, e.g. '0.0.0.0:8080' (all interfaces, local-network clients only)"


def _web_pin(value):
    if not isinstance(value, str) or value != value.strip() or (value and not 4 <= len(value) <= 32):
        return "must be a text of 4 to 32 characters (digits are easiest on a phone), or empty for a read-only page"
    return None


def _names(value):
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return 'must be a list of names in seat order, e.g. ["Ann", "Bob", "Cy"]'
    return None


_CHECKS = {
    "game": {
        "players": _names,
        "starting_chips": _whole(1, 100),
        "variant": _text,
        "wild_pip": _whole(1, 3),
        "first_player": _text_or_empty,
    },
    "series": {
        "first_to": _whole(0, 100),
        "best_of": _whole(0, 100),
        "next_starter": _choice(*NEXT_STARTERS),
    },
    "speech": {
        "engine": _choice("auto", "espeak-ng", "print"),
        "voice": _text,
        "rate": _whole(80, 450),
        "volume": _whole(0, 100),
        "sounds": _boolean,
    },
    "gpio": {
        "enabled": _boolean,
        "seat_leds": _pins,
        "centre_led": _pin,
        "buzzer": _pin,
        "confirm_button": _pin,
        "undo_button": _pin,
        "repeat_button": _pin,
        "status_button": _pin,
        "choose_button": _pin,
        "long_press_seconds": _number(0.5, 10),
    },
    "camera": {"source": _text, "width": _whole(160, 4608), "height": _whole(120, 3496)},
    "reader": {"dice": _choice("auto", "pip", "lcr", "wild"), "calibration": _text_or_empty, "teach": _text_or_empty},
    "storage": {"state_dir": _text, "evidence_frames": _whole(0, 100000)},
    "web": {"enabled": _boolean, "bind": _bind_address, "pin": _web_pin, "allow_public": _boolean},
}

_SECTION_CLASSES = {
    "game": GameSettings,
    "series": SeriesSettings,
    "speech": SpeechSettings,
    "gpio": GpioSettings,
    "camera": CameraSettings,
    "reader": ReaderSettings,
    "storage": StorageSettings,
    "web": WebSettings,
}


def _unknown(kind: str, name: str, known) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else f" (known: {', '.join(known)})"
    return f"unknown {kind} {name!r}{hint}"


#: Sections whose mistakes are always refused: they decide the game played (the players, the chips, the
#: rules, the series it belongs to) and where it is saved; a default there would play another game or
#: series, or lose the saved one.
STRICT_SECTIONS = ("game", "series", "storage")


def parse_settings(text: str, *, source: str = "settings", skipped: list[str] | None = None) -> Settings:
    """Parse and check a TOML settings text; see the module docstring for the keys.

    With a ``skipped`` list, a bad value or an unknown key in a section other than
    :data:`STRICT_SECTIONS` is left out (its default is used) and named in ``skipped`` instead of refused:
    ``lcr-pi run`` says it and plays, rather than not start at the table for a typo in the voice's rate.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{source}: not valid TOML ({exc})") from None
    sections = {}
    for section, values in data.items():
        if section not in _CHECKS:
            raise UserError(f"{source}: {_unknown('section', section, _CHECKS)}")
        if not isinstance(values, dict):
            raise UserError(f"{source}: {section} must be a [{section}] table")
        checked = {}
        lenient = skipped is not None and section not in STRICT_SECTIONS
        for key, value in values.items():
            check = _CHECKS[section].get(key)
            if check is None:
                message = f"{source}: {_unknown('key', f'{section}.{key}', [f'{section}.{k}' for k in _CHECKS[section]])}"
                if not lenient:
                    raise UserError(message)
                skipped.append(f"{message}; it is left out")
                continue
            problem = check(value)
            if problem:
                message = f"{source}: {section}.{key} {problem}, got {value!r}"
                if not lenient:
                    raise UserError(message)
                default = getattr(_SECTION_CLASSES[section](), key)
                skipped.append(f"{message}; the default, {_spoken_default(default)}, is used")
                continue
            checked[key] = tuple(value) if isinstance(value, list) else value
        sections[section] = _SECTION_CLASSES[section](**checked)
    settings = Settings(**sections, source=source)
    if "web" in sections and not settings.web.allow_public:
        import ipaddress

        from lcr_pi.web.lan import check_bind, parse_bind

        host = parse_bind(settings.web.bind)[0]
        try:
            ipaddress.ip_address(host.split("%", 1)[0])
        except ValueError:
            # A host name ("raspberrypi.local") is looked up when the page starts, where a failure is a
            # warning and the game goes on: at boot the network may not be up yet (found by an audit:
            # the night did not start at all, and the service does not restart after exit 2).
            pass
        else:
            try:
                check_bind(host)
            except UserError as exc:
                raise UserError(f"{source}: web.bind {exc}") from None
    settings.game_config()  # names, counts and the variant, checked now rather than mid-game
    settings.series_rules()
    first = settings.game.first_player.strip()
    if first and first != "roll-off":
        try:
            settings.game_config().seat_of(first)
        except UserError as exc:
            raise UserError(f"{source}: game.first_player {exc}") from None
    return settings


def _spoken_default(value) -> str:
    """A key's default as said after a mistake ("175", "none", "true", "auto").

    >>> _spoken_default(None), _spoken_default(()), _spoken_default(True), _spoken_default("en")
    ('none', 'none', 'true', 'en')
    """
    if value is None or value == () or value == "":
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return ", ".join(str(v) for v in value)
    return str(value)


def load_settings(path: str | Path | None, *, skipped: list[str] | None = None) -> Settings:
    """Read settings from ``path``; None gives the defaults. A missing or unreadable file is named.
    ``skipped``: see :func:`parse_settings`."""
    if path is None:
        return Settings()
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"config file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"config file {path} cannot be read ({exc})") from None
    return parse_settings(text, source=str(path), skipped=skipped)


def with_players(settings: Settings, players) -> Settings:
    """The settings with the players replaced (``--players Ann,Bob,Cy`` on the command line); a mistake
    in them is the command line's, and is named so (not the settings file's)."""
    game = replace(settings.game, players=tuple(players))
    updated = replace(settings, game=game)
    try:
        GameConfig.create(game.players, starting_chips=game.starting_chips, variant=game.variant,
                          wild_pip=game.wild_pip)
    except UserError as exc:
        raise UserError(f"--players {','.join(players)}: {exc}") from None
    return updated
