"""Setting up a game with two buttons and a voice: for a table with no keyboard and no screen.

Five questions, each answered with two buttons: **choose** speaks the next option, **confirm** accepts the
one just heard. The number of players (3 to 12), the starting chips (3, 4, 5), the variant, the speech
rate and the volume. Names are "Player 1", "Player 2"... unless the settings file names the players; the
end of the setup says who is who (at a big table, that status says the seat order at a game's opening).
The answers are saved in the state folder (``setup.json``) and used at every power-on until changed.

The questions are a pure state machine (:class:`VoiceSetup`): actions in, outputs out (:class:`Say`
and :class:`SpeechPreview`, so a rate is heard at that rate before it is confirmed). The shell
(:func:`run_setup`, :func:`power_on_setup`) carries the outputs out on a real speaker and buttons.

Other buttons: **repeat** says the question again, **undo** goes back one question, holding **confirm**
keeps the rest as they are and finishes.

>>> setup = VoiceSetup(SetupChoices(players=4))
>>> said(setup.start())[-1]
'How many players? Now: 4 players. Press choose for the next option, confirm to accept. Hold choose for the option before. Undo goes back one question; hold confirm to keep the rest as it is.'
>>> said(setup.on_action("choose"))
['5 players.']
>>> said(setup.on_action("confirm"))
['How many chips does each player start with? Now: 3 chips each.']
>>> said(setup.on_action("new_game"))[0]
'Keeping the rest as it is.'
>>> setup.done, setup.choices.players
(True, 5)
"""

from __future__ import annotations

import hashlib
import json
import logging
import queue
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from lcr_pi.announce import BIG_TABLE, join_names
from lcr_pi.errors import UserError
from lcr_pi.persist import remove_stale_temporaries, write_atomic
from lcr_pi.referee import MOST_PLAYERS_NAMED, Say
from lcr_pi.rules.config import parse_variant
from lcr_pi.settings import Settings

log = logging.getLogger("lcr_pi.voice_setup")

SETUP_FILE = "setup.json"
SETUP_FORMAT = "lcr-pi-setup"
SETUP_VERSION = 1

PLAYER_COUNTS = tuple(range(3, 13))
#: How many players a remembered setup may seat: the buttons offer up to 12 (PLAYER_COUNTS), names set
#: at the table (the scoreboard page) up to 20.
MIN_PLAYERS, MAX_PLAYERS = 3, MOST_PLAYERS_NAMED
CHIP_COUNTS = (3, 4, 5)
VARIANTS = ("classic", "wild", "wild-win", "last-chip")
RATES = (("slow", 140), ("normal", 175), ("fast", 250), ("very fast", 350), ("fastest", 450))
VOLUMES = (25, 50, 75, 100)

_VARIANT_WORDS = {
    "classic": "classic rules",
    "wild": "wild: each W takes a chip from another player",
    "wild-win": "wild win: three W win the game at once",
    "last-chip": "last chip: whoever puts the last chip in the centre wins",
}


@dataclass(frozen=True)
class SetupChoices:
    """What the voice setup decides; see :func:`apply_choices` for how it changes the settings."""

    players: int = 3
    starting_chips: int = 3
    variant: str = "classic"
    rate: int = 175  # words per minute
    volume: int = 100  # percent
    #: The players' names in seat order, when they were set at the table (the scoreboard page); empty:
    #: the settings file's names, and "Player N" for the seats it does not name.
    names: tuple[str, ...] = ()

    @classmethod
    def from_settings(cls, settings: Settings) -> "SetupChoices":
        return cls(len(settings.game.players), settings.game.starting_chips, settings.game.variant,
                   settings.speech.rate, settings.speech.volume)

    def summary(self) -> str:
        """
        >>> SetupChoices(4, 5, "wild", 350, 75).summary()
        '4 players with 5 chips each, wild rules, very fast speech, volume 75 percent'
        """
        variant = self.variant.replace("+", " plus ").replace("-", " ")
        return (f"{self.players} players with {self.starting_chips} chips each, {variant} rules, "
                f"{_rate_name(self.rate)} speech, volume {self.volume} percent")


def _rate_name(rate: int) -> str:
    for name, wpm in RATES:
        if wpm == rate:
            return name
    return f"{rate} words a minute"


@dataclass(frozen=True)
class SpeechPreview:
    """Speak from now on at this rate and volume (so each rate is heard at its own speed)."""

    rate: int
    volume: int


