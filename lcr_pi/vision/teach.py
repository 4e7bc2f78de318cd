"""Teach mode: the reader learns a dice set it was never trained on from a few views of each face.

A player shows each face a few times (``lcr-pi teach``). The die in each picture is measured from
the picture itself (:func:`die_outline`: what changed since the picture of the empty tray that
teaching takes first, or without one what differs from the tray around it), because the reader's
outline of a design it never saw may be far off, and the region around it is kept as a *context
crop* (:func:`face_context`). The face is then found inside the crop by a search over positions,
sizes, turns and slants (:func:`_search`) for the cut nearest other views of the same face: at
teaching time the views of a face are aligned on each other that way, and a die being read is
aligned on the taught views the same way. A cut is compared through its descriptor
(:func:`face_descriptor`): a small, blurred, contrast-normalised grey patch of the middle of the
face plus the face's colours (so red-on-white and blue-on-white faces differ). Corners are only
known up to a quarter turn, so every taught view is stored at its four quarter turns, and also at
slight slants and a little blurred.

Finding the dice (:func:`find_taught_dice`): from each die the reader finds, and from every blob of
the taught body colour (:class:`BodyMap`), since the reader's detector never saw this design and
may miss dice or outline only a mark on them. One die is kept per place; finds on a larger die's
sides (which show other faces) are dropped, and a find as large as its neighbour but too close to
it to be a die of its own, on the side where that die's sides show, is unsure; a die only the
colour found (no die of the reader's on it: it could be a side face) is at most unsure; a
die-sized blob of the body colour that no die accounts for is reported as an unsure die ``"?"``
rather than left out of the roll.

Reading (:class:`TaughtReader`): each die that looks like the taught set gets its face from the
taught views, and any other die (ordinary pip or LCR dice) keeps the reader's own answer; a frame
with no taught die is the reader's reading unchanged. The confidence falls with the distance: a
face far from every taught view, or as close to two faces, is *unsure*, never a guess. Distances
are measured in the taught set's own scale (how far apart aligned views of one face are), and the
margin needed between two faces grows where the taught views themselves mixed them up (each view
held out and searched for among the others, at teaching time), so the rules adapt to each set.

Saved as ``.npz`` (see ``calibration/README.md``).

>>> import numpy as np
>>> patch = np.zeros((40, 40, 3), np.uint8); patch[10:30, 18:22] = 255
>>> face_descriptor(patch).shape
(439,)
"""

from __future__ import annotations

import functools
import inspect
import io
import json
import math
import time
import zipfile
import zlib
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

import cv2
import numpy as np

from lcr_pi.errors import UserError
from lcr_pi.persist import write_atomic
from lcr_pi.rules.faces import ONE_PIP
from lcr_pi.vision.classify import CROP_SCALE, CROP_SIZE, crop_features, crops_to_blob
from lcr_pi.vision.dataset import KIND_FACES
from lcr_pi.vision.reader import EMBED_MODEL_FILE, FRAME_CHOOSES, FrameMemo, check_frame, unsettled

FORMAT_VERSION = 2
PATCH = 20  # descriptor patch side (pixels)
COARSE = 10  # coarse descriptor patch side, for the first, wide search
INNER = 0.6  # the descriptor looks at the middle 60% of the face: rounded edges, sides and tray left out
CONTEXT = 96  # side of a view's context crop (pixels)
SPAN = 2.4  # a context crop spans this many rough face sides
FACE_PX = CONTEXT / SPAN  # the rough face's side in its context crop
MIN_VIEWS = 3
# A read face accounts for the body colour up to this many times its size from its middle (its
# die's sides); a part of an unread blob whose surrounding ring is more than SURROUNDED body
# colour is part of a larger field of that colour, not a die (see BodyMap.uncovered).
SIDES_REACH = 1.7
SURROUNDED = 0.35
# A die's side faces, seen from above, lie along its edges: a find on a larger find's sides is a
# side (or a mark) if it is centred within SIDE_CENTRES of that face's size from its middle or much
# smaller than it (NEIGHBOUR_SIZE); otherwise a clear find (CLEAR_FIND) there is a die of its own.
SIDE_CENTRES = 1.4
NEIGHBOUR_SIZE = 0.55
CLEAR_FIND = 0.9  # a find beside a larger die must match clearly to count as a die of its own
# Two finds whose middles are closer than SIDE_GAP of their sides cannot both be flat dice (the
# found sides vary by a quarter or so); the one on the other's side towards the middle of the view
# (the cosine of the angle under INWARD) may be its side face (see _unsure_if_a_side).
SIDE_GAP = 0.9
INWARD = 0.3
# At a slant a die's side face shows a whole side from its top face, as a touching die's top does,
# but in another light: lit from above, darker. A find so placed (under SIDE_REACH_DARK of their
# sides apart) with under SIDE_DARK of the other's lightness may be a side. Measured with the finds of
# dev tables 701-710 (2026-12-06): sides at engraved 709 had 0.53-0.62 of their top's lightness,
# touching dice 0.76-2.2 (a die in another's shadow is darker, or lighter beside one).
SIDE_REACH_DARK = 1.2
SIDE_DARK = 0.72
# The reader's pair network (models/dice_pairs.onnx) learnt from many designs to tell two touching
# dice from a die and its own side face beside it. A find nearer than SIDE_GAP to another, on its
# side towards the middle of the view, is a touching die where the network believes the two flat dice
# by at least PAIR_FLAT. Measured on the finds set aside as sides (taught reader, drawn words and
# engraved, 2026-12-07; a lightness rule alone had kept side faces at check table 712): at dev tables
# 701-709 the network believed 10 of the 14 top faces among them flat dice by 0.55-0.99, and none of
# the 33 finds that were no top face by more than 0.21; at check tables 711-713, 5 of 9 top faces by
# 0.69-0.97, and none of 18 others by more than 0.14.
PAIR_FLAT = 0.5
# The same network's belief that a find on another's inner side, within SIDE_REACH_DARK of a side, is
# no die (that die's side face seen at a slant, as large and light as a top face): from PAIR_SIDE the
# find is unsure as a side. The top faces among the traced finds above had at most 0.42 of that
# belief; the side faces kept as dice 0.24-0.95. At dev tables 701-709 (2026-12-07) from 0.9 one
# frame fewer was sure and wrong (drawn words, calibrated: a die's side read as a second die) and no
# die was lost; from 0.5 the engraved design had one frame fewer sure and wrong, but 4-5 painted top
# faces were lost (the benchmark paints only the top: beside the die's white sides the network took
# it for no die).
PAIR_SIDE = 0.9
# Where two finds are too near for both to be flat dice, a sure find of the reader's detector scoring
# at least SIDE_VOUCH, centred on the inner one (within VOUCHED_AT of its side) and of its size, names
# it a top face, not a side: the detector learnt dice with their sides showing. At dev tables
# 705-712 (2026-12-06, three designs) the side faces zeroed so had detector finds of 0.30-0.58 on them
# or none; most top faces of touching dice zeroed so had 0.57-0.89, some under 0.55 or none (finds are
# often cut larger than their dice, so touching dice come within SIDE_GAP). The outer find is then taken
# for that die found again where it lies nearer than SAME_DIE (two flat dice are a side apart).
SIDE_VOUCH = 0.65
VOUCHED_AT = 0.35
SAME_DIE = 0.6
FAMILIAR = 3.5  # a face further than this many typical distances from every taught view is not of the set
# The typical distance by which a taught set judges how sure it is of a face is at least this: views
# taught at one table agree closely (typical distances 0.07-0.12 for the painted design at dev tables
# 701-704), and a die read elsewhere on that tray (another slant, another light) lay more than two
# of them from every view although nearer its own face than any other (see TaughtSet.judge).
SURE_SCALE = 0.12
# A frame the reader thinks blurred is read for the taught dice in it when they are at least this
# sharp against their faces' taught views (TaughtSet.sharpness). Measured at dev tables 701-705
# (engraved and word designs, frames of dice at rest and copies smeared by a third of a die): still
# frames 0.81-2.18 of their views' sharpness (5th percentile 0.92 or more), smeared ones 0.34-1.04
# (median 0.54-0.70). The reader's own test (blurred_sharpness) took a soft lens's still engraved
# dots for motion: 9 of 60 frames at table 705.
AS_SHARP_AS_TAUGHT = 0.85
DESCRIPTOR = f"patch{PATCH}+colour"

# The wide search around a rough outline: sizes, shifts (fractions of the side) and turns (degrees).
COARSE_SCALES = (0.55, 0.65, 0.77, 0.9, 1.05, 1.25)
COARSE_SHIFTS = (-0.3, -0.15, 0.0, 0.15, 0.3)
COARSE_TURNS = (0.0, 15.0, 30.0, 45.0, 60.0, 75.0)
# A reading cut smaller than this share of the outline it was looked for in is part of a face or
# a mark (see TaughtSet.match). Teaching searches the whole range: the player's outline may be far off.
MIN_CUT = 0.7


# --------------------------------------------------------------------------------------------
# Cutting faces out of frames


def mean_side(corners) -> float:
    """The mean length of a quadrilateral's four sides (a face's size from its outline).

    >>> mean_side([[0, 0], [4, 0], [4, 2], [0, 2]])
    3.0
    """
    c = np.asarray(corners, np.float64).reshape(4, 2)
    return float(np.mean(np.linalg.norm(c - np.roll(c, 1, 0), axis=1)))


def _clockwise(c: np.ndarray) -> np.ndarray:
    """Corners in image-clockwise order (a mirrored face would not match its taught views)."""
    u, v = c[1] - c[0], c[3] - c[0]
    if float(u[0] * v[1] - u[1] * v[0]) < 0:
        return c[[0, 3, 2, 1]]
    return c


def _context_transform(corners) -> np.ndarray:
    """3x3 map from frame pixels to context-crop pixels for a rough outline."""
    c = _clockwise(np.asarray(corners, np.float64).reshape(4, 2))
    m, h = (CONTEXT - 1) / 2, FACE_PX / 2
    dst = np.array([[m - h, m - h], [m + h, m - h], [m + h, m + h], [m - h, m + h]], np.float64)
    return cv2.getPerspectiveTransform(c.astype(np.float32), dst.astype(np.float32)).astype(np.float64)


