"""Nights at one rendered table: what the players would hear, roll by roll, for one or more reader models.

Each table (:class:`lcr_pi.vision.render.Table`: one camera, tray, light and set of dice, 640x480, the dice
kind known, no calibration) throws 1-3 dice per roll. A roll is

- "right": read clear with the faces thrown (the referee announces the roll thrown);
- "asked": not clear (the referee asks for a press of confirm or a re-roll);
- "count": clear with a wrong number of dice (the referee's count of the dice asks);
- "WRONG": clear, the right number of dice, a wrong face: **announced as fact, the one thing the
  table must not do**.

With ``--calibrated`` each table is first calibrated as ``lcr-pi calibrate`` does it (a picture of the
empty tray, then a roll of three read for the die size; the empty tray kept as the reference unless the
reader is sure of a die in it), and every model is also read through that calibration on the same rolls: the
names ``MODELS+calibrated`` (tray and die size) and ``MODELS+empty tray`` (with the reference). The
table's own draws for the calibration come first, so its rolls are not those of a run without it.

These are the "nights at one table" of the model card (models/README.md, "Sixth round"). The seeds used
there are dev seeds, never a test half's: 1000-1039 (holdout pool, LCR), 2000-2039 (train pool, LCR),
3000-3029 (holdout pool, pip), 6000-6019 (holdout pool, Wild). Several ``--models`` folders are read on
the same frames, interleaved, so that they compare in one run.

    .venv/bin/python benchmarks/bench_table_nights.py --pool holdout --kind lcr --first 1000 --tables 40 \\
        --models models /tmp/candidate-models
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

import cv2
import numpy as np

from lcr_pi.vision.calibration import CalibratedReader, guides_reading, make_calibration
from lcr_pi.vision.reader import DiceReader
from lcr_pi.vision.render import Table

ROOT = Path(__file__).resolve().parent.parent


def _faces(dice) -> list[str]:
    # The renderer names an LCR die's dot face "dot" and a pip die's faces "1"-"6", as the reader does.
    return sorted(str(d.face) for d in dice)


def judge(reading, thrown: list[str]) -> str:
    if reading.verdict != "clear":
        return "asked"
    read = sorted(str(f) for f in reading.faces)
    if len(read) != len(thrown):
        return "count"
    return "right" if read == thrown else "WRONG"


def calibrated_readers(table: Table, readers: dict, dice_kind: str) -> dict:
    """Each reader, and each read through the table's calibration made as ``lcr-pi calibrate`` makes it:
    the empty tray's picture (the tray found in it), a roll of three dice (the die size from the reader's
    reading), the empty tray as the reference unless the reader is sure of a die in it."""
    empty, roll = table.empty(), table.roll(min(3, table.max_dice)).image
    out = dict(readers)
    for name, reader in readers.items():
        cal = make_calibration(empty, reading=reader.read(roll, dice_kind=dice_kind))
        reference = empty if guides_reading(reader.read(empty, dice_kind=dice_kind)) else None
        out[f"{name}+calibrated"] = CalibratedReader(reader, cal)
        out[f"{name}+empty tray"] = CalibratedReader(reader, cal, reference)
    return out


def night(seed: int, kind: str, pool: str, rolls: int, readers: dict, calibrated: bool = False) -> dict[str, Counter]:
    rng = np.random.default_rng(seed)
    table = Table(rng, size=(640, 480), max_dice=3, kind=kind, pool=pool)
    dice_kind = "wild" if kind == "wild" else kind
    if calibrated:
        readers = calibrated_readers(table, readers, dice_kind)
    counts = {name: Counter() for name in readers}
    for _ in range(rolls):
        scene = table.roll(int(rng.integers(1, 4)))
        thrown = _faces(scene.dice)
        for name, reader in readers.items():
            counts[name][judge(reader.read(scene.image, dice_kind=dice_kind), thrown)] += 1
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", choices=["pip", "lcr", "wild"], default="lcr")
    parser.add_argument("--pool", choices=["train", "holdout"], default="holdout")
    parser.add_argument("--first", type=int, default=1000, help="the first table's seed")
    parser.add_argument("--tables", type=int, default=40)
    parser.add_argument("--rolls", type=int, default=200, help="rolls at each table")
    parser.add_argument("--models", type=Path, nargs="+", default=[ROOT / "models"])
    parser.add_argument("--calibrated", action="store_true",
                        help="also read each table through its calibration (tray and die size; and the empty tray)")
    parser.add_argument("--json", action="store_true", help="print one JSON object at the end")
    args = parser.parse_args()
    cv2.setNumThreads(1)
    readers = {str(m): DiceReader(m) for m in args.models}
    totals: dict[str, Counter] = {}
    for seed in range(args.first, args.first + args.tables):
        counts = night(seed, args.kind, args.pool, args.rolls, readers, args.calibrated)
        line = []
        for name, c in counts.items():
            totals.setdefault(name, Counter()).update(c)
            line.append(f"right {c['right']:3d} asked {c['asked']:3d} count {c['count']:2d} WRONG {c['WRONG']:2d}")
        print(f"table {seed}: " + " | ".join(line), flush=True)
    summary = {}
    for name, c in totals.items():
        n = sum(c.values())
        summary[name] = {"rolls": n, "right": c["right"] / n, "asked": c["asked"] / n, "count": c["count"],
                         "wrong": c["WRONG"]}
        print(f"{name}: {n} rolls, right {100 * c['right'] / n:.1f} %, asked {100 * c['asked'] / n:.1f} %, "
              f"miscounted {c['count']}, WRONG {c['WRONG']}")
    if args.json:
        print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
