"""The referee at the table, end to end: settled frame -> first spoken word, and CPU while waiting.

1. Rendered roll sequences (1280x960, like the camera's preview) go frame by frame through the real
   settle detector, the real dice reader, the referee and the real espeak-ng speaker. Each WAV that
   espeak-ng writes is a FIFO, read as it is produced, so the time from the moment the settle detector
   reports "settled" to the first audio of the first sentence about that roll is measured directly,
   plus the silence espeak-ng puts before the first word. Before each roll the previous words are
   allowed to finish, as they are at a real table while the next player picks up the dice.
2. CPU while waiting for a roll: the loop is fed a still tray at 30 frames a second for a while; the
   process's CPU time over the wall time is the share of one core it uses (frames are made in advance,
   so the camera driver's own cost is not included).

    .venv/bin/python benchmarks/bench_referee.py [--rolls 12] [--wait-seconds 10]
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import resource
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import cv2
import numpy as np

from lcr_pi.camera import ListSource
from lcr_pi.camera_dice import CameraDice
from lcr_pi.outputs.speech import EspeakSpeaker
from lcr_pi.referee import Referee
from lcr_pi.rules import GameConfig
from lcr_pi.table import Table, run_loop
from lcr_pi.vision.reader import DiceReader
from lcr_pi.vision.render import roll_sequence
from lcr_pi.vision.settle import SettleDetector

WAV_HEADER_BYTES = 44
AUDIBLE = 1000


class TimedSettle(SettleDetector):
    """The real settle detector, noting when it reports each roll."""

    def __init__(self):
        super().__init__()
        self.settled_at: list[float] = []

    def update(self, frame, at=None):
        result = super().update(frame, at=at)
        if result.state == "settled":
            self.settled_at.append(time.perf_counter())
        return result


def drain_fifos(folder: Path, count: int, first_audio: dict, lead_in: dict, stop: threading.Event) -> None:
    for i in range(1, count + 1):
        if stop.is_set():
            return
        with open(folder / f"{i:04d}.wav", "rb") as fifo:
            header = fifo.read(WAV_HEADER_BYTES)
            first = fifo.read1(65536)
            first_audio[i] = time.perf_counter()
            data = first + fifo.read()
        if len(header) == WAV_HEADER_BYTES:
            rate = int.from_bytes(header[24:28], "little")
            samples = np.frombuffer(data[: len(data) // 2 * 2], dtype="<i2")
            loud = np.flatnonzero(np.abs(samples.astype(np.int32)) > AUDIBLE)
            lead_in[i] = (loud[0] if len(loud) else 0) / rate


def settled_to_first_word(rolls: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    reader = DiceReader()
    config = GameConfig.create(["Ann", "Bob", "Cy"], starting_chips=3)
    referee = Referee(config)
    results = {"settled_to_first_audio_ms": [], "settled_to_first_word_ms": [], "read_ms": []}
    with tempfile.TemporaryDirectory(prefix="bench-referee-") as tmp:
        folder = Path(tmp)
        n_fifos = 40 * rolls + 20
        for i in range(1, n_fifos + 1):
            os.mkfifo(folder / f"{i:04d}.wav")
        first_audio, lead_in, stop = {}, {}, threading.Event()
        drainer = threading.Thread(target=drain_fifos, args=(folder, n_fifos, first_audio, lead_in, stop), daemon=True)
        drainer.start()
        speaker = EspeakSpeaker(output_dir=folder, sounds=False)
        table = Table(referee, speaker=speaker)
        table.start()
        def timed_read(frame):
            t = time.perf_counter()
            reading = reader.read(frame, dice_kind="lcr")
            results["read_ms"].append((time.perf_counter() - t) * 1000)
            return reading

        for _ in range(rolls):
            if referee.phase == "game_over":
                table.action("confirm")
            speaker.wait_until_idle(30)
            n = referee.game.state.dice_to_roll if referee.phase != "await_decision" else 0
            if n == 0:
                break
            faces = [str(rng.choice(["L", "C", "R", "dot", "dot", "dot"])) for _ in range(n)]
            seq, _ = roll_sequence(rng, size=(1280, 960), faces=faces, kind="lcr", n_frames=12)
            # Each rendered roll is a new tray under a new camera: a fresh settle detector watches it.
            settle = TimedSettle()
            frames = ListSource(seq)
            source = CameraDice(frames, timed_read, settle)
            sentence_index = len(speaker.history) + 1
            before = len(settle.settled_at)
            while not frames.exhausted:
                obs = source.poll()
                if obs is not None:
                    table.roll_seen(obs)
                    break
            if len(settle.settled_at) == before:
                continue
            speaker.wait_until_idle(30)
            deadline = time.monotonic() + 10
            while sentence_index not in first_audio and time.monotonic() < deadline:
                time.sleep(0.005)
            if sentence_index in first_audio:
                ms = (first_audio[sentence_index] - settle.settled_at[-1]) * 1000
                results["settled_to_first_audio_ms"].append(ms)
                results["settled_to_first_word_ms"].append(ms + 1000 * lead_in.get(sentence_index, 0.0))
        stop.set()
        speaker.close()
        for i in range(len(first_audio) + 1, n_fifos + 1):  # unblock the drainer's pending open()
            try:
                fd = os.open(folder / f"{i:04d}.wav", os.O_WRONLY | os.O_NONBLOCK)
                os.close(fd)
            except OSError:
                pass
    return results


class PacedStillTray:
    """A still tray delivered at ``fps`` frames a second, like a camera's preview."""

    def __init__(self, frame, fps: float, seconds: float):
        self.frame, self.period, self.end = frame, 1.0 / fps, time.monotonic() + seconds
        self.next = time.monotonic()
        self.exhausted = False
        self.frames = 0

    def read(self):
        now = time.monotonic()
        if now >= self.end:
            self.exhausted = True
            return None
        if now < self.next:
            time.sleep(self.next - now)
        self.next += self.period
        self.frames += 1
        return self.frame


