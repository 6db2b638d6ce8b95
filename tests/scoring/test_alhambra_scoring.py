"""Alhambra scoring core: reference cases, rules, walls, bad input and the CLI."""

from __future__ import annotations

import json
import random
from contextlib import nullcontext
from pathlib import Path

import pytest
from click.testing import CliRunner

from scoring import alhambra
from scoring.alhambra import (
    BUILDING_TYPES,
    CATALOGUE,
    LEGAL_WALLS,
    AlhambraPlayer,
    AlhambraState,
    Tile,
    generate,
    generate_palace,
    longest_wall,
    palace_map,
    place_points,
    rank_majorities,
    score,
    validate,
    validate_palace,
)
from scoring.errors import StateError
from scoring.registry import GAMES
from tablescan.cli import cli

ROOT = Path(__file__).resolve().parents[2]
CASES = sorted((ROOT / "tests" / "scoring" / "cases" / "alhambra").glob("*.json"))
F = Tile("fountain")


def _palace(*cells: tuple[int, int, str, str]) -> dict:
    """Fountain at (0, 0) plus ``(x, y, type, walls)`` tiles."""
    palace = {(0, 0): F}
    palace.update({(x, y): Tile(kind, walls) for x, y, kind, walls in cells})
    return palace


def _doc(*players: dict, scoring_round: int = 3, **extra) -> dict:
    return {"game": "alhambra", "scoring_round": scoring_round, "players": list(players), **extra}


def _player(name: str = "Ana", palace: list | None = None, **extra) -> dict:
    tiles = palace if palace is not None else [{"at": [0, 0], "tile": "fountain"}]
    return {"name": name, "palace": tiles, **extra}


# ---------------------------------------------------------------------------- reference cases


def test_there_are_reference_cases() -> None:
    assert len(CASES) >= 10


@pytest.mark.parametrize("path", CASES, ids=[path.stem for path in CASES])
def test_reference_case(path: Path) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    assert case["source"].strip()
    got = score(AlhambraState.from_json(case["game"])).to_json()
    expected = case["expected"]
    assert got["ranking"] == expected["ranking"]
    assert [p["name"] for p in got["players"]] == [p["name"] for p in expected["players"]]
    for mine, want in zip(got["players"], expected["players"]):
        for key in ("counts", "majorities", "longest_wall", "round_points", "total"):
            if key in want:
                assert mine[key] == want[key], (mine["name"], key)
        assert [{"rule": v["rule"], "cells": v["cells"]} for v in mine["violations"]] == [
            {"rule": v["rule"], "cells": v["cells"]} for v in want["violations"]
        ], mine["name"]
    assert got.get("dirk") == expected.get("dirk")
    assert got.get("market_awards") == expected.get("market_awards")


# ------------------------------------------------------------------------------------ tiles


def test_catalogue_and_wall_patterns() -> None:
    assert len(CATALOGUE) == 54
    assert [tile.tile_id for tile in CATALOGUE] == list(range(1, 55))
    assert len(LEGAL_WALLS) == 13
    assert {tile.walls for tile in CATALOGUE} == set(LEGAL_WALLS)
    assert "NS" not in LEGAL_WALLS and "EW" not in LEGAL_WALLS and "NESW" not in LEGAL_WALLS
    assert {tile.type for tile in CATALOGUE} == set(BUILDING_TYPES)
    assert BUILDING_TYPES == ("pavilion", "seraglio", "arcades", "chambers", "garden", "tower")
    # type + price + walls is unique per physical tile
    assert len({(t.type, t.price, t.walls) for t in CATALOGUE}) == 54


@pytest.mark.parametrize(
    ("args", "expectation"),
    [
        (("garden", "NE"), nullcontext()),
        (("garden", ""), nullcontext()),
        (("fountain", ""), nullcontext()),
        (("tower", "NEW", 44), nullcontext()),
        (("castle", ""), pytest.raises(StateError, match="type")),
        (("garden", "NN"), pytest.raises(StateError, match="walls")),
        (("garden", "SN"), pytest.raises(StateError, match="walls")),
        (("garden", "X"), pytest.raises(StateError, match="walls")),
        (("fountain", "N"), pytest.raises(StateError, match="fountain")),
        (("tower", "NE", 44), pytest.raises(StateError, match="tile_id")),
        (("tower", "NEW", 99), pytest.raises(StateError, match="tile_id")),
    ],
)
def test_tile_checks(args: tuple, expectation) -> None:
    with expectation:
        Tile(*args)


