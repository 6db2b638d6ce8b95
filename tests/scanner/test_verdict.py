"""The scan's verdict on itself: which boards need a look, and the reasons in a player's words."""

from __future__ import annotations

import json
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from scanner.alhambra.verdict import THRESHOLDS as ALHAMBRA_THRESHOLDS
from scanner.alhambra.verdict import WORDING as ALHAMBRA_WORDING
from scanner.alhambra.verdict import alhambra_tile_name, alhambra_value_name
from scanner.errors import BoardNotFoundError
from scanner.reading import CellReading, Override
from scanner.sagrada.verdict import THRESHOLDS as SAGRADA_THRESHOLDS
from scanner.sagrada.verdict import WORDING as SAGRADA_WORDING
from scanner.sagrada.verdict import sagrada_value_name
from scanner.verdict import GridCertainty, ScanReview, Thresholds, judge, percent
from scoring.issue import Issue

SAMPLES = Path(__file__).resolve().parents[2] / "sample_images"
SQUARE = ((0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0))
SURE_GRID = GridCertainty((0.9, 0.9, 0.9, 0.9), orientation_confidence=0.999, flipped_probability=0.0)
BAR = SAGRADA_THRESHOLDS.cell


def reading(cell: tuple[int, int], value: str = "B4", confidence: float = 0.999, alternatives: tuple = ()) -> CellReading:
    return CellReading(cell, value, confidence, SQUARE, alternatives)


def window(**doubtful: CellReading) -> list[CellReading]:
    """Twenty sure Sagrada cells, with the ones named ``r<row>c<col>`` (zero-based) replaced."""
    cells = []
    for r in range(4):
        for c in range(5):
            cells.append(doubtful.get(f"r{r}c{c}", reading((r, c))))
    return cells


def sagrada(cells: list[CellReading], **kwargs: Any) -> ScanReview:
    return judge(cells, SAGRADA_WORDING, SAGRADA_THRESHOLDS, **kwargs)


OVERRIDE = Override((2, 0), "G3", 0.81, "Y3", 0.17, "two orthogonal neighbours never share a colour or a value")
ISSUE = Issue(
    "orthogonal-same-value", "R3 at row 1 col 1 and B3 at row 1 col 2 are orthogonally adjacent and both show 3", ((0, 0), (0, 1)), 0
)


@pytest.mark.parametrize(
    ("cells", "kwargs", "expected"),
    [
        pytest.param(window(), {"grid": SURE_GRID}, (), id="sure board"),
        pytest.param(window(r0c0=reading((0, 0), confidence=BAR)), {}, (), id="a cell at the bar is sure"),
        pytest.param(
            window(r1c3=reading((1, 3), "P1", 0.414, (("G1", 0.3), ("Y1", 0.2), ("B1", 0.01)))),
            {"grid": SURE_GRID},
            ("cell r2c4 read P1 (purple 1) at 41% (G1 and Y1 close behind)",),
            id="one cell under the bar",
        ),
        pytest.param(
            window(r3c4=reading((3, 4), ".", BAR - 0.01, (("R6", 0.02),))),
            {},
            (f"cell r4c5 read empty at {percent(BAR - 0.01)}",),
            id="nothing close behind",
        ),
        pytest.param(
            window(r0c1=reading((0, 1), "R2", 0.7), r2c2=reading((2, 2), "G5", 0.3), r3c0=reading((3, 0), "Y6", 0.5)),
            {},
            ("cell r3c3 read G5 (green 5) at 30%", "cell r4c1 read Y6 (yellow 6) at 50%", "cell r1c2 read R2 (red 2) at 70%"),
            id="least certain first",
        ),
        pytest.param(
            window(r1c1=reading((1, 1), "B2", 0.45)),
            {"grid": GridCertainty((0.9, 0.95, 0.2, 0.8))},
            ("the grid's lower-right corner is uncertain", "cell r2c2 read B2 (blue 2) at 45%"),
            id="weak corner",
        ),
        pytest.param(
            window(),
            {"grid": GridCertainty((0.9, 0.9, 0.9, 0.9), orientation_confidence=0.6, flipped_probability=0.4)},
            ("the board's orientation is uncertain (it may be upside down)",),
            id="maybe upside down",
        ),
        pytest.param(
            window(),
            {"grid": GridCertainty((0.9, 0.9, 0.9, 0.9), orientation_confidence=0.7, flipped_probability=0.01)},
            ("the board's orientation is uncertain (which side is the top)",),
            id="top side uncertain",
        ),
        pytest.param(
            window(),
            {"grid": GridCertainty((1.0, 1.0, 1.0, 1.0), orientation_confidence=0.99, flipped_probability=0.01, width_confidence=0.8)},
            ("the grid may be turned a quarter (which way its rows run is uncertain): check its corners",),
            id="width uncertain",
        ),
        pytest.param(
            window(),
            {"grid": GridCertainty((1.0, 1.0, 1.0, 1.0), width_confidence=0.95)},
            (),
            id="width sure enough",
        ),
        pytest.param(
            window(r2c0=reading((2, 0), "Y3", 0.17)),
            {"overrides": [OVERRIDE]},
            (
                "cell r3c1 read Y3 (yellow 3) by the rules, where the model saw G3 at 81% "
                "(two orthogonal neighbours never share a colour or a value)",
            ),
            id="override",
        ),
        pytest.param(
            window(r2c0=reading((2, 0), "Y3", BAR)),
            {"overrides": [OVERRIDE]},
            (),
            id="an override the whole board makes sure",
        ),
        pytest.param(window(), {"issues": [ISSUE]}, (f"the reading breaks a rule: {ISSUE.detail}",), id="placement issue"),
    ],
)
def test_sagrada_verdicts(cells: list[CellReading], kwargs: dict[str, Any], expected: tuple[str, ...]) -> None:
    review = sagrada(cells, **kwargs)
    assert review.reasons == expected
    assert review.needed == bool(expected)


