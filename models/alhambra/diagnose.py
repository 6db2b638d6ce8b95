"""Where does the Alhambra scanner lose tiles? Scan held-out renders and blame each miss on one stage.

    python -m models.alhambra.diagnose [--count 100] [--seed 2500000] [--verbose]

Every render is JPEG-encoded (quality 92) and read by the shipped reader exactly as
``models.alhambra.evaluate`` does (same seeds by default: 2,500,000+; use another
``--seed`` for a second held-out set, e.g. 2,700,000). The reader's trace (lattice, cells read,
probabilities, north, decoding) is compared with the render's truth (every tile's centre,
outline and catalogue id). Each wrong position, true tile or read tile, gets the first cause
that applies, in this order:

- ``refused``: the reader raised ``BoardNotFoundError`` (all tiles of the palace).
- ``lattice wrong``: the lattice misses the fountain's tile or a quarter or more of the tiles
  (the locator split or merged tile centres, usually tiles very big or very small in the frame);
  the whole palace's misread positions are blamed on it.
- ``north wrong``: the tiles' quarter-turn vote picked the wrong north (the whole palace turned).
- ``fountain wrong``: another cell was decoded as the fountain, so every position shifted.
- ``no lattice cell``: no lattice cell (occupied or empty neighbour) lies on the true tile.
- ``read as empty``: a lattice cell lies on the tile but was dropped as "no tile".
- ``extra tile``: a tile was read where the render has none (a lattice cell off the palace).
- ``crop misaligned``: the lattice cell's centre is >= 12% of a pitch from the tile's centre,
  or its size is off by >= 10%.
- ``decoding worse``: the classifier's own first choice was right, the rules changed it.
- ``crop geometry``: the classifier was wrong on the scanner's crop but right on a crop cut
  through the true lattice (a small misalignment mattered).
- ``classifier: type`` / ``classifier: walls`` / ``classifier: fountain``: wrong on a well
  aligned crop, and also wrong on the true-lattice crop.

For palaces the decoder got wrong it also says whether the truth scored higher than the reading
chosen under the model's probabilities (``search missed`` a better reading) or lower (the
evidence favoured the wrong reading).
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from typing import Any

import cv2
import numpy as np

from models.alhambra.evaluate import SCAN_SEED
from models.alhambra.render import render
from models.cli import CommandParser
from scanner.alhambra.reader import (
    TileEvidence,
    _local_pitch,
    crop_cells,
    make_reader,
    rotate_cell,
    tile_log_scores,
)
from scanner.errors import BoardNotFoundError
from scanner.photo import load_photo
from scoring.alhambra.palace import CATALOGUE

CAUSES = (
    "refused",
    "lattice wrong",
    "north wrong",
    "fountain wrong",
    "no lattice cell",
    "read as empty",
    "extra tile",
    "crop misaligned",
    "decoding worse",
    "crop geometry",
    "classifier: type",
    "classifier: walls",
    "classifier: fountain",
)
MATCH_RADIUS = 0.4  # in pitches: a lattice cell this close to a true centre lies on that tile
MISALIGNED = 0.12
MIS_SCALED = 0.10


def _photo_of(seed: int):
    sample = render(seed)
    _, data = cv2.imencode(".jpg", cv2.cvtColor(sample.image_rgb, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, 92])
    return sample, load_photo(data.tobytes(), name=f"render-{seed}.jpg")


def _project(homography: np.ndarray, points: np.ndarray) -> np.ndarray:
    return cv2.perspectiveTransform(np.asarray(points, np.float64).reshape(-1, 1, 2), homography).reshape(-1, 2)


def _best_transform(pairs: list[tuple[tuple[int, int], tuple[int, int]]]) -> tuple[int, tuple[int, int]]:
    """The quarter turn k and shift t with true = rotate_cell(lattice, k) + t for most pairs."""
    votes: Counter = Counter()
    for cell, true_at in pairs:
        for k in range(4):
            x, y = rotate_cell(cell, k)
            votes[(k, (true_at[0] - x, true_at[1] - y))] += 1
    return votes.most_common(1)[0][0]


def _value(tile_index: int) -> str:
    tile = CATALOGUE[tile_index]
    return f"{tile.type}:{tile.walls}"


def diagnose_photo(reader: Any, seed: int) -> dict[str, Any]:
    """Scan one render and return its per-position causes and figures."""
    sample, photo = _photo_of(seed)
    info = sample.label["render"]
    truth = {tuple(c["at"]): c for c in info["cells"]}
    n_true = len(truth)
    trace: dict[str, Any] = {}
    try:
        reading = reader.read(photo, trace=trace)
    except BoardNotFoundError as error:
        return {"seed": seed, "tiles": n_true, "wrong": n_true, "causes": Counter({"refused": n_true}), "note": str(error)}
    read = {tuple(c.cell): c.value for c in reading.cells}
    positions = set(read) | set(truth)
    wrong_positions = {p for p in positions if read.get(p) != (truth[p]["value"] if p in truth else None)}
    result: dict[str, Any] = {"seed": seed, "tiles": len(positions), "wrong": len(wrong_positions), "causes": Counter(), "note": ""}
    if not wrong_positions:
        return result

    lattice = trace["lattice"]
    grid = lattice.grid_to_image
    true_grid = np.asarray(info["grid_to_photo"], np.float64)
    true_at = np.array(list(truth), np.float64)
    true_centres = np.array([truth[a]["centre"] for a in truth], np.float64)
    true_pitch = _local_pitch(true_grid, true_at)
    cells = trace["cells"]
    centres = _project(grid, np.array(cells, np.float64))
    pitch = _local_pitch(grid, np.array(cells, np.float64))
    # lattice cell -> the true tile under it (if any)
    on_tile: dict[tuple[int, int], tuple[int, int]] = {}
    offset: dict[tuple[int, int], float] = {}
    scale: dict[tuple[int, int], float] = {}
    for index, cell in enumerate(cells):
        gaps = np.linalg.norm(true_centres - centres[index], axis=1) / true_pitch
        j = int(np.argmin(gaps))
        if gaps[j] < MATCH_RADIUS:
            on_tile[cell] = (int(true_at[j][0]), int(true_at[j][1]))
            offset[cell] = float(gaps[j])
            scale[cell] = float(pitch[index] / true_pitch[j])
    k, shift = _best_transform(list(on_tile.items())) if on_tile else (trace["k"], (0, 0))
    fountain = trace["fountain"]
    # the scanner's at for lattice cell c is rotate_cell(c, k_read) - fountain
    read_shift = (-fountain[0], -fountain[1])
    causes: Counter = Counter()
    found = {true for cell, true in on_tile.items() if trace["is_tile"].get(cell)}
    if (0, 0) not in found or len(found) < 0.75 * n_true:
        causes["lattice wrong"] = len(wrong_positions)
        result["causes"] = causes
        return result
    if k != trace["k"]:
        causes["north wrong"] = len(wrong_positions)
        result["causes"] = causes
        return result
    if tuple(shift) != read_shift:
        causes["fountain wrong"] = len(wrong_positions)
        result["causes"] = causes
        return result

    is_tile = trace["is_tile"]
    evidence: dict[tuple[int, int], TileEvidence] = trace["evidence"]
    lattice_of = trace["lattice_of"]
    read_of_true = {true: cell for cell, true in on_tile.items()}
    for position in sorted(wrong_positions):
        if position not in truth:
            causes["extra tile"] += 1
            continue
        cell = read_of_true.get(position)
        if cell is None:
            causes["no lattice cell"] += 1
            continue
        if not is_tile.get(cell, False):
            causes["read as empty"] += 1
            continue
        if offset[cell] >= MISALIGNED or abs(scale[cell] - 1) >= MIS_SCALED:
            causes["crop misaligned"] += 1
            continue
        world = rotate_cell(cell, k)
        assert lattice_of[world] == cell
        model_value, _ = evidence[world].model_value()
        true_value = truth[position]["value"]
        if model_value == true_value:
            causes["decoding worse"] += 1
            continue
        # the same classifier on a crop cut through the true lattice (moved onto the true centre)
        centre_true = np.asarray(truth[position]["centre"], np.float64)
        moved = np.eye(3)
        moved[:2, 2] = centre_true - _project(true_grid, np.array([position], np.float64))[0]
        crop = crop_cells(photo.image_rgb, moved @ true_grid, [position])
        kind, walls, price, _ = reader._classify(crop)
        kind_p = kind[0].copy()
        kind_p[0] = 0.0
        true_crop_value, _ = TileEvidence(kind_p / kind_p.sum(), walls[0], price[0]).model_value()
        if true_crop_value == true_value:
            causes["crop geometry"] += 1
        elif true_value == "fountain" or model_value == "fountain":
            causes["classifier: fountain"] += 1
        elif model_value.split(":")[0] != true_value.split(":")[0]:
            causes["classifier: type"] += 1
        else:
            causes["classifier: walls"] += 1
    result["causes"] = causes
    # did the decoder's search miss a better-scoring reading, or did the evidence favour the wrong one?
    chosen = trace["chosen"]
    if any(c in causes for c in ("decoding worse", "classifier: type", "classifier: walls")) and set(causes) <= {
        "decoding worse",
        "crop geometry",
        "classifier: type",
        "classifier: walls",
    }:
        truth_total = chosen_total = 0.0
        for world, tile_index in chosen.items():
            true_cell = on_tile.get(lattice_of[world])
            true_id = truth[true_cell]["tile_id"] if true_cell in truth else None
            if true_id is None:
                continue
            scores = tile_log_scores(evidence[world])
            truth_total += float(scores[true_id - 1])
            chosen_total += float(scores[tile_index])
        result["note"] = "search missed a better reading" if truth_total > chosen_total + 1e-9 else "evidence favoured the wrong reading"
    result["offsets"] = [offset[c] for c in on_tile if c in lattice.cells]
    return result


def main(argv: list[str] | None = None) -> None:
    """Command line: diagnose ``--count`` renders from ``--seed`` and print the table of causes."""
    parser = CommandParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--seed", type=int, default=SCAN_SEED)
    parser.add_argument("--verbose", action="store_true", help="one line per misread photo")
    args = parser.parse_args(argv)
    reader = make_reader()
    tiles = wrong = boards = 0
    per_tile: Counter = Counter()
    per_board: Counter = Counter()
    notes: Counter = Counter()
    offsets: list[float] = []
    start = time.perf_counter()
    for seed in range(args.seed, args.seed + args.count):
        result = diagnose_photo(reader, seed)
        tiles += result["tiles"]
        wrong += result["wrong"]
        offsets += result.get("offsets", [])
        if not result["wrong"]:
            boards += 1
            continue
        per_tile.update(result["causes"])
        first = next(c for c in CAUSES if c in result["causes"]) if result["causes"] else "unexplained"
        per_board[first] += 1
        if result["note"] and not result["note"].startswith("render-"):
            notes[result["note"]] += 1
        if args.verbose:
            print(f"{seed}: {result['wrong']} of {result['tiles']} wrong: {dict(result['causes'])} {result['note']}")
    print(
        f"{args.count} renders from seed {args.seed}: tiles right {tiles - wrong}/{tiles} ({(tiles - wrong) / max(tiles, 1):.4f}), "
        f"palaces entirely right {boards}/{args.count} ({time.perf_counter() - start:.0f} s)"
    )
    if offsets:
        o = np.array(offsets)
        print(
            f"lattice centre offset from the true tile centre (pitches): median {np.median(o):.3f}, 95th pct {np.percentile(o, 95):.3f}, max {o.max():.3f}"
        )
    print("| cause | wrong tiles | palaces (first cause) |\n|---|---|---|")
    for cause in CAUSES + ("unexplained",):
        if per_tile[cause] or per_board[cause]:
            print(f"| {cause} | {per_tile[cause]} | {per_board[cause]} |")
    for note, count in notes.items():
        print(f"decoder on palaces misread only by the classifier/decoder: {note}: {count}")


if __name__ == "__main__":
    main()