def said(outputs) -> list[str]:
    """The sentences among ``outputs``."""
    return [o.text for o in outputs if isinstance(o, Say)]


# -- the questions -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Question:
    key: str  # the SetupChoices field
    prompt: str
    options: tuple
    words: Callable[[object], str]


def _options(base: tuple, current) -> tuple:
    """The base options, plus the current value when the settings file chose one outside them."""
    if current in base:
        return base
    if isinstance(current, int):
        return tuple(sorted((*base, current)))
    return (current, *base)


def questions_for(initial: SetupChoices) -> tuple[Question, ...]:
    return (
        Question("players", "How many players?", _options(PLAYER_COUNTS, initial.players), lambda n: f"{n} players"),
        Question("starting_chips", "How many chips does each player start with?",
                 _options(CHIP_COUNTS, initial.starting_chips), lambda n: f"{n} chips each"),
        Question("variant", "Which rules?", _options(VARIANTS, initial.variant),
                 lambda v: _VARIANT_WORDS.get(v, v.replace("+", " plus ").replace("-", " "))),
        Question("rate", "How fast should I speak?", _options(tuple(w for _, w in RATES), initial.rate),
                 lambda r: _rate_name(r)),
        Question("volume", "How loud?", _options(VOLUMES, initial.volume), lambda v: f"volume {v} percent"),
    )


class VoiceSetup:
    """The questions, one at a time. Feed it actions ("choose", "confirm", "repeat", "undo", "new_game",
    "quit"); each call returns the outputs to carry out. ``done`` when finished, ``cancelled`` on quit."""

    INSTRUCTIONS = "Press choose for the next option, confirm to accept."
    #: Said with the instructions (found by an audit: by ear alone, only choose and confirm were said).
    MORE = ("Hold choose for the option before. Undo goes back one question; hold confirm to keep the rest "
            "as it is.")

    def __init__(self, initial: SetupChoices | None = None, names: tuple[str, ...] = ()):
        self.initial = initial or SetupChoices()
        self.names = tuple(names)  # the settings file's names, in seat order (said at the end)
        self.questions = questions_for(self.initial)
        self.answers = asdict(self.initial)
        self.step = 0
        self.index = self._index_of(0)
        self._voice = (self.answers["rate"], self.answers["volume"])  # what the speaker speaks with now
        self.done = False
        self.cancelled = False

    @property
    def choices(self) -> SetupChoices:
        return SetupChoices(**self.answers)

    @property
    def question(self) -> Question:
        return self.questions[self.step]

    def _index_of(self, step: int) -> int:
        q = self.questions[step]
        return q.options.index(self.answers[q.key])

    def _current_value(self):
        return self.question.options[self.index]

    def _preview(self) -> list:
        """When the question is about the voice, speak its options with the voice they describe; on any
        other question, with the voice the answers so far give (found by an audit: undo from the rate
        question left the fastest voice on for the questions before it)."""
        rate = self._current_value() if self.question.key == "rate" else self.answers["rate"]
        volume = self._current_value() if self.question.key == "volume" else self.answers["volume"]
        if (rate, volume) == self._voice:
            return []
        self._voice = (rate, volume)
        return [SpeechPreview(rate, volume)]

    def _ask(self, instructions: bool = False) -> list:
        q = self.question
        text = f"{q.prompt} Now: {q.words(self._current_value())}."
        if instructions:
            text += f" {self.INSTRUCTIONS} {self.MORE}"
        return [*self._preview(), Say(text)]

    def start(self) -> list:
        return [Say("Game setup."), *self._ask(instructions=True)]

    def on_action(self, name: str, argument: str | None = None) -> list:
        if self.done or self.cancelled:
            return []
        if name == "choose":
            return self._choose(argument)
        if name == "choose_back":  # a long press of choose: the option before
            q = self.question
            self.index = (self.index - 1) % len(q.options)
            return [*self._preview(), Say(f"{q.words(self._current_value())}.")]
        if name == "confirm":
            self.answers[self.question.key] = self._current_value()
            return self._next()
        if name in ("repeat", "status", "help"):
            return self._ask(instructions=True)  # what the buttons do here, too: heard once is easily missed
        if name == "undo":
            if self.step == 0:
                return [Say("This is the first question."), *self._ask()]
            self.step -= 1
            self.index = self._index_of(self.step)
            return self._ask()
        if name == "new_game":  # a long press of confirm: this answer, and the rest as they are
            self.answers[self.question.key] = self._current_value()
            return [Say("Keeping the rest as it is."), *self._finish()]
        if name == "quit":
            self.cancelled = True
            return [Say("Setup left. Nothing was changed.")]
        return [Say(f"In the setup, {self.INSTRUCTIONS[0].lower()}{self.INSTRUCTIONS[1:]}")]

    def on_idle(self) -> list:
        """Nobody answered for a long while: keep what was chosen so far, and the rest as it is."""
        if self.done or self.cancelled:
            return []
        return [Say("No answer, so I keep the rest as it is."), *self._finish()]

    def _choose(self, argument: str | None) -> list:
        q = self.question
        if argument:
            wanted = argument.strip().lower()
            for i, value in enumerate(q.options):
                if wanted in (str(value).lower(), q.words(value).lower()) or (
                        q.key == "rate" and wanted == _rate_name(value)):
                    self.index = i
                    return [*self._preview(), Say(f"{q.words(value)}.")]
            return [Say(f"{argument} is not an option here. {q.prompt}")]
        self.index = (self.index + 1) % len(q.options)
        return [*self._preview(), Say(f"{q.words(self._current_value())}.")]

    def _next(self) -> list:
        if self.step + 1 < len(self.questions):
            self.step += 1
            self.index = self._index_of(self.step)
            return self._ask()
        return self._finish()

    def _finish(self) -> list:
        """The last words: what was chosen, and who is who.

        >>> setup = VoiceSetup(SetupChoices(players=3), names=tuple("Ann Bob Cy Di Ed Flo Gus Hal".split()))
        >>> said(setup.on_action("new_game"))[-1].split(". ")[-1]
        'The players are Ann, Bob and Cy.'
        >>> setup = VoiceSetup(SetupChoices(players=8), names=tuple("Ann Bob Cy Di Ed Flo Gus Hal".split()))
        >>> print(said(setup.on_action("new_game"))[-1])
        Done: 8 players with 3 chips each, classic rules, normal speech, volume 100 percent. Press status at a game's opening to hear the seat order.
        """
        self.done = True
        choices = self.choices
        names = seat_names(self.names, choices.players)
        if names == tuple(f"Player {n}" for n in range(1, choices.players + 1)):
            who = f"The players are called Player 1 to Player {choices.players}."
        elif len(names) >= BIG_TABLE:
            # Not name by name (20 names were 20 of the last 38 words, 13 s): the summary says how many, and the
            # opening of the game says no names either, but that status says them (game_started's seats_new).
            who = "Press status at a game's opening to hear the seat order."
        else:
            who = f"The players are {', '.join(names[:-1])} and {names[-1]}."
        return [SpeechPreview(choices.rate, choices.volume), Say(f"Done: {choices.summary()}. {who}")]