@pytest.mark.parametrize(
    ("doubtful", "expected_tail"),
    [
        (5, None),
        (6, "and 1 more"),
        (20, "and 15 more"),
    ],
)
def test_at_most_five_cell_reasons_then_and_n_more(doubtful: int, expected_tail: str | None) -> None:
    cells = [reading((i // 5, i % 5), "R1", 0.2 + 0.01 * i if i < doubtful else 0.999) for i in range(20)]
    review = sagrada(cells, grid=GridCertainty((0.1, 0.9, 0.9, 0.9)))
    cell_reasons = [reason for reason in review.reasons if reason.startswith("cell ")]
    assert review.reasons[0] == "the grid's upper-left corner is uncertain"  # the grid is never cut
    assert cell_reasons[0] == "cell r1c1 read R1 (red 1) at 20%"
    assert len(cell_reasons) == min(doubtful, 5)
    assert (review.reasons[-1] if expected_tail else None) == expected_tail


def test_reasons_mix_grid_and_cells_least_certain_first() -> None:
    cells = window(r0c0=reading((0, 0), "B1", 0.1), r0c1=reading((0, 1), "G2", 0.6), r2c0=reading((2, 0), "Y3", 0.17))
    review = sagrada(cells, grid=GridCertainty((0.9, 0.2, 0.9, 0.9)), overrides=[OVERRIDE])
    assert review.reasons[0] == "cell r1c1 read B1 (blue 1) at 10%"
    assert review.reasons[1].startswith("cell r3c1 read Y3 (yellow 3) by the rules")  # the overridden cell, at 17%
    assert review.reasons[2:] == ("the grid's upper-right corner is uncertain", "cell r1c2 read G2 (green 2) at 60%")


def test_a_cell_the_reader_doubts_is_named_with_its_reason_once_however_sure_the_model() -> None:
    edge = replace(reading((3, 0), "B1", 0.5), doubt="runs off the photo's edge")
    review = sagrada(window(r3c0=edge), grid=SURE_GRID)
    assert review.reasons == ("cell r4c1 runs off the photo's edge: read B1 (blue 1) at 50%",)
    overridden = Override((3, 0), "B6", 0.9, "B1", 0.5, "two orthogonal neighbours never share a colour or a value")
    assert sagrada(window(r3c0=edge), grid=SURE_GRID, overrides=[overridden]).reasons == review.reasons  # not named twice
    sure_but_doubted = replace(reading((3, 0), "B1", 0.99), doubt="runs off the photo's edge")
    assert sagrada(window(r3c0=sure_but_doubted)).needed


@pytest.mark.parametrize(
    ("needed", "reasons", "raises"),
    [
        (False, (), nullcontext()),
        (True, ("the grid's lower-right corner is uncertain",), nullcontext()),
        (False, ("cell r2c4 read P1 at 41%",), pytest.raises(ValueError, match="needed is false with 1 reason")),
        (True, (), pytest.raises(ValueError, match="needed is true with no reasons")),
        (True, ("",), pytest.raises(ValueError, match="non-empty texts")),
        (1, ("a reason",), pytest.raises(ValueError, match="expected true or false")),
    ],
)
def test_scan_review_holds_needed_exactly_when_there_are_reasons(
    needed: Any, reasons: tuple[str, ...], raises: AbstractContextManager[Any]
) -> None:
    with raises:
        review = ScanReview(needed, reasons)
        assert review.to_json() == {"needed": needed, "reasons": list(reasons)}
        assert ScanReview.from_json(json.loads(json.dumps(review.to_json()))) == review


@pytest.mark.parametrize(
    ("values", "raises"),
    [
        ({"cell": 0.9}, nullcontext()),
        ({"cell": 1.2}, pytest.raises(ValueError, match="thresholds.cell: expected 0-1, got 1.2")),
        ({"cell": 0.9, "corner": -0.1}, pytest.raises(ValueError, match="thresholds.corner")),
        ({"cell": 0.9, "max_cells": 0}, pytest.raises(ValueError, match="max_cells: expected at least 1")),
    ],
)
def test_thresholds_are_checked(values: dict[str, Any], raises: AbstractContextManager[Any]) -> None:
    with raises:
        Thresholds(**values)


@pytest.mark.parametrize(
    ("peaks", "raises"),
    [
        ((0.5, 0.5, 0.5, 0.5), nullcontext()),
        ((0.5, 0.5, 0.5), pytest.raises(ValueError, match="expected 4 peaks")),
        ((0.5, 0.5, 1.5, 0.5), pytest.raises(ValueError, match="lower-right")),
    ],
)
def test_grid_certainty_is_checked(peaks: tuple[float, ...], raises: AbstractContextManager[Any]) -> None:
    with raises:
        GridCertainty(peaks)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("at", "words"),
    [
        ((2, 1), "the tile 2 east, 1 south of the fountain"),
        ((-1, 0), "the tile 1 west of the fountain"),
        ((0, -3), "the tile 3 north of the fountain"),
        ((0, 0), "the fountain"),
    ],
)
def test_alhambra_tiles_are_named_from_the_fountain(at: tuple[int, int], words: str) -> None:
    assert alhambra_tile_name(at) == words


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("tower:NE", "a tower walled N and E"),
        ("arcades:", "arcades without walls"),
        ("pavilion:S", "a pavilion walled S"),
        ("fountain", "the fountain"),
    ],
)
def test_alhambra_values_in_words(value: str, words: str) -> None:
    assert alhambra_value_name(value) == words


