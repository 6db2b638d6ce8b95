"""The Sagrada transfer benchmark: photos of boards and dice the models were never trained on.

Seven sets, each read end to end from the photo alone by the shipped scanner (the registry's
Sagrada reader, through ``scanner.pipeline.Scanner``, which also gives each scan's ``scan.review``):

- ``heldout``: renders of the held-out board style (``styles.HELD_OUT``), with the training mix's
  framings and overlays (``render.random_view``);
- ``steep``: renders of the held-out style at the steepest tilts asked of the scanner (32-40
  degrees, ``STEEP_TILT``), from any side and turned any way, the board filling most of the photo
  (close-ups, photos cut close to the grid, off-centre crops in turn): tall dice lean far off
  their cells and past the photo's edge;
- ``composites``: real dice (``composite``) pasted into held-out-style windows on a table;
- ``composites_walnut``, ``composites_pewter`` and ``composites_jade``: the same real dice in windows
  of the other boards never trained on (``styles.UNSEEN``): a walnut organiser whose dice are small for
  its slots (read while the board zoom was chosen), a pewter board (first read after that choice, read
  again for the next), and a jade board first read after the fourteenth session's choices;
- ``real_windows``: the two real windows of ``sagrada-hejmsdz`` (a real board, its dice, light and
  camera, cut to the grid), each enlarged, framed in a dark frame and photographed on a table by the
  scene camera in the same framings and overlays (``composite.render_real_window``);
- ``training``: for reference, renders of the training styles in turn, same framings and overlays.

Seeds start at ``SEEDS`` (9,000,000 and up: disjoint from make_dataset's TRAIN/VAL/TEST ranges and
from the 4,000,000+ renders used to choose settings). Per set it reports cells right, windows
entirely right, grids found (read at all, and placed within a quarter of a cell whichever way round;
how many of those were read turned round), wrong cells, the
share of wrong cells read at >= 90% confidence, windows with a wrong cell left unflagged by
``scan.review`` (``needed`` false: a confident wrong score) and right windows flagged.

``python -m models.sagrada.transfer [--count 240] [--workers 2] [--sets heldout,steep,composites,...] [--true-grid]`` prints the
tables as markdown and writes ``transfer.json`` beside this file. ``measure()`` returns the figures.
"""

from __future__ import annotations

import json
import multiprocessing
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from models.cli import CommandParser
from models.metrics import BOOTSTRAP_DRAWS, interval_text, photo_intervals, share_text
from models.sagrada import composite, styles
from models.sagrada.render import Sample, random_view, render
from scanner.errors import PhotoError
from scanner.photo import Photo
from scanner.pipeline import Scanner
from scanner.sagrada.cells import COLS, ROWS

HERE = Path(__file__).resolve().parent
SETS = ("heldout", "steep", "composites", "composites_walnut", "composites_pewter", "composites_jade", "real_windows", "training")
UNSEEN_COMPOSITES = {f"composites_{style}": style for style in styles.UNSEEN}  # real dice on the other boards never trained on
SEEDS = {
    "heldout": 9_000_000,
    "steep": 9_400_000,
    "composites": composite.COMPOSITE_SEED,
    "composites_walnut": 9_700_000,
    "composites_pewter": 9_800_000,
    "composites_jade": 9_900_000,
    "real_windows": composite.REAL_WINDOW_SEED,
    "training": 9_200_000,
}
TITLES = {
    "heldout": f"held-out style ({styles.HELD_OUT}), renders",
    "steep": f"held-out style ({styles.HELD_OUT}), close and steep (32-40 degrees)",
    "composites": f"real dice on the held-out style ({styles.HELD_OUT})",
    "composites_walnut": "real dice on a second board never trained on (walnut, dice small for their slots)",
    "composites_pewter": "real dice on a third board never trained on (pewter)",
    "composites_jade": "real dice on a fourth board never trained on (jade)",
    "real_windows": "the two real windows, re-photographed",
    "training": "training styles, renders (reference)",
}
SURE = 0.9  # a wrong cell read at this confidence or more is a confident error
MISREAD_NAMED = 5  # the real dice misread most are named, this many at most
QUARTER_CELL = 0.25
CELLS = ROWS * COLS