# -- remembered between power-ons ----------------------------------------------------------------------------


def setup_path(state_dir: str | Path) -> Path:
    return Path(state_dir).expanduser() / SETUP_FILE


def choices_to_json(choices: SetupChoices, *, settings_digest: str | None = None) -> str:
    data = asdict(choices)
    if not choices.names:
        del data["names"]  # the file as before names could be set at the table
    else:
        data["names"] = list(choices.names)
    if settings_digest:
        data["settings_sha256"] = settings_digest  # what the settings file said when this was saved
    return json.dumps({"format": SETUP_FORMAT, "version": SETUP_VERSION, **data}, indent=2) + "\n"


def settings_digest(settings_file: str | Path) -> str | None:
    """A fingerprint of the settings file's text (None when it cannot be read: no file, the defaults)."""
    try:
        return hashlib.sha256(Path(settings_file).read_bytes()).hexdigest()
    except OSError:
        return None


def choices_from_json(text: str, *, source: str = SETUP_FILE) -> SetupChoices:
    """Parse and check a saved setup; a UserError names the file and what is wrong.

    >>> choices_from_json('{"format": "lcr-pi-setup", "version": 1, "players": 2}', source="s.json")
    Traceback (most recent call last):
    ...
    lcr_pi.errors.UserError: s.json: players must be a whole number from 3 to 20, got 2
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"{source} is not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(data, dict) or data.get("format") != SETUP_FORMAT:
        raise UserError(f"{source} is not an lcr-pi setup file (no \"format\": \"{SETUP_FORMAT}\")")
    if data.get("version") != SETUP_VERSION:
        raise UserError(f"{source} has version {data.get('version')!r}; this lcr-pi reads version {SETUP_VERSION}")
    checks = {
        "players": (lambda v: _whole(v, MIN_PLAYERS, MAX_PLAYERS), f"a whole number from {MIN_PLAYERS} to {MAX_PLAYERS}"),
        "starting_chips": (lambda v: _whole(v, 1, 100), "a whole number from 1 to 100"),
        "variant": (lambda v: isinstance(v, str) and bool(v.strip()), "a variant name such as 'classic'"),
        "rate": (lambda v: _whole(v, 80, 450), "a whole number from 80 to 450"),
        "volume": (lambda v: _whole(v, 0, 100), "a whole number from 0 to 100"),
    }
    values = {}
    for key, (ok, wanted) in checks.items():
        if key in data:
            if not ok(data[key]):
                raise UserError(f"{source}: {key} must be {wanted}, got {data[key]!r}")
            values[key] = data[key]
    if "names" in data:
        names = data["names"]
        if not isinstance(names, list) or not all(isinstance(n, str) and n.strip() for n in names):
            raise UserError(f"{source}: names must be a list of the players' names, got {names!r}")
        names = tuple(" ".join(n.split()) for n in names)
        if not MIN_PLAYERS <= len(names) <= MAX_PLAYERS or len({n.casefold() for n in names}) != len(names):
            raise UserError(f"{source}: names must be {MIN_PLAYERS} to {MAX_PLAYERS} different names, got {list(names)!r}")
        if values.setdefault("players", len(names)) != len(names):
            raise UserError(f"{source}: names has {len(names)} names for {values['players']} players")
        values["names"] = names
    if "variant" in values:
        # Checked here, with this file named (found by an audit: an unknown variant in setup.json was
        # refused later as the settings file's mistake, which the person then looked for in vain).
        try:
            parse_variant(values["variant"])
        except UserError as exc:
            raise UserError(f"{source}: variant: {exc}") from None
    return SetupChoices(**values)


def _whole(value, lo, hi) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi


def load_remembered(state_dir: str | Path) -> tuple[SetupChoices | None, str | None]:
    """(choices, None) when a setup was saved, (None, None) when none was, (None, message) when the file
    cannot be used: the message names the file and the problem, and the settings file is used instead."""
    path = setup_path(state_dir)
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):  # nothing saved (saving will name a bad folder)
        return None, None
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        return None, f"cannot read the remembered game setup {path} ({reason}); using the settings file"
    try:
        return choices_from_json(text, source=str(path)), None
    except UserError as exc:
        return None, f"the remembered game setup is damaged: {exc}; using the settings file"


def save_choices(state_dir: str | Path, choices: SetupChoices, *, settings_file: str | Path | None = None) -> Path:
    """Write the choices atomically (a power cut leaves the old or the new file, never half), with a
    fingerprint of ``settings_file`` as it is now (so that a later edit of it can be told)."""
    path = setup_path(state_dir)
    digest = settings_digest(settings_file) if settings_file is not None else None
    try:
        write_atomic(path, choices_to_json(choices, settings_digest=digest).encode("utf-8"))
    except OSError as exc:
        raise UserError(f"cannot save the game setup to {path} ({exc.strerror or exc})") from None
    return path


def remember_players(settings: Settings, names) -> Path:
    """Keep the players changed at the table (the scoreboard page) for the next power-on: the remembered
    setup with these names, the rest of it as it is (or as the settings give it, when none was saved)."""
    remembered, _ = load_remembered(settings.state_dir)
    base = remembered or SetupChoices.from_settings(settings)
    names = tuple(names)
    return save_choices(settings.state_dir, replace(base, players=len(names), names=names),
                        settings_file=settings.source)


def names_kept(choices: SetupChoices, remembered: SetupChoices | None) -> SetupChoices:
    """A new setup's choices to remember: names set at the table stay the players' names (the seats added
    get "Player N"), as the setup said them at its end."""
    if remembered is None or not remembered.names:
        return choices
    return replace(choices, names=seat_names(remembered.names, choices.players))


def apply_choices(settings: Settings, choices: SetupChoices) -> Settings:
    """The settings with the setup's players, chips, variant, speech rate and volume.

    Names: the settings file's names for the seats it names, "Player N" for the others (N the seat, or
    the next number no name already has). Seat LEDs: when more are wired than there are players, the
    first ones are used.

    >>> from lcr_pi.settings import parse_settings
    >>> s = parse_settings('[game]\\nplayers = ["Ann", "Bob", "Cy"]\\n[gpio]\\nseat_leds = [17, 27, 22, 23, 24]\\n')
    >>> s = apply_choices(s, SetupChoices(players=4, variant="wild", rate=350))
    >>> s.game.players, s.game.variant, s.speech.rate, s.gpio.seat_leds
    (('Ann', 'Bob', 'Cy', 'Player 4'), 'wild', 350, (17, 27, 22, 23))
    """
    names = choices.names or seat_names(settings.game.players, choices.players)
    first = settings.game.first_player
    # Matched as the referee matches it (any case, spaces around): names set at the table may differ in
    # case from the file's first player (found by a review: "bob" named on the page started the games
    # the file gives to "Bob" until a pulled plug, and seat 1 did after it).
    if first and first.strip() != "roll-off" and first.strip().casefold() not in {n.casefold() for n in names}:
        first = ""
    game = replace(settings.game, players=names, starting_chips=choices.starting_chips, variant=choices.variant,
                   first_player=first)
    speech = replace(settings.speech, rate=choices.rate, volume=choices.volume)
    updated = fit_leds_to_players(replace(settings, game=game, speech=speech))
    updated.game_config()  # names and variant checked now, with the file named
    return updated


def seat_names(named: tuple[str, ...], players: int) -> tuple[str, ...]:
    """The first ``players`` of the settings file's names, and "Player N" for the seats it does not name
    (N the seat, or the next number no name already has).

    >>> seat_names(("Ann", "Player 3"), 4)
    ('Ann', 'Player 3', 'Player 4', 'Player 5')
    """
    names = list(named)[:players]
    number = len(names)
    while len(names) < players:  # never a name twice
        number += 1
        if all(n.casefold() != f"player {number}" for n in names):
            names.append(f"Player {number}")
    return tuple(names)


def fit_leds_to_players(settings: Settings) -> Settings:
    """When more seat LEDs are wired than there are players, use the first ones (one per seat).

    >>> from lcr_pi.settings import parse_settings
    >>> fit_leds_to_players(parse_settings('[gpio]\\nseat_leds = [17, 27, 22, 23]\\n')).gpio.seat_leds
    (17, 27, 22)
    """
    gpio, players = settings.gpio, len(settings.game.players)
    if len(gpio.seat_leds) <= players:
        return settings
    return replace(settings, gpio=replace(gpio, seat_leds=tuple(gpio.seat_leds[:players])))


# -- the shell: a speaker and the buttons ----------------------------------------------------------------------


def default_speaker_factory(settings: Settings, stream=None) -> Callable[[int, int], object]:
    """Speakers with the settings' voice at a given rate and volume (printed words without espeak-ng);
    a voice espeak-ng does not know is spoken as "en" (the night says why), as the night's speaker is."""
    from lcr_pi.outputs.speech import PrintSpeaker, make_speaker, voice_or_fallback

    voice = settings.speech.voice
    if settings.speech.engine != "print":
        voice, _ = voice_or_fallback(voice)  # the problem is said by the night, once

    def make(rate: int, volume: int):
        if settings.speech.engine == "print" or voice is None:
            return PrintSpeaker(stream)
        return make_speaker(voice, rate, volume, sounds=False, stream=stream, echo=True)

    return make


