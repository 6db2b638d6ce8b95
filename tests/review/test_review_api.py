"""The review screen's HTTP API, through Starlette's test client: games, cells, photos, token, errors."""

from __future__ import annotations

import hashlib
import html
import io
import re
from contextlib import nullcontext

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image
from starlette.testclient import TestClient

from scoring.errors import TableError
from scoring.registry import GAMES
from tablescan.review import scanning
from tablescan.review.app import MAX_UPLOAD_BYTES, create_app
from tablescan.review.routes import photos as app_module
from tablescan.review.scanning import ScanOutcome


def png_bytes(width: int = 64, height: int = 48, colour: tuple = (200, 30, 30)) -> bytes:
    """Return a small PNG, a stand-in for a photo."""
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), colour).save(buffer, format="PNG")
    return buffer.getvalue()


WINDOW = ["B4 Y3 G6 R3 B6", "G2 P5 B1 G4 R1", "B3 G6 Y2 P6 Y5", "Y1 B4 R1 G5 ."]


def window_cells(rows: list[str]) -> list[dict]:
    return [{"cell": f"{r},{c}", "value": die} for r, row in enumerate(rows) for c, die in enumerate(row.split())]


def new_game(client: TestClient, game: str = "sagrada", players: tuple = ("Ana", "Bo")) -> dict:
    response = client.post("/api/games", json={"game": game, "players": list(players), "name": "Test night"})
    assert response.status_code == 201, response.text
    return response.json()


def put_cells(client: TestClient, view: dict, index: int, cells: list[dict]) -> dict:
    player = view["players"][index]
    response = client.put(f"/api/games/{view['id']}/players/{player['id']}/cells", json={"cells": cells})
    assert response.status_code == 200, response.text
    return response.json()


def core_report(document: dict) -> dict:
    spec = GAMES[document["game"]]
    return spec.score(spec.parse(document)).to_json()


def test_create_game_gives_blank_boards_and_a_score(client: TestClient) -> None:
    view = new_game(client)
    assert [p["name"] for p in view["players"]] == ["Ana", "Bo"]
    assert view["document"]["players"][0]["window"] == [". . . . ."] * 4
    assert view["error"] is None
    assert [p["total"] for p in view["report"]["players"]] == [-20, -20]
    listing = client.get("/index.json").json()
    assert [g["id"] for g in listing["games"]] == [view["id"]]
    assert client.get(f"/games/{view['id']}.json").json()["id"] == view["id"]


def test_create_game_from_the_html_form_redirects_to_its_page(client: TestClient) -> None:
    response = client.post("/games", data={"game": "splendor", "players": "Ana\nBo\n\n", "name": ""}, follow_redirects=False)
    assert response.status_code == 303
    page = client.get(response.headers["location"])
    assert page.status_code == 200
    assert "initial-view" in page.text and "Splendor" in page.text


def test_entered_window_scores_exactly_as_the_core_does(client: TestClient) -> None:
    view = new_game(client)
    view = put_cells(client, view, 0, window_cells(WINDOW))
    assert view["document"]["players"][0]["window"] == WINDOW
    assert view["report"] == core_report(view["document"])
    assert view["report"]["players"][0]["breakdown"]["empty_cells"] == -1


def test_a_correction_changes_the_score_and_is_stored(client: TestClient) -> None:
    view = put_cells(client, new_game(client), 0, window_cells(WINDOW))
    before = view["players"][0]["report"]["total"]
    player_id = view["players"][0]["id"]
    response = client.put(f"/api/games/{view['id']}/players/{player_id}/cells", json={"cell": "3,4", "value": "p2"})
    after = response.json()
    assert after["document"]["players"][0]["window"][3] == "Y1 B4 R1 G5 P2"
    assert after["players"][0]["report"]["total"] > before  # no empty cell left, the last row now complete
    assert after["report"] == core_report(after["document"])
    rows = client.get(f"/api/games/{view['id']}/players/{player_id}/corrections").json()["corrections"]
    assert rows[-1]["cell"] == "3,4" and rows[-1]["old_value"] == "." and rows[-1]["new_value"] == "P2"
    assert rows[-1]["created_at"].endswith("+00:00")
    assert len(rows) == 20  # the 19 dice entered, then the correction


