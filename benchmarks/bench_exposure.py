"""Overexposure checks of ``lcr-pi calibrate`` on renders made brighter, and their false alarms.

Each table (a seed: one camera, tray, light, clutter and set of 3-5 dice) is rendered with the light
multiplied by a gain before the camera's 8-bit clipping (and its noise and JPEG), as a lamp too bright or
an exposure too long gives it. The reader reads the picture of the dice as calibrate does; the die size
it measures (:func:`~lcr_pi.vision.calibration.measure_die_px`) is wrong when over 25 % from the truth.
For each gain: how many sizes came out wrong, how many of those the checks refuse (the tray's burnt
share, :func:`~lcr_pi.vision.calibration.exposure_problem`; the dice burnt out,
:func:`~lcr_pi.vision.calibration.burnt_dice_problem`), and how many pictures they refuse in all. Then
the same checks on renders of three looks at their own light, and on real photographs (``--real``: a
glob of pictures, read where they are). README "Fitting it to a table" has the figures.

    .venv/bin/python benchmarks/bench_exposure.py [--tables 40] [--first-table 400] [--size 1280x960]
        [--gains 1,1.25,1.5,2,2.5,3,4] [--normal 30,25,25] [--real '../shared/data/*/train/images/*']

README's other sizes: ``--size 640x480 --gains 1,1.5,2,3,4 --normal 0,0,0`` and ``--size 3280x2464
--tables 20 --first-table 450 --gains 1,2,3,4 --normal 0,0,0``.
"""

from __future__ import annotations

import argparse
import contextlib
import glob

import cv2
import numpy as np

from lcr_pi.vision import render
from lcr_pi.vision.calibration import burnt_dice_problem, exposure_problem, measure_die_px
from lcr_pi.vision.reader import DiceReader

NORMAL_LOOKS = (None, "felt-table", "pi-black-tray")
NORMAL_FIRST = (580, 680, 780)  # first seed of each look's renders at their own light


@contextlib.contextmanager
def light_times(gain: float):
    """Renders made meanwhile have ``gain`` times the light, before the 8-bit clipping."""
    lit = render._light
    render._light = lambda *args, **kw: lit(*args, **kw) * gain
    try:
        yield
    finally:
        render._light = lit


def _side(corners) -> float:
    c = np.asarray(corners, np.float64)
    return float(np.max(np.linalg.norm(c - np.roll(c, 1, axis=0), axis=1)))


def judge(reader, seed: int, size, preset, gain: float = 1.0) -> dict:
    """One table's picture of the dice at ``gain`` times the light: is the size wrong, what refuses it."""
    with light_times(gain):
        table = render.Table(np.random.default_rng(seed), size=size, max_dice=5, kind=("pip", "lcr")[seed % 2],
                             preset=preset)
        table.empty()  # the same draws as calibrate's two pictures
        scene = table.roll(int(np.random.default_rng(seed + 99).integers(3, 6)))
    reading = reader.read(scene.image)
    measured = measure_die_px(reading)
    truth = float(np.median([_side(d.corners) for d in scene.dice]))
    return {"wrong": measured is not None and abs(measured / truth - 1) > 0.25,
            "tray": exposure_problem(scene.image) is not None,
            "dice": burnt_dice_problem(scene.image, reading.dice) is not None}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=40)
    parser.add_argument("--first-table", type=int, default=400)
    parser.add_argument("--size", default="1280x960")
    parser.add_argument("--gains", default="1,1.25,1.5,2,2.5,3,4")
    parser.add_argument("--normal", default="30,25,25", help="renders of the default look, felt-table and "
                                                             "pi-black-tray at their own light")
    parser.add_argument("--real", default=None, help="a glob of real photographs (read where they are)")
    args = parser.parse_args()
    size = tuple(int(v) for v in args.size.split("x"))
    reader = DiceReader()

    print(f"pi-black-tray, {args.tables} tables from {args.first_table}, {size[0]}x{size[1]}")
    print("| light | size wrong | caught (dice) | caught (tray) | refused (dice) | refused (tray) |")
    print("| --- | --- | --- | --- | --- | --- |")
    for gain in (float(g) for g in args.gains.split(",")):
        rows = [judge(reader, args.first_table + i, size, "pi-black-tray", gain) for i in range(args.tables)]
        wrong = [r for r in rows if r["wrong"]]
        print(f"| {gain:g}x | {len(wrong)} | {sum(r['dice'] for r in wrong)} | {sum(r['tray'] for r in wrong)} "
              f"| {sum(r['dice'] for r in rows)} | {sum(r['tray'] for r in rows)} |", flush=True)
    for preset, first, count in zip(NORMAL_LOOKS, NORMAL_FIRST, (int(n) for n in args.normal.split(","))):
        rows = [judge(reader, first + i, size, preset) for i in range(count)]
        print(f"{preset or 'default'} look at its own light: {count} renders, dice check refuses "
              f"{sum(r['dice'] for r in rows)}, tray check {sum(r['tray'] for r in rows)} "
              f"(size wrong in {sum(r['wrong'] for r in rows)})", flush=True)
    if args.real:
        paths = sorted(glob.glob(args.real))
        refused = []
        for path in paths:
            image = cv2.imread(path, cv2.IMREAD_COLOR)
            if image is not None and burnt_dice_problem(image, reader.read(image).dice):
                refused.append(path)
        print(f"real photographs: {len(paths)}, dice check refuses {len(refused)} {refused[:5]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
