"""Splendor scoring core: parsing, checks, prestige, tie-break, reference cases, properties and the CLI."""

from __future__ import annotations

import copy
import json
import random
from collections import Counter
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import splendor
from scoring.errors import StateError
from scoring.registry import GAMES
from scoring.splendor import (
    CARDS,
    COLORS,
    DECK,
    NOBLES,
    Card,
    SplendorPlayer,
    SplendorState,
    generate,
    score,
    validate,
)
from tablescan.cli import cli

ROOT = Path(__file__).resolve().parents[2]
CASES = sorted((Path(__file__).parent / "cases" / "splendor").glob("*.json"))
SHARED_DATA = ROOT.parent / "shared" / "data" / "splendor_cards.json"


def doc_of(*players: dict) -> dict:
    return {"game": "splendor", "players": list(players)}


def kind(bonus: str, points: int, level: int | None = None) -> dict:
    card: dict = {"bonus": bonus, "points": points}
    if level is not None:
        card["level"] = level
    return card


def rules_by_player(state: SplendorState) -> list[tuple[str, int | None]]:
    return [(issue.rule, issue.player) for issue in validate(state)]


# --------------------------------------------------------------------------- catalogue


def test_catalogue_has_90_cards_40_30_20_and_10_nobles() -> None:
    assert len(CARDS) == 90
    assert Counter(card.level for card in CARDS.values()) == {1: 40, 2: 30, 3: 20}
    assert Counter(card.bonus for card in CARDS.values()) == {color: 18 for color in COLORS}
    assert sum(DECK.values()) == 90
    assert len(NOBLES) == 10
    assert all(noble.points == 3 and sum(noble.requires) in (8, 9) for noble in NOBLES.values())


def test_catalogue_matches_the_shared_copy() -> None:
    if not SHARED_DATA.exists():
        pytest.skip("../shared/data is not present")
    shared = json.loads(SHARED_DATA.read_text(encoding="utf-8"))
    assert {c["id"]: (c["level"], c["bonus"], c["points"]) for c in shared["cards"]} == {
        card.id: (card.level, card.bonus, card.points) for card in CARDS.values()
    }


@pytest.mark.parametrize(
    ("bonus", "points", "levels"),
    [
        ("white", 0, (1,)),
        ("blue", 1, (1, 2)),
        ("green", 2, (2,)),
        ("red", 3, (2, 3)),
        ("black", 4, (3,)),
        ("white", 5, (3,)),
    ],
)
def test_possible_levels_follow_the_deck(bonus: str, points: int, levels: tuple[int, ...]) -> None:
    assert Card(bonus, points).possible_levels == levels


# --------------------------------------------------------------------------- parsing

GOOD = doc_of(
    {"name": "Ana", "cards": [{"bonus": "white", "points": 1}, {"id": "L3-red-2"}], "nobles": 2, "reserved": 1},
    {"name": "Bo", "cards": [], "nobles": ["N1"]},
)


def mutated(path: tuple, value) -> dict:
    doc = copy.deepcopy(GOOD)
    target = doc
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return doc