def test_unchanged_value_records_no_correction(client: TestClient) -> None:
    view = new_game(client)
    player_id = view["players"][0]["id"]
    url = f"/api/games/{view['id']}/players/{player_id}/cells"
    client.put(url, json={"cell": "0,0", "value": "R1"})
    client.put(url, json={"cell": "0,0", "value": "R1"})
    rows = client.get(f"/api/games/{view['id']}/players/{player_id}/corrections").json()["corrections"]
    assert [(r["old_value"], r["new_value"]) for r in rows] == [(".", "R1")]


def test_violations_reach_the_players_cells(client: TestClient) -> None:
    view = new_game(client)
    view = put_cells(client, view, 0, [{"cell": "0,0", "value": "R3"}, {"cell": "0,1", "value": "R5"}])
    flagged = {cell for issue in view["players"][0]["issues"] for cell in issue["cells"]}
    assert {"0,0", "0,1"} <= flagged
    assert view["players"][1]["issues"] == []


@pytest.mark.parametrize(
    ("game", "cell", "value", "expected"),
    [
        ("sagrada", "0,0", "b4", nullcontext("B4")),
        ("sagrada", "0,0", ".", nullcontext(".")),
        ("sagrada", "0,0", "X7", pytest.raises(AssertionError, match="not a die|expected a die")),
        ("sagrada", "4,0", "B4", pytest.raises(AssertionError, match="row 0-3")),
        ("alhambra", "2,-1", "Tower:wn", nullcontext("tower:NW")),
        ("alhambra", "2,-1", "castle", pytest.raises(AssertionError, match="fountain")),
        ("splendor", "red:2", "3", nullcontext("3")),
        ("splendor", "pink:2", "3", pytest.raises(AssertionError, match="colour:points")),
    ],
)
def test_cell_values_are_checked(client: TestClient, game, cell, value, expected) -> None:
    players = ("Ana", "Bo")
    view = new_game(client, game, players)
    player_id = view["players"][0]["id"]
    response = client.put(f"/api/games/{view['id']}/players/{player_id}/cells", json={"cell": cell, "value": value})
    with expected as wanted:
        assert response.status_code == 200, response.json()["error"]
        stored = {c["cell"]: c["value"] for c in response.json()["players"][0]["cells"]}
        assert stored[cell] == wanted


@pytest.mark.parametrize(
    ("method", "url", "body", "status", "fragment"),
    [
        ("post", "/api/games", {"game": "chess", "players": ["A"]}, 400, "game: expected one of"),
        ("post", "/api/games", {"game": "sagrada", "players": ["A", "A"]}, 400, "different name"),
        ("post", "/api/games", {"game": "alhambra", "players": ["A"]}, 400, "2-6 players"),
        ("get", "/api/games/999", None, 404, "game 999: no such game"),
        ("patch", "/api/games/{id}", {"settings": {"public_objectives": ["nope"]}}, 400, "settings.public_objectives"),
        ("patch", "/api/games/{id}/players/{pid}", {"fields": {"favor_tokens": -1}}, 400, "fields.favor_tokens"),
        ("patch", "/api/games/{id}/players/{pid}", {"fields": {"pattern": "Nowhere"}}, 400, "no window pattern"),
        ("put", "/api/games/{id}/players/99999/cells", {"cell": "0,0", "value": "R1"}, 404, "has no player"),
    ],
)
def test_bad_requests_are_one_line_json_errors(client: TestClient, method, url, body, status, fragment) -> None:
    view = new_game(client)
    url = url.format(id=view["id"], pid=view["players"][0]["id"])
    response = getattr(client, method)(url, **({} if body is None else {"json": body}))
    assert response.status_code == status
    assert fragment in response.json()["error"]
    assert "\n" not in response.json()["error"]


def test_errors_on_pages_are_html(client: TestClient) -> None:
    response = client.get("/games/12345")
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("text/html")
    assert "game 12345: no such game" in response.text


