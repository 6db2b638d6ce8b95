"""The shells' games registry (tablescan/games.py): every entry offers what the screen needs, from the cores."""

from __future__ import annotations

from pathlib import Path

import pytest

from scanner.pipeline import READER_MODULES
from scoring import alhambra, sagrada, splendor
from scoring.errors import StateError
from scoring.registry import GAMES as RULES
from tablescan.games import GAMES, game_entry, renderable_games, review_options, scannable_games
from tablescan.review.board import build_document, normalize_cell, readings_from_scan
from tablescan.review.forms import ReviewForm

ROOT = Path(__file__).resolve().parents[2]
GAME_IDS = sorted(RULES)


def test_one_entry_per_scoring_core() -> None:
    assert sorted(GAMES) == GAME_IDS
    for game_id, entry in GAMES.items():
        assert entry.id == game_id
        assert entry.rules is RULES[game_id]
        assert entry.title == RULES[game_id].title
        assert isinstance(entry.form, ReviewForm)


def test_readers_match_the_scanner_and_renderers_the_readers() -> None:
    assert {game: GAMES[game].reader_module for game in scannable_games()} == READER_MODULES
    assert set(renderable_games()) == set(scannable_games())
    with pytest.raises(StateError, match="splendor: no photo reader"):
        GAMES["splendor"].make_reader()
    with pytest.raises(StateError, match="splendor: no renderer"):
        GAMES["splendor"].render(0)


@pytest.mark.parametrize("game_id", GAME_IDS)
@pytest.mark.parametrize("player_count", [1, 2, 3, 4])
def test_a_new_game_from_the_form_is_a_valid_document(game_id: str, player_count: int) -> None:
    entry = GAMES[game_id]
    form = entry.form
    try:
        form.check_player_count(player_count)
    except StateError:
        assert player_count < 2 and game_id == "alhambra"
        return
    cells = form.blank_cells()
    for cell, value in cells.items():
        assert normalize_cell(game_id, cell, value) == (cell, value)
    players = [
        {"name": f"P{i}", "fields": form.default_fields(i), "readings": [{"cell": c, "value": v} for c, v in cells.items()]}
        for i in range(player_count)
    ]
    document = build_document(game_id, form.default_settings(player_count), players)
    report = entry.rules.score(entry.rules.parse(document))
    assert [player.name for player in report.players] == [f"P{i}" for i in range(player_count)]
    assert readings_from_scan(game_id, document["players"][0]) or not cells


def test_option_lists_are_the_cores_constants() -> None:
    options = review_options()
    assert options["public_objectives"] == list(sagrada.OBJECTIVES)
    assert options["colors"] == list(sagrada.COLOR_NAMES.values())
    assert [p["name"] for p in options["patterns"]] == list(sagrada.PATTERNS)
    assert all(tuple(p["grid"]) == sagrada.PATTERNS[p["name"]].grid for p in options["patterns"])
    assert options["tile_types"] == list(alhambra.BUILDING_TYPES)
    assert options["currencies"] == list(alhambra.CURRENCIES)
    assert options["splendor_colors"] == list(splendor.COLORS)
    assert [n["id"] for n in options["nobles"]] == list(splendor.NOBLES)
    assert options["splendor_points"] == list(range(splendor.MAX_CARD_POINTS + 1))


def test_each_form_offers_what_the_screen_needs() -> None:
    keys = set()
    for entry in GAMES.values():
        options = entry.form.options()
        assert not keys & set(options), "two games offer the same option list"
        keys |= set(options)
        assert entry.form.score_key
        assert entry.form.last_round >= 1
        screen = entry.form.screen()
        assert screen["cell_names"] and screen["shortcuts"]
        assert all(len(pair) == 2 and all(isinstance(text, str) and text for text in pair) for pair in screen["shortcuts"])
    assert keys == set(review_options())


def test_an_unknown_game_is_a_state_error() -> None:
    with pytest.raises(StateError, match="game: expected one of alhambra, sagrada, splendor"):
        game_entry("chess")


# ---------------------------------------------------------------- no game switch outside the registry