@pytest.mark.parametrize(
    ("doc", "outcome"),
    [
        (GOOD, nullcontext()),
        (
            {"game": "splendor", "players": [{"name": "Ana", "cards": [], "nobles": ["N1", "N11"]}]},
            pytest.raises(StateError, match=r"^players\[0\]\.nobles\[1\]: unknown noble id 'N11'; expected one of N1-N10"),
        ),
        (
            mutated(("players", 0, "cards", 1, "id"), "L4-red-1"),
            pytest.raises(StateError, match=r"^players\[0\]\.cards\[1\]\.id: unknown card id 'L4-red-1'"),
        ),
        (
            mutated(("players", 0, "cards", 0, "bonus"), "gold"),
            pytest.raises(
                StateError,
                match=r"^players\[0\]\.cards\[0\]\.bonus: expected one of white, blue, green, red, black; got 'gold'",
            ),
        ),
        (
            mutated(("players", 0, "cards", 0, "points"), -1),
            pytest.raises(StateError, match=r"^players\[0\]\.cards\[0\]\.points: expected an integer 0-5, got -1"),
        ),
        (
            mutated(("players", 0, "cards", 0, "points"), 6),
            pytest.raises(StateError, match=r"^players\[0\]\.cards\[0\]\.points: expected an integer 0-5, got 6"),
        ),
        (
            mutated(("players", 0, "cards", 0, "points"), 1.5),
            pytest.raises(StateError, match=r"^players\[0\]\.cards\[0\]\.points: expected an integer"),
        ),
        (
            mutated(("players", 0, "cards", 0), {"bonus": "red", "points": 3, "level": 1}),
            pytest.raises(StateError, match=r"^players\[0\]\.cards\[0\]\.points: a level-1 card has 0-1 points, got 3"),
        ),
        (
            mutated(("players", 0, "cards", 0), {"bonus": "red", "points": 0, "level": 4}),
            pytest.raises(StateError, match=r"^players\[0\]\.cards\[0\]\.level: expected an integer 1-3, got 4"),
        ),
        (
            mutated(("players", 0, "cards", 0), {"bonus": "red"}),
            pytest.raises(StateError, match=r"^players\[0\]\.cards\[0\]\.points: missing required key"),
        ),
        (
            mutated(("players", 0, "cards", 1, "points"), 2),
            pytest.raises(StateError, match=r"^players\[0\]\.cards\[1\]\.points: card L3-red-2 has points 4, got 2"),
        ),
        (mutated(("players", 0, "cards", 1, "points"), 4), nullcontext()),
        (
            mutated(("players", 0, "cards", 1), 7),
            pytest.raises(StateError, match=r"^players\[0\]\.cards\[1\]: expected an object, got 7"),
        ),
        (
            mutated(("players", 0, "nobles"), -1),
            pytest.raises(StateError, match=r"^players\[0\]\.nobles: expected a count >= 0 or a list of noble ids, got -1"),
        ),
        (
            mutated(("players", 0, "nobles"), True),
            pytest.raises(StateError, match=r"^players\[0\]\.nobles: expected a count"),
        ),
        (
            mutated(("players", 1, "nobles", 0), 3),
            pytest.raises(StateError, match=r"^players\[1\]\.nobles\[0\]: expected a string, got 3"),
        ),
        (mutated(("players", 0, "nobles"), KeyError), nullcontext()),
        (
            mutated(("players", 0, "reserved"), -2),
            pytest.raises(StateError, match=r"^players\[0\]\.reserved: expected an integer >= 0, got -2"),
        ),
        (
            mutated(("players", 0, "cards"), KeyError),
            pytest.raises(StateError, match=r"^players\[0\]\.cards: missing required key"),
        ),
        (
            mutated(("players", 0, "cards"), {}),
            pytest.raises(StateError, match=r"^players\[0\]\.cards: expected a list, got an object"),
        ),
        (
            mutated(("players", 1, "name"), "Ana"),
            pytest.raises(StateError, match=r"^players\[1\]\.name: duplicate name 'Ana'"),
        ),
        (
            mutated(("players", 1, "name"), None),
            pytest.raises(StateError, match=r"^players\[1\]\.name: missing required key"),
        ),
        (mutated(("players",), []), pytest.raises(StateError, match=r"^players: expected 1-4 players, got 0")),
        (
            mutated(("players",), [{"name": str(i), "cards": []} for i in range(5)]),
            pytest.raises(StateError, match=r"^players: expected 1-4 players, got 5"),
        ),
        (mutated(("game",), "sagrada"), pytest.raises(StateError, match=r"^game: expected 'splendor', got 'sagrada'")),
        ([], pytest.raises(StateError, match=r"^\(document\): expected an object, got a list of 0")),
        (mutated(("players", 0, "scan"), {"photo": "x.jpg"}), nullcontext()),
    ],
)
def test_from_json_accepts_or_names_the_json_path(doc, outcome) -> None:
    with outcome:
        state = SplendorState.from_json(doc)
        assert SplendorState.from_json(state.to_json()) == state