def test_invalid_json_body_is_a_400(client: TestClient) -> None:
    response = client.post("/api/games", content=b"{nope", headers={"content-type": "application/json"})
    assert response.status_code == 400
    assert response.json()["error"].startswith("request body: expected JSON")


def test_settings_and_fields_reach_the_document(client: TestClient) -> None:
    view = new_game(client)
    game_url = f"/api/games/{view['id']}"
    client.patch(game_url, json={"settings": {"public_objectives": ["shade-variety", "deep-shades"]}})
    player_url = f"{game_url}/players/{view['players'][1]['id']}"
    view = client.patch(
        player_url, json={"name": "Bea", "fields": {"private_objective": "green", "favor_tokens": "3", "pattern": "Virtus"}}
    ).json()
    document = view["document"]
    assert document["public_objectives"] == ["shade-variety", "deep-shades"]
    assert document["players"][1] == {
        "name": "Bea",
        "window": [". . . . ."] * 4,
        "pattern": "Virtus",
        "private_objective": "green",
        "favor_tokens": 3,
    }
    clash = client.patch(player_url, json={"name": "Ana"})
    assert clash.status_code == 400 and "already called" in clash.json()["error"]


def test_solo_sagrada_builds_the_solo_block(client: TestClient) -> None:
    view = new_game(client, "sagrada", ("Sol",))
    view = client.patch(
        f"/api/games/{view['id']}", json={"settings": {"solo": {"private_objectives": ["red", "green"], "round_track_sum": 30}}}
    ).json()
    assert view["document"]["solo"] == {"private_objectives": ["red", "green"], "round_track_sum": 30}
    assert "private_objective" not in view["document"]["players"][0]
    assert view["report"]["solo"]["target"] == 30


def test_alhambra_scorings_accumulate(client: TestClient) -> None:
    view = new_game(client, "alhambra", ("Ana", "Bo"))
    view = put_cells(client, view, 0, [{"cell": "1,0", "value": "garden:N"}, {"cell": "0,1", "value": "tower:W"}])
    view = put_cells(client, view, 1, [{"cell": "1,0", "value": "pavilion:NE"}])
    dirk = dict.fromkeys(view["options"]["tile_types"], 0)  # Dirk's buildings counted: none yet
    view = client.patch(f"/api/games/{view['id']}", json={"settings": {"dirk": dirk}}).json()
    assert view["report"] == core_report(view["document"])
    first = {p["name"]: p["total"] for p in view["report"]["players"]}
    assert first["Ana"] > 0 and view["settings"]["scoring_round"] == 1
    view = client.post(f"/api/games/{view['id']}/rounds").json()
    assert view["settings"]["scoring_round"] == 2
    assert [r["round"] for r in view["rounds"]] == [1]
    assert {p["name"]: p["fields"]["score_before"] for p in view["players"]} == first
    assert {p["name"]: p["score_before"] for p in view["document"]["players"]} == first
    second = {p["name"]: p["total"] for p in view["report"]["players"]}
    assert all(second[name] >= first[name] for name in first)
    client.post(f"/api/games/{view['id']}/rounds")
    view = client.post(f"/api/games/{view['id']}/rounds").json()
    assert [r["round"] for r in view["rounds"]] == [1, 2, 3]
    assert view["settings"]["scoring_round"] == 3


def test_alhambra_final_round_carries_dirk_market_and_money(client: TestClient) -> None:
    view = new_game(client, "alhambra", ("Ana", "Bo"))
    game_url = f"/api/games/{view['id']}"
    client.patch(
        game_url,
        json={"settings": {"scoring_round": 3, "dirk": {"garden": 2}, "market": [{"currency": "denar", "type": "tower", "walls": "en"}]}},
    )
    view = client.patch(f"{game_url}/players/{view['players'][0]['id']}", json={"fields": {"money": {"denar": 5}}}).json()
    document = view["document"]
    assert document["dirk"]["garden"] == 2
    assert document["market"] == [{"currency": "denar", "type": "tower", "walls": "NE"}]
    assert document["players"][0]["money"] == {"denar": 5, "dirham": 0, "ducat": 0, "florin": 0}
    assert view["report"]["market_awards"][0]["to"] == "Ana"


