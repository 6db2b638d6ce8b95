"""The printed calibration target: a chessboard described by its inner corners and square size."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
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


KINDS = ("chessboard", "charuco")
DICTIONARIES = ("DICT_4X4_100", "DICT_5X5_100", "DICT_6X6_250")


@dataclass(frozen=True)
class Target:
    """A printed target: ``columns`` x ``rows`` inner corners, squares ``square_mm`` wide.

    ``kind`` is ``chessboard`` (the default 9 x 6 inner corners, 10 x 7 squares of 25 mm, fits
    A4 landscape; every photo must show all of it) or ``charuco`` (the same squares with ArUco
    markers of ``marker_mm`` from ``dictionary`` in the white ones; each corner is identified,
    so photos may show only part of it, which lets the target reach the corners of the frame).
    """

    columns: int = 9
    rows: int = 6
    square_mm: float = 25.0
    kind: str = "chessboard"
    marker_mm: float = 0.0  # charuco only; 0 means 0.7 of the square
    dictionary: str = "DICT_5X5_100"  # charuco only

    def __post_init__(self) -> None:
        for name in ("columns", "rows"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 3 <= value <= 40:
                raise CalibrationError(f"target {name}: expected 3-40 inner corners, got {value!r}")
        if not isinstance(self.square_mm, (int, float)) or not 1.0 <= float(self.square_mm) <= 500.0:
            raise CalibrationError(f"target square_mm: expected 1-500 mm, got {self.square_mm!r}")
        if self.kind not in KINDS:
            raise CalibrationError(f"target kind: expected one of {', '.join(KINDS)}, got {self.kind!r}")
        if self.kind == "charuco":
            if self.dictionary not in DICTIONARIES:
                raise CalibrationError(f"target dictionary: expected one of {', '.join(DICTIONARIES)}, got {self.dictionary!r}")
            if not 0.0 <= float(self.marker_mm) < float(self.square_mm):
                raise CalibrationError(f"target marker_mm: expected less than the square ({self.square_mm:g} mm), got {self.marker_mm!r}")
            markers = (self.columns + 1) * (self.rows + 1) // 2
            capacity = int(self.dictionary.rsplit("_", 1)[1])
            if markers > capacity:
                raise CalibrationError(f"target: {markers} markers needed, {self.dictionary} has {capacity}; use fewer squares")

    @property
    def pattern_size(self) -> tuple[int, int]:
        """The ``(columns, rows)`` inner-corner count as OpenCV's chessboard finder wants it."""
        return (self.columns, self.rows)

    @property
    def board_mm(self) -> tuple[float, float]:
        """Width and height of the printed squares in millimetres."""
        return ((self.columns + 1) * self.square_mm, (self.rows + 1) * self.square_mm)

    @property
    def marker_size_mm(self) -> float:
        """The side of a ChArUco marker in millimetres."""
        return float(self.marker_mm) or round(0.7 * float(self.square_mm), 3)

    def describe(self) -> str:
        """A short human description, e.g. ``9 x 6 inner-corner chessboard, 25 mm squares``."""
        if self.kind == "charuco":
            return (
                f"{self.columns} x {self.rows} inner-corner ChArUco board ({self.dictionary}), "
                f"{self.square_mm:g} mm squares, {self.marker_size_mm:g} mm markers"
            )
        return f"{self.columns} x {self.rows} inner-corner chessboard, {self.square_mm:g} mm squares"

    def object_points(self) -> np.ndarray:
        """The inner corners on the board plane in millimetres, (N, 3) float32, row by row.

        The origin is the outer top-left corner of the squares, so the first inner corner is at
        (square_mm, square_mm). A corner's index here is its id (ChArUco detections name them so).
        """
        xs, ys = np.meshgrid(np.arange(1, self.columns + 1), np.arange(1, self.rows + 1))
        points = np.zeros((self.columns * self.rows, 3), np.float32)
        points[:, 0] = xs.ravel() * self.square_mm
        points[:, 1] = ys.ravel() * self.square_mm
        return points

    def to_json(self) -> dict:
        """The target as a JSON object (``from_json`` is its inverse)."""
        doc = {"kind": self.kind, "columns": self.columns, "rows": self.rows, "square_mm": float(self.square_mm)}
        if self.kind == "charuco":
            doc.update(marker_mm=float(self.marker_mm), dictionary=self.dictionary)
        return doc

    @classmethod
    def from_json(cls, doc: Any, path: str = "target") -> Target:
        """Read a target written by ``to_json``.

        Raises:
            StateError: a key is missing or has the wrong type, naming its JSON path.
            CalibrationError: the numbers are out of range.
        """
        obj = expect_object(doc, path)
        kind = expect_str(field(obj, "kind", path, "chessboard"), child(path, "kind"), KINDS)
        extra: dict[str, Any] = {}
        if kind == "charuco":
            extra = {
                "marker_mm": expect_number(field(obj, "marker_mm", path, 0.0), child(path, "marker_mm")),
                "dictionary": expect_str(field(obj, "dictionary", path, "DICT_5X5_100"), child(path, "dictionary"), DICTIONARIES),
            }
        return cls(
            columns=expect_int(field(obj, "columns", path), child(path, "columns"), low=3, high=40),
            rows=expect_int(field(obj, "rows", path), child(path, "rows"), low=3, high=40),
            square_mm=expect_number(field(obj, "square_mm", path), child(path, "square_mm"), positive=True),
            kind=kind,
            **extra,
        )


