"""Die designs for the synthetic renderer: body colours, inks, fonts, and the face textures.

A :class:`DieDesign` names everything that makes one set of dice look the way it does. Designs are
drawn from two disjoint pools ("train" and "holdout") of colours and fonts, so that a reader can be
measured on dice it never saw. Face textures are flat, unlit albedo images of one face (the renderer
shades and warps them); they are cached because a scene reuses them across frames.
"""

from __future__ import annotations

import collections
import functools
import threading
import pathlib
import zlib
from dataclasses import dataclass, field, replace

import cv2
import numpy as np

PIP_FACES = ("1", "2", "3", "4", "5", "6")
LCR_FACES = ("L", "C", "R", "dot", "W")

# Die-local face index -> label. Local faces are +x, -x, +y, -y, +z, -z (see render_geometry).
# A pip die's opposite faces sum to 7, with 1-2-3 counter-clockwise around their corner.
PIP_LAYOUT = ("2", "5", "3", "4", "1", "6")
# LCR dice: L opposite R, C opposite a dot, and two dots opposite each other; the Wild die
# has a W in place of one of those dots.
LCR_LAYOUT = ("L", "R", "C", "dot", "dot", "dot")
WILD_LAYOUT = ("L", "R", "C", "dot", "W", "dot")

# Colours are BGR. Names never repeat between pools (tests check this).
PIP_BODIES = {
    "train": {
        "white": ((243, 245, 245), False), "ivory": ((208, 232, 243), False),
        "black": ((34, 32, 32), False), "red": ((38, 36, 178), False),
        "blue": ((150, 62, 22), False), "green": ((58, 138, 32), False),
        "translucent-red": ((45, 35, 205), True), "translucent-blue": ((205, 95, 30), True),
        "translucent-green": ((70, 185, 45), True),
    },
    "holdout": {
        "bone": ((196, 224, 236), False), "snow": ((250, 250, 248), False),
        "charcoal": ((62, 60, 56), False), "maroon": ((40, 28, 112), False),
        "navy": ((92, 40, 18), False), "yellow": ((40, 200, 232), False),
        "orange": ((30, 118, 232), False), "purple": ((118, 40, 88), False),
        "translucent-amber": ((28, 140, 222), True), "translucent-purple": ((150, 55, 115), True),
    },
}
LCR_BODIES = {
    "train": {"white": ((243, 245, 245), False), "ivory": ((208, 232, 243), False)},
    "holdout": {"bone": ((196, 224, 236), False), "snow": ((250, 250, 248), False)},
}
# The ivory-like body of each pool, used by the pi-black-tray preset.
IVORY = {"train": "ivory", "holdout": "bone"}
INKS = {
    "train": {"black": (28, 26, 26), "red": (40, 30, 190), "blue": (150, 60, 25), "white-ink": (238, 240, 240)},
    "holdout": {"jet": (12, 12, 14), "crimson": (60, 20, 160), "navy-ink": (110, 40, 10),
                "gold-ink": (60, 180, 215)},
}
# Inks readable on a dark body, per pool.
LIGHT_INKS = {"train": ("white-ink",), "holdout": ("gold-ink",)}
DARK_INKS = {"train": ("black", "red", "blue"), "holdout": ("jet", "crimson", "navy-ink")}

_ASSETS = pathlib.Path(__file__).with_name("assets")


@functools.lru_cache(maxsize=1)
def glyph_fonts() -> dict[str, tuple[str, np.ndarray]]:
    """Font name -> (pool, masks (5, 96, 96) uint8 for L, C, R, W, star); read once from the asset."""
    with np.load(_ASSETS / "glyphs.npz") as data:
        return {
            key[5:]: (str(data[f"pool/{key[5:]}"]), data[key].copy())
            for key in data.files if key.startswith("font/")
        }


def fonts_in(pool: str) -> tuple[str, ...]:
    return tuple(sorted(n for n, (p, _) in glyph_fonts().items() if p == pool))


