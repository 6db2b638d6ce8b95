"""Shipped-model integrity: a missing, truncated or replaced file is a clear ModelError."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from scanner.errors import ModelError
from scanner.model import OnnxModel, softmax


def _write(folder, data: bytes, sha: str | None = None, manifest: bool = True) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model.onnx").write_bytes(data)
    if manifest:
        doc = {
            "name": folder.name,
            "version": "v1",
            "sha256": sha or hashlib.sha256(data).hexdigest(),
            "classes": ["a", "b"],
            "input": {"shape": [1, 3, 8, 8]},
        }
        (folder / "manifest.json").write_text(json.dumps(doc))


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda f: _write(f, b"x", manifest=False), "manifest missing"),
        (lambda f: (_write(f, b"x"), (f / "model.onnx").unlink()), "model file missing"),
        (lambda f: _write(f, b"abc", sha="0" * 64), "does not match the recorded"),
        (lambda f: _write(f, b"not an onnx graph"), "onnxruntime cannot load"),
        (lambda f: (f.mkdir(), (f / "model.onnx").write_bytes(b"x"), (f / "manifest.json").write_text("{")), "unreadable manifest"),
    ],
    ids=["no-manifest", "no-model", "sha-mismatch", "garbage", "bad-manifest"],
)
def test_broken_models_name_the_file_and_the_rebuild_command(tmp_path, setup, message) -> None:
    setup(tmp_path / "toy")
    with pytest.raises(ModelError) as caught:
        OnnxModel("toy", directory=tmp_path)
    text = str(caught.value)
    assert message in text
    assert "python -m models.toy.train" in text
    assert str(tmp_path / "toy") in text


def test_softmax_with_temperature_flattens() -> None:
    logits = np.array([[2.0, 0.0, -1.0]])
    sharp, flat = softmax(logits), softmax(logits, temperature=3.0)
    assert np.allclose(sharp.sum(), 1.0) and np.allclose(flat.sum(), 1.0)
    assert flat[0, 0] < sharp[0, 0]
    assert np.argmax(flat) == np.argmax(sharp) == 0