def face_context(frame: np.ndarray, corners) -> np.ndarray:
    """The region around a rough face outline, straightened: ``CONTEXT`` x ``CONTEXT`` BGR pixels in
    which the outline is the central square of side ``FACE_PX``.

    The crop keeps room around the outline because outlines are rough; the face is found inside it
    by :func:`_search`. Large faces are shrunk by area averaging first (no aliasing of fine print).

    >>> frame = np.zeros((200, 200, 3), np.uint8); frame[80:120, 80:120] = 255
    >>> ctx = face_context(frame, [(80, 80), (120, 80), (120, 120), (80, 120)])
    >>> ctx.shape, int(ctx[48, 48, 0]), int(ctx[5, 5, 0])
    ((96, 96, 3), 255, 0)
    """
    corners = np.asarray(corners, np.float64).reshape(4, 2)
    H = _context_transform(corners)
    side = mean_side(corners)
    shrink = FACE_PX / max(side, 1e-6)
    if shrink < 0.8:
        inv = np.linalg.inv(H)
        box = cv2.perspectiveTransform(np.array([[[0, 0], [CONTEXT, 0], [CONTEXT, CONTEXT], [0, CONTEXT]]], np.float64), inv)[0]
        h, w = frame.shape[:2]
        x0, y0 = (int(max(0, math.floor(v))) for v in box.min(0))
        x1, y1 = int(min(w, math.ceil(box[:, 0].max()) + 1)), int(min(h, math.ceil(box[:, 1].max()) + 1))
        if x1 - x0 >= 8 and y1 - y0 >= 8:
            roi = frame[y0:y1, x0:x1]
            small = cv2.resize(roi, (max(1, round((x1 - x0) * shrink)), max(1, round((y1 - y0) * shrink))),
                               interpolation=cv2.INTER_AREA)
            sx, sy = small.shape[1] / (x1 - x0), small.shape[0] / (y1 - y0)
            # frame -> small: scale about the ROI's corner (pixel centres stay pixel centres)
            S = np.array([[sx, 0, 0.5 * sx - 0.5 - sx * x0], [0, sy, 0.5 * sy - 0.5 - sy * y0], [0, 0, 1]])
            return cv2.warpPerspective(small, H @ np.linalg.inv(S), (CONTEXT, CONTEXT), flags=cv2.INTER_LINEAR,
                                       borderMode=cv2.BORDER_REPLICATE)
    return cv2.warpPerspective(frame, H, (CONTEXT, CONTEXT), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


# --------------------------------------------------------------------------------------------
# Descriptors


@functools.cache
def _blur_matrix(size: int) -> np.ndarray:
    """The (1 2 1) / 4 smoothing of ``size`` values, edges replicated, as a matrix.

    >>> _blur_matrix(3) * 4
    array([[3., 1., 0.],
           [1., 2., 1.],
           [0., 1., 3.]], dtype=float32)
    """
    m = np.zeros((size, size), np.float32)
    for i in range(size):
        for j, w in ((i - 1, 0.25), (i, 0.5), (i + 1, 0.25)):
            m[i, min(max(j, 0), size - 1)] += w
    m.setflags(write=False)  # cached: one array for every caller
    return m


def _blur3(grey: np.ndarray) -> np.ndarray:
    """3x3 Gaussian (1 2 1) over the last two axes, edges replicated.

    Two matrix products (along the rows, one for the whole stack; then down the columns) for a whole
    stack of patches: the search blurs some hundred 20 px patches at a time, and shifted sums of
    them took longer.

    >>> g = np.arange(12, dtype=np.float32).reshape(3, 4) ** 2
    >>> p = np.pad(g, 1, mode="edge")
    >>> k = np.array([1.0, 2.0, 1.0])
    >>> by_hand = sum(k[i] * k[j] * p[i:i + 3, j:j + 4] for i in range(3) for j in range(3)) / 16
    >>> bool(np.allclose(_blur3(g), by_hand))
    True
    """
    rows, cols = grey.shape[-2:]
    across = (np.asarray(grey, np.float32).reshape(-1, cols) @ _blur_matrix(cols).T).reshape(grey.shape)
    return np.matmul(_blur_matrix(rows), across)


def _channels(image: np.ndarray) -> np.ndarray:
    """A BGR image as float32 channels (grey, L, a, b), each 0..1: what descriptors are made of."""
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    lab = cv2.cvtColor(image, cv2.COLOR_BGR2LAB)
    return cv2.merge([grey, *cv2.split(lab)]).astype(np.float32) * (1 / 255.0)


def _describe(patches: np.ndarray) -> np.ndarray:
    """Descriptors of ``(N, P, P, 4)`` patches of :func:`_channels`: grey shape (P*P) + colour layout (39)."""
    n, p = patches.shape[:2]
    grey = _blur3(patches[..., 0]).reshape(n, -1)
    grey -= grey.mean(1, keepdims=True)
    grey /= np.maximum(np.linalg.norm(grey, axis=1, keepdims=True), 1e-3)
    pixels = patches.reshape(n, p * p, -1)
    light = pixels[..., 1]
    # The face's two colours: its darker part and its lighter part (ink or body, whichever is which).
    k = p * p // 2
    dark = light < (np.partition(light, k, axis=1)[:, k: k + 1] - 10 / 255.0)
    count = dark.sum(1, keepdims=True).astype(np.float32)
    # Both sums over the patch's pixels, all of them and the dark ones, in one product: two einsums
    # over the strided colour channels took four times as long.
    weights = np.empty((n, 2, p * p), np.float32)
    weights[:, 0] = 1.0
    weights[:, 1] = dark
    sums = np.matmul(weights, pixels)[..., 1:]
    total, dark_sum = sums[:, 0], sums[:, 1]
    dark_mean = np.where(count > 0, dark_sum / np.maximum(count, 1), total / (p * p))
    light_mean = np.where(count < p * p, (total - dark_sum) / np.maximum(p * p - count, 1), total / (p * p))
    colour = np.tile(np.concatenate([light_mean, dark_mean, count / (p * p)], 1), 5)  # 35 values: colour weighs about a fifth
    colour = np.concatenate([colour, np.zeros((n, 4), np.float32)], 1) * 0.25
    return np.concatenate([grey, colour], 1).astype(np.float32)


def face_descriptor(face: np.ndarray) -> np.ndarray:
    """Descriptor of a straightened face image (any size): its whole square is the face's middle."""
    small = cv2.resize(face, (PATCH, PATCH), interpolation=cv2.INTER_AREA)
    return _describe(_channels(small)[None])[0]


def _coarse(desc: np.ndarray) -> np.ndarray:
    """Coarse descriptors from fine ones: the grey patch averaged 2x2 and renormalised (shape only)."""
    n = len(desc)
    g = desc[:, : PATCH * PATCH].reshape(n, COARSE, 2, COARSE, 2).mean((2, 4)).reshape(n, -1)
    g = g - g.mean(1, keepdims=True)
    return g / np.maximum(np.linalg.norm(g, axis=1, keepdims=True), 1e-3)


def _affine(h) -> np.ndarray:
    """A hypothesis as (x, y, a, b, c, d): the face's centre in context pixels and the 2x2 map
    [[a, b], [c, d]] from face coordinates (the face is the unit square around 0) to context pixels.
    Four numbers (x, y, side, turn) are a square turned by ``turn`` radians."""
    h = np.asarray(h, np.float64)
    if h.shape[-1] == 6:
        return h
    x, y, s, t = np.moveaxis(h, -1, 0)
    c, sn = s * np.cos(t), s * np.sin(t)
    return np.stack([x, y, c, -sn, sn, c], -1)


def _patch_maps(hyps: np.ndarray, size: int) -> np.ndarray:
    """Affine maps (N, 2, 3) from patch pixels to context pixels for hypotheses (see :func:`_affine`)."""
    x, y, a, b, c, d = _affine(hyps).reshape(-1, 6).T
    k = INNER / size
    m = (size - 1) / 2
    maps = np.empty((len(x), 2, 3))
    maps[:, 0, 0], maps[:, 0, 1], maps[:, 0, 2] = a * k, b * k, x - (a + b) * k * m
    maps[:, 1, 0], maps[:, 1, 1], maps[:, 1, 2] = c * k, d * k, y - (c + d) * k * m
    return maps


def _cut(ctx: np.ndarray, hyps: np.ndarray, size: int) -> np.ndarray:
    """Patches ``(N, size, size, C)`` of the face's middle at each hypothesis (one remap for all)."""
    maps = _patch_maps(hyps, size).astype(np.float32)
    n = len(maps)
    # context coordinates (x, y) of every patch pixel, (N, size * size, 2), in one product with the
    # patch's pixel grid: the map OpenCV takes as one two-channel array
    xy = np.matmul(_pixel_grid(size), maps.transpose(0, 2, 1))
    out = cv2.remap(ctx, xy, None, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return out.reshape(n, size, size, -1)


@functools.cache
def _pixel_grid(size: int) -> np.ndarray:
    """(column, row, 1) of each pixel of a ``size`` x ``size`` patch, row by row.

    >>> _pixel_grid(2).tolist()
    [[0.0, 0.0, 1.0], [1.0, 0.0, 1.0], [0.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    """
    v, u = np.mgrid[:size, :size].astype(np.float32)
    grid = np.stack([u.ravel(), v.ravel(), np.ones(size * size, np.float32)], 1)
    grid.setflags(write=False)  # cached: one array for every caller
    return grid


def _prepare(ctx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A context crop's channels smoothed for fine patches, and its grey smoothed more for coarse
    ones (no aliasing when shrunk)."""
    ch = _channels(ctx)
    return cv2.GaussianBlur(ch, (0, 0), 0.6), cv2.GaussianBlur(np.ascontiguousarray(ch[..., 0]), (0, 0), 1.4)


def _fine_descriptors(fine_ctx, hyps):
    return _describe(_cut(fine_ctx, hyps, PATCH))


def _coarse_descriptors(coarse_ctx, hyps):
    """Grey-shape descriptors of coarse patches (as :func:`_coarse` makes from fine ones)."""
    n = len(hyps)
    g = _blur3(_cut(coarse_ctx, hyps, COARSE)[..., 0]).reshape(n, -1)
    g -= g.mean(1, keepdims=True)
    return g / np.maximum(np.linalg.norm(g, axis=1, keepdims=True), 1e-3)


def _turn(ctx: np.ndarray) -> float:
    """The die's turn in a context crop (radians, 0 to a quarter turn), from the directions of the
    edges around its middle: a die's outline (and most of its print) runs along its two axes.

    >>> ctx = np.zeros((CONTEXT, CONTEXT, 3), np.uint8)
    >>> box = cv2.boxPoints(((47.5, 47.5), (40, 40), 20.0))
    >>> _ = cv2.fillConvexPoly(ctx, np.round(box * 16).astype(np.int32), (200, 200, 200), cv2.LINE_AA, 4)
    >>> round(math.degrees(_turn(ctx)))
    20
    """
    lab = cv2.cvtColor(cv2.GaussianBlur(ctx, (0, 0), 1.0), cv2.COLOR_BGR2LAB).astype(np.float32)
    best_gx = best_gy = best_m = None
    for c in range(3):  # per pixel, the channel with the strongest edge (a violet die on a blue tray differs in colour)
        gx = cv2.Sobel(lab[..., c], cv2.CV_32F, 1, 0, ksize=3)
        gy = cv2.Sobel(lab[..., c], cv2.CV_32F, 0, 1, ksize=3)
        m = gx * gx + gy * gy
        if best_m is None:
            best_gx, best_gy, best_m = gx, gy, m
        else:
            take = m > best_m
            best_gx, best_gy, best_m = np.where(take, gx, best_gx), np.where(take, gy, best_gy), np.maximum(m, best_m)
    yy, xx = np.mgrid[:CONTEXT, :CONTEXT]
    c0 = (CONTEXT - 1) / 2
    near = ((xx - c0) ** 2 + (yy - c0) ** 2) <= (0.85 * FACE_PX) ** 2
    theta = np.arctan2(best_gy, best_gx)
    w = np.where(near, best_m, 0)
    z = complex(float((w * np.cos(4 * theta)).sum()), float((w * np.sin(4 * theta)).sum()))
    return (math.atan2(z.imag, z.real) / 4) % (math.pi / 2)


def _base_hypothesis(ctx: np.ndarray | None = None) -> np.ndarray:
    """The die's middle in its context crop, at the turn of its edges."""
    m = (CONTEXT - 1) / 2
    return np.array([m, m, FACE_PX, 0.0 if ctx is None else _turn(ctx)])


def _quarter_turns(h: np.ndarray) -> np.ndarray:
    """The hypothesis at its four quarter turns (the same face, its corners named from another one)."""
    x, y, a, b, c, d = _affine(h)
    A = np.array([[a, b], [c, d]])
    out = []
    for k in range(4):
        R = np.array([[0.0, -1.0], [1.0, 0.0]]) if k else np.eye(2)
        A = A @ R if k else A
        out.append((x, y, A[0, 0], A[0, 1], A[1, 0], A[1, 1]))
    return np.array(out)


# --------------------------------------------------------------------------------------------
# Searching a context crop for the cut nearest a set of stored rows


@dataclass
class _Rows:
    """Stored descriptors to compare with: fine and coarse, with each row's face."""

    fine: np.ndarray
    faces: np.ndarray
    per_view: int = 4  # rows per view; the first four (the view as seen, at its quarter turns) make the coarse rows
    coarse: np.ndarray = field(init=False)
    coarse_faces: np.ndarray = field(init=False)

    def __post_init__(self):
        plain = (np.arange(len(self.fine)) % self.per_view) < 4
        self.coarse = _coarse(self.fine[plain])
        self.coarse_faces = self.faces[plain]

    @functools.cached_property
    def _by_face(self) -> dict:
        """Face -> its fine rows as columns (D, most) and their squared lengths (most,), every face
        padded to the most rows any face has with rows no descriptor comes near (length infinite):
        made once per set, as the fine search compares with them a dozen times a search."""
        most = max(int((self.faces == f).sum()) for f in set(self.faces.tolist()))
        out = {}
        for f in set(self.faces.tolist()):
            r = self.fine[self.faces == f]
            columns = np.zeros((r.shape[1], most), np.float32)
            columns[:, :len(r)] = r.T
            lengths = np.full(most, np.inf, np.float32)
            lengths[:len(r)] = (r * r).sum(1)
            out[f] = (columns, lengths)
        return out

    def stacked(self, faces) -> tuple[np.ndarray, np.ndarray]:
        """The fine rows of each of ``faces`` (one search each) for :func:`_descend`: (k, D, most)
        columns and (k, most) squared lengths.

        >>> fine = np.zeros((3, PATCH * PATCH + 39), np.float32)
        >>> fine[:, 0] = 1.0, 2.0, 3.0
        >>> columns, lengths = _Rows(fine, np.array(["L", "L", "C"]), per_view=1).stacked(["C", "L"])
        >>> columns.shape, lengths.tolist(), columns[1, 0].tolist()
        ((2, 439, 2), [[9.0, inf], [1.0, 4.0]], [1.0, 2.0])
        """
        by_face = self._by_face
        return np.stack([by_face[f][0] for f in faces]), np.stack([by_face[f][1] for f in faces])


def _sqdist(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Squared distances (len(a), len(b))."""
    d = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2 * a @ b.T
    return np.maximum(d, 0)


def _similar(h) -> tuple[float, float, float, float]:
    """(x, y, side, turn) of the square nearest a hypothesis."""
    h = np.asarray(h, np.float64)
    if h.shape[-1] == 4:
        return tuple(float(v) for v in h)
    x, y, a, b, c, d = h
    return float(x), float(y), math.sqrt(abs(a * d - b * c)), math.atan2(c - b, a + d)


def _coarse_grid(start: np.ndarray, min_cut: float = 0.0) -> np.ndarray:
    x, y, s, a = _similar(start)
    out = []
    for k in (k for k in COARSE_SCALES if k >= min_cut):
        side = s * k
        for t in COARSE_TURNS:
            ang = a + math.radians(t)
            ca, sa = math.cos(ang), math.sin(ang)
            for u in COARSE_SHIFTS:
                for v in COARSE_SHIFTS:
                    # shifts along the turned face's own axes
                    out.append((x + side * (u * ca - v * sa), y + side * (u * sa + v * ca), side, ang))
    return np.array(out)


_T40 = math.radians(40)
# Small changes of a face's map per unit step, in face coordinates: bigger/smaller, turned, squashed
# along its axes or along its diagonals (a face seen at a slant).
_MOVES = np.array([[[1, 0], [0, 1]], [[0, -_T40], [_T40, 0]], [[1, 0], [0, -1]], [[0, 1], [1, 0]]], np.float64)


_MOVED = [2, 3, 4, 5, 8, 9, 10, 11]  # a neighbour's place for each move (:func:`_neighbours`)


@functools.cache
def _moves(step: float) -> np.ndarray:
    """The moves one ``step`` back and forth, (2, 4, 2, 2): what :func:`_neighbours` multiplies maps by."""
    moves = np.stack([np.eye(2) + sign * step * _MOVES for sign in (-1.0, 1.0)])
    moves.setflags(write=False)  # cached: one array for every caller
    return moves


def _neighbours(hs: np.ndarray, step: float, fixed_size: bool = False, min_cut: float = 0.0) -> np.ndarray:
    """For each hypothesis (N, 6), its 12 neighbours one step away (N, 12, 6): shifted by
    +-step*size along x and y, and changed by each of the moves. Maps slanted beyond 1.6:1, or
    smaller than ``min_cut`` of the context's face, are pulled back to the start (faces are seen
    at most at a moderate slant). With ``fixed_size`` every move keeps the map's size: a view cut at
    its die's measured size is only shifted, turned and slanted."""
    hs = _affine(hs).reshape(-1, 6)
    n = len(hs)
    A = hs[:, 2:].reshape(n, 2, 2)
    size = np.sqrt(np.abs(A[:, 0, 0] * A[:, 1, 1] - A[:, 0, 1] * A[:, 1, 0]))
    out = np.repeat(hs[:, None, :], 12, axis=1)
    for k, sign in ((0, -1.0), (6, 1.0)):
        out[:, k, 0] += sign * step * size
        out[:, k + 1, 1] += sign * step * size
    # each map times each move, both signs at once: (n, 2, 4, 2, 2) into places 2-5 and 8-11
    out[:, _MOVED, 2:] = np.matmul(A[:, None, None], _moves(step)).reshape(n, 8, 4)
    M = out[..., 2:]  # a view: scaling it scales the candidates
    det = np.abs(M[..., 0] * M[..., 3] - M[..., 1] * M[..., 2])
    if fixed_size:  # each candidate scaled back to the start's size
        M *= (size[:, None] / np.sqrt(np.maximum(det, 1e-12)))[..., None]
        det = np.repeat(size[:, None] ** 2, 12, axis=1)
    # singular values of 2x2 maps in closed form
    p = (M ** 2).sum(-1)
    disc = np.sqrt(np.maximum(p * p - 4 * det * det, 0))
    ratio = np.sqrt((p + disc) / np.maximum(p - disc, 1e-12))
    pulled_back = (ratio > 1.6) | (np.sqrt(det) < min_cut * FACE_PX)
    out[pulled_back] = hs[:, None, :].repeat(12, 1)[pulled_back]
    return out


def _descend(fine_ctx: np.ndarray, stacked: tuple[np.ndarray, np.ndarray], starts: list[np.ndarray],
             fixed_size: bool = False, min_cut: float = 0.0) -> list[tuple[float, np.ndarray]]:
    """Local searches, one per start, run side by side: from each start, the cut nearest its own
    rows (squared distance, hypothesis). ``stacked``: each search's rows (:meth:`_Rows.stacked`)."""
    columns, lengths = stacked
    k = len(columns)

    def distances(descs, who):
        """Squared distance of each of ``descs`` (searches, candidates, D) to the nearest row of its
        own search (``who``, one per first axis), (searches, candidates). One batched product for
        all searches: one by one they cost more in NumPy's calls than in arithmetic."""
        every = len(who) == k  # all searches still going, in order: no copy of their rows
        d = ((descs * descs).sum(-1)[..., None] + (lengths if every else lengths[who])[:, None, :]
             - 2 * np.matmul(descs, columns if every else columns[who]))
        return np.maximum(d.min(-1), 0).astype(np.float64)

    hs = _affine(np.array(starts)).reshape(-1, 6).copy()
    ds = distances(_fine_descriptors(fine_ctx, hs)[:, None], np.arange(k))[:, 0]
    for step in (0.08, 0.04, 0.02):
        active = np.arange(k)
        for _ in range(4):
            if len(active) == 0:
                break
            cand = _neighbours(hs[active], step, fixed_size, min_cut)  # (a, 12, 6)
            dd = distances(_fine_descriptors(fine_ctx, cand.reshape(-1, 6)).reshape(len(active), 12, -1), active)
            i = dd.argmin(1)
            better = dd[np.arange(len(active)), i] < ds[active] - 1e-9
            hs[active[better]] = cand[np.flatnonzero(better), i[better]]
            ds[active[better]] = dd[np.flatnonzero(better), i[better]]
            active = active[better]
    return [(float(d), h) for d, h in zip(ds, hs)]


@dataclass(frozen=True)
class Match:
    """Where a face was found in a context crop and how near each taught face came."""

    hypothesis: tuple  # (x, y, a, b, c, d) in context pixels (see _affine)
    face: str
    distances: dict  # face -> best distance reached by any cut for that face


def _small(m: "Match") -> bool:
    """Whether a match's cut is much smaller than its context's die (under :data:`MIN_CUT`)."""
    return _similar(m.hypothesis)[2] < MIN_CUT * FACE_PX


def _search(ctx: np.ndarray, rows: _Rows, start: np.ndarray | None = None, wide: bool = True,
            fixed_size: bool = False, min_cut: float = 0.0) -> Match:
    """Find the cut of ``ctx`` nearest the stored rows, and each face's best distance.

    A wide coarse search (sizes, shifts, turns of :data:`COARSE_SCALES` etc.) picks, for each face,
    its best coarse cut, and another nearly as good (:func:`_other_start`); each is then refined on
    fine descriptors by a shrinking local search, the nearer of a face's two winning. Each
    face gets its own best alignment, so "as close to two faces" is judged fairly. No cut is smaller
    than ``min_cut`` of the context's face (:meth:`TaughtSet.match` looks again with
    :data:`MIN_CUT`); with ``fixed_size`` the local search keeps the start's size.
    """
    fine_ctx, coarse_ctx = _prepare(ctx)
    start = _base_hypothesis(ctx) if start is None else np.asarray(start, np.float64)
    faces = sorted(set(rows.faces.tolist()))
    starts: dict[str, np.ndarray] = {}
    also: list[tuple[str, np.ndarray]] = []  # a second start for a face whose coarse best is nearly tied
    if wide:
        grid = _coarse_grid(start, min_cut)
        d = _sqdist(_coarse_descriptors(coarse_ctx, grid), rows.coarse)
        for f in faces:
            col = d[:, rows.coarse_faces == f].min(1)
            order = np.argsort(col)
            starts[f] = grid[int(order[0])]
            other = _other_start(grid, col, order)
            if other is not None:
                also.append((f, other))
    else:
        starts = {f: start for f in faces}
    searched = list(faces) + [f for f, _ in also]
    results = _descend(fine_ctx, rows.stacked(searched), [starts[f] for f in faces] + [h for _, h in also],
                       fixed_size, min_cut)
    best: dict = {}
    for f, (d, h) in zip(searched, results):
        if f not in best or math.sqrt(d) < best[f][0]:
            best[f] = (math.sqrt(d), h)
    face = min(best, key=lambda f: best[f][0])
    return Match(tuple(float(v) for v in best[face][1]), face, {f: v[0] for f, v in best.items()})


# The coarse search's best cut for a face can be nearly tied with another cut of another size or place,
# and the fine search only refines around where it starts: at table 1 (painted) every L die was found
# at 1.4 times its size (distance 0.40 instead of 0.09), and so not at all, once a slightly different
# taught set tipped the tie. A coarse cut within TIE of the best (in distance) that differs from it by
# more than a tenth in size or 0.15 of a side in place is refined too; the nearer result wins.
# Measured at dev tables 701-710 (2026-12-06, with the views cut by their own colour): words 84.4 ->
# 84.5 %, painted 83.2 -> 84.9 %, engraved 84.6 -> 85.9 %, frames sure and wrong 14 -> 8 (README,
# teach); the taught reader takes about a fifth longer.
TIE = 1.2


def _other_start(grid: np.ndarray, col: np.ndarray, order: np.ndarray) -> np.ndarray | None:
    """Among the coarse cuts ``grid`` (squared distances ``col``, sorted by ``order``), the first of
    the next five within :data:`TIE` of the best that is another cut than the best, or None.

    >>> grid = np.array([[48, 48, 40, 0], [48, 48, 41, 0], [48, 48, 56, 0], [20, 20, 40, 0]], np.float64)
    >>> _other_start(grid, np.array([1.0, 1.1, 1.3, 1.2]), np.array([0, 1, 3, 2]))   # 41: the same cut
    array([20., 20., 40.,  0.])
    >>> _other_start(grid, np.array([1.0, 1.1, 1.3, 2.0]), np.array([0, 1, 2, 3]))   # 1.4 times the size
    array([48., 48., 56.,  0.])
    >>> _other_start(grid, np.array([1.0, 1.1, 1.6, 2.0]), np.array([0, 1, 2, 3])) is None   # not tied
    True
    """
    best = _similar(grid[int(order[0])])
    for j in order[1:6]:
        if col[j] > TIE * TIE * col[order[0]]:
            return None
        h = _similar(grid[int(j)])
        if abs(math.log(h[2] / best[2])) > 0.1 or math.hypot(h[0] - best[0], h[1] - best[1]) > 0.15 * best[2]:
            return grid[int(j)]
    return None


def straight_crop(ctx: np.ndarray, h=None) -> np.ndarray:
    """The face classifier's view of the face at hypothesis ``h`` of a context crop: ``CROP_SIZE``
    pixels, the face upright (its edges along the crop's) in the middle, ``CROP_SCALE`` faces wide.
    Without ``h``, the context's own central square (a context cut around an aligned outline).

    >>> ctx = np.zeros((CONTEXT, CONTEXT, 3), np.uint8); ctx[28:68, 28:68] = 255   # the central FACE_PX square
    >>> crop = straight_crop(ctx)
    >>> crop.shape, int(crop[24, 24, 0]), int(crop[2, 2, 0])
    ((48, 48, 3), 255, 0)
    """
    if h is None:
        h = (CONTEXT - 1) / 2, (CONTEXT - 1) / 2, FACE_PX, 0.0
    x, y, a, b, c, d = _affine(h)
    A = np.array([[a, b], [c, d]], np.float64)
    face_px = CROP_SIZE / CROP_SCALE
    # crop pixel = m + face_px * A^-1 (context pixel - centre): the face's unit square -> face_px
    inv = face_px * np.linalg.inv(A)
    m = (CROP_SIZE - 1) / 2
    M = np.hstack([inv, (np.array([m, m]) - inv @ np.array([x, y]))[:, None]])
    return cv2.warpAffine(ctx, M, (CROP_SIZE, CROP_SIZE), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE)


# --------------------------------------------------------------------------------------------
# The taught set


@dataclass(frozen=True)
class TaughtSet:
    """Taught views of one dice design: descriptors (N x D, each aligned view at its four quarter
    turns) and faces, the typical distance between views of one face, and the body colour."""

    name: str
    kind: str  # "pip", "lcr" or "wild"
    descriptors: np.ndarray
    faces: tuple[str, ...]  # one per descriptor row
    scale: float  # typical distance between aligned views of one face
    views: dict  # face -> number of views shown
    created: str = ""
    version: int = FORMAT_VERSION
    body: tuple = ()  # Lab (0-255) of the dice's body colour and its spread, when known: (L, a, b, sL, sab)
    # confusion[g][f]: of the views of face g, each held out and searched for among the other views,
    # the largest ratio of its distance to g over its distance to f (above 1: that view looked more
    # like f than like g). Reading f over g then needs a clearer win.
    confusion: dict = field(default_factory=dict)
    # Each kept view as the face classifier sees a die (CROP_SIZE px, the aligned face upright in
    # its middle, CROP_SCALE faces wide), with its face: read with the reader's own classifier, its
    # features name a taught die's face a second way (:class:`FeatureMatcher`). None in older files.
    crops: np.ndarray | None = field(default=None, repr=False)
    crop_faces: tuple[str, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "_rows", _Rows(np.asarray(self.descriptors, np.float32), np.array(self.faces), VARIANTS_PER_VIEW))

    @functools.cached_property
    def sharpness(self) -> dict:
        """Face -> the median :func:`~lcr_pi.vision.classify.sharpness` of its taught views as the
        classifier sees a die: how sharp that face looks at this table when the die lies still
        (empty for a set without view crops). Worked out when first asked (a frame the reader
        takes for blurred), not when the set is loaded."""
        from lcr_pi.vision.classify import sharpness

        by_face: dict[str, list[float]] = {}
        for crop, face in zip(self.crops if self.crops is not None else (), self.crop_faces):
            by_face.setdefault(face, []).append(sharpness(crop))
        return {face: float(np.median(values)) for face, values in by_face.items()}

    @property
    def rows(self) -> _Rows:
        return self._rows  # type: ignore[attr-defined]

    def judge(self, distances: dict) -> tuple[str, float, bool]:
        """Nearest face, confidence 0..1 (low when far from all, or as close to two), and whether
        the face looks like this set at all (within ``FAMILIAR`` typical distances of a view)."""
        name, d1 = min(distances.items(), key=lambda kv: kv[1])
        # beyond two typical distances from every view (at least SURE_SCALE): less sure
        familiar = float(np.clip(3.0 - d1 / max(self.scale, SURE_SCALE), 0.0, 1.0))
        distinct = 1.0
        for other, d in distances.items():
            if other != name:
                # as close to two faces: unsure; more so where the taught views themselves mixed the two up
                need = 0.8 * min(1.0, 0.8 / max(self.confusion.get(other, {}).get(name, 0.0), 1e-6))
                distinct = min(distinct, 1.0 - float(np.clip((d1 / max(d, 1e-6) - need + 0.1) / 0.25, 0.0, 1.0)))
        return name, round(min(familiar, distinct), 4), d1 <= FAMILIAR * self.scale

    def match(self, ctx: np.ndarray) -> Match:
        """Search a context crop (:func:`face_context`) for the face.

        Searched at any size first. A best cut much smaller than the context's die (under
        :data:`MIN_CUT`) is part of a face looking like a smaller face (the bowl of an R like the
        ring of the dot face) or a mark (one pip of another kind of die): searched again at the
        die's size, a clear match there names the die. Otherwise the small cut is returned:
        :meth:`classify` gives it no confidence and :func:`find_taught_dice` drops it as a mark (a
        die of another kind keeps the reader's reading)."""
        m = _search(ctx, self.rows)
        if not _small(m):
            return m
        again = _search(ctx, self.rows, min_cut=MIN_CUT)
        _, confidence, familiar = self.judge(again.distances)
        return again if familiar and confidence >= CLEAR_FIND else m

    def classify(self, ctx: np.ndarray) -> tuple[str, float, bool]:
        """Face, confidence and familiarity of the die in a context crop (:func:`face_context`);
        no confidence in a face found only as a cut much smaller than the die (see :meth:`match`)."""
        m = self.match(ctx)
        face, confidence, familiar = self.judge(m.distances)
        return face, (0.0 if _small(m) else confidence), familiar


def _body_colour(contexts: list[np.ndarray], hyps) -> tuple:
    """The dice's body colour, Lab 0..255, and how far it strays: (L, a, b, L's spread, a/b's spread).

    From the middles of the aligned faces of all views: the larger of two colour clusters is the
    body (the marks differ from face to face, the body is on every face). The spreads cover how far
    each view's body colour lies from the common one (light differs between pictures) and how much
    it varies within a view."""
    pix = []
    for ctx, h in zip(contexts, hyps):
        wide = _affine(h).copy()
        wide[2:] *= 0.8 / INNER  # the middle 80% of the face
        pix.append(_cut(cv2.cvtColor(ctx, cv2.COLOR_BGR2LAB), wide[None], 16)[0].reshape(-1, 3).astype(np.float32))
    data = np.concatenate(pix)
    # Clustered by colour alone (a, b): light and shade change a colour's brightness, not its hue.
    labels = _two_clusters(data[:, 1:])
    big = int(np.bincount(labels.ravel(), minlength=2).argmax())
    labels = labels.ravel().reshape(len(pix), -1)
    medians, within = [], []
    for p, lab in zip(pix, labels):
        sel = p[lab == big]
        if len(sel) < 0.2 * len(p):
            continue  # a view mostly of its print (or badly cut): it does not tell the body's colour
        m = np.median(sel, 0)
        medians.append(m)
        within.append(float(np.median(np.hypot(sel[:, 1] - m[1], sel[:, 2] - m[2]))))
    medians = np.array(medians) if medians else np.median(data, 0)[None]
    mean = np.median(medians, 0)
    body_pixels = np.concatenate([p[lab == big] for p, lab in zip(pix, labels)])
    sl = float(np.percentile(np.abs(body_pixels[:, 0] - mean[0]), 90))
    sab = float(np.percentile(np.hypot(medians[:, 1] - mean[1], medians[:, 2] - mean[2]), 80)) + 3 * float(np.median(within or [0.0]))
    return tuple(round(float(v), 2) for v in (*mean, sl, sab))


def _two_clusters(points: np.ndarray, rounds: int = 20) -> np.ndarray:
    """Labels 0/1 splitting ``points`` (N, D) into two clusters (k-means, k=2), started from the
    points at the 10th and 90th percentiles along their main direction: the same points always
    give the same split (OpenCV's k-means starts from its global random generator, so a teaching
    session's result depended on what ran before it).

    >>> pts = np.array([[0, 0], [1, 0], [0, 1], [10, 10], [11, 10], [10, 11], [10, 10]], np.float32)
    >>> _two_clusters(pts).tolist()
    [0, 0, 0, 1, 1, 1, 1]
    """
    pts = np.asarray(points, np.float64)
    centred = pts - pts.mean(0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    axis = vt[0] * np.sign(vt[0][np.argmax(np.abs(vt[0]))])  # the same way round on every platform
    along = centred @ axis
    centres = np.stack([pts[np.argsort(along)[int(q * (len(pts) - 1))]] for q in (0.1, 0.9)])
    labels = np.zeros(len(pts), np.int64)
    for _ in range(rounds):
        labels = np.argmin(((pts[:, None, :] - centres[None]) ** 2).sum(-1), axis=1)
        moved = np.stack([pts[labels == k].mean(0) if np.any(labels == k) else centres[k] for k in (0, 1)])
        if np.allclose(moved, centres, atol=1e-3):
            break
        centres = moved
    return labels


def _align_views(contexts: list[np.ndarray], labels: list[str], rounds: int = 2):
    """Find the face in every view by aligning the views of each face on each other.

    Each view starts at its die's middle and edge direction. The view the others match best (each
    searched for in turn) is the anchor: the others are aligned on it; each is cut at its die's
    measured size (:func:`_sized_to_dice`), then aligned on all the others of its face (shifted,
    turned and slanted, its size kept). Returns each view's hypothesis and its leave-one-view-out
    distance (how far it is from the nearest other view of its face after alignment)."""
    prepared = [_prepare(c)[0] for c in contexts]
    hyps = [_affine(_base_hypothesis(c)) for c in contexts]
    dist = [0.0] * len(contexts)
    labels_arr = np.array(labels)

    def rows_of(views, poses):
        return _Rows(np.concatenate([_describe(_cut(prepared[j], _quarter_turns(poses[j]), PATCH)) for j in views]),
                     np.array([labels[views[0]]] * (4 * len(views))))

    for f in dict.fromkeys(labels):
        views = [int(i) for i in np.flatnonzero(labels_arr == f)]
        found = {}  # (i, j) -> view i searched for view j's face
        if len(views) > 1:
            for j in views:
                rows = rows_of([j], hyps)
                for i in views:
                    if i != j:
                        found[i, j] = _search(contexts[i], rows)
            anchor = min(views, key=lambda j: sum(found[i, j].distances[f] for i in views if i != j))
            for i in views:
                if i != anchor:
                    hyps[i] = np.array(found[i, anchor].hypothesis)
    hyps = _sized_to_dice(contexts, labels, hyps)
    for f in dict.fromkeys(labels):
        views = [int(i) for i in np.flatnonzero(labels_arr == f)]
        for _ in range(rounds):
            new = list(hyps)
            for i in views:
                others = [j for j in views if j != i]
                if not others:
                    continue
                m = _search(contexts[i], rows_of(others, hyps), start=hyps[i], wide=False, fixed_size=True)
                new[i], dist[i] = np.array(m.hypothesis), m.distances[f]
            hyps = new
    return hyps, dist


VIEW_SIZE_SPREAD = 1.15  # a view measured this much off its face's other views takes their size
FACE_SIZE_SPREAD = 1.4  # a face measured this much off all the views takes their size
RECENTRE = 0.2  # a view cut at its measured die but centred this many sides off it is moved onto it


def _within(value: float, reference: float, spread: float) -> bool:
    """Whether ``value`` is known (finite) and within a factor ``spread`` of ``reference``, either way.

    >>> _within(1.1, 1.0, 1.15), _within(0.8, 1.0, 1.15), _within(float("nan"), 1.0, 1.15)
    (True, False, False)
    """
    return bool(np.isfinite(value)) and abs(math.log(value / reference)) <= math.log(spread)


def _own_measure_nearer(cut: float, side: float, usual_ratio: float, usual_side: float) -> bool:
    """For a view whose ratio of cut to die strays from its face's usual one: whether its own measure
    (its die ``side``) rather than the usual ratio (its ``cut`` scaled as its face's others are)
    makes its die nearer the size its face's other dice were measured at (``usual_side``; all in
    context pixels). Unknown sizes: False.

    A stray ratio is a measure that strays (a neighbour's side in the blob: the usual ratio) or a cut
    that does (the alignment settled on a part of the die: dev table 708, engraved, an R view cut at
    0.48 of its die, which the usual ratio of 1.23 made 0.39; its own measure was right).

    >>> _own_measure_nearer(20.0, 40.0, 1.5, 40.0)   # cut at 20 px, its die 40 px as the others': its own
    True
    >>> _own_measure_nearer(60.0, 58.0, 1.5, 40.0)   # its die measured too large: the usual ratio
    False
    """
    if not (np.isfinite(side) and math.isfinite(usual_side)):
        return False
    return abs(math.log(side / usual_side)) <= abs(math.log(cut / usual_ratio / usual_side))


def _sized_to_dice(contexts, labels, hyps):
    """Each view's face cut at the size of its die as measured in its picture (the widest part of
    the body colour's blob, :meth:`BodyMap.measure`), so that every face is taught at one scale.

    Aligned on each other, a face's views agree among themselves but not with the die: from the
    player's rough outlines one face was taught at 1.5 times its size and another at 0.9 (a ring
    matches a larger ring's middle), and at reading the one taught too large claimed the dice
    beside it. Each view takes its own measure; one measured more than :data:`VIEW_SIZE_SPREAD` off
    the median of its face's views (a neighbour's side in the blob, a shadow) takes the median.

    Each view is measured by its own body colour (:func:`_body_colour` of that view alone), not the
    set's: the views of one table are taken in different light, and the set's colour, spread wide
    enough for all of them, took a die's sides into its blob (dev tables 706 and 709, engraved: faces
    cut at 1.2-1.3 times their size) or missed a view in the shade altogether. A face whose views'
    median is more than :data:`FACE_SIZE_SPREAD` off that of all the views, or that has no measure,
    takes the latter: every face of one design is one size, and a word as wide as the face splits
    its body colour in two strips, each of which is measured instead of the die (dev table 706,
    drawn words: every R view at 0.4 of its size). A view whose ratio of cut to die strays may have
    its cut astray rather than its measure: :func:`_own_measure_nearer` tells which. A view cut at its
    measured die but centred more than :data:`RECENTRE` sides off it is moved onto it."""
    ratios = np.full(len(contexts), np.nan)
    centres = np.full((len(contexts), 2), np.nan)
    for i, (ctx, h) in enumerate(zip(contexts, hyps)):
        x, y, side, _ = _similar(h)
        measured = BodyMap(ctx, _body_colour([ctx], [h])).measure(x, y, reach=0.5 * side)
        if measured is not None and 0.4 < side / mean_side(measured) < 2.5:
            ratios[i] = side / mean_side(measured)
            centres[i] = measured.mean(0)
    sides = np.array([_similar(h)[2] for h in hyps]) / ratios  # each die's measured side (context pixels)
    every = sides[np.isfinite(sides)]
    overall = float(np.median(every)) if len(every) else math.nan
    out = list(hyps)
    labels_arr = np.array(labels)
    for f in dict.fromkeys(labels):
        mine = np.flatnonzero(labels_arr == f)
        own = sides[mine][np.isfinite(sides[mine])]
        if math.isfinite(overall) and (len(own) == 0 or not _within(float(np.median(own)), overall, FACE_SIZE_SPREAD)):
            # the face's own measures are off: its dice are as large as the others'
            target = [sides[i] if _within(sides[i], overall, VIEW_SIZE_SPREAD) else overall for i in mine]
            shrink = [_similar(hyps[i])[2] / t for i, t in zip(mine, target)]
            on_measure = [False] * len(mine)  # the face's measures are off: no view is moved onto one
        else:
            known = ratios[mine][np.isfinite(ratios[mine])]
            if len(known) == 0:
                continue
            median = float(np.median(known))
            usual = float(np.median(own))
            on_measure = [_within(ratios[i], median, VIEW_SIZE_SPREAD)
                          or _own_measure_nearer(_similar(hyps[i])[2], sides[i], median, usual) for i in mine]
            shrink = [ratios[i] if o else median for i, o in zip(mine, on_measure)]
        for i, r, o in zip(mine, shrink, on_measure):
            x, y, a, b, c, d = _affine(hyps[i])
            # A view cut on its measured die but centred well off it (a letter matched a part of
            # itself: dev table 701, engraved, L views 0.23-0.43 of a side off) is moved onto it.
            if o and math.hypot(x - centres[i][0], y - centres[i][1]) > RECENTRE * sides[i]:
                x, y = centres[i]
            out[i] = np.array([x, y, a / r, b / r, c / r, d / r])
    return out


# Each taught view is also stored as seen at a slight slant (a die elsewhere in the picture, or
# the camera a little tilted) and a little blurred: ratios of the face's two axes, along its axes
# and along its diagonals.
SLANTS = (1.0, 1.2)
VARIANTS_PER_VIEW = 4 * (1 + 4 + 1)


def _variants(ctx: np.ndarray, h) -> list[np.ndarray]:
    """Descriptor rows of one aligned view: as seen, at slants, and blurred; each at four quarter turns."""
    fine, _ = _prepare(ctx)
    x, y, a, b, c, d = _affine(h)
    A = np.array([[a, b], [c, d]])
    maps = [A]
    for k in SLANTS[1:]:
        r = math.sqrt(k)
        for M in (np.diag([r, 1 / r]), np.diag([1 / r, r]), np.array([[1, 1], [1, -1]]) / math.sqrt(2) @ np.diag([r, 1 / r]) @ np.array([[1, 1], [1, -1]]) / math.sqrt(2),
                  np.array([[1, 1], [1, -1]]) / math.sqrt(2) @ np.diag([1 / r, r]) @ np.array([[1, 1], [1, -1]]) / math.sqrt(2)):
            maps.append(A @ M)
    out = [_describe(_cut(fine, _quarter_turns((x, y, *B.ravel())), PATCH)) for B in maps]
    blurred = cv2.GaussianBlur(fine, (0, 0), 1.2)
    out.append(_describe(_cut(blurred, _quarter_turns(h), PATCH)))
    return out


def _confusion(contexts, labels, rows) -> dict:
    """For each face g and other face f: the largest, over the views of g, of (distance to g) /
    (distance to f), each view searched for among all the other views (itself left out); the
    second largest, so that one badly cut view does not count as the faces looking alike."""
    ratios: dict = {}
    for i, (ctx, g) in enumerate(zip(contexts, labels)):
        others = [j for j in range(len(contexts)) if j != i]
        kept = _Rows(np.concatenate([rows[j] for j in others]),
                     np.array([labels[j] for j in others for _ in range(len(rows[j]))]), per_view=len(rows[i]))
        d = _search(ctx, kept).distances
        for f, dist in d.items():
            if f != g:
                ratios.setdefault(g, {}).setdefault(f, []).append(d[g] / max(dist, 1e-6))
    # the second worst view (one badly cut view alone does not make two faces look alike)
    return {g: {f: round(sorted(v)[-2] if len(v) > 1 else v[0], 3) for f, v in row.items()} for g, row in ratios.items()}


def teach(examples: dict[str, list[np.ndarray]], *, name: str, kind: str | None = None,
          min_views: int = MIN_VIEWS) -> TaughtSet:
    """Build a taught set from context crops (:func:`face_context`), ``{face: [crop, ...]}``.

    Every face of the kind (``pip``: 1-6; ``lcr``: L, C, R, dot; ``wild``: and W) needs at least
    ``min_views`` views; a missing or under-shown face is a :class:`UserError` naming it.
    """
    faces_shown = {f for f, v in examples.items() if v}
    if not faces_shown:
        # Not "too few views of face 1 (0), 2 (0) ...": no kind of dice was shown at all.
        raise UserError(f"teach {name}: no view of any face was taken (every picture was skipped); show one die "
                        f"at a time, each face at least {min_views} times")
    if kind is None:
        kind = "pip" if faces_shown <= set(KIND_FACES["pip"]) else "wild" if "W" in faces_shown else "lcr"
    if kind not in KIND_FACES:
        raise UserError(f"dice kind must be one of {', '.join(KIND_FACES)}, not {kind!r}")
    unknown = sorted(faces_shown - set(KIND_FACES[kind]))
    if unknown:
        raise UserError(f"teach {name}: faces {', '.join(unknown)} are not faces of {kind} dice")
    short = [f"{f} ({len(examples.get(f, []))})" for f in KIND_FACES[kind] if len(examples.get(f, [])) < min_views]
    if short:
        raise UserError(f"teach {name}: too few views of face {', '.join(short)}; show each face at least {min_views} times")
    contexts, labels = [], []
    for f in KIND_FACES[kind]:
        for img in examples[f]:
            img = np.asarray(img)
            if img.ndim != 3 or img.shape[2] != 3 or img.dtype != np.uint8:
                raise UserError(f"teach {name}: a view of face {f} is not a BGR image (shape {img.shape}, {img.dtype})")
            if img.shape[:2] != (CONTEXT, CONTEXT):
                img = cv2.resize(img, (CONTEXT, CONTEXT), interpolation=cv2.INTER_AREA)
            contexts.append(img)
            labels.append(f)
    hyps, dist = _align_views(contexts, labels)
    # A view far from every other view of its face (the die was cut badly: half of it, or two
    # dice) would teach a wrong look: it is left out while the face keeps enough views.
    typical = float(np.median(dist))
    keep = [True] * len(contexts)
    for f in KIND_FACES[kind]:
        mine = sorted((dist[i], i) for i in range(len(contexts)) if labels[i] == f)
        while len(mine) > min_views and mine[-1][0] > 3 * typical:
            keep[mine.pop()[1]] = False
    contexts, hyps, labels, dist = ([v for v, k in zip(seq, keep) if k] for seq in (contexts, hyps, labels, dist))
    rows = [np.concatenate(_variants(ctx, h)) for ctx, h in zip(contexts, hyps)]
    faces = [f for f, r in zip(labels, rows) for _ in range(len(r))]
    scale = max(float(np.median(dist)), 0.05)
    confusion = _confusion(contexts, labels, rows)
    return TaughtSet(name=name, kind=kind, descriptors=np.concatenate(rows), faces=tuple(faces), scale=scale,
                     views={f: labels.count(f) for f in KIND_FACES[kind]}, created=time.strftime("%Y-%m-%dT%H:%M:%S"),
                     body=_body_colour(contexts, hyps), confusion=confusion,
                     crops=np.stack([straight_crop(c, h) for c, h in zip(contexts, hyps)]), crop_faces=tuple(labels))


# --------------------------------------------------------------------------------------------
# Files


def save_taught(taught: TaughtSet, path: str | Path) -> Path:
    path = Path(path)
    try:
        return _save_taught(taught, path)
    except OSError as exc:
        raise UserError(f"cannot save the taught dice to {path} ({exc.strerror or exc})") from None


def _save_taught(taught: TaughtSet, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {"version": taught.version, "name": taught.name, "kind": taught.kind, "scale": taught.scale,
            "views": taught.views, "created": taught.created, "descriptor": DESCRIPTOR, "body": list(taught.body),
            "confusion": taught.confusion}
    classifier_views = ({} if taught.crops is None else
                        {"crops": np.asarray(taught.crops, np.uint8), "crop_faces": np.array(taught.crop_faces)})
    archive = io.BytesIO()
    np.savez_compressed(archive, descriptors=taught.descriptors.astype(np.float32), faces=np.array(taught.faces),
                        meta=np.array(json.dumps(meta)), **classifier_views)
    # Written as the calibration is: a failed or cut-off write leaves the old file and no other. Found by
    # an audit: a temporary "teach-NAME.npz.tmp.npz" left by a full card was a second teach-*.npz in
    # calibration/, so the game chose neither and read with the standard faces. Readable by all
    # (0644): the service's own user reads it.
    write_atomic(path, archive.getvalue(), mode=0o644)
    return path


def load_taught(path: str | Path, *, min_views: int = MIN_VIEWS) -> TaughtSet:
    """Read and check a taught set; :class:`UserError` names the file and the problem (a file of an
    older format says to teach again)."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no taught dice file (make one with: lcr-pi teach --name DESIGN)")
    try:
        with np.load(path, allow_pickle=False) as data:
            desc = np.asarray(data["descriptors"], np.float32)
            faces = tuple(str(f) for f in data["faces"])
            meta = json.loads(str(data["meta"]))
            crops = np.asarray(data["crops"]) if "crops" in data.files else None
            crop_faces = tuple(str(f) for f in data["crop_faces"]) if "crop_faces" in data.files else ()
    except KeyError:
        raise UserError(f"{path}: not a taught dice file (it needs the arrays descriptors, faces and meta)") from None
    except RecursionError:
        raise UserError(f"{path}: corrupt taught dice file (its meta is nested too deep)") from None
    except PermissionError as exc:  # a sound file the game's user may not read is no corrupt one
        raise UserError(f"{path}: cannot read the taught dice file ({exc.strerror}): make it readable by the "
                        "game's user (chmod 644)") from None
    # zlib.error: a damaged byte inside an array's compressed data, as a worn card gives (found by an
    # audit: it stopped lcr-pi run and the doctor with a traceback).
    except (OSError, ValueError, TypeError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
        if "pickle" in str(exc):  # numpy's advice to load unsafely is not for a player
            raise UserError(f"{path}: corrupt taught dice file (it is no archive of arrays): teach again") from None
        raise UserError(f"{path}: corrupt taught dice file ({exc})") from None
    if not isinstance(meta, dict):
        raise UserError(f"{path}: 'meta' must be a JSON object, not {meta!r}")
    version = meta.get("version")
    if version == 1:
        raise UserError(f"{path}: made by an older lcr-pi (taught set format 1, views cut straight from the reader's "
                        f"outline); teach again: lcr-pi teach --name {meta.get('name', 'DESIGN')}")
    if version != FORMAT_VERSION:
        raise UserError(f"{path}: unknown format version {version!r} "
                        f"(this program reads version {FORMAT_VERSION}): teach again")
    dim = PATCH * PATCH + 39
    if desc.ndim != 2 or desc.shape[1] != dim or len(desc) != len(faces):
        raise UserError(f"{path}: descriptors of shape {desc.shape} do not fit this program (expected N x {dim}): teach again")
    if meta.get("descriptor") != DESCRIPTOR:
        # Of the right shape, but made another way (another lcr-pi): the distances would mean nothing.
        raise UserError(f"{path}: the taught views were described as {meta.get('descriptor')!r}, this program describes "
                        f"them as {DESCRIPTOR!r}: teach again")
    if not np.isfinite(desc).all():
        raise UserError(f"{path}: descriptors hold NaN or infinite values: teach again")
    kind = meta.get("kind")
    if not isinstance(kind, str) or kind not in KIND_FACES:
        raise UserError(f"{path}: unknown dice kind {kind!r}")
    views = meta.get("views", {})
    if not (isinstance(views, dict) and all(isinstance(f, str) and isinstance(n, int) and not isinstance(n, bool)
                                            and n >= 0 for f, n in views.items())):
        raise UserError(f"{path}: bad 'views' {views!r} (expected, per face, how many views were taught)")
    counts = Counter(faces)
    per_view = VARIANTS_PER_VIEW
    short = [f"{f} ({counts.get(f, 0) // per_view})" for f in KIND_FACES[kind] if counts.get(f, 0) // per_view < min_views]
    if short:
        raise UserError(f"{path}: too few views of face {', '.join(short)}; teach again showing each face at least {min_views} times")
    scale = meta.get("scale")
    if not isinstance(scale, (int, float)) or not scale > 0:
        raise UserError(f"{path}: bad 'scale' {scale!r}")
    body = meta.get("body", [])
    if not (isinstance(body, list) and (body == [] or (len(body) == 5 and all(isinstance(v, (int, float)) for v in body)))):
        raise UserError(f"{path}: bad 'body' {body!r} (expected 5 numbers: L, a, b and their spreads)")
    confusion = meta.get("confusion", {})
    if not (isinstance(confusion, dict) and all(
            g in KIND_FACES[kind] and isinstance(row, dict)
            and all(f in KIND_FACES[kind] and isinstance(v, (int, float)) and v >= 0 for f, v in row.items())
            for g, row in confusion.items())):
        raise UserError(f"{path}: bad 'confusion' (expected, per face, a ratio per other face of {kind} dice)")
    if crops is not None and (crops.dtype != np.uint8 or crops.shape[1:] != (CROP_SIZE, CROP_SIZE, 3)
                              or len(crops) != len(crop_faces) or not set(crop_faces) <= set(KIND_FACES[kind])):
        raise UserError(f"{path}: 'crops' must be N x {CROP_SIZE} x {CROP_SIZE} x 3 bytes with a face of {kind} dice "
                        f"each in 'crop_faces' (got {crops.shape} {crops.dtype}, {len(crop_faces)} faces): teach again")
    numbers = [scale, *body, *(v for row in confusion.values() for v in row.values())]
    if not all(math.isfinite(float(v)) if abs(v) < 1e300 else False for v in numbers):
        raise UserError(f"{path}: 'scale', 'body' or 'confusion' holds a number that is not finite: teach again")
    return TaughtSet(name=str(meta.get("name", path.stem)), kind=kind, descriptors=desc, faces=faces,
                     scale=float(scale), views=dict(views), created=str(meta.get("created", "")),
                     version=int(version), body=tuple(float(v) for v in body),
                     confusion={g: {f: float(v) for f, v in row.items()} for g, row in confusion.items()},
                     crops=crops, crop_faces=crop_faces)


def load_taught_or_default(path: str | Path):
    """For the game: ``(taught_set, None)``, ``(None, None)`` when there is no file, ``(None, warning)`` when it is bad."""
    if not Path(path).exists():
        return None, None
    try:
        return load_taught(path), None
    except UserError as exc:
        return None, f"{exc}; reading dice with the standard faces"


# --------------------------------------------------------------------------------------------
# Reading with a taught set


def die_corners(die) -> np.ndarray:
    if len(die.corners) >= 4:
        return np.asarray(die.corners[:4], np.float32)
    x0, y0, x1, y1 = die.box
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], np.float32)


def _hypothesis_corners(h, corners) -> np.ndarray:
    """The face outline of a context hypothesis, in frame pixels."""
    x, y, a, b, c, d = _affine(h)
    pts = np.array([[x + a * u + b * v, y + c * u + d * v] for u, v in ((-0.5, -0.5), (0.5, -0.5), (0.5, 0.5), (-0.5, 0.5))])
    inv = np.linalg.inv(_context_transform(corners))
    return cv2.perspectiveTransform(pts[None], inv)[0]


@dataclass(frozen=True)
class TaughtDie:
    """A die of the taught design found in a frame."""

    face: str
    confidence: float
    corners: np.ndarray  # (4, 2) frame pixels
    distance: float
    distances: dict = field(default_factory=dict)  # each taught face's best distance here
    tied: bool = False  # unsure only because two searches named it different faces about as well
    aside: bool = False  # set aside as maybe another find's side face (_unsure_if_a_side)

    @property
    def centre(self) -> np.ndarray:
        return self.corners.mean(0)

    @property
    def side(self) -> float:
        return mean_side(self.corners)


def _holes_filled(mask: np.ndarray) -> np.ndarray:
    """A 0/1 mask with every blob's holes filled (the print inside a face is part of the die)."""
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    filled = np.zeros_like(mask)
    cv2.drawContours(filled, contours, -1, 1, -1)
    return filled


def _inner_distance(mask: np.ndarray) -> np.ndarray:
    """Each mask pixel's distance to the nearest pixel outside the mask, the frame's border counting
    as outside (a ring of outside is put around it): by itself OpenCV takes what lies beyond the
    border for mask, and a blob with no outside pixel in the frame gets no finite distance.

    >>> _inner_distance(np.ones((3, 5), np.uint8)).tolist()
    [[1.0, 1.0, 1.0, 1.0, 1.0], [1.0, 2.0, 2.0, 2.0, 1.0], [1.0, 1.0, 1.0, 1.0, 1.0]]
    """
    return cv2.distanceTransform(np.pad(mask, 1), cv2.DIST_L2, 5)[1:-1, 1:-1]


class BodyMap:
    """Where the taught dice's body colour is in a frame, and how wide it is there (computed once
    per frame): it measures each die the reader points at and finds the dice it missed.

    Light changes a colour's brightness more than its hue: the hue must be near the body's, the
    brightness may range from its shaded sides to a highlight. Where the body colour does not
    stand out from the tray (a white die on a white tray) the map is not ``usable``.
    """

    WORK = 640  # long side of the map (pixels)

    def __init__(self, frame: np.ndarray, body: tuple):
        h, w = frame.shape[:2]
        self.f = f = min(1.0, self.WORK / max(h, w))
        small = cv2.resize(frame, (max(1, round(w * f)), max(1, round(h * f))), interpolation=cv2.INTER_AREA) if f < 1 else frame
        lab = cv2.cvtColor(cv2.GaussianBlur(small, (0, 0), 1.0), cv2.COLOR_BGR2LAB).astype(np.float32)
        L, _, _, sl, sab = body
        hue = _hue_distance(lab, body)
        bright = (lab[..., 0] >= 0.4 * L) & (lab[..., 0] <= L + 40 + sl)
        # The picture's light may differ from the taught views': a wide hue range first, a narrower
        # one if that takes in much of the tray.
        for tolerance in (_hue_tolerance(body), max(10.0, 0.8 * sab)):
            near = (hue <= tolerance) & bright
            self.mask = _holes_filled(cv2.morphologyEx(near.astype(np.uint8), cv2.MORPH_OPEN, np.ones((3, 3), np.uint8)))
            self.usable = bool(0 < self.mask.mean() < 0.5)
            if self.mask.mean() < 0.5:
                break
        self.dt = _inner_distance(self.mask) if self.usable else None
        self.labels = cv2.connectedComponents(self.mask)[1] if self.usable else None
        self._closed: dict[int, np.ndarray] = {}  # kernel size -> distance transform (top_face)

    def measure(self, x: float, y: float, reach: float) -> np.ndarray | None:
        """The square around the die at frame point (x, y) (within ``reach`` frame pixels of it), or None."""
        if not self.usable:
            return None
        dt, f = self.dt, self.f
        px, py = int(round(x * f)), int(round(y * f))
        r = max(1, int(round(reach * f)))
        y0, x0 = max(0, py - r), max(0, px - r)
        win = self.mask[y0:py + r + 1, x0:px + r + 1]
        ys, xs = np.nonzero(win)
        if len(xs) == 0:
            return None
        j = int(np.argmin((xs + x0 - px) ** 2 + (ys + y0 - py) ** 2))
        cy, cx = int(ys[j] + y0), int(xs[j] + x0)
        sy, sx = cy, cx
        # Climb to the widest point nearby, but not across a group of touching dice to its middle.
        for _ in range(4 * self.WORK):
            wy0, wx0 = max(0, cy - 1), max(0, cx - 1)
            win = dt[wy0:cy + 2, wx0:cx + 2]
            k = np.unravel_index(int(np.argmax(win)), win.shape)
            ny, nx = wy0 + int(k[0]), wx0 + int(k[1])
            if win[k] <= dt[cy, cx] or math.hypot(nx - sx, ny - sy) > 0.7 * float(win[k]):
                break
            cy, cx = ny, nx
        radius = float(dt[cy, cx])
        if radius < 2.0:
            return None
        quad = _blob_quad(self.labels == self.labels[cy, cx], radius)
        if quad is not None:  # a lone die: its outline, as seen (slant and all)
            return (quad + 0.5) / f - 0.5
        return _square(cx / f, cy / f, 2 * radius / f)

    def top_face(self, centre, side: float) -> bool:
        """Whether a face of this size centred here can be a die's top face: it lies well inside a
        body-coloured blob (a side face, seen at a slant, lies along a blob's edge) no wider than a
        die of that size. Always true where the map cannot tell."""
        if not self.usable:
            return True
        x, y = int(round(centre[0] * self.f)), int(round(centre[1] * self.f))
        if not (0 <= y < self.dt.shape[0] and 0 <= x < self.dt.shape[1]):
            return True
        r = max(1, int(round(0.15 * side * self.f)))
        around = (slice(max(0, y - r), y + r + 1), slice(max(0, x - r), x + r + 1))
        # at most as wide as a die of that size (a group of touching dice is as wide as one die);
        # a find much smaller than the die it lies on is a mark on a face, not a face
        lo, hi = 0.3 * side * self.f, 1.0 * side * self.f + 2
        near = float(self.dt[around].max())
        if near >= lo:
            return near <= hi
        # Print that reaches the face's edge (a star's points, a word) opens the blob's hole, so
        # filling holes does not close it and the face's middle looks like a blob's edge. Closing
        # gaps under a fifth of the face first shuts such an opening (not the wide angle between a
        # die's top face and a side face, nor the tray between two dice).
        near = float(self._closed_dt(side)[around].max())
        if near >= lo:
            return near <= hi
        # A word or a star whose print is wider than that gap (LEFT and RIGHT across a 34 px face, at
        # dev table 702) still leaves the face's body all round its middle: the middle lies deep inside
        # the hull of the body colour within half a face of it. A side face's middle lies on its
        # blob's edge, the tray beyond it, so that hull's edge passes close by.
        return self._hull_depth(x, y, 0.5 * side * self.f) >= lo

    def _hull_depth(self, x: int, y: int, radius: float) -> float:
        """How far map point (x, y) lies inside the convex hull of the body colour within ``radius`` of
        it (map pixels; 0 or less where it lies outside)."""
        reach = int(math.ceil(radius))
        y0, x0 = max(0, y - reach), max(0, x - reach)
        window = self.mask[y0:y + reach + 1, x0:x + reach + 1]
        yy, xx = np.mgrid[y0:y0 + window.shape[0], x0:x0 + window.shape[1]]
        points = np.argwhere(window.astype(bool) & (np.hypot(yy - y, xx - x) <= radius))
        if len(points) < 3:
            return 0.0
        hull = cv2.convexHull(np.ascontiguousarray(points[:, ::-1] + (x0, y0), dtype=np.int32))
        return float(cv2.pointPolygonTest(hull, (float(x), float(y)), True))

    def _closed_dt(self, side: float) -> np.ndarray:
        """The distance transform of the mask with gaps narrower than a fifth of ``side`` (frame
        pixels) closed and holes filled; made once per size (in steps of two map pixels)."""
        k = max(3, 2 * int(round(0.1 * side * self.f)) + 1)
        if k not in self._closed:
            closed = cv2.morphologyEx(self.mask, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
            self._closed[k] = _inner_distance(_holes_filled(closed))
        return self._closed[k]

    def uncovered(self, faces, min_radius: float) -> list[np.ndarray]:
        """Squares around the parts of the body-coloured blobs that none of ``faces`` (frame corners)
        accounts for and that are at least ``min_radius`` frame pixels wide: die-like things nobody
        read. A face accounts for itself and for its die's sides around it (up to :data:`SIDES_REACH`
        of its size from its middle: they show other faces, at a slant). A part must stand apart
        from what is around it, as a die does: where the body colour goes on around it (a table or a
        cloth of a near colour, broken up by its texture), it is not a die."""
        if not self.usable:
            return []
        left = self.mask.copy()
        for c in faces:
            grown = _grown(c, SIDES_REACH)
            cv2.fillConvexPoly(left, np.round((grown + 0.5) * self.f - 0.5).astype(np.int32), 0)
        dt = _inner_distance(left)
        out = []
        while len(out) < 6:
            y, x = np.unravel_index(int(np.argmax(dt)), dt.shape)
            r = float(dt[y, x])
            if r < max(2.0, min_radius * self.f):
                break
            cv2.circle(dt, (int(x), int(y)), max(1, int(round(2 * r))), 0, -1)
            if self._surrounded(left, x, y, r):
                continue
            out.append(_square(x / self.f, y / self.f, 2 * r / self.f))
        return out

    @staticmethod
    def _surrounded(mask: np.ndarray, x: int, y: int, r: float) -> bool:
        """Whether the body colour covers much of a ring around the blob part at (x, y) of width
        ``2 r``: a die's body ends about ``1.5 r`` from its middle (its sides a little further),
        so the ring from ``2.2 r`` to ``3.2 r`` is mostly tray around a die."""
        h, w = mask.shape
        outer = int(math.ceil(3.2 * r))
        y0, y1, x0, x1 = max(0, y - outer), min(h, y + outer + 1), max(0, x - outer), min(w, x + outer + 1)
        yy, xx = np.mgrid[y0:y1, x0:x1]
        dist = np.hypot(yy - y, xx - x)
        ring = (dist >= 2.2 * r) & (dist <= 3.2 * r)
        if not ring.any():
            return False
        return float(mask[y0:y1, x0:x1][ring].mean()) > SURROUNDED

    def seeds(self, max_seeds: int = 12) -> list[np.ndarray]:
        """Squares at the widest points of the body-coloured blobs, about a half die apart along
        groups of touching dice: one near every die of the taught colour."""
        if not self.usable:
            return []
        d = self.dt.copy()
        out = []
        largest = float(d.max())
        while len(out) < max_seeds:
            y, x = np.unravel_index(int(np.argmax(d)), d.shape)
            r = float(d[y, x])
            if r < max(3.0, 0.4 * largest):  # dice in one picture are of a size: not the slivers between them
                break
            quad = _blob_quad(self.labels == self.labels[y, x], r)
            out.append((quad + 0.5) / self.f - 0.5 if quad is not None else _square(x / self.f, y / self.f, 2 * r / self.f))
            cv2.circle(d, (int(x), int(y)), max(1, int(round(1.2 * r))), 0, -1)
        return out


def find_taught_dice(frame: np.ndarray, taught: TaughtSet, outlines, finds=(),
                     matches: dict | None = None, region=None, bodies: dict | None = None,
                     pairs=None, asked_pairs: dict | None = None) -> tuple[list[TaughtDie], list[TaughtDie]]:
    """Dice of the taught design near the rough ``outlines`` and wherever the taught body colour is,
    one per die (the best-matching cut wins where several outlines found the same face); and the
    die-sized blobs of the body colour where no die could be read (face ``"?"``). ``finds``: the
    reader's detector's sure finds, which may vouch for a find as a top face (:func:`_unsure_if_a_side`);
    ``matches``, the searches already made in this frame (:func:`_matched`), kept for another look.
    With a ``region`` (x0, y0, x1, y1 frame pixels: the part of a calibrated tray the reader read) the
    body colour is looked for only there, as the reader looked for dice: the calibrated tray.
    ``bodies``: the frame's body-colour maps by taught set, made once for every look at the frame.
    ``pairs``: the reader's pair network, which may say a find that near another is a touching die,
    not its side (:func:`_unsure_if_a_side`); ``asked_pairs``, what it said in this frame before
    (:func:`pair_view`)."""
    outlines = [np.asarray(c, np.float64).reshape(4, 2) for c in outlines]
    if bodies is not None and id(taught) in bodies:
        body = bodies[id(taught)]
    else:
        body = BodyMap(frame, taught.body) if taught.body else None
        if bodies is not None:
            bodies[id(taught)] = body
    squares: list[np.ndarray] = []
    candidates = []
    # The die measured near a reader's outline (not far off it), searched too where the outline's
    # search finds a die but not clearly (below).
    second_looks: dict[int, np.ndarray] = {}
    for corners in outlines:
        corners = np.asarray(corners, np.float64).reshape(4, 2)
        side = mean_side(corners)
        # The reader's outline, and the die measured in the picture where that says the outline is
        # far off (a mark on the face, or a die and its neighbour, from a detector that never saw
        # this design); the best match wins below.
        candidates.append(corners)
        measured = body.measure(*corners.mean(0), reach=0.5 * side) if body is not None else None
        if measured is None:
            measured = die_outline(frame, corners)
        if measured is not None and _far_off(corners, measured):
            candidates.append(measured)
        elif measured is not None:
            second_looks[id(corners)] = measured
    if body is not None:
        candidates += [q for q in body.seeds() if _in_region(q.mean(0), region)]
    for square in candidates:
        side = float(np.linalg.norm(square[1] - square[0]))
        if side < 6:
            continue
        # The same die outlined twice (the detector's top face and a side, a colour blob): search it once.
        if any(np.linalg.norm(square.mean(0) - q.mean(0)) < 0.25 * side and 0.8 < np.linalg.norm(q[1] - q[0]) / side < 1.25
               for q in squares):
            continue
        squares.append(square)
    found: list[TaughtDie] = []
    for square in squares:
        die = _taught_die_at(frame, taught, square, outlines, body, matches)
        if die is not None:
            found.append(die)
        # The search depends on where it starts: from the reader's outline it may settle on another
        # face than from the die measured a few pixels away (dev table 702, drawn words: an L found
        # as R at 0.65 from the one, as L at 1.0 from the other). Where a find there is not clear, look
        # from the measured die too: _one_per_die names the die by the nearer match, and doubts it if
        # the two name other faces about as well. Not where nothing was found there: looking again
        # then left a die out of a roll read as clear (dev table 706; measured 2026-12-06).
        again = second_looks.get(id(square))
        if again is not None and die is not None and die.confidence < CLEAR_FIND:
            die = _taught_die_at(frame, taught, again, outlines, body, matches)
            if die is not None:
                found.append(die)
    view_centre = _view_centre(frame)
    dice = _one_per_die(found)
    again = _looked_at_again(frame, taught, dice, outlines, body, view_centre, matches)
    if again:
        dice = _one_per_die(found + again)
    lightness = None
    if taught.body:
        known: dict[int, float] = {}  # a find may be compared with several: each measured once

        def lightness(die: TaughtDie) -> float:
            if id(die) not in known:
                known[id(die)] = _body_lightness(frame, die, taught.body)
            return known[id(die)]
    pair = pair_view(pairs, frame, asked_pairs)
    dice = [_unsure_if_a_side(d, dice, view_centre, lightness, finds, pair) for d in dice]
    if not dice:
        return dice, []
    # Die-sized blobs of the body colour where no die was read: something the size and colour of a
    # taught die that cannot be named (a die on edge, half hidden, or read too poorly) is unsure,
    # never silently left out of the roll.
    typical = float(np.median([d.side for d in dice]))
    unread = [TaughtDie("?", 0.0, q, math.inf) for q in body.uncovered([d.corners for d in dice], 0.22 * typical)
              if _in_region(q.mean(0), region)] if body else []
    return dice, unread


def _in_region(point, region) -> bool:
    """Whether a frame point lies in ``region`` (x0, y0, x1, y1), or there is no region.

    >>> _in_region((5, 5), (0, 0, 10, 10)), _in_region((12, 5), (0, 0, 10, 10)), _in_region((12, 5), None)
    (True, False, True)
    """
    return region is None or (region[0] <= point[0] <= region[2] and region[1] <= point[1] <= region[3])


def _taught_die_at(frame: np.ndarray, taught: TaughtSet, square: np.ndarray, outlines, body,
                   matches: dict | None = None) -> TaughtDie | None:
    """The taught die found searching around ``square``, or None where what is found there is not
    a top face of the taught design. ``matches``: the searches already made in this frame, by where
    they started (:func:`_matched`)."""
    ctx, m = _matched(frame, taught, square, matches)
    face, conf, familiar = taught.judge(m.distances)
    if not familiar or (taught.body and not _body_like(ctx, m.hypothesis, taught.body)):
        return None  # not of the set; or the shapes match, the colour does not: another set's die (a white pip die)
    die = TaughtDie(face, conf, _hypothesis_corners(m.hypothesis, square), m.distances[face], dict(m.distances))
    # a match much smaller than the die it was looked for on (under MIN_CUT, and no clear match at
    # the die's size: TaughtSet.match), or than a die the reader outlined around it, is a mark on a
    # face (or a plain corner), not a face
    inside = [q for q in outlines if _inside(die.centre, q)]
    if (not _small(m) and all(die.side >= 0.5 * mean_side(q) for q in inside)
            and (body is None or body.top_face(die.centre, die.side))):
        return die
    return None


def _outline_key(corners) -> bytes:
    """A frame memo's key for an outline: the same corners, to the last bit, are the same place
    (a search started there, a die cut out there).

    >>> _outline_key([[0, 0], [1, 0], [1, 1], [0, 1]]) == _outline_key(np.array([[0.0, 0], [1, 0], [1, 1], [0, 1]]))
    True
    """
    return np.asarray(corners, np.float64).tobytes()


def _matched(frame: np.ndarray, taught: TaughtSet, square: np.ndarray, matches: dict | None) -> tuple[np.ndarray, Match]:
    """The context crop around ``square`` and the taught set's match in it, from ``matches`` where
    this frame was searched from there before (then kept there).

    A calibrated reader that looks at a frame twice (:class:`~lcr_pi.vision.calibration.CalibratedReader`:
    the second look as the uncalibrated reader looks) asks the taught set about it twice, mostly from the
    same places (the body colour's blobs, the dice both looks outline alike); the search is most of a
    taught reading's time."""
    key = _outline_key(square)
    if matches is not None and key in matches:
        return matches[key]
    ctx = face_context(frame, square)
    found = (ctx, taught.match(ctx))
    if matches is not None:
        matches[key] = found
    return found


def _one_per_die(found: list[TaughtDie]) -> list[TaughtDie]:
    """The taught dice, one per die.

    Finds that overlap are one die (two flat dice's top faces cannot overlap): the nearest match
    names it, and if another start found it as a different face nearly as well, the die is unsure
    (its face depends on where one looks; ``tied``, which the features may settle: second_opinion).
    A die's sides show other faces (a ring, a word) that can match too, along the die's edge: a find
    much smaller than a neighbouring find is a side (or a mark) and is dropped, unless it is a clear
    find of a die's size centred beyond where that die's sides end (a touching die found a little
    smaller than its neighbour).
    """
    groups: list[list[TaughtDie]] = []
    for d in sorted(found, key=lambda d: d.distance):
        for g in groups:
            if _overlap(d.corners, g[0].corners) > 0.5:
                g.append(d)
                break
        else:
            groups.append([d])
    dice = []
    for g in groups:
        best = g[0]
        if any(o.face != best.face and o.distance <= 1.25 * best.distance for o in g[1:]):
            best = replace(best, confidence=0.0, tied=True)
        dice.append(best)
    kept: list[TaughtDie] = []
    on_sides: list[TaughtDie] = []
    for d in sorted(dice, key=lambda d: -d.side):
        (on_sides if any(_on_sides(d, k) for k in kept) else kept).append(d)
    # A die touching a larger-looking one (sizes found vary by a quarter or so) is not its side: a
    # clear find of about a die's size, centred beyond where the larger die's sides end and clear
    # of every die kept, is a die of its own (else it would be silently left out of the roll).
    neighbours: list[TaughtDie] = []
    for d in sorted(on_sides, key=lambda d: d.distance):
        if (d.confidence >= CLEAR_FIND
                and all(d.side >= NEIGHBOUR_SIZE * k.side and not _inside(d.centre, k.corners, SIDE_CENTRES)
                        for k in kept if _on_sides(d, k))
                and not any(_overlap(d.corners, k.corners) >= 0.3 or _inside(d.centre, k.corners, 1.3)
                            for k in kept + neighbours)):
            neighbours.append(d)
    return kept + neighbours


def _looked_at_again(frame: np.ndarray, taught: TaughtSet, dice: list[TaughtDie], outlines, body,
                     view_centre, matches: dict | None = None) -> list[TaughtDie]:
    """The finds that searching again gives where a find (one of ``dice``, one per die) is not clear.

    Each find under :data:`CLEAR_FIND` is searched for again in the picture cut around itself, its
    face in the middle at its own size and turn, as each taught view was cut around its own die; the
    first search started from the reader's outline or the measured die, which may be cut larger or
    off the middle. A search so started fits more closely: at dev tables 701, 705 and 706 (drawn
    words), every unclear find looked at again, the match came nearer for 104 of 116. A find still not
    clear is looked for once more from where that search settled (dev tables 701-710, words: 86.9 ->
    87.3 %). :func:`_one_per_die` then names the die by the nearer match.

    It fits anything more closely, side faces and a sliver of a die at the frame's edge too. So none
    is looked at again on another find's side towards the middle of the view within
    :data:`SIDE_REACH_DARK` of a side (:func:`_on_inner_side`; looking again at every unclear find
    kept two side faces as dice, surely, at check table 713, drawn words), and a find looked at again
    counts only where it is clear (with the first guard alone, a die at the frame's edge and one
    beside another were named wrongly at 0.6 and 0.83, surely, at check tables 711 and 713). Measured
    in the README, teach, "An unclear find looked at again"."""
    again = []
    for d in dice:
        if d.confidence >= CLEAR_FIND or _on_inner_side(d, dice, view_centre):
            continue
        looked = _taught_die_at(frame, taught, d.corners, outlines, body, matches)
        if looked is not None and looked.confidence < CLEAR_FIND:
            # Once more from where that search settled, which may still be a little off the face.
            looked = _taught_die_at(frame, taught, looked.corners, outlines, body, matches)
        if looked is not None and looked.confidence >= CLEAR_FIND:
            again.append(looked)
    return again


def _on_inner_side(t: TaughtDie, found, view_centre) -> bool:
    """Whether find ``t`` lies on another find's side towards the middle of the view, within
    :data:`SIDE_REACH_DARK` of a side of it: where that die's side faces show (:func:`_inward_of`).

    >>> square = lambda x, y: np.array([[x, y], [x + 30, y], [x + 30, y + 30], [x, y + 30]], float)
    >>> top = TaughtDie("L", 1.0, square(100, 300), 0.1)
    >>> [_on_inner_side(TaughtDie("dot", 1.0, square(100, y), 0.1), [top], (320, 240)) for y in (270, 262, 330)]
    [True, False, False]
    """
    return any(k is not t and _sides_apart(t, k.centre, k.side) < SIDE_REACH_DARK and _inward_of(t, k, view_centre)
               for k in found)


def _body_lightness(frame: np.ndarray, die: TaughtDie, body: tuple) -> float:
    """The median lightness (Lab L, 0-255) of the pixels of a find's face (its middle 70 %) that have
    the body's hue (the print left out); NaN where too few have."""
    h, w = frame.shape[:2]
    quad = _grown(die.corners, 0.7)
    x0, y0 = (max(0, int(math.floor(v))) for v in quad.min(0))
    x1, y1 = min(w, int(math.ceil(quad[:, 0].max())) + 1), min(h, int(math.ceil(quad[:, 1].max())) + 1)
    if x1 - x0 < 2 or y1 - y0 < 2:
        return math.nan
    inside = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.fillConvexPoly(inside, np.round(quad - (x0, y0)).astype(np.int32), 1)
    px = cv2.cvtColor(np.ascontiguousarray(frame[y0:y1, x0:x1]), cv2.COLOR_BGR2LAB)[inside > 0].astype(np.float32)
    near = _hue_distance(px, body) <= _hue_tolerance(body)
    return float(np.median(px[near, 0])) if near.sum() >= 6 else math.nan


def _unsure_if_a_side(d: TaughtDie, dice: list[TaughtDie], view_centre, lightness=None, finds=(),
                      pair=None) -> TaughtDie:
    """``d``, unsure if it may be a side face of another find's die.

    Two flat dice's top faces cannot have their middles closer than a face's side, yet near the rim
    of a wide view a die's side face shows as large as its top and can match a taught face as well
    (the ring of a dot face, seen at a slant). From above, a die's visible sides lie between its top
    face and the middle of the view (the top is nearer the camera, so it is drawn further out): a
    find that close to another and on its inner side may be that die's side. It may also be a die
    that touches it, found a little too large, so it is not dropped (which would silently leave a
    die out of the roll) but made unsure. Further off, up to :data:`SIDE_REACH_DARK` of a side, a
    find on the inner side is unsure where its body is much darker than the other's
    (``lightness``, a find's body lightness: :data:`SIDE_DARK`). Within a side, a find the reader's
    detector vouches for as a top face (``finds``, :func:`_detector_vouches`) stays sure; then a
    find nearer than :data:`SAME_DIE` that it lies inward of, with no such word, is unsure instead.
    So does one the reader's pair network believes a flat die beside the other (``pair(d, other)``,
    :func:`pair_view`: "flat" at least :data:`PAIR_FLAT`); and a find on the other's inner side within
    :data:`SIDE_REACH_DARK` that the network believes no die (at least :data:`PAIR_SIDE`) is unsure.

    >>> square = lambda x, y: np.array([[x, y], [x + 30, y], [x + 30, y + 30], [x, y + 30]], float)
    >>> top, side = TaughtDie("dot", 1.0, square(110, 306), 0.17), TaughtDie("dot", 1.0, square(125, 286), 0.18)
    >>> [round(d.confidence, 1) for d in (_unsure_if_a_side(top, [top, side], (320, 240)), _unsure_if_a_side(side, [top, side], (320, 240)))]
    [1.0, 0.0]
    >>> _unsure_if_a_side(side, [top, side], (320, 240)).aside   # no other cue may name it surely (by_embedding)
    True
    >>> apart = TaughtDie("dot", 1.0, square(142, 286), 0.18)  # a touching die, a side's width away
    >>> _unsure_if_a_side(apart, [top, apart], (320, 240)).confidence
    1.0
    >>> from lcr_pi.vision.detect import Detection
    >>> seen = [Detection(140, 301, 30, 30, 0.0, 0.8)]   # the detector sure of the inner find as a top face
    >>> [round(d.confidence, 1) for d in (_unsure_if_a_side(top, [top, side], (320, 240), finds=seen), _unsure_if_a_side(side, [top, side], (320, 240), finds=seen))]
    [1.0, 1.0]
    >>> again = TaughtDie("dot", 1.0, square(122, 300), 0.18)   # one die found twice: 0.45 sides apart
    >>> seen = [Detection(137, 315, 30, 30, 0.0, 0.8)]   # the detector sure of the inner one
    >>> [round(d.confidence, 1) for d in (_unsure_if_a_side(top, [top, again], (320, 240), finds=seen), _unsure_if_a_side(again, [top, again], (320, 240), finds=seen))]
    [0.0, 1.0]
    """
    for other in dice:
        if other is d:
            continue
        apart = _sides_apart(d, other.centre, other.side)
        if not _inward_of(d, other, view_centre):
            # ``other`` on d's inner side, too near and kept only on the detector's word: d, which the
            # detector does not vouch for, is that die found again off its middle.
            if (apart < SAME_DIE and _inward_of(other, d, view_centre)
                    and _detector_vouches(other, d, finds) and not _detector_vouches(d, other, finds)):
                return replace(d, confidence=0.0, tied=False, aside=True)
            continue
        if (apart < SIDE_GAP and not _detector_vouches(d, other, finds)
                and not (pair is not None and pair(d, other)["flat"] >= PAIR_FLAT)):
            return replace(d, confidence=0.0, tied=False, aside=True)
        if lightness is not None and apart < SIDE_REACH_DARK and lightness(d) < SIDE_DARK * lightness(other):
            return replace(d, confidence=0.0, tied=False, aside=True)
        if pair is not None and apart < SIDE_REACH_DARK and pair(d, other)["no die"] >= PAIR_SIDE:
            return replace(d, confidence=0.0, tied=False, aside=True)
    return d


def pair_view(net, frame: np.ndarray, asked: dict | None = None):
    """``pair(d, other)`` for :func:`_unsure_if_a_side`: the pair network's (``net``,
    :mod:`lcr_pi.vision.pairs`) view of taught finds ``d`` and ``other`` in ``frame``, looked at both
    ways round: ``"flat"``, its belief that they are two flat dice (not a die and its side face, nor
    a die leaning on the other), and ``"no die"``, that ``d`` is no die. Each pair of outlines is
    asked once, kept in ``asked`` (the frame's memo, ``FrameMemo.taught_pairs``: a calibrated
    reader's second look finds most taught dice again where the first did); None without a network."""
    if net is None:
        return None
    from lcr_pi.vision.detect import Detection
    from lcr_pi.vision.pairs import PAIR_CLASSES, pair_beliefs

    asked = {} if asked is None else asked

    def pair(d: TaughtDie, other: TaughtDie) -> dict:
        key = (_outline_key(d.corners), _outline_key(other.corners))
        if key not in asked:
            spots = [Detection(float(k.centre[0]), float(k.centre[1]), k.side, k.side, 0.0, 1.0) for k in (other, d)]
            p = pair_beliefs(net, frame, spots, [(0, 1)], again_below=1.0)[0]
            asked[key] = {"flat": float(p[PAIR_CLASSES.index("flat")]),
                          "no die": float(p[PAIR_CLASSES.index("second is no die")])}
        return asked[key]

    return pair


def _detector_vouches(d: TaughtDie, other: TaughtDie, finds) -> bool:
    """Whether a sure find of the reader's detector (``finds``) names taught find ``d`` a top face
    where ``other`` is too near for both to be flat dice: ``d`` clear (:data:`CLEAR_FIND`), and a
    find scoring at least :data:`SIDE_VOUCH` centred on it (within :data:`VOUCHED_AT` of its side,
    nearer it than ``other``) and of its size (:data:`VOUCHED_SIZE`).

    >>> from lcr_pi.vision.detect import Detection
    >>> square = lambda x, y: np.array([[x, y], [x + 40, y], [x + 40, y + 40], [x, y + 40]], float)
    >>> d, other = TaughtDie("L", 1.0, square(0, 0), 0.1), TaughtDie("dot", 1.0, square(0, 34), 0.1)
    >>> [_detector_vouches(d, other, [Detection(21, 22, 42, 42, 0.0, score)]) for score in (0.8, 0.5)]
    [True, False]
    >>> _detector_vouches(d, other, [Detection(20, 40, 42, 42, 0.0, 0.8)])   # between them, nearer the other
    False
    >>> _detector_vouches(replace(d, confidence=0.8), other, [Detection(21, 22, 42, 42, 0.0, 0.8)])
    False
    """
    if d.confidence < CLEAR_FIND:
        return False
    lo, hi = VOUCHED_SIZE
    for f in finds:
        at = np.array([f.cx, f.cy], np.float64)
        off = float(np.linalg.norm(at - d.centre))
        if (f.score >= SIDE_VOUCH and off < VOUCHED_AT * d.side and off < float(np.linalg.norm(at - other.centre))
                and lo <= f.side / max(d.side, 1e-6) <= hi):
            return True
    return False


def _inward_of(d: TaughtDie, other: TaughtDie, view_centre) -> bool:
    """Whether find ``d`` lies on ``other``'s side towards the middle of the view (within the angle
    whose cosine is :data:`INWARD`), where ``other``'s side faces show.

    >>> square = lambda x, y: np.array([[x, y], [x + 30, y], [x + 30, y + 30], [x, y + 30]], float)
    >>> top = TaughtDie("dot", 1.0, square(100, 300), 0.1)
    >>> _inward_of(TaughtDie("L", 1.0, square(110, 270), 0.1), top, (320, 240))   # above it, nearer the middle
    True
    >>> _inward_of(TaughtDie("L", 1.0, square(100, 330), 0.1), top, (320, 240))   # below it, further out
    False
    """
    gap = d.centre - other.centre
    inward = np.asarray(view_centre, float) - other.centre
    return float(gap @ inward) > INWARD * float(np.linalg.norm(gap)) * float(np.linalg.norm(inward))


def _sides_apart(t: TaughtDie, centre, side: float) -> float:
    """How far ``centre`` lies from find ``t``'s middle, in the mean of ``t``'s side and ``side`` (a
    find's there, or a reader's die's).

    >>> _sides_apart(TaughtDie("L", 1.0, np.array([[0, 0], [40, 0], [40, 40], [0, 40]], float), 0.1), (60, 20), 40.0)
    1.0
    """
    return float(np.linalg.norm(np.asarray(centre, float) - t.centre)) / ((side + t.side) / 2)


def _view_centre(frame: np.ndarray) -> tuple[float, float]:
    """The middle of the view: a die's side faces show on its side towards it."""
    return frame.shape[1] / 2, frame.shape[0] / 2


def _on_sides(d: TaughtDie, k: TaughtDie) -> bool:
    """Whether find ``d`` lies on the sides of the larger find ``k`` (where its side faces show)."""
    return d.side < 0.75 * k.side and _overlap(d.corners, _grown(k.corners, 1.6)) >= 0.15


def _overlap_of(a, b) -> float:
    """Shared area of two convex outlines over the first one's area."""
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    area = abs(float(cv2.contourArea(a)))
    if area <= 0:
        return 0.0
    inter, _ = cv2.intersectConvexConvex(cv2.convexHull(a), cv2.convexHull(b))
    return float(inter) / area


def _overlap(a, b) -> float:
    """Shared area of two convex outlines over the smaller one's area."""
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    area = min(abs(float(cv2.contourArea(a))), abs(float(cv2.contourArea(b))))
    if area <= 0:
        return 0.0
    inter, _ = cv2.intersectConvexConvex(cv2.convexHull(a), cv2.convexHull(b))
    return float(inter) / area


def view_outline(frame: np.ndarray, corners, empty: np.ndarray | None = None) -> np.ndarray:
    """The outline a view of a die is cut by, for teaching and reading alike: the given outline
    (the reader's, or a label's) unless the die measured from the picture (:func:`die_outline`)
    says it is far off (less than half or more than twice the size, or centred off the die).
    ``empty``, a picture of the empty tray from the same camera (teaching has one), lets the die be
    measured as what changed since: a die of much the tray's colour is measured whole, not by its print."""
    given = np.asarray(corners, np.float64).reshape(4, 2)
    measured = die_outline(frame, given, empty=_same_shape(empty, frame))
    return measured if measured is not None and _far_off(given, measured) else given


def _same_shape(empty: np.ndarray | None, frame: np.ndarray) -> np.ndarray | None:
    """The empty tray's picture, when it can be compared with ``frame`` (a picture of another size,
    e.g. the camera's resolution changed, cannot)."""
    return empty if empty is not None and empty.shape == frame.shape else None


def _far_off(given: np.ndarray, measured: np.ndarray) -> bool:
    g, m = mean_side(given), mean_side(measured)
    return not 0.5 < g / m < 2.0 or float(np.linalg.norm(given.mean(0) - measured.mean(0))) > 0.4 * m


def view_context(frame: np.ndarray, corners, empty: np.ndarray | None = None) -> np.ndarray:
    """The context crop (:func:`face_context`) of the die at a rough outline, as teaching keeps it
    (``empty``: the empty tray, see :func:`view_outline`)."""
    return face_context(frame, view_outline(frame, corners, empty))


class FeatureMatcher:
    """Names a taught die's face a second way: by the reader's face classifier's features, compared
    with those of the taught views (:attr:`TaughtSet.crops`, each at its four quarter turns).

    The classifier was trained on pips, letters and stars in many fonts and colours at any turn,
    so its features tell faces of a design it never saw apart where the taught set's own
    descriptors (a grey patch and colours) mix them up (engraved letters, words). Features are
    square-rooted, centred on the taught views' mean and compared by cosine similarity.
    """

    def __init__(self, net, crops: np.ndarray, faces: tuple[str, ...]):
        turned = [np.ascontiguousarray(np.rot90(c, k)) for c in crops for k in range(4)]
        self._net = net
        feats = self._rooted(turned)
        self._centre = feats.mean(0)
        self._rows = self._normalised(feats)
        self._faces = np.repeat(np.array(faces), 4)
        self.faces = tuple(dict.fromkeys(faces))
        self.separation = self._separation()

    def _separation(self) -> dict:
        """How well the features tell the taught faces apart: for each face shown and another
        face, the median over the shown face's views (each at its four quarter turns, searched for
        among the other views) of the shown face's similarity less the other's."""
        margins: dict = {}
        sims = self._rows @ self._rows.T
        for i in range(len(self._rows) // 4):
            shown = str(self._faces[4 * i])
            for k in range(4):
                row = sims[4 * i + k].copy()
                row[4 * i: 4 * i + 4] = -np.inf  # the view itself, at any turn, is left out
                best = {f: float(row[self._faces == f].max()) for f in self.faces}
                if not np.isfinite(best[shown]):
                    continue  # the face's only view
                for f in self.faces:
                    if f != shown:
                        margins.setdefault((shown, f), []).append(best[shown] - best[f])
        return {pair: float(np.median(m)) for pair, m in margins.items()}

    def tells_apart(self, shown: str, named: str) -> bool:
        """Whether the features told face ``shown`` from face ``named`` on the taught views (by a
        median lead of at least :data:`FEATURES_SEPARATE`); unknown pairs count as told apart."""
        return self.separation.get((shown, named), math.inf) >= FEATURES_SEPARATE

    def _rooted(self, crops: list[np.ndarray]) -> np.ndarray:
        return np.sqrt(np.maximum(crop_features(self._net, crops), 0.0))

    def _normalised(self, feats: np.ndarray) -> np.ndarray:
        f = feats - self._centre
        return f / np.maximum(np.linalg.norm(f, axis=1, keepdims=True), 1e-9)

    def similarities(self, crops: list[np.ndarray]) -> list[dict]:
        """For each crop (:func:`straight_crop`), each taught face's best cosine similarity (-1..1)."""
        if not crops:
            return []
        sims = self._normalised(self._rooted(crops)) @ self._rows.T
        return [{f: float(row[self._faces == f].max()) for f in self.faces} for row in sims]

    @staticmethod
    def best(similarity: dict) -> tuple[str, float]:
        """The most similar face and its lead over the next face.

        >>> FeatureMatcher.best({"L": 0.9, "R": 0.7, "C": 0.1})
        ('L', 0.2)
        """
        ranked = sorted(similarity.items(), key=lambda kv: -kv[1])
        return ranked[0][0], round(ranked[0][1] - (ranked[1][1] if len(ranked) > 1 else -1.0), 6)


class EmbeddingMatcher(FeatureMatcher):
    """Names a taught die's face a third way: by the face-embedding network (``models/dice_embed.onnx``,
    optional), trained to tell apart the faces of made-up dice designs (:mod:`lcr_pi.vision.render_generic`)
    from a few views of each. Its output is compared by cosine similarity, uncentred."""

    def _rooted(self, crops: list[np.ndarray]) -> np.ndarray:
        if not crops:
            return np.zeros((0, 0), np.float32)
        self._net.setInput(crops_to_blob(crops))
        return np.asarray(self._net.forward(), np.float32).reshape(len(crops), -1)

    def _normalised(self, feats: np.ndarray) -> np.ndarray:
        return feats / np.maximum(np.linalg.norm(feats, axis=1, keepdims=True), 1e-9)

    def told_apart(self, face: str) -> bool:
        """Whether, on the taught views, the embedding told ``face`` from every other taught face and
        every other face from it (a median lead of at least :data:`EMBED_SEPARATE` each way;
        :attr:`separation`). Views taught badly (cut off their faces: dev table 710, a close, tilted
        wide-angle camera, leads 0.01-0.08 between two faces where other tables have 0.15 or more)
        make its word count for nothing: there an R die was named L, a face told from the others one
        way but not the other."""
        return all(v >= EMBED_SEPARATE for pair, v in self.separation.items() if face in pair)


# The embedding names a taught die's face when it leads the next face by EMBED_LEAD cosine similarity
# and the classifier's features' likeliest face is the same.
EMBED_LEAD = 0.05
EMBED_CONFIDENCE = 0.6
# The two may confirm the descriptors' face however unsure they were, but rename a die only where the
# descriptors were not lost: at benchmark table 2 (engraved, calibrated) a C the descriptors had no
# confidence in was renamed L and announced (fifty-third session).
EMBED_RENAME_FLOOR = 0.1
EMBED_SEPARATE = 0.1  # the embedding's word counts for a face it told from the others on the taught views


class TaughtReader:
    """Wraps a dice reader: it finds the dice, the taught set names their faces (and finds the
    taught dice the reader missed).

    Cocked dice stay cocked. A die whose face the taught set is not sure of makes the frame unsure.
    """

    def __init__(self, reader, taught: TaughtSet, *, sure_confidence: float = 0.6):
        self.reader = reader
        self.taught = taught
        self.sure_confidence = sure_confidence
        self.features = None
        net = getattr(reader, "_classifier", None)
        if net is not None and taught.crops is not None and len(taught.crops):
            try:
                self.features = FeatureMatcher(net, taught.crops, taught.crop_faces)
            except cv2.error:
                self.features = None  # a classifier without the pooled features: the descriptors alone
        self.embedding = None
        embedder = getattr(reader, "embedder", None)
        if embedder is not None and self.features is not None:
            self.embedding = EmbeddingMatcher(embedder, taught.crops, taught.crop_faces)
        # The reader's detector finds, which its FrameMemo keeps: a sure one on a taught die vouches
        # for it (relabel). A reader that keeps none (a stand-in) vouches for no die.
        read = getattr(reader, "read", None)
        self._keeps_finds = callable(read) and "memo" in inspect.signature(read).parameters
        # Only read with the features (relabel lets a taught face stand on their agreement), so not
        # worked out without them.
        self.reader_knows = reader_knows_design(reader, taught) if self.features is not None else True

    def read(self, frame, *, dice_kind: str = "auto", calibration=None, **options):
        memo = options.get("memo")
        if memo is None and self._keeps_finds:
            memo = options["memo"] = FrameMemo()
        reading = self.reader.read(frame, dice_kind=dice_kind, **options)
        if not kind_fits(self.taught.kind, dice_kind):
            return reading  # the game is set for another kind of dice: the taught set is not on the table
        if reading.verdict == "no_dice" and not reading.message.startswith("No dice"):
            return reading  # a blank or unreadable picture stays so
        # The picture as the reader saw it (grey, one-channel and BGRA frames made BGR): the taught
        # set looks at the same pixels (found by an audit: an (H, W, 1) frame crashed here).
        frame = check_frame(frame)
        settings = getattr(self.reader, "settings", None)
        blurred = getattr(settings, "blurred_sharpness", 0.09)
        sure_detection = getattr(settings, "sure_detection", 0.3)
        finds = [d for d in getattr(memo, "faces", ()) if d.score >= sure_detection]
        return relabel(reading, frame, self.taught, self.sure_confidence, blurred_sharpness=blurred,
                       features=self.features, finds=finds, reader_knows=self.reader_knows,
                       embedding=self.embedding, memo=memo, region=options.get("region"),
                       pairs=getattr(self.reader, "_pairs", None))


KIND_NAMES = {"pip": "ordinary pip", "lcr": "LCR", "wild": "Wild LCR"}  # a taught set's kind, in words


def kind_fits(taught_kind: str, dice_kind: str) -> bool:
    """Whether a set taught as ``taught_kind`` dice can be on a table whose reader is told to expect
    ``dice_kind`` dice: any, when the kind is left to the reader (``auto``, or ``pip-or-wild`` in a
    Wild game); otherwise pip sets only for pip dice and LCR (or Wild) sets only for LCR or Wild dice.
    A night set up for ordinary dice must read them as before even with a taught LCR set on disk (a
    green LCR die's dot face and a green pip die's 1 look alike).

    >>> kind_fits("lcr", "auto"), kind_fits("lcr", "wild"), kind_fits("lcr", "pip"), kind_fits("pip", "lcr")
    (True, True, False, False)
    >>> kind_fits("pip", "pip-or-wild"), kind_fits("wild", "pip-or-wild")
    (True, True)
    """
    return dice_kind in FRAME_CHOOSES or (taught_kind == "pip") == (dice_kind == "pip")


def _grown(corners, factor: float) -> np.ndarray:
    """An outline scaled by ``factor`` about its middle (a face grown to take in its die's sides).

    >>> _grown([[0, 0], [2, 0], [2, 2], [0, 2]], 2.0).tolist()
    [[-1.0, -1.0], [3.0, -1.0], [3.0, 3.0], [-1.0, 3.0]]
    """
    c = np.asarray(corners, np.float64)
    return c.mean(0) + (c - c.mean(0)) * factor


def _inside(point, corners, grow: float = 1.0) -> bool:
    c = _grown(corners, grow)
    return cv2.pointPolygonTest(c.astype(np.float32), (float(point[0]), float(point[1])), False) >= 0


def _same_die(die, taught_die) -> bool:
    """Whether a reader's die is the taught die seen again: centred on its face (or the rim of its
    sides), or outlined around the taught face's middle."""
    return _inside(die.centre, taught_die.corners, grow=1.3) or _inside(taught_die.centre, die_corners(die))


# A taught die's face named by the classifier's features (FeatureMatcher) counts as a second
# opinion when it leads the next face by at least FEATURE_LEAD cosine similarity. It makes a die
# the descriptors named the same way sure only when their own confidence is at least
# FEATURE_RESCUE_FLOOR and no other find lies within NEIGHBOURS of its sides: without the floor,
# finds whose crop showed a neighbour's word (both cues read that word) became sure and wrong;
# without the neighbour rule, side faces showing a ring (both read it as the dot face).
# Chosen on renderer seeds 3->7 and 5->9 (teach -> read, bench_teach's designs), not on the
# benchmark's 1->2: sure-and-wrong frames 7 -> 6 of 360, die accuracy -0.9 to +2.4 points.
# NEIGHBOURS was 1.6 sides until 2026-12-06: a touching die lies a side or more away, a side face
# nearer (its find's middle 0.68-0.98 of their mean side from its top's at dev tables 701-709), and
# at 1.6 dice named right by both cues were doubted for a touching neighbour (painted 705 and 709,
# 1.0-1.3 sides).
# At 1.0, dev tables 701-710: words 84.3 -> 84.5 %, painted 85.4 -> 86.0 %, engraved 88.0 -> 88.1 %,
# no table lower, frames sure and wrong 8 as before (README, teach, "A touching die").
# A die two searches named different faces about as well (_one_per_die's tie) is not lost: the
# features, naming the nearer match's face with a clear lead, settle it (2026-12-06; README, teach,
# "The features settle a tie").
FEATURE_LEAD = 0.1
FEATURE_RESCUE_FLOOR = 0.1
NEIGHBOURS = 1.0

# The features naming another face than the descriptors' sure one make the die unsure, but only
# between two faces they told apart on the taught views (FeatureMatcher.separation: a median lead of
# FEATURES_SEPARATE), or that the descriptors did not (TaughtSet.confusion: a held-out view, the
# worst but one, as near the other face, DESCRIPTORS_SEPARATE). Traced at dev tables 701-709
# (2026-12-06): of the sure descriptor reads the features named otherwise, all 9 of drawn words and
# both painted ones were right (LEFT read as RIGHT or back, leads 0.11-0.37), and all 11 engraved ones
# were wrong (an L that was a C or an R, a dot that was an R; leads 0.18-0.73). On the taught views the
# features' median lead of LEFT over RIGHT was 0.09-0.34 (words, painted); of any engraved face over
# another at least 0.64. At dev table 710 (engraved, 22 px dice) the features told L from the dot by
# 0.08 and were right there, where the descriptors' views had mixed the two up too (1.45): hence the
# second condition. README, teach, "The features' word between faces they tell apart".
FEATURES_SEPARATE = 0.5
DESCRIPTORS_SEPARATE = 1.0


def features_count(features: "FeatureMatcher", taught: TaughtSet, shown: str, named: str) -> bool:
    """Whether the features naming face ``named`` count against a taught die read as ``shown``: they
    told the two apart on the taught views, or the descriptors did not (see above)."""
    return (features.tells_apart(shown, named)
            or taught.confusion.get(shown, {}).get(named, math.inf) >= DESCRIPTORS_SEPARATE)


def _alone(t: TaughtDie, found: list[TaughtDie], pair=None) -> bool:
    """No other find's middle lies within NEIGHBOURS of the larger one's side from this one's (nearer,
    this one could be that die's side face, which both cues may read as a face), but for finds the
    reader's pair network (``pair``, :func:`pair_view`) believes a flat die beside it (:func:`_pair_flat`:
    a touching die, neither the other's side face)."""
    return all(k is t or np.linalg.norm(k.centre - t.centre) > NEIGHBOURS * max(k.side, t.side) or _pair_flat(pair, t, k)
               for k in found)


def second_opinion(t: TaughtDie, similarity: dict, sure_confidence: float, alone: bool = True,
                   counts=None) -> TaughtDie:
    """A taught die judged again with the features' view of it (:meth:`FeatureMatcher.similarities`).

    Both name the same face: sure when either is (the descriptors' confidence, or a clear lead of
    the features where the descriptors are not lost, or only tied between two faces: ``tied``, see
    :func:`_one_per_die`). The features clearly name another face: unsure (one of them is wrong),
    where ``counts(shown, named)`` (:func:`features_count`) says their word counts between the two.
    Otherwise the descriptors' judgement stands.

    >>> t = TaughtDie("L", 0.4, np.zeros((4, 2)), 1.0)
    >>> second_opinion(t, {"L": 0.9, "R": 0.5}, 0.6).confidence
    0.6
    >>> second_opinion(replace(t, confidence=0.9), {"L": 0.2, "R": 0.5}, 0.6).confidence
    0.5
    >>> second_opinion(t, {"L": 0.9, "R": 0.85}, 0.6).confidence
    0.4
    >>> second_opinion(replace(t, confidence=0.05), {"L": 0.9, "R": 0.5}, 0.6).confidence
    0.05
    >>> second_opinion(t, {"L": 0.9, "R": 0.5}, 0.6, alone=False).confidence   # another find touches it
    0.4
    >>> sure_l = replace(t, confidence=0.9)   # the features name R; on the taught views they mixed L and R up
    >>> second_opinion(sure_l, {"L": 0.2, "R": 0.5}, 0.6, counts=lambda shown, named: False).confidence
    0.9
    >>> tied = replace(t, confidence=0.0, tied=True)   # two searches named it L and R about as well
    >>> [second_opinion(tied, v, 0.6).confidence for v in ({"L": 0.9, "R": 0.5}, {"R": 0.9, "L": 0.5}, {"L": 0.9, "R": 0.85})]
    [0.6, 0.0, 0.0]
    """
    if features_against(t.face, similarity, counts):
        return replace(t, confidence=min(t.confidence, 0.5))
    face, lead = FeatureMatcher.best(similarity)
    if face == t.face and lead >= FEATURE_LEAD:
        rescued = t.confidence >= FEATURE_RESCUE_FLOOR or t.tied
        return replace(t, confidence=max(t.confidence, sure_confidence)) if alone and rescued else t
    return t


def features_against(shown: str, similarity: dict, counts=None) -> bool:
    """Whether the features (:meth:`FeatureMatcher.similarities` of a die) clearly name another face
    than ``shown`` (by :data:`FEATURE_LEAD`), one their word counts for (``counts(shown, named)``,
    :func:`features_count`; every face without it).

    >>> features_against("L", {"L": 0.2, "R": 0.5}), features_against("L", {"L": 0.45, "R": 0.5})
    (True, False)
    >>> features_against("L", {"L": 0.2, "R": 0.5}, counts=lambda shown, named: False)
    False
    """
    face, lead = FeatureMatcher.best(similarity)
    return face != shown and lead >= FEATURE_LEAD and (counts is None or counts(shown, face))


# A die only the taught body colour found (the reader kept no die on it) is at most unsure, but for
# one on which the reader's detector has a sure find, centred on it (as _same_die) and of its size
# (VOUCHED_SIZE times its side): the classifier, which never saw the design, called the find no die
# and the reader dropped it, yet a die is there. Not when another taught find lies nearer than
# VOUCHED_APART times their mean side: two flat dice are at least a side apart, so one of the two is
# the other's side face (at dev table 709 an engraved die's side was so read as a die of its own, a
# die too many, without it). Measured on 2026-12-05 (bench_teach_table.py; README, teach, "A sure
# find vouches for a die"): dev tables 701-710, three designs, 4 of 30 sessions read more taught dice
# (painted at 701: 82.4 -> 95.2 %), none fewer, no frame more sure and wrong; tables 1-3 (the
# benchmark): painted 85.5 -> 87.7 %, words and engraved as before. The smallest size was 0.6 until
# 2026-12-06: at dev table 701 (painted, 135 px dice) the detector's sure finds on big painted dice
# were boxes round the word, 0.57-0.58 of the die; at 0.5, dev tables 701-710 read words 80.9 -> 81.2 %
# and painted 83.0 -> 83.6 %, no table lower, no frame more sure and wrong.
# Since 2026-12-06 the features vouch too, where both they and the taught set name the die clearly
# (relabel: the reader's detector had no find at all on 15 of 23 such painted dice at dev tables
# 701-709), and another taught find from SIDE_GAP to VOUCHED_APART sides away counts only if this die
# lies on its side towards the middle of the view, where its side faces show (painted 701: dice
# touching at 0.94-1.05 sides were refused): measured in the README, teach, "The features vouch".
VOUCHED_SIZE = (0.5, 1.6)
VOUCHED_APART = 1.0
# A find only the colour found, lying on another's inner side (where that die's side faces show), is
# still vouched for where the reader's pair network believes the two flat dice by at least PAIR_VOUCH
# (pair_view). Lower than PAIR_FLAT: here the find must also be named clearly by the taught set and
# the features, or be a sure find of the detector, and be of the others' size. Traced on 2026-12-07
# (taught reader, colour-only finds on another's inner side): at dev tables 701-709 the top faces
# among them had 0.05-0.50 of that belief (painted: beside the white sides of a die painted only on
# top the network is seldom sure), drawn words 0.59 and 1.00; the 21 finds that were no top face
# (engraved 19, words 2) at most 0.06, the 7 at check tables 711-713 at most 0.07, and the side
# faces traced for PAIR_FLAT at most 0.21. Not nearer than SIDE_GAP (_pair_flat).
PAIR_VOUCH = 0.3
FEATURES_VOUCH_SIZE = 1.33  # dice in one frame are of a size: a find the features vouch for is within this of the others


def vouched(t: TaughtDie, finds, found=(), view_centre=None, *, by_features: bool = False, pair=None) -> bool:
    """Whether a sure find of the reader's detector (``finds``: its Detections) vouches for taught die
    ``t`` as a die: centred on it, of about its size, and no other taught find (``found``) on it. With
    ``by_features`` (the features name it clearly, as the taught set does: see :func:`relabel`) no
    detector find is needed. Given the middle of the view (``view_centre``), a find from
    :data:`SIDE_GAP` to :data:`VOUCHED_APART` sides away counts as on it only if ``t`` lies on its
    inner side: ``t`` may be its side face; a find on ``t``'s inner side may be ``t``'s own side
    face, and ``t`` is still a top face. Nearer than that, the two cannot both be flat dice. Neither
    counts where the reader's pair network (``pair``, :func:`pair_view`) believes ``t`` and it two
    flat dice by at least :data:`PAIR_VOUCH`.

    >>> from lcr_pi.vision.detect import Detection
    >>> square = lambda x, side=40: np.array([[x, 0], [x + side, 0], [x + side, side], [x, side]], np.float64)
    >>> t = TaughtDie("L", 0.9, square(0), 0.1)
    >>> vouched(t, [Detection(22, 18, 44, 44, 0.0, 0.8)]), vouched(t, [Detection(22, 18, 12, 12, 0.0, 0.8)])
    (True, False)
    >>> vouched(t, [Detection(22, 18, 22, 22, 0.0, 0.8)])   # a box round a big die's word, 0.55 of it
    True
    >>> vouched(t, [Detection(90, 18, 40, 40, 0.0, 0.8)]), vouched(t, [])
    (False, False)
    >>> side_face = TaughtDie("dot", 0.9, square(28), 0.1)   # 0.7 sides away: one is the other's side
    >>> vouched(t, [Detection(22, 18, 44, 44, 0.0, 0.8)], [t, side_face])
    False
    >>> vouched(t, [Detection(22, 18, 44, 44, 0.0, 0.8)], [t, TaughtDie("dot", 0.9, square(44), 0.1)])
    True
    >>> touching = TaughtDie("dot", 0.9, square(38), 0.1)   # 0.95 sides away: a touching die, or a side
    >>> vouched(t, [Detection(22, 18, 44, 44, 0.0, 0.8)], [t, touching], view_centre=(300, 20))   # t lies further out
    True
    >>> vouched(t, [Detection(22, 18, 44, 44, 0.0, 0.8)], [t, touching], view_centre=(-300, 20))  # t lies further in
    False
    >>> vouched(t, [Detection(22, 18, 44, 44, 0.0, 0.8)], [t, side_face], view_centre=(300, 20))  # too near for two dice
    False
    >>> vouched(t, [], by_features=True), vouched(t, [], [t, side_face], by_features=True)
    (True, False)
    """
    lo, hi = VOUCHED_SIZE

    def on_it(k: TaughtDie) -> bool:
        apart = _sides_apart(t, k.centre, k.side)
        if view_centre is None:
            near = apart < VOUCHED_APART
        else:
            near = apart < SIDE_GAP or (apart < VOUCHED_APART and _inward_of(t, k, view_centre))
        return near and not _pair_flat(pair, t, k)

    if any(k is not t and on_it(k) for k in found):
        return False
    if by_features:
        return True
    return any(_inside((d.cx, d.cy), t.corners, grow=1.3) and lo <= d.side / max(t.side, 1e-6) <= hi for d in finds)


def _features_vouch(t: TaughtDie, features_agree: bool, found, loose, view_centre, pair=None) -> bool:
    """Whether the features, naming taught die ``t`` clearly as the taught set does
    (``features_agree``), vouch for it as a die (:func:`relabel`): the taught set clear too
    (:data:`CLEAR_FIND`), ``t`` not on another taught find's side towards the view's middle
    (``view_centre``) within :data:`SIDE_REACH_DARK` of a side (unless the reader's pair network,
    ``pair``, believes the two flat dice: :data:`PAIR_VOUCH`), no die of the reader's that no
    taught find accounts for (``loose``) within :data:`VOUCHED_APART` of a side (one the reader is
    unsure of counts only where ``t`` lies on its inner side, where its side faces show: beside a
    die the colour found, the reader's unsure dice were that die's own white sides, check tables
    711-713, painted), and of the size of the frame's other taught finds (within
    :data:`FEATURES_VOUCH_SIZE` of their median side: the cues name a face's print, not its size; a
    mark or a sliver of a die at the frame's edge is smaller)."""
    others = [k.side for k in found if k is not t]
    return (features_agree and t.confidence >= CLEAR_FIND
            and (not others or _within(t.side, float(np.median(others)), FEATURES_VOUCH_SIZE))
            and not _on_inner_side(t, [k for k in found if not _pair_flat(pair, t, k)], view_centre)
            and all(_sides_apart(t, d.centre, mean_side(die_corners(d))) >= VOUCHED_APART for d in loose
                    if d.sure or _inward_of(t, d, view_centre)))


def _pair_flat(pair, t: TaughtDie, other: TaughtDie) -> bool:
    """Whether the reader's pair network (``pair``, :func:`pair_view`; None: no network) believes
    taught finds ``t`` and ``other`` two flat dice by at least :data:`PAIR_VOUCH`. Asked only of
    finds :data:`SIDE_GAP` to :data:`SIDE_REACH_DARK` sides apart: further off no rule asks, and
    nearer the two cannot both be flat dice found where they lie (check table 711, engraved: a
    find 0.79 sides from a touching die, off its own die's middle and named R on an L, which the
    network believed flat dice by 0.86)."""
    return (pair is not None and other is not t and SIDE_GAP <= _sides_apart(t, other.centre, other.side) < SIDE_REACH_DARK
            and pair(t, other)["flat"] >= PAIR_VOUCH)


def reader_knows_design(reader, taught: TaughtSet) -> bool:
    """Whether the reader's own classifier knows the taught design: shown the taught views
    (:attr:`TaughtSet.crops`), it names at least half of them surely and right, and none surely
    wrong. True where it cannot be told (a stand-in reader, a set without the views).

    Measured at dev tables 701, 702, 704 and 709 (2026-12-05): it named 17 of 18-20 engraved views
    surely and right (median confidence 0.98-0.99), and 1-4 of 18-20 drawn-word or painted views
    (median 0.24-0.66), none surely wrong."""
    from lcr_pi.vision.classify import classify_crops
    from lcr_pi.vision.reader import CLASSES, allowed_classes, face_belief, face_name

    net, settings = getattr(reader, "_classifier", None), getattr(reader, "settings", None)
    sure = getattr(settings, "sure_confidence", None)
    if net is None or sure is None or taught.crops is None or not len(taught.crops):
        return True
    try:
        probs = classify_crops(net, list(taught.crops), rotations=int(getattr(settings, "tta_rotations", 1)),
                               recheck_below=float(getattr(settings, "tta_below", 1.0)))
    except cv2.error:
        return True
    allowed = allowed_classes(taught.kind)
    right = 0
    for p, face in zip(probs, taught.crop_faces):
        best, confidence, _ = face_belief(p, allowed)
        if confidence >= sure:
            if face_name(CLASSES[best], taught.kind) != face:
                return False
            right += 1
    return 2 * right >= len(probs)


def taught_dice_sharp(frame: np.ndarray, taught: TaughtSet, found, blurred_sharpness: float = 0.09) -> bool:
    """Whether the taught dice ``found`` in ``frame`` lie still: the median of their sharpness (as
    :func:`~lcr_pi.vision.classify.sharpness` measures a die's crop) at least ``blurred_sharpness``,
    the reader's test for any die, or at least :data:`AS_SHARP_AS_TAUGHT` of their faces' taught views
    (:attr:`TaughtSet.sharpness`): a low-contrast design (engraved dots) under a soft lens is never as
    sharp as printed faces, and the reader takes it for motion blur.
    """
    from lcr_pi.vision.classify import crop_die, sharpness

    sharp = [sharpness(crop_die(frame, *t.centre, t.side)) for t in found]
    if float(np.median(sharp)) >= blurred_sharpness:
        return True
    as_taught = [v / taught.sharpness[t.face] for v, t in zip(sharp, found) if taught.sharpness.get(t.face)]
    return len(as_taught) == len(found) and float(np.median(as_taught)) >= AS_SHARP_AS_TAUGHT


def _both_name(embedded: dict, similarity: dict, told_apart=None) -> str | None:
    """The face the embedding names with a lead of EMBED_LEAD when the features' likeliest face is the
    same (and ``told_apart(face)``, :meth:`EmbeddingMatcher.told_apart`, where given), else None.

    >>> _both_name({"L": 0.9, "R": 0.8}, {"L": 0.5, "R": 0.45}), _both_name({"L": 0.9, "R": 0.88}, {"L": 0.5, "R": 0.4})
    ('L', None)
    >>> _both_name({"L": 0.9, "R": 0.8}, {"L": 0.5, "R": 0.45}, told_apart=lambda face: False)   # views taught badly
    """
    face, lead = FeatureMatcher.best(embedded)
    agree = lead >= EMBED_LEAD and FeatureMatcher.best(similarity)[0] == face
    return face if agree and (told_apart is None or told_apart(face)) else None


def by_embedding(t: TaughtDie, embedded: dict, similarity: dict, sure_confidence: float, alone: bool = True,
                 descriptors: float | None = None, told_apart=None) -> TaughtDie:
    """A taught die judged again where the embedding and the features agree on a face (:func:`_both_name`).

    Only a die no other find touches (it could be that find's side), and that was not set aside as
    maybe another find's side face (``aside``, :func:`_unsure_if_a_side`), is changed: named the
    same, it is sure, however unsure the descriptors were (a confidence of 0 is also how they say a
    face lies as near another taught face); named otherwise, it takes their face if the descriptors
    were unsure but not lost (at least :data:`EMBED_RENAME_FLOOR`, or a tie), and is doubted if they
    were sure (one of them is wrong). ``descriptors``: the descriptors' own confidence, before the
    features' second opinion changed it (default: ``t``'s); ``told_apart`` as for :func:`_both_name`.

    >>> t = TaughtDie("L", 0.4, np.zeros((4, 2)), 1.0)
    >>> both_l, both_r = ({"L": 0.9, "R": 0.8}, {"L": 0.7, "R": 0.6}), ({"L": 0.8, "R": 0.9}, {"L": 0.6, "R": 0.7})
    >>> by_embedding(t, *both_l, 0.6).confidence, by_embedding(t, *both_r, 0.6).face
    (0.6, 'R')
    >>> by_embedding(replace(t, confidence=0.95), *both_r, 0.6).confidence   # the descriptors sure of L
    0.5
    >>> by_embedding(replace(t, confidence=0.5), *both_r, 0.6, descriptors=0.95).face   # ...before the features doubted it
    'L'
    >>> by_embedding(t, {"L": 0.9, "R": 0.8}, {"L": 0.6, "R": 0.7}, 0.6).confidence   # the features name R
    0.4
    >>> by_embedding(t, *both_r, 0.6, alone=False).face, by_embedding(replace(t, confidence=0.0), *both_r, 0.6).face
    ('L', 'L')
    >>> by_embedding(replace(t, confidence=0.0), *both_l, 0.6).confidence   # the descriptors as near R as L
    0.6
    >>> by_embedding(replace(t, confidence=0.0, aside=True), *both_l, 0.6).confidence   # maybe a side face
    0.0
    """
    face = _both_name(embedded, similarity, told_apart)
    if face is None or not alone or t.aside:
        return t
    if face == t.face:
        return replace(t, confidence=max(t.confidence, EMBED_CONFIDENCE))
    if max(t.confidence, t.confidence if descriptors is None else descriptors) >= sure_confidence:
        return replace(t, confidence=min(t.confidence, 0.5))
    if t.confidence < EMBED_RENAME_FLOOR and not t.tied:
        return t
    return replace(t, face=face, confidence=EMBED_CONFIDENCE)


# A die of the reader's own that no taught find names, where the reader knows the design, is sure
# when the features and the embedding both name the face the reader guessed (_both_name), its
# leaning share is under LOOSE_LEAN, and every other find within SIDE_REACH_DARK (a taught find, a
# blob of the body colour, another of the reader's dice) is one the pair network believes a flat
# die beside it (PAIR_VOUCH; never nearer than SIDE_GAP). Dev tables 701-709, engraved
# (2026-12-08): of the reader's unsure dice that no taught find named, 23 showed the face the reader
# and both cues named, and one was a die's side face, 1.02 sides on its inner side; the descriptors
# had lost most of them (touching dice, small R views taught at a slant). Two more frames read sure
# and wrong where only finds on the die's inner side counted (check table 712: a die's side face
# named dot beside it, the reader's die of it taken for a touching taught find's; dev 706: a side
# face the taught set was sure of, 0.94 sides off), so every find that near counts.
LOOSE_LEAN = 0.2


def confirmed_by_cues(reading, frame: np.ndarray, taught: TaughtSet, found, features, embedding, unread=(),
                      pair=None, memo=None) -> set:
    """The ids of ``reading``'s dice (the reader's, where it knows the design) that the taught set's
    cues confirm, as :data:`LOOSE_LEAN` above says: unsure, not cocked, showing one of the taught
    faces, on no taught find (``found``), their leaning share (``reading.probabilities``) under
    :data:`LOOSE_LEAN`, named so by both ``features`` and ``embedding``, and with no find within
    :data:`SIDE_REACH_DARK` sides that the pair network (``pair``, :func:`pair_view`) does not
    believe a flat die beside it: a taught find, a die-sized blob of the body colour no die was read
    on (``unread``, those not on this die) or another of the reader's dice. ``memo``: the frame's
    memo for the matchers' similarities."""
    if features is None or embedding is None or len(reading.probabilities) != len(reading.dice):
        return set()
    from lcr_pi.vision.reader import allowed_classes, face_belief

    allowed = allowed_classes(reading.kind)
    asked = [d for d, p in zip(reading.dice, reading.probabilities)
             if not d.sure and not d.cocked and d.face in taught.views and not any(_same_die(d, k) for k in found)
             and face_belief(np.asarray(p, np.float64), allowed)[2] < LOOSE_LEAN]
    if not asked:
        return set()
    # every die of the reader's as a find: the asked ones' crops, and the others as their neighbours
    readers = {id(d): TaughtDie(d.face, d.confidence, np.asarray(die_corners(d), np.float64), math.inf)
               for d in reading.dice}
    crops = _Crops(frame, [readers[id(d)] for d in asked])
    confirmed = set()
    for d, v, ev in zip(asked, _similarities(features, crops, memo), _similarities(embedding, crops, memo)):
        if _both_name(ev, v, embedding.told_apart) != d.face:
            continue
        t = readers[id(d)]
        near = [*found, *(k for k in unread if not _same_die(d, k)), *(k for i, k in readers.items() if i != id(d))]
        if any(_sides_apart(t, k.centre, k.side) < SIDE_REACH_DARK and not _pair_flat(pair, t, k) for k in near):
            continue
        confirmed.add(id(d))
    return confirmed


class _Crops:
    """The taught dice's straightened crops (:func:`straight_crop`) in a frame, each cut when first asked."""

    def __init__(self, frame: np.ndarray, dice: list[TaughtDie]):
        self.frame, self.dice, self._made = frame, dice, {}

    def __len__(self) -> int:
        return len(self.dice)

    def key(self, i: int) -> bytes:
        return _outline_key(self.dice[i].corners)

    def __getitem__(self, i: int) -> np.ndarray:
        if i not in self._made:
            self._made[i] = straight_crop(face_context(self.frame, self.dice[i].corners))
        return self._made[i]


def _similarities(matcher: FeatureMatcher, crops: _Crops, memo=None) -> list[dict]:
    """``matcher``'s similarities for each die of ``crops``, from the frame's ``memo`` where a look at
    this frame asked about the same outline before: a calibrated reader's second look finds most of
    the first look's taught dice again, and the networks' runs on their crops were nearly a third of
    that look's time (dev tables 701 and 709, words)."""
    if memo is None:
        return matcher.similarities([crops[i] for i in range(len(crops))])
    keys = [(id(matcher), crops.key(i)) for i in range(len(crops))]
    new = [i for i, k in enumerate(keys) if k not in memo.taught_views]
    for i, similarity in zip(new, matcher.similarities([crops[i] for i in new])):
        memo.taught_views[keys[i]] = similarity
    return [memo.taught_views[k] for k in keys]


def relabel(reading, frame: np.ndarray, taught: TaughtSet, sure_confidence: float = 0.6, *,
            blurred_sharpness: float = 0.09, features: FeatureMatcher | None = None, finds=(),
            reader_knows: bool = True, embedding: EmbeddingMatcher | None = None, memo=None, region=None,
            pairs=None):
    """The reading with the dice of the taught design named by the taught set; verdict and message redone.

    The reader's dice on a taught die (its top face or its sides) give way to it; dice that do not
    look like the taught design keep the reader's face and confidence. Where the reader is sure of a
    die that looks like the taught design, the taught set naming it the same leaves the reader's die
    as it is, and naming it otherwise makes the die unsure (one of them is wrong), but where the
    reader does not know the design (``reader_knows`` False, see :func:`reader_knows_design`) and
    the taught set names the face clearly (at least :data:`CLEAR_FIND`), the features not clearly
    naming another face: then the taught face stands. Where the reader does not know the design, a
    die it is sure shows a taught face but on which no taught die was found is doubted if it has the
    taught dice's body colour. With no taught die in the frame, no such die and none confirmed
    (below) the reading is returned unchanged, but for the dice's ``could_be``, which is emptied
    (see below). With ``features`` (a :class:`FeatureMatcher` for this set) each taught die also gets
    :func:`second_opinion`, and with ``embedding`` too (an :class:`EmbeddingMatcher`)
    :func:`by_embedding`, judged on the descriptors' own confidence; with both, where the reader
    knows the design, a die of the reader's own that no taught find names may be confirmed by them
    (:func:`confirmed_by_cues`). ``memo``: the frame's
    :class:`~lcr_pi.vision.reader.FrameMemo`, whose taught searches (:func:`_matched`), body-colour
    map and matchers' similarities are used and added to (a calibrated reader looks at a frame
    twice); ``region``, the part of the frame the reader read (a calibrated tray, :func:`find_taught_dice`);
    ``pairs``, the reader's pair network (:func:`find_taught_dice`), whose word on taught finds the memo keeps too.

    ``finds`` (the reader's detector's sure finds in this frame, Detections) may vouch for a taught
    die that only the body colour found (:func:`vouched`); so may the features, naming it clearly as
    the taught set does. A sure one of them may also name a find a top face where another find is
    too near for both to be flat dice (:func:`_unsure_if_a_side`).

    The reader's "cocked" and "blurred" judgements come from a classifier that never saw this
    design: a taught die the taught set is sure of is flat (a leaning die's face does not look like
    its taught views), one it is not sure of keeps the reader's "cocked"; a frame the reader thought
    blurred stays "obstructed" unless the taught dice in it lie still (:func:`taught_dice_sharp`).
    """
    from lcr_pi.vision.reader import DieReading, describe_position, verdict_for

    # The reader's could_be (the faces a die doubted only for its face may show, which the referee
    # may settle by their move) names faces of the dice it knows; with a taught design on the table
    # they may be that design's faces misread, so with a taught set no doubt is settled so (but for
    # the one-pip-or-dot doubt that _one_or_dot states below, which is the two namings of one mark).
    if any(getattr(d, "could_be", ()) for d in reading.dice):
        reading = unsettled(reading)
    # The pair network's word on two finds, asked once in this frame: by the side rules
    # (find_taught_dice), and below by _alone, the vouching and confirmed_by_cues.
    asked_pairs = memo.taught_pairs if memo is not None else {}
    found, unread = find_taught_dice(frame, taught, [die_corners(d) for d in reading.dice], finds, region=region,
                                     matches=memo.taught.setdefault(id(taught), {}) if memo is not None else None,
                                     bodies=memo.taught_bodies if memo is not None else None, pairs=pairs,
                                     asked_pairs=asked_pairs)
    if reading.verdict == "obstructed":
        if not found or not taught_dice_sharp(frame, taught, found, blurred_sharpness):
            return reading
        # Still after all: the reader's dice as it judged them one by one.
        doubted = [i for i, d in enumerate(reading.dice) if not d.sure and not d.cocked]
        reading = replace(reading, **verdict_for(reading.dice, doubted, [i for i, d in enumerate(reading.dice) if d.cocked]))
    pair = pair_view(pairs, frame, asked_pairs)
    agreed = set()  # the middles of the taught dice whose face the features name too, with a clear lead
    # the middles of those on which the features name no other face with a clear lead (or only one they
    # did not tell from the taught face on the taught views: features_count)
    not_against = set()
    if features is not None and found:
        crops = _Crops(frame, found)
        views = _similarities(features, crops, memo)
        counts = functools.partial(features_count, features, taught)
        before = [t.confidence for t in found]
        found = [second_opinion(t, v, sure_confidence, alone=_alone(t, found, pair), counts=counts)
                 for t, v in zip(found, views)]
        named_by_both = set()
        if embedding is not None:
            embedded = _similarities(embedding, crops, memo)
            found = [by_embedding(t, ev, v, sure_confidence, alone=_alone(t, found, pair), descriptors=b,
                                  told_apart=embedding.told_apart)
                     for t, ev, v, b in zip(found, embedded, views, before)]
            named_by_both = {tuple(t.centre) for t, ev, v in zip(found, embedded, views)
                             if _both_name(ev, v, embedding.told_apart) == t.face}
        for t, v in zip(found, views):
            face, lead = FeatureMatcher.best(v)
            if (face == t.face and lead >= FEATURE_LEAD) or tuple(t.centre) in named_by_both:
                agreed.add(tuple(t.centre))
            if not features_against(t.face, v, counts) or tuple(t.centre) in named_by_both:
                not_against.add(tuple(t.centre))
    # A die only the colour found (no die of the reader's on it) may be a die's side face or a
    # look-alike: it makes the frame unsure rather than being announced, unless a sure find of the
    # reader's detector (``finds``, which its classifier then called no die) vouches for it, or the
    # taught set names it clearly and the features name it so too. Not then where it lies on another
    # find's side towards the middle of the view within SIDE_REACH_DARK of a side (dev table 706,
    # engraved: a die's side face, seen at a slant as large as its top, 1.07 sides from it), nor with
    # a die of the reader's that no taught find accounts for within a side (that die's side face, or
    # it a side of that die: dev table 706, painted, a white die's R side read surely beside the
    # violet top the colour found; one the reader is unsure of only where this find lies on its
    # inner side), nor where it is much smaller or larger than the frame's other finds (check table
    # 711, engraved: a 14 px find at the frame's edge beside a 23 px die). A find on another's side
    # counts as a die of its own where the pair network believes the two flat dice (PAIR_VOUCH:
    # painted dice touching at dev tables 701-705, their tops the colour found).
    view_centre = _view_centre(frame)
    loose = [d for d in reading.dice if not any(_same_die(d, k) for k in found)]
    found = [t if any(_same_die(d, t) for d in reading.dice) or vouched(
                 t, finds, found, view_centre, pair=pair,
                 by_features=_features_vouch(t, tuple(t.centre) in agreed, found, loose, view_centre, pair))
             else replace(t, confidence=min(t.confidence, 0.5)) for t in found]
    # A die the reader is sure shows one of the taught faces, where no taught die was found, of the
    # taught dice's colour: if the reader does not know the design, its sureness there is a guess at
    # a die it never saw (dev table 705, drawn words: three R dice read L surely so, the taught set
    # finding none of them). Faces the set does not have are left alone: an ordinary die's pips in
    # an LCR game, which the reader knows whatever the die's colour (at first the violet pip dice of
    # the nell-byler photos were doubted so).
    unknown = set() if reader_knows or not getattr(taught, "body", ()) else {
        id(d) for d in reading.dice
        if d.sure and d.face in taught.views and not any(_same_die(d, t) for t in found) and _looks_taught(frame, d, taught)}
    # A die the reader is sure of: if the taught set names it the same (a pip 1 is the dot face), the
    # reader's die stands; if it names it otherwise, one of them is wrong, and the die is unsure.
    # stood: the reader's sure dice that stand, each with the taught die that named it the same
    settled, named, stood = [], {}, {}
    for t in found:
        sure_here = [d for d in reading.dice if d.sure and _same_die(d, t)]
        if sure_here:
            if all(d.face == t.face or {d.face, t.face} == {"1", "dot"} for d in sure_here):
                # The reader's die stands. Where the two name it one pip and dot, which kind of
                # dice it is remains open (the taught set also takes an ordinary die's one for its
                # dot face): see _one_or_dot.
                named.update((id(d), t.face) for d in sure_here if d.face != t.face)
                stood.update((id(d), t) for d in sure_here)
                continue
            # A reader that knows this design, sure the die shows a face the set does not have (a
            # pip two to six on a set of LCR dice), reads a die of another kind: the find stands
            # back. (Measured 2026-12-06: the engraved set's finds named pip dice of the nell-byler
            # photos "dot" where the reader was sure of a 2, 5 or 6, and made them unsure.)
            if reader_knows and all(d.face not in taught.views and d.face != "1" for d in sure_here):
                stood.update((id(d), t) for d in sure_here)
                continue
            # Unless the reader does not know this design (reader_knows_design) and the taught set
            # names the die clearly, the features not clearly naming another face: then the reader's
            # sureness is a fluke. (Until 2026-12-06 the features had to name the taught face with a
            # clear lead; on drawn words they often cannot tell LEFT from RIGHT, while the reader,
            # which never saw the design, named R dice L at 0.95-0.99: dev tables 702-709.)
            if reader_knows or t.confidence < CLEAR_FIND or tuple(t.centre) not in not_against:
                t = replace(t, confidence=min(t.confidence, 0.5))
        settled.append(t)
    found = settled
    # The reader's own unsure dice that no taught find names, confirmed by the features and the
    # embedding where the reader knows the design (confirmed_by_cues).
    confirmed = confirmed_by_cues(reading, frame, taught, found, features, embedding, unread, pair,
                                  memo) if reader_knows else set()
    if not found:
        if named or unknown or confirmed:
            dice = [replace(d, sure=False) if id(d) in unknown else _one_or_dot(d, named[id(d)]) if id(d) in named
                    else replace(d, sure=True) if id(d) in confirmed else d
                    for d in reading.dice]
            unsure = [i for i, d in enumerate(dice) if not d.sure and not d.cocked]
            return replace(reading, dice=tuple(dice), **verdict_for(dice, unsure, [i for i, d in enumerate(dice) if d.cocked]))
        return reading
    height, width = frame.shape[:2]
    dice = []
    for t in found:
        cocked = t.confidence < sure_confidence and any(d.cocked and _same_die(d, t) for d in reading.dice)
        x0, y0 = t.corners.min(0)
        x1, y1 = t.corners.max(0)
        cx, cy = (float(v) for v in t.centre)
        dice.append(DieReading(face=t.face, confidence=t.confidence, box=(float(x0), float(y0), float(x1), float(y1)),
                               corners=tuple((float(x), float(y)) for x, y in t.corners), centre=(cx, cy),
                               where=describe_position(cx, cy, width, height),
                               sure=t.confidence >= sure_confidence and not cocked, cocked=cocked))
    for d in reading.dice:
        # A reader's die centred on a taught die's face is that die seen again; one lying largely
        # on a taught die's sides may be that side (it shows another face): not announced. A die
        # that stood (a taught die named it the same) is its own die, though a neighbour's outline
        # reaches its middle (dev table 704, drawn words: a dot touching an L turned 30 degrees, whose
        # corner came within 0.1 sides of the dot's middle, was left out of a roll read as clear),
        # and a top face if its taught die is sure.
        own = stood.get(id(d))
        if own is not None or not any(_same_die(d, t) for t in found):
            if id(d) in named:
                d = _one_or_dot(d, named[id(d)])
            if id(d) in unknown:
                d = replace(d, sure=False)
            on_sides = ((own is None or own.confidence < sure_confidence)
                        and any(_overlap_of(die_corners(d), _grown(t.corners, 1.5)) >= 0.4 for t in found))
            if id(d) in confirmed and not on_sides:
                d = replace(d, sure=True)
            dice.append(replace(d, sure=False) if on_sides and d.sure else d)
    for t in unread:
        if not any(_same_die(d, t) for d in dice):
            cx, cy = (float(v) for v in t.centre)
            x0, y0 = t.corners.min(0)
            x1, y1 = t.corners.max(0)
            dice.append(DieReading(face=t.face, confidence=0.0, box=(float(x0), float(y0), float(x1), float(y1)),
                                   corners=tuple((float(x), float(y)) for x, y in t.corners), centre=(cx, cy),
                                   where=describe_position(cx, cy, width, height), sure=False))
    dice.sort(key=lambda d: (d.centre[1] // max(1.0, height / 6), d.centre[0]))
    unsure = [i for i, d in enumerate(dice) if not d.sure and not d.cocked]
    cocked = [i for i, d in enumerate(dice) if d.cocked]
    return replace(reading, dice=tuple(dice), kind=taught.kind, probabilities=(), **verdict_for(dice, unsure, cocked))


def _looks_taught(frame: np.ndarray, die, taught: TaughtSet) -> bool:
    """Whether the middle of a reader's die has the taught dice's body colour (:func:`_body_like`)."""
    ctx = face_context(frame, die_corners(die))
    return _body_like(ctx, _base_hypothesis(ctx), taught.body)


def _one_or_dot(die, taught_face: str):
    """A die the reader is sure shows one pip ("1") where the taught set sees its dot face (or the
    reverse): one mark, but of which kind of dice is open, and in a Wild game whose ordinary dice's
    one is a W that is a W or a dot. Named as the taught set names it, doubted, and known to be one
    of the two (``could_be``): the referee settles it without asking where both make the same move,
    and asks where they do not. (Found by an audit, 2026-12-03: a taught Wild die's dot read "1" by
    the reader stood as "1", a W in such a game.)"""
    return replace(die, face=taught_face, sure=False, could_be=ONE_PIP)


# --------------------------------------------------------------------------------------------
# Outlining a die from the picture


def _blob_quad(part: np.ndarray, radius: float) -> np.ndarray | None:
    """The four corners of a blob that is one die (pixels of ``part``), or None when it is not one
    quadrilateral about as wide as its widest circle (``radius``): several touching dice, or a
    ragged shape."""
    area = float(part.sum())
    if area > 1.8 * (2 * radius) ** 2:
        return None
    contours, _ = cv2.findContours(part.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    if not contours:
        return None
    hull = cv2.convexHull(max(contours, key=cv2.contourArea))
    peri = cv2.arcLength(hull, True)
    for eps in (0.01, 0.02, 0.03, 0.04):
        poly = cv2.approxPolyDP(hull, eps * peri, True).reshape(-1, 2).astype(np.float64)
        if len(poly) == 4:
            break
    else:
        return None  # not four straight sides (a die showing its sides has six)
    if not 0.9 < abs(cv2.contourArea(poly.astype(np.float32))) / max(area, 1.0) < 1.1:
        return None
    sides = np.linalg.norm(poly - np.roll(poly, 1, 0), axis=1)
    if sides.max() > 2.0 * sides.min():
        return None
    return _clockwise(poly)


def _hue_distance(lab: np.ndarray, body: tuple) -> np.ndarray:
    """How far Lab pixels (last axis L, a, b) lie from the body colour ``body`` in hue (a and b).

    >>> _hue_distance(np.array([[50.0, 131.0, 132.0], [50.0, 128.0, 128.0]]), (60, 128, 128, 5, 5)).tolist()
    [5.0, 0.0]
    """
    # A plain root of squares: colour values are small, so np.hypot's care with huge ones buys nothing,
    # and it took a quarter of the body-colour map's time (BodyMap, once a frame); this takes half.
    a, b = lab[..., 1] - body[1], lab[..., 2] - body[2]
    return np.sqrt(a * a + b * b)


def _hue_tolerance(body: tuple) -> float:
    return max(16.0, 1.5 * body[4])


def _body_like(ctx: np.ndarray, h, body: tuple) -> bool:
    """Whether the face found at ``h`` in a context crop has the taught dice's body colour: the
    middle of its face (mostly body, whatever the print) within the hue and brightness the taught
    views spread over."""
    wide = _affine(h).copy()
    wide[2:] *= 0.8 / INNER
    patch = _cut(cv2.cvtColor(ctx, cv2.COLOR_BGR2LAB), wide[None], 12)[0].reshape(-1, 3).astype(np.float32)
    L, _, _, sl, _ = body
    hue = _hue_distance(patch, body)
    near = (hue <= _hue_tolerance(body)) & (patch[:, 0] >= 0.4 * L) & (patch[:, 0] <= L + 40 + sl)
    return float(near.mean()) >= 0.4


def _square(cx: float, cy: float, side: float) -> np.ndarray:
    h = side / 2
    return np.array([[cx - h, cy - h], [cx + h, cy - h], [cx + h, cy + h], [cx - h, cy + h]], np.float64)


def _ring(a: np.ndarray) -> np.ndarray:
    return np.concatenate([a[0], a[-1], a[1:-1, 0], a[1:-1, -1]])


def _window(image: np.ndarray, oy: int, ox: int, shape, size) -> np.ndarray:
    """The window of ``image`` at (ox, oy) of ``shape``, shrunk to ``size`` and smoothed."""
    roi = image[oy:oy + shape[0], ox:ox + shape[1]]
    return cv2.GaussianBlur(cv2.resize(roi, size, interpolation=cv2.INTER_AREA), (0, 0), 1.0)


#: With a picture of the empty tray, a pixel of the tray's colour that is darker than the empty tray
#: there, but keeps more than this share of its light, is in the die's shadow, not the die.
SHADOW_KEEPS = 0.45


def _changed(small: np.ndarray, empty_small: np.ndarray) -> np.ndarray:
    """Where a window differs from the same window of the empty tray: the die (0/1 mask).

    Colour is compared as chromaticity (each channel's share of the light), which a shadow or the
    lamp's falloff does not change, and brightness as a ratio; the window's edge (the tray around the
    die) says how much change is the picture's grain, and how much the camera's exposure drifted
    since the empty tray was taken."""
    f, e = small.astype(np.float32), empty_small.astype(np.float32)
    light_f, light_e = f.sum(2) + 30.0, e.sum(2) + 30.0  # + 30: a dark pixel's colour is mostly noise
    colour = np.sqrt(((f / light_f[..., None] - e / light_e[..., None]) ** 2).sum(2)) * 100.0
    ratio = light_f / light_e
    ratio /= np.median(_ring(ratio))
    colour_grain = float(np.median(_ring(colour))) * 1.5
    ratio_grain = float(np.median(np.abs(_ring(ratio) - 1.0))) * 1.5
    return ((colour > max(6.0, 3.0 * colour_grain))
            | (ratio > 1.0 + max(0.15, 3.0 * ratio_grain))
            | (ratio < SHADOW_KEEPS)).astype(np.uint8)


def _measure_die(frame: np.ndarray, cx: float, cy: float, half: float, work: int, empty: np.ndarray | None = None):
    """One look for the die at (cx, cy) in a window of half-side ``half``: (centre x, y, widest
    circle's radius, whether the die's blob reaches the window's edge) in frame pixels, or None.
    With ``empty`` (a picture of the empty tray from the same camera) the die is what changed since."""
    h, w = frame.shape[:2]
    x0, y0, x1, y1 = int(cx - half), int(cy - half), int(cx + half) + 1, int(cy + half) + 1
    ox, oy = max(0, x0), max(0, y0)
    shape = (min(h, y1) - oy, min(w, x1) - ox)
    if shape[0] < 8 or shape[1] < 8:
        return None
    f = min(1.0, work / max(shape))
    size = (max(8, round(shape[1] * f)), max(8, round(shape[0] * f)))
    fx, fy = size[0] / shape[1], size[1] / shape[0]
    small = _window(frame, oy, ox, shape, size)
    if empty is not None:
        fg = _changed(small, _window(empty, oy, ox, shape, size))
    else:
        lab = cv2.cvtColor(small, cv2.COLOR_BGR2LAB).astype(np.float32)
        ring = _ring(lab)
        bg = np.median(ring, 0)
        spread = np.median(np.abs(ring - bg), 0) * 1.5
        # The die differs from the tray in colour or, much more than the tray's own grain, in brightness.
        chroma = np.sqrt(((lab[..., 1:] - bg[1:]) ** 2).sum(2))
        fg = ((chroma > max(8.0, 3.0 * float(np.hypot(*spread[1:]))))
              | (np.abs(lab[..., 0] - bg[0]) > max(25.0, 3.0 * float(spread[0])))).astype(np.uint8)
    filled = _holes_filled(cv2.morphologyEx(fg, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8)))
    sx, sy = (cx - ox) * fx, (cy - oy) * fy
    n, comp = cv2.connectedComponents(filled)
    iy, ix = int(np.clip(round(sy), 0, filled.shape[0] - 1)), int(np.clip(round(sx), 0, filled.shape[1] - 1))
    k = comp[iy, ix]
    if k == 0:  # the outline's centre is off the die: take the nearest blob, if near
        ys, xs = np.nonzero(comp)
        if len(xs) == 0:
            return None
        j = int(np.argmin((xs - sx) ** 2 + (ys - sy) ** 2))
        if (xs[j] - sx) ** 2 + (ys[j] - sy) ** 2 > (0.25 * filled.shape[0]) ** 2:
            return None
        k = comp[ys[j], xs[j]]
    part = (comp == k).astype(np.uint8)
    touches = bool(part[0].any() or part[-1].any() or part[:, 0].any() or part[:, -1].any())
    dt = _inner_distance(part)
    y, x = iy, ix
    if dt[y, x] == 0:
        ys, xs = np.nonzero(part)
        j = int(np.argmin((xs - sx) ** 2 + (ys - sy) ** 2))
        y, x = int(ys[j]), int(xs[j])
    for _ in range(4 * work):  # climb to the nearest widest point (one die of a touching group)
        y0c, x0c = max(0, y - 1), max(0, x - 1)
        win = dt[y0c:y + 2, x0c:x + 2]
        j = np.unravel_index(int(np.argmax(win)), win.shape)
        if win[j] <= dt[y, x]:
            break
        y, x = y0c + int(j[0]), x0c + int(j[1])
    radius = float(dt[y, x])
    if radius < 1.5:
        return None
    quad = _blob_quad(part, radius)
    if quad is not None:
        quad = np.stack([(quad[:, 0] + 0.5) / fx - 0.5 + ox, (quad[:, 1] + 0.5) / fy - 0.5 + oy], 1)
    return x / fx + ox, y / fy + oy, radius / min(fx, fy), touches, quad


def die_outline(frame: np.ndarray, corners, *, work: int = 80, empty: np.ndarray | None = None) -> np.ndarray | None:
    """A square around the die at a rough outline, measured from the picture: the die is what
    differs from the tray around it; its centre and size are those of the widest circle inside
    it nearest the outline's centre (so a die touching another is not taken for both). The square
    holds the top face and a little of the sides; :func:`_search` finds the face inside.

    A first look through a wide window finds the die's size even when the outline is much too
    small (a mark on the face) or too large; a second look through a window fitted to that size
    measures it finely. Returns None when the die cannot be told from the tray there.
    """
    c = np.asarray(corners, np.float64).reshape(4, 2)
    cx, cy = c.mean(0)
    side = mean_side(c)
    h, w = frame.shape[:2]
    half = 3.2 * side
    found = None
    for _ in range(3):
        found = _measure_die(frame, cx, cy, half, work, empty)
        if found is None:
            return None
        if not found[3] or half > max(h, w):
            break
        half *= 2  # the die (or the group it lies in) reaches past the window: look wider
    x, y, radius, _, quad = found
    fine = _measure_die(frame, x, y, max(2.5 * radius, 8.0), work, empty)
    if fine is not None and not fine[3] and 0.7 < fine[2] / radius < 1.4:
        x, y, radius, _, quad = fine
    if not 0.15 * side <= 2 * radius <= 6 * side:
        return None
    return quad if quad is not None else _square(x, y, 2 * radius)
