"""Score dice readings against a labelled roll folder.

How each image and die is counted (pure functions; no files, no clock):

* An image is **unsure** when the reader says so: its verdict is ``"unsure"``, ``"obstructed"`` or
  ``"cocked"``, or it lists any die in ``unsure_dice``. The referee would then ask for a re-roll
  or a button press instead of announcing a result.
* An image is **correct** when it is not unsure and every labelled die is matched to a read die
  with the same face, with no read die left over. A ``"no_dice"`` verdict is a sure claim of zero
  dice: correct only on an image with no labelled dice.
* An image is a **silent error** when it is neither unsure nor correct: the reader was sure and
  wrong, the one outcome the referee must avoid. So, per folder,
  ``image_accuracy + unsure_rate + silent_error_rate == 1``.
* **Die accuracy** is over all labelled dice: a die is correct when it is matched to a read die of
  the same face that is not unsure (in an ``"obstructed"`` image every die counts as unsure). Unsure
  and missed dice count as not correct (but are not silent errors).
* **Matching** read dice to labels:

  - labels with whole-die ``boxes``: greedy one-to-one matching by intersection over union of the
    label box and the read die's box, best pairs first, pairs with IoU >= ``IOU_MATCH`` (0.3;
    top-face boxes drawn by hand and by the reader differ by a few pixels on 25 px dice);
  - labels with ``pip_boxes`` (only the pip pattern is boxed): a read die matches a label when the
    centre of the pip box lies inside the read die's box, nearest centres first, one-to-one;
  - labels without boxes: by the multiset of faces. ``min(read, labelled)`` dice count as matched
    for recall and precision, and the correct dice are the multiset intersection of the labelled
    faces with the faces of the sure read dice.

* **Best guesses.** An unsure reading still names a face for every die, and the referee offers it
  ("if the dice show L, dot, C, press confirm"). ``guess_accuracy`` is the share of labelled dice
  matched to a read die of the same face, sure or not; ``unsure_guess_right_rate`` the share of the
  unsure images whose guess is the whole roll right (every labelled die, no die more): there one
  press of confirm settles the roll. As the referee does, a reading of more dice than were rolled
  (labelled) offers the rolled number when the surplus is among the dice it doubts: the least sure
  of those are left out of the guess (:func:`offered_faces`). ``None`` when no image is unsure.
* **Recall** = matched labelled dice / labelled dice; **precision** = matched read dice / read dice
  (both regardless of face and of sureness). With no read dice at all, precision is 1.0.
* **ms_per_image_median** is the median wall time of the reader call alone (image decoding excluded).
* **Leaning dice.** A picture whose labels mark a die ``cocked`` (leaning on another die or the
  wall; ``lcr-pi render --cocked`` writes such labels) is judged apart, as calibration judges it:
  the table re-rolls a leaning die, so the right reading is the verdict ``"cocked"``, and such a
  picture has no roll to be right or wrong about. It is left out of every metric above and counted
  in ``leaning_images``; ``leaning_caught_rate`` is the share of them read ``"cocked"``,
  ``leaning_announced_rate`` the share read ``"clear"`` (a roll announced although a die leans;
  the rest were unsure: the referee asks). Both are ``None`` when no picture has a leaning die.

>>> from types import SimpleNamespace as NS
>>> label = LabelledImageLike = NS(faces=("6", "4"), boxes=((0, 0, 10, 10), (20, 0, 30, 10)), box_kind="die")
>>> read = NS(dice=(NS(face="6", box=(1, 0, 11, 10)), NS(face="3", box=(20, 0, 30, 10))), verdict="clear", unsure_dice=())
>>> s = score_image(label, read)
>>> (s.correct_dice, s.matched_labels, s.silent_error)
(1, 2, True)
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass

import numpy as np

IOU_MATCH = 0.3
UNSURE_VERDICTS = frozenset({"unsure", "obstructed", "cocked"})


@dataclass(frozen=True)
class ImageScore:
    """How one reading compares with one image's labels."""

    labelled_dice: int
    read_dice: int
    matched_labels: int
    matched_reads: int
    correct_dice: int
    unsure: bool
    correct: bool
    silent_error: bool
    leaning: bool = False  # a die in the picture leans (judged apart; see the module's notes)
    verdict: str = ""
    guessed_dice: int = 0  # labelled dice matched to a read die of the same face, sure or not
    guess_right: bool = False  # every labelled die guessed right and no die more (sure or not)


