"""Surfaces, clutter, hands and camera effects for the synthetic dice renderer.

Everything here draws in image space with numpy and OpenCV. Textures are procedural (low-frequency
fields upsampled, plus a fixed bank of fine noise cropped at a random offset), which keeps a
1280x960 scene cheap enough to render tens of thousands of times.
"""

from __future__ import annotations

import functools

import cv2
import numpy as np

# name -> (pool, generator, BGR colours). Names never repeat between pools.
SURFACES = {
    "felt-green": ("train", "felt", ((40, 110, 30),)),
    "felt-red": ("train", "felt", ((35, 30, 140),)),
    "wood-oak": ("train", "wood", ((120, 170, 205), (80, 125, 170))),
    "grey-card": ("train", "card", ((150, 152, 150),)),
    "white-board": ("train", "card", ((222, 226, 226),)),
    "cork": ("train", "cork", ((95, 145, 190),)),
    "cloth-linen": ("train", "cloth", ((185, 200, 210),)),
    "felt-blue": ("holdout", "felt", ((120, 55, 20),)),
    "felt-black": ("holdout", "felt", ((30, 30, 32),)),
    "wood-walnut": ("holdout", "wood", ((60, 85, 115), (35, 50, 75))),
    "slate-card": ("holdout", "card", ((95, 92, 88),)),
    "cloth-denim": ("holdout", "cloth", ((120, 80, 50),)),
    "plastic-black": ("holdout", "plastic", ((24, 24, 26),)),
    "leather-brown": ("holdout", "leather", ((45, 70, 105),)),
}
SKIN_TONES = ((170, 195, 235), (140, 175, 225), (115, 150, 200), (85, 120, 170), (60, 85, 130), (45, 60, 95))
CLUTTER_KINDS = ("cable", "cup", "chips", "paper", "phone", "coin")


def surfaces_in(pool: str) -> tuple[str, ...]:
    return tuple(sorted(n for n, (p, _, _) in SURFACES.items() if p == pool))


BANK = 1536


@functools.lru_cache(maxsize=1)
def _noise_bank() -> np.ndarray:
    """A fixed BANK x BANK x 3 bank of unit Gaussian noise; scenes crop it at random offsets."""
    return np.random.default_rng(20240611).standard_normal((BANK, BANK, 3)).astype(np.float32)


def fine_noise(rng: np.random.Generator, h: int, w: int, channels: int = 1) -> np.ndarray:
    """(h, w[, channels]) float32 unit noise, cropped (tiled if the frame is larger) from the bank.

    Usually a view into the bank: treat it as read-only.
    """
    bank = _noise_bank()
    c0 = int(rng.integers(0, 3 - channels + 1))
    y0, x0 = int(rng.integers(0, BANK)), int(rng.integers(0, BANK))
    if h <= BANK and w <= BANK:
        y0, x0 = y0 % (BANK - h + 1), x0 % (BANK - w + 1)
        out = bank[y0 : y0 + h, x0 : x0 + w, c0 : c0 + channels]
    else:
        ys, xs = np.arange(y0, y0 + h) % BANK, np.arange(x0, x0 + w) % BANK
        out = bank[ys][:, xs, c0 : c0 + channels]
    return out[..., 0] if channels == 1 else out


def smooth_noise(rng: np.random.Generator, h: int, w: int, cells: int = 6) -> np.ndarray:
    """Low-frequency unit noise of size (h, w): a few random cells, bicubically upsampled."""
    gh, gw = max(2, int(cells * h / max(h, w)) + 2), max(2, int(cells * w / max(h, w)) + 2)
    g = rng.standard_normal((gh, gw)).astype(np.float32)
    return cv2.resize(g, (w, h), interpolation=cv2.INTER_CUBIC)