def test_from_json_reads_ids_kinds_levels_and_both_noble_forms() -> None:
    state = SplendorState.from_json(GOOD)
    ana, bo = state.players
    assert ana.cards == (Card("white", 1), Card("red", 4, level=3, id="L3-red-2"))
    assert (ana.nobles, ana.noble_count, ana.reserved) == (2, 2, 1)
    assert (bo.nobles, bo.noble_count, bo.reserved) == (("N1",), 1, 0)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Card("pink", 1), r"card\.bonus: expected one of"),
        (lambda: Card("red", 1, level=3), r"card\.points: a level-3 card has 3-5 points, got 1"),
        (lambda: Card("red", 1, level=1, id="L1-red-1"), r"card\.id: L1-red-1 is not a level-1 red 1-point card"),
        (lambda: SplendorPlayer("Ana", [Card("red", 0)]), r"player\.cards: expected a tuple of Card"),
        (lambda: SplendorPlayer("Ana", nobles=-1), r"player\.nobles: expected an integer >= 0, got -1"),
        (lambda: SplendorState(()), r"players: expected 1-4 players, got 0"),
    ],
)
def test_dataclasses_check_themselves(make, message) -> None:
    with pytest.raises(StateError, match=message):
        make()


# --------------------------------------------------------------------------- checks


