"""Reading a Sagrada window from a photo: find the grid, classify the 20 cells, decode with the rules.

Decoding picks the most probable reading that the rules allow. Each cell's classifier output is
a distribution over 42 states: 30 dice (colour x value) and 12 empty-cell prints (blank, five
colours, six values). The empty cells' prints and the dice identify the pattern card
(``scoring.sagrada.identify_patterns``); then an exact search over the rows (dynamic programming
over each cell's few likely states) maximises the joint probability under these rules:

- two orthogonally adjacent dice never share a colour or a value (a hard rule: a misread);
- an empty cell shows the card's print there;
- a die on a colour or value print matches it, unless a tool card was used: allowed, but only
  where the model is unsure (a penalty factor ``TOOL_RATE``).

Every cell whose value differs from the classifier's first choice is reported as an ``Override``.

Which side is up: the refiner's top-left head learnt our board style only, so the cards decide too.
The half turn's readings are the same states in reversed cell order; both orders are scored by the
24 cards (``orientation_log_odds``) and combined with the refiner's two-way probability
(``choose_orientation``). The corners turn with the choice, and a choice under ``ORIENTATION_SURE``
is flagged for review. Each cell's confidence is its value's probability over both ways up
(``orientation_weighed``), so no cell reads surer than the orientation unless its opposite agrees.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NamedTuple

import cv2
import numpy as np

from scanner.errors import BoardNotFoundError, Remedy
from scanner.geometry import cell_square, project
from scanner.model import OnnxModel, image_batch, load_model, softmax
from scanner.photo import Photo
from scanner.reading import BoardReading, CellReading, GridCertainty, Override, Timings
from scanner.sagrada import grid as board_finder
from scanner.sagrada.cells import (
    COLS,
    CROP_HEIGHT_MM,
    MARGIN_PX,
    PITCH_PX,
    ROWS,
    cell_crops,
    lift_corners,
    off_photo_shares,
    rectify_grid,
    reduced_for_grid,
    zoomed,
)
from scanner.sagrada.grid import BoardLocation, WindowCutOff, cells_outside
from scanner.sagrada.lattice import WindowFit, grid_homography
from scanner.sagrada.verdict import VERDICT
from scanner.verdict import percent
from scoring.sagrada import PATTERNS, Die, SagradaPlayer, SagradaState, identify_patterns, pattern_log_likelihood

BOARD_KEYS = ("window", "pattern")  # what a photo of a window shows of its player (favor tokens and objectives are set in review)
COLOURS = ("R", "Y", "G", "B", "P")
DICE = tuple(f"{c}{v}" for c in COLOURS for v in range(1, 7))
PRINT_STATES = (".",) + COLOURS + tuple(str(v) for v in range(1, 7))
STATES = DICE + tuple("_" + p for p in PRINT_STATES)  # "_R": empty cell with a red print
EMPTY_STATES = slice(len(DICE), len(STATES))
TOOL_RATE = 0.05
VIOLATION = 1e-3  # per neighbour clash: a clash costs as much as a 1000:1 reading
PRINT_MISMATCH = 1e-3
PATTERN_CONFIDENCE = 0.9
MAX_CANDIDATES = 4
CANDIDATE_FLOOR = 1e-4
ROW_BUDGET = 256
REFINER_TRUST = 0.9  # the most the refiner's top-left is believed: it learnt one board style and turns others confidently
ORIENTATION_SURE = 0.95  # an orientation chosen at less than this (cards and refiner together) is flagged for review
# a cell whose board square or die top lies more than this share beyond the photo's edge (``cells.off_photo_shares``)
# reads no surer than OFF_PHOTO_SURE and is named for review: held-out-style photos cut close to the grid at 32-40
# degrees of tilt read a die leaning past the top edge B6 -> B1 at 98%, unflagged
OFF_PHOTO, OFF_PHOTO_SURE = 0.25, 0.5
# A grid the scanner placed a row or column off the window shows it in the line it took in at its edge: the
# frame, the glass strip or the table, where no cell reads as a die or a print at EDGE_UNREAD or more; the
# other cells then read the window's dice at their neighbours' places, surely. Where a found grid's edge
# row or column reads so, every cell reads no surer than SHIFTED_SURE and the grid is doubted
# (``unread_edge``). Of the transfer sets' 1,200 photos (2026-12-06), one grid so found: steep photo 38, read
# a column off, 16 of its cells wrong at >= 90%; no other photo's grid, right or not, has such a line.
EDGE_UNREAD, SHIFTED_SURE = 0.5, 0.8
# ... and the grid is read again one line over, away from that edge (``moved_grid``); where every line reads
# there, a pattern card is recognised and the cells read more surely on average, that reading is kept, its
# grid doubted (its fit at MOVED_FIT, under the verdict's bar: players check its corners). Steep photo 38:
# 0 -> 19 of 20 cells right; no other photo of the five transfer sets (1,200) changes. Without the card, one
# of the 200 dice-tray photos (IMG_20191208_111718) was read, one column over, as a window (flagged).
MOVED_FIT = 0.5
# A grid found a fraction of a cell off (a close, steep photo whose dice lean out of their cells; a lattice
# pulled by a shadow or a hand) reads dice doubtfully that read surely where the window lies. Where the cells
# of the grid found read under POLISH_BELOW on average (the certainty that judges grid retries), the grid is
# moved by a quarter and then an eighth of a pitch at a time, whole, scaled or one corner at a time, while its
# cells read surer at a first look (``polish_grid``: at most POLISH_ROUNDS moves a step, each worth at least
# POLISH_MOVE_GAIN; the grids tried are read in one batch, cut from the photo reduced once,
# ``cells.reduced_for_grid``). The grid so moved is kept where its cells, read with every look, read
# POLISH_GAIN surer than on the grid found, a pattern card is recognised there, every line still reads, and
# some cell reads otherwise: a grid that reads every cell as before stays where it was found (moved, a real
# window cut to the grid shrank by a third of a pitch, its dice read surer close up). A cell on the grid
# kept reads no surer than it read on the grid found, or than POLISHED_SURE where that was less or another
# reading (``no_surer_than_found``): the grid was moved by how surely the dice read, so it does not vouch
# for a reading that moved with it. Transfer, 240 photos a set (held-out style, close and steep, real-dice
# composites, real windows re-photographed, training styles; 2026-12-07): wrong cells 3, 63, 84, 15, 16 ->
# 3, 49, 81, 7, 13, and a composite and a real window that were refused are read, all right; windows
# entirely right 237, 204, 172, 228, 226 -> 237, 204, 173, 233, 228; wrong at >= 90% 0, 0, 3, 1, 2 -> 0, 0,
# 3, 0, 2; photos read better / worse 0/0, 3/1, 4/2, 6/1, 2/0; grids within a quarter of a cell of the true
# corners 180, 145, 208, 239, 212 -> 180, 144, 205, 233, 212 (the crops are cut half a die above the board;
# the real windows' dice lie flat). Of 80 Alhambra palace photos scanned as Sagrada, 74 refused and 6 read
# and flagged, as before. A scan whose grid is polished takes about 0.25 s more here (0.12 -> 0.39 s,
# 1600 x 1200 composites). Tried first: each grid tried cut as a reading cuts it and read alone (3, 43, 79,
# 7, 12 wrong cells, 0.83-0.92 s a polished scan); a grid kept with no card recognised (3, 47, 82, 7, 12
# wrong cells, but 12 of the 80 palaces read as flagged windows), and also where no cell read otherwise
# (grids within a quarter of a cell 180, 142, 204, 205, 210); every move that read surer kept, judged with every look (66
# of 240 composites moved, 8 read better, 8 worse); no cap (steep photo 21 read a wrong cell at 97% that it
# had read at 49%).
POLISH_BELOW, POLISH_GAIN, POLISH_MOVE_GAIN, POLISHED_SURE = 0.9, 0.05, 0.005, 0.8
POLISH_STEPS, POLISH_ROUNDS = (0.25, 0.125), 3
# Of the 22 grids a polishing round tries, most move most cells by a small part of a step (a corner moved
# barely shifts the cells across the window): a cell whose middle lies within POLISH_REUSE pitches of where
# it was read already in this polish keeps that reading (``FirstLooks``). A walnut composite's polish read
# 968 crops on average, 267 so (2026-12-07); the transfer sets' cells and windows were not told apart, and
# no set read a wrong cell more at >= 90% (CHANGELOG). A grid found running off the photo's edge, moved
# inside it (``_within_photo``: a few photos in a thousand), is polished reading every cell where it moved:
# there the polish chooses which of five grids is read, and one training-style photo cut close to its grid
# that it read right was refused with 0.01-0.05 pitches reused but 0.03.
POLISH_REUSE = 0.04
# A round reads few of its 22 moves (``polish_grid``): the grid moved a step right, left, down and up, and the
# POLISH_FORETOLD moves that those foretell surest, each cell's certainty taken as a parabola along each axis
# through where it was read and a step either way (``predicted_certainties``). Transfer, 240 photos a set,
# against reading all 22 (2026-12-07, seventeenth session; refused photos count 20 wrong cells): crops the cell
# model reads per board on the real-dice composites, 90th percentile, 1,004-1,160 -> 760-912 (walnut median
# 880 -> 683); wrong cells held-out style 3 -> 3, close and steep 46 -> 47, real windows 6 -> 6, real dice
# 92 -> 94, walnut 142 -> 139, pewter 192 -> 194, jade 147 -> 150, training styles 15 -> 14; windows
# entirely right 237, 206, 234, 182, 151, 168, 163, 227 -> 237, 208, 234, 180, 151, 168, 164, 228; wrong at
# >= 90% as before but pewter 9 -> 8. Reading only the one move foretold surest lost polishes the exhaustive
# round found (close and steep 46 -> 69 wrong cells, a photo cut close to its grid refused).
POLISH_FORETOLD = 4
# Where no pattern card is identified on a grid found, nothing has checked its place, its width or which way
# up it lies but the lattice itself: no cell reads surer than NO_CARD_SURE. On steep photos 240-359, never used
# for a choice (2026-12-07), two close, off-centre photos at 39 degrees had their grid read a quarter turn off,
# no card identified, 27 cells wrong at >= 90%; with the cap none. On the five transfer sets (240 photos each)
# wrong cells at >= 90% 0, 0, 3, 0, 2 -> 0, 0, 3, 0, 1 and right windows flagged 43, 110, 156, 220, 62 -> 45,
# 113, 157, 220, 63.
NO_CARD_SURE = 0.8
# A lattice fitted through the cells of a close, steep photo can take the window's 4-cell side for its 5-cell one:
# foreshortened, the 5 rows look no longer than the 4 columns, and a line of the frame's marks beside the dice
# passes for a fifth column. Where no pattern card is identified on a grid found, the grids a quarter turn from
# it on the same lattice (``quarter_turned_grids``: the 4x5 blocks sharing 16 of its cells) are read too; the
# one whose cells read surest is kept where a pattern card is recognised there, every line reads and its cells
# read surer than on the grid found. Its grid is doubted (fit at MOVED_FIT): players check its corners. Steep photos
# 240-359, never used for a choice (2026-12-07): 266 and 336 read 20 of 20 cells right (0 and 1 before), 61 -> 24
# wrong cells; the five transfer sets (240 photos each) and the 80 palaces scanned as Sagrada read as before.
# A grid found whose cells' middles run past the photo's edge refused the photo as cut off. On close photos cut
# near the grid the window often lies inside it all the same: the lattice took the window's 4-cell side for its
# 5-cell one, or sat half a cell off, and ran a line past the edge. There (``grid.WindowCutOff``) the grids a
# quarter turn from it and the one moved to where its cells read surer (``polish_grid``) are tried; of those with
# every cell's middle inside the photo, the surest on which a pattern card is recognised and every line reads is
# read (``SagradaReader._within_photo``), no cell surer than POLISHED_SURE (the grid was chosen by how surely its
# cells read), and its grid doubted (fit at MOVED_FIT). Where none is, the photo is refused as before. Transfer
# (2026-12-07, eleventh session): the close and steep set's 2 refused photos read (20 and 19 of 20 cells right,
# the wrong one at 50%; cells 98.1% -> 99.0%, windows 204 -> 205 of 240), the other four sets and the 80 palaces
# scanned as Sagrada as before; on steep photos 240-359, never used for a choice, refused 5 -> 4 (the one read:
# 19 of 20 right). A window cut where three of its cells lie beyond the edge is still refused. Each quarter-turned
# grid inside the photo is also moved to where its cells read surer and tried: a quarter turn from the grid found
# can lie within half a cell of the window, too far off for its card to be recognised (2026-12-07, twelfth session:
# the training styles' one refused photo read, 20 of 20 right, cells 99.3% -> 99.7%, windows 228 -> 229 of 240;
# the other four sets, photos 240-359 of the close and steep and training sets, the 80 palaces scanned as Sagrada
# and the 200 dice-tray photos read as before).
MIN_MEAN_CONFIDENCE = 0.6  # below this, with no pattern card recognised, the "window" is something else
# ... and the cells read as dice alone (the model's own confidence): a palace of Alhambra tiles reads as a
# window of sure empty cells and doubtful dice. Of the 80 palace photos of the Alhambra transfer sets scanned
# as Sagrada (2026-12-02), the 64 grids that got this far read their "dice" at 0.21-0.67 (56 under 0.55);
# Sagrada windows without a recognised card at 0.60 (a real-dice composite saved as JPEG), 0.71 and up. No
# bar parts them: under MIN_DICE_CONFIDENCE the photo is refused; above it, under the verdict's likeness bar
# (``scanner.sagrada.verdict``, 0.75), it is read and flagged ("is this a Sagrada window?"), so a hard real
# window is not refused and a palace is never read unflagged.
MIN_DICE_CONFIDENCE = 0.55
# Each crop is read as it is; one read under FIRST_LOOK_SURE is read again in all TTA_TURNS quarter turns
# (dice and prints read the same turned) and the heads' log-probabilities are averaged. Against reading
# every crop as it is and turned once: on the transfer sets' cells (held-out style, real-dice composites,
# training styles; 1,200 cells each, before the rules) wrong 14 -> 13, 135 -> 129, 26 -> 24, wrong at
# >= 90% 3 -> 2, 11 -> 9, 9 -> 8, right cells under 95% 109 -> 81, 379 -> 331, 74 -> 48; crops read per
# board 40 -> 26.7 (held-out style), 47.4 (composites), 25.4 (training styles).
TTA_TURNS = 4
FIRST_LOOK_SURE = 0.95
# ... and in the same turns again ZOOM times closer (``cells.zoomed``: the cell and an eighth of a pitch,
# a die's pips a fifth wider), all 2 x TTA_TURNS views averaged. Real dice are read better close up: on the
# true grids of the transfer sets' 240 photos each (2026-12-05), wrong cells with real dice 148 -> 88
# (windows entirely right 137 -> 174), the renders of the held-out style 2 -> 3, of the training styles
# 20 -> 21. Closer still read real dice a little better and renders worse (1.35: 75, 4, 26): a die
# leaning out of its cell under a steep camera loses pips at the zoomed view's edge. Reading every crop
# in four turns without the zoom changed nothing (147).
ZOOM = 1.2
# Real dice read best larger than the renders do (their pips are fewer pixels and softer: a crop of the
# held-out style's composites read once reads 90.9% of real dice as cut, 96.3% 1.3 times closer), and a
# board whose dice are small for its cells (0.7-0.8 of a square, wide slots) shows them smaller still
# (64% as cut, 93% 1.4 times closer). Where a first look at a board leaves BOARD_ZOOM_DOUBT or more cells
# doubtful, the whole board is also read BOARD_ZOOMS times closer; the closest look whose cells read
# surer by over BOARD_ZOOM_GAIN (``board_certainty``: renders gain under 0.05, real dice mostly more) is
# read instead, a doubtful cell pooled there, ZOOM - 1 closer again and as cut (``pooled_views``).
# Transfer, 240 photos a set, end to end (2026-12-07): real dice on the walnut board never trained on
# (whose photos chose the gain and the views) 91.4% -> 96.9% of cells, 72 -> 146 windows, wrong at
# >= 90% 46 -> 19, refused 2 -> 0; on the pewter board, read only after the choice, 94.7% -> 95.7%, 143
# -> 163 windows, 30 -> 22 at >= 90%; on the held-out style 97.9% -> 98.0%, 173 -> 178 windows, 3 -> 4
# at >= 90%; its renders, close and steep, the real windows and the training styles read as before
# (right real windows flagged 220 -> 217). Tried: a gain of 0.08 (held-out composites 5-7 at >= 90%), no
# as-cut views (real windows 231, held-out composites 5 at >= 90%), 1.2 alone (walnut's first 120 photos
# 55-68 windows, against 79).
BOARD_ZOOMS = (1.2, 1.4)
BOARD_ZOOM_GAIN = 0.12
BOARD_ZOOM_DOUBT = 2
# On such a board (BOARD_ZOOM_DOUBT or more cells under FIRST_LOOK_SURE at the first look) a cell read under
# DOUBTFUL_BOARD_SURE is pooled too: a real die read 95-99% as cut is often read otherwise closer (a hejmsdz
# yellow 4 read Y6 at 95% as cut, Y4 at 99% 1.2 and 1.4 times closer, on a board whose other dice read no
# surer closer), and the dice of a board the model finds doubtful are dice unlike the ones it learnt. A board
# read surely pools as before (renders flag no more right windows). Transfer, 240 photos a set, end to end
# against 0.95 (2026-12-07, `models.compare`): wrong cells at >= 90% on the real-dice composites 4 -> 2
# (held-out board), 19 -> 10 (walnut), 22 -> 9 (pewter); windows entirely right 178 -> 183, 146 -> 150, 163
# -> 166, 19 photos read better and none worse there; real windows 233 -> 234; held-out renders as before
# (right windows flagged 45 -> 49), close and steep 205 -> 205 (1 better, 2 worse, all flagged), training
# styles 229 -> 228 (a grid chosen otherwise; flagged 64 -> 66). Model work on the first 40 photos of a
# set, median: held-out renders 12.6 -> 16.1 ms, real-dice composites 18.7 -> 22.8, pewter 20.3 -> 25.3.
# Pooling at 0.99 on every board read the same dice, but flagged 56 right render windows; at 0.98 on every
# board, pewter and walnut kept 13 and 12 wrong at >= 90%; at 0.995, 8 and 10, with 59 render windows
# flagged. Pewter, first read only after the board zoom was chosen, was read for this choice too.
DOUBTFUL_BOARD_SURE = 0.99
# A pooled cell whose looks disagree (one of its views, turned or closer, reads another value at SPLIT_VIEW_SURE or
# more than the pooled reading: ``CellsRead.split``) reads no surer than SPLIT_LOOKS_SURE and is named for review, with
# the value that look gave, on a board with SPLIT_BOARD_DOUBT or more cells doubtful at the first look (a quarter of
# them: 85-90% of real-dice boards, 15% of the held-out style's renders, on their true grids). Averaged log-probabilities
# let a few sure views outvote many doubtful ones: on its true grid, a hejmsdz yellow 4 read Y4 in 8 of its 12 views
# and Y6 in 4 was pooled Y6. Transfer, 240 photos a set, end to end (2026-12-07, nineteenth session): wrong cells at
# >= 90% with real dice 9 -> 5 (walnut), 8 -> 5 (pewter), 5 -> 3 (jade), 2 -> 2 (held-out style); no cell read
# otherwise; right windows flagged 50 -> 53 of 237 held-out renders, 219 -> 225 of 234 real windows, 66 -> 70 of 228
# training styles. Named on every doubtful board (BOARD_ZOOM_DOUBT) and at any view's guess, 81 of 237 held-out
# renders were flagged; on every doubtful board at SPLIT_VIEW_SURE, 68 (the bar is one in four). Every set, jade
# among them, was read for these choices.
SPLIT_LOOKS_SURE = 0.85
SPLIT_VIEW_SURE = 0.5  # ... a view reading that other value at this or more (a view's odd guess under it names nothing)
SPLIT_BOARD_DOUBT = 5  # ... on a board with this many cells or more under FIRST_LOOK_SURE at the first look
# A cell's confidence: its own reading's probability and the one given the whole window, its card and the
# rules (``row_marginals``), geometrically weighed (the rules' weight). Transfer (held-out style, real-dice
# composites, training styles): right windows flagged 19 -> 17 of 57, 21 -> 21 of 23, 10 -> 9 of 48; wrong
# cells at >= 90% 2 -> 1, 2 -> 2, 9 -> 9. Trusting the rules alone (weight 1) flagged 8 of 57 right
# windows but left a composite window wrong unflagged (a Y2 read Y5: 81% on its own, 99% given the rest);
# weight 0.75 flagged 11 of 57 but read 4 composite cells wrong at >= 90%.
JOINT_WEIGHT = 0.5
# The colour head's logits are read at COLOUR_SOFTEN times the model's temperature (the die and value heads at
# it): real dice in shade or under a cast read in the wrong colour at 95-99% (a G6 as B6, an R5 as P5), a colour
# the rules then rarely question. On the transfer sets (240 photos each, 2026-12-06; held-out style, close
# and steep, real-dice composites, real windows re-photographed, training styles) wrong cells read at >= 90%
# 0, 3, 5, 6, 2 -> 0, 0, 3, 1, 2, windows entirely right 237, 205, 170, 227, 227 -> 237, 204, 172, 228, 226,
# right windows flagged 39, 104, 150, 204, 54 -> 43, 110, 155, 215, 60. At 1.7: 0, 0, 1, 1, 2 wrong at >= 90%,
# but 58 of 237 held-out-style windows flagged (the bar is one in four). Chosen on those sets: they no longer
# measure this number without bias.
COLOUR_SOFTEN = 1.4
HEAD_SOFTEN = {"colour": COLOUR_SOFTEN}
MAX_CONFLICTS = 2  # a tool card or two, or a misread: more and the card is not trusted


def pooled_views(crops: np.ndarray, turns: int = TTA_TURNS, zoom: float = ZOOM, base: float = 1.0) -> list[np.ndarray]:
    """The views of uint8 crops (N, S, S, 3) whose readings are averaged for a doubtful cell: the crops ``base``
    times closer (as cut at 1; ``cells.zoomed``), then turned by 90, 180 and 270 degrees (``turns`` views in
    all), then, when ``zoom`` is over 1, the same turns ``zoom - 1`` of a side closer again; and where ``base``
    is over 1, the same turns as cut (a die off its crop's centre keeps every pip there).

    >>> [v.shape for v in pooled_views(np.zeros((2, 48, 48, 3), np.uint8))]
    [(2, 48, 48, 3), (2, 48, 48, 3), (2, 48, 48, 3), (2, 48, 48, 3), (2, 48, 48, 3), (2, 48, 48, 3), (2, 48, 48, 3), (2, 48, 48, 3)]
    >>> len(pooled_views(np.zeros((2, 48, 48, 3), np.uint8), base=1.4))
    12
    """
    turns = max(1, turns)
    looks = [base, base + zoom - 1] if zoom > 1 else [base]
    if base > 1:
        looks.append(1.0)
    views = []
    for look in looks:
        seen = crops if look <= 1 else zoomed(crops, look)
        views += [np.rot90(seen, k, axes=(1, 2)) for k in range(turns)]
    return views


def recall_poolings(crops: np.ndarray) -> list[list[np.ndarray]]:
    """Each way ``classify`` may pool a doubtful cell's views (``pooled_views`` as cut and at each of ``BOARD_ZOOMS``,
    the board's closer looks): what a memory of corrected dice keys each die by (``scanner.adapt.memory``)."""
    return [pooled_views(crops, base=base) for base in (1.0, *BOARD_ZOOMS)]


def head_states(logs: Sequence[np.ndarray]) -> np.ndarray:
    """The (N, 42) cell states of the die, colour and value heads' log-probabilities (the first three of ``logs``)."""
    return state_probabilities(*(softmax(logp) for logp in logs[:3]))


def board_certainty(states: np.ndarray) -> float:
    """How surely a board's cells read, for choosing how close to look at them: the mean log-probability of each
    cell's likeliest state (a cell read at 50% weighs as much against as two at 99.5% for)."""
    return float(np.log(np.maximum(states.max(axis=1), 1e-12)).mean())


def state_probabilities(die: np.ndarray, colour: np.ndarray, value: np.ndarray) -> np.ndarray:
    """Combine the three heads' probabilities (N, 2), (N, 6), (N, 7) into (N, 42) state probabilities.

    The heads' orders are ``[empty, die]``, ``[none, R, Y, G, B, P]`` and ``[none, 1..6]``.
    """
    n = die.shape[0]
    dice = die[:, 1, None, None] * colour[:, 1:, None] * value[:, None, 1:]  # (N, 5, 6)
    empty = np.empty((n, len(PRINT_STATES)))
    empty[:, 0] = colour[:, 0] * value[:, 0]
    empty[:, 1:6] = colour[:, 1:] * value[:, 0, None]
    empty[:, 6:] = colour[:, 0, None] * value[:, 1:]
    empty *= die[:, 0, None]
    states = np.concatenate([dice.reshape(n, -1), empty], axis=1)
    return states / states.sum(axis=1, keepdims=True)


def cell_text(state: str) -> str:
    """The FORMATS.md text of a state: a die name, or ``.`` for any empty cell."""
    return "." if state.startswith("_") else state


def cell_die(state: str) -> Die | None:
    """The die a state shows (``None`` for any empty cell)."""
    return None if state.startswith("_") else Die(state[0], int(state[1]))


def window_state(decoded: Decoded, name: str) -> SagradaState:
    """The one-window game a decoding reads: the player ``name`` with the window and the pattern card (when known).

    The public objectives are left empty (a one-window scan: they are set in review).

    Raises:
        StateError: ``name`` is not a valid player name.
    """
    window = tuple(tuple(cell_die(decoded.states[r * COLS + c]) for c in range(COLS)) for r in range(ROWS))
    pattern = PATTERNS[decoded.pattern] if decoded.pattern is not None else None
    return SagradaState((), (SagradaPlayer(name, window, pattern),))


def value_probabilities(states: np.ndarray) -> dict[str, float]:
    """Sum one cell's state probabilities into FORMATS.md values (dice names and ``.``), each at most 1.

    The empty states' sum can round a hair over 1 (1.0000000000000002) when a cell is surely empty.
    """
    out = {die: min(1.0, float(p)) for die, p in zip(DICE, states[: len(DICE)])}
    out["."] = min(1.0, float(states[EMPTY_STATES].sum()))
    return out


@dataclass(frozen=True)
class Decoded:
    """The decoded window: one state per cell, the pattern (or None) and its posterior."""

    states: tuple[str, ...]
    pattern: str | None
    pattern_probability: float
    log_probability: float
    # (20, 42) each cell's state probabilities given the whole window, its card and the rules (``row_marginals``)
    joint: np.ndarray | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class ReadGrid:
    """One grid's reading (``SagradaReader._read_on``): its corners as read (turned when the cards say so), the cells'
    state probabilities, whether it was turned and how surely, the decoded window, its cells and the rules' overrides."""

    grid_corners: np.ndarray
    states: np.ndarray
    turned: bool
    sure: float
    decoded: Decoded
    cells: list[CellReading]
    overrides: list[Override]


class CellsRead(NamedTuple):
    """One board's cells as ``SagradaReader.read_cells`` reads them: (N, 42) state probabilities, and for each cell the
    value another of its looks reads where its pooled looks disagree (``SPLIT_LOOKS_SURE``; "" where they agree, where
    the cell was read once, on a board with under ``SPLIT_BOARD_DOUBT`` doubtful cells, or where the players' corrected
    dice settle it)."""

    states: np.ndarray
    split: tuple[str, ...]


def likeliest_values(states: np.ndarray) -> tuple[list[str], np.ndarray]:
    """Each row's likeliest FORMATS.md value (``value_probabilities``) of (N, 42) states, and its probability."""
    read = [value_probabilities(row) for row in states]
    best = [max(values, key=values.__getitem__) for values in read]
    return best, np.array([values[value] for values, value in zip(read, best)])


def split_looks(views: Sequence[np.ndarray], pooled: np.ndarray, sure: float = SPLIT_VIEW_SURE) -> list[str]:
    """For each cell, the value its views (each (N, 42) states) read most often, at ``sure`` or more, other than its
    ``pooled`` reading's likeliest; "" where no view reads another value that surely.

    >>> def one(value, p):
    ...     states = np.full((1, len(STATES)), (1 - p) / (len(STATES) - 1)); states[0, STATES.index(value)] = p
    ...     return states
    >>> split_looks([one("Y4", 0.9), one("Y6", 0.99), one("Y6", 0.99)], one("Y6", 0.9)), split_looks([one("Y4", 0.4)], one("Y6", 0.9))
    (['Y4'], [''])
    """
    chosen, _ = likeliest_values(pooled)
    seen = [likeliest_values(view) for view in views]
    out = []
    for cell, value in enumerate(chosen):
        others = [values[cell] for values, probability in seen if values[cell] != value and probability[cell] >= sure]
        out.append(max(sorted(set(others)), key=others.count) if others else "")
    return out


def _evidence(states: np.ndarray) -> list[list[dict[str, float]]]:
    """Soft evidence per cell for ``identify_patterns``: the likely states with their probabilities."""
    grid = []
    for r in range(ROWS):
        row = []
        for c in range(COLS):
            p = states[r * COLS + c]
            keep = np.argsort(p)[::-1][:6]
            evidence: dict[str, float] = {}
            for k in keep:
                if p[k] < 1e-3 and evidence:
                    break
                name = STATES[k]
                evidence[name[1:] if name.startswith("_") else name] = float(p[k])
            row.append(evidence)
        grid.append(row)
    return grid


def _cell_factor(state: str, mark: str | None) -> float:
    """How the pattern's print ``mark`` weighs a state (1 when no pattern is known)."""
    if mark is None:
        return 1.0
    if state.startswith("_"):
        return 1.0 if state[1:] == mark else PRINT_MISMATCH
    if mark == ".":
        return 1.0
    if mark in COLOURS:
        return 1.0 if state[0] == mark else TOOL_RATE
    return 1.0 if state[1] == mark else TOOL_RATE


@functools.cache
def _factors(mark: str | None) -> np.ndarray:
    """``_cell_factor`` for every state, as a vector."""
    return np.array([_cell_factor(state, mark) for state in STATES])


def pattern_conflicts(states: np.ndarray, pattern: str) -> int:
    """Count the cells whose first reading contradicts ``pattern``: a die breaking its print, or another print.

    The 24 cards' posterior only says which card fits best; this says whether it fits at all.
    """
    grid = PATTERNS[pattern].grid
    conflicts = 0
    for index in range(ROWS * COLS):
        r, c = divmod(index, COLS)
        state = STATES[int(np.argmax(states[index]))]
        conflicts += _cell_factor(state, grid[r][c]) < 1.0
    return conflicts


def _card_log_likelihood(states: np.ndarray) -> float:
    """log P(cells as read | a pattern card under them), the 24 cards equally likely (``pattern_log_likelihood``)."""
    evidence = _evidence(states)
    logs = np.array([pattern_log_likelihood(evidence, pattern) for pattern in PATTERNS.values()])
    top = float(logs.max())
    return top + math.log(float(np.exp(logs - top).mean()))


def orientation_log_odds(states: np.ndarray) -> float:
    """How much better the cards explain the cells as read than half turned (log odds; 0: no evidence).

    A die or a print reads the same turned 180 degrees, so the half-turned board's readings are the
    same (20, 42) states in reversed cell order; a turned board puts dice on prints they break and
    shows prints where no card has them.
    """
    return _card_log_likelihood(states) - _card_log_likelihood(states[::-1])


def choose_orientation(states: np.ndarray, keep: float, flip: float) -> tuple[bool, float]:
    """Whether to read the board half turned, and the probability of the orientation chosen.

    ``keep`` and ``flip`` are the refiner's probabilities for the top-left as given and its half turn;
    they are believed at most ``REFINER_TRUST`` (the refiner is sure of board styles it never saw),
    then combined with the pattern cards' evidence (``orientation_log_odds``).
    """
    total = keep + flip
    refiner = 0.5 if total <= 0 else min(max(keep / total, 1.0 - REFINER_TRUST), REFINER_TRUST)
    log_odds = orientation_log_odds(states) + math.log(refiner / (1.0 - refiner))
    log_odds = min(max(log_odds, -50.0), 50.0)
    chosen = 1.0 / (1.0 + math.exp(-abs(log_odds)))
    return log_odds < 0, chosen


def decode_window(states: np.ndarray, pattern: str | None = None) -> Decoded:
    """Return the most probable rule-abiding window for (20, 42) cell state probabilities.

    With ``pattern`` None the card is identified from the cells and used when its posterior is
    at least ``PATTERN_CONFIDENCE``.
    """
    probability = 1.0
    if pattern is None:
        ranked = identify_patterns(_evidence(states))
        if ranked[0][1] >= PATTERN_CONFIDENCE and pattern_conflicts(states, ranked[0][0]) <= MAX_CONFLICTS:
            pattern, probability = ranked[0]
        else:
            probability = ranked[0][1]
    grid = PATTERNS[pattern].grid if pattern else None
    # candidate states per cell, weighted by the pattern; each row's combinations kept under a budget
    ranked_cells: list[list[tuple[int, float]]] = []
    for index in range(ROWS * COLS):
        r, c = divmod(index, COLS)
        mark = grid[r][c] if grid else None
        weighted = states[index] * _factors(mark)
        order = np.argsort(weighted)[::-1][:MAX_CANDIDATES]
        top = weighted[order[0]]
        ranked_cells.append([(int(k), math.log(max(weighted[k], 1e-300))) for k in order if weighted[k] >= top * CANDIDATE_FLOOR])
    candidates: list[list[tuple[int, float]]] = []
    for r in range(ROWS):
        row = ranked_cells[r * COLS : (r + 1) * COLS]
        counts = [1] * COLS
        while True:  # add the next most likely alternative anywhere in the row while the budget allows
            options = [(row[c][counts[c]][1], c) for c in range(COLS) if counts[c] < len(row[c])]
            if not options:
                break
            _, c = max(options)
            if math.prod(counts) // counts[c] * (counts[c] + 1) > ROW_BUDGET:
                break
            counts[c] += 1
        candidates.extend(row[c][: counts[c]] for c in range(COLS))
    terms = _row_terms(candidates)
    best_states, best_log = _row_search(terms)
    return Decoded(
        states=tuple(STATES[k] for k in best_states),
        pattern=pattern,
        pattern_probability=float(probability),
        log_probability=best_log,
        joint=row_marginals(candidates, terms),
    )


def _clash_table() -> np.ndarray:
    """(42, 42) bool: whether two orthogonally adjacent states break the colour/value rule."""
    table = np.zeros((len(STATES), len(STATES)), bool)
    for a, sa in enumerate(DICE):
        for b, sb in enumerate(DICE):
            table[a, b] = sa[0] == sb[0] or sa[1] == sb[1]
    return table


CLASH = _clash_table()


def _row_options(candidates: list[list[tuple[int, float]]]) -> tuple[np.ndarray, np.ndarray]:
    """Every combination of one row's candidates: (M, COLS) state ids and (M,) log scores, clashes penalised."""
    ids = np.array(list(itertools.product(*[[k for k, _ in cell] for cell in candidates])), np.int64)
    logs = np.array(list(itertools.product(*[[lp for _, lp in cell] for cell in candidates])), np.float64).sum(axis=1)
    clashes = sum(CLASH[ids[:, c], ids[:, c + 1]].astype(np.int64) for c in range(COLS - 1))
    return ids, logs + math.log(VIOLATION) * clashes


RowTerms = tuple[list[tuple[np.ndarray, np.ndarray]], list[np.ndarray]]


def _row_terms(candidates: list[list[tuple[int, float]]]) -> RowTerms:
    """Each row's combinations (``_row_options``) and, between each row and the next, the (M, M') clash penalties."""
    penalty = math.log(VIOLATION)
    rows = [_row_options(candidates[r * COLS : (r + 1) * COLS]) for r in range(ROWS)]
    pairs = [
        penalty * sum(CLASH[rows[r - 1][0][:, c][:, None], rows[r][0][:, c][None, :]].astype(np.int64) for c in range(COLS))
        for r in range(1, ROWS)
    ]
    return rows, pairs


def row_marginals(candidates: list[list[tuple[int, float]]], terms: RowTerms | None = None) -> np.ndarray:
    """(20, 42) each cell's state probabilities over the windows ``candidates`` allow, weighed as ``_row_search`` weighs them.

    Sum-product over the same rows (forward-backward; ``terms`` when the caller has them already): a
    reading the rules or the card force is sure whatever its own crop said. States outside a cell's
    candidates get none.
    """
    rows, pairs = terms or _row_terms(candidates)
    logsumexp = np.logaddexp.reduce
    forward = [rows[0][1]]
    for r in range(1, ROWS):
        forward.append(logsumexp(forward[-1][:, None] + pairs[r - 1], axis=0) + rows[r][1])
    backward = [np.zeros(len(rows[ROWS - 1][1]))]
    for r in range(ROWS - 1, 0, -1):
        backward.insert(0, logsumexp(pairs[r - 1] + (rows[r][1] + backward[0])[None, :], axis=1))
    total = logsumexp(forward[-1])
    joint = np.zeros((ROWS * COLS, len(STATES)))
    for r in range(ROWS):
        weight = np.exp(forward[r] + backward[r] - total)
        for c in range(COLS):
            np.add.at(joint[r * COLS + c], rows[r][0][:, c], weight)
    return joint


def _row_search(terms: RowTerms) -> tuple[list[int], float]:
    """Exact best assignment: dynamic programming over the rows of ``_row_terms``, each row's combinations enumerated."""
    rows, pairs = terms
    best = rows[0][1]
    back = []
    for r in range(1, ROWS):
        ids, scores = rows[r]
        total = best[:, None] + pairs[r - 1]
        pointer = np.argmax(total, axis=0)
        best = total[pointer, np.arange(len(ids))] + scores
        back.append(pointer)
    j = int(np.argmax(best))
    score = float(best[j])
    chosen = [rows[ROWS - 1][0][j]]
    for r in range(ROWS - 1, 0, -1):
        j = int(back[r - 1][j])
        chosen.append(rows[r - 1][0][j])
    chosen.reverse()
    return [int(k) for ids in chosen for k in ids], score


class FirstLooks:
    """The first-look certainty of each cell's crops read while one grid is polished (``polish_grid``), by where the
    cell's middle lay: a cell whose middle lies within ``reuse`` pitches of a place it was read at keeps the reading
    nearest, and is not read again.

    >>> looks = FirstLooks()
    >>> square = np.array([[0, 0], [500, 0], [500, 400], [0, 400]], float)  # a pitch of 100 px
    >>> cells = looks.unread(square)
    >>> len(cells), looks.unread(square)  # the second asks for nothing: every cell is being read already
    (20, [])
    >>> looks.remember(square, cells, np.linspace(0.5, 0.975, 20))
    >>> round(float(looks.cells(square).mean()), 4), round(float(looks.cells(square + 2).mean()), 4)  # 2.8 px off: within 4 px, reused
    (0.7375, 0.7375)
    >>> moved = square + [[12.5, 0], [0, 0], [0, 0], [0, 0]]  # an eighth of a pitch, the top-left corner alone
    >>> looks.unread(moved)
    [0, 1, 2, 5, 6, 7, 10, 11]
    """

    def __init__(self, reuse: float = POLISH_REUSE) -> None:
        self.reuse = reuse
        self.places: list[list[tuple[float, float]]] = [[] for _ in range(ROWS * COLS)]
        self.sure: list[list[float]] = [[] for _ in range(ROWS * COLS)]

    @staticmethod
    def _middles(quad: np.ndarray) -> tuple[np.ndarray, float]:
        """The cells' middles within the grid ``quad`` (TL, TR, BR, BL), row by row, and its mean pitch."""
        quad = np.asarray(quad, np.float64).reshape(4, 2)
        middles = project(CELL_MIDDLES, grid_homography(quad))
        x, y = quad[:, 0], quad[:, 1]
        area = 0.5 * abs(float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))))
        return middles, math.sqrt(area / (ROWS * COLS))

    def _nearest(self, cell: int, middle: np.ndarray, pitch: float) -> int | None:
        """The index of the place ``cell`` was read at nearest ``middle``, where within ``reuse`` pitches; else None."""
        if not self.places[cell]:
            return None
        gaps = np.hypot(*(np.asarray(self.places[cell]) - middle).T)
        at = int(np.argmin(gaps))
        return at if gaps[at] <= self.reuse * pitch else None

    def _read_at(self, cell: int, middle: np.ndarray, pitch: float) -> int:
        """The index of the place ``cell`` was read at nearest ``middle`` (asked for by ``unread``).

        Raises:
            ValueError: ``cell`` was not read near ``middle``.
        """
        at = self._nearest(cell, middle, pitch)
        if at is None:
            raise ValueError(f"cell {cell}: not read near ({middle[0]:.1f}, {middle[1]:.1f}); ask for it with unread() first")
        return at

    def unread(self, quad: np.ndarray) -> list[int]:
        """The cells of ``quad`` to read: those with no place read within reuse; their places are kept at once, so
        a later grid of the same batch asks for none of them."""
        middles, pitch = self._middles(quad)
        cells = [cell for cell in range(ROWS * COLS) if self._nearest(cell, middles[cell], pitch) is None]
        for cell in cells:
            self.places[cell].append((float(middles[cell][0]), float(middles[cell][1])))
            self.sure[cell].append(math.nan)
        return cells

    def remember(self, quad: np.ndarray, cells: Sequence[int], sure: Sequence[float]) -> None:
        """Keep how surely ``cells`` of ``quad`` (asked for by ``unread``) read."""
        middles, pitch = self._middles(quad)
        for cell, value in zip(cells, sure):
            self.sure[cell][self._read_at(cell, middles[cell], pitch)] = float(value)

    def cells(self, quad: np.ndarray) -> np.ndarray:
        """The certainty of each cell within ``quad`` (20), each its reading nearest (all read: see ``unread``)."""
        middles, pitch = self._middles(quad)
        return np.array([self.sure[cell][self._read_at(cell, middles[cell], pitch)] for cell in range(ROWS * COLS)])