@pytest.mark.parametrize(
    ("reserve", "expected"),
    [
        ("garden:n, Tower:se", nullcontext([{"type": "garden", "walls": "N"}, {"type": "tower", "walls": "ES"}])),
        ("", nullcontext([])),
        ("fountain", pytest.raises(AssertionError, match="building tile")),
        ("castle:N", pytest.raises(AssertionError, match="fountain, empty or one of")),
    ],
)
def test_alhambra_reserve_is_entered_as_text(client: TestClient, reserve: str, expected) -> None:
    view = new_game(client, "alhambra", ("Ana", "Bo"))
    response = client.patch(f"/api/games/{view['id']}/players/{view['players'][0]['id']}", json={"fields": {"reserve": reserve}})
    with expected as wanted:
        assert response.status_code == 200, response.json()["error"]
        assert response.json()["document"]["players"][0]["reserve"] == wanted


def test_splendor_nobles_by_id_reach_the_core(client: TestClient) -> None:
    view = new_game(client, "splendor", ("Ana", "Bo"))
    url = f"/api/games/{view['id']}/players/{view['players'][0]['id']}"
    view = client.patch(url, json={"fields": {"nobles": ["N1"]}}).json()
    assert view["document"]["players"][0]["nobles"] == ["N1"]
    assert view["players"][0]["report"]["prestige"] == 3
    assert any("N1" in issue["detail"] for issue in view["players"][0]["issues"])  # no white or blue cards for it
    bad = client.patch(url, json={"fields": {"nobles": ["N99"]}})
    assert bad.status_code == 400 and "noble ids" in bad.json()["error"]


def test_splendor_counts_become_cards(client: TestClient) -> None:
    view = new_game(client, "splendor", ("Ana", "Bo"))
    view = put_cells(client, view, 0, [{"cell": "red:2", "value": "2"}, {"cell": "blue:0", "value": "3"}])
    game_url = f"/api/games/{view['id']}"
    view = client.patch(f"{game_url}/players/{view['players'][0]['id']}", json={"fields": {"nobles": 1}}).json()
    cards = view["document"]["players"][0]["cards"]
    assert sorted((c["bonus"], c["points"]) for c in cards) == [("blue", 0)] * 3 + [("red", 2)] * 2
    assert view["players"][0]["report"]["prestige"] == 7
    assert view["standings"] == []  # Bo's tableau is not entered yet: no ranking on a blank one
    view = put_cells(client, view, 1, [{"cell": "green:1", "value": "1"}])
    view = client.patch(f"{game_url}/players/{view['players'][1]['id']}", json={"fields": {"nobles": 0}}).json()
    assert view["incomplete"] == [] and view["standings"][0]["name"] == "Ana"


# -- photos -----------------------------------------------------------------------------------


def upload(client: TestClient, view: dict, data: bytes, name: str = "board.png", index: int = 0):
    player = view["players"][index]
    return client.post(f"/api/games/{view['id']}/players/{player['id']}/photo", files={"photo": (name, data, "image/png")})


def test_photo_upload_is_stored_once_by_hash_and_served(client: TestClient, db_path) -> None:
    view = new_game(client, "splendor")
    data = png_bytes()
    first = upload(client, view, data)
    assert first.status_code == 200, first.text
    photo = first.json()["players"][0]["photo"]
    sha = hashlib.sha256(data).hexdigest()
    assert photo["sha256"] == sha and (photo["width_px"], photo["height_px"]) == (64, 48)
    assert "no photo scanner" in first.json()["notice"]
    upload(client, view, data, index=1)
    stored = list((db_path.parent / "review-photos").iterdir())
    assert [p.name for p in stored] == [f"{sha}.png"]
    served = client.get(photo["url"])
    assert served.status_code == 200 and served.content == data
    assert served.headers["content-type"] == "image/png"


@pytest.mark.parametrize(
    ("data", "status", "fragment"),
    [
        (b"", 400, "empty"),
        (b"%PDF-1.4 not a photo", 400, "not a readable image"),
        (png_bytes()[:40], 400, "not a readable image"),
    ],
)
def test_bad_uploads_are_refused(client: TestClient, data: bytes, status: int, fragment: str) -> None:
    view = new_game(client)
    response = upload(client, view, data, name="x.png")
    assert response.status_code == status
    assert fragment in response.json()["error"]


