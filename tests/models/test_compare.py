"""Comparing two runs of a transfer benchmark over the same photos: the paired change and its command."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models import compare
from models.metrics import paired_change


def sagrada_set(wrong: list[int], sure: int = 0, first_seed: int = 9100000) -> dict:
    """A Sagrada transfer set's figures as the benchmark writes them (the fields the comparison reads)."""
    return {"set": "composites", "first_seed": first_seed, "photos": len(wrong), "cells_right": 20 * len(wrong) - sum(wrong),
            "wrong_cells_sure": sure, "wrong_per_photo": wrong}  # fmt: skip


def alhambra_set(per_photo: list[list[int]], sure: int = 0) -> dict:
    return {"set": "held_out", "seeds": "6000000..6000003", "photos": len(per_photo), "tiles_right": sum(r for r, _ in per_photo),
            "wrong_confident": sure, "per_photo": per_photo}  # fmt: skip


def test_the_same_readings_change_nothing() -> None:
    counts = (np.array([20, 17, 19]), np.array([20, 20, 20]))
    change = paired_change(counts, counts)
    assert change["items"] == [0.0, 0.0, 0.0] and change["boards"] == [0.0, 0.0, 0.0]
    assert (change["better"], change["worse"], change["photos"]) == (0, 0, 3)


def test_a_change_the_same_photos_show_is_told_apart_where_separate_intervals_overlap() -> None:
    """One cell more on a third of 240 photos: the runs' own intervals overlap, the paired one lies above zero."""
    rng = np.random.default_rng(3)
    before = np.where(rng.random(240) < 0.3, 18, 20)
    after = before + (np.arange(240) % 3 == 0)
    after = np.minimum(after, 20)
    whole = np.full(240, 20)
    change = paired_change((before, whole), (after, whole))
    point, low, high = change["items"]
    assert point == pytest.approx((after.sum() - before.sum()) / whole.sum(), abs=1e-4) and 0 < low <= point <= high
    assert change["worse"] == 0 and change["better"] == int((after > before).sum())
    from models.metrics import photo_intervals

    alone_before, alone_after = photo_intervals(before, whole)["items_right"], photo_intervals(after, whole)["items_right"]
    assert alone_after[0] < alone_before[1]  # the two runs' own intervals overlap


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 20)), min_size=1, max_size=30))
def test_the_change_holds_its_point_and_turns_round_with_the_runs(pairs) -> None:
    before, after = (np.array(side) for side in zip(*pairs, strict=True))
    whole = np.full(len(pairs), 20)
    forward, backward = paired_change((before, whole), (after, whole), draws=300), paired_change((after, whole), (before, whole), draws=300)
    for key in ("items", "boards"):
        point, low, high = forward[key]
        assert low - 1e-9 <= point <= high + 1e-9 and -1 <= low <= high <= 1
        assert backward[key][0] == pytest.approx(-point, abs=1e-4)
    assert (forward["better"], forward["worse"]) == (backward["worse"], backward["better"])


def test_runs_of_other_photos_are_not_paired() -> None:
    with pytest.raises(ValueError, match="2 photos before, 3 after"):
        paired_change((np.array([1, 2]), np.array([2, 2])), (np.array([1, 2, 2]), np.array([2, 2, 2])))


def test_the_table_says_which_way_each_set_moved() -> None:
    before = {"composites": sagrada_set([2] * 120 + [0] * 120, sure=20), "heldout": sagrada_set([0] * 240, first_seed=9000000)}
    after = {"composites": sagrada_set([0] * 240, sure=3), "heldout": sagrada_set([0] * 239 + [20], first_seed=9000000)}
    changes = compare.compare(before, after, draws=500)
    assert list(changes) == ["composites", "heldout"]
    assert changes["composites"]["boards_before"] == 120 and changes["composites"]["boards_after"] == 240
    composites, heldout = (line for line in compare.table(changes) if line.startswith(("| composites", "| heldout")))
    assert "cells: 95.0% -> 100.0%, +5.0 points" in composites and composites.count("better") == 2
    assert "| 120 / 0 | 20 -> 3 |" in composites
    assert "windows: 240 -> 239 of 240" in heldout and "not told apart" in heldout and "| 0 / 1 |" in heldout


def test_alhambra_sets_compare_tiles_and_palaces() -> None:
    before = {"held_out": alhambra_set([[17, 18], [12, 12], [9, 9], [20, 20]], sure=1)}
    after = {"held_out": alhambra_set([[18, 18], [12, 12], [9, 9], [20, 20]])}
    (row,) = [line for line in compare.table(compare.compare(before, after, draws=200)) if line.startswith("| held_out")]
    assert "tiles: 98.3% -> 100.0%" in row and "palaces: 3 -> 4 of 4" in row and "| 1 / 0 | 1 -> 0 |" in row


def _write(path: Path, data) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_the_command_prints_the_table(tmp_path: Path, capsys) -> None:
    before = _write(tmp_path / "before.json", {"count": 3, "composites": sagrada_set([1, 0, 0])})
    after = _write(tmp_path / "after.json", {"count": 3, "composites": sagrada_set([0, 0, 0])})
    assert compare.main([str(before), str(after)]) == 0
    out = capsys.readouterr().out
    first, *rows = out.splitlines()
    assert "2,000 draws" in first and any(row.startswith("| composites | 3 | cells: 98.3% -> 100.0%, +1.7 points") for row in rows)


