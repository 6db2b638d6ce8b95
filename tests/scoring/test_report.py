"""The typed report every game returns: fields the shells read directly, and the cells behind the points."""

from __future__ import annotations

import dataclasses
import random

import pytest

from scoring.alhambra import AlhambraPlayer, AlhambraState, Tile
from scoring.alhambra import score as score_alhambra
from scoring.registry import GAMES
from scoring.report import Evidence, Report, Unit
from scoring.sagrada import SAMPLE, SagradaState
from scoring.sagrada import score as score_sagrada
from scoring.splendor import SplendorState
from scoring.splendor import score as score_splendor

IDS = sorted(GAMES)


def _report(game_id: str, seed: int) -> Report:
    game = GAMES[game_id]
    return game.score(game.generate(random.Random(seed)))


@pytest.mark.parametrize("game_id", IDS)
@pytest.mark.parametrize("seed", range(4))
def test_every_report_has_the_typed_fields(game_id: str, seed: int) -> None:
    report = _report(game_id, seed)
    assert isinstance(report, Report)
    names = {f.name for f in dataclasses.fields(report)}  # type: ignore[arg-type]
    assert {"players", "ranking", "tie_breaks"} <= names
    assert isinstance(report.tie_breaks, tuple) and all(isinstance(line, str) for line in report.tie_breaks)
    assert isinstance(report.ranking, tuple) and sorted(report.ranking) == sorted(p.name for p in report.players)
    for player in report.players:
        assert isinstance(player.name, str) and isinstance(player.total, int) and not isinstance(player.total, bool)
        assert all(isinstance(line, Evidence) for line in player.evidence)
        for line in player.evidence:
            assert all(isinstance(unit, Unit) for unit in line.units)
            assert all(len(cell) == 2 and all(isinstance(v, int) for v in cell) for cell in line.cells)
    assert isinstance(report.to_json(), dict) and isinstance(report.to_text(), str)


def test_sagrada_evidence_is_the_objectives_and_their_cells() -> None:
    player = score_sagrada(SagradaState.from_json(SAMPLE)).players[0]
    assert player.evidence == (*player.public, player.private)
    assert sum(line.points for line in player.evidence) == player.total - player.favor_tokens - player.empty_points
    rows = next(line for line in player.evidence if line.id == "row-color-variety")
    assert [unit.label for unit in rows.units] == ["row 1"]
    assert rows.cells == tuple((0, c) for c in range(5))


def test_sagrada_tie_breaks_name_the_rule_that_broke_the_tie() -> None:
    doc = {
        "game": "sagrada",
        "public_objectives": [],
        "players": [
            {"name": "Ana", "window": [". . . . ."] * 4, "private_objective": "red", "favor_tokens": 2},
            {"name": "Bo", "window": [". . . . ."] * 4, "private_objective": "blue", "favor_tokens": 2},
        ],
    }
    report = score_sagrada(SagradaState.from_json(doc))
    assert report.ranking == ("Ana", "Bo")
    assert report.tie_breaks == (
        "Ana and Bo both have -18; Ana ranks higher on turn order (listed earlier: took the final round's last turn later)",
    )


def test_alhambra_evidence_is_the_majorities_then_the_longest_wall() -> None:
    ana = AlhambraPlayer("Ana", {(0, 0): Tile("fountain"), (1, 0): Tile("tower", "NE"), (0, 1): Tile("tower")})
    bo = AlhambraPlayer("Bo", {(0, 0): Tile("fountain"), (1, 0): Tile("tower")})
    report = score_alhambra(AlhambraState(1, (ana, bo)))
    evidence = report.players[0].evidence
    assert [(line.id, line.points) for line in evidence] == [("tower", 6), ("longest-wall", 2)]
    assert evidence[0].cells == ((1, 0), (0, 1))
    assert [unit.label for unit in evidence[1].units] == [f"{cell} {side}" for cell, side in report.players[0].wall]
    assert sum(line.points for line in evidence) == report.players[0].round_points
    assert report.tie_breaks == ()


def test_splendor_tie_breaks_fewest_cards_and_shared_places() -> None:
    five = {"bonus": "red", "points": 5}
    doc = {
        "players": [
            {"name": "Ana", "cards": [five, five, five, {"bonus": "blue", "points": 0}]},
            {"name": "Bo", "cards": [five, five, five]},
            {"name": "Cy", "cards": [five, five, five]},
        ]
    }
    report = score_splendor(SplendorState.from_json(doc))
    assert report.ranking == ("Bo", "Cy", "Ana")
    assert report.tie_breaks == (
        "Bo and Cy both have 15 prestige and 3 development cards; they share the place",
        "Cy and Ana both have 15 prestige; Cy ranks higher on fewer development cards (3 vs 4)",
    )
    assert [p.total for p in report.players] == [p.prestige for p in report.players]
    assert all(p.evidence == () for p in report.players)


@pytest.mark.parametrize("game_id", IDS)
def test_a_report_refuses_a_ranking_that_is_not_its_players(game_id: str) -> None:
    report = _report(game_id, 1)
    with pytest.raises(ValueError, match=r"^ranking: expected each of the players' names once"):
        dataclasses.replace(report, ranking=report.ranking[:-1])  # type: ignore[type-var]
    with pytest.raises(ValueError, match=r"^tie_breaks: expected a tuple of sentences"):
        dataclasses.replace(report, tie_breaks=[3])  # type: ignore[type-var]
