"""A taught reader's time, calibrated over uncalibrated, roll by roll at one table (``bench_teach_table.py``'s).

Each table is calibrated and taught as ``bench_teach_table.py`` does it; then each roll is read by the
taught reader alone and by the same reader calibrated (``lcr-pi run``'s composition), one right after
the other, in turn first (this machine is noisy: the two readings of one roll share its load). Printed:
per table and over all, the median of the per-roll ratios (calibrated / uncalibrated time) and the
share of rolls the calibrated reader read faster.

    .venv/bin/python benchmarks/bench_teach_calibrated_time.py [--design violet-words] [--first-table 701] [--tables 10] [--rolls 30]
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as bench_teach_table.py

import argparse
import statistics
import sys
import time
from pathlib import Path

import cv2

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_teach as bt  # noqa: E402
import bench_teach_table as btt  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--design", choices=bt.DESIGNS, default="violet-words")
    parser.add_argument("--first-table", type=int, default=701)
    parser.add_argument("--tables", type=int, default=10)
    parser.add_argument("--rolls", type=int, default=30)
    parser.add_argument("--size", default="640x480")
    args = parser.parse_args()
    cv2.setNumThreads(1)
    size = tuple(int(v) for v in args.size.split("x"))

    from lcr_pi.vision.calibration import CalibratedReader
    from lcr_pi.vision.reader import DiceReader
    from lcr_pi.vision.teach import TaughtReader

    reader = DiceReader()
    every: list[float] = []
    for seed in range(args.first_table, args.first_table + args.tables):
        calibration, reference, taught_set, _, test, _ = btt.fitted_table(reader, seed, args.design, size, args.rolls)
        taught = TaughtReader(reader, taught_set)
        readers = {"taught": taught.read, "calibrated": CalibratedReader(taught, calibration, reference).read}
        ratios = []
        for i, (image, _) in enumerate(test):
            took = {}
            for name in (("taught", "calibrated") if i % 2 else ("calibrated", "taught")):
                start = time.perf_counter()
                readers[name](image, dice_kind="lcr")
                took[name] = time.perf_counter() - start
            ratios.append(took["calibrated"] / took["taught"])
        every += ratios
        print(f"{args.design}, table {seed}: calibrated / uncalibrated time, median {statistics.median(ratios):.3f}, "
              f"faster at {sum(r < 1 for r in ratios) / len(ratios):.0%} of {len(ratios)} rolls", flush=True)
    print(f"{args.design}, all: median {statistics.median(every):.3f}, faster at "
          f"{sum(r < 1 for r in every) / len(every):.0%} of {len(every)} rolls")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