CELL_MIDDLES = np.array([[col + 0.5, row + 0.5] for row in range(ROWS) for col in range(COLS)], np.float64)


class SagradaReader:
    """Finds, reads and decodes one Sagrada window per photo (models load once)."""

    game = "sagrada"

    def __init__(
        self,
        dice: OnnxModel | None = None,
        finder: OnnxModel | None = None,
        refiner: OnnxModel | None = None,
        locator: OnnxModel | None = None,
    ) -> None:
        self.dice = dice or load_model("sagrada_dice")
        self._finder = finder
        self._refiner = refiner
        self._locator = locator

    @property
    def locator(self) -> OnnxModel:
        """The cell-centre locator model (loaded on first use: not needed when corners are given)."""
        if self._locator is None:
            self._locator = load_model("sagrada_locate")
        return self._locator

    @property
    def finder(self) -> OnnxModel:
        """The grid finder model (loaded on first use: not needed when corners are given)."""
        if self._finder is None:
            self._finder = load_model("sagrada_finder")
        return self._finder

    @property
    def refiner(self) -> OnnxModel:
        """The corner refiner model (loaded on first use)."""
        if self._refiner is None:
            self._refiner = load_model("sagrada_refiner")
        return self._refiner

    @staticmethod
    def crops(image_rgb: np.ndarray, grid_corners: np.ndarray) -> np.ndarray:
        """Cut the 20 cell crops, on the plane ``CROP_HEIGHT_MM`` above the board (see ``scanner.sagrada.cells``)."""
        height, width = image_rgb.shape[:2]
        rectified, _ = rectify_grid(image_rgb, lift_corners(grid_corners, (width, height), CROP_HEIGHT_MM))
        return cell_crops(rectified)

    def _cell_certainty(self, image_rgb: np.ndarray, grid_corners: np.ndarray, seen: dict | None = None) -> float:
        """How surely the cells within ``grid_corners`` read (mean of each cell's likeliest state): judges grid retries.

        The crops and states read are kept in ``seen`` (by the corners' bytes), so the grid chosen is not read twice.
        """
        crops = self.crops(image_rgb, grid_corners)
        read = self.read_cells(crops)
        if seen is not None:
            seen[np.asarray(grid_corners, np.float64).tobytes()] = (crops, read)
        return float(read.states.max(axis=1).mean())

    def classify(
        self, crops: np.ndarray, turns: int = TTA_TURNS, zoom: float = ZOOM, board_zooms: Sequence[float] = BOARD_ZOOMS
    ) -> np.ndarray:
        """Return calibrated (N, 42) state probabilities for uint8 cell crops (``read_cells``' states)."""
        return self.read_cells(crops, turns, zoom, board_zooms).states

    def read_cells(
        self, crops: np.ndarray, turns: int = TTA_TURNS, zoom: float = ZOOM, board_zooms: Sequence[float] = BOARD_ZOOMS
    ) -> CellsRead:
        """Return calibrated (N, 42) state probabilities for uint8 cell crops, and where a pooled cell's looks disagree.

        Each crop is read as it is. Where ``BOARD_ZOOM_DOUBT`` or more read under ``FIRST_LOOK_SURE``,
        every crop is also read ``board_zooms`` times closer (``cells.zoomed``; the crops are one
        board's), and the closest look whose crops read surer by over ``BOARD_ZOOM_GAIN``
        (``board_certainty``) is read from then on. A crop whose likeliest state is still under
        ``FIRST_LOOK_SURE`` (on such a doubtful board, under ``DOUBTFUL_BOARD_SURE``) is read again
        turned by 90, 180 and 270 degrees (``turns`` views in all; dice and prints read the same
        turned), and, when ``zoom`` is over 1, in the same turns
        ``zoom - 1`` closer again, all in one batch (``pooled_views``), and its heads'
        log-probabilities are averaged over every view. A cell model adapted to the players' set is
        read the same way, closer views included, and the adaptation is judged as it will be read:
        kept without them, an adaptation to 5 corrected photos of the held-out style read 2 cells of
        the next 20 photos worse (100% -> 99.50%); with them nothing is kept there, and the stand-in
        for another copy of the game reads 99.17% after 5 corrected photos (99.67% without them;
        ``bench_adapt_loop.py``, 2026-12-06). Where the adaptation remembers the players' corrected
        dice (``scanner.adapt.memory``), a doubtful crop's embedding pooled over the same views is
        looked up in it. On a board with ``SPLIT_BOARD_DOUBT`` or more cells doubtful at the first look, the pooled
        cells one of whose views reads another value than the pooled reading are named in ``CellsRead.split``
        (``split_looks``), unless the memory recalls the die.
        """
        first = self._head_logs(crops)
        states = head_states(first)
        base = 1.0
        first_doubts = np.count_nonzero(states.max(axis=1) < FIRST_LOOK_SURE)
        doubtful_board = first_doubts >= BOARD_ZOOM_DOUBT
        if board_zooms and doubtful_board:
            bar = board_certainty(states) + BOARD_ZOOM_GAIN
            for closer in board_zooms:
                logs = self._head_logs(zoomed(crops, closer))
                closer_states = head_states(logs)
                if (certainty := board_certainty(closer_states)) > bar:
                    bar, base, first, states = certainty, closer, logs, closer_states
        doubtful = np.flatnonzero(states.max(axis=1) < (DOUBTFUL_BOARD_SURE if doubtful_board else FIRST_LOOK_SURE))
        split = [""] * len(crops)
        if not len(doubtful) or (max(1, turns) < 2 and zoom <= 1):
            return CellsRead(states, tuple(split))
        read = self._head_logs(np.concatenate(pooled_views(crops[doubtful], turns, zoom, base)[1:]))
        more = [extra.reshape(-1, len(doubtful), extra.shape[1]) for extra in read]  # (views - 1, doubtful, C) per output
        pooled = [(logp[doubtful] + extra.sum(axis=0)) / (len(extra) + 1) for logp, extra in zip(first, more)]
        recalled = np.zeros(len(doubtful), dtype=bool)
        memory = getattr(self.dice, "memory", None)
        if memory is not None:
            key, gain = memory.nearest(pooled[3])
            recalled = key >= 0
            heads = dict(zip(("die", "colour", "value"), pooled[:3]))
            pooled = list(memory.apply(heads, pooled[3], (key, gain)).values())
        states[doubtful] = head_states(pooled)
        if first_doubts >= SPLIT_BOARD_DOUBT:  # a board read more surely names no cell: its dice are like the ones learnt
            views = [head_states([logp[doubtful] for logp in first[:3]])]
            views += [head_states([extra[view] for extra in more[:3]]) for view in range(len(more[0]))]
            looked = split_looks(views, states[doubtful])
            for at, other, settled in zip(doubtful, looked, recalled):
                split[at] = "" if settled else other
        return CellsRead(states, tuple(split))

    def _read_on(
        self,
        image: np.ndarray,
        grid_corners: np.ndarray,
        refiner_turn: tuple,
        judged: dict[bytes, tuple[np.ndarray, CellsRead]],
        timings: Timings,
    ) -> ReadGrid:
        """Cut, classify and decode the cells on ``grid_corners`` (as found: turned here when the cards say so); a grid
        the locating stage's judge read already (``judged``) is not read again."""
        read_before = judged.get(np.asarray(grid_corners, np.float64).tobytes())
        with timings.stage("rectify"):
            crops = read_before[0] if read_before else self.crops(image, grid_corners)
        with timings.stage("classify"):
            states, split = read_before[1] if read_before else self.read_cells(crops)
        with timings.stage("decode"):
            turned, sure = choose_orientation(states, *refiner_turn)
            if turned:
                states, crops, grid_corners, split = states[::-1], crops[::-1], np.roll(grid_corners, 2, axis=0), split[::-1]
            decoded = decode_window(states)
        cells, overrides = cell_readings(decoded, states, crops, grid_corners, sure)
        cells = looks_split(cells, split)
        return ReadGrid(np.asarray(grid_corners, np.float64), states, turned, sure, decoded, cells, overrides)

    def _polished(
        self,
        image: np.ndarray,
        grid_corners: np.ndarray,
        found: ReadGrid,
        refiner_turn: tuple,
        judged: dict[bytes, tuple[np.ndarray, CellsRead]],
        timings: Timings,
    ) -> tuple[ReadGrid, tuple[float, float] | None]:
        """The reading on the grid found (``grid_corners``, read as ``found``) moved to where its cells read surer
        (``polish_grid``), and the cells' mean certainty before and after; ``found`` and None where the grid found
        reads surely enough, or moving it gains too little, recognises no pattern card, leaves a line unread or
        reads every cell as before (``POLISH_BELOW`` and after)."""
        start = float(found.states.max(axis=1).mean())
        if start >= POLISH_BELOW:
            return found, None
        with timings.stage("locate"):
            polished = self._polish(image, grid_corners)
            end = self._cell_certainty(image, polished, judged)
        if end < start + POLISH_GAIN:
            return found, None
        again = self._read_on(image, polished, refiner_turn, judged, timings)
        if again.decoded.pattern is None or unread_edge(again.cells) is not None or _values(again.cells) == _values(found.cells):
            return found, None  # a grid that reads no card, or no cell otherwise, stays where it was found
        return replace(again, cells=no_surer_than_found(again.cells, found.cells)), (start, end)

    def _quarter_turned(
        self, image: np.ndarray, found: ReadGrid, judged: dict[bytes, tuple[np.ndarray, CellsRead]], timings: Timings
    ) -> ReadGrid | None:
        """The reading on the grid a quarter turn from ``found``'s (``quarter_turned_grids``) whose cells read surest, where
        a pattern card is recognised there, every line reads and its cells read surer than on ``found``; else None."""
        grid_corners = np.roll(found.grid_corners, 2, axis=0) if found.turned else found.grid_corners
        start = float(found.states.max(axis=1).mean())
        with timings.stage("locate"):
            surer = [
                (certainty, quad)
                for quad in quarter_turned_grids(grid_corners)
                if (certainty := self._cell_certainty(image, quad, judged)) > start
            ]
        chosen = self._surest_with_card(image, surer, judged, timings)
        return None if chosen is None else chosen[1]

    def _surest_with_card(
        self,
        image: np.ndarray,
        options: Sequence[tuple[float, np.ndarray]],
        judged: dict[bytes, tuple[np.ndarray, CellsRead]],
        timings: Timings,
    ) -> tuple[int, ReadGrid] | None:
        """Of ``options`` (how surely each grid's cells read, the grid), surest first, the first on which a pattern card is
        recognised and every line reads, and its reading (which way up: the cards alone); None where there is none."""
        for index in sorted(range(len(options)), key=lambda at: (-options[at][0], at)):
            again = self._read_on(image, options[index][1], (0.5, 0.5), judged, timings)
            if again.decoded.pattern is not None and unread_edge(again.cells) is None:
                return index, again
        return None

    def _within_photo(
        self, image: np.ndarray, fit: WindowFit, judged: dict[bytes, tuple[np.ndarray, CellsRead]], timings: Timings
    ) -> tuple[np.ndarray, str, ReadGrid] | None:
        """Where the grid found (``fit``) runs off the photo's edge: of the grids a quarter turn from it, the one moved to
        where its cells read surer (``polish_grid``) and each quarter-turned grid inside the photo so moved, those with
        every cell's middle inside the photo, the surest on which a pattern card is recognised and every line reads,
        how it was found and its reading; None where there is none."""
        size = (image.shape[1], image.shape[0])
        with timings.stage("locate"):
            turned = [quad for quad in quarter_turned_grids(fit.corners) if not cells_outside(quad, size)]
            options = [(quad, "turned a quarter") for quad in turned]
            options.append((self._polish(image, fit.corners, reuse=0.0), "moved to where its cells read surer"))
            options += [
                (self._polish(image, quad, reuse=0.0), "turned a quarter and moved to where its cells read surer") for quad in turned
            ]
            inside = [(quad, how) for quad, how in options if not cells_outside(quad, size)]
            scored = [(self._cell_certainty(image, quad, judged), quad) for quad, _ in inside]
        chosen = self._surest_with_card(image, scored, judged, timings)
        return None if chosen is None else (*inside[chosen[0]], chosen[1])

    def _polish(self, image: np.ndarray, grid_corners: np.ndarray, reuse: float = POLISH_REUSE) -> np.ndarray:
        """``grid_corners`` moved to where its cells read surer (``polish_grid``), each grid tried read at a first look
        from the photo reduced once (``reduced_for_grid``), a cell's crop read once within ``reuse`` pitches of each
        place (``FirstLooks``)."""
        reduced, scale = reduced_for_grid(image, grid_corners)
        looks = FirstLooks(reuse)
        return polish_grid(grid_corners, lambda quads: self._first_look_certainties(reduced, [quad * scale for quad in quads], looks))

    def _first_look_certainties(self, image: np.ndarray, quads: Sequence[np.ndarray], looks: FirstLooks) -> np.ndarray:
        """How surely the cells within each grid of ``quads`` read at a first look (each crop once, as cut, the crops
        not yet read in ``looks``, the polish's own, in one batch): what ``polish_grid`` climbs, at a fraction of the
        work of ``_cell_certainty``'s every look."""
        wanted = [looks.unread(quad) for quad in quads]
        if any(cells for cells in wanted):
            crops = np.concatenate([self.crops(image, quad)[cells] for quad, cells in zip(quads, wanted) if cells])
            sure = self.classify(crops, turns=1, zoom=1.0, board_zooms=()).max(axis=1)
            at = 0
            for quad, cells in zip(quads, wanted):
                looks.remember(quad, cells, sure[at : at + len(cells)])
                at += len(cells)
        return np.array([looks.cells(quad) for quad in quads])

    def _head_logs(self, crops: np.ndarray) -> list[np.ndarray]:
        """The cell model's calibrated log-probabilities of ``crops`` for its die, colour and value heads,
        and, where the model remembers corrected dice, its embedding of them."""
        out = self.dice.run(image_batch(crops))
        t = self.dice.manifest.temperature
        logs = [np.log(np.maximum(softmax(out[head] / (t * HEAD_SOFTEN.get(head, 1.0))), 1e-12)) for head in ("die", "colour", "value")]
        if getattr(self.dice, "memory", None) is not None:
            logs.append(np.asarray(out["embedding"], dtype=np.float64).reshape(len(crops), -1))
        return logs

    def read(self, photo: Photo, *, corners: np.ndarray | None = None, timings: Timings | None = None) -> BoardReading:
        """Locate, rectify, classify and decode one window.

        Raises:
            BoardNotFoundError: no window (or two) found, or the photo is too dark or blurred to tell.
        """
        timings = timings or Timings()
        image = photo.image_rgb
        notes: list[str] = list(photo.notes)
        judged: dict[bytes, tuple[np.ndarray, CellsRead]] = {}  # the cells the grid retry's judge read, by grid
        within: str | None = None  # how a grid found running off the photo's edge was moved inside it (None: it was not)
        cut_off: WindowCutOff | None = None
        with timings.stage("locate"):
            try:
                grid_corners, location, fit, refiner_turn, quarter = self._locate(photo, corners, notes, judged)
            except WindowCutOff as error:
                cut_off = error
        if cut_off is not None:
            inside = self._within_photo(image, cut_off.fit, judged, timings)
            if inside is None:
                raise BoardNotFoundError(_with_photo_quality(str(cut_off), image), remedy=cut_off.remedy) from None
            grid_corners, within, read_inside = inside
            fit, refiner_turn, quarter = cut_off.fit, (0.5, 0.5), 1.0
            support = fit.corner_support()
            location = BoardLocation(grid_corners, min(1.0, max(0.0, fit.mask)), min(support), 0.5, 0.5, support)
        refuse_colourless(image, photo.name)  # a window in grey: its dice cannot be told apart
        if within is None:
            on = self._read_on(image, grid_corners, refiner_turn, judged, timings)
        else:  # read already, as it was chosen
            on = replace(read_inside, cells=no_surer_than(read_inside.cells, POLISHED_SURE))
            notes.append(f"the grid found ran off the photo's edge: {within} inside the photo, where a pattern card is recognised")
        shifted = unread_edge(on.cells) if location is not None else None
        if location is not None and shifted is None and within is None:
            on, polished = self._polished(image, grid_corners, on, refiner_turn, judged, timings)
            if polished is not None:
                notes.append(f"the grid found was moved to where its cells read surer ({polished[0]:.2f} -> {polished[1]:.2f} on average)")
        moved_by = None
        if shifted is not None:  # the grid found may have taken in a line beside the window: read it one line over
            over = self._read_on(image, moved_grid(on.grid_corners, shifted, on.turned), refiner_turn, judged, timings)
            if (
                over.decoded.pattern is not None
                and unread_edge(over.cells) is None
                and _mean_confidence(over.cells) > _mean_confidence(on.cells)
            ):
                on, moved_by, shifted = over, shifted, None
        quarter_off = False
        if location is not None and within is None and on.decoded.pattern is None:  # nothing checks the grid: a quarter turn off?
            again = self._quarter_turned(image, on, judged, timings)
            if again is not None:
                on, quarter_off, shifted, moved_by = again, True, None, None
        grid_corners, states, turned, sure, decoded, overrides = on.grid_corners, on.states, on.turned, on.sure, on.decoded, on.overrides
        if quarter_off:
            notes.append("the grid found lay a quarter turn off the window: read turned, where a pattern card is recognised")
        elif turned:
            notes.append("orientation chosen by the pattern cards (board turned 180 degrees)")
        if moved_by is not None:
            line = moved_by.split()[-1]  # row or column
            notes.append(f"the grid found took in a {line} beside the window as its {moved_by}: read one {line} over")
        cells = beyond_the_edge(on.cells, off_photo_shares(grid_corners, (image.shape[1], image.shape[0])))
        if shifted is not None:  # the grid the scanner found may sit a line off: no cell is sure
            cells = no_surer_than(cells, SHIFTED_SURE)
            notes.append(f"the grid's {shifted} reads as neither dice nor prints")
        likeness = 1.0
        if location is not None and decoded.pattern is None:
            # on the model's own reading of each cell: the rules make any grid look like a window
            own = [replace(cell, confidence=value_probabilities(states[i]).get(cell.value, 0.0)) for i, cell in enumerate(cells)]
            likeness = refuse_unlike_window(own, photo.name)
        if decoded.pattern is None:
            notes.append(f"pattern card not identified (best {decoded.pattern_probability:.2f})")
            if location is not None:  # nothing checked the grid found: no cell reads surer than NO_CARD_SURE
                cells = no_surer_than(cells, NO_CARD_SURE)
        grid = _given_certainty(sure, quarter) if location is None else _certainty(location, turned, sure, fit, likeness)
        if grid is not None and shifted is not None:
            grid = shifted_certainty(grid, shifted)
        if grid is not None and moved_by is not None:
            grid = moved_certainty(grid, moved_by)
        if grid is not None and quarter_off:
            grid = turned_certainty(grid)
        if grid is not None and within is not None:
            grid = within_certainty(grid, within)
        model = f"{self.dice.manifest.label}; {self.refiner.manifest.label}"
        if corners is None:
            model += f"; {self.locator.manifest.label}; {self.finder.manifest.label}"
        return BoardReading(
            state=window_state(decoded, Path(photo.name).stem),
            board_keys=BOARD_KEYS,
            corners=grid_corners,
            cells=tuple(cells),
            overrides=tuple(overrides),
            model=model,
            notes=tuple(notes),
            verdict=VERDICT,
            grid=grid,
        )

    def _locate(
        self, photo: Photo, corners: np.ndarray | None, notes: list[str], judged: dict[bytes, tuple[np.ndarray, CellsRead]]
    ) -> tuple[np.ndarray, BoardLocation | None, WindowFit | None, tuple[float, float], float]:
        """The grid's corners (TL, TR, BR, BL), found (with its ``BoardLocation`` and lattice fit) or the given ones oriented (None).

        Then the refiner's probabilities of the top-left returned and of its half turn, and for given
        corners the probability that the sides taken for the width are (1.0 for a grid found).

        Raises:
            BoardNotFoundError: no window (or two) found.
        """
        image = photo.image_rgb
        if corners is None:
            try:
                found = board_finder.find_grid_by_content(
                    image,
                    self.locator,
                    self.refiner,
                    name=photo.name,
                    finder=self.finder,
                    judge=lambda quad: self._cell_certainty(image, quad, judged),
                )
            except WindowCutOff:
                raise  # ``read`` looks for the window inside the photo first
            except BoardNotFoundError as error:
                raise BoardNotFoundError(_with_photo_quality(str(error), image), remedy=error.remedy) from None
            location = found.location
            if location.orientation_confidence < 0.9:
                notes.append(f"orientation uncertain ({location.orientation_confidence:.2f})")
            return location.corners, location, found.fit, (location.orientation_confidence, location.flipped_probability), 1.0
        # given corners, in any order: the cells and the lines between them say which sides are the width,
        # the refiner and then the pattern cards which way up
        grid_corners, sure, flip, quarter = board_finder.orient_corners(
            image,
            np.asarray(corners, np.float64).reshape(4, 2),
            self.refiner,
            lambda quad: self._cell_certainty(image, quad, judged),
        )
        if sure < 0.9:
            notes.append(f"orientation of the given corners uncertain ({sure:.2f})")
        if quarter < 0.9:
            notes.append(f"which sides of the given corners are the width uncertain ({quarter:.2f})")
        return grid_corners, None, None, (sure, flip), quarter


