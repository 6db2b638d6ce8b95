"""The one scanning code path, with stand-in readers: the typed hand-off, document assembly, scaling, profiles, merging."""

from __future__ import annotations

import io
from dataclasses import replace

import numpy as np
import pytest
from PIL import Image

from calibration import CameraModel, Profile, distort_points
from scanner import Scanner, merge_documents
from scanner.errors import PhotoError
from scanner.pipeline import RULE_BROKEN_SURE, doubt_broken_rules
from scanner.reading import BoardReading, CellReading, Override, ScanEvidence, Timings
from scoring.alhambra import FOUNTAIN_TILE, AlhambraPlayer, AlhambraState, Tile
from scoring.errors import StateError
from scoring.registry import GAMES
from scoring.sagrada import SagradaPlayer, SagradaState, parse_window

WINDOW = ["B4 Y3 G6 R3 B6", "G2 P5 B1 G4 R1", "B3 G6 Y2 P6 Y5", "Y1 B4 R1 G5 ."]
CORNERS = np.array([[100, 80], [700, 90], [690, 560], [110, 550]], dtype=np.float32)


class FakeReader:
    """Reads every photo as the same window; remembers the corners it was given."""

    game = "sagrada"

    def __init__(self) -> None:
        self.given_corners = None

    def read(self, photo, *, corners, timings):
        self.given_corners = corners
        with timings.stage("classify"):
            cells = tuple(
                CellReading(
                    cell=(0, col),
                    value=WINDOW[0].split()[col],
                    confidence=0.9,
                    polygon=((100 + 120 * col, 80), (220 + 120 * col, 80), (220 + 120 * col, 200), (100 + 120 * col, 200)),
                )
                for col in range(5)
            )
        found = CORNERS if corners is None else corners
        state = SagradaState((), (SagradaPlayer("IMG_0", parse_window(WINDOW)),))
        return BoardReading(state=state, board_keys=("window", "pattern"), corners=found, cells=cells, model="fake v0")


# a palace whose fountain is not first by (y, x): the state sorts it, the scan document lists the fountain first
PALACE = (((0, 0), FOUNTAIN_TILE), ((0, -1), Tile("garden", "NEW")), ((1, 0), Tile("tower", "NES")))


class FakePalaceReader:
    """Reads every photo as the same palace, its scan listing the fountain first."""

    game = "alhambra"

    def read(self, photo, *, corners, timings):
        cells = tuple(
            CellReading(cell=at, value="fountain" if tile.type == "fountain" else f"{tile.type}:{tile.walls}", confidence=0.8, polygon=())
            for at, tile in PALACE
        )
        player = AlhambraPlayer("IMG_0", PALACE)
        order = tuple(index for at, _ in PALACE for index, (cell, _) in enumerate(player.palace) if cell == at)
        return BoardReading(
            state=AlhambraState(3, (player,)), board_keys=("palace",), corners=CORNERS, cells=cells, listing={"palace": order}
        )


def _jpeg(width: int, height: int) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(np.full((height, width, 3), 128, np.uint8)).save(buffer, format="JPEG")
    return buffer.getvalue()


@pytest.fixture
def scanner(make_scanner) -> Scanner:
    scanner = make_scanner()
    scanner._readers["sagrada"] = FakeReader()
    scanner._readers["alhambra"] = FakePalaceReader()
    return scanner


def test_scan_builds_a_scoreable_document_with_its_scan_block(scanner: Scanner) -> None:
    result = scanner.scan(_jpeg(800, 600), "sagrada", name="IMG_1.jpg")
    player = result.player
    assert player["name"] == "IMG_1" and player["window"] == WINDOW
    assert player["scan"]["photo"] == "IMG_1.jpg"
    assert player["scan"]["corners"] == CORNERS.astype(float).tolist()
    assert player["scan"]["model"] == "fake v0"
    assert [cell["cell"] for cell in player["scan"]["cells"]] == [[0, c] for c in range(5)]
    assert set(result.seconds) >= {"decode", "classify", "assemble"}
    assert result.state.players[0].name == "IMG_1"


def test_reduced_decode_reports_full_resolution_pixels(scanner: Scanner) -> None:
    result = scanner.scan(_jpeg(3200, 2400), "sagrada", name="big.jpg")  # decoded at half size or less
    assert result.photo.scale > 1
    expected = CORNERS.astype(np.float64) * result.photo.scale
    assert np.allclose(result.player["scan"]["corners"], expected, atol=0.1)
    assert np.allclose(result.corners, expected)
    assert np.allclose(result.image_corners, CORNERS)


