"""Dice of made-up designs: training material for a reader that learns any design from a few views.

Teach mode (:mod:`lcr_pi.vision.teach`) must tell apart the faces of a dice set it never saw from a
few views of each. A network trained only on pips and the letters L, C, R and W tells letters apart
well and stars, words and rings less well. A generic design prints on each face a mark drawn at
random from its seed: a few characters in one of OpenCV's Hershey fonts, a glyph of the train pool's
fonts, or a shape (a star, disc, ring, polygon, arrow, cross, pip pattern or bars), in one ink on a
body of any colour, printed or engraved. Trained to tell such marks apart design by design, a
network learns what makes two faces differ, not what an L looks like.

Nothing is drawn from the designs the teach benchmarks measure (``benchmarks/bench_teach.py``):
their Hershey Duplex font and their words LEFT and RIGHT are left out, and the glyphs come from
train-pool fonts only (the engraved design's font is of the holdout pool).

>>> d = random_generic_design(np.random.default_rng(3))
>>> d.kind, d.generic_seed > 0, d.name.startswith("generic/")
('lcr', True, True)
>>> m = generic_mark(d.generic_seed, "L", 64)
>>> m.shape, m.dtype.name, 0.0 <= float(m.min()) and float(m.max()) <= 1.0
((64, 64), 'float32', True)
>>> bool((generic_mark(d.generic_seed, "L", 64) == m).all())   # the same mark every time
True
"""

from __future__ import annotations

import functools
import math
import zlib

import cv2
import numpy as np

from lcr_pi.vision.render_designs import DieDesign, _hsv_bgr, fonts_in, glyph_fonts

MARK_PX = 96  # marks are drawn on a square of this side, then scaled to the texture

# Hershey fonts a mark may use: all but FONT_HERSHEY_DUPLEX (the violet-words benchmark design's).
HERSHEY_FONTS = (cv2.FONT_HERSHEY_SIMPLEX, cv2.FONT_HERSHEY_PLAIN, cv2.FONT_HERSHEY_COMPLEX,
                 cv2.FONT_HERSHEY_TRIPLEX, cv2.FONT_HERSHEY_SCRIPT_SIMPLEX, cv2.FONT_HERSHEY_SCRIPT_COMPLEX)
LEFT_OUT_WORDS = frozenset({"LEFT", "RIGHT"})
CHARACTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
FAMILIES = ("text", "text", "glyph", "star", "disc", "ring", "polygon", "arrow", "cross", "pips", "bars")
FACES = ("L", "C", "R", "dot")


def random_generic_design(rng: np.random.Generator) -> DieDesign:
    """A made-up LCR design: body and ink colours, print and finish; its marks follow from its seed."""
    seed = int(rng.integers(1, 2**31 - 1))
    body = _hsv_bgr(rng.random(), rng.uniform(0.0, 1.0) ** 0.7, rng.uniform(0.15, 1.0))
    ink = _contrasting_ink(rng, body)
    return DieDesign(
        name=f"generic/{seed}", kind="lcr", body=body, ink=ink, generic_seed=seed,
        engraved=float(rng.uniform(0.0, 1.0) if rng.random() < 0.4 else 0.0),
        rounding=float(rng.uniform(0.08, 0.2)), gloss=float(rng.uniform(0.1, 0.6)),
    )


def _lightness(bgr) -> float:
    return float(cv2.cvtColor(np.uint8([[bgr]]), cv2.COLOR_BGR2LAB)[0, 0, 0])


def _contrasting_ink(rng: np.random.Generator, body) -> tuple[int, int, int]:
    """An ink that stands out on ``body``: at least 60 apart in Lab lightness (0-255), as real sets'
    prints are (a faint print is a design no reader could be taught)."""
    for _ in range(100):
        ink = _hsv_bgr(rng.random(), rng.uniform(0.0, 1.0), rng.uniform(0.0, 1.0))
        if abs(_lightness(ink) - _lightness(body)) >= 60:
            return ink
    return (20, 20, 20) if _lightness(body) > 128 else (240, 240, 240)


@functools.lru_cache(maxsize=1024)
def _design_marks(seed: int) -> dict[str, np.ndarray]:
    """The marks of every face of design ``seed``, MARK_PX square, uint8 0..255 (read-only).

    A design keeps to one family of marks on every face (words on all faces, say) now and then: the
    hardest sets to tell apart are those whose faces differ least. A mark too like another face's at
    any quarter turn (two discs of nearly one size) is drawn again: no real set has two faces alike."""
    design_rng = np.random.default_rng(seed)
    one_family = str(design_rng.choice(FAMILIES)) if design_rng.random() < 0.35 else None
    marks: dict[str, np.ndarray] = {}
    for label in FACES:
        for attempt in range(12):
            rng = np.random.default_rng([seed, zlib.crc32(label.encode()), attempt])
            family = one_family if one_family and attempt < 8 else str(rng.choice(FAMILIES))
            mark = np.zeros((MARK_PX, MARK_PX), np.uint8)
            _DRAW[family](mark, rng)
            if mark.max() > 0 and all(_unlike(mark, other) for other in marks.values()):
                break
        mark.flags.writeable = False
        marks[label] = mark
    return marks