@dataclass(frozen=True)
class DieDesign:
    """Everything that makes one die design look as it does (hashable: textures are cached by it)."""

    name: str
    kind: str                 # "pip", "lcr" or "wild"
    body: tuple[int, int, int]
    ink: tuple[int, int, int]  # pips or letters
    translucent: bool = False
    one_ink: tuple[int, int, int] | None = None  # a big red 1, or a differently coloured dot
    pip_radius: float = 0.09   # fraction of the face side
    pip_spread: float = 0.25   # pip centre offset from the face centre, fraction of the side
    big_one: float = 1.0       # radius factor of the 1 pip
    font: str = ""
    letter_size: float = 0.62  # letter cap height, fraction of the face side
    dot_radius: float = 0.17
    star: bool = False         # the W face shows a star instead of a W
    letter_inks: tuple = ()    # optional per-letter ink overrides: (("L", bgr), ...)
    engraved: float = 0.0      # 0 = printed, up to 1 = deeply engraved (dark shadow edge)
    rounding: float = 0.12     # edge radius, fraction of the side
    gloss: float = 0.4         # specular strength
    # How the letters are printed (the train pool varies them, :func:`_widen_train_design`):
    glyph_weight: float = 0.0  # strokes thickened (> 0) or thinned (< 0), in pixels of the 96 px mask
    glyph_stretch: float = 1.0  # letter width against the font's own
    glyph_shear: float = 0.0   # slant: x shift per pixel of height
    print_offset: tuple = (0.0, 0.0)  # print centre off the face centre, fractions of the side
    # A marbled body: swirls of this second colour through the body colour (:func:`marble_weight`).
    # Left out of repr, which seeds the train pool's widening: designs drawn before marbling existed
    # keep every other draw.
    marble: tuple[int, int, int] | None = field(default=None, repr=False)
    # A made-up design (:mod:`lcr_pi.vision.render_generic`): each face shows a mark drawn from this
    # seed instead of a letter or a dot. 0: a real design. Left out of repr, as ``marble``.
    generic_seed: int = field(default=0, repr=False)

    @property
    def layout(self) -> tuple[str, ...]:
        return {"pip": PIP_LAYOUT, "lcr": LCR_LAYOUT, "wild": WILD_LAYOUT}[self.kind]


def random_design(rng: np.random.Generator, kind: str, pool: str, body_name: str | None = None) -> DieDesign:
    """A random die design of ``kind`` ("pip", "lcr", "wild") from ``pool``."""
    inks = INKS[pool]
    body_fixed = body_name is not None
    if kind == "pip":
        bodies = PIP_BODIES[pool]
        if body_name is None:
            body_name = str(rng.choice(sorted(bodies)))
        body, translucent = bodies[body_name]
        dark_body = sum(body) / 3 < 120 or (translucent and rng.random() < 0.7)
        ink_name = str(rng.choice(LIGHT_INKS[pool] if dark_body else DARK_INKS[pool][:1] * 3 + DARK_INKS[pool]))
        if translucent and not dark_body:
            ink_name = LIGHT_INKS[pool][0] if rng.random() < 0.5 else DARK_INKS[pool][0]
        one_ink, big_one = None, 1.0
        if not dark_body and not translucent and rng.random() < 0.3:
            one_ink, big_one = inks[DARK_INKS[pool][1]], float(rng.uniform(1.0, 1.9))
        design = DieDesign(
            name=f"pip/{body_name}/{ink_name}" + ("/red-one" if one_ink else ""),
            kind="pip", body=body, ink=inks[ink_name], translucent=translucent, one_ink=one_ink,
            pip_radius=float(rng.uniform(0.075, 0.105)), pip_spread=float(rng.uniform(0.22, 0.28)),
            big_one=big_one, rounding=float(rng.uniform(0.08, 0.2)),
            gloss=float(rng.uniform(0.5, 1.0) if translucent else rng.uniform(0.1, 0.6)),
            engraved=float(rng.uniform(0.3, 1.0)),
        )
        return _widen_train_design(design, body_fixed) if pool == "train" else design
    bodies = LCR_BODIES[pool]
    if body_name is None or body_name not in bodies:
        body_name = str(rng.choice(sorted(bodies)))
    ink_name = str(rng.choice(DARK_INKS[pool]))
    font = str(rng.choice(fonts_in(pool)))
    letter_inks: tuple = ()
    if rng.random() < 0.2:  # some sets print each letter in its own colour
        letter_inks = tuple((ch, inks[str(rng.choice(DARK_INKS[pool]))]) for ch in "LCRW")
    one_ink = inks[str(rng.choice(DARK_INKS[pool]))] if rng.random() < 0.3 else None
    star = kind == "wild" and rng.random() < 0.5
    design = DieDesign(
        name=f"{kind}/{body_name}/{ink_name}/{font}" + ("/star" if star else ""),
        kind=kind, body=bodies[body_name][0], ink=inks[ink_name], font=font, one_ink=one_ink,
        letter_size=float(rng.uniform(0.5, 0.74)), dot_radius=float(rng.uniform(0.1, 0.24)),
        star=star, letter_inks=letter_inks, engraved=float(rng.uniform(0.0, 0.8)),
        rounding=float(rng.uniform(0.08, 0.18)), gloss=float(rng.uniform(0.1, 0.5)),
    )
    return _widen_train_design(design, body_fixed) if pool == "train" else design