@pytest.mark.parametrize(
    ("players", "expected"),
    [
        pytest.param([{"name": "Ana", "cards": [kind("white", 1, 1)] * 1}], [], id="one-L1-1pt-fits"),
        pytest.param([{"name": "Ana", "cards": [kind("white", 1, 1)] * 2}], [("too-many-cards", 0)], id="two-L1-1pt-white"),
        pytest.param(
            [{"name": "Ana", "cards": [kind("white", 1, 1)]}, {"name": "Bo", "cards": [kind("white", 1, 1)]}],
            [("too-many-cards", 0), ("too-many-cards", 1)],
            id="two-L1-1pt-across-players",
        ),
        pytest.param([{"name": "Ana", "cards": [kind("blue", 1)] * 3}], [], id="three-1pt-without-level-fit-L1+L2"),
        pytest.param([{"name": "Ana", "cards": [kind("blue", 1)] * 4}], [("too-many-cards", 0)], id="four-1pt-without-level"),
        pytest.param(
            [{"name": "Ana", "cards": [kind("blue", 1, 2)] * 2 + [kind("blue", 1)] * 2}],
            [("too-many-cards", 0)],
            id="level-2-full-leaves-one-for-unknown",
        ),
        pytest.param([{"name": "Ana", "cards": [kind("green", 0)] * 7}], [], id="seven-0pt-fit"),
        pytest.param([{"name": "Ana", "cards": [kind("green", 0)] * 8}], [("too-many-cards", 0)], id="eight-0pt"),
        pytest.param([{"name": "Ana", "cards": [kind("red", 5)] * 2}], [("too-many-cards", 0)], id="two-5pt-red"),
        pytest.param(
            [{"name": "Ana", "cards": [{"id": "L3-red-4"}, kind("red", 5)]}],
            [("too-many-cards", 0)],
            id="id-and-kind-of-the-single-5pt",
        ),
        pytest.param(
            [{"name": "Ana", "cards": [{"id": "L1-red-1"}]}, {"name": "Bo", "cards": [{"id": "L1-red-1"}]}],
            [("card-used-twice", 0), ("card-used-twice", 1)],
            id="id-in-two-tableaux",
        ),
        pytest.param(
            [{"name": "Ana", "cards": [{"id": "L1-red-8"}, {"id": "L1-red-8"}]}],
            [("card-used-twice", 0)],
            id="id-twice-one-player-reported-once",
        ),
        pytest.param([{"name": "Ana", "cards": [], "reserved": 3}], [], id="three-reserved"),
        pytest.param([{"name": "Ana", "cards": [], "reserved": 4}], [("too-many-reserved", 0)], id="four-reserved"),
        pytest.param(
            [{"name": "Ana", "cards": [kind("white", 0)] * 4 + [kind("blue", 0)] * 4, "nobles": ["N1"]}],
            [],
            id="noble-met",
        ),
        pytest.param(
            [{"name": "Ana", "cards": [kind("white", 0)] * 4 + [kind("blue", 0)] * 3, "nobles": ["N1"]}],
            [("noble-requirement", 0)],
            id="noble-id-not-met",
        ),
        pytest.param(
            [{"name": "Ana", "cards": [kind("white", 0)] * 4 + [kind("blue", 0)] * 4, "nobles": 1}],
            [],
            id="noble-count-met-by-N1",
        ),
        pytest.param(
            [{"name": "Ana", "cards": [kind("white", 0)] * 4 + [kind("blue", 0)] * 4, "nobles": 2}],
            [("noble-requirement", 0)],
            id="noble-count-above-what-bonuses-meet",
        ),
        pytest.param(
            [
                {"name": "Ana", "cards": [kind("white", 0)] * 4 + [kind("blue", 0)] * 4, "nobles": ["N1"]},
                {
                    "name": "Bo",
                    "cards": [kind("white", 0)] * 3 + [kind("blue", 0)] * 3 + [kind("blue", 1), kind("white", 1)],
                    "nobles": ["N1"],
                },
            ],
            [("noble-twice", 0), ("noble-twice", 1)],
            id="same-noble-id-twice",
        ),
        pytest.param(
            [
                {"name": "Ana", "cards": [kind("white", 0)] * 4 + [kind("blue", 0)] * 4, "nobles": 1},
                {
                    "name": "Bo",
                    "cards": [kind("white", 0)] * 3 + [kind("blue", 0)] * 3 + [kind("white", 2), kind("blue", 2)],
                    "nobles": 1,
                },
            ],
            [("nobles-shared", 0), ("nobles-shared", 1)],
            id="counted-nobles-must-be-distinct",
        ),
        pytest.param(
            [
                {"name": "Ana", "cards": [kind("white", 0)] * 4 + [kind("blue", 0)] * 4, "nobles": ["N1"]},
                {
                    "name": "Bo",
                    "cards": [kind("white", 0)] * 3 + [kind("blue", 0)] * 3 + [kind("white", 2), kind("blue", 2)],
                    "nobles": 1,
                },
            ],
            [("nobles-shared", 1)],
            id="counted-noble-cannot-be-one-listed-by-id",
        ),
        pytest.param(
            [
                {"name": "Ana", "cards": [kind(c, 0) for c in COLORS for _ in range(4)], "nobles": 4},
                {"name": "Bo", "cards": [], "nobles": 0},
            ],
            [("too-many-nobles", 0)],
            id="four-nobles-in-two-player-game",
        ),
        pytest.param(
            [{"name": "Ana", "cards": [kind(c, 0) for c in COLORS for _ in range(4)], "nobles": 5}],
            [],
            id="solo-tableau-allows-five-nobles",
        ),
    ],
)
def test_validate_finds_each_broken_rule(players: list[dict], expected: list[tuple[str, int]]) -> None:
    assert rules_by_player(SplendorState.from_json(doc_of(*players))) == expected


@pytest.mark.parametrize(
    ("players", "fragments"),
    [
        ([{"name": "Ana", "cards": [kind("white", 1, 1)] * 2}], ["2 level-1 white 1-point cards", "deck holds 1"]),
        (
            [{"name": "Ana", "cards": [kind("blue", 1)] * 2}, {"name": "Bo", "cards": [kind("blue", 1, 2)] * 2}],
            [
                "2 blue 1-point cards without a level",
                "deck holds 3 blue 1-point cards (1 at level 1 and 2 at level 2)",
                "2 are already given with a level",
                "at most 1 more",
            ],
        ),
        (
            [{"name": "Ana", "cards": [kind("white", 0)] * 4 + [kind("blue", 0)] * 3, "nobles": ["N1"]}],
            ["noble N1 needs 4 white and 4 blue bonuses; Ana has white 4, blue 3"],
        ),
        ([{"name": "Ana", "cards": [], "reserved": 5}], ["Ana has 5 reserved cards; a player may hold at most 3"]),
        (
            [
                {"name": "Ana", "cards": [], "nobles": 4},
                {"name": "Bo", "cards": []},
                {"name": "Cy", "cards": [], "nobles": 1},
            ],
            ["5 nobles across the game, but a 3-player game puts only 4 in play"],
        ),
    ],
)
def test_issue_details_explain_the_finding(players: list[dict], fragments: list[str]) -> None:
    details = " | ".join(issue.detail for issue in validate(SplendorState.from_json(doc_of(*players))))
    for fragment in fragments:
        assert fragment in details