def run_setup(setup: VoiceSetup, actions: "queue.Queue", make_speaker: Callable[[int, int], object], *,
              idle_s: float = 120.0, speaker=None, clock: Callable[[], float] = time.monotonic):
    """Ask the questions on a speaker, answering from ``actions`` ((name, argument) pairs) until done.

    Returns the speaker in use at the end (its rate is the chosen one); the caller closes it. Each
    button press cuts what is being said, so quick presses skip ahead instead of queueing up.
    """
    state = {"speaker": speaker or make_speaker(setup.initial.rate, setup.initial.volume),
             "voice": (setup.initial.rate, setup.initial.volume)}

    def perform(outputs) -> None:
        for out in outputs:
            if isinstance(out, SpeechPreview):
                if (out.rate, out.volume) != state["voice"]:
                    state["speaker"].stop_talking()
                    state["speaker"].close()
                    state["speaker"] = make_speaker(out.rate, out.volume)
                    state["voice"] = (out.rate, out.volume)
            elif isinstance(out, Say):
                state["speaker"].say(out.text)

    perform(setup.start())
    last = clock()
    while not (setup.done or setup.cancelled):
        try:
            name, argument = actions.get(timeout=0.1)
        except queue.Empty:
            if clock() - last >= idle_s:
                perform(setup.on_idle())
            continue
        last = clock()
        state["speaker"].stop_talking()
        perform(setup.on_action(name, argument))
    return state["speaker"]


