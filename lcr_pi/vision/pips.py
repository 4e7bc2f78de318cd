"""A second look at a pip die the face classifier hesitates over (``models/dice_pips.onnx``, optional).

The face classifier (:mod:`lcr_pi.vision.classify`) sees every die, of every kind, in a 48 px crop 1.6
face sides wide. For pip dice a second, smaller network looks again, closer: a 64 px crop 1.35 face
sides wide (about 47 px across the face instead of 30), trained on pip faces only (real photos and
rendered pip dice) and on what is no flat pip face (the detector's finds beside dice, side faces,
leaning dice) as one class, ``other``. It looks at the crop straight and a quarter turn round.

It is asked only about a die the classifier already leans to (its best pip face at least
``second_look_from`` of the belief) without being sure (under ``sure_confidence``), and it can only
second that face: when it names the same face with at least ``second_look_agree`` (0.999) the die
takes that belief; otherwise nothing changes. So it never names a face the classifier did not
prefer, and it never makes a die less sure. The pair network's word on leaning comes after it, as
for any die (:func:`lcr_pi.vision.reader.with_pair_leaning`).

Why: at rendered pip tables what the classifier hesitates over is mostly whether a flat die leans
(its ``cocked`` share); a network that learnt leaning dice as ``other`` and sees the pips larger
settles that for some dice (a variant that let it settle only which face read no roll more).
Measured in ``models/README.md``, "Eighth round".
"""

from __future__ import annotations

import numpy as np

from lcr_pi.vision.classify import CLASSES, crop_face, crops_to_blob, softmax

MODEL_FILE = "dice_pips.onnx"
PIP_CROP_SIZE = 64  # pixels across the second look's crop...
PIP_CROP_SCALE = 1.35  # ...which is this many face sides wide
PIP_CLASSES = ("1", "2", "3", "4", "5", "6", "other")
# The classifier's class index of each pip face, in PIP_CLASSES order.
_FACE_INDEX = [CLASSES.index(c) for c in PIP_CLASSES[:6]]


def pip_crop(frame: np.ndarray, det) -> np.ndarray:
    """The second look's view of a find ``det`` (a :class:`~lcr_pi.vision.detect.Detection`): upright
    by the detector's angle, as the classifier's, but closer."""
    return crop_face(frame, det.cx, det.cy, det.side, det.angle, size=PIP_CROP_SIZE, scale=PIP_CROP_SCALE)


def look_again(net, crops: list[np.ndarray]) -> np.ndarray:
    """The pip network's class probabilities ``(len(crops), len(PIP_CLASSES))``: the mean of each crop's
    and its quarter turn's (a face is the same face turned; two looks make one confident look by
    chance less likely)."""
    if not crops:
        return np.zeros((0, len(PIP_CLASSES)), np.float32)
    turned = [np.ascontiguousarray(np.rot90(c)) for c in crops]
    net.setInput(crops_to_blob(list(crops) + turned))
    probs = softmax(net.forward().reshape(2 * len(crops), len(PIP_CLASSES)))
    return (probs[: len(crops)] + probs[len(crops):]) / 2


def hesitant(p: np.ndarray, look_from: float, sure_from: float) -> bool:
    """Whether the classifier's belief ``p`` (one row, :data:`~lcr_pi.vision.classify.CLASSES`) leans
    to a pip face without being sure of it: its likeliest class is a pip face whose share is at least
    ``look_from`` and under ``sure_from``.

    >>> p = np.zeros(len(CLASSES)); p[CLASSES.index("5")], p[CLASSES.index("cocked")] = 0.8, 0.2
    >>> hesitant(p, 0.5, 0.95), hesitant(p, 0.9, 0.95), hesitant(p, 0.5, 0.8)
    (True, False, False)
    """
    best = int(np.argmax(p))
    return best in _FACE_INDEX and look_from <= float(p[best]) < sure_from


def seconded(p: np.ndarray, second: np.ndarray, agree: float) -> np.ndarray:
    """The belief ``p`` (one row of the classifier's) after the second look ``second`` (one row,
    :data:`PIP_CLASSES`): when the second look names the classifier's likeliest face with at least
    ``agree``, that face takes ``agree`` of the belief and the rest keeps its proportions in what is
    left; otherwise ``p`` as it was.

    >>> p = np.zeros(len(CLASSES)); p[CLASSES.index("5")], p[CLASSES.index("cocked")] = 0.8, 0.2
    >>> five = np.array([0, 0, 0, 0, 0.9995, 0, 0.0005])
    >>> q = seconded(p, five, 0.999)
    >>> round(float(q[CLASSES.index("5")]), 4), round(float(q[CLASSES.index("cocked")]), 4)
    (0.999, 0.001)
    >>> bool((seconded(p, np.array([0, 0, 0, 0.9995, 0, 0, 0.0005]), 0.999) == p).all())  # it says 4: no change
    True
    >>> bool((seconded(p, np.array([0, 0, 0, 0, 0.99, 0, 0.01]), 0.999) == p).all())  # not sure enough
    True
    """
    best = int(np.argmax(p))
    k = int(np.argmax(second))
    if k >= len(_FACE_INDEX) or _FACE_INDEX[k] != best or float(second[k]) < agree or float(p[best]) >= agree:
        return p
    out = np.array(p, dtype=np.float64, copy=True)
    rest = 1.0 - float(out[best])
    out[best] = 0.0
    out *= (1.0 - agree) / max(rest, 1e-12)
    out[best] = agree
    return out
