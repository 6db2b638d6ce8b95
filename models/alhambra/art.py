"""What every printing of an Alhambra tile shares, drawn many ways: the price octagon, its digits, the walls, the card.

Every art style (``models/alhambra/styles.py``) draws its own buildings and grounds but puts the
cues a real set also has in the same places (``../shared/RECOGNITION.md``): the price octagon in
the bottom-right corner (centre at about 0.79 of the tile on both axes, radius about 0.135), filled
with the type's colour and carrying the price's digits; and a dark strip about a tenth of the tile
wide along each walled side. Here are those cues in several looks, the digit fonts (TrueType fonts
found on the system, OpenCV's Hershey fonts and stroke digits drawn here), and the card stock's
print grain, cut edge and glare.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

RGB = tuple[int, int, int]

# fill of the price octagon per type (RGB); every printing shares these hues
OCTAGON_RGB: dict[str, RGB] = {
    "pavilion": (125, 195, 230),
    "seraglio": (205, 55, 45),
    "arcades": (150, 95, 55),
    "chambers": (242, 240, 232),
    "garden": (75, 155, 65),
    "tower": (150, 85, 165),
}
OCTAGON_CENTRE = 0.79  # of the tile, on both axes
OCTAGON_RADIUS = 0.135  # centre to vertex, of the tile
WALL_WIDTH = 0.1  # of the tile

FONT_DIRS = (Path("/usr/share/fonts"), Path("/usr/local/share/fonts"), Path("/Library/Fonts"), Path("C:/Windows/Fonts"))
HERSHEY = {
    "simplex": cv2.FONT_HERSHEY_SIMPLEX,
    "duplex": cv2.FONT_HERSHEY_DUPLEX,
    "complex": cv2.FONT_HERSHEY_COMPLEX,
    "triplex": cv2.FONT_HERSHEY_TRIPLEX,
    "plain": cv2.FONT_HERSHEY_PLAIN,
    "script": cv2.FONT_HERSHEY_SCRIPT_SIMPLEX,
    "script-complex": cv2.FONT_HERSHEY_SCRIPT_COMPLEX,
    "complex-italic": cv2.FONT_HERSHEY_COMPLEX | cv2.FONT_ITALIC,
}


@dataclass(frozen=True)
class Font:
    """A way of drawing digits: ``kind`` is ``ttf`` (``name`` a file stem), ``hershey`` or ``stroke``."""

    kind: str
    name: str


# Fonts are split between the training styles and the held-out style, so the transfer benchmark
# also reads digits in faces it never trained on. A TrueType face missing on a machine is skipped.
TRAINING_FONTS = (
    *(
        Font("ttf", stem)
        for stem in (
            "DejaVuSans-Bold",
            "DejaVuSans",
            "DejaVuSans-BoldOblique",
            "DejaVuSansCondensed-Bold",
            "DejaVuSerif",
            "DejaVuSerif-Bold",
            "DejaVuSerif-Italic",
            "DejaVuSerifCondensed-Bold",
            "DejaVuSansMono-Bold",
            "LiberationSans-Bold",
            "LiberationSans-Regular",
            "LiberationSansNarrow-Bold",
            "LiberationMono-Bold",
            "DejaVuSerifCondensed-Italic",
            "DejaVuSansCondensed-BoldOblique",
            "DejaVuSansMono-BoldOblique",
            "DejaVuSans-ExtraLight",
            "DejaVuMathTeXGyre",
        )
    ),
    *(Font("hershey", name) for name in ("simplex", "duplex", "complex", "triplex", "script", "complex-italic")),
    Font("stroke", "round"),
    Font("stroke", "square"),
)
HELD_OUT_FONTS = (
    *(
        Font("ttf", stem)
        for stem in ("LiberationSerif-Bold", "LiberationSerif-Regular", "LiberationSerif-BoldItalic", "DejaVuSerif-BoldItalic")
    ),
    Font("hershey", "script-complex"),
    Font("stroke", "slab"),
)
# The faces of the tile art first drawn on 2026-12-07 (``styles.UNSEEN_STYLE``): in no training render, nor the held-out one
UNSEEN_FONTS = (
    *(
        Font("ttf", stem)
        for stem in ("LiberationSansNarrow-Regular", "LiberationMono-Regular", "LiberationSerif-Italic", "DejaVuSansCondensed")
    ),
    Font("hershey", "plain"),
)


@cache
def font_files() -> dict[str, str]:
    """Map each TrueType file stem found in the system's font folders to its path."""
    found: dict[str, str] = {}
    for folder in FONT_DIRS:
        if folder.is_dir():
            for path in sorted(folder.rglob("*.ttf")):
                found.setdefault(path.stem, str(path))
    return found


