"""The octagon reader's patch augmentation: digit faces the renderer does not draw."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="training code needs the train extra")

from models.alhambra import art, train  # noqa: E402


def _digit_patches(count: int) -> torch.Tensor:
    """(count, 3, 48, 48) patches in 0-1: a dark price on a light octagon-coloured ground."""
    rng = np.random.default_rng(4)
    patches = []
    for index in range(count):
        canvas = np.full((48, 48, 3), (205, 180, 150), np.uint8)
        art.stamp_text(canvas, str(2 + index % 12), (24, 24), 20, 30, (25, 20, 15), art.Font("stroke", "round"), rng)
        patches.append(canvas)
    return torch.from_numpy(np.stack(patches)).permute(0, 3, 1, 2).float() / 255.0


def _warp(x: torch.Tensor, monkeypatch: pytest.MonkeyPatch, *, bent: float) -> torch.Tensor:
    monkeypatch.setattr(train, "GLYPH_P", 0.0)  # no slant or stretch
    monkeypatch.setattr(train, "INK_P", 0.0)  # no bolder or lighter ink
    monkeypatch.setattr(train, "ELASTIC_P", bent)
    return train._glyph_warp(x.clone(), torch.Generator().manual_seed(11))


def test_patches_not_bent_are_left_as_they_are(monkeypatch):
    x = _digit_patches(12)
    assert torch.allclose(_warp(x, monkeypatch, bent=0.0), x, atol=1e-5)


def test_bent_digits_change_shape_by_about_a_pixel(monkeypatch):
    x = _digit_patches(12)
    bent = _warp(x, monkeypatch, bent=1.0)
    moved = (bent - x).abs().mean(dim=(1, 2, 3))
    assert bool((moved > 2e-3).all())  # every patch bent
    shifted = torch.roll(x, shifts=3, dims=3)  # a digit moved 3 px over: far more than a bend
    assert float((bent - x).abs().mean()) < 0.5 * float((shifted - x).abs().mean())
    assert bent.shape == x.shape and float(bent.min()) >= 0.0 and float(bent.max()) <= 1.0
    # the ground is kept: a bend moves the ink, it does not wash it out
    assert abs(float(bent.mean()) - float(x.mean())) < 0.01
