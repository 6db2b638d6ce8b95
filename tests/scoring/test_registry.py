"""The GAMES registry: every game's generator, JSON round trip, scoring and bad-input behaviour."""

from __future__ import annotations

import json
import os
import random
from contextlib import nullcontext, suppress

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scoring.errors import StateError
from scoring.registry import GAMES, game_of

IDS = sorted(GAMES)
SEEDS = range(6)


def test_games_has_the_three_games_keyed_by_their_ids() -> None:
    assert IDS == ["alhambra", "sagrada", "splendor"]
    for game_id, game in GAMES.items():
        assert game.id == game_id
        assert game.title and game.title[0].isupper()
        assert all(callable(f) for f in (game.parse, game.validate, game.score, game.generate))


@pytest.mark.parametrize(
    ("doc", "outcome"),
    [
        ({"game": "alhambra"}, nullcontext("alhambra")),
        ({"game": "sagrada", "players": []}, nullcontext("sagrada")),
        ({"game": "splendor"}, nullcontext("splendor")),
        (
            {"game": "Splendor"},
            pytest.raises(StateError, match=r"^game: expected one of alhambra, sagrada, splendor; got 'Splendor'"),
        ),
        ({"players": []}, pytest.raises(StateError, match=r"^game: expected one of .*; got null")),
        ({"game": 3}, pytest.raises(StateError, match=r"^game: expected one of .*; got 3")),
        ([{"game": "sagrada"}], pytest.raises(StateError, match=r"^\(document\): expected an object, got a list of 1")),
        ("sagrada", pytest.raises(StateError, match=r"^\(document\): expected an object")),
        ({"game": ["sagrada"]}, pytest.raises(StateError, match=r"^game: expected one of .*; got a list of 1")),
    ],
)
def test_game_of_picks_the_game_or_names_the_game_key(doc, outcome) -> None:
    with outcome as expected:
        assert game_of(doc).id == expected


def _generated(game_id: str, seed: int, players: int | None):
    game = GAMES[game_id]
    rng = random.Random(seed)
    return game.generate(rng) if players is None else game.generate(rng, players=players)


@pytest.mark.parametrize("players", [None, 2, 4])
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("game_id", IDS)
def test_generated_games_round_trip_validate_clean_and_score(game_id: str, seed: int, players: int | None) -> None:
    game = GAMES[game_id]
    state = _generated(game_id, seed, players)
    doc = json.loads(json.dumps(state.to_json()))
    assert doc["game"] == game_id
    assert game_of(doc) is game
    assert game.parse(doc) == state
    assert game.parse(doc).to_json() == doc
    assert game.validate(state) == []
    report = game.score(state)
    out = json.loads(json.dumps(report.to_json()))
    assert out["game"] == game_id
    names = [player["name"] for player in doc["players"]]
    if players is not None:
        assert len(names) == players
    assert [player["name"] for player in out["players"]] == names
    assert sorted(out["ranking"]) == sorted(names)
    text = report.to_text()
    assert isinstance(text, str) and text.strip()
    assert all(name in text for name in names)


@pytest.mark.parametrize("game_id", IDS)
def test_generators_are_reproducible_from_the_seed(game_id: str) -> None:
    first = [_generated(game_id, seed, None).to_json() for seed in (11, 12)]
    assert first == [_generated(game_id, seed, None).to_json() for seed in (11, 12)]
    assert first[0] != first[1]


# --------------------------------------------------------------------------- fuzzing

KEYS = [
    "game",
    "players",
    "name",
    "window",
    "pattern",
    "private_objective",
    "favor_tokens",
    "public_objectives",
    "solo",
    "palace",
    "at",
    "tile",
    "type",
    "walls",
    "tile_id",
    "reserve",
    "score_before",
    "money",
    "dirk",
    "market",
    "scoring_round",
    "cards",
    "nobles",
    "reserved",
    "id",
    "bonus",
    "points",
    "level",
]
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 60)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=16)
    | st.sampled_from(["R3", ".", "B4 Y3 G6 R3 B6", "fountain", "tower", "NE", "white", "N1", "L1-red-1", "Virtus"]),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.sampled_from(KEYS), children, max_size=6),
    max_leaves=40,
)
# TABLESCAN_FUZZ_EXAMPLES=2000 fuzzes deeper on demand; the default keeps the suite fast.
FUZZ = settings(
    max_examples=int(os.environ.get("TABLESCAN_FUZZ_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def _check_parse(game_id: str, doc) -> None:
    """Parse ``doc``: a StateError with a one-line message, or a state that validates and scores."""
    game = GAMES[game_id]
    try:
        state = game.parse(doc)
    except StateError as error:
        message = str(error)
        assert message and "\n" not in message
        return
    game.validate(state)
    report = game.score(state)
    json.dumps(report.to_json())
    report.to_text()


@FUZZ
@given(game_id=st.sampled_from(IDS), body=st.dictionaries(st.sampled_from(KEYS), json_values, max_size=6))
def test_arbitrary_documents_only_ever_raise_state_error(game_id: str, body: dict) -> None:
    _check_parse(game_id, {**body, "game": game_id})


@FUZZ
@given(game_id=st.sampled_from(IDS), doc=json_values)
def test_any_json_value_only_ever_raises_state_error(game_id: str, doc) -> None:
    _check_parse(game_id, doc)
    with suppress(StateError):
        game_of(doc)


def _slots(node):
    """Every (container, key) pair of a JSON document, depth first."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield node, key
            yield from _slots(value)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield node, index
            yield from _slots(value)


@FUZZ
@given(
    game_id=st.sampled_from(IDS),
    seed=st.integers(0, 10**6),
    pick=st.integers(0, 10**6),
    junk=json_values,
    delete=st.booleans(),
)
def test_damaged_generated_documents_only_ever_raise_state_error(game_id: str, seed: int, pick: int, junk, delete: bool) -> None:
    doc = GAMES[game_id].generate(random.Random(seed)).to_json()
    slots = [slot for slot in _slots(doc) if not (slot[0] is doc and slot[1] == "game")]
    holder, key = slots[pick % len(slots)]
    if delete:
        del holder[key]
    else:
        holder[key] = junk
    _check_parse(game_id, doc)
