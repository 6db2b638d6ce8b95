"""Sagrada state parsing, bad input, JSON/text reports and the ``tablescan score`` command."""

from __future__ import annotations

import copy
import json
from contextlib import nullcontext
from pathlib import Path

import pytest
from click.testing import CliRunner

from scoring.errors import StateError
from scoring.registry import GAMES, game_of
from scoring.sagrada import (
    COLOR_NAMES,
    COLORS,
    GAME,
    PATTERNS,
    TOOLS,
    Die,
    SagradaPlayer,
    SagradaState,
    cell_name,
    parse_cell,
    parse_window,
    score,
    window_rows,
)
from tablescan.cli import cli

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_GAME = ROOT / "sample_images" / "sagrada_game.json"

GOOD = {
    "game": "sagrada",
    "public_objectives": ["row-color-variety", "light-shades", "color-diagonals"],
    "players": [
        {
            "name": "Ana",
            "window": ["B4 Y3 G6 R3 B6", "G2 P5 B1 G4 R1", "B3 G6 Y2 P6 Y5", "Y1 B4 R1 G5 ."],
            "pattern": "Virtus",
            "private_objective": "red",
            "favor_tokens": 2,
        },
        {
            "name": "Bo",
            "window": ["R1 G2 B3 Y4 P5", ". . . . .", ". . . . .", ". . . . ."],
            "private_objective": "blue",
            "favor_tokens": 0,
        },
    ],
}


def test_constants_and_cards():
    assert COLORS == ("R", "Y", "G", "B", "P")
    assert COLOR_NAMES == {"R": "red", "Y": "yellow", "G": "green", "B": "blue", "P": "purple"}
    assert len(PATTERNS) == 24 and len(TOOLS) == 12
    assert sorted({p.difficulty for p in PATTERNS.values()}) == [3, 4, 5, 6]
    assert GAMES["sagrada"] is GAME and game_of({"game": "sagrada"}).parse == SagradaState.from_json


@pytest.mark.parametrize("text", ["."] + [f"{c}{v}" for c in COLORS for v in range(1, 7)])
def test_cell_texts_round_trip(text):
    assert cell_name(parse_cell(text)) == text


@pytest.mark.parametrize(
    ("text", "expected", "raises"),
    [
        ("B4", Die("B", 4), nullcontext()),
        (".", None, nullcontext()),
        ("X7", None, pytest.raises(StateError, match="cell 'X7' is not a die")),
        ("R0", None, pytest.raises(StateError, match="the value must be 1-6")),
        ("R7", None, pytest.raises(StateError, match="the value must be 1-6")),
        ("b4", None, pytest.raises(StateError, match="upper case")),
        ("B44", None, pytest.raises(StateError, match="is not a die")),
        ("", None, pytest.raises(StateError, match="is not a die")),
    ],
)
def test_parse_cell(text, expected, raises):
    with raises:
        assert parse_cell(text) == expected


def test_die_validates_itself():
    with pytest.raises(StateError, match="die value"):
        Die("R", 0)
    with pytest.raises(StateError, match="die value"):
        Die("R", True)
    with pytest.raises(StateError, match="die colour"):
        Die("red", 3)


def test_window_round_trip_and_shape():
    rows = GOOD["players"][0]["window"]
    window = parse_window(rows)
    assert window_rows(window) == rows
    assert window[0][0] == Die("B", 4) and window[3][4] is None
    assert parse_window(["B4  Y3 G6 R3 B6 ", *rows[1:]]) == window  # extra spaces are fine


def test_state_round_trip_is_exact():
    state = SagradaState.from_json(GOOD)
    assert state.to_json() == GOOD
    assert SagradaState.from_json(state.to_json()) == state
    assert state.players[0].pattern is PATTERNS["Virtus"]


def test_scan_fields_and_unknown_keys_are_ignored():
    doc = copy.deepcopy(GOOD)
    doc["players"][0]["scan"] = {"photo": "IMG.jpg", "cells": []}
    doc["note"] = "anything"
    assert SagradaState.from_json(doc) == SagradaState.from_json(GOOD)


