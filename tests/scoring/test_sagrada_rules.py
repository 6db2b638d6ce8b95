"""Sagrada placement checks, ranking tie-breaks, solo play, pattern identification."""

from __future__ import annotations

import math
import random

import pytest

from scoring.errors import StateError
from scoring.sagrada import (
    PATTERNS,
    RULES,
    Die,
    SagradaState,
    generate_window,
    identify_patterns,
    parse_window,
    pattern_log_likelihood,
    score,
    validate,
    window_violations,
)
from scoring.sagrada.identification import TOOL_RATE

EDGE_TOOLS = ("Eglomise Brush", "Copper Foil Burnisher", "Lathekin", "Tap Wheel")


def _grid(dice: dict[tuple[int, int], str]):
    grid = [["."] * 5 for _ in range(4)]
    for (r, c), text in dice.items():
        grid[r][c] = text
    return parse_window([" ".join(row) for row in grid])


@pytest.mark.parametrize(
    ("dice", "pattern", "expected"),
    [
        ({}, None, []),
        ({(0, 0): "R1"}, None, []),
        ({(1, 1): "R1"}, None, [("no-edge-die", ((1, 1),), EDGE_TOOLS)]),
        ({(0, 0): "R1", (0, 1): "R2"}, None, [("orthogonal-same-color", ((0, 0), (0, 1)), ())]),
        ({(0, 0): "R1", (1, 0): "G1"}, None, [("orthogonal-same-value", ((0, 0), (1, 0)), ())]),
        (
            {(0, 0): "R1", (0, 1): "R1"},
            None,
            [("orthogonal-same-color", ((0, 0), (0, 1)), ()), ("orthogonal-same-value", ((0, 0), (0, 1)), ())],
        ),
        ({(0, 0): "R1", (1, 1): "R1"}, None, []),  # diagonal twins are legal
        (
            {(0, 0): "R1", (3, 4): "G2"},
            None,
            [
                ("isolated-die", ((0, 0),), ("Cork-backed Straightedge",)),
                ("isolated-die", ((3, 4),), ("Cork-backed Straightedge",)),
            ],
        ),
        (
            {(1, 1): "R1", (2, 3): "G2"},
            None,
            [
                ("isolated-die", ((1, 1),), ("Cork-backed Straightedge",)),
                ("isolated-die", ((2, 3),), ("Cork-backed Straightedge",)),
                ("no-edge-die", ((1, 1), (2, 3)), EDGE_TOOLS),
            ],
        ),
        # Virtus: top row "4.25G"
        ({(0, 0): "R3"}, "Virtus", [("value-restriction", ((0, 0),), ("Copper Foil Burnisher",))]),
        ({(0, 4): "R3"}, "Virtus", [("color-restriction", ((0, 4),), ("Eglomise Brush",))]),
        (
            {(0, 0): "R4", (0, 4): "G6"},
            "Virtus",
            [
                ("isolated-die", ((0, 0),), ("Cork-backed Straightedge",)),
                ("isolated-die", ((0, 4),), ("Cork-backed Straightedge",)),
            ],
        ),
        ({(0, 3): "R5", (0, 4): "G3"}, "Virtus", []),
    ],
)
def test_window_violations(dice, pattern, expected):
    issues = window_violations(_grid(dice), PATTERNS[pattern] if pattern else None)
    assert [(i.rule, i.cells, i.explained_by) for i in issues] == expected
    assert all(issue.rule in RULES and issue.detail for issue in issues)


def test_violation_detail_names_dice_and_places():
    (issue,) = window_violations(_grid({(3, 1): "B4", (3, 2): "B6"}))
    assert issue.detail == "B4 at row 4 col 2 and B6 at row 4 col 3 are orthogonally adjacent and both blue"


def test_validate_tags_each_issue_with_its_player():
    state = SagradaState.from_json(_doc([["R1 R2 . . ."] + [". . . . ."] * 3, ["Y1 . . . ."] + [". . . . ."] * 3]))
    issues = validate(state)
    assert [(i.player, i.rule) for i in issues] == [(0, "orthogonal-same-color")]


def test_report_violations_follow_formats():
    windows = [["R1 R2 . . ."] + [". . . . ."] * 3, [". . . . .", ". Y1 . . ."] + [". . . . ."] * 2]
    state = SagradaState.from_json(_doc(windows))
    players = score(state).to_json()["players"]
    assert players[0]["violations"] == [
        {
            "cell": [0, 0],
            "cells": [[0, 0], [0, 1]],
            "rule": "orthogonal-same-color",
            "detail": "R1 at row 1 col 1 and R2 at row 1 col 2 are orthogonally adjacent and both red",
            "explained_by": [],
        }
    ]
    assert players[1]["violations"][0]["rule"] == "no-edge-die"
    assert players[1]["violations"][0]["explained_by"] == list(EDGE_TOOLS)


