"""Name a die's top face from a small crop around it.

The crop (:func:`crop_face`) is a square :data:`CROP_SCALE` times the top face's side, centred on the
face and turned by the detector's angle so that the face lies straight in it, cut from the
full-resolution frame and shrunk (averaging, so pips on a 400 px die do not alias) to
:data:`CROP_SIZE` pixels. The classifier is trained on crops cut so, at every quarter turn and with
the detector's error in angle and size; a turned die then shows its face as large as a straight one.
The margin shows the die's sides, so the classifier can tell a die standing flat from one leaning
(cocked) and a die from a stain. (:func:`crop_die`, the unturned crop of a box, is what teach mode's
blur check measures.)

Classes (:data:`CLASSES`): pip counts ``1``-``6``; LCR letters ``L``, ``C``, ``R``; ``W`` (the wild
face, letter or star); ``cocked`` (a die with no face square to the camera); ``background`` (not a
die). The LCR dot face is the single-pip class ``1``; the reader names it ``dot`` for LCR dice.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

CLASSES = ("1", "2", "3", "4", "5", "6", "L", "C", "R", "W", "cocked", "background")
CROP_SIZE = 48
CROP_SCALE = 1.6
# The classifier's pooled features (the input of its last, linear layer): what it has learnt to see
# in a face (pips, letters, stars, at any turn), which teach mode compares between a player's own
# dice and their taught views. OpenCV names that output differently by engine: the classic engine
# (the only one in OpenCV 4, and the one load_classifier picks) by its layer, OpenCV 5's new engine
# by its tensor in the exported graph.
FEATURES_LAYERS = ("onnx_node!/12/Flatten", "/12/Flatten_output_0")


def load_classifier(path) -> "cv2.dnn.Net":
    """The face classifier, run by OpenCV's classic dnn engine where there is a choice.

    Why: on the reader's small batches of 48 px crops OpenCV 5's default (new) engine took 30-45 %
    longer here (1 crop 2.4 against 1.8 ms, 3 crops 7.0 against 4.8 ms; a 1280x960 frame of one to
    three dice 35.8 against 31.7 ms median, the same readings; the classic engine's probabilities
    are exactly OpenCV 4's). A file the classic engine cannot load is loaded by the default one.
    Raises ``cv2.error`` when neither can.
    """
    classic = getattr(cv2.dnn, "ENGINE_CLASSIC", None)  # OpenCV 5; OpenCV 4 has only that engine
    if classic is not None:
        try:
            return cv2.dnn.readNetFromONNX(str(path), engine=classic)
        except cv2.error:
            pass
    return cv2.dnn.readNetFromONNX(str(path))


def crop_die(frame: np.ndarray, cx: float, cy: float, side: float, size: int = CROP_SIZE, scale: float = CROP_SCALE) -> np.ndarray:
    """Cut a ``size`` x ``size`` BGR crop of side ``scale * side`` frame pixels centred on (cx, cy).

    Parts outside the frame are filled by replicating the border.

    >>> frame = np.zeros((100, 100, 3), np.uint8); frame[40:60, 40:60] = 255
    >>> crop = crop_die(frame, 50, 50, 20, size=16, scale=2.0)
    >>> crop.shape, int(crop[8, 8, 0]), int(crop[0, 0, 0])
    ((16, 16, 3), 255, 0)
    """
    half = max(2.0, side * scale / 2)
    x0, y0 = int(round(cx - half)), int(round(cy - half))
    n = int(round(2 * half))
    h, w = frame.shape[:2]
    sx0, sy0, sx1, sy1 = max(0, x0), max(0, y0), min(w, x0 + n), min(h, y0 + n)
    if sx1 <= sx0 or sy1 <= sy0:
        return np.zeros((size, size, 3), np.uint8)
    region = frame[sy0:sy1, sx0:sx1]
    if (sx0, sy0, sx1, sy1) != (x0, y0, x0 + n, y0 + n):
        region = cv2.copyMakeBorder(
            region, sy0 - y0, y0 + n - sy1, sx0 - x0, x0 + n - sx1, cv2.BORDER_REPLICATE
        )
    interp = cv2.INTER_AREA if n > size else cv2.INTER_LINEAR
    return cv2.resize(region, (size, size), interpolation=interp)


def crop_face(frame: np.ndarray, cx: float, cy: float, side: float, angle: float = 0.0, size: int = CROP_SIZE,
              scale: float = CROP_SCALE) -> np.ndarray:
    """The face classifier's view of a die: a ``size`` x ``size`` BGR crop centred on (cx, cy), turned
    by ``angle`` (radians, the top face's rotation) so that the face's edges run along the crop's,
    ``scale`` face sides wide (``side``: the top face's side in frame pixels).

    Why upright and sized by the face: a die turned 45 degrees then shows its face as large and as
    square as one lying straight, so the classifier learns one picture of each face (up to quarter
    turns) instead of every rotation at two sizes; the detector's angle is within 7 degrees for nine
    dice in ten. Large dice are shrunk by averaging blocks of pixels first (small pips must not
    alias away); outside the frame the border is repeated.

    >>> frame = np.zeros((200, 200, 3), np.uint8)
    >>> _ = cv2.fillPoly(frame, [np.array([[100, 60], [140, 100], [100, 140], [60, 100]])], (255, 255, 255))
    >>> crop = crop_face(frame, 100, 100, 40 * 2 ** 0.5, np.pi / 4, size=32, scale=1.6)
    >>> int(crop[16, 16, 0]), int(crop[7, 7, 0]), int(crop[1, 1, 0])   # straightened: its corner is near the crop's
    (255, 255, 0)
    >>> int(crop_face(frame, 100, 100, 40 * 2 ** 0.5, 0.0, size=32, scale=1.6)[7, 7, 0])   # not turned: outside the diamond
    0
    >>> big = cv2.resize(frame, None, fx=8, fy=8, interpolation=cv2.INTER_NEAREST)   # the same die, 8 times larger
    >>> small = crop_face(big, 803.5, 803.5, 320 * 2 ** 0.5, np.pi / 4, size=32, scale=1.6)
    >>> int(np.abs(small.astype(int) - crop.astype(int)).mean()) < 8
    True
    """
    side = max(float(side), 1.0)
    span = side * scale  # frame pixels across the crop
    zoom = size / span
    src = frame
    if zoom < 0.7:
        reach = int(math.ceil(span * 0.75)) + 2  # the turned crop's upright box, and a margin
        x0, y0 = max(0, int(cx) - reach), max(0, int(cy) - reach)
        x1, y1 = min(frame.shape[1], int(cx) + reach + 1), min(frame.shape[0], int(cy) + reach + 1)
        k = int(1 / (zoom * 1.5))
        if x1 - x0 >= k and y1 - y0 >= k and k >= 2:
            region = frame[y0:y0 + (y1 - y0) // k * k, x0:x0 + (x1 - x0) // k * k]
            # Whole k x k blocks: a plain average. A shrunk pixel u covers frame pixels k u .. k u + k - 1.
            src = cv2.resize(region, (region.shape[1] // k, region.shape[0] // k), interpolation=cv2.INTER_AREA)
            cx, cy, zoom = (cx - x0 - (k - 1) / 2) / k, (cy - y0 - (k - 1) / 2) / k, zoom * k
    m = cv2.getRotationMatrix2D((float(cx), float(cy)), math.degrees(float(angle)), zoom)
    m[:, 2] += ((size - 1) / 2 - cx, (size - 1) / 2 - cy)
    return cv2.warpAffine(src, m, (size, size), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def sharpness(crop: np.ndarray) -> float:
    """Edge strength of a crop relative to its contrast: low when motion has smeared it.

    Mean absolute Laplacian over (grey-level spread + 8). Measured on real train photos and
    rendered scenes, sharp dice score 0.12 or more (99.5% of them); dice smeared by a third of
    their size or more mostly score below 0.13, many below 0.09.

    >>> flat = np.full((48, 48, 3), 128, np.uint8)
    >>> sharpness(flat)
    0.0
    >>> board = np.kron((np.indices((6, 6)).sum(0) % 2) * 255, np.ones((8, 8))).astype(np.uint8)
    >>> sharpness(cv2.merge([board] * 3)) > sharpness(cv2.merge([cv2.GaussianBlur(board, (0, 0), 3)] * 3))
    True
    """
    grey = cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY).astype(np.float32)
    lap = cv2.Laplacian(grey, cv2.CV_32F)
    return round(float(np.abs(lap).mean() / (grey.std() + 8.0)), 6)


def crops_to_blob(crops: list[np.ndarray]) -> np.ndarray:
    """Stack BGR crops into the classifier's NCHW float input (0..1)."""
    arr = np.stack(crops).astype(np.float32) * (1 / 255.0)
    return np.ascontiguousarray(arr.transpose(0, 3, 1, 2))


def softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise softmax.

    >>> softmax(np.array([[0.0, 0.0]])).tolist()
    [[0.5, 0.5]]
    """
    z = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def crop_features(net, crops: list[np.ndarray]) -> np.ndarray:
    """The classifier's pooled features ``(len(crops), F)`` for BGR crops (:data:`FEATURES_LAYERS`).

    Raises ``cv2.error`` when the classifier has no such output (a model of another shape)."""
    if not crops:
        return np.zeros((0, 0), np.float32)
    blob = crops_to_blob(crops)
    classic, new = FEATURES_LAYERS
    net.setInput(blob)
    try:
        out = net.forward(classic)
    except cv2.error:  # OpenCV 5's new engine names it by its tensor
        net.setInput(blob)
        out = net.forward(new)
    return np.asarray(out, np.float32).reshape(len(crops), -1)


def opencv_too_old() -> str:
    """What to say when this OpenCV is too old for the shipped models ("" when it is not): the
    detector's graph loads only in OpenCV 5 (4.10 and 4.14 refuse its broadcast Add, tried
    2026-12-01)."""
    if int(cv2.__version__.split(".")[0]) >= 5:
        return ""
    return f"this is OpenCV {cv2.__version__} and the models need OpenCV 5 (pip install -U 'opencv-python>=5')"


def classify_crops(net, crops: list[np.ndarray], rotations: int = 4, recheck_below: float = 1.0, only=None) -> np.ndarray:
    """Class probabilities ``(len(crops), len(CLASSES))`` from the face classifier ``net``.

    Test-time augmentation: a crop whose top class probability is below ``recheck_below`` is
    classified again at ``rotations`` right-angle turns and the probabilities are averaged (the
    classifier is trained at every rotation, so the turns are equally valid views; averaging them
    removes much of the chance that one view is confidently wrong). ``recheck_below=1.0`` turns
    every crop; ``rotations=1`` turns none. ``only`` (a boolean per crop) limits the second look
    to the crops that could be announced (the reader passes "detector score is sure").
    """
    if not crops:
        return np.zeros((0, len(CLASSES)), np.float32)
    net.setInput(crops_to_blob(crops))
    probs = softmax(net.forward().reshape(len(crops), len(CLASSES)))
    if rotations <= 1:
        return probs
    again = [i for i in range(len(crops)) if probs[i].max() < recheck_below and (only is None or only[i])]
    if not again:
        return probs
    turns = (cv2.ROTATE_90_CLOCKWISE, cv2.ROTATE_180, cv2.ROTATE_90_COUNTERCLOCKWISE)[: rotations - 1]
    turned = [cv2.rotate(crops[i], t) for t in turns for i in again]
    net.setInput(crops_to_blob(turned))
    more = softmax(net.forward().reshape(len(turned), len(CLASSES))).reshape(len(turns), len(again), len(CLASSES))
    probs[again] = (probs[again] + more.sum(0)) / (1 + len(turns))
    return probs

