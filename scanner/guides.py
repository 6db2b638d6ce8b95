"""Guide lines another camera app drew over a photo: found, and painted out before a board is read.

Camera apps draw thin light lines over the picture (a rule-of-thirds grid across the whole frame, a
framing rectangle) and photos shared from them keep the lines. Where such a line crosses a die it
hides part of a pip or draws a bar the model may take for one; across a palace it cuts through
price digits and the fountain, and the palace may not be found at all. ``Scanner.scan`` paints the
lines out of every photo before a reader sees it. The lines are straight and run along
the photo's rows or columns, so they are found as rows (columns) where a thin light grey ridge runs
along a large share of the width (height), and each is filled in across its thickness from the
pixels just either side of it.

Marks that do not run along a row or column (circles, words, short crosses) are left as they are.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

WORK_PX = 1600  # a photo of this long side (the scan's working size) or less is looked at with:
RIDGE_PX = 15  # a structure thinner than this and lighter than both its sides is a ridge
RIDGE_LIGHTER = 35  # how much lighter than its sides (darkest channel, 0-255)
RIDGE_GREY = 45  # the most its channels differ: guide lines are white or grey
RIDGE_FLOOR = 110  # its darkest channel at least this light (a one-pixel line drawn at 60% is about 150)
ALONG_STEP = 4  # every this many pixels along a line are looked at
MIN_RUN = 7  # and unbroken over at least this many of those steps
MIN_SPAN = 0.3  # a line runs along at least this share of the photo's width (height)
MAX_THICKNESS = 0.012  # and is at most this share of the photo's short side thick
PAD_PX = 2.0  # photo pixels painted beyond the ridge's edge each side (its soft, anti-aliased edge and the JPEG's ringing)


@dataclass(frozen=True)
class GuideLine:
    """One line drawn over a photo, in the photo's pixels.

    ``across`` lines run along a row (at ``at`` = y), the others along a column (at ``at`` = x);
    ``thickness`` is measured across it and ``start``-``end`` is how far it runs along.
    """

    across: bool
    at: float
    thickness: float
    start: float
    end: float


def _runs(flags: np.ndarray) -> list[tuple[int, int]]:
    """(first, last) index of each run of true values."""
    edges = np.diff(np.concatenate([[0], flags.astype(np.int8), [0]]))
    return list(zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1))


def find_guide_lines(image_rgb: np.ndarray) -> list[GuideLine]:
    """The guide lines drawn across or down ``image_rgb`` (RGB uint8), in its pixels; [] when none."""
    height, width = image_rgb.shape[:2]
    scale = max(1.0, max(height, width) / WORK_PX)  # a photo larger than WORK_PX: thicker lines, coarser steps along
    ridge_px = int(round(RIDGE_PX * scale)) | 1
    shrink = int(round(ALONG_STEP * scale))
    lines = []
    for across in (True, False):
        # a line along the rows is as well seen in every few columns (and the other way round)
        size = (max(1, width // shrink), height) if across else (width, max(1, height // shrink))
        red, green, blue = cv2.split(cv2.resize(image_rgb, size, interpolation=cv2.INTER_NEAREST))
        dark, light = cv2.min(cv2.min(red, green), blue), cv2.max(cv2.max(red, green), blue)
        kernel = cv2.getStructuringElement(cv2.MORPH_RECT, (1, ridge_px) if across else (ridge_px, 1))
        lighter = cv2.morphologyEx(dark, cv2.MORPH_TOPHAT, kernel) > RIDGE_LIGHTER
        thin = (lighter & (cv2.subtract(light, dark) < RIDGE_GREY) & (dark > RIDGE_FLOOR)).view(np.uint8)
        # an anti-aliased line one pixel off its row still counts for that row
        ridge = np.asarray(cv2.dilate(thin, np.ones((3, 1) if across else (1, 3), np.uint8)), np.uint8)
        # a drawn line runs on unbroken where it is seen; texture and noise light up pixels here and there
        unbroken = cv2.morphologyEx(ridge, cv2.MORPH_OPEN, np.ones((1, MIN_RUN) if across else (MIN_RUN, 1), np.uint8))
        if not across:
            ridge, unbroken = np.ascontiguousarray(ridge.T), np.ascontiguousarray(unbroken.T)
        share = cv2.reduce(unbroken, 1, cv2.REDUCE_SUM, dtype=cv2.CV_32S).ravel() / ridge.shape[1]
        scale_along = (width if across else height) / ridge.shape[1]
        for first, last in _runs(share > MIN_SPAN):
            if last - first + 1 > MAX_THICKNESS * min(height, width) + 2:
                continue  # a broad light band (a table's edge, a card), not a drawn line
            along = np.flatnonzero(ridge[first : last + 1].any(axis=0))
            # the ridge fades within half the kernel of where a line down meets it (a frame's corner)
            start, end = np.percentile(along, [0.5, 99.5]) * scale_along + np.array([-1, 1]) * (ridge_px // 2)
            lines.append(
                GuideLine(
                    across=across,
                    at=(first + last) / 2,
                    thickness=max(1.0, last - first + 1 - 2.0),  # less the dilation's pixel each side
                    start=max(0.0, float(start)),
                    end=min(float(width if across else height), float(end) + scale_along),
                )
            )
    return lines


def erase_guide_lines(image_rgb: np.ndarray, lines: list[GuideLine]) -> np.ndarray:
    """A copy of ``image_rgb`` with each line filled in across its thickness from the pixels either side of it.

    Across lines are filled first; a line down the photo is then filled from pixels already cleared
    where the two cross.
    """
    out = image_rgb.copy()
    height, width = out.shape[:2]
    for line in sorted(lines, key=lambda item: not item.across):
        size = height if line.across else width
        reach = line.thickness / 2 + PAD_PX
        before, after = int(np.floor(line.at - reach)) - 1, int(np.ceil(line.at + reach)) + 1
        if before < 0 or after >= size:
            continue  # along the photo's edge: nothing to fill it from on one side
        lo, hi = max(0, int(np.floor(line.start))), min(width if line.across else height, int(np.ceil(line.end)))
        view = out if line.across else out.transpose(1, 0, 2)
        side_a = view[before, lo:hi].astype(np.float32)
        side_b = view[after, lo:hi].astype(np.float32)
        weights = (np.arange(before + 1, after, dtype=np.float32) - before) / (after - before)
        view[before + 1 : after, lo:hi] = np.round(side_a + weights[:, None, None] * (side_b - side_a)).astype(np.uint8)
    return out


def without_guide_lines(image_rgb: np.ndarray) -> tuple[np.ndarray, list[GuideLine]]:
    """``image_rgb`` with its guide lines painted out (itself when it has none), and the lines found."""
    lines = find_guide_lines(image_rgb)
    return (erase_guide_lines(image_rgb, lines) if lines else image_rgb), lines
