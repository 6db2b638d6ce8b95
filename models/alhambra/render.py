"""Alhambra renders: tile art, a legal palace laid out with small gaps, photographed on a table.

``render(seed)`` returns a ``Sample``: the photo (RGB) and its label, the FORMATS.md document of
one player plus a ``render`` block (seed, the palace's lattice homography, every tile's outline
and centre in photo pixels, camera and lighting). Tile art is drawn top-down at ``TILE_PX``
pixels with OpenCV; the table, clutter, camera and lighting come from ``models.scene``.

``style`` picks the tile art: ``classic`` (the flat icons below, the default) or one of
``models.alhambra.styles.STYLES`` (painted, woodcut, collage). ``randomise`` draws buildings
unrelated to their type (any type's shape, any colours; for classic also the digits in every
training font); without it each type keeps its own building, as in a printed set. ``card`` prints the tiles on card
stock: print grain, a cut edge, glare, rounded corners and a visible thickness under a tilted
camera. With the defaults a seed renders exactly as it always has.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from models import scene
from models.alhambra import art as tile_art
from models.alhambra import styles
from scoring.alhambra import BUILDING_TYPES, generate_palace
from scoring.data import load_data

TILE_PX = 128
TILE_MM = 45.0  # printed tile side
TYPES = BUILDING_TYPES  # the scoring core's order
SIDES = "NESW"
STEPS = {"N": (0, -1), "E": (1, 0), "S": (0, 1), "W": (-1, 0)}
OPPOSITE = {"N": "S", "E": "W", "S": "N", "W": "E"}
PRICE_FILL = tile_art.OCTAGON_RGB  # fill of the price octagon per type (RGB)
ART_STYLES = ("classic", *styles.STYLES)
CARD_THICKNESS_MM = (1.6, 2.6)  # printed tiles are thick card
CARD_CORNER = (0.02, 0.06)  # corner radius, of the tile side
CARD_EDGE_RGB = (168, 158, 140)  # the card's cut side: grey-brown board
FONTS = (cv2.FONT_HERSHEY_SIMPLEX, cv2.FONT_HERSHEY_DUPLEX, cv2.FONT_HERSHEY_TRIPLEX, cv2.FONT_HERSHEY_COMPLEX)


@dataclass(frozen=True)
class Sample:
    """One rendered photo and its exact label (FORMATS.md document + ``render`` block)."""

    image_rgb: np.ndarray
    label: dict[str, Any]


def catalogue() -> list[dict[str, Any]]:
    """Return the 54 building tiles of ``scoring/<game>/data/alhambra_tiles.json`` (id, type, price, walls)."""
    return list(load_data("alhambra", "tiles")["tiles"])


# ---------------------------------------------------------------------------------------------
# palaces


def palace_of(seed: int, size: int) -> list[dict[str, Any]]:
    """Return a legal palace of ``size`` tiles for ``seed``, drawn by the scoring core's generator."""
    return _normalise_palace(generate_palace(random.Random(seed), size))


def _normalise_palace(palace: Any) -> list[dict[str, Any]]:
    """Turn the scoring core's palace ({(x, y): Tile}) into FORMATS.md items with ``tile_id``."""
    items: list[dict[str, Any]] = []
    for (x, y), tile in sorted(palace.items(), key=lambda entry: (entry[0][1], entry[0][0])):
        if tile.type == "fountain":
            items.insert(0, {"at": [x, y], "tile": "fountain"})
        else:
            items.append({"at": [x, y], "type": tile.type, "walls": tile.walls, "tile_id": tile.tile_id})
    fx, fy = items[0]["at"]
    for item in items:
        item["at"] = [item["at"][0] - fx, item["at"][1] - fy]
    return items


# ---------------------------------------------------------------------------------------------
# tile art


def _jitter(rng: np.random.Generator, colour: tuple[int, int, int], amount: float = 14.0) -> tuple[int, int, int]:
    values = np.clip(np.asarray(colour, dtype=np.float64) + rng.normal(0.0, amount, 3), 0, 255)
    red, green, blue = (int(v) for v in values)
    return red, green, blue


