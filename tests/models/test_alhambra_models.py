"""Alhambra models: shipped files match their manifests and cards; the renderer gives legal, exact labels."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from models.synth.alhambra import render
from scanner.alhambra import CROP_PX, KINDS, LOCATE_MODEL, LOCATE_SIZE, TILES_MODEL
from scanner.errors import ModelError
from scanner.model import OnnxModel
from scoring.registry import GAMES

MODELS = Path(__file__).resolve().parents[2] / "models"


@pytest.mark.parametrize(
    "name, shape",
    [(LOCATE_MODEL, [1, 3, LOCATE_SIZE[1], LOCATE_SIZE[0]]), (TILES_MODEL, [1, 3, CROP_PX, CROP_PX])],
)
def test_shipped_model_matches_manifest_and_card(name, shape):
    folder = MODELS / name
    data = (folder / "model.onnx").read_bytes()
    manifest = json.loads((folder / "manifest.json").read_text())
    assert len(data) <= 2 * 1024 * 1024
    assert hashlib.sha256(data).hexdigest() == manifest["sha256"]
    assert manifest["input"]["shape"] == shape
    card = (folder / "MODEL_CARD.md").read_text()
    assert manifest["sha256"] in card
    assert str(shape) in card


def test_tile_model_heads_and_temperatures():
    manifest = json.loads((MODELS / TILES_MODEL / "manifest.json").read_text())
    assert manifest["heads"]["kind"] == list(KINDS)
    assert set(manifest["temperatures"]) == {"kind", "walls", "price", "rotation"}
    assert all(0.2 < t < 6 for t in manifest["temperatures"].values())
    model = OnnxModel(TILES_MODEL)
    out = model.run(np.zeros((3, 3, CROP_PX, CROP_PX), np.float32))
    assert out["kind"].shape == (3, len(KINDS)) and out["walls"].shape == (3, 4)


def test_truncated_model_names_the_file_and_the_rebuild(tmp_path):
    folder = tmp_path / TILES_MODEL
    folder.mkdir()
    (folder / "manifest.json").write_text((MODELS / TILES_MODEL / "manifest.json").read_text())
    (folder / "model.onnx").write_bytes((MODELS / TILES_MODEL / "model.onnx").read_bytes()[:1000])
    with pytest.raises(ModelError, match=r"model.onnx.*models.alhambra_tiles.train"):
        OnnxModel(TILES_MODEL, directory=tmp_path)


@pytest.mark.parametrize("seed", [3, 11, 2024])
def test_render_is_deterministic_and_legal(seed):
    first, second = render(seed, out_size=(640, 480)), render(seed, out_size=(640, 480))
    assert np.array_equal(first.image_rgb, second.image_rgb)
    assert first.label == second.label
    state = GAMES["alhambra"].parse(first.label)
    assert GAMES["alhambra"].validate(state) == []
    cells = first.label["render"]["cells"]
    assert len(cells) == len(first.label["players"][0]["palace"])
    for cell in cells:  # every tile centre lies inside the photo and inside its own outline
        x, y = cell["centre"]
        assert 0 <= x < 640 and 0 <= y < 480
        poly = np.array(cell["polygon"])
        assert poly[:, 0].min() < x < poly[:, 0].max() and poly[:, 1].min() < y < poly[:, 1].max()


def test_rendered_tiles_have_their_type_colour():
    """The price octagon (bottom-right) carries the type's colour in the top-down art."""
    from models.synth.alhambra import PRICE_FILL, draw_tile

    rng = np.random.default_rng(0)
    for kind, colour in PRICE_FILL.items():
        art = draw_tile({"type": kind, "walls": "", "price": 7}, rng, 128)
        patch = art[int(0.79 * 128) - 12:int(0.79 * 128) - 8, int(0.79 * 128) - 3:int(0.79 * 128) + 3]
        assert np.abs(patch.reshape(-1, 3).mean(axis=0) - colour).max() < 45, kind
