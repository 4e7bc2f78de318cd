"""Calibrated vs uncalibrated reader on the same frames (rendered, with clutter outside the tray).

For each table (a seed: one camera, tray, light and clutter), the calibration is made as
``lcr-pi calibrate`` makes it: the tray found in a picture of the empty tray (taken before the
throw), the die size from the reader's reading of one roll. Two other rolls on the same table are
then read three ways: without calibration, calibrated (the detector looks at the tray only, at the
dice's scale), and calibrated with the empty-tray reference (only the part of the tray that changed
is read). Without the models the script still reports how
much of the view the calibration keeps and whether every die stays inside it.

    .venv/bin/python benchmarks/bench_calibration.py [--tables 12] [--size 1280x960] [--pool holdout|train] [--first-table 900]
"""

from __future__ import annotations

import argparse
import statistics
import time
from types import SimpleNamespace

import cv2
import numpy as np

from lcr_pi.errors import UserError
from lcr_pi.vision.calibration import CalibratedReader, guides_reading, make_calibration
from lcr_pi.vision.evaluate import score_image, summarize
from lcr_pi.vision.render import roll_sequence

PRESETS = ("felt-table", "pi-black-tray", None)


def table(seed: int, size, faces, pool: str = "holdout"):
    """The settled frame of a roll on table ``seed``, its truth, and the empty tray before the throw.

    The dice, trays and cloths come from the renderer's holdout ``pool`` (never trained on, and kept
    as it is): the train pool is what the models learn from, and it grows."""
    preset = PRESETS[seed % len(PRESETS)]
    frames, scene = roll_sequence(np.random.default_rng(seed), size=size, faces=faces, kind="pip",
                                  n_frames=8, preset=preset, empty_frames=1, pool=pool)
    return frames[-1], scene, frames[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=12)
    parser.add_argument("--size", default="1280x960")
    parser.add_argument("--models", default=None)
    parser.add_argument("--pool", choices=("holdout", "train"), default="holdout",
                        help="the renderer's pool of dice and trays (default: %(default)s; before 2026-12-03: train)")
    parser.add_argument("--first-table", type=int, default=900, help="the first table's renderer seed (default: %(default)s)")
    args = parser.parse_args()
    cv2.setNumThreads(1)
    size = tuple(int(v) for v in args.size.split("x"))
    try:
        from lcr_pi.vision.reader import DiceReader

        reader = DiceReader(args.models)
    except UserError as exc:
        print(f"reader not available ({exc}); measuring the regions only")
        reader = None
    rng = np.random.default_rng(0)
    kept, inside, total = [], 0, 0
    rows = {"uncalibrated": ([], []), "calibrated": ([], []), "+ empty tray": ([], [])}
    empty_seen = 0
    for k in range(args.tables):
        seed = args.first_table + k
        faces = [[str(v) for v in rng.integers(1, 7, 3)] for _ in range(3)]
        cal_frame, cal_scene, empty = table(seed, size, faces[0], args.pool)
        reading = reader.read(cal_frame) if reader is not None else None
        cal = make_calibration(empty, reading=reading)
        # As lcr-pi calibrate does: the reference guides reading unless the reader is sure of a die in it.
        reference = None
        if reader is not None and guides_reading(reader.read(empty, dice_kind="pip")):
            reference = empty
            empty_seen += 1
        kept.append((cal.tray[2] - cal.tray[0]) * (cal.tray[3] - cal.tray[1]) / (size[0] * size[1]))
        calibrated = CalibratedReader(reader, cal) if reader is not None else None
        guided = CalibratedReader(reader, cal, reference) if reader is not None else None
        for f in faces[1:]:
            frame, scene, _ = table(seed, size, f, args.pool)
            x0, y0, x1, y1 = cal.tray
            for d in scene.dice:
                total += 1
                inside += x0 <= d.box[0] and y0 <= d.box[1] and d.box[2] <= x1 and d.box[3] <= y1
            if reader is None:
                continue
            item = SimpleNamespace(faces=tuple(d.face for d in scene.dice), boxes=tuple(d.box for d in scene.dice), box_kind="die")
            for name, read in (("uncalibrated", reader.read), ("calibrated", calibrated.read), ("+ empty tray", guided.read)):
                start = time.perf_counter()
                got = read(frame, dice_kind="pip")
                rows[name][1].append((time.perf_counter() - start) * 1000)
                rows[name][0].append(score_image(item, got))
    print(f"{args.tables} tables at {size[0]}x{size[1]}: the calibrated tray is {statistics.mean(kept):.0%} of the frame's pixels "
          f"(median {statistics.median(kept):.0%}); dice inside the calibrated region: {inside}/{total}")
    if reader is None:
        return 0
    print(f"  empty-tray pictures the reader found empty (kept as references): {empty_seen}/{args.tables}")
    for name, (scores, times) in rows.items():
        m = summarize(scores, times)
        print(f"  {name:13s} die accuracy {m['die_accuracy']:.2%}  image accuracy {m['image_accuracy']:.2%}  "
              f"silent errors {m['silent_error_rate']:.2%} (with the right number of dice {m['silent_error_rate_counted']:.2%})  "
              f"precision {m['precision']:.2%}  median {m['ms_per_image_median']:.1f} ms")
    # Frame by frame against the uncalibrated reader: medians of whole runs compare different frames
    # (a frame whose dice the uncalibrated reader finds at its first look is cheap for it), the
    # ratio of one frame's two times compares the same work.
    base_scores, base_times = rows["uncalibrated"]
    for name in ("calibrated", "+ empty tray"):
        scores, times = rows[name]
        more = sum(s.correct_dice > b.correct_dice for s, b in zip(scores, base_scores))
        fewer = sum(s.correct_dice < b.correct_dice for s, b in zip(scores, base_scores))
        ratios = [t / b for t, b in zip(times, base_times)]
        print(f"  {name:13s} against uncalibrated, frame by frame: {more} frames with more dice read right, {fewer} "
              f"with fewer; time ratio median {statistics.median(ratios):.3f}, faster in "
              f"{sum(r < 1 for r in ratios) / len(ratios):.0%} of the frames")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
