"""End to end: bundled Alhambra sample photos scan to their exact palaces, through the API and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from click.testing import CliRunner

from scanner import BoardNotFoundError
from scanner.photo import Photo
from scanner.pipeline import RULE_BROKEN_SURE, Scanner
from scoring.registry import GAMES
from tablescan.cli import cli

pytestmark = pytest.mark.e2e
SAMPLES = Path(__file__).resolve().parents[2] / "sample_images"
PHOTOS = ["alhambra_01_straight", "alhambra_03_tilted", "alhambra_06_cluttered"]


def _cells(palace):
    return {tuple(i["at"]): "fountain" if i.get("tile") == "fountain" else f"{i['type']}:{i['walls']}" for i in palace}


def _transfer_scan(scanner, set_name, index):
    """Render photo ``index`` of the Alhambra transfer set ``set_name`` and scan it: the result, and the truth by cell."""
    from models.alhambra import transfer

    data, label = transfer.photo_of(transfer.shot_for(set_name, index))
    result = scanner.scan(data, "alhambra", name=f"{set_name}-{index}.jpg")
    return result, {tuple(cell["at"]): cell["value"] for cell in label["render"]["cells"]}


@pytest.fixture(scope="module")
def scanner(make_scanner):
    return make_scanner()


@pytest.mark.parametrize("stem", PHOTOS)
def test_sample_scans_to_its_exact_palace(scanner, stem):
    truth = json.loads((SAMPLES / f"{stem}.json").read_text())
    result = scanner.scan(SAMPLES / f"{stem}.jpg", "alhambra")
    assert _cells(result.player["palace"]) == _cells(truth["players"][0]["palace"])
    assert result.issues == ()
    palace = {at: "fountain" if tile.type == "fountain" else f"{tile.type}:{tile.walls}" for at, tile in result.state.players[0].palace}
    assert palace == _cells(truth["players"][0]["palace"])  # the typed hand-off holds the palace itself
    assert result.state == GAMES["alhambra"].parse(result.document)
    assert result.player["palace"][0] == {"at": [0, 0], "tile": "fountain"}  # the scan lists the fountain first
    scan = result.player["scan"]
    assert len(scan["cells"]) == len(truth["players"][0]["palace"])
    assert all(0 <= cell["confidence"] <= 1 and len(cell["polygon"]) == 4 for cell in scan["cells"])
    assert "alhambra_tiles" in scan["model"]


@pytest.mark.parametrize("wrong", [False, True])
def test_one_corner_a_tile_reads_as_four_and_a_wrong_sure_north_falls_back(make_scanner, monkeypatch, wrong):
    """When the tile classifier is sure of north only that corner is read; a north the octagons do not confirm reads all four."""
    from scanner.alhambra import reader

    truth = _cells(json.loads((SAMPLES / "alhambra_03_tilted.json").read_text())["players"][0]["palace"])
    turns = []
    read = reader.read_octagons

    def counted(model, temperatures, patches, turns_read=(0, 1, 2, 3)):
        turns.append(tuple(turns_read))
        return read(model, temperatures, patches, turns_read)

    monkeypatch.setattr(reader, "read_octagons", counted)
    if wrong:  # a classifier sure of the opposite north
        sure = reader.classifier_north
        monkeypatch.setattr(reader, "classifier_north", lambda predictions, rows: (sure(predictions, rows) + 2) % 4)
    result = make_scanner().scan(SAMPLES / "alhambra_03_tilted.jpg", "alhambra")
    assert _cells(result.player["palace"]) == truth
    assert turns == ([turns[0], (0, 1, 2, 3)] if wrong else [turns[0]]) and len(turns[0]) == 1


def test_cli_scan_scores_a_sample(tmp_path):
    out = tmp_path / "scan.json"
    result = CliRunner().invoke(
        cli, ["scan", str(SAMPLES / "alhambra_01_straight.jpg"), "--game", "alhambra", "--json", str(out), "--score", "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    document = json.loads(out.read_text())
    truth = json.loads((SAMPLES / "alhambra_01_straight.json").read_text())
    assert _cells(document["players"][0]["palace"]) == _cells(truth["players"][0]["palace"])
    report = json.loads(result.stdout[result.stdout.index("{") :])
    assert report["players"][0]["longest_wall"] >= 0


def _sample() -> np.ndarray:
    return cv2.cvtColor(cv2.imread(str(SAMPLES / "alhambra_01_straight.jpg")), cv2.COLOR_BGR2RGB)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: np.random.default_rng(0).integers(60, 200, (900, 1200, 3), dtype=np.uint8), "no Alhambra palace found"),
        (lambda: np.full((900, 1200, 3), 130, np.uint8), "even surface with nothing on it"),  # a bare table is not blamed on focus
        (lambda: cv2.GaussianBlur(_sample(), (0, 0), 20), "too blurred"),
        (lambda: np.full((900, 1200, 3), 8, np.uint8), "too dark"),
        (
            lambda: np.full((900, 1200, 3), 20, np.uint8),
            "dark photo .* more light",
        ),  # dim but above the refusal: blame the light, not focus
    ],
)
def test_no_palace_is_a_one_line_error_saying_what_to_try(scanner, make, message):
    with pytest.raises(BoardNotFoundError, match=message) as info:
        scanner.scan(Photo.from_array(make(), "empty.jpg"), "alhambra")
    assert "\n" not in str(info.value)


def test_cut_off_palace_is_refused(scanner):
    image = cv2.cvtColor(cv2.imread(str(SAMPLES / "alhambra_01_straight.jpg")), cv2.COLOR_BGR2RGB)
    truth = json.loads((SAMPLES / "alhambra_01_straight.json").read_text())
    xs = [point[0] for cell in truth["render"]["cells"] for point in cell["polygon"]]
    cut = image[:, : int((min(xs) + max(xs)) / 2)]
    with pytest.raises(BoardNotFoundError, match="edge"):
        scanner.scan(Photo.from_array(np.ascontiguousarray(cut), "cut.jpg"), "alhambra")


def test_cli_bad_file_exits_2(tmp_path):
    bad = tmp_path / "not_a_photo.jpg"
    bad.write_bytes(b"hello")
    result = CliRunner().invoke(cli, ["scan", str(bad), "--game", "alhambra"])
    assert result.exit_code == 2
    assert "not_a_photo.jpg" in result.output


def test_two_palaces_in_view_are_refused(scanner):
    left = cv2.cvtColor(cv2.imread(str(SAMPLES / "alhambra_06_cluttered.jpg")), cv2.COLOR_BGR2RGB)
    right = cv2.cvtColor(cv2.imread(str(SAMPLES / "alhambra_03_tilted.jpg")), cv2.COLOR_BGR2RGB)
    both = np.ascontiguousarray(np.concatenate([left, right], axis=1))
    with pytest.raises(BoardNotFoundError, match="one palace at a time"):
        scanner.scan(Photo.from_array(both, "two.jpg"), "alhambra")


@pytest.mark.parametrize("photo", sorted(p.name for p in SAMPLES.glob("sagrada_*.jpg")))
def test_a_sagrada_window_scanned_as_a_palace_exits_2_saying_what_was_seen(photo):
    """Refused with one line saying what was seen, or at least flagged; never a confident score."""
    result = CliRunner().invoke(cli, ["scan", str(SAMPLES / photo), "--game", "alhambra", "--score"])
    if result.exit_code == 0:  # read as a palace: then flagged, its squares without a price octagon named
        assert "look before taking the score" in result.stderr and "%" in result.stderr, result.stderr
        return
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and photo in lines[0], result.stderr
    assert any(words in lines[0] for words in ("no Alhambra palace read", "tiles", "one palace at a time")), lines[0]
    assert result.stdout == ""


def test_a_palace_whose_tiles_do_not_join_up_is_refused():
    from scanner.alhambra.decode import check_joined

    class Tiles:  # the only thing the check reads: the cells holding tiles
        evidence = {(0, 0): None, (1, 0): None, (0, 1): None, (5, 5): None, (7, 2): None}

    with pytest.raises(BoardNotFoundError, match=r"no Alhambra palace read: of 5 squares read as tiles only 3 join up"):
        check_joined(Photo.from_array(np.zeros((8, 8, 3), np.uint8), "loose.jpg"), Tiles())  # type: ignore[arg-type]
    Tiles.evidence = {(x, 0): None for x in range(7)} | {(9, 9): None}  # one stray square beside seven joined: read, flagged later
    check_joined(Photo.from_array(np.zeros((8, 8, 3), np.uint8), "stray.jpg"), Tiles())  # type: ignore[arg-type]


def test_a_reading_without_a_fountain_or_with_only_one_is_refused():
    from scanner.alhambra.decode import TileEvidence, check_fountain
    from scanner.alhambra.reader import KINDS

    def read_as(kind: str) -> TileEvidence:
        p = np.full(len(KINDS), 0.01)
        p[KINDS.index(kind)] = 1.0
        return TileEvidence(p / p.sum(), np.zeros(4), np.full(12, 1 / 12))

    class Tiles:  # what the check reads: each cell's evidence
        evidence = {(0, 0): read_as("tower"), (1, 0): read_as("garden")}

    photo = Photo.from_array(np.zeros((8, 8, 3), np.uint8), "dice.jpg")
    with pytest.raises(BoardNotFoundError, match="no fountain among the 2 squares read as tiles"):
        check_fountain(photo, Tiles(), (0, 0))  # type: ignore[arg-type]
    Tiles.evidence = {(0, 0): read_as("fountain")}
    with pytest.raises(BoardNotFoundError, match="only a fountain-like square"):
        check_fountain(photo, Tiles(), (0, 0))  # type: ignore[arg-type]
    Tiles.evidence = {(0, 0): read_as("fountain"), (1, 0): read_as("garden")}
    check_fountain(photo, Tiles(), (0, 0))  # type: ignore[arg-type]


def _region_reading(cells_kind: dict[tuple[int, int], str | dict[str, float]]):
    """A CellRegion of ``cells_kind``'s cells and their kind probabilities ("tower" means sure of it)."""
    from scanner.alhambra.lattice import CellRegion
    from scanner.alhambra.reader import KINDS

    kind = np.zeros((len(cells_kind), len(KINDS)))
    for row, spec in enumerate(cells_kind.values()):
        for name, p in ({spec: 1.0} if isinstance(spec, str) else spec).items():
            kind[row, KINDS.index(name)] = p
    kind[:, 0] += 1 - kind.sum(axis=1)  # the rest is "no tile"
    cells = tuple(cells_kind)
    return CellRegion(cells, frozenset(c for c, s in cells_kind.items() if s != "none"), frozenset()), kind