def test_card_issues_name_the_cards_involved() -> None:
    state = SplendorState.from_json(
        doc_of(
            {"name": "Ana", "cards": [kind("red", 0), {"id": "L2-red-6"}]},
            {"name": "Bo", "cards": [{"id": "L2-red-6"}]},
        )
    )
    issues = validate(state)
    assert {issue.cells for issue in issues} == {((0, 1), (1, 0))}
    assert score(state).to_json()["players"][1]["violations"] == [
        {"rule": "card-used-twice", "detail": issues[0].detail, "cards": [[0, 1], [1, 0]]}
    ]


# --------------------------------------------------------------------------- scoring


def test_prestige_is_card_points_plus_three_per_noble_and_reserved_never_scores() -> None:
    state = SplendorState.from_json(
        doc_of(
            {
                "name": "Ana",
                "cards": [{"id": "L3-white-4"}, kind("blue", 2), kind("green", 0)],
                "nobles": 2,
                "reserved": 3,
            },
            {"name": "Bo", "cards": [], "nobles": 0},
        )
    )
    ana = score(state).players[0]
    assert (ana.card_points, ana.noble_points, ana.prestige, ana.cards, ana.nobles) == (7, 6, 13, 3, 2)
    assert dict(ana.points_by_level) == {"L1": 0, "L2": 2, "L3": 5}
    assert dict(ana.bonuses) == {"white": 1, "blue": 1, "green": 1, "red": 0, "black": 0}


def test_points_with_unsure_level_go_to_an_unknown_bucket() -> None:
    state = SplendorState.from_json(doc_of({"name": "Ana", "cards": [kind("blue", 1), kind("red", 3), kind("red", 3, 3)]}))
    assert dict(score(state).players[0].points_by_level) == {"L1": 0, "L2": 0, "L3": 3, "level ?": 4}


@pytest.mark.parametrize(
    ("ana", "bo", "ranking", "winner"),
    [
        ((15, 10), (14, 3), ["Ana", "Bo"], "Ana"),
        ((15, 10), (15, 9), ["Bo", "Ana"], "Bo"),
        ((15, 9), (15, 10), ["Ana", "Bo"], "Ana"),
        ((16, 9), (16, 9), ["Ana", "Bo"], ["Ana", "Bo"]),
        ((14, 9), (14, 9), ["Ana", "Bo"], None),
    ],
)
def test_ranking_most_prestige_then_fewest_cards_then_shared(ana, bo, ranking, winner) -> None:
    report = score(SplendorState((_with_prestige("Ana", *ana), _with_prestige("Bo", *bo))))
    doc = report.to_json()
    assert doc["ranking"] == ranking
    assert doc["winner"] == winner
    assert doc["game_over"] is (winner is not None)
    assert ("message" in doc) is (winner is None)


def _with_prestige(name: str, prestige: int, cards: int) -> SplendorPlayer:
    """A player with exactly ``cards`` cards and ``prestige`` points (nobles make up the rest)."""
    nobles, rest = divmod(prestige, 3)
    kept = [Card("white", 1)] * rest + [Card("black", 0)] * (cards - rest)
    return SplendorPlayer(name, tuple(kept), nobles=nobles)