def cpu_while_waiting(seconds: float, fps: float, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    from lcr_pi.vision.render import random_scene

    still = random_scene(rng, size=(1280, 960), n_dice=3, kind="lcr").image
    reader = DiceReader()
    referee = Referee(GameConfig.create(["Ann", "Bob", "Cy"]))

    class Quiet:
        def say(self, text): ...
        def cue(self, sound): ...

    table = Table(referee, speaker=Quiet())
    tray = PacedStillTray(still, fps, seconds)
    source = CameraDice(tray, lambda f: reader.read(f, dice_kind="lcr"))
    source.settle.update(still)  # the tray was already in view: nothing new to read
    usage0, wall0 = resource.getrusage(resource.RUSAGE_SELF), time.monotonic()
    run_loop(table, actions=queue.Queue(), dice_source=source)
    usage1, wall1 = resource.getrusage(resource.RUSAGE_SELF), time.monotonic()
    cpu = (usage1.ru_utime - usage0.ru_utime) + (usage1.ru_stime - usage0.ru_stime)
    return {"cpu_share_of_one_core": cpu / (wall1 - wall0), "frames": tray.frames, "fps": fps,
            "seconds": wall1 - wall0}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rolls", type=int, default=12)
    parser.add_argument("--wait-seconds", type=float, default=10.0)
    parser.add_argument("--fps", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    cv2.setNumThreads(1)
    latency = settled_to_first_word(args.rolls, args.seed)
    waiting = cpu_while_waiting(args.wait_seconds, args.fps, args.seed)
    summary = {
        "date": time.strftime("%Y-%m-%d"),
        "rolls_measured": len(latency["settled_to_first_word_ms"]),
        "settled_to_first_audio_ms_median": statistics.median(latency["settled_to_first_audio_ms"]),
        "settled_to_first_word_ms_median": statistics.median(latency["settled_to_first_word_ms"]),
        "settled_to_first_word_ms_max": max(latency["settled_to_first_word_ms"]),
        "read_ms_median": statistics.median(latency["read_ms"]),
        "cpu_while_waiting": round(waiting["cpu_share_of_one_core"], 4),
        "waiting_fps": waiting["fps"],
    }
    print("| measure | result | target |")
    print("|---|---|---|")
    print(f"| settled frame -> first spoken word (median of {summary['rolls_measured']} rolls) | "
          f"{summary['settled_to_first_word_ms_median']:.0f} ms (first audio {summary['settled_to_first_audio_ms_median']:.0f} ms, "
          f"max {summary['settled_to_first_word_ms_max']:.0f} ms; reading {summary['read_ms_median']:.0f} ms) | <= 500 ms |")
    print(f"| CPU while waiting for a roll ({waiting['fps']:.0f} fps preview) | "
          f"{100 * summary['cpu_while_waiting']:.1f} % of one core | <= 10 % |")
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