def _given_certainty(sure: float, quarter: float) -> GridCertainty | None:
    """For given corners: no doubt about the grid itself, only about its orientation: which side is up (the cards and
    the refiner, at ``sure``) and which sides are the width (the cells and their lines, at ``quarter``)."""
    return (
        None
        if sure >= ORIENTATION_SURE and quarter >= ORIENTATION_SURE
        else GridCertainty((1.0, 1.0, 1.0, 1.0), orientation_confidence=sure, flipped_probability=1.0 - sure, width_confidence=quarter)
    )


def _certainty(location: BoardLocation, turned: bool, sure: float, fit: WindowFit | None = None, likeness: float = 1.0) -> GridCertainty:
    """How sure the grid found is, in the orientation read (``turned``: the half turn of the refiner's, at ``sure``), how well it
    fits the cells, and how surely the cells read as dice (``likeness``, ``refuse_unlike_window``)."""
    peaks = location.corner_peaks[2:] + location.corner_peaks[:2] if turned else location.corner_peaks
    chosen, other = sure, 1.0 - sure
    unlike = (
        f"the cells do not read clearly as a Sagrada window's (no pattern card recognised, dice read at {percent(likeness)} on average): "
        "is this a Sagrada window?"
    )
    if fit is None:
        return GridCertainty(
            (peaks[0], peaks[1], peaks[2], peaks[3]),
            orientation_confidence=chosen,
            flipped_probability=other,
            likeness=likeness,
            likeness_words=unlike,
        )
    words = f"{fit.seen} of {ROWS * COLS} cells seen"
    if fit.strays + fit.outside:
        words += f", {fit.strays + fit.outside} cell-like spot(s) off the grid"
    if fit.residual > 0.1:
        words += f", centres {fit.residual:.2f} cell off the lattice"
    return GridCertainty(
        (peaks[0], peaks[1], peaks[2], peaks[3]),
        orientation_confidence=chosen,
        flipped_probability=other,
        fit=min(1.0, fit.confidence),
        fit_words=words,
        likeness=likeness,
        likeness_words=unlike,
    )


