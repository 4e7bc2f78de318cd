"""Dice from the camera: frames, then settle detection, then the reader, then a roll observation.

One poll per preview frame: the settle check is cheap, and the reader runs only on the one frame where
the dice have come to rest.
"""

from __future__ import annotations

from collections.abc import Callable

import cv2
import numpy as np

from lcr_pi.referee import RollObservation
from lcr_pi.vision.reader import doubted_dice
from lcr_pi.vision.settle import SettleDetector

_VERDICT_COLOURS = {"clear": (60, 200, 60), "unsure": (0, 170, 255), "cocked": (0, 0, 255)}


class CameraDice:
    """``poll()`` returns a :class:`RollObservation` when a new roll has come to rest, else None."""

    def __init__(self, frames, read: Callable[[np.ndarray], object], settle: SettleDetector | None = None):
        self.frames = frames
        self.read = read
        self.settle = settle or SettleDetector()

    @property
    def exhausted(self) -> bool:
        return bool(getattr(self.frames, "exhausted", False))

    def poll(self) -> RollObservation | None:
        frame = self.frames.read()
        if frame is None:
            return None
        update = self.settle.update(frame)
        if update.state != "settled":
            return None
        return observe(self.read(update.frame), update.frame)


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
