"""The shared fit loop and the frozen per-model training configs."""

from __future__ import annotations

import dataclasses
import json
from contextlib import nullcontext
from pathlib import Path

import numpy as np
import pytest

from models.metrics import expected_calibration_error
from scanner.model import load_manifest

torch = pytest.importorskip("torch", reason="training code needs the train extra")

from models.alhambra.train import CONFIG as ALHAMBRA  # noqa: E402
from models.fit import FitConfig, fit, seeded  # noqa: E402
from models.sagrada import make_dataset  # noqa: E402
from models.sagrada.train import CONFIG as SAGRADA  # noqa: E402

MODELS = Path(__file__).resolve().parents[2] / "models"


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({}, nullcontext()),
        ({"epochs": 0}, pytest.raises(ValueError, match="at least one epoch")),
        ({"lr": 0.0}, pytest.raises(ValueError, match="positive learning rates")),
        ({"warmup": 1.0}, pytest.raises(ValueError, match="warm-up share")),
    ],
)
def test_fit_config_checks_its_settings(change, expected):
    with expected:
        config = FitConfig(**{"name": "toy", "epochs": 2, "batch": 4, "lr": 1e-2, "seed": 1, **change})
        assert config.steps_per_epoch(9) == 3


def test_configs_are_frozen_and_hold_the_shipped_recipe():
    with pytest.raises(dataclasses.FrozenInstanceError):
        SAGRADA.cells.epochs = 1  # type: ignore[misc]
    assert (SAGRADA.cells.epochs, SAGRADA.finder.epochs, SAGRADA.refiner.epochs, SAGRADA.fine_tune.epochs) == (6, 60, 48, 16)
    assert (SAGRADA.locate.epochs, SAGRADA.locate_renders, SAGRADA.locate_views, SAGRADA.locate_real_share) == (30, 960, 1440, 0.5)
    assert make_dataset.REAL_DICE == 0.2  # the share of the cell model's training windows with real dice
    # the octagon reader was trained by `--only octagon` (2,500 sharp photos, a third of the negatives an epoch)
    written = ALHAMBRA.recipe(locate=False)
    octagon = dict(load_manifest(MODELS / "alhambra_octagon" / "manifest.json").recipe)
    # the octagon reader was retrained alone (`--only octagon`, 2026-12-06) on renders partly off the
    # catalogue (data version 3); the tile classifier (`--only tiles`, the same day) before that change
    assert octagon == written
    tiles = dict(load_manifest(MODELS / "alhambra_tiles" / "manifest.json").recipe)
    assert {k: v for k, v in tiles.items() if k != "octagon_second_look"} == {
        k: v for k, v in written.items() if k != "octagon_second_look"
    }
    assert "(data version 2)" in str(tiles["octagon_second_look"]) and "(data version 3)" in str(octagon["octagon_second_look"])
    # the locator's recipe is the part of today's that existed when it was trained
    locator = dict(load_manifest(MODELS / "alhambra_locate" / "manifest.json").recipe)
    assert locator["locate_epochs"] == ALHAMBRA.locate.epochs
    assert {k: v for k, v in ALHAMBRA.recipe().items() if k in locator and k not in ("tile_epochs", "tile_misalign")} == {
        k: v for k, v in locator.items() if k not in ("tile_epochs", "tile_misalign")
    }
    assert "locate_epochs" not in ALHAMBRA.recipe(locate=False)


def test_fit_is_deterministic_and_returns_an_evaluation_network():
    def run() -> tuple[torch.nn.Module, list[str]]:
        generator = seeded(3)
        net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(4, 2))
        x_all, y_all = torch.rand(20, 3, 8, 8, generator=generator), torch.randint(2, (20,), generator=generator)

        def step(net, idx):
            logits = net(x_all[idx])
            return torch.nn.functional.cross_entropy(logits, y_all[idx]), {"right": int((logits.argmax(1) == y_all[idx]).sum())}

        logs: list[str] = []
        config = FitConfig("toy", epochs=2, batch=8, lr=1e-2, peak_lr=2e-2, seed=3)
        return fit(net, 20, step, config, generator, log=logs.append), logs

    (first, first_logs), (again, again_logs) = run(), run()
    assert not first.training and len(first_logs) == 2 and ", right " in first_logs[0]
    assert all(torch.equal(a, b) for a, b in zip(first.state_dict().values(), again.state_dict().values()))
    assert [line.rsplit(" (", 1)[0] for line in first_logs] == [line.rsplit(" (", 1)[0] for line in again_logs]


def test_one_calibration_error():
    assert expected_calibration_error(np.array([1.0, 1.0]), np.array([True, True])) == 0.0
    assert round(expected_calibration_error(np.array([0.75] * 4), np.array([1, 1, 0, 0])), 6) == 0.25


def test_export_writes_the_one_manifest_format_and_a_loadable_model(tmp_path):
    pytest.importorskip("onnx", reason="training code needs the train extra")
    from models.export import manifest_for, to_onnx, write_model
    from scanner.model import OnnxModel, manifest_text

    net = torch.nn.Sequential(torch.nn.Conv2d(3, 2, 3, padding=1), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten())
    manifest = manifest_for(
        "toy_net",
        "toy",
        classes=("a", "b"),
        heads=(("kind", ("a", "b")),),
        outputs=(("kind", "logits"),),
        input_shape=(1, 3, 8, 8),
        temperature=0.7,
    )
    written = write_model(to_onnx(net, torch.zeros(1, 3, 8, 8), ["kind"], dynamic_batch=True), manifest, tmp_path)
    assert (tmp_path / "toy_net" / "manifest.json").read_text(encoding="utf-8") == manifest_text(written)
    model = OnnxModel("toy_net", directory=tmp_path)
    assert model.manifest == written and model.manifest.rebuild == "rebuild it with `python -m models.toy.train`"
    assert model.run(np.zeros((2, 3, 8, 8), np.float32))["kind"].shape == (2, 2)
    meta = model.session.get_modelmeta().custom_metadata_map
    assert meta["name"] == "toy_net" and meta["input"] == json.dumps(written.input_spec)
