"""The scanner's next readings of a cell reach the review screen (issue #19): stored with the scan, offered first."""

from __future__ import annotations

import io

import pytest
from PIL import Image
from starlette.testclient import TestClient

from scanner.reading import CellReading
from tablescan.review import scanning
from tablescan.review.board import readings_from_scan
from tablescan.review.scanning import ScanOutcome

SQUARE = ((10.0, 10.0), (20.0, 10.0), (20.0, 20.0), (10.0, 20.0))


def scanned_player(value: str) -> dict:
    return {"name": "Ana", "scan": {"cells": [{"cell": [0, 0], "value": value, "confidence": 0.5, "polygon": [list(p) for p in SQUARE]}]}}


@pytest.mark.parametrize(
    ("value", "alternatives", "expected"),
    [
        ("R3", (("G3", 0.3), ("R5", 0.1), (".", 0.05)), ["G3", "R5"]),  # the second and third readings, most likely first
        ("R3", (("R3", 0.3), ("G3", 0.2)), ["G3"]),  # never the reading itself
        ("R3", (), None),  # a reader that gives none offers none
    ],
)
def test_a_scanned_cell_keeps_its_next_readings(value, alternatives, expected) -> None:
    cell = CellReading(cell=(0, 0), value=value, confidence=0.5, polygon=SQUARE, alternatives=alternatives)
    readings = {r["cell"]: r for r in readings_from_scan("sagrada", scanned_player(value), [cell])}
    assert readings["0,0"]["value"] == value
    assert readings["0,0"].get("alternatives") == expected


def test_next_readings_are_stored_with_the_scan_and_dropped_by_the_next(client: TestClient, monkeypatch) -> None:
    outcomes = [["G3", "R5"], None]

    def scan(path, game, corners=None, player_name=None, name=None, profile=None):
        readings = [
            {"cell": f"{r},{c}", "value": ".", "confidence": 0.99, "polygon": [list(p) for p in SQUARE]} for r in range(4) for c in range(5)
        ]
        readings[0] = {**readings[0], "value": "R3", "confidence": 0.4}
        alternatives = outcomes.pop(0)
        if alternatives:
            readings[0]["alternatives"] = alternatives
        return ScanOutcome(corners=[[0, 0], [60, 0], [60, 40], [0, 40]], model="dice v9", readings=readings)

    monkeypatch.setattr(scanning, "scanner_games", lambda: ("sagrada",))
    monkeypatch.setattr(scanning, "scan_photo", scan)
    created = client.post("/api/games", json={"game": "sagrada", "players": ["Ana"], "name": "Alternatives"}).json()
    url = f"/api/games/{created['id']}/players/{created['players'][0]['id']}"
    buffer = io.BytesIO()
    Image.new("RGB", (64, 48), (9, 9, 9)).save(buffer, format="PNG")
    view = client.post(f"{url}/photo", files={"photo": ("board.png", buffer.getvalue(), "image/png")}).json()
    first = {c["cell"]: c for c in view["players"][0]["cells"]}
    assert first["0,0"]["alternatives"] == ["G3", "R5"] and "alternatives" not in first["0,1"]
    view = client.post(f"{url}/rescan", json={"corners": [[1, 1], [59, 1], [59, 39], [1, 39]]}).json()
    assert "alternatives" not in {c["cell"]: c for c in view["players"][0]["cells"]}["0,0"]
