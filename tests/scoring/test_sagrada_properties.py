"""Hypothesis properties of the Sagrada core: round trips, legal generation, score invariants."""

from __future__ import annotations

import copy
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.errors import StateError
from scoring.sagrada import (
    COLORS,
    OBJECTIVES,
    PATTERNS,
    Die,
    SagradaState,
    cell_name,
    generate,
    generate_window,
    parse_cell,
    parse_window,
    private_points,
    score,
    validate,
    window_rows,
    window_violations,
)

FAST = settings(max_examples=40, deadline=None)

dice = st.builds(Die, st.sampled_from(COLORS), st.integers(1, 6))
cells = st.one_of(st.none(), dice)
windows = st.lists(st.lists(cells, min_size=5, max_size=5), min_size=4, max_size=4).map(lambda rows: tuple(tuple(row) for row in rows))
seeds = st.integers(0, 2**32 - 1)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 300) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def _mirror_lr(window):
    return tuple(tuple(reversed(row)) for row in window)


def _mirror_tb(window):
    return tuple(reversed(window))


@FAST
@given(st.text(max_size=4))
def test_parse_cell_is_exact_or_a_state_error(text):
    try:
        die = parse_cell(text)
    except StateError as error:
        assert str(error).startswith("cell ")
    else:
        assert cell_name(die) == text


@FAST
@given(windows)
def test_window_rows_round_trip(window):
    assert parse_window(window_rows(window)) == window


@FAST
@given(seeds, st.integers(1, 4))
def test_state_json_round_trip(seed, players):
    state = generate(random.Random(seed), players=players)
    doc = state.to_json()
    assert SagradaState.from_json(doc) == state
    assert SagradaState.from_json(doc).to_json() == doc


@FAST
@given(seeds, st.sampled_from([None, *sorted(PATTERNS)]), st.integers(0, 20))
def test_generated_windows_break_no_rule(seed, name, empty):
    pattern = PATTERNS[name] if name else None
    window = generate_window(random.Random(seed), pattern, empty)
    assert window_violations(window, pattern) == []
    assert sum(die is None for row in window for die in row) == empty


@FAST
@given(seeds, st.integers(1, 4))
def test_generated_games_are_legal_and_use_the_bag(seed, players):
    state = generate(random.Random(seed), players=players)
    assert validate(state) == []
    assert state.warnings() == []
    for color in COLORS:
        used = sum(1 for p in state.players for row in p.window for die in row if die and die.color == color)
        assert used <= 18


@FAST
@given(seeds, st.integers(1, 4))
def test_totals_equal_the_sum_of_the_breakdown(seed, players):
    doc = score(generate(random.Random(seed), players=players)).to_json()
    for player in doc["players"]:
        b = player["breakdown"]
        assert player["total"] == sum(b["public"].values()) + b["private"] + b["favor_tokens"] + b["empty_cells"]
    assert sorted(doc["ranking"]) == sorted(p["name"] for p in doc["players"])
    if "solo" in doc:
        assert doc["solo"]["won"] == (doc["players"][0]["total"] > doc["solo"]["target"])
        assert doc["winner"] == (doc["ranking"][0] if doc["solo"]["won"] else None)
    else:
        assert doc["winner"] == doc["ranking"][0]


@FAST
@given(windows)
def test_mirroring_leaves_every_objective_unchanged(window):
    for mirrored in (_mirror_lr(window), _mirror_tb(window), _mirror_lr(_mirror_tb(window))):
        for objective in OBJECTIVES.values():
            assert objective.score(mirrored).points == objective.score(window).points, objective.id
        assert private_points(mirrored, "red").points == private_points(window, "red").points


@FAST
@given(windows)
def test_mirroring_maps_violations_onto_mirrored_cells(window):
    def rules(w, flip):
        return sorted((i.rule, tuple(sorted(flip(c) for c in i.cells))) for i in window_violations(w))

    def flip_lr(cell):
        return (cell[0], 4 - cell[1])

    assert rules(_mirror_lr(window), lambda c: c) == rules(window, flip_lr)


@FAST
@given(windows)
def test_objective_points_are_bounded(window):
    upper = {
        "row-color-variety": 24,
        "column-color-variety": 25,
        "row-shade-variety": 20,
        "column-shade-variety": 20,
        "light-shades": 20,
        "medium-shades": 20,
        "deep-shades": 20,
        "shade-variety": 15,
        "color-variety": 16,
        "color-diagonals": 20,
    }
    for objective in OBJECTIVES.values():
        assert 0 <= objective.score(window).points <= upper[objective.id]


@FAST
@given(json_values)
def test_arbitrary_json_gives_a_state_or_a_state_error(doc):
    try:
        SagradaState.from_json(doc)
    except StateError:
        pass


GOOD = generate(random.Random(5), players=3).to_json()


def _leaves(value, path=()):
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(item, path + (index,))
    yield path


LEAVES = list(_leaves(GOOD))


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(LEAVES), json_values)
def test_corrupting_any_part_gives_a_state_or_a_state_error(path, value):
    doc = copy.deepcopy(GOOD)
    if not path:
        doc = value
    else:
        target = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    try:
        state = SagradaState.from_json(doc)
    except StateError as error:
        assert "\n" not in str(error)
    else:
        score(state).to_json()