def test_a_fountain_that_reads_as_the_table_is_taken_from_the_empty_square_that_stands_out():
    from scanner.alhambra.decode import fountain_neighbour, tiles_present

    photo = Photo.from_array(np.zeros((8, 8, 3), np.uint8), "green-cloth.jpg")
    empty = {"fountain": 1e-5}
    cells = {(0, 0): "tower", (1, 0): "garden", (0, 1): "none", (-1, 0): {"fountain": 0.004}, (2, 0): empty, (1, 1): empty}
    region, kind = _region_reading(cells)
    is_tile = tiles_present(photo, region, kind)
    assert fountain_neighbour(region, is_tile, kind) == (-1, 0)
    # two empty squares alike: no guess (the photo is refused as before)
    region, kind = _region_reading(cells | {(2, 0): {"fountain": 0.002}})
    assert fountain_neighbour(region, tiles_present(photo, region, kind), kind) is None
    # nothing stands out enough to be a fountain at all
    region, kind = _region_reading(cells | {(-1, 0): {"fountain": 5e-4}})
    assert fountain_neighbour(region, tiles_present(photo, region, kind), kind) is None
    # a tile read already looks like the fountain: nothing is guessed
    region, kind = _region_reading(cells | {(1, 0): {"fountain": 0.5, "garden": 0.5}})
    assert fountain_neighbour(region, tiles_present(photo, region, kind), kind) is None