def test_gif_is_refused_even_though_it_is_an_image(client: TestClient) -> None:
    buffer = io.BytesIO()
    Image.new("RGB", (8, 8)).save(buffer, format="GIF")
    response = upload(client, new_game(client), buffer.getvalue(), name="x.gif")
    assert response.status_code == 400 and "GIF" in response.json()["error"]


def test_oversized_upload_is_refused_with_413(client: TestClient) -> None:
    view = new_game(client)
    big = b"\xff\xd8" + b"\0" * (MAX_UPLOAD_BYTES + 10)
    response = upload(client, view, big, name="huge.jpg")
    assert response.status_code == 413
    assert "30 MB" in response.json()["error"]


def test_oversized_raw_upload_is_refused_with_413(client: TestClient, monkeypatch) -> None:
    monkeypatch.setattr(app_module, "MAX_UPLOAD_BYTES", 1000)
    view = new_game(client)
    player = view["players"][0]
    response = client.post(
        f"/api/games/{view['id']}/players/{player['id']}/photo", content=b"x" * 2000, headers={"content-type": "image/png"}
    )
    assert response.status_code == 413


@pytest.mark.parametrize("sha", ["0" * 64, "../../etc/passwd", "review.sqlite3"])
def test_photos_are_only_found_by_known_hash(client: TestClient, sha: str) -> None:
    assert client.get(f"/photos/{sha}").status_code == 404


def test_scan_results_become_readings_and_corrections_keep_the_model(client: TestClient, monkeypatch) -> None:
    calls = []

    def fake_scan(path, game, corners=None, player_name=None, name=None, profile=None):
        calls.append((name, game, corners))
        square = [[10, 10], [20, 10], [20, 20], [10, 20]]
        readings = [{"cell": f"{r},{c}", "value": "."} for r in range(4) for c in range(5)]
        readings[0] = {"cell": "0,0", "value": "R3", "confidence": 0.42, "polygon": square}
        return ScanOutcome(corners=corners or [[0, 0], [60, 0], [60, 40], [0, 40]], model="dice v9", readings=readings)

    monkeypatch.setattr(scanning, "scanner_games", lambda: ("sagrada",))
    monkeypatch.setattr(scanning, "scan_photo", fake_scan)
    view = new_game(client)
    view = upload(client, view, png_bytes()).json()
    player = view["players"][0]
    assert player["model"] == "dice v9" and player["corners"] == [[0, 0], [60, 0], [60, 40], [0, 40]]
    reading = next(c for c in player["cells"] if c["cell"] == "0,0")
    assert reading == {
        "cell": "0,0",
        "value": "R3",
        "confidence": 0.42,
        "polygon": [[10, 10], [20, 10], [20, 20], [10, 20]],
        "source": "scan",
    }
    url = f"/api/games/{view['id']}/players/{player['id']}"
    view = client.post(f"{url}/rescan", json={"corners": [[1, 1], [59, 1], [59, 39], [1, 39]]}).json()
    assert calls[-1][2] == [[1.0, 1.0], [59.0, 1.0], [59.0, 39.0], [1.0, 39.0]]
    assert calls[0][0] == "board.png"  # messages name the uploaded file, not its hash
    client.put(f"{url}/cells", json={"cell": "0,0", "value": "R5"})
    row = client.get(f"{url}/corrections").json()["corrections"][-1]
    assert (row["old_value"], row["new_value"], row["model"], row["confidence"]) == ("R3", "R5", "dice v9", 0.42)
    assert row["polygon"] == [[10, 10], [20, 10], [20, 20], [10, 20]]
    # a re-read of the same photo keeps the correction; a new photo starts from its own reading
    view = client.post(f"{url}/rescan", json={"corners": [[2, 2], [58, 2], [58, 38], [2, 38]]}).json()
    cell = next(c for c in view["players"][0]["cells"] if c["cell"] == "0,0")
    assert (cell["value"], cell["source"], cell["confidence"]) == ("R5", "corrected", 0.42)
    view = upload(client, view, png_bytes(colour=(1, 2, 3))).json()
    cell = next(c for c in view["players"][0]["cells"] if c["cell"] == "0,0")
    assert (cell["value"], cell["source"]) == ("R3", "scan")
    bad = client.post(f"{url}/rescan", json={"corners": [[1, 1]]})
    assert bad.status_code == 400 and "corners" in bad.json()["error"]


