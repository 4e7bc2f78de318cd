"""A yanked plug loses no game: ``lcr-pi run`` killed at chosen moments, started again, and checked.

The real program is run with typed rolls and printed words, fed a seeded stream of typed lines (rolls of
the right and wrong numbers of dice, undo, repeat, status, new, choose in Wild games, new players between
games, a series), and killed, then started again on the same state folder. Each kill is at a point known
without a clock: after the words of a line were printed (SIGKILL), or exactly at the Nth call of
``os.fsync`` or ``os.replace`` inside the program (``os._exit``, before or after the call: inside a save
of the game, of its log or of ``setup.json``), patched in the child process by :data:`DYING`, so nothing
in lcr-pi is there for the test. A model referee in this process takes the same lines.

After each kill: the saved table is the one after the last line whose save was finished, or the one
before it (the line in flight); its game replays by the rules to its saved state, with every chip
there; ``setup.json`` names the players before or after the line; the log reads. After each start: no
traceback, no warning (a set-aside or damaged file), no temporary file left, "Welcome back" said for a
saved game of the same players, and the words are the model's, line by line, from then on.

A longer random run (SIGKILL at random delays too, hundreds of kills) found the two defects whose tests
are in test_voice_setup.py and test_run_setup.py (a plug pulled while setup.json was written, and
between remembering new players and saving their game in a series).
"""

from __future__ import annotations

import json
import os
import queue
import random
import shutil
import signal
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path

import pytest

import lcr_pi
from lcr_pi.errors import UserError
from lcr_pi.inputs.keyboard import parse_command
from lcr_pi.night import resume_or_new
from lcr_pi.persist import GameStore
from lcr_pi.referee import Checkpoint, NewPlayers, RollObservation, Say
from lcr_pi.rules.config import GameConfig
from lcr_pi.rules.faces import roll_tokens
from lcr_pi.rules.game import Game
from lcr_pi.settings import load_settings
from lcr_pi.voice_setup import power_on_setup

REPO = Path(lcr_pi.__file__).resolve().parent.parent
HINT = "Type each roll, for example L dot C, or 4 1 6."
NAMES = ["Ann", "Bob", "Cy", "Di", "Ed", "Flo"]
WAIT_S = 60  # only a program that hangs waits this long: each line's words come within milliseconds

#: ``python -c DYING run ...``: lcr-pi with os.fsync and os.replace counted; at call CHAOS_DIE_AT the
#: process ends at once (os._exit: no cleanup runs, as with SIGKILL), before the call or, with
#: CHAOS_DIE_AFTER=1, after it.
DYING = """
import os, runpy, sys
calls, die_at, after = [0], int(os.environ["CHAOS_DIE_AT"]), os.environ["CHAOS_DIE_AFTER"] == "1"
def counted(real):
    def call(*args, **kwargs):
        calls[0] += 1
        if calls[0] == die_at and not after:
            os._exit(9)
        result = real(*args, **kwargs)
        if calls[0] == die_at:
            os._exit(9)
        return result
    return call
os.fsync, os.replace = counted(os.fsync), counted(os.replace)
sys.argv = ["lcr_pi"] + sys.argv[1:]
runpy.run_module("lcr_pi", run_name="__main__", alter_sys=True)
"""


class Ended(Exception):
    """The program ended (it died at its counted call) before it said what was expected."""


def spoken(outputs) -> list[str]:
    # The odds come from a solver warmed up on a thread: not compared.
    return [o.text for o in outputs if isinstance(o, Say) and "favoured to win" not in o.text]


def as_json(data):
    return json.dumps(data, sort_keys=True)


class Program:
    """``lcr-pi run --dice keyboard --speech print`` on the state folder; its words read on a thread."""

    def __init__(self, config: Path, state: Path, die_at: int = 0, die_after: bool = False):
        env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1", CHAOS_DIE_AT=str(die_at),
                   CHAOS_DIE_AFTER="1" if die_after else "0")
        self.proc = subprocess.Popen(
            [sys.executable, "-c", DYING, "run", "--dice", "keyboard", "--speech", "print", "--config", str(config),
             "--state-dir", str(state), "--setup", "remembered"],
            cwd=REPO, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            bufsize=1)
        self.words: queue.Queue = queue.Queue()
        self.errors: list[str] = []
        threading.Thread(target=self._read_words, daemon=True).start()
        threading.Thread(target=lambda: self.errors.extend(self.proc.stderr), daemon=True).start()

    def _read_words(self):
        for line in self.proc.stdout:
            if line.startswith("SAY: ") and "favoured to win" not in line:
                self.words.put(line[len("SAY: "):].rstrip("\n"))
        self.words.put(None)

    def send(self, line: str) -> None:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def expect(self, expected: list[str], what: str) -> None:
        got = []
        while len(got) < len(expected):
            try:
                text = self.words.get(timeout=WAIT_S)
            except queue.Empty:
                pytest.fail(f"{what}: no words for {WAIT_S} s; expected {expected}, got {got}")
            if text is None:
                raise Ended
            got.append(text)
            assert got == expected[:len(got)], what

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.proc.stdin.close()
        assert "Traceback" not in "".join(self.errors), "".join(self.errors)