STEEP_FRAMINGS = ("closeup", "cut", "offcentre")  # the steep set's framings, in turn: the board fills most of the photo
STEEP_TILT = (32.0, 40.0)  # the steep set's camera tilts (degrees); any turn and roll


def steep_camera(seed: int) -> dict[str, float]:
    """The steep set's camera for ``seed``: tilted ``STEEP_TILT``, from any side, the photo turned any way."""
    rng = np.random.default_rng([seed, 77])
    return {
        "tilt_deg": float(rng.uniform(*STEEP_TILT)),
        "azimuth_deg": float(rng.uniform(0, 360)),
        "roll_deg": float(rng.uniform(-180, 180)),
    }


def sample_at(name: str, index: int, pool: composite.DicePool | None = None) -> Sample:
    """The ``index``-th photo of benchmark set ``name`` (seeded, the same every time).

    Raises:
        ValueError: an unknown set, or composites without real dice.
    """
    first = SEEDS.get(name)
    if first is None:
        raise ValueError(f"set {name!r}: expected one of {', '.join(SETS)}")
    seed = first + index
    view = random_view(np.random.default_rng([seed, 13]))
    if name == "heldout":
        return render(seed, style=styles.HELD_OUT, **view)
    if name == "steep":
        return render(seed, style=styles.HELD_OUT, framing=STEEP_FRAMINGS[index % len(STEEP_FRAMINGS)], camera=steep_camera(seed))
    if name == "training":
        return render(seed, style=styles.TRAINING_STYLES[index % len(styles.TRAINING_STYLES)], **view)
    if name == "real_windows":
        return composite.render_real_window(seed, **view)
    if pool is None or not pool.dice:
        raise ValueError(f"{name}: no real dice (../shared/realdata is absent)")
    return composite.render_composite(seed, pool, style=UNSEEN_COMPOSITES.get(name, styles.HELD_OUT))


def samples(name: str, count: int, pool: composite.DicePool | None = None) -> Iterator[Sample]:
    """The ``count`` photos of benchmark set ``name`` in order (``sample_at``).

    Raises:
        ValueError: an unknown set, or composites without real dice.
    """
    for index in range(count):
        yield sample_at(name, index, pool)


def corner_error(found: np.ndarray, truth: np.ndarray) -> tuple[float, int]:
    """The worst corner's distance from the truth in cell pitches, whichever way round the grid was read, and how.

    Returns (error, quarter turns): the turns (0-3) of the found corners' order that fit the truth
    best; a grid read in place but upside down is (small error, 2).
    """
    pitch = (np.linalg.norm(truth[1] - truth[0]) / 5 + np.linalg.norm(truth[3] - truth[0]) / 4) / 2
    errors = [float(np.linalg.norm(np.roll(np.asarray(found), -k, axis=0) - truth, axis=1).max() / pitch) for k in range(4)]
    best = int(np.argmin(errors))
    return errors[best], best