def setup_buttons(settings: Settings, on_action, pin_factory=None):
    """The table's buttons for the setup (choose and confirm at least), or a UserError saying why not."""
    from lcr_pi.inputs.buttons import TableButtons, button_pins

    gpio = settings.gpio
    pins = button_pins(gpio)
    if not gpio.enabled:
        raise UserError("gpio.enabled is false in the settings")
    if "confirm" not in pins or "choose" not in pins:
        raise UserError("the voice setup needs gpio.choose_button and gpio.confirm_button in the settings")
    # The other buttons' mistakes are kept in ``buttons.problems`` for the caller to say.
    buttons = TableButtons(pins, on_action=on_action, pin_factory=pin_factory,
                           long_press_s=gpio.long_press_seconds, on_problem=lambda sentence: None)
    # Undo and repeat only help; without choose and confirm there is no setup.
    needed = dict.fromkeys(sentence for name, sentence in buttons.off_because.items() if name in ("choose", "confirm"))
    if needed:
        buttons.close()
        raise UserError("; ".join(needed))
    return buttons


def _edited_since(settings_file: str, saved: Path) -> bool:
    """Whether the settings file was changed after the remembered setup was saved (False when either is
    not there).

    Told by the fingerprint of the file kept in the setup, not by the files' times: a Pi has no clock of
    its own, and without a network it starts at the time last saved, up to an hour behind after a
    pulled plug (found by an audit: a setup made then was older than an edit made before it, and every
    power-on said the file was overridden). A setup saved before the fingerprint was kept: the times.
    """
    try:
        recorded = json.loads(saved.read_text(encoding="utf-8")).get("settings_sha256")
    except (OSError, ValueError, AttributeError):
        recorded = None
    if isinstance(recorded, str):
        current = settings_digest(settings_file)
        return current is not None and current != recorded
    try:
        return Path(settings_file).stat().st_mtime > saved.stat().st_mtime
    except OSError:
        return False


