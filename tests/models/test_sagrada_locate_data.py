"""The locator's training scenes: training board styles, a share with real dice pasted in."""

from __future__ import annotations

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

    def fake_renders(first_seed, count, workers=1, *, styled=True, real_share=0.0):
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
