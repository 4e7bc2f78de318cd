"""What the table tells the referee: buttons on GPIO pins and commands typed in the terminal.

Both hand actions to the referee loop through one :class:`ActionQueue`: button callbacks run on
gpiozero's threads and the keyboard on its own, while the referee polls the queue between camera frames.

>>> actions = ActionQueue()
>>> actions.put_action("roll", "L . C")
>>> actions.put_action("undo")
>>> actions.poll(), actions.poll(), actions.poll()
(('roll', 'L . C'), ('undo', None), None)
"""

from __future__ import annotations

import queue

#: Every action name an input can produce. "roll" carries the typed roll; "choose" may carry a seat
#: number or a player's name (without one it steps to the next choice, like the button); "players"
#: carries new players' names, one a line, in seat order.
ACTIONS = ("confirm", "undo", "repeat", "status", "choose", "choose_back", "new_game", "roll", "help", "players", "quit")

Action = tuple[str, "str | None"]


class ActionQueue(queue.Queue):
    """A thread-safe queue of ``(name, argument)`` actions; ``put_action`` is the inputs' ``on_action``."""

    def put_action(self, name: str, arg: str | None = None) -> None:
        if name not in ACTIONS:
            raise ValueError(f"unknown action {name!r}; actions are {', '.join(ACTIONS)}")
        self.put((name, arg))

    def poll(self) -> Action | None:
        """The next action, or None when there is none (``get_nowait`` raises ``queue.Empty`` instead)."""
        try:
            return self.get_nowait()
        except queue.Empty:
            return None
