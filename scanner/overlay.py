"""Draw what a scan found on the photo: the board outline, every cell's outline and reading."""

from __future__ import annotations

import cv2
import numpy as np

from scanner.reading import CellReading

SURE, UNSURE = 0.95, 0.75  # confidence bands: green at or above SURE, amber down to UNSURE, red below


def confidence_rgb(confidence: float) -> tuple[int, int, int]:
    """Return the overlay colour for a confidence: green (sure), amber, red (check this cell)."""
    if confidence >= SURE:
        return (40, 200, 80)
    if confidence >= UNSURE:
        return (255, 170, 0)
    return (235, 40, 40)


def draw_overlay(
    image_rgb: np.ndarray,
    corners: np.ndarray,
    cells: tuple[CellReading, ...] | list[CellReading],
    overridden: set[tuple[int, int]] | None = None,
) -> np.ndarray:
    """Return a new RGB image with the board outline and each reading drawn, coloured by confidence.

    ``corners`` and the cells' polygons are in ``image_rgb`` pixels. Overridden cells get a dashed-looking
    double outline so a player can see where the rules changed the model's reading.
    """
    canvas = image_rgb.copy()
    scale = max(canvas.shape[:2]) / 1600.0
    thickness = max(1, int(round(2 * scale)))
    cv2.polylines(
        canvas, [np.round(np.asarray(corners)).astype(np.int32).reshape(-1, 1, 2)], True, (0, 160, 255), thickness + 1, cv2.LINE_AA
    )
    overridden = overridden or set()
    for reading in cells:
        polygon = np.round(np.asarray(reading.polygon)).astype(np.int32).reshape(-1, 1, 2)
        colour = confidence_rgb(reading.confidence)
        cv2.polylines(canvas, [polygon], True, colour, thickness, cv2.LINE_AA)
        if tuple(reading.cell) in overridden:
            inner = np.asarray(reading.polygon, dtype=np.float64)
            inner = inner + (inner.mean(axis=0) - inner) * 0.12
            cv2.polylines(canvas, [np.round(inner).astype(np.int32).reshape(-1, 1, 2)], True, (255, 0, 255), thickness, cv2.LINE_AA)
        _label(canvas, reading, colour, scale)
    return canvas


def _label(canvas: np.ndarray, reading: CellReading, colour: tuple[int, int, int], scale: float) -> None:
    """Write the reading and its confidence at the cell's centre, on a dark box for legibility."""
    centre = np.asarray(reading.polygon, dtype=np.float64).mean(axis=0)
    text = f"{reading.value} {reading.confidence * 100:.0f}%"
    font_scale = 0.7 * scale
    weight = max(1, int(round(scale)))
    (width, height), baseline = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, font_scale, weight)
    x, y = int(centre[0] - width / 2), int(centre[1] + height / 2)
    cv2.rectangle(canvas, (x - 2, y - height - 2), (x + width + 2, y + baseline), (20, 20, 20), -1)
    cv2.putText(canvas, text, (x, y), cv2.FONT_HERSHEY_SIMPLEX, font_scale, colour, weight, cv2.LINE_AA)


def save_overlay(path: str, image_rgb: np.ndarray) -> None:
    """Write an RGB overlay image as PNG (or JPEG by extension).

    Raises:
        OSError: the file cannot be written.
    """
    if not cv2.imwrite(str(path), cv2.cvtColor(image_rgb, cv2.COLOR_RGB2BGR)):
        raise OSError(f"{path}: cannot write image (unknown extension or unwritable folder)")
