"""The live scoreboard page that ``lcr-pi run --web`` and ``lcr-pi demo --web`` serve to phones at the table.

* :func:`start_scoreboard` — serve a table's board on a background thread (``.stop()`` ends it);
* :func:`start_web` — the same from the command line's ``--web`` and the ``[web]`` settings;
* :class:`SpeakerControl` — lets the page (with the PIN) change the speech rate and volume;
* :func:`parse_bind`, :func:`check_bind`, :func:`is_lan_address` — the "local network only" rules;
* :func:`board_snapshot` — the pure referee-to-board function the page draws from.

The server half (bottle) is imported only when a page is served, so settings and tests of the rest of
lcr-pi never load it.
"""

from lcr_pi.web.board import board_snapshot
from lcr_pi.web.lan import check_bind, is_lan_address, parse_bind

_SERVER_NAMES = ("CONTROL_ACTIONS", "ScoreboardServer", "SpeakerControl", "start_scoreboard", "start_web")

__all__ = ["board_snapshot", "check_bind", "is_lan_address", "parse_bind", *_SERVER_NAMES]


def __getattr__(name):
    if name in _SERVER_NAMES:
        from lcr_pi.web import app

        return getattr(app, name)
    raise AttributeError(f"module 'lcr_pi.web' has no attribute {name!r}")
