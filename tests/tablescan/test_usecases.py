"""The review screen's use cases as plain calls over a store, no HTTP (tablescan/review/usecases.py)."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path

import pytest

from scoring.errors import StateError
from tablescan.review import usecases
from tablescan.review.db import Store
from tablescan.review.view import game_view


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "review.sqlite3")


@pytest.mark.parametrize(
    ("game", "players", "expected"),
    [
        ("sagrada", ["Ana", "Bo"], nullcontext()),
        ("splendor", ["Ana"], nullcontext()),
        ("alhambra", ["Ana", "Bo"], nullcontext()),
        ("alhambra", ["Ana"], pytest.raises(StateError, match="Alhambra needs 2-6 players")),
        ("chess", ["Ana"], pytest.raises(StateError, match="game: expected one of alhambra, sagrada, splendor")),
        ("sagrada", ["Ana", "Ana"], pytest.raises(StateError, match="every player needs a different name")),
        ("sagrada", [f"P{i}" for i in range(7)], pytest.raises(StateError, match="expected 1-6 player names")),
    ],
)
def test_create_game_checks_players_against_the_game(store: Store, game: str, players: list, expected) -> None:
    with expected:
        game_id = usecases.create_game(store, game, "", players)
        view = game_view(store, game_id)
        assert view["game"] == game and [p["name"] for p in view["players"]] == players
        assert view["name"].endswith(" night")


def test_a_cell_correction_changes_the_score(store: Store) -> None:
    game_id = usecases.create_game(store, "splendor", "cards", ["Ana", "Bo"])
    ana = store.players(game_id)[0]["id"]
    usecases.correct_cells(store, game_id, ana, [{"cell": "red:5", "value": "3"}])
    view = game_view(store, game_id)
    assert view["players"][0]["report"]["prestige"] == 15
    assert view["standings"] == []  # Bo's tableau and both players' nobles are not entered yet
    bo = store.players(game_id)[1]["id"]
    usecases.correct_cells(store, game_id, bo, [{"cell": "blue:1", "value": "2"}])
    for player in (ana, bo):
        usecases.change_player(store, game_id, player, {"fields": {"nobles": 0}})
    view = game_view(store, game_id)
    assert view["standings"][0] == {"place": 1, "name": "Ana", "score": 15, "note": ""}
    with pytest.raises(StateError, match="expected 'colour:points'"):
        usecases.correct_cells(store, game_id, ana, [{"cell": "pink:5", "value": "3"}])


def test_only_games_scored_in_rounds_record_rounds(store: Store) -> None:
    sagrada = usecases.create_game(store, "sagrada", "", ["Ana", "Bo"])
    with pytest.raises(StateError, match="only Alhambra has several scorings"):
        usecases.record_round(store, sagrada)
    alhambra = usecases.create_game(store, "alhambra", "", ["Ana", "Bo"])
    with pytest.raises(StateError, match="cannot be recorded yet: Dirk's buildings are not set; Ana's board is not entered"):
        usecases.record_round(store, alhambra)  # a recorded round is carried forward: never on a guess
    usecases.change_game(
        store, alhambra, {"settings": {"dirk": dict.fromkeys(("pavilion", "seraglio", "arcades", "chambers", "garden", "tower"), 1)}}
    )
    for player in store.players(alhambra):
        usecases.correct_cells(store, alhambra, player["id"], [{"cell": "1,0", "value": "garden:N"}])
    usecases.record_round(store, alhambra)
    assert store.game(alhambra)["settings"]["scoring_round"] == 2
    assert [r["round"] for r in store.rounds(alhambra)] == [1]


def test_settings_and_fields_are_checked_by_the_games_form(store: Store) -> None:
    game_id = usecases.create_game(store, "sagrada", "", ["Ana", "Bo"])
    usecases.change_game(store, game_id, {"settings": {"public_objectives": ["shade-variety"]}})
    assert store.game(game_id)["settings"]["public_objectives"] == ["shade-variety"]
    with pytest.raises(StateError, match="settings.public_objectives"):
        usecases.change_game(store, game_id, {"settings": {"public_objectives": ["nope"]}})
    ana = store.players(game_id)[0]["id"]
    usecases.change_player(store, game_id, ana, {"fields": {"favor_tokens": "3", "pattern": "Virtus"}})
    assert store.player(game_id, ana)["fields"]["favor_tokens"] == 3
    with pytest.raises(StateError, match="another player is already called 'Bo'"):
        usecases.change_player(store, game_id, ana, {"name": "Bo"})


@pytest.mark.parametrize(
    ("corners", "expected", "context"),
    [
        (None, None, nullcontext()),
        ([[0, 0], [9, 0], [9, 9], [0, 9]], [[0.0, 0.0], [9.0, 0.0], [9.0, 9.0], [0.0, 9.0]], nullcontext()),
        ([[0, 0]], None, pytest.raises(StateError, match="corners: expected 4")),
        ([[0, 0], [9, 0], [9, 9], [0, "x"]], None, pytest.raises(StateError, match="corners: expected 4")),
    ],
)
def test_check_corners(corners, expected, context) -> None:
    with context:
        assert usecases.check_corners(corners) == expected