def cell_readings(
    decoded: Decoded, states: np.ndarray, crops: np.ndarray, grid_corners: np.ndarray, upright: float = 1.0
) -> tuple[list[CellReading], list[Override]]:
    """One reading per cell (row-major, outline in photo px) and an override where the rules changed the model's choice.

    ``upright`` is the probability that the board is read the right way up. A cell's confidence is
    its value's probability over both ways (``orientation_weighed``): on a board that may be upside
    down, no cell is surer than the orientation unless the cell opposite reads the same.
    """
    cells, overrides = [], []
    to_photo = cell_outline_homography(grid_corners)
    read = [value_probabilities(cell_states) for cell_states in states]
    for index in range(ROWS * COLS):
        r, c = divmod(index, COLS)
        values = read[index]
        model_value = max(values, key=lambda value: values[value])
        chosen = cell_text(decoded.states[index])
        sure = values.get(chosen, 0.0)
        if decoded.joint is not None:
            joint = value_probabilities(decoded.joint[index]).get(chosen, 0.0)
            sure = sure ** (1 - JOINT_WEIGHT) * joint**JOINT_WEIGHT
        sure = orientation_weighed(sure, read[-1 - index].get(chosen, 0.0), upright)
        x0, y0 = MARGIN_PX + c * PITCH_PX, MARGIN_PX + r * PITCH_PX
        square = cell_square(x0 + PITCH_PX / 2, y0 + PITCH_PX / 2, PITCH_PX / 2)
        polygon = tuple((float(x), float(y)) for x, y in project(square, to_photo).round(1))
        alternatives = tuple((v, round(p, 4)) for v, p in sorted(values.items(), key=lambda kv: -kv[1]) if v != chosen)[:3]
        cells.append(
            CellReading(
                cell=(r, c),
                value=chosen,
                confidence=float(min(1.0, sure)),
                polygon=polygon,
                alternatives=alternatives,
                crop=crops[index],
            )
        )
        if chosen != model_value:
            overrides.append(
                Override(
                    cell=(r, c),
                    model_value=model_value,
                    model_confidence=values[model_value],
                    chosen_value=chosen,
                    chosen_confidence=float(min(1.0, sure)),
                    reason=_reason(decoded, index),
                )
            )
    return cells, overrides


