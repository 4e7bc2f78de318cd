"""A Wild game's rolls read by the camera: ordinary dice (a one is W) and Wild LCR dice.

Rendered rolls of 1-3 dice (settled frames of rolling sequences, 640x480) are read three ways and each
roll is judged by the moves its faces make under Wild rules (``wild_pip`` 1):

- told "wild" (what ``lcr-pi run`` did with ``dice = "auto"`` in a Wild game before 2026-12-03);
- :class:`lcr_pi.camera_dice.WildGameDice` (now: each roll read as the dice it shows, the night's kind
  remembered for rolls of ones and dots);
- told the true kind (a night set to ``dice = "pip"`` or ``"wild"``).

A roll is "asked" when the reading is not clear (the referee asks), "count" when it is clear with a
wrong number of dice (the referee's count of the dice asks), "right" or "WRONG" (announced).

    .venv/bin/python benchmarks/bench_wild_dice.py [--rolls 60] [--seed 77]
"""

from __future__ import annotations

import argparse
from collections import Counter

import cv2
import numpy as np

from lcr_pi.camera_dice import WildGameDice
from lcr_pi.rules.faces import parse_faces
from lcr_pi.vision.reader import DiceReader
from lcr_pi.vision.render import roll_sequence

FACES = {"pip": ["1", "2", "3", "4", "5", "6"], "wild": ["L", "C", "R", "W", "dot", "dot"]}


def rolls(kind: str, n: int, seed: int):
    """``n`` settled frames of ``kind`` dice and the faces rolled."""
    rng = np.random.default_rng(seed)
    for k in range(n):
        faces = [str(f) for f in rng.choice(FACES[kind], size=int(rng.integers(1, 4)))]
        frames, _ = roll_sequence(np.random.default_rng(1000 + k), size=(640, 480), faces=faces, kind=kind, n_frames=6)
        yield frames[-1], faces


def judge(read, frames) -> Counter:
    counts = Counter()
    for frame, faces in frames:
        reading = read(frame)
        if reading.verdict != "clear":
            counts["asked"] += 1
        elif len(reading.faces) != len(faces):
            counts["count"] += 1
        elif sorted(map(str, parse_faces(reading.faces, wild_pip=1))) == sorted(map(str, parse_faces(faces, wild_pip=1))):
            counts["right"] += 1
        else:
            counts["WRONG"] += 1
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rolls", type=int, default=60)
    parser.add_argument("--seed", type=int, default=77)
    args = parser.parse_args()
    cv2.setNumThreads(1)
    reader = DiceReader()
    for kind in ("pip", "wild"):
        frames = list(rolls(kind, args.rolls, args.seed))
        ways = {
            'told "wild" (before)': lambda f: reader.read(f, dice_kind="wild"),
            "WildGameDice (now)": WildGameDice(reader.read, wild_pip=1),
            "told the true kind": lambda f, k=kind: reader.read(f, dice_kind=k),
        }
        print(f"{'ordinary' if kind == 'pip' else 'Wild LCR'} dice, {len(frames)} rolls:")
        for name, read in ways.items():
            c = judge(read, frames)
            print(f"  {name:22s} right {c['right']:3d}  WRONG {c['WRONG']:3d}  asked {c['asked']:3d}  count {c['count']:3d}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