def test_given_corners_are_scaled_to_the_decoded_image(scanner: Scanner) -> None:
    full = CORNERS * 4
    result = scanner.scan(_jpeg(3200, 2400), "sagrada", corners=full)
    given = scanner._readers["sagrada"].given_corners
    assert np.allclose(given * result.photo.scale, full, atol=0.01)


def test_camera_profile_maps_outlines_back_to_the_photo_as_taken(scanner: Scanner) -> None:
    camera = CameraModel(width_px=800, height_px=600, fx=700, fy=700, cx=400, cy=300, distortion=(-0.25, 0.08, 0, 0, 0))
    profile = Profile(name="phone", camera=camera)
    scanner.profile = profile
    result = scanner.scan(_jpeg(800, 600), "sagrada")
    assert "profile" in result.photo.notes
    expected = distort_points(CORNERS, camera, (800, 600))
    assert np.allclose(result.player["scan"]["corners"], expected, atol=0.1)
    assert not np.allclose(expected, CORNERS, atol=1.0)  # the lens really bends these points


def test_unknown_game_and_bad_photo_fail_before_any_reading(scanner: Scanner) -> None:
    with pytest.raises(PhotoError, match="scanning is supported for alhambra, sagrada"):
        scanner.scan(_jpeg(800, 600), "splendor")
    with pytest.raises(PhotoError, match="x.jpg: not an image"):
        scanner.scan(b"plain text", "sagrada", name="x.jpg")


def test_merge_documents_keeps_players_in_photo_order(scanner: Scanner) -> None:
    docs = [scanner.scan(_jpeg(800, 600), "sagrada", player_name=name).document for name in ("Ana", "Bo")]
    merged = merge_documents(docs)
    assert [p["name"] for p in merged["players"]] == ["Ana", "Bo"]
    with pytest.raises(StateError, match="'Ana' appears twice"):
        merge_documents([docs[0], docs[0]])


@pytest.mark.parametrize(
    "game, keys, absent",
    [
        ("sagrada", ["name", "window", "scan"], {"favor_tokens", "private_objective", "pattern"}),
        ("alhambra", ["name", "palace", "scan"], {"reserve", "score_before", "money"}),
    ],
)
def test_document_is_the_states_json_with_the_keys_the_photo_shows(scanner: Scanner, game: str, keys: list, absent: set) -> None:
    result = scanner.scan(_jpeg(800, 600), game, player_name="Ana")
    document = result.to_json()
    assert list(document["players"][0]) == keys
    assert not absent & set(document["players"][0])  # what a photo cannot see stays out, as before
    assert GAMES[game].parse(document) == result.state  # the document reads back as the very state
    assert {k: v for k, v in document.items() if k != "players"} == {k: v for k, v in result.state.to_json().items() if k != "players"}
    assert document["players"][0]["scan"] == result.scan.to_json()
    assert result.state.players[0].name == "Ana"
    assert result.document == document and result.document is not result.document  # a fresh copy each time


def test_listing_keeps_the_scans_order_where_the_state_sorts(scanner: Scanner) -> None:
    result = scanner.scan(_jpeg(800, 600), "alhambra")
    assert [cell for cell, _ in result.state.players[0].palace] == [(0, -1), (0, 0), (1, 0)]
    assert [entry["at"] for entry in result.player["palace"]] == [[0, 0], [0, -1], [1, 0]]
    assert result.player["palace"][0] == {"at": [0, 0], "tile": "fountain"}


def test_a_listing_must_order_every_item(scanner: Scanner) -> None:
    result = scanner.scan(_jpeg(800, 600), "alhambra")
    short = replace(result, scan=replace(result.scan, listing={"palace": (1, 0)}))
    with pytest.raises(ValueError, match=r"listing\['palace'\]: expected an order of all 3 items, got 2"):
        short.to_json()