# The share of the train pool's pip designs with a marbled body (real sets have a few such dice,
# read least surely of all: swirls make marks of no pip's shape and hide the pips they cross).
MARBLED_SHARE = 0.25


def _hsv_bgr(h: float, s: float, v: float) -> tuple[int, int, int]:
    """A BGR colour from hue (turns), saturation and value (0..1)."""
    px = np.uint8([[[int(h * 180) % 180, int(round(s * 255)), int(round(v * 255))]]])
    b, g, r = cv2.cvtColor(px, cv2.COLOR_HSV2BGR)[0, 0]
    return int(b), int(g), int(r)


def _lab_distance(a, b) -> float:
    lab = cv2.cvtColor(np.uint8([[a, b]]), cv2.COLOR_BGR2LAB).astype(np.float32)[0]
    return float(np.linalg.norm(lab[0] - lab[1]))


def _widen_train_design(design: DieDesign, body_fixed: bool) -> DieDesign:
    """The train pool's designs, widened beyond its named colours and fonts' own letter shapes.

    A reader trained on a handful of named colours and eight fonts learns those designs; players'
    dice are anything. So a train-pool design often gets a colour of any hue (pips of little
    contrast against the body, such as yellow on red, included), and its letters are printed
    heavier or lighter, wider or narrower, slanted and a little off-centre. Only the train pool is
    widened. Its draws come from a generator seeded by the design itself (whose sizes and finishes
    are drawn at random, so designs rarely repeat), not from the scene's: every scene of either
    pool is laid out, lit and posed as before, only the train pool's dice look different. A named
    body asked for (the ``pi-black-tray`` preset's ivory) is kept.
    """
    rng = np.random.default_rng(zlib.crc32(repr(design).encode()))
    changes: dict = {}
    if design.kind == "pip":
        if not body_fixed and rng.random() < 0.4:
            body = _hsv_bgr(rng.random(), rng.uniform(0.0, 1.0), rng.uniform(0.12, 1.0))
            for _ in range(20):  # any ink the eye can tell from the body, however faintly
                ink = _hsv_bgr(rng.random(), rng.uniform(0.0, 1.0), rng.uniform(0.05, 1.0))
                if _lab_distance(body, ink) >= 28:
                    break
            else:
                ink = (245, 245, 245) if sum(body) < 380 else (25, 25, 25)
            changes.update(body=body, ink=ink, translucent=bool(rng.random() < 0.2), one_ink=None,
                           big_one=1.0, name=f"{design.name}/any-colour")
        changes.update(pip_radius=float(rng.uniform(0.06, 0.125)), pip_spread=float(rng.uniform(0.2, 0.3)))
        if not body_fixed and rng.random() < MARBLED_SHARE:
            # Marbled plastic (swirls of white, black or another colour through the body): its veins
            # make marks of no pip's shape and hide pips of the vein's colour, as on real marbled dice.
            veins = ((240, 240, 238), (30, 28, 28), _hsv_bgr(rng.random(), rng.uniform(0.2, 1.0), rng.uniform(0.2, 1.0)))
            vein = veins[int(rng.choice(3, p=(0.45, 0.3, 0.25)))]
            if _lab_distance(changes.get("body", design.body), vein) >= 20:  # else the eye could not see it
                changes.update(marble=vein, name=changes.get("name", design.name) + "/marbled")
        return replace(design, **changes)
    tag = ""
    if not body_fixed and rng.random() < 0.3:
        changes["body"] = _hsv_bgr(rng.random(), rng.uniform(0.0, 0.25), rng.uniform(0.78, 1.0))
        tag += "/tinted"
    if rng.random() < 0.35:
        changes["ink"] = _hsv_bgr(rng.random(), rng.uniform(0.2, 1.0), rng.uniform(0.1, 0.7))
        changes["letter_inks"] = ()
        tag += "/any-ink"
    if not body_fixed and rng.random() < 0.08:  # light letters on a dark or coloured die
        changes["body"] = _hsv_bgr(rng.random(), rng.uniform(0.3, 1.0), rng.uniform(0.15, 0.6))
        changes["ink"] = _hsv_bgr(rng.random(), rng.uniform(0.0, 0.3), rng.uniform(0.85, 1.0))
        changes.update(letter_inks=(), one_ink=None)
        tag += "/light-on-dark"
    changes.update(
        glyph_weight=float(rng.uniform(-2.5, 4.0)) if rng.random() < 0.7 else 0.0,
        glyph_stretch=float(np.exp(rng.uniform(np.log(0.8), np.log(1.25)))) if rng.random() < 0.6 else 1.0,
        glyph_shear=float(rng.uniform(-0.18, 0.18)) if rng.random() < 0.25 else 0.0,
        print_offset=tuple(float(v) for v in rng.normal(0, 0.025, 2)) if rng.random() < 0.5 else (0.0, 0.0),
        name=design.name + tag + "/shaped",
    )
    return replace(design, **changes)


