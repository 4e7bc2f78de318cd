"""Dice from the camera: frames, then settle detection, then the reader, then a roll observation.

One poll per preview frame: the settle check is cheap, and the reader runs only on the one frame where
the dice have come to rest.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

import cv2
import numpy as np

from lcr_pi.announce import as_sentence, number
from lcr_pi.referee import ONE_PIP_QUESTION, RollObservation
from lcr_pi.rules.faces import ONE_PIP
from lcr_pi.vision.reader import asked, doubted_dice, unsettled
from lcr_pi.vision.settle import SettleDetector, is_black

_VERDICT_COLOURS = {"clear": (60, 200, 60), "unsure": (0, 170, 255), "cocked": (0, 0, 255)}


class CameraDice:
    """``poll()`` returns a :class:`RollObservation` when a new roll has come to rest, else None.

    Two rests are not rolls, although the tray changed:

    * dice left lying where the last roll's dice lay (:func:`left_lying`): a player took a die out
      (to roll the two their chips allow, or because the referee asked), and the rest has not been
      picked up yet, or an arm resting over some of them. Nothing is said; the throw that follows
      is read. At a start or a restart the dice already lying in the tray count as the last roll's.
    * some dice lying as they were after a clear roll, beside others that moved (:func:`untouched`): a
      hand reaching across the tray, or a dog against the table, knocked a die over; after a clear
      roll the next player throws every die. It is passed on as an unsure reading that says so: the
      referee asks for a throw (or a press of confirm), and never counts it as the next roll unasked.
      (After a reading asked about, a leaning die may be re-rolled alone: read as before.)
    * a blurred frame (the reader's ``obstructed``: the camera shook, or a die was still spinning):
      the settle detector is asked for another still frame of the same rest, up to
      :attr:`BLURRED_LOOKS` times; then the referee hears an unsure reading that says the picture
      stays blurred, rather than nothing at all.
    """

    #: Blurred readings of one rest before the table is told (each a fresh still window, a few frames).
    BLURRED_LOOKS = 3

    def __init__(self, frames, read: Callable[[np.ndarray], object], settle: SettleDetector | None = None):
        self.frames = frames
        self.read = read
        self.settle = settle or SettleDetector()
        self._lying: tuple = ()  # the dice of the last reading passed on: where they lay, what they showed
        self._lying_clear = False  # ...and whether that reading was clear (a roll, as far as the reader saw)
        self._blurred = 0  # blurred readings in a row
        self._frames_seen = 0  # until the dice lying at the start are known (None once they are)
        self._quiet: np.ndarray | None = None  # the last quiet frame while they are not
        #: Something moved in the tray since the last rest (a throw, a hand) and the tray has not come
        #: to rest again: a guess offered for the dice before may no longer describe them
        #: (:func:`lcr_pi.table.run_loop` holds a press of confirm until it is known).
        self.stirred = False

    @property
    def exhausted(self) -> bool:
        return bool(getattr(self.frames, "exhausted", False))

    def poll(self) -> RollObservation | None:
        frame = self.frames.read()
        if frame is None:
            return None
        # The frame's capture time, when the camera gives it: the detector's waits last as long at
        # any frame rate. (SETTLING_FRAMES stays counted in frames: a camera's exposure control
        # settles frame by frame.)
        update = self.settle.update(frame, at=getattr(self.frames, "frame_time", None))
        if update.state == "moving":
            self.stirred = True
        elif update.state == "quiet":
            self.stirred = False  # at rest as before: a shadow, a hand that left the dice as they lay
        if self._frames_seen is not None:
            # At a start or a restart the dice lying in the tray are the last roll's, read before:
            # they are read once, as dice left lying, when the camera has had a few quiet frames to
            # settle its exposure, or from the last quiet frame when something moves before that
            # (found by a review: after a restart, a die taken out of the last roll's three left two
            # that were announced as a roll).
            if update.state == "quiet" and not is_black(frame):
                self._frames_seen += 1
                self._quiet = frame
                if self._frames_seen >= SETTLING_FRAMES:
                    self._learn_lying(frame)
                return None
            if self._quiet is not None:
                self._learn_lying(self._quiet)
            self._frames_seen = None
        if update.state != "settled":
            return None
        reading = self.read(update.frame)
        if reading.verdict == "obstructed":
            self._blurred += 1
            if self._blurred < self.BLURRED_LOOKS:
                self.settle.reset()  # read the next still frame of this rest again
                return None
            # Asked, not settled by the moves of its faces: the reader says this picture cannot be trusted.
            reading = asked(reading, "The picture of the dice stays blurred: is the camera steady and in focus?")
        self._blurred = 0
        self.stirred = False  # at rest, and read: a new roll is passed on, dice left lying are not
        if left_lying(reading, self._lying):
            self._passed_over()
            return None  # every die that lay is kept: one hidden now (under an arm) may show again
        kept = untouched(reading, self._lying) if self._lying_clear else ()
        self._lying, self._lying_clear = reading.dice, reading.verdict == "clear"
        if kept:
            # Found by an audit (2026-12-04): a hand that tipped one of Ann's three dice over, the two
            # others untouched, made a tray announced as Bob's roll, which he never threw.
            self._passed_over()  # no roll, no lesson
            reading = asked(reading, as_sentence(_untouched_words(len(kept))))
        return observe(reading, update.frame)

    def _learn_lying(self, frame: np.ndarray) -> None:
        self._frames_seen, self._quiet = None, None
        first = self.read(frame)
        self._passed_over()  # the last roll's dice: no roll, no lesson
        if first.verdict in ("clear", "unsure", "cocked"):
            self._lying, self._lying_clear = first.dice, first.verdict == "clear"

    def _passed_over(self) -> None:
        passed = getattr(self.read, "passed_over", None)  # a reader that learns from rolls (WildGameDice)
        if passed is not None:
            passed()


#: A die lies where another lay when their centres are closer than this share of its side.
SAME_PLACE = 0.35
#: Quiet frames at a start before the dice lying in the tray are read (the camera's exposure settles).
SETTLING_FRAMES = 10


def left_lying(reading, before) -> bool:
    """Whether every die of ``reading`` lies where a die of ``before`` (the last reading's dice) lay,
    within :data:`SAME_PLACE` of a side, showing the same face (or either was doubted): no die of it
    was thrown. A throw that lands every die on an earlier die's place showing the same face is rare
    (one die thrown on a tray with room for 150 dice, three lying: about 1 in 400 with LCR dice, whose
    three dot faces match often); it is taken for dice left lying, and the player throws again.

    >>> from lcr_pi.vision.reader import DieReading, Reading
    >>> def die(face, x): return DieReading(face, 0.99, (x, 0, x + 20, 20), (), (x + 10, 10), "", True)
    >>> three = (die("L", 0), die("dot", 50), die("C", 100))
    >>> left_lying(Reading(three[:2], "clear"), three), left_lying(Reading(three[1:], "clear"), three)
    (True, True)
    >>> left_lying(Reading((die("L", 0), die("dot", 70)), "clear"), three)  # one die thrown anew
    False
    >>> left_lying(Reading((die("R", 0),), "clear"), three), left_lying(Reading((), "no_dice"), three)
    (False, False)
    """
    if not reading.dice or not before:
        return False

    def lay(d) -> bool:
        return any(_lies_where(d, b) and (d.face == b.face or not d.sure or not b.sure) for b in before)

    return all(lay(d) for d in reading.dice)


def _lies_where(die, before) -> bool:
    """Whether ``die`` lies where ``before`` lay: their centres within :data:`SAME_PLACE` of its side."""
    side = max(die.box[2] - die.box[0], die.box[3] - die.box[1], 1.0)
    return math.dist(die.centre, before.centre) < SAME_PLACE * side


def untouched(reading, before) -> tuple[int, ...]:
    """Indices of the dice of ``reading`` that the reader is sure of and that lie where a sure die of
    ``before`` lay (within :data:`SAME_PLACE` of a side) showing the same face: dice nobody threw. A
    thrown die lands so about once in 130 throws of a die (three places on a tray with room for 150
    dice), and from one in six to one in two of those (an LCR die's dot) show the same face; then the
    roll is asked about.

    >>> from lcr_pi.vision.reader import DieReading, Reading
    >>> def die(face, x): return DieReading(face, 0.99, (x, 0, x + 20, 20), (), (x + 10, 10), "", True)
    >>> three = (die("L", 0), die("dot", 50), die("C", 100))
    >>> untouched(Reading((three[0], three[1], die("R", 120)), "clear"), three)  # the C knocked over
    (0, 1)
    >>> untouched(Reading((die("R", 0), die("dot", 200)), "clear"), three)  # thrown
    ()
    """
    return tuple(i for i, d in enumerate(reading.dice)
                 if d.sure and any(b.sure and d.face == b.face and _lies_where(d, b) for b in before))


def _untouched_words(n: int) -> str:
    if n == 1:
        return "one of the dice lies just as the last roll left it: it was not thrown"
    return f"{number(n)} of the dice lie just as the last roll left them: they were not thrown"


SHOWN_BY = {**{f: "pip" for f in ("2", "3", "4", "5", "6")}, **{f: "wild" for f in ("L", "C", "R", "W")}}


class WildGameDice:
    """Reads a Wild game's rolls when the kind of dice is left to the reader (``dice = "auto"``).

    A Wild game is played with Wild LCR dice (L, C, R, W and two dots) or with ordinary dice whose
    ``wild_pip`` counts as W. Told that the dice are Wild dice, the reader would read an ordinary die's
    pips as Wild faces: a one as a dot, which keeps its chip, where the game says W. So each frame is
    read as ordinary or Wild dice, whichever it shows (``dice_kind="pip-or-wild"``).

    Only a roll whose every die shows one pip or dot does not show it, and with ``wild_pip`` 1 that
    face is a W on an ordinary die and a dot on a Wild die. Such a roll is read as the night's dice:
    the kind that :attr:`LESSONS` clear readings in a row have shown (a die sure of a face other than
    one pip: a 4 or an L). While the kind is unknown, a roll of ones and dots is unsure and the
    referee asks. Readings the referee asks about teach nothing: a sure die in them may be a misread
    that nobody confirmed. A clear reading that shows the other kind (a misread, such as pip dice read
    as W's, or other dice brought to the table) is asked about, and the kind is learnt anew.

    ``read`` is the reader (``read(frame, dice_kind=...)``); an instance is the ``read`` of
    :class:`CameraDice`.
    """

    #: Clear readings in a row that must show one kind before it is the night's: one could be a misread.
    LESSONS = 2

    def __init__(self, read: Callable[..., object], wild_pip: int | None):
        self._read = read
        self.wild_pip = wild_pip
        self.kind: str | None = None  # "pip" or "wild", as clear readings have shown it
        self._lesson: tuple[str, int] | None = None  # while the kind is unknown: (kind, clear readings in a row)
        self._before_call = (None, None)

    def passed_over(self) -> None:
        """The last reading was no roll (dice left lying, read again): it teaches nothing. The same
        dice read twice would count as two rolls showing the kind, a misread among them too."""
        self.kind, self._lesson = self._before_call

    def __call__(self, frame: np.ndarray):
        self._before_call = (self.kind, self._lesson)
        reading = self._read(frame, dice_kind="pip-or-wild")
        if reading.verdict not in ("clear", "unsure", "cocked"):
            return reading  # no dice, or a blurred frame (dice still rolling): nothing to learn or ask
        shown = kind_shown(reading)
        if shown is not None:
            if reading.verdict != "clear":
                # Asked anyway; but a doubt settled by the moves of its faces (could_be) must be
                # settled in the night's dice: read as the other kind, a one may be a W or a dot.
                return reading if self.kind in (None, shown) else unsettled(reading)
            if self.kind not in (None, shown):
                # Clear, but other dice than the night's: a misread (pip dice read as W's) or other
                # dice brought to the table. Asked, and the kind is learnt anew from the next rolls.
                self.kind, self._lesson = None, None
                return other_dice(reading, shown)
            if self.kind is None:
                n = self._lesson[1] + 1 if self._lesson and self._lesson[0] == shown else 1
                self._lesson = (shown, n)
                self.kind = shown if n >= self.LESSONS else None
            return reading
        if self.wild_pip != 1 or not reading.dice:
            return reading  # a one and a dot make the same move
        if not all(d.face in ONE_PIP for d in reading.dice):
            if reading.verdict != "clear" and any(d.face in ONE_PIP for d in reading.dice) and (
                    self.kind is None or reading.kind != self.kind):
                # Unsure, and no sure die shows the dice: its ones are named in a kind the night has
                # not shown (a W on ordinary dice, a dot on Wild dice), so its doubts are not settled
                # by their moves; the referee asks. (Found by an audit: the night's Wild dice showing
                # three dots, read as ordinary dice's 1, 1 and a 2-or-3, were announced as two W's.)
                return unsettled(reading)
            return reading  # no ones, or named in the night's dice
        if self.kind is not None:
            return reading if reading.kind == self.kind else self._read(frame, dice_kind=self.kind)
        return one_pip_unknown(reading)


def kind_shown(reading) -> str | None:
    """``"pip"`` or ``"wild"`` when a die the reader is sure of shows a face only that kind of dice has
    (a die read as leaning shows nothing); None when none does, or the dice disagree."""
    kinds = {SHOWN_BY.get(d.face) for d in reading.dice if d.sure and not getattr(d, "cocked", False)} - {None}
    return kinds.pop() if len(kinds) == 1 else None


def other_dice(reading, shown: str):
    """A clear reading whose dice show the ``shown`` kind where the night's earlier rolls showed the
    other, made unsure of the dice that show it."""
    doubted = tuple(i for i, d in enumerate(reading.dice) if SHOWN_BY.get(d.face) == shown)
    dice = tuple(replace(d, sure=False, could_be=()) if i in doubted else d for i, d in enumerate(reading.dice))
    kinds = {"pip": "ordinary dice", "wild": "Wild dice"}
    said = (f"These look like {kinds[shown]}, but the earlier rolls were {kinds['wild' if shown == 'pip' else 'pip']}; "
            "please check or re-roll.")
    return replace(reading, dice=dice, verdict="unsure", unsure_dice=doubted, message=said)


def one_pip_unknown(reading):
    """A reading whose every die shows one pip or dot, made unsure of all of them: before the night's
    dice are known, that face is a W (an ordinary die's one, with ``wild_pip`` 1) or a dot (a Wild
    die's). Offered for confirm as ones, since a Wild die's player is told to roll again.

    When the reading was clear, its dice keep ``could_be`` = (1, dot), so that a roll-off, where both
    score one, can take them without asking; a reading unsure or cocked for another reason (something
    on the tray not read, a die that may lean) keeps every die's ``could_be`` empty, and is asked."""
    said = ONE_PIP_QUESTION
    vouched = reading.verdict == "clear"
    dice = tuple(replace(d, face="1", sure=False, could_be=ONE_PIP if vouched and d.sure and d.could_be else ())
                 for d in reading.dice)
    earlier = reading.message if reading.verdict in ("unsure", "cocked") else ""
    earlier = earlier[:1].upper() + earlier[1:]  # a sentence of its own after ours ("the die at ... may be leaning")
    return replace(reading, dice=dice, kind="pip", verdict="cocked" if reading.verdict == "cocked" else "unsure",
                   unsure_dice=tuple(range(len(dice))), message=f"{said} {earlier}".strip())


def observe(reading, frame: np.ndarray) -> RollObservation:
    """A reader's :class:`~lcr_pi.vision.reader.Reading` as the referee's input, frame kept as evidence;
    the dice it doubts are passed on least sure first, with the faces each may show."""
    return RollObservation(
        faces=tuple(reading.faces),
        verdict=reading.verdict,
        message=reading.message,
        source="camera",
        evidence=(frame, reading),
        doubtful=doubted_dice(reading),
        could_be=tuple(getattr(die, "could_be", ()) for die in reading.dice),
    )


def overlay(frame: np.ndarray, reading) -> np.ndarray:
    """The frame with each die's outline, face and confidence drawn on it, and the verdict."""
    out = frame.copy()
    scale = max(out.shape[:2]) / 1280
    thick = max(1, round(2 * scale))
    for i, die in enumerate(reading.dice):
        colour = (60, 200, 60) if die.sure and not die.cocked else (0, 170, 255)
        pts = np.array(die.corners, np.int32).reshape(-1, 1, 2) if len(die.corners) else None
        if pts is not None and len(pts) >= 3:
            cv2.polylines(out, [pts], True, colour, thick)
        else:
            x0, y0, x1, y1 = (int(v) for v in die.box)
            cv2.rectangle(out, (x0, y0), (x1, y1), colour, thick)
        label = f"{i + 1}: {die.face} {die.confidence:.2f}"
        x, y = int(die.box[0]), max(int(die.box[1]) - 6, 12)
        cv2.putText(out, label, (x, y), cv2.FONT_HERSHEY_SIMPLEX, 0.6 * scale + 0.2, colour, thick, cv2.LINE_AA)
    verdict = reading.verdict + (f": {reading.message}" if reading.message else "")
    colour = _VERDICT_COLOURS.get(reading.verdict, (200, 200, 200))
    cv2.putText(out, verdict[:90], (10, int(30 * scale) + 10), cv2.FONT_HERSHEY_SIMPLEX, 0.8 * scale + 0.2,
                colour, thick, cv2.LINE_AA)
    return out


def encode_evidence(obs: RollObservation, *, max_side: int = 1280, quality: int = 85) -> bytes | None:
    """JPEG bytes of the observation's frame with the reader's overlay (shrunk to ``max_side``)."""
    if obs.evidence is None:
        return None
    frame, reading = obs.evidence
    image = overlay(frame, reading)
    h, w = image.shape[:2]
    if max(h, w) > max_side:
        f = max_side / max(h, w)
        image = cv2.resize(image, (round(w * f), round(h * f)), interpolation=cv2.INTER_AREA)
    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    return data.tobytes() if ok else None