@pytest.mark.parametrize(
    ("before", "after", "message"),
    [
        (None, {"composites": sagrada_set([0])}, "before.json: cannot be read"),
        ("not json", {"composites": sagrada_set([0])}, "before.json: not a JSON file"),
        ({"count": 1}, {"composites": sagrada_set([0])}, "before.json: no benchmark sets"),
        (
            {"composites": sagrada_set([0, 1])},
            {"composites": sagrada_set([0])},
            "set composites: before read seeds 9100000+, 2 photos, after ",
        ),
        ({"composites": sagrada_set([0], first_seed=1)}, {"composites": sagrada_set([0])}, "expected the same photos"),
        (
            {"heldout": {"photos": 1, "first_seed": 9}},
            {"heldout": {"photos": 1, "first_seed": 9}},
            "no set read by both runs has each photo's",
        ),
        (
            {"composites": {**sagrada_set([0, 0]), "wrong_per_photo": [0]}},
            {"composites": sagrada_set([0, 0])},
            "set composites: each photo's counts",
        ),
        (
            {"composites": {**sagrada_set([0]), "wrong_per_photo": ["x"]}},
            {"composites": sagrada_set([0])},
            "set composites: each photo's counts",
        ),
        (
            {"held_out": {**alhambra_set([[3, 3]]), "missing_faces": ["LiberationSerif-Bold"]}},
            {"held_out": {**alhambra_set([[3, 3]]), "missing_faces": []}},
            "set held_out: before was drawn without the digit faces [LiberationSerif-Bold], after without []",
        ),
    ],
)
def test_results_that_cannot_be_compared_get_one_line_and_status_2(tmp_path: Path, capsys, before, after, message) -> None:
    first = tmp_path / "before.json"
    if isinstance(before, str):
        first.write_text(before, encoding="utf-8")
    elif before is not None:
        _write(first, before)
    second = _write(tmp_path / "after.json", after)
    assert compare.main([str(first), str(second)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_the_alhambra_benchmark_records_each_photos_tiles_for_the_comparison() -> None:
    from models.alhambra import transfer

    figures = transfer.measure_set("held_out", 1)
    (right, compared), *rest = figures["per_photo"]
    assert rest == [] and right == figures["tiles_right"] and compared == figures["tiles_compared"]
    again = compare.compare({"held_out": figures}, {"held_out": figures}, draws=100)["held_out"]
    assert again["items"] == [0.0, 0.0, 0.0] and again["photos"] == 1


def test_an_alhambra_run_from_a_later_first_photo_names_its_seeds_and_is_not_compared_with_the_first() -> None:
    from collections import Counter

    from models.alhambra import transfer

    def figures(first: int) -> dict:
        counts = Counter(tiles=10, right=10, compared=10, palace_right=2)
        summary = transfer.summarise("held_out", 2, counts, Counter(), Counter(), [], {"render": 0.0, "scan": 0.0}, None, first=first)
        return {**summary, "per_photo": [[5, 5], [5, 5]]}

    later = figures(400)
    assert later["seeds"] == "6000400..6000401" and figures(0)["seeds"] == "6000000..6000001"
    with pytest.raises(compare.CompareError, match="expected the same photos"):
        compare.compare({"held_out": figures(0)}, {"held_out": later}, draws=10)


def test_runs_drawn_in_the_same_faces_compare_and_a_run_from_before_faces_were_recorded_does_too() -> None:
    recorded = {"held_out": {**alhambra_set([[3, 3], [2, 4]]), "missing_faces": []}}
    older = {"held_out": alhambra_set([[3, 3], [4, 4]])}  # no "missing_faces": written before 2026-12-05
    assert compare.compare(recorded, recorded, draws=50)["held_out"]["photos"] == 2
    assert compare.compare(older, recorded, draws=50)["held_out"]["worse"] == 1


def test_the_real_dice_read_differently_are_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before, after = sagrada_set([2, 0, 1]), sagrada_set([1, 0, 1])
    before["by_die"] = {"board1/r2c4": {"die": "Y2", "shown": 3, "wrong": 2}, "tray/8": {"die": "B6", "shown": 2, "wrong": 1}}
    after["by_die"] = {"board1/r2c4": {"die": "Y2", "shown": 3, "wrong": 1}, "tray/8": {"die": "B6", "shown": 2, "wrong": 1}}
    changes = compare.compare({"composites": before}, {"composites": after}, draws=200)
    assert changes["composites"]["dice"] == [("board1/r2c4", "Y2", 2, 1, 3)]
    paths = [tmp_path / "before.json", tmp_path / "after.json"]
    for path, figures in zip(paths, (before, after)):
        path.write_text(json.dumps({"composites": figures}))
    assert compare.main([str(path) for path in paths]) == 0
    out = capsys.readouterr().out
    assert "composites: 1 real die read differently (wrong before -> after, of shown): Y2 board1/r2c4 2 -> 1 of 3." in out
    del before["by_die"]  # a run from before the dice were recorded: nothing said of them
    assert compare.compare({"composites": before}, {"composites": after}, draws=200)["composites"]["dice"] is None
    assert compare.dice_text("composites", []) == "composites: every real die read as often wrong as before."
