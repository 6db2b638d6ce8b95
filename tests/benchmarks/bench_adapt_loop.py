"""The players' loop on a set the shipped models never saw: correct K photos, ``adapt --from-scans``, read the rest.

For each set, photos 0..4 are the corrected ones (K = 2 uses the first two, K = 5 all five) and the
photos after them are read end to end (board finder included; a board not found counts nothing right)
with the shipped models and with the profile ``tablescan adapt --from-scans`` saved: cells right,
boards entirely right, and the cells read under the review's bar (``ScanResult.cells_to_check``).
Each K writes its photos with their truth documents (Sagrada with ``players[0].scan.corners``, the
true grid) to a temporary folder and runs the command's own function (``tablescan.adapt.adapt_from_scans``).

The sets:
- ``sagrada-heldout-style``: the board style no model trained on (``models.sagrada.styles.HELD_OUT``,
  the photos of ``models.sagrada.transfer``'s held-out set);
- ``sagrada-real-dice``: real dice from ``../shared/realdata`` pasted into held-out-style windows
  (``models.sagrada.composite``; skipped without the real data): each die drawn from all 366, so
  most dice of the photos read after adapting were never in the corrected ones;
- ``sagrada-real-set``: the same, but every photo's dice come from one copy of the game
  (``composite.one_set``: 18 dice of each colour, 9 yellow, as a player's own set): the corrected
  photos show dice the later photos show again (``--copy N`` draws another copy from the pool);
- ``alhambra-heldout-style``: the tile art no model trained on (``models.alhambra.transfer``'s held-out set);
- ``sagrada-pewter-real-dice``: real dice on the pewter board, never trained on
  (``models.sagrada.transfer``'s ``composites_pewter``); ``sagrada-jade-real-dice``: on the jade board,
  never trained on nor tuned on (``composites_jade``);
- ``alhambra-unseen-art``: the mosaic tile art, never trained on nor tuned on (``models.alhambra.transfer``'s ``unseen``);
- ``sagrada-other-copy``: ``bench_adapt.render_copy``, the Sagrada renderer with shifted die and
  print colours, dark pips, flatter dice, one lamp and one phone, under warm light (a stand-in);
- ``alhambra-other-art``: the Alhambra renderer with tower and seraglio drawings swapped, every price
  octagon in the next type's colour, grey stone walls instead of brick, under warm light (a stand-in);
- ``alhambra-other-print``: the same, but each octagon in its own colour printed a tenth darker: what
  every printing of the game shares (the octagon's colour, its digit) kept, the drawings and walls not.

Run: .venv/bin/python tests/benchmarks/bench_adapt_loop.py [--test 30] [--sets sagrada-heldout-style,...]
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # run as a script from any folder
sys.path.insert(0, str(Path(__file__).resolve().parent))

from calibration.profile import load_profile  # noqa: E402
from scanner.adapt.boards import compare_boards  # noqa: E402
from scanner.adapt.labels import cell_classifier  # noqa: E402
from scanner.errors import AdaptationError  # noqa: E402
from scanner.pipeline import Scanner  # noqa: E402
from scoring.errors import TableError  # noqa: E402
from tablescan.adapt import adapt_from_scans  # noqa: E402
from tablescan.games import game_entry, readers  # noqa: E402
from tablescan.review.board import readings_from_scan  # noqa: E402

CORRECTED = 5
WARM = np.array([1.10, 0.98, 0.80])
ALHAMBRA_SEEDS = 7_400_000
ONE_SET_SEED = 1  # which of the pool's dice make the one copy of sagrada-real-set


@contextlib.contextmanager
def other_art(octagons_moved: bool = True):
    """Patch the Alhambra renderer into another printing of the tiles (restored on exit).

    ``octagons_moved``: each type's octagon in the next type's colour (no real printing does that);
    else in its own colour printed a little darker, as another print run of the game.
    """
    from models.alhambra import render as art

    saved = (art.PRICE_FILL, art.DRAW, art._walls)
    colours = list(art.PRICE_FILL.values())
    if octagons_moved:
        fills = dict(zip(art.PRICE_FILL, colours[1:] + colours[:1]))
    else:
        fills = {kind: tuple(int(round(0.9 * v)) for v in rgb) for kind, rgb in art.PRICE_FILL.items()}
    draw = dict(art.DRAW)
    draw["tower"], draw["seraglio"] = art.DRAW["seraglio"], art.DRAW["tower"]

    def stone(img, size, rng, walls):
        width = int(round((0.085 + rng.normal(0, 0.006)) * size))
        block = np.array(art._jitter(rng, (112, 116, 128), 8), dtype=np.uint8)
        joint = np.array(art._jitter(rng, (182, 182, 186), 8), dtype=np.uint8)
        strip = np.empty((width, size, 3), dtype=np.uint8)
        strip[:] = block
        strip[width // 2, :] = joint
        strip[:, :: max(8, size // 7)] = joint
        art.tile_art.lay_strips(img, strip, walls)

    art.PRICE_FILL, art.DRAW, art._walls = fills, draw, stone
    try:
        yield art
    finally:
        art.PRICE_FILL, art.DRAW, art._walls = saved


def warm(image: np.ndarray) -> np.ndarray:
    light = np.clip(((image.astype(np.float32) / 255.0) ** 1.08) * WARM, 0, 1)
    return (light * 255 + 0.5).astype(np.uint8)


def alhambra_photo(index: int, octagons_moved: bool = True) -> tuple[np.ndarray, dict]:
    with other_art(octagons_moved) as art:
        sample = art.render(ALHAMBRA_SEEDS + index)
    return warm(sample.image_rgb), sample.label


def alhambra_reprinted(index: int) -> tuple[np.ndarray, dict]:
    """``alhambra_photo`` with each octagon in its own colour: what every printing shares kept, the rest changed."""
    return alhambra_photo(index, octagons_moved=False)


def sagrada_photo(index: int) -> tuple[np.ndarray, dict]:
    import bench_adapt  # the other copy of bench_adapt.py (its render_copy), the same photos

    from models.sagrada import render as art

    with bench_adapt.other_copy():
        sample = art.render(bench_adapt.ADAPT_SEEDS[0] + index)
    image = np.clip((sample.image_rgb.astype(np.float32) / 255.0) ** 1.12 * bench_adapt.TUNGSTEN, 0, 1)
    label = sample.label
    corners = np.asarray(label["render"]["corners"], dtype=np.float64)
    label["players"][0]["scan"] = {"corners": corners.round(1).tolist()}  # the true grid, as dragged corners give it
    return (image * 255 + 0.5).astype(np.uint8), label


def _with_true_corners(label: dict) -> dict:
    corners = np.asarray(label["render"]["corners"], dtype=np.float64)
    label["players"][0]["scan"] = {"corners": corners.round(1).tolist()}  # the true grid, as dragged corners give it
    return label


def sagrada_held_out(index: int) -> tuple[np.ndarray, dict]:
    """The held-out board style of ``models.sagrada.transfer`` (its own seeds and framings)."""
    from models.sagrada import styles, transfer
    from models.sagrada.render import random_view, render

    seed = transfer.SEEDS["heldout"] + index  # as transfer.samples("heldout", ...) draws its index-th photo
    sample = render(seed, style=styles.HELD_OUT, **random_view(np.random.default_rng([seed, 13])))
    return sample.image_rgb, _with_true_corners(sample.label)


@functools.cache
def _real_dice(one_copy: bool):
    """The real dice pool of ``models.sagrada.composite`` (loaded once), or one copy of the game drawn from it."""
    from models.sagrada import composite

    if not one_copy:
        return composite.load_pool()
    return composite.one_set(_real_dice(False), ONE_SET_SEED)


def sagrada_composite(index: int, one_copy: bool = False) -> tuple[np.ndarray, dict]:
    """Real dice from ../shared/realdata pasted into held-out-style windows (``models.sagrada.composite``)."""
    from models.sagrada import composite

    sample = composite.render_composite(composite.COMPOSITE_SEED + index, _real_dice(one_copy))
    return sample.image_rgb, _with_true_corners(sample.label)


def sagrada_real_set(index: int) -> tuple[np.ndarray, dict]:
    """As ``sagrada_composite``, but every photo shows the dice of one copy of the game (``composite.one_set``: 81 of the pool's 366)."""
    return sagrada_composite(index, one_copy=True)


def sagrada_composite_unseen(index: int, board: str = "pewter") -> tuple[np.ndarray, dict]:
    """Real dice on a board never trained on (``models.sagrada.transfer``'s ``composites_BOARD``)."""
    from models.sagrada import transfer

    sample = transfer.sample_at(f"composites_{board}", index, _real_dice(False))
    return sample.image_rgb, _with_true_corners(sample.label)


def alhambra_held_out(index: int, set_name: str = "held_out") -> tuple[np.ndarray, dict]:
    """The held-out tile art of ``models.alhambra.transfer`` (painted volumes, battlemented walls, its own fonts)."""
    from models.alhambra import transfer

    data, label = transfer.photo_of(transfer.shot_for(set_name, index))
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)[:, :, ::-1]
    return np.ascontiguousarray(image), label