def test_defaults_and_letters():
    doc = copy.deepcopy(GOOD)
    del doc["players"][1]["favor_tokens"]
    doc["players"][1]["private_objective"] = "B"
    state = SagradaState.from_json(doc)
    assert state.players[1].favor_tokens == 0 and state.players[1].private_objective == "blue"


def test_player_accepts_a_pattern_name():
    player = SagradaPlayer("Ana", parse_window(GOOD["players"][0]["window"]), "virtus", "red", 1)
    assert player.pattern.name == "Virtus"


def _with(path: str, value):
    """A copy of GOOD with the value at a dotted path (list indexes as ints) set, or deleted for ...."""
    doc = copy.deepcopy(GOOD)
    keys = [int(k) if k.isdigit() else k for k in path.split(".")]
    target = doc
    for key in keys[:-1]:
        target = target[key]
    if value is ...:
        del target[keys[-1]]
    else:
        target[keys[-1]] = value
    return doc


SOLO = {
    "game": "sagrada",
    "public_objectives": ["row-color-variety", "light-shades"],
    "players": [{"name": "Sol", "window": GOOD["players"][1]["window"]}],
    "solo": {"private_objectives": ["red", "blue"], "round_track_sum": 34},
}

BAD = [
    (_with("players.0.window.2", "B3 G6 X7 P6 Y5"), "players[0].window[2]: cell 'X7' is not a die"),
    (_with("players.0.window.2", "B3 G6 R0 P6 Y5"), "players[0].window[2]: cell 'R0' is not a die: the value must be 1-6"),
    (_with("players.0.window.2", "B3 G6 R7 P6 Y5"), "players[0].window[2]: cell 'R7' is not a die: the value must be 1-6"),
    (_with("players.1.window.0", "R1 G2 B3 Y4"), "players[1].window[0]: expected 5 cells separated by spaces, got 4"),
    (_with("players.1.window", ["R1 G2 B3 Y4 P5", ". . . . .", ". . . . ."]), "players[1].window: expected 4 rows (top row first), got 3"),
    (_with("players.1.window", "R1 G2 B3 Y4 P5"), "players[1].window: expected a list of 4 row strings"),
    (_with("players.1.window.1", 7), "players[1].window[1]: expected a string of 5 cells"),
    (_with("players.1.window", ...), "players[1].window: missing required key"),
    (_with("public_objectives.1", "dark-shades"), "public_objectives[1]: expected one of row-color-variety"),
    (
        _with("public_objectives", GOOD["public_objectives"] + ["deep-shades"]),
        "public_objectives: expected at most 3 ids (a multiplayer game reveals 3 cards), got 4",
    ),
    (_with("public_objectives", ["deep-shades", "light-shades", "deep-shades"]), "public_objectives[2]: duplicate objective 'deep-shades'"),
    (_with("public_objectives", "deep-shades"), "public_objectives: expected a list"),
    (_with("public_objectives", ...), "public_objectives: missing required key"),
    (_with("players.0.pattern", "Virtue"), "players[0].pattern: unknown pattern 'Virtue' (did you mean 'Virtus'?)"),
    (_with("players.0.pattern", 12), "players[0].pattern: expected a pattern name"),
    (_with("players.1.favor_tokens", -1), "players[1].favor_tokens: expected an integer 0-6, got -1"),
    (_with("players.1.favor_tokens", 7), "players[1].favor_tokens: expected an integer 0-6, got 7"),
    (_with("players.0.favor_tokens", -1), "players[0].favor_tokens: expected an integer 0-5, got -1"),
    (_with("players.0.favor_tokens", 6), "players[0].favor_tokens: expected 0-5 (pattern Virtus gives 5 tokens), got 6"),
    (_with("players.1.favor_tokens", "2"), "players[1].favor_tokens: expected an integer 0-6, got '2'"),
    (_with("players.1.name", "Ana"), "players[1].name: duplicate name 'Ana' (also players[0])"),
    (_with("players.1.name", ""), "players[1].name: expected a non-empty string"),
    (_with("players.1.name", ...), "players[1].name: missing required key"),
    (_with("players.1.private_objective", "pink"), "players[1].private_objective: expected one of red, yellow"),
    (_with("players", []), "players: expected 1-4 players, got none"),
    (_with("players", [GOOD["players"][1]] * 5), "players: expected 1-4 players, got 5"),
    (_with("players", {"Ana": 1}), "players: expected a list, got an object"),
    (_with("players.1", "Bo"), "players[1]: expected an object, got 'Bo'"),
    (_with("game", "alhambra"), "game: expected 'sagrada', got 'alhambra'"),
    ([], "(document): expected an object, got a list of 0"),
    (
        dict(SOLO, public_objectives=GOOD["public_objectives"]),
        "public_objectives: expected at most 2 ids (the solo game reveals 2 cards), got 3",
    ),
    (dict(SOLO, players=GOOD["players"]), "solo: the solo variant has exactly 1 player, got 2"),
    (
        dict(SOLO, solo={"private_objectives": ["red", "red"], "round_track_sum": 3}),
        "solo.private_objectives[1]: expected a colour other than 'red'",
    ),
    (dict(SOLO, solo={"private_objectives": ["red"], "round_track_sum": 3}), "solo.private_objectives: expected 2 items, got 1"),
    (
        dict(SOLO, solo={"private_objectives": ["red", "blue"], "round_track_sum": -1}),
        "solo.round_track_sum: expected an integer 0-240, got -1",
    ),
    (dict(SOLO, solo={"private_objectives": ["red", "blue"]}), "solo.round_track_sum: missing required key"),
    (dict(SOLO, players=[dict(SOLO["players"][0], private_objective="red")]), "players[0].private_objective: a solo player has none"),
    (dict(SOLO, players=[dict(SOLO["players"][0], favor_tokens=2)]), "players[0].favor_tokens: the solo game uses no favor tokens, got 2"),
]