def _unlike(a: np.ndarray, b: np.ndarray, limit: float = 0.85) -> bool:
    """Whether two marks differ at every quarter turn (normalised correlation under ``limit``)."""
    fa = cv2.GaussianBlur(a.astype(np.float32), (0, 0), 3).ravel()
    fa = (fa - fa.mean()) / (fa.std() + 1e-6)
    for k in range(4):
        fb = cv2.GaussianBlur(np.rot90(b, k).astype(np.float32), (0, 0), 3).ravel()
        fb = (fb - fb.mean()) / (fb.std() + 1e-6)
        if float(fa @ fb) / len(fa) >= limit:
            return False
    return True


def generic_mark(seed: int, label: str, size: int) -> np.ndarray:
    """Face ``label``'s mark of design ``seed`` as ink weights 0..1, ``size`` square, upright."""
    m = _design_marks(seed)[label]
    interp = cv2.INTER_AREA if size < MARK_PX else cv2.INTER_LINEAR
    return cv2.resize(m, (size, size), interpolation=interp).astype(np.float32) / 255


def _fit(mask: np.ndarray, rng: np.random.Generator, lo: float = 0.45, hi: float = 0.8) -> np.ndarray:
    """Scale what is drawn on ``mask`` so that its larger extent is ``lo``-``hi`` of the face, centred."""
    ys, xs = np.nonzero(mask)
    if len(xs) == 0:
        return mask
    x0, x1, y0, y1 = xs.min(), xs.max() + 1, ys.min(), ys.max() + 1
    part = mask[y0:y1, x0:x1]
    extent = rng.uniform(lo, hi) * MARK_PX
    k = extent / max(part.shape)
    w, h = max(1, int(round(part.shape[1] * k))), max(1, int(round(part.shape[0] * k)))
    part = cv2.resize(part, (w, h), interpolation=cv2.INTER_AREA if k < 1 else cv2.INTER_LINEAR)
    out = np.zeros_like(mask)
    ox, oy = (MARK_PX - w) // 2, (MARK_PX - h) // 2
    out[max(oy, 0):oy + h, max(ox, 0):ox + w] = part[max(-oy, 0):, max(-ox, 0):][:MARK_PX, :MARK_PX]
    return out


def _text(mark, rng):
    for _ in range(20):
        n = int(rng.choice([1, 1, 2, 3, 4, 5]))
        word = "".join(rng.choice(list(CHARACTERS), n))
        if word not in LEFT_OUT_WORDS:
            break
    font = int(rng.choice(HERSHEY_FONTS)) | (cv2.FONT_ITALIC if rng.random() < 0.25 else 0)
    big = np.zeros((4 * MARK_PX, 4 * MARK_PX), np.uint8)
    cv2.putText(big, word, (8, 2 * MARK_PX), font, 3.0, 255, int(rng.integers(3, 12)), cv2.LINE_AA)
    mark[:] = _fit(_shrink(big), rng, 0.45, 0.85)