def box_iou(a, b) -> float:
    """Intersection over union of two ``(x0, y0, x1, y1)`` boxes.

    >>> box_iou((0, 0, 10, 10), (5, 0, 15, 10))
    0.3333333333333333
    >>> box_iou((0, 0, 1, 1), (2, 2, 3, 3))
    0.0
    """
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def _greedy(pairs: list[tuple[float, int, int]]) -> list[tuple[int, int]]:
    """Pick one-to-one (label, read) pairs from (cost, label, read), lowest cost first."""
    used_labels, used_reads, chosen = set(), set(), []
    for _, li, ri in sorted(pairs):
        if li in used_labels or ri in used_reads:
            continue
        used_labels.add(li)
        used_reads.add(ri)
        chosen.append((li, ri))
    return chosen


def match_dice(label, reading) -> list[tuple[int, int]] | None:
    """Return matched (label index, read index) pairs, or None when labels have no boxes."""
    if label.boxes is None:
        return None
    pairs = []
    for li, lbox in enumerate(label.boxes):
        for ri, die in enumerate(reading.dice):
            rbox = die.box
            if label.box_kind == "die":
                iou = box_iou(lbox, rbox)
                if iou >= IOU_MATCH:
                    pairs.append((-iou, li, ri))
            else:
                cx, cy = (lbox[0] + lbox[2]) / 2, (lbox[1] + lbox[3]) / 2
                if rbox[0] <= cx <= rbox[2] and rbox[1] <= cy <= rbox[3]:
                    rx, ry = (rbox[0] + rbox[2]) / 2, (rbox[1] + rbox[3]) / 2
                    pairs.append(((rx - cx) ** 2 + (ry - cy) ** 2, li, ri))
    return _greedy(pairs)


def score_image(label, reading) -> ImageScore:
    """Compare one reading (``dice``, ``verdict``, ``unsure_dice``) with one image's labels."""
    n_labels, n_reads = len(label.faces), len(reading.dice)
    obstructed = reading.verdict == "obstructed"
    unsure_reads = set(range(n_reads)) if obstructed else set(reading.unsure_dice)
    unsure = reading.verdict in UNSURE_VERDICTS or bool(unsure_reads)
    pairs = match_dice(label, reading)
    if pairs is None:
        matched = min(n_labels, n_reads)
        matched_labels = matched_reads = matched
        sure_faces = Counter(d.face for i, d in enumerate(reading.dice) if i not in unsure_reads)
        correct_dice = sum((Counter(label.faces) & sure_faces).values())
        guessed_dice = sum((Counter(label.faces) & Counter(d.face for d in reading.dice)).values())
    else:
        matched_labels = matched_reads = len(pairs)
        correct_dice = sum(
            1 for li, ri in pairs if ri not in unsure_reads and reading.dice[ri].face == label.faces[li]
        )
        guessed_dice = sum(1 for li, ri in pairs if reading.dice[ri].face == label.faces[li])
    all_right = correct_dice == n_labels and n_reads == n_labels
    if reading.verdict == "no_dice":
        all_right = n_labels == 0
    correct = not unsure and all_right
    guess_right = (Counter(offered_faces(reading, n_labels)) == Counter(label.faces) if pairs is None
                   else _offered_right(label, reading, pairs))
    return ImageScore(
        guessed_dice=guessed_dice,
        guess_right=guess_right,
        leaning=any(getattr(label, "cocked", ())),
        verdict=reading.verdict,
        labelled_dice=n_labels,
        read_dice=n_reads,
        matched_labels=matched_labels,
        matched_reads=matched_reads,
        correct_dice=correct_dice,
        unsure=unsure,
        correct=correct,
        silent_error=not unsure and not correct,
    )


def offered_faces(reading, rolled: int) -> tuple[str, ...]:
    """The faces an unsure ``reading`` offers for confirm when ``rolled`` dice were rolled: all of them,
    or, when it holds more dice than that and the surplus is among the dice it doubts, all but its
    least sure doubted dice (the referee's rule, ``Referee._without_doubtful_surplus``).

    >>> from types import SimpleNamespace as NS
    >>> r = NS(dice=(NS(face="L", confidence=0.99), NS(face="dot", confidence=0.4), NS(face="C", confidence=0.7)),
    ...        unsure_dice=(1, 2), verdict="unsure")
    >>> offered_faces(r, 2), offered_faces(r, 3), offered_faces(r, 0)
    (('L', 'C'), ('L', 'dot', 'C'), ('L', 'dot', 'C'))
    """
    return tuple(reading.dice[i].face for i in _kept_for_offer(reading, rolled))


