"""Labelled examples stored with the game database: a scan stores each cell's crop, the players' value
labels it, a rescan replaces it, and an old database is migrated and still adapts."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from scanner.adapt import AdaptedModel, decode_crop, encode_crop, profile_adaptation
from scanner.model import Manifest, OnnxModel
from scanner.reading import CellReading
from tablescan.review.db import LATEST_VERSION, MIGRATIONS, Store

ROOT = Path(__file__).resolve().parents[2]
SAGRADA_HEADS = (
    ("die", ("empty", "die")),
    ("colour", ("none", "R", "Y", "G", "B", "P")),
    ("value", ("none", "1", "2", "3", "4", "5", "6")),
)
SHIPPED_LOOK = {"R": (200, 30, 30), "Y": (230, 200, 40), "G": (40, 150, 60), "B": (30, 80, 200), "P": (120, 40, 140)}
# another printing: yellow reads as green, purple as red, blue as purple
OTHER_LOOK = {"R": (225, 125, 45), "Y": (120, 200, 60), "G": (40, 140, 150), "B": (110, 60, 200), "P": (170, 60, 110)}


class ToyDice(OnnxModel):
    """A stand-in for sagrada_dice: colour from the crop centre's mean colour, die and value fixed."""

    def __init__(self) -> None:
        self.manifest = Manifest("sagrada_dice", "1", "5" * 64, ("empty", "die"), (1, 3, 48, 48), 1.0, SAGRADA_HEADS)
        self.output_names = ["die", "colour", "value", "embedding"]
        self.input_name = "input"
        self.path = "toy/sagrada_dice/model.onnx"

    def run(self, batch: np.ndarray) -> dict[str, np.ndarray]:
        centre = batch[:, :, 16:32, 16:32].mean(axis=(2, 3)) * 255.0
        protos = np.array([(128, 128, 128)] + [SHIPPED_LOOK[c] for c in "RYGBP"], np.float64)
        colour = -((centre[:, None, :] - protos[None]) ** 2).sum(axis=2) / 800.0
        n = len(batch)
        return {
            "die": np.tile(np.float32([0, 2]), (n, 1)),
            "colour": colour.astype(np.float32),
            "value": np.tile(np.float32([0, 0, 0, 2, 0, 0, 0]), (n, 1)),
            "embedding": (centre / 255.0).astype(np.float32),
        }