def missing_faces(fonts: tuple[Font, ...]) -> tuple[str, ...]:
    """The TrueType faces of ``fonts`` this machine lacks (their file stems), in order; () when every one is installed."""
    files = font_files()
    return tuple(font.name for font in fonts if font.kind == "ttf" and font.name not in files)


def usable(fonts: tuple[Font, ...]) -> tuple[Font, ...]:
    """The fonts of ``fonts`` this machine can draw (TrueType faces need their file); never empty."""
    files = font_files()
    kept = tuple(font for font in fonts if font.kind != "ttf" or font.name in files)
    return kept or (Font("hershey", "duplex"), Font("stroke", "round"))


# --------------------------------------------------------------------------------------------- colour


def jitter(rng: np.random.Generator, colour: RGB | np.ndarray, amount: float = 12.0) -> RGB:
    """``colour`` moved by Gaussian noise of ``amount`` per channel, clipped to 0-255."""
    values = np.clip(np.asarray(colour, dtype=np.float64) + rng.normal(0.0, amount, 3), 0, 255)
    red, green, blue = (int(v) for v in values)
    return red, green, blue


def random_colour(
    rng: np.random.Generator, *, lightness: tuple[float, float] = (0.25, 0.9), saturation: tuple[float, float] = (0.1, 0.8)
) -> RGB:
    """A colour of any hue (HLS drawn uniformly within the bounds)."""
    hue, light, sat = rng.uniform(0, 180), rng.uniform(*lightness), rng.uniform(*saturation)
    hls = np.array([[[hue, light * 255, sat * 255]]], dtype=np.uint8)
    red, green, blue = (int(v) for v in cv2.cvtColor(hls, cv2.COLOR_HLS2RGB)[0, 0])
    return red, green, blue


def scaled(colour: RGB, factor: float) -> RGB:
    """``colour`` times ``factor`` (darker below 1), clipped."""
    red, green, blue = (int(v) for v in np.clip(np.asarray(colour, np.float64) * factor, 0, 255))
    return red, green, blue


def luminance(colour: RGB | np.ndarray) -> float:
    """Rec. 601 luma of an RGB colour (0-255)."""
    red, green, blue = (float(v) for v in np.asarray(colour, np.float64)[:3])
    return 0.299 * red + 0.587 * green + 0.114 * blue


# --------------------------------------------------------------------------------------------- digits

STROKE_DIGITS: dict[str, list[list[tuple[float, float]]]] = {
    "0": [[(0.5, 0.0), (0.82, 0.12), (0.92, 0.5), (0.82, 0.88), (0.5, 1.0), (0.18, 0.88), (0.08, 0.5), (0.18, 0.12), (0.5, 0.0)]],
    "1": [[(0.25, 0.22), (0.55, 0.0), (0.55, 1.0)], [(0.28, 1.0), (0.82, 1.0)]],
    "2": [[(0.12, 0.22), (0.32, 0.02), (0.68, 0.02), (0.87, 0.22), (0.82, 0.48), (0.12, 1.0), (0.9, 1.0)]],
    "3": [[(0.12, 0.1), (0.42, 0.0), (0.8, 0.08), (0.85, 0.3), (0.45, 0.47), (0.88, 0.66), (0.84, 0.9), (0.5, 1.0), (0.1, 0.9)]],
    "4": [[(0.7, 1.0), (0.7, 0.0), (0.06, 0.68), (0.94, 0.68)]],
    "5": [[(0.86, 0.0), (0.22, 0.0), (0.16, 0.45), (0.58, 0.38), (0.88, 0.6), (0.84, 0.88), (0.5, 1.0), (0.1, 0.9)]],
    "6": [
        [(0.82, 0.06), (0.5, 0.0), (0.18, 0.25), (0.1, 0.7), (0.3, 1.0), (0.7, 0.98), (0.9, 0.72), (0.72, 0.48), (0.35, 0.46), (0.12, 0.66)]
    ],
    "7": [[(0.08, 0.0), (0.92, 0.0), (0.38, 1.0)]],
    "8": [
        [(0.5, 0.46), (0.18, 0.32), (0.2, 0.08), (0.5, 0.0), (0.8, 0.08), (0.82, 0.32), (0.5, 0.46)],
        [(0.5, 0.46), (0.12, 0.66), (0.18, 0.92), (0.5, 1.0), (0.82, 0.92), (0.88, 0.66), (0.5, 0.46)],
    ],
    "9": [
        [(0.18, 0.94), (0.5, 1.0), (0.82, 0.75), (0.9, 0.3), (0.7, 0.0), (0.3, 0.02), (0.1, 0.28), (0.28, 0.52), (0.65, 0.54), (0.88, 0.34)]
    ],
}


