"""Where the taught reader loses dice at one table (a measuring aid, not a benchmark of record).

Each test die of ``bench_teach_table.py``'s tables (teaching and reading as it does, taught reader
only) is sorted: read right and sure ("ok"); (a) no die read on it, or the read face's size under
0.75 or over 1.33 of the true face or its middle over 0.35 sides off ("outline off"); (b) doubted
though named right, and why (the descriptors' own confidence: far from every view, near another
face, or zeroed as two finds of one die or a side; what the features said; found by the colour
alone, and whether the detector had a sure find there; the reader sure of another face; no taught
find, the reader's own doubt standing, or its sureness doubted on a die of the taught colour where it
does not know the design; the frame obstructed); (c) named wrong, sure or not. Each
loss also says whether the taught set names the die right on its true corners. The doubt reasons
come from a copy of :func:`lcr_pi.vision.teach.relabel`'s steps (``traced_relabel``): keep them in
step with it. Frames sure and wrong are counted as the bench counts them.

    .venv/bin/python benchmarks/diag_teach_loss.py --first-table 701 --tables 4 [--design violet-words] [--verbose]

Use dev tables (700 and up), not the benchmark's 1-3. README, teach, "Where the taught dice are
lost at one table" (2026-12-03) has its first results.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import functools
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_teach as bt  # noqa: E402
import bench_teach_table as btt  # noqa: E402

from lcr_pi.vision import teach as T  # noqa: E402


def traced_relabel(reading, frame, taught, features, sure=0.6, dets=(), sure_detection=0.3, reader_knows=True,
                   embedding=None, pairs=None):
    """relabel's decisions, per taught die: (TaughtDie, reason for doubt or ''). ``dets``: the
    detector's finds in the frame; those scoring ``sure_detection`` or more may vouch for a die.
    ``reader_knows``: :func:`lcr_pi.vision.teach.reader_knows_design` for this set; ``pairs``, the
    reader's pair network (as :class:`lcr_pi.vision.teach.TaughtReader` passes it)."""
    sure_finds = [d for d in dets if d.score >= sure_detection]
    asked_pairs = {}  # the pair network's word on two finds, asked once (as relabel keeps it in the frame memo)
    found, unread = T.find_taught_dice(frame, taught, [T.die_corners(d) for d in reading.dice], sure_finds, pairs=pairs,
                                       asked_pairs=asked_pairs)
    def parts(t):
        if not t.distances or t.face not in t.distances:
            return "descriptors"
        d1 = t.distances[t.face]
        fam = float(np.clip(3.0 - d1 / taught.scale, 0, 1))
        others = sorted((d, f) for f, d in t.distances.items() if f != t.face)
        r = d1 / max(others[0][0], 1e-6)
        # zeroed as a tie (_one_per_die) or a side (_unsure_if_a_side), not by the descriptors'
        # own margin (judge: as near another face, the margin raised where the views mixed them up)
        if t.confidence == 0.0 and fam >= sure and r < 0.8 and (t.tied or taught.judge(t.distances)[1] > 0):
            return "descriptors[zeroed: tie]" if t.tied else "descriptors[zeroed: side]"
        return f"descriptors[{'far' if fam < sure else 'near ' + others[0][1]}]"

    why = {id(t): (parts(t) if t.confidence < sure else "") for t in found}
    pair = T.pair_view(pairs, frame, asked_pairs)
    agreed, not_against = set(), set()
    if features is not None and found:
        before = [t.confidence for t in found]
        views = features.similarities([T.straight_crop(T.face_context(frame, t.corners)) for t in found])
        new = []
        counts = functools.partial(T.features_count, features, taught)
        for t, v in zip(found, views):
            n = T.second_opinion(t, v, sure, alone=T._alone(t, found, pair), counts=counts)
            named, lead = T.FeatureMatcher.best(v)
            if named == n.face and lead >= T.FEATURE_LEAD:
                agreed.add(tuple(n.centre))
            if not T.features_against(n.face, v, counts):
                not_against.add(tuple(n.centre))
            r = why[id(t)]
            if n.confidence < sure:
                if t.confidence >= sure:
                    r = "features disagree"
                elif r.startswith("descriptors"):
                    if named == t.face and lead >= T.FEATURE_LEAD and t.confidence >= T.FEATURE_RESCUE_FLOOR:
                        r = r + " (rescue withheld: neighbour)"
                    elif named == t.face and lead >= T.FEATURE_LEAD:
                        r = r + " (lost; features agree)"
                    elif named != t.face and lead >= T.FEATURE_LEAD:
                        r = r + " (features name other)"
                    else:
                        r = r + " (features unclear)"
            why[id(n)] = r
            new.append(n)
        found = new
        if embedding is not None:
            crops = [T.straight_crop(T.face_context(frame, t.corners)) for t in found]
            new = []
            for t, ev, v, b in zip(found, embedding.similarities(crops), views, before):
                n = T.by_embedding(t, ev, v, sure, alone=T._alone(t, found, pair), descriptors=b,
                                   told_apart=embedding.told_apart)
                both = T._both_name(ev, v, embedding.told_apart)
                r = why[id(t)]
                if both == n.face:
                    agreed.add(tuple(n.centre))
                    not_against.add(tuple(n.centre))
                if n.face != t.face:
                    r = f"renamed by the embedding ({t.face} -> {n.face})"
                elif n.confidence >= sure > t.confidence:
                    r = ""
                elif n.confidence < sure <= t.confidence:
                    r = "embedding disagrees"
                why[id(n)] = r
                new.append(n)
            found = new
    res = []
    view_centre = T._view_centre(frame)
    loose = [d for d in reading.dice if not any(T._same_die(d, k) for k in found)]
    for t in found:
        r = why[id(t)]
        by_features = T._features_vouch(t, tuple(t.centre) in agreed, found, loose, view_centre, pair)
        if (not any(T._same_die(d, t) for d in reading.dice) and t.confidence >= sure
                and not T.vouched(t, sure_finds, found, view_centre, by_features=by_features, pair=pair)):
            near = [d.score for d in dets if T._inside((d.cx, d.cy), t.corners, 1.3)]
            best = max(near, default=0.0)
            t, r = replace(t, confidence=min(t.confidence, 0.5)), "colour only" + (
                " (detector sure there, not vouching)" if best >= sure_detection
                else " (detector weak there)" if near else " (no detection)")
        sure_here = [d for d in reading.dice if d.sure and T._same_die(d, t)]
        if sure_here and not all(d.face == t.face or {d.face, t.face} == {"1", "dot"} for d in sure_here):
            if reader_knows or t.confidence < T.CLEAR_FIND or tuple(t.centre) not in not_against:
                if t.confidence >= sure:
                    r = "reader sure of another"
                t = replace(t, confidence=min(t.confidence, 0.5))
        res.append((t, r))
    return res


