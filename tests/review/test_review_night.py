"""Managing a game night through the review API: rename, delete and restore, players in and out,
undo and redo (cells, settings, rounds, two phones), the games list, results as CSV and image, the join QR code."""

from __future__ import annotations

import csv
import io
import warnings
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from tablescan.corrections import export_corrections
from tablescan.review import usecases
from tablescan.review.app import create_app
from tablescan.review.db import LATEST_VERSION, Store
from tablescan.review.forms.sagrada import DIE_IMAGE_COLOURS

WINDOW = ["B4 Y3 G6 R3 B6", "G2 P5 B1 G4 R1", "B3 G6 Y2 P6 Y5", "Y1 B4 R1 G5 ."]


def window_cells(rows: list[str]) -> list[dict]:
    return [{"cell": f"{r},{c}", "value": die} for r, row in enumerate(rows) for c, die in enumerate(row.split())]


def new_game(client: TestClient, game: str = "sagrada", players: tuple = ("Ana", "Bo"), name: str = "Friday") -> dict:
    response = client.post("/api/games", json={"game": game, "players": list(players), "name": name})
    assert response.status_code == 201, response.text
    return response.json()


def player_url(view: dict, index: int) -> str:
    return f"/api/games/{view['id']}/players/{view['players'][index]['id']}"


def cell(view: dict, index: int, name: str) -> str:
    return next(c["value"] for c in view["players"][index]["cells"] if c["cell"] == name)


def set_everything(client: TestClient, view: dict) -> dict:
    """Enter both Sagrada windows and every deciding field, so the game ranks."""
    objectives = ["row-color-variety", "light-shades", "color-diagonals"]
    client.patch(f"/api/games/{view['id']}", json={"settings": {"public_objectives": objectives}})
    client.put(player_url(view, 0) + "/cells", json={"cells": window_cells(WINDOW)})
    client.put(player_url(view, 1) + "/cells", json={"cells": window_cells([row.replace("B4", "G4") for row in WINDOW])})
    client.patch(player_url(view, 0), json={"fields": {"private_objective": "blue", "favor_tokens": 2}})
    return client.patch(player_url(view, 1), json={"fields": {"private_objective": "red", "favor_tokens": 1}}).json()


def test_the_schema_has_the_night_management_migration(db_path: Path) -> None:
    assert LATEST_VERSION >= 6  # the night management migration is the sixth
    with Store(db_path).reading() as conn:
        columns = {row["name"] for row in conn.execute("PRAGMA table_info(changes)")}
        assert {"diff", "label", "state", "player_id"} <= columns
        assert "deleted_at" in {row["name"] for row in conn.execute("PRAGMA table_info(games)")}
        assert "removed_at" in {row["name"] for row in conn.execute("PRAGMA table_info(players)")}


def test_undo_and_redo_a_cell_correction_and_log_both(client: TestClient, db_path: Path, tmp_path: Path) -> None:
    view = new_game(client)
    url = f"/api/games/{view['id']}"
    assert view["history"] == {"undo": None, "redo": None}
    view = client.put(player_url(view, 0) + "/cells", json={"cell": "1,2", "value": "B4"}).json()
    view = client.put(player_url(view, 0) + "/cells", json={"cell": "1,2", "value": "G4"}).json()
    assert view["history"]["undo"] == "set a cell of Ana's board to G4"
    view = client.post(url + "/undo").json()
    assert cell(view, 0, "1,2") == "B4"
    assert view["notice"] == "undone: set a cell of Ana's board to G4"
    assert view["history"] == {"undo": "set a cell of Ana's board to B4", "redo": "set a cell of Ana's board to G4"}
    view = client.post(url + "/undo").json()
    assert cell(view, 0, "1,2") == "."
    assert client.post(url + "/undo").json()["notice"] == "nothing to undo"
    view = client.post(url + "/redo").json()
    assert cell(view, 0, "1,2") == "B4" and view["history"]["redo"] == "set a cell of Ana's board to G4"
    # a new change after an undo: what was undone can no longer be redone
    view = client.put(player_url(view, 0) + "/cells", json={"cell": "0,0", "value": "R1"}).json()
    assert view["history"]["redo"] is None
    assert client.post(url + "/redo").json()["notice"] == "nothing to redo"
    # the correction log holds every change, undo and redo included; the export keeps only what stands
    log = client.get(player_url(view, 0) + "/corrections").json()["corrections"]
    assert [(c["cell"], c["old_value"], c["new_value"]) for c in log] == [
        ("1,2", ".", "B4"),
        ("1,2", "B4", "G4"),
        ("1,2", "G4", "B4"),
        ("1,2", "B4", "."),
        ("1,2", ".", "B4"),
        ("0,0", ".", "R1"),
    ]
    index = export_corrections(Store(db_path), tmp_path / "out", include_manual=True)
    assert sorted((item["cell"], item["label"]) for item in index["items"]) == [("0,0", "R1"), ("1,2", "B4")]


