"""``lcr-pi render OUT``: write synthetic labelled dice scenes as a roll folder."""

from __future__ import annotations

import argparse
import pathlib
import re

import numpy as np

from lcr_pi.errors import UserError

HELP = "render synthetic labelled dice scenes (pip or LCR) into a roll folder"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("out", metavar="OUT", help="folder to write (images/NNNN.jpg and labels.jsonl)")
    parser.add_argument("--n", type=str, default="10", help="number of scenes (default 10)")
    parser.add_argument("--seed", type=str, default="0", help="random seed (default 0)")
    parser.add_argument("--kind", default="pip", help="pip, lcr, wild or mixed (default pip)")
    parser.add_argument("--pool", default="train", help="train or holdout: fonts, colours and surfaces (default train)")
    parser.add_argument("--preset", default=None, help="a named look: pi-black-tray or felt-table")
    parser.add_argument("--size", default=None, help="frame size WxH (default 1280x960, or the preset's)")
    parser.add_argument("--dice", default="1-3", help="dice per scene, N or A-B (default 1-3)")
    parser.add_argument("--cocked", action="store_true", help="let a die lean on another or the wall")
    parser.add_argument("--hand", action="store_true", help="put a hand over part of the tray")
    parser.add_argument("--quality", type=str, default="90", help="JPEG quality of the written files (default 90)")


def _int(text: str, name: str, lo: int, hi: int) -> int:
    try:
        value = int(text)
    except (TypeError, ValueError):
        raise UserError(f"--{name} must be a whole number, not {text!r}") from None
    if not lo <= value <= hi:
        raise UserError(f"--{name} must be between {lo} and {hi}, not {value}")
    return value


def parse_size(text: str | None):
    """``"1280x960"`` -> (1280, 960).

    >>> parse_size("640x480")
    (640, 480)
    """
    if text is None:
        return None
    m = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", text)
    if not m:
        raise UserError(f"--size must look like WIDTHxHEIGHT (e.g. 1280x960), not {text!r}")
    w, h = int(m.group(1)), int(m.group(2))
    if not (64 <= w <= 8000 and 64 <= h <= 8000):
        raise UserError(f"--size {w}x{h} is out of range: width and height must be 64 to 8000 pixels")
    return w, h


def parse_dice(text: str) -> tuple[int, int]:
    """``"2"`` -> (2, 2); ``"1-3"`` -> (1, 3).

    >>> parse_dice("1-3")
    (1, 3)
    """
    m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", text or "")
    if not m:
        raise UserError(f"--dice must be a count N or a range A-B (e.g. 1-3), not {text!r}")
    a = int(m.group(1))
    b = int(m.group(2)) if m.group(2) else a
    if not 1 <= a <= b <= 40:
        raise UserError(f"--dice {text!r} is out of range: need 1 <= A <= B <= 40")
    return a, b


def run(args: argparse.Namespace) -> int:
    from lcr_pi.vision import render

    n = _int(args.n, "n", 1, 1_000_000)
    seed = _int(args.seed, "seed", 0, 2**63 - 1)
    quality = _int(args.quality, "quality", 10, 100)
    if args.kind not in render.KINDS:
        raise UserError(f"--kind must be one of {', '.join(render.KINDS)}, not {args.kind!r}")
    if args.pool not in render.POOLS:
        raise UserError(f"--pool must be one of {', '.join(render.POOLS)}, not {args.pool!r}")
    if args.preset is not None and args.preset not in render.PRESETS:
        raise UserError(f"unknown --preset {args.preset!r}; choose one of {', '.join(render.PRESETS)}")
    size = parse_size(args.size)
    dice = parse_dice(args.dice)
    out = pathlib.Path(args.out)
    if out.exists() and not out.is_dir():
        raise UserError(f"{out} exists and is not a folder")
    if (out / "labels.jsonl").exists():
        raise UserError(f"{out} already holds a roll folder (labels.jsonl); choose an empty folder")
    if (out / "images").is_dir() and any((out / "images").iterdir()):
        # Found by an audit: pictures there (a capture's, without its labels yet) were written over.
        raise UserError(f"{out / 'images'} already holds pictures; choose an empty folder")
    rng = np.random.default_rng(seed)

    def scenes():
        for _ in range(n):
            yield render.random_scene(rng, size=size, n_dice=dice, kind=args.kind, pool=args.pool,
                                      preset=args.preset, allow_cocked=args.cocked,
                                      occluder="hand" if args.hand else None)

    try:
        render.write_roll_folder(out, scenes(), jpeg_quality=quality)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    except OSError as exc:
        raise UserError(f"cannot write to {out}: {exc}") from None
    print(f"wrote {n} scenes to {out}")
    return 0
