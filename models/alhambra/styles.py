"""Tile art styles beyond the flat icons: painted volumes, woodcut line art and a photographic collage.

Each style is designed on its own: its grounds, how it draws a building (shaded oblique volumes;
ink outlines with hatching; cut-out textured shapes with shadows), its fountain, and its way of
printing the shared cues (``models/alhambra/art.py``: the price octagon in the type's colour with
its digits, the dark wall strips), which stay where every printing puts them.

Every style draws a building two ways. ``randomise=True`` (what training mostly sees): its shape
follows the tile's type only part of the time (``SHAPE_FOLLOWS_TYPE``) and its colours only part of
the time (``COLOUR_FOLLOWS_TYPE``), so only the shared cues tell the type, the price and the walls.
``randomise=False``: as a printed set draws it, every tile of a type shows that type's building in
that type's colours (varied in form and shade from tile to tile), e.g. a painted tower is tall and
pinkish, as a real set's is.

``painted`` is the style held out of training (``HELD_OUT_STYLE``): its volumes, its lit octagons
and battlemented walls and its digit faces (``art.HELD_OUT_FONTS``) never appear in a training
render; ``models.alhambra.transfer`` reads it, drawn as a printed set, to measure transfer to unseen art.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import cv2
import numpy as np

from models.alhambra import art
from models.alhambra.art import RGB, jitter, random_colour, scaled

HELD_OUT_STYLE = "painted"
SHAPE_FOLLOWS_TYPE = 0.55  # share of tiles whose building is the type's usual one (else any type's)
COLOUR_FOLLOWS_TYPE = 0.4  # share of tiles whose building has the type's usual colours (else any colours)
BUILDING_TYPES = ("pavilion", "seraglio", "arcades", "chambers", "garden", "tower")

# usual colours of a printed set per type: (walls, roof or domes)
USUAL = {
    "pavilion": ((236, 232, 224), (115, 165, 210)),
    "seraglio": ((200, 92, 72), (170, 60, 45)),
    "arcades": ((208, 168, 118), (150, 95, 60)),
    "chambers": ((232, 222, 198), (180, 150, 110)),
    "garden": ((80, 150, 70), (55, 115, 50)),
    "tower": ((228, 160, 150), (200, 120, 115)),  # a real tower: tall and pinkish
}
PLAYER_RGB = {
    "blue": (60, 100, 190),
    "green": (70, 150, 80),
    "orange": (235, 140, 40),
    "red": (200, 50, 50),
    "white": (235, 235, 230),
    "yellow": (240, 210, 60),
}


def _plan(rng: np.random.Generator, kind: str, randomise: bool) -> tuple[str, RGB, RGB]:
    """The building to draw for a tile of ``kind``: (shape type, body colour, roof colour); ``randomise``: see the module."""
    if not randomise:
        body, roof = (jitter(rng, c, 12) for c in USUAL[kind])
        return kind, body, roof
    shape = kind if rng.random() < SHAPE_FOLLOWS_TYPE else str(BUILDING_TYPES[int(rng.integers(len(BUILDING_TYPES)))])
    if rng.random() < COLOUR_FOLLOWS_TYPE:
        body, roof = (jitter(rng, c, 14) for c in USUAL[shape])
    else:
        body = random_colour(rng, lightness=(0.3, 0.85), saturation=(0.1, 0.85))
        roof = random_colour(rng, lightness=(0.2, 0.75), saturation=(0.1, 0.9)) if rng.random() < 0.7 else scaled(body, 0.7)
    return shape, body, roof


def _px(size: int, x: float, y: float) -> tuple[int, int]:
    return int(round(x * size)), int(round(y * size))


def _poly(size: int, points: list[tuple[float, float]]) -> np.ndarray:
    return np.array([_px(size, x, y) for x, y in points], np.int32)


# ============================================================================================= painted


def _painted_ground(rng: np.random.Generator, size: int) -> np.ndarray:
    base = np.array(jitter(rng, (218, 192, 142), 14), np.float32)
    low = cv2.resize(rng.normal(0, 1, (5, 5, 3)).astype(np.float32), (size, size), interpolation=cv2.INTER_CUBIC)
    img = base + 6 * low
    if rng.random() < 0.4:  # a paved courtyard
        step = size / rng.uniform(6, 11)
        joint = base * 0.85
        for k in range(1, int(size / step) + 1):
            pos = int(k * step)
            img[max(0, pos - 1) : pos, :] = joint
            img[:, max(0, pos - 1) : pos] = joint
    return img.clip(0, 255).astype(np.uint8)


def _brush(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Soft brush texture: noise smeared along one stroke direction, a low-frequency colour drift, a soft edge."""
    size = img.shape[0]
    noise = rng.normal(0, 1, (size, size)).astype(np.float32)
    length = int(rng.integers(5, 11))
    line = np.zeros((length, length), np.float32)
    line[length // 2, :] = 1 / length
    rot = cv2.getRotationMatrix2D((length / 2 - 0.5, length / 2 - 0.5), float(rng.uniform(0, 180)), 1.0)
    kernel = cv2.warpAffine(line, rot, (length, length))
    kernel = (kernel / max(float(kernel.sum()), 1e-6)).astype(np.float32)
    strokes = cv2.filter2D(noise, -1, kernel)
    drift = cv2.resize(rng.normal(0, 1, (4, 4, 3)).astype(np.float32), (size, size), interpolation=cv2.INTER_CUBIC)
    out = img.astype(np.float32) * (1 + rng.uniform(0.06, 0.14) * strokes)[..., None] + 2.5 * drift
    return cv2.GaussianBlur(out.clip(0, 255), (0, 0), rng.uniform(0.4, 0.9)).astype(np.uint8)


class _Painter:
    """Oblique volumes lit from the top left: boxes, domes, roofs, arches, trees."""

    def __init__(self, img: np.ndarray, rng: np.random.Generator) -> None:
        self.img, self.rng, self.size = img, rng, img.shape[0]
        self.depth = (0.5, -0.32)  # where depth recedes, per unit of depth

    def fill(self, points: list[tuple[float, float]], colour: RGB) -> None:
        cv2.fillPoly(self.img, [_poly(self.size, points)], colour, cv2.LINE_AA)

    def shadow(self, points: list[tuple[float, float]]) -> None:
        mask: np.ndarray = np.zeros(self.img.shape[:2], np.float32)
        shifted = [(x + 0.05, y + 0.03) for x, y in points]
        cv2.fillPoly(mask, [_poly(self.size, shifted)], 1.0, cv2.LINE_AA)
        mask = cv2.GaussianBlur(mask, (0, 0), self.size * 0.02)
        self.img[:] = (self.img.astype(np.float32) * (1 - 0.35 * mask[..., None])).astype(np.uint8)

    def box(self, x: float, base: float, w: float, h: float, d: float, colour: RGB) -> None:
        ox, oy = self.depth[0] * d, self.depth[1] * d
        top = base - h
        self.shadow([(x, base), (x + w + ox, base + oy), (x + w + ox + 0.08, base + oy), (x + w + 0.08, base)])
        self.fill([(x, top), (x + w, top), (x + w + ox, top + oy), (x + ox, top + oy)], scaled(colour, 1.15))
        self.fill([(x + w, base), (x + w + ox, base + oy), (x + w + ox, top + oy), (x + w, top)], scaled(colour, 0.72))
        self.fill([(x, base), (x + w, base), (x + w, top), (x, top)], colour)

    def dome(self, cx: float, base: float, r: float, colour: RGB) -> None:
        size = self.size
        for k, shade in enumerate(np.linspace(0.7, 1.25, 6)):
            radius = r * (1 - k * 0.13)
            centre = _px(size, cx - 0.25 * (r - radius), base - 0.2 * (r - radius))
            axes = (max(1, int(radius * size)), max(1, int(radius * size * 0.95)))
            cv2.ellipse(self.img, centre, axes, 0, 180, 360, scaled(colour, float(shade)), -1, cv2.LINE_AA)
        cv2.line(self.img, _px(size, cx, base - r), _px(size, cx, base - r - 0.05), scaled(colour, 0.6), max(1, size // 80), cv2.LINE_AA)

    def roof(self, x: float, base: float, w: float, h: float, d: float, colour: RGB) -> None:
        ox, oy = self.depth[0] * d, self.depth[1] * d
        apex = (x + w / 2 + ox / 2, base - h + oy / 2)
        self.fill([(x + w, base), (x + w + ox, base + oy), apex], scaled(colour, 0.7))
        self.fill([(x, base), (x + w, base), apex], colour)

    def arches(self, x0: float, x1: float, y0: float, y1: float, count: int, colour: RGB) -> None:
        size = self.size
        step = (x1 - x0) / count
        for k in range(count):
            ax0, ax1 = x0 + (k + 0.22) * step, x0 + (k + 0.78) * step
            radius = (ax1 - ax0) / 2
            cv2.rectangle(self.img, _px(size, ax0, y0 + radius), _px(size, ax1, y1), colour, -1, cv2.LINE_AA)
            r_px = max(1, int(radius * size))
            cv2.ellipse(self.img, _px(size, (ax0 + ax1) / 2, y0 + radius), (r_px, r_px), 0, 180, 360, colour, -1, cv2.LINE_AA)

    def crenels(self, x: float, top: float, w: float, colour: RGB) -> None:
        count = max(3, int(w / 0.045))
        step = w / count
        for k in range(0, count, 2):
            self.fill(
                [(x + k * step, top), (x + (k + 1) * step, top), (x + (k + 1) * step, top - 0.035), (x + k * step, top - 0.035)], colour
            )

    def tree(self, cx: float, cy: float, r: float, colour: RGB) -> None:
        size = self.size
        self.shadow([(cx - r, cy + r * 0.6), (cx + r, cy + r * 0.6), (cx + r, cy + r), (cx - r, cy + r)])
        for k, shade in enumerate((0.6, 0.85, 1.05, 1.25)):
            offset = -0.3 * r * k / 3
            radius = r * (1 - 0.18 * k)
            cv2.circle(self.img, _px(size, cx + offset, cy + offset), max(1, int(radius * size)), scaled(colour, shade), -1, cv2.LINE_AA)


def _painted_building(p: _Painter, rng: np.random.Generator, shape: str, body: RGB, roof: RGB) -> None:
    dark = scaled(body, 0.35)
    u = rng.uniform
    if shape == "tower":
        x, base, w = u(0.22, 0.42), u(0.72, 0.82), u(0.16, 0.24)
        h = min(u(0.4, 0.56), base - 0.34)  # tall, but clear of a north wall
        if rng.random() < 0.5:
            p.box(x + w * 0.7, base, u(0.15, 0.22), u(0.12, 0.2), 0.12, scaled(body, 0.95))
        p.box(x, base, w, h, u(0.1, 0.16), body)
        p.arches(x + 0.02, x + w - 0.02, base - h + 0.06, base - h + 0.16, 1, dark)
        p.arches(x + 0.02, x + w - 0.02, base - h * 0.45, base - h * 0.3, 2, dark)
        if rng.random() < 0.6:
            p.crenels(x, base - h, w, body)
        else:
            p.roof(x - 0.01, base - h, w + 0.02, u(0.08, 0.14), 0.12, roof)
    elif shape == "seraglio":
        x, base, w, h = u(0.14, 0.2), u(0.7, 0.78), u(0.42, 0.5), u(0.2, 0.28)
        p.box(x, base, w, h, u(0.12, 0.2), body)
        count = int(rng.integers(2, 4))
        for k in range(count):
            p.dome(x + w * (k + 0.5) / count, base - h, w / count * u(0.35, 0.48), roof)
        p.arches(x + 0.02, x + w - 0.02, base - h * 0.7, base - 0.01, int(rng.integers(3, 6)), dark)
    elif shape == "pavilion":
        x, base, w, h = u(0.2, 0.28), u(0.68, 0.76), u(0.3, 0.38), u(0.16, 0.22)
        p.box(x, base, w, h, u(0.14, 0.2), body)
        p.arches(x + 0.01, x + w - 0.01, base - h + 0.03, base - 0.005, int(rng.integers(3, 5)), scaled(roof, 0.45))
        p.dome(x + w / 2, base - h, w * u(0.3, 0.42), roof)
        for side in (x - 0.06, x + w + 0.01):
            p.box(side, base, 0.06, h * 0.9, 0.05, body)
            p.dome(side + 0.03, base - h * 0.9, 0.035, roof)
    elif shape == "chambers":
        x, base = u(0.14, 0.22), u(0.74, 0.8)
        widths = [u(0.16, 0.22) for _ in range(int(rng.integers(2, 4)))]
        for w in widths:
            h = u(0.22, 0.45)
            p.box(x, base, w, h, 0.1, scaled(body, u(0.9, 1.05)))
            rows = int(h / 0.1)
            for r in range(rows):
                p.arches(x + 0.01, x + w - 0.01, base - h + 0.04 + r * 0.1, base - h + 0.1 + r * 0.1, 2, dark)
            if rng.random() < 0.5:
                p.roof(x, base - h, w, 0.07, 0.1, roof)
            x += w * 0.85
            if x > 0.6:
                break
    elif shape == "arcades":
        x, base, w, h = u(0.13, 0.18), u(0.66, 0.74), u(0.46, 0.52), u(0.15, 0.2)
        p.box(x, base, w, h, u(0.1, 0.16), body)
        p.arches(x + 0.01, x + w - 0.01, base - h + 0.03, base - 0.005, int(rng.integers(4, 7)), scaled(body, 0.4))
        p.fill([(x - 0.01, base - h), (x + w + 0.01, base - h), (x + w + 0.01, base - h - 0.025), (x - 0.01, base - h - 0.025)], roof)
        for cx in (x - 0.02, x + w + 0.04):
            if 0.14 < cx < 0.62:
                p.tree(cx, base - 0.2, 0.05, jitter(rng, (45, 95, 45), 12))
    else:  # garden
        hedge = scaled(body, 0.8)
        if rng.random() < 0.6:
            p.box(0.14, 0.36, 0.5, 0.04, 0.05, hedge)
        cx, cy = u(0.35, 0.45), u(0.45, 0.55)
        cv2.ellipse(p.img, _px(p.size, cx, cy), (int(0.1 * p.size), int(0.06 * p.size)), 0, 0, 360, scaled(roof, 1.1), -1, cv2.LINE_AA)
        cv2.ellipse(
            p.img,
            _px(p.size, cx, cy),
            (int(0.08 * p.size), int(0.045 * p.size)),
            0,
            0,
            360,
            jitter(rng, (90, 150, 205), 12),
            -1,
            cv2.LINE_AA,
        )
        for _ in range(int(rng.integers(3, 7))):
            p.tree(u(0.2, 0.62), u(0.22, 0.7), u(0.05, 0.09), scaled(body, u(0.85, 1.1)))


def _painted_fountain(img: np.ndarray, rng: np.random.Generator, player_colour: str) -> None:
    size = img.shape[0]
    centre = _px(size, 0.5, 0.5)
    ring = jitter(rng, PLAYER_RGB[player_colour], 10)
    cv2.circle(img, centre, int(0.4 * size), scaled(ring, 0.8), -1, cv2.LINE_AA)
    cv2.circle(img, centre, int(0.36 * size), ring, -1, cv2.LINE_AA)
    stone = jitter(rng, (222, 215, 200), 8)
    cv2.fillPoly(img, [art.octagon_points(size / 2, size / 2, 0.27 * size)], stone, cv2.LINE_AA)
    for k, shade in enumerate(np.linspace(0.75, 1.2, 5)):
        cv2.circle(img, centre, int((0.2 - 0.03 * k) * size), scaled(jitter(rng, (70, 140, 205), 6), float(shade)), -1, cv2.LINE_AA)
    cv2.circle(img, centre, int(0.04 * size), (240, 244, 248), -1, cv2.LINE_AA)


def painted(item: dict[str, Any], rng: np.random.Generator, size: int, player_colour: str, randomise: bool = True) -> np.ndarray:
    """A painted tile: brushy sand, shaded oblique volumes, battlemented walls, a lit octagon in held-out faces."""
    img = _painted_ground(rng, size)
    if item.get("tile") == "fountain":
        _painted_fountain(img, rng, player_colour)
        return _brush(img, rng)
    shape, body, roof = _plan(rng, item["type"], randomise)
    _painted_building(_Painter(img, rng), rng, shape, body, roof)
    art.wall_strips(img, rng, item["walls"], look="crenel")
    img = _brush(img, rng)
    art.price_octagon(img, rng, item["type"], int(item["price"]), art.usable(art.HELD_OUT_FONTS), look="shaded")
    return img


# ============================================================================================= woodcut

INK = (22, 20, 18)


@cache
def _hatch_lines(size: int, step: int, angle_deg: float) -> np.ndarray:
    """Parallel anti-aliased lines ``step`` px apart at ``angle_deg`` over a ``size`` square, as 0-1 float32."""
    lines = np.zeros((size, size), np.uint8)
    diagonal = int(size * 1.5)
    direction = np.array([np.cos(np.radians(angle_deg)), np.sin(np.radians(angle_deg))])
    normal = np.array([-direction[1], direction[0]])
    for offset in range(-diagonal, diagonal, step):
        p0 = np.array([size / 2, size / 2]) + normal * offset - direction * diagonal
        p1 = p0 + direction * 2 * diagonal
        cv2.line(lines, tuple(int(v) for v in p0), tuple(int(v) for v in p1), 255, 1, cv2.LINE_AA)
    return lines.astype(np.float32) / 255


def _hatch(img: np.ndarray, mask: np.ndarray, step: int, angle_deg: float, ink: RGB) -> None:
    keep = _hatch_lines(img.shape[0], step, angle_deg) * (mask.astype(np.float32) / 255)
    img[:] = (img * (1 - keep[..., None]) + np.asarray(ink, np.float32) * keep[..., None]).astype(np.uint8)


class _Engraver:
    """Front elevations in ink: each shape filled with a pale wash, outlined, hatched on its shaded side."""

    def __init__(self, img: np.ndarray, rng: np.random.Generator) -> None:
        self.img, self.rng, self.size = img, rng, img.shape[0]
        self.line = max(1, int(round(self.size * rng.uniform(0.008, 0.016))))
        self.step = int(rng.integers(3, 6))

    def shape(self, points: list[tuple[float, float]], wash: RGB, *, hatch: float = 0.4) -> None:
        pts = _poly(self.size, points)
        cv2.fillPoly(self.img, [pts], wash, cv2.LINE_AA)
        if hatch > 0:
            mask = np.zeros(self.img.shape[:2], np.uint8)
            cv2.fillPoly(mask, [pts], 255)
            xs = pts[:, 0]
            cut = int(xs.max() - hatch * (xs.max() - xs.min()))
            mask[:, :cut] = 0
            _hatch(self.img, mask, self.step, 60.0, INK)
        cv2.polylines(self.img, [pts], True, INK, self.line, cv2.LINE_AA)

    def rect(self, x0: float, y0: float, x1: float, y1: float, wash: RGB, hatch: float = 0.35) -> None:
        self.shape([(x0, y0), (x1, y0), (x1, y1), (x0, y1)], wash, hatch=hatch)

    def dome(self, cx: float, base: float, r: float, wash: RGB) -> None:
        angles = np.linspace(np.pi, 2 * np.pi, 14)
        self.shape([(cx + r * np.cos(a), base + r * np.sin(a)) for a in angles], wash, hatch=0.45)

    def arches(self, x0: float, x1: float, y0: float, y1: float, count: int) -> None:
        step = (x1 - x0) / count
        for k in range(count):
            ax0, ax1 = x0 + (k + 0.25) * step, x0 + (k + 0.75) * step
            r = (ax1 - ax0) / 2
            angles = np.linspace(np.pi, 2 * np.pi, 8)
            points = [(ax0, y1)] + [((ax0 + ax1) / 2 + r * np.cos(a), y0 + r + r * np.sin(a)) for a in angles] + [(ax1, y1)]
            cv2.fillPoly(self.img, [_poly(self.size, points)], INK, cv2.LINE_AA)

    def tree(self, cx: float, cy: float, r: float, wash: RGB) -> None:
        angles = np.linspace(0, 2 * np.pi, 16, endpoint=False)
        radii = r * (1 + 0.15 * self.rng.standard_normal(16))
        self.shape([(cx + q * np.cos(a), cy + q * np.sin(a)) for q, a in zip(radii, angles)], wash, hatch=0.5)


def _woodcut_building(e: _Engraver, rng: np.random.Generator, shape: str, body: RGB, roof: RGB) -> None:
    u = rng.uniform
    if shape == "tower":
        x0, w, base = u(0.25, 0.42), u(0.14, 0.2), u(0.72, 0.82)
        h = min(u(0.42, 0.58), base - 0.26)
        e.rect(x0, base - h, x0 + w, base, body)
        for k in range(3):
            e.rect(x0 + k * w / 3 + 0.005, base - h - 0.04, x0 + (k + 0.6) * w / 3, base - h, body, hatch=0)
        e.arches(x0 + 0.02, x0 + w - 0.02, base - h + 0.08, base - h + 0.18, 1)
        e.arches(x0 + 0.02, x0 + w - 0.02, base - 0.2, base - 0.1, 1)
    elif shape == "seraglio":
        x0, w, base, h = u(0.15, 0.22), u(0.38, 0.46), u(0.72, 0.8), u(0.2, 0.26)
        e.rect(x0, base - h, x0 + w, base, body)
        for k in range(int(rng.integers(2, 4))):
            e.dome(x0 + w * (0.25 + 0.25 * k), base - h, 0.06, roof)
        e.arches(x0 + 0.02, x0 + w - 0.02, base - h + 0.05, base - 0.01, int(rng.integers(3, 6)))
    elif shape == "pavilion":
        x0, w, base, h = u(0.2, 0.26), u(0.3, 0.36), u(0.7, 0.78), u(0.16, 0.22)
        e.rect(x0, base - h, x0 + w, base, body)
        e.dome(x0 + w / 2, base - h, w * 0.38, roof)
        for k in range(int(rng.integers(3, 6))):
            xk = x0 + w * (k + 0.5) / 5
            cv2.line(e.img, _px(e.size, xk, base - h), _px(e.size, xk, base), INK, e.line, cv2.LINE_AA)
    elif shape == "chambers":
        x0, base = u(0.15, 0.2), u(0.75, 0.82)
        for _ in range(int(rng.integers(2, 4))):
            w, h = u(0.15, 0.2), u(0.25, 0.5)
            e.rect(x0, base - h, x0 + w, base, scaled(body, u(0.9, 1.05)))
            for r in range(int(h / 0.11)):
                e.arches(x0 + 0.01, x0 + w - 0.01, base - h + 0.03 + r * 0.11, base - h + 0.09 + r * 0.11, 2)
            x0 += w * 0.9
            if x0 > 0.58:
                break
    elif shape == "arcades":
        x0, w, base, h = u(0.14, 0.18), u(0.44, 0.5), u(0.66, 0.74), u(0.16, 0.2)
        e.shape([(x0 - 0.02, base - h), (x0 + w / 2, base - h - 0.1), (x0 + w + 0.02, base - h)], roof)
        e.rect(x0, base - h, x0 + w, base, body)
        e.arches(x0 + 0.01, x0 + w - 0.01, base - h + 0.03, base - 0.005, int(rng.integers(4, 7)))
    else:
        for _ in range(int(rng.integers(3, 7))):
            e.tree(u(0.22, 0.6), u(0.24, 0.68), u(0.05, 0.09), scaled(body, u(0.9, 1.1)))
        if rng.random() < 0.5:
            e.rect(0.15, 0.74, 0.6, 0.79, roof, hatch=0.0)


def _pale(colour: RGB) -> RGB:
    """A watercolour wash of ``colour``: the paper shows through."""
    red, green, blue = (int(v) for v in (np.asarray(colour, np.float64) * 0.6 + 95).clip(0, 255))
    return red, green, blue


def _woodcut_ground(rng: np.random.Generator, size: int) -> np.ndarray:
    paper = np.array(jitter(rng, (236, 226, 200), 10), np.float32)
    img = paper + 6 * cv2.resize(rng.normal(0, 1, (8, 8)).astype(np.float32), (size, size))[..., None]
    if rng.random() < 0.5:  # ground lines below the building
        step = int(rng.integers(5, 10))
        for y in range(int(0.8 * size), size, step):
            img[y, int(0.12 * size) : int(0.6 * size)] = paper * 0.75
    return img.clip(0, 255).astype(np.uint8)


def woodcut(item: dict[str, Any], rng: np.random.Generator, size: int, player_colour: str, randomise: bool = True) -> np.ndarray:
    """A woodcut tile: paper, pale washes under black outlines and hatching, hatched walls, an inked octagon."""
    img = _woodcut_ground(rng, size)
    if item.get("tile") == "fountain":
        e = _Engraver(img, rng)
        e.shape(
            [(0.5 + 0.36 * np.cos(a), 0.5 + 0.36 * np.sin(a)) for a in np.linspace(0, 2 * np.pi, 24, endpoint=False)],
            jitter(rng, PLAYER_RGB[player_colour], 10),
            hatch=0.3,
        )
        e.shape(
            [(0.5 + 0.22 * np.cos(a), 0.5 + 0.22 * np.sin(a)) for a in np.linspace(0, 2 * np.pi, 8, endpoint=False)],
            jitter(rng, (120, 170, 215), 10),
            hatch=0.0,
        )
        return art.print_grain(img, rng)
    shape, body, roof = _plan(rng, item["type"], randomise)
    _woodcut_building(_Engraver(img, rng), rng, shape, _pale(body), _pale(roof))
    art.wall_strips(img, rng, item["walls"], look=("hatch", "plain", "brick")[int(rng.integers(3))])
    if rng.random() < 0.3:
        art.frame(img, rng)
    look = "inked" if rng.random() < 0.7 else "flat"
    art.price_octagon(img, rng, item["type"], int(item["price"]), art.usable(art.TRAINING_FONTS), look=look)
    return img


# ============================================================================================= collage


def _texture(rng: np.random.Generator, size: int, colour: RGB) -> np.ndarray:
    """A photo-like surface: multi-octave noise (stone, sand, plaster), brick courses, stripes or a gradient."""
    kind = int(rng.integers(5))
    base = np.asarray(colour, np.float32)
    if kind == 0:  # brick
        img = np.empty((size, size, 3), np.float32)
        img[:] = base
        course, brick = int(rng.integers(4, 9)), int(rng.integers(8, 18))
        for row in range(0, size, course):
            img[row : row + 1] = base * 0.7
            offset = (row // course) % 2 * brick // 2
            img[row : row + course, offset::brick] = base * 0.7
        noise = rng.normal(0, 1, (size, size, 1)).astype(np.float32)
        return (img * (1 + 0.06 * noise)).clip(0, 255)
    if kind == 1:  # stripes
        ys, xs = np.mgrid[0:size, 0:size].astype(np.float32)
        angle = rng.uniform(0, np.pi)
        band = np.sin((xs * np.cos(angle) + ys * np.sin(angle)) * rng.uniform(0.2, 0.7)) > 0
        other = np.asarray(random_colour(rng, lightness=(0.5, 0.9)), np.float32)
        return np.where(band[..., None], base, base * 0.6 + other * 0.4)
    if kind == 2:  # gradient
        t = np.linspace(0.7, 1.25, size, dtype=np.float32)
        return np.broadcast_to(base[None, None, :] * t[:, None, None], (size, size, 3)).clip(0, 255).copy()
    octaves = sum(
        cv2.resize(rng.normal(0, 1, (cells, cells, 3)).astype(np.float32), (size, size), interpolation=cv2.INTER_CUBIC) / (k + 1)
        for k, cells in enumerate((3, 8, 24, size // 2))
    )
    amount = 10 if kind == 3 else 22
    return (base + amount * octaves).clip(0, 255)


def _cutout(img: np.ndarray, rng: np.random.Generator, points: list[tuple[float, float]], colour: RGB) -> None:
    """Paste a textured cut-out shape with a drop shadow and (sometimes) a white cut border."""
    size = img.shape[0]
    pts = _poly(size, points)
    mask = np.zeros((size, size), np.uint8)
    cv2.fillPoly(mask, [pts], 255, cv2.LINE_AA)
    shadow = cv2.GaussianBlur(np.roll(mask, (int(0.025 * size), int(0.03 * size)), axis=(0, 1)), (0, 0), 0.015 * size)
    out = img.astype(np.float32) * (1 - 0.4 * shadow[..., None].astype(np.float32) / 255)
    if rng.random() < 0.4:
        border = cv2.dilate(mask, np.ones((3, 3), np.uint8), iterations=max(1, size // 64))
        alpha = border.astype(np.float32)[..., None] / 255
        out = out * (1 - alpha) + np.array((245, 243, 238), np.float32) * alpha
    alpha = mask.astype(np.float32)[..., None] / 255
    out = out * (1 - alpha) + _texture(rng, size, colour) * alpha
    img[:] = out.clip(0, 255).astype(np.uint8)


def _collage_building(img: np.ndarray, rng: np.random.Generator, shape: str, body: RGB, roof: RGB) -> None:
    u = rng.uniform
    if shape == "tower":
        x0, w, base, spire = u(0.25, 0.42), u(0.14, 0.22), u(0.72, 0.82), u(0.06, 0.12)
        h = min(u(0.42, 0.58), base - 0.18 - spire)
        _cutout(img, rng, [(x0, base), (x0 + w, base), (x0 + w, base - h), (x0, base - h)], body)
        _cutout(img, rng, [(x0 - 0.02, base - h), (x0 + w + 0.02, base - h), (x0 + w / 2, base - h - spire)], roof)
    elif shape == "garden":
        for _ in range(int(rng.integers(3, 7))):
            cx, cy, r = u(0.22, 0.6), u(0.24, 0.68), u(0.05, 0.1)
            angles = np.linspace(0, 2 * np.pi, 12, endpoint=False)
            _cutout(img, rng, [(cx + r * np.cos(a), cy + r * np.sin(a)) for a in angles], scaled(body, u(0.85, 1.1)))
    else:
        x0, w = u(0.14, 0.22), u(0.3, 0.48)
        base, h = u(0.68, 0.8), u(0.16, 0.3) if shape != "chambers" else u(0.3, 0.5)
        _cutout(img, rng, [(x0, base), (x0 + w, base), (x0 + w, base - h), (x0, base - h)], body)
        if shape in ("seraglio", "pavilion"):
            count = 1 if shape == "pavilion" else int(rng.integers(2, 4))
            for k in range(count):
                cx, r = x0 + w * (k + 0.5) / count, w / count * u(0.3, 0.45)
                angles = np.linspace(np.pi, 2 * np.pi, 12)
                _cutout(img, rng, [(cx + r * np.cos(a), base - h + r * np.sin(a)) for a in angles], roof)
        elif shape == "arcades":
            _cutout(img, rng, [(x0 - 0.02, base - h), (x0 + w / 2, base - h - 0.1), (x0 + w + 0.02, base - h)], roof)
        windows = scaled(body, 0.35)
        count = int(rng.integers(2, 6))
        for k in range(count):
            wx = x0 + w * (k + 0.3) / count
            cv2.rectangle(img, _px(img.shape[0], wx, base - h * 0.7), _px(img.shape[0], wx + w * 0.4 / count, base - h * 0.25), windows, -1)


def collage(item: dict[str, Any], rng: np.random.Generator, size: int, player_colour: str, randomise: bool = True) -> np.ndarray:
    """A collage tile: a photographic ground, textured cut-out shapes with shadows, stone or plain walls."""
    light = (0.66, 0.9)  # grounds stay lighter than any wall strip
    ground = jitter(rng, (214, 194, 152), 20) if rng.random() < 0.7 else random_colour(rng, lightness=light, saturation=(0.1, 0.6))
    img = _texture(rng, size, ground).astype(np.uint8)
    if item.get("tile") == "fountain":
        angles = np.linspace(0, 2 * np.pi, 20, endpoint=False)
        _cutout(img, rng, [(0.5 + 0.38 * np.cos(a), 0.5 + 0.38 * np.sin(a)) for a in angles], jitter(rng, PLAYER_RGB[player_colour], 10))
        _cutout(img, rng, [(0.5 + 0.2 * np.cos(a), 0.5 + 0.2 * np.sin(a)) for a in angles], jitter(rng, (80, 150, 210), 10))
        return img
    shape, body, roof = _plan(rng, item["type"], randomise)
    _collage_building(img, rng, shape, body, roof)
    art.wall_strips(img, rng, item["walls"], look=("stone", "plain", "brick", "hatch")[int(rng.integers(4))])
    if rng.random() < 0.3:
        art.frame(img, rng)
    look = ("flat", "badge", "inked")[int(rng.integers(3))]
    art.price_octagon(img, rng, item["type"], int(item["price"]), art.usable(art.TRAINING_FONTS), look=look)
    return img


# ============================================================================================= mosaic
# Never trained on and, unlike ``painted``, never looked at while a reader was tuned: designed on 2026-12-07
# and first read after it was drawn (``models.alhambra.transfer``'s ``unseen`` set).


def _mosaic_ground(rng: np.random.Generator, size: int) -> np.ndarray:
    """A light ground of small glazed squares turned 45 degrees, two soft tones on a third."""
    base = jitter(rng, (226, 214, 188), 14) if rng.random() < 0.6 else random_colour(rng, lightness=(0.75, 0.9), saturation=(0.1, 0.35))
    img = np.empty((size, size, 3), np.uint8)
    img[:] = base
    step = max(6, int(size * rng.uniform(0.07, 0.11)))
    tones = [scaled(base, rng.uniform(0.86, 0.94)), jitter(rng, scaled(base, 1.04), 8)]
    for row, y in enumerate(range(0, size + step, step)):
        for col, x in enumerate(range(0, size + step, step)):
            half = step * 0.32
            diamond = np.array([(x, y - half), (x + half, y), (x, y + half), (x - half, y)], np.int32)
            cv2.fillConvexPoly(img, diamond, tones[(row + col) % 2], cv2.LINE_AA)
    return img


def _arch(img: np.ndarray, size: int, cx: float, base: float, w: float, h: float, colour: RGB) -> None:
    """A horseshoe arch opening: a rectangle under a circle a little wider than it."""
    x0, x1 = _px(size, cx - w / 2, base - h + w / 2)[0], _px(size, cx + w / 2, base)[0]
    top = _px(size, 0, base - h + w / 2)[1]
    cv2.rectangle(img, (x0, top), (x1, _px(size, 0, base)[1]), colour, -1)
    cv2.circle(img, _px(size, cx, base - h + w / 2), int(round(size * w * 0.56)), colour, -1, cv2.LINE_AA)


def _mosaic_building(img: np.ndarray, rng: np.random.Generator, shape: str, body: RGB, roof: RGB) -> None:
    """Flat banded silhouettes with horseshoe arches, outlined a shade darker than their body."""
    size = img.shape[0]
    dark = scaled(body, 0.45)
    ground = 0.68 + rng.uniform(-0.03, 0.03)
    parts: list[np.ndarray] = []
    if shape == "pavilion":
        parts = [_poly(size, [(0.18, ground), (0.18, 0.42), (0.72, 0.42), (0.72, ground)])]
        cv2.ellipse(img, _px(size, 0.45, 0.42), (int(size * 0.17), int(size * 0.15)), 0, 180, 360, roof, -1, cv2.LINE_AA)
    elif shape == "seraglio":
        parts = [
            _poly(size, [(0.15, ground), (0.15, 0.3), (0.29, 0.3), (0.29, ground)]),
            _poly(size, [(0.61, ground), (0.61, 0.3), (0.75, 0.3), (0.75, ground)]),
            _poly(size, [(0.29, ground), (0.29, 0.44), (0.61, 0.44), (0.61, ground)]),
        ]
    elif shape == "arcades":
        parts = [_poly(size, [(0.1, ground), (0.1, 0.38), (0.8, 0.38), (0.8, ground)])]
    elif shape == "chambers":
        parts = [_poly(size, [(0.2, ground), (0.2, 0.24), (0.7, 0.24), (0.7, ground)])]
    elif shape == "garden":
        for cx in (0.22, 0.45, 0.66):
            cv2.ellipse(img, _px(size, cx, ground - 0.2), (int(size * 0.07), int(size * 0.2)), 0, 0, 360, roof, -1, cv2.LINE_AA)
        cv2.ellipse(img, _px(size, 0.45, ground), (int(size * 0.2), int(size * 0.04)), 0, 0, 360, body, -1, cv2.LINE_AA)
    else:  # tower: tall and narrow under a pointed roof
        parts = [_poly(size, [(0.34, ground), (0.34, 0.22), (0.56, 0.22), (0.56, ground)])]
        cv2.fillConvexPoly(img, _poly(size, [(0.31, 0.23), (0.45, 0.07), (0.59, 0.23)]), roof, cv2.LINE_AA)
    for part in parts:
        cv2.fillPoly(img, [part], body, cv2.LINE_AA)
        x0, y0 = part.min(axis=0)
        x1, y1 = part.max(axis=0)
        band = max(2, size // 40)
        for y in range(int(y0) + band, int(y1), 3 * band):  # Moorish bands across the walls
            cv2.rectangle(img, (int(x0), y), (int(x1), y + band // 2), scaled(body, 0.85), -1)
        cv2.polylines(img, [part], True, dark, max(1, size // 80), cv2.LINE_AA)
    openings = {"arcades": 4, "seraglio": 1, "pavilion": 2, "chambers": 2, "tower": 1}.get(shape, 0)
    if openings:
        left, right = {
            "arcades": (0.14, 0.76),
            "seraglio": (0.33, 0.57),
            "pavilion": (0.24, 0.66),
            "chambers": (0.26, 0.64),
            "tower": (0.38, 0.52),
        }[shape]
        w = (right - left) / openings * 0.6
        for k in range(openings):
            cx = left + (k + 0.5) * (right - left) / openings
            _arch(img, size, cx, ground, w, 0.16 if shape != "chambers" else 0.1, dark)
    if shape == "chambers":  # windows of the upper floors
        for floor in (0.32, 0.44):
            for cx in (0.3, 0.45, 0.6):
                _arch(img, size, cx, floor + 0.06, 0.05, 0.07, dark)


def mosaic(item: dict[str, Any], rng: np.random.Generator, size: int, player_colour: str, randomise: bool = True) -> np.ndarray:
    """A mosaic tile: a glazed ground, flat banded buildings with horseshoe arches, glazed walls, a gilt octagon."""
    img = _mosaic_ground(rng, size)
    if item.get("tile") == "fountain":
        star = [
            (0.5 + (0.38 if k % 2 == 0 else 0.26) * np.cos(a), 0.5 + (0.38 if k % 2 == 0 else 0.26) * np.sin(a))
            for k, a in enumerate(np.linspace(0, 2 * np.pi, 16, endpoint=False))
        ]
        cv2.fillPoly(img, [_poly(size, star)], jitter(rng, PLAYER_RGB[player_colour], 10), cv2.LINE_AA)
        cv2.circle(img, _px(size, 0.5, 0.5), int(size * 0.16), jitter(rng, (70, 140, 200), 10), -1, cv2.LINE_AA)
        return art.print_grain(img, rng)
    shape, body, roof = _plan(rng, item["type"], randomise)
    _mosaic_building(img, rng, shape, body, roof)
    art.wall_strips(img, rng, item["walls"], look="checker")
    art.price_octagon(img, rng, item["type"], int(item["price"]), art.usable(art.UNSEEN_FONTS), look="gilt")
    return art.print_grain(img, rng)


ArtFunction = Callable[[dict[str, Any], np.random.Generator, int, str, bool], np.ndarray]
STYLES: dict[str, ArtFunction] = {"painted": painted, "woodcut": woodcut, "collage": collage, "mosaic": mosaic}
UNSEEN_STYLE = "mosaic"
NEVER_TRAINED = (HELD_OUT_STYLE, UNSEEN_STYLE)
