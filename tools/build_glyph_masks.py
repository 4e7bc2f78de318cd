"""Rasterise the LCR-die glyphs (L, C, R, W and a star) of real fonts into a small mask asset.

Run once (needs Pillow and the Debian font packages fonts-dejavu-core, fonts-liberation,
fonts-freefont-ttf, fonts-urw-base35)::

    .venv/bin/python tools/build_glyph_masks.py

It writes ``lcr_pi/vision/assets/glyphs.npz``: for every font, a ``(5, 96, 96)`` uint8 array of
coverage masks in the order of :data:`GLYPHS` (key ``font/<name>``), and ``pool/<name>`` naming its
pool ("train" or "holdout"). A glyph the font lacks (many fonts have no star) is stored as all zeros;
the renderer then draws a procedural star instead. The renderer itself never needs Pillow.

Every glyph is scaled so that the font's cap height of "L" fills :data:`CAP` pixels, keeping the
font's own proportions (a wide W stays wide, a serif C keeps its serifs), and centred in the mask.
OpenCV's built-in putText font is rasterised here too, with cv2.putText, so that all glyphs come from
one place.
"""

from __future__ import annotations

import pathlib
import sys

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

GLYPHS = ("L", "C", "R", "W", "\u2605")
SIZE = 96
CAP = 66

TTF = "/usr/share/fonts/truetype"
OTF = "/usr/share/fonts/opentype/urw-base35"
# name -> (file, pool). Train and holdout differ in family, not just in weight, so that a reader
# measured on the holdout pool has never seen those letter shapes.
FONTS = {
    "dejavu-sans-bold": (f"{TTF}/dejavu/DejaVuSans-Bold.ttf", "train"),
    "dejavu-sans": (f"{TTF}/dejavu/DejaVuSans.ttf", "train"),
    "liberation-serif-bold": (f"{TTF}/liberation/LiberationSerif-Bold.ttf", "train"),
    "liberation-serif": (f"{TTF}/liberation/LiberationSerif-Regular.ttf", "train"),
    "freesans-bold": (f"{TTF}/freefont/FreeSansBold.ttf", "train"),
    "urw-gothic-demi": (f"{OTF}/URWGothic-Demi.otf", "train"),
    "liberation-sans-bold": (f"{TTF}/liberation/LiberationSans-Bold.ttf", "holdout"),
    "liberation-sans-narrow-bold": (f"{TTF}/liberation/LiberationSansNarrow-Bold.ttf", "holdout"),
    "dejavu-serif-bold": (f"{TTF}/dejavu/DejaVuSerif-Bold.ttf", "holdout"),
    "freeserif-bold": (f"{TTF}/freefont/FreeSerifBold.ttf", "holdout"),
    "urw-bookman-demi": (f"{OTF}/URWBookman-Demi.otf", "holdout"),
    "c059-bold": (f"{OTF}/C059-Bold.otf", "holdout"),
}
# OpenCV's built-in putText font (in OpenCV 5 the HERSHEY_* names all draw one rounded sans face,
# not the old stroke fonts), at two weights; both in train.
HERSHEY = {
    "opencv-sans": (cv2.FONT_HERSHEY_SIMPLEX, 16, "train"),
    "opencv-sans-light": (cv2.FONT_HERSHEY_SIMPLEX, 7, "train"),
}


def _fit(mask: np.ndarray, scale: float) -> np.ndarray:
    """Scale a tight glyph mask by ``scale`` and centre it in a SIZE x SIZE canvas."""
    ys, xs = np.nonzero(mask > 8)
    if len(xs) == 0:
        return np.zeros((SIZE, SIZE), np.uint8)
    crop = mask[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1].astype(np.float32)
    h, w = crop.shape
    scale = min(scale, (SIZE - 6) / max(h, w))
    nh, nw = max(1, round(h * scale)), max(1, round(w * scale))
    small = cv2.resize(crop, (nw, nh), interpolation=cv2.INTER_AREA)
    out = np.zeros((SIZE, SIZE), np.float32)
    y0, x0 = (SIZE - nh) // 2, (SIZE - nw) // 2
    out[y0 : y0 + nh, x0 : x0 + nw] = small
    return np.clip(out, 0, 255).astype(np.uint8)


def _ttf_masks(path: str) -> np.ndarray:
    font = ImageFont.truetype(path, 400)

    def raster(ch: str) -> np.ndarray:
        left, top, right, bottom = font.getbbox(ch)
        img = Image.new("L", (right - left + 20, bottom - top + 20), 0)
        ImageDraw.Draw(img).text((10 - left, 10 - top), ch, font=font, fill=255)
        return np.asarray(img)

    missing = raster("\U0010fffd")  # the font's .notdef box
    cap = raster("L")
    cap_h = np.ptp(np.nonzero(cap > 8)[0]) + 1
    out = []
    for ch in GLYPHS:
        m = raster(ch)
        if m.shape == missing.shape and np.array_equal(m, missing):
            out.append(np.zeros((SIZE, SIZE), np.uint8))
        else:
            out.append(_fit(m, CAP / cap_h))
    return np.stack(out)


def _hershey_masks(face: int, thickness: int) -> np.ndarray:
    def raster(ch: str) -> np.ndarray:
        img = np.zeros((400, 400), np.uint8)
        cv2.putText(img, ch, (60, 320), face, 8.0, 255, thickness, cv2.LINE_AA)
        return img

    cap = raster("L")
    cap_h = np.ptp(np.nonzero(cap > 8)[0]) + 1
    # The built-in font has no star: leave it empty so the renderer draws a polygon star.
    return np.stack([_fit(raster(ch), CAP / cap_h) for ch in GLYPHS[:4]] + [np.zeros((SIZE, SIZE), np.uint8)])


def main(out: str = "lcr_pi/vision/assets/glyphs.npz") -> int:
    arrays: dict[str, np.ndarray] = {"glyphs": np.array(GLYPHS)}
    for name, (path, pool) in FONTS.items():
        if not pathlib.Path(path).exists():
            print(f"missing font file {path}: apt-get install fonts-dejavu-core fonts-liberation "
                  "fonts-freefont-ttf fonts-urw-base35", file=sys.stderr)
            return 1
        arrays[f"font/{name}"] = _ttf_masks(path)
        arrays[f"pool/{name}"] = np.array(pool)
    for name, (face, thickness, pool) in HERSHEY.items():
        arrays[f"font/{name}"] = _hershey_masks(face, thickness)
        arrays[f"pool/{name}"] = np.array(pool)
    np.savez_compressed(out, **arrays)
    print(f"wrote {out}: {len(FONTS) + len(HERSHEY)} fonts, {pathlib.Path(out).stat().st_size // 1024} KB")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