@lru_cache(maxsize=8)
def charuco_board(target: Target) -> cv2.aruco.CharucoBoard:
    """The OpenCV ChArUco board of a ``charuco`` target (corner ids match ``object_points``)."""
    dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, target.dictionary))
    size = (target.columns + 1, target.rows + 1)
    return cv2.aruco.CharucoBoard(size, float(target.square_mm), target.marker_size_mm, dictionary)


def board_texture(target: Target, px_per_mm: float, margin_mm: float) -> np.ndarray:
    """The squares (and markers) as a grey uint8 image, with a white margin of ``margin_mm``.

    Pixel (u, v) of the result shows the board point at ((u + 0.5) / px_per_mm - margin_mm,
    (v + 0.5) / px_per_mm - margin_mm) millimetres, in the frame of ``object_points``.
    """
    board_w, board_h = target.board_mm
    width, height = (int(round((side + 2 * margin_mm) * px_per_mm)) for side in (board_w, board_h))
    margin_px = int(round(margin_mm * px_per_mm))
    if target.kind == "charuco":
        inner = (width - 2 * margin_px, height - 2 * margin_px)
        art = charuco_board(target).generateImage(inner, marginSize=0, borderBits=1)
        page = np.full((height, width), 255, np.uint8)
        page[margin_px : margin_px + art.shape[0], margin_px : margin_px + art.shape[1]] = art
        return page
    page = np.full((height, width), 255, np.uint8)
    square = target.square_mm * px_per_mm
    for row in range(target.rows + 1):
        for col in range(target.columns + 1):
            if (row + col) % 2 == 0:
                x0, y0 = margin_px + col * square, margin_px + row * square
                page[int(round(y0)) : int(round(y0 + square)), int(round(x0)) : int(round(x0 + square))] = 0
    return page


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
    art = board_texture(target, dpi / 25.4, 0.0)
    y0, x0 = px(top), px(left)
    art = art[: page.shape[0] - y0, : page.shape[1] - x0]
    page[y0 : y0 + art.shape[0], x0 : x0 + art.shape[1]] = art
    caption_y = top + board_h + CAPTION_MM * 0.55
    font_scale = dpi / 300 * 1.1
    thickness = max(1, round(dpi / 150))
    text = f"tablescan calibration target: {target.describe()}. Print at 100 % (no fit to page)."
    text_width = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, font_scale, thickness)[0][0]
    font_scale *= min(1.0, (page.shape[1] - 2 * px(left)) / text_width)  # long descriptions shrink to fit
    cv2.putText(page, text, (px(left), px(caption_y)), cv2.FONT_HERSHEY_SIMPLEX, font_scale, 0, thickness, cv2.LINE_AA)
    bar_y = top + board_h + CAPTION_MM * 0.85
    cv2.line(page, (px(left), px(bar_y)), (px(left + 50.0), px(bar_y)), 0, thickness * 2)
    cv2.putText(
        page,
        "50 mm: check with a ruler, keep the page flat",
        (px(left + 55.0), px(bar_y + 1.2)),
        cv2.FONT_HERSHEY_SIMPLEX,
        font_scale * 0.8,
        0,
        thickness,
        cv2.LINE_AA,
    )
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
