"""Adaptation reads the crops' own colour: features, a colour shift the embedding cannot see, file versions."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from scanner.adapt import (
    CROP_COLOUR,
    Adaptation,
    AdaptationError,
    AdaptedModel,
    ExampleSet,
    HeadFit,
    ModelAdaptation,
    adapt_model,
    crop_colour_features,
    examples_from_crops,
    from_npz_bytes,
    to_npz_bytes,
)
from scanner.model import Manifest, OnnxModel, image_batch

HEADS = (("die", ("empty", "die")), ("colour", ("none", "R", "Y", "G", "B", "P")), ("value", ("none", "1", "2", "3", "4", "5", "6")))
SHIPPED_LOOK = {"R": (200, 30, 30), "Y": (230, 200, 40), "G": (40, 150, 60), "B": (30, 80, 200), "P": (120, 40, 140)}
# another printing: each colour is closer to another colour's shipped look
OTHER_LOOK = {"R": (200, 120, 60), "Y": (90, 190, 70), "G": (40, 130, 190), "B": (120, 50, 160), "P": (210, 40, 90)}


class ColourBlindDice(OnnxModel):
    """Colour logits from the centre's mean colour, but an embedding that carries no colour at all."""

    def __init__(self) -> None:
        self.manifest = Manifest("sagrada_dice", "1", "7" * 64, ("empty", "die"), (1, 3, 48, 48), 1.0, HEADS)
        self.output_names = ["die", "colour", "value", "embedding"]
        self.input_name = "input"
        self.path = "toy/sagrada_dice/model.onnx"

    def run(self, batch: np.ndarray) -> dict[str, np.ndarray]:
        centre = batch[:, :, 16:32, 16:32].mean(axis=(2, 3)) * 255.0
        protos = np.array([(128, 128, 128)] + [SHIPPED_LOOK[c] for c in "RYGBP"], np.float64)
        colour = -((centre[:, None, :] - protos[None]) ** 2).sum(axis=2) / 800.0
        n = len(batch)
        brightness = batch.mean(axis=(1, 2, 3))[:, None]  # the embedding sees only how bright the crop is
        embedding = np.concatenate([brightness, np.sin(np.arange(7)[None] * brightness * 9)], axis=1)
        return {
            "die": np.tile(np.float32([0, 2]), (n, 1)),
            "colour": colour.astype(np.float32),
            "value": np.tile(np.float32([0, 0, 0, 2, 0, 0, 0]), (n, 1)),
            "embedding": embedding.astype(np.float32),
        }


