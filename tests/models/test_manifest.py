"""One manifest format: every shipped manifest reads into ``Manifest`` and writes back byte for byte."""

from __future__ import annotations

import json
from contextlib import nullcontext
from pathlib import Path

import pytest

from scanner.errors import ModelError
from scanner.model import Manifest, OnnxModel, load_manifest, manifest_text

MODELS = Path(__file__).resolve().parents[2] / "models"
SHIPPED = ["sagrada_dice", "sagrada_finder", "sagrada_refiner", "sagrada_locate", "alhambra_locate", "alhambra_tiles", "alhambra_octagon"]
MINIMAL = {"name": "toy", "version": "1", "sha256": "a" * 64, "input": {"shape": [1, 3, 8, 8]}}


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_manifest_is_in_the_one_format_and_names_its_rebuild(name):
    path = MODELS / name / "manifest.json"
    manifest = load_manifest(path)
    assert manifest_text(manifest) == path.read_text(encoding="utf-8")  # every field read, nothing dropped
    assert Manifest.from_json(manifest.to_json()) == manifest
    assert manifest.train == f"models.{manifest.name.split('_')[0]}.train"
    assert manifest.commit and dict(manifest.outputs)
    assert OnnxModel(name).output_names == [output for output, _ in manifest.outputs]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({}, nullcontext()),
        ({"train": "models.toy.train", "temperatures": {"kind": 0.5}}, nullcontext()),
        ({"input": {"shape": [1, "x"]}}, pytest.raises(ModelError, match=r"manifest.json: unreadable manifest \(input.shape\[1\]")),
        ({"sha256": "xyz"}, pytest.raises(ModelError, match=r"sha256: expected 64 lowercase hex digits")),
        ({"heads": {"kind": "ab"}}, pytest.raises(ModelError, match=r"heads.kind: expected a list of names")),
        ({"temperature": 0, "train": "models.toy.train"}, pytest.raises(ModelError, match=r"temperature: .*`python -m models.toy.train`")),
    ],
)
def test_load_manifest_names_the_file_and_the_json_path(tmp_path, change, expected):
    path = tmp_path / "toy" / "manifest.json"
    path.parent.mkdir()
    path.write_text(json.dumps({**MINIMAL, **change}))
    with expected:
        manifest = load_manifest(path)
        assert manifest.temperature_of("kind") == dict(change.get("temperatures", {})).get("kind", 1.0)
        assert load_manifest(path) == Manifest.from_json(manifest.to_json())


def test_missing_manifest_is_a_model_error(tmp_path):
    with pytest.raises(ModelError, match="model manifest missing"):
        load_manifest(tmp_path / "toy" / "manifest.json")