def read_photo(
    name: str, index: int, scanner: Scanner, pool: composite.DicePool | None = None, *, true_grid: bool = False
) -> dict[str, Any]:
    """Render and read the ``index``-th photo of set ``name``: its seed, style and what the scan got right.

    Raises:
        ValueError: an unknown set, or composites without real dice.
    """
    sample = sample_at(name, index, pool)
    seed = sample.label["render"]["seed"]
    truth_corners = np.array(sample.label["render"]["corners"])
    outcome: dict[str, Any] = {"seed": seed, "style": sample.label["render"].get("view", {}).get("style", "classic")}
    truth = [v for row in sample.label["players"][0]["window"] for v in row.split()]
    try:
        corners = truth_corners if true_grid else None
        result = scanner.scan(Photo.from_array(sample.image_rgb, name=f"{name}-{seed}"), "sagrada", corners=corners)
    except PhotoError as error:  # refused (exit 2): every cell counts as not read
        return {**outcome, "refused": str(error)[:160], "wrong": CELLS, "sure_wrong": 0, **_real_dice(sample, truth, [True] * CELLS)}
    error_pitch, turns = corner_error(result.image_corners, truth_corners)
    got = {tuple(cell.cell): cell for cell in result.cells}
    cells = [got.get(divmod(at, COLS)) for at in range(len(truth))]
    misread = [cell is None or cell.value != value for cell, value in zip(cells, truth)]
    wrong = [cell for cell, bad in zip(cells, misread) if bad]
    return {
        **outcome,
        "error_pitch": error_pitch,
        "turns": turns,
        "wrong": len(wrong),
        "sure_wrong": sum(cell is not None and cell.confidence >= SURE for cell in wrong),
        "flagged": result.review is None or result.review.needed,
        **_real_dice(sample, truth, misread),
    }


def _real_dice(sample: Sample, truth: list[str], misread: list[bool]) -> dict[str, Any]:
    """``{"dice": [[source, value, misread], ...]}`` for each real die a composite shows (``{}`` for a render)."""
    sources = sample.label["render"].get("composite", {}).get("dice")
    if not sources:
        return {}
    return {"dice": [[source, value, bad] for source, value, bad in zip(sources, truth, misread) if source]}


_JOB: dict[str, Any] = {}  # in a worker process: the set it reads and its own scanner


def _start_worker(name: str, pool: composite.DicePool | None, true_grid: bool) -> None:
    """Set up a worker process (started afresh, not forked: no model session or thread pool is shared)."""
    cv2.setNumThreads(1)
    _JOB.update(name=name, pool=pool, true_grid=true_grid, scanner=Scanner())


def _read_in_worker(index: int) -> dict[str, Any]:
    """``read_photo`` in a worker process set up by ``_start_worker``."""
    return read_photo(_JOB["name"], index, _JOB["scanner"], _JOB["pool"], true_grid=_JOB["true_grid"])


