"""Benchmark the dice reader: accuracy on every set, speed on one core, peak memory.

    .venv/bin/python benchmarks/bench_reader.py [--data ../shared/data] [--scenes 200] [--models DIR] [--json-only]

Sets measured:

* each real ``test`` half in ``../shared/data`` (``lcr-pi eval`` metrics);
* synthetic scenes from the renderer's ``holdout`` pool (fonts, colours, trays never trained on):
  LCR dice (``--kind lcr``), wild dice (``--kind wild``), pip dice (``--kind pip``);
* the ``pi-black-tray`` preset (3280x2464 Pi camera frames, ivory dice on a round black tray),
  never used in training.

Speed: median ms per 1280x960 frame and per full-resolution Pi camera frame (3280x2464, Camera v2;
4608x2592, Camera 3) with ``cv2.setNumThreads(1)``.
Memory: peak resident set size (``resource.getrusage``) of a fresh process that only loads the
models and reads frames from files (the reading process the target is about), and of this
benchmark process (which also renders 3280x2464 scenes, so it is much larger).
Prints a markdown table and then one JSON object.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lcr_pi.commands.eval import evaluate_folder  # noqa: E402
from lcr_pi.vision.dataset import apply_corrections, load_corrections, load_roll_folder  # noqa: E402
from lcr_pi.vision.evaluate import score_image, summarize  # noqa: E402
from lcr_pi.vision.reader import DiceReader  # noqa: E402

REAL_SETS = ("nell-byler-d6/test", "matteop65-d6/test")


def synthetic_set(reader: DiceReader, n: int, seed: int, kind: str, preset=None, size=(1280, 960)) -> dict:
    """Render ``n`` holdout scenes and score the reader on them (labels: whole top-face boxes)."""
    from lcr_pi.vision.render import random_scene

    rng = np.random.default_rng(seed)
    scores, times = [], []
    for _ in range(n):
        scene = random_scene(rng, size=size, n_dice=(1, 3), kind=kind, pool="holdout", preset=preset,
                             allow_cocked=False)
        label = SimpleNamespace(faces=tuple(d.face for d in scene.dice),
                                boxes=tuple(tuple(float(v) for v in d.box) for d in scene.dice), box_kind="die")
        start = time.perf_counter()
        reading = reader.read(scene.image, dice_kind="pip" if kind == "pip" else "wild" if kind in ("wild", "mixed") else "lcr")
        times.append((time.perf_counter() - start) * 1000)
        scores.append(score_image(label, reading))
    return summarize(scores, times)


def speed(reader: DiceReader, size, repeats: int, seed: int = 7) -> float:
    from lcr_pi.vision.render import random_scene

    rng = np.random.default_rng(seed)
    frames = [random_scene(rng, size=size, n_dice=(3, 3), kind="lcr", pool="holdout").image for _ in range(3)]
    times = []
    for i in range(repeats):
        start = time.perf_counter()
        reader.read(frames[i % len(frames)], dice_kind="lcr")
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


READ_ONLY = """
import resource, sys, cv2
cv2.setNumThreads(1)
from lcr_pi.vision.dataset import read_image
from lcr_pi.vision.reader import DiceReader
reader = DiceReader(sys.argv[1] or None)
for path in sys.argv[2:]:
    reader.read(read_image(path), dice_kind="lcr")
# VmHWM, not ru_maxrss: Linux keeps ru_maxrss across exec, so a child would report the parent's peak.
hwm = [line for line in open("/proc/self/status") if line.startswith("VmHWM:")]
print(int(hwm[0].split()[1]) / 1024 if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def reading_process_peak_rss(seed: int = 9, models: Path | None = None) -> float:
    """Peak RSS (MB) of a fresh process that only loads the models and reads frames from files
    (1280x960, 3280x2464 and 4608x2592): what the referee's reading process needs, without the renderer."""
    import subprocess
    import tempfile

    from lcr_pi.vision.render import random_scene

    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i, size in enumerate([(1280, 960), (3280, 2464), (3280, 2464), (4608, 2592)]):
            path = Path(tmp) / f"{i}.jpg"
            cv2.imwrite(str(path), random_scene(rng, size=size, n_dice=(3, 3), kind="lcr", pool="holdout").image)
            paths.append(str(path))
        out = subprocess.run([sys.executable, "-c", READ_ONLY, str(models or ""), *paths], capture_output=True, text=True,
                             cwd=ROOT, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--scenes", type=int, default=200, help="synthetic scenes per synthetic set")
    parser.add_argument("--seed", type=int, default=12345)
    parser.add_argument("--json-only", action="store_true")
    parser.add_argument("--models", type=Path, default=None, help="folder with the model files (default: the shipped models/)")
    args = parser.parse_args(argv)
    cv2.setNumThreads(1)
    reader = DiceReader(args.models)
    results = {}
    corrections = load_corrections(ROOT / "benchmarks" / "label_corrections.json")
    for name in REAL_SETS:
        folder = args.data / name
        if folder.is_dir():
            items = load_roll_folder(folder)
            results[name] = evaluate_folder(folder, reader.read, "pip", items=items)[0]
            # The same readings scored against labels with the dice checked by eye corrected
            # (label_corrections.json says which and why): a die read right is not an error.
            fixed, applied, _ = apply_corrections(items, corrections, folder)
            if applied:
                results[f"{name} (labels corrected: {len(applied)})"] = evaluate_folder(folder, reader.read, "pip", items=fixed)[0]
    try:
        import lcr_pi.vision.render  # noqa: F401
        have_renderer = True
    except ImportError:
        have_renderer = False
    if have_renderer and args.scenes:
        results["synthetic LCR (holdout)"] = synthetic_set(reader, args.scenes, args.seed, "lcr")
        results["synthetic wild (holdout)"] = synthetic_set(reader, args.scenes, args.seed + 1, "wild")
        results["synthetic pip (holdout)"] = synthetic_set(reader, args.scenes, args.seed + 2, "pip")
        results["pi-black-tray LCR 3280x2464"] = synthetic_set(reader, max(20, args.scenes // 4), args.seed + 3, "lcr",
                                                               preset="pi-black-tray", size=(3280, 2464))
        results["pi-black-tray pip 3280x2464"] = synthetic_set(reader, max(20, args.scenes // 4), args.seed + 4, "pip",
                                                               preset="pi-black-tray", size=(3280, 2464))
    timing = {}
    if have_renderer:
        timing["ms_1280x960_median"] = speed(reader, (1280, 960), 40)
        timing["ms_3280x2464_median"] = speed(reader, (3280, 2464), 15)
        timing["ms_4608x2592_median"] = speed(reader, (4608, 2592), 15)
    if have_renderer:
        timing["reading_process_peak_rss_mb"] = reading_process_peak_rss(models=args.models)
    timing["bench_process_peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if not args.json_only:
        print("| set | images | dice | die acc | image acc | recall | precision | unsure | silent | ms/img |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for name, m in results.items():
            print(f"| {name} | {m['images']} | {m['dice']} | {m['die_accuracy']:.2%} | {m['image_accuracy']:.2%} | "
                  f"{m['recall']:.2%} | {m['precision']:.2%} | {m['unsure_rate']:.2%} | "
                  f"{m['silent_error_rate']:.2%} | {m['ms_per_image_median']:.1f} |")
        print()
        for k, v in timing.items():
            print(f"- {k}: {v:.1f}")
        print()
    print(json.dumps({"sets": results, **timing}, indent=None))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
