"""The price octagon reader learns from the players' corrections too (issue #18: every head learns, the price digit included).

A reading keeps each building tile's octagon patches (``CellReading.part``), the review database stores
them beside the tile's crop, and ``tablescan adapt`` fits the octagon reader's type and price heads on
them as it fits the tile classifier's on the crops.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from scanner.adapt import (
    AdaptationError,
    AdaptedModel,
    adapt_model,
    decode_patches,
    encode_patches,
    examples_from_parts,
    part_reader,
)
from scanner.alhambra.octagon import PATCH_PX, PATCH_VIEWS, part_labels
from scanner.alhambra.tiles import PRICES
from scanner.model import load_model
from scoring.alhambra.palace import BUILDING_TYPES, CATALOGUE

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_images"
PALACES = [
    "alhambra_01_straight",
    "alhambra_02_straight",
    "alhambra_03_tilted",
    "alhambra_04_tilted",
    "alhambra_06_cluttered",
    "alhambra_05_rotated",
    "alhambra_07_cluttered",
]


def test_every_catalogue_tile_labels_its_octagon_with_its_type_and_printed_price() -> None:
    for tile in CATALOGUE:
        labels = part_labels(f"{tile.type}:{tile.walls}")
        twins = [t.price for t in CATALOGUE if (t.type, t.walls) == (tile.type, tile.walls)]
        assert labels["kind"] == tile.type
        assert labels.get("price") == (str(tile.price) if len(twins) == 1 else None)
    # the walls in any order, as a player may type them
    assert part_labels("garden:WSE") == part_labels("garden:ESW") == {"kind": "garden", "price": "6"}


def test_patches_round_trip_through_one_png_and_refuse_another_shape() -> None:
    rng = np.random.default_rng(0)
    patches = rng.integers(0, 256, (PATCH_VIEWS, PATCH_PX, PATCH_PX, 3), dtype=np.uint8)
    assert np.array_equal(decode_patches(encode_patches(patches), PATCH_VIEWS), patches)
    with pytest.raises(AdaptationError, match="expected 3 square patches side by side"):
        decode_patches(encode_patches(patches), 3)


@pytest.fixture(scope="module")
def scanned() -> list[tuple[str, list]]:
    """Each sample palace as the scanner reads it: its building tiles' readings (value, octagon patches)."""
    from scanner.pipeline import Scanner
    from tablescan.games import readers

    scanner = Scanner(readers=readers())
    palaces = []
    for name in PALACES:
        result = scanner.scan(SAMPLES / f"{name}.jpg", "alhambra")
        palaces.append((name, [r for r in result.cells if r.value != "fountain"]))
    return palaces


@pytest.mark.e2e
def test_a_reading_keeps_each_building_tiles_octagon_patches(scanned) -> None:
    """The patches kept are upright price octagons as the reader saw them: it reads each tile's own type from them."""
    model = load_model(part_reader("alhambra").model)
    for name, tiles in scanned:
        assert all(r.part is not None and r.part.shape == (PATCH_VIEWS, PATCH_PX, PATCH_PX, 3) for r in tiles), name
        examples = examples_from_parts(
            model, np.stack([r.part for r in tiles]), [r.value for r in tiles], part_reader("alhambra"), [0] * len(tiles)
        )
        kinds = np.asarray(examples.labels["kind"])
        read = np.argmax(examples.outputs["kind"], axis=1)
        assert np.mean(read == kinds) >= 0.9, name
        assert np.all(np.asarray(examples.outputs["present"]).reshape(-1) > 0), name  # an upright octagon in every patch


