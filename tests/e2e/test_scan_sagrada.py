"""End to end: bundled Sagrada sample photos scan to their exact windows, through the API and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from click.testing import CliRunner

from scanner import BoardNotFoundError
from scanner.errors import Remedy
from scanner.model import load_model
from scanner.photo import Photo, load_photo
from scanner.sagrada.reader import SagradaReader
from scoring.registry import GAMES
from scoring.sagrada import window_rows
from tablescan.cli import cli

pytestmark = pytest.mark.e2e
SAMPLES = Path(__file__).resolve().parents[2] / "sample_images"
PHOTOS = ["sagrada_straight_01", "sagrada_tilted_02", "sagrada_cluttered_01", "sagrada_rotated_01"]


def _truth(stem: str) -> dict:
    return json.loads((SAMPLES / f"{stem}.json").read_text())


@pytest.fixture(scope="module")
def scanner(make_scanner):
    return make_scanner()


@pytest.mark.parametrize("stem", PHOTOS)
def test_sample_scans_to_its_exact_window(scanner, stem):
    truth = _truth(stem)["players"][0]
    result = scanner.scan(SAMPLES / f"{stem}.jpg", "sagrada")
    assert result.player["window"] == truth["window"]
    assert result.player.get("pattern") == truth["pattern"]
    assert window_rows(result.state.players[0].window) == truth["window"]  # the typed hand-off holds the board itself
    assert result.state == GAMES["sagrada"].parse(result.document)
    scan = result.player["scan"]
    assert [cell["cell"] for cell in scan["cells"]] == [[r, c] for r in range(4) for c in range(5)]
    assert all(0 <= cell["confidence"] <= 1 and len(cell["polygon"]) == 4 for cell in scan["cells"])
    assert "sagrada_dice" in scan["model"]
    true_corners = np.array(_truth(stem)["render"]["corners"])
    pitch = np.linalg.norm(true_corners[1] - true_corners[0]) / 5
    assert np.abs(np.array(scan["corners"]) - true_corners).max() < 0.2 * pitch


def test_given_corners_skip_the_search(scanner):
    truth = _truth("sagrada_tilted_01")
    corners = np.array(truth["render"]["corners"])[[2, 0, 3, 1]]  # any order
    result = scanner.scan(SAMPLES / "sagrada_tilted_01.jpg", "sagrada", corners=corners)
    assert result.player["window"] == truth["players"][0]["window"]


def test_cli_scan_scores_a_sample(tmp_path):
    out = tmp_path / "scan.json"
    result = CliRunner().invoke(
        cli,
        [
            "scan",
            str(SAMPLES / "sagrada_straight_01.jpg"),
            "--game",
            "sagrada",
            "--json",
            str(out),
            "--score",
            "--format",
            "json",
            "--objectives",
            "row-color-variety,light-shades,color-diagonals",
            "--private",
            "blue",
            "--favor",
            "1",
        ],
    )
    assert result.exit_code == 0, result.output
    document = json.loads(out.read_text())
    assert document["players"][0]["window"] == _truth("sagrada_straight_01")["players"][0]["window"]
    report = json.loads(result.stdout[result.stdout.index("{") :])
    assert isinstance(report["players"][0]["total"], int)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: np.full((900, 1200, 3), 130, np.uint8), "no Sagrada window found"),
        (lambda: np.full((900, 1200, 3), 8, np.uint8), "very dark"),
    ],
)
def test_no_window_is_a_one_line_error_saying_what_to_try(scanner, make, message):
    with pytest.raises(BoardNotFoundError, match=message) as info:
        scanner.scan(Photo.from_array(make(), "empty.jpg"), "sagrada")
    assert "\n" not in str(info.value) and info.value.remedy is Remedy.SET_CORNERS  # the CLI words it as --corners


def test_cut_off_window_is_refused(scanner):
    image = cv2.cvtColor(cv2.imread(str(SAMPLES / "sagrada_straight_01.jpg")), cv2.COLOR_BGR2RGB)
    corners = np.array(_truth("sagrada_straight_01")["render"]["corners"])
    cut = image[:, : int(corners[:, 0].mean())]
    with pytest.raises(BoardNotFoundError, match="edge|no Sagrada window"):
        scanner.scan(Photo.from_array(np.ascontiguousarray(cut), "cut.jpg"), "sagrada")


def test_two_windows_in_view_are_refused(scanner):
    left = cv2.imread(str(SAMPLES / "sagrada_straight_01.jpg"))
    right = cv2.imread(str(SAMPLES / "sagrada_straight_02.jpg"))
    both = cv2.cvtColor(np.hstack([left, right]), cv2.COLOR_BGR2RGB)
    both = cv2.resize(both, (2400, 900), interpolation=cv2.INTER_AREA)
    with pytest.raises(BoardNotFoundError, match="2 windows in view"):
        scanner.scan(Photo.from_array(np.ascontiguousarray(both), "two.jpg"), "sagrada")


class _HalfTurningRefiner:
    """The shipped refiner with its top-left head turned round: a refiner sure of the wrong side up (as on a board style it never saw)."""

    def __init__(self) -> None:
        self.refiner = load_model("sagrada_refiner")
        self.manifest = self.refiner.manifest

    def run(self, batch: np.ndarray) -> dict[str, np.ndarray]:
        out = dict(self.refiner.run(batch))
        out["turn"] = np.roll(out["turn"], 2, axis=1)
        return out


@pytest.mark.parametrize("given", [True, False], ids=["given-corners", "found-grid"])
def test_the_pattern_card_overrules_a_refiner_sure_of_the_wrong_side_up(given):
    truth = _truth("sagrada_tilted_01")
    true_corners = np.array(truth["render"]["corners"])
    reader = SagradaReader(refiner=_HalfTurningRefiner())  # type: ignore[arg-type]
    photo = load_photo(SAMPLES / "sagrada_tilted_01.jpg")
    reading = reader.read(photo, corners=true_corners[[2, 3, 0, 1]] if given else None)
    assert window_rows(reading.player.window) == truth["players"][0]["window"]
    # the corners turn with the reading: the top-left reported is the board's, and so is cell r1c1's outline
    pitch = np.linalg.norm(true_corners[1] - true_corners[0]) / 5
    assert np.abs(reading.corners - true_corners).max() < 0.2 * pitch
    first = np.array(reading.cells[0].polygon).mean(axis=0)
    assert np.linalg.norm(first - true_corners[0]) < 1.2 * pitch
    assert any("turned 180 degrees" in note for note in reading.notes)
