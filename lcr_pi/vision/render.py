"""Synthetic scenes of pip dice and LCR dice, with their truth, for training and testing the reader.

No public photographs of LCR dice exist, so the project renders them. A scene is a wide-angle camera
over a tray (felt, wood, card, cloth, a round black tray...) with clutter around it; dice are rounded
cubes in perspective whose side faces show their own real faces (a pip die's opposite faces sum to
7), lit by a lamp that casts shadows and glare, seen through a lens with distortion, vignetting,
blur, sensor noise and JPEG loss.

Public API::

    random_scene(rng, ...) -> RenderedScene       # one labelled frame
    roll_sequence(rng, ...) -> (frames, scene)    # dice tumbling in, bouncing, settling; optional hand
    write_roll_folder(out_dir, scenes)            # images/NNNN.jpg + labels.jsonl (../shared/data format)

Everything is numpy + OpenCV and deterministic for a given ``np.random.Generator`` seed.

>>> scene = random_scene(np.random.default_rng(1), size=(320, 240), n_dice=2)
>>> scene.image.shape, len(scene.dice), scene.dice[0].face in PIP_FACES
((240, 320, 3), 2, True)
"""

from __future__ import annotations

import json
import math
import pathlib
from dataclasses import dataclass, field

import cv2
import numpy as np

from lcr_pi.vision import render_geometry as geo
from lcr_pi.vision.render_designs import (
    INKS, IVORY, LCR_BODIES, LCR_FACES, PIP_BODIES, PIP_FACES, DieDesign, face_texture, fonts_in,
    random_design,
)
from lcr_pi.vision.render_surfaces import (
    CLUTTER_KINDS, SURFACES, ShadowCanvas, draw_clutter, draw_hand, fine_noise, hand_shapes, light_field,
    motion_blur, surface, surfaces_in,
)

__all__ = [
    "PIP_FACES", "LCR_FACES", "KINDS", "POOLS", "PRESETS", "RenderedDie", "RenderedScene",
    "random_scene", "roll_sequence", "Table", "write_roll_folder", "pool_names",
]

KINDS = ("pip", "lcr", "wild", "mixed")
POOLS = ("train", "holdout")
# Named looks. Sizes are (width, height); die_px the range of die sizes (pixels per die side at the
# tray floor; the top face, nearer the lens, looks a little larger).
PRESETS = {
    "pi-black-tray": {
        "size": (3280, 2464), "die_px": (60, 120), "tray": "round", "floor": "plastic-black",
        "hfov": (60.0, 64.0), "tilt": (0.0, 8.0), "k1": (-0.06, -0.02), "ivory": True,
        "noise": (3.5, 6.0), "blur": (0.9, 1.8), "vignette": (0.3, 0.45), "jpeg": (82, 95),
        "cast": "pi", "clutter": (1, 4),
    },
    "felt-table": {
        "size": (1280, 960), "die_px": (40, 140), "tray": "rect", "floor": "felt",
        "hfov": (50.0, 75.0), "tilt": (0.0, 22.0), "k1": (-0.12, -0.02), "ivory": False,
        "noise": (1.0, 4.0), "blur": (0.0, 1.2), "vignette": (0.1, 0.35), "jpeg": (70, 95),
        "cast": "any", "clutter": (0, 4),
    },
}
DIE_SIDE_MM = (14.0, 19.0)
# The lens is at least this many die sides from the tray floor. Closer, a thrown die would touch
# the lens and a resting die's top face would fill (or overflow) the frame; big dice in the frame
# come from a narrower lens instead.
MIN_CAMERA_SIDES = 4.0


@dataclass(frozen=True)
class RenderedDie:
    """The truth about one rendered die."""

    face: str                                 # top face: "1".."6" or "L", "C", "R", "dot", "W"
    box: tuple[float, float, float, float]    # x0, y0, x1, y1 of the whole top face (clipped to the image)
    corners: np.ndarray                       # (4, 2) float32 image points of the top face's corners
    cocked: bool                              # leaning on another die or the wall
    design: str                               # design name, e.g. "pip/ivory/black"


@dataclass(frozen=True)
class RenderedScene:
    image: np.ndarray                         # H x W x 3 uint8 BGR
    dice: tuple[RenderedDie, ...]
    style: dict = field(default_factory=dict)  # what was drawn (JSON-serialisable)


def pool_names(pool: str) -> dict[str, set[str]]:
    """Names of everything a pool draws from (fonts, body colours, inks, surfaces), for checks."""
    return {
        "fonts": set(fonts_in(pool)),
        "bodies": set(PIP_BODIES[pool]) | set(LCR_BODIES[pool]),
        "inks": set(INKS[pool]),
        "surfaces": set(surfaces_in(pool)),
    }


# --------------------------------------------------------------------------------------------
# Internal scene model


@dataclass
class _Die:
    design: DieDesign
    side: float
    rotation: np.ndarray
    centre: np.ndarray
    spins: tuple[int, ...]
    cocked: bool = False
    blur: tuple[float, float] = (0.0, 0.0)

    @property
    def radius(self) -> float:
        return self.design.rounding * self.side


@dataclass
class _Stage:
    camera: geo.Camera
    background: np.ndarray
    light_pos: np.ndarray
    ambient: float
    diffuse: float
    shadow_strength: float
    shadow_soft: float
    glare_radius: float
    glare_strength: float
    gain: np.ndarray
    blur_sigma: float
    noise_sigma: float
    chroma_noise: float
    jpeg_quality: int | None
    tray: dict
    exclusions: list
    style: dict
    plate: "_Plate | None" = None   # the background before and after light and lens, made once


@dataclass
class _Plate:
    """A picture as drawn (``raw``, uint8) and after the lens blur and the light field (``lit``,
    float32). A frame is a plate plus what moves on it: only the boxes where something was drawn
    need lighting again, and a still scene is lit once for all its frames."""

    raw: np.ndarray
    lit: np.ndarray


def _parse_n(n_dice) -> tuple[int, int]:
    if isinstance(n_dice, (int, np.integer)):
        return int(n_dice), int(n_dice)
    a, b = n_dice
    if not (1 <= int(a) <= int(b)):
        raise ValueError(f"n_dice must be a count >= 1 or a range (a, b) with 1 <= a <= b, not {n_dice!r}")
    return int(a), int(b)


def _check(kind: str, pool: str, preset) -> dict | None:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    if pool not in POOLS:
        raise ValueError(f"pool must be one of {', '.join(POOLS)}, not {pool!r}")
    if preset is not None and preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; known presets: {', '.join(PRESETS)}")
    return PRESETS.get(preset) if preset else None


def _uniform(rng, lo_hi) -> float:
    return float(rng.uniform(lo_hi[0], lo_hi[1]))