def power_on_setup(settings: Settings, *, mode: str = "auto", pin_factory=None,
                   make_speaker: Callable[[int, int], object] | None = None, offer_s: float = 6.0,
                   idle_s: float = 120.0, stream=None, players_fixed: bool = False) -> tuple[Settings, list[str]]:
    """What ``lcr-pi run`` does before the night: use the remembered setup, and offer to change it.

    ``mode``: "off" (the settings file only), "remembered" (apply the saved setup, ask nothing), "auto"
    (apply it, then say "to change the game, press choose" and wait ``offer_s`` seconds for the choose
    button), "ask" (run the setup at once). Returns the settings to play with and the problems to report
    (a damaged setup file, buttons that do not work, a setup that cannot be saved): the night goes on.
    A remembered setup that overrides the settings file is one of them, when the file was changed after
    the setup was made and the setup is what is played: not after a new setup, nor with ``players_fixed``
    (the command line names the players).
    """
    if mode not in ("off", "remembered", "auto", "ask"):
        raise UserError(f"setup mode must be off, remembered, auto or ask, got {mode!r}")
    # A plug pulled while setup.json was written (players named at the table) leaves its temporary
    # file, which nothing else removes (found by killing lcr-pi run at random: one more a kill).
    remove_stale_temporaries(settings.state_dir, SETUP_FILE)
    problems: list[str] = []
    overriding = None  # what to say when the remembered setup is played instead of the file's
    # Not fitted to the file's players here: the remembered or new setup may seat more (found by an
    # audit: six wired LEDs were cut to the file's four, and two seats were said to have none).
    if mode == "off":
        return settings, problems
    wired = settings.gpio  # every seat LED the file gives: a new setup may seat more than the remembered one
    remembered, problem = load_remembered(settings.state_dir)
    if problem:
        log.error("%s", problem)
        problems.append(problem)
    if remembered is not None:
        try:
            chosen = apply_choices(settings, remembered)
        except UserError as exc:
            problems.append(f"the remembered game setup cannot be used ({exc}); using the settings file")
        else:
            # Said when it overrides what the settings file says and the file was changed after the
            # setup was made (found by an audit: a person who edited the file for four players heard a
            # game of three, and nothing said why; found by a later one: said at every power-on after
            # any setup with the buttons, a warning with a file path for the table each night); added
            # to the problems only where it is what is played (not after a new setup), below.
            file_choices = SetupChoices.from_settings(settings)
            if remembered.names:
                # Names from the table override the file's only where they differ (found by a review:
                # the same names written into the file were still said to be overridden, each power-on).
                file_choices = replace(file_choices, names=tuple(" ".join(n.split()) for n in settings.game.players))
            if (file_choices != remembered and not players_fixed
                    and _edited_since(settings.source, setup_path(settings.state_dir))):
                overriding = f"the game set up with the buttons is used ({remembered.summary()})"
                if remembered.names:
                    # Names are set on the scoreboard page or typed, not with the buttons, and the summary
                    # does not say them (found by a review: a table without buttons heard of "the game set
                    # up with the buttons" after its players were named on the page).
                    overriding = (f"the game set up at the table is used ({join_names(list(remembered.names), 'and')}; "
                                  f"{remembered.summary()})")
            settings = chosen

    def remembered_played(played: Settings, *, offered: bool = False) -> tuple[Settings, list[str]]:
        if not overriding:
            return played, problems
        change = "press choose at the start to change it, or " if offered else ""
        return played, problems + [f"{overriding}, not the settings file's; {change}delete "
                                   f"{settings.state_dir / SETUP_FILE} to use the file"]

    if mode == "remembered":
        return remembered_played(settings)
    from lcr_pi.inputs import ActionQueue

    actions = ActionQueue()
    try:
        buttons = setup_buttons(settings, actions.put_action, pin_factory)
    except UserError as exc:
        if mode == "ask":
            problems.append(f"the voice setup cannot run: {exc}")
        return remembered_played(settings)
    make_speaker = make_speaker or default_speaker_factory(settings, stream)
    speaker = None
    try:
        try:
            speaker = make_speaker(settings.speech.rate, settings.speech.volume)
        except UserError as exc:  # the night has its own fallbacks and says what is wrong
            problems.append(f"the voice setup cannot speak ({exc}), so it was not offered")
            return remembered_played(settings)
        if mode == "auto":
            speaker.say("To change the game, press choose now.")
            # The seconds to answer count from the end of the sentence (found by an audit: counted from
            # its start, a slow voice left half of them); a press while it is said is queued and counts.
            speaker.wait_until_idle(30)
            deadline = time.monotonic() + offer_s
            wanted = False
            while not wanted and time.monotonic() < deadline:
                try:
                    wanted = actions.get(timeout=0.1)[0] in ("choose", "choose_back")  # also held
                except queue.Empty:
                    pass
            if not wanted:
                return remembered_played(settings, offered=True)
            # A second press made to be sure (or a bouncing button) must not move the first answer on
            # before its question is heard (found by the same audit).
            time.sleep(0.3)
            while not actions.empty():
                actions.get_nowait()
        setup = VoiceSetup(SetupChoices.from_settings(settings), names=settings.game.players)
        speaker = run_setup(setup, actions, make_speaker, idle_s=idle_s, speaker=speaker)
        if setup.done:
            try:
                # Fitted to the LEDs wired, not to those the remembered setup used (found by a review:
                # four players named at the table, then five set up at power-on with six LEDs wired, and
                # Player 5 was said to have no LED).
                chosen = apply_choices(replace(settings, gpio=wired), setup.choices)  # checked before it is remembered
            except UserError as exc:
                problems.append(f"the new game setup cannot be used ({exc}); playing with the settings as they were")
                return settings, problems
            try:
                save_choices(settings.state_dir, names_kept(setup.choices, remembered), settings_file=settings.source)
            except UserError as exc:
                problems.append(f"{exc}; this game uses the new setup, but it is not remembered")
            return chosen, problems
        return remembered_played(settings, offered=True)  # the setup was left: the remembered one is still played
    finally:
        buttons.close()
        if speaker is not None:
            speaker.wait_until_idle(30)
            speaker.close()