def surface(name: str, rng: np.random.Generator, h: int, w: int, px_per_mm: float) -> np.ndarray:
    """A procedural texture ``name`` of (h, w), as uint8 BGR, at ``px_per_mm`` image scale.

    Drawn at half resolution and upsampled (the sensor noise added later supplies the finest grain).
    """
    _, gen, cols = SURFACES[name]
    sh, sw = max(2, h // 2), max(2, w // 2)
    scale = px_per_mm / 2
    base = np.asarray(cols[0], np.float32)
    mottle = smooth_noise(rng, sh, sw, int(rng.integers(3, 9)))
    if gen == "felt":
        fibres = cv2.GaussianBlur(fine_noise(rng, sh, sw), (0, 0), max(0.6, 0.25 * scale))
        lum = 1 + 0.05 * mottle + 0.09 * fibres
    elif gen == "wood":
        a = rng.uniform(0, np.pi)
        # Distance across the grain, in mm: a linear ramp, built from a row and a column.
        across = (np.arange(sw, dtype=np.float32)[None, :] * np.float32(np.cos(a) / scale)
                  + np.arange(sh, dtype=np.float32)[:, None] * np.float32(np.sin(a) / scale))
        period = rng.uniform(2.0, 9)
        warp = smooth_noise(rng, sh, sw, 3) * rng.uniform(0.3, 1.2) + smooth_noise(rng, sh, sw, 12) * 0.15
        rings = 0.5 + 0.5 * np.sin(2 * np.pi * (across / period + warp))
        rings = cv2.pow(rings, rng.uniform(1.5, 4))
        streak = cv2.GaussianBlur(fine_noise(rng, sh, sw), (0, 0), 0.6)
        t = np.clip(rings * 0.8 + 0.15 * streak + 0.1 * mottle, 0, 1)
        dark = np.asarray(cols[1], np.float32)
        # base * (1 - t) + dark * t, rounded to 8 bits per channel
        small = cv2.merge([cv2.convertScaleAbs(t, alpha=float(dark[c] - base[c]), beta=float(base[c])) for c in range(3)])
        return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
    elif gen == "card":
        grad = ((np.arange(sw, dtype=np.float32)[None, :] / sw - 0.5) * np.float32(rng.uniform(-0.08, 0.08))
                + (np.arange(sh, dtype=np.float32)[:, None] / sh - 0.5) * np.float32(rng.uniform(-0.08, 0.08)))
        lum = 1 + 0.02 * mottle + grad + 0.015 * fine_noise(rng, sh, sw)
    elif gen == "cork":
        grains = cv2.GaussianBlur(fine_noise(rng, sh, sw), (0, 0), max(0.7, 0.35 * scale))
        grains = grains / (grains.std() + 1e-6)
        lum = 1 + 0.05 * mottle + 0.1 * grains - 0.25 * (grains < -2.0) + 0.1 * (grains > 1.8)
    elif gen == "cloth":
        p = max(2.2, 1.3 * scale)
        weave = (np.sin(2 * np.pi * np.arange(sw, dtype=np.float32) / p)[None, :]
                 * np.sin(2 * np.pi * np.arange(sh, dtype=np.float32) / p)[:, None])
        lum = 1 + 0.05 * mottle + 0.06 * weave + 0.05 * fine_noise(rng, sh, sw)
    elif gen == "plastic":
        gx = np.exp(-((np.arange(sw, dtype=np.float32) / sw - rng.uniform(0.2, 0.8)) ** 2) / 0.08)
        gy = np.exp(-((np.arange(sh, dtype=np.float32) / sh - rng.uniform(0.2, 0.8)) ** 2) / 0.08)
        sheen = (gy[:, None] * gx[None, :]).astype(np.float32) * np.float32(rng.uniform(10, 30))
        lum = 1 + 0.04 * mottle
        # base * lum + sheen, rounded to 8 bits per channel
        small = cv2.merge([cv2.convertScaleAbs(cv2.scaleAdd(lum, float(base[c]), sheen)) for c in range(3)])
        return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
    else:  # leather
        wr = cv2.GaussianBlur(fine_noise(rng, sh, sw), (0, 0), max(0.8, 0.5 * scale))
        wr = np.abs(wr / (wr.std() + 1e-6))
        lum = 1 + 0.07 * mottle - 0.12 * (wr < 0.15) + 0.04 * wr
    # base * lum, rounded to 8 bits per channel (lum stays well above 0)
    lum = lum.astype(np.float32, copy=False)
    small = cv2.merge([cv2.convertScaleAbs(lum, alpha=float(b)) for b in base])
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)


def _pts(a) -> np.ndarray:
    return np.round(np.asarray(a, np.float64) * 16).astype(np.int32)