@pytest.mark.parametrize(("value", "words"), [("P1", "P1 (purple 1)"), ("Y6", "Y6 (yellow 6)"), (".", "empty")])
def test_sagrada_values_by_letter_and_name(value: str, words: str) -> None:
    assert sagrada_value_name(value) == words


def test_a_doubtful_alhambra_tile_is_named_from_the_fountain() -> None:
    cells = [
        CellReading((0, 0), "fountain", 0.999, SQUARE),
        CellReading((2, 1), "tower:NE", 0.41, SQUARE, (("seraglio:NE", 0.5), ("tower:N", 0.06))),
    ]
    review = judge(cells, ALHAMBRA_WORDING, ALHAMBRA_THRESHOLDS)
    assert review.reasons == (
        "the tile 2 east, 1 south of the fountain read a tower walled N and E at 41% (seraglio NE and tower N close behind)",
    )


@pytest.fixture(scope="module")
def sample_scanner(make_scanner: Any) -> Any:
    return make_scanner()


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("stem", "game", "expected"),
    [
        ("sagrada_straight_01", "sagrada", ()),
        (
            "sagrada_tilted_02",
            "sagrada",
            # right: the rules read Y2 where the model saw Y6 at 55%, and the model itself reads Y4 at 70% with Y2
            # close behind (72% before the colour head was read less surely, 2026-12-06; with the locator before
            # 2026-12-06 it saw Y2 at 54% and the rules read Y4: the card prints a 4 there); on this doubtful board
            # the B5, read over the bar before, is pooled over its views too, at 93% (``DOUBTFUL_BOARD_SURE``, 2026-12-07)
            (
                "cell r3c1 read Y2 (yellow 2) by the rules, where the model saw Y6",
                "cell r2c2 read Y4 (yellow 4) at 70%",
                "cell r2c1 read B5 (blue 5) at 93%",
            ),
        ),
        ("alhambra_01_straight", "alhambra", ()),
        (
            "alhambra_10_small",
            "alhambra",
            # right: the lattice through its five tiles sits turned on them and the seraglio's octagon lies at the edge
            # of its corner patch, read as absent there; its close patch, cut where the outline is found, sees it (until
            # the third session of 2026-12-06 only the corner counted, and the tile was doubted at 1%)
            (),
        ),
        # the rules overrode "seraglio S" (66%): with the wall its neighbour shows, "seraglio S and W" is the only reading
        ("alhambra_04_tilted", "alhambra", ()),
    ],
)
def test_a_bundled_sample_reads_as_the_thresholds_say(sample_scanner: Any, stem: str, game: str, expected: tuple[str, ...]) -> None:
    result = sample_scanner.scan(SAMPLES / f"{stem}.jpg", game)
    review = result.review
    assert review is not None
    assert len(review.reasons) == len(expected)
    assert all(reason.startswith(start) for reason, start in zip(review.reasons, expected))
    thresholds = SAGRADA_THRESHOLDS if game == "sagrada" else ALHAMBRA_THRESHOLDS
    doubtful = [cell for cell in result.cells if cell.confidence < thresholds.cell]  # overridden cells among them when unsure
    assert review.needed == bool(doubtful or result.issues)
    assert result.to_json()["players"][0]["scan"]["review"] == review.to_json()