@pytest.mark.parametrize(
    ("error", "notice"),
    [
        (TableError("board.png: board not found; retake from above"), "board.png: board not found; retake from above"),
        # #19: errors never name Python exceptions (this notice said "RuntimeError: reader bug")
        (
            RuntimeError("reader bug"),
            "board.png: the scanner failed on this photo (details are in the server log); enter the board by hand",
        ),
    ],
)
def test_a_failed_scan_keeps_the_photo_and_says_why(client: TestClient, monkeypatch, error, notice) -> None:
    def failing_scan(path, game, corners=None, player_name=None, name=None, profile=None):
        raise error

    monkeypatch.setattr(scanning, "scanner_games", lambda: ("sagrada",))
    monkeypatch.setattr(scanning, "scan_photo", failing_scan)
    view = upload(client, new_game(client), png_bytes()).json()
    assert view["notice"] == notice
    assert view["players"][0]["photo"] is not None
    view = client.post(
        f"/api/games/{view['id']}/players/{view['players'][0]['id']}/rescan", json={"corners": [[1, 1], [9, 1], [9, 9], [1, 9]]}
    ).json()
    assert view["notice"] == notice and view["players"][0]["corners"] == [[1, 1], [9, 1], [9, 9], [1, 9]]


def jpeg_bytes(colour: tuple = (90, 60, 30)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (320, 240), colour).save(buffer, format="JPEG", quality=90)
    return buffer.getvalue()


def reading_scan(path, game, corners=None, player_name=None, name=None, profile=None):
    """A stand-in scanner: reads any photo as a red 3 in the top-left cell, refuses files named bad*."""
    if name.startswith("bad"):
        raise TableError(f"{name}: board not found; retake from above")
    square = [[10, 10], [20, 10], [20, 20], [10, 20]]
    readings = [{"cell": f"{r},{c}", "value": "."} for r in range(4) for c in range(5)]
    readings[0] = {"cell": "0,0", "value": "R3", "confidence": 0.9, "polygon": square}
    return ScanOutcome(corners=[[0, 0], [60, 0], [60, 40], [0, 40]], model="dice v9", readings=readings)


@pytest.mark.parametrize(
    ("data", "name", "status", "fragment"),
    [
        (jpeg_bytes((5, 5, 5))[:-400], "cut.jpg", 400, "cut.jpg: not a readable image (damaged, cut short or not a photo)"),
        (b"\xff\xd8\xff\xe0 garbage", "junk.jpg", 400, "junk.jpg: not a readable image"),
        (jpeg_bytes((5, 5, 5)), "bad.jpg", 422, "bad.jpg: board not found; retake from above; this photo was not used"),
    ],
)
def test_a_photo_that_cannot_be_read_never_replaces_one_that_could(client: TestClient, monkeypatch, data, name, status, fragment) -> None:
    monkeypatch.setattr(scanning, "scanner_games", lambda: ("sagrada",))
    monkeypatch.setattr(scanning, "scan_photo", reading_scan)
    good = upload(client, new_game(client), jpeg_bytes(), name="good.jpg").json()
    before = good["players"][0]
    refused = upload(client, good, data, name=name)
    assert refused.status_code == status
    error = refused.json()["error"]
    assert fragment in error and "Error" not in error  # said in words, no Python exception names
    after = client.get(f"/api/games/{good['id']}").json()["players"][0]
    assert after["photo"] == before["photo"] and after["photo"]["name"] == "good.jpg"
    assert (after["cells"], after["corners"], after["model"]) == (before["cells"], before["corners"], "dice v9")


