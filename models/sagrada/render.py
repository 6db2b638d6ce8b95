"""Sagrada window art and seeded photos of it with exact labels.

The window board is drawn top-down in millimetres (``px_per_mm`` pixels each): a dark wooden frame
with a stained-glass strip along the top holding a black pattern card; the card shows a 4x5 grid
of squares (blank = light grey, a colour = filled with it, a value = light grey die face with dark
pips) and the pattern's name and difficulty dots below. Dice are translucent, marbled, saturated
cubes with white pips and rounded corners, a little off-centre and rotated in their cells; they
stand 16 mm tall (``height_map``), so the scene shows their sides when the camera tilts.

The board's *corners* (what the scanner finds and ``render`` labels) are the grid's outer corners:
cell (r, c) spans ``[c, c + 1] x [r, r + 1]`` pitches from the grid's top-left corner.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from models import scene
from models.sagrada import styles
from scoring.sagrada import COLS, OBJECTIVES, PATTERNS, ROWS, Pattern, generate_window, window_rows

PITCH_MM = 20.5  # grid pitch: square plus the black gap
SQUARE_MM = 18.5
DIE_MM = 16.0
CARD_MARGIN_MM = 4.0
NAME_STRIP_MM = 14.0
FRAME_MM = 8.0
GLASS_MM = 22.0
GRID_W_MM, GRID_H_MM = COLS * PITCH_MM, ROWS * PITCH_MM
BOARD_W_MM = GRID_W_MM + 2 * (CARD_MARGIN_MM + FRAME_MM)
BOARD_H_MM = GRID_H_MM + 2 * CARD_MARGIN_MM + NAME_STRIP_MM + FRAME_MM + GLASS_MM
GRID_ORIGIN_MM = (FRAME_MM + CARD_MARGIN_MM, GLASS_MM + CARD_MARGIN_MM)

# (low, high) RGB ranges per die colour; wide on purpose (sets and lighting differ)
DIE_COLOURS = {
    "R": ((170, 10, 15), (235, 60, 60)),
    "Y": ((215, 175, 0), (255, 235, 70)),
    "G": ((0, 110, 40), (80, 185, 110)),
    "B": ((0, 50, 150), (40, 160, 230)),
    "P": ((85, 15, 100), (165, 70, 190)),
}
PRINT_COLOURS = {
    "R": ((160, 30, 30), (215, 80, 70)),
    "Y": ((215, 180, 40), (245, 225, 100)),
    "G": ((40, 130, 60), (110, 180, 110)),
    "B": ((30, 80, 160), (90, 150, 210)),
    "P": ((100, 40, 120), (160, 90, 170)),
}
PIP_LAYOUT = {
    1: [(0, 0)],
    2: [(-1, -1), (1, 1)],
    3: [(-1, -1), (0, 0), (1, 1)],
    4: [(-1, -1), (1, -1), (-1, 1), (1, 1)],
    5: [(-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)],
    6: [(-1, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (1, 1)],
}


@dataclass(frozen=True)
class Sample:
    """One rendered photo (JPEG-compressed pixels) and its label document."""

    image_rgb: np.ndarray
    label: dict[str, Any]
    shot: scene.Shot


def _uniform_colour(rng: np.random.Generator, span: tuple[tuple[int, int, int], tuple[int, int, int]]) -> np.ndarray:
    low, high = np.array(span[0], float), np.array(span[1], float)
    return low + rng.random() * (high - low) + rng.normal(0, 6, 3)


def _noise(rng: np.random.Generator, size: tuple[int, int], cells: int) -> np.ndarray:
    w, h = size
    small = rng.random((max(2, cells * h // max(w, 1)), max(2, cells))).astype(np.float32)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)


def _rounded_square_mask(size_px: int, radius_px: float) -> np.ndarray:
    mask = np.zeros((size_px, size_px), np.uint8)
    r = int(round(radius_px))
    cv2.rectangle(mask, (r, 0), (size_px - 1 - r, size_px - 1), 255, -1)
    cv2.rectangle(mask, (0, r), (size_px - 1, size_px - 1 - r), 255, -1)
    for cx, cy in ((r, r), (size_px - 1 - r, r), (r, size_px - 1 - r), (size_px - 1 - r, size_px - 1 - r)):
        cv2.circle(mask, (cx, cy), r, 255, -1, cv2.LINE_AA)
    return mask


def _draw_pips(
    face: np.ndarray, value: int, colour: tuple[int, int, int], spread: float, radius: float, jitter: float, rng: np.random.Generator
) -> None:
    size = face.shape[0]
    centre = size / 2
    for dx, dy in PIP_LAYOUT[value]:
        x = centre + dx * spread + rng.normal(0, jitter)
        y = centre + dy * spread + rng.normal(0, jitter)
        cv2.circle(face, (int(round(x * 4)), int(round(y * 4))), int(round(radius * 4)), colour, -1, cv2.LINE_AA, shift=2)


def die_face(
    colour: str, value: int, rng: np.random.Generator, px_per_mm: float, palette: dict[str, np.ndarray], die_mm: float = DIE_MM
) -> tuple[np.ndarray, np.ndarray]:
    """Return a die's top face (RGB) and its alpha mask, ``die_mm`` square at ``px_per_mm``."""
    size = int(round(die_mm * px_per_mm))
    base = palette[colour] * rng.uniform(0.9, 1.1)
    marble = _noise(rng, (size, size), 4) * 0.5 + _noise(rng, (size, size), 9) * 0.5
    shade = 0.78 + 0.35 * marble  # translucent, marbled body
    ys, xs = np.mgrid[0:size, 0:size].astype(np.float32) / size
    angle = rng.uniform(0, 2 * np.pi)
    ramp = (xs - 0.5) * np.cos(angle) + (ys - 0.5) * np.sin(angle)
    shade = shade * (1 + rng.uniform(0.1, 0.35) * ramp)  # light passing through: one edge brighter
    face = np.clip(base[None, None, :] * shade[..., None], 0, 255)
    # darker rim where the rounded edges turn away
    rim = cv2.GaussianBlur(_rounded_square_mask(size, size * 0.2), (0, 0), size * 0.06).astype(np.float32) / 255
    face = face * (rng.uniform(0.6, 0.9) + rng.uniform(0.1, 0.4) * rim[..., None])
    face = np.clip(face, 0, 255).astype(np.uint8)
    red, green, blue = (int(v) for v in np.clip(rng.uniform(225, 255) - rng.uniform(0, 15, 3), 0, 255))
    pip_white = (red, green, blue)
    _draw_pips(
        face, value, pip_white, spread=size * rng.uniform(0.24, 0.3), radius=size * rng.uniform(0.08, 0.15), jitter=size * 0.01, rng=rng
    )
    # specular highlight
    if rng.random() < 0.8:
        spot: np.ndarray = np.zeros((size, size), np.float32)
        cx, cy = rng.uniform(0.15, 0.85, 2) * size
        cv2.ellipse(
            spot,
            (int(cx), int(cy)),
            (int(size * rng.uniform(0.05, 0.25)), int(size * rng.uniform(0.03, 0.1))),
            float(rng.uniform(0, 180)),
            0,
            360,
            1.0,
            -1,
        )
        spot = cv2.GaussianBlur(spot, (0, 0), size * 0.04)
        face = np.clip(face + spot[..., None] * rng.uniform(30, 150), 0, 255).astype(np.uint8)
    mask = _rounded_square_mask(size, size * rng.uniform(0.1, 0.2))
    return face, mask