def dice(colours: str, look: dict, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    crops = np.full((len(colours), 48, 48, 3), 25.0)
    for i, colour in enumerate(colours):
        crops[i, 10:38, 10:38] = np.asarray(look[colour]) * rng.uniform(0.85, 1.15)  # the lamp: brighter or darker
    return np.clip(crops + rng.normal(0, 10, crops.shape), 0, 255).astype(np.uint8)


def test_crop_colour_features_ignore_turns_and_tell_hues_apart() -> None:
    crops = dice("RYGBP", SHIPPED_LOOK, 0)
    features = crop_colour_features(image_batch(crops))
    assert features.shape == (5, 20) and np.all(np.isfinite(features))
    turned = crop_colour_features(image_batch(np.ascontiguousarray(np.rot90(crops, 1, axes=(1, 2)))))
    np.testing.assert_allclose(turned, features, atol=1e-9)
    histograms = features[:, :12]
    np.testing.assert_allclose(histograms.sum(axis=1), 1.0, atol=1e-3)
    assert len(set(np.argmax(histograms, axis=1).tolist())) == 5  # five colours, five hue peaks
    with pytest.raises(AdaptationError, match=r"expected a \(N, 3, H, W\) RGB batch"):
        crop_colour_features(np.zeros((2, 4, 8, 8)))


def test_a_colour_shift_the_embedding_cannot_see_is_learnt_from_the_crops() -> None:
    model = ColourBlindDice()
    rng = np.random.default_rng(1)
    colours = "".join("RYGBP"[int(k)] for k in rng.integers(0, 5, 60))
    values = [f"{c}{int(v)}" for c, v in zip(colours, rng.integers(1, 7, 60))]
    examples = examples_from_crops(model, dice(colours, OTHER_LOOK, 2), values, "sagrada", np.arange(60) // 20, augment=False)
    assert CROP_COLOUR in examples.outputs
    examples = ExampleSet(examples.model, examples.outputs, {"colour": examples.labels["colour"]}, examples.groups)  # quicker
    fitted, report = adapt_model(model, examples)
    assert fitted is not None and report.basis == ("embedding", CROP_COLOUR)
    colour = next(h for h in report.heads if h.head == "colour")
    assert colour.kept and colour.before < 0.5 and colour.after > 0.9

    test = "RYGBP" * 20
    batch = image_batch(dice(test, OTHER_LOOK, 3))
    truth = np.array([" RYGBP".index(c) for c in test])
    before = np.mean(np.argmax(model.run(batch)["colour"], axis=1) == truth)
    adapted = AdaptedModel(model, fitted)
    after = np.mean(np.argmax(adapted.run(batch)["colour"], axis=1) == truth)
    assert before < 0.5 and after > 0.95

    # without the crop's colour (only the colour-blind embedding) the same examples teach little
    blind = examples.outputs.copy()
    del blind[CROP_COLOUR]
    plain, _ = adapt_model(model, ExampleSet(examples.model, blind, examples.labels, examples.groups, examples.items, examples.variants))
    plain_after = before if plain is None else np.mean(np.argmax(AdaptedModel(model, plain).run(batch)["colour"], axis=1) == truth)
    assert plain_after < after - 0.3

    # heads that read the crop's colour need the input batch
    with pytest.raises(AdaptationError, match="pass the model's input batch"):
        fitted.apply(model.run(batch))
    # and survive a save and load exactly
    loaded = from_npz_bytes(to_npz_bytes(Adaptation((fitted,))))
    np.testing.assert_array_equal(
        loaded.model("sagrada_dice").apply(model.run(batch), batch)["colour"], fitted.apply(model.run(batch), batch)["colour"]
    )


def test_a_version_1_file_without_head_bases_still_reads_with_the_model_basis() -> None:
    rng = np.random.default_rng(0)
    fit = HeadFit("colour", HEADS[1][1], 1.0, np.zeros(8), np.ones(8), rng.normal(0, 1, (8, 6)), rng.normal(0, 1, 6))
    fitted = ModelAdaptation("sagrada_dice", "7" * 64, ("embedding",), (fit,))
    data = to_npz_bytes(Adaptation((fitted,)))
    with np.load(io.BytesIO(data)) as archive:
        arrays = {name: archive[name] for name in archive.files}
    meta = json.loads(arrays["meta"].tobytes())
    meta["version"] = 1
    for entry in meta["models"]:
        for head in entry["heads"]:
            del head["basis"]
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    loaded = from_npz_bytes(buffer.getvalue()).model("sagrada_dice")
    assert loaded.heads[0].basis == () and loaded.inputs == ("embedding",)
    outputs = {"colour": rng.normal(0, 1, (4, 6)).astype(np.float32), "embedding": rng.normal(0, 1, (4, 8)).astype(np.float32)}
    np.testing.assert_array_equal(loaded.apply(outputs)["colour"], fitted.apply(outputs)["colour"])


@pytest.mark.parametrize("value", [float("nan"), float("inf"), "1.0"])
def test_a_non_finite_logit_scale_is_refused(value) -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(AdaptationError, match="logit_scale: expected a finite number"):
        HeadFit("colour", HEADS[1][1], 1.0, np.zeros(8), np.ones(8), rng.normal(0, 1, (8, 6)), np.zeros(6), (), value)


def test_the_shipped_logits_weight_is_fitted_and_applied() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(0, 1, (200, 4))
    labels = rng.integers(0, 3, 200)
    logits = np.eye(3)[(labels + 1) % 3] * 4.0  # the shipped model is confidently wrong everywhere
    from scanner.adapt import fit_head

    fitted = fit_head("kind", ("a", "b", "c"), x, logits, labels)
    assert fitted.logit_scale < 0.9  # trusted less than as shipped
    frozen = fit_head("kind", ("a", "b", "c"), x, logits, labels, fit_scale=False)
    assert frozen.logit_scale == 1.0
    np.testing.assert_allclose(
        fitted.adjust(x, logits), fitted.logit_scale * logits + ((x - fitted.mean) / fitted.scale) @ fitted.weights + fitted.bias
    )
