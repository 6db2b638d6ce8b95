"""A correction on a grid that reads as misplaced asks for the corners first (issue #18)."""

from __future__ import annotations

from tablescan.review.db import Store

TRUTH = ["B4 Y3 G6 R3 B6", "G2 P5 B1 G4 R1", "B3 G6 Y2 P6 Y5", "Y1 B4 R1 G5 P2"]


def _scanned(db_path, shifted: bool) -> tuple[int, int]:
    """A Sagrada board scanned from a photo; with ``shifted`` its grid lay a cell to the left (each crop shows the die left of it)."""
    store = Store(db_path)
    game = store.create_game("sagrada", "t", {}, [("Ana", {})])
    player = store.players(game)[0]["id"]
    record = store.add_photo("c" * 64, ".jpg", b"x", "image/jpeg", (10, 10), "p.jpg")
    store.attach_photo(game, player, record.id)
    readings, examples = [], []
    for r, row in enumerate(TRUTH):
        values = row.split()
        for c in range(5):
            read = (values[c - 1] if c else ".") if shifted else values[c]
            readings.append({"cell": f"{r},{c}", "value": read, "polygon": [[c, r], [c + 1, r], [c + 1, r + 1], [c, r + 1]]})
            examples.append({"cell": f"{r},{c}", "crop": b"png", "read": read, "confidence": 0.9})
    store.store_scan(game, player, [[0, 0], [5, 0], [5, 4], [0, 4]], "m", readings, examples=examples)
    return game, player


def test_correcting_a_misplaced_grid_asks_for_the_corners_first(client, db_path) -> None:
    game, player = _scanned(db_path, shifted=True)
    url = f"/api/games/{game}/players/{player}/cells"
    first = client.put(url, json={"cells": [{"cell": f"0,{c}", "value": v} for c, v in enumerate(TRUTH[0].split())]})
    assert first.status_code == 200
    assert "corners_first" not in first.json()  # one row corrected: nothing to tell yet
    rest = [{"cell": f"{r},{c}", "value": v} for r in (1, 2) for c, v in enumerate(TRUTH[r].split())]
    answer = client.put(url, json={"cells": rest}).json()
    assert answer["corners_first"]["player"] == player
    assert "drag its four corners" in answer["corners_first"]["message"]
    assert answer["notice"] == answer["corners_first"]["message"]  # what the page shows above the boards
    # and adapting leaves that photo out, saying so
    from tablescan.adapt import misplaced_photos

    _, notes = misplaced_photos(Store(db_path).examples())
    assert len(notes) == 1 and "p.jpg: left out, its grid reads as misplaced" in notes[0]


def test_correcting_a_grid_in_place_asks_nothing(client, db_path) -> None:
    game, player = _scanned(db_path, shifted=False)
    answer = client.put(f"/api/games/{game}/players/{player}/cells", json={"cell": "0,0", "value": "R2"}).json()
    assert "corners_first" not in answer