def _square_print(mark: str, rng: np.random.Generator, size: int, palette: dict[str, np.ndarray], blank: np.ndarray) -> np.ndarray:
    """Return one pattern-card square: blank, a colour or a value face."""
    texture = 0.93 + 0.1 * _noise(rng, (size, size), 5)
    if mark in PRINT_COLOURS:
        colour = palette["print_" + mark]
        square = colour[None, None, :] * texture[..., None]
    else:
        square = blank[None, None, :] * texture[..., None]
    square = np.clip(square, 0, 255).astype(np.uint8)
    if mark.isdigit():
        red, green, blue = (int(v) for v in rng.uniform(35, 95) + rng.normal(0, 5, 3))
        pip = (red, green, blue)
        _draw_pips(square, int(mark), pip, spread=size * 0.25, radius=size * 0.08, jitter=size * 0.005, rng=rng)
    return square


def _stained_glass(rng: np.random.Generator, width: int, height: int) -> np.ndarray:
    """A strip of random coloured glass panes with dark leading."""
    cols = int(rng.integers(8, 20))
    rows = int(rng.integers(2, 4))
    points: list[tuple[float, float]] = []
    for r in range(rows + 1):
        for c in range(cols + 1):
            jitter = rng.uniform(-0.35, 0.35, 2) if 0 < r < rows and 0 < c < cols else np.zeros(2)
            points.append(((c + jitter[0]) * width / cols, (r + jitter[1]) * height / rows))
    pts = np.array(points).reshape(rows + 1, cols + 1, 2)
    strip = np.zeros((height, width, 3), np.uint8)
    glass = [(200, 40, 40), (230, 190, 40), (40, 140, 70), (40, 80, 190), (120, 50, 150), (220, 120, 40), (60, 160, 180)]
    lead = tuple(int(v) for v in rng.uniform(15, 45, 3))
    for r in range(rows):
        for c in range(cols):
            quad = np.array([pts[r, c], pts[r, c + 1], pts[r + 1, c + 1], pts[r + 1, c]])
            tris = [quad[[0, 1, 2]], quad[[0, 2, 3]]] if rng.random() < 0.5 else [quad]
            for poly in tris:
                colour = np.array(glass[int(rng.integers(len(glass)))]) * rng.uniform(0.6, 1.1)
                cv2.fillPoly(strip, [np.round(poly).astype(np.int32)], tuple(int(v) for v in np.clip(colour, 0, 255)))
                cv2.polylines(strip, [np.round(poly).astype(np.int32)], True, lead, max(1, height // 25), cv2.LINE_AA)
    return strip


def _palette(rng: np.random.Generator) -> dict[str, np.ndarray]:
    palette = {letter: _uniform_colour(rng, span) for letter, span in DIE_COLOURS.items()}
    palette.update({"print_" + letter: _uniform_colour(rng, span) for letter, span in PRINT_COLOURS.items()})
    return palette


# (colour letter, value, rng, face size px) -> (face RGB, alpha mask): another source of die faces (real dice pixels)
FaceSource = Callable[[str, int, np.random.Generator, int], tuple[np.ndarray, np.ndarray]]


def place_dice(
    board: np.ndarray,
    window: tuple,
    rng: np.random.Generator,
    palette: dict[str, np.ndarray],
    px_per_mm: float,
    origin: tuple[float, float],
    pitch: float,
    die_mm: float,
    offset_mm: float,
    tilt_deg: float,
    face_source: FaceSource | None = None,
) -> list[scene.Raised]:
    """Draw each die's top face onto ``board`` (in place) in its cell; return the dice as raised prisms.

    ``origin`` is the grid's top-left corner and ``pitch`` the cell pitch, both in art px. Faces
    come from ``die_face`` unless ``face_source`` gives them (then the sides take the face's colour).
    """
    gx0, gy0 = origin
    raised: list[scene.Raised] = []
    for r in range(ROWS):
        for c in range(COLS):
            die = window[r][c]
            if die is None:
                continue
            if face_source is None:
                face, mask = die_face(die.color, die.value, rng, px_per_mm, palette, die_mm)
                side_base = palette[die.color]
            else:
                face, mask = face_source(die.color, die.value, rng, int(round(die_mm * px_per_mm)))
                side_base = np.median(face[mask > 127].reshape(-1, 3), axis=0)
            angle = float(rng.uniform(-tilt_deg, tilt_deg)) + 90 * int(rng.integers(0, 4))
            size = face.shape[0]
            big = int(size * 1.5)
            pad = (big - size) // 2
            canvas = cv2.copyMakeBorder(face, pad, big - size - pad, pad, big - size - pad, cv2.BORDER_CONSTANT)
            mcanvas = cv2.copyMakeBorder(mask, pad, big - size - pad, pad, big - size - pad, cv2.BORDER_CONSTANT)
            rot = cv2.getRotationMatrix2D((big / 2, big / 2), angle, 1.0)
            canvas = cv2.warpAffine(canvas, rot, (big, big), flags=cv2.INTER_LINEAR)
            mcanvas = cv2.warpAffine(mcanvas, rot, (big, big), flags=cv2.INTER_LINEAR)
            cx = gx0 + (c + 0.5) * pitch + rng.uniform(-offset_mm, offset_mm) * px_per_mm
            cy = gy0 + (r + 0.5) * pitch + rng.uniform(-offset_mm, offset_mm) * px_per_mm
            bx, by = int(round(cx - big / 2)), int(round(cy - big / 2))
            # the canvas may stick out past the board's edge (a board with a narrow margin): draw what is on it
            x0, y0 = max(bx, 0), max(by, 0)
            x1, y1 = min(bx + big, board.shape[1]), min(by + big, board.shape[0])
            region = board[y0:y1, x0:x1]
            inside = (slice(y0 - by, y1 - by), slice(x0 - bx, x1 - bx))
            alpha = mcanvas[inside][..., None].astype(np.float32) / 255
            # a translucent die lets a little of the square below through
            see_through = rng.uniform(0.0, 0.15)
            blended = canvas[inside] * (1 - see_through) + region * see_through
            board[y0:y1, x0:x1] = (region * (1 - alpha) + blended * alpha).astype(np.uint8)
            contours, _ = cv2.findContours((mcanvas > 127).astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
            outline = cv2.approxPolyDP(max(contours, key=cv2.contourArea), 0.6, True).reshape(-1, 2).astype(np.float64)
            side = side_base * rng.uniform(0.5, 0.85)
            side_r, side_g, side_b = (float(v) for v in side)
            raised.append(scene.Raised(footprint=outline + [bx, by], height_mm=die_mm, side_rgb=(side_r, side_g, side_b)))
    return raised


def draw_window(
    window: tuple,
    pattern: Pattern,
    rng: np.random.Generator,
    *,
    px_per_mm: float = 6.0,
    difficulty: int | None = None,
    face_source: FaceSource | None = None,
) -> tuple[np.ndarray, list[scene.Raised], np.ndarray]:
    """Draw the "classic" board top-down: returns (board RGB, the dice as raised prisms, grid corners TL TR BR BL in art px).

    ``window`` is the scoring core's 4x5 tuple of ``Die`` or ``None``; ``pattern`` the card under it.
    """
    width, height = int(round(BOARD_W_MM * px_per_mm)), int(round(BOARD_H_MM * px_per_mm))
    palette = _palette(rng)
    # frame: dark wood
    wood = np.array([rng.uniform(45, 95), rng.uniform(28, 60), rng.uniform(15, 40)])
    grain = (
        0.8
        + 0.25 * _noise(rng, (width, height), 30)
        + 0.15 * np.sin(np.arange(height)[:, None] * rng.uniform(0.3, 0.9) + _noise(rng, (width, height), 6) * 8)
    )
    board = np.clip(wood[None, None, :] * grain[..., None], 0, 255).astype(np.uint8)
    glass_h = int((GLASS_MM - 6) * px_per_mm)
    x0, y0 = int(FRAME_MM * px_per_mm), int(3 * px_per_mm)
    board[y0 : y0 + glass_h, x0 : width - x0] = _stained_glass(rng, width - 2 * x0, glass_h)
    # the pattern card
    card_x0, card_y0 = int(FRAME_MM * px_per_mm), int(GLASS_MM * px_per_mm)
    card_x1, card_y1 = width - card_x0, height - int(FRAME_MM * px_per_mm)
    black = rng.uniform(8, 30)
    board[card_y0:card_y1, card_x0:card_x1] = np.clip(black + rng.normal(0, 2, (card_y1 - card_y0, card_x1 - card_x0, 1)), 0, 255).astype(
        np.uint8
    )
    gx0, gy0 = GRID_ORIGIN_MM[0] * px_per_mm, GRID_ORIGIN_MM[1] * px_per_mm
    pitch = PITCH_MM * px_per_mm
    square = int(round(SQUARE_MM * px_per_mm))
    blank = np.array([rng.uniform(200, 245)] * 3) + rng.normal(0, 5, 3)
    for r in range(ROWS):
        for c in range(COLS):
            sx = int(round(gx0 + c * pitch + (pitch - square) / 2))
            sy = int(round(gy0 + r * pitch + (pitch - square) / 2))
            board[sy : sy + square, sx : sx + square] = _square_print(pattern.grid[r][c], rng, square, palette, blank)
    # name and difficulty
    text_y = int(gy0 + ROWS * pitch + CARD_MARGIN_MM * px_per_mm + 0.55 * NAME_STRIP_MM * px_per_mm)
    font_scale = px_per_mm * 0.75 / 6
    cv2.putText(
        board,
        pattern.name,
        (int(gx0 + 2 * px_per_mm), text_y),
        cv2.FONT_HERSHEY_TRIPLEX,
        font_scale * 1.1,
        (230, 230, 225),
        max(1, int(px_per_mm / 3)),
        cv2.LINE_AA,
    )
    dots = difficulty if difficulty is not None else pattern.difficulty
    for k in range(dots):
        dot_x = int(gx0 + GRID_W_MM * px_per_mm - (2 + k * 4.5) * px_per_mm)
        cv2.circle(board, (dot_x, text_y - int(2 * px_per_mm)), int(1.5 * px_per_mm), (235, 235, 230), -1, cv2.LINE_AA)
    # dice
    offset_mm = rng.uniform(0.5, 2.0)
    die_mm = DIE_MM * rng.uniform(0.93, 1.1)  # sets and cards differ a little
    tilt_deg = rng.uniform(3, 14)
    raised = place_dice(board, window, rng, palette, px_per_mm, (gx0, gy0), pitch, die_mm, offset_mm, tilt_deg, face_source)
    corners = np.array([[gx0, gy0], [gx0 + COLS * pitch, gy0], [gx0 + COLS * pitch, gy0 + ROWS * pitch], [gx0, gy0 + ROWS * pitch]])
    return board, raised, corners


# --------------------------------------------------------------------------------------------- other styles

STRIP_MM = 16.0  # the stained-glass strip's depth
PLATE_MM = 12.0  # the name plate's depth


def _styled_span(rng: np.random.Generator, span: styles.Span) -> float:
    return float(rng.uniform(span[0], span[1]))


def _styled_rgb(rng: np.random.Generator, span: styles.RGBSpan) -> np.ndarray:
    low, high = np.array(span[0], float), np.array(span[1], float)
    return low + rng.random() * (high - low) + rng.normal(0, 4, 3)


def _outline_mask(width: int, height: int, outline: str, px_per_mm: float) -> np.ndarray:
    """The board's shape as an alpha mask: a rectangle, rounded corners or an arched top."""
    mask = np.zeros((height, width), np.uint8)
    if outline == "rect":
        mask[:] = 255
    elif outline == "rounded":
        radius = int(6 * px_per_mm)
        cv2.rectangle(mask, (radius, 0), (width - 1 - radius, height - 1), 255, -1)
        cv2.rectangle(mask, (0, radius), (width - 1, height - 1 - radius), 255, -1)
        for cx, cy in (
            (radius, radius),
            (width - 1 - radius, radius),
            (radius, height - 1 - radius),
            (width - 1 - radius, height - 1 - radius),
        ):
            cv2.circle(mask, (cx, cy), radius, 255, -1, cv2.LINE_AA)
    else:  # arch: a half ellipse over the top
        rise = int(0.16 * width)
        mask[rise:] = 255
        cv2.ellipse(mask, (width // 2, rise), (width // 2, rise), 0, 180, 360, 255, -1, cv2.LINE_AA)
    return mask


def _styled_frame(rng: np.random.Generator, style: styles.Style, width: int, height: int) -> np.ndarray:
    colour = _styled_rgb(rng, style.frame_rgb)
    if style.frame == "wood":
        grain = 0.85 + 0.15 * _noise(rng, (width, height), 25) + 0.08 * np.sin(np.arange(width)[None, :] * rng.uniform(0.2, 0.6))
    else:
        grain = 0.95 + 0.08 * _noise(rng, (width, height), 4)
    return np.clip(colour[None, None, :] * grain[..., None], 0, 255).astype(np.uint8)


def _styled_square(
    mark: str, rng: np.random.Generator, style: styles.Style, size: int, palette: dict[str, np.ndarray], blank: np.ndarray
) -> np.ndarray:
    """One pattern-card square in the style's print look (the mark's meaning is the classic one)."""
    texture = 0.94 + 0.08 * _noise(rng, (size, size), 5)
    base = palette["print_" + mark] if mark in PRINT_COLOURS else blank
    square = base[None, None, :] * texture[..., None]
    if style.prints == "shaded":  # darker towards the rim, as if printed with a vignette
        ys, xs = (np.mgrid[0:size, 0:size].astype(np.float32) / max(size - 1, 1)) - 0.5
        square = square * (1.05 - 0.55 * (xs**2 + ys**2))[..., None]
    square = np.clip(square, 0, 255).astype(np.uint8)
    if style.prints == "bordered":
        edge = max(1, int(size * rng.uniform(0.03, 0.06)))
        tone = tuple(int(v) for v in np.clip(blank * rng.uniform(0.95, 1.08), 0, 255))
        cv2.rectangle(square, (edge // 2, edge // 2), (size - 1 - edge // 2, size - 1 - edge // 2), tone, edge)
    if mark.isdigit():
        red, green, blue = (int(v) for v in np.clip(_styled_rgb(rng, style.pip_rgb), 0, 255))
        pip = (red, green, blue)
        _draw_pips(
            square,
            int(mark),
            pip,
            spread=size * rng.uniform(0.23, 0.28),
            radius=size * rng.uniform(0.07, 0.1),
            jitter=size * 0.005,
            rng=rng,
        )
    return square


def _styled_light(rng: np.random.Generator, style: styles.Style, board: np.ndarray) -> np.ndarray:
    """The style's light on the art: a tint and an uneven gain (the scene adds its own light on top)."""
    height, width = board.shape[:2]
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float32)
    if style.light == "spot":
        cx, cy = rng.uniform(0.2, 0.8) * width, rng.uniform(0.2, 0.8) * height
        reach = rng.uniform(0.5, 0.9) * max(width, height)
        gain = 0.65 + 0.5 * np.exp(-(((xs - cx) ** 2 + (ys - cy) ** 2) / reach**2))
        tint = np.array([1.0, rng.uniform(0.95, 1.0), rng.uniform(0.85, 0.95)])
    else:
        angle = rng.uniform(0, 2 * np.pi)
        ramp = ((xs - width / 2) * np.cos(angle) + (ys - height / 2) * np.sin(angle)) / max(width, height)
        gain = 1 + rng.uniform(0.0, 0.3) * ramp
        tint = {
            "warm": np.array([1.0, rng.uniform(0.93, 0.98), rng.uniform(0.82, 0.92)]),
            "cool": np.array([rng.uniform(0.88, 0.95), rng.uniform(0.95, 1.0), 1.0]),
        }.get(style.light, np.ones(3))
    return np.clip(board * gain[..., None] * tint[None, None, :], 0, 255).astype(np.uint8)


def draw_styled_window(
    window: tuple,
    pattern: Pattern,
    rng: np.random.Generator,
    style: styles.Style,
    *,
    px_per_mm: float = 6.0,
    face_source: FaceSource | None = None,
) -> tuple[np.ndarray, np.ndarray, list[scene.Raised], np.ndarray]:
    """Draw a board of ``style`` top-down: (board RGB, board alpha, dice as raised prisms, grid corners TL TR BR BL in art px)."""
    palette = _palette(rng)
    pitch_mm = _styled_span(rng, style.pitch_mm)
    square_mm = pitch_mm * (1 - _styled_span(rng, style.gap_share))
    frame_mm = _styled_span(rng, style.frame_mm) if style.frame != "none" else 0.0
    margin_mm = _styled_span(rng, style.margin_mm)
    grid_w, grid_h = COLS * pitch_mm, ROWS * pitch_mm
    top_mm = frame_mm + margin_mm + (STRIP_MM if style.strip == "top" else 0) + (PLATE_MM if style.plate == "above" else 0)
    bottom_mm = frame_mm + margin_mm + (STRIP_MM if style.strip == "bottom" else 0) + (PLATE_MM if style.plate == "below" else 0)
    left_mm = frame_mm + margin_mm + (STRIP_MM if style.strip == "left" else 0)
    right_mm = frame_mm + margin_mm + (STRIP_MM if style.strip == "right" else 0)
    if style.outline == "arch":
        top_mm += 0.16 * (left_mm + grid_w + right_mm)  # the arch rises above the rectangle
    width, height = int(round((left_mm + grid_w + right_mm) * px_per_mm)), int(round((top_mm + grid_h + bottom_mm) * px_per_mm))
    px = px_per_mm
    board = _styled_frame(rng, style, width, height) if frame_mm else np.zeros((height, width, 3), np.uint8)
    # the card: everything inside the frame, in the gap colour
    gap = _styled_rgb(rng, style.gap_rgb)
    f = int(round(frame_mm * px))
    card = np.clip(gap[None, None, :] + rng.normal(0, 2, (height - 2 * f, width - 2 * f, 1)), 0, 255).astype(np.uint8)
    board[f : height - f, f : width - f] = card
    gx0, gy0 = left_mm * px, top_mm * px
    pitch = pitch_mm * px
    if style.strip is not None:
        if style.strip in ("left", "right"):
            strip = _stained_glass(rng, int(grid_h * px), int(STRIP_MM * 0.8 * px))
            strip = np.ascontiguousarray(np.rot90(strip))
            x0 = (
                int(gx0 - margin_mm * px - STRIP_MM * px)
                if style.strip == "left"
                else int(gx0 + grid_w * px + margin_mm * px + 0.1 * STRIP_MM * px)
            )
            y0 = int(gy0)
        else:
            strip = _stained_glass(rng, int(grid_w * px), int(STRIP_MM * 0.8 * px))
            x0 = int(gx0)
            y0 = (
                int(gy0 - margin_mm * px - STRIP_MM * px)
                if style.strip == "top"
                else int(gy0 + grid_h * px + margin_mm * px + 0.1 * STRIP_MM * px)
            )
            if style.plate == "below" and style.strip == "bottom":
                y0 += int(PLATE_MM * px)
        board[y0 : y0 + strip.shape[0], x0 : x0 + strip.shape[1]] = strip
    square = int(round(square_mm * px))
    blank = _styled_rgb(rng, style.blank_rgb)
    radius = _styled_span(rng, style.square_radius) * square
    for r in range(ROWS):
        for c in range(COLS):
            sx = int(round(gx0 + c * pitch + (pitch - square) / 2))
            sy = int(round(gy0 + r * pitch + (pitch - square) / 2))
            face = _styled_square(pattern.grid[r][c], rng, style, square, palette, blank)
            if radius >= 1:
                alpha = _rounded_square_mask(square, radius)[..., None].astype(np.float32) / 255
                region = board[sy : sy + square, sx : sx + square]
                board[sy : sy + square, sx : sx + square] = (region * (1 - alpha) + face * alpha).astype(np.uint8)
            else:
                board[sy : sy + square, sx : sx + square] = face
    if style.plate is not None:
        plate_y = (
            gy0 - margin_mm * px - 0.35 * PLATE_MM * px
            if style.plate == "above"
            else gy0 + grid_h * px + margin_mm * px + 0.65 * PLATE_MM * px
        )
        ink = tuple(int(v) for v in np.clip(rng.uniform(200, 245) + rng.normal(0, 6, 3), 0, 255))
        cv2.putText(board, pattern.name, (int(gx0 + 2 * px), int(plate_y)), style.font, px * 0.13, ink, max(1, int(px / 3)), cv2.LINE_AA)
        for k in range(pattern.difficulty):
            dot_x = int(gx0 + grid_w * px - (2 + k * 4.5) * px)
            cv2.circle(board, (dot_x, int(plate_y - 2 * px)), int(1.4 * px), ink, -1, cv2.LINE_AA)
    board = _styled_light(rng, style, board)
    alpha = _outline_mask(width, height, style.outline, px) if frame_mm else np.full((height, width), 255, np.uint8)
    die_mm = square_mm * _styled_span(rng, style.die_share)
    offset_mm = rng.uniform(0.3, 0.12 * square_mm)
    tilt_deg = rng.uniform(2, 15)
    raised = place_dice(board, window, rng, palette, px, (gx0, gy0), pitch, die_mm, offset_mm, tilt_deg, face_source)
    corners = np.array([[gx0, gy0], [gx0 + COLS * pitch, gy0], [gx0 + COLS * pitch, gy0 + ROWS * pitch], [gx0, gy0 + ROWS * pitch]])
    return board, alpha, raised, corners


def random_empty_count(rng: np.random.Generator) -> int:
    """Empty cells for a training window: mostly few, sometimes many (prints need examples too)."""
    roll = rng.random()
    if roll < 0.3:
        return 0
    if roll < 0.65:
        return int(rng.integers(1, 4))
    if roll < 0.9:
        return int(rng.integers(4, 11))
    return int(rng.integers(11, 21))


def game_document(seed: int, empty: int | None = None, pattern_name: str | None = None) -> tuple[dict[str, Any], tuple, Pattern]:
    """Return a legal one-player FORMATS.md document and its window and pattern, from ``seed``."""
    rng = random.Random(seed)
    pattern = PATTERNS[pattern_name] if pattern_name else PATTERNS[rng.choice(sorted(PATTERNS))]
    holes = empty if empty is not None else random_empty_count(np.random.default_rng(seed))
    window = generate_window(rng, pattern, holes)
    document = {
        "game": "sagrada",
        "public_objectives": rng.sample(sorted(OBJECTIVES), 3),
        "players": [
            {
                "name": f"render-{seed}",
                "window": window_rows(window),
                "pattern": pattern.name,
                "private_objective": rng.choice(["red", "yellow", "green", "blue", "purple"]),
                "favor_tokens": rng.randint(0, pattern.difficulty),
            }
        ],
    }
    return document, window, pattern


FRAMINGS = ("table", "closeup", "cut", "offcentre")


def random_view(rng: np.random.Generator) -> dict[str, Any]:
    """A random framing and overlay for a training or benchmark render: mostly whole-table photos."""
    roll = rng.random()
    framing = "table" if roll < 0.6 else "closeup" if roll < 0.75 else "cut" if roll < 0.85 else "offcentre"
    return {"framing": framing, "overlay": bool(rng.random() < 0.2)}


def framed(
    shot: scene.Shot,
    rng: np.random.Generator,
    grid_art: np.ndarray,
    view: dict[str, Any],
    *,
    out_size: tuple[int, int],
    jpeg_quality: int | None = None,
) -> tuple[np.ndarray, int, Callable[[np.ndarray], np.ndarray]]:
    """Frame a photographed window as ``view`` asks (its ``framing`` and ``overlay``), then JPEG it.

    Returns the JPEG-compressed pixels, the JPEG quality and a map from board-art pixels to them;
    ``view`` gains the crop box and what the overlay drew.
    """
    photo, framing = shot.image_rgb, view["framing"]
    affine = np.eye(3)
    if framing != "table":
        margin, spare = {"closeup": (rng.uniform(0.03, 0.2), 0.0), "cut": (rng.uniform(-0.01, 0.02), 0.0), "offcentre": (0.08, 0.6)}[
            framing
        ]
        points = shot.corners if framing == "offcentre" else shot.project(grid_art)
        box = scene.view_box(points, (photo.shape[1], photo.shape[0]), out_size, float(margin), rng, spare)
        photo, affine = scene.crop_view(photo, box, out_size)
        view["crop"] = [round(v, 1) for v in box]
    if view["overlay"]:
        photo, drawn = scene.draw_overlay(photo, rng)
        view.update(drawn)
    image, quality = scene.jpeg_roundtrip(photo, rng, jpeg_quality)

    def to_photo(points: np.ndarray) -> np.ndarray:
        return scene.map_points(shot.project(points), affine)

    return image, quality, to_photo


def render(
    seed: int,
    *,
    out_size: tuple[int, int] = (1600, 1200),
    px_per_mm: float = 6.0,
    empty: int | None = None,
    pattern: str | None = None,
    camera: dict[str, float] | None = None,
    fill: float | None = None,
    clutter: bool = True,
    jpeg_quality: int | None = None,
    style: str = "classic",
    framing: str = "table",
    overlay: bool = False,
    face_source: FaceSource | None = None,
    document: tuple[dict[str, Any], tuple, Pattern] | None = None,
) -> Sample:
    """Render one seeded photo of a finished Sagrada window with its exact label.

    ``camera`` fixes ``tilt_deg``, ``azimuth_deg`` and ``roll_deg`` (random when None). ``style``
    names the board design ("classic" or one of ``styles.ALL_STYLES``). ``framing``: "table" (the whole
    board on the table), "closeup" (the grid and a little around it fill the photo), "cut" (the
    photo cut to the grid), "offcentre" (a crop holding the board, its principal point off-centre).
    ``overlay`` draws another app's camera guide over the photo. ``face_source`` gives the dice
    faces (real dice pixels) and ``document`` the game (``game_document``'s triple) instead of the
    seed's. The defaults give the same pictures as before styles existed.
    """
    if framing not in FRAMINGS:
        raise ValueError(f"framing: expected one of {', '.join(FRAMINGS)}, got {framing!r}")
    game, window, card = document or game_document(seed, empty, pattern)
    rng = np.random.default_rng([seed, 1])
    near = framing in ("closeup", "cut")
    art_px = px_per_mm * (1.6 if near else 1.0)  # a close-up needs finer art
    if style == "classic":
        board, raised, grid_art = draw_window(window, card, rng, px_per_mm=art_px, face_source=face_source)
        board_alpha = None
    else:
        design = styles.style_named(style, rng)
        board, board_alpha, raised, grid_art = draw_styled_window(window, card, rng, design, px_per_mm=art_px, face_source=face_source)
    if near and fill is None:
        fill = float(rng.uniform(0.85, 0.95))
    shot = scene.place_on_table(
        board,
        rng,
        out_size=out_size,
        raised=raised,
        px_per_mm=art_px,
        fill=fill,
        clutter=clutter,
        camera=camera,
        board_alpha=board_alpha,
    )
    view: dict[str, Any] = {"style": style, "framing": framing, "overlay": overlay}
    image, quality, to_photo = framed(shot, rng, grid_art, view, out_size=out_size, jpeg_quality=jpeg_quality)
    corners = to_photo(grid_art)
    pitch = (grid_art[1, 0] - grid_art[0, 0]) / COLS
    cells = []
    for r in range(ROWS):
        for c in range(COLS):
            square = grid_art[0] + np.array([[c, r], [c + 1, r], [c + 1, r + 1], [c, r + 1]], float) * pitch
            die = window[r][c]
            cells.append(
                {
                    "cell": [r, c],
                    "value": str(die) if die else ".",
                    "print": card.grid[r][c],
                    "polygon": to_photo(square).round(2).tolist(),
                }
            )
    label = {
        **game,
        "render": {
            "seed": int(seed),
            "size": list(out_size),
            "corners": corners.round(2).tolist(),
            "cells": cells,
            "camera": {k: shot.meta[k] for k in ("tilt_deg", "azimuth_deg", "roll_deg", "focal_px", "distance_mm", "fill", "lens_k1")},
            "lighting": {
                k: v
                for k, v in scene.public_meta(shot.meta).items()
                if k not in ("tilt_deg", "azimuth_deg", "roll_deg", "focal_px", "distance_mm", "fill", "lens_k1")
            },
            "jpeg_quality": quality,
        },
    }
    if (style, framing, overlay) != ("classic", "table", False):
        label["render"]["view"] = view
    return Sample(image_rgb=image, label=label, shot=shot)
