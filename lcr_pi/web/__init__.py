"""The live scoreboard page that ``lcr-pi run --web`` and ``lcr-pi demo --web`` serve to phones at the table.

* :func:`start_scoreboard` — serve a table's board on a background thread (``.stop()`` ends it);
* :class:`SpeakerControl` — lets the page (with the PIN) change the speech rate and volume;
* :func:`parse_bind`, :func:`check_bind`, :func:`is_lan_address` — the "local network only" rules;
* :func:`board_snapshot` — the pure referee-to-board function the page draws from.
"""

from lcr_pi.web.app import CONTROL_ACTIONS, ScoreboardServer, SpeakerControl, start_scoreboard
from lcr_pi.web.board import board_snapshot
from lcr_pi.web.lan import check_bind, is_lan_address, parse_bind

__all__ = [
    "CONTROL_ACTIONS",
    "ScoreboardServer",
    "SpeakerControl",
    "board_snapshot",
    "check_bind",
    "is_lan_address",
    "parse_bind",
    "start_scoreboard",
]