# ------------------------------------------------------------------------------- majorities


@pytest.mark.parametrize(
    ("scoring_round", "kind", "points"),
    [
        (1, "pavilion", (1,)),
        (1, "tower", (6,)),
        (2, "pavilion", (8, 1)),
        (2, "chambers", (11, 4)),
        (3, "seraglio", (17, 9, 2)),
        (3, "tower", (21, 13, 6)),
    ],
)
def test_points_table(scoring_round: int, kind: str, points: tuple) -> None:
    assert place_points(scoring_round, kind) == points


@pytest.mark.parametrize(
    ("scoring_round", "counts", "points"),
    [
        # single winners per place
        (3, [3, 2, 1], [21, 13, 6]),
        (2, [3, 2, 1], [13, 6, 0]),
        (1, [3, 2, 1], [6, 0, 0]),
        # two tied first: share first and second, the next is third
        (3, [2, 2, 1], [17, 17, 6]),
        (2, [2, 2, 1], [9, 9, 0]),
        (1, [2, 2], [3, 3]),
        # three tied first
        (3, [2, 2, 2], [13, 13, 13]),
        (2, [2, 2, 2], [6, 6, 6]),
        # ties lower down
        (3, [3, 1, 1], [21, 9, 9]),
        (3, [3, 1, 1, 1], [21, 6, 6, 6]),
        (3, [3, 2, 1, 1], [21, 13, 3, 3]),
        (3, [3, 2, 1, 1, 1], [21, 13, 2, 2, 2]),
        (3, [4, 4, 4, 4], [10, 10, 10, 10]),
        (2, [3, 1, 1], [13, 3, 3]),
        # nobody scores with none of a type
        (3, [0, 0, 0], [0, 0, 0]),
        (3, [1, 0, 0], [21, 0, 0]),
        (3, [0, 4, 0], [0, 21, 0]),
    ],
)
def test_tower_majorities(scoring_round: int, counts: list[int], points: list[int]) -> None:
    standings = rank_majorities([{"tower": n} for n in counts], scoring_round)
    assert [s["tower"].points if "tower" in s else 0 for s in standings] == points
    assert all("tower" not in s for s, n in zip(standings, counts) if n == 0)


def test_dirk_pushes_a_player_down_and_is_not_ranked() -> None:
    ana = AlhambraPlayer("Ana", _palace((1, 0, "tower", ""), (2, 0, "tower", "")))
    bo = AlhambraPlayer("Bo", _palace((1, 0, "tower", "S")))
    without = score(AlhambraState(2, (ana, bo))).to_json()
    dirk = dict.fromkeys(BUILDING_TYPES, 0) | {"tower": 5}
    with_dirk = score(AlhambraState(2, (ana, bo), dirk=dirk)).to_json()
    assert [p["majorities"] for p in without["players"]] == [{"tower": 13}, {"tower": 6}]
    assert [p["majorities"] for p in with_dirk["players"]] == [{"tower": 6}, {}]
    assert with_dirk["dirk"] == {"majorities": {"tower": 13}, "round_points": 13}
    assert with_dirk["ranking"] == ["Ana", "Bo"]
    assert "dirk" not in without


def test_reserve_never_counts() -> None:
    ana = AlhambraPlayer("Ana", _palace(), reserve=(Tile("tower"), Tile("tower")))
    bo = AlhambraPlayer("Bo", _palace((1, 0, "tower", "")))
    report = score(AlhambraState(1, (ana, bo))).to_json()
    assert report["players"][0]["counts"]["tower"] == 0
    assert report["players"][1]["majorities"] == {"tower": 6}


def test_total_is_score_before_plus_round_points_and_ranking_sorts() -> None:
    state = generate(random.Random(5), players=4, scoring_round=3)
    report = score(state).to_json()
    for player, doc in zip(state.players, report["players"]):
        assert doc["total"] == player.score_before + doc["round_points"]
        assert doc["round_points"] == sum(doc["majorities"].values()) + doc["longest_wall"]
    totals = {p["name"]: p["total"] for p in report["players"]}
    assert [totals[name] for name in report["ranking"]] == sorted(totals.values(), reverse=True)


# ------------------------------------------------------------------------------------- walls


