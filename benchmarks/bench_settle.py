"""Settle check cost per preview frame (target: <= 3 ms median for 1280x960 on one core here).

Renders roll sequences with a hand (dice tumbling, settling, a hand reaching in and leaving) and
times ``SettleDetector.update`` on every frame (given its capture time, as from a 30 fps camera),
one OpenCV thread. Also checks that each sequence
gives exactly one report, at or after the rest frame. The sequences are played ``--repeats`` times
(a fresh detector each time), so that the median of a noisy, shared machine rests on more frames.

    .venv/bin/python benchmarks/bench_settle.py [--sequences 4] [--repeats 3] [--size 1280x960]
"""

from __future__ import annotations

import argparse
import statistics
import time

import cv2
import numpy as np

from lcr_pi.vision.render import roll_sequence
from lcr_pi.vision.settle import SettleDetector


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sequences", type=int, default=4)
    parser.add_argument("--size", default="1280x960")
    parser.add_argument("--repeats", type=int, default=3, help="plays of each sequence (default 3)")
    parser.add_argument("--seed", type=int, default=500)
    args = parser.parse_args()
    cv2.setNumThreads(1)
    w, h = (int(v) for v in args.size.split("x"))
    times, per_state, ok = [], {}, 0
    rendered = [roll_sequence(np.random.default_rng(args.seed + k), size=(w, h), n_frames=30,
                              hand=k % 2 == 1, kind=("pip", "lcr")[k % 2]) for k in range(args.sequences)]
    plays = [seq for _ in range(args.repeats) for seq in rendered]
    for frames, scene in plays:  # rendered first, so the renderer's work does not disturb the timing
        detector = SettleDetector()
        settled = []
        for i, frame in enumerate(frames):
            start = time.perf_counter()
            update = detector.update(frame, at=i / 30)  # a 30 fps camera's capture times
            ms = (time.perf_counter() - start) * 1000
            times.append(ms)
            per_state.setdefault(update.state, []).append(ms)
            if update.state == "settled":
                settled.append(i)
        ok += len(settled) == 1 and settled[0] >= scene.style["sequence"]["rest_frame"]
    print(f"settle check, {w}x{h}, {len(times)} frames of {args.sequences} sequences x {args.repeats}, one thread:")
    print(f"  median {statistics.median(times):.2f} ms   p90 {np.percentile(times, 90):.2f} ms   max {max(times):.2f} ms")
    for state, ms in sorted(per_state.items()):
        print(f"  {state:10s} {len(ms):4d} frames, median {statistics.median(ms):.2f} ms")
    print(f"  sequences with exactly one report at rest: {ok}/{len(plays)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
