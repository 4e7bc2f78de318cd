"""Commands typed in the terminal: every button's action, plus typed rolls for a game without a camera.

Parsing is a pure function (:func:`parse_command`); :class:`KeyboardInput` only reads lines on a
background thread and queues what they mean.

>>> parse_command("L . C")
('roll', 'L . C')
>>> parse_command("")
('confirm', None)
>>> parse_command("choose bob", players=["Ann", "Bob"])
('choose', 'Bob')
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable, Sequence
from typing import TextIO

from lcr_pi.errors import UserError
from lcr_pi.inputs import ActionQueue
from lcr_pi.rules.faces import parse_faces

log = logging.getLogger(__name__)

WORDS = {
    "confirm": "confirm",
    "ok": "confirm",
    "yes": "confirm",
    "next": "confirm",
    "undo": "undo",
    "repeat": "repeat",
    "status": "status",
    "new": "new_game",
    "help": "help",
    "?": "help",
    "quit": "quit",
    "exit": "quit",
}

COMMANDS_HELP = (
    "a roll such as 'L . C' or '4 1 6', confirm (or an empty line), undo, repeat, status, new (a new game), "
    "choose (the next choice), choose back (the one before), choose N or a player's name (in a wild decision), "
    "players Ann, Bob, Cy (new players, before a game's first roll or after its end), help, quit"
)


def parse_command(line: str, players: Sequence[str] = ()) -> tuple[str, str | None]:
    """What a typed line means: ``(action, argument)``; a UserError names anything not understood.

    A line whose every word is a die face is a roll (the referee checks the number of dice). ``players``
    are the names a Wild decision may be answered with.

    >>> parse_command("4 1 6"), parse_command("  Undo "), parse_command("new game")
    (('roll', '4 1 6'), ('undo', None), ('new_game', None))
    >>> parse_command("choose 2"), parse_command("choose"), parse_command("choose back")
    (('choose', '2'), ('choose', None), ('choose_back', None))
    >>> parse_command("players Ann, Grandma Rose, Cy")
    ('players', 'Ann\\nGrandma Rose\\nCy')
    >>> parse_command("jump")
    Traceback (most recent call last):
    lcr_pi.errors.UserError: unknown command 'jump': type a roll such as 'L . C' or '4 1 6', confirm (or an empty line), undo, repeat, status, new (a new game), choose (the next choice), choose back (the one before), choose N or a player's name (in a wild decision), players Ann, Bob, Cy (new players, before a game's first roll or after its end), help, quit
    """
    text = " ".join(line.split())
    if not text:
        return ("confirm", None)
    first, _, rest = text.partition(" ")
    word = first.lower()
    if word == "choose":
        if rest.lower() == "back" and not any(name.lower() == "back" for name in players):
            return ("choose_back", None)  # the name before (a long press of the choose button)
        return ("choose", _choice(rest, players) if rest else None)
    if word == "players" and rest:
        # In seat order, separated by commas (a name may have spaces): the referee checks them.
        return ("players", "\n".join(n.strip() for n in rest.split(",") if n.strip()))
    if word == "new" and rest.lower() in ("", "game"):
        return ("new_game", None)
    if word in WORDS and not rest:
        return (WORDS[word], None)
    try:
        parse_faces(text)
        return ("roll", text)  # before names: a player called "R" is chosen with "choose R"
    except UserError as bad_face:
        roll_error = bad_face
    for name in players:
        if text.lower() == name.lower():
            return ("choose", name)
    if _is_face(first) or (first.isascii() and first.isdigit()):  # it starts like a roll: the bad die is the news
        raise UserError(f"not a roll: {text!r}: {roll_error}")
    if word in WORDS:
        raise UserError(f"{word!r} takes nothing after it, got {text!r}")
    raise UserError(f"unknown command {first!r}: type {COMMANDS_HELP}")


def _choice(text: str, players: Sequence[str]) -> str:
    if text.isascii() and text.isdigit() and len(text) <= 3:
        return text
    for name in players:
        if text.lower() == name.lower():
            return name
    if players:
        raise UserError(f"no player named {text!r}: choose one of {', '.join(players)} (or a number)")
    return text


def _is_face(token: str) -> bool:
    try:
        parse_faces(token)
        return True
    except UserError:
        return False


class KeyboardInput:
    """Reads ``stream`` (stdin by default) line by line on a daemon thread and queues each command.

    Lines that mean nothing go to ``on_error`` (printed by default) and the game goes on. At the end of
    the stream ``eof_action`` is queued: "quit" for a terminal (Ctrl-D), nothing otherwise, so that a
    referee started as a service with no input does not stop at once.
    """

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        on_action: Callable[[str, str | None], None] | None = None,
        players: Sequence[str] | Callable[[], Sequence[str]] = (),
        on_error: Callable[[str], None] | None = None,
        eof_action: str | None = "tty",
    ):
        self.stream = stream if stream is not None else sys.stdin
        self.actions = ActionQueue()
        self.on_action = on_action or self.actions.put_action
        # The names "choose" takes: a callable is asked at each line (the players can change in a night).
        self.players = players if callable(players) else tuple(players)
        self.on_error = on_error or (lambda message: print(message, file=sys.stderr, flush=True))
        if eof_action == "tty":
            eof_action = "quit" if _isatty(self.stream) else None
        self.eof_action = eof_action
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._read, name="keyboard-input", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        for line in self.stream:
            if self._stopped.is_set():
                return
            try:
                action, arg = parse_command(line, self.players() if callable(self.players) else self.players)
            except UserError as error:
                self.on_error(str(error))
                continue
            except Exception as error:  # noqa: BLE001 - a line nobody foresaw must not end typing for the night
                log.exception("typed line %r", line)
                self.on_error(f"could not understand {line.strip()!r} ({error})")
                continue
            self.on_action(action, arg)
        if self.eof_action is not None and not self._stopped.is_set():
            self.on_action(self.eof_action, None)

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the end of the stream; False if ``timeout`` seconds passed first."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def close(self) -> None:
        """Stop queueing. A read already waiting for a line cannot be interrupted; it ends with the
        program (the thread is a daemon)."""
        self._stopped.set()


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
