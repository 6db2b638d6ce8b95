"""Alhambra invariants, checked with hypothesis over generated palaces and arbitrary JSON."""

from __future__ import annotations

import copy
import json
import random
from itertools import combinations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from scoring.alhambra import (
    BUILDING_TYPES,
    AlhambraState,
    generate,
    generate_palace,
    longest_wall,
    place_points,
    rank_majorities,
    score,
    validate,
    validate_palace,
)
from scoring.alhambra.palace import SIDES, neighbour, outer_segments, segment_ends
from scoring.errors import StateError

FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

seeds = st.integers(min_value=0, max_value=2**32 - 1)


def _palace(seed: int, size: int) -> dict:
    return generate_palace(random.Random(seed), size)


@FAST
@given(seeds, st.integers(min_value=0, max_value=30))
def test_every_generated_palace_is_legal(seed: int, size: int) -> None:
    palace = _palace(seed, size)
    assert len(palace) == size + 1
    assert validate_palace(palace) == []
    ids = [tile.tile_id for tile in palace.values() if tile.type != "fountain"]
    assert len(set(ids)) == len(ids)


@FAST
@given(seeds, st.integers(min_value=0, max_value=20), st.integers(-50, 50), st.integers(-50, 50))
def test_translating_a_palace_changes_nothing(seed: int, size: int, dx: int, dy: int) -> None:
    palace = _palace(seed, size)
    if size:  # detach the last tile so that the issues carry cells too
        palace[(99, 99)] = palace.pop(max(palace, key=lambda c: (c[1], c[0])))
    moved = {(x + dx, y + dy): tile for (x, y), tile in palace.items()}
    length, wall = longest_wall(palace)
    assert longest_wall(moved) == (length, [((x + dx, y + dy), side) for (x, y), side in wall])
    issues = [(i.rule, sorted(i.cells)) for i in validate_palace(palace)]
    moved_issues = [(i.rule, sorted((x - dx, y - dy) for x, y in i.cells)) for i in validate_palace(moved)]
    assert sorted(moved_issues) == sorted(issues)


@FAST
@given(seeds, st.integers(min_value=0, max_value=30))
def test_longest_wall_is_a_trail_within_the_outer_segments(seed: int, size: int) -> None:
    palace = _palace(seed, size)
    length, wall = longest_wall(palace)
    outer = outer_segments(palace)
    assert length == len(wall) <= len(outer)
    assert set(wall) <= set(outer)
    assert len(set(wall)) == len(wall)
    if len(wall) >= 2:
        a, b = segment_ends(wall[0])
        at = a if a not in segment_ends(wall[1]) else b
        for segment in wall:
            a, b = segment_ends(segment)
            assert at in (a, b)
            at = b if at == a else a


def _brute_force_longest(segments: list) -> int:
    """Largest edge subset that is connected with at most two odd corners (an Euler trail)."""
    best = 0
    for k in range(len(segments), 0, -1):
        for subset in combinations(segments, k):
            degree: dict = {}
            links: dict = {}
            for segment in subset:
                a, b = segment_ends(segment)
                degree[a] = degree.get(a, 0) + 1
                degree[b] = degree.get(b, 0) + 1
                links.setdefault(a, set()).add(b)
                links.setdefault(b, set()).add(a)
            if sum(d % 2 for d in degree.values()) > 2:
                continue
            first = next(iter(links))
            seen, todo = {first}, [first]
            while todo:
                for other in links[todo.pop()]:
                    if other not in seen:
                        seen.add(other)
                        todo.append(other)
            if len(seen) == len(links):
                return k
    return best


@settings(max_examples=25, deadline=None)
@given(
    st.dictionaries(
        st.tuples(st.integers(0, 3), st.integers(0, 3)),
        st.sampled_from(["", "N", "E", "S", "W", "NE", "ES", "SW", "NW", "NES", "NEW", "NSW", "ESW"]),
        min_size=1,
        max_size=7,
    )
)
def test_longest_wall_matches_brute_force(walls_at: dict) -> None:
    from scoring.alhambra.palace import Tile

    # any shape at all, pinches included; keep small enough for the brute force
    palace = {cell: Tile("garden", walls) for cell, walls in walls_at.items()}
    segments = outer_segments(palace)
    if len(segments) > 13:
        segments_kept = set(segments[:13])
        palace = {
            cell: Tile("garden", "".join(s for s in tile.walls if (cell, s) in segments_kept or neighbour(cell, s) in palace))
            for cell, tile in palace.items()
        }
        segments = outer_segments(palace)
    assert longest_wall(palace)[0] == _brute_force_longest(segments)