@pytest.mark.parametrize(("doc", "message"), BAD, ids=[message[:48] for _, message in BAD])
def test_bad_documents_name_the_json_path(doc, message):
    with pytest.raises(StateError) as caught:
        SagradaState.from_json(doc)
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


WARNED = [
    (GOOD, []),
    (
        _with("public_objectives", ["deep-shades", "light-shades"]),
        ["public_objectives: 2 of 3 cards given; the missing ones score nothing"],
    ),
    (_with("public_objectives", []), ["public_objectives: 0 of 3 cards given; the missing ones score nothing"]),
    (
        _with("players.1.private_objective", "red"),
        ["players[1].private_objective: 'red' is also players[0]'s, yet each colour's card exists once"],
    ),
    (_with("players.1.private_objective", ...), ["players[1].private_objective: not given; scored 0"]),
    (_with("players.1.pattern", "Virtus"), ["players[1].pattern: 'Virtus' is also players[0]'s, yet each pattern card exists once"]),
    (_with("players", [GOOD["players"][1]]), ['players: one player and no "solo" block: scored by the multiplayer rules']),
    (dict(SOLO, public_objectives=["deep-shades"]), ["public_objectives: 1 of 2 cards given; the missing ones score nothing"]),
]


@pytest.mark.parametrize(("doc", "warnings"), WARNED, ids=[w[0][:40] if w else "complete" for _, w in WARNED])
def test_missing_information_scores_with_a_warning(doc, warnings):
    state = SagradaState.from_json(doc)
    report = score(state)
    assert state.warnings() == warnings
    assert report.to_json().get("warnings", []) == warnings
    assert all(f"Warning: {w}" in report.to_text() for w in warnings)


def test_a_scan_document_scores_as_it_stands():
    scan = {
        "game": "sagrada",
        "public_objectives": [],
        "players": [
            {
                "name": "IMG_2041",
                "window": GOOD["players"][0]["window"],
                "pattern": "Virtus",
                "scan": {"photo": "IMG_2041.jpg", "cells": []},
            }
        ],
    }
    doc = score(SagradaState.from_json(scan)).to_json()
    assert doc["players"][0]["breakdown"] == {"public": {}, "private": 0, "favor_tokens": 0, "empty_cells": -1}
    assert doc["winner"] == "IMG_2041" and len(doc["warnings"]) == 3


