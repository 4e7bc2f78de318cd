"""The live board behind the page: a table listener, a numbered JSON board, odds worked out on the side.

The game thread only builds a small dict and notifies waiting streams (:meth:`LiveBoard.listener`); it
never waits for a browser or for the odds. Odds are computed on one worker thread, newest position first,
and published as a new board when they are ready.
"""

from __future__ import annotations

import collections
import json
import logging
import secrets
import threading
import time
from pathlib import Path

from lcr_pi.referee import KeepEvidence, Say
from lcr_pi.web.board import board_snapshot, odds_key, odds_view

log = logging.getLogger("lcr_pi.web")

#: Sentences kept for the page's live region; a phone that reconnects skips those it already read.
ANNOUNCEMENTS_KEPT = 40


class LiveBoard:
    """The current board as JSON with a sequence number; streams wait here for the next one."""

    def __init__(self, table, *, controls: bool = False, speech=None, odds: bool = True):
        self.table = table
        self.controls = controls
        self.speech = speech
        self.boot = secrets.token_hex(4)  # a new id after a restart tells pages to start afresh
        self._changed = threading.Condition()
        self._seq = 0
        self._board: dict = {}
        self._announcements: collections.deque = collections.deque(maxlen=ANNOUNCEMENTS_KEPT)
        self._said = 0
        self._evidence: dict | None = None
        self._evidence_of: tuple[int, int] | None = None
        self.evidence_path: Path | None = None
        self._odds_key = None
        self._odds: dict | None = None
        self._json = ""
        self.stopped = False
        self.odds_worker = OddsWorker(self._odds_ready) if odds else None
        self._refresh(table.referee, [])

    # -- the game thread ---------------------------------------------------------------------------

    def listener(self, outputs, referee) -> None:
        """A :attr:`lcr_pi.table.Table.listeners` entry: quick, and never raises into the game."""
        self._refresh(referee, outputs)

    def _refresh(self, referee, outputs) -> None:
        board = board_snapshot(referee)
        key = odds_key(referee)
        cached = self.odds_worker.cached(key) if self.odds_worker and key is not None else None
        with self._changed:
            for out in outputs:
                if isinstance(out, Say):
                    self._said += 1
                    self._announcements.append({"id": self._said, "text": out.text})
                elif isinstance(out, KeepEvidence) and self.table.last_evidence is not None:
                    self.evidence_path = Path(self.table.last_evidence)
                    self._evidence = {
                        "url": f"/evidence.jpg?roll={out.label}",
                        "faces": list(out.observation.faces),
                        "player": _last_roller(referee),
                    }
                    # The photo belongs to this game at this many rolls: undone, or a new game, it goes.
                    self._evidence_of = (id(referee.game), _rolls(referee))
            if self._evidence is not None and self._evidence_of != (id(referee.game), _rolls(referee)):
                game, rolls = self._evidence_of
                if referee.game is None or id(referee.game) != game or _rolls(referee) < rolls:
                    self._evidence, self._evidence_of = None, None  # its roll was undone, or another game began
            if key != self._odds_key:
                self._odds_key, self._odds = key, cached
            self._board = board
            self._publish()
        if self.odds_worker and key is not None and cached is None:
            self.odds_worker.request(key, referee.game.state)

    def _odds_ready(self, key, view: dict) -> None:
        with self._changed:
            if key == self._odds_key and self._odds != view:
                self._odds = view
                self._publish()

    def speech_changed(self) -> None:
        with self._changed:
            self._publish()

    def _publish(self) -> None:
        """Number and serialise the board (with the lock held) and wake the streams."""
        self._seq += 1
        speech = None
        if self.speech is not None:
            rate, volume = self.speech.get()
            speech = {"rate": rate, "volume": volume}
        guess = self._board.get("guess")
        payload = {
            **self._board,
            # The id a press of confirm on the page sends back: the Pi's server checks it is the guess on offer.
            "guess": {**guess, "id": self.guess_id(guess["offer"])} if guess else None,
            "boot": self.boot,
            "seq": self._seq,
            "odds": self._odds,
            # Whether odds for this position are on their way: none come during a roll-off (no game) nor
            # with the odds off, and the page must not say "working it out" then (it did, for every player,
            # forever).
            "odds_coming": self._odds is None and self.odds_worker is not None and self._odds_key is not None,
            "announcements": list(self._announcements),
            "evidence": self._evidence,
            "controls": self.controls,
            "speech": speech,
        }
        self._json = json.dumps(payload, separators=(",", ":"))
        self._changed.notify_all()

    # -- the page's threads ------------------------------------------------------------------------

    def guess_id(self, offer: int | None) -> str | None:
        """The id the page is given for the guess numbered ``offer`` (:attr:`lcr_pi.referee.Referee.offer_number`),
        with this start's ``boot``: after a restart the numbers begin again, and a page still showing a guess
        offered before it names none offered since."""
        return None if offer is None else f"{self.boot}-{offer}"

    def current(self) -> tuple[int, str]:
        with self._changed:
            return self._seq, self._json

    def wait_newer(self, seen: int, timeout: float) -> tuple[int, str | None]:
        """The board once its number passes ``seen`` (at once if it has), or ``(seen, None)`` on timeout."""
        with self._changed:
            self._changed.wait_for(lambda: self._seq != seen or self.stopped, timeout=timeout)
            if self._seq == seen or self.stopped:
                return seen, None
            return self._seq, self._json

    def stop(self) -> None:
        with self._changed:
            self.stopped = True
            self._changed.notify_all()
        if self.odds_worker:
            self.odds_worker.stop()