def test_undo_takes_back_settings_fields_and_names(client: TestClient) -> None:
    view = new_game(client)
    url = f"/api/games/{view['id']}"
    client.patch(url, json={"settings": {"public_objectives": ["shade-variety"]}})
    client.patch(player_url(view, 1), json={"fields": {"private_objective": "red"}})
    view = client.patch(url, json={"name": "Saturday"}).json()
    assert view["name"] == "Saturday" and view["history"]["undo"] == "rename the game"
    view = client.post(url + "/undo").json()
    assert view["name"] == "Friday"
    view = client.post(url + "/undo").json()
    assert view["players"][1]["fields"]["private_objective"] is None
    view = client.post(url + "/undo").json()
    assert view["settings"]["public_objectives"] != ["shade-variety"]
    view = client.post(url + "/redo").json()
    assert view["settings"]["public_objectives"] == ["shade-variety"]


def test_an_undo_leaves_what_it_did_not_change_alone(client: TestClient) -> None:
    view = new_game(client)
    client.patch(player_url(view, 0), json={"fields": {"private_objective": "blue"}})
    client.patch(player_url(view, 0), json={"fields": {"favor_tokens": 3}})
    view = client.post(f"/api/games/{view['id']}/undo").json()
    fields = view["players"][0]["fields"]
    assert fields["favor_tokens"] is None and fields["private_objective"] == "blue"


def enter_alhambra(client: TestClient, view: dict) -> None:
    """Ana's and Bo's palaces and Dirk's buildings, so a two-player Alhambra scoring can be recorded."""
    client.put(player_url(view, 0) + "/cells", json={"cells": [{"cell": "1,0", "value": "garden:N"}]})
    client.put(player_url(view, 1) + "/cells", json={"cells": [{"cell": "1,0", "value": "pavilion:"}]})
    client.patch(
        f"/api/games/{view['id']}",
        json={"settings": {"dirk": dict.fromkeys(("pavilion", "seraglio", "arcades", "chambers", "garden", "tower"), 0)}},
    )


def test_undo_of_a_recorded_alhambra_round(client: TestClient) -> None:
    view = new_game(client, "alhambra", ("Ana", "Bo"))
    enter_alhambra(client, view)
    view = client.post(f"/api/games/{view['id']}/rounds").json()
    assert view["settings"]["scoring_round"] == 2 and view["players"][0]["fields"]["score_before"] > 0
    assert view["history"]["undo"] == "record scoring 1"
    view = client.post(f"/api/games/{view['id']}/undo").json()
    assert view["rounds"] == []
    assert view["settings"]["scoring_round"] == 1
    assert [p["fields"]["score_before"] for p in view["players"]] == [None, None]  # as before: none before the first
    view = client.post(f"/api/games/{view['id']}/redo").json()
    assert [r["round"] for r in view["rounds"]] == [1] and view["settings"]["scoring_round"] == 2


def test_two_phones_see_one_history(db_path: Path) -> None:
    with TestClient(create_app(db_path)) as first, TestClient(create_app(db_path)) as second:
        view = new_game(first)
        first.put(player_url(view, 0) + "/cells", json={"cell": "0,0", "value": "Y5"})
        seen = second.get(f"/games/{view['id']}.json").json()
        assert cell(seen, 0, "0,0") == "Y5" and seen["history"]["undo"] == "set a cell of Ana's board to Y5"
        second.post(f"/api/games/{view['id']}/undo")
        again = first.get(f"/games/{view['id']}.json").json()
        assert cell(again, 0, "0,0") == "." and again["updated_at"] > seen["updated_at"]  # the page's poll notices
        assert again["history"]["redo"] == "set a cell of Ana's board to Y5"