@pytest.mark.e2e
@pytest.mark.parametrize("path", sorted(SAMPLES.glob("alhambra_*.jpg")), ids=lambda path: path.stem)
def test_every_bundled_palace_scanned_as_sagrada_is_refused_or_asked_about(sample_scanner: Any, path: Path) -> None:
    # alhambra_01 reads its "dice" at 0.59, as doubtfully as a hard real window does: it is read, and the
    # review's first words ask whether this is a Sagrada window; the others are refused
    try:
        result = sample_scanner.scan(path, "sagrada")
    except BoardNotFoundError as error:
        assert "no Sagrada window found" in str(error)
        return
    assert result.review is not None and result.review.needed
    assert result.review.reasons[0].endswith("is this a Sagrada window?")


@pytest.mark.e2e
@pytest.mark.parametrize("path", sorted(SAMPLES.glob("sagrada_*.jpg")), ids=lambda path: path.stem)
def test_every_bundled_window_scanned_as_alhambra_is_refused(sample_scanner: Any, path: Path) -> None:
    # sagrada_cluttered_02 once read as a flagged palace of 7 tiles at a mean confidence of 0.44
    with pytest.raises(BoardNotFoundError, match="no Alhambra palace read|palaces? in view|groups of tiles|apart from"):
        sample_scanner.scan(path, "alhambra")


@pytest.mark.e2e
@pytest.mark.parametrize(("stem", "game"), [("alhambra_01_straight", "sagrada"), ("sagrada_straight_01", "alhambra")])
def test_another_games_photo_is_refused_or_flagged(sample_scanner: Any, stem: str, game: str) -> None:
    try:
        result = sample_scanner.scan(SAMPLES / f"{stem}.jpg", game)
    except BoardNotFoundError:
        return  # refused: the better outcome
    assert result.review is not None and result.review.needed
