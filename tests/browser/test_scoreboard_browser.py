"""The scoreboard in a real browser: Debian's headless Chromium, driven by playwright-core from node.

This test plays a game in-process (the real Referee, Table and referee loop, with typed rolls and a
synthetic evidence photo) and serves it with :func:`lcr_pi.web.start_scoreboard`. A small "game master"
HTTP endpoint, here in the test only, lets the browser script play a turn, blink the server and read the
engine's state; ``scoreboard.test.mjs`` checks the page against it (see its header for what it asserts).

Needs /usr/bin/chromium (apt: chromium), node, and ``npm ci`` in tests/browser. Without them the test is
skipped with the reason, except under CI (``CI`` set), where it fails: CI must never skip it.
Set ``SCOREBOARD_SCREENSHOTS=docs`` to write the README screenshots.
"""

from __future__ import annotations

import json
import os
import queue
import random
import shutil
import subprocess
import threading
import time
from pathlib import Path

import bottle
import cv2
import numpy as np
import pytest

from lcr_pi.announce import spoken_faces
from lcr_pi.inputs import ActionQueue
from lcr_pi.persist import GameStore
from lcr_pi.referee import Referee, RollObservation
from lcr_pi.rules import GameConfig
from lcr_pi.stats import odds_for_state
from lcr_pi.table import Table, run_loop
from lcr_pi.web import SpeakerControl, start_scoreboard
from lcr_pi.web import app as web_app
from lcr_pi.web.board import odds_view

HERE = Path(__file__).resolve().parent
PIN = "2468"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


def _missing() -> str | None:
    if not Path(CHROMIUM).exists():
        return f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    if shutil.which("node") is None:
        return "no node (apt-get install nodejs)"
    for package in ("playwright-core", "axe-core"):
        if not (HERE / "node_modules" / package / "package.json").exists():
            return f"no {package} in tests/browser/node_modules (run: npm ci --prefix tests/browser)"
    return None


class RecordingSpeaker:
    """A speaker with a rate and volume (like espeak-ng's) that keeps the words instead of speaking."""

    def __init__(self):
        self.words: list[str] = []
        self.rate_wpm, self.amplitude = 175, 200

    def say(self, text):
        self.words.append(text)

    def cue(self, sound):
        pass


def synthetic_evidence(obs: RollObservation) -> bytes:
    """A small JPEG of a 'tray' with one marked box per die, as the reader's overlay draws them."""
    image = np.full((240, 320, 3), (40, 90, 40), np.uint8)
    cv2.rectangle(image, (10, 10), (310, 230), (30, 60, 120), 6)
    for i, face in enumerate(obs.faces):
        x = 30 + i * 95
        cv2.rectangle(image, (x, 80), (x + 70, 150), (245, 245, 245), -1)
        cv2.rectangle(image, (x - 4, 76), (x + 74, 154), (0, 220, 255), 3)
        cv2.putText(image, "." if face == "dot" else face, (x + 18, 135), cv2.FONT_HERSHEY_SIMPLEX, 1.6, (0, 0, 0), 4)
    return cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 80])[1].tobytes()


class HoldingActions(ActionQueue):
    """The referee loop's queue; between :meth:`hold_players` and :meth:`release_players` new players from
    the page wait aside, as if the loop were slow to reach them (a roll can then land first)."""

    def __init__(self):
        super().__init__()
        self.holding = False
        self.held: list = []

    def put(self, item, *args, **kwargs):
        if self.holding and item[0] == "players":
            self.held.append(item)
            return
        super().put(item, *args, **kwargs)

    def hold_players(self) -> None:
        self.holding = True

    def release_players(self) -> None:
        self.holding = False
        while self.held:
            super().put(self.held.pop(0))


class TrayRolls:
    """A dice source like the camera's: each roll the game master throws comes with a photo."""

    def __init__(self):
        self.thrown: queue.Queue = queue.Queue()

    def poll(self):
        try:
            faces, verdict = self.thrown.get(timeout=0.02)  # waits a little, as a camera waits for its next frame
        except queue.Empty:
            return None
        return RollObservation(tuple(faces), verdict, evidence=np.zeros((4, 4, 3), np.uint8))


