"""Adaptation from corrections, with a known answer (prints figures; not a test).

1. A "different game copy" of Sagrada: the renderer with shifted die and print colours (orange reds,
   mustard yellows, teal greens, indigo blues, magenta purples), dice with dark pips and a flatter,
   less marbled body, light value prints on the pattern card, photographed at one table: one lamp
   (light fall-off, shadows, glare) and one phone (white balance, colour shift, gamma, blur, noise)
   for every photo, plus warm tungsten light over it (camera pose, clutter and table still vary). Two photos of it are scanned, corrected (their true windows typed
   into a review database) and ``tablescan adapt`` runs on that database, exactly as a player would;
   then 50 more photos of the copy are scanned with the shipped models and with the adapted profile,
   the whole pipeline (board finder included; a photo whose board is not found counts 0 cells right).
2. The real photos in ``../shared/realdata/sagrada-hejmsdz`` (two windows already cut to the grid):
   adapt on one window, read the other, both ways.

Run: .venv/bin/python tests/benchmarks/bench_adapt.py [--test 50] [--adapt 2] [--embedding-only]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # run as a script from any folder

from models.sagrada import render as art  # noqa: E402
from scanner.adapt import (  # noqa: E402
    CROP_COLOUR,
    Adaptation,
    ExampleSet,
    adapt_model,
    adapt_reader,
    choose_basis,
    classifier_manifest,
    examples_from_crops,
    feature_matrix,
    fit_head,
    scan_examples,
)
from scanner.adapt import fitting as adapt_fitting  # noqa: E402
from scanner.errors import BoardNotFoundError  # noqa: E402
from scanner.model import load_model  # noqa: E402
from scanner.sagrada.cells import grid_image_crops  # noqa: E402

REALDATA = ROOT.parent / "shared" / "realdata" / "sagrada-hejmsdz"
TEST_SEEDS = range(7_300_000, 7_300_400)
ADAPT_SEEDS = range(7_200_000, 7_200_100)

OTHER_DICE = {
    "R": ((225, 80, 35), (245, 105, 55)),
    "Y": ((195, 150, 30), (215, 170, 50)),
    "G": ((20, 140, 120), (45, 165, 145)),
    "B": ((65, 55, 170), (85, 75, 195)),
    "P": ((185, 50, 140), (210, 75, 165)),
}
OTHER_PRINT = {
    "R": ((200, 90, 60), (220, 110, 80)),
    "Y": ((205, 170, 70), (225, 190, 90)),
    "G": ((50, 150, 130), (70, 170, 150)),
    "B": ((80, 80, 170), (100, 100, 190)),
    "P": ((180, 80, 150), (200, 100, 170)),
}
TUNGSTEN = np.array([1.12, 0.97, 0.74])
# the players' own table: one lamp and one phone for every photo of the copy (seeds of the scene's
# light and camera-finish draws); False draws them per photo, as the training renders do
FIXED_LIGHT = True
LAMP_SEED, PHONE_SEED = 1, 2


@contextlib.contextmanager
def other_copy():
    """Patch the Sagrada renderer into another printing of the game (restored on exit)."""
    saved = (art.DIE_COLOURS, art.PRINT_COLOURS, art._draw_pips, art._noise)
    draw_pips, noise = art._draw_pips, art._noise

    def pips(face, value, colour, spread, radius, jitter, rng):
        # dark pips on dice, light pips on the card's value prints: the inverse of the shipped look
        draw_pips(face, value, tuple(int(255 - c) for c in colour), spread, radius * 1.1, jitter, rng)

    def flatter(rng, size, cells):
        return 0.5 + 0.3 * (noise(rng, size, cells) - 0.5)  # less marbled bodies, flatter wood

    scene = art.scene
    saved_scene = (scene._light, scene._finish)
    light, finish = scene._light, scene._finish

    def lamp(image, rng):  # one lamp: the same fall-off, shadows and glare in every photo
        return light(image, np.random.default_rng(LAMP_SEED))

    def phone(image, rng):  # one phone: the same white balance, colour shift, gamma, blur and noise
        return finish(image, np.random.default_rng(PHONE_SEED))

    art.DIE_COLOURS, art.PRINT_COLOURS, art._draw_pips, art._noise = OTHER_DICE, OTHER_PRINT, pips, flatter
    if FIXED_LIGHT:
        scene._light, scene._finish = lamp, phone
    try:
        yield
    finally:
        art.DIE_COLOURS, art.PRINT_COLOURS, art._draw_pips, art._noise = saved
        scene._light, scene._finish = saved_scene


def render_copy(seed: int):
    """One photo of the other copy under warm light: (RGB image, truth window rows, grid corners)."""
    with other_copy():
        sample = art.render(seed)
    image = sample.image_rgb.astype(np.float32) / 255.0
    image = np.clip((image**1.12) * TUNGSTEN, 0, 1)
    rows = sample.label["players"][0]["window"]
    return (image * 255 + 0.5).astype(np.uint8), rows, np.asarray(sample.label["render"]["corners"], float)


def cell_accuracy(read_rows: list[str], truth_rows: list[str]) -> tuple[int, int]:
    """(cells right, cells) for one window."""
    read = [v for row in read_rows for v in row.split()]
    truth = [v for row in truth_rows for v in row.split()]
    return sum(a == b for a, b in zip(read, truth)), len(truth)


def jpeg(image: np.ndarray) -> bytes:
    import cv2

    return cv2.imencode(".jpg", image[:, :, ::-1], [cv2.IMWRITE_JPEG_QUALITY, 92])[1].tobytes()


def synthetic(test_count: int, adapt_count: int) -> dict:
    """The different-copy benchmark through the real loop: review database -> tablescan adapt -> profile."""
    from calibration.profile import load_profile
    from scanner.pipeline import Scanner
    from tablescan.adapt import adapt_profile
    from tablescan.review.board import readings_from_scan
    from tablescan.review.db import Store

    work = Path(tempfile.mkdtemp(prefix="bench_adapt_"))
    os.environ["TABLESCAN_PROFILE_DIR"] = str(work / "profiles")
    store = Store(work / "review.sqlite3")
    shipped = Scanner()
    started = time.perf_counter()
    photos = [render_copy(seed) for seed in ADAPT_SEEDS[:adapt_count]]
    tests = [render_copy(seed) for seed in TEST_SEEDS[:test_count]]
    print(f"rendered {adapt_count} + {test_count} photos of the other copy in {time.perf_counter() - started:.0f} s", flush=True)

    corrected = 0
    for index, (image, truth, _corners) in enumerate(photos):
        data = jpeg(image)
        game = store.create_game("sagrada", f"other copy {index}", {}, [("Ana", {})])
        player = store.players(game)[0]["id"]
        record = store.add_photo(hashlib.sha256(data).hexdigest(), ".jpg", data, "image/jpeg", image.shape[1::-1], f"copy{index}.jpg")
        store.attach_photo(game, player, record.id)
        result = shipped.scan(data, "sagrada", name=f"copy{index}.jpg")
        scanned = result.document["players"][0]
        # as the review screen does: the readings, and each cell's crop as a labelled example
        store.store_scan(
            game,
            player,
            scanned["scan"]["corners"],
            scanned["scan"]["model"],
            readings_from_scan("sagrada", scanned),
            examples=scan_examples(result, "sagrada", classifier_manifest(shipped, "sagrada")),
        )
        for r, row in enumerate(truth):
            for c, value in enumerate(row.split()):
                corrected += store.correct_cell(game, player, f"{r},{c}", value)
    started = time.perf_counter()
    outcome = adapt_profile("othercopy", store=store)
    adapt_seconds = time.perf_counter() - started
    print(outcome.to_text(), flush=True)
    print(f"tablescan adapt on {adapt_count} corrected photos ({corrected} cells corrected): {adapt_seconds:.1f} s", flush=True)
    adapted = Scanner(profile=load_profile("othercopy")) if outcome.saved else shipped

    figures = {}
    for label, scanner in (("shipped", shipped), ("adapted", adapted)):
        right = total = boards = missed = 0
        seconds = []
        for index, (image, truth, _corners) in enumerate(tests):
            t0 = time.perf_counter()
            try:
                window = scanner.scan(jpeg(image), "sagrada", name=f"test{index}.jpg").document["players"][0]["window"]
            except BoardNotFoundError:
                window, missed = ["? ? ? ? ?"] * 4, missed + 1
            seconds.append(time.perf_counter() - t0)
            good, count = cell_accuracy(window, truth)
            right, total, boards = right + good, total + count, boards + (good == count)
        figures[label] = {
            "cells": right / total,
            "boards": boards / len(tests),
            "median_scan_s": float(np.median(seconds)),
            "boards_not_found": missed,
        }
        print(
            f"{label:>8}: cells right {100 * right / total:6.2f}% ({right}/{total}), boards entirely right "
            f"{100 * boards / len(tests):5.1f}%, boards not found {missed}, median scan {1000 * np.median(seconds):.0f} ms",
            flush=True,
        )
    figures["corrections"] = corrected
    figures["adapt_seconds"] = adapt_seconds
    figures["kept"] = list(outcome.kept_models)
    figures["report"] = [r.to_json() for r in outcome.reports]
    return figures


def _read_grid(reader, crops: np.ndarray) -> list[str]:
    from scanner.sagrada.reader import cell_text, decode_window

    decoded = decode_window(reader.classify(crops))
    return [cell_text(s) for s in decoded.states]


def real() -> dict:
    """Adapt on one real window, read the other (both ways)."""
    from PIL import Image

    from scanner.sagrada.reader import make_reader

    if not REALDATA.is_dir():
        print(f"{REALDATA}: absent, real-photo part skipped")
        return {}
    labels = json.loads((REALDATA / "labels.json").read_text())["images"]
    boards = {}
    for name, rows in labels.items():
        with Image.open(REALDATA / name) as image:
            crops = grid_image_crops(np.asarray(image.convert("RGB")))
        boards[name] = (crops, [v or "." for row in rows for v in row])
    model = load_model("sagrada_dice")
    reader = make_reader()
    figures = {}
    for train, test in (("board1.jpg", "board2.jpg"), ("board2.jpg", "board1.jpg")):
        crops, values = boards[train]
        examples = examples_from_crops(model, crops, values, "sagrada", [0] * len(values))
        fitted, report = adapt_model(model, examples)
        print(f"adapt on {train}: " + report.to_text().replace("\n", "\n  "))
        # what the same fit does when kept regardless of its (tiny, 7-cell) held-out check
        forced = force_fit(model, examples)
        test_crops, truth = boards[test]
        before = np.mean([a == b for a, b in zip(_read_grid(reader, test_crops), truth)])
        gated = (
            before
            if fitted is None
            else np.mean([a == b for a, b in zip(_read_grid(adapt_reader(reader, Adaptation((fitted,))), test_crops), truth)])
        )
        always = np.mean([a == b for a, b in zip(_read_grid(adapt_reader(reader, Adaptation((forced,))), test_crops), truth)])
        figures[f"{train}->{test}"] = {
            "before": float(before),
            "after": float(gated),
            "kept": fitted is not None,
            "after_if_forced": float(always),
        }
        print(
            f"  read {test}: cells right {100 * before:.1f}% shipped -> {100 * gated:.1f}% adapted"
            f" ({'kept' if fitted is not None else 'not kept'}); {100 * always:.1f}% if kept regardless"
        )
    return figures


def force_fit(model, examples: ExampleSet):
    """Fit every head on all examples (no held-out gate), as a what-if."""
    from scanner.adapt import ModelAdaptation

    heads = dict(model.manifest.heads)
    basis = choose_basis(examples.outputs.keys(), heads)
    x = feature_matrix(examples.outputs, basis)
    fits = []
    for head in sorted(examples.labels):
        y = examples.labels[head]
        rows = np.flatnonzero(y >= 0)
        fits.append(
            fit_head(head, heads[head], x[rows], examples.outputs[head][rows], y[rows], temperature=model.manifest.temperature, l2=0.1)
        )
    return ModelAdaptation(model.manifest.name, model.manifest.sha256, basis, tuple(fits))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--test", type=int, default=50, help="photos of the other copy to read (default 50)")
    parser.add_argument("--adapt", type=int, default=2, help="corrected photos to adapt on (default 2)")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    parser.add_argument("--varying-light", action="store_true", help="a new lamp and phone for every photo")
    parser.add_argument(
        "--embedding-only", action="store_true", help="fit on the model's embedding alone, without the crops' colour (the earlier method)"
    )
    args = parser.parse_args()
    if args.embedding_only:
        fitting_basis = adapt_fitting.fitting_basis
        adapt_fitting.fitting_basis = lambda names, heads: fitting_basis([n for n in names if n != CROP_COLOUR], heads)
    global FIXED_LIGHT
    FIXED_LIGHT = not args.varying_light
    model = load_model("sagrada_dice")
    print(f"model {model.manifest.label}, outputs {model.output_names}")
    figures = {"model": model.manifest.label, "synthetic": synthetic(args.test, args.adapt), "real": real()}
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