def test_scan_evidence_writes_the_formats_scan_block() -> None:
    cell = CellReading(cell=(0, 1), value="B4", confidence=0.912345, polygon=((1.0, 2.0), (3.0, 2.0), (3.0, 4.0), (1.0, 4.0)))
    override = Override((0, 1), "G4", 0.5, "B4", 0.4, "neighbour rule")
    evidence = ScanEvidence(
        photo="IMG_1.jpg",
        corners=((1.0, 2.0), (3.0, 2.0), (3.0, 4.0), (1.0, 4.0)),
        cells=(cell,),
        overrides=(override,),
        model="fake v0",
        seconds=0.25,
        board_keys=("window",),
    )
    assert evidence.to_json() == {
        "photo": "IMG_1.jpg",
        "corners": [[1.0, 2.0], [3.0, 2.0], [3.0, 4.0], [1.0, 4.0]],
        "cells": [{"cell": [0, 1], "value": "B4", "confidence": 0.9123, "polygon": [[1.0, 2.0], [3.0, 2.0], [3.0, 4.0], [1.0, 4.0]]}],
        "overrides": [override.to_json()],
        "model": "fake v0",
        "seconds": 0.25,
    }


def test_scan_evidence_polygons_are_full_photo_pixels(scanner: Scanner) -> None:
    result = scanner.scan(_jpeg(3200, 2400), "sagrada")
    scale = result.photo.scale
    for seen, read in zip(result.scan.cells, result.cells):
        assert np.allclose(np.array(seen.polygon), np.array(read.polygon) * scale, atol=0.05)
    assert result.scan.seconds == round(sum(result.seconds.values()), 3)


ONE_WINDOW = SagradaState((), (SagradaPlayer("Ana", parse_window(WINDOW)),))
TWO_WINDOWS = SagradaState((), (SagradaPlayer("Ana", parse_window(WINDOW)), SagradaPlayer("Bo", parse_window(WINDOW))))


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"corners": np.zeros((3, 2))}, r"corners: expected \(4, 2\)"),
        ({"state": TWO_WINDOWS}, "state: expected a one-player game state, got SagradaState with 2 players"),
        ({"board_keys": ()}, "board_keys: expected the player keys the photo shows"),
        ({"listing": {"palace": (0,)}}, r"listing\['palace'\]: expected a reordering"),
        ({"listing": {"window": (0, 0)}}, r"listing\['window'\]: expected a reordering"),
    ],
)
def test_board_reading_rejects_an_impossible_hand_off(changes: dict, message: str) -> None:
    given = {"state": ONE_WINDOW, "board_keys": ("window",), "corners": CORNERS, "cells": ()} | changes
    with pytest.raises(ValueError, match=message):
        BoardReading(**given)


def test_a_bad_player_name_is_said_as_a_state_error(scanner: Scanner) -> None:
    with pytest.raises(StateError, match="name: expected a non-empty string"):
        scanner.scan(_jpeg(800, 600), "sagrada", player_name="  ")


class ClashingReader(FakeReader):
    """Reads a window whose top-left two dice are both red (a rule no tool card explains), every cell at 90%."""

    def read(self, photo, *, corners, timings):
        reading = super().read(photo, corners=corners, timings=timings)
        window = ["R4 R3 G6 R3 B6", *WINDOW[1:]]
        state = SagradaState((), (SagradaPlayer("IMG_0", parse_window(window)),))
        cells = tuple(replace(cell, value=window[0].split()[cell.cell[1]]) for cell in reading.cells)
        return replace(reading, state=state, cells=cells)


def test_a_cell_a_broken_rule_names_is_read_no_surer_than_half(make_scanner) -> None:
    scanner = make_scanner()
    scanner._readers["sagrada"] = ClashingReader()
    result = scanner.scan(_jpeg(800, 600), "sagrada")
    assert [issue.cells for issue in result.issues] == [((0, 0), (0, 1))]
    assert [cell.confidence for cell in result.cells] == [RULE_BROKEN_SURE, RULE_BROKEN_SURE, 0.9, 0.9, 0.9]
    listed = result.to_json()["players"][0]["scan"]["cells"]
    assert [cell["confidence"] for cell in listed] == [0.5, 0.5, 0.9, 0.9, 0.9]  # the document says so too
    assert result.review.needed and any(reason.startswith("the reading breaks a rule") for reason in result.review.reasons)
    reading = ClashingReader().read(None, corners=None, timings=Timings())
    explained = replace(result.issues[0], explained_by=("Tap Wheel",))
    assert doubt_broken_rules(reading, (explained,)) is reading  # a tool card may make it legal: the readings stand
    assert doubt_broken_rules(reading, ()) is reading