def _make_stage(rng: np.random.Generator, size, n_dice: int, pool: str, preset: dict | None,
                preset_name: str | None) -> tuple[_Stage, float, float]:
    """Camera, light, tray, table and clutter. Returns the stage, the die side (mm) and die size (px)."""
    w, h = size
    p = preset or {}
    side = _uniform(rng, DIE_SIDE_MM)
    if "die_px" in p:
        scale = min(w / p["size"][0], h / p["size"][1])
        die_px = float(np.exp(rng.uniform(*np.log(np.array(p["die_px"]) * scale))))
    else:
        hi = min(400.0, np.sqrt(0.3 * w * h / n_dice) / 1.5)
        lo = min(25.0, hi)
        die_px = float(np.exp(rng.uniform(np.log(lo), np.log(hi))))
    hfov = _uniform(rng, p.get("hfov", (45.0, 85.0)))
    tilt = _uniform(rng, p.get("tilt", (0.0, 28.0))) if rng.random() < 0.8 or preset else 0.0
    k1 = _uniform(rng, p.get("k1", (-0.18 * (hfov / 70) ** 2, -0.01)))
    heading = float(rng.uniform(0, 360))
    focal = (w / 2) / np.tan(np.radians(hfov) / 2)
    if focal < MIN_CAMERA_SIDES * die_px:
        focal = MIN_CAMERA_SIDES * die_px
        narrower = float(np.degrees(2 * np.arctan((w / 2) / focal)))
        k1 *= (narrower / hfov) ** 2  # barrel distortion grows with the field angle
        hfov = narrower
    distance = focal * side / die_px
    cam = geo.Camera.looking_at(w, h, hfov, distance, tilt, heading, k1=k1,
                                principal_offset=(rng.normal(0, w * 0.01), rng.normal(0, h * 0.01)))
    # The visible floor, to size the tray and place dice.
    corners = np.array([cam.floor_point(u, v) for u, v in ((0, 0), (w, 0), (w, h), (0, h))])
    view_half = 0.5 * np.ptp(corners[:, :2], axis=0)
    view_r = float(min(view_half))

    # Tray.
    tray_kind = p.get("tray") or str(rng.choice(["open", "rect", "round"], p=[0.35, 0.4, 0.25]))
    surfaces = surfaces_in(pool)
    if p.get("floor") == "felt":
        floor = str(rng.choice([s for s in surfaces if s.startswith("felt")]))
    elif p.get("floor"):
        floor = p["floor"]
    elif tray_kind == "round" and rng.random() < 0.6:
        floor = str(rng.choice([s for s in surfaces if SURFACES[s][1] in ("felt", "plastic", "leather")]))
    else:
        floor = str(rng.choice(surfaces))
    table = str(rng.choice([s for s in surfaces if s != floor])) if tray_kind != "open" else floor
    tray = {"kind": tray_kind, "centre": [0.0, 0.0], "floor": floor, "table": table}
    if tray_kind == "rect":
        f = rng.uniform(0.6, 1.35) if not preset else rng.uniform(0.75, 1.1)
        hx, hy = float(view_half[0] * f * rng.uniform(0.9, 1.1)), float(view_half[1] * f * rng.uniform(0.9, 1.1))
        hx, hy = max(hx, 3 * side), max(hy, 3 * side)
        tray.update(half=[hx, hy], angle=float(rng.normal(0, 4)), wall=float(rng.uniform(12, 35)),
                    rim=float(rng.uniform(6, 20)))
        tray["centre"] = [float(rng.normal(0, 0.05 * hx)), float(rng.normal(0, 0.05 * hy))]
    elif tray_kind == "round":
        f = rng.uniform(0.7, 1.25) if not preset else rng.uniform(0.8, 0.95)
        tray.update(radius=float(max(view_r * f, 3 * side)), wall=float(rng.uniform(12, 30)),
                    rim=float(rng.uniform(6, 16)))
        tray["centre"] = [float(rng.normal(0, 0.04 * view_r)), float(rng.normal(0, 0.04 * view_r))]

    # Light: a lamp or window somewhere above; its direction decides shadows and glare.
    az = rng.uniform(0, 2 * np.pi)
    elev = np.radians(rng.uniform(38, 85))
    dist = rng.uniform(3.0, 8.0) * max(view_r, 100)
    light_pos = np.array([np.cos(az) * np.cos(elev), np.sin(az) * np.cos(elev), np.sin(elev)]) * dist
    ambient = float(rng.uniform(0.35, 0.6))
    diffuse = float(rng.uniform(0.45, 0.75))
    cast_kind = p.get("cast", "any")
    if cast_kind == "pi":
        cast = (rng.uniform(0.78, 0.9), rng.uniform(0.98, 1.04), rng.uniform(1.02, 1.12))
    else:
        warmth = rng.normal(0, 0.07)
        cast = (1 - warmth, 1 + rng.normal(0, 0.025), 1 + warmth)
    exposure = rng.uniform(0.85, 1.12)
    cast = tuple(float(c * exposure) for c in cast)
    lamp = np.array([[light_pos[0] * 0.2, light_pos[1] * 0.2, 0.0]])
    # A lamp spot behind the lens (steep tilt) is far outside the picture; keep its position finite.
    lamp_px = np.clip(cam.project(lamp)[0], [-2.0 * w, -2.0 * h], [3.0 * w, 3.0 * h]) if cam.in_front(lamp) else np.array([-2.0 * w, -2.0 * h])
    hotspot = None
    if rng.random() < 0.5:
        hotspot = (float(lamp_px[0] / w), float(lamp_px[1] / h), float(rng.uniform(0.2, 0.5)), float(rng.uniform(0.05, 0.25)))
    vignette = _uniform(rng, p.get("vignette", (0.0, 0.4)))
    unevenness = float(rng.uniform(0.05, 0.3))

    style = {
        "preset": preset_name, "pool": pool, "size": [w, h],
        "camera": {"hfov_deg": round(hfov, 2), "tilt_deg": round(tilt, 2), "heading_deg": round(heading, 1),
                   "k1": round(k1, 4), "height_mm": round(float(cam.position[2]), 1),
                   "die_side_mm": round(side, 2), "die_px": round(die_px, 1)},
        "tray": {k: (round(v, 2) if isinstance(v, float) else v) for k, v in tray.items()},
        "light": {"azimuth_deg": round(float(np.degrees(az)), 1), "elevation_deg": round(float(np.degrees(elev)), 1),
                  "ambient": round(ambient, 3), "cast_bgr": [round(c, 3) for c in cast],
                  "hotspot": hotspot is not None},
    }
    px_mm = cam.px_per_mm(np.array([0.0, 0.0, 0.0]))
    background, exclusions, shade = _draw_background(rng, cam, tray, px_mm, light_pos, style, p.get("clutter"))
    noise = _uniform(rng, p.get("noise", (0.5, 5.0)))
    chroma = float(rng.uniform(0, 0.012) * noise)
    gain = light_field(rng, h, w, vignette=vignette, cast=cast, unevenness=unevenness, hotspot=hotspot,
                       shade=shade, chroma=chroma)
    blur = _uniform(rng, p.get("blur", (0.0, 1.3))) if (preset or rng.random() < 0.6) else 0.0
    jpeg = int(rng.integers(*p.get("jpeg", (45, 96)))) if (preset or rng.random() < 0.7) else None
    style["effects"] = {"noise_sigma": round(noise, 2), "blur_sigma": round(blur, 2), "jpeg_quality": jpeg}
    stage = _Stage(
        camera=cam, background=background, light_pos=light_pos, ambient=ambient, diffuse=diffuse,
        shadow_strength=float(rng.uniform(0.25, 0.6)), shadow_soft=float(rng.uniform(0.03, 0.2)),
        glare_radius=float(rng.uniform(3, 40)), glare_strength=float(rng.uniform(0.3, 1.4)),
        gain=gain, blur_sigma=blur, noise_sigma=noise, chroma_noise=chroma,
        jpeg_quality=jpeg, tray=tray, exclusions=exclusions, style=style,
    )
    return stage, side, die_px