def alhambra_unseen(index: int) -> tuple[np.ndarray, dict]:
    """The tile art never trained on nor tuned on (``models.alhambra.transfer``'s ``unseen``: mosaic, its own fonts)."""
    return alhambra_held_out(index, "unseen")


SETS = {
    "sagrada-other-copy": ("sagrada", sagrada_photo),
    "alhambra-other-art": ("alhambra", alhambra_photo),
    "alhambra-other-print": ("alhambra", alhambra_reprinted),
    "sagrada-heldout-style": ("sagrada", sagrada_held_out),
    "sagrada-real-dice": ("sagrada", sagrada_composite),
    "sagrada-real-set": ("sagrada", sagrada_real_set),
    "alhambra-heldout-style": ("alhambra", alhambra_held_out),
    "sagrada-pewter-real-dice": ("sagrada", sagrada_composite_unseen),
    "sagrada-jade-real-dice": ("sagrada", functools.partial(sagrada_composite_unseen, board="jade")),
    "alhambra-unseen-art": ("alhambra", alhambra_unseen),
}


def write_photo(folder: Path, name: str, image: np.ndarray, label: dict) -> None:
    cv2.imwrite(str(folder / f"{name}.jpg"), image[:, :, ::-1], [cv2.IMWRITE_JPEG_QUALITY, 92])
    (folder / f"{name}.json").write_text(json.dumps(label), encoding="utf-8")


