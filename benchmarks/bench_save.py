"""Benchmark: what the card is given after every turn of a long game, in bytes and milliseconds.

Usage: python benchmarks/bench_save.py [--at 416] [--players 12] [--chips 10] [--state-dir DIR]

Plays one long game of typed rolls (seeded; the C face comes up half as often as on real dice, so that
a 12-player 10-chip game is still going at roll 416) through the real referee, table and state folder,
and prints, around roll ``--at`` and around roll 10: the size of ``game.json``, the median time to make
the table's snapshot, to write it (JSON, temporary file, fsync, rename, fsync of the folder) and to
append the log line, and the time to resume from the file. The save is written before a roll's words
are said, so its time delays them. ``--state-dir`` puts the state folder on another disk (an SD card).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import tempfile
import time

from lcr_pi.persist import GameStore
from lcr_pi.referee import Referee, RollObservation
from lcr_pi.rules import GameConfig
from lcr_pi.table import Table

FACES = ["L", "C", "R", ".", ".", ".", "L", "R", ".", ".", ".", "."]


class Quiet:
    def say(self, text):
        pass

    def cue(self, sound):
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--at", type=int, default=416, help="the roll to measure around (default 416)")
    parser.add_argument("--players", type=int, default=12)
    parser.add_argument("--chips", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--state-dir", default=None, help="a folder to make the state folder in (default /tmp)")
    args = parser.parse_args()

    folder = tempfile.mkdtemp(prefix="bench-save-", dir=args.state_dir)
    try:
        store = GameStore(folder)
        referee = Referee(GameConfig.create([f"P{i + 1}" for i in range(args.players)], starting_chips=args.chips))
        table = Table(referee, speaker=Quiet(), store=store)
        table.perform(referee.start())
        rolls = lambda: referee.game.state.rolls  # noqa: E731
        snapshot_ms, save_ms, log_ms, size = {}, {}, {}, {}

        def timed(fn, into, after=None):
            def wrapper(*a, **k):
                started = time.perf_counter()
                result = fn(*a, **k)
                into[rolls()] = (time.perf_counter() - started) * 1000
                if after:
                    after()
                return result
            return wrapper

        referee.snapshot = timed(referee.snapshot, snapshot_ms)
        store.save = timed(store.save, save_ms, lambda: size.__setitem__(rolls(), os.path.getsize(store.state_path)))
        store.log = timed(store.log, log_ms)
        rng = random.Random(args.seed)
        while rolls() < args.at + 10:
            if referee.game.state.is_over:
                raise SystemExit(f"the game ended at roll {rolls()}; try another --seed or a smaller --at")
            faces = tuple(rng.choice(FACES) for _ in range(referee.game.state.dice_to_roll))
            table.roll_seen(RollObservation(faces, source="keyboard"))

        def around(values, at):
            return statistics.median(v for r, v in values.items() if at - 10 <= r <= at + 10)

        for at in (10, args.at):
            print(f"around roll {at}: game.json {size[at]} bytes; snapshot {around(snapshot_ms, at):.2f} ms, "
                  f"save {around(save_ms, at):.2f} ms, log line {around(log_ms, at):.2f} ms")
        started = time.perf_counter()
        again = Referee.restore(GameStore(folder).load())
        print(f"resume at roll {rolls()}: {(time.perf_counter() - started) * 1000:.1f} ms")
        assert again.game.state == referee.game.state
        print(f"game-log.jsonl: {os.path.getsize(store.log_path)} bytes after {rolls()} rolls")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