def _tray_outline(tray: dict, z: float, grow: float = 0.0, n: int = 96) -> np.ndarray:
    """World points (N,3) of the tray's wall line at height z, grown outwards by ``grow`` mm."""
    cx, cy = tray["centre"]
    if tray["kind"] == "round":
        a = np.linspace(0, 2 * np.pi, n, endpoint=False)
        r = tray["radius"] + grow
        return np.stack([cx + r * np.cos(a), cy + r * np.sin(a), np.full(n, z)], 1)
    hx, hy = tray["half"][0] + grow, tray["half"][1] + grow
    t = np.linspace(-1, 1, n // 4, endpoint=False)
    one = np.ones_like(t)
    sq = np.concatenate([np.stack([t * hx, -hy * one], 1), np.stack([hx * one, t * hy], 1),
                         np.stack([-t * hx, hy * one], 1), np.stack([-hx * one, -t * hy], 1)])
    a = np.radians(tray["angle"])
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    sq = sq @ rot.T + [cx, cy]
    return np.concatenate([sq, np.full((len(sq), 1), z)], 1)


def _image_poly(cam: geo.Camera, pts3: np.ndarray) -> np.ndarray:
    """Image points (M,2) of a planar world polygon: only its part in front of the lens, cut to a
    box around the frame (so the numbers stay small enough for fixed-point drawing). M may be 0."""
    pts = cam.clip_near(pts3)
    if len(pts) < 3:
        return np.zeros((0, 2))
    w, h = cam.width, cam.height
    return geo.clip_to_box(cam.project(pts), -2.0 * w, -2.0 * h, 3.0 * w, 3.0 * h)


def _poly(cam: geo.Camera, pts3: np.ndarray) -> np.ndarray | None:
    """:func:`_image_poly` as int32 points with 4 fractional bits for OpenCV, or None if nothing is visible."""
    img = _image_poly(cam, pts3)
    return np.round(img * 16).astype(np.int32) if len(img) >= 3 else None


def _draw_background(rng, cam: geo.Camera, tray: dict, px_mm: float, light_pos, style: dict, clutter_range):
    """Table, clutter and tray. Returns the image, boxes dice must avoid, and a low-res shadow map."""
    w, h = cam.width, cam.height
    img = surface(tray["table"], rng, h, w, px_mm)
    shadows = ShadowCanvas(h, w)
    light_dir = np.asarray(light_pos, np.float64) / np.linalg.norm(light_pos)
    c_img = cam.project(np.array([[0.0, 0.0, 0.0], [-light_dir[0] * 20, -light_dir[1] * 20, 0.0]]))
    sdir = c_img[1] - c_img[0]
    sdir = sdir / (np.linalg.norm(sdir) + 1e-9)
    exclusions: list = []
    clutter_names: list = []
    lo, hi = clutter_range or (0, 4)
    n_clutter = int(rng.integers(lo, hi + 1)) if rng.random() < 0.7 or clutter_range else 0
    wall_shadow = None
    if tray["kind"] != "open":
        rim_outer = _poly(cam, _tray_outline(tray, tray["wall"], tray["rim"]))
        for _ in range(n_clutter):
            for _try in range(20):
                c = (rng.uniform(0, w), rng.uniform(0, h))
                if rim_outer is None or cv2.pointPolygonTest(rim_outer.astype(np.float32) / 16, c, False) < 0:
                    kind = str(rng.choice(CLUTTER_KINDS))
                    draw_clutter(img, shadows, rng, kind, c, px_mm, sdir)
                    clutter_names.append(kind)
                    break
        # Clutter under the tray is hidden, and so is its shadow.
        if rim_outer is not None:
            shadows.poly(rim_outer.astype(np.float64) / 16, 0.0)
        # Tray: rim (top of the wall), inner wall faces, then the floor on top.
        floor_pts = _tray_outline(tray, 0.0)
        rim_in_pts = _tray_outline(tray, tray["wall"])
        floor_kind = SURFACES[tray["floor"]][1]
        rim_col = np.asarray(SURFACES[tray["floor"]][2][0], np.float64)
        if floor_kind in ("felt", "cloth", "leather") and rng.random() < 0.6:
            rim_col = np.array([60, 95, 135.0]) * rng.uniform(0.6, 1.3)  # a wooden frame
        if rim_outer is not None:
            cv2.fillPoly(img, [rim_outer], tuple(float(c) * 1.15 + 10 for c in rim_col), cv2.LINE_AA, 4)
        rim_in = _poly(cam, rim_in_pts)
        floor = _poly(cam, floor_pts)
        if rim_in is not None:
            cv2.fillPoly(img, [rim_in], tuple(float(c) for c in rim_col * 0.8), cv2.LINE_AA, 4)
        n = len(floor_pts)
        centre = np.array([*tray["centre"], 0.0])
        mids = (floor_pts + np.roll(floor_pts, -1, axis=0)) / 2
        inward = centre - mids
        inward[:, 2] = 0
        inward /= np.linalg.norm(inward, axis=1, keepdims=True) + 1e-9
        lam = np.clip(inward @ light_dir, 0, None)
        # Each wall segment is shaded by how it faces the light. The wall quads share their corners
        # with the floor and rim outlines unless a part of the tray is behind the lens.
        whole = floor is not None and rim_in is not None and len(floor) == len(rim_in) == n
        for i in range(n):
            j = (i + 1) % n
            if whole:
                quad = np.array([floor[i], floor[j], rim_in[j], rim_in[i]])
            else:
                quad = _poly(cam, np.array([floor_pts[i], floor_pts[j], rim_in_pts[j], rim_in_pts[i]]))
                if quad is None:
                    continue
            col = rim_col * (0.45 + 0.6 * lam[i])
            cv2.fillConvexPoly(img, quad, tuple(float(c) for c in col), cv2.LINE_AA, 4)
        floor_tex = surface(tray["floor"], rng, h, w, px_mm)
        wall_shadow = ShadowCanvas(h, w, 0.125)
        if floor is not None:
            mask = np.zeros((h, w), np.uint8)
            cv2.fillPoly(mask, [floor], 255, cv2.LINE_8, 4)
            cv2.copyTo(floor_tex, mask, img)
            # The wall's shadow on the floor: floor points whose path to the light crosses the wall.
            wall_shadow.poly(floor.astype(np.float64) / 16, 0.45)
        proj = rim_in_pts.copy()
        proj[:, :2] -= light_dir[:2] / light_dir[2] * tray["wall"]
        proj[:, 2] = 0
        lit_floor = _image_poly(cam, proj)
        if len(lit_floor) >= 3:
            wall_shadow.poly(lit_floor, 0.0)
    else:
        for _ in range(n_clutter if rng.random() < 0.5 else 0):
            # Clutter on an open surface stays near the frame's edge; dice keep clear of it.
            side_ = int(rng.integers(0, 4))
            t = rng.uniform(0, 1)
            m = rng.uniform(0, 0.08)
            c = [(t * w, m * h), (t * w, (1 - m) * h), (m * w, t * h), ((1 - m) * w, t * h)][side_]
            kind = str(rng.choice(["cup", "chips", "paper", "phone", "coin"]))
            exclusions.append(draw_clutter(img, shadows, rng, kind, c, px_mm, sdir))
            clutter_names.append(kind)
    style["clutter"] = clutter_names
    shade = shadows.blurred(3 * px_mm)
    if wall_shadow is not None:
        ws = cv2.resize(wall_shadow.blurred(0.02 * min(w, h)), (shade.shape[1], shade.shape[0]))
        shade = 1 - (1 - shade) * (1 - ws)
    return img, exclusions, shade


# --------------------------------------------------------------------------------------------
# Placing dice


def _footprint_ok(stage: _Stage, die: _Die, placed: list[_Die], skip=()) -> bool:
    cam = stage.camera
    pts = die.centre + geo.cube_corners(die.side) @ die.rotation.T
    if not cam.in_front(pts, die.side):
        return False
    img = cam.project(pts)
    m = 2.0
    if img[:, 0].min() < m or img[:, 1].min() < m or img[:, 0].max() > cam.width - m or img[:, 1].max() > cam.height - m:
        return False
    for x0, y0, x1, y1 in stage.exclusions:
        if img[:, 0].max() > x0 and img[:, 0].min() < x1 and img[:, 1].max() > y0 and img[:, 1].min() < y1:
            return False
    tray = stage.tray
    xy = die.centre[:2] - np.asarray(tray["centre"])
    reach = die.side * 0.72
    if tray["kind"] == "round" and np.hypot(*xy) > tray["radius"] - reach + 0.02 * die.side:
        return False
    if tray["kind"] == "rect":
        a = np.radians(tray["angle"])
        lx = xy[0] * np.cos(a) + xy[1] * np.sin(a)
        ly = -xy[0] * np.sin(a) + xy[1] * np.cos(a)
        if abs(lx) > tray["half"][0] - reach + 0.02 * die.side or abs(ly) > tray["half"][1] - reach + 0.02 * die.side:
            return False
    for i, o in enumerate(placed):
        if i in skip:
            continue
        if np.hypot(*(die.centre[:2] - o.centre[:2])) < 0.72 * (die.side + o.side):
            return False
    return True


def _rest(design: DieDesign, side: float, top: int, yaw: float, xy, rng, tilt=0.0, tilt_axis=0.0) -> _Die:
    rot = geo.resting_rotation(top, yaw, tilt_axis, tilt)
    spins = tuple(int(s) for s in rng.integers(0, 4, 6))
    d = _Die(design, side, rot, np.zeros(3), spins)
    d.centre = np.array([xy[0], xy[1], geo.lowest_offset(rot, side, d.radius)])
    return d


def _wall_spot(tray: dict, rng, inset: float):
    """A point ``inset`` mm inside a random spot of the tray wall, the wall's inward normal, and its angle."""
    c = np.asarray(tray["centre"], np.float64)
    if tray["kind"] == "round":
        phi = rng.uniform(0, 2 * np.pi)
        out = np.array([np.cos(phi), np.sin(phi)])
        return c + out * (tray["radius"] - inset), -out, phi
    a = np.radians(tray["angle"])
    k = int(rng.integers(0, 4))
    axis = k % 2
    sign = 1 if k < 2 else -1
    ex, ey = np.array([np.cos(a), np.sin(a)]), np.array([-np.sin(a), np.cos(a)])
    normal_local = [ex, ey][axis] * sign
    along = [ey, ex][axis]
    half = tray["half"][axis]
    span = tray["half"][1 - axis]
    p = c + normal_local * (half - inset) + along * rng.uniform(-0.8, 0.8) * span
    return p, -normal_local, float(np.arctan2(normal_local[1], normal_local[0]))


def _place_dice(stage: _Stage, rng, designs: list[DieDesign], faces: list[str], side: float,
                allow_cocked: bool) -> list[_Die]:
    """Rest poses for dice with the given top faces: apart, touching each other, or against the wall."""
    cam = stage.camera
    corners = np.array([cam.floor_point(u, v) for u, v in ((0, 0), (cam.width, 0), (cam.width, cam.height), (0, cam.height))])
    lo, hi = corners[:, :2].min(0), corners[:, :2].max(0)
    has_wall = stage.tray["kind"] != "open"
    cock_index = -1
    if allow_cocked and rng.random() < 0.5 and (len(designs) > 1 or has_wall):
        cock_index = len(designs) - 1
    placed: list[_Die] = []
    for i, (design, face) in enumerate(zip(designs, faces)):
        top = design.layout.index(face) if face != "dot" else int(rng.choice([k for k, f in enumerate(design.layout) if f == "dot"]))
        s = side * float(rng.uniform(0.97, 1.03))
        die = None
        for attempt in range(400):
            mode = "free"
            r = rng.random()
            if i == cock_index and attempt < 200:
                mode = "cock-die" if placed and (not has_wall or r < 0.6) else "cock-wall"
            elif placed and r < 0.3:
                mode = "touch"
            elif has_wall and r < 0.5:
                mode = "wall"
            small = float(np.radians(rng.uniform(0, 2.5))) if rng.random() < 0.5 else 0.0
            if mode == "free":
                xy = rng.uniform(lo, hi)
                cand = _rest(design, s, top, rng.uniform(0, 2 * np.pi), xy, rng, small, rng.uniform(0, np.pi))
                skip = ()
            elif mode == "touch":
                j = int(rng.integers(0, len(placed)))
                o = placed[j]
                if o.cocked:
                    continue
                yaw_o = np.arctan2(o.rotation[1, 0], o.rotation[0, 0])
                k = int(rng.integers(0, 4))
                d = np.array([np.cos(yaw_o + k * np.pi / 2), np.sin(yaw_o + k * np.pi / 2)])
                xy = o.centre[:2] + d * (o.side + s) / 2 * rng.uniform(1.0, 1.04)
                cand = _rest(design, s, top, yaw_o + rng.normal(0, 0.04) + int(rng.integers(0, 4)) * np.pi / 2, xy, rng)
                skip = (j,)
            elif mode == "wall":
                spot, inward, ang = _wall_spot(stage.tray, rng, s / 2 * rng.uniform(1.02, 1.1))
                cand = _rest(design, s, top, ang + rng.normal(0, 0.05) + int(rng.integers(0, 4)) * np.pi / 2, spot, rng)
                # The die's corners must not poke through a round wall.
                if stage.tray["kind"] == "round":
                    cand.centre[:2] += inward * (s * s / (8 * stage.tray["radius"]) + 0.03 * s)
                skip = ()
            else:  # cocked: tipped 15-35 degrees, its raised side resting on a die or the wall
                theta = np.radians(rng.uniform(15, 35))
                if mode == "cock-die":
                    j = int(rng.integers(0, len(placed)))
                    o = placed[j]
                    yaw_o = np.arctan2(o.rotation[1, 0], o.rotation[0, 0])
                    k = int(rng.integers(0, 4))
                    towards = -np.array([np.cos(yaw_o + k * np.pi / 2), np.sin(yaw_o + k * np.pi / 2)])
                    base = o.centre[:2] - towards * (o.side / 2 + s / 2 * (np.cos(theta) + np.sin(theta)) * 0.97)
                    yaw = yaw_o
                    skip = (j,)
                else:
                    spot, inward, ang = _wall_spot(stage.tray, rng, s / 2 * (np.cos(theta) + np.sin(theta)) * 0.97)
                    towards, base, yaw, skip = -inward, spot, ang, ()
                # Tilt about the horizontal axis perpendicular to `towards`, raising that side.
                axis_angle = float(np.arctan2(towards[1], towards[0]) + np.pi / 2)
                cand = None
                for sign in (1, -1):
                    c = _rest(design, s, top, yaw + rng.normal(0, 0.05), base, rng, sign * theta, axis_angle)
                    pts = geo.cube_corners(s) @ c.rotation.T
                    lead = pts[np.argmax(pts[:, :2] @ towards)]
                    if lead[2] > 0:
                        cand = c
                        break
                if cand is None:
                    continue
                cand.cocked = True
                if geo.top_face_index(cand.rotation) != top:
                    continue
            if _footprint_ok(stage, cand, placed, skip):
                die = cand
                break
        if die is None:
            return []
        placed.append(die)
    return placed


# --------------------------------------------------------------------------------------------
# Drawing


def _bevel_ramp(t: int, width: float) -> np.ndarray:
    """1 at a face edge falling to 0 at ``width`` texels in, for rounded-edge shading."""
    d = np.arange(t, dtype=np.float32) + 0.5
    return np.clip(1 - d / max(width, 1.0), 0, 1) ** 2


def _face_shade(stage: _Stage, n: np.ndarray, pos: np.ndarray) -> float:
    to_light = stage.light_pos - pos
    to_light /= np.linalg.norm(to_light)
    return stage.ambient + stage.diffuse * max(0.0, float(n @ to_light))


def _in_view(cam: geo.Camera, die: _Die) -> bool:
    """Whether the whole die is in front of the lens (so that it can be projected). The stage keeps
    the lens MIN_CAMERA_SIDES die sides up, so even a die thrown high passes below it."""
    return cam.in_front(die.centre + geo.cube_corners(die.side) @ die.rotation.T)


def _floor_hull(cam: geo.Camera, ground: np.ndarray) -> np.ndarray:
    """Image polygon of the convex hull of points on the floor, clipped to what the lens sees."""
    hull = cv2.convexHull(ground[:, :2].astype(np.float32))[:, 0].astype(np.float64)
    return _image_poly(cam, np.concatenate([hull, np.zeros((len(hull), 1))], 1))


def _die_shadow(frame: np.ndarray, stage: _Stage, die: _Die) -> tuple[int, int, int, int] | None:
    """Darken the floor under and beside a die; returns the pixel box it changed (or None)."""
    cam = stage.camera
    if not _in_view(cam, die):
        return None
    pts = die.centre + geo.rounded_cube_points(die.side, die.radius) @ die.rotation.T
    ldir = stage.light_pos - die.centre
    ldir /= np.linalg.norm(ldir)
    ground = pts - (pts[:, 2:3] / max(ldir[2], 0.5)) * ldir
    ground[:, 2] = 0
    shadow = _floor_hull(cam, ground)
    low = pts[pts[:, 2] < 0.3 * die.side]
    contact = _floor_hull(cam, low) if len(low) >= 3 else shadow
    if len(shadow) < 3:
        return None
    if len(contact) < 3:
        contact = shadow
    allp = np.concatenate([shadow, contact])
    px = cam.px_per_mm(die.centre) * die.side
    soft = max(0.6, stage.shadow_soft * px)
    pad = int(3 * soft + 2 + abs(die.blur[0]) + abs(die.blur[1]))
    h, w = frame.shape[:2]
    x0, y0, x1, y1 = _roi(allp, pad, w, h)
    if x1 <= x0 or y1 <= y0:
        return None
    X0, Y0, X1, Y1 = x0, y0, x1, y1
    m = np.zeros((y1 - y0, x1 - x0), np.float32)
    hull = cv2.convexHull(((shadow - [x0, y0]) * 16).astype(np.int32))
    cv2.fillConvexPoly(m, hull, stage.shadow_strength, cv2.LINE_AA, 4)
    m = _blur(m, soft)
    c = np.zeros_like(m)
    hull = cv2.convexHull(((contact - [x0, y0]) * 16).astype(np.int32))
    cv2.fillConvexPoly(c, hull, 0.55, cv2.LINE_AA, 4)
    c = _blur(c, max(0.6, 0.06 * px))
    m = np.maximum(m, c)
    if abs(die.blur[0]) + abs(die.blur[1]) > 1.5:
        m = motion_blur(m, die.blur)
    roi = frame[Y0:Y1, X0:X1].astype(np.float32)
    if die.design.translucent:  # light through a coloured die: a weaker, tinted shadow
        tint = np.asarray(die.design.body, np.float32) / 255
        roi *= 1 - 0.6 * m[..., None] * (1 - 0.7 * tint / max(tint.max(), 1e-3))
    else:
        roi *= (1 - m)[..., None]
    frame[Y0:Y1, X0:X1] = np.clip(roi, 0, 255).astype(np.uint8)
    return X0, Y0, X1, Y1


def _roi(points: np.ndarray, pad: float, w: int, h: int) -> tuple[int, int, int, int]:
    """Pixel box around ``points`` grown by ``pad``, clipped to the frame (may be empty)."""
    x0 = max(0, int(np.floor(points[:, 0].min() - pad)))
    y0 = max(0, int(np.floor(points[:, 1].min() - pad)))
    x1 = min(w, int(np.ceil(points[:, 0].max() + pad)))
    y1 = min(h, int(np.ceil(points[:, 1].max() + pad)))
    return x0, y0, x1, y1


def _clamp(points: np.ndarray, w: int, h: int) -> np.ndarray:
    """Keep far off-frame points in a range that fixed-point drawing can handle."""
    return np.clip(points, [-4 * w, -4 * h], [5 * w, 5 * h])


def _blur(m: np.ndarray, sigma: float) -> np.ndarray:
    """Gaussian blur; wide blurs run on a downscaled copy (shadows are smooth)."""
    if sigma < 4:
        return cv2.GaussianBlur(m, (0, 0), sigma)
    f = 2.0 / sigma
    h, w = m.shape[:2]
    small = cv2.resize(m, (max(2, int(w * f)), max(2, int(h * f))), interpolation=cv2.INTER_AREA)
    return cv2.resize(cv2.GaussianBlur(small, (0, 0), 2.0), (w, h), interpolation=cv2.INTER_LINEAR)


TEXTURE_SIZES = (24, 32, 48, 64, 96, 128, 192, 256, 384, 512)


def _texture_size(px: float) -> int:
    """The texture side for a face drawn ``px`` pixels wide: a little larger, from a few fixed sizes
    (so that cached textures are reused)."""
    for t in TEXTURE_SIZES:
        if t >= 1.1 * px:
            return t
    return TEXTURE_SIZES[-1]


def _draw_die(frame: np.ndarray, stage: _Stage, die: _Die) -> tuple[int, int, int, int] | None:
    """Draw a die; returns the pixel box it changed (or None)."""
    cam = stage.camera
    if not _in_view(cam, die):
        return None
    R, c, s = die.rotation, die.centre, die.side
    sil = cam.project(c + geo.rounded_cube_points(s, die.radius) @ R.T)
    h, w = frame.shape[:2]
    x0, y0, x1, y1 = _roi(sil, max(abs(die.blur[0]), abs(die.blur[1])) / 2 + 2, w, h)
    if x1 <= x0 or y1 <= y0:
        return None
    X0, Y0, X1, Y1 = x0, y0, x1, y1
    sil = _clamp(sil, w, h)
    cw, ch = x1 - x0, y1 - y0
    canvas = np.zeros((ch, cw, 3), np.float32)
    op_canvas = np.ones((ch, cw), np.float32)
    normals = geo.FACE_NORMALS @ R.T
    shades = [_face_shade(stage, normals[i], c + normals[i] * s / 2) for i in range(6)]
    faces = []
    for i in range(6):
        centre = c + normals[i] * s / 2
        view = cam.position - centre
        if normals[i] @ view > 0:
            faces.append((float(np.linalg.norm(view)), i))
    faces.sort(reverse=True)
    px = cam.px_per_mm(c) * s
    to_light = stage.light_pos - c
    to_light /= np.linalg.norm(to_light)
    cam_h = cam.position[2]
    for _, i in faces:
        label = die.design.layout[i]
        face_px = cam.project(c + geo.face_corners(i, s) @ R.T)
        # Each face's texture at the size the face is drawn (a near top face is larger than px).
        t = _texture_size(float(np.linalg.norm(face_px - np.roll(face_px, 1, axis=0), axis=1).max()))
        tex_pts = np.float32([[0, 0], [t, 0], [t, t], [0, t]])
        ramp = _bevel_ramp(t, t * (die.design.rounding + 0.06))
        u, v = geo.FACE_U[i] @ R.T, geo.FACE_V[i] @ R.T
        lq = int(np.round(np.arctan2(-(to_light @ v), to_light @ u) / (np.pi / 4))) % 8
        tex, opacity = face_texture(die.design, label, t, die.spins[i], lq)
        base = shades[i]
        left, right, top, bottom = geo.NEIGHBOURS[i]
        mids = []
        for nb in (left, right, top, bottom):
            nrm = normals[i] + normals[nb]
            nrm /= np.linalg.norm(nrm)
            mids.append(stage.ambient + stage.diffuse * max(0.0, float(nrm @ to_light)) - base)
        shade = base + ramp[None, :] * mids[0] + ramp[::-1][None, :] * mids[1] + ramp[:, None] * mids[2] + ramp[::-1][:, None] * mids[3]
        shade = shade - 0.12 * np.maximum(ramp[None, :], ramp[:, None]) * np.maximum(ramp[::-1][None, :], ramp[::-1][:, None])
        lit = tex * shade[..., None]
        # Glare: the mirror image of the lamp in a level top face (where the lamp reflects into the lens).
        if normals[i][2] > 0.9 and die.design.gloss > 0:
            zt = (c + normals[i] * s / 2)[2]
            hl, hc = stage.light_pos[2] - zt, cam_h - zt
            mirror = (cam.position[:2] * hl + stage.light_pos[:2] * hc) / (hl + hc)
            corner0 = c + geo.face_corners(i, s) @ R.T
            rel = mirror - corner0[0][:2]
            gx = float(rel @ (u[:2] / max(np.linalg.norm(u[:2]), 1e-6))) / s * t
            gy = float(-(rel @ (v[:2] / max(np.linalg.norm(v[:2]), 1e-6)))) / s * t
            sig = stage.glare_radius / s * t
            if -3 * sig < gx < t + 3 * sig and -3 * sig < gy < t + 3 * sig:
                ax = np.arange(t, dtype=np.float32) + 0.5
                g = np.exp(-((ax - gx) ** 2) / (2 * sig * sig))[None, :] * np.exp(-((ax - gy) ** 2) / (2 * sig * sig))[:, None]
                lit = lit + (g * 255 * stage.glare_strength * die.design.gloss)[..., None]
        corners = _clamp(face_px, w, h) - [x0, y0]
        # Grow each face by half a pixel so that neighbouring faces leave no seam between them.
        mid = corners.mean(0)
        grow = corners + (corners - mid) * (0.7 / max(1.0, float(np.linalg.norm(corners - mid, axis=1).max())))
        H = cv2.getPerspectiveTransform(tex_pts, grow.astype(np.float32))
        cv2.warpPerspective(lit, H, (cw, ch), dst=canvas, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_TRANSPARENT)
        if opacity is not None:
            cv2.warpPerspective(opacity, H, (cw, ch), dst=op_canvas, flags=cv2.INTER_LINEAR,
                                borderMode=cv2.BORDER_TRANSPARENT)
    alpha = np.zeros((ch, cw), np.float32)
    hull = cv2.convexHull(((sil - [x0, y0]) * 16).astype(np.int32))
    cv2.fillConvexPoly(alpha, hull, 1.0, cv2.LINE_AA, 4)
    colour = canvas
    roi = frame[Y0:Y1, X0:X1].astype(np.float32)
    full_bg = np.zeros((ch, cw, 3), np.float32)
    full_bg[Y0 - y0 : Y1 - y0, X0 - x0 : X1 - x0] = roi
    if die.design.translucent:
        # See-through body: the tray shows through, tinted by the plastic, blurred by its depth,
        # plus light scattered inside the die.
        op = op_canvas[..., None]
        tint = np.asarray(die.design.body, np.float32) / max(max(die.design.body), 1)
        behind = cv2.GaussianBlur(full_bg, (0, 0), max(0.8, 0.05 * px)) * tint * 0.75
        glow = np.asarray(die.design.body, np.float32) * 0.2
        colour = op * colour + (1 - op) * (behind + glow)
    premult = colour * alpha[..., None]
    if abs(die.blur[0]) + abs(die.blur[1]) > 1.5:
        both = motion_blur(np.dstack([premult, alpha]), die.blur)
        premult, alpha = both[..., :3], both[..., 3]
    out = full_bg * (1 - alpha[..., None]) + premult
    frame[Y0:Y1, X0:X1] = np.clip(out[Y0 - y0 : Y1 - y0, X0 - x0 : X1 - x0], 0, 255).astype(np.uint8)
    return X0, Y0, X1, Y1


def _truth(stage: _Stage, die: _Die) -> RenderedDie:
    cam = stage.camera
    top = geo.top_face_index(die.rotation)
    corners = cam.project(die.centre + geo.face_corners(top, die.side) @ die.rotation.T).astype(np.float32)
    x0, y0 = corners.min(0)
    x1, y1 = corners.max(0)
    box = (float(max(0.0, x0)), float(max(0.0, y0)), float(min(cam.width, x1)), float(min(cam.height, y1)))
    return RenderedDie(face=die.design.layout[top], box=tuple(round(b, 1) for b in box), corners=corners,
                       cocked=die.cocked, design=die.design.name)


def _draw_dice(frame: np.ndarray, stage: _Stage, dice: list[_Die]) -> list[tuple[int, int, int, int]]:
    """Shadows, then dice from the farthest to the nearest; returns the pixel boxes they changed."""
    cam = stage.camera
    order = sorted(dice, key=lambda d: -float(cam.depth(d.centre[None])[0]))
    boxes = [_die_shadow(frame, stage, d) for d in order]
    boxes += [_draw_die(frame, stage, d) for d in order]
    return [b for b in boxes if b is not None]


def _light(stage: _Stage, raw: np.ndarray, box=None) -> np.ndarray:
    """Lens defocus and the light field (gain) of ``raw``, float32, for the whole frame or a pixel box.

    A box is blurred with a margin wide enough for the blur kernel, so that it matches the same
    box of the whole frame blurred."""
    h, w = raw.shape[:2]
    x0, y0, x1, y1 = box or (0, 0, w, h)
    if stage.blur_sigma > 0.3:
        r = int(np.ceil(4 * stage.blur_sigma)) + 1
        X0, Y0, X1, Y1 = max(0, x0 - r), max(0, y0 - r), min(w, x1 + r), min(h, y1 + r)
        src = cv2.GaussianBlur(raw[Y0:Y1, X0:X1], (0, 0), stage.blur_sigma)[y0 - Y0 : y1 - Y0, x0 - X0 : x1 - X0]
    else:
        src = raw[y0:y1, x0:x1]
    return cv2.multiply(src, stage.gain[y0:y1, x0:x1], dtype=cv2.CV_32F)


def _background(stage: _Stage) -> _Plate:
    if stage.plate is None:
        stage.plate = _Plate(stage.background, _light(stage, stage.background))
    return stage.plate


def _still(stage: _Stage, base: _Plate, dice: list[_Die]) -> _Plate:
    """A plate with dice that no longer move drawn (and lit) on it."""
    raw = base.raw.copy()
    lit = base.lit.copy()
    for x0, y0, x1, y1 in _draw_dice(raw, stage, dice):
        lit[y0:y1, x0:x1] = _light(stage, raw, (x0, y0, x1, y1))
    return _Plate(raw, lit)


def _compose(stage: _Stage, dice: list[_Die], rng, hand=None, base: _Plate | None = None
             ) -> tuple[np.ndarray, np.ndarray | None]:
    """One camera frame: dice (and a hand) drawn on a plate (the stage's background by default),
    then light and camera effects."""
    base = base or _background(stage)
    raw = base.raw.copy()
    boxes = _draw_dice(raw, stage, dice)
    hand_mask = None
    if hand is not None:
        hand_mask, box = draw_hand(raw, **hand)
        if box is not None:
            boxes.append(box)
    return _finish(stage, rng, base, raw, boxes), hand_mask


def _finish(stage: _Stage, rng, base: _Plate, raw: np.ndarray, boxes) -> np.ndarray:
    """The camera's picture of ``raw``: the base plate's lit pixels, relit inside ``boxes`` (where
    ``raw`` differs from the plate), plus this frame's sensor noise and JPEG loss."""
    h, w = raw.shape[:2]
    noise = fine_noise(rng, h, w, 3) if stage.noise_sigma > 0 else None

    def expose(lit, y0, y1, x0, x1):  # noise, then rounded and saturated to 8 bits
        if noise is None:
            return cv2.addWeighted(lit, 1.0, lit, 0.0, 0.0, dtype=cv2.CV_8U)
        return cv2.addWeighted(lit, 1.0, noise[y0:y1, x0:x1], stage.noise_sigma, 0.0, dtype=cv2.CV_8U)

    out = expose(base.lit, 0, h, 0, w)
    for x0, y0, x1, y1 in boxes:
        if x1 > x0 and y1 > y0:
            out[y0:y1, x0:x1] = expose(_light(stage, raw, (x0, y0, x1, y1)), y0, y1, x0, x1)
    if stage.jpeg_quality:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(stage.jpeg_quality)])
        out = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return out