def crop_of(colour: str, look: dict, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    crop = np.full((48, 48, 3), 20.0)
    crop[8:40, 8:40] = look[colour]
    return np.clip(crop + rng.normal(0, 10, crop.shape), 0, 255).astype(np.uint8)


def board(seed: int) -> list[str]:
    """A 4x5 window of dice (value 3), colours drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    return ["RYGBP"[int(k)] + "3" for k in rng.integers(0, 5, 20)]


def square(r: int, c: int) -> list[list[float]]:
    return [[c * 10.0, r * 10.0], [c * 10.0 + 10, r * 10.0], [c * 10.0 + 10, r * 10.0 + 10], [c * 10.0, r * 10.0 + 10]]


def read(value: str) -> str:
    """What the toy model reads for a die of the other copy (its colour misread)."""
    centre = np.array(OTHER_LOOK[value[0]], np.float64)
    return min(SHIPPED_LOOK, key=lambda k: ((np.array(SHIPPED_LOOK[k]) - centre) ** 2).sum()) + value[1]


class FakeScanner:
    """Reads photo ``photo<k>.png`` as the window ``board(k)`` of the other copy; counts its scans."""

    def __init__(self, model: ToyDice) -> None:
        self.model = model
        self.scans = 0

    def reader(self, game: str):
        return SimpleNamespace(dice=self.model)

    def scan(self, source, game, *, corners=None, name=None):
        self.scans += 1
        seed = int(Path(str(source)).stem.split("photo")[-1]) if "photo" in Path(str(source)).stem else 0
        cells = []
        for index, value in enumerate(board(seed)):
            r, c = divmod(index, 5)
            cells.append(
                CellReading(
                    (r, c), read(value), 0.6, tuple(map(tuple, square(r, c))), (), crop_of(value[0], OTHER_LOOK, seed * 100 + index)
                )
            )
        return SimpleNamespace(cells=tuple(cells), photo=SimpleNamespace(scale=1.0))


def scanned_examples(seed: int, model: ToyDice) -> tuple[list[dict], list[dict]]:
    """The readings and examples the review screen stores for photo ``seed``."""
    from scanner.adapt import scan_examples

    result = FakeScanner(model).scan(f"photo{seed}.png", "sagrada")
    readings = [
        {"cell": f"{r},{c}", "value": cell.value, "confidence": 0.6, "polygon": square(r, c)}
        for cell in result.cells
        for r, c in [cell.cell]
    ]
    return readings, scan_examples(result, "sagrada", model.manifest)


def add_photo(store: Store, seed: int):
    data = encode_crop(np.full((40, 50, 3), seed, np.uint8))  # a small real PNG
    return store.add_photo(hashlib.sha256(data).hexdigest(), ".png", data, "image/png", (50, 40), f"photo{seed}.png")


CORNERS = [[0, 0], [50, 0], [50, 40], [0, 40]]


def scanned_game(tmp_path, toy, names: list[str], seeds: list[int]) -> tuple[Store, int, list[int]]:
    """A review database with one Sagrada game whose players each scanned one toy photo (``seeds[k]`` for player k)."""
    store = Store(tmp_path / "review.sqlite3")
    game = store.create_game("sagrada", "evening", {}, [(name, {}) for name in names])
    ids = []
    for player, seed in zip(store.players(game), seeds):
        store.attach_photo(game, player["id"], add_photo(store, seed).id)
        readings, examples = scanned_examples(seed, toy)
        store.store_scan(game, player["id"], CORNERS, "dice", readings, examples=examples)
        ids.append(player["id"])
    return store, game, ids


@pytest.fixture
def toy(monkeypatch, tmp_path):
    model = ToyDice()
    monkeypatch.setattr("scanner.model.load_model", lambda name: model)
    monkeypatch.setenv("TABLESCAN_PROFILE_DIR", str(tmp_path / "profiles"))
    return model


def test_crops_round_trip_through_png() -> None:
    crop = crop_of("R", OTHER_LOOK, 1)
    assert np.array_equal(decode_crop(encode_crop(crop)), crop)
    with pytest.raises(Exception, match="not a readable PNG crop"):
        decode_crop(b"nope")


def test_a_scan_stores_one_example_per_cell_and_a_rescan_replaces_them(tmp_path, toy) -> None:
    store = Store(tmp_path / "review.sqlite3")
    game = store.create_game("sagrada", "evening", {}, [("Ana", {})])
    ana = store.players(game)[0]["id"]
    photo = add_photo(store, 1)
    store.attach_photo(game, ana, photo.id)
    readings, examples = scanned_examples(1, toy)
    store.store_scan(game, ana, CORNERS, "dice", readings, examples=examples)
    rows = store.examples()
    assert len(rows) == 20
    first = rows[0]
    assert (first["cell"], first["photo_id"], first["read_value"], first["label"]) == (
        "0,0",
        photo.id,
        readings[0]["value"],
        readings[0]["value"],
    )
    assert first["model"] == toy.manifest.label and first["model_sha256"] == "5" * 64 and first["origin"] == "scan"
    assert np.array_equal(decode_crop(first["crop"]), crop_of(board(1)[0][0], OTHER_LOOK, 100))
    # a rescan of the same photo (new corners) replaces its examples, it does not add to them
    _, again = scanned_examples(1, toy)
    again = [{**e, "read": "G6"} for e in again]
    store.store_scan(game, ana, [[1, 1], [50, 0], [50, 40], [0, 40]], "dice", readings, keep_corrected=True, examples=again)
    rows = store.examples()
    assert len(rows) == 20 and {r["read_value"] for r in rows} == {"G6"}


def test_a_correction_changes_the_label_adapt_uses_and_a_new_photo_freezes_the_old(tmp_path, toy) -> None:
    from tablescan.adapt import stored_examples

    store, game, (ana,) = scanned_game(tmp_path, toy, ["Ana"], [1])
    readings, _ = scanned_examples(1, toy)  # what that scan read
    colours = ("none",) + tuple("RYGBP")

    def colour_of_first() -> str:
        sets, _ = stored_examples(store, load=lambda name: toy)
        examples = sets["sagrada_dice"]
        return colours[int(examples.labels["colour"][np.flatnonzero(examples.as_read)[0]])]

    assert colour_of_first() == readings[0]["value"][0]  # confirmed: the reading left as it was
    store.correct_cell(game, ana, "0,0", "P5")
    assert colour_of_first() == "P"
    store.correct_cell(game, ana, "0,0", ".")
    sets, _ = stored_examples(store, load=lambda name: toy)
    # an empty cell: no die; its colour and value heads read the pattern card's print, unknown without a card
    labels = sets["sagrada_dice"].labels
    assert (labels["die"][0], labels["colour"][0], labels["value"][0]) == (0, -1, -1)
    # with the player's card known (Virtus: a 4 printed at r1c1, green at r1c5), the print under each empty cell
    store.update_player(game, ana, fields={"pattern": "Virtus"})
    store.correct_cell(game, ana, "0,4", ".")
    sets, _ = stored_examples(store, load=lambda name: toy)
    examples = sets["sagrada_dice"]
    first, fifth = np.flatnonzero(examples.as_read)[[0, 4]]
    assert (examples.labels["die"][first], examples.labels["colour"][first], examples.labels["value"][first]) == (0, 0, 4)
    assert (examples.labels["die"][fifth], examples.labels["colour"][fifth], examples.labels["value"][fifth]) == (0, 3, 0)
    # a new photo of Ana's board: the first photo's examples keep the labels they had
    store.correct_cell(game, ana, "0,0", "B2")
    store.attach_photo(game, ana, add_photo(store, 2).id)
    readings2, examples2 = scanned_examples(2, toy)
    store.store_scan(game, ana, CORNERS, "dice", readings2, examples=examples2)
    store.correct_cell(game, ana, "0,0", "Y1")
    rows = store.examples()
    assert len(rows) == 40
    assert [(r["photo_id"], r["label"], r["source"]) for r in rows if r["cell"] == "0,0"] == [(1, "B2", "frozen"), (2, "Y1", "corrected")]


def test_adapt_learns_from_the_stored_crops_without_reading_photos_again(tmp_path, toy) -> None:
    from tablescan.adapt import adapt_profile

    store, game, players = scanned_game(tmp_path, toy, [f"P{k}" for k in range(3)], [0, 1, 2])
    for k, player in enumerate(players):
        store.correct_cells(game, player, [(f"{i // 5},{i % 5}", v) for i, v in enumerate(board(k))])
    scanner = FakeScanner(toy)
    outcome = adapt_profile("mine", store=store, scanner=scanner, load=lambda name: toy)
    assert scanner.scans == 0  # every crop came from the database
    assert outcome.saved is not None and "sagrada_dice" in outcome.kept_models
    adapted = AdaptedModel(toy, profile_adaptation(__import__("calibration.profile").profile.load_profile("mine")).model("sagrada_dice"))
    crops = np.stack([crop_of(c, OTHER_LOOK, 9000 + i) for i, c in enumerate("RYGBP" * 4)])
    batch = np.ascontiguousarray(crops.transpose(0, 3, 1, 2), dtype=np.float32) / 255.0
    truth = np.array([" RYGBP".index(c) for c in "RYGBP" * 4])
    assert np.mean(np.argmax(toy.run(batch)["colour"], 1) == truth) < 0.5
    assert np.mean(np.argmax(adapted.run(batch)["colour"], 1) == truth) == 1.0


def _version_2_database(path: Path) -> None:
    """A review database as tablescan wrote it before examples were stored: 3 scanned, corrected boards."""
    photos = path.with_name(path.stem + "-photos")
    photos.mkdir(parents=True)
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        for _version, statements in MIGRATIONS[:2]:
            for statement in statements:
                conn.execute(statement)
        conn.execute("INSERT INTO schema_version VALUES (2)")
        conn.execute("INSERT INTO games VALUES (1, 'sagrada', 'old evening', '{}', 't', 't')")
        for k in range(3):
            data = f"photo {k}".encode()
            sha = hashlib.sha256(data).hexdigest()
            (photos / f"photo{k}.png").write_bytes(data)
            conn.execute("INSERT INTO photos VALUES (?, ?, ?, 'photo.png', 'image/png', 50, 40, 7, 't')", (k + 1, sha, f"photo{k}.png"))
            conn.execute(
                "INSERT INTO players VALUES (?, 1, ?, ?, '{}', ?, '[[0,0],[50,0],[50,40],[0,40]]', 'dice v1')", (k + 1, k, f"P{k}", k + 1)
            )
            for index, value in enumerate(board(k)):
                r, c = divmod(index, 5)
                conn.execute(
                    "INSERT INTO readings VALUES (?, ?, ?, 0.6, ?, 'corrected', 't')", (k + 1, f"{r},{c}", value, json.dumps(square(r, c)))
                )
                conn.execute(
                    "INSERT INTO corrections (player_id, cell, old_value, new_value, model, photo_id, created_at) "
                    "VALUES (?, ?, ?, ?, 'dice v1', ?, 't')",
                    (k + 1, f"{r},{c}", read(value), value, k + 1),
                )


def _dump(path: Path, tables: tuple[str, ...]) -> dict:
    with sqlite3.connect(path) as conn:
        return {t: conn.execute(f"SELECT * FROM {t} ORDER BY rowid").fetchall() for t in tables}


def test_an_old_database_is_migrated_keeps_everything_and_adapts(tmp_path, toy) -> None:
    from tablescan.adapt import adapt_profile

    path = tmp_path / "old.sqlite3"
    _version_2_database(path)
    tables = ("games", "photos", "players", "readings", "corrections")
    before = _dump(path, tables)
    store = Store(path)
    assert store.schema_version() == LATEST_VERSION
    before = {**before, "readings": [(*row, None) for row in before["readings"]]}
    # games and players gained a column each (deleted / removed, #19), not set for what was there
    before = {**before, "games": [(*row, None) for row in before["games"]], "players": [(*row, None) for row in before["players"]]}
    after = _dump(path, tables)
    # nothing the players entered is lost; readings gained a column (the scanner's next readings, #19), unknown for old scans
    assert after == before
    assert store.examples() == [] and len(store.photos_without_examples()) == 3

    scanner = FakeScanner(toy)
    outcome = adapt_profile("mine", store=store, scanner=scanner, load=lambda name: toy)
    assert scanner.scans == 3  # each old photo read once to derive its crops
    rows = store.examples()
    assert len(rows) == 60 and {r["origin"] for r in rows} == {"derived"}
    assert [r["label"] for r in rows[:20]] == board(0) and [r["read_value"] for r in rows[:20]] == [read(v) for v in board(0)]
    assert outcome.saved is not None and "sagrada_dice" in outcome.kept_models
    assert _dump(path, tables) == before

    adapt_profile("mine", store=store, scanner=scanner, load=lambda name: toy)
    assert scanner.scans == 3 and len(store.examples()) == 60  # derived once, then read from the database


def test_export_corrections_writes_the_stored_crops_and_adapt_reads_them_back(tmp_path, toy) -> None:
    from tablescan.adapt import exported_examples
    from tablescan.corrections import export_corrections

    store, game, (ana,) = scanned_game(tmp_path, toy, ["Ana"], [1])
    store.correct_cell(game, ana, "0,1", "P6")
    index = export_corrections(store, tmp_path / "export")
    assert len(index["examples"]) == 20
    entry = index["examples"][1]
    assert (entry["cell"], entry["label"], entry["corrected"], entry["model_sha256"]) == ("0,1", "P6", True, "5" * 64)
    assert sum(e["corrected"] for e in index["examples"]) == 1
    exported = decode_crop((tmp_path / "export" / entry["crop"]).read_bytes())
    assert np.array_equal(exported, crop_of(board(1)[1][0], OTHER_LOOK, 101))
    sets = exported_examples(tmp_path / "export", load=lambda name: toy)
    examples = sets["sagrada_dice"]
    assert len(np.unique(examples.item_ids)) == 20
    assert examples.labels["value"][examples.item_ids == 1][0] == 6
    # an empty cell on Ana's known card (Virtus prints a 4 at r1c1) teaches the print there, as the database does
    store.update_player(game, ana, fields={"pattern": "Virtus"})
    store.correct_cell(game, ana, "0,0", ".")
    index = export_corrections(store, tmp_path / "again")
    assert (index["examples"][0]["label"], index["examples"][0]["teaches"], index["examples"][1]["teaches"]) == (".", ".4", "P6")
    examples = exported_examples(tmp_path / "again", load=lambda name: toy)["sagrada_dice"]
    first = examples.item_ids == 0
    assert (examples.labels["die"][first][0], examples.labels["colour"][first][0], examples.labels["value"][first][0]) == (0, 0, 4)


SAMPLE = ROOT / "sample_images" / "sagrada_straight_01.jpg"


@pytest.mark.e2e
@pytest.mark.skipif(
    not (SAMPLE.exists() and (ROOT / "models" / "sagrada_dice" / "model.onnx").exists()), reason="the Sagrada sample or model is not built"
)
def test_the_review_screen_stores_each_scanned_cell_as_an_example(client, db_path) -> None:
    from scanner.model import load_model

    view = client.post("/api/games", json={"game": "sagrada", "players": ["Ana"], "name": "t"}).json()
    player = view["players"][0]
    url = f"/api/games/{view['id']}/players/{player['id']}"
    response = client.post(f"{url}/photo", files={"photo": (SAMPLE.name, SAMPLE.read_bytes(), "image/jpeg")})
    assert response.status_code == 200, response.text
    cells = {c["cell"]: c["value"] for c in response.json()["players"][0]["cells"]}
    rows = Store(db_path).examples()
    assert len(rows) == 20
    manifest = load_model("sagrada_dice").manifest
    for row in rows:
        assert decode_crop(row["crop"]).shape == (48, 48, 3)
        assert row["model_sha256"] == manifest.sha256 and row["model"].startswith("sagrada_dice")
        assert row["read_value"] == cells[row["cell"]] == row["label"]
    client.put(f"{url}/cells", json={"cell": "0,0", "value": "P6" if cells["0,0"] != "P6" else "R1"})
    relabelled = {r["cell"]: r["label"] for r in Store(db_path).examples()}
    assert relabelled["0,0"] in ("P6", "R1") and relabelled["0,0"] != cells["0,0"]


def test_adapt_learns_from_the_newest_cells_when_there_are_many(tmp_path, toy) -> None:
    from tablescan.adapt import stored_examples

    store, _, _ = scanned_game(tmp_path, toy, ["P0", "P1"], [0, 1])
    sets, notes = stored_examples(store, load=lambda name: toy, max_cells=30)
    examples = sets["sagrada_dice"]
    assert len(np.unique(examples.item_ids)) == 30 and np.bincount(examples.groups[examples.as_read]).tolist()[1:] == [10, 20]
    assert notes == ["sagrada: learning from the newest 30 of 40 stored cells"]


PALACE = ROOT / "sample_images" / "alhambra_01_straight.jpg"


@pytest.mark.e2e
def test_the_review_screen_keeps_each_scanned_tiles_price_octagon(client, db_path) -> None:
    """A palace uploaded on the screen: each building tile's example holds its octagon patches, the fountain's none;
    a tile corrected on the screen relabels them, as it relabels the crop."""
    from scanner.adapt import decode_patches, part_reader

    view = client.post("/api/games", json={"game": "alhambra", "players": ["Ana", "Ben"], "name": "t"}).json()
    player = view["players"][0]
    url = f"/api/games/{view['id']}/players/{player['id']}"
    response = client.post(f"{url}/photo", files={"photo": (PALACE.name, PALACE.read_bytes(), "image/jpeg")})
    assert response.status_code == 200, response.text
    rows = Store(db_path).examples()
    buildings = [row for row in rows if row["read_value"] not in ("", "fountain")]
    views = part_reader("alhambra").views
    assert buildings and all(decode_patches(row["part"], views).shape == (views, 48, 48, 3) for row in buildings)
    assert all(row["part"] is None for row in rows if row["read_value"] in ("", "fountain"))
    cell = buildings[0]["cell"]
    client.put(f"{url}/cells", json={"cell": cell, "value": "tower:N" if buildings[0]["read_value"] != "tower:N" else "garden:"})
    relabelled = next(row for row in Store(db_path).examples() if row["cell"] == cell)
    assert relabelled["label"] != buildings[0]["label"] and relabelled["part"] == buildings[0]["part"]
