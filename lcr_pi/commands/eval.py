"""``lcr-pi eval DIR``: measure the dice reader on a labelled roll folder.

The metrics and exactly how unsure images and dice count are defined in
:mod:`lcr_pi.vision.evaluate`. This module is the thin shell: it reads files, times the reader
and prints.
"""

from __future__ import annotations

import json
import time

from lcr_pi.errors import UserError

HELP = "Measure the dice reader on a labelled roll folder (labels.jsonl + images)."

JSON_KEYS = ("die_accuracy", "image_accuracy", "recall", "precision", "unsure_rate",
             "silent_error_rate", "ms_per_image_median")


def add_arguments(parser) -> None:
    parser.add_argument("folder", metavar="DIR", help="folder holding labels.jsonl and the images it names")
    parser.add_argument("--json", action="store_true", help="print one JSON object with the metrics")
    parser.add_argument("--kind", choices=["labels", "auto", "pip", "lcr", "wild"], default="labels",
                        help="which dice are on the tray, as a night's settings name them (default: the kind the "
                             "folder's labels show; auto: each frame decides)")
    parser.add_argument("--models", default=None, help="folder with the model files (default: the shipped models/)")
    parser.add_argument("--limit", type=int, default=None, help="read only the first N images")
    parser.add_argument("--errors", action="store_true", help="list every image that was not read correctly")
    parser.add_argument("--why", action="store_true",
                        help="say what became of the labelled dice: read, misread, missed, leaning, or doubted and why "
                             "(needs labels with boxes)")
    parser.add_argument("--corrections", default=None, metavar="FILE",
                        help="JSON list of dice whose labels were checked by eye and are wrong "
                             "(e.g. benchmarks/label_corrections.json); the folder's are applied and counted")


def evaluate_folder(folder, read, kind: str = "auto", limit: int | None = None, items=None):
    """Run ``read(frame, dice_kind=kind)`` over a labelled folder; return (metrics, per-image rows).

    The folder is validated (labels and image files) before the first image is read.
    """
    from lcr_pi.vision.dataset import load_roll_folder, read_image
    from lcr_pi.vision.evaluate import score_image, summarize

    if items is None:
        items = load_roll_folder(folder)
    items = items[:limit]
    scores, times, rows = [], [], []
    for item in items:
        frame = read_image(item.image_path)
        start = time.perf_counter()
        try:
            reading = read(frame, dice_kind=kind)
        except UserError as exc:  # a picture the reader refuses (too small to hold dice): which one
            raise UserError(f"{item.image_path}: {exc}") from None
        times.append((time.perf_counter() - start) * 1000)
        score = score_image(item, reading)
        scores.append(score)
        rows.append((item, reading, score))
    return summarize(scores, times), rows


def dice_outcomes(rows, sure_confidence: float) -> dict | None:
    """What became of the labelled dice of the pictures without a leaning die (see
    :func:`lcr_pi.vision.evaluate.outcomes`), summed; None when the labels have no boxes."""
    from collections import Counter

    from lcr_pi.vision.evaluate import OUTCOMES, outcomes

    total = Counter()
    for item, reading, score in rows:
        if score.leaning:
            continue
        counted = outcomes(item, reading, sure_confidence)
        if counted is None:
            return None
        total.update(counted)
    return {k: total[k] for k in OUTCOMES if total[k]}


def print_outcomes(why: dict | None) -> None:
    from lcr_pi.vision.evaluate import OUTCOMES

    if why is None:
        print("  what became of the dice: the labels have no boxes, so read dice cannot be told apart")
        return
    n = sum(why.values())
    print(f"  what became of the {n} dice:")
    for key, count in why.items():
        print(f"    {count:5d}  {count / max(n, 1):6.1%}  {OUTCOMES[key]}")