def _designs_for(rng, kind: str, n: int, pool: str, ivory: bool, faces=None) -> list[DieDesign]:
    """One design per die. Dice in a scene usually come from one set; mixed scenes mix sets."""
    def kind_of(face: str | None) -> str:
        if face is None:
            return str(rng.choice(["pip", "lcr", "wild"], p=[0.5, 0.3, 0.2])) if kind == "mixed" else kind
        if face in PIP_FACES:
            return "pip"
        return "wild" if face == "W" or kind == "wild" else "lcr"

    kinds = [kind_of(None if faces is None else faces[i]) for i in range(n)]
    sets: dict[str, DieDesign] = {}
    out = []
    for k in kinds:
        body = IVORY[pool] if ivory else None
        if k not in sets or rng.random() < (0.5 if kind == "mixed" else 0.12):
            sets[k] = random_design(rng, k, pool, body)
        out.append(sets[k])
    return out


def _validate_faces(faces, kind: str) -> list[str]:
    allowed = {"pip": PIP_FACES, "lcr": ("L", "C", "R", "dot"), "wild": LCR_FACES,
               "mixed": PIP_FACES + LCR_FACES}[kind]
    out = []
    for i, f in enumerate(faces):
        if str(f) not in allowed:
            raise ValueError(f"face {i + 1} is {f!r}, which a {kind} die cannot show (allowed: {', '.join(allowed)})")
        out.append(str(f))
    if not out:
        raise ValueError("faces must name at least one die")
    return out