def test_a_zigzag_cloth_is_not_taken_for_a_second_palace():
    # the held-out art's transfer photo 6000078: the locator also finds "tiles" in the cloth's pattern,
    # a second group of 12 beside the 24-tile palace; the classifier reads those cells as no tile
    result, truth = _transfer_scan(Scanner(), "held_out", 78)
    assert {cell.cell: cell.value for cell in result.cells} == truth


def test_a_green_ground_fountain_on_green_cloth_is_read_and_flagged_not_refused(monkeypatch):
    # the held-out art's transfer photo 6000009: its fountain's green ground melts into the cloth, and
    # through the locator's lattice neither the locator nor the classifier sees a tile there; before,
    # the photo was refused. Through the lattice the octagons give, the fountain is seen (below).
    from models.alhambra import transfer
    from scanner.alhambra import reader

    shot = transfer.shot_for("held_out", 9)
    data, label = transfer.photo_of(shot)
    truth = {tuple(cell["at"]): cell["value"] for cell in label["render"]["cells"]}
    placed = Scanner().scan(data, "alhambra", name="green-cloth.jpg")
    assert {cell.cell: cell.value for cell in placed.cells} == truth
    assert next(cell for cell in placed.cells if cell.value == "fountain").confidence > 0.5

    monkeypatch.setattr(reader, "PLACED_MOVE", float("inf"))  # the locator's lattice only
    result = Scanner().scan(data, "alhambra", name="green-cloth.jpg")
    assert {cell.cell: cell.value for cell in result.cells} == truth
    fountain = next(cell for cell in result.cells if cell.value == "fountain")
    assert fountain.confidence < 0.1  # a guess: no square looked like the fountain
    assert result.review is not None and result.review.needed
    assert any(reason.startswith("the fountain read the fountain") and "no tile at" in reason for reason in result.review.reasons)
    assert [o.model_value for o in result.overrides if o.cell == (0, 0)] == ["no tile"]