def test_readings_belong_to_the_photo_they_were_read_from(client: TestClient, monkeypatch) -> None:
    monkeypatch.setattr(scanning, "scanner_games", lambda: ("sagrada",))
    monkeypatch.setattr(scanning, "scan_photo", reading_scan)
    view = new_game(client)
    # a first photo the scanner cannot read is kept (there is nothing better), with no outlines on it
    view = upload(client, view, jpeg_bytes((1, 1, 1)), name="bad-first.jpg").json()
    player = view["players"][0]
    assert player["photo"]["name"] == "bad-first.jpg" and "board not found" in view["notice"]
    assert not any(c.get("polygon") for c in player["cells"])
    # a readable one replaces it and brings its own readings
    view = upload(client, view, jpeg_bytes(), name="good.jpg").json()
    player = view["players"][0]
    assert player["photo"]["name"] == "good.jpg" and view["notice"] is None
    assert next(c for c in player["cells"] if c["cell"] == "0,0")["polygon"] == [[10, 10], [20, 10], [20, 20], [10, 20]]


# -- token ------------------------------------------------------------------------------------


def test_lan_token_is_required_on_every_request(db_path) -> None:
    with TestClient(create_app(db_path, token="s3cret-token")) as lan:
        assert lan.get("/").status_code == 403
        denied = lan.get("/api/games")
        assert denied.status_code == 403 and "token" in denied.json()["error"]
        assert lan.get("/static/review.js").status_code == 403
        assert lan.get("/static/games/sagrada.js").status_code == 403
        assert lan.get("/?token=wrong").status_code == 403
        lan.cookies.set("tablescan_token", "wrong")
        assert lan.get("/").status_code == 403
        lan.cookies.clear()
        welcome = lan.get("/?token=s3cret-token")
        assert welcome.status_code == 200
        assert "tablescan_token=s3cret-token" in welcome.headers["set-cookie"]
        assert "HttpOnly" in welcome.headers["set-cookie"]
        assert lan.get("/api/games").status_code == 200  # the cookie now carries it
        created = lan.post("/api/games", json={"game": "sagrada", "players": ["A", "B"]})
        assert created.status_code == 201


@pytest.mark.parametrize("url", ["/", "/index.json", "/static/review.js", "/games/999"])
def test_responses_carry_a_strict_content_policy_and_no_referrer(client: TestClient, url: str) -> None:
    headers = client.get(url).headers
    assert "default-src 'self'" in headers["content-security-policy"]
    assert headers["referrer-policy"] == "no-referrer"
    assert headers["x-content-type-options"] == "nosniff"


def test_the_refusal_page_is_styled_and_links_to_nothing_refused(db_path) -> None:
    """Without the token the page still gets its stylesheet, says how to get in, and offers no link that is refused again."""
    with TestClient(create_app(db_path, token="s3cret-token")) as lan:
        page = lan.get("/games/1")
        assert page.status_code == 403
        assert "?token=" in page.text and "tablescan review" in page.text
        assert lan.get("/static/review.css").status_code == 200 and lan.get("/static/favicon.svg").status_code == 200
        links = re.findall(r'href="([^"]+)"', page.text)
        assert links and all(link.startswith("/static/") for link in links), links  # no Back link to a refusal
        assert "Back to the games" not in page.text
        assert "s3cret-token" not in page.text


def test_local_mode_needs_no_token(client: TestClient) -> None:
    assert client.get("/").status_code == 200
    assert "set-cookie" not in client.get("/").headers


def test_names_are_escaped_in_pages_and_embedded_json(client: TestClient) -> None:
    evil = "</script><script>alert(1)</script>"
    response = client.post("/api/games", json={"game": "sagrada", "players": ["Ana", "Bo"], "name": evil})
    game_id = response.json()["id"]
    for url in ("/", f"/games/{game_id}"):
        page = client.get(url).text
        assert "<script>alert(1)</script>" not in page
    assert "\\u003c/script\\u003e" in client.get(f"/games/{game_id}").text


def test_photo_size_is_given_upright_as_exif_orientation_says(client: TestClient) -> None:
    image = Image.new("RGB", (60, 20), (10, 120, 200))
    exif = image.getexif()
    exif[0x0112] = 6  # stored sideways: shown rotated by 90 degrees
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", exif=exif)
    view = upload(client, new_game(client, "splendor"), buffer.getvalue(), name="side.jpg").json()
    photo = view["players"][0]["photo"]
    assert (photo["width_px"], photo["height_px"]) == (20, 60)