def shaped_glyph(glyph: np.ndarray, weight: float, stretch: float, shear: float) -> np.ndarray:
    """A 96 px glyph mask printed heavier or lighter (``weight`` px), wider or narrower and slanted.

    Thinning never takes more than half of the print away (a light font stays legible).

    >>> g = np.zeros((96, 96), np.uint8); g[20:76, 40:52] = 255
    >>> [int((shaped_glyph(g, w, 1.0, 0.0) > 127).sum(1).max()) for w in (-2, 0, 3)]
    [8, 12, 18]
    >>> int((shaped_glyph(g, 0, 1.25, 0.0) > 127).sum(1).max())
    15
    """
    out = glyph
    if weight:
        r = int(round(abs(weight)))
        if r:
            kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1))
            changed = cv2.dilate(out, kernel) if weight > 0 else cv2.erode(out, kernel)
            if weight > 0 or changed.sum() >= 0.5 * out.sum():
                out = changed
    if stretch != 1.0 or shear:
        c = (out.shape[1] - 1) / 2
        m = np.float32([[stretch, shear, c - stretch * c - shear * c], [0, 1, 0]])
        out = cv2.warpAffine(out, m, out.shape[::-1], flags=cv2.INTER_LINEAR, borderValue=0)
    return out


_PIP_POSITIONS = {
    "1": [(0, 0)],
    "2": [(-1, -1), (1, 1)],
    "3": [(-1, -1), (0, 0), (1, 1)],
    "4": [(-1, -1), (1, -1), (-1, 1), (1, 1)],
    "5": [(-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)],
    "6": [(-1, -1), (-1, 0), (-1, 1), (1, -1), (1, 0), (1, 1)],
}


def _dimple(tex: np.ndarray, cx: float, cy: float, radius: float, ink, light: tuple[float, float],
            depth: float) -> None:
    """Paint a concave, ink-filled dot: the rim on the light side shades the inside of the pit."""
    t = tex.shape[0]
    x0, x1 = max(0, int(cx - radius - 2)), min(t, int(cx + radius + 3))
    y0, y1 = max(0, int(cy - radius - 2)), min(t, int(cy + radius + 3))
    ys, xs = np.mgrid[y0:y1, x0:x1].astype(np.float32)
    ox, oy = (xs + 0.5 - cx) / radius, (ys + 0.5 - cy) / radius
    rr = ox * ox + oy * oy
    cover = np.clip((1 - np.sqrt(rr)) * radius + 0.5, 0, 1)
    # Normal of a spherical dimple points inwards-up; light from direction `light` (texture plane).
    nz = np.sqrt(np.clip(1 - rr * 0.6, 0.05, 1))
    lam = (-ox * light[0] - oy * light[1]) * 0.775 + nz * 0.63
    shade = 1 + depth * (np.clip(lam, 0, None) - 0.63) * 1.2
    col = np.asarray(ink, np.float32)[None, None, :] * shade[..., None]
    patch = tex[y0:y1, x0:x1]
    patch[:] = patch * (1 - cover[..., None]) + col * cover[..., None]