def read_set(
    name: str,
    count: int,
    scanner: Scanner | None = None,
    pool: composite.DicePool | None = None,
    *,
    true_grid: bool = False,
    workers: int = 1,
) -> dict[str, Any]:
    """Read set ``name``'s ``count`` photos with ``scanner`` (the shipped one by default) and tally the figures.

    With ``true_grid`` each photo is read on its true grid corners (as ``--corners`` gives them), so
    what is lost there is the cells' reading alone, not the grid's placing. With ``workers`` > 1
    the photos are rendered and read in that many processes, each with the shipped scanner (the
    figures are the same).

    Raises:
        ValueError: an unknown set, composites without real dice, or workers with a scanner of the caller's.
    """
    if workers > 1 and scanner is not None:
        raise ValueError("workers: each process reads with the shipped scanner; pass no scanner to read in several")
    tally: dict[str, Any] = {
        "set": name,
        "title": TITLES[name],
        "first_seed": SEEDS[name],
        "photos": count,
        "read": 0,
        "grid_within_quarter_cell": 0,
        "grid_turned": 0,
        "cells": CELLS * count,
        "cells_right": 0,
        "windows_right": 0,
        "wrong_cells": 0,
        "wrong_cells_sure": 0,
        "wrong_windows_unflagged": 0,
        "right_windows_flagged": 0,
        "refused": [],
        "unflagged": [],
        "by_style": {},
        "wrong_per_photo": [],
    }
    corner_errors = []
    started = time.perf_counter()
    if workers > 1:
        context = multiprocessing.get_context("spawn")
        with context.Pool(workers, initializer=_start_worker, initargs=(name, pool, true_grid)) as processes:
            outcomes = list(processes.imap(_read_in_worker, range(count)))
    else:
        reader = scanner or Scanner()
        outcomes = [read_photo(name, index, reader, pool, true_grid=true_grid) for index in range(count)]
    by_die: dict[str, dict[str, Any]] = {}
    for outcome in outcomes:
        for source, value, bad in outcome.get("dice", []):
            die = by_die.setdefault(source, {"die": value, "shown": 0, "wrong": 0})
            die["shown"] += 1
            die["wrong"] += bool(bad)
        per_style = tally["by_style"].setdefault(outcome["style"], {"photos": 0, "cells_right": 0, "windows_right": 0})
        per_style["photos"] += 1
        tally["wrong_per_photo"].append(outcome["wrong"])
        if "refused" in outcome:
            tally["refused"].append({"seed": outcome["seed"], "why": outcome["refused"]})
            continue
        tally["read"] += 1
        corner_errors.append(outcome["error_pitch"])
        placed = outcome["error_pitch"] <= QUARTER_CELL
        tally["grid_within_quarter_cell"] += placed
        tally["grid_turned"] += placed and outcome["turns"] != 0  # in place, but read turned round
        tally["cells_right"] += CELLS - outcome["wrong"]
        per_style["cells_right"] += CELLS - outcome["wrong"]
        tally["wrong_cells"] += outcome["wrong"]
        tally["wrong_cells_sure"] += outcome["sure_wrong"]
        if outcome["wrong"] == 0:
            tally["windows_right"] += 1
            per_style["windows_right"] += 1
            tally["right_windows_flagged"] += outcome["flagged"]
        elif not outcome["flagged"]:
            tally["wrong_windows_unflagged"] += 1
            tally["unflagged"].append({"seed": outcome["seed"], "wrong_cells": outcome["wrong"]})
    tally["seconds"] = round(time.perf_counter() - started, 1)
    tally["corner_error_pitch_median"] = round(float(np.median(corner_errors)), 3) if corner_errors else None
    tally["cells_right_share"] = tally["cells_right"] / max(tally["cells"], 1)
    tally["windows_right_share"] = tally["windows_right"] / max(count, 1)
    tally["wrong_cells_sure_share"] = tally["wrong_cells_sure"] / tally["wrong_cells"] if tally["wrong_cells"] else None
    misread = np.asarray(tally["wrong_per_photo"])
    tally["intervals"] = photo_intervals(CELLS - misread, np.full(misread.shape, CELLS))
    if by_die:  # the real dice, most misread first
        tally["by_die"] = dict(sorted(by_die.items(), key=lambda item: (-item[1]["wrong"], -item[1]["shown"], item[0])))
    return tally


def misread_dice_text(figures: dict[str, Any], named: int = MISREAD_NAMED) -> str:
    """The real dice a set misread most (wrong of shown) and how the dice of each source read ("" without real dice).

    >>> misread_dice_text({"by_die": {"a/r0c0": {"die": "Y2", "shown": 9, "wrong": 4}, "b/1": {"die": "G5", "shown": 8, "wrong": 0}}})
    'Real dice misread most (wrong of shown): Y2 a/r0c0 4 of 9; the other 1 real die 0 of 8. By where the dice come from: a (1 die) 55.6% of 9 showings read right; b (1 die) 100.0% of 8 showings read right.'
    """
    dice = figures.get("by_die")
    if not dice:
        return ""
    items = list(dice.items())
    worst = [(source, die) for source, die in items[:named] if die["wrong"]]
    rest = items[len(worst) :]
    wrong_rest, shown_rest = sum(die["wrong"] for _, die in rest), sum(die["shown"] for _, die in rest)
    if worst:
        listed = "; ".join(f"{die['die']} {source} {die['wrong']} of {die['shown']}" for source, die in worst)
        others = f"; the other {len(rest)} real {'die' if len(rest) == 1 else 'dice'} {wrong_rest} of {shown_rest}" if rest else ""
        text = f"Real dice misread most (wrong of shown): {listed}{others}."
    else:
        text = f"No real die was misread ({len(items)} dice, {shown_rest} shown)."
    by_source: dict[str, list[int]] = {}
    for source, die in items:
        tally = by_source.setdefault(source.split("/")[0], [0, 0, 0])
        tally[0] += 1
        tally[1] += die["wrong"]
        tally[2] += die["shown"]
    sources = "; ".join(
        f"{name} ({count} {'die' if count == 1 else 'dice'}) {share_text(shown - wrong, shown)} of {shown:,} showings read right"
        for name, (count, wrong, shown) in sorted(by_source.items())
    )
    return f"{text} By where the dice come from: {sources}."