@pytest.mark.parametrize(
    ("tiles", "length"),
    [
        ([], 0),
        ([(1, 0, "garden", "N")], 1),
        # two N walls in a row join at their shared corner
        ([(1, 0, "garden", "N"), (2, 0, "tower", "N")], 2),
        # a gap (an open N side) breaks the wall
        ([(1, 0, "garden", "N"), (2, 0, "tower", ""), (3, 0, "tower", "N")], 1),
        # round the end of a tile: N, E, S of one tile
        ([(1, 0, "tower", "NES")], 3),
        # a wall against a tile is internal, not outer
        ([(1, 0, "garden", "E"), (2, 0, "tower", "W")], 0),
        # round a convex corner: N then E
        ([(1, 0, "garden", "NE")], 2),
    ],
)
def test_longest_wall_small(tiles: list, length: int) -> None:
    got, segments = longest_wall(_palace(*tiles))
    assert got == length == len(segments)


def test_longest_wall_segments_form_a_trail() -> None:
    palace = _palace((1, 0, "garden", "NE"), (1, 1, "tower", "ES"), (0, 1, "arcades", "SW"))
    length, segments = longest_wall(palace)
    assert length == 6
    assert set(segments) == {((1, 0), "N"), ((1, 0), "E"), ((1, 1), "E"), ((1, 1), "S"), ((0, 1), "S"), ((0, 1), "W")}
    assert_trail(segments)


def test_longest_wall_picks_the_longer_of_two_runs() -> None:
    # the fountain's open N side splits the top into a W run (2) and an E run (3: N, N, E)
    palace = _palace((-1, 0, "garden", "NW"), (1, 0, "tower", "N"), (2, 0, "chambers", "NE"))
    assert longest_wall(palace) == (3, [((1, 0), "N"), ((2, 0), "N"), ((2, 0), "E")])


def assert_trail(segments: list) -> None:
    """Consecutive segments share a corner, and no segment repeats."""
    from scoring.alhambra.palace import segment_ends

    assert len(set(segments)) == len(segments)
    if len(segments) < 2:
        return
    a, b = segment_ends(segments[0])
    at = a if a not in segment_ends(segments[1]) else b  # the corner the trail starts from
    for segment in segments:
        a, b = segment_ends(segment)
        assert at in (a, b), segments
        at = b if at == a else a


# -------------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("palace", "rules"),
    [
        (_palace(), []),
        (_palace((1, 0, "garden", "")), []),
        (_palace((1, 0, "garden", "W")), ["wall-faces-open-side", "unreachable"]),
        # both walled: legal internal double wall, but the tile cannot be reached
        (
            {(0, 0): F, (1, 0): Tile("garden", "EW"), (2, 0): Tile("tower", "W")},
            ["wall-faces-open-side", "unreachable", "unreachable"],
        ),
        (_palace((3, 3, "garden", "")), ["detached"]),
        ({(0, 0): F, (1, 0): F}, ["fountain-count"]),
        ({(1, 0): Tile("garden")}, ["fountain-count"]),
    ],
)
def test_validate_palace_rules(palace: dict, rules: list[str]) -> None:
    assert [issue.rule for issue in validate_palace(palace)] == rules


def test_hole_is_one_empty_cell_with_four_neighbours() -> None:
    ring = {(x, y): Tile("garden") for x in range(3) for y in range(3) if (x, y) != (1, 1)}
    ring[(0, 0)] = F
    assert [(i.rule, i.cells) for i in validate_palace(ring)] == [("hole", ((1, 1),))]
    # a two-cell enclosed space is no hole by the rule's letter
    wide = {(x, y): Tile("garden") for x in range(4) for y in range(3) if y != 1 or x in (0, 3)}
    wide[(0, 0)] = F
    assert validate_palace(wide) == []


def test_validate_counts_tiles_across_the_game() -> None:
    ana = AlhambraPlayer("Ana", {(0, 0): F, (1, 0): Tile("tower", ""), (2, 0): Tile("tower", "")})
    bo = AlhambraPlayer("Bo", _palace(), reserve=(Tile("tower", ""),))
    chen = AlhambraPlayer("Chen", _palace((0, 1, "pavilion", "NS")))
    issues = validate(AlhambraState(3, (ana, bo, chen)))
    assert [(i.rule, i.player, i.cells) for i in issues] == [
        ("tile-overused", 0, ((1, 0), (2, 0))),
        ("tile-overused", 1, ()),
        ("wall-faces-open-side", 2, ((0, 1), (0, 0))),
        ("unreachable", 2, ((0, 1),)),
        ("no-such-tile", 2, ((0, 1),)),
    ]
    assert "3 times, the game has 2" in issues[0].detail


# ------------------------------------------------------------------------------- JSON parsing