EDGE_LINES: dict[str, tuple[int | slice, int | slice]] = {
    "top row": (0, slice(None)),
    "bottom row": (-1, slice(None)),
    "left column": (slice(None), 0),
    "right column": (slice(None), -1),
}


def unread_edge(cells: Sequence[CellReading]) -> str | None:
    """The first edge line of the window (``EDGE_LINES``, as read) none of whose cells (row-major) reads at ``EDGE_UNREAD`` or more, or None.

    >>> from scanner.reading import CellReading
    >>> sure = [CellReading(divmod(i, COLS), "R1", 0.99, np.zeros((4, 2))) for i in range(ROWS * COLS)]
    >>> unread_edge(sure) is None
    True
    >>> unread_edge([replace(c, confidence=0.3) if c.cell[1] == COLS - 1 else c for c in sure])
    'right column'
    """
    confidences = np.array([cell.confidence for cell in cells]).reshape(ROWS, COLS)
    return next((name for name, line in EDGE_LINES.items() if (confidences[line] < EDGE_UNREAD).all()), None)


# One grid line's step in grid units (columns, rows) away from each edge line, toward the window's other side.
EDGE_STEPS = {"top row": (0, 1), "bottom row": (0, -1), "left column": (1, 0), "right column": (-1, 0)}