def _scene_setup(rng, size, n_dice, kind, pool, preset, faces, allow_cocked):
    p = _check(kind, pool, preset)
    if size is None:
        size = p["size"] if p else (1280, 960)
    w, h = int(size[0]), int(size[1])
    if w < 64 or h < 64:
        raise ValueError(f"size must be at least 64x64 pixels, not {w}x{h}")
    if faces is not None:
        faces = _validate_faces(faces, kind)
        n = len(faces)
    else:
        a, b = _parse_n(n_dice)
        n = int(rng.integers(a, b + 1))
    for attempt in range(30):
        stage, side, die_px = _make_stage(rng, (w, h), n, pool, p, preset)
        designs = _designs_for(rng, kind, n, pool, bool(p and p.get("ivory")), faces)
        want = faces or [str(rng.choice(d.layout)) for d in designs]
        dice = _place_dice(stage, rng, designs, want, side, allow_cocked)
        if dice:
            break
    else:
        raise ValueError(f"could not place {n} dice in a {w}x{h} frame; ask for fewer dice or a larger size")
    stage.style.update(kind=kind, designs=[d.name for d in designs],
                       fonts=sorted({d.font for d in designs if d.font}))
    return stage, dice


def random_scene(rng: np.random.Generator, *, size=None, n_dice=(1, 3), kind: str = "pip",
                 pool: str = "train", preset: str | None = None, allow_cocked: bool = False,
                 occluder: str | None = None) -> RenderedScene:
    """A random labelled scene.

    ``size`` (width, height) defaults to 1280x960 or the preset's size; ``n_dice`` is a count or an
    inclusive range; ``kind`` is "pip", "lcr", "wild" (LCR dice with a W face) or "mixed";
    ``pool`` picks disjoint sets of fonts, die colours and surfaces ("train" or "holdout");
    ``preset`` a named look (see :data:`PRESETS`; it fixes the tray, camera and effects, the pool
    still decides fonts and colours); ``allow_cocked`` lets one die lean on another or the wall;
    ``occluder="hand"`` puts a hand over part of the tray (``style["occluder"]`` says where and
    which dice it covers).
    """
    if occluder not in (None, "hand"):
        raise ValueError(f"occluder must be None or 'hand', not {occluder!r}")
    stage, dice = _scene_setup(rng, size, n_dice, kind, pool, preset, None, allow_cocked)
    hand = None
    truth = tuple(_truth(stage, d) for d in dice)
    if occluder == "hand":
        target = np.array(truth[int(rng.integers(0, len(truth)))].box).reshape(2, 2).mean(0)
        hand = _hand_args(stage, rng, hand_shapes(rng), target, float(rng.uniform(0, 2 * np.pi)),
                          float(rng.uniform(60, 160)))
    image, mask = _compose(stage, dice, rng, hand)
    if mask is not None:
        covered = []
        for i, t in enumerate(truth):
            poly = np.zeros_like(mask)
            cv2.fillConvexPoly(poly, np.round(t.corners).astype(np.int32), 255)
            inside = poly > 0
            if inside.any() and float((mask[inside] > 127).mean()) > 0.2:
                covered.append(i)
        ys, xs = np.nonzero(mask > 127)
        stage.style["occluder"] = {"kind": "hand", "box": [int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max())],
                                   "covers_dice": covered}
    else:
        stage.style["occluder"] = None
    return RenderedScene(image=image, dice=truth, style=stage.style)