def write_config(path: Path, state: Path, variant: str, first_player: str, series: str) -> None:
    path.write_text(f'[game]\nplayers = ["Ann", "Bob", "Cy"]\nstarting_chips = 2\nvariant = "{variant}"\n'
                    f'first_player = "{first_player}"\n[series]\n{series}\n[storage]\nstate_dir = "{state}"\n')


def on_disk(state: Path):
    """The saved table and the remembered players; game.json always parses, being written atomically."""
    table = json.loads((state / "game.json").read_text()) if (state / "game.json").exists() else None
    setup = state / "setup.json"
    players = tuple(json.loads(setup.read_text()).get("names", ())) if setup.exists() else None
    return table, players


def the_start_to_expect(config: Path, state: Path, scratch: Path):
    """The referee the next start makes, and its problems: the start's own steps, on a copy of the folder."""
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.copytree(state, scratch)
    settings = load_settings(str(config))
    settings = replace(settings, storage=replace(settings.storage, state_dir=str(scratch)))
    settings, problems = power_on_setup(settings, mode="remembered")
    referee = resume_or_new(settings, GameStore(scratch), problems, players_remembered=True)
    referee.odds = None
    return referee, problems


def check_by_the_rules(table) -> None:
    """The saved game, replayed with lcr_pi.rules, reaches its saved state, with every chip there."""
    if table is None or table["game"] is None:
        return
    saved = table["game"]
    config = GameConfig.from_dict(saved["config"])
    game = Game(config, first=saved["first"])
    for action in saved["actions"]:
        if "roll" in action:
            game.roll(action["roll"])
        else:
            game.choose(action["choose"]["decider"], action["choose"]["victims"])
    assert json.loads(json.dumps(game.state.to_dict())) == saved["state"]
    assert sum(game.state.chips) + game.state.pot == config.total_chips


def check_log(state: Path, kills: int) -> None:
    """Every line of the log reads, but at most one torn by each kill."""
    torn = 0
    for path in state.glob("game-log*.jsonl"):
        for line in path.read_bytes().splitlines():
            try:
                assert "what" in json.loads(line)
            except (ValueError, AssertionError):
                torn += 1
    assert torn <= kills


