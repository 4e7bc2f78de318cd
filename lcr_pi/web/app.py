"""The scoreboard's web server: a bottle app on a small threaded WSGI server, beside the game loop.

Routes, all fixed (nothing in a request names a file):

* ``GET /`` the page; ``GET /static/scoreboard.css`` and ``/static/scoreboard.js`` (an allow-list);
* ``GET /board.json`` the board now; ``GET /events`` the board as server-sent events, whole each time;
* ``GET /evidence.jpg`` the photo of the last read roll, with the reader's overlay (the one file the
  table kept last, whatever the query string says);
* ``POST /api/action``, ``POST /api/speech`` and ``POST /api/players`` the controls: only with a PIN in
  the config, checked on every request, and only names from :data:`CONTROL_ACTIONS`; the players (names
  in seat order) start a new game with them, before a game's first roll or after its end, answered once
  the game has taken them (200, ``"players"``) or refused them (409, the referee's words as ``"error"``,
  and ``"players"`` as the game has them). A confirm
  names the guess the page shows (``"guess"``: the board's ``guess.id``, or null when it shows none) and
  is refused (409) when that is not the guess offered now.
"""

from __future__ import annotations

import json
import logging
import socket
import threading
import unicodedata
from importlib import resources
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import bottle

from lcr_pi.table import PlayersFromPage, SeenOnPage
from lcr_pi.voice_setup import MAX_PLAYERS, MIN_PLAYERS
from lcr_pi.web.lan import check_bind, is_lan_address, is_local_host, search_domains
from lcr_pi.web.live import LiveBoard, PinGuard

log = logging.getLogger("lcr_pi.web")

#: What the page's buttons may ask of the referee. Rolls and "quit" are deliberately not here.
CONTROL_ACTIONS = ("confirm", "undo", "repeat", "status", "choose", "new_game", "help")

#: Streams open at once; a Pi Zero 2 W serves a table's phones easily, not a crowd.
MAX_STREAMS = 32
#: Streams from one address: a browser opens at most six connections to a site, so a phone needs no more
#: (two spare: a closed page's stream holds its place until the next heartbeat finds it gone), and one
#: guest cannot take every place (found by an audit: 32 streams from one laptop turned every phone away).
MAX_STREAMS_PER_CLIENT = 8
HEARTBEAT_SECONDS = 15.0
#: How long a request for new players waits for the game to take or refuse them (the referee loop takes an
#: action within a frame or two); past that it is answered "queued", and the table says what happened.
PLAYERS_ANSWER_SECONDS = 5.0
MAX_BODY = 4096  # twenty names of forty characters in a script of three bytes each, with room to spare
#: The longest name the page takes: as long as a phone's button shows. How many players it may seat is
#: what a remembered setup may hold (the names are remembered there).
MAX_NAME = 40