def test_a_new_scan_of_a_board_ends_the_undo_of_its_earlier_cell_edits(db_path: Path) -> None:
    store = Store(db_path)
    game_id = usecases.create_game(store, "sagrada", "Night", ["Ana", "Bo"])
    ana, bo = (p["id"] for p in store.players(game_id))
    usecases.correct_cells(store, game_id, ana, [{"cell": "0,0", "value": "B4"}])
    usecases.correct_cells(store, game_id, bo, [{"cell": "0,0", "value": "R2"}])
    store.store_scan(game_id, ana, [[0, 0], [9, 0], [9, 9], [0, 9]], None, [{"cell": "0,0", "value": "G6", "confidence": 0.9}])
    assert store.undo(game_id) == "set a cell of Bo's board to R2"
    assert store.undo(game_id) is None  # Ana's edit belonged to the board the scan replaced
    assert next(r["value"] for r in store.player(game_id, ana)["readings"] if r["cell"] == "0,0") == "G6"


def test_delete_a_game_and_bring_it_back(client: TestClient) -> None:
    view = set_everything(client, new_game(client))
    other = new_game(client, "splendor", ("Cy", "Di"), name="Cards")
    response = client.delete(f"/api/games/{view['id']}")
    assert response.status_code == 200
    listing = response.json()
    assert [g["id"] for g in listing["games"]] == [other["id"]]
    assert [g["id"] for g in listing["deleted"]] == [view["id"]]
    assert client.get(f"/games/{view['id']}.json").status_code == 404
    page = client.get("/")
    assert f'action="/games/{view["id"]}/restore"' in page.text and "Undo" in page.text
    assert client.delete(f"/api/games/{view['id']}").status_code == 404  # already deleted
    restored = client.post(f"/games/{view['id']}/restore", follow_redirects=False)
    assert restored.status_code == 303
    back = client.get(f"/games/{view['id']}.json").json()
    assert back["document"] == view["document"] and back["standings"] == view["standings"]  # nothing lost
    assert client.get("/index.json").json()["deleted"] == []


def test_the_list_offers_undo_only_for_a_while(db_path: Path) -> None:
    store = Store(db_path)
    game_id = usecases.create_game(store, "splendor", "Cards", ["Ana", "Bo"])
    usecases.delete_game(store, game_id)
    soon = datetime.now(UTC) + timedelta(minutes=usecases.UNDO_DELETE_MINUTES - 1)
    later = datetime.now(UTC) + timedelta(minutes=usecases.UNDO_DELETE_MINUTES + 1)
    assert [g["id"] for g in usecases.games_list(store, now=soon)["deleted"]] == [game_id]
    assert usecases.games_list(store, now=later)["deleted"] == []
    usecases.restore_game(store, game_id)  # still in the file: the API can bring it back later
    assert [g["id"] for g in store.list_games()] == [game_id]


def test_add_a_player_then_undo_and_redo_it(client: TestClient) -> None:
    view = set_everything(client, new_game(client))
    assert view["standings"]
    response = client.post(f"/api/games/{view['id']}/players", json={"name": " Cy "})
    assert response.status_code == 201
    view = response.json()
    assert [p["name"] for p in view["players"]] == ["Ana", "Bo", "Cy"]
    assert view["document"]["players"][2]["window"] == [". . . . ."] * 4
    assert view["standings"] == [] and "Cy's private objective is not set" in view["incomplete"]
    assert view["history"]["undo"] == "add Cy"
    view = client.post(f"/api/games/{view['id']}/undo").json()
    assert [p["name"] for p in view["players"]] == ["Ana", "Bo"] and view["standings"]
    view = client.post(f"/api/games/{view['id']}/redo").json()
    assert [p["name"] for p in view["players"]] == ["Ana", "Bo", "Cy"]


