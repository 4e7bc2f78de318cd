"""Rasterise the LCR-die glyphs (L, C, R, W and a star) of real fonts into a small mask asset.

Run once (needs Pillow and the Debian font packages of :data:`FONT_PACKAGES`)::

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
OTF = "/usr/share/fonts/opentype"
GYRE = "/usr/share/texmf/fonts/opentype/public/tex-gyre"
# name -> (file, pool). Train and holdout differ in family, not just in weight, so that a reader
# measured on the holdout pool has never seen those letter shapes. The first twelve are the
# original pools (2026-11-28); the rest (2026-12-02) widen the train pool only, so that the
# reader learns L, C, R and W as letters rather than as eight fonts' shapes.
FONTS = {
    "dejavu-sans-bold": (f"{TTF}/dejavu/DejaVuSans-Bold.ttf", "train"),
    "dejavu-sans": (f"{TTF}/dejavu/DejaVuSans.ttf", "train"),
    "liberation-serif-bold": (f"{TTF}/liberation/LiberationSerif-Bold.ttf", "train"),
    "liberation-serif": (f"{TTF}/liberation/LiberationSerif-Regular.ttf", "train"),
    "freesans-bold": (f"{TTF}/freefont/FreeSansBold.ttf", "train"),
    "urw-gothic-demi": (f"{OTF}/urw-base35/URWGothic-Demi.otf", "train"),
    "liberation-sans-bold": (f"{TTF}/liberation/LiberationSans-Bold.ttf", "holdout"),
    "liberation-sans-narrow-bold": (f"{TTF}/liberation/LiberationSansNarrow-Bold.ttf", "holdout"),
    "dejavu-serif-bold": (f"{TTF}/dejavu/DejaVuSerif-Bold.ttf", "holdout"),
    "freeserif-bold": (f"{TTF}/freefont/FreeSerifBold.ttf", "holdout"),
    "urw-bookman-demi": (f"{OTF}/urw-base35/URWBookman-Demi.otf", "holdout"),
    "c059-bold": (f"{OTF}/urw-base35/C059-Bold.otf", "holdout"),
}
# The wider train pool. Left out on purpose, as near copies of a holdout family's letters:
# TeX Gyre Schola (C059), TeX Gyre Bonum and URW Bookman's other weights (Bookman), DejaVu Serif's
# other styles, FreeSerif's, Nimbus Roman and TeX Gyre Termes (Times, as FreeSerif), Liberation
# Sans's, Nimbus Sans (Narrow) and TeX Gyre Heros (Cn) (Helvetica, as Liberation Sans (Narrow)).
WIDER_TRAIN = {
    # sans serif: grotesque, humanist, geometric, rounded, condensed
    "noto-sans": f"{TTF}/noto/NotoSans-Regular.ttf",
    "noto-sans-bold": f"{TTF}/noto/NotoSans-Bold.ttf",
    "noto-sans-display-bold": f"{TTF}/noto/NotoSansDisplay-Bold.ttf",
    "roboto": f"{TTF}/roboto/unhinted/RobotoTTF/Roboto-Regular.ttf",
    "roboto-bold": f"{TTF}/roboto/unhinted/RobotoTTF/Roboto-Bold.ttf",
    "roboto-black": f"{TTF}/roboto/unhinted/RobotoTTF/Roboto-Black.ttf",
    "roboto-bold-italic": f"{TTF}/roboto/unhinted/RobotoTTF/Roboto-BoldItalic.ttf",
    "roboto-condensed-bold": f"{TTF}/roboto/unhinted/RobotoCondensed-Bold.ttf",
    "open-sans-semibold": f"{TTF}/open-sans/OpenSans-Semibold.ttf",
    "open-sans-extrabold": f"{TTF}/open-sans/OpenSans-ExtraBold.ttf",
    "open-sans-condensed-bold": f"{TTF}/open-sans/OpenSans-CondBold.ttf",
    "lato": f"{TTF}/lato/Lato-Regular.ttf",
    "lato-black": f"{TTF}/lato/Lato-Black.ttf",
    "lato-bold-italic": f"{TTF}/lato/Lato-BoldItalic.ttf",
    "cantarell": f"{OTF}/cantarell/Cantarell-Regular.otf",
    "cantarell-bold": f"{OTF}/cantarell/Cantarell-Bold.otf",
    "carlito-bold": f"{TTF}/crosextra/Carlito-Bold.ttf",
    "pt-sans": f"{TTF}/paratype/PTS55F.ttf",
    "pt-sans-bold": f"{TTF}/paratype/PTS75F.ttf",
    "pt-sans-narrow-bold": f"{TTF}/paratype/PTN77F.ttf",
    "dejavu-sans-condensed-bold": f"{TTF}/dejavu/DejaVuSansCondensed-Bold.ttf",
    "freesans": f"{TTF}/freefont/FreeSans.ttf",
    "freesans-bold-oblique": f"{TTF}/freefont/FreeSansBoldOblique.ttf",
    "urw-gothic-book": f"{OTF}/urw-base35/URWGothic-Book.otf",
    "cabin-bold": f"{OTF}/cabin/Cabin-Bold.otf",
    "karla-bold": f"{TTF}/karla/Karla-Bold.otf",
    "clear-sans-bold": f"{TTF}/clear-sans/ClearSans-Bold.ttf",
    "manrope-bold": f"{TTF}/manrope/Manrope-Bold.ttf",
    "inter-bold": f"{OTF}/inter/Inter-Bold.otf",
    "inter-black": f"{OTF}/inter/Inter-Black.otf",
    "league-spartan-bold": f"{OTF}/league-spartan/LeagueSpartan-Bold.otf",
    "jura-bold": f"{OTF}/jura/Jura-Bold.otf",
    "dosis-bold": f"{OTF}/dosis/Dosis-Bold.otf",
    "quicksand-bold": f"{TTF}/quicksand/Quicksand-Bold.ttf",
    "comfortaa-bold": f"{TTF}/comfortaa/Comfortaa-Bold.ttf",
    "play-bold": f"{TTF}/play/Play-Bold.ttf",
    "oxygen-sans-bold": f"{TTF}/oxygen/Oxygen-Sans-Bold.ttf",
    "bebas-neue-bold": f"{OTF}/bebas-neue/BebasNeue-Bold.otf",
    "yanone-kaffeesatz-bold": f"{OTF}/yanone-kaffeesatz/YanoneKaffeesatz-Bold.otf",
    "universalis-bold": f"{TTF}/adf/UniversalisADFStd-Bold.otf",
    "gillius-bold": f"{TTF}/adf/GilliusADF-Bold.otf",
    "gillius-bold-cond": f"{TTF}/adf/GilliusADF-BoldCond.otf",
    "andika-bold": f"{TTF}/andika/Andika-Bold.ttf",
    "biolinum-bold": f"{OTF}/linux-libertine/LinBiolinum_RB.otf",
    # monospaced
    "dejavu-sans-mono-bold": f"{TTF}/dejavu/DejaVuSansMono-Bold.ttf",
    "liberation-mono-bold": f"{TTF}/liberation/LiberationMono-Bold.ttf",
    "freemono-bold": f"{TTF}/freefont/FreeMonoBold.ttf",
    "nimbus-mono-bold": f"{OTF}/urw-base35/NimbusMonoPS-Bold.otf",
    "fira-code-bold": f"{TTF}/firacode/FiraCode-Bold.ttf",
    "hack-bold": f"{TTF}/hack/Hack-Bold.ttf",
    "go-bold": "/usr/share/fonts/fonts-go/Go-Bold.ttf",
    "go-mono": "/usr/share/fonts/fonts-go/Go-Mono.ttf",
    "anonymous-pro-bold": f"{TTF}/anonymous-pro/Anonymous Pro B.ttf",
    # serif: old style, transitional, slab
    "noto-serif": f"{TTF}/noto/NotoSerif-Regular.ttf",
    "noto-serif-bold": f"{TTF}/noto/NotoSerif-Bold.ttf",
    "noto-serif-display-bold": f"{TTF}/noto/NotoSerifDisplay-Bold.ttf",
    "noto-serif-bold-italic": f"{TTF}/noto/NotoSerif-BoldItalic.ttf",
    "roboto-slab": f"{OTF}/roboto/slab/RobotoSlab-Regular.otf",
    "roboto-slab-bold": f"{OTF}/roboto/slab/RobotoSlab-Bold.otf",
    "pt-serif": f"{TTF}/paratype/PTF55F.ttf",
    "pt-serif-bold": f"{TTF}/paratype/PTF75F.ttf",
    "caladea-bold": f"{TTF}/crosextra/Caladea-Bold.ttf",
    "libertine": f"{OTF}/linux-libertine/LinLibertine_R.otf",
    "libertine-bold": f"{OTF}/linux-libertine/LinLibertine_RB.otf",
    "eb-garamond-bold": f"{OTF}/ebgaramond/EBGaramond12-Bold.otf",
    "charis-bold": f"{TTF}/charis/CharisSIL-Bold.ttf",
    "gentium": f"{TTF}/gentium/Gentium-R.ttf",
    "p052-bold": f"{OTF}/urw-base35/P052-Bold.otf",
    "p052-roman": f"{OTF}/urw-base35/P052-Roman.otf",
    "tex-gyre-cursor-bold": f"{GYRE}/texgyrecursor-bold.otf",
    "baskervald-bold": f"{TTF}/adf/BaskervaldADFStd-Bold.otf",
    "accanthis-bold": f"{TTF}/adf/AccanthisADFStd-Bold.otf",
    "berenis-bold": f"{TTF}/adf/BerenisADFPro-Bold.otf",
}
FONTS.update({name: (path, "train") for name, path in WIDER_TRAIN.items()})
# Debian packages that hold the files above.
FONT_PACKAGES = (
    "fonts-dejavu-core fonts-liberation fonts-freefont-ttf fonts-urw-base35 fonts-noto-core fonts-texgyre "
    "fonts-roboto-unhinted fonts-roboto-slab fonts-open-sans fonts-lato fonts-cantarell "
    "fonts-crosextra-carlito fonts-crosextra-caladea fonts-linuxlibertine fonts-ebgaramond fonts-oxygen "
    "fonts-quicksand fonts-comfortaa fonts-hack fonts-sil-gentium fonts-sil-charis fonts-sil-andika "
    "fonts-league-spartan fonts-jura fonts-dosis fonts-paratype fonts-firacode fonts-go "
    "fonts-adf-accanthis fonts-adf-gillius fonts-adf-baskervald fonts-adf-berenis fonts-adf-universalis "
    "fonts-bebas-neue fonts-cabin fonts-karla fonts-yanone-kaffeesatz fonts-play fonts-clear-sans "
    "fonts-manrope fonts-inter fonts-anonymous-pro"
)
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
            print(f"missing font file {path}: apt-get install {FONT_PACKAGES}", file=sys.stderr)
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