# ---------------------------------------------------------------- ranking


def _doc(windows, privates=None, tokens=None, names=None, objectives=None):
    n = len(windows)
    return {
        "game": "sagrada",
        "public_objectives": objectives or ["row-color-variety", "column-color-variety", "deep-shades"],
        "players": [
            {
                "name": (names or ["Ana", "Bo", "Cyd", "Dev"])[i],
                "window": windows[i],
                "private_objective": (privates or ["red", "blue", "green", "yellow"])[i],
                "favor_tokens": (tokens or [0] * n)[i],
            }
            for i in range(n)
        ],
    }


def _one(text: str, empty_rows: int = 3) -> list[str]:
    return [text] + [". . . . ."] * empty_rows


# Objectives row-color-variety, column-color-variety, deep-shades score 0 on these windows.
@pytest.mark.parametrize(
    ("windows", "privates", "tokens", "ranking", "tie_word"),
    [
        # plain totals: Bo 4-19 = -15 beats Ana 1-19 = -18
        ([_one("R1 . . . ."), _one("B4 . . . .")], ["red", "blue"], [0, 0], ["Bo", "Ana"], None),
        # tie -13: Bo (listed first) has private 2 + 3 tokens - 18; Ana private 6 - 19. Private decides.
        ([_one("B2 Y1 . . ."), _one("R6 . . . .")], ["blue", "red"], [3, 0], ["Bo", "Ana"], "private"),
        # tie -14 and private 4 each: Bo has 1 token, Ana none. Tokens decide.
        ([_one("R4 Y1 . . ."), _one("B4 . . . .")], ["red", "blue"], [0, 1], ["Bo", "Ana"], "tokens"),
        # full tie -15: the player listed first (last turn of the final round) wins.
        ([_one("R4 . . . ."), _one("B4 . . . .")], ["red", "blue"], [0, 0], ["Ana", "Bo"], "turn order"),
    ],
)
def test_ranking_tie_breaks(windows, privates, tokens, ranking, tie_word):
    report = score(SagradaState.from_json(_doc(windows, privates, tokens)))
    totals = {p.name: p.total for p in report.players}
    assert list(report.ranking) == ranking
    assert report.winner == ranking[0]
    assert report.to_json()["winner"] == ranking[0]
    if tie_word is None:
        assert report.tie_breaks == ()
    else:
        assert len(set(totals.values())) == 1
        reason = report.tie_breaks[0].replace("unused favor tokens", "tokens")
        assert tie_word in reason.replace("private objective", "private")
        assert f"tie: {report.tie_breaks[0]}" in report.to_text()


def test_full_tie_goes_to_the_earliest_listed_whatever_the_names():
    windows = [_one("R4 . . . ."), _one("B4 . . . ."), _one("G4 . . . .")]
    for names in (["Zed", "Amy", "Kim"], ["Amy", "Kim", "Zed"]):
        report = score(SagradaState.from_json(_doc(windows, names=names)))
        assert list(report.ranking) == names


def test_four_players_mixed_ties():
    windows = [_one("R4 . . . ."), _one("B6 . . . ."), _one("G4 Y2 . . ."), _one("Y5 . . . .")]
    # totals: Ana 4-19=-15, Bo 6-19=-13, Cyd 4-18+... green 4 -18 = -14, Dev yellow 5-19+1 = -13
    report = score(SagradaState.from_json(_doc(windows, ["red", "blue", "green", "yellow"], [0, 0, 0, 1])))
    assert [p.total for p in report.players] == [-15, -13, -14, -13]
    assert list(report.ranking) == ["Bo", "Dev", "Cyd", "Ana"]  # Bo's private 6 beats Dev's 5


# ---------------------------------------------------------------- solo


def _solo(window, colors=("red", "blue"), target=20, objectives=("row-color-variety", "color-diagonals")):
    return {
        "game": "sagrada",
        "public_objectives": list(objectives),
        "players": [{"name": "Sol", "window": window}],
        "solo": {"private_objectives": list(colors), "round_track_sum": target},
    }


SOLO_WINDOW = ["R1 Y2 G3 B4 P5", "B2 R3 Y4 G5 B6", "G4 B5 R6 Y1 R2", "Y3 P4 . B3 ."]
# Counted by hand:
# row-color-variety: only row 1 (row 2 has blue twice, row 3 red twice, row 4 is incomplete) -> 6
# color-diagonals: R1 R3 R6, Y2 Y4 Y1, G3 G5, B4 B6, B2 B5 have a diagonal partner; P5 G4 R2 Y3 P4 B3
#   do not -> 12
# private: red 1+3+6+2 = 12, blue 4+2+6+5+3 = 20 -> 20; two empty cells x -3 = -6
# total 6 + 12 + 20 - 6 = 32