class GameMaster:
    """Plays the game for the browser script and tells it what the engine says."""

    def __init__(self, tmp_path: Path):
        self.config = GameConfig.create(["Ann", "Bob", "Cy", "Dee"], variant="wild")
        self.referee = Referee(self.config)
        self.speaker = RecordingSpeaker()
        self.actions = HoldingActions()
        self.table = Table(self.referee, speaker=self.speaker, store=GameStore(tmp_path, evidence_frames=5),
                           encode_evidence=synthetic_evidence)
        self.tray = TrayRolls()
        self.rng = random.Random(7)
        self.last_thrown: list[str] = []
        self.frozen = threading.Event()
        self._done = threading.Condition()
        self._batches = 0
        self.table.listeners.append(self._batch_done)
        self.scoreboard = start_scoreboard(self.table, self.actions, "127.0.0.1", 0, pin=PIN,
                                           speech=SpeakerControl.of(self.speaker))
        self.read_only = start_scoreboard(self.table, self.actions, "127.0.0.1", 0)
        self.odds_off = start_scoreboard(self.table, self.actions, "127.0.0.1", 0, odds=False)
        self.loop = threading.Thread(target=run_loop, args=(self.table,),
                                     kwargs={"actions": self.actions, "dice_source": self.tray}, daemon=True)
        self.loop.start()
        self.wait_batches(0)

    def _batch_done(self, outputs, referee):
        with self._done:
            self._batches += 1
            self._done.notify_all()

    def wait_batches(self, seen: int, timeout: float = 10) -> None:
        with self._done:
            assert self._done.wait_for(lambda: self._batches > seen, timeout=timeout), "the game loop is stuck"

    def roll(self, wild: bool = False, unsure: bool = False) -> None:
        """Throw the right number of dice (random faces from a seeded generator, or a Wild) and wait;
        ``unsure``: the reader is unsure of them, and offers them as its guess for a press of confirm."""
        n = self.referee.game.state.dice_to_roll
        faces = ["W"] + ["dot"] * (n - 1) if wild else [self.rng.choice(["L", "C", "R", "dot", "dot", "dot"])
                                                          for _ in range(n)]
        with self._done:
            seen = self._batches
        self.last_thrown = faces
        self.tray.thrown.put((faces, "unsure" if unsure else "clear"))
        self.wait_batches(seen)

    def state(self) -> dict:
        ref = self.referee
        s = ref.game.state
        return {
            "chips": list(s.chips), "pot": s.pot, "current": s.current, "dice": s.dice_to_roll,
            "phase": ref.phase, "rolls": s.rolls, "winner": s.winner,
            "players": list(ref.config.players),
            "choices": [ref.config.players[x] for x in s.pending.eligible if s.chips[x]] if s.pending else [],
            "said": self.speaker.words[-1] if self.speaker.words else "",
            "odds": odds_view(odds_for_state(s))["percent"],
            "speech": list(SpeakerControl.of(self.speaker).get()),
            "thrown": self.last_thrown,
            "guess": spoken_faces(ref.offered_guess) if ref.offered_guess else None,
            "held": len(self.actions.held),
        }

    def blink(self) -> None:
        """The Pi blinks: the page's server goes away, a turn is played meanwhile, and it comes back."""
        port = self.scoreboard.port
        self.scoreboard.stop()
        self.roll()
        self.scoreboard = start_scoreboard(self.table, self.actions, "127.0.0.1", port, pin=PIN,
                                           speech=SpeakerControl.of(self.speaker))

    def freeze(self) -> None:
        """The Pi goes silent without closing a connection (a power cut, the Wi-Fi gone): its page
        streams send nothing more, not even the heartbeat, until :meth:`thaw`."""
        board = self.scoreboard.board
        real = board.wait_newer
        self.frozen.set()

        def wait_newer(seen, timeout):
            while self.frozen.is_set():
                time.sleep(0.02)
            return real(seen, timeout)

        board.wait_newer = wait_newer

    def thaw(self) -> None:
        self.frozen.clear()

    def stop(self) -> None:
        self.frozen.clear()
        self.actions.put(("quit", None))
        self.loop.join(timeout=5)
        self.scoreboard.stop()
        self.read_only.stop()
        self.odds_off.stop()