class Table:
    """One table, as a camera over a real tray sees a night: the camera, tray, light, clutter and
    the set of dice are chosen once (from ``rng``, which the table keeps drawing from); each
    :meth:`roll` throws some of the set's dice anew, and :meth:`empty` is a picture of the empty tray.
    ``kind`` is "pip", "lcr" or "wild" (one set of dice); ``max_dice`` the most dice a roll will
    throw (the table is set up so that they fit). No die leans.

    >>> table = Table(np.random.default_rng(1), size=(160, 120), max_dice=2)
    >>> a, b = table.roll(1), table.roll(2)
    >>> table.empty().shape, len(a.dice), len(b.dice), a.style["camera"] == b.style["camera"]
    ((120, 160, 3), 1, 2, True)
    """

    def __init__(self, rng: np.random.Generator, *, size=None, max_dice: int = 3, kind: str = "lcr",
                 pool: str = "train", preset: str | None = None):
        if kind not in ("pip", "lcr", "wild"):
            raise ValueError(f"kind must be pip, lcr or wild for one table's set of dice, not {kind!r}")
        if int(max_dice) < 1:
            raise ValueError(f"max_dice must be at least 1, not {max_dice}")
        self.rng = rng
        self.stage, _ = _scene_setup(rng, size, int(max_dice), kind, pool, preset, None, False)
        self.design = _designs_for(rng, kind, 1, pool, bool(preset and PRESETS[preset].get("ivory")))[0]
        self.side = float(self.stage.style["camera"]["die_side_mm"])  # the set's die side (mm, to 0.01)
        self.max_dice = int(max_dice)

    def empty(self) -> np.ndarray:
        return _compose(self.stage, [], self.rng)[0]

    def roll(self, n_dice: int) -> RenderedScene:
        if not 1 <= n_dice <= self.max_dice:
            raise ValueError(f"this table was set up for 1 to {self.max_dice} dice, not {n_dice}")
        for _attempt in range(30):
            faces = [str(self.rng.choice(self.design.layout)) for _ in range(n_dice)]
            dice = _place_dice(self.stage, self.rng, [self.design] * n_dice, faces, self.side, False)
            if dice:
                break
        else:
            raise ValueError(f"could not place {n_dice} dice on this table")
        image, _ = _compose(self.stage, dice, self.rng)
        style = dict(self.stage.style, designs=[self.design.name] * n_dice,
                     fonts=[self.design.font] if self.design.font else [], occluder=None)
        return RenderedScene(image=image, dice=tuple(_truth(self.stage, d) for d in dice), style=style)