class Night:
    """The model of the table (a referee in this process), the lines it is fed, and the checks."""

    def __init__(self, tmp_path: Path, seed: int, variant: str, first_player: str = "", series: str = ""):
        self.rng = random.Random(seed)
        self.state, self.config, self.scratch = tmp_path / "state", tmp_path / "lcr.toml", tmp_path / "model"
        self.state.mkdir()
        write_config(self.config, self.state, variant, first_player, series)
        self.kills = 0
        self.model = None
        self.saved = self.players = None  # what the model last saved, and last remembered
        self.before = (None, None)  # the same before the line in flight

    def next_line(self) -> str:
        model, rng = self.model, self.rng
        x = rng.random()
        if x < 0.05:
            return "undo"
        if x < 0.07:
            return rng.choice(["repeat", "status", "help"])
        if x < 0.085:
            return "new"
        if x < 0.09:
            return rng.choice(["jump", "choose", "3 9 1"])  # refused, or nothing to choose
        if model.can_change_players() and rng.random() < (0.5 if model.phase == "game_over" else 0.05):
            return "players " + ", ".join(rng.sample(NAMES, rng.randint(3, 5)))
        if model.phase == "roll_off":
            return " ".join(str(rng.randint(1, 6)) for _ in range(3 if rng.random() < 0.9 else 2))
        if model.phase == "game_over":
            return "confirm" if rng.random() < 0.8 else "C . L"
        if model.phase == "await_decision":
            return rng.choice(["choose", "choose", "confirm", "confirm", "choose 2",
                               f"choose {rng.choice(model.config.players)}"])
        dice = model.game.state.dice_to_roll
        if rng.random() < 0.08:
            dice = max(1, dice + rng.choice([-1, 1]))  # the wrong number of dice
        faces = ["L", "C", "R", ".", "C"] + (["W"] if model.config.wild else [])
        if rng.random() < 0.15:
            return " ".join(str(rng.randint(1, 6)) for _ in range(dice))
        return " ".join(rng.choice(faces) for _ in range(dice))

    def take(self, line: str) -> list[str] | None:
        """The model's words for a typed line (as Table.action takes it), or None when it is refused."""
        self.before = (self.saved, self.players)
        try:
            name, argument = parse_command(line, self.model.config.players)
        except UserError:
            return None
        if name == "roll":
            outputs = self.model.on_roll(RollObservation(roll_tokens(argument), source="keyboard"))
        else:
            outputs = self.model.on_action(name, None if name == "confirm" else argument)
        for out in outputs:
            if isinstance(out, NewPlayers):
                self.players = tuple(out.names)
        if any(isinstance(out, Checkpoint) for out in outputs):
            self.saved = json.loads(json.dumps(self.model.snapshot()))
        return spoken(outputs)

    def start(self, die_at: int = 0, die_after: bool = False) -> Program | None:
        """Start the program and check its first words; None when it died during the start."""
        table, self.players = on_disk(self.state)
        self.model, problems = the_start_to_expect(self.config, self.state, self.scratch)
        assert problems == [], f"after kill {self.kills}"  # no set-aside or damaged file
        outputs = self.model.start()
        words = [HINT] + spoken(outputs)
        if table is not None and tuple(table["config"]["players"]) == self.model.config.players:
            assert words[1].startswith("Welcome back"), words
        self.before = (table, self.players)
        self.saved = json.loads(json.dumps(self.model.snapshot())) if any(
            isinstance(out, Checkpoint) for out in outputs) else table
        program = Program(self.config, self.state, die_at, die_after)
        try:
            program.expect(words, f"the start after kill {self.kills}")
        except Ended:
            self.killed(program, in_flight=True)
            return None
        assert not list(self.state.rglob(".*.tmp")), f"temporary files left after kill {self.kills}"
        assert on_disk(self.state)[0] == self.saved
        return program

    def line(self, program: Program) -> None:
        line = self.next_line()
        words = self.take(line)
        program.send(line)
        if words is not None:
            program.expect(words, f"{line!r} after kill {self.kills}")

    def killed(self, program: Program, *, in_flight: bool) -> None:
        program.kill()
        self.kills += 1
        table, players = on_disk(self.state)
        if in_flight:
            assert as_json(table) in {as_json(self.before[0]), as_json(self.saved)}, f"kill {self.kills}"
            assert players in {self.before[1], self.players}, f"kill {self.kills}"
        else:
            assert (as_json(table), players) == (as_json(self.saved), self.players), f"kill {self.kills}"
        check_by_the_rules(table)
        check_log(self.state, self.kills)

    def play(self, kills: int) -> None:
        while self.kills < kills:
            if self.kills % 2:  # SIGKILL once the words of a few lines were said
                program = self.start()
                if program is None:
                    continue
                for _ in range(self.rng.randint(0, 8)):
                    self.line(program)
                self.killed(program, in_flight=False)
                continue
            # Dying at a write within the next few saves (the start's own among them).
            program = self.start(die_at=self.rng.randint(1, 30), die_after=self.rng.random() < 0.5)
            if program is None:
                continue
            try:
                for _ in range(40):
                    self.line(program)
            except Ended:
                self.killed(program, in_flight=True)
            else:
                self.killed(program, in_flight=False)
        program = self.start()  # the last start is checked too
        if program is not None:
            program.kill()


@pytest.mark.parametrize("seed, variant, first_player, series", [
    (1, "classic", "", ""),
    (2, "wild", "", ""),
    (10, "classic", "", "first_to = 2"),  # kill 3 falls between remembering new players and saving their series
    (4, "wild", "roll-off", "best_of = 3"),
])
def test_a_night_killed_at_chosen_moments_resumes_each_time_where_it_was_saved(tmp_path, seed, variant,
                                                                                first_player, series):
    Night(tmp_path, seed, variant, first_player, series).play(kills=8)
