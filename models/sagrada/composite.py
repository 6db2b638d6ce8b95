"""Real dice pasted into rendered windows ("cut, paste and learn"): whole photos read end to end.

The real dice come from ``../shared/realdata`` (never committed):

- ``sagrada-hejmsdz``: two real windows already cut to the grid (160x128, one 32 px cell per die),
  39 labelled dice;
- ``dice-nellbyler-d6``: boxed loose dice with their pip values; their colours come from
  ``models/sagrada/real_dice_colours.json`` (labelled by hand; only dice labelled with one of the
  five Sagrada colours are used). Only the odd-numbered photos (fold 1, never used to fine-tune) are
  taken unless asked.

Each die is cut from its cell or box (the pixels that differ from the surrounding background, a
soft mask around them), then turned, scaled and relit as it is pasted on a cell of a rendered
window. The window's document is a legal one from ``render.game_document`` (adjacent dice never
share a colour or a value; the pattern card's prints are obeyed) whose every die has a real die of
the same colour and value in the pool; the drawn dice are replaced by real ones. The window is then
photographed on a table by the scene camera (tilt up to 40 degrees, any rotation).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from PIL import Image

from models import scene
from models.sagrada import styles
from models.sagrada.render import (
    COLS,
    DIE_MM,
    PITCH_MM,
    ROWS,
    Sample,
    _palette,
    die_face,
    framed,
    game_document,
    random_empty_count,
    render,
)

REALDATA = Path(__file__).resolve().parents[3] / "shared" / "realdata"
COLOURS_FILE = Path(__file__).resolve().parent / "real_dice_colours.json"
SAGRADA_COLOURS = ("R", "Y", "G", "B", "P")
BOX_SLACK = 0.04  # a labelled box's edge may miss its die by this share of its side (cut_die)
COMPOSITE_SEED = 9_100_000  # composites' seeds: disjoint from make_dataset's TRAIN/VAL/TEST ranges
BOX_PER_DIE = 1.5  # make_dataset.REAL_BOX_PER_DIE: a nellbyler box is about 1.5 dice wide


@dataclass(frozen=True)
class RealDie:
    """One real die cut from a photo: its top face (RGB), a soft alpha mask, colour, value and source."""

    face_rgb: np.ndarray
    mask: np.ndarray
    colour: str
    value: int
    source: str


def cut_die(region_rgb: np.ndarray, inside: tuple[float, float, float, float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Cut the die out of ``region_rgb`` (a cell or box around one die): a square patch and its soft mask.

    The die is the largest blob of pixels unlike the region's border (the table or the card's gap).
    With ``inside`` (x0, y0, x1, y1: the die's own labelled box within the region, give or take
    ``BOX_SLACK``) only what lies in that box counts: on a crowded tray the neighbouring dice
    touching it would otherwise join its blob.
    """
    region = region_rgb.astype(np.float32)
    h, w = region.shape[:2]
    border = np.concatenate([region[0], region[-1], region[:, 0], region[:, -1]])
    background = np.median(border, axis=0)
    distance = np.linalg.norm(cv2.GaussianBlur(region, (0, 0), 1.0) - background, axis=2)
    level, _ = cv2.threshold(np.clip(distance, 0, 255).astype(np.uint8), 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    # the body, not only its bright pips: a dark die on a dark gap is far less unlike it than its pips are
    blob = (distance > max(25.0, min(float(level), 0.35 * float(np.percentile(distance, 95))))).astype(np.uint8)
    if inside is not None:
        left, top, right, bottom = inside
        slack = BOX_SLACK * max(right - left, bottom - top)
        keep = np.zeros_like(blob)
        keep[int(max(0, top - slack)) : int(min(h, bottom + slack + 1)), int(max(0, left - slack)) : int(min(w, right + slack + 1))] = 1
        blob *= keep
    count, labels, stats, _ = cv2.connectedComponentsWithStats(blob)
    if count < 2:
        side = min(h, w)
        return np.ascontiguousarray(region_rgb[:side, :side]), np.full((side, side), 255, np.uint8)
    biggest = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    points = np.column_stack(np.nonzero(labels == biggest))[:, ::-1].astype(np.int32)
    hull = cv2.convexHull(points)
    mask = np.zeros((h, w), np.uint8)
    cv2.fillConvexPoly(mask, hull, 255, cv2.LINE_AA)
    x, y, bw, bh = cv2.boundingRect(hull)
    side = max(bw, bh)
    cx, cy = x + bw / 2, y + bh / 2
    x0, y0 = int(round(cx - side / 2)), int(round(cy - side / 2))
    pad = max(0, -x0, -y0, x0 + side - w, y0 + side - h)
    padded = cv2.copyMakeBorder(region_rgb, pad, pad, pad, pad, cv2.BORDER_REPLICATE)
    padded_mask = cv2.copyMakeBorder(mask, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=0)
    patch = padded[y0 + pad : y0 + pad + side, x0 + pad : x0 + pad + side]
    soft = cv2.GaussianBlur(padded_mask[y0 + pad : y0 + pad + side, x0 + pad : x0 + pad + side], (0, 0), max(0.6, side * 0.02))
    return np.ascontiguousarray(patch), soft


def hejmsdz_dice(folder: Path = REALDATA / "sagrada-hejmsdz") -> list[RealDie]:
    """The 39 labelled dice of the two real windows (each 32 px cell of the 160x128 crops), or [] when absent."""
    dice = []
    for name, grid, rows in real_windows(folder):
        ch, cw = grid.shape[0] / 4, grid.shape[1] / 5
        for r, row in enumerate(rows):
            for c, value in enumerate(row.split()):
                if value[0] not in SAGRADA_COLOURS:
                    continue
                cell = grid[int(r * ch) : int((r + 1) * ch), int(c * cw) : int((c + 1) * cw)]
                face, mask = cut_die(cell)
                dice.append(RealDie(face, mask, value[0], int(value[1]), f"hejmsdz/{name}/r{r}c{c}"))
    return dice


def _colour_labels(path: Path) -> dict[tuple[str, int], str]:
    """(photo file, die index in annotations.json) -> colour letter, from the hand-labelled colours file.

    Accepts ``{"dice": [{"file": ..., "index": ..., "colour": ...}]}`` or ``{"images": {file: [colour, ...]}}``;
    a colour may be a letter or a name, anything else (white, black, other) is not a Sagrada colour.
    """
    if not path.is_file():
        return {}
    doc = json.loads(path.read_text())
    names = {"red": "R", "yellow": "Y", "green": "G", "blue": "B", "purple": "P"}
    found: dict[tuple[str, int], str] = {}

    def letter(value: Any) -> str | None:
        text = str(value or "")
        code = names.get(text.lower(), text.upper())
        return code if code in SAGRADA_COLOURS else None

    if isinstance(doc.get("dice"), list):
        for item in doc["dice"]:
            code = letter(item.get("colour", item.get("color")))
            if code:
                found[(str(item["file"]), int(item["index"]))] = code
    elif isinstance(doc.get("images"), dict):
        for file, colours in doc["images"].items():
            for index, value in enumerate(colours):
                code = letter(value.get("colour", value.get("color")) if isinstance(value, dict) else value)
                if code:
                    found[(str(file), index)] = code
    return found


@cache
def value_corrections(path: Path = COLOURS_FILE) -> dict[tuple[str, int], int]:
    """(photo file, box index) -> pip value, where the photos' own annotations got a value wrong (the labels file's ``values``)."""
    if not path.is_file():
        return {}
    values = json.loads(path.read_text()).get("values", {})
    return {(str(file), int(index)): int(value) for file, boxes in values.items() for index, value in boxes.items()}


def nellbyler_dice(
    folder: Path = REALDATA / "dice-nellbyler-d6", colours: Path = COLOURS_FILE, folds: tuple[int, ...] = (1,)
) -> list[RealDie]:
    """The boxed loose dice with a Sagrada colour label, from the photos of ``folds`` (1: odd, held out), or []."""
    labels = _colour_labels(colours)
    if not labels or not (folder / "annotations.json").is_file():
        return []
    images = sorted(json.loads((folder / "annotations.json").read_text())["images"], key=lambda item: item["file"])
    dice = []
    for number, item in enumerate(images):
        if number % 2 not in folds or not any((item["file"], k) in labels for k in range(len(item["dice"]))):
            continue
        image = np.asarray(Image.open(folder / "images" / item["file"]).convert("RGB"))
        h, w = image.shape[:2]
        for k, die in enumerate(item["dice"]):
            colour = labels.get((item["file"], k))
            if colour is None:
                continue
            x0, y0, x1, y1 = die["xmin"] * w, die["ymin"] * h, die["xmax"] * w, die["ymax"] * h
            pad = 0.15 * max(x1 - x0, y1 - y0)  # some table around the box, for the background
            left, top = int(max(0, x0 - pad)), int(max(0, y0 - pad))
            box = image[top : int(min(h, y1 + pad)), left : int(min(w, x1 + pad))]
            if min(box.shape[:2]) < 8:
                continue
            face, mask = cut_die(box, inside=(x0 - left, y0 - top, x1 - left, y1 - top))
            value = value_corrections().get((item["file"], k), int(die["value"]))
            dice.append(RealDie(face, mask, colour, value, f"nellbyler/{item['file']}/{k}"))
    return dice


@dataclass
class DicePool:
    """Real dice by (colour, value); ``face`` is a ``render.FaceSource`` drawing from them.

    With ``drawn_fallback`` a die the pool lacks is drawn as the renderer draws it (``render.die_face``),
    so any window can be shown with as many real dice as the pool allows (for training scenes).
    """

    dice: list[RealDie]
    drawn_fallback: bool = False
    by_kind: dict[tuple[str, int], list[RealDie]] = field(init=False)

    def __post_init__(self) -> None:
        self.by_kind = defaultdict(list)
        for die in self.dice:
            self.by_kind[(die.colour, die.value)].append(die)

    def has(self, colour: str, value: int) -> bool:
        """Whether the pool holds a real die of this colour and value."""
        return bool(self.by_kind.get((colour, value)))

    def face(self, colour: str, value: int, rng: np.random.Generator, size_px: int) -> tuple[np.ndarray, np.ndarray]:
        """A real die of ``colour`` and ``value`` (``pick``), turned, maybe mirrored, scaled to ``size_px`` and relit.

        Raises:
            KeyError: the pool has no such die.
        """
        if not self.by_kind.get((colour, value)) and self.drawn_fallback:
            return die_face(colour, value, rng, size_px / DIE_MM, _palette(rng))
        return self.face_of(self.pick(colour, value, rng), rng, size_px)

    def pick(self, colour: str, value: int, rng: np.random.Generator) -> RealDie:
        """One of the pool's real dice of ``colour`` and ``value``, drawn at random.

        Raises:
            KeyError: the pool has no such die.
        """
        options = self.by_kind.get((colour, value))
        if not options:
            raise KeyError(f"no real {colour}{value} die in the pool")
        return options[int(rng.integers(len(options)))]

    @staticmethod
    def face_of(die: RealDie, rng: np.random.Generator, size_px: int) -> tuple[np.ndarray, np.ndarray]:
        """``die``'s top face and mask, turned, maybe mirrored, scaled to ``size_px`` and relit."""
        turns = int(rng.integers(4))
        face, mask = np.rot90(die.face_rgb, turns), np.rot90(die.mask, turns)
        if rng.random() < 0.5:
            face, mask = face[:, ::-1], mask[:, ::-1]
        scale = size_px * rng.uniform(0.95, 1.08)
        side = max(4, int(round(scale)))
        face = cv2.resize(np.ascontiguousarray(face), (side, side), interpolation=cv2.INTER_CUBIC).astype(np.float32)
        mask = cv2.resize(np.ascontiguousarray(mask), (side, side), interpolation=cv2.INTER_LINEAR)
        gain = rng.uniform(0.75, 1.2) * rng.uniform(0.93, 1.07, 3)
        gamma = rng.uniform(0.85, 1.2)
        face = 255 * (np.clip(face * gain, 0, 255) / 255) ** gamma
        return np.clip(face, 0, 255).astype(np.uint8), mask


def load_pool(folds: tuple[int, ...] = (1,), windows: bool = True, drawn_fallback: bool = False) -> DicePool:
    """The usable real dice: the hejmsdz dice (``windows``), and the labelled nellbyler dice of ``folds``.

    The benchmark's pool (the default) holds only dice never trained on: both real windows and fold 1.
    A training pool takes ``folds=(0,), windows=False`` (the real windows only ever measure).
    """
    return DicePool(([*hejmsdz_dice()] if windows else []) + nellbyler_dice(folds=folds), drawn_fallback)


SET_PER_COLOUR = 18  # a copy of Sagrada holds 90 dice, 18 of each colour


def one_set(pool: DicePool, seed: int, per_colour: int = SET_PER_COLOUR) -> DicePool:
    """The dice of one copy of the game drawn from ``pool``: up to ``per_colour`` of each colour, its values spread evenly.

    A player's own set is 90 physical dice, not every real die this project holds: what a few
    corrected photos of it show, the next photos show again. Each colour's dice are taken a value at a
    time (1 to 6, then again), a random die of that value each time, until ``per_colour`` are taken or
    the pool has no more of that colour (it holds 9 yellow dice).
    """
    rng = np.random.default_rng(seed)
    chosen: list[RealDie] = []
    for colour in SAGRADA_COLOURS:
        left = {value: list(pool.by_kind.get((colour, value), [])) for value in range(1, 7)}
        for value in left:
            rng.shuffle(left[value])  # type: ignore[arg-type]
        taken = 0
        while taken < per_colour and any(left.values()):
            for value in range(1, 7):
                if left[value] and taken < per_colour:
                    chosen.append(left[value].pop())
                    taken += 1
    return DicePool(chosen, pool.drawn_fallback)


def real_dice_present() -> bool:
    """Whether the labelled loose dice are on this machine (checked without decoding a photo)."""
    return COLOURS_FILE.is_file() and (REALDATA / "dice-nellbyler-d6" / "annotations.json").is_file()


@cache
def training_pool() -> DicePool:
    """The real dice training scenes may use (fold 0 of the loose dice, drawn dice where it has none), loaded once."""
    return load_pool(folds=(0,), windows=False, drawn_fallback=True)


def paste_real_dice(seed: int, **options: Any) -> Sample:
    """A training render of ``seed`` (its own window and pattern) whose dice are real fold-0 dice where the pool has them.

    Raises:
        ValueError: no labelled real dice are available.
    """
    pool = training_pool()
    if not pool.dice:
        raise ValueError("real dice: none labelled (../shared/realdata or models/sagrada/real_dice_colours.json is absent)")
    sample = render(seed, face_source=pool.face, **options)
    sample.label["render"]["real_dice"] = "fold 0"
    return sample


def composite_document(seed: int, pool: DicePool, tries: int = 2000) -> tuple[dict[str, Any], tuple, Any]:
    """A legal window (``game_document``) whose every die has a real counterpart in ``pool``.

    The window has as many empty cells as ``render(seed)``'s; its pattern and dice come from the
    first of the seeds ``seed * 10000 + k`` whose dice the pool holds.

    Raises:
        ValueError: no such window within ``tries`` seeds (the pool lacks too many colour-values).
    """
    holes = random_empty_count(np.random.default_rng(seed))  # as many empty cells as a render of this seed
    for k in range(tries):
        document, window, card = game_document(seed * 10_000 + k, empty=holes)
        if all(pool.has(die.color, die.value) for row in window for die in row if die is not None):
            document["players"][0]["name"] = f"composite-{seed}"
            return document, window, card
    raise ValueError(f"composite {seed}: no legal window in {tries} tries uses only the pool's real dice")


def render_composite(seed: int, pool: DicePool, *, style: str = styles.HELD_OUT, **options: Any) -> Sample:
    """A photo of a ``style`` window whose dice are real ones from ``pool`` (``render.render``'s options).

    Its label's ``render.composite.dice`` names the real die in each cell (``RealDie.source``, row by
    row; None for an empty cell), so a benchmark can say which real dice it misreads.

    Raises:
        ValueError: no legal window can be made from the pool's dice.
    """
    document = composite_document(seed, pool)
    drawn: list[str] = []  # each die's source, in the order the renderer draws them: row by row

    def face(colour: str, value: int, rng: np.random.Generator, size_px: int) -> tuple[np.ndarray, np.ndarray]:
        die = pool.pick(colour, value, rng)
        drawn.append(die.source)
        return pool.face_of(die, rng, size_px)

    sample = render(seed, style=style, face_source=face, document=document, **options)
    values = [value for row in sample.label["players"][0]["window"] for value in row.split()]
    if len(drawn) != sum(value != "." for value in values):
        raise RuntimeError(f"composite {seed}: {len(drawn)} real dice drawn for the {sum(v != '.' for v in values)} dice of its window")
    sources = iter(drawn)
    dice = [next(sources) if value != "." else None for value in values]
    sample.label["render"]["composite"] = {"real_dice": len(pool.dice), "kinds": len(pool.by_kind), "dice": dice}
    return sample


REAL_WINDOW_SEED = 9_300_000  # the re-photographed real windows' seeds
REAL_WINDOW_UPSCALE = 4  # the 32 px cells drawn 128 px wide before they are photographed


@cache
def real_windows(folder: Path = REALDATA / "sagrada-hejmsdz") -> tuple[tuple[str, np.ndarray, tuple[str, ...]], ...]:
    """The real windows cut to the grid: (file name, RGB pixels, window rows with "." for an empty cell), or () when absent."""
    labels_path = folder / "labels.json"
    if not labels_path.is_file():
        return ()
    found = []
    for name, rows in sorted(json.loads(labels_path.read_text())["images"].items()):
        pixels = np.asarray(Image.open(folder / name).convert("RGB"))
        found.append((name, pixels, tuple(" ".join(value or "." for value in row) for row in rows)))
    return tuple(found)


def _dark_frame(rng: np.random.Generator, grid: np.ndarray, pitch: float) -> tuple[np.ndarray, np.ndarray]:
    """``grid`` inside a dark frame of random width, colour and grain; returns the board and the grid's corners in it."""
    sides = (rng.uniform(0.08, 0.6, 4) * pitch).round().astype(int)  # top, right, bottom, left
    colour = rng.uniform(4, 55) + rng.uniform(-8, 8, 3)
    height, width = grid.shape[0] + sides[0] + sides[2], grid.shape[1] + sides[1] + sides[3]
    grain = cv2.resize(rng.normal(0, 1, (max(2, height // 24), max(2, width // 24))), (width, height), interpolation=cv2.INTER_CUBIC)
    board = np.clip(colour + 6 * grain[..., None], 0, 255).astype(np.uint8)
    if rng.random() < 0.4:  # a lighter rim at the frame's edge
        rim = max(2, int(round(pitch * rng.uniform(0.02, 0.06))))
        cv2.rectangle(board, (rim // 2, rim // 2), (width - 1 - rim // 2, height - 1 - rim // 2), tuple(float(v) for v in colour + 60), rim)
    top, left = int(sides[0]), int(sides[3])
    board[top : top + grid.shape[0], left : left + grid.shape[1]] = grid
    corners = np.array(
        [[left, top], [left + grid.shape[1], top], [left + grid.shape[1], top + grid.shape[0]], [left, top + grid.shape[0]]], float
    )
    return board, corners


def render_real_window(seed: int, *, framing: str = "table", overlay: bool = False) -> Sample:
    """A photo of one of the real windows (``real_windows``, taken in turn by seed) lying in a dark frame on a table.

    The window's pixels are the real photo's (its dice, gaps, light and camera), enlarged
    ``REAL_WINDOW_UPSCALE`` times and framed (``_dark_frame``), then photographed by the scene camera
    (tilt up to 40 degrees, any rotation, the table's light), framed as ``render.render`` frames a
    window (``framing``, ``overlay``). The label names the source cell of each die (``render.composite.dice``).

    Raises:
        ValueError: the real windows are absent.
    """
    windows = real_windows()
    if not windows:
        raise ValueError("real windows: none found (../shared/realdata/sagrada-hejmsdz is absent)")
    name, pixels, rows = windows[seed % len(windows)]
    rng = np.random.default_rng([seed, 21])
    grid = cv2.resize(pixels, None, fx=REAL_WINDOW_UPSCALE, fy=REAL_WINDOW_UPSCALE, interpolation=cv2.INTER_CUBIC)
    pitch = grid.shape[1] / COLS
    board, grid_art = _dark_frame(rng, grid, pitch)
    out_size = (1600, 1200) if rng.random() < 0.5 else (1200, 1600)
    shot = scene.place_on_table(board, rng, out_size=out_size, px_per_mm=pitch / PITCH_MM)
    view: dict[str, Any] = {"style": "real window", "framing": framing, "overlay": overlay}
    image, quality, to_photo = framed(shot, rng, grid_art, view, out_size=out_size)
    stem = name.rsplit(".", 1)[0]
    label = {
        "game": "sagrada",
        "public_objectives": [],
        "players": [{"name": f"{stem}-{seed}", "window": list(rows)}],
        "render": {
            "seed": int(seed),
            "size": list(out_size),
            "corners": to_photo(grid_art).round(2).tolist(),
            "view": view,
            "jpeg_quality": quality,
            "composite": {
                "real_window": name,
                "dice": [
                    None if value == "." else f"hejmsdz/{name}/r{r}c{c}"
                    for r, row in enumerate(rows)
                    for c, value in enumerate(row.split())
                ],
            },
        },
    }
    return Sample(image_rgb=image, label=label, shot=shot)


def mosaic_window(seed: int, pool: DicePool, out_size: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """A window that is only dice: ``pool``'s dice (drawn where it lacks one) in a 4x5 lattice on a plain dark card,
    framed (``_dark_frame``) and photographed on a table; returns the photo and the grid's corners in it.

    No pattern card, strip or frame design is seen: a lattice of dice is what a locator trained on it must find.
    """
    rng = np.random.default_rng([seed, 31])
    pitch = 96
    card = rng.uniform(2, 45) + rng.uniform(-10, 10, 3)
    width, height = COLS * pitch, ROWS * pitch
    grain = cv2.resize(rng.normal(0, 1, (16, 20)), (width, height), interpolation=cv2.INTER_CUBIC)
    grid = np.clip(card + rng.uniform(2, 10) * grain[..., None], 0, 255).astype(np.float32)
    if rng.random() < 0.3:  # the cells' outlines printed a little lighter than the card
        line = tuple(float(v) for v in card + rng.uniform(15, 50))
        for k in range(1, COLS):
            cv2.line(grid, (k * pitch, 0), (k * pitch, height), line, max(1, pitch // 40))
        for k in range(1, ROWS):
            cv2.line(grid, (0, k * pitch), (width, k * pitch), line, max(1, pitch // 40))
    ratio = rng.uniform(0.7, 0.92)
    empty = set(rng.choice(ROWS * COLS, size=int(rng.integers(0, 4)), replace=False).tolist()) if rng.random() < 0.5 else set()
    for index in range(ROWS * COLS):
        if index in empty:
            continue
        r, c = divmod(index, COLS)
        colour, value = SAGRADA_COLOURS[int(rng.integers(5))], int(rng.integers(1, 7))
        face, mask = pool.face(colour, value, rng, int(pitch * ratio))
        turn = rng.normal(0, 6)
        centre = (face.shape[1] / 2, face.shape[0] / 2)
        matrix = cv2.getRotationMatrix2D(centre, turn, 1.0)
        face = cv2.warpAffine(face, matrix, face.shape[1::-1], flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        alpha = cv2.warpAffine(mask, matrix, mask.shape[1::-1], flags=cv2.INTER_LINEAR)
        alpha = (alpha.astype(np.float32) / (255.0 if alpha.dtype == np.uint8 else 1.0))[..., None]
        slack = (pitch - face.shape[0]) / 2
        x0 = int(round(c * pitch + slack + rng.uniform(-0.4, 0.4) * slack))
        y0 = int(round(r * pitch + slack + rng.uniform(-0.4, 0.4) * slack))
        x0, y0 = min(max(x0, 0), width - face.shape[1]), min(max(y0, 0), height - face.shape[0])
        region = grid[y0 : y0 + face.shape[0], x0 : x0 + face.shape[1]]
        grid[y0 : y0 + face.shape[0], x0 : x0 + face.shape[1]] = region * (1 - alpha) + face.astype(np.float32) * alpha
    board, grid_art = _dark_frame(rng, np.clip(grid, 0, 255).astype(np.uint8), pitch)
    shot = scene.place_on_table(board, rng, out_size=out_size, px_per_mm=pitch / PITCH_MM, fill=float(rng.uniform(0.3, 0.95)))
    return shot.image_rgb, shot.project(grid_art)