def test_tile_id_form_and_round_trip() -> None:
    doc = _doc(_player(palace=[{"at": [0, 0], "tile": "fountain"}, {"at": [0, -1], "tile_id": 44}]))
    state = AlhambraState.from_json(doc)
    tile = palace_map(state.players[0])[(0, -1)]
    assert (tile.type, tile.walls, tile.tile_id, tile.price) == ("tower", "NEW", 44, 7)
    assert AlhambraState.from_json(state.to_json()) == state
    assert state.to_json()["players"][0]["palace"][0] == {"at": [0, -1], "type": "tower", "walls": "NEW", "tile_id": 44}


def test_samples_parse_and_score() -> None:
    for name in ("demo.json", "alhambra_2p_dirk.json"):
        doc = json.loads((ROOT / "sample_images" / name).read_text(encoding="utf-8"))
        state = AlhambraState.from_json(doc)
        assert validate(state) == []
        report = score(state).to_json()
        assert report["ranking"]
    demo = AlhambraState.from_json(json.loads((ROOT / "sample_images" / "demo.json").read_text(encoding="utf-8")))
    assert len(demo.players) == 3 and demo.scoring_round == 3 and demo.market and all(p.money for p in demo.players)


BAD = [
    (
        "unknown type",
        _doc(_player(palace=[{"at": [0, 0], "tile": "fountain"}, {"at": [1, 0], "type": "castle", "walls": ""}])),
        "players[0].palace[1].type",
    ),
    (
        "walls NN",
        _doc(_player(palace=[{"at": [0, 0], "tile": "fountain"}, {"at": [1, 0], "type": "garden", "walls": "NN"}])),
        "players[0].palace[1].walls",
    ),
    (
        "walls X",
        _doc(_player(palace=[{"at": [0, 0], "tile": "fountain"}, {"at": [1, 0], "type": "garden", "walls": "X"}])),
        "players[0].palace[1].walls",
    ),
    (
        "walls SN",
        _doc(_player(palace=[{"at": [0, 0], "tile": "fountain"}, {"at": [1, 0], "type": "garden", "walls": "SN"}])),
        "players[0].palace[1].walls",
    ),
    (
        "walls missing",
        _doc(_player(palace=[{"at": [0, 0], "tile": "fountain"}, {"at": [1, 0], "type": "garden"}])),
        "players[0].palace[1].walls",
    ),
    (
        "duplicate cell",
        _doc(_player(palace=[{"at": [0, 0], "tile": "fountain"}, {"at": [0, 0], "type": "garden", "walls": ""}])),
        "players[0].palace[1].at",
    ),
    ("no fountain", _doc(_player(palace=[{"at": [1, 0], "type": "garden", "walls": ""}])), "players[0].palace"),
    (
        "two fountains",
        _doc(_player(palace=[{"at": [0, 0], "tile": "fountain"}, {"at": [1, 0], "tile": "fountain"}])),
        "players[0].palace[1]",
    ),
    ("float coordinate", _doc(_player(palace=[{"at": [0.5, 0], "tile": "fountain"}])), "players[0].palace[0].at[0]"),
    ("string coordinate", _doc(_player(palace=[{"at": [0, "1"], "tile": "fountain"}])), "players[0].palace[0].at[1]"),
    ("three coordinates", _doc(_player(palace=[{"at": [0, 0, 0], "tile": "fountain"}])), "players[0].palace[0].at"),
    ("round 4", _doc(_player(), scoring_round=4), "scoring_round"),
    ("round missing", {"game": "alhambra", "players": [_player()]}, "scoring_round"),
    (
        "unknown tile_id",
        _doc(_player(palace=[{"at": [0, 0], "tile": "fountain"}, {"at": [1, 0], "tile_id": 55}])),
        "players[0].palace[1].tile_id",
    ),
    (
        "tile_id disagrees",
        _doc(_player(palace=[{"at": [0, 0], "tile": "fountain"}, {"at": [1, 0], "tile_id": 44, "walls": "N"}])),
        "players[0].palace[1].walls",
    ),
    ("no players", _doc(), "players"),
    ("seven players", _doc(*[_player(f"P{i}") for i in range(7)]), "players"),
    ("same name", _doc(_player("Ana"), _player("Ana")), "players[1].name"),
    ("negative score", _doc(_player(score_before=-1)), "players[0].score_before"),
    ("unknown currency", _doc(_player(money={"euro": 3})), "players[0].money.euro"),
    ("reserve item not an object", _doc(_player(reserve=[None])), "players[0].reserve[0]"),
    ("fountain in reserve", _doc(_player(reserve=[{"tile": "fountain"}])), "players[0].reserve[0].tile"),
    ("dirk with three", _doc(_player("A"), _player("B"), _player("C"), dirk={"tower": 1}), "dirk"),
    ("dirk typo", _doc(_player("A"), _player("B"), dirk={"towers": 1}), "dirk.towers"),
    ("market before the end", _doc(_player(), scoring_round=2, market=[]), "market"),
    ("market currency", _doc(_player(), market=[{"currency": "euro", "type": "tower", "walls": ""}]), "market[0].currency"),
    ("not an object", [], "(document)"),
    ("wrong game", _doc(_player()) | {"game": "sagrada"}, "game"),
]