SECURITY_HEADERS = (
    ("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                                "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"),
    ("X-Content-Type-Options", "nosniff"),
    ("X-Frame-Options", "DENY"),
    ("Referrer-Policy", "no-referrer"),
    ("Cross-Origin-Resource-Policy", "same-origin"),
    ("Permissions-Policy", "camera=(), microphone=(), geolocation=()"),
)

STATIC = {"scoreboard.css": "text/css; charset=utf-8", "scoreboard.js": "text/javascript; charset=utf-8"}


class SpeakerControl:
    """Speech rate and volume of a running :class:`lcr_pi.outputs.speech.EspeakSpeaker`, for the page.

    Values are checked with the speaker's own validators; the next sentence uses them.
    """

    def __init__(self, speaker):
        self.speaker = speaker

    @classmethod
    def of(cls, speaker) -> "SpeakerControl | None":
        """A control for a speaker with a rate and volume (espeak-ng); None for printed words."""
        ok = hasattr(speaker, "rate_wpm") and hasattr(speaker, "amplitude")
        return cls(speaker) if ok else None

    def get(self) -> tuple[int, int]:
        return int(self.speaker.rate_wpm), round(self.speaker.amplitude / 2)

    def set(self, rate: int, volume: int) -> None:
        from lcr_pi.outputs.speech import validate_rate, validate_volume

        rate_wpm, amplitude = validate_rate(rate), validate_volume(volume)
        self.speaker.rate_wpm, self.speaker.amplitude = rate_wpm, amplitude


class Refused(Exception):
    def __init__(self, status: int, message: str, headers: dict | None = None, body: dict | None = None):
        super().__init__(message)
        self.status, self.message, self.headers, self.body = status, message, headers or {}, body or {}


def make_app(board: LiveBoard, actions, *, pin: str | None = None, lan_only: bool = True):
    """The WSGI application: the bottle routes wrapped in the LAN check and the security headers."""
    app = bottle.Bottle(catchall=True)
    guard = PinGuard(pin) if pin else None
    page = _asset("index.html")
    assets = {name: _asset(name) for name in STATIC}

    def players() -> tuple[str, ...]:
        return board.table.referee.config.players  # read each time: the players can be changed

    def json_response(data, status=200, headers=None):
        return bottle.HTTPResponse(json.dumps(data), status, {
            "Content-Type": "application/json", "Cache-Control": "no-store", **(headers or {})})

    def refusal(exc: Refused):
        return json_response({"error": exc.message, **exc.body}, exc.status, exc.headers)

    @app.get("/")
    def index():
        bottle.response.set_header("Content-Type", "text/html; charset=utf-8")
        bottle.response.set_header("Cache-Control", "no-cache")
        return page

    @app.get("/static/<name>")
    def static(name):
        if name not in STATIC:
            raise bottle.HTTPError(404, "not found")
        bottle.response.set_header("Content-Type", STATIC[name])
        bottle.response.set_header("Cache-Control", "no-cache")
        return assets[name]

    @app.get("/board.json")
    def board_json():
        return bottle.HTTPResponse(board.current()[1], 200, {
            "Content-Type": "application/json", "Cache-Control": "no-store"})

    streams = {"open": 0}
    streams_of: dict[str, int] = {}  # open streams by client address
    streams_lock = threading.Lock()

    @app.get("/events")
    def events():
        # Behind the owner's proxy (allow_public) every page comes from the proxy's address.
        client = bottle.request.environ.get("REMOTE_ADDR", "") if lan_only else ""
        with streams_lock:
            if streams["open"] >= MAX_STREAMS:
                return bottle.HTTPResponse("too many pages open", 503, {"Retry-After": "5"})
            if client and streams_of.get(client, 0) >= MAX_STREAMS_PER_CLIENT:
                return bottle.HTTPResponse("too many pages open on this device: close some", 503,
                                           {"Retry-After": "5"})
            streams["open"] += 1
            streams_of[client] = streams_of.get(client, 0) + 1
        bottle.response.set_header("Content-Type", "text/event-stream; charset=utf-8")
        bottle.response.set_header("Cache-Control", "no-store")
        bottle.response.set_header("X-Accel-Buffering", "no")

        def stream():
            # A heartbeat the page sees (a comment it would not): silence for a few of them means the
            # Pi or the Wi-Fi is gone without a word, and the page says so and reconnects (found by an
            # audit: through a power cut the page said "Live" for minutes, showing a frozen board).
            ping = f"event: ping\ndata: {HEARTBEAT_SECONDS:g}\n\n".encode()
            try:
                yield b"retry: 1000\n\n" + ping  # reconnect a second after the Pi or the Wi-Fi blinks
                seen = -1  # whatever the browser saw before (Last-Event-ID), it gets the whole board now
                while not board.stopped:
                    seq, data = board.wait_newer(seen, HEARTBEAT_SECONDS)
                    if data is None:
                        yield ping
                        continue
                    seen = seq
                    yield f"id: {board.boot}-{seq}\nevent: board\ndata: {data}\n\n".encode()
            finally:
                with streams_lock:
                    streams["open"] -= 1
                    streams_of[client] -= 1
                    if not streams_of[client]:
                        del streams_of[client]

        return stream()

    @app.get("/evidence.jpg")
    def evidence():
        path = board.evidence_path  # set by the table only; the request names nothing
        try:
            data = path.read_bytes() if path is not None else None
        except OSError:
            data = None
        if data is None:
            raise bottle.HTTPError(404, "no photo yet")
        return bottle.HTTPResponse(data, 200, {"Content-Type": "image/jpeg", "Cache-Control": "no-cache"})

    def authorised() -> dict:
        """The request's JSON body, once the PIN in it is right; else :class:`Refused`."""
        if guard is None:
            raise Refused(403, "This scoreboard is read-only: no PIN is set in the config.")
        origin = bottle.request.headers.get("Origin")
        if origin and origin.split("://", 1)[-1] != bottle.request.headers.get("Host"):
            raise Refused(403, "Controls work only from this scoreboard's own page.")
        if bottle.request.content_type.split(";")[0].strip() != "application/json":
            raise Refused(415, "Send the request as JSON.")
        try:
            length = bottle.request.content_length
        except ValueError:  # a Content-Length that is no number (found by an audit: a 500 and a traceback)
            raise Refused(400, "The request's length is not a number.") from None
        if length < 0 or "HTTP_TRANSFER_ENCODING" in bottle.request.environ:
            # Without a length (chunked), bottle would read the whole body before this check, spilling
            # it into a temporary file on the Pi's card (found by an audit: 200 MB in half a second).
            raise Refused(411, "Send the request with its length.")
        if length > MAX_BODY:
            raise Refused(413, "The request is too long.")
        try:
            body = json.loads(bottle.request.body.read(MAX_BODY + 1) or b"null")
        except (ValueError, RecursionError):  # a few thousand "[" fit in a body (found by an audit: a 500)
            raise Refused(400, "The request is not valid JSON.") from None
        if not isinstance(body, dict):
            raise Refused(400, "The request must be a JSON object.")
        client = bottle.request.environ.get("REMOTE_ADDR", "")
        verdict = guard.check(client, body.get("pin"))
        if verdict == "locked":
            raise Refused(429, "Too many wrong PINs. Wait a minute, then try again.",
                          {"Retry-After": str(guard.retry_after(client))})
        if verdict == "locked-all":
            wait = guard.retry_after(client)
            raise Refused(429, f"Too many wrong PINs on this network: for {_minutes(wait)}, only a device that "
                               f"has given the right PIN before can use the controls.", {"Retry-After": str(wait)})
        if verdict != "ok":
            raise Refused(403, "Wrong PIN.")
        return body

    @app.post("/api/action")
    def action():
        try:
            body = authorised()
            name, choice = body.get("action"), body.get("choice")
            if name not in CONTROL_ACTIONS:
                raise Refused(400, f"Unknown action. Actions: {', '.join(CONTROL_ACTIONS)}.")
            if name == "choose":
                if choice is not None and choice not in players():
                    raise Refused(400, "Choose one of the players by name.")
            elif choice is not None:
                raise Refused(400, "Only 'choose' takes a player.")
            if name == "confirm":
                choice = SeenOnPage(confirmed_guess(body))
            elif "guess" in body:
                raise Refused(400, "Only 'confirm' takes a guess.")
        except Refused as exc:
            return refusal(exc)
        # A confirm from the page was for the guess the page showed, not one heard: the table takes it only
        # while that guess is still the one offered (Table.action checks again when the press's turn comes).
        actions.put((name, choice))
        return json_response({"queued": name}, 202)

    def confirmed_guess(body: dict) -> int | None:
        """The number of the guess a press of confirm is for: the one offered now, when the ``guess`` the
        page sends (the board's ``guess.id``, null when it shows none) names it; else :class:`Refused`."""
        if "guess" not in body:
            # The page and the server ship together: a press that does not say which guess it saw could take
            # one its presser never saw, so it is refused rather than guessed at.
            raise Refused(400, "Say which guess the page shows: send 'guess', the board's guess.id "
                               "(null when it shows none).")
        shown = body["guess"]
        if shown is not None and not isinstance(shown, str):
            raise Refused(400, "'guess' must be the board's guess.id, or null.")
        offer = board.table.referee.offer_number
        if shown != board.guess_id(offer):
            raise Refused(409, "That guess has changed: look at the dice and the page again."
                          if shown is not None else
                          "A guess of the dice is offered now: look at the dice and the page again.")
        return offer

    @app.post("/api/players")
    def change_players():
        try:
            body = authorised()
            names = body.get("names")
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                raise Refused(400, "Send the names as a list, in seat order.")
            names = [" ".join(n.split()) for n in names if n.strip()]
            if not MIN_PLAYERS <= len(names) <= MAX_PLAYERS:
                raise Refused(400, f"Give {MIN_PLAYERS} to {MAX_PLAYERS} names, one for each player, in seat order.")
            # A longer name the table already has (from the settings file) may stay: the page fills
            # the field with the players' names, and changing another must not be refused for it.
            if any(len(n) > MAX_NAME and n not in players() for n in names):
                raise Refused(400, f"A name may have at most {MAX_NAME} characters.")
            # A name the table already has may stay here too, as a long one may: the page sends them back.
            if any(_turns_text_around(n) and n not in players() for n in names):
                raise Refused(400, "A name may not hold a right-to-left or left-to-right control character: "
                                   "it would turn the rest of each sentence on the page around.")
            if any(not _visible(n) and n not in players() for n in names):
                raise Refused(400, "Every name needs a letter or sign you can see.")
            # Told apart by what shows: "Ann" and "Ann" with a zero-width space look and sound the same.
            if len({_visible(n).casefold() for n in names}) != len(names):
                raise Refused(400, "Every player needs a different name.")
            if not board.table.referee.can_change_players():
                # Checked again by the referee when the request's turn comes; this answers at once.
                raise Refused(409, "The players can be changed before the first roll of a game or once it is over.",
                              body={"players": list(players())})
            if tuple(names) == players():
                # The referee would only say so, while the page said "New game with ..." (found by a
                # review: the button pressed with the names as the page filled them in).
                raise Refused(400, "These are the players already: change a name, or add or remove one.")
        except Refused as exc:
            return refusal(exc)
        # The answer is the game's: a roll landing before the request's turn comes makes the referee refuse
        # the names this server let through (found by an audit: the page said "New game with ..." then).
        request = PlayersFromPage("\n".join(names))
        actions.put(("players", request))
        if not request.wait(PLAYERS_ANSWER_SECONDS):
            return json_response({"queued": "players", "names": names}, 202)  # the table will say
        if request.taken:
            return json_response({"players": list(request.players)})
        return json_response({"error": " ".join(request.said) or "The players were not changed.",
                              "players": list(request.players)}, 409)

    @app.post("/api/speech")
    def speech():
        from lcr_pi.errors import UserError

        try:
            body = authorised()
            if board.speech is None:
                raise Refused(404, "Speech settings cannot be changed here (no speech engine).")
            rate, volume = body.get("rate"), body.get("volume")
            try:
                board.speech.set(rate, volume)
            except UserError as exc:
                raise Refused(400, f"{str(exc)[0].upper()}{str(exc)[1:]}.") from None
        except Refused as exc:
            return refusal(exc)
        board.speech_changed()
        rate, volume = board.speech.get()
        return json_response({"rate": rate, "volume": volume})

    def error_page(res):
        bottle.response.set_header("Content-Type", "text/plain; charset=utf-8")
        return f"{res.status_code} {res.body or res.status_line}\n"

    app.default_error_handler = error_page
    local_domains = [search_domains()]
    own_names = (socket.gethostname(),)  # not getfqdn(): a DNS lookup, slow on a Pi without a network

    def local_host(host: str) -> bool:
        if is_local_host(host, domains=local_domains[0], own_names=own_names):
            return True
        # The service starts before the network (found by a review: at power-on resolv.conf has no search
        # domain until the router answers, and "raspberrypi.fritz.box" was refused all night). A name not
        # known is checked against resolv.conf as it is now (a small file, read only then).
        local_domains[0] = search_domains()
        return is_local_host(host, domains=local_domains[0], own_names=own_names)

    def application(environ, start_response):
        def with_headers(status, headers, exc_info=None):
            names = {k.lower() for k, _ in headers}
            return start_response(status, headers + [h for h in SECURITY_HEADERS if h[0].lower() not in names],
                                  exc_info)

        if lan_only and not is_lan_address(environ.get("REMOTE_ADDR", "")):
            with_headers("403 Forbidden", [("Content-Type", "text/plain; charset=utf-8")])
            return [b"403 This scoreboard serves the local network only.\n"]
        host = environ.get("HTTP_HOST", "")
        if lan_only and host and not local_host(host):
            # Found by an audit: a page of another site whose name was pointed at the Pi (DNS rebinding),
            # opened by a guest's phone, could read the board and the tray's photo, and try PINs.
            with_headers("403 Forbidden", [("Content-Type", "text/plain; charset=utf-8")])
            return [b"403 Open the scoreboard by the Pi's address or local name (such as "
                    b"http://raspberrypi.local:8080), not by another site's name.\n"]
        return app(environ, with_headers)

    return application


#: Embeddings, overrides and isolates: one in a name turns the rest of a sentence with it (found by an
#: audit: with "\u202eBob" the history showed ".tfel ruoy no yC ot pihc eno ssaP .C ,tod ,L dellor boB").
_DIRECTION_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
#: Letters and signs that show as nothing (Hangul fillers, the blank Braille pattern).
_BLANK_SIGNS = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def _turns_text_around(name: str) -> bool:
    return any(c in _DIRECTION_CONTROLS for c in name)


def _visible(name: str) -> str:
    """The name without what does not show: format characters (zero-width spaces, joiners, direction
    marks), control characters, spaces and blank signs. A family emoji keeps its people."""
    return "".join(c for c in name if unicodedata.category(c)[0] not in "CZ" and c not in _BLANK_SIGNS)


def _minutes(seconds: int) -> str:
    """"a minute", "2 minutes", ... (rounded up): how long a lock-out lasts, in words.

    >>> _minutes(7), _minutes(61), _minutes(600)
    ('a minute', '2 minutes', '10 minutes')
    """
    minutes = -(-seconds // 60)
    return "a minute" if minutes <= 1 else f"{minutes} minutes"


def _asset(name: str) -> bytes:
    return resources.files("lcr_pi.web").joinpath("static", name).read_bytes()


# -- the server ------------------------------------------------------------------------------------


#: Connections served at once (the streams, and a few requests beside them); more are closed at once.
#: Each holds a file descriptor of the game's process, which has 1024 under systemd (found by an audit:
#: a guest's laptop holding a thousand half-sent requests open left the game unable to save itself,
#: "cannot save the game ... (Too many open files)").
MAX_CONNECTIONS = 128


class _ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True  # a phone's open stream never keeps the program from exiting
    block_on_close = False

    def __init__(self, *args, **kwargs):
        self._connections = 0
        self._connections_lock = threading.Lock()
        super().__init__(*args, **kwargs)

    def process_request(self, request, client_address):
        with self._connections_lock:
            full = self._connections >= MAX_CONNECTIONS
            if not full:
                self._connections += 1
        if full:
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)  # a thread that serves it, then says done
        except BaseException:
            self._connection_done()
            raise

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._connection_done()

    def _connection_done(self):
        with self._connections_lock:
            self._connections -= 1


class _ThreadingServer6(_ThreadingServer):
    address_family = socket.AF_INET6


class _QuietHandler(WSGIRequestHandler):
    timeout = 60  # a client that stops reading or writing gives its thread back

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        log.debug("%s %s", self.address_string(), format % args)


class ScoreboardServer:
    """A running scoreboard: ``url``, ``port`` and :meth:`stop`."""

    def __init__(self, table, board: LiveBoard, httpd, thread):
        self.table, self.board, self._httpd, self._thread = table, board, httpd, thread
        self.host, self.port = httpd.server_address[:2]

    @property
    def url(self) -> str:
        host = socket.gethostname() if self.host in ("0.0.0.0", "::") else self.host
        return f"http://{f'[{host}]' if ':' in host else host}:{self.port}/"

    def stop(self) -> None:
        if self.board.listener in self.table.listeners:
            self.table.listeners.remove(self.board.listener)
        self.board.stop()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


def start_scoreboard(table, actions, host: str = "0.0.0.0", port: int = 8080, *, pin: str | None = None,
                     speech=None, allow_public: bool = False, odds: bool = True) -> ScoreboardServer:
    """Serve the live scoreboard of ``table`` on a background thread and return the running server.

    ``actions`` is the referee loop's :class:`lcr_pi.inputs.ActionQueue`; without ``pin`` the page is
    read-only. ``speech`` (e.g. :meth:`SpeakerControl.of`) lets the page change the speech rate and
    volume. Refuses a public ``host`` unless ``allow_public`` (see :mod:`lcr_pi.web.lan`).
    """
    from lcr_pi.errors import UserError

    check_bind(host, allow_public=allow_public)
    board = LiveBoard(table, controls=bool(pin), speech=speech, odds=odds)
    app = make_app(board, actions, pin=pin, lan_only=not allow_public)
    server_class = _ThreadingServer6 if ":" in host else _ThreadingServer
    try:
        httpd = make_server(host, port, app, server_class=server_class, handler_class=_QuietHandler)
    except OSError as exc:
        board.stop()
        raise UserError(f"--web: cannot listen on {host}:{port} ({exc.strerror or exc})") from None
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.1},
                              name="scoreboard-web", daemon=True)
    thread.start()
    table.listeners.append(board.listener)
    return ScoreboardServer(table, board, httpd, thread)


def start_web(option: str | None, web, table, actions, speaker=None) -> ScoreboardServer | None:
    """Start the page for ``lcr-pi run`` / ``demo``, or return None when it is off.

    ``option`` is ``--web``'s value: None when not given (then the page runs only if ``web.enabled``),
    ``""`` for ``--web`` alone (``web.bind``), or ``HOST:PORT``. ``web`` is the ``[web]`` settings
    (``enabled``, ``bind``, ``pin``, ``allow_public``).
    """
    from lcr_pi.web.lan import parse_bind

    if option is None and not getattr(web, "enabled", False):
        return None
    host, port = parse_bind(option or getattr(web, "bind", "0.0.0.0:8080"))
    pin = getattr(web, "pin", "") or None
    public = getattr(web, "allow_public", False)
    server = start_scoreboard(table, actions, host, port, pin=pin, speech=SpeakerControl.of(speaker),
                              allow_public=public)
    where = "any network: web.allow_public is on" if public else "local network only"
    mode = "controls need the PIN" if pin else "read-only; set web.pin in the config for controls"
    print(f"Scoreboard: {server.url} ({where}; {mode})", flush=True)
    return server
