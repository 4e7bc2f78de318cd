"""Teach mode on a dice design the reader has never seen, and ordinary pip dice with and without it.

The unseen design ("violet-words"): violet dice with yellow ink; L and R are the words LEFT and
RIGHT, C is a five-pointed star, the dot face a ring. It is painted onto the top faces of rendered
LCR scenes (the renderer's truth gives each top face's corners; the sides keep the rendered design),
then blurred and noised like the rest of the frame.

1. Teach with ``--views`` (<= 5) views of each face, cut from teaching scenes by their true corners.
2. Read fresh scenes of the design: with the real reader when its models are present (the reader
   finds the dice, the taught set names them), and with the true corners (the taught classifier alone).
3. Pip dice: ``lcr-pi eval``-style metrics on the real test sets with and without the taught set.

    .venv/bin/python benchmarks/bench_teach.py [--views 5] [--scenes 60] [--data ../shared/data]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import cv2
import numpy as np

from lcr_pi.vision.render import random_scene
from lcr_pi.vision.teach import TaughtReader, rectify_face, teach

BODY = (150, 40, 120)  # BGR violet
INK = (40, 215, 245)  # BGR yellow
TEX = 128


def face_texture(face: str) -> np.ndarray:
    """The unseen design's top face, drawn upright on a TEX x TEX square."""
    img = np.full((TEX, TEX, 3), BODY, np.uint8)
    if face in ("L", "R"):
        word = "LEFT" if face == "L" else "RIGHT"
        scale = 1.15 if face == "L" else 0.95
        (tw, th), _ = cv2.getTextSize(word, cv2.FONT_HERSHEY_DUPLEX, scale, 3)
        cv2.putText(img, word, ((TEX - tw) // 2, (TEX + th) // 2), cv2.FONT_HERSHEY_DUPLEX, scale, INK, 3, cv2.LINE_AA)
    elif face == "C":
        a = np.linspace(-np.pi / 2, 1.5 * np.pi, 11)[:-1]
        r = np.where(np.arange(10) % 2 == 0, 46, 19)
        pts = np.stack([TEX / 2 + r * np.cos(a), TEX / 2 + r * np.sin(a)], 1)
        cv2.fillPoly(img, [np.round(pts * 16).astype(np.int32)], INK, cv2.LINE_AA, 4)
    elif face == "dot":
        cv2.circle(img, (TEX // 2, TEX // 2), 26, INK, 10, cv2.LINE_AA)
    else:
        raise ValueError(f"the unseen design has no face {face!r}")
    return img


def paint_design(scene, rng) -> np.ndarray:
    """The scene's image with every die's top face repainted in the unseen design."""
    image = scene.image.copy()
    h, w = image.shape[:2]
    src = np.array([[0, 0], [TEX - 1, 0], [TEX - 1, TEX - 1], [0, TEX - 1]], np.float32)
    for die in scene.dice:
        tex = face_texture(die.face)
        corners = np.asarray(die.corners, np.float32)
        H = cv2.getPerspectiveTransform(src, corners)
        warped = cv2.warpPerspective(tex, H, (w, h), flags=cv2.INTER_AREA)
        mask = cv2.warpPerspective(np.full((TEX, TEX), 255, np.uint8), H, (w, h), flags=cv2.INTER_LINEAR)
        alpha = (mask.astype(np.float32) / 255)[..., None]
        shade = float(np.clip(cv2.mean(scene.image, mask)[:3][1] / 200, 0.6, 1.2))  # keep the scene's light level
        image = (image * (1 - alpha) + warped * shade * alpha).astype(np.float32)
    image = cv2.GaussianBlur(image, (0, 0), 0.6) + rng.normal(0, 2.5, image.shape)
    return np.clip(image, 0, 255).astype(np.uint8)


def design_scenes(seed: int, n: int, size=(640, 480)):
    """``n`` scenes of the unseen design: (painted image, scene truth)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        scene = random_scene(rng, size=size, n_dice=(1, 3), kind="lcr", pool="holdout")
        out.append((paint_design(scene, rng), scene))
    return out


def teaching_examples(scenes, views: int) -> dict[str, list[np.ndarray]]:
    """Up to ``views`` straightened faces of each face, in scene order (what a player would show)."""
    examples: dict[str, list[np.ndarray]] = {}
    for image, scene in scenes:
        for die in scene.dice:
            if not die.cocked and len(examples.setdefault(die.face, [])) < views:
                examples[die.face].append(rectify_face(image, die.corners))
    return examples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--views", type=int, default=5)
    parser.add_argument("--scenes", type=int, default=60)
    parser.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"))
    parser.add_argument("--models", default=None)
    args = parser.parse_args()
    cv2.setNumThreads(1)

    taught = teach(teaching_examples(design_scenes(1, 40), args.views), name="violet-words", kind="lcr")
    print(f"taught {taught.name}: views {taught.views}, scale {taught.scale:.3f}")
    test = design_scenes(2, args.scenes)
    right = wrong = unsure = 0
    for image, scene in test:
        for die in scene.dice:
            face, conf, familiar = taught.classify(rectify_face(image, die.corners))
            if not familiar or conf < 0.6:
                unsure += 1
            elif face == die.face:
                right += 1
            else:
                wrong += 1
    n = right + wrong + unsure
    print(f"taught classifier on true corners: {n} dice, correct {right / n:.2%}, unsure {unsure / n:.2%}, "
          f"sure and wrong {wrong / n:.2%}")

    from lcr_pi.errors import UserError
    from lcr_pi.vision.reader import DiceReader

    try:
        reader = DiceReader(args.models)
    except UserError as exc:
        print(f"reader not available ({exc}): the end-to-end and pip measurements need the models")
        return 0
    from lcr_pi.commands.eval import evaluate_folder
    from lcr_pi.vision.dataset import load_roll_folder
    from lcr_pi.vision.evaluate import score_image, summarize

    taught_reader = TaughtReader(reader, taught)
    for name, read in (("reader alone", reader.read), ("reader + taught set", taught_reader.read)):
        scores, times = [], []
        for image, scene in test:
            item = type("Item", (), {"faces": tuple(d.face for d in scene.dice), "boxes": tuple(d.box for d in scene.dice),
                                     "box_kind": "die"})()
            start = time.perf_counter()
            reading = read(image, dice_kind="lcr")
            times.append((time.perf_counter() - start) * 1000)
            scores.append(score_image(item, reading))
        m = summarize(scores, times)
        print(f"unseen design, {name}: die accuracy {m['die_accuracy']:.2%}, silent errors {m['silent_error_rate']:.2%}, "
              f"unsure {m['unsure_rate']:.2%}, {statistics.median(times):.1f} ms")
    data = Path(args.data)
    for folder in sorted(data.glob("*/test")):
        items = load_roll_folder(folder)
        for name, read in (("without", reader.read), ("with taught set", taught_reader.read)):
            m, _ = evaluate_folder(folder, read, "auto", None, items)
            print(f"pip {folder.parent.name}/test {name}: die accuracy {m['die_accuracy']:.2%}, "
                  f"silent errors {m['silent_error_rate']:.2%}, unsure {m['unsure_rate']:.2%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