@pytest.mark.e2e
def test_the_octagon_reader_learns_a_set_whose_octagons_mean_other_types(scanned) -> None:
    """A printing whose octagon colours mean other types than ours: its corrected tiles teach the reader which.

    The players' set is played as if each type's octagon showed the next type's colour (its
    corrections say so); after four corrected palaces the fifth palace's octagons are read as that
    set's types, where the shipped reader reads none of them so.
    """
    model = load_model(part_reader("alhambra").model)
    shifted = {kind: BUILDING_TYPES[(i + 1) % len(BUILDING_TYPES)] for i, kind in enumerate(BUILDING_TYPES)}
    patches, values, groups = [], [], []
    for group, (_, tiles) in enumerate(scanned):
        for reading in tiles:
            kind, _, walls = reading.value.partition(":")
            patches.append(reading.part)
            values.append(f"{kind}:{walls}")
            groups.append(group)
    every = examples_from_parts(model, np.stack(patches), values, part_reader("alhambra"), groups)
    kind_index = {kind: i for i, kind in enumerate(BUILDING_TYPES)}
    truth = np.array([kind_index[shifted[BUILDING_TYPES[k]]] for k in every.labels["kind"]])
    taught = every.__class__(every.model, every.outputs, {"kind": truth}, every.groups, every.items, every.variants)
    train = np.flatnonzero(every.groups < 4)
    test = np.flatnonzero(every.groups == 4)
    fitted, report = adapt_model(model, taught.subset(train), temperatures={"kind": model.manifest.temperature_of("kind")})
    assert fitted is not None and [fit.head for fit in fitted.heads] == ["kind"], report.to_text()
    flat = np.stack(patches)[test // PATCH_VIEWS, test % PATCH_VIEWS]
    from scanner.model import image_batch

    shipped = np.argmax(model.run(image_batch(flat))["kind"], axis=1)
    adapted = np.argmax(AdaptedModel(model, fitted).run(image_batch(flat))["kind"], axis=1)
    assert np.mean(shipped == truth[test]) == 0.0
    assert np.mean(adapted == truth[test]) >= 0.9


@pytest.mark.e2e
def test_the_octagon_reader_learns_a_set_whose_digits_read_otherwise(scanned) -> None:
    """A digit face the shipped reader misreads the same way each time (here: every price read as the one below it):
    the corrected tiles teach the price head, which then reads a palace held out as that set's prices."""
    model = load_model(part_reader("alhambra").model)
    patches = np.stack([reading.part for _, tiles in scanned for reading in tiles])
    values = [reading.value for _, tiles in scanned for reading in tiles]
    groups = [group for group, (_, tiles) in enumerate(scanned) for _ in tiles]
    every = examples_from_parts(model, patches, values, part_reader("alhambra"), groups)
    price = np.asarray(every.labels["price"])
    shifted = np.where(price >= 0, (price + 1) % len(PRICES), -1)
    taught = every.__class__(every.model, every.outputs, {"price": shifted}, every.groups, every.items, every.variants)
    last = len(scanned) - 1
    fitted, report = adapt_model(
        model, taught.subset(np.flatnonzero(every.groups < last)), temperatures={"price": model.manifest.temperature_of("price")}
    )
    head = next(h for h in report.heads if h.head == "price")
    assert fitted is not None and head.kept and head.before < 0.1 and head.after >= 0.8, report.to_text()
    test = np.flatnonzero((every.groups == last) & (price >= 0))
    from scanner.model import image_batch

    flat = patches[test // PATCH_VIEWS, test % PATCH_VIEWS]
    shipped = np.argmax(model.run(image_batch(flat))["price"], axis=1)
    adapted = np.argmax(AdaptedModel(model, fitted).run(image_batch(flat))["price"], axis=1)
    assert np.mean(shipped == shifted[test]) == 0.0 and np.mean(adapted == shifted[test]) >= 0.6


def _corrected_store(tmp_path: Path):
    """A review database holding two sample palaces scanned and corrected to their documents, as the screen stores them."""
    from tablescan.adapt import read_scans_folder, store_corrected_scans
    from tablescan.review.db import Store

    folder = tmp_path / "scans"
    folder.mkdir()
    for name in PALACES[:2]:
        shutil.copy(SAMPLES / f"{name}.jpg", folder / f"{name}.jpg")
        shutil.copy(SAMPLES / f"{name}.json", folder / f"{name}.json")
    store = Store(tmp_path / "check.sqlite3")
    store_corrected_scans(store, read_scans_folder(folder))
    return store


@pytest.mark.e2e
def test_corrections_store_the_octagon_patches_and_adapt_reads_them_back(tmp_path) -> None:
    """Scanned into the review database as the screen scans: each building tile's example holds its octagon patches,
    labelled by the tile's corrected value, and ``stored_examples`` gives the octagon reader its examples."""
    from tablescan.adapt import stored_examples

    store = _corrected_store(tmp_path)
    rows = store.examples(("alhambra",))
    buildings = [row for row in rows if row["label"] not in ("", "fountain", None)]
    assert buildings and all(row["part"] is not None for row in buildings)
    assert all(row["part"] is None for row in rows if row["label"] in ("", "fountain"))
    sets, _ = stored_examples(store)
    octagons = sets[part_reader("alhambra").model]
    assert len(np.unique(octagons.item_ids)) == len(buildings) and len(np.unique(octagons.groups)) == 2
    kinds = [BUILDING_TYPES[k] for k in octagons.labels["kind"][::PATCH_VIEWS]]
    assert kinds == [row["label"].partition(":")[0] for row in buildings]


def test_where_the_adapted_classifier_loses_a_palace_what_the_octagon_reader_learnt_still_reads_it() -> None:
    """The fallback of a reader adapted in both models is the reader with the octagon reader's adaptation alone."""
    from scanner.adapt import Adaptation, ModelAdaptation, adapt_reader
    from scanner.errors import BoardNotFoundError
    from scanner.model import Manifest, OnnxModel

    class Toy(OnnxModel):
        def __init__(self, name: str) -> None:
            self.manifest = Manifest(name, "1", name[0] * 64, ("a",), (1, 3, 8, 8), 1.0, ())
            self.output_names = ["a"]
            self.path = f"toy/{name}.onnx"

    class Reader:
        game = "alhambra"

        def __init__(self) -> None:
            self.tiles_model, self.octagon_model = Toy("alhambra_tiles"), Toy("alhambra_octagon")

        def read(self, photo, *, corners=None, timings=None):
            if not isinstance(self.tiles_model, Toy):  # the adapted classifier finds no palace
                raise BoardNotFoundError("photo: no board")
            box = [[0, 0], [9, 0], [9, 9], [0, 9]]
            return type("Reading", (), {"octagon_adapted": not isinstance(self.octagon_model, Toy), "cells": (None,) * 5, "corners": box})()

    tiles = ModelAdaptation("alhambra_tiles", "a" * 64, ("embedding",), ())
    octagon = ModelAdaptation("alhambra_octagon", "a" * 64, ("kind",), ())
    assert adapt_reader(Reader(), Adaptation((tiles, octagon))).read("photo").octagon_adapted
    assert not adapt_reader(Reader(), Adaptation((tiles,))).read("photo").octagon_adapted  # nothing learnt beneath: shipped


def test_the_classifier_is_judged_end_to_end_beside_the_octagon_reader_already_kept(monkeypatch) -> None:
    """Both readings of the never-worse check use the octagon reader's kept adaptation; only the classifier's differs."""
    import tablescan.adapt as adapt
    from scanner.adapt import ModelAdaptation

    truth = {"0,0": "fountain", "1,0": "tower:N"}
    boards = [{"photo": Path("p.jpg"), "name": "p.jpg", "truth": truth, "corners": None}]
    seen = []

    def read(scanner, game, board):
        seen.append(scanner.factories[game]())
        return dict(truth), None, 0

    monkeypatch.setattr(adapt, "_read_board", read)
    monkeypatch.setattr(
        adapt,
        "adapt_reader",
        lambda reader, adaptation, **options: (reader, tuple(m.model for m in adaptation.models), options.get("fallback")),
    )
    monkeypatch.setattr(adapt, "readers", lambda: {"alhambra": lambda: "shipped"})
    octagon = ModelAdaptation("alhambra_octagon", "8" * 64, ("kind",), ())
    tiles = ModelAdaptation("alhambra_tiles", "7" * 64, ("embedding",), ())
    check = adapt.check_end_to_end(boards, "alhambra", tiles, beside=(octagon,))
    beneath = ("shipped", ("alhambra_octagon",), None)
    # the comparison reads through a reader that recalls its readings; the adapted reader falls back to that one
    assert isinstance(seen[0], adapt.RecallingReader) and seen[0].reader == beneath
    assert seen[1] == (beneath, ("alhambra_tiles",), seen[0]) and check.kept


@pytest.mark.e2e
def test_exported_corrections_keep_the_octagon_patches_and_adapt_reads_them_back(tmp_path) -> None:
    from tablescan.adapt import exported_examples, stored_examples
    from tablescan.corrections import export_corrections

    store = _corrected_store(tmp_path)
    index = export_corrections(store, tmp_path / "out")
    parts = [item["part"] for item in index["examples"] if item["part"]]
    assert parts and all((tmp_path / "out" / part).is_file() for part in parts)
    name = part_reader("alhambra").model
    exported, stored = exported_examples(tmp_path / "out")[name], stored_examples(store)[0][name]
    assert np.array_equal(exported.labels["kind"], stored.labels["kind"]) and np.array_equal(
        exported.labels["price"], stored.labels["price"]
    )
    assert np.allclose(exported.outputs["kind"], stored.outputs["kind"], atol=1e-5)


def test_a_palace_read_with_adapted_models_names_them_so() -> None:
    """A scan says which models it read with; with a profile's adaptation, the adapted ones say so."""
    from scanner.adapt import Adaptation, ModelAdaptation, adapt_reader
    from scanner.alhambra.reader import make_reader

    reader = make_reader()
    octagon = reader.octagon_model.manifest
    adapted = adapt_reader(reader, Adaptation((ModelAdaptation(octagon.name, octagon.sha256, ("kind",), ()),)))
    assert f"{octagon.name} {octagon.version}+adapted" in adapted.model_label
    assert "+adapted" not in reader.model_label


@pytest.mark.e2e
def test_a_damaged_octagon_patch_is_left_out_with_a_note_and_its_crop_kept(tmp_path) -> None:
    from tablescan.adapt import stored_examples

    store = _corrected_store(tmp_path)
    before, _ = stored_examples(store)
    with store.transaction() as conn:
        damaged = conn.execute("SELECT id FROM examples WHERE part IS NOT NULL ORDER BY id LIMIT 1").fetchone()["id"]
        conn.execute("UPDATE examples SET part = ? WHERE id = ?", (b"not a png", damaged))
    sets, notes = stored_examples(store)
    name = part_reader("alhambra").model
    assert len(np.unique(sets[name].item_ids)) == len(np.unique(before[name].item_ids)) - 1
    assert len(sets["alhambra_tiles"]) == len(before["alhambra_tiles"])
    assert notes == ["1 stored part patches (a tile's price octagon) could not be decoded and were left out; their crops were not"]


def test_the_comparison_reader_reads_each_photo_once_and_recalls_it() -> None:
    """An adapted palace reader reads the photo with the compared models again to count tiles: recalled, not re-read."""
    from scanner.errors import BoardNotFoundError
    from scanner.photo import Photo
    from tablescan.adapt import RecallingReader

    class Counting:
        game = "alhambra"

        def __init__(self) -> None:
            self.calls = 0

        def read(self, photo, *, corners=None, timings=None):
            self.calls += 1
            if photo.name == "none.jpg":
                raise BoardNotFoundError("none.jpg: no palace")
            return ("reading", photo.name, None if corners is None else tuple(corners))

    inner = Counting()
    recall = RecallingReader(inner)
    image = np.zeros((40, 60, 3), np.uint8)
    first = recall.read(Photo.from_array(image, name="a.jpg"))
    assert recall.read(Photo.from_array(image.copy(), name="a.jpg")) is first and inner.calls == 1
    image[0, 0] = 1  # other pixels: another photo
    recall.read(Photo.from_array(image, name="a.jpg"))
    recall.read(Photo.from_array(image, name="a.jpg"), corners=(1, 2))  # given corners are always read
    assert inner.calls == 3
    for _ in range(2):
        with pytest.raises(BoardNotFoundError, match="no palace"):
            recall.read(Photo.from_array(image, name="none.jpg"))
    assert inner.calls == 4 and recall.game == "alhambra"