def moved_grid(grid_corners: np.ndarray, line: str, turned: bool) -> np.ndarray:
    """The grid ``grid_corners`` (TL, TR, BR, BL as read) moved one cell away from its edge ``line`` (``unread_edge``):
    where the window lies if that line is the frame, the glass strip or the table beside it. Returned as found
    (turned back when the cards turned the reading), for ``SagradaReader._read_on`` to read again.

    >>> square = np.array([[0, 0], [50, 0], [50, 40], [0, 40]], float)
    >>> moved_grid(square, "right column", False).round(6).tolist()
    [[-10.0, 0.0], [40.0, 0.0], [40.0, 40.0], [-10.0, 40.0]]
    """
    dx, dy = EDGE_STEPS[line]
    unit = np.array([[dx, dy], [COLS + dx, dy], [COLS + dx, ROWS + dy], [dx, ROWS + dy]], np.float64)
    moved = project(unit, grid_homography(grid_corners))
    return np.roll(moved, 2, axis=0) if turned else moved


def quarter_turned_grids(grid_corners: np.ndarray) -> list[np.ndarray]:
    """The four grids (TL, TR, BR, BL) a quarter turn from ``grid_corners`` on its lattice: each a block 4 of its
    columns wide and 5 of its rows high sharing 16 cells with it, its top the block's side along the grid's left.

    >>> square = np.array([[0, 0], [50, 0], [50, 40], [0, 40]], float)  # a pitch of 10 px
    >>> [quad.round(6).tolist() for quad in quarter_turned_grids(square)][0]
    [[0.0, 40.0], [0.0, -10.0], [40.0, -10.0], [40.0, 40.0]]
    >>> len(quarter_turned_grids(square))
    4
    """
    to_photo = grid_homography(grid_corners)
    quads = []
    for dx, dy in itertools.product((0, 1), (-1, 0)):
        turned = np.array([[dx, dy + COLS], [dx, dy], [dx + ROWS, dy], [dx + ROWS, dy + COLS]], np.float64)
        quads.append(project(turned, to_photo))
    return quads


