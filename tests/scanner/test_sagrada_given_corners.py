"""Corners given by hand (``--corners``, a drag on the review screen) in any order, on boards of other designs.

The refiner's turn head learnt one board style; on the held-out style it names the quarter turn near
chance. The width of the grid is told by the cells instead (they read surely only on the grid as it
lies), so corners given in any order are read in place.
"""

from __future__ import annotations

import numpy as np
import pytest

from models.sagrada import styles
from models.sagrada.render import random_view, render
from scanner.photo import Photo
from scanner.pipeline import Scanner

SEEDS = range(9_000_000, 9_000_008)  # the transfer benchmark's held-out-style renders


@pytest.fixture(scope="module")
def scanner() -> Scanner:
    return Scanner()


@pytest.mark.parametrize("seed", SEEDS)
def test_given_corners_in_any_order_are_read_in_place_on_another_board(scanner: Scanner, seed: int) -> None:
    sample = render(seed, style=styles.HELD_OUT, **random_view(np.random.default_rng([seed, 13])))
    truth = np.array(sample.label["render"]["corners"], np.float64)
    given = truth[np.random.default_rng(seed).permutation(4)]  # as a user might click them
    result = scanner.scan(Photo.from_array(sample.image_rgb), "sagrada", corners=given)
    pitch = np.linalg.norm(truth[1] - truth[0]) / 5
    assert np.abs(result.image_corners - truth).max() < 0.05 * pitch  # the top-left first, not turned
    window = [v for row in sample.label["players"][0]["window"] for v in row.split()]
    read = {tuple(cell.cell): cell.value for cell in result.cells}
    assert sum(read[divmod(i, 5)] == v for i, v in enumerate(window)) >= 18