@FAST
@given(seeds, st.integers(min_value=1, max_value=25), st.data())
def test_removing_a_leaf_keeps_the_palace_legal(seed: int, size: int, data: st.DataObject) -> None:
    palace = _palace(seed, size)
    leaves = [
        cell for cell, tile in palace.items() if tile.type != "fountain" and sum(neighbour(cell, side) in palace for side in SIDES) == 1
    ]
    if not leaves:
        return
    leaf = data.draw(st.sampled_from(sorted(leaves)))
    del palace[leaf]
    assert validate_palace(palace) == []


@FAST
@given(seeds, st.integers(min_value=1, max_value=6), st.integers(min_value=1, max_value=3))
@example(seed=975393758, players=5, scoring_round=2)  # the fifth palace could not grow from the 14 tiles left
def test_generated_states_round_trip_and_validate(seed: int, players: int, scoring_round: int) -> None:
    state = generate(random.Random(seed), players=players, scoring_round=scoring_round)
    assert validate(state) == []
    doc = json.loads(json.dumps(state.to_json()))
    assert AlhambraState.from_json(doc) == state
    assert AlhambraState.from_json(doc).to_json() == doc


@FAST
@given(seeds, st.permutations(range(4)))
def test_player_order_does_not_change_points(seed: int, order: list[int]) -> None:
    state = generate(random.Random(seed), players=4, scoring_round=3)
    shuffled = AlhambraState(state.scoring_round, tuple(state.players[i] for i in order), state.dirk, state.market)
    before = {p["name"]: p for p in score(state).to_json()["players"]}
    after = {p["name"]: p for p in score(shuffled).to_json()["players"]}
    assert before == after


@FAST
@given(st.integers(1, 3), st.lists(st.integers(0, 8), min_size=1, max_size=7))
def test_majority_shares_never_exceed_the_table(scoring_round: int, counts: list[int]) -> None:
    standings = rank_majorities([{"garden": n} for n in counts], scoring_round)
    points = [s["garden"].points if "garden" in s else 0 for s in standings]
    assert sum(points) <= sum(place_points(scoring_round, "garden"))
    for (n, p), (m, q) in combinations(zip(counts, points), 2):
        if n > m:
            assert p >= q
        if n == m:
            assert p == q
    assert all(p == 0 for n, p in zip(counts, points) if n == 0)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 60) | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@FAST
@given(JSON)
def test_arbitrary_json_gives_a_state_or_a_state_error(doc) -> None:
    try:
        AlhambraState.from_json(doc)
    except StateError as error:
        assert "\n" not in str(error)


def _paths(doc, prefix=()):
    yield prefix
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield from _paths(value, prefix + (key,))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            yield from _paths(value, prefix + (index,))


@settings(max_examples=80, deadline=None)
@given(seeds, st.data())
def test_mutated_documents_give_a_report_or_a_state_error(seed: int, data: st.DataObject) -> None:
    doc = generate(random.Random(seed), players=2, scoring_round=3, size=4).to_json()
    paths = [path for path in _paths(doc) if path]
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(paths))
        target = doc
        for key in path[:-1]:
            if not isinstance(target, (dict, list)):
                break
            try:
                target = target[key]
            except (KeyError, IndexError, TypeError):
                break
        else:
            if isinstance(target, dict) or (isinstance(target, list) and isinstance(path[-1], int) and path[-1] < len(target)):
                target[path[-1]] = data.draw(JSON)
    original = copy.deepcopy(doc)
    try:
        state = AlhambraState.from_json(doc)
    except StateError as error:
        assert "\n" not in str(error)
        return
    assert doc == original  # parsing never mutates its input
    report = score(state)
    assert set(report.to_json()["players"][0]["counts"]) == set(BUILDING_TYPES)
    assert report.to_text()
