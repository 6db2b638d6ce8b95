"""The scan's verdict and pattern card on the review screen (issue #19): kept per photo, shown in the view."""

from __future__ import annotations

import io

import pytest
from PIL import Image
from starlette.testclient import TestClient

from tablescan.review import scanning
from tablescan.review.scanning import ScanOutcome
from tablescan.review.view import scan_review

DOUBTS = {"needed": True, "reasons": ["cell r1c1 read R3 at 42% (G3 close behind)", "the grid's lower-right corner is uncertain"]}
SURE = {"needed": False, "reasons": []}


def png_bytes(colour: tuple = (200, 30, 30)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (64, 48), colour).save(buffer, format="PNG")
    return buffer.getvalue()


def new_game(client: TestClient) -> dict:
    response = client.post("/api/games", json={"game": "sagrada", "players": ["Ana", "Bo"], "name": "Verdict night"})
    assert response.status_code == 201, response.text
    return response.json()


def upload(client: TestClient, view: dict, data: bytes):
    return client.post(
        f"/api/games/{view['id']}/players/{view['players'][0]['id']}/photo", files={"photo": ("board.png", data, "image/png")}
    )


def scripted_scanner(monkeypatch, outcomes: list[dict]) -> list[dict]:
    """Make each scan return the next of ``outcomes`` (review, pattern); return the calls' corners."""
    calls: list[dict] = []

    def fake_scan(path, game, corners=None, player_name=None, name=None, profile=None):
        script = outcomes[min(len(calls), len(outcomes) - 1)]
        calls.append({"corners": corners})
        square = [[10, 10], [20, 10], [20, 20], [10, 20]]
        readings = [{"cell": f"{r},{c}", "value": "."} for r in range(4) for c in range(5)]
        readings[0] = {"cell": "0,0", "value": "R3", "confidence": 0.42, "polygon": square}
        fields = {"pattern": script["pattern"]} if script.get("pattern") else {}
        return ScanOutcome(
            corners=corners or [[0, 0], [60, 0], [60, 40], [0, 40]],
            model="dice v9",
            readings=readings,
            review=script.get("review"),
            fields=fields,
        )

    monkeypatch.setattr(scanning, "scanner_games", lambda: ("sagrada",))
    monkeypatch.setattr(scanning, "scan_photo", fake_scan)
    return calls


def player_url(view: dict, index: int = 0) -> str:
    return f"/api/games/{view['id']}/players/{view['players'][index]['id']}"


@pytest.mark.parametrize(
    ("review", "expected"),
    [
        (DOUBTS, {**DOUBTS, "corrected": 0}),
        (SURE, {**SURE, "corrected": 0}),
        (None, None),  # a scanner that gives no verdict: the screen claims none
    ],
)
def test_the_scans_verdict_reaches_the_view_and_its_json_twin(client: TestClient, monkeypatch, review, expected) -> None:
    scripted_scanner(monkeypatch, [{"review": review}])
    view = upload(client, new_game(client), png_bytes()).json()
    assert view["players"][0]["review"] == expected
    assert view["players"][1]["review"] is None  # Bo has no photo: no verdict
    twin = client.get(f"/games/{view['id']}.json").json()
    assert twin["players"][0]["review"] == expected


def test_a_correction_keeps_the_verdict_and_counts_itself(client: TestClient, monkeypatch) -> None:
    scripted_scanner(monkeypatch, [{"review": DOUBTS}])
    view = upload(client, new_game(client), png_bytes()).json()
    view = client.put(f"{player_url(view)}/cells", json={"cell": "0,0", "value": "G3"}).json()
    assert view["players"][0]["review"] == {**DOUBTS, "corrected": 1}


def test_a_rescan_replaces_the_verdict_and_a_new_photo_has_its_own(client: TestClient, monkeypatch) -> None:
    scripted_scanner(monkeypatch, [{"review": DOUBTS}, {"review": SURE}, {"review": None}])
    view = upload(client, new_game(client), png_bytes()).json()
    view = client.post(f"{player_url(view)}/rescan", json={"corners": [[1, 1], [59, 1], [59, 39], [1, 39]]}).json()
    assert view["players"][0]["review"] == {**SURE, "corrected": 0}
    # another photo whose scan gives no verdict: the first photo's verdict does not follow the board
    view = upload(client, view, png_bytes(colour=(1, 2, 3))).json()
    assert view["players"][0]["review"] is None


def test_a_verdict_belongs_to_its_photo_when_the_scan_fails(client: TestClient, monkeypatch) -> None:
    scripted_scanner(monkeypatch, [{"review": DOUBTS}])
    view = upload(client, new_game(client), png_bytes()).json()

    def failing_scan(*args, **kwargs):
        raise RuntimeError("reader bug")

    monkeypatch.setattr(scanning, "scan_photo", failing_scan)
    refused = upload(client, view, png_bytes(colour=(9, 9, 9)))
    # #19: a photo the scanner cannot read no longer replaces a read one (this test used to see the new photo
    # attached with no verdict); the earlier photo stays, with its own verdict
    assert refused.status_code == 422 and "scanner failed" in refused.json()["error"]
    kept = client.get(f"/api/games/{view['id']}").json()["players"][0]
    assert kept["photo"] == view["players"][0]["photo"] and kept["review"] == {**DOUBTS, "corrected": 0}


@pytest.mark.parametrize(
    ("scans", "chosen", "corners", "expected"),
    [
        ([{"pattern": "Batllo"}], None, None, "Batllo"),  # the scanned card fills the window pattern
        ([{"pattern": None}], None, None, None),  # a scan that knows no card leaves it unset
        (
            [{"pattern": "Batllo"}, {"pattern": "Batllo"}],
            "Virtus",
            [[1, 1], [59, 1], [59, 39], [1, 39]],
            "Virtus",
        ),  # re-read keeps a choice
        ([{"pattern": None}, {"pattern": "Batllo"}], None, [[1, 1], [59, 1], [59, 39], [1, 39]], "Batllo"),  # re-read fills an unset one
        ([{"pattern": "Batllo"}, {"pattern": "Firmitas"}], "Virtus", None, "Firmitas"),  # a fresh search reads the card anew
    ],
)
def test_the_scanned_pattern_card_fills_the_window_pattern(client: TestClient, monkeypatch, scans, chosen, corners, expected) -> None:
    scripted_scanner(monkeypatch, scans)
    view = upload(client, new_game(client), png_bytes()).json()
    assert view["players"][0]["fields"]["pattern"] == scans[0]["pattern"]
    if chosen is not None:
        view = client.patch(player_url(view), json={"fields": {"pattern": chosen}}).json()
        assert view["players"][0]["fields"]["pattern"] == chosen  # the player can still change it
    if len(scans) > 1:
        view = client.post(f"{player_url(view)}/rescan", json={"corners": corners}).json()
    player = view["players"][0]
    assert player["fields"]["pattern"] == expected
    assert view["document"]["players"][0].get("pattern") == expected
    assert (player["pattern_grid"] is not None) == (expected is not None)


def test_scan_review_counts_only_corrected_cells() -> None:
    player = {
        "review": DOUBTS,
        "readings": [{"source": "corrected"}, {"source": "scan"}, {"source": "manual"}, {"source": "corrected"}],
    }
    assert scan_review(player) == {**DOUBTS, "corrected": 2}
    assert scan_review({"review": None, "readings": []}) is None