def test_not_over_message_names_the_leader() -> None:
    report = score(SplendorState.from_json(doc_of({"name": "Ana", "cards": [kind("red", 5)]}, {"name": "Bo", "cards": []})))
    assert report.winner is None and not report.game_over
    assert report.message is not None
    assert "not over" in report.message and "highest 5, Ana" in report.message


def test_three_way_tie_breaks_to_fewest_cards_then_shares() -> None:
    players = (
        _with_prestige("Ana", 15, 8),
        _with_prestige("Bo", 15, 6),
        _with_prestige("Cy", 15, 6),
        _with_prestige("Dee", 17, 20),
    )
    report = score(SplendorState(players))
    assert report.ranking == ("Dee", "Bo", "Cy", "Ana")
    assert report.winner == "Dee"
    report = score(SplendorState(players[:3]))
    assert report.ranking == ("Bo", "Cy", "Ana") and report.winner == ("Bo", "Cy")


def test_text_report_lists_colours_levels_nobles_and_total() -> None:
    doc = json.loads((ROOT / "sample_images" / "splendor_game.json").read_text(encoding="utf-8"))
    text = score(SplendorState.from_json(doc)).to_text()
    assert "cards    12: white 5, blue 4, green 2, red 1, black 0" in text
    assert "points   13: L1 1, L2 8, L3 4" in text
    assert "nobles    3: 1 x 3" in text
    assert "total    16" in text
    assert "reserved  2 (never score)" in text
    assert text.splitlines()[-1] == "Winner: Bo (tied on 16 prestige; fewest cards wins: 9 against Ana 12)"


def test_text_report_shows_shared_win_and_violations() -> None:
    state = SplendorState((_with_prestige("Ana", 15, 8), replace(_with_prestige("Bo", 15, 8), reserved=4)))
    text = score(state).to_text()
    assert "Shared win: Ana, Bo" in text
    assert "! too-many-reserved: Bo has 4 reserved cards" in text


# --------------------------------------------------------------------------- reference cases


@pytest.mark.parametrize("path", CASES, ids=[path.stem for path in CASES])
def test_reference_case(path: Path) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    assert case["source"].strip()
    expected = case["expected"]
    report = score(SplendorState.from_json(case["game"]))
    got = {
        line.name: {
            "prestige": line.prestige,
            "cards": line.cards,
            "nobles": line.nobles,
            "card_points": line.card_points,
            "noble_points": line.noble_points,
            "rules": sorted(issue.rule for issue in line.violations),
        }
        for line in report.players
    }
    assert got == {name: {**want, "rules": sorted(want["rules"])} for name, want in expected["players"].items()}
    doc = report.to_json()
    assert (doc["ranking"], doc["winner"], doc["game_over"]) == (
        expected["ranking"],
        expected["winner"],
        expected["game_over"],
    )


def test_there_are_reference_cases() -> None:
    assert len(CASES) >= 5


# --------------------------------------------------------------------------- generator


@pytest.mark.parametrize("seed", range(20))
def test_generate_plays_a_legal_game_to_its_end(seed: int) -> None:
    state = generate(random.Random(seed))
    assert 2 <= len(state.players) <= 4
    assert validate(state) == []
    report = score(state)
    assert report.game_over
    assert SplendorState.from_json(json.loads(json.dumps(state.to_json()))) == state


def test_generate_is_reproducible_and_honours_players() -> None:
    assert generate(random.Random(5), players=4) == generate(random.Random(5), players=4)
    assert len(generate(random.Random(5), players=2).players) == 2


@pytest.mark.parametrize("players", [1, 5, "3", True])
def test_generate_rejects_impossible_player_counts(players) -> None:
    with pytest.raises(StateError, match=r"^players: expected 2-4"):
        generate(random.Random(0), players=players)


def test_repr_is_pasteable_and_str_is_one_line_per_player() -> None:
    state = generate(random.Random(3), players=3)
    assert eval(repr(state), vars(splendor)) == state
    lines = str(state).splitlines()
    assert len(lines) == 3 and lines[0].startswith("Ana: white ")