def _star_mask(size: int, rng_angle: float, inner: float) -> np.ndarray:
    pts = []
    for k in range(10):
        a = rng_angle + k * np.pi / 5 - np.pi / 2
        r = 0.48 if k % 2 == 0 else 0.48 * inner
        pts.append((size / 2 + r * size * np.cos(a), size / 2 + r * size * np.sin(a)))
    m = np.zeros((size, size), np.uint8)
    cv2.fillPoly(m, [np.round(np.array(pts) * 16).astype(np.int32)], 255, cv2.LINE_AA, shift=4)
    return m


_TEXTURES: "collections.OrderedDict[tuple, tuple]" = collections.OrderedDict()
_TEXTURE_BUDGET = 160 * 2**20  # bytes of cached textures (a 512-pixel face is 3 MiB)
_texture_bytes = 0
_texture_lock = threading.Lock()  # the demo and the settle tests may render from other threads


def face_texture(design: DieDesign, label: str, size: int, spin: int, light_q: int) -> tuple[np.ndarray, np.ndarray | None]:
    """Unlit texture of one face: (size, size, 3) float32 BGR, and an opacity map for translucent dice.

    ``spin`` turns the print by quarter turns in the face; ``light_q`` is the direction of the
    light in the face plane in eighths of a turn (it decides which side of a pip's pit is shaded).
    Textures are cached (least recently used first out, within a memory budget); treat them as
    read-only.
    """
    global _texture_bytes
    key = (design, label, size, spin, light_q)
    with _texture_lock:
        hit = _TEXTURES.get(key)
        if hit is not None:
            _TEXTURES.move_to_end(key)
            return hit
    made = _face_texture(design, label, size, spin, light_q)
    for a in made:
        if a is not None:
            a.flags.writeable = False
    with _texture_lock:
        if key not in _TEXTURES:
            _TEXTURES[key] = made
            _texture_bytes += sum(a.nbytes for a in made if a is not None)
        while _texture_bytes > _TEXTURE_BUDGET and len(_TEXTURES) > 1:
            _, old = _TEXTURES.popitem(last=False)
            _texture_bytes -= sum(a.nbytes for a in old if a is not None)
    return made


def _print(tex: np.ndarray, m: np.ndarray, ink, engraved: float, light: tuple[float, float]) -> np.ndarray:
    """Print ink weights ``m`` (0..1) onto ``tex`` in place, the engraved stroke's wall on the light
    side in shadow; returns ``m``."""
    if engraved > 0:
        shift = max(1, int(round(tex.shape[0] * 0.012 * engraved)))
        sh = np.roll(m, (int(round(light[1] * shift)), int(round(light[0] * shift))), axis=(0, 1))
        tex *= (1 - 0.35 * np.clip(sh - m, 0, 1))[..., None]
    col = np.asarray(ink, np.float32)
    tex[:] = tex * (1 - m[..., None]) + col * m[..., None]
    return m


def marble_weight(size: int, seed: int) -> np.ndarray:
    """Where a marbled die's veins lie on one face: (size, size) float32 weights 0..1 of the vein colour.

    Bands across the face, bent by smooth noise of a few scales (the classic turbulence marble), the
    same for the same ``seed``. Veins cover a fifth to a half of the face.

    >>> w = marble_weight(64, 7)
    >>> w.shape, bool(0.1 < w.mean() < 0.6), bool((marble_weight(64, 7) == w).all())
    ((64, 64), True, True)
    """
    rng = np.random.default_rng(seed ^ 0x6D61726B)
    turbulence = np.zeros((size, size), np.float32)
    for cells, amount in ((3, 1.0), (6, 0.5), (12, 0.25)):
        noise = rng.standard_normal((cells, cells)).astype(np.float32)
        turbulence += amount * cv2.resize(noise, (size, size), interpolation=cv2.INTER_CUBIC)
    angle, bands = rng.uniform(0, np.pi), rng.uniform(1.0, 3.0)
    ys, xs = np.mgrid[0:size, 0:size].astype(np.float32) / size
    phase = 2 * np.pi * bands * (xs * np.cos(angle) + ys * np.sin(angle)) + rng.uniform(1.5, 3.5) * turbulence
    width = rng.uniform(0.25, 0.6)  # how much of each band is vein
    vein = (np.sin(phase) + 1) / 2  # 0..1
    edge = 1 - width
    return np.clip((vein - edge) / max(width * 0.6, 1e-3), 0, 1).astype(np.float32)