def _hand_args(stage: _Stage, rng, shapes: dict, palm_px, angle: float, height_mm: float, blur=(0.0, 0.0)) -> dict:
    cam = stage.camera
    centre = np.array([[*stage.tray["centre"], 0.0]])
    # A hand hovering above the tray looks bigger than the floor scale, but keep it a hand
    # (a palm a few dice wide) even when the camera is close to the tray.
    floor_scale = cam.px_per_mm(centre[0])
    scale = min(cam.focal / max(float(cam.depth(centre)[0]) - height_mm, 50.0), 1.5 * floor_scale)
    ldir = stage.light_pos / np.linalg.norm(stage.light_pos)
    a = cam.project(np.array([[0.0, 0.0, 0.0], [-ldir[0], -ldir[1], 0.0]]))
    sdir = a[1] - a[0]
    sdir /= np.linalg.norm(sdir) + 1e-9
    shadow_len = height_mm * np.hypot(ldir[0], ldir[1]) / max(ldir[2], 0.2) * cam.px_per_mm(centre[0])
    return {"shapes": shapes, "origin": (float(palm_px[0]), float(palm_px[1])), "angle": angle,
            "px_per_mm": scale, "light_dir": (float(sdir[0]), float(sdir[1])), "shadow_len": float(shadow_len),
            "blur_vec": blur}


#: The film's own frame rate: ``roll_sequence``'s times (``n_frames``, ``rest_frame``, ...) count frames of
#: 1/30 s unless ``fps`` asks for another rate.
FILM_FPS = 30.0
#: How a die may end its throw: ``"wobble"`` (it lands and rocks on its edges a few times, less each
#: time) or ``"topple"`` (it lands balanced on an edge, lingers there, and falls over flat).
ENDINGS = ("wobble", "topple")
GRAVITY_MM_S2 = 9810.0