@pytest.mark.parametrize(("doc", "path"), [(doc, path) for _, doc, path in BAD], ids=[name for name, _, _ in BAD])
def test_bad_input_names_the_json_path(doc, path: str) -> None:
    with pytest.raises(StateError) as caught:
        AlhambraState.from_json(doc)
    message = str(caught.value)
    assert message.startswith(path + ":"), message
    assert "\n" not in message


# ---------------------------------------------------------------------------------------- CLI


def _run(args: list[str], stdin: str | None = None):
    return CliRunner().invoke(cli, args, input=stdin)


def test_cli_json_matches_the_report(tmp_path: Path) -> None:
    state = generate(random.Random(11), players=3)
    path = tmp_path / "game.json"
    path.write_text(json.dumps(state.to_json()), encoding="utf-8")
    result = _run(["score", str(path)])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == score(state).to_json()
    piped = _run(["score", "-"], stdin=json.dumps(state.to_json()))
    assert piped.exit_code == 0 and json.loads(piped.output) == json.loads(result.output)


def test_cli_text_explains_every_point() -> None:
    result = _run(["score", str(ROOT / "sample_images" / "demo.json"), "--format", "text"])
    assert result.exit_code == 0, result.output
    report = score(AlhambraState.from_json(json.loads((ROOT / "sample_images" / "demo.json").read_text())))
    for player in report.players:
        assert player.name in result.output
        assert f"{player.total:>7}" in result.output
        for cell, side in player.wall:
            assert f"({cell[0]}, {cell[1]}) {side}" in result.output
    for kind in BUILDING_TYPES:
        assert kind in result.output
    assert "Market awards" in result.output and "Ranking" in result.output
    assert "#" in result.output and "===" in result.output  # the palaces are drawn
    dirk = _run(["score", str(ROOT / "sample_images" / "alhambra_2p_dirk.json"), "--format", "text"])
    assert dirk.exit_code == 0 and "Dirk" in dirk.output


@pytest.mark.parametrize(("doc", "path"), [(doc, path) for _, doc, path in BAD[:14]], ids=[n for n, _, _ in BAD[:14]])
def test_cli_bad_input_exits_2_with_one_line(doc, path: str) -> None:
    result = _run(["score", "-"], stdin=json.dumps(doc))
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"tablescan: <stdin>: {path}:"), result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("stdin", "args", "needle"),
    [
        ("{not json", ["score", "-"], "invalid JSON"),
        (None, ["score", "/nonexistent/game.json"], "no such file"),
    ],
)
def test_cli_unreadable_input_exits_2(stdin, args: list[str], needle: str) -> None:
    result = _run(args, stdin=stdin)
    assert result.exit_code == 2 and needle in result.output


# --------------------------------------------------------------------------------- generator


def test_game_record_is_registered() -> None:
    game = GAMES["alhambra"]
    assert game is alhambra.GAME
    state = game.generate(random.Random(2), players=2, scoring_round=1)
    assert game.validate(state) == []
    assert game.parse(state.to_json()) == state
    assert game.score(state).to_json()["game"] == "alhambra"


def test_generate_shares_one_tile_set() -> None:
    used: set[int] = set()
    palaces = [generate_palace(random.Random(seed), 13, used) for seed in range(4)]
    ids = [tile.tile_id for palace in palaces for tile in palace.values() if tile.tile_id]
    assert len(ids) == len(set(ids)) == 52 == len(used)
    with pytest.raises(StateError, match="size"):
        generate_palace(random.Random(0), 3, used)


def test_generate_is_seeded() -> None:
    assert generate(random.Random(4), players=3) == generate(random.Random(4), players=3)
    assert generate(random.Random(4), players=3) != generate(random.Random(5), players=3)
