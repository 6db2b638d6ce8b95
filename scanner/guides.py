"""Guide lines another camera app drew over a photo: found, and painted out before a board is read.

Camera apps draw thin light lines over the picture (a rule-of-thirds grid across the whole frame, a
framing rectangle) and photos shared from them keep the lines. Where such a line crosses a die it
hides part of a pip or draws a bar the model may take for one; across a palace it cuts through
price digits and the fountain, and the palace may not be found at all. ``Scanner.scan`` paints the
lines out of every photo before a reader sees it. The lines are straight and run along
the photo's rows or columns, so they are found as rows (columns) where a thin light grey ridge runs
along a large share of the width (height), and each is filled in across its thickness from the
pixels just either side of it.

Shorter marks along a row or column are painted out the same way: a focus cross's arms, the arms
of corner brackets (a ridge unbroken along at least ``MIN_SEGMENT`` of the short side, checked pixel
by pixel: lighter than both its sides nearly all the way and as thick all the way, which a row of
pips is not). Marks that do not run along a row or column (circles, words) are left as they are, but a
word over the board (``find_words``, ``words_about``, ``covered_by``) has its letters painted out
(``erase_words``) and the board is read again (``scanner.pipeline.read_without_words``).

Filling a line in from its sides cuts the fine print it crosses (a price digit's strokes). The lines
are drawn partly see-through, so for reading fine print the scan also keeps the photo with what each
line hides solved from the blend where enough shows through (``unblend_guide_lines``, ``Photo.fine_rgb``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from scanner.geometry import in_pair, quick_reduce

WORK_PX = 1600  # a photo of this long side (the scan's working size) or less is looked at with:
RIDGE_PX = 15  # a structure thinner than this and lighter than both its sides is a ridge
RIDGE_LIGHTER = 35  # how much lighter than its sides (darkest channel, 0-255)
RIDGE_GREY = 45  # the most its channels differ: guide lines are white or grey
RIDGE_FLOOR = 110  # its darkest channel at least this light (a one-pixel line drawn at 60% is about 150)
ALONG_STEP = 4  # every this many pixels along a line are looked at
MIN_RUN = 7  # and unbroken over at least this many of those steps
MIN_SPAN = 0.3  # a line runs along at least this share of the photo's width (height)
MAX_THICKNESS = 0.012  # and is at most this share of the photo's short side thick
MIN_SEGMENT = 0.035  # a shorter mark along a row or column (a cross's arm, a bracket's) is at least this share of the short side
BRIDGE_STEPS = 5  # gaps of fewer sampled pixels along a mark are bridged (another arm crossing it, a white pip under it)
MARK_SEEN = 0.8  # and, pixel by pixel along it, lighter than both its sides at least this share of its length
WHITE_UNDER = 200  # (where a side is lighter than this, darkest channel, a mark cannot be seen there: not counted)
EVEN_PX = 2  # and as thick all along, give or take this many pixels
STRAIGHT_PX = 0.5  # and its middle keeps to its row (column), give or take this much (a drawn mark: none)
SIDES_ALIKE = 40  # and alike on both sides along most of it, within this much in every channel
PAD_PX = 2.0  # photo pixels painted beyond the ridge's edge each side (its soft, anti-aliased edge and the JPEG's ringing)
UNBLEND_MAX = 0.8  # a row across a line at most this opaque is solved for what lies under it (``unblend_guide_lines``)
UNBLEND_ROOM = 60  # where the sides are at least this much darker than white (each channel), the opacity can be told
# A word a camera app wrote over the photo ("ALIGN") is looked for in the photo reduced to WORD_PX on its long side:
# light grey strokes thinner than WORD_STROKE of the short side (a top-hat of the darkest channel, RIDGE_LIGHTER
# lighter than around them, RIDGE_FLOOR light and RIDGE_GREY grey at most), in letter-sized parts, WORD_PARTS or
# more in a row at most WORD_GAP letter heights apart, their tops and bottoms level within WORD_LEVEL of a letter's
# height (written level on the screen; a tilted, turned board's print is not), the row WORD_ASPECT times as wide
# as tall. On the Alhambra transfer photos (2026-12-07): a word on 199 of 800 photos under a guide, and on 6 of
# 1,100 without one (building facades: light walls between rows of windows, level by chance).
WORD_PX = 1000
WORD_STROKE = 0.012
WORD_PARTS = 4
WORD_GAP = 0.9
WORD_LEVEL = 0.12
WORD_ASPECT = 2.5
# A word's letters are painted out (``erase_words``) within their boxes and LETTER_PAD of a letter's height around
# them: pixels LETTER_LIGHTER lighter than around them, LETTER_FLOOR light and LETTER_GREY grey at most, widened by
# LETTER_GROW pixels (its anti-aliased edge).
LETTER_PAD = 0.15
LETTER_LIGHTER = 20
LETTER_FLOOR = 90
LETTER_GREY = 60
LETTER_GROW = 2


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
    """The guide lines drawn across or down ``image_rgb`` (RGB uint8), in its pixels; [] when none.

    The lines across and the lines down are looked for at once, on two threads (OpenCV and numpy
    let go of the interpreter): 8.2 -> 5.6 ms on the 2000 x 1500 working photo of a 12 MP one, on
    2 cores (``tests/benchmarks/bench_scan_alhambra.py``'s photos, 2026-12-06).
    """
    across, down = in_pair(lambda: _lines_along(image_rgb, True), lambda: _lines_along(image_rgb, False))
    return across + down


def _lines_along(image_rgb: np.ndarray, across: bool) -> list[GuideLine]:
    """The lines, then the shorter marks, drawn along ``image_rgb``'s rows (``across``) or its columns."""
    height, width = image_rgb.shape[:2]
    scale = max(1.0, max(height, width) / WORK_PX)  # a photo larger than WORK_PX: thicker lines, coarser steps along
    ridge_px = int(round(RIDGE_PX * scale)) | 1
    shrink = int(round(ALONG_STEP * scale))
    lines = []
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
        thin = np.ascontiguousarray(thin.T)
        ridge, unbroken = np.ascontiguousarray(ridge.T), np.ascontiguousarray(unbroken.T)
    share = cv2.reduce(unbroken, 1, cv2.REDUCE_SUM, dtype=cv2.CV_32S).ravel() / ridge.shape[1]
    scale_along = (width if across else height) / ridge.shape[1]
    widest = MAX_THICKNESS * min(height, width) + 2
    spans = [(first, last) for first, last in _runs(share > MIN_SPAN) if last - first + 1 <= widest]  # wider: a light band
    marks = _segments(image_rgb, thin, spans, across, MIN_SEGMENT * min(height, width) / scale_along, scale_along, ridge_px, widest)
    for first, last in spans:
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
    return lines + marks  # after the lines: a mark beside one is filled from pixels already cleared


def _segments(
    image_rgb: np.ndarray,
    thin: np.ndarray,
    spans: list[tuple[int, int]],
    across: bool,
    shortest: float,
    scale_along: float,
    ridge_px: int,
    widest: float,
) -> list[GuideLine]:
    """The short marks drawn along ``image_rgb``'s rows (``across``) or columns: arms of crosses and corner brackets.

    ``thin`` holds the ridge pixels with one row per row (column) of the photo and one column every
    ``scale_along`` photo pixels along it; ``spans`` are the rows of the lines already found. A mark
    is a ridge in one row (or a few) unbroken over at least ``shortest`` of ``thin``'s columns, at
    most ``widest`` thick as a line is, away from the rows of the lines found, and, looked at again
    in the photo's every pixel along it, lighter than both its sides (and grey and light) nearly all
    the way, as thick all the way, with its middle on one row and mostly the same thing on both
    sides: a drawn mark is, while
    texture and noise line up for a few sampled pixels at most, a row of round pips widens and
    narrows, and the light rim of a die or a card's edge wanders across the rows or parts the die
    from the table.
    """
    reach = int(np.ceil(shortest))
    if reach < 1 or reach > thin.shape[1]:
        return []
    if spans:  # the lines' own rows: what lies beside them (a mark run into a line) is looked at alone
        thin = thin.copy()
        for low, high in spans:
            thin[max(0, low - 1) : high + 2] = 0
    # where a cross's other arm crosses it, a mark is not lighter than its sides for a few pixels
    bridged = cv2.morphologyEx(thin, cv2.MORPH_CLOSE, np.ones((1, BRIDGE_STEPS), np.uint8))
    long_runs = cv2.morphologyEx(bridged, cv2.MORPH_OPEN, np.ones((1, reach), np.uint8))
    rows = cv2.reduce(long_runs, 1, cv2.REDUCE_SUM, dtype=cv2.CV_32S).ravel()
    candidates = [
        (first, last, along_first, along_last)
        for first, last in _runs(rows > 0)
        for along_first, along_last in _runs(cv2.reduce(long_runs[first : last + 1], 0, cv2.REDUCE_SUM, dtype=cv2.CV_32S).ravel() > 0)
    ]
    near = ridge_px // 2  # across it, as far as a ridge can reach
    pad = 2 * int(np.ceil(scale_along)) + 2  # beyond the last pixels looked at along it: its rounded end
    size_across, size_along = image_rgb.shape[:2] if across else image_rgb.shape[1::-1]
    marks = []
    for first, last, along_first, along_last in candidates:
        thick = last - first + 1
        if thick > widest or first - near < 0 or last + near >= size_across or along_last - along_first >= MIN_SPAN * thin.shape[1]:
            continue  # too thick, at the photo's edge, or as long as a line (the lines are found as lines)
        start, end = int(along_first * scale_along), min(size_along, int(np.ceil((along_last + 1) * scale_along)))
        band = (
            image_rgb[first - near : last + near + 1, start:end]
            if across
            else image_rgb[start:end, first - near : last + near + 1].transpose(1, 0, 2)
        )
        dark, light = band.min(axis=2).astype(np.int16), band.max(axis=2).astype(np.int16)
        middle = slice(near, near + thick)
        peak = dark[middle].max(axis=0)
        at_peak = dark[middle].argmax(axis=0) + near
        grey = (light - dark)[at_peak, np.arange(band.shape[1])]
        # its sides, but not the rows of a line beside it (a cross's arm a few pixels off a line across the photo)
        band_rows = np.arange(first - near, last + near + 1)
        off_lines = (
            ~np.any([(band_rows >= low - 1) & (band_rows <= high + 1) for low, high in spans], axis=0)
            if spans
            else np.ones(len(band_rows), bool)
        )
        beside = [np.flatnonzero(off_lines[part]) + part.start for part in (slice(0, near - 1), slice(near + thick + 1, len(band_rows)))]
        if not any(len(side) for side in beside):
            continue
        sides = np.max([np.median(dark[side], axis=0) for side in beside if len(side)], axis=0)
        if all(len(side) for side in beside):  # drawn over one thing, not along the edge between two (a die's rim)
            colours = [np.median(band[side].astype(np.int16), axis=0) for side in beside]
            if np.median(np.abs(colours[0] - colours[1]).max(axis=1)) > SIDES_ALIKE:
                continue
        drawn = (peak - sides > RIDGE_LIGHTER) & (peak > RIDGE_FLOOR) & (grey < RIDGE_GREY)
        hidden = sides > WHITE_UNDER  # beside white (a pip, paper) a white mark is not seen, nor missed
        seen = np.count_nonzero(~hidden)
        if seen < MARK_SEEN * len(hidden) / 2 or np.count_nonzero(drawn) < MARK_SEEN * seen:
            continue
        lit = (dark > sides + RIDGE_LIGHTER)[:, drawn]
        widths = lit.sum(axis=0)  # across it: a drawn mark is as thick all along
        if np.percentile(widths, 90) - np.percentile(widths, 10) > EVEN_PX:
            continue  # a row of round pips widens and narrows
        light_above = np.where(lit, dark[:, drawn] - sides[drawn], 0).astype(np.float64)  # how much lighter, where it is
        weight = light_above.sum(axis=0)
        centres = (np.arange(len(lit))[:, None] * light_above).sum(axis=0)[weight > 0] / weight[weight > 0]
        if np.percentile(centres, 90) - np.percentile(centres, 10) > STRAIGHT_PX:
            continue  # and keeps to its rows: a die's light rim, a card's edge, wander across them
        # beside a line, the band the two make is filled as one, from pixels beyond both
        low = min([first, *(low for low, high in spans if low - near <= last and first <= high + near)])
        high = max([last, *(high for low, high in spans if low - near <= last and first <= high + near)])
        marks.append(
            GuideLine(across, (low + high) / 2, float(high - low + 1), float(max(0, start - pad)), float(min(size_along, end + pad)))
        )
    return marks


def _bands(image_rgb: np.ndarray, lines: list[GuideLine]) -> Iterator[tuple[np.ndarray, int, int, int, int]]:
    """For each line that has pixels on both sides of it, in order (across lines first): a view of the image with
    the line running along its rows, the rows just before and after the line, and the span along it.

    A line down the photo is seen through the image's transpose, so it runs along rows too; the
    views share ``image_rgb``'s memory.
    """
    height, width = image_rgb.shape[:2]
    for line in sorted(lines, key=lambda item: not item.across):
        size = height if line.across else width
        reach = line.thickness / 2 + PAD_PX
        before, after = int(np.floor(line.at - reach)) - 1, int(np.ceil(line.at + reach)) + 1
        if before < 0 or after >= size:
            continue  # along the photo's edge: nothing to fill it from on one side
        lo, hi = max(0, int(np.floor(line.start))), min(width if line.across else height, int(np.ceil(line.end)))
        yield (image_rgb if line.across else image_rgb.transpose(1, 0, 2)), before, after, lo, hi


def _between(view: np.ndarray, before: int, after: int, lo: int, hi: int) -> np.ndarray:
    """float32 (rows, span, 3): the rows strictly between ``before`` and ``after`` blended from those two rows."""
    side_a = view[before, lo:hi].astype(np.float32)
    side_b = view[after, lo:hi].astype(np.float32)
    weights = (np.arange(before + 1, after, dtype=np.float32) - before) / (after - before)
    return side_a + weights[:, None, None] * (side_b - side_a)


def erase_guide_lines(image_rgb: np.ndarray, lines: list[GuideLine]) -> np.ndarray:
    """A copy of ``image_rgb`` with each line filled in across its thickness from the pixels either side of it.

    Across lines are filled first; a line down the photo is then filled from pixels already cleared
    where the two cross.
    """
    out = image_rgb.copy()
    for view, before, after, lo, hi in _bands(out, lines):
        view[before + 1 : after, lo:hi] = np.round(_between(view, before, after, lo, hi)).astype(np.uint8)
    return out


def unblend_guide_lines(image_rgb: np.ndarray, lines: list[GuideLine]) -> np.ndarray:
    """A copy of ``image_rgb`` with what each line hides solved from the blend where enough of it shows through.

    A guide is drawn in white over the photo, partly see-through: a pixel under it is ``opacity *
    white + (1 - opacity) * under``. Across the line, row by row, the opacity is the median of
    ``(seen - sides) / (white - sides)`` over the pixels along it whose sides (``_between``) are dark
    enough to tell (``UNBLEND_ROOM``, and alike on both sides); where it is at most ``UNBLEND_MAX``
    the row is solved for ``under``, elsewhere filled from the sides as ``erase_guide_lines`` does.
    Fine print a line crosses (a price digit's strokes) keeps its shape this way where filling it in
    cuts it; the solved pixels are noisier (the JPEG's error grows by ``1 / (1 - opacity)``).
    """
    out = image_rgb.copy()
    for view, before, after, lo, hi in _bands(out, lines):
        sides = _between(view, before, after, lo, hi)
        seen = view[before + 1 : after, lo:hi].astype(np.float32)
        room = 255.0 - sides
        telling = (room > UNBLEND_ROOM) & (np.abs(view[before, lo:hi].astype(np.float32) - view[after, lo:hi])[None] < SIDES_ALIKE)
        ratio = np.where(telling, (seen - sides) / np.maximum(room, 1.0), np.nan).reshape(len(seen), -1)
        known = np.isfinite(ratio).any(axis=1)
        opacity = np.ones(len(seen), np.float32)  # a row with nothing to tell by: filled in
        opacity[known] = np.clip(np.nanmedian(ratio[known], axis=1), 0.0, 1.0)
        solved = sides.copy()
        shows = opacity <= UNBLEND_MAX
        a = opacity[shows][:, None, None]
        solved[shows] = (seen[shows] - a * 255.0) / (1.0 - a)
        view[before + 1 : after, lo:hi] = np.clip(np.round(solved), 0, 255).astype(np.uint8)
    return out


@dataclass(frozen=True)
class WrittenWord:
    """A word written over the photo: its box and each letter's box (x0, y0, x1, y1), in the image's pixels."""

    box: tuple[float, float, float, float]
    letters: tuple[tuple[float, float, float, float], ...]


def find_words(image_rgb: np.ndarray, frame: tuple[int, int] | None = None) -> list[tuple[float, float, float, float]]:
    """The boxes (x0, y0, x1, y1, in ``image_rgb``'s pixels) of words written over the photo: light grey letters
    in a level row (see ``WORD_PX`` and after). Such a word hides what it covers and reads as print.

    ``image_rgb`` may be a part of the photo; ``frame`` is then the whole photo's (width, height), which
    the sizes of strokes and letters are reckoned from.

    >>> table = np.full((600, 800, 3), 90, np.uint8)
    >>> find_words(table)
    []
    >>> _ = cv2.putText(table, "ALIGN", (300, 300), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (240, 240, 240), 2, cv2.LINE_AA)
    >>> [round(v) for v in find_words(table)[0]]
    [300, 279, 385, 301]
    """
    return [word.box for word in _written_words(image_rgb, frame)]


def _written_words(image_rgb: np.ndarray, frame: tuple[int, int] | None = None) -> list[WrittenWord]:
    """The words ``find_words`` finds, each with its letters."""
    height, width = image_rgb.shape[:2]
    whole = (width, height) if frame is None else frame
    scale = min(1.0, WORD_PX / max(whole))
    small = quick_reduce(image_rgb, (max(1, round(width * scale)), max(1, round(height * scale)))) if scale < 1 else image_rgb
    short = scale * min(whole)
    strokes = _light_strokes(small, max(5, int(round(WORD_STROKE * short)) | 1), RIDGE_LIGHTER, RIDGE_FLOOR, RIDGE_GREY)
    count, _, stats, _ = cv2.connectedComponentsWithStats(strokes.astype(np.uint8), connectivity=8)
    tallest = 0.1 * short
    parts = sorted(
        (int(x), int(y), int(w), int(h)) for x, y, w, h, area in stats[1:count] if area >= 6 and 5 <= h <= tallest and w <= 1.5 * h
    )
    sx, sy = width / small.shape[1], height / small.shape[0]
    words: list[WrittenWord] = []
    used: set[int] = set()
    for first in range(len(parts)):
        if first in used:
            continue
        row = [first]
        for other in range(first + 1, len(parts)):
            x, y, w, h = parts[other]
            lx, ly, lw, lh = parts[row[-1]]
            if other in used or x < lx or x - (lx + lw) > WORD_GAP * lh:
                continue
            if abs((y + h / 2) - (ly + lh / 2)) <= 0.3 * lh and 0.6 <= h / lh <= 1.6:
                row.append(other)
        tops = np.array([parts[i][1] for i in row], np.float64)
        bottoms = np.array([parts[i][1] + parts[i][3] for i in row], np.float64)
        level = max(2.0, WORD_LEVEL * float(np.median(bottoms - tops)))
        row = [i for i, t, b in zip(row, tops, bottoms) if abs(t - np.median(tops)) <= level and abs(b - np.median(bottoms)) <= level]
        if len(row) < WORD_PARTS:
            continue
        x0, y0 = min(parts[i][0] for i in row), min(parts[i][1] for i in row)
        x1, y1 = max(parts[i][0] + parts[i][2] for i in row), max(parts[i][1] + parts[i][3] for i in row)
        if x1 - x0 >= WORD_ASPECT * (y1 - y0):
            letters = tuple((x * sx, y * sy, (x + w) * sx, (y + h) * sy) for x, y, w, h in (parts[i] for i in row))
            words.append(WrittenWord((x0 * sx, y0 * sy, x1 * sx, y1 * sy), letters))
            used.update(row)
    return words


def _light_strokes(image_rgb: np.ndarray, side: int, lighter: int, floor: int, grey: int) -> np.ndarray:
    """Where ``image_rgb`` has light grey strokes thinner than ``side`` px: its darkest channel ``lighter`` than
    around it (a top-hat), at least ``floor``, and its channels within ``grey`` of each other (a bool mask)."""
    red, green, blue = cv2.split(image_rgb)
    dark, light = cv2.min(cv2.min(red, green), blue), cv2.max(cv2.max(red, green), blue)
    top = cv2.morphologyEx(dark, cv2.MORPH_TOPHAT, cv2.getStructuringElement(cv2.MORPH_RECT, (side, side)))
    return (top >= lighter) & (dark >= floor) & (cv2.subtract(light, dark) <= grey)


def words_about(image_rgb: np.ndarray, outlines: Sequence[Sequence[tuple[float, float]]]) -> list[WrittenWord]:
    """The words written over the photo (``find_words``) about the outlines (polygons in ``image_rgb``'s pixels):
    looked for in their box and a quarter of its size around it only."""
    points = np.asarray([point for outline in outlines for point in outline], np.float64).reshape(-1, 2)
    if not len(points):
        return []
    (x0, y0), (x1, y1) = points.min(axis=0), points.max(axis=0)
    margin = 0.25 * max(x1 - x0, y1 - y0)
    height, width = image_rgb.shape[:2]
    left, top = int(max(0, x0 - margin)), int(max(0, y0 - margin))
    right, bottom = int(min(width, x1 + margin)), int(min(height, y1 + margin))
    if right - left < 8 or bottom - top < 8:
        return []

    def moved(box: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
        return (box[0] + left, box[1] + top, box[2] + left, box[3] + top)

    found = _written_words(image_rgb[top:bottom, left:right], (width, height))
    return [WrittenWord(moved(word.box), tuple(moved(letter) for letter in word.letters)) for word in found]


def covered_by(words: Sequence[WrittenWord], outlines: Sequence[Sequence[tuple[float, float]]], share: float) -> list[bool]:
    """For each outline (a convex polygon), whether one of ``words`` covers at least ``share`` of its area."""
    boxes = [np.array([[a, b], [c, b], [c, d], [a, d]], np.float32) for a, b, c, d in (word.box for word in words)]

    def covered(outline: Sequence[tuple[float, float]]) -> bool:
        shape = np.asarray(outline, np.float32).reshape(-1, 2)
        if not boxes or len(shape) < 3:
            return False
        area = abs(cv2.contourArea(shape))
        return area > 0 and any(cv2.intersectConvexConvex(shape, box)[0] >= share * area for box in boxes)

    return [covered(outline) for outline in outlines]


def erase_words(image_rgb: np.ndarray, words: Sequence[WrittenWord]) -> np.ndarray:
    """``image_rgb`` with the letters of ``words`` painted out (a copy; itself when there are none).

    Within each letter's box and ``LETTER_PAD`` of its height around it, the pixels lighter than
    their surroundings and grey (as ``find_words`` finds strokes, the bars a little lower for the
    letters' soft edges at full size), widened by ``LETTER_GROW`` pixels, are filled in from around
    them (``cv2.inpaint``). Only the letters' boxes are touched: a die's pip beside a word stays.
    """
    if not words:
        return image_rgb
    out = image_rgb.copy()
    height, width = image_rgb.shape[:2]
    side = max(5, int(round(WORD_STROKE * min(height, width))) | 1)
    for x0, y0, x1, y1 in (letter for word in words for letter in word.letters):
        pad = max(2.0, LETTER_PAD * (y1 - y0))
        left, top = int(max(0, x0 - pad)), int(max(0, y0 - pad))
        right, bottom = int(min(width, np.ceil(x1 + pad))), int(min(height, np.ceil(y1 + pad)))
        if right - left < 3 or bottom - top < 3:
            continue
        view = out[top:bottom, left:right]
        strokes = _light_strokes(view, side, LETTER_LIGHTER, LETTER_FLOOR, LETTER_GREY)
        if strokes.any():
            grown = cv2.dilate(strokes.astype(np.uint8), np.ones((3, 3), np.uint8), iterations=LETTER_GROW)
            out[top:bottom, left:right] = cv2.inpaint(np.ascontiguousarray(view), grown, 3, cv2.INPAINT_TELEA)
    return out


def without_guide_lines(image_rgb: np.ndarray) -> tuple[np.ndarray, list[GuideLine]]:
    """``image_rgb`` with its guide lines painted out (itself when it has none), and the lines found."""
    lines = find_guide_lines(image_rgb)
    return (erase_guide_lines(image_rgb, lines) if lines else image_rgb), lines