def _rolls(referee) -> int:
    return referee.game.state.rolls if referee.game is not None else 0


def _last_roller(referee) -> str | None:
    game = referee.game
    if game is None:
        return None
    for event in reversed(game.events):
        if getattr(event, "kind", "") == "roll_resolved":
            return event.player
    return None


class OddsWorker:
    """Works out each position's chances on its own thread; only the newest request waits its turn."""

    def __init__(self, on_ready, *, budget_ms: float = 150, cache_size: int = 512):
        self.on_ready = on_ready
        self.budget_ms = budget_ms
        self._cache: collections.OrderedDict = collections.OrderedDict()
        self._cache_size = cache_size
        self._wanted = None
        self._prepared: set = set()
        self._lock = threading.Condition()
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name="scoreboard-odds", daemon=True)
        self._thread.start()

    def cached(self, key) -> dict | None:
        with self._lock:
            return self._cache.get(key)

    def request(self, key, state) -> None:
        with self._lock:
            self._wanted = (key, state)
            self._lock.notify()

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            self._lock.notify()

    def _run(self) -> None:
        from lcr_pi.stats import odds_for_state, prepare  # numpy work, kept off the import path

        while True:
            with self._lock:
                self._lock.wait_for(lambda: self._wanted is not None or self._stopped)
                if self._stopped:
                    return
                (key, state), self._wanted = self._wanted, None
            try:
                if state.config.players not in self._prepared:
                    self._prepared.add(state.config.players)
                    started = time.perf_counter()
                    prepare(state.config)  # seconds at most, once per table: later answers are look-ups
                    log.info("odds table ready in %.1f s", time.perf_counter() - started)
                view = odds_view(odds_for_state(state, budget_ms=self.budget_ms))
            except Exception:  # noqa: BLE001 - no odds is better than a stopped page
                log.exception("odds for the scoreboard failed")
                continue
            with self._lock:
                self._cache[key] = view
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
            self.on_ready(key, view)


class PinGuard:
    """Checks the control PIN in constant time and slows down guessing.

    A client with ``per_client`` wrong PINs within ``window`` seconds is locked out until the oldest of
    them is older than the window; ``overall`` wrong PINs from anyone lock every client the same way
    (many phones guessing at once is an attack, not a family). A locked client is refused even with the
    right PIN, so the lock reveals nothing.

    >>> guard = PinGuard("2468", per_client=2, clock=lambda: 0.0)
    >>> guard.check("10.0.0.5", "1111"), guard.check("10.0.0.5", "2222"), guard.check("10.0.0.5", "2468")
    ('wrong', 'wrong', 'locked')
    >>> guard.check("10.0.0.6", "2468")
    'ok'
    """

    def __init__(self, pin: str, *, per_client: int = 5, overall: int = 20, window: float = 60.0, clock=time.monotonic):
        self._pin = pin.encode("utf-8")
        self.per_client = per_client
        self.overall = overall
        self.window = window
        self.clock = clock
        self._failures: dict[str, collections.deque] = {}
        self._all_failures: collections.deque = collections.deque()
        self._lock = threading.Lock()

    def check(self, client: str, supplied) -> str:
        """"ok", "wrong" or "locked"."""
        import hmac

        now = self.clock()
        with self._lock:
            mine = self._failures.setdefault(client, collections.deque())
            for failures in (mine, self._all_failures):
                while failures and now - failures[0] >= self.window:
                    failures.popleft()
            if len(mine) >= self.per_client or len(self._all_failures) >= self.overall:
                return "locked"
            given = supplied.encode("utf-8") if isinstance(supplied, str) else b""
            if hmac.compare_digest(given, self._pin):
                return "ok"
            mine.append(now)
            self._all_failures.append(now)
            if len(self._failures) > 1000:  # forget idle clients rather than grow without bound
                for idle in [c for c, f in self._failures.items() if not f]:
                    del self._failures[idle]
            return "wrong"

    def retry_after(self, client: str) -> int:
        now = self.clock()
        with self._lock:
            oldest = [f[0] for f in (self._failures.get(client), self._all_failures) if f]
            return max(1, int(self.window - (now - min(oldest))) + 1) if oldest else 1