@pytest.mark.parametrize(
    ("game", "players", "name", "fragment"),
    [
        ("sagrada", ("Ana", "Bo"), "Bo", "already called 'Bo'"),
        ("sagrada", ("Ana", "Bo"), "", "expected a name"),
        ("splendor", ("A", "B", "C", "D", "E", "F"), "G", "at most 6 players"),
    ],
)
def test_a_player_who_cannot_join_is_refused(client: TestClient, game, players, name, fragment) -> None:
    view = new_game(client, game, players)
    response = client.post(f"/api/games/{view['id']}/players", json={"name": name})
    assert response.status_code == 400 and fragment in response.json()["error"]


def test_remove_a_player_keeps_their_board_for_undo(client: TestClient) -> None:
    view = set_everything(client, new_game(client, players=("Ana", "Bo", "Cy")))
    bo = view["players"][1]
    client.put(player_url(view, 1) + "/cells", json={"cell": "3,4", "value": "P2"})
    corrections = client.get(player_url(view, 1) + "/corrections").json()["corrections"]
    view = client.delete(player_url(view, 1)).json()
    assert [p["name"] for p in view["players"]] == ["Ana", "Cy"]
    assert view["history"]["undo"] == "remove Bo"
    assert client.get(f"/api/games/{view['id']}/players/{bo['id']}/corrections").status_code == 404
    view = client.post(f"/api/games/{view['id']}/undo").json()
    back = view["players"][1]
    assert back["id"] == bo["id"] and back["name"] == "Bo" and back["fields"]["private_objective"] == "red"
    assert cell(view, 1, "3,4") == "P2"
    assert client.get(player_url(view, 1) + "/corrections").json()["corrections"] == corrections


@pytest.mark.parametrize(
    ("game", "players", "fragment"),
    [("alhambra", ("Ana", "Bo"), "Alhambra needs"), ("sagrada", ("Sol",), "only player")],
)
def test_removing_below_the_games_minimum_is_refused(client: TestClient, game, players, fragment) -> None:
    view = new_game(client, game, players)
    response = client.delete(player_url(view, 0))
    assert response.status_code == 400 and fragment in response.json()["error"]


def test_going_solo_keeps_a_game_that_scores(client: TestClient) -> None:
    view = set_everything(client, new_game(client))
    view = client.delete(player_url(view, 1)).json()
    assert view["error"] is None and len(view["settings"]["public_objectives"]) == 2
    assert "solo" in view["document"]


def test_the_games_list_names_each_winner_or_what_is_missing(client: TestClient) -> None:
    done = set_everything(client, new_game(client, name="Done"))
    open_game = new_game(client, name="Open")
    listing = {g["name"]: g for g in client.get("/index.json").json()["games"]}
    winner = done["standings"][0]
    text = f"Winner: {winner['name']} ({winner['score']})"
    assert listing["Done"]["result"] == {"state": "winner", "names": [winner["name"]], "score": winner["score"], "text": text, "detail": ""}
    assert listing["Open"]["result"]["text"] == "incomplete"
    assert listing["Open"]["result"]["detail"].startswith("the public objectives are not set; Ana's board is not entered")
    page = client.get("/").text
    assert f"Winner: {winner['name']} ({winner['score']})" in page
    assert f'<time class="local-time" datetime="{open_game["updated_at"]}">' in page  # ISO UTC for the browser to show locally
    assert '<script src="/static/index.js"></script>' in page


def test_an_alhambra_game_leads_until_its_final_scoring(client: TestClient) -> None:
    view = new_game(client, "alhambra", ("Ana", "Bo"))
    enter_alhambra(client, view)
    result = client.get("/index.json").json()["games"][0]["result"]
    assert result["state"] == "leading" and result["names"] == ["Ana"]


def test_results_csv_has_standings_and_readable_categories(client: TestClient) -> None:
    view = set_everything(client, new_game(client))
    response = client.get(f"/games/{view['id']}/results.csv")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/csv")
    assert 'filename="friday-' in response.headers["content-disposition"]
    rows = list(csv.reader(io.StringIO(response.content.decode("utf-8-sig"))))
    header = rows[0]
    assert header[:3] == ["Place", "Player", "Score"] and header[-1] == "Note"
    assert "Favor tokens" in header and "Empty cells" in header and "Private" in header
    assert not any("_" in name for name in header)
    objective = view["settings"]["public_objectives"][0]
    assert f"Public: {objective.replace('-', ' ').capitalize()}" in header
    by_name = {entry["name"]: entry for entry in view["report"]["players"]}
    assert [row[1] for row in rows[1:]] == [row["name"] for row in view["standings"]]
    for row in rows[1:]:
        entry = by_name[row[1]]
        assert int(row[2]) == entry["total"]
        assert int(row[header.index("Favor tokens")]) == entry["breakdown"]["favor_tokens"]
    assert [row[0] for row in rows[1:]] == [str(row["place"]) for row in view["standings"]]