def read_all(scanner: Scanner, game: str, photos: list[tuple[Path, dict]], show: str = "") -> dict:
    """Read every photo end to end; ``show``: a tag to print each cell read wrong under (nothing printed if empty)."""
    fixed = cell_classifier(game).fixed_cells
    form = game_entry(game).form
    right = cells = whole = missed = to_check = 0
    for path, label in photos:
        truth = form.scanned_values(label["players"][0])
        try:
            result = scanner.scan(path, game, name=path.name)
            readings = readings_from_scan(game, result.player, result.cells)
            read = {r["cell"]: r["value"] for r in readings}
            to_check += result.cells_to_check
        except TableError:
            read, missed = None, missed + 1
        score = compare_boards(truth, read, fixed)
        if show and fixed and read is not None:
            sure = {r["cell"]: r.get("confidence") for r in readings}
            for key, value in truth.items():
                if not compare_boards({key: value}, {key: read.get(key, "")}).right:
                    print(f"      {show} {path.stem} cell {key}: {value} read {read.get(key)} at {sure.get(key)}", flush=True)
        elif show and score.right < score.cells:
            print(f"      {show} {path.stem}: {score.cells - score.right} of {score.cells} wrong", flush=True)
        right, cells, whole = right + score.right, cells + score.cells, whole + int(score.entirely_right)
    return {
        "cells_right": right,
        "cells": cells,
        "boards_right": whole,
        "boards": len(photos),
        "not_found": missed,
        "cells_to_check": to_check,
    }