def turned_certainty(grid: GridCertainty) -> GridCertainty:
    """``grid`` doubted for its place: the lattice's grid lay a quarter turn off, read where a pattern card is recognised."""
    return place_doubted(
        grid, "the grid found lay a quarter turn off the window and was read turned, where a pattern card is recognised: check its corners"
    )


def polish_grid(
    grid_corners: np.ndarray,
    certainties: Callable[[list[np.ndarray]], np.ndarray],
    steps: Sequence[float] = POLISH_STEPS,
    rounds: int = POLISH_ROUNDS,
    gain: float = POLISH_MOVE_GAIN,
) -> np.ndarray:
    """The grid ``grid_corners`` (TL, TR, BR, BL) moved while its cells read surer: for each step (in pitches), up
    to ``rounds`` times the move among ``polish_moves`` whose cells read surest on average, while it beats the
    grid's by ``gain``. ``certainties`` reads a list of grids at once: (grids, 20) certainties, a cell a row.

    Each round reads the grid moved a step each way (the first four moves); from those, each cell's certainty as
    it moves a little (``predicted_certainties``) foretells the other moves, and only the ``POLISH_FORETOLD``
    foretold surest are read. The move read surest is made where it beats the grid by ``gain``.

    >>> target = np.array([[10, 0], [60, 0], [60, 40], [10, 40]], float)
    >>> found = target + [[3, 2], [3, 2], [3, 2], [3, 2]]
    >>> closeness = lambda quads: np.array([[-float(np.abs(quad - target).sum())] * 20 for quad in quads])
    >>> polish_grid(found, closeness).round(6).tolist()  # within an eighth of a pitch (10 px) of where it reads best
    [[10.5, -0.5], [60.5, -0.5], [60.5, 39.5], [10.5, 39.5]]
    """
    best = np.asarray(grid_corners, np.float64).reshape(4, 2)
    (cells,) = np.asarray(certainties([best]), np.float64)
    for step in steps:
        for _ in range(rounds):
            moves = polish_moves(best, step)
            shifted = np.asarray(certainties(moves[:SHIFT_MOVES]), np.float64)
            foretold = predicted_certainties(cells, shifted, step)[SHIFT_MOVES:]
            surest = [SHIFT_MOVES + int(at) for at in np.argsort(-foretold, kind="stable")[:POLISH_FORETOLD]]
            tried = [*range(SHIFT_MOVES), *surest]  # the moves read, in the order of ``read``'s rows
            read = np.concatenate([shifted, np.asarray(certainties([moves[at] for at in surest]), np.float64)])
            top = int(np.argmax(read.mean(axis=1)))
            if read[top].mean() < cells.mean() + gain:
                break
            best, cells = moves[tried[top]], read[top]
    return best


SHIFT_MOVES = 4  # the first moves of ``polish_moves``: the whole grid a step right, left, down and up


def _unit_moves(step: float) -> list[np.ndarray]:
    """The moves of ``polish_moves`` as grids in grid units (the window from (0, 0) to (COLS, ROWS))."""
    unit = np.array([[0, 0], [COLS, 0], [COLS, ROWS], [0, ROWS]], np.float64)
    shifts = step * np.array([[1, 0], [-1, 0], [0, 1], [0, -1]], np.float64)
    middle = unit.mean(axis=0)
    grids = [unit + shift for shift in shifts]
    grids += [middle + (unit - middle) * (1 + sign * step / 5) for sign in (1, -1)]
    for corner in range(4):
        for shift in shifts:
            moved = unit.copy()
            moved[corner] += shift
            grids.append(moved)
    return grids


@functools.cache
def move_displacements(step: float) -> np.ndarray:
    """How far each move of ``polish_moves`` carries each cell's middle, in pitches: (moves, 20, 2)."""
    displacements = np.array([project(CELL_MIDDLES, grid_homography(grid)) - CELL_MIDDLES for grid in _unit_moves(step)])
    displacements.flags.writeable = False  # shared by every caller (cached)
    return displacements