def serve_game_master(gm: GameMaster):
    app = bottle.Bottle()

    def reply(data):
        bottle.response.content_type = "application/json"
        return json.dumps(data)

    @app.get("/state")
    def state():
        return reply(gm.state())

    @app.post("/roll")
    def roll():
        body = bottle.request.json or {}
        gm.roll(wild=bool(body.get("wild")), unsure=bool(body.get("unsure")))
        return reply(gm.state())

    @app.post("/hold-players")
    def hold_players():
        """``answer_seconds``: how long the page's server waits for the game to take or refuse them."""
        web_app.PLAYERS_ANSWER_SECONDS = float((bottle.request.json or {}).get("answer_seconds", 5.0))
        gm.actions.hold_players()
        return reply(gm.state())

    @app.post("/release-players")
    def release_players():
        web_app.PLAYERS_ANSWER_SECONDS = 5.0
        gm.actions.release_players()
        return reply(gm.state())

    @app.post("/blink")
    def blink():
        gm.blink()
        return reply(gm.state())

    @app.post("/freeze")
    def freeze():
        gm.freeze()
        return reply(gm.state())

    @app.post("/thaw")
    def thaw():
        gm.thaw()
        return reply(gm.state())

    from wsgiref.simple_server import WSGIRequestHandler, make_server

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args):
            pass

    httpd = make_server("127.0.0.1", 0, app, handler_class=Quiet)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


CRASHED = "Target crashed"  # what playwright says when Chromium's renderer process died


def _run_browser_script(folder):
    """Run scoreboard.test.mjs against a new game master whose files are in folder."""
    folder.mkdir()
    gm = GameMaster(folder)
    httpd = serve_game_master(gm)
    env = {
        **os.environ,
        "CHROMIUM": CHROMIUM,
        "SCOREBOARD_URL": gm.scoreboard.url,
        "READ_ONLY_URL": gm.read_only.url,
        "ODDS_OFF_URL": gm.odds_off.url,
        "GM_URL": f"http://127.0.0.1:{httpd.server_address[1]}",
        "PIN": PIN,
    }
    shots = os.environ.get("SCOREBOARD_SCREENSHOTS")
    if shots:
        env["SCREENSHOT_DIR"] = str(Path(shots).resolve())
    try:
        run = subprocess.run(["node", str(HERE / "scoreboard.test.mjs")], cwd=HERE, env=env,
                             capture_output=True, text=True, timeout=120)
    finally:
        httpd.shutdown()
        gm.stop()
    print(run.stdout)
    return run


def test_scoreboard_in_chromium(tmp_path, monkeypatch):
    missing = _missing()
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"the browser test cannot run in CI: {missing}")
        pytest.skip(missing)
    monkeypatch.setattr(web_app, "HEARTBEAT_SECONDS", 1.0)  # a silent Pi is noticed in seconds, not a minute
    monkeypatch.setattr(web_app, "PLAYERS_ANSWER_SECONDS", 5.0)  # the game master changes it
    run = _run_browser_script(tmp_path / "first")
    if run.returncode != 0 and CRASHED in run.stderr:
        # Chromium's renderer died under the page (seen once in CI, at a layout check that passes
        # everywhere else): a fault of the machine, not of the page. Once more on a new game; a
        # second crash fails the test.
        print(f"Chromium's renderer crashed; running the script once more:\n{run.stderr}")
        run = _run_browser_script(tmp_path / "again")
    assert run.returncode == 0, f"the browser script failed:\n{run.stdout}\n{run.stderr}"
    summary = json.loads(run.stdout.strip().splitlines()[-1])
    assert summary["turns_checked"] >= 8
    assert summary["serious_violations"] == 0