class ShadowCanvas:
    """Low-resolution soft shadows of flat things (clutter, the tray wall), folded into the light field.

    Shapes are drawn at ``scale`` of the frame, each with its own darkness, blurred once at the end.
    """

    def __init__(self, h: int, w: int, scale: float = 0.25):
        self.scale = scale
        self.mask = np.zeros((max(2, int(h * scale)), max(2, int(w * scale))), np.float32)

    def _p(self, pts, offset) -> np.ndarray:
        return _pts((np.asarray(pts, np.float64) + offset) * self.scale)

    def poly(self, pts, strength: float, offset=(0.0, 0.0), thickness: float | None = None) -> None:
        if thickness is None:
            cv2.fillPoly(self.mask, [self._p(pts, offset)], strength, cv2.LINE_AA, 4)
        else:
            cv2.polylines(self.mask, [self._p(pts, offset)], False, strength,
                          max(1, int(thickness * self.scale)), cv2.LINE_AA, 4)

    def circle(self, centre, r: float, strength: float, offset=(0.0, 0.0)) -> None:
        cv2.circle(self.mask, tuple(self._p([centre], offset)[0]), int(r * self.scale * 16), strength, -1, cv2.LINE_AA, 4)

    def blurred(self, sigma_px: float) -> np.ndarray:
        s = max(0.5, sigma_px * self.scale)
        return cv2.GaussianBlur(self.mask, (0, 0), s)