def measure(
    count: int = 60,
    sets: tuple[str, ...] = SETS,
    scanner: Scanner | None = None,
    pool: composite.DicePool | None = None,
    *,
    true_grid: bool = False,
    workers: int = 1,
) -> dict[str, Any]:
    """Read every set (``count`` photos each; on the true grids with ``true_grid``; in ``workers`` processes) and
    return their figures by set name.

    The composites set is skipped (with a note) when no real dice are available.

    Raises:
        ValueError: an unknown set, or workers with a scanner of the caller's.
    """
    if workers <= 1:
        scanner = scanner or Scanner()
    results: dict[str, Any] = {"count": count, "held_out_style": styles.HELD_OUT, "training_styles": list(styles.TRAINING_STYLES)}
    if true_grid:
        results["true_grid"] = True
    for name in sets:
        if name == "composites" or name in UNSEEN_COMPOSITES:
            pool = pool or composite.load_pool()
            if not pool.dice:
                results[name] = {"skipped": "no real dice: ../shared/realdata is absent"}
                continue
            results["real_dice"] = {"dice": len(pool.dice), "colour_values": len(pool.by_kind)}
        if name == "real_windows" and not composite.real_windows():
            results[name] = {"skipped": "no real windows: ../shared/realdata is absent"}
            continue
        results[name] = read_set(name, count, scanner, pool, true_grid=true_grid, workers=workers)
        print(f"{name}: {count} photos read in {results[name]['seconds']} s", file=sys.stderr, flush=True)
    return results


def _interval(figures: dict[str, Any], key: str) -> str:
    """`` (low-high%)``: the figure's 95% interval over the photos, or nothing for figures without one."""
    low_high = figures.get("intervals", {}).get(key)
    return f" ({interval_text(low_high)})" if low_high else ""