def test_chunked_multipart_upload_without_length_is_refused(client: TestClient) -> None:
    view = new_game(client)
    player = view["players"][0]
    boundary = "b0undary"
    body = (
        (f'--{boundary}\r\nContent-Disposition: form-data; name="photo"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n').encode()
        + png_bytes()
        + f"\r\n--{boundary}--\r\n".encode()
    )

    def chunks():
        yield body

    response = client.post(
        f"/api/games/{view['id']}/players/{player['id']}/photo",
        content=chunks(),
        headers={"content-type": f"multipart/form-data; boundary={boundary}"},
    )
    assert response.status_code == 411
    assert "Content-Length" in response.json()["error"]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 50) | st.text(max_size=6) | st.sampled_from(["B4", "garden:N", "red:1", "0,0", "N1"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "cell",
                    "value",
                    "cells",
                    "fields",
                    "settings",
                    "nobles",
                    "money",
                    "dirk",
                    "market",
                    "public_objectives",
                    "favor_tokens",
                    "pattern",
                    "reserve",
                    "solo",
                    "scoring_round",
                    "name",
                ]
            ),
            inner,
            max_size=3,
        )
    ),
    max_leaves=8,
)


@pytest.mark.parametrize("game", ["sagrada", "alhambra", "splendor"])
def test_arbitrary_json_edits_give_a_view_or_a_one_line_400(client: TestClient, game: str) -> None:
    view = new_game(client, game, ("Ana", "Bo"))
    base = f"/api/games/{view['id']}"
    player = f"{base}/players/{view['players'][0]['id']}"

    @settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(target=st.sampled_from(["cells", "player", "game"]), body=json_values)
    def check(target: str, body) -> None:
        if target == "cells":
            response = client.put(f"{player}/cells", json=body)
        elif target == "player":
            response = client.patch(player, json=body)
        else:
            response = client.patch(base, json=body)
        assert response.status_code in (200, 400), response.text
        if response.status_code == 400:
            assert set(response.json()) == {"error"} and "\n" not in response.json()["error"]
        else:
            assert response.json()["id"] == view["id"]

    check()


def test_a_crashing_core_still_shows_the_game(client: TestClient, monkeypatch) -> None:
    from dataclasses import replace

    from scoring import registry

    def broken(state):
        raise ZeroDivisionError("division by zero")

    view = new_game(client)
    monkeypatch.setitem(registry.GAMES, "sagrada", replace(registry.GAMES["sagrada"], score=broken))
    response = client.get(f"/games/{view['id']}.json")
    assert response.status_code == 200
    error = response.json()["error"]
    assert error.startswith("the Sagrada scoring core failed on this game (details are in the server log)")
    assert "ZeroDivisionError" not in error and "division by zero" not in error  # no Python in the players' words
    assert client.get(f"/games/{view['id']}").status_code == 200


@pytest.mark.parametrize(
    ("form", "field", "message"),
    [
        ({"game": "alhambra", "players": "Ana"}, "players", "Alhambra needs 2-6 players (with 2, Dirk plays along)"),
        ({"game": "sagrada", "players": "Ana\nAna"}, "players", "every player needs a different name"),
        ({"game": "chess", "players": "Ana\nBo"}, "game", "expected one of alhambra, sagrada, splendor, got 'chess'"),
    ],
)
def test_a_refused_new_game_comes_back_as_typed_with_the_error_beside_its_field(client: TestClient, form, field, message) -> None:
    response = client.post("/games", data={**form, "name": "Friday <night>"}, follow_redirects=False)
    assert response.status_code == 400
    shown = html.escape(message).replace("&#x27;", "&#39;")  # as Jinja escapes it
    assert f'<p class="field-error" id="{field}-error" role="alert">{shown}</p>' in response.text
    assert "Friday &lt;night&gt;" in response.text and ">" + form["players"] + "</textarea>" in response.text
    assert "<h1>New game</h1>" in response.text and client.get("/index.json").json()["games"] == []  # nothing created