def draw_clutter(img: np.ndarray, shadow: ShadowCanvas, rng: np.random.Generator, kind: str, centre,
                 px_per_mm: float, shadow_dir) -> tuple[float, float, float, float]:
    """Draw one clutter item near ``centre`` (pixels); returns its pixel box (x0, y0, x1, y1)."""
    cx, cy = float(centre[0]), float(centre[1])
    mm = px_per_mm
    off = (shadow_dir[0] * 4 * mm, shadow_dir[1] * 4 * mm)
    if kind == "cable":
        h, w = img.shape[:2]
        ang = rng.uniform(0, np.pi)
        length = max(h, w) * 1.5
        d = np.array([np.cos(ang), np.sin(ang)])
        nrm = np.array([-d[1], d[0]])
        ts = np.linspace(-0.5, 0.5, 40)
        wig = np.sin(ts * rng.uniform(3, 9) + rng.uniform(0, 6)) * rng.uniform(10, 40) * mm
        pts = np.array([cx, cy]) + ts[:, None] * length * d + wig[:, None] * nrm
        th = max(2, int(rng.uniform(4, 8) * mm))
        col = [(20, 20, 22), (30, 30, 30), (225, 228, 228), (40, 40, 45)][int(rng.integers(0, 4))]
        shadow.poly(pts, 0.5, off, th)
        cv2.polylines(img, [_pts(pts)], False, col, th, cv2.LINE_AA, 4)
        hl = tuple(int(min(255, c * 1.3 + 40)) for c in col)
        cv2.polylines(img, [_pts(pts - nrm * th * 0.2)], False, hl, max(1, th // 4), cv2.LINE_AA, 4)
        xs, ys = pts[:, 0], pts[:, 1]
        return float(xs.min() - th), float(ys.min() - th), float(xs.max() + th), float(ys.max() + th)
    if kind == "cup":
        r = rng.uniform(35, 45) * mm
        col = [(240, 240, 240), (40, 40, 160), (160, 100, 40), (50, 50, 50)][int(rng.integers(0, 4))]
        shadow.circle((cx, cy), r, 0.55, off)
        cv2.circle(img, _pts([cx, cy]), int(r * 16), col, -1, cv2.LINE_AA, 4)
        inner = tuple(int(c * 0.75) for c in col)
        cv2.circle(img, _pts([cx, cy]), int(r * 0.86 * 16), inner, -1, cv2.LINE_AA, 4)
        drink = [(20, 40, 70), (30, 60, 110), inner][int(rng.integers(0, 3))]
        cv2.circle(img, _pts([cx + r * 0.03, cy + r * 0.03]), int(r * 0.78 * 16), drink, -1, cv2.LINE_AA, 4)
        return cx - r, cy - r, cx + r, cy + r
    if kind == "chips":
        col = [(40, 40, 200), (200, 120, 30), (40, 160, 40), (30, 30, 30), (230, 230, 230)][int(rng.integers(0, 5))]
        n = int(rng.integers(1, 6))
        box = [cx, cy, cx, cy]
        for _ in range(n):
            r = rng.uniform(9, 20) * mm
            x, y = cx + rng.normal(0, 15 * mm), cy + rng.normal(0, 15 * mm)
            shadow.circle((x, y), r, 0.45, off)
            cv2.circle(img, _pts([x, y]), int(r * 16), col, -1, cv2.LINE_AA, 4)
            for k in range(6):
                a = k * np.pi / 3 + rng.uniform(0, 1)
                p = (x + 0.85 * r * np.cos(a), y + 0.85 * r * np.sin(a))
                cv2.circle(img, _pts(p), int(0.14 * r * 16), (235, 235, 235), -1, cv2.LINE_AA, 4)
            box = [min(box[0], x - r), min(box[1], y - r), max(box[2], x + r), max(box[3], y + r)]
        return tuple(box)
    if kind == "paper" or kind == "phone":
        if kind == "paper":
            wd, ht, col = rng.uniform(90, 210) * mm, rng.uniform(120, 290) * mm, (232, 236, 238)
        else:
            wd, ht, col = 72 * mm, 150 * mm, (28, 28, 30)
        rect = cv2.boxPoints(((cx, cy), (wd, ht), float(rng.uniform(0, 180))))
        shadow.poly(rect, 0.35, off)
        cv2.fillConvexPoly(img, _pts(rect), col, cv2.LINE_AA, 4)
        if kind == "paper":
            a, b, d = rect[0], rect[1], rect[3] - rect[0]
            for k in range(3, int(ht / (7 * mm))):
                t = k / (ht / (7 * mm))
                if t > 0.92:
                    break
                p0 = a + (b - a) * 0.1 + d * t
                p1 = a + (b - a) * rng.uniform(0.4, 0.9) + d * t
                cv2.line(img, _pts(p0), _pts(p1), (120, 120, 125), max(1, int(0.8 * mm)), cv2.LINE_AA, 4)
        else:
            inner = cv2.boxPoints(((cx, cy), (wd * 0.9, ht * 0.88), float(cv2.minAreaRect(rect.astype(np.float32))[2])))
            cv2.fillConvexPoly(img, _pts(inner), (45, 40, 38), cv2.LINE_AA, 4)
        return float(rect[:, 0].min()), float(rect[:, 1].min()), float(rect[:, 0].max()), float(rect[:, 1].max())
    # coin
    r = rng.uniform(9, 14) * mm
    col = [(150, 150, 150), (60, 150, 190), (80, 110, 160)][int(rng.integers(0, 3))]
    shadow.circle((cx, cy), r, 0.4, off)
    cv2.circle(img, _pts([cx, cy]), int(r * 16), col, -1, cv2.LINE_AA, 4)
    cv2.circle(img, _pts([cx, cy]), int(r * 0.8 * 16), tuple(int(c * 1.15) for c in col), 1, cv2.LINE_AA, 4)
    return cx - r, cy - r, cx + r, cy + r


def hand_shapes(rng: np.random.Generator) -> dict:
    """Random proportions of a hand (millimetres, hand-local: wrist at the origin, fingers along +x)."""
    spread = rng.uniform(0.08, 0.3)
    fingers = []
    for k in range(4):
        y = (k - 1.5) * 21 + rng.normal(0, 1.5)
        length = (72, 82, 78, 62)[k] * rng.uniform(0.6, 1.05)  # curled fingers look shorter
        fingers.append((90.0, float(y), float(length), float((k - 1.5) * spread), float(rng.uniform(14, 16.5))))
    return {
        "palm": (55.0, 0.0, 50.0, 44.0),
        "fingers": fingers,
        "thumb": (40.0, 38.0 * (1 if rng.random() < 0.5 else -1), 60.0 * rng.uniform(0.7, 1.0), 22.0),
        "tone": SKIN_TONES[int(rng.integers(0, len(SKIN_TONES)))],
        "sleeve": tuple(int(c) for c in rng.integers(20, 220, 3)),
    }


def draw_hand(img: np.ndarray, shapes: dict, origin, angle: float, px_per_mm: float, light_dir,
              shadow_len: float, blur_vec=(0.0, 0.0)) -> tuple[np.ndarray, tuple[int, int, int, int] | None]:
    """Draw a hand (arm from far outside the frame, palm at ``origin`` pixels, pointing at ``angle``).

    Returns the hand's coverage mask (uint8, full frame) so callers can tell what it hides, and the
    pixel box (x0, y0, x1, y1) the hand and its shadow changed (None if the hand is out of sight).
    """
    h, w = img.shape[:2]
    ca, sa = np.cos(angle), np.sin(angle)
    ox, oy = origin
    s = px_per_mm

    def to_img(p):
        p = np.atleast_2d(np.asarray(p, np.float64))
        return np.stack([ox + s * (p[:, 0] * ca - p[:, 1] * sa), oy + s * (p[:, 0] * sa + p[:, 1] * ca)], 1)

    mask = np.zeros((h, w), np.uint8)
    sleeve_mask = np.zeros((h, w), np.uint8)
    arm_len = 3 * max(h, w) / s
    arm = to_img([[10, -30], [10, 30], [-arm_len, 45], [-arm_len, -45]])
    cv2.fillConvexPoly(sleeve_mask, _pts(arm), 255, cv2.LINE_AA, 4)
    px, py, rx, ry = shapes["palm"]
    palm = to_img(cv2.ellipse2Poly((0, 0), (int(rx * 10), int(ry * 10)), 0, 0, 360, 10).astype(np.float64) / 10 + [px, py])
    cv2.fillPoly(mask, [_pts(palm)], 255, cv2.LINE_AA, 4)
    wrist = to_img([[0, -34], [0, 34], [50, 44], [50, -44]])
    cv2.fillConvexPoly(mask, _pts(wrist), 255, cv2.LINE_AA, 4)
    seams = np.zeros((h, w), np.uint8)
    for bx, by, length, ang, wd in shapes["fingers"]:
        tip = [bx + length * np.cos(ang), by + length * np.sin(ang)]
        a, b = to_img([[bx - 10, by], tip])
        cv2.line(mask, _pts(a[None])[0], _pts(b[None])[0], 255, max(1, int(wd * s)), cv2.LINE_AA, 4)
        # The outline of each finger, so that touching fingers still read as fingers.
        cv2.line(seams, _pts(a[None])[0], _pts(b[None])[0], 255, max(1, int(wd * s)), cv2.LINE_AA, 4)
        cv2.line(seams, _pts(a[None])[0], _pts(b[None])[0], 0, max(1, int((wd - 3) * s)), cv2.LINE_AA, 4)
    tx, ty, tl, tw = shapes["thumb"]
    a, b = to_img([[tx, ty * 0.6], [tx + tl * 0.7, ty + np.sign(ty) * tl * 0.5]])
    cv2.line(mask, _pts(a[None])[0], _pts(b[None])[0], 255, max(1, int(tw * s)), cv2.LINE_AA, 4)
    full = np.maximum(mask, sleeve_mask)
    bx, by, bw, bh = cv2.boundingRect(full)
    if bw == 0 or bh == 0:
        return full, None
    # Shadow first: the hand floats well above the tray.
    off = (light_dir[0] * shadow_len, light_dir[1] * shadow_len)
    q = 0.25
    small = cv2.resize(full, (max(2, int(w * q)), max(2, int(h * q))), interpolation=cv2.INTER_AREA)
    small = cv2.warpAffine(small.astype(np.float32) / 255, np.float32([[1, 0, off[0] * q], [0, 1, off[1] * q]]),
                           (small.shape[1], small.shape[0]))
    small = cv2.GaussianBlur(small, (0, 0), max(0.5, 12 * s * q))
    shade = cv2.resize(1 - 0.45 * small, (w, h), interpolation=cv2.INTER_LINEAR)
    sy, sx = np.nonzero(small > 1e-4)
    box = (w, h, 0, 0)
    if len(sx):  # only where the shadow falls (each low-res pixel covers 1/q full-res ones)
        box = (max(0, int(sx.min() / q) - 4), max(0, int(sy.min() / q) - 4),
               min(w, int((sx.max() + 1) / q) + 4), min(h, int((sy.max() + 1) / q) + 4))
        bx0, by0, bx1, by1 = box
        region = img[by0:by1, bx0:bx1]
        np.copyto(region, np.clip(region * shade[by0:by1, bx0:bx1, None], 0, 255).astype(np.uint8))
    pad = int(abs(blur_vec[0]) + abs(blur_vec[1]) + 2)
    x0, x1 = max(0, bx - pad), min(w, bx + bw + pad)
    y0, y1 = max(0, by - pad), min(h, by + bh + pad)
    # A big hand is shaded at half resolution (it hovers well above the focused tray, and usually
    # moves): a quarter of the work, and no visible difference.
    f = 0.5 if 14 * s >= 16 else 1.0

    def at_f(a):
        if f == 1.0:
            return a
        return cv2.resize(a, (max(1, int(round((x1 - x0) * f))), max(1, int(round((y1 - y0) * f)))),
                          interpolation=cv2.INTER_AREA)

    m = at_f(mask[y0:y1, x0:x1])
    sm = at_f(sleeve_mask[y0:y1, x0:x1])
    sf = s * f
    # Rounded look: brighter along the middle of each finger and the palm, darker at the edges.
    dist = cv2.distanceTransform((m > 127).astype(np.uint8), cv2.DIST_L2, 3)
    shade = (0.68 + 0.4 * np.sqrt(np.clip(dist / (9 * sf), 0, 1))) * (1 - 0.35 * at_f(seams[y0:y1, x0:x1]) / 255)
    tone = np.asarray(shapes["tone"], np.float32)
    skin = tone[None, None, :] * shade[..., None]
    sleeve = np.asarray(shapes["sleeve"], np.float32)[None, None, :] * (
        0.75 + 0.3 * np.sqrt(np.clip(cv2.distanceTransform((sm > 127).astype(np.uint8), cv2.DIST_L2, 3) / (25 * sf), 0, 1)))[..., None]
    a_skin = m.astype(np.float32) / 255
    a_sleeve = sm.astype(np.float32) / 255 * (1 - a_skin)
    colour = skin * a_skin[..., None] + sleeve * a_sleeve[..., None]
    alpha = a_skin + a_sleeve
    both = np.dstack([colour, alpha]).astype(np.float32)
    if abs(blur_vec[0]) + abs(blur_vec[1]) > 1.5:
        both = motion_blur(both, (blur_vec[0] * f, blur_vec[1] * f))
    if f != 1.0:
        both = cv2.resize(both, (x1 - x0, y1 - y0), interpolation=cv2.INTER_LINEAR)
    colour, alpha = both[..., :3], both[..., 3]
    roi = img[y0:y1, x0:x1].astype(np.float32)
    img[y0:y1, x0:x1] = np.clip(roi * (1 - alpha[..., None]) + colour, 0, 255).astype(np.uint8)
    box = (min(box[0], int(x0)), min(box[1], int(y0)), max(box[2], int(x1)), max(box[3], int(y1)))
    return full, box


def line_kernel(vec) -> np.ndarray:
    """A normalised motion-blur kernel along the pixel vector ``vec`` (for reference and tests;
    :func:`motion_blur` smears images far faster)."""
    length = max(1.0, float(np.hypot(vec[0], vec[1])))
    n = int(np.ceil(length)) | 1
    k = np.zeros((n, n), np.float32)
    c = n // 2
    d = np.asarray(vec, np.float64) / length
    p0 = (c - d * (length - 1) / 2) * 16
    p1 = (c + d * (length - 1) / 2) * 16
    cv2.line(k, tuple(np.round(p0).astype(int)), tuple(np.round(p1).astype(int)), 1.0, 1, cv2.LINE_AA, 4)
    return k / max(k.sum(), 1e-6)


def motion_blur(img: np.ndarray, vec) -> np.ndarray:
    """``img`` (float32, up to 4 channels) smeared along the pixel vector ``vec``, centred: the mean of
    copies shifted evenly along the vector, as a moving thing is seen during the exposure.

    Far cheaper than a 2-D kernel as long as the blur: a short smear is built by halving (averaging
    the image with a copy shifted by d doubles the copies, so 2**m copies take m shifts); a long one
    turns the image so that the motion runs along the rows, box-filters the rows and turns it back.

    >>> dot = np.zeros((41, 41), np.float32); dot[20, 20] = 1.0
    >>> for vec in ((4.0, 0.0), (12.0, 0.0), (0.0, -12.0), (9.0, 9.0)):
    ...     out = motion_blur(dot, vec)
    ...     ys, xs = np.nonzero(out > 0.2 * out.max())
    ...     ends = out[20 + int(vec[1] / 3), 20 + int(vec[0] / 3)], out[20 + int(vec[0] / 3), 20 - int(vec[1] / 3)]
    ...     print(round(float(out.sum()), 1), int(xs.max() - xs.min()), int(ys.max() - ys.min()), bool(ends[0] > 5 * ends[1]))
    1.0 4 0 True
    1.0 12 0 True
    1.0 0 12 True
    1.1 9 9 True
    """
    vec = np.asarray(vec, np.float64)
    length = float(np.hypot(vec[0], vec[1]))
    if not np.isfinite(length) or length <= 1.0:
        return img
    h, w = img.shape[:2]
    if length > h + w:  # a point projected from near the camera's plane: a smear across the frame at most
        vec, length = vec * ((h + w) / length), float(h + w)
    if length < 8:
        m = int(np.ceil(np.log2(length + 1)))
        step = vec / (2 ** m - 1)

        def shifted(a, d):
            return cv2.warpAffine(a, np.float32([[1, 0, d[0]], [0, 1, d[1]]]), (w, h), flags=cv2.INTER_LINEAR,
                                  borderMode=cv2.BORDER_REFLECT_101)

        # Copies at -vec/2 + k * step for k = 0 .. 2**m - 1, that is from -vec/2 to +vec/2.
        out = cv2.addWeighted(shifted(img, -vec / 2), 0.5, shifted(img, step - vec / 2), 0.5, 0.0)
        for j in range(1, m):
            out = cv2.addWeighted(out, 0.5, shifted(out, step * 2 ** j), 0.5, 0.0)
        return out
    # Turn the motion onto the rows (on a canvas big enough for the turned image), smear, turn back.
    angle = float(np.degrees(np.arctan2(vec[1], vec[0])))
    c, s_ = abs(vec[0]) / length, abs(vec[1]) / length
    W, H = int(np.ceil(w * c + h * s_)) + 2, int(np.ceil(w * s_ + h * c)) + 2
    turn = cv2.getRotationMatrix2D((w / 2, h / 2), angle, 1.0)
    turn[:, 2] += (W / 2 - w / 2, H / 2 - h / 2)
    turned = cv2.warpAffine(img, turn, (W, H), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
    k = int(round(length)) | 1
    turned = cv2.blur(turned, (k, 1), borderType=cv2.BORDER_CONSTANT)
    return cv2.warpAffine(turned, cv2.invertAffineTransform(turn), (w, h), flags=cv2.INTER_LINEAR,
                          borderMode=cv2.BORDER_CONSTANT)


def light_field(rng: np.random.Generator, h: int, w: int, *, vignette: float, cast, unevenness: float,
                hotspot=None, shade: np.ndarray | None = None, chroma: float = 0.0) -> np.ndarray:
    """Per-pixel BGR gain (h, w, 3) float32: uneven light, a lamp hotspot, vignetting, colour cast,
    the soft shadows in ``shade`` (a low-resolution darkness map) and fixed-pattern chroma blotches."""
    gh, gw = 24, 32
    ys, xs = np.mgrid[0:gh, 0:gw].astype(np.float32)
    u, v = (xs + 0.5) / gw - 0.5, (ys + 0.5) / gh - 0.5
    gain = 1 + unevenness * (u * rng.uniform(-1, 1) + v * rng.uniform(-1, 1))
    gain += unevenness * 0.5 * cv2.resize(rng.standard_normal((3, 4)).astype(np.float32), (gw, gh), interpolation=cv2.INTER_CUBIC)
    if hotspot is not None:
        hx, hy, hr, hs = hotspot
        gain += hs * np.exp(-((u + 0.5 - hx) ** 2 + (v + 0.5 - hy) ** 2 * (h / w) ** 2) / (2 * hr * hr))
    r2 = (u * u + (v * h / w) ** 2) / (0.25 + 0.25 * (h / w) ** 2)
    gain *= 1 - vignette * r2
    g3 = gain[..., None] * np.asarray(cast, np.float32)[None, None, :]
    if shade is not None:
        g3 = cv2.resize(g3, (shade.shape[1], shade.shape[0]), interpolation=cv2.INTER_LINEAR)
        g3 *= (1 - np.clip(shade, 0, 0.9))[..., None]
        if chroma > 0:
            blot = cv2.resize(rng.standard_normal((max(2, shade.shape[0] // 3), max(2, shade.shape[1] // 3), 3)).astype(np.float32),
                              (shade.shape[1], shade.shape[0]), interpolation=cv2.INTER_LINEAR)
            g3 *= 1 + chroma * blot
    return cv2.resize(g3, (w, h), interpolation=cv2.INTER_LINEAR)