@cache
def _ttf(path: str, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(path, size)


def glyph_mask(text: str, font: Font, rng: np.random.Generator) -> np.ndarray:
    """A tight uint8 mask (ink 255) of ``text`` drawn in ``font``, about 96 px tall."""
    if font.kind == "ttf":
        canvas = Image.new("L", (96 * len(text) + 64, 200), 0)
        ImageDraw.Draw(canvas).text((24, 24), text, fill=255, font=_ttf(font_files()[font.name], 120))
        mask = np.asarray(canvas)
    elif font.kind == "hershey":
        face = HERSHEY[font.name]
        thickness = int(rng.integers(2, 6))
        mask = np.zeros((150, 70 * len(text) + 60), np.uint8)
        cv2.putText(mask, text, (20, 120), face, 3.0, 255, thickness, cv2.LINE_AA)
    else:
        mask = _stroke_mask(text, font.name, rng)
    ys, xs = np.nonzero(mask > 40)
    if not len(ys):  # pragma: no cover - every font draws the digits
        raise ValueError(f"font {font.name!r} drew nothing for {text!r}")
    return np.ascontiguousarray(mask[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1])


def _stroke_mask(text: str, look: str, rng: np.random.Generator) -> np.ndarray:
    """Digits drawn as polylines: ``round`` (round joins), ``square`` (thin, sheared) or ``slab`` (thick, with serifs)."""
    height, width = 100, 62
    thickness = {"round": int(rng.integers(9, 16)), "square": int(rng.integers(6, 10)), "slab": int(rng.integers(13, 19))}[look]
    shear = float(rng.uniform(-0.25, 0.05)) if look == "square" else float(rng.normal(0, 0.05))
    gap = int(0.25 * width)
    mask = np.zeros((height + 40, len(text) * (width + gap) + 40), np.uint8)
    for index, digit in enumerate(text):
        x0 = 20 + index * (width + gap)
        for line, free in zip(STROKE_DIGITS[digit], free_ends(digit)):
            pts = np.array([(x, y) for x, y in line], np.float64) + rng.normal(0, 0.015, (len(line), 2))
            px = x0 + pts[:, 0] * width + shear * (pts[:, 1] - 0.5) * height
            py = 20 + pts[:, 1] * height
            poly = np.stack([px, py], axis=1).round().astype(np.int32)
            cv2.polylines(mask, [poly], False, 255, thickness, cv2.LINE_AA if look != "square" else cv2.LINE_8)
            if look == "slab":  # serifs where a stroke ends in the open, not where it meets another
                for (x, y), open_end in zip((poly[0], poly[-1]), free):
                    if open_end:
                        cv2.line(mask, (int(x) - thickness, int(y)), (int(x) + thickness, int(y)), 255, max(3, thickness // 2))
    return mask


SERIF_CLEAR = 0.12  # a stroke's end further than this (in glyph widths) from every other part of the digit ends in the open


def _segment_distance(point: np.ndarray, start: np.ndarray, end: np.ndarray) -> float:
    span = end - start
    t = float(np.clip(np.dot(point - start, span) / max(float(np.dot(span, span)), 1e-12), 0.0, 1.0))
    return float(np.linalg.norm(point - (start + t * span)))


@cache
def free_ends(digit: str) -> tuple[tuple[bool, bool], ...]:
    """For each stroke of ``STROKE_DIGITS[digit]``: whether its first and last points end in the open (``SERIF_CLEAR``).

    An end that meets another stroke, or its own stroke further on (a closed loop, the tail of a 6
    or a 9), is a joint: a serif drawn there would cross the digit.

    >>> free_ends("7")
    ((True, True),)
    >>> free_ends("8")
    ((False, False), (False, False))
    >>> free_ends("6")
    ((True, False),)
    """
    lines = [np.asarray(line, np.float64) for line in STROKE_DIGITS[digit]]
    out = []
    for index, line in enumerate(lines):
        ends = []
        for point, own in ((line[0], 0), (line[-1], len(line) - 2)):  # the segment the end belongs to is not a joint
            near = [
                _segment_distance(point, other[k], other[k + 1])
                for j, other in enumerate(lines)
                for k in range(len(other) - 1)
                if not (j == index and k == own)
            ]
            ends.append(min(near, default=np.inf) > SERIF_CLEAR)
        out.append((ends[0], ends[1]))
    return tuple(out)


def stamp_text(
    img: np.ndarray,
    text: str,
    centre: tuple[float, float],
    height_px: float,
    max_width_px: float,
    ink: RGB,
    font: Font,
    rng: np.random.Generator,
    *,
    outline: RGB | None = None,
    shadow: RGB | None = None,
) -> tuple[int, int, int, int]:
    """Draw ``text`` centred at ``centre``, ``height_px`` tall (narrowed to ``max_width_px``), in place.

    ``outline`` rings the glyphs, ``shadow`` offsets a copy below-right. Returns the ink's box (x0, y0, x1, y1).
    """
    mask = glyph_mask(text, font, rng)
    h, w = mask.shape
    scale = height_px / h
    if w * scale > max_width_px:
        scale = max_width_px / w
    out_w, out_h = max(1, int(round(w * scale))), max(1, int(round(h * scale)))
    pad = max(2, int(0.12 * out_h))
    small = cv2.resize(mask, (out_w, out_h), interpolation=cv2.INTER_AREA)
    small = cv2.copyMakeBorder(small, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=0)
    x0 = int(round(centre[0] - out_w / 2)) - pad
    y0 = int(round(centre[1] - out_h / 2)) - pad
    layers: list[tuple[np.ndarray, RGB, tuple[int, int]]] = []
    if shadow is not None:
        offset = max(1, int(round(0.06 * out_h)))
        layers.append((small, shadow, (offset, offset)))
    if outline is not None:
        ring = max(1, int(round(0.07 * out_h)))
        layers.append((cv2.dilate(small, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * ring + 1, 2 * ring + 1))), outline, (0, 0)))
    layers.append((small, ink, (0, 0)))
    for layer, colour, (dx, dy) in layers:
        _blend(img, layer, x0 + dx, y0 + dy, colour)
    return x0 + pad, y0 + pad, x0 + pad + out_w, y0 + pad + out_h


def _blend(img: np.ndarray, mask: np.ndarray, x0: int, y0: int, colour: RGB) -> None:
    height, width = img.shape[:2]
    mh, mw = mask.shape
    ax0, ay0, ax1, ay1 = max(0, x0), max(0, y0), min(width, x0 + mw), min(height, y0 + mh)
    if ax1 <= ax0 or ay1 <= ay0:
        return
    alpha = mask[ay0 - y0 : ay1 - y0, ax0 - x0 : ax1 - x0].astype(np.float32)[..., None] / 255.0
    region = img[ay0:ay1, ax0:ax1].astype(np.float32)
    img[ay0:ay1, ax0:ax1] = (region * (1 - alpha) + np.asarray(colour, np.float32) * alpha + 0.5).astype(np.uint8)


# --------------------------------------------------------------------------------------------- the octagon


def nearest_own(colour: RGB, kind: str) -> RGB:
    """``colour`` moved towards ``kind``'s octagon colour until no other type's is nearer (L1): a jittered fill stays its type's.

    >>> nearest_own((182, 80, 51), "seraglio")  # jittered red that had come nearer the arcades' brown
    (194, 68, 48)
    >>> nearest_own((200, 60, 40), "seraglio")
    (200, 60, 40)
    """
    own = OCTAGON_RGB[kind]

    def nearest(c: RGB) -> str:
        return min(OCTAGON_RGB, key=lambda k: sum(abs(a - b) for a, b in zip(c, OCTAGON_RGB[k])))

    while nearest(colour) != kind:
        colour = tuple(int(round((a + b) / 2)) for a, b in zip(colour, own))  # type: ignore[assignment]
    return colour


def octagon_points(cx: float, cy: float, radius: float) -> np.ndarray:
    """The eight vertices of an octagon with flat top and sides (int32, for ``cv2.fillPoly``)."""
    angles = np.pi / 8 + np.arange(8) * np.pi / 4
    return np.stack([cx + radius * np.cos(angles), cy + radius * np.sin(angles)], axis=1).round().astype(np.int32)


def price_octagon(
    img: np.ndarray,
    rng: np.random.Generator,
    kind: str,
    price: int,
    fonts: tuple[Font, ...],
    *,
    look: str = "flat",
) -> dict[str, float]:
    """Draw the price octagon (type colour, digits) in the bottom-right corner in place; return where it went.

    ``look``: ``flat`` (one fill, dark rim), ``shaded`` (lit from the top left, gold or dark rim),
    ``inked`` (thick black rim, hatched shadow), ``badge`` (a light ring inside the rim), ``gilt`` (a thin gold ring
    outside a dark one).
    """
    size = img.shape[0]
    cx = (OCTAGON_CENTRE + rng.normal(0, 0.007)) * size
    cy = (OCTAGON_CENTRE + rng.normal(0, 0.007)) * size
    radius = (OCTAGON_RADIUS + rng.normal(0, 0.006)) * size
    fill = nearest_own(jitter(rng, OCTAGON_RGB[kind], 9), kind)
    pts = octagon_points(cx, cy, radius)
    rim_px = max(1, int(round(size * rng.uniform(0.008, 0.02))))
    if look == "shaded":
        rim = jitter(rng, (205, 165, 60), 15) if rng.random() < 0.5 else jitter(rng, (55, 40, 30), 8)
        cv2.fillPoly(img, [octagon_points(cx, cy, radius + rim_px)], rim, cv2.LINE_AA)
        cv2.fillPoly(img, [pts], fill, cv2.LINE_AA)
        mask = np.zeros(img.shape[:2], np.float32)
        cv2.fillPoly(mask, [pts], 1.0, cv2.LINE_AA)
        ys, xs = np.mgrid[0:size, 0:size].astype(np.float32)
        light = 1.0 + 0.12 * (((cx - xs) + (cy - ys)) / max(radius, 1.0)).clip(-1.5, 1.5) / 1.5
        shaded = img.astype(np.float32) * (1 - mask[..., None]) + img.astype(np.float32) * light[..., None] * mask[..., None]
        img[:] = shaded.clip(0, 255).astype(np.uint8)
    elif look == "inked":
        cv2.fillPoly(img, [pts], fill, cv2.LINE_AA)
        cv2.polylines(img, [pts], True, (20, 18, 15), max(2, rim_px + 1), cv2.LINE_AA)
    elif look == "gilt":  # a thin gold ring outside a dark one
        cv2.fillPoly(img, [octagon_points(cx, cy, radius + rim_px + 1)], jitter(rng, (200, 170, 80), 12), cv2.LINE_AA)
        cv2.fillPoly(img, [pts], fill, cv2.LINE_AA)
        cv2.polylines(img, [pts], True, jitter(rng, (35, 28, 22), 6), max(1, rim_px // 2), cv2.LINE_AA)
    elif look == "badge":
        cv2.fillPoly(img, [pts], fill, cv2.LINE_AA)
        ring = jitter(rng, (240, 235, 220), 8)
        cv2.polylines(img, [octagon_points(cx, cy, radius * 0.86)], True, ring, max(1, size // 90), cv2.LINE_AA)
        cv2.polylines(img, [pts], True, jitter(rng, (50, 35, 25), 8), rim_px, cv2.LINE_AA)
    else:
        cv2.fillPoly(img, [pts], fill, cv2.LINE_AA)
        cv2.polylines(img, [pts], True, jitter(rng, (50, 35, 25), 8), rim_px, cv2.LINE_AA)
    text = str(price)
    font = fonts[int(rng.integers(len(fonts)))]
    dark_fill = luminance(fill) < 120
    if dark_fill and rng.random() < 0.5:
        ink, outline = jitter(rng, (245, 242, 235), 5), (jitter(rng, (30, 25, 20), 5) if rng.random() < 0.5 else None)
    else:
        ink, outline = jitter(rng, (25, 20, 15), 6), (jitter(rng, (245, 242, 235), 5) if rng.random() < 0.2 else None)
    shadow = jitter(rng, (40, 30, 25), 6) if outline is None and rng.random() < 0.15 else None
    height = radius * (rng.uniform(0.8, 1.0) if len(text) == 1 else rng.uniform(0.68, 0.84))
    box = stamp_text(img, text, (cx, cy), height, 1.5 * radius, ink, font, rng, outline=outline, shadow=shadow)
    return {"cx": cx, "cy": cy, "radius": radius, "ink_width": float(box[2] - box[0]), "font": f"{font.kind}:{font.name}"}


# --------------------------------------------------------------------------------------------- walls


def lay_strips(img: np.ndarray, strip: np.ndarray, walls: str) -> None:
    """Lay a north-side wall ``strip`` (rows x tile width) along each side in ``walls`` of the square tile ``img``, turned to face inward."""
    size, width = img.shape[0], strip.shape[0]
    for side in walls:
        if side == "N":
            img[:width, :] = strip
        elif side == "S":
            img[size - width :, :] = strip[::-1]
        elif side == "W":
            img[:, :width] = strip.transpose(1, 0, 2)
        elif side == "E":
            img[:, size - width :] = strip.transpose(1, 0, 2)[:, ::-1]


def wall_strips(img: np.ndarray, rng: np.random.Generator, walls: str, *, look: str = "brick") -> int:
    """Draw a dark strip along each walled side (``N``, ``E``, ``S``, ``W``) in place; return its width in px.

    ``look``: ``brick`` (courses and joints), ``crenel`` (battlements on the inner edge, a lit top),
    ``hatch`` (ink lines), ``stone`` (irregular blocks), ``checker`` (glazed squares), ``plain`` (one dark colour, a light
    edge line).
    """
    size = img.shape[0]
    width = int(round((WALL_WIDTH + rng.normal(0, 0.008)) * size))
    base = np.array(jitter(rng, (92, 55, 33), 11), np.float32)
    if rng.random() < 0.3:  # some printings: darker red-brown or grey-brown
        base = np.array(jitter(rng, (80, 45, 40) if rng.random() < 0.5 else (70, 60, 50), 8), np.float32)
    strip = np.empty((width, size, 3), np.float32)
    strip[:] = base
    if look == "brick":
        mortar = base * rng.uniform(1.35, 1.6)
        course = max(3, width // 3)
        brick_len = max(6, size // 10)
        for row in range(0, width, course):
            strip[row, :] = mortar
            offset = (row // course) % 2 * brick_len // 2
            strip[row : row + course, offset::brick_len] = mortar
    elif look == "crenel":
        strip[: max(1, width // 5)] = base * 1.45  # the lit wall top along the outer edge
        strip[-max(1, width // 6) :] = base * 0.7  # the shaded inner face
    elif look == "hatch":
        step = int(rng.integers(3, 6))
        ys, xs = np.mgrid[0:width, 0:size]
        lines = ((xs + ys) % step) == 0
        strip[lines] = base * 1.5
        strip[0, :] = strip[-1, :] = (20, 18, 15)
    elif look == "checker":  # small glazed squares of two dark tones, a light glaze line on the inner edge
        cell = max(2, width // 2)
        ys, xs = np.mgrid[0:width, 0:size]
        strip[((xs // cell) + (ys // cell)) % 2 == 1] = base * 0.7
        strip[-1, :] = base * 1.7
    elif look == "stone":
        noise = cv2.resize(rng.normal(0, 1, (max(2, width // 4), max(2, size // 6))).astype(np.float32), (size, width))
        strip *= (1 + 0.18 * noise)[..., None]
        for x in np.cumsum(rng.integers(max(4, size // 14), max(6, size // 7), 12)):
            if x < size:
                strip[:, int(x)] = base * 0.55
    else:
        strip[-1, :] = base * 1.8
    strip_u8 = strip.clip(0, 255).astype(np.uint8)
    lay_strips(img, strip_u8, walls)
    if look == "crenel":  # battlements stand inward from each walled side
        merlon = max(2, int(0.035 * size))
        inner = tuple(int(v) for v in (base * 0.85).clip(0, 255))
        for side in walls:
            for start in range(int(0.06 * size), size - merlon, 2 * merlon):
                if side == "N":
                    cv2.rectangle(img, (start, width), (start + merlon - 1, width + merlon - 1), inner, -1)
                elif side == "S":
                    cv2.rectangle(img, (start, size - width - merlon), (start + merlon - 1, size - width - 1), inner, -1)
                elif side == "W":
                    cv2.rectangle(img, (width, start), (width + merlon - 1, start + merlon - 1), inner, -1)
                else:
                    cv2.rectangle(img, (size - width - merlon, start), (size - width - 1, start + merlon - 1), inner, -1)
    return width


def frame(img: np.ndarray, rng: np.random.Generator) -> None:
    """A thin printed border round the whole tile (dark or coloured), thinner than any wall strip, in place."""
    size = img.shape[0]
    width = max(1, int(round(size * rng.uniform(0.006, 0.018))))
    colour = jitter(rng, (45, 35, 28), 10) if rng.random() < 0.6 else random_colour(rng, lightness=(0.2, 0.6))
    cv2.rectangle(img, (0, 0), (size - 1, size - 1), colour, 2 * width - 1)


# --------------------------------------------------------------------------------------------- card stock


def print_grain(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The tile as printed on card: paper fibre noise, a faint halftone screen and a slightly soft print."""
    size = img.shape[0]
    out: np.ndarray = img.astype(np.float32)
    fibre: np.ndarray = cv2.GaussianBlur(rng.normal(0, 1, (size, size)).astype(np.float32), (0, 0), 0.7)
    out *= (1 + rng.uniform(0.015, 0.05) * fibre)[..., None]
    if rng.random() < 0.6:
        period = rng.uniform(2.5, 4.5)
        angle = rng.uniform(0, np.pi)
        ys, xs = np.mgrid[0:size, 0:size].astype(np.float32)
        u = xs * np.cos(angle) + ys * np.sin(angle)
        v = -xs * np.sin(angle) + ys * np.cos(angle)
        screen = np.cos(2 * np.pi * u / period) * np.cos(2 * np.pi * v / period)
        out *= (1 + rng.uniform(0.01, 0.04) * screen)[..., None]
    if rng.random() < 0.5:
        out = cv2.GaussianBlur(out, (0, 0), rng.uniform(0.3, 0.7))
    return out.clip(0, 255).astype(np.uint8)


def cut_edge(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A thin light rim where the print stops short of the die-cut edge (white card core showing)."""
    out = img.copy()
    rim = max(1, int(round(img.shape[0] * rng.uniform(0.0, 0.012))))
    colour = np.array(jitter(rng, (232, 226, 210), 8), np.uint8)
    out[:rim], out[-rim:], out[:, :rim], out[:, -rim:] = colour, colour, colour, colour
    return out


def glare(img: np.ndarray, rng: np.random.Generator, strength: float | None = None) -> np.ndarray:
    """A soft specular patch (the lamp's reflection on the varnish), blended toward white up to ``strength``."""
    size = img.shape[0]
    mask: np.ndarray = np.zeros((size, size), np.float32)
    centre = (int(rng.uniform(0, size)), int(rng.uniform(0, size)))
    axes = (int(rng.uniform(0.1, 0.45) * size), int(rng.uniform(0.04, 0.2) * size))
    cv2.ellipse(mask, centre, axes, float(rng.uniform(0, 180)), 0, 360, 1.0, -1)
    mask = cv2.GaussianBlur(mask, (0, 0), max(axes) / 3 + 1)
    amount = float(strength if strength is not None else rng.uniform(0.15, 0.55))
    white = np.array(jitter(rng, (250, 248, 240), 4), np.float32)
    out = img.astype(np.float32) * (1 - amount * mask[..., None]) + white * amount * mask[..., None]
    return out.clip(0, 255).astype(np.uint8)


def card_stock(img: np.ndarray, rng: np.random.Generator, *, glare_chance: float = 0.35) -> np.ndarray:
    """Print grain, the cut edge and (sometimes) glare on one tile's art; the art's cues stay where they are."""
    out = cut_edge(print_grain(img, rng), rng)
    if rng.random() < glare_chance:
        out = glare(out, rng)
    return out


def rounded_square(side: float, radius: float, steps: int = 4) -> np.ndarray:
    """A square of ``side`` centred on the origin with corners rounded by ``radius``: (N, 2) points, clockwise from the top."""
    half = side / 2
    r = float(np.clip(radius, 0.0, half))
    points = []
    for cx, cy, start in ((half - r, -half + r, -90), (half - r, half - r, 0), (-half + r, half - r, 90), (-half + r, -half + r, 180)):
        for angle in np.radians(np.linspace(start, start + 90, steps + 1)):
            points.append((cx + r * np.cos(angle), cy + r * np.sin(angle)))
    return np.asarray(points, np.float64)