def _kept_for_offer(reading, rolled: int) -> list[int]:
    from lcr_pi.vision.reader import doubted_dice

    n = len(reading.dice)
    doubted = doubted_dice(reading)
    if n <= rolled or len(doubted) < n - rolled:
        return list(range(n))
    dropped = set(doubted[: n - rolled])
    return [i for i in range(n) if i not in dropped]


def _offered_right(label, reading, pairs) -> bool:
    """Whether the offered guess (matched by boxes) is every labelled die, right, and no die more."""
    kept = set(_kept_for_offer(reading, len(label.faces)))
    right = sum(1 for li, ri in pairs if ri in kept and reading.dice[ri].face == label.faces[li])
    return len(kept) == len(label.faces) and right == len(label.faces)


def summarize(scores: list[ImageScore], milliseconds: list[float]) -> dict:
    """Fold per-image scores into the folder metrics (keys as printed by ``lcr-pi eval --json``).

    >>> s = ImageScore(2, 2, 2, 2, 2, False, True, False)
    >>> u = ImageScore(1, 1, 1, 1, 0, True, False, False)
    >>> m = summarize([s, u], [10.0, 30.0])
    >>> (m["die_accuracy"], m["image_accuracy"], m["unsure_rate"], m["ms_per_image_median"])
    (0.6666666666666666, 0.5, 0.5, 20.0)
    >>> extra = ImageScore(1, 2, 1, 1, 1, False, False, True)     # a second, made-up die, sure
    >>> wrong = ImageScore(1, 1, 1, 1, 0, False, False, True)     # the one die misread, sure
    >>> m = summarize([extra, wrong], [1.0, 1.0])
    >>> m["silent_error_rate"], m["silent_error_rate_counted"]
    (1.0, 0.5)
    >>> leaning = ImageScore(2, 2, 2, 2, 2, True, False, False, leaning=True, verdict="cocked")
    >>> m = summarize([s, leaning], [1.0, 1.0])
    >>> m["images"], m["die_accuracy"], m["leaning_images"], m["leaning_caught_rate"], m["leaning_announced_rate"]
    (1, 1.0, 1, 1.0, 0.0)
    """
    apart = [s for s in scores if s.leaning]
    scores = [s for s in scores if not s.leaning]
    n_images = len(scores)
    labelled = sum(s.labelled_dice for s in scores)
    read = sum(s.read_dice for s in scores)
    return {
        "images": n_images,
        "dice": labelled,
        "die_accuracy": sum(s.correct_dice for s in scores) / labelled if labelled else 1.0,
        "image_accuracy": sum(s.correct for s in scores) / n_images if n_images else 0.0,
        "recall": sum(s.matched_labels for s in scores) / labelled if labelled else 1.0,
        "precision": sum(s.matched_reads for s in scores) / read if read else 1.0,
        "unsure_rate": sum(s.unsure for s in scores) / n_images if n_images else 0.0,
        "silent_error_rate": sum(s.silent_error for s in scores) / n_images if n_images else 0.0,
        # At the table the referee knows how many dice were rolled and asks again when the reading
        # has another number: only a sure and wrong reading with the right number of dice is
        # announced as a wrong roll.
        "silent_error_rate_counted": (sum(s.silent_error and s.read_dice == s.labelled_dice for s in scores) / n_images
                                      if n_images else 0.0),
        "ms_per_image_median": statistics.median(milliseconds) if milliseconds else 0.0,
        "guess_accuracy": sum(s.guessed_dice for s in scores) / labelled if labelled else 1.0,
        "unsure_guess_right_rate": (sum(s.unsure and s.guess_right for s in scores) / sum(s.unsure for s in scores)
                                    if any(s.unsure for s in scores) else None),
        "leaning_images": len(apart),
        "leaning_caught_rate": sum(s.verdict == "cocked" for s in apart) / len(apart) if apart else None,
        "leaning_announced_rate": sum(s.verdict == "clear" for s in apart) / len(apart) if apart else None,
    }


# What became of each labelled die (``lcr-pi eval --why``), in the order they are printed.
OUTCOMES = {
    "read": "read right",
    "misread": "read wrong, and sure (a silent error)",
    "missed": "not found",
    "leaning": "said to be leaning (\"cocked\")",
    "leaning share": "doubted: part of its belief (the classifier's or the pair network's) says it may lean",
    "no-die share": "doubted: part of its belief says it may be no die (a side face, a mark, the tray)",
    "between faces": "doubted: the classifier hesitates between faces",
    "other doubt": "doubted: its outline overlaps another find, or the detector half believes in it",
    "blurred": "in a picture blurred by motion",
}