def iou_quad(a, b):
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    inter, _ = cv2.intersectConvexConvex(cv2.convexHull(a), cv2.convexHull(b))
    ua = abs(cv2.contourArea(a)) + abs(cv2.contourArea(b)) - inter
    return inter / max(ua, 1e-6)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--design", default="all")
    p.add_argument("--first-table", type=int, default=701)
    p.add_argument("--tables", type=int, default=1)
    p.add_argument("--rolls", type=int, default=60)
    p.add_argument("--verbose", action="store_true")
    p.add_argument("--models", default=None)
    args = p.parse_args()
    cv2.setNumThreads(1)
    from lcr_pi.vision.evaluate import match_dice, score_image
    from lcr_pi.vision.reader import DiceReader
    from lcr_pi.vision.teach import TaughtReader, teach

    reader = DiceReader(args.models)
    total = Counter()
    for design in bt.DESIGNS if args.design == "all" else (args.design,):
        for seed in range(args.first_table, args.first_table + args.tables):
            empty, _, teaching, test, style = btt.one_table(seed, design, (640, 480), args.rolls)
            examples, refused = bt.player_examples(reader, teaching, 5, empty)
            # teaching outlines against truth
            offs = []
            from lcr_pi.commands.teach import already_there, die_shown
            there = already_there(reader, empty)
            counts = {}
            for image, scene in teaching:
                (die,) = scene.dice
                if die.cocked or counts.get(die.face, 0) >= 5:
                    continue
                outline, _ = die_shown(reader, image, dice_kind="lcr", there=there)
                if outline is None:
                    continue
                counts[die.face] = counts.get(die.face, 0) + 1
                used = T.view_outline(image, outline, empty)
                offs.append((die.face, T.mean_side(used) / T.mean_side(die.corners),
                             np.linalg.norm(np.mean(used, 0) - die.corners.mean(0)) / T.mean_side(die.corners)))
            try:
                taught = teach(examples, name=design, kind="lcr")
            except Exception as exc:  # noqa: BLE001
                print(f"{design} table {seed}: teaching failed ({exc})")
                continue
            tr = TaughtReader(reader, taught)
            c = Counter()
            for image, scene in test:
                item = type("Item", (), {"faces": tuple(d.face for d in scene.dice), "boxes": tuple(d.box for d in scene.dice),
                                         "box_kind": "die"})()
                base = reader.read(image, dice_kind="lcr")
                reading = tr.read(image, dice_kind="lcr")
                traced = traced_relabel(base, T.check_frame(image), taught, tr.features, reader_knows=tr.reader_knows,
                                        embedding=tr.embedding, pairs=getattr(reader, "_pairs", None),
                                        dets=reader.find_dice(image) or [],
                                        sure_detection=reader.settings.sure_detection)
                pairs = dict(match_dice(item, reading) or [])
                obstructed = reading.verdict == "obstructed"
                unsure_reads = set(reading.unsure_dice)
                frame_unsure = reading.verdict != "ok" or bool(unsure_reads)
                for li, die in enumerate(scene.dice):
                    truth_face, _, _ = taught.classify(T.face_context(image, die.corners))  # as bench_teach.score_truth
                    key = None
                    ri = pairs.get(li)
                    if ri is None:
                        key = "a: not read"
                    else:
                        rd = reading.dice[ri]
                        ratio = T.mean_side(rd.corners) / T.mean_side(die.corners) if len(rd.corners) >= 4 else float("nan")
                        off = np.linalg.norm(np.array(rd.centre) - die.corners.mean(0)) / T.mean_side(die.corners)
                        unsure = obstructed or ri in unsure_reads
                        # which traced taught die is this?
                        tt = [r for t, r in traced if np.linalg.norm(t.centre - np.array(rd.centre)) < 1]
                        reason = tt[0] if tt else "reader's own die"
                        if not tt and any(b.sure and np.linalg.norm(np.array(b.centre) - np.array(rd.centre)) < 1 for b in base.dice):
                            reason = "reader's own die, sure: doubted as of the taught colour (design unknown)"
                        if rd.face == die.face and not unsure:
                            key = "ok"
                        elif rd.face == die.face:
                            key = "b: unsure, right face: " + ("obstructed" if obstructed else (reason or "?"))
                        else:
                            key = "c: wrong face, " + ("unsure" if unsure else "SURE") + (
                                "" if not (ratio < 0.8 or ratio > 1.25 or off > 0.3) else " (outline off)")
                        if key != "ok" and (ratio < 0.75 or ratio > 1.33 or off > 0.35):
                            key = "a: outline off -> " + key
                    if key.startswith("c") or key.startswith("b") or key.startswith("a"):
                        key += f" [true corners: {'right' if truth_face == die.face else 'wrong'}]"
                    c[key] += 1
                    if args.verbose and key != "ok":
                        print("   ", design, seed, die.face, key, f"ratio {ratio if ri is not None else 0:.2f}")
                c["frames sure&wrong"] += int(score_image(item, reading).silent_error)
            n = sum(v for k, v in c.items() if not k.startswith("frames"))
            sides = np.array([o[1] for o in offs])
            print(f"{design} table {seed}: {n} dice, ok {c['ok']} ({c['ok'] / n:.1%}); refused {refused}; teaching outlines "
                  f"size/true median {np.median(sides):.2f} (range {sides.min():.2f}-{sides.max():.2f}), "
                  f"centre off median {np.median([o[2] for o in offs]):.2f}; scale {taught.scale:.3f}")
            for k, v in sorted(c.items()):
                if k != "ok":
                    print(f"    {v:4d}  {k}")
            total.update({f"{design}: {k}": v for k, v in c.items()})
    print("TOTAL")
    for k, v in sorted(total.items()):
        print(f"{v:5d}  {k}")


if __name__ == "__main__":
    main()
