"""The settle detector at other frame rates: the same rendered throws filmed at 7.5, 15, 30 and 60 fps.

For each rate and each kind of throw (plain; one die rocking on its edges before it rests; one die
landing balanced on an edge and falling flat; a hand reaching over the tray after the rest) it
tells how often the throw was reported exactly once, twice, or not at all, how often the first report
came with a die still tilted more than 5 degrees (standing on its edge), the largest tilt of a die
read, and how long after the rest it came (the rest: every die flat within 0.3 degree, so a report
during the last small rocks of a wobble comes "before" it). An arm coming to rest over the tray's edge tells how long the detector
takes it for a hand. ``--frames-counted`` gives the detector no capture times, so that it counts
frames as a 30 fps preview's, as it did before 2026-12-03 (the same throws, the same run).
``--read`` also reads each first reported frame with the shipped reader (slower).

    .venv/bin/python benchmarks/bench_settle_fps.py [--throws 24] [--hands 12] [--frames-counted] [--read]
"""

from __future__ import annotations

import argparse
import statistics
import time

import cv2
import numpy as np

from lcr_pi.vision.render import roll_sequence
from lcr_pi.vision.settle import SettleDetector

RATES = (7.5, 15.0, 30.0, 60.0)
SIZE = (640, 480)


def reports(frames, fps: float, timed: bool) -> list[int]:
    detector = SettleDetector()
    return [j for j, f in enumerate(frames)
            if detector.update(f, at=j / fps if timed else None).state == "settled"]


def throw(seed: int, fps: float, ending: str | None, hand: bool, timed: bool, reader=None) -> dict:
    frames, scene = roll_sequence(np.random.default_rng(seed), size=SIZE, n_frames=30, fps=fps, ending=ending,
                                  hand=hand)
    seq = scene.style["sequence"]
    after = frames[seq["hand_frames"][1] + 1:] if hand else frames[seq["rest_frame"]:]
    after = after or frames[-1:]
    frames = frames + [after[i % len(after)] for i in range(int(fps))]  # a second more at rest
    got = reports(frames, fps, timed)
    out = {"reports": len(got)}
    if got:
        tilts = (seq["tilts"] or []) + [0.0] * len(frames)
        out["late"] = got[0] / fps - seq["rest_time"]
        out["tilt"] = abs(tilts[got[0]])
        if hand:
            first, last = seq["hand_frames"]
            a, b = (cv2.cvtColor(f, cv2.COLOR_BGR2GRAY) for f in (frames[got[0]], frames[-1]))
            out["hand"] = first <= got[0] <= last and float((cv2.absdiff(a, b) > 40).mean()) > 0.005
        if reader is not None:
            reading = reader.read(frames[got[0]], dice_kind="pip")
            out["right"] = reading.verdict == "clear" and sorted(reading.faces) == sorted(d.face for d in scene.dice)
    return out


def arm(seed: int, fps: float, timed: bool) -> float | None:
    """Seconds from an arm's coming to rest over the tray's edge until the detector takes it as the scene."""
    frames, scene = roll_sequence(np.random.default_rng(seed), size=SIZE, n_frames=30, fps=fps)
    rest = frames[scene.style["sequence"]["rest_frame"]:]
    shade = np.ones(rest[0].shape[:2], np.float32)
    shade[:, : int(0.3 * SIZE[0])] = 0.45
    wait = [rest[i % len(rest)] for i in range(int(round(0.5 * fps)))]
    arrive = len(frames) + len(wait)
    lying = [(rest[i % len(rest)] * shade[..., None]).astype(np.uint8) for i in range(int(round(8 * fps)))]
    later = [j for j in reports(frames + wait + lying, fps, timed) if j >= arrive]
    return (later[0] - arrive + 1) / fps if later else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--throws", type=int, default=24, help="throws of each kind (default 24)")
    parser.add_argument("--hands", type=int, default=12, help="throws with a hand (default 12)")
    parser.add_argument("--arms", type=int, default=4)
    parser.add_argument("--frames-counted", action="store_true", help="no capture times: frames counted")
    parser.add_argument("--read", action="store_true", help="read each first report with the shipped reader")
    args = parser.parse_args()
    cv2.setNumThreads(1)
    timed = not args.frames_counted
    reader = None
    if args.read:
        from lcr_pi.vision.reader import DiceReader

        reader = DiceReader()
    start = time.perf_counter()
    kinds = [("plain", None, False, range(args.throws)), ("wobble", "wobble", False, range(args.throws)),
             ("topple", "topple", False, range(args.throws)), ("hand", None, True, range(100, 100 + args.hands))]
    print(f"settle detector, {SIZE[0]}x{SIZE[1]}, {'capture times' if timed else 'frames counted (no times)'}:")
    print("| throws | fps | once | twice | missed | read standing on an edge | largest tilt read, deg "
          "| with a hand in view | delay after rest, ms: median (min-max)" + (" | first report read right" if reader else "")
          + " |")
    print("|---|---|---|---|---|---|---|---|---|" + ("---|" if reader else ""))
    for name, ending, hand, seeds in kinds:
        for fps in RATES:
            got = [throw(s, fps, ending, hand, timed, reader) for s in seeds]
            late = sorted(round(1000 * g["late"]) for g in got if "late" in g)
            row = (f"| {name} | {fps:g} | {sum(g['reports'] == 1 for g in got)} | {sum(g['reports'] >= 2 for g in got)} "
                   f"| {sum(g['reports'] == 0 for g in got)} | {sum(g.get('tilt', 0.0) > 5 for g in got)} "
                   f"| {max(g.get('tilt', 0.0) for g in got):.1f} | {sum(g.get('hand', False) for g in got)} "
                   f"| {statistics.median(late):.0f} ({late[0]}-{late[-1]}) |")
            if reader:
                row += f" {sum(g.get('right', False) for g in got)} |"
            print(row, flush=True)
    for fps in RATES:
        waits = [arm(200 + k, fps, timed) for k in range(args.arms)]
        shown = ", ".join("never" if w is None else f"{w:.2f}" for w in sorted(set(waits), key=lambda w: w or 1e9))
        print(f"an arm resting at the tray's edge, {fps:g} fps: taken as the scene after {shown} s")
    print(f"({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
