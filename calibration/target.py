"""The printed calibration target: a chessboard described by its inner corners and square size."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from PIL import Image

from calibration.errors import CalibrationError
from calibration.jsonfields import expect_number
from scoring.fields import child, expect_int, expect_object, expect_str, field

A4_LANDSCAPE_MM = (297.0, 210.0)
MARGIN_MM = 10.0
CAPTION_MM = 12.0


@dataclass(frozen=True)
class Target:
    """A chessboard target: ``columns`` x ``rows`` inner corners, squares ``square_mm`` wide.

    The default 9 x 6 inner corners (10 x 7 squares of 25 mm) fits A4 landscape. One count odd
    and the other even makes the board look different when turned half round, so every photo
    numbers its corners the same way.
    """

    columns: int = 9
    rows: int = 6
    square_mm: float = 25.0

    def __post_init__(self) -> None:
        for name in ("columns", "rows"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 3 <= value <= 40:
                raise CalibrationError(f"target {name}: expected 3-40 inner corners, got {value!r}")
        if not isinstance(self.square_mm, (int, float)) or not 1.0 <= float(self.square_mm) <= 500.0:
            raise CalibrationError(f"target square_mm: expected 1-500 mm, got {self.square_mm!r}")

    @property
    def pattern_size(self) -> tuple[int, int]:
        """The ``(columns, rows)`` inner-corner count as OpenCV's chessboard finder wants it."""
        return (self.columns, self.rows)

    @property
    def board_mm(self) -> tuple[float, float]:
        """Width and height of the printed squares in millimetres."""
        return ((self.columns + 1) * self.square_mm, (self.rows + 1) * self.square_mm)

    def describe(self) -> str:
        """A short human description, e.g. ``9 x 6 inner-corner chessboard, 25 mm squares``."""
        return f"{self.columns} x {self.rows} inner-corner chessboard, {self.square_mm:g} mm squares"

    def object_points(self) -> np.ndarray:
        """The inner corners on the board plane in millimetres, (N, 3) float32, row by row."""
        xs, ys = np.meshgrid(np.arange(self.columns), np.arange(self.rows))
        points = np.zeros((self.columns * self.rows, 3), np.float32)
        points[:, 0] = xs.ravel() * self.square_mm
        points[:, 1] = ys.ravel() * self.square_mm
        return points

    def to_json(self) -> dict:
        """The target as a JSON object (``from_json`` is its inverse)."""
        return {"kind": "chessboard", "columns": self.columns, "rows": self.rows, "square_mm": float(self.square_mm)}

    @classmethod
    def from_json(cls, doc: Any, path: str = "target") -> "Target":
        """Read a target written by ``to_json``.

        Raises:
            StateError: a key is missing or has the wrong type, naming its JSON path.
            CalibrationError: the numbers are out of range.
        """
        obj = expect_object(doc, path)
        expect_str(field(obj, "kind", path, "chessboard"), child(path, "kind"), ("chessboard",))
        return cls(
            columns=expect_int(field(obj, "columns", path), child(path, "columns"), low=3, high=40),
            rows=expect_int(field(obj, "rows", path), child(path, "rows"), low=3, high=40),
            square_mm=expect_number(field(obj, "square_mm", path), child(path, "square_mm"), positive=True),
        )


def render_target(target: Target, dpi: int = 300) -> np.ndarray:
    """Draw the target to scale on a white page (A4 landscape when it fits), grey uint8 (H, W).

    Raises:
        CalibrationError: ``dpi`` is outside 72-1200.
    """
    if isinstance(dpi, bool) or not isinstance(dpi, int) or not 72 <= dpi <= 1200:
        raise CalibrationError(f"dpi: expected 72-1200, got {dpi!r}")
    board_w, board_h = target.board_mm
    need_w, need_h = board_w + 2 * MARGIN_MM, board_h + 2 * MARGIN_MM + CAPTION_MM
    page_w, page_h = A4_LANDSCAPE_MM if need_w <= A4_LANDSCAPE_MM[0] and need_h <= A4_LANDSCAPE_MM[1] else (need_w, need_h)

    def px(mm: float) -> int:
        return int(round(mm * dpi / 25.4))

    page = np.full((px(page_h), px(page_w)), 255, np.uint8)
    left = (page_w - board_w) / 2
    top = (page_h - CAPTION_MM - board_h) / 2
    for row in range(target.rows + 1):
        for col in range(target.columns + 1):
            if (row + col) % 2 == 0:
                x0, y0 = left + col * target.square_mm, top + row * target.square_mm
                page[px(y0) : px(y0 + target.square_mm), px(x0) : px(x0 + target.square_mm)] = 0
    caption_y = top + board_h + CAPTION_MM * 0.55
    font_scale = dpi / 300 * 1.1
    thickness = max(1, round(dpi / 150))
    text = f"tablescan calibration target: {target.describe()}. Print at 100 % (no fit to page)."
    cv2.putText(page, text, (px(left), px(caption_y)), cv2.FONT_HERSHEY_SIMPLEX, font_scale, 0, thickness, cv2.LINE_AA)
    bar_y = top + board_h + CAPTION_MM * 0.85
    cv2.line(page, (px(left), px(bar_y)), (px(left + 50.0), px(bar_y)), 0, thickness * 2)
    cv2.putText(page, "50 mm: check with a ruler, keep the page flat", (px(left + 55.0), px(bar_y + 1.2)),
                cv2.FONT_HERSHEY_SIMPLEX, font_scale * 0.8, 0, thickness, cv2.LINE_AA)
    return page


def save_target(path: str | Path, target: Target, dpi: int = 300) -> Path:
    """Write the target to ``path`` as PNG (with its dpi) or PDF (page size to scale).

    Raises:
        CalibrationError: the suffix is not .png or .pdf, or the file cannot be written.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".png", ".pdf"):
        raise CalibrationError(f"{path.name}: expected a .png or .pdf file name, got '{path.suffix or 'no suffix'}'")
    image = Image.fromarray(render_target(target, dpi))
    try:
        if suffix == ".pdf":
            image.save(path, "PDF", resolution=float(dpi))
        else:
            image.save(path, "PNG", dpi=(dpi, dpi))
    except OSError as error:
        raise CalibrationError(f"{path}: cannot write ({error.__class__.__name__}: {error})") from None
    return path
