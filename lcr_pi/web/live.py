"""The live board behind the page: a table listener, a numbered JSON board, odds worked out on the side.

The game thread only builds a small dict and notifies waiting streams (:meth:`LiveBoard.listener`); it
never waits for a browser or for the odds. Odds are computed on one worker thread, newest position first,
and published as a new board when they are ready.
"""

from __future__ import annotations

import collections
import ipaddress
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
    """Checks the control PIN in constant time and slows down guessing, one address at a time.

    An address with ``per_client`` wrong PINs within ``window`` seconds is locked out until the oldest of
    them is older than the window; other addresses are not (found by an audit: twenty wrong PINs from a
    guest's phone and laptop locked the table's helper out of confirm and undo). A right PIN clears its
    address's count.

    The backstop, for a guess spread over many addresses (a phone takes as many IPv6 addresses as it
    likes): ``overall`` wrong PINs from all addresses within ``overall_window`` seconds lock every address
    that has not given the right PIN within ``trusted_for`` seconds, until that count falls below
    ``overall``. An address that has (the helper's phone) is held to its own limit only. A locked
    address is refused even with the right PIN, so the lock reveals nothing.

    At most ``max_clients`` addresses with wrong PINs and ``max_trusted`` with the right one are kept;
    past that the ones heard from longest ago are forgotten. An address's wrong PINs count towards the
    backstop whether it is kept or not.

    >>> guard = PinGuard("2468", per_client=2, clock=lambda: 0.0)
    >>> guard.check("10.0.0.5", "1111"), guard.check("10.0.0.5", "2222"), guard.check("10.0.0.5", "2468")
    ('wrong', 'wrong', 'locked')
    >>> guard.check("10.0.0.6", "2468")
    'ok'
    """

    def __init__(self, pin: str, *, per_client: int = 5, window: float = 60.0, overall: int = 20,
                 overall_window: float = 600.0, trusted_for: float = 12 * 3600.0, max_clients: int = 256,
                 max_trusted: int = 64, clock=time.monotonic):
        self._pin = pin.encode("utf-8")
        self.per_client, self.window = per_client, window
        self.overall, self.overall_window = overall, overall_window
        self.trusted_for = trusted_for
        self.max_clients, self.max_trusted = max_clients, max_trusted
        self.clock = clock
        #: Wrong PINs' times by address, the address heard from longest ago first.
        self._failures: collections.OrderedDict[str, collections.deque] = collections.OrderedDict()
        self._all_failures: collections.deque = collections.deque()
        #: When each address last gave the right PIN, the oldest first.
        self._trusted: collections.OrderedDict[str, float] = collections.OrderedDict()
        self._lock = threading.Lock()

    def check(self, client: str, supplied) -> str:
        """"ok", "wrong", "locked" (too many wrong PINs from this address) or "locked-all" (too many from
        all, and this address has not given the right PIN lately)."""
        import hmac

        client = _address_key(client)
        now = self.clock()
        with self._lock:
            self._forget(now)
            locked = self._locked(client)
            if locked:
                return locked
            given = supplied.encode("utf-8") if isinstance(supplied, str) else b""
            if hmac.compare_digest(given, self._pin):
                self._failures.pop(client, None)
                self._trusted.pop(client, None)
                self._trusted[client] = now
                while len(self._trusted) > self.max_trusted:
                    self._trusted.popitem(last=False)
                return "ok"
            mine = self._failures.pop(client, collections.deque())
            mine.append(now)
            self._failures[client] = mine  # now the address heard from last
            while len(self._failures) > self.max_clients:
                self._failures.popitem(last=False)
            self._all_failures.append(now)
            return "wrong"

    def retry_after(self, client: str) -> int:
        """Whole seconds until ``client`` may try again (at least 1)."""
        client = _address_key(client)
        now = self.clock()
        with self._lock:
            self._forget(now)
            waits = [0.0]
            mine = self._failures.get(client, ())
            if len(mine) >= self.per_client:  # free once all but per_client - 1 of its wrong PINs are old
                waits.append(self.window - (now - mine[len(mine) - self.per_client]))
            if self._locked(client) == "locked-all":  # free once fewer than overall are recent
                waits.append(self.overall_window - (now - self._all_failures[len(self._all_failures) - self.overall]))
            return max(1, int(max(waits)) + 1)

    def _locked(self, client: str) -> str | None:
        if len(self._failures.get(client, ())) >= self.per_client:
            return "locked"
        if len(self._all_failures) >= self.overall and client not in self._trusted:
            return "locked-all"
        return None

    def _forget(self, now: float) -> None:
        """Drop wrong PINs older than their window, addresses left with none, and trust that has run out."""
        while self._all_failures and now - self._all_failures[0] >= self.overall_window:
            self._all_failures.popleft()
        for client in list(self._failures):
            failures = self._failures[client]
            while failures and now - failures[0] >= self.window:
                failures.popleft()
            if not failures:
                del self._failures[client]
        while self._trusted and now - next(iter(self._trusted.values())) >= self.trusted_for:
            self._trusted.popitem(last=False)


def _address_key(client: str) -> str:
    """One key for one address however it is written: an IPv4 client on an IPv6 socket comes as
    ``::ffff:192.168.1.5``, and an IPv6 address may carry a zone (``%wlan0``) or capitals."""
    try:
        ip = ipaddress.ip_address(client.split("%", 1)[0])
    except ValueError:
        return client
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return str(ip)