def run(args) -> int:
    from lcr_pi.vision.dataset import apply_corrections, labelled_kind, load_corrections, load_roll_folder
    from lcr_pi.vision.reader import DiceReader

    if args.limit is not None and args.limit < 1:  # found by an audit: 0 reported a 100 % die accuracy of no image
        raise UserError(f"--limit must be 1 or more images, not {args.limit}")
    items = load_roll_folder(args.folder)  # report label problems before loading models
    applied = stale = ()
    if args.corrections:
        items, applied, stale = apply_corrections(items, load_corrections(args.corrections), args.folder)
    # The reader is told the kind of dice as a night is (its settings name them): without it a lone die
    # showing one pip, read as an LCR dot in a folder of pip dice, counts as sure and wrong, which no
    # night with its kind set would say.
    kind = labelled_kind(items[:args.limit]) if args.kind == "labels" else args.kind
    reader = DiceReader(args.models)
    metrics, rows = evaluate_folder(args.folder, reader.read, kind, args.limit, items)
    why = dice_outcomes(rows, reader.settings.sure_confidence) if args.why else None
    if args.json:
        print(json.dumps({k: round(metrics[k], 6) for k in JSON_KEYS}
                         | {"kind": kind, "silent_error_rate_counted": round(metrics["silent_error_rate_counted"], 6),
                            "guess_accuracy": round(metrics["guess_accuracy"], 6),
                            "images": metrics["images"], "dice": metrics["dice"]}
                         | {k: (None if metrics[k] is None else round(metrics[k], 6))
                            for k in ("unsure_guess_right_rate", "leaning_images", "leaning_caught_rate",
                                      "leaning_announced_rate")}
                         | ({"label_corrections": len(applied)} if args.corrections else {})
                         | ({"why": why} if args.why else {})))
    else:
        print(f"{args.folder}: {metrics['images']} images, {metrics['dice']} dice"
              + (f" (and {metrics['leaning_images']} with a leaning die, judged apart)" if metrics["leaning_images"] else ""))
        print(f"  dice kind         {kind}" + (" (from the labels)" if args.kind == "labels" else ""))
        if args.corrections:
            print(f"  labels corrected  {len(applied)} {'die' if len(applied) == 1 else 'dice'} (from {args.corrections})")
        for c in stale:
            why = "a die is labelled there now" if c.die == 0 else f"its label no longer says {c.labelled}"
            print(f"  note: correction for {c.image} {'missing die' if c.die == 0 else f'die {c.die}'} not applied ({why})")
        print(f"  die accuracy      {metrics['die_accuracy']:.2%}")
        print(f"  image accuracy    {metrics['image_accuracy']:.2%}")
        print(f"  detection recall  {metrics['recall']:.2%}   precision {metrics['precision']:.2%}")
        print(f"  unsure images     {metrics['unsure_rate']:.2%}")
        if metrics["unsure_guess_right_rate"] is not None:
            print(f"    ... whose best guess is the whole roll  {metrics['unsure_guess_right_rate']:.2%}  "
                  f"(one press of confirm settles them)")
        print(f"  best guesses      {metrics['guess_accuracy']:.2%} of the dice (sure or not)")
        print(f"  silent errors     {metrics['silent_error_rate']:.2%}  (sure and wrong)")
        print(f"    ... with the number of dice right  {metrics['silent_error_rate_counted']:.2%}  "
              f"(the referee's dice count catches the rest)")
        print(f"  median time       {metrics['ms_per_image_median']:.1f} ms per image")
        if metrics["leaning_images"]:
            print(f"  leaning dice      {metrics['leaning_caught_rate']:.2%} of those pictures read \"cocked\", "
                  f"{metrics['leaning_announced_rate']:.2%} read clear (a roll announced although a die leans)")
        if args.why:
            print_outcomes(why)
    if args.errors:
        for item, reading, score in rows:
            if score.leaning and reading.verdict != "cocked":
                kind = "LEANING" if reading.verdict == "clear" else "unsure"
                print(f"{kind:7s} {item.image_path.name}: a die leans; read {sorted(reading.faces)} [{reading.verdict}] {reading.message}")
            elif not score.correct and not score.leaning:
                kind = "SILENT" if score.silent_error else "unsure"
                print(f"{kind:7s} {item.image_path.name}: labelled {sorted(item.faces)} read {sorted(reading.faces)} "
                      f"[{reading.verdict}] {reading.message}")
    return 0