def pct(part: int, whole: int) -> str:
    return f"{100 * part / max(whole, 1):6.2f}%"


def run_set(name: str, test_count: int, work: Path, show: bool = False) -> dict:
    game, make = SETS[name]
    started = time.perf_counter()
    rendered = [make(i) for i in range(CORRECTED + test_count)]
    tests_dir = work / f"{name}-test"
    tests_dir.mkdir()
    tests = []
    for index, (image, label) in enumerate(rendered[CORRECTED:]):
        write_photo(tests_dir, f"test{index:03d}", image, label)
        tests.append((tests_dir / f"test{index:03d}.jpg", label))
    print(f"{name}: rendered {CORRECTED} + {test_count} photos in {time.perf_counter() - started:.0f} s", flush=True)
    shipped = Scanner(readers=readers())
    base = read_all(shipped, game, tests, "shipped" if show else "")
    figures: dict = {"shipped": base}
    print(
        f"{name}: shipped  cells right {pct(base['cells_right'], base['cells'])} ({base['cells_right']}/{base['cells']}), "
        f"boards entirely right {pct(base['boards_right'], base['boards'])}, cells to check {base['cells_to_check']}, "
        f"not found {base['not_found']}",
        flush=True,
    )
    for k in (2, CORRECTED):
        folder = work / f"{name}-k{k}"
        folder.mkdir()
        for index, (image, label) in enumerate(rendered[:k]):
            write_photo(folder, f"corrected{index}", image, label)
        profiles = work / f"profiles-{name}-k{k}"
        t0 = time.perf_counter()
        try:
            outcome = adapt_from_scans(folder, f"k{k}", profiles)
        except AdaptationError as error:  # as the command stops: one photo's board not found, nothing learnt
            print(f"{name}: K={k}  adapt stopped: {error}", flush=True)
            figures[f"k{k}"] = {**base, "adapt_seconds": round(time.perf_counter() - t0, 1), "kept": [], "stopped": str(error)}
            continue
        seconds = time.perf_counter() - t0
        print("    " + outcome.to_text().replace("\n", "\n    "), flush=True)
        adapted = Scanner(profile=load_profile(f"k{k}", profiles), readers=readers()) if outcome.saved else shipped
        after = read_all(adapted, game, tests, f"K={k}" if show else "")
        figures[f"k{k}"] = {**after, "adapt_seconds": round(seconds, 1), "kept": list(outcome.kept_models)}
        print(
            f"{name}: K={k}  cells right {pct(base['cells_right'], base['cells'])} -> {pct(after['cells_right'], after['cells'])}, "
            f"boards entirely right {pct(base['boards_right'], base['boards'])} -> {pct(after['boards_right'], after['boards'])}, "
            f"cells to check {base['cells_to_check']} -> {after['cells_to_check']}, "
            f"not found {after['not_found']}; adapt took {seconds:.1f} s, kept {', '.join(outcome.kept_models) or 'nothing'}",
            flush=True,
        )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--test", type=int, default=30, help="photos of each set read after adapting (default 30)")
    parser.add_argument("--sets", default=",".join(SETS), help=f"comma-separated sets (default {','.join(SETS)})")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    parser.add_argument("--copy", type=int, default=1, help="which copy of the game sagrada-real-set draws from the pool (default 1)")
    parser.add_argument("--show-wrong", action="store_true", help="print each cell read wrong, shipped and after adapting")
    args = parser.parse_args()
    global ONE_SET_SEED
    ONE_SET_SEED = args.copy
    with tempfile.TemporaryDirectory(prefix="bench_adapt_loop_") as work:
        os.environ["TABLESCAN_PROFILE_DIR"] = str(Path(work) / "profiles")
        figures = {name: run_set(name, args.test, Path(work), args.show_wrong) for name in args.sets.split(",")}
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