def test_solo_round_trip():
    state = SagradaState.from_json(SOLO)
    assert state.to_json() == SOLO
    assert state.solo.private_objectives == ("red", "blue")


# ---------------------------------------------------------------- reports and the command line


def test_json_report_follows_formats():
    doc = score(SagradaState.from_json(GOOD)).to_json()
    assert list(doc) == ["game", "players", "ranking", "winner"]
    ana = doc["players"][0]
    assert list(ana) == ["name", "total", "breakdown", "violations"]
    assert list(ana["breakdown"]) == ["public", "private", "favor_tokens", "empty_cells"]
    assert list(ana["breakdown"]["public"]) == GOOD["public_objectives"]
    breakdown = ana["breakdown"]
    others = breakdown["private"] + breakdown["favor_tokens"] + breakdown["empty_cells"]
    assert ana["total"] == sum(breakdown["public"].values()) + others
    assert {v["rule"] for v in ana["violations"]} == {"value-restriction", "color-restriction"}
    assert all(set(v) == {"cell", "cells", "rule", "detail", "explained_by"} for v in ana["violations"])


def test_text_report_shows_the_evidence():
    text = score(SagradaState.from_json(GOOD)).to_text()
    assert "Row Color Variety" in text and "Light Shades" in text and "Color Diagonals" in text
    assert "Private (red)" in text and "R3 r1c4 + R1 r2c5 + R1 r4c3" in text
    assert "-1 each: r4c5" in text
    assert "possible with Copper Foil Burnisher" in text
    assert "Winner:" in text


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_cli_scores_a_file_and_stdin(tmp_path, fmt):
    path = tmp_path / "game.json"
    path.write_text(json.dumps(GOOD), encoding="utf-8")
    runner = CliRunner()
    from_file = runner.invoke(cli, ["score", str(path), "--format", fmt])
    from_stdin = runner.invoke(cli, ["score", "-", "--format", fmt], input=json.dumps(GOOD))
    assert from_file.exit_code == 0, from_file.output
    assert from_stdin.output == from_file.output
    if fmt == "json":
        assert json.loads(from_file.output) == score(SagradaState.from_json(GOOD)).to_json()
    else:
        assert from_file.output.startswith("Sagrada, 2 players.")


@pytest.mark.parametrize(("doc", "message"), BAD[:12] + BAD[-6:], ids=[m[:40] for _, m in BAD[:12] + BAD[-6:]])
def test_cli_bad_input_exits_2_with_one_line(tmp_path, doc, message):
    if isinstance(doc, dict):
        doc = {"game": "sagrada", **doc}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    result = CliRunner().invoke(cli, ["score", str(path)])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("tablescan: ")
    assert message in lines[0]


def test_sample_game_scores():
    result = CliRunner().invoke(cli, ["score", str(SAMPLE_GAME), "--format", "text"])
    assert result.exit_code == 0, result.output
    doc = json.loads(CliRunner().invoke(cli, ["score", str(SAMPLE_GAME)]).output)
    assert len(doc["players"]) == 3
    assert doc["winner"] == doc["ranking"][0]
    assert all(player["violations"] == [] for player in doc["players"])


def test_repr_is_pasteable_and_str_is_a_grid():
    import random

    from scoring import sagrada

    for players in (1, 3):
        state = sagrada.generate(random.Random(players), players=players)
        assert eval(repr(state), vars(sagrada)) == state
    state = SagradaState.from_json(GOOD)
    assert str(state).splitlines()[:2] == ["Ana:", "  B4 Y3 G6 R3 B6"]


def test_generate_is_reproducible_and_honours_options():
    import random

    from scoring.sagrada import generate

    assert generate(random.Random(9), players=2) == generate(random.Random(9), players=2)
    state = generate(random.Random(9), players=4, empty=3, patterns=False)
    assert len(state.players) == 4 and all(p.pattern is None for p in state.players)
    assert all(sum(d is None for row in p.window for d in row) == 3 for p in state.players)
    assert len({p.private_objective for p in state.players}) == 4
    solo = generate(random.Random(9), players=1)
    assert solo.solo is not None and len(solo.public_objectives) == 2
    with pytest.raises(ValueError, match="players"):
        generate(random.Random(9), players=5)
