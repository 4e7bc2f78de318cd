"""Teach mode at one table, as a night uses it: calibrate, teach, then read rolls on the same table.

``bench_teach.py`` teaches from scenes of random cameras, trays and lights and reads scenes of
others: a harder test than a night, where one camera looks at one tray under one light and the
player teaches the dice on that tray. Here each session is one rendered table
(:class:`lcr_pi.vision.render.Table`: camera, tray, light, clutter and die size fixed; the dice
thrown anew each roll), with the unseen designs of ``bench_teach.py``:

1. Calibrate as ``lcr-pi calibrate`` does: the tray found in a picture of the empty tray, the die
   size from the reader's reading of a roll of three dice, the empty tray kept as the reference
   unless the reader is sure of a die in it.
2. Teach as ``lcr-pi teach`` does: the empty tray (what is found there is not a die shown), then
   pictures of one die, in order, until every face has ``--views`` (<= 5) views, each outlined by
   the reader (a picture where it sees no die or several is shown again).
3. Read ``--rolls`` rolls of 1-3 dice on the same table: the reader alone, the reader with the
   taught set, and both calibrated as ``lcr-pi run`` composes them.

    .venv/bin/python benchmarks/bench_teach_table.py [--design all|violet-words|...] [--tables 3] [--rolls 60]

Tables are renderer seeds ``--first-table``, +1, ...; 640x480 frames by default (``--size``).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # many small matrix products: threads only cost (see README)

import argparse
import contextlib
import statistics
import sys
import time
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_teach as bt  # noqa: E402  (the designs, their drawing and the scoring)

from lcr_pi.vision.render import Table  # noqa: E402


def table_design(design: str):
    """A context in which a :class:`Table` draws ``design``'s dice, and how each roll's picture is made."""
    if design == "violet-painted":
        paint_rng = np.random.default_rng(12345)
        return contextlib.nullcontext(), lambda scene: bt.paint_design(scene, paint_rng)
    return bt.drawing(bt.VIOLET if design == "violet-words" else bt.GREEN), lambda scene: scene.image


def one_table(seed: int, design: str, size, rolls: int, teach_pictures: int = 80):
    """Table ``seed``: the empty tray, a calibration roll, single-die teaching pictures and test rolls
    (each as (image, scene truth))."""
    context, picture = table_design(design)
    rng = np.random.default_rng(seed)
    with context:
        table = Table(rng, size=size, max_dice=3, kind="lcr", pool="holdout")
        empty = table.empty()
        calibration_roll = table.roll(3)
        teaching = [table.roll(1) for _ in range(teach_pictures)]
        test = [table.roll(int(rng.integers(1, 4))) for _ in range(rolls)]
    as_pairs = lambda scenes: [(picture(s), s) for s in scenes]  # noqa: E731
    return empty, as_pairs([calibration_roll])[0], as_pairs(teaching), as_pairs(test), table.stage.style


def fitted_table(reader, seed: int, design: str, size, rolls: int, views: int = 5):
    """Table ``seed`` set up as a night sets it up: calibrated as ``lcr-pi calibrate`` does (the empty
    tray kept as the reference unless the reader is sure of a die in it) and ``design`` taught as
    ``lcr-pi teach`` does. Returns (calibration, reference, taught set, pictures refused while
    teaching, test rolls, the table's style)."""
    from lcr_pi.vision.calibration import guides_reading, make_calibration
    from lcr_pi.vision.teach import teach

    empty, (cal_image, _), teaching, test, style = one_table(seed, design, size, rolls)
    calibration = make_calibration(empty, reading=reader.read(cal_image, dice_kind="lcr"))
    reference = empty if guides_reading(reader.read(empty, dice_kind="lcr")) else None
    examples, refused = bt.player_examples(reader, teaching, views, empty)
    return calibration, reference, teach(examples, name=design, kind="lcr"), refused, test, style


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--design", choices=bt.DESIGNS + ("all",), default="all")
    parser.add_argument("--views", type=int, default=5)
    parser.add_argument("--rolls", type=int, default=60)
    parser.add_argument("--tables", type=int, default=3)
    parser.add_argument("--first-table", type=int, default=1)
    parser.add_argument("--size", default="640x480")
    parser.add_argument("--models", default=None)
    args = parser.parse_args()
    cv2.setNumThreads(1)
    size = tuple(int(v) for v in args.size.split("x"))

    from lcr_pi.vision.calibration import CalibratedReader
    from lcr_pi.vision.reader import DiceReader
    from lcr_pi.vision.teach import TaughtReader

    reader = DiceReader(args.models)
    summary: dict[str, dict[str, list[tuple[float, float]]]] = {}  # design -> reader -> (accuracy, silent frames) per table
    for design in bt.DESIGNS if args.design == "all" else (args.design,):
        for seed in range(args.first_table, args.first_table + args.tables):
            calibration, reference, taught, refused, test, style = fitted_table(reader, seed, design, size, args.rolls,
                                                                                 args.views)
            taught_reader = TaughtReader(reader, taught)
            readers = {
                "reader alone": reader.read,
                "taught": taught_reader.read,
                "taught, calibrated": CalibratedReader(taught_reader, calibration, reference).read,
            }
            truth = bt.score_truth(taught, test)
            cam = style["camera"]
            print(f"{design}, table {seed} (die {cam['die_px']:.0f} px, tilt {cam['tilt_deg']:.0f} deg, "
                  f"{style['tray']['kind']} tray; calibrated die {calibration.die_px or 0:.0f} px, "
                  f"reference {'kept' if reference is not None else 'not kept'}): views {taught.views}, "
                  f"{refused} pictures refused; taught set on true corners {truth['correct']:.1%} "
                  f"(sure and wrong {truth['wrong']:.1%})", flush=True)
            for name, read in readers.items():
                m, times = bt.score_reader(read, test)
                row = summary.setdefault(design, {}).setdefault(name, [])
                row.append((m["die_accuracy"], m["silent_error_rate"] * len(test)))
                print(f"    {name:20s} die accuracy {m['die_accuracy']:.1%}  silent frames "
                      f"{round(m['silent_error_rate'] * len(test))}/{len(test)}  unsure {m['unsure_rate']:.1%}  "
                      f"{statistics.median(times):.0f} ms median", flush=True)
    print()
    for design, rows in summary.items():
        for name, row in rows.items():
            acc = [r[0] for r in row]
            print(f"{design:15s} {name:20s} mean {statistics.mean(acc):.1%} ({min(acc):.1%}-{max(acc):.1%}), "
                  f"silent frames {round(sum(r[1] for r in row))} of {len(row) * args.rolls}")
    return 0


if __name__ == "__main__":
    start = time.perf_counter()
    code = main()
    print(f"({time.perf_counter() - start:.0f} s)")
    raise SystemExit(code)