@pytest.mark.parametrize(
    ("target", "won", "winner"),
    [(31, True, "Sol"), (32, False, None), (45, False, None)],
)
def test_solo_game(target, won, winner):
    report = score(SagradaState.from_json(_solo(SOLO_WINDOW, target=target)))
    doc = report.to_json()
    (player,) = doc["players"]
    assert player["breakdown"] == {
        "public": {"row-color-variety": 6, "color-diagonals": 12},
        "private": 20,
        "favor_tokens": 0,
        "empty_cells": -6,
    }
    assert player["total"] == 32
    assert doc["solo"] == {"target": target, "won": won}
    assert doc["ranking"] == ["Sol"]
    assert doc["winner"] == winner
    text = report.to_text()
    assert "Private (blue)" in text and "red: 12" in text
    assert ("won" if won else "lost") in text.splitlines()[-1]


def test_solo_private_tie_takes_the_first_colour():
    report = score(SagradaState.from_json(_solo(["R4 B4 . . ."] + [". . . . ."] * 3, ("blue", "red"))))
    assert report.players[0].private_color == "blue"
    assert report.players[0].private.points == 4


# ---------------------------------------------------------------- pattern identification


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_identify_empty_window_from_its_prints(name):
    observed = [list(row) for row in PATTERNS[name].grid]
    ranked = identify_patterns(observed)
    assert ranked[0][0] == name
    assert ranked[0][1] > 0.999
    assert len(ranked) == 24
    assert abs(sum(p for _, p in ranked) - 1) < 1e-9
    assert [p for _, p in ranked] == sorted((p for _, p in ranked), reverse=True)


def test_identify_survives_one_misread_print():
    observed = [list(row) for row in PATTERNS["Firelight"].grid]
    observed[0][0] = "5" if observed[0][0] != "5" else "6"
    assert identify_patterns(observed)[0][0] == "Firelight"


def test_identify_from_dice_and_few_prints():
    hits = 0
    for seed in range(40):
        rng = random.Random(seed)
        name = rng.choice(sorted(PATTERNS))
        window = generate_window(rng, PATTERNS[name], empty=2)
        observed = [[die if die is not None else PATTERNS[name].grid[r][c] for c, die in enumerate(row)] for r, row in enumerate(window)]
        hits += identify_patterns(observed)[0][0] == name
    assert hits >= 38


def test_identify_unknown_cells_give_no_evidence():
    ranked = identify_patterns([[None] * 5 for _ in range(4)])
    assert all(abs(p - 1 / 24) < 1e-12 for _, p in ranked)


def test_identify_soft_evidence():
    observed = [[None] * 5 for _ in range(4)]
    grid = PATTERNS["Gravitas"].grid
    for r in range(4):
        for c in range(5):
            observed[r][c] = {grid[r][c]: 0.6, ".": 0.4} if grid[r][c] != "." else {".": 0.9, "B4": 0.1}
    assert identify_patterns(observed)[0][0] == "Gravitas"


def test_identify_die_breaking_print_is_unlikely_not_impossible():
    observed = [list(row) for row in PATTERNS["Virtus"].grid]
    observed[0][4] = Die("R", 3)  # Virtus asks for green here
    assert identify_patterns(observed)[0][0] == "Virtus"
    broken = pattern_log_likelihood(observed, PATTERNS["Virtus"])
    observed[0][4] = Die("G", 3)
    legal = pattern_log_likelihood(observed, PATTERNS["Virtus"])
    assert legal - broken == pytest.approx(math.log((1 / 6) / (TOOL_RATE / 30)))


@pytest.mark.parametrize(
    ("observed", "message"),
    [
        ([[None] * 5] * 3, "observed: expected 4 rows"),
        ([[None] * 4] + [[None] * 5] * 3, "observed[0]: expected 5 entries"),
        ([["X"] + [None] * 4] + [[None] * 5] * 3, "observed[0][0]: expected a print"),
        ([[{"Q9": 1.0}] + [None] * 4] + [[None] * 5] * 3, "neither a print nor a die"),
        ([[{"R": -1.0}] + [None] * 4] + [[None] * 5] * 3, "expected a probability >= 0"),
        ([[{"R": 0}] + [None] * 4] + [[None] * 5] * 3, "no positive probability"),
        ([[3] + [None] * 4] + [[None] * 5] * 3, "expected a Die, None"),
    ],
)
def test_identify_rejects_bad_observations(observed, message):
    with pytest.raises(StateError, match=message.replace("[", r"\[").replace("]", r"\]")):
        identify_patterns(observed)