def test_game_record_is_registered() -> None:
    game = GAMES["splendor"]
    assert game is splendor.GAME
    assert game.parse(GOOD) == SplendorState.from_json(GOOD)


# --------------------------------------------------------------------------- properties

card_strategy = st.one_of(
    st.sampled_from(list(CARDS.values())),
    st.sampled_from(sorted(DECK)).map(lambda k: Card(k[1], k[2], k[0])),
    st.sampled_from(sorted(DECK)).map(lambda k: Card(k[1], k[2])),
)
player_strategy = st.builds(
    SplendorPlayer,
    name=st.text(min_size=1, max_size=8),
    cards=st.lists(card_strategy, max_size=20).map(tuple),
    nobles=st.one_of(st.integers(0, 6), st.lists(st.sampled_from(list(NOBLES)), max_size=4).map(tuple)),
    reserved=st.integers(0, 5),
)
state_strategy = st.lists(player_strategy, min_size=1, max_size=4, unique_by=lambda p: p.name).map(
    lambda players: SplendorState(tuple(players))
)
json_strategy = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 20)
    | st.floats(allow_nan=False)
    | st.text(max_size=12)
    | st.sampled_from(["splendor", "white", "L1-red-1", "N1", "name", "cards", "points", "bonus", "id"]),
    lambda children: (
        st.lists(children, max_size=5)
        | st.dictionaries(
            st.sampled_from(["game", "players", "name", "cards", "nobles", "reserved", "id", "bonus", "points", "level"]),
            children,
            max_size=6,
        )
    ),
    max_leaves=40,
)


@settings(max_examples=80, deadline=None)
@given(state_strategy)
def test_to_json_and_from_json_are_exact_inverses(state: SplendorState) -> None:
    doc = state.to_json()
    assert SplendorState.from_json(json.loads(json.dumps(doc))) == state
    assert SplendorState.from_json(doc).to_json() == doc


@settings(max_examples=80, deadline=None)
@given(state_strategy)
def test_score_invariants(state: SplendorState) -> None:
    report = score(state)
    doc = json.loads(json.dumps(report.to_json()))
    assert sorted(doc["ranking"]) == sorted(p.name for p in state.players)
    for player, line in zip(state.players, report.players, strict=True):
        assert line.prestige == sum(c.points for c in player.cards) + 3 * player.noble_count
        assert sum(points for _, points in line.points_by_level) == line.card_points
    keys = [(-line.prestige, line.cards) for line in sorted(report.players, key=lambda line: report.ranking.index(line.name))]
    assert keys == sorted(keys)
    assert report.game_over is (max(line.prestige for line in report.players) >= 15)
    if report.game_over:
        winners = report.winner if isinstance(report.winner, tuple) else (report.winner,)
        assert list(winners) == doc["ranking"][: len(winners)]
    else:
        assert report.winner is None
    assert all(issue.player is not None for issue in validate(state))
    assert report.to_text()


@settings(max_examples=80, deadline=None)
@given(state_strategy, st.data())
def test_adding_a_zero_point_card_keeps_prestige_and_never_gains_a_place(state: SplendorState, data) -> None:
    index = data.draw(st.integers(0, len(state.players) - 1))
    extra = data.draw(st.sampled_from([Card(color, 0) for color in COLORS] + [CARDS["L1-black-1"]]))
    players = list(state.players)
    players[index] = replace(players[index], cards=players[index].cards + (extra,))
    before, after = score(state), score(SplendorState(tuple(players)))
    assert [line.prestige for line in before.players] == [line.prestige for line in after.players]
    name = state.players[index].name
    assert after.ranking.index(name) >= before.ranking.index(name)
    others = [n for n in before.ranking if n != name]
    assert [n for n in after.ranking if n != name] == others


def test_adding_a_zero_point_card_can_lose_a_tie() -> None:
    state = SplendorState((_with_prestige("Ana", 15, 5), _with_prestige("Bo", 15, 5)))
    assert score(state).winner == ("Ana", "Bo")
    ana = state.players[0]
    later = SplendorState((replace(ana, cards=ana.cards + (Card("green", 0),)), state.players[1]))
    assert score(later).winner == "Bo"


