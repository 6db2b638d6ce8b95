"""The one scanning code path, with a stand-in reader: document assembly, scaling, profiles, merging."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from calibration import CameraModel, Profile, distort_points
from scanner import Scanner, merge_documents
from scanner.errors import PhotoError
from scanner.reading import BoardReading, CellReading
from scoring.errors import StateError
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


def _jpeg(width: int, height: int) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(np.full((height, width, 3), 128, np.uint8)).save(buffer, format="JPEG")
    return buffer.getvalue()


@pytest.fixture
def scanner(make_scanner) -> Scanner:
    scanner = make_scanner()
    scanner._readers["sagrada"] = FakeReader()
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