def roll_sequence(rng: np.random.Generator, *, size=None, faces=None, kind: str = "pip", n_frames: int = 30,
                  hand: bool = False, pool: str = "train", preset: str | None = None,
                  n_dice=(1, 3), empty_frames: int = 0, fps: float = FILM_FPS,
                  ending: str | None = None) -> tuple[list[np.ndarray], RenderedScene]:
    """Frames of dice thrown into the tray, tumbling, bouncing and coming to rest, and the final truth.

    ``empty_frames``: that many frames of the empty tray (same camera, light and noise) come first,
    as a camera sees the tray before the throw; the ``sequence`` indices count them.

    Moving dice are motion-blurred. With ``hand=True`` a hand reaches over the tray after the dice
    stop and leaves before the last frames. ``faces`` forces the final top faces (and the number of
    dice). ``style["sequence"]`` of the returned scene gives ``rest_frame`` (first frame with every
    die still) and ``hand_frames`` (first and last frame showing the hand, or None).
    The returned scene's image is the last frame.

    Time: the film runs at :data:`FILM_FPS` (30) frames a second, so the dice come to rest about
    0.45 ``n_frames`` / 30 s after the first frame. ``fps`` films the same throw (the same draws: the same
    dice, path, rest and hand) at another rate: ``round(n_frames * fps / 30)`` frames, frame ``j``
    taken at ``j / fps`` s, each exposed for half its frame period; ``sequence`` then also gives
    ``fps`` and ``rest_time`` (s, when every die is still) and counts ``rest_frame`` and
    ``hand_frames`` in the frames returned. ``empty_frames`` are frames at that rate too.
    ``ending`` (one of :data:`ENDINGS`) makes one die end its throw as a real die sometimes does:
    rocking on its edges (``"wobble"``) or balanced on an edge and then falling flat (``"topple"``);
    the rest comes when that is over, and ``sequence["tilts"]`` gives that die's tilt (degrees, signed
    by the edge it leans over) in each frame.
    """
    if n_frames < 4:
        raise ValueError(f"n_frames must be at least 4, not {n_frames}")
    if not fps > 0:
        raise ValueError(f"fps must be positive, not {fps}")
    if ending is not None and ending not in ENDINGS:
        raise ValueError(f"ending must be one of {', '.join(ENDINGS)} or None, not {ending!r}")
    stage, rest = _scene_setup(rng, size, n_dice, kind, pool, preset, faces, False)
    cam = stage.camera
    n = n_frames
    rest_frame = max(2, int(round(0.45 * n)))
    throw = rng.uniform(0, 2 * np.pi)
    tdir = np.array([np.cos(throw), np.sin(throw)])
    plans = []
    for d in rest:
        stop = int(rng.integers(max(1, rest_frame - max(2, n // 6)), rest_frame + 1))
        dist = d.side * rng.uniform(4, 10)
        start = d.centre[:2] + tdir * dist + np.array([-tdir[1], tdir[0]]) * rng.normal(0, 2 * d.side)
        lift = min(d.side * rng.uniform(2, 6), 0.3 * float(cam.position[2]))
        plans.append({"stop": stop, "start": start, "lift": lift,
                      "bounces": float(rng.uniform(1.5, 3.5)), "axis": rng.normal(size=3),
                      "spin": float(rng.uniform(4, 12))})

    ends = [None] * len(plans)
    if ending is not None:
        which = int(rng.integers(0, len(rest)))
        ends[which] = _ending(ending, rest[which], rng)

    def pose(d: _Die, pl: dict, t: float, end: dict | None = None) -> _Die:
        u = min(1.0, max(0.0, t / pl["stop"]))
        g = (1 - u) ** 2
        xy = d.centre[:2] + (pl["start"] - d.centre[:2]) * g
        rot = d.rotation @ geo.rot_axis(pl["axis"], pl["spin"] * g)
        z_min = geo.lowest_offset(rot, d.side, d.radius)
        z = z_min + pl["lift"] * (1 - u) ** 1.5 * abs(np.cos(np.pi * pl["bounces"] * u ** 0.8))
        centre = np.array([xy[0], xy[1], z])
        if end is not None:
            tilt = end["tilt"](max(0.0, t - pl["stop"]) / FILM_FPS)  # radians, + over one edge, - the other
            if tilt:
                rot, centre = _tipped(d, rot, centre, end["normal"], tilt)
        return _Die(d.design, d.side, rot, centre, d.spins, d.cocked)

    hand_frames = None
    shapes = hand_shapes(rng) if hand else None
    if hand:
        first = min(n - 2, rest_frame + 1)
        last = max(first, min(n - 2, int(0.85 * n) - 1))
        hand_frames = (first, last)
        target = np.array(_truth(stage, rest[int(rng.integers(0, len(rest)))]).box).reshape(2, 2).mean(0)
        edge_angle = float(np.arctan2(*(-tdir[::-1])))  # the hand comes from the thrower's side
        img_dir = cam.project(np.array([[0, 0, 0], [tdir[0], tdir[1], 0]]))
        enter_dir = img_dir[1] - img_dir[0]
        enter_dir /= np.linalg.norm(enter_dir) + 1e-9
        far = target + enter_dir * 1.2 * max(cam.width, cam.height)
        hand_height = float(rng.uniform(60, 160))
        del edge_angle
    frames = []
    step = FILM_FPS / float(fps)  # film frames (1/30 s) per frame taken
    exposure = 0.5 * step
    still_from = [pl["stop"] + (e["duration"] * FILM_FPS if e else 0.0) for pl, e in zip(plans, ends)]
    settled = max(still_from)
    still = None  # once every die rests, the dice are drawn and lit once for all later frames
    tilts = []  # degrees, frame by frame, of the die that ends its throw so
    for j in range(max(4, int(round(n * fps / FILM_FPS)))):
        k = j * step  # the film's time, in its frames
        for pl, e in zip(plans, ends):
            if e is not None:
                tilts.append(round(math.degrees(e["tilt"](max(0.0, k - pl["stop"]) / FILM_FPS)), 2))
        dice_k = []
        for d, pl, e, done in zip(rest, plans, ends, still_from):
            now = pose(d, pl, k, e)
            before = pose(d, pl, k - exposure, e)
            p1 = cam.project(now.centre[None])[0]
            p0 = cam.project(before.centre[None])[0]
            now.blur = (float(p1[0] - p0[0]), float(p1[1] - p0[1])) if k < done else (0.0, 0.0)
            dice_k.append(now)
        hand_args = None
        if hand and hand_frames[0] <= k <= hand_frames[1]:
            span = max(1, hand_frames[1] - hand_frames[0])
            u = (k - hand_frames[0]) / span

            def at(uu):
                # In for the first third, hovering, out for the last third.
                a = min(1.0, uu * 3) if uu < 0.5 else min(1.0, (1 - uu) * 3)
                a = 1 - (1 - a) ** 2
                return far + (target - far) * a

            pos, prev = at(u), at(max(0.0, u - exposure / span))
            ang = float(np.arctan2(*(-enter_dir)[::-1]))
            hand_args = _hand_args(stage, rng, shapes, pos, ang, hand_height, tuple(float(x) for x in pos - prev))
        if k >= settled:
            still = still or _still(stage, _background(stage), dice_k)
            img, _ = _compose(stage, [], rng, hand_args, base=still)
        else:
            img, _ = _compose(stage, dice_k, rng, hand_args)
        frames.append(img)
    rest_time = settled / FILM_FPS
    settled = math.ceil(settled / step - 1e-9)  # in the frames taken
    if hand_frames:
        hand_frames = (math.ceil(hand_frames[0] / step - 1e-9), math.floor(hand_frames[1] / step + 1e-9))
    if empty_frames:
        frames = [_compose(stage, [], rng, None)[0] for _ in range(int(empty_frames))] + frames
        settled += int(empty_frames)
        rest_time += int(empty_frames) / float(fps)
        hand_frames = tuple(k + int(empty_frames) for k in hand_frames) if hand_frames else None
    stage.style["sequence"] = {"n_frames": len(frames), "rest_frame": settled,
                               "hand_frames": list(hand_frames) if hand_frames else None,
                               "fps": float(fps), "rest_time": rest_time, "ending": ending,
                               "tilts": [0.0] * int(empty_frames) + tilts if ending else None}
    stage.style["occluder"] = None
    truth = tuple(_truth(stage, d) for d in rest)
    return frames, RenderedScene(image=frames[-1], dice=truth, style=stage.style)


def _ending(kind: str, die: _Die, rng) -> dict:
    """How one die ends its throw, as a tilt over its edges in time (s after it lands).

    ``wobble``: it lands moving and rocks over one edge and the other, 4-8 times a second, from
    8-15 degrees, losing amplitude with a time constant of 0.08-0.15 s, until under 0.3 degree.
    ``topple``: it lands leaning on an edge, 0.5-2 degrees off balance, and falls as a cube over
    an edge does (the angle off balance grows as cosh(lambda t), lambda = sqrt(3 g / (2 sqrt(2) side)),
    about 25 /s for a 16 mm die), until flat.
    """
    sideways = [v for v in die.rotation.T if abs(v[2]) < 0.5]  # the die's local axes that lie level
    normal = np.array([*sideways[int(rng.integers(0, len(sideways)))][:2], 0.0])
    normal /= np.linalg.norm(normal) + 1e-12
    if kind == "wobble":
        f, a0, tau = float(rng.uniform(4, 8)), np.radians(float(rng.uniform(8, 15))), float(rng.uniform(0.08, 0.15))
        duration = tau * math.log(a0 / np.radians(0.3))

        def tilt(s: float) -> float:
            return a0 * math.exp(-s / tau) * math.sin(2 * math.pi * f * s) if s < duration else 0.0
    else:
        lam = math.sqrt(3 * GRAVITY_MM_S2 / (2 * math.sqrt(2) * die.side))
        off = np.radians(float(rng.uniform(0.5, 2.0)))
        duration = math.acosh(math.pi / 4 / off) / lam

        def tilt(s: float) -> float:
            return max(0.0, math.pi / 4 - off * math.cosh(lam * min(s, duration)))
    return {"tilt": tilt, "duration": duration, "normal": normal}


def _tipped(die: _Die, rot: np.ndarray, centre: np.ndarray, normal: np.ndarray, tilt: float):
    """The die turned by ``tilt`` over its bottom edge on the side of ``normal`` (the other side when
    negative): its rotation and centre, the edge kept on the floor."""
    if tilt < 0:
        normal, tilt = -normal, -tilt
    axis = np.cross([0.0, 0.0, 1.0], normal)
    turn = geo.rot_axis(axis, tilt)
    floor = geo.lowest_offset(rot, die.side, die.radius)
    lift = centre[2] - floor  # in the air while it bounces
    pivot = np.array([centre[0], centre[1], 0.0]) + normal * die.side / 2
    moved = pivot + turn @ (np.array([centre[0], centre[1], floor]) - pivot)
    rot = turn @ rot
    moved[2] = geo.lowest_offset(rot, die.side, die.radius) + lift
    return rot, moved


def write_roll_folder(out_dir, scenes, *, jpeg_quality: int = 90) -> None:
    """Write scenes as a labelled roll folder: ``images/NNNN.jpg`` and ``labels.jsonl``.

    Each label line has ``image``, ``faces``, ``boxes`` (whole-die top-face boxes, same order as
    faces), plus ``corners`` and ``cocked`` per die and the scene's ``style``.
    """
    out = pathlib.Path(out_dir)
    (out / "images").mkdir(parents=True, exist_ok=True)
    lines = []
    for i, scene in enumerate(scenes):
        name = f"images/{i:04d}.jpg"
        ok = cv2.imwrite(str(out / name), scene.image, [cv2.IMWRITE_JPEG_QUALITY, int(jpeg_quality)])
        if not ok:
            raise OSError(f"could not write {out / name}")
        lines.append(json.dumps({
            "image": name,
            "faces": [d.face for d in scene.dice],
            "boxes": [[round(float(v), 1) for v in d.box] for d in scene.dice],
            "corners": [np.round(d.corners.astype(np.float64), 1).tolist() for d in scene.dice],
            "cocked": [bool(d.cocked) for d in scene.dice],
            "style": scene.style,
        }))
    (out / "labels.jsonl").write_text("".join(line + "\n" for line in lines))