@pytest.mark.parametrize("index", [425, 695])
def test_a_wall_strip_the_lattice_cuts_off_is_still_seen(scanner, index):
    # held-out art, transfer photos 6000425 (7 tiles) and 6000695 (19): the lattice lies 0.2-0.4 of a tile
    # off one corner of a garden walled N (W), whose strip then ran along the crop's edge; the classifier
    # of 2026-12-05 read "no walls" there, at 99.8% in 6000425 (unflagged). The crop now keeps 15% of a
    # pitch on every side and the classifier learnt from crops moved by up to 18%.
    result, truth = _transfer_scan(scanner, "held_out", index)
    assert {cell.cell: cell.value for cell in result.cells} == truth


def test_a_palace_split_by_a_tile_unseen_in_deep_shadow_is_read_whole(scanner):
    # held-out art, transfer photo 6000680 (16 tiles, dim, a shadow across it): the locator's mask split
    # the palace into 12 and 3 tiles where it saw no tile between them, and the photo was refused as two
    # palaces; both groups lie on one lattice a cell apart, and the ring read around the tiles finds it
    result, truth = _transfer_scan(scanner, "held_out", 680)
    assert {cell.cell: cell.value for cell in result.cells} == truth


@pytest.mark.parametrize("index", [178, 266])
def test_an_octagon_the_lattice_cuts_off_is_seen_in_its_close_patch(scanner, index):
    # held-out art, transfer photos 6000178 (5 tiles) and 6000266 (9): the lattice lies off one tile far
    # enough that its corner patch shows the octagon cut by the patch's edge, read as absent (P 0.25
    # and 0.45), and the tile, read right, was doubted for it. The close patch, cut where the octagon's
    # outline is found, shows it whole: the palaces are read right and need no look.
    result, truth = _transfer_scan(scanner, "held_out", index)
    assert {cell.cell: cell.value for cell in result.cells} == truth
    assert result.review is not None and not result.review.needed, result.review
    assert min(cell.confidence for cell in result.cells) > 0.98


def test_a_tile_the_rules_say_cannot_be_reached_is_not_read_surely(scanner, monkeypatch):
    # held-out art under a camera app's guide, photo 6000189: the palace is read with a chambers at (2, 3)
    # where it has no tile (a word written over the table), its octagon seen, read at 90%; its walls shut it off
    # from the fountain, a rule the reading breaks. A tile the rules name is read no surer than half. (The
    # word is left in here: painted out, the palace reads right, tests/scanner/test_guides.py.)
    import scanner.pipeline as pipeline

    monkeypatch.setattr(pipeline, "WORD_COVERS", 2.0)
    result, truth = _transfer_scan(scanner, "guides", 189)
    assert [(issue.rule, issue.cells) for issue in result.issues] == [("unreachable", ((2, 3),))]
    named = next(cell for cell in result.cells if cell.cell == (2, 3))
    assert named.value == "chambers:W" and named.confidence <= RULE_BROKEN_SURE
    assert (2, 3) not in truth
    assert result.review.needed