def predicted_certainties(cells: np.ndarray, shifted: np.ndarray, step: float) -> np.ndarray:
    """Each move of ``polish_moves``'s mean certainty, foretold from the cells' certainties where they are (``cells``,
    20) and with the grid moved a step right, left, down and up (``shifted``, 4 x 20): along each axis a parabola
    through the three, the two axes added (a corner moved shifts the cells near it along one axis, each by its own
    share of the step).

    >>> flat = np.full(20, 0.8)
    >>> shifted = np.stack([flat + 0.1, flat - 0.1, flat, flat])  # surer to the right, less to the left
    >>> foretold = predicted_certainties(flat, shifted, 0.25)
    >>> [round(float(v), 3) for v in foretold[:6]]  # the shifts as read; scaling about the middle moves as much right as left
    [0.9, 0.7, 0.8, 0.8, 0.8, 0.8]
    """
    dx, dy = np.moveaxis(move_displacements(step), -1, 0) / step
    right, left, down, up = shifted
    slope_x, bend_x = (right - left) / 2, (right + left) / 2 - cells
    slope_y, bend_y = (down - up) / 2, (down + up) / 2 - cells
    foretold = cells + slope_x * dx + bend_x * dx**2 + slope_y * dy + bend_y * dy**2
    return foretold.mean(axis=1)


def polish_moves(grid_corners: np.ndarray, step: float) -> list[np.ndarray]:
    """The grids ``polish_grid`` tries from ``grid_corners``: moved ``step`` pitches right, left, down and up, scaled
    about its middle by a fifth of that (larger, smaller), and each corner alone moved ``step`` each way (22).

    >>> square = np.array([[0, 0], [50, 0], [50, 40], [0, 40]], float)
    >>> moves = polish_moves(square, 0.5)
    >>> len(moves), moves[0].round(6).tolist(), moves[6][0].round(6).tolist()
    (22, [[5.0, 0.0], [55.0, 0.0], [55.0, 40.0], [5.0, 40.0]], [5.0, 0.0])
    """
    to_photo = grid_homography(grid_corners)
    return [project(grid, to_photo) for grid in _unit_moves(step)]


def no_surer_than_found(cells: Sequence[CellReading], found: Sequence[CellReading]) -> list[CellReading]:
    """``cells`` read on a polished grid (``polish_grid``), each no surer than it read on the grid found (``found``),
    or than ``POLISHED_SURE`` where that was less or another reading: the grid was moved by how surely its dice
    read, so it does not vouch for a reading that moved with it."""
    before = {cell.cell: cell for cell in found}

    def capped(cell: CellReading) -> CellReading:
        old = before.get(cell.cell)
        kept = old.confidence if old is not None and old.value == cell.value else 0.0
        return replace(cell, confidence=min(cell.confidence, max(kept, POLISHED_SURE)))

    return [capped(cell) for cell in cells]


def place_doubted(grid: GridCertainty, words: str) -> GridCertainty:
    """``grid`` doubted for its place (its fit at MOVED_FIT at most), ``words`` saying why first: players check its corners."""
    return replace(grid, fit=min(grid.fit, MOVED_FIT), fit_words=f"{words}; {grid.fit_words}" if grid.fit_words else words)


def moved_certainty(grid: GridCertainty, line: str) -> GridCertainty:
    """``grid`` doubted for its place: the grid found took in the line beside the window as its edge ``line`` and was
    read one line over, where every line reads (``moved_grid``); players check its corners."""
    line_name = line.split()[-1]
    return place_doubted(
        grid, f"the grid found took in what lies beside the window as its {line} and was read one {line_name} over: check its corners"
    )


def within_certainty(grid: GridCertainty, how: str) -> GridCertainty:
    """``grid`` doubted for its place: the grid found ran off the photo's edge, and the window was read inside the photo
    on a grid ``how`` (turned a quarter, or moved to where its cells read surer), where a pattern card is recognised."""
    return place_doubted(
        grid, f"the grid found ran off the photo's edge and was {how} inside it, where a pattern card is recognised: check its corners"
    )


def no_surer_than(cells: Sequence[CellReading], bar: float) -> list[CellReading]:
    """``cells`` each read no surer than ``bar`` (a doubt about the whole grid, not about one cell)."""
    return [replace(cell, confidence=min(cell.confidence, bar)) for cell in cells]


def _values(cells: Sequence[CellReading]) -> dict[tuple[int, int], str]:
    return {cell.cell: cell.value for cell in cells}


def _mean_confidence(cells: Sequence[CellReading]) -> float:
    return float(np.mean([cell.confidence for cell in cells]))


def shifted_certainty(grid: GridCertainty, line: str) -> GridCertainty:
    """``grid`` doubted as a whole: its edge ``line`` (``unread_edge``) reads as neither dice nor prints, so it fits not at all."""
    off = f"its {line} reads as neither dice nor prints: it may sit a {line.split()[-1]} off"
    return replace(grid, fit=0.0, fit_words=f"{off}; {grid.fit_words}" if grid.fit_words else off)


def beyond_the_edge(cells: Sequence[CellReading], shares: np.ndarray) -> list[CellReading]:
    """``cells`` (row-major) with those more than ``OFF_PHOTO`` beyond the photo's edge (``shares``) doubted.

    Such a cell reads no surer than ``OFF_PHOTO_SURE``, and its review says why: what shows of a
    die cut by the edge is not the die (a 6 cut to one column of pips reads as a sure 1).
    """
    return [
        replace(cell, confidence=min(cell.confidence, OFF_PHOTO_SURE), doubt="runs off the photo's edge") if share > OFF_PHOTO else cell
        for cell, share in zip(cells, shares)
    ]


def looks_split(cells: Sequence[CellReading], split: Sequence[str]) -> list[CellReading]:
    """``cells`` (row-major) with those whose looks disagree (``CellsRead.split``) no surer than ``SPLIT_LOOKS_SURE``,
    their review naming the value another look read; a cell the rules read as that other value is left as it is."""
    return [
        replace(
            cell, confidence=min(cell.confidence, SPLIT_LOOKS_SURE), doubt=cell.doubt or f"reads {other} when looked at turned or closer"
        )
        if other and other != cell.value
        else cell
        for cell, other in zip(cells, split)
    ]


def orientation_weighed(sure: float, turned: float, upright: float) -> float:
    """A cell's probability of its value over the board's two ways up.

    ``sure``: the value's probability as read the way chosen; ``turned``: the model's probability of
    the same value for the cell that stands here if the board is turned round (the cell opposite:
    a die reads the same half turned); ``upright``: the probability of the way chosen.

    >>> round(orientation_weighed(0.99, 0.0, 0.6), 3), round(orientation_weighed(0.99, 0.99, 0.6), 3)
    (0.594, 0.99)
    """
    return upright * sure + (1.0 - upright) * turned


def cell_outline_homography(grid_corners: np.ndarray) -> np.ndarray:
    """Homography from the rectified grid's pixels (with its margin) to the photo, on the board's plane."""
    m = MARGIN_PX
    w, h = COLS * PITCH_PX, ROWS * PITCH_PX
    target = np.array([[m, m], [m + w, m], [m + w, m + h], [m, m + h]], np.float32)
    return cv2.getPerspectiveTransform(target, np.asarray(grid_corners, np.float32).reshape(4, 2)).astype(np.float64)


def _reason(decoded: Decoded, index: int) -> str:
    r, c = divmod(index, COLS)
    if decoded.pattern:
        mark = PATTERNS[decoded.pattern].grid[r][c]
        if mark != ".":
            return f"neighbour rule and the {decoded.pattern} card's print '{mark}' here"
    return "two orthogonal neighbours never share a colour or a value"


COLOURLESS_CHROMA = 24  # the 99.5th percentile of max - min over a photo's pixels: dice are far above it, a grayscale photo 0-3


def photo_chroma(image_rgb: np.ndarray) -> float:
    """How colourful a photo is: the 99.5th percentile of each pixel's max - min channel (0 for a grayscale photo)."""
    step = max(1, int(max(image_rgb.shape[:2]) // 400))
    small = image_rgb[::step, ::step].astype(np.int16)
    return float(np.percentile(small.max(axis=2) - small.min(axis=2), 99.5))


def refuse_unlike_window(cells: Sequence[CellReading], name: str) -> float:
    """Refuse a grid found in the photo whose cells do not read as a window's (no pattern card was recognised).

    ``cells`` carry the model's own confidence in each reading, not the one given the rules. Returns
    the mean confidence of the cells read as dice (1.0 when none is): ``GridCertainty.likeness``.

    Raises:
        BoardNotFoundError: the cells read at a mean confidence under ``MIN_MEAN_CONFIDENCE``, or
            those read as dice under ``MIN_DICE_CONFIDENCE`` (another game's board: sure "empty"
            cells between doubtful dice).
    """
    confidences = [cell.confidence for cell in cells]
    dice = [cell.confidence for cell in cells if cell.value != "."]
    seen = f"mean confidence {np.mean(confidences):.2f}"
    if dice:
        seen += f", {np.mean(dice):.2f} for the {len(dice)} read as dice"
    if np.mean(confidences) < MIN_MEAN_CONFIDENCE or (dice and np.mean(dice) < MIN_DICE_CONFIDENCE):
        raise BoardNotFoundError(
            f"{name}: no Sagrada window found (a window-like area was seen, but its cells do not read as dice "
            f"or pattern prints: {seen}); {board_finder.RETRY_HINT}",
            remedy=Remedy.SET_CORNERS,
        )
    return float(np.mean(dice)) if dice else 1.0


def refuse_colourless(image_rgb: np.ndarray, name: str) -> None:
    """Refuse a photo without colour: the dice are told apart by their colours.

    Raises:
        BoardNotFoundError: the photo is grayscale (or nearly).
    """
    chroma = photo_chroma(image_rgb)
    if chroma < COLOURLESS_CHROMA:
        raise BoardNotFoundError(
            f"{name}: the photo has no colour (a grayscale photo: colour spread {chroma:.0f}/255); "
            "a Sagrada window is read by its dice colours: retake the photo in colour"
        )


def _with_photo_quality(message: str, image: np.ndarray) -> str:
    """Add what the photo's exposure and sharpness say to a board-not-found message."""
    grey = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)
    small = cv2.resize(grey, (max(1, grey.shape[1] // 2), max(1, grey.shape[0] // 2)), interpolation=cv2.INTER_AREA)
    brightness = float(small.mean())
    sharpness = float(cv2.Laplacian(small, cv2.CV_64F).var())
    if brightness < 40:
        return f"{message} (the photo is very dark: mean brightness {brightness:.0f}/255; add light)"
    if sharpness < 15:
        return f"{message} (the photo looks blurred: sharpness {sharpness:.0f}; hold steady and focus on the board)"
    chroma = photo_chroma(image)
    if chroma < COLOURLESS_CHROMA:
        return f"{message} (the photo has no colour: colour spread {chroma:.0f}/255; retake it in colour)"
    return message


def make_reader() -> SagradaReader:
    """Return the Sagrada board reader the scanner pipeline uses.

    Raises:
        ModelError: a shipped model file is missing or corrupt.
    """
    return SagradaReader()