def test_results_csv_gives_no_places_while_incomplete(client: TestClient) -> None:
    view = new_game(client)
    client.patch(player_url(view, 0), json={"fields": {"private_objective": "blue", "favor_tokens": 0}})
    rows = list(csv.reader(io.StringIO(client.get(f"/games/{view['id']}/results.csv").content.decode("utf-8-sig"))))
    assert [row[0] for row in rows[1:]] == ["", ""]
    assert rows[2][-1] == "incomplete: Bo's board is not entered; Bo's private objective is not set; Bo's favor tokens are not set"


def test_results_image_is_a_png_of_standings_and_boards(client: TestClient) -> None:
    two = set_everything(client, new_game(client))
    response = client.get(f"/games/{two['id']}/results.png")
    assert response.status_code == 200 and response.headers["content-type"] == "image/png"
    image = Image.open(io.BytesIO(response.content))
    assert image.format == "PNG" and image.width >= 400
    three = client.post(f"/api/games/{two['id']}/players", json={"name": "Cy"}).json()
    taller = Image.open(io.BytesIO(client.get(f"/games/{three['id']}/results.png").content))
    assert taller.height > image.height  # one more board drawn
    assert len(set(np.asarray(image.convert("L")).ravel().tolist())) > 2  # text was drawn
    pixels = {tuple(p) for p in np.asarray(image.convert("RGB")).reshape(-1, 3).tolist()}
    assert {fill for fill, _ink in DIE_IMAGE_COLOURS.values()} <= pixels  # each die on its colour (both windows hold all five)


def test_the_join_qr_code_carries_the_lan_address(db_path: Path, read_qr) -> None:
    address = "http://192.168.1.20:8000/?token=s3cret-token"
    with TestClient(create_app(db_path, token="s3cret-token", join_url=address)) as lan:
        response = lan.get("/join.png?token=s3cret-token")
        assert response.status_code == 200 and response.headers["content-type"] == "image/png"
        assert read_qr(response.content) == address
        assert address in lan.get("/").text
        lan.cookies.clear()
        assert lan.get("/join.png").status_code == 403  # the code itself needs the token
    with TestClient(create_app(db_path)) as local:
        assert local.get("/join.png").status_code == 404  # not in LAN mode: nothing to join
        assert "/join.png" not in local.get("/").text


def test_lan_mode_hands_the_printed_address_to_the_join_code(tmp_path: Path, monkeypatch) -> None:
    import uvicorn
    from click.testing import CliRunner

    from tablescan.cli import cli
    from tablescan.review import command

    seen: dict = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, host, port, log_level: seen.update(join=app.state.join_url))
    monkeypatch.setattr(command, "_lan_address", lambda: "192.168.1.20")
    result = CliRunner().invoke(cli, ["review", "--host", "0.0.0.0", "--port", "8124", "--db", str(tmp_path / "r.sqlite3")])
    assert result.exit_code == 0, result.output
    assert f"open {seen['join']}" in result.output and seen["join"].startswith("http://192.168.1.20:8124/?token=")
    result = CliRunner().invoke(cli, ["review", "--port", "8125", "--db", str(tmp_path / "r.sqlite3")])
    assert result.exit_code == 0 and seen["join"] is None  # on this machine only: no code to show