def _ground(rng: np.random.Generator, size: int) -> np.ndarray:
    """Sandy-yellow cardboard ground with low-frequency mottling and speckle."""
    base = np.array(_jitter(rng, (226, 196, 128), 10.0), dtype=np.float32)
    low = cv2.resize(rng.normal(0.0, 1.0, (4, 4)).astype(np.float32), (size, size), interpolation=cv2.INTER_CUBIC)
    speck = rng.normal(0.0, 1.0, (size, size)).astype(np.float32)
    shade = 1.0 + 0.04 * low[..., None] + 0.02 * speck[..., None]
    tile = base[None, None, :] * shade
    return np.clip(tile, 0, 255).astype(np.uint8)


def _pt(size: int, x: float, y: float) -> tuple[int, int]:
    return int(round(x * size)), int(round(y * size))


def _rect(img: np.ndarray, size: int, x0: float, y0: float, x1: float, y1: float, colour, edge=(60, 45, 35)) -> None:
    cv2.rectangle(img, _pt(size, x0, y0), _pt(size, x1, y1), colour, -1, cv2.LINE_AA)
    cv2.rectangle(img, _pt(size, x0, y0), _pt(size, x1, y1), edge, max(1, size // 96), cv2.LINE_AA)


def _poly(img: np.ndarray, size: int, points: list[tuple[float, float]], colour, edge=(60, 45, 35)) -> None:
    pts = np.array([_pt(size, x, y) for x, y in points], dtype=np.int32)
    cv2.fillPoly(img, [pts], colour, cv2.LINE_AA)
    cv2.polylines(img, [pts], True, edge, max(1, size // 96), cv2.LINE_AA)


def _windows(img, size, rng, x0, y0, x1, y1, cols, rows, colour=(45, 40, 50), arched=False) -> None:
    w, h = (x1 - x0) / cols, (y1 - y0) / rows
    for r in range(rows):
        for c in range(cols):
            cx0, cy0 = x0 + c * w + 0.25 * w, y0 + r * h + 0.2 * h
            cx1, cy1 = x0 + (c + 1) * w - 0.25 * w, y0 + (r + 1) * h - 0.15 * h
            cv2.rectangle(img, _pt(size, cx0, cy0 + (0.3 * (cy1 - cy0) if arched else 0)), _pt(size, cx1, cy1), colour, -1, cv2.LINE_AA)
            if arched:
                centre = _pt(size, (cx0 + cx1) / 2, cy0 + 0.3 * (cy1 - cy0))
                radius = max(1, int((cx1 - cx0) * size / 2))
                cv2.ellipse(img, centre, (radius, radius), 0, 180, 360, colour, -1, cv2.LINE_AA)


def _tree(img, size, x, y, r, colour) -> None:
    cv2.circle(img, _pt(size, x, y), max(2, int(r * size)), colour, -1, cv2.LINE_AA)
    dark = tuple(max(0, c - 35) for c in colour)
    cv2.circle(img, _pt(size, x, y), max(2, int(r * size)), dark, max(1, size // 96), cv2.LINE_AA)


def _cypress(img, size, x, y0, y1, width, colour) -> None:
    centre = _pt(size, x, (y0 + y1) / 2)
    axes = (max(2, int(width * size / 2)), max(3, int((y1 - y0) * size / 2)))
    cv2.ellipse(img, centre, axes, 0, 0, 360, colour, -1, cv2.LINE_AA)


def _draw_pavilion(img, size, rng, dx, dy) -> None:
    white = _jitter(rng, (238, 236, 228), 8)
    roof = _jitter(rng, (40, 170, 185), 14)
    _rect(img, size, 0.22 + dx, 0.42 + dy, 0.68 + dx, 0.72 + dy, white)
    _poly(img, size, [(0.18 + dx, 0.43 + dy), (0.45 + dx, 0.2 + dy), (0.72 + dx, 0.43 + dy)], roof)
    for side in (0.12, 0.7):
        _rect(img, size, side + dx, 0.36 + dy, side + 0.12 + dx, 0.72 + dy, white)
        cv2.ellipse(img, _pt(size, side + 0.06 + dx, 0.36 + dy), (int(0.07 * size), int(0.07 * size)), 0, 180, 360, roof, -1, cv2.LINE_AA)
    _windows(img, size, rng, 0.26 + dx, 0.48 + dy, 0.64 + dx, 0.7 + dy, int(rng.integers(2, 4)), 1, arched=True)


def _draw_seraglio(img, size, rng, dx, dy) -> None:
    body = _jitter(rng, (195, 75, 60), 12)
    roof = _jitter(rng, (160, 30, 30), 12)
    _rect(img, size, 0.15 + dx, 0.45 + dy, 0.7 + dx, 0.74 + dy, body)
    _rect(img, size, 0.3 + dx, 0.3 + dy, 0.55 + dx, 0.47 + dy, body)
    _poly(img, size, [(0.12 + dx, 0.46 + dy), (0.27 + dx, 0.32 + dy), (0.42 + dx, 0.46 + dy)], roof)
    _poly(img, size, [(0.43 + dx, 0.46 + dy), (0.58 + dx, 0.32 + dy), (0.73 + dx, 0.46 + dy)], roof)
    _poly(img, size, [(0.27 + dx, 0.31 + dy), (0.425 + dx, 0.15 + dy), (0.58 + dx, 0.31 + dy)], roof)
    _windows(img, size, rng, 0.18 + dx, 0.5 + dy, 0.67 + dx, 0.72 + dy, int(rng.integers(3, 5)), 1, colour=(70, 25, 25), arched=True)


def _draw_arcades(img, size, rng, dx, dy) -> None:
    body = _jitter(rng, (205, 160, 105), 12)
    roof = _jitter(rng, (140, 85, 50), 12)
    cypress = _jitter(rng, (35, 75, 40), 10)
    _rect(img, size, 0.24 + dx, 0.4 + dy, 0.66 + dx, 0.72 + dy, body)
    _poly(img, size, [(0.2 + dx, 0.41 + dy), (0.45 + dx, 0.26 + dy), (0.7 + dx, 0.41 + dy)], roof)
    _windows(img, size, rng, 0.26 + dx, 0.44 + dy, 0.64 + dx, 0.71 + dy, int(rng.integers(3, 5)), 1, colour=(90, 55, 30), arched=True)
    _cypress(img, size, 0.14 + dx, 0.25 + dy, 0.74 + dy, 0.1, cypress)
    _cypress(img, size, 0.78 + dx, 0.2 + dy, 0.62 + dy, 0.1, cypress)


def _draw_chambers(img, size, rng, dx, dy) -> None:
    white = _jitter(rng, (236, 236, 232), 8)
    _rect(img, size, 0.2 + dx, 0.18 + dy, 0.48 + dx, 0.74 + dy, white)
    _rect(img, size, 0.48 + dx, 0.32 + dy, 0.76 + dx, 0.7 + dy, white)
    _windows(img, size, rng, 0.2 + dx, 0.2 + dy, 0.48 + dx, 0.72 + dy, 2, int(rng.integers(3, 5)))
    _windows(img, size, rng, 0.48 + dx, 0.34 + dy, 0.76 + dx, 0.68 + dy, 2, int(rng.integers(2, 4)))


def _draw_garden(img, size, rng, dx, dy) -> None:
    hedge = _jitter(rng, (70, 140, 55), 12)
    tree = _jitter(rng, (45, 115, 45), 12)
    _rect(img, size, 0.12 + dx, 0.15 + dy, 0.7 + dx, 0.26 + dy, hedge, edge=(40, 80, 35))
    _rect(img, size, 0.12 + dx, 0.15 + dy, 0.23 + dx, 0.72 + dy, hedge, edge=(40, 80, 35))
    _rect(img, size, 0.6 + dx, 0.15 + dy, 0.7 + dx, 0.6 + dy, hedge, edge=(40, 80, 35))
    for x, y in ((0.33, 0.36), (0.52, 0.62), (0.32, 0.62), (0.5, 0.36)):
        _tree(img, size, x + dx + rng.normal(0, 0.01), y + dy + rng.normal(0, 0.01), 0.075, tree)
    cv2.circle(img, _pt(size, 0.42 + dx, 0.49 + dy), int(0.07 * size), (230, 230, 225), -1, cv2.LINE_AA)
    cv2.circle(img, _pt(size, 0.42 + dx, 0.49 + dy), int(0.05 * size), _jitter(rng, (80, 150, 210), 10), -1, cv2.LINE_AA)


def _draw_tower(img, size, rng, dx, dy) -> None:
    body = _jitter(rng, (200, 125, 185), 14)
    _rect(img, size, 0.28 + dx, 0.2 + dy, 0.55 + dx, 0.74 + dy, body)
    for k in range(4):
        x = 0.28 + k * 0.075 + dx
        _rect(img, size, x, 0.14 + dy, x + 0.045, 0.21 + dy, body)
    _windows(img, size, rng, 0.3 + dx, 0.26 + dy, 0.53 + dx, 0.7 + dy, 1, int(rng.integers(2, 4)), colour=(70, 35, 60), arched=True)
    trunk = (110, 80, 45)
    base, top = _pt(size, 0.72 + dx, 0.68 + dy), _pt(size, 0.68 + dx, 0.3 + dy)
    cv2.line(img, base, top, trunk, max(2, size // 32), cv2.LINE_AA)
    leaf = _jitter(rng, (50, 130, 50), 12)
    for angle in np.linspace(0, 2 * np.pi, int(rng.integers(5, 8)), endpoint=False):
        end = (int(top[0] + np.cos(angle) * 0.14 * size), int(top[1] + np.sin(angle) * 0.08 * size + 0.03 * size))
        cv2.line(img, top, end, leaf, max(2, size // 40), cv2.LINE_AA)


DRAW = {
    "pavilion": _draw_pavilion,
    "seraglio": _draw_seraglio,
    "arcades": _draw_arcades,
    "chambers": _draw_chambers,
    "garden": _draw_garden,
    "tower": _draw_tower,
}


def _price(img: np.ndarray, size: int, rng: np.random.Generator, kind: str, price: int) -> None:
    """Draw the price octagon in the bottom-right corner, filled with the type's colour."""
    cx, cy = (0.79 + rng.normal(0, 0.008)) * size, (0.79 + rng.normal(0, 0.008)) * size
    radius = (0.135 + rng.normal(0, 0.006)) * size
    angles = np.pi / 8 + np.arange(8) * np.pi / 4
    pts = np.stack([cx + radius * np.cos(angles), cy + radius * np.sin(angles)], axis=1).astype(np.int32)
    fill = _jitter(rng, PRICE_FILL[kind], 8)
    cv2.fillPoly(img, [pts], fill, cv2.LINE_AA)
    cv2.polylines(img, [pts], True, (50, 35, 25), max(1, size // 64), cv2.LINE_AA)
    text = str(price)
    font = FONTS[int(rng.integers(len(FONTS)))]
    thickness = int(rng.integers(1, 3)) * max(1, size // 96)
    target_h = radius * (0.9 if len(text) == 1 else 0.75)
    (w, h), _ = cv2.getTextSize(text, font, 1.0, thickness)
    scale = target_h / max(h, 1)
    if w * scale > 1.5 * radius:
        scale = 1.5 * radius / w
    (w, h), _ = cv2.getTextSize(text, font, scale, thickness)
    light = kind in ("seraglio", "tower", "arcades", "garden") and rng.random() < 0.3
    ink = (245, 245, 240) if light else _jitter(rng, (25, 20, 15), 6)
    cv2.putText(img, text, (int(cx - w / 2), int(cy + h / 2)), font, scale, ink, thickness, cv2.LINE_AA)


def _walls(img: np.ndarray, size: int, rng: np.random.Generator, walls: str) -> None:
    """Dark-brown brick strips about a tenth of the tile wide along the walled sides."""
    width = int(round((0.1 + rng.normal(0, 0.008)) * size))
    brick = np.array(_jitter(rng, (100, 58, 32), 10), dtype=np.uint8)
    mortar = np.array(_jitter(rng, (150, 110, 70), 10), dtype=np.uint8)
    strip = np.empty((width, size, 3), dtype=np.uint8)
    strip[:] = brick
    course = max(3, width // 3)
    brick_len = max(6, size // 10)
    for row in range(0, width, course):
        strip[row, :] = mortar
        offset = (row // course) % 2 * brick_len // 2
        strip[row : row + course, offset::brick_len] = mortar
    tile_art.lay_strips(img, strip, walls)


def draw_tile(
    item: dict[str, Any],
    rng: np.random.Generator,
    size: int = TILE_PX,
    *,
    player_colour: str = "blue",
    style: str = "classic",
    randomise: bool = False,
) -> np.ndarray:
    """Return the top-down RGB art of one palace item (a building tile or the fountain) in ``style``.

    Raises:
        ValueError: ``style`` is not one of ``ART_STYLES``.
    """
    if style != "classic":
        if style not in styles.STYLES:
            raise ValueError(f"style: expected one of {', '.join(ART_STYLES)}, got {style!r}")
        return styles.STYLES[style](item, rng, size, player_colour, randomise)
    if randomise:
        return _classic_randomised(item, rng, size, player_colour)
    img = _ground(rng, size)
    if item.get("tile") == "fountain":
        _draw_fountain(img, size, rng, player_colour)
    else:
        dx, dy = rng.normal(0, 0.015, 2)
        DRAW[item["type"]](img, size, rng, float(dx), float(dy))
        _walls(img, size, rng, item["walls"])
        _price(img, size, rng, item["type"], int(item["price"]))
    edge = tuple(int(c) for c in _jitter(rng, (170, 140, 90), 8))
    cv2.rectangle(img, (0, 0), (size - 1, size - 1), edge, max(1, size // 128))
    return img


def _classic_randomised(item: dict[str, Any], rng: np.random.Generator, size: int, player_colour: str) -> np.ndarray:
    """The flat icons with the building unrelated to the type: any type's icon, any hue, digits in every training font."""
    img = _ground(rng, size)
    if item.get("tile") == "fountain":
        _draw_fountain(img, size, rng, player_colour)
        return img
    kind = item["type"]
    shape = kind if rng.random() < styles.SHAPE_FOLLOWS_TYPE else TYPES[int(rng.integers(len(TYPES)))]
    ground = img.copy()
    dx, dy = rng.normal(0, 0.015, 2)
    DRAW[shape](img, size, rng, float(dx), float(dy))
    if rng.random() >= styles.COLOUR_FOLLOWS_TYPE:  # turn the building's hues, keep the ground
        drawn = np.abs(img.astype(np.int16) - ground.astype(np.int16)).sum(axis=2) > 24
        hsv = cv2.cvtColor(img, cv2.COLOR_RGB2HSV)
        hsv[..., 0] = ((hsv[..., 0].astype(np.int16) + int(rng.integers(20, 160))) % 180).astype(np.uint8)
        hsv[..., 1] = np.clip(hsv[..., 1].astype(np.float32) * rng.uniform(0.5, 1.4), 0, 255).astype(np.uint8)
        img[drawn] = cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB)[drawn]
    tile_art.wall_strips(img, rng, item["walls"], look="brick")
    tile_art.price_octagon(img, rng, kind, int(item["price"]), tile_art.usable(tile_art.TRAINING_FONTS), look="flat")
    edge = tuple(int(c) for c in _jitter(rng, (170, 140, 90), 8))
    cv2.rectangle(img, (0, 0), (size - 1, size - 1), edge, max(1, size // 128))
    return img


def _draw_fountain(img: np.ndarray, size: int, rng: np.random.Generator, player_colour: str) -> None:
    paving = _jitter(rng, styles.PLAYER_RGB[player_colour], 10)
    joint = tuple(max(0, c - 45) for c in paving)
    mask = np.zeros((size, size), dtype=np.uint8)
    lobe = int(0.2 * size)
    for x, y in ((0.5, 0.28), (0.72, 0.5), (0.5, 0.72), (0.28, 0.5)):
        cv2.circle(mask, _pt(size, x, y), lobe, 255, -1, cv2.LINE_AA)
    cv2.rectangle(mask, _pt(size, 0.3, 0.3), _pt(size, 0.7, 0.7), 255, -1)
    paved = np.empty_like(img)
    paved[:] = paving
    step = max(4, size // 14)
    paved[::step, :] = joint
    paved[:, ::step] = joint
    alpha = (mask.astype(np.float32) / 255.0)[..., None]
    img[:] = (img * (1 - alpha) + paved * alpha).astype(np.uint8)
    contours, _ = cv2.findContours((mask > 127).astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    cv2.drawContours(img, contours, -1, (90, 70, 50), max(1, size // 64), cv2.LINE_AA)
    centre = _pt(size, 0.5, 0.5)
    cv2.circle(img, centre, int(0.16 * size), _jitter(rng, (225, 222, 215), 6), -1, cv2.LINE_AA)
    cv2.circle(img, centre, int(0.12 * size), _jitter(rng, (70, 145, 215), 10), -1, cv2.LINE_AA)
    cv2.circle(img, centre, int(0.04 * size), (235, 240, 245), -1, cv2.LINE_AA)


# ---------------------------------------------------------------------------------------------
# palace layout and the photo


def layout_palace(
    items: list[dict[str, Any]],
    rng: np.random.Generator,
    *,
    tile_px: int = TILE_PX,
    player_colour: str = "blue",
    style: str = "classic",
    randomise: bool = False,
    card_rng: np.random.Generator | None = None,
):
    """Lay the palace's tiles out top-down with small gaps and misalignment.

    Returns ``(art_rgb, alpha, grid_to_art, outlines, footprints)``: ``grid_to_art`` maps grid
    (x, y) (tile centres at integers) to art pixels; ``outlines`` maps each ``at`` to its 4 corners
    in art px. With ``card_rng`` the tiles are card stock (grain, cut edge, glare, rounded corners)
    drawn from that generator, so the layout itself is the same as without, and ``footprints``
    lists their rounded outlines in art px (for the card's thickness); otherwise it is empty.
    """
    gap = rng.uniform(0.01, 0.05) * tile_px
    pitch = tile_px + gap
    margin = int(0.3 * tile_px)
    xs = [item["at"][0] for item in items]
    ys = [item["at"][1] for item in items]
    x0, y0 = min(xs), min(ys)
    width = int((max(xs) - x0 + 1) * pitch + 2 * margin)
    height = int((max(ys) - y0 + 1) * pitch + 2 * margin)
    art = np.zeros((height, width, 3), dtype=np.uint8)
    alpha = np.zeros((height, width), dtype=np.uint8)
    grid_to_art = np.array(
        [[pitch, 0, margin + pitch / 2 - x0 * pitch], [0, pitch, margin + pitch / 2 - y0 * pitch], [0, 0, 1]], dtype=np.float64
    )
    half = tile_px / 2
    square = np.array([[-half, -half], [half, -half], [half, half], [-half, half]])
    outlines: dict[tuple[int, int], np.ndarray] = {}
    footprints: list[np.ndarray] = []
    for item in items:
        at = (int(item["at"][0]), int(item["at"][1]))
        tile = draw_tile(item, rng, tile_px, player_colour=player_colour, style=style, randomise=randomise)
        shape = square
        if card_rng is not None:
            tile = tile_art.card_stock(tile, card_rng)
            shape = tile_art.rounded_square(tile_px, card_rng.uniform(*CARD_CORNER) * tile_px)
        centre = grid_to_art @ np.array([at[0], at[1], 1.0])
        shift = rng.normal(0, 0.012 * tile_px, 2)
        angle = rng.normal(0, 0.8)
        rot = cv2.getRotationMatrix2D((half, half), angle, 1.0)
        rot[:, 2] += centre[:2] + shift - half
        corners = (square + half) @ rot[:, :2].T + rot[:, 2]
        x0, y0 = np.maximum(np.floor(corners.min(axis=0)).astype(int) - 1, 0)
        x1, y1 = np.minimum(np.ceil(corners.max(axis=0)).astype(int) + 1, [width, height])
        local = rot.copy()
        local[:, 2] -= [x0, y0]
        size = (int(x1 - x0), int(y1 - y0))
        warped = cv2.warpAffine(tile, local, size, flags=cv2.INTER_LINEAR)
        if card_rng is None:
            mask = cv2.warpAffine(np.full((tile_px, tile_px), 255, np.uint8), local, size, flags=cv2.INTER_LINEAR)
        else:
            flat = np.zeros((tile_px, tile_px), np.uint8)
            cv2.fillPoly(flat, [np.round((shape + half) * 4).astype(np.int32)], 255, cv2.LINE_AA, shift=2)
            mask = cv2.warpAffine(flat, local, size, flags=cv2.INTER_LINEAR)
            footprints.append((shape + half) @ rot[:, :2].T + rot[:, 2])
        m = mask.astype(np.float32)[..., None] / 255.0
        region = art[y0:y1, x0:x1]
        art[y0:y1, x0:x1] = (region * (1 - m) + warped * m).astype(np.uint8)
        alpha[y0:y1, x0:x1] = np.maximum(alpha[y0:y1, x0:x1], mask)
        outlines[at] = (square + half) @ rot[:, :2].T + rot[:, 2]
    return art, alpha, grid_to_art, outlines, footprints


def _place(board_rgb, rng, *, out_size, board_alpha, tile_px, camera=None, clutter=True, fill=None, raised=None, table=None, top_mm=0.0):
    """Photograph the palace art on a table with the shared scene, then JPEG-compress it.

    Returns ``(image, art_to_photo, project, meta)``; ``project`` maps art px to photo px
    (lens distortion included). ``raised`` (the tiles as card prisms) stand ``top_mm`` tall:
    ``art_to_photo`` and ``project`` then map the tiles' top faces.
    """
    extra: dict[str, Any] = {} if raised is None else {"raised": raised}
    if table is not None:
        extra["table"] = table
    shot = scene.place_on_table(
        board_rgb,
        rng,
        out_size=out_size,
        board_alpha=board_alpha,
        px_per_mm=tile_px / TILE_MM,
        camera=camera,
        clutter=clutter,
        fill=fill,
        **extra,
    )
    image, quality = scene.jpeg_roundtrip(shot.image_rgb, rng)
    meta = scene.public_meta(shot.meta) | {"jpeg_quality": quality}
    if top_mm:
        art_to_photo = np.asarray(shot.meta["_plane"](top_mm), dtype=np.float64)

        def project(points: np.ndarray) -> np.ndarray:
            return shot.project(points, top_mm)

        return image, art_to_photo, project, meta
    return image, np.asarray(shot.board_to_photo, dtype=np.float64), shot.project, meta


def render(
    seed: int,
    *,
    out_size: tuple[int, int] = (1600, 1200),
    size: int | None = None,
    tile_px: int = TILE_PX,
    camera: dict[str, float] | None = None,
    clutter: bool = True,
    fill: float | None = None,
    style: str = "classic",
    randomise: bool = False,
    card: bool = False,
    table: str | None = None,
    off_catalogue: float = 0.0,
) -> Sample:
    """Render one seeded photo of one player's palace with its exact label.

    ``size`` is the number of building tiles (random 1-25 when None); ``camera`` ({tilt_deg,
    azimuth_deg, roll_deg}), ``clutter``, ``fill`` and ``table`` (a ``scene.TABLE_KINDS`` surface)
    pass to the scene (random when None). ``style`` is one of ``ART_STYLES`` (``randomise``: see
    the module's docstring); ``card`` prints the tiles on card stock with a random thickness,
    drawn from its own generator so the palace, its tiles and their layout stay those of the seed.
    ``off_catalogue`` is the share of building tiles printed with a price drawn from 2-13 and, apart,
    the share printed with walls drawn at random (their own generator too): tiles no set has, so that
    a reader learns the digit and the strips themselves, not what the catalogue pairs with a colour.

    Raises:
        ValueError: ``style`` is not one of ``ART_STYLES``.
    """
    if style not in ART_STYLES:
        raise ValueError(f"style: expected one of {', '.join(ART_STYLES)}, got {style!r}")
    rng = np.random.default_rng(seed)
    tiles = int(size if size is not None else rng.integers(1, 26))
    items = palace_of(seed, tiles)
    prices = {tile["id"]: tile["price"] for tile in catalogue()}
    lookup = {(t["type"], t["walls"]): t for t in catalogue()}
    for item in items:
        if "type" in item:
            if item.get("tile_id") is None:
                item["tile_id"] = lookup[(item["type"], item["walls"])]["id"]
            item["price"] = prices[item["tile_id"]]
    if off_catalogue > 0:
        off_rng = np.random.default_rng([seed, 3_141_592])
        for item in items:
            if "type" not in item:
                continue
            price, walls = int(off_rng.integers(2, 14)), "".join(side for side in "NESW" if off_rng.random() < 0.5)
            new_price, new_walls = off_rng.random() < off_catalogue, off_rng.random() < off_catalogue
            drawn = (price if new_price else item["price"], walls if new_walls else item["walls"])
            if drawn != (item["price"], item["walls"]):
                item["price"], item["walls"] = drawn
                item["tile_id"] = None  # no catalogue tile
    player_colour = list(styles.PLAYER_RGB)[int(rng.integers(len(styles.PLAYER_RGB)))]
    card_rng = np.random.default_rng([seed, 2_718_281]) if card else None
    art, alpha, grid_to_art, outlines, footprints = layout_palace(
        items, rng, tile_px=tile_px, player_colour=player_colour, style=style, randomise=randomise, card_rng=card_rng
    )
    raised, top_mm = None, 0.0
    if card_rng is not None:
        top_mm = float(card_rng.uniform(*CARD_THICKNESS_MM))
        edge = tile_art.jitter(card_rng, CARD_EDGE_RGB, 12)
        side = (float(edge[0]), float(edge[1]), float(edge[2]))
        raised = [scene.Raised(footprint, top_mm, side) for footprint in footprints]
    image, art_to_photo, project, meta = _place(
        art,
        rng,
        out_size=out_size,
        board_alpha=alpha,
        tile_px=tile_px,
        camera=camera,
        clutter=clutter,
        fill=fill,
        raised=raised,
        table=table,
        top_mm=top_mm,
    )
    grid_to_photo = art_to_photo @ grid_to_art
    grid_to_photo /= grid_to_photo[2, 2]
    cells = []
    for item in items:
        at = (int(item["at"][0]), int(item["at"][1]))
        outline = project(outlines[at])
        centre = project(grid_to_art[:2, :2] @ np.array(at, dtype=np.float64) + grid_to_art[:2, 2]).reshape(2)
        value = "fountain" if item.get("tile") == "fountain" else f"{item['type']}:{item['walls']}"
        cells.append(
            {
                "at": list(at),
                "value": value,
                "price": item.get("price"),
                "tile_id": item.get("tile_id"),
                "centre": centre.round(2).tolist(),
                "polygon": outline.round(2).tolist(),
            }
        )
    palace = []
    for item in items:
        if item.get("tile") == "fountain":
            palace.append({"at": item["at"], "tile": "fountain"})
        else:
            palace.append({"at": item["at"], "type": item["type"], "walls": item["walls"]})
    xs = [c["at"][0] for c in cells]
    ys = [c["at"][1] for c in cells]
    box = np.array(
        [[min(xs) - 0.5, min(ys) - 0.5], [max(xs) + 0.5, min(ys) - 0.5], [max(xs) + 0.5, max(ys) + 0.5], [min(xs) - 0.5, max(ys) + 0.5]]
    )
    corners = project(box @ grid_to_art[:2, :2].T + grid_to_art[:2, 2])
    label = {
        "game": "alhambra",
        "scoring_round": 3,
        "players": [{"name": f"render-{seed}", "palace": palace}],
        "render": {
            "seed": int(seed),
            "size": list(out_size),
            "player_colour": player_colour,
            **({} if style == "classic" and not randomise else {"style": style, "randomise": randomise}),
            **({"card_mm": round(top_mm, 3)} if card else {}),
            "grid_to_photo": grid_to_photo.round(8).tolist(),
            "corners": corners.round(2).tolist(),
            "cells": cells,
            "camera": {k: v for k, v in meta.items() if isinstance(v, (int, float, str, bool, list))},
        },
    }
    return Sample(image_rgb=image, label=label)
