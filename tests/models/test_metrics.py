"""The benchmarks' shared measures: intervals over the photos."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from models.metrics import photo_intervals, share_text


def test_intervals_hold_the_figure_and_narrow_with_more_photos() -> None:
    rng = np.random.default_rng(5)
    widths = []
    for photos in (60, 600):
        compared = rng.integers(4, 26, photos)  # palaces of 4-25 tiles
        right = compared - rng.choice([0, 0, 0, 1, 2, 12], photos).clip(max=compared)
        got = photo_intervals(right, compared)
        items, boards = right.sum() / compared.sum(), (right == compared).mean()
        assert got["items_right"][0] < items < got["items_right"][1]
        assert got["boards_right"][0] < boards < got["boards_right"][1]
        widths.append([hi - lo for lo, hi in got.values()])
    assert all(wide > 2 * narrow for wide, narrow in zip(*widths))  # ten times the photos: about a third as wide


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 25), st.integers(0, 25)), min_size=1, max_size=40))
def test_intervals_are_shares_in_order(pairs) -> None:
    compared = np.array([max(a, b) for a, b in pairs])
    right = np.array([min(a, b) for a, b in pairs])
    got = photo_intervals(right, compared, draws=200)
    for low, high in got.values():
        assert 0.0 <= low <= high <= 1.0


def test_no_photos_give_no_interval() -> None:
    assert photo_intervals(np.zeros(0), np.zeros(0)) == {}


@settings(max_examples=200, deadline=None)
@given(whole=st.integers(1, 10**7), data=st.data())
def test_a_share_reads_100_percent_only_when_all_are_right(whole, data) -> None:
    part = data.draw(st.one_of(st.integers(0, whole), st.just(whole - 1), st.just(max(0, whole - 2))))
    text = share_text(part, whole)
    assert text.endswith("%")
    assert (text == "100.0%") == (part == whole)
    assert part == whole or not text.startswith("100")
    assert abs(float(text[:-1]) - 100 * part / whole) <= 0.05 + 1e-9


def test_the_machine_is_named_by_its_cpu_and_cores(tmp_path) -> None:
    from models.metrics import machine

    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: Test CPU 9000 @ 3.0GHz\nflags\t\t: avx2\n", encoding="utf-8")
    assert machine(info).startswith("Test CPU 9000 @ 3.0GHz, ") and machine(info).endswith(" cores")
    assert machine(tmp_path / "missing").endswith(" cores")  # no cpuinfo: the platform's name stands in
