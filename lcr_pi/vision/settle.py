"""Settle detection: watch the preview stream and say when the dice have come to rest.

The reader is only asked about a frame after the dice stopped moving and no hand is over the tray, and
only once per roll. The check runs on every preview frame, so it works on a small grey copy of the
frame: a few OpenCV calls, about a millisecond here.

How it decides:

* *motion*: the share of pixels that changed since the previous frame (after a blur, so sensor noise
  and JPEG shimmer do not count);
* *settled*: after motion, ``still_frames`` frames in a row without it;
* *new*: the settled scene differs from the scene last handed to the reader (a nudge of the tray or a
  shadow passing is not a new roll unless something changed where dice lie);
* *hand*: a large changed region that is mostly skin-coloured means someone's hand is resting in
  the tray: wait for it to leave. (Only the changed region is tested for skin, so a wood or red
  tray never looks like a hand.)

>>> import numpy as np
>>> watcher = SettleDetector(still_frames=2)
>>> empty = np.full((120, 160, 3), 90, np.uint8)
>>> dice = empty.copy(); dice[40:60, 50:70] = 250
>>> [watcher.update(f).state for f in (empty, empty, dice, dice, dice, dice)]
['quiet', 'quiet', 'moving', 'still', 'settled', 'quiet']
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

WORK_WIDTH = 200


@dataclass(frozen=True)
class SettleUpdate:
    """What one frame told the detector: state is quiet, moving, still, settled or obstructed."""

    state: str
    motion: float
    frame: np.ndarray | None = None  # the frame to read, when state == "settled"


class SettleDetector:
    """Consumes frames one by one; reports ``settled`` once per roll, with the frame to read."""

    def __init__(
        self,
        *,
        still_frames: int = 4,
        motion_threshold: float = 0.0004,
        pixel_delta: int = 18,
        change_threshold: float = 0.0015,
        hand_area: float = 0.05,
        hand_skin: float = 0.3,
        region: tuple[int, int, int, int] | None = None,
    ):
        """``region`` (x0, y0, x1, y1 in full-frame pixels) limits the watch to the tray."""
        self.still_frames = still_frames
        self.motion_threshold = motion_threshold
        self.pixel_delta = pixel_delta
        self.change_threshold = change_threshold
        self.hand_area = hand_area
        self.hand_skin = hand_skin
        self.region = region
        self._previous: np.ndarray | None = None
        self._last_read: np.ndarray | None = None
        self._still = 0
        self._armed = False  # motion seen since the last settled report

    def reset(self) -> None:
        """Forget the last read scene (after an undo or a request to roll again the same dice may return)."""
        self._last_read = None
        self._armed = True
        self._still = 0

    def _small(self, frame: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self.region is not None:
            x0, y0, x1, y1 = self.region
            frame = frame[y0:y1, x0:x1]
        h, w = frame.shape[:2]
        size = (WORK_WIDTH, max(1, round(h * WORK_WIDTH / w)))
        colour = cv2.resize(frame, size, interpolation=cv2.INTER_AREA)
        grey = cv2.cvtColor(colour, cv2.COLOR_BGR2GRAY)
        return colour, cv2.GaussianBlur(grey, (5, 5), 0)

    def _changed(self, a: np.ndarray, b: np.ndarray) -> float:
        return float(np.count_nonzero(cv2.absdiff(a, b) > self.pixel_delta)) / a.size

    def update(self, frame: np.ndarray) -> SettleUpdate:
        colour, grey = self._small(frame)
        previous, self._previous = self._previous, grey
        if previous is None or previous.shape != grey.shape:
            self._last_read = grey if self._last_read is None else self._last_read
            return SettleUpdate("quiet", 0.0)
        motion = self._changed(previous, grey)
        if motion > self.motion_threshold:
            self._still = 0
            self._armed = True
            return SettleUpdate("moving", motion)
        if not self._armed:
            return SettleUpdate("quiet", motion)
        self._still += 1
        if self._still < self.still_frames:
            return SettleUpdate("still", motion)
        if self._last_read is not None and self._changed(self._last_read, grey) < self.change_threshold:
            # Motion came and went but nothing in the tray changed (a shadow, a nudge): not a roll.
            self._armed = False
            return SettleUpdate("quiet", motion)
        if self._last_read is not None and self._hand_over_tray(colour, grey):
            return SettleUpdate("obstructed", motion)
        self._armed = False
        self._last_read = grey
        return SettleUpdate("settled", motion, frame)


    def _hand_over_tray(self, colour: np.ndarray, grey: np.ndarray) -> bool:
        changed = (cv2.absdiff(self._last_read, grey) > self.pixel_delta).astype(np.uint8)
        count, labels, stats, _ = cv2.connectedComponentsWithStats(changed, connectivity=8)
        if count <= 1:
            return False
        biggest = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
        area = stats[biggest, cv2.CC_STAT_AREA]
        if area < self.hand_area * grey.size:
            return False
        blob = labels == biggest
        return float(np.count_nonzero(skin_mask(colour)[blob])) / area > self.hand_skin


def skin_mask(colour: np.ndarray) -> np.ndarray:
    """Pixels in the usual skin range of YCrCb."""
    ycrcb = cv2.cvtColor(colour, cv2.COLOR_BGR2YCrCb)
    return cv2.inRange(ycrcb, (40, 138, 77), (235, 175, 127))