def markdown(results: dict[str, Any]) -> list[str]:
    """The figures as a markdown table, one row per set (ready for the README and the model card)."""
    lines = [
        "| set (N photos, read end to end from the photo) | cells right (95% interval) | windows entirely right (95% interval) | grids found: read / within 1/4 cell "
        "(of them turned) | wrong cells | wrong cells at >= 90% | wrong windows not flagged | right windows flagged |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name in SETS:
        r = results.get(name)
        if not r or "skipped" in r:
            continue
        sure = share_text(r["wrong_cells_sure"], r["wrong_cells"])
        turned = f" ({r['grid_turned']} turned)" if r.get("grid_turned") else ""
        lines.append(
            f"| {r['title']} ({r['photos']}) | {share_text(r['cells_right'], r['cells'])}{_interval(r, 'items_right')} "
            f"| {r['windows_right']}/{r['photos']}{_interval(r, 'boards_right')} "
            f"| {r['read']}/{r['photos']} / {r['grid_within_quarter_cell']}/{r['photos']}{turned} | {r['wrong_cells']} | {sure} "
            f"| {r['wrong_windows_unflagged']}/{r['photos'] - r['windows_right']} | {r['right_windows_flagged']}/{r['windows_right']} |"
        )
    return lines


UNKNOWN = (
    "Still unknown: accuracy on real phone photos of whole real windows (the project has none; the composites' dice "
    "are real, but their boards, tables, cameras and light are rendered; the re-photographed windows are real pixels "
    "of two boards, but their frames, tables and cameras are rendered), and how well one held-out style stands in for "
    "a real board of another design. The composites' real yellow dice come only from the two hejmsdz windows (the "
    "loose-dice photos have no yellow die with white pips; the cell model trains on loose dice turned yellow)."
)


def summary(results: dict[str, Any]) -> list[str]:
    """How the figures were measured, the table, and what they do not tell (markdown lines)."""
    count = results.get("count")
    dice = results.get("real_dice", {})
    lines = [
        f"Measured with `python -m models.sagrada.transfer` ({count} photos per set, seeds 9000000+, never used in training or "
        "calibration), each photo read end to end by the shipped scanner; a window is flagged when its `scan.review` says "
        f"`needed`; each interval resamples the photos ({BOOTSTRAP_DRAWS:,} bootstrap draws). Held-out style: "
        f"`{results.get('held_out_style')}` (a lacquered board with an arched top, glass down the "
        "right side, the name in script below, wide brown gaps, shaded prints, a spotlight), never in the training mix "
        f"(`make_dataset.STYLES`: {', '.join(results.get('training_styles', []))}); renders use the training mix's framings "
        "(close-ups, photos cut to the grid, off-centre crops) and camera-guide overlays."
        + (
            f" Close and steep: the held-out style at {STEEP_TILT[0]:.0f}-{STEEP_TILT[1]:.0f} degrees of tilt from any side, "
            "turned any way, in close-ups, photos cut close to the grid and off-centre crops in turn (seeds 9400000+)."
            if "steep" in results and "skipped" not in results["steep"]
            else ""
        )
        + (
            f" Composites: {dice['dice']} real dice ({dice['colour_values']} colour-values; the hejmsdz windows and the "
            "held-out half of the loose-dice photos) pasted into held-out-style windows on a table."
            if dice
            else ""
        )
        + (
            " Real windows re-photographed: the two real windows of `sagrada-hejmsdz` (a real board, its dice, light "
            "and camera, cut to the grid by their author, 160x128 px), each enlarged 4 times, set in a dark frame of "
            "random width and photographed on a table in the same framings and overlays. Their dice lie flat (a "
            "picture), where a real die stands a die's height up and the scanner cuts each cell half a die up, so steep "
            "photos of them understate the scanner on real boards."
            if "real_windows" in results and "skipped" not in results["real_windows"]
            else ""
        )
        + (f" Models: {results['models']}." if results.get("models") else ""),
        "",
        *markdown(results),
        "",
        *([misread, ""] if (misread := misread_dice_text(results.get("composites") or {})) else []),
        UNKNOWN,
    ]
    return lines


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Command line: run the benchmark, print its markdown table, write ``transfer.json``."""
    parser = CommandParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=240, help="photos per set (default 240)")
    parser.add_argument("--sets", default=",".join(SETS), help="comma-separated: " + ", ".join(SETS))
    parser.add_argument("--out", type=Path, default=HERE / "transfer.json")
    parser.add_argument("--workers", type=int, default=1, help="processes rendering and reading photos (default 1)")
    parser.add_argument("--models", default="", help="which models were read (kept in the JSON and the summary)")
    parser.add_argument(
        "--true-grid",
        action="store_true",
        help="read each photo on its true grid corners (the cells' loss alone; writes no transfer.json by default)",
    )
    args = parser.parse_args(argv)
    if args.true_grid and args.out == HERE / "transfer.json":
        args.out = HERE.parents[1] / "build" / "sagrada_transfer_true_grid.json"
        args.out.parent.mkdir(parents=True, exist_ok=True)
    if args.workers < 1:
        parser.error(f"--workers: expected 1 or more, got {args.workers}")
    results = measure(args.count, tuple(args.sets.split(",")), true_grid=args.true_grid, workers=args.workers)
    if args.models:
        results["models"] = args.models
    args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print("\n".join(summary(results)))
    for name in SETS:
        r = results.get(name)
        if r and "by_style" in r and len(r["by_style"]) > 1:
            print(
                f"{name} by style: "
                + ", ".join(
                    f"{s} {share_text(v['cells_right'], 20 * v['photos'])} cells, {v['windows_right']}/{v['photos']} windows"
                    for s, v in r["by_style"].items()
                )
            )
    return results


if __name__ == "__main__":
    main()
