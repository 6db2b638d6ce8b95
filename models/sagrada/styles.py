"""Sagrada board styles: independently designed window boards beside the renderer's "classic" one.

A ``Style`` fixes a board's design: the frame (look, colour, outline shape, or none), where the
stained-glass strip and the name plate sit (or that there are none), the card's cell-to-gap
proportions and gap colour, how the pattern prints look, and the light on the art. Within a style
every render still draws its own colours, sizes and light from the seed (everything that should
not matter). ``draw_styled_window`` draws any style but "classic", which stays
``render.draw_window`` (so old seeds give the same pictures).

The corners are, as for "classic", the grid's outer corners: cell (r, c) spans ``[c, c + 1] x
[r, r + 1]`` pitches from the grid's top-left corner, each square centred in its pitch.

``HELD_OUT`` is never used in training: ``TRAINING_STYLES`` lists the others, and the transfer
benchmark (``models.sagrada.transfer``) reads the held-out one to measure a board never seen.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from models import scene
from models.sagrada import render as art
from scoring.sagrada import COLS, ROWS, Pattern

Span = tuple[float, float]
RGBSpan = tuple[tuple[int, int, int], tuple[int, int, int]]


@dataclass(frozen=True)
class Style:
    """One board design. Sizes are in millimetres as ``(low, high)`` ranges drawn per render."""

    name: str
    pitch_mm: Span  # grid pitch: square plus gap
    gap_share: Span  # the gap as a share of the pitch
    gap_rgb: RGBSpan  # colour of the card between the squares
    frame: str  # "wood", "flat", "none"
    frame_rgb: RGBSpan
    frame_mm: Span
    outline: str  # "rect", "rounded", "arch"
    margin_mm: Span  # card around the grid
    strip: str | None  # stained glass: "top", "bottom", "left", None
    plate: str | None  # pattern name and difficulty: "below", "above", None
    prints: str  # "flat", "bordered", "shaded"
    square_radius: Span  # rounded print corners, share of the square
    blank_rgb: RGBSpan  # the blank squares
    pip_rgb: RGBSpan  # the pips of a value print
    light: str  # light falling on the art: "even", "warm", "cool", "spot"
    die_share: Span  # the die's side as a share of the square
    font: int = cv2.FONT_HERSHEY_TRIPLEX


STYLES: dict[str, Style] = {
    # matte charcoal board with rounded corners, no glass, the name on a band above thin-gapped cells
    "slate": Style(
        name="slate",
        pitch_mm=(19.5, 22.0),
        gap_share=(0.05, 0.09),
        gap_rgb=((5, 5, 5), (35, 35, 40)),
        frame="flat",
        frame_rgb=((25, 25, 28), (70, 70, 78)),
        frame_mm=(4.0, 9.0),
        outline="rounded",
        margin_mm=(2.0, 4.0),
        strip=None,
        plate="above",
        prints="flat",
        square_radius=(0.06, 0.16),
        blank_rgb=((185, 185, 185), (235, 235, 235)),
        pip_rgb=((30, 30, 30), (90, 90, 90)),
        light="cool",
        die_share=(0.8, 0.9),
        font=cv2.FONT_HERSHEY_DUPLEX,
    ),
    # pale wooden board, glass down the left side, wide grey-blue gaps, squares with a light border
    "ivory": Style(
        name="ivory",
        pitch_mm=(20.5, 23.5),
        gap_share=(0.14, 0.2),
        gap_rgb=((35, 40, 50), (110, 115, 125)),
        frame="wood",
        frame_rgb=((150, 120, 80), (225, 200, 160)),
        frame_mm=(7.0, 12.0),
        outline="rect",
        margin_mm=(3.0, 5.0),
        strip="left",
        plate="below",
        prints="bordered",
        square_radius=(0.0, 0.04),
        blank_rgb=((210, 205, 190), (248, 245, 235)),
        pip_rgb=((50, 45, 40), (110, 100, 90)),
        light="warm",
        die_share=(0.78, 0.88),
        font=cv2.FONT_HERSHEY_COMPLEX,
    ),
    # just the pattern card: no frame, no glass, no name; gaps anywhere from black to mid grey
    "bare": Style(
        name="bare",
        pitch_mm=(19.0, 22.0),
        gap_share=(0.06, 0.16),
        gap_rgb=((0, 0, 0), (95, 90, 90)),
        frame="none",
        frame_rgb=((0, 0, 0), (0, 0, 0)),
        frame_mm=(0.0, 0.0),
        outline="rect",
        margin_mm=(1.5, 6.0),
        strip=None,
        plate=None,
        prints="flat",
        square_radius=(0.0, 0.1),
        blank_rgb=((175, 175, 175), (240, 240, 240)),
        pip_rgb=((25, 25, 25), (100, 100, 100)),
        light="even",
        die_share=(0.8, 0.92),
    ),
    # HELD OUT: a lacquered board with an arched top, the name in the arch, glass along the bottom,
    # brown gaps, shaded prints and a spotlight; never trained on
    "cathedral": Style(
        name="cathedral",
        pitch_mm=(19.0, 21.5),
        gap_share=(0.1, 0.15),
        gap_rgb=((25, 15, 8), (65, 45, 30)),
        frame="flat",
        frame_rgb=((60, 10, 20), (110, 40, 70)),
        frame_mm=(6.0, 10.0),
        outline="arch",
        margin_mm=(2.5, 4.5),
        strip="bottom",
        plate="above",
        prints="shaded",
        square_radius=(0.0, 0.02),
        blank_rgb=((190, 190, 200), (230, 230, 240)),
        pip_rgb=((45, 40, 60), (105, 95, 120)),
        light="spot",
        die_share=(0.8, 0.9),
        font=cv2.FONT_HERSHEY_SCRIPT_COMPLEX,
    ),
}
ALL_STYLES = ("classic", *STYLES)
HELD_OUT = "cathedral"
TRAINING_STYLES = tuple(name for name in ALL_STYLES if name != HELD_OUT)

STRIP_MM = 16.0  # the stained-glass strip's depth
PLATE_MM = 12.0  # the name plate's depth


def _span(rng: np.random.Generator, span: Span) -> float:
    return float(rng.uniform(span[0], span[1]))


def _rgb(rng: np.random.Generator, span: RGBSpan) -> np.ndarray:
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
        for cx, cy in ((radius, radius), (width - 1 - radius, radius), (radius, height - 1 - radius), (width - 1 - radius, height - 1 - radius)):
            cv2.circle(mask, (cx, cy), radius, 255, -1, cv2.LINE_AA)
    else:  # arch: a half ellipse over the top
        rise = int(0.16 * width)
        mask[rise:] = 255
        cv2.ellipse(mask, (width // 2, rise), (width // 2, rise), 0, 180, 360, 255, -1, cv2.LINE_AA)
    return mask


def _frame(rng: np.random.Generator, style: Style, width: int, height: int) -> np.ndarray:
    colour = _rgb(rng, style.frame_rgb)
    if style.frame == "wood":
        grain = 0.85 + 0.15 * art._noise(rng, (width, height), 25) + 0.08 * np.sin(np.arange(width)[None, :] * rng.uniform(0.2, 0.6))
    else:
        grain = 0.95 + 0.08 * art._noise(rng, (width, height), 4)
    return np.clip(colour[None, None, :] * grain[..., None], 0, 255).astype(np.uint8)


def _square(mark: str, rng: np.random.Generator, style: Style, size: int, palette: dict[str, np.ndarray], blank: np.ndarray) -> np.ndarray:
    """One pattern-card square in the style's print look (the mark's meaning is the classic one)."""
    texture = 0.94 + 0.08 * art._noise(rng, (size, size), 5)
    base = palette["print_" + mark] if mark in art.PRINT_COLOURS else blank
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
        pip = tuple(int(v) for v in np.clip(_rgb(rng, style.pip_rgb), 0, 255))
        art._draw_pips(
            square, int(mark), pip, spread=size * rng.uniform(0.23, 0.28), radius=size * rng.uniform(0.07, 0.1), jitter=size * 0.005, rng=rng
        )
    return square


def _light(rng: np.random.Generator, style: Style, board: np.ndarray) -> np.ndarray:
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
    style: Style,
    *,
    px_per_mm: float = 6.0,
    face_source: art.FaceSource | None = None,
) -> tuple[np.ndarray, np.ndarray, list[scene.Raised], np.ndarray]:
    """Draw a board of ``style`` top-down: (board RGB, board alpha, dice as raised prisms, grid corners TL TR BR BL in art px)."""
    palette = art._palette(rng)
    pitch_mm = _span(rng, style.pitch_mm)
    square_mm = pitch_mm * (1 - _span(rng, style.gap_share))
    frame_mm = _span(rng, style.frame_mm) if style.frame != "none" else 0.0
    margin_mm = _span(rng, style.margin_mm)
    grid_w, grid_h = COLS * pitch_mm, ROWS * pitch_mm
    top_mm = frame_mm + margin_mm + (STRIP_MM if style.strip == "top" else 0) + (PLATE_MM if style.plate == "above" else 0)
    bottom_mm = frame_mm + margin_mm + (STRIP_MM if style.strip == "bottom" else 0) + (PLATE_MM if style.plate == "below" else 0)
    left_mm = frame_mm + margin_mm + (STRIP_MM if style.strip == "left" else 0)
    right_mm = frame_mm + margin_mm
    if style.outline == "arch":
        top_mm += 0.16 * (left_mm + grid_w + right_mm)  # the arch rises above the rectangle
    width, height = int(round((left_mm + grid_w + right_mm) * px_per_mm)), int(round((top_mm + grid_h + bottom_mm) * px_per_mm))
    px = px_per_mm
    board = _frame(rng, style, width, height) if frame_mm else np.zeros((height, width, 3), np.uint8)
    # the card: everything inside the frame, in the gap colour
    gap = _rgb(rng, style.gap_rgb)
    f = int(round(frame_mm * px))
    card = np.clip(gap[None, None, :] + rng.normal(0, 2, (height - 2 * f, width - 2 * f, 1)), 0, 255).astype(np.uint8)
    board[f : height - f, f : width - f] = card
    gx0, gy0 = left_mm * px, top_mm * px
    pitch = pitch_mm * px
    if style.strip is not None:
        if style.strip == "left":
            strip = art._stained_glass(rng, int(grid_h * px), int(STRIP_MM * 0.8 * px))
            strip = np.ascontiguousarray(np.rot90(strip))
            x0, y0 = int(gx0 - margin_mm * px - STRIP_MM * px), int(gy0)
        else:
            strip = art._stained_glass(rng, int(grid_w * px), int(STRIP_MM * 0.8 * px))
            x0 = int(gx0)
            y0 = int(gy0 - margin_mm * px - STRIP_MM * px) if style.strip == "top" else int(gy0 + grid_h * px + margin_mm * px + 0.1 * STRIP_MM * px)
            if style.plate == "below" and style.strip == "bottom":
                y0 += int(PLATE_MM * px)
        board[y0 : y0 + strip.shape[0], x0 : x0 + strip.shape[1]] = strip
    square = int(round(square_mm * px))
    blank = _rgb(rng, style.blank_rgb)
    radius = _span(rng, style.square_radius) * square
    for r in range(ROWS):
        for c in range(COLS):
            sx = int(round(gx0 + c * pitch + (pitch - square) / 2))
            sy = int(round(gy0 + r * pitch + (pitch - square) / 2))
            face = _square(pattern.grid[r][c], rng, style, square, palette, blank)
            if radius >= 1:
                alpha = art._rounded_square_mask(square, radius)[..., None].astype(np.float32) / 255
                region = board[sy : sy + square, sx : sx + square]
                board[sy : sy + square, sx : sx + square] = (region * (1 - alpha) + face * alpha).astype(np.uint8)
            else:
                board[sy : sy + square, sx : sx + square] = face
    if style.plate is not None:
        plate_y = gy0 - margin_mm * px - 0.35 * PLATE_MM * px if style.plate == "above" else gy0 + grid_h * px + margin_mm * px + 0.65 * PLATE_MM * px
        ink = tuple(int(v) for v in np.clip(rng.uniform(200, 245) + rng.normal(0, 6, 3), 0, 255))
        cv2.putText(board, pattern.name, (int(gx0 + 2 * px), int(plate_y)), style.font, px * 0.13, ink, max(1, int(px / 3)), cv2.LINE_AA)
        for k in range(pattern.difficulty):
            dot_x = int(gx0 + grid_w * px - (2 + k * 4.5) * px)
            cv2.circle(board, (dot_x, int(plate_y - 2 * px)), int(1.4 * px), ink, -1, cv2.LINE_AA)
    board = _light(rng, style, board)
    alpha = _outline_mask(width, height, style.outline, px) if frame_mm else np.full((height, width), 255, np.uint8)
    die_mm = square_mm * _span(rng, style.die_share)
    offset_mm = rng.uniform(0.3, 0.12 * square_mm)
    tilt_deg = rng.uniform(2, 15)
    raised = art.place_dice(board, window, rng, palette, px, (gx0, gy0), pitch, die_mm, offset_mm, tilt_deg, face_source)
    corners = np.array([[gx0, gy0], [gx0 + COLS * pitch, gy0], [gx0 + COLS * pitch, gy0 + ROWS * pitch], [gx0, gy0 + ROWS * pitch]])
    return board, alpha, raised, corners
