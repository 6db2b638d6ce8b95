"""The review database: migrations from empty and from older versions, durability, boards as documents."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.errors import StateError
from tablescan.review.board import build_document, normalize_cell, readings_from_scan
from tablescan.review.db import LATEST_VERSION, MIGRATIONS, Store
from tablescan.review.errors import DatabaseError

TABLES = {"schema_version", "games", "players", "photos", "readings", "corrections", "rounds"}


def tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def test_an_empty_file_is_migrated_to_the_latest_schema(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite3"
    store = Store(path)
    assert store.schema_version() == LATEST_VERSION == len(MIGRATIONS)
    assert TABLES <= tables(path)  # noqa: SIM300 - a subset test, TABLES first reads as meant
    assert store.photo_dir.is_dir()
    assert Store(path).migrate() == LATEST_VERSION  # idempotent
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM schema_version").fetchone()[0] == 1


def test_a_version_1_database_keeps_its_games_when_migrated(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        for statement in MIGRATIONS[0][1]:
            conn.execute(statement)
        conn.execute("INSERT INTO schema_version VALUES (1)")
        conn.execute("INSERT INTO games (game, name, settings, created_at, updated_at) VALUES ('sagrada', 'Old', '{}', 'x', 'x')")
    assert "rounds" not in tables(path)
    store = Store(path)
    assert store.schema_version() == LATEST_VERSION
    assert "rounds" in tables(path)
    assert [g["name"] for g in store.list_games()] == ["Old"]


def test_a_newer_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "future.sqlite3"
    Store(path)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE schema_version SET version = 99")
    with pytest.raises(DatabaseError, match="schema version 99 is newer"):
        Store(path)


def test_a_file_that_is_not_a_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite3"
    path.write_text("shopping list\n" * 200)
    with pytest.raises(DatabaseError, match="not a usable tablescan database"):
        Store(path)


def test_every_change_is_on_disk_before_the_call_returns(tmp_path: Path) -> None:
    path = tmp_path / "durable.sqlite3"
    store = Store(path)
    game_id = store.create_game("sagrada", "Night", {}, [("Ana", {}), ("Bo", {})])
    player_id = store.players(game_id)[0]["id"]
    store.correct_cell(game_id, player_id, "0,0", "B4")
    # a second, independent connection (as after a restart) sees the committed rows
    fresh = Store(path)
    assert fresh.players(game_id)[0]["readings"] == [
        {"cell": "0,0", "value": "B4", "confidence": None, "polygon": None, "source": "manual"}
    ]
    assert [(c["old_value"], c["new_value"]) for c in fresh.corrections()] == [(None, "B4")]


def test_a_failed_transaction_leaves_nothing_behind(tmp_path: Path) -> None:
    store = Store(tmp_path / "atomic.sqlite3")
    with pytest.raises(sqlite3.IntegrityError), store.transaction() as conn:
        conn.execute("INSERT INTO games (game, name, created_at, updated_at) VALUES ('sagrada', 'A', 'x', 'x')")
        conn.execute("INSERT INTO games (game, name, created_at, updated_at) VALUES ('chess', 'B', 'x', 'x')")
    assert store.list_games() == []


# -- boards -----------------------------------------------------------------------------------

cells_text = st.one_of(st.text(max_size=8), st.sampled_from(["0,0", "3,4", "-1,2", "red:1", "white:5", "9,9"]))
values_text = st.one_of(st.text(max_size=10), st.integers(-5, 50), st.sampled_from(["B4", ".", "garden:NS", "fountain", "3"]))


@settings(max_examples=150, deadline=None)
@given(game=st.sampled_from(["sagrada", "alhambra", "splendor"]), cell=cells_text, value=values_text)
def test_any_cell_edit_is_stored_form_or_state_error(game: str, cell: str, value) -> None:
    try:
        stored_cell, stored_value = normalize_cell(game, cell, value)
    except StateError as error:
        assert "\n" not in str(error)
        return
    assert normalize_cell(game, stored_cell, stored_value) == (stored_cell, stored_value)


dice = st.one_of(st.just("."), st.builds(lambda c, v: f"{c}{v}", st.sampled_from("RYGBP"), st.integers(1, 6)))


@settings(max_examples=60, deadline=None)
@given(window=st.lists(st.lists(dice, min_size=5, max_size=5), min_size=4, max_size=4))
def test_sagrada_window_survives_document_and_back(window: list[list[str]]) -> None:
    readings = [{"cell": f"{r},{c}", "value": v} for r, row in enumerate(window) for c, v in enumerate(row)]
    player = {"name": "Ana", "fields": {"private_objective": "red", "favor_tokens": 1}, "readings": readings}
    document = build_document("sagrada", {"public_objectives": []}, [player, {**player, "name": "Bo"}])
    back = readings_from_scan("sagrada", document["players"][0])
    assert {r["cell"]: r["value"] for r in back} == {r["cell"]: r["value"] for r in readings}


tiles = st.one_of(
    st.just(""),
    st.builds(
        lambda t, w: f"{t}:{''.join(s for s in 'NESW' if s in w)}",
        st.sampled_from(["pavilion", "seraglio", "arcades", "chambers", "garden", "tower"]),
        st.sets(st.sampled_from("NESW")),
    ),
)


@settings(max_examples=60, deadline=None)
@given(palace=st.dictionaries(st.tuples(st.integers(-3, 3), st.integers(-3, 3)), tiles, max_size=12))
def test_alhambra_palace_survives_document_and_back(palace: dict) -> None:
    readings = [{"cell": f"{x},{y}", "value": v} for (x, y), v in palace.items() if (x, y) != (0, 0)]
    readings.append({"cell": "0,0", "value": "fountain"})
    player = {"name": "Ana", "fields": {"score_before": 4}, "readings": readings}
    document = build_document("alhambra", {"scoring_round": 2}, [player])
    assert document["players"][0]["score_before"] == 4
    back = readings_from_scan("alhambra", document["players"][0])
    assert {r["cell"]: r["value"] for r in back} == {r["cell"]: r["value"] for r in readings if r["value"]}


def test_alhambra_scan_tiles_by_id_and_dict_values_are_understood() -> None:
    player = {
        "name": "Ana",
        "palace": [{"at": [0, 0], "tile": "fountain"}, {"at": [1, 0], "tile_id": 1}],
        "scan": {
            "cells": [
                {"cell": [1, 0], "value": "x", "confidence": 0.5, "polygon": [[0, 0], [1, 0], [1, 1]]},
                {"cell": [2, 0], "value": None, "confidence": 0.9, "polygon": [[1, 0], [2, 0], [2, 1]]},
            ]
        },
    }
    readings = {r["cell"]: r for r in readings_from_scan("alhambra", player)}
    assert readings["1,0"]["value"] == "pavilion:NEW" and readings["1,0"]["confidence"] == 0.5
    assert readings["0,0"]["value"] == "fountain"
    assert readings["2,0"]["value"] == ""