def _shrink(big: np.ndarray) -> np.ndarray:
    """The drawn part of a large canvas, cut out and fitted into MARK_PX (aspect kept)."""
    ys, xs = np.nonzero(big)
    if len(xs) == 0:
        return np.zeros((MARK_PX, MARK_PX), np.uint8)
    part = big[ys.min():ys.max() + 1, xs.min():xs.max() + 1]
    k = (MARK_PX - 2) / max(part.shape)
    w, h = max(1, int(part.shape[1] * k)), max(1, int(part.shape[0] * k))
    out = np.zeros((MARK_PX, MARK_PX), np.uint8)
    small = cv2.resize(part, (w, h), interpolation=cv2.INTER_AREA)
    out[(MARK_PX - h) // 2:(MARK_PX - h) // 2 + h, (MARK_PX - w) // 2:(MARK_PX - w) // 2 + w] = small
    return out


def _glyph(mark, rng):
    fonts = fonts_in("train")
    _, masks = glyph_fonts()[str(rng.choice(fonts))]
    glyph = masks[int(rng.integers(0, len(masks)))]
    if glyph.max() == 0:
        glyph = masks[0]
    mark[:] = _fit(glyph.copy(), rng, 0.45, 0.8)


def _poly_points(n: int, r_out: float, r_in: float | None, turn: float) -> np.ndarray:
    k = 2 * n if r_in is not None else n
    a = turn + np.linspace(0, 2 * np.pi, k, endpoint=False)
    r = np.where(np.arange(k) % 2 == 0, r_out, r_in if r_in is not None else r_out)
    c = MARK_PX / 2
    return np.stack([c + r * np.cos(a), c + r * np.sin(a)], 1)


def _draw_poly(mark, pts: np.ndarray, rng, outline_chance: float = 0.3):
    p = np.round(pts * 16).astype(np.int32)
    if rng.random() < outline_chance:
        cv2.polylines(mark, [p], True, 255, int(rng.integers(3, 9)), cv2.LINE_AA, 4)
    else:
        cv2.fillPoly(mark, [p], 255, cv2.LINE_AA, 4)


def _star(mark, rng):
    n = int(rng.integers(4, 9))
    r = rng.uniform(0.28, 0.46) * MARK_PX
    _draw_poly(mark, _poly_points(n, r, r * rng.uniform(0.3, 0.6), rng.uniform(0, 2 * np.pi)), rng)


def _disc(mark, rng):
    c = MARK_PX // 2
    cv2.circle(mark, (c * 16, c * 16), int(rng.uniform(0.08, 0.32) * MARK_PX * 16), 255, -1, cv2.LINE_AA, 4)


def _ring(mark, rng):
    c = MARK_PX // 2
    r = rng.uniform(0.15, 0.38) * MARK_PX
    cv2.circle(mark, (c * 16, c * 16), int(r * 16), 255, int(rng.uniform(0.04, 0.45) * r) + 2, cv2.LINE_AA, 4)
    if rng.random() < 0.3:  # a bull's eye
        cv2.circle(mark, (c * 16, c * 16), int(r * rng.uniform(0.2, 0.4) * 16), 255, -1, cv2.LINE_AA, 4)


def _polygon(mark, rng):
    n = int(rng.choice([3, 4, 4, 5, 6]))
    _draw_poly(mark, _poly_points(n, rng.uniform(0.2, 0.42) * MARK_PX, None, rng.uniform(0, 2 * np.pi)), rng)


def _arrow(mark, rng):
    # An arrow along x, then turned: left and right arrows are mirror images, as L and R may be.
    L = rng.uniform(0.55, 0.85) * MARK_PX
    t = rng.uniform(0.08, 0.2) * MARK_PX
    head = rng.uniform(0.25, 0.45) * L
    hw = rng.uniform(1.6, 3.0) * t
    pts = np.array([[-L / 2, -t / 2], [L / 2 - head, -t / 2], [L / 2 - head, -hw / 2], [L / 2, 0],
                    [L / 2 - head, hw / 2], [L / 2 - head, t / 2], [-L / 2, t / 2]])
    a = float(rng.choice([0, np.pi / 2, np.pi, 3 * np.pi / 2])) if rng.random() < 0.6 else rng.uniform(0, 2 * np.pi)
    R = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    _draw_poly(mark, pts @ R.T + MARK_PX / 2, rng, 0.15)


def _cross(mark, rng):
    arm = rng.uniform(0.25, 0.42) * MARK_PX
    t = rng.uniform(0.07, 0.2) * MARK_PX
    a = float(rng.choice([0, np.pi / 4])) + rng.uniform(-0.1, 0.1)
    c = MARK_PX / 2
    for k in (0, 1):
        d = np.array([math.cos(a + k * np.pi / 2), math.sin(a + k * np.pi / 2)])
        p0, p1 = c - arm * d, c + arm * d
        cv2.line(mark, tuple(np.round(p0 * 16).astype(int)), tuple(np.round(p1 * 16).astype(int)), 255,
                 max(1, int(t)), cv2.LINE_AA, 4)


_PIPS = {1: [(0, 0)], 2: [(-1, -1), (1, 1)], 3: [(-1, -1), (0, 0), (1, 1)], 4: [(-1, -1), (1, -1), (-1, 1), (1, 1)],
         5: [(-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)], 6: [(-1, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (1, 1)]}


def _pips(mark, rng):
    n = int(rng.integers(1, 7))
    spread = rng.uniform(0.2, 0.3) * MARK_PX
    r = rng.uniform(0.06, 0.11) * MARK_PX
    c = MARK_PX / 2
    for dx, dy in _PIPS[n]:
        cv2.circle(mark, (int((c + dx * spread) * 16), int((c + dy * spread) * 16)), int(r * 16), 255, -1, cv2.LINE_AA, 4)


def _bars(mark, rng):
    n = int(rng.integers(1, 4))
    length = rng.uniform(0.4, 0.8) * MARK_PX
    t = rng.uniform(0.06, 0.14) * MARK_PX
    gap = rng.uniform(1.6, 2.6) * t
    a = rng.uniform(0, np.pi) if rng.random() < 0.4 else float(rng.choice([0, np.pi / 2]))
    d, n_ = np.array([math.cos(a), math.sin(a)]), np.array([-math.sin(a), math.cos(a)])
    c = MARK_PX / 2
    for k in range(n):
        m = c + (k - (n - 1) / 2) * gap * n_
        p0, p1 = m - length / 2 * d, m + length / 2 * d
        cv2.line(mark, tuple(np.round(p0 * 16).astype(int)), tuple(np.round(p1 * 16).astype(int)), 255,
                 max(1, int(t)), cv2.LINE_AA, 4)


_DRAW = {"text": _text, "glyph": _glyph, "star": _star, "disc": _disc, "ring": _ring, "polygon": _polygon,
         "arrow": _arrow, "cross": _cross, "pips": _pips, "bars": _bars}