@settings(max_examples=80, deadline=None)
@given(json_strategy)
def test_arbitrary_json_gives_a_state_or_state_error(doc) -> None:
    try:
        state = SplendorState.from_json(doc)
    except StateError as error:
        assert str(error) and "\n" not in str(error)
    else:
        validate(state)
        score(state).to_json()


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), json_strategy, st.integers(0, 10**6))
def test_damaged_documents_give_a_state_or_state_error(seed: int, junk, pick: int) -> None:
    doc = generate(random.Random(seed)).to_json()
    spots = list(_containers(doc))
    holder, key = spots[pick % len(spots)]
    holder[key] = junk
    try:
        state = SplendorState.from_json(doc)
    except StateError as error:
        assert str(error) and "\n" not in str(error)
    else:
        validate(state)
        score(state).to_text()


def _containers(node):
    if isinstance(node, dict):
        for key, value in node.items():
            yield node, key
            yield from _containers(value)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield node, index
            yield from _containers(value)


# --------------------------------------------------------------------------- command line


def test_cli_scores_the_sample_game_as_json(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["score", str(ROOT / "sample_images" / "splendor_game.json")])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["game"] == "splendor"
    assert [(p["name"], p["prestige"], p["cards"], p["nobles"]) for p in doc["players"]] == [
        ("Ana", 16, 12, 1),
        ("Bo", 16, 9, 1),
        ("Cy", 5, 6, 0),
    ]
    assert (doc["ranking"], doc["winner"], doc["game_over"]) == (["Bo", "Ana", "Cy"], "Bo", True)
    assert "message" not in doc


def test_cli_text_format_and_stdin() -> None:
    text = (ROOT / "sample_images" / "splendor_game.json").read_text(encoding="utf-8")
    result = CliRunner().invoke(cli, ["score", "-", "--format", "text"], input=text)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Ana  16 prestige\n")
    assert "Winner: Bo" in result.stdout


def test_cli_shared_win_is_a_list(tmp_path: Path) -> None:
    path = tmp_path / "shared.json"
    path.write_text(json.dumps(SplendorState((_with_prestige("Ana", 15, 8), _with_prestige("Bo", 15, 8))).to_json()))
    result = CliRunner().invoke(cli, ["score", str(path)])
    assert result.exit_code == 0
    assert json.loads(result.stdout)["winner"] == ["Ana", "Bo"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            (("players", 0, "cards", 1, "id"), "L1-gold-1"),
            "players[0].cards[1].id: unknown card id 'L1-gold-1'; ids look like 'L1-white-1' (see scoring/splendor/data/cards.json)",
        ),
        (
            (("players", 0, "cards", 0, "bonus"), "purple"),
            "players[0].cards[0].bonus: expected one of white, blue, green, red, black; got 'purple'",
        ),
        ((("players", 0, "reserved"), -1), "players[0].reserved: expected an integer >= 0, got -1"),
        ((("players", 0, "nobles"), -3), "players[0].nobles: expected a count >= 0 or a list of noble ids, got -3"),
    ],
)
def test_cli_bad_input_exits_2_with_the_json_path(tmp_path: Path, change, message: str) -> None:
    path = tmp_path / "game.json"
    path.write_text(json.dumps(mutated(*change)))
    result = CliRunner().invoke(cli, ["score", str(path)])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == f"tablescan: {path}: {message}\n"


def test_cli_reports_not_over_with_a_message(tmp_path: Path) -> None:
    path = tmp_path / "early.json"
    path.write_text(json.dumps(doc_of({"name": "Ana", "cards": [kind("red", 5)]}, {"name": "Bo", "cards": []})))
    result = CliRunner().invoke(cli, ["score", str(path), "--format", "text"])
    assert result.exit_code == 0
    assert "The game is not over" in result.stdout
    doc = json.loads(CliRunner().invoke(cli, ["score", str(path)]).stdout)
    assert doc["winner"] is None and doc["game_over"] is False and "not over" in doc["message"]
