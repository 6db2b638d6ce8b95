"""The locator's training scenes: training board styles, a share with real dice pasted in, a share of dice alone."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from models.sagrada import composite, locate_data

SEED = 4_000_000  # the locator's own render seeds


def test_a_real_dice_scene_takes_its_dice_from_the_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[tuple[str, int]] = []
    drawn_pool = composite.DicePool([], drawn_fallback=True)  # draws each die, and notes what was asked of it

    class Recording(composite.DicePool):
        def face(self, colour, value, rng, size_px):
            asked.append((colour, value))
            return drawn_pool.face(colour, value, rng, size_px)

    pool = Recording([composite.RealDie(np.zeros((8, 8, 3), np.uint8), np.zeros((8, 8), np.uint8), "R", 1, "test")])
    monkeypatch.setattr(composite, "training_pool", lambda: pool)
    image, corners = locate_data._render(SEED, True, 1.0)
    assert len(asked) >= 10  # a window's dice (at most 6 cells of 20 are empty)
    assert image.dtype == np.uint8 and corners.shape == (4, 2)
    asked.clear()
    locate_data._render(SEED, True, 0.0)
    assert asked == []


def test_without_real_dice_the_scene_is_the_drawn_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(composite, "training_pool", lambda: composite.DicePool([]))
    drawn, _ = locate_data._render(SEED, True, 0.0)
    asked, _ = locate_data._render(SEED, True, 1.0)
    assert np.array_equal(drawn, asked)


def test_the_cache_names_the_real_dice_share(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []

    def fake_renders(first_seed, count, workers=1, *, styled=True, real_share=0.0, mosaic_share=0.0):
        calls.append(real_share)
        return [np.zeros((4, 4, 3), np.uint8)] * count, np.zeros((count, 4, 2))

    monkeypatch.setattr(locate_data, "renders", fake_renders)
    monkeypatch.setattr(composite, "real_dice_present", lambda: True)
    locate_data.load_or_render(1, 2, cache=tmp_path, real_share=0.5)
    locate_data.load_or_render(1, 2, cache=tmp_path, real_share=0.0)
    names = sorted(p.name for p in tmp_path.rglob("*.npz"))
    assert names == ["renders_1_2.npz", "renders_real0.5_1_2.npz"]
    assert calls == [0.5, 0.0]
    monkeypatch.setattr(composite, "real_dice_present", lambda: False)  # no dice here: the drawn scenes' cache
    locate_data.load_or_render(1, 2, cache=tmp_path, real_share=0.5)
    assert calls == [0.5, 0.0]


def _luma_at(image: np.ndarray, points: np.ndarray) -> np.ndarray:
    grey = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY).astype(np.float32)
    return np.array([grey[int(round(y)) - 1 : int(round(y)) + 2, int(round(x)) - 1 : int(round(x)) + 2].mean() for x, y in points])


def test_a_window_of_dice_alone_has_its_grid_where_its_corners_say() -> None:
    pool = composite.DicePool([], drawn_fallback=True)  # drawn dice: no real data needed
    for seed in range(SEED, SEED + 4):
        image, corners = composite.mosaic_window(seed, pool, (640, 480))
        assert image.shape == (480, 640, 3) and corners.shape == (4, 2)
        grid_to_photo = cv2.getPerspectiveTransform(np.array([[0, 0], [5, 0], [5, 4], [0, 4]], np.float32), corners.astype(np.float32))
        cells = np.array([[c + 0.5, r + 0.5] for r in range(4) for c in range(5)], np.float32)
        crossings = np.array([[c, r] for r in range(1, 4) for c in range(1, 5)], np.float32)
        middles, gaps = (
            _luma_at(image, cv2.perspectiveTransform(points.reshape(-1, 1, 2), grid_to_photo).reshape(-1, 2))
            for points in (cells, crossings)
        )
        assert np.median(middles) > np.median(gaps) + 20, seed  # dice (or an empty cell's card) against the dark gaps between
    again, _ = composite.mosaic_window(SEED + 3, pool, (640, 480))
    assert np.array_equal(again, image)


def test_a_share_of_the_scenes_are_dice_alone_and_the_rest_stay_as_they_were(monkeypatch: pytest.MonkeyPatch) -> None:
    pool = composite.DicePool([], drawn_fallback=True)
    monkeypatch.setattr(composite, "training_pool", lambda: pool)
    alone, corners = locate_data._render(SEED, True, 0.0, 1.0)
    expected, expected_corners = composite.mosaic_window(SEED, pool, alone.shape[1::-1])
    assert np.array_equal(alone, expected) and np.allclose(corners, expected_corners)
    before, _ = locate_data._render(SEED, True, 0.0, 0.0)
    assert not np.array_equal(before, alone)
    chosen = [seed for seed in range(SEED, SEED + 40) if np.random.default_rng([seed, 14]).random() < 0.25]
    kept = next(seed for seed in range(SEED, SEED + 40) if seed not in chosen)
    assert np.array_equal(locate_data._render(kept, True, 0.0, 0.25)[0], locate_data._render(kept, True, 0.0, 0.0)[0])
    assert 4 <= len(chosen) <= 16
    classic, _ = locate_data._render(SEED, False, 0.0, 1.0)  # our own board only: never a mosaic
    assert np.array_equal(classic, locate_data._render(SEED, False, 0.0, 0.0)[0])


def test_the_cache_names_the_mosaic_share(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fake_renders(first_seed, count, workers=1, *, styled=True, real_share=0.0, mosaic_share=0.0):
        return [np.zeros((4, 4, 3), np.uint8)] * count, np.zeros((count, 4, 2))

    monkeypatch.setattr(locate_data, "renders", fake_renders)
    locate_data.load_or_render(1, 2, cache=tmp_path, mosaic_share=0.25)
    locate_data.load_or_render(1, 2, cache=tmp_path)
    assert sorted(p.name for p in tmp_path.rglob("*.npz")) == ["renders_1_2.npz", "renders_mosaic0.25_1_2.npz"]
