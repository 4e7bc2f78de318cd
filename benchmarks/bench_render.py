"""Median time to render synthetic scenes (lcr_pi.vision.render), on one OpenCV thread.

    .venv/bin/python benchmarks/bench_render.py [--n 60]

Prints the median milliseconds (wall clock, and this process's CPU time) per 1280x960 scene of 3 dice (pip and LCR), per frame of a roll
sequence at 1280x960, per frame of the demo's roll (640x480, 10 frames, 1-3 LCR dice), and per
full-resolution pi-black-tray scene. Each sequence is timed whole and divided by its frame count.
"""

from __future__ import annotations

import argparse
import time

import cv2
import numpy as np

from lcr_pi.vision.render import random_scene, roll_sequence


def median_ms(fn, n: int) -> str:
    """Median wall-clock and CPU milliseconds per call (CPU time is steadier on a busy machine)."""
    wall, cpu = [], []
    for _ in range(n):
        t, c = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return Timing(1000 * float(np.median(wall)), 1000 * float(np.median(cpu)))


class Timing(tuple):
    def __new__(cls, wall: float, cpu: float):
        return super().__new__(cls, (wall, cpu))

    def __truediv__(self, k: float) -> "Timing":
        return Timing(self[0] / k, self[1] / k)

    def __format__(self, spec: str) -> str:
        return f"{format(self[0], spec)} ms (cpu {format(self[1], spec)} ms)"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=60)
    n = ap.parse_args().n
    cv2.setNumThreads(1)
    rng = np.random.default_rng(0)
    random_scene(rng)  # load assets and noise bank
    print(f"pip 1280x960, 3 dice:    {median_ms(lambda: random_scene(rng, n_dice=3), n):7.1f}")
    print(f"lcr 1280x960, 3 dice:    {median_ms(lambda: random_scene(rng, n_dice=3, kind='lcr'), n):7.1f}")
    seq = median_ms(lambda: roll_sequence(rng, n_frames=20, n_dice=3, kind="lcr"), max(3, n // 10)) / 20
    print(f"roll frame 1280x960:     {seq:7.1f}")

    def demo_roll():
        faces = [str(f) for f in rng.choice(["L", "C", "R", "dot"], int(rng.integers(1, 4)))]
        roll_sequence(rng, size=(640, 480), faces=faces, kind="lcr", n_frames=10)

    demo = median_ms(demo_roll, max(5, n // 3)) / 10
    print(f"demo roll frame 640x480: {demo:7.1f}")
    pi = median_ms(lambda: random_scene(rng, n_dice=3, kind="lcr", preset="pi-black-tray"), max(3, n // 10))
    print(f"pi-black-tray 3280x2464: {pi:7.1f}")


if __name__ == "__main__":
    main()