def what_doubts(p: np.ndarray, allowed: list[int]) -> str:
    """What holds a doubted die's belief ``p`` (a row of ``reading.probabilities``) under sure, as a
    key of :data:`OUTCOMES`: its ``cocked`` share ("leaning share") or its ``background`` share
    ("no-die share") where that is at least half of what its best face lacks, else the other faces
    ("between faces"). Until 2026-12-07 a leaning share of 0.1 was needed and the background share
    was not told apart, so a die held under the sure confidence (0.95) by a leaning share of
    0.05-0.1 was said to hesitate between faces: on the matteop65 test photos, 6 flat dice touching
    another that the pair network doubted.

    >>> from lcr_pi.vision.classify import CLASSES
    >>> from lcr_pi.vision.reader import allowed_classes
    >>> def row(**share):
    ...     p = np.zeros(len(CLASSES))
    ...     for name, v in share.items():
    ...         p[CLASSES.index(name)] = v
    ...     return p
    >>> pip = allowed_classes("pip")
    >>> what_doubts(row(**{"1": 0.924, "cocked": 0.075, "2": 0.001}), pip)   # a touching die
    'leaning share'
    >>> what_doubts(row(**{"3": 0.60, "2": 0.39, "cocked": 0.01}), pip)
    'between faces'
    >>> what_doubts(row(**{"3": 0.70, "2": 0.18, "cocked": 0.12}), pip)      # more between faces
    'between faces'
    >>> what_doubts(row(**{"2": 0.821, "background": 0.160, "5": 0.019}), pip)
    'no-die share'
    """
    from lcr_pi.vision.reader import _BACKGROUND, _belief_total, face_belief

    p = np.asarray(p, float)
    _, confidence, cocked = face_belief(p, allowed)
    no_die = float(p[_BACKGROUND]) / _belief_total(p, allowed)  # a share of the whole the others are shares of
    lacking = 1.0 - confidence
    if cocked > 0 and cocked >= lacking / 2:
        return "leaning share"
    if no_die > 0 and no_die >= lacking / 2:
        return "no-die share"
    return "between faces"


def outcomes(label, reading, sure_confidence: float) -> Counter | None:
    """What became of each labelled die in one reading (keys of :data:`OUTCOMES`); None when the
    labels have no boxes, so that read dice cannot be told apart. Pictures with a leaning die are
    judged apart elsewhere (:func:`summarize`); callers leave them out here too.

    ``sure_confidence`` (the reader's threshold) tells a die doubted for its face from one doubted
    for its outline or its detector score; the share on ``cocked`` (from ``reading.probabilities``,
    renormalised over the reading kind's faces as the reader does: the classifier's, or the pair
    network's for a die that touches another) and on ``background`` tell the leaning doubt and the
    doubt that it is a die at all from a hesitation between faces (:func:`what_doubts`).

    >>> from types import SimpleNamespace as NS
    >>> label = NS(faces=("6", "4", "2"), boxes=((0, 0, 10, 10), (20, 0, 30, 10), (40, 0, 50, 10)), box_kind="die")
    >>> die = lambda face, box, confidence: NS(face=face, box=box, confidence=confidence)
    >>> read = NS(dice=(die("6", (0, 0, 10, 10), 0.99), die("4", (20, 0, 30, 10), 0.6)), verdict="unsure",
    ...           unsure_dice=(1,), probabilities=(), kind="pip")
    >>> sorted(outcomes(label, read, 0.9).items())
    [('between faces', 1), ('missed', 1), ('read', 1)]
    """
    from lcr_pi.vision.reader import allowed_classes

    pairs = match_dice(label, reading)
    if pairs is None:
        return None
    read_for = dict(pairs)
    unsure = set(reading.unsure_dice)
    probabilities = getattr(reading, "probabilities", ()) or ()
    allowed = allowed_classes(getattr(reading, "kind", "pip"))
    out = Counter()
    for li, face in enumerate(label.faces):
        ri = read_for.get(li)
        if ri is None:
            out["missed"] += 1
            continue
        die = reading.dice[ri]
        if reading.verdict == "obstructed":
            out["blurred"] += 1
        elif getattr(die, "cocked", False):
            out["leaning"] += 1
        elif ri not in unsure:
            out["read" if die.face == face else "misread"] += 1
        elif die.confidence >= sure_confidence:
            out["other doubt"] += 1
        else:
            out[what_doubts(probabilities[ri], allowed) if ri < len(probabilities) else "between faces"] += 1
    return out