def test_a_removed_player_can_be_brought_back_after_other_changes(client: TestClient) -> None:
    view = new_game(client, players=("Ana", "Bo", "Cy"))
    client.put(player_url(view, 1) + "/cells", json={"cell": "0,0", "value": "Y2"})
    bo = view["players"][1]["id"]
    view = client.delete(player_url(view, 1)).json()
    view = client.put(player_url(view, 0) + "/cells", json={"cell": "0,0", "value": "R6"}).json()  # the night goes on
    assert view["removed_players"] == [{"id": bo, "name": "Bo"}]
    view = client.post(f"/api/games/{view['id']}/players/{bo}/restore").json()
    assert [p["name"] for p in view["players"]] == ["Ana", "Bo", "Cy"] and cell(view, 1, "0,0") == "Y2"
    assert cell(view, 0, "0,0") == "R6" and view["removed_players"] == []
    assert view["history"]["undo"] == "bring Bo back"
    assert client.post(f"/api/games/{view['id']}/players/{bo}/restore").status_code == 404  # not removed now


def test_a_removed_player_whose_name_was_taken_is_not_brought_back_twice(client: TestClient) -> None:
    view = new_game(client, players=("Ana", "Bo"))
    bo = view["players"][1]["id"]
    client.delete(player_url(view, 1))
    client.post(f"/api/games/{view['id']}/players", json={"name": "Bo"})
    response = client.post(f"/api/games/{view['id']}/players/{bo}/restore")
    assert response.status_code == 400 and "rename them first" in response.json()["error"]


DICE = st.sampled_from(["B4", "G2", "R6", "Y1", "P3", "."])
EDIT = st.one_of(
    st.tuples(st.just("cell"), st.integers(0, 1), st.sampled_from(["0,0", "0,1", "3,4"]), DICE),
    st.tuples(st.just("field"), st.integers(0, 1), st.sampled_from(["private_objective"]), st.sampled_from(["red", "blue", None])),
    st.tuples(st.just("tokens"), st.integers(0, 1), st.just("favor_tokens"), st.sampled_from([0, 1, 2, None])),
    st.tuples(st.just("name"), st.just(0), st.just("name"), st.sampled_from(["Friday", "Saturday", "Sunday"])),
)


def night_state(store: Store, game_id: int) -> tuple:
    """Everything an edit above can change: the game's name, each player's fields and cells."""
    players = store.players(game_id)
    return (
        store.game(game_id)["name"],
        tuple(
            (p["name"], tuple(sorted(p["fields"].items(), key=str)), tuple((r["cell"], r["value"]) for r in p["readings"])) for p in players
        ),
    )


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(EDIT, min_size=1, max_size=8), back=st.integers(0, 8))
def test_undo_all_gives_the_start_and_redo_all_gives_the_end(db_path: Path, edits: list, back: int) -> None:
    store = Store(db_path)
    game_id = usecases.create_game(store, "sagrada", "Friday", ["Ana", "Bo"])
    ids = [p["id"] for p in store.players(game_id)]
    states = [night_state(store, game_id)]
    for kind, index, key, value in edits:
        if kind == "cell":
            usecases.correct_cells(store, game_id, ids[index], [{"cell": key, "value": value}])
        elif kind == "name":
            usecases.change_game(store, game_id, {"name": value})
        else:
            usecases.change_player(store, game_id, ids[index], {"fields": {key: value}})
        if night_state(store, game_id) != states[-1]:
            states.append(night_state(store, game_id))  # an edit that changed nothing is not a step
    steps = min(back, len(states) - 1)
    for step in range(steps):
        assert store.undo(game_id) is not None
        assert night_state(store, game_id) == states[-2 - step]
    for _ in range(steps):
        assert store.redo(game_id) is not None
    assert store.redo(game_id) is None and night_state(store, game_id) == states[-1]
    while store.undo(game_id) is not None:
        pass
    assert night_state(store, game_id) == states[0]


@pytest.mark.parametrize(
    ("game", "cells", "expected"),
    [
        ("alhambra", [{"cell": "1,0", "value": "garden:N"}], ["Counts: Garden", "Majorities: Garden", "Longest wall", "Round points"]),
        ("splendor", [{"cell": "white:1", "value": "3"}], ["Cards", "Nobles"]),
    ],
)
def test_results_csv_columns_read_well_for_every_game(client: TestClient, game: str, cells: list, expected: list) -> None:
    view = new_game(client, game)
    client.put(player_url(view, 0) + "/cells", json={"cells": cells})
    header = next(csv.reader(io.StringIO(client.get(f"/games/{view['id']}/results.csv").content.decode("utf-8-sig"))))
    assert set(expected) <= set(header), header
    assert not any(mark in name for name in header for mark in "_.")