def _face_texture(design: DieDesign, label: str, size: int, spin: int, light_q: int) -> tuple[np.ndarray, np.ndarray | None]:
    t = size
    body = np.asarray(design.body, np.float32)
    tex = np.empty((t, t, 3), np.float32)
    tex[:] = body
    # Faint mottling of the plastic, fixed per design so that a die looks the same in every frame.
    seed = zlib.crc32(f"{design.name}/{label}".encode())
    grain = np.random.default_rng(seed).standard_normal((8, 8)).astype(np.float32)
    grain = cv2.resize(grain, (t, t), interpolation=cv2.INTER_CUBIC)
    tex *= (1 + 0.01 * grain)[..., None]
    if design.marble is not None:
        w = marble_weight(t, seed)[..., None]
        tex[:] = tex * (1 - w) + np.asarray(design.marble, np.float32) * w
    opacity = None
    if design.translucent:
        opacity = np.full((t, t), 0.5, np.float32)
    la = light_q * np.pi / 4
    light = (float(np.cos(la)), float(np.sin(la)))
    ink_mask = np.zeros((t, t), np.float32)

    if label in PIP_FACES:
        r = design.pip_radius * t
        ink = design.ink
        if label == "1":
            r *= design.big_one
            ink = design.one_ink or design.ink
        for dx, dy in _PIP_POSITIONS[label]:
            if spin % 2:
                dx, dy = dy, -dx
            cx, cy = t / 2 + dx * design.pip_spread * t, t / 2 + dy * design.pip_spread * t
            _dimple(tex, cx, cy, r, ink, light, 0.35 + 0.5 * design.engraved)
            if opacity is not None:
                cv2.circle(ink_mask, (int(cx * 16), int(cy * 16)), int(r * 16), 1.0, -1, cv2.LINE_AA, 4)
    elif design.generic_seed:
        from lcr_pi.vision.render_generic import generic_mark

        ink_mask = _print(tex, np.rot90(generic_mark(design.generic_seed, label, t), spin), design.ink, design.engraved, light)
    elif label == "dot":
        ink = design.one_ink or design.ink
        _dimple(tex, t / 2, t / 2, design.dot_radius * t, ink, light, 0.2 + 0.4 * design.engraved)
    else:
        ink = dict(design.letter_inks).get(label, design.ink)
        pool, masks = glyph_fonts()[design.font]
        glyph = masks[LCR_FACES.index(label) if label != "W" or not design.star else 4]
        if label == "W" and design.star and glyph.max() == 0:
            glyph = _star_mask(96, 0.0, 0.42)
        if design.glyph_weight or design.glyph_stretch != 1.0 or design.glyph_shear:
            glyph = shaped_glyph(glyph, design.glyph_weight, design.glyph_stretch, design.glyph_shear)
        side = max(4, int(round(t * design.letter_size / 0.69)))  # glyph masks: cap height 66 of 96
        g = cv2.resize(glyph, (side, side), interpolation=cv2.INTER_AREA if side < 96 else cv2.INTER_LINEAR)
        g = np.rot90(g, spin).astype(np.float32) / 255
        m = np.zeros((t, t), np.float32)
        o = (t - side) // 2
        a0, a1 = max(0, o), min(t, o + side)
        m[a0:a1, a0:a1] = g[a0 - o : a1 - o, a0 - o : a1 - o]
        if design.print_offset != (0.0, 0.0):
            # Off-centre print, turned with the print (``spin`` quarter turns, as np.rot90 turns).
            dx, dy = design.print_offset
            for _ in range(spin % 4):
                dx, dy = dy, -dx
            shift = np.float32([[1, 0, dx * t], [0, 1, dy * t]])
            m = cv2.warpAffine(m, shift, (t, t), flags=cv2.INTER_LINEAR, borderValue=0)
        ink_mask = _print(tex, m, ink, design.engraved, light)
    if opacity is not None:
        if label in PIP_FACES:
            opacity = np.maximum(opacity, ink_mask)
    return tex, opacity
