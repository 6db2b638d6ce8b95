"""Adaptation from corrections: a toy domain shift is learnt, bad files are refused, reset is exact."""

from __future__ import annotations

import functools
import json
from contextlib import nullcontext
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scanner.adapt import (
    Adaptation,
    AdaptationError,
    AdaptedModel,
    ExampleSet,
    adapt_model,
    adapt_reader,
    apply_head,
    fit_head,
    head_labels,
    load_adaptation,
    save_adaptation,
    split_holdout,
    to_npz_bytes,
)
from scanner.model import Manifest, OnnxModel

CLASSES = ("a", "b", "c")
DIMS = 8


class ToyModel(OnnxModel):
    """A stand-in for a shipped classifier: a fixed 'backbone' (identity) and a linear head on 8-d input."""

    def __init__(self, sha256: str = "1" * 64, with_embedding: bool = True) -> None:
        self.manifest = Manifest("toy", "1", sha256, CLASSES, (1, DIMS, 1, 1), 1.0, (("kind", CLASSES),))
        self.output_names = ["kind", "embedding"] if with_embedding else ["kind"]
        self.input_name = "input"
        self.path = "toy/model.onnx"
        # the shipped head: class k is the k-th feature direction
        self.weights = np.eye(DIMS, 3) * 4.0

    def run(self, batch: np.ndarray) -> dict[str, np.ndarray]:
        embedding = batch.reshape(len(batch), DIMS).astype(np.float32)
        out = {"kind": (embedding @ self.weights).astype(np.float32)}
        if "embedding" in self.output_names:
            out["embedding"] = embedding
        return out


def _domain(rng: np.random.Generator, count: int, shift: bool) -> tuple[np.ndarray, np.ndarray]:
    """Points near class centres; the 'other game copy' moves every class's centre along feature 3..5."""
    labels = rng.integers(0, 3, count)
    centres = np.eye(DIMS)[:3] * 1.0
    if shift:
        # the new copy's class-b look is read as class a, class c's as b: a systematic confusion
        centres = centres + np.array([[0, 0, 0, 1.2, 0, 0, 0, 0], [0.9, -0.8, 0, 0, 1.2, 0, 0, 0], [0, 0.9, -0.8, 0, 0, 1.2, 0, 0]])
    x = centres[labels] + rng.normal(0, 0.25, (count, DIMS))
    return x.reshape(count, DIMS, 1, 1).astype(np.float32), labels


def _examples(model: ToyModel, x: np.ndarray, labels: np.ndarray, photos: int) -> ExampleSet:
    outputs = model.run(x)
    return ExampleSet("toy", outputs, {"kind": labels.astype(np.int64)}, np.arange(len(labels)) % photos)


@pytest.mark.parametrize("with_embedding", [True, False], ids=["embedding", "logits-only"])
def test_toy_shift_is_learnt_and_improves_accuracy(with_embedding: bool) -> None:
    rng = np.random.default_rng(1)
    model = ToyModel(with_embedding=with_embedding)
    x, y = _domain(rng, 60, shift=True)
    fitted, report = adapt_model(model, _examples(model, x, y, photos=3))
    assert fitted is not None and report.kept
    assert report.basis == (("embedding",) if with_embedding else ("kind",))
    head = report.heads[0]
    assert head.after > head.before
    # on fresh photos of the shifted copy, the adapted model reads far better than the shipped one
    x_new, y_new = _domain(np.random.default_rng(2), 400, shift=True)
    shipped = np.argmax(model.run(x_new)["kind"], axis=1)
    adapted = np.argmax(AdaptedModel(model, fitted).run(x_new)["kind"], axis=1)
    before, after = np.mean(shipped == y_new), np.mean(adapted == y_new)
    assert before < 0.75
    assert after > 0.95 if with_embedding else after > before + 0.15


def test_no_shift_keeps_nothing_and_returns_none() -> None:
    rng = np.random.default_rng(3)
    model = ToyModel()
    x, y = _domain(rng, 40, shift=False)
    fitted, report = adapt_model(model, _examples(model, x, y, photos=2))
    head = report.heads[0]
    assert head.before == 1.0
    assert (fitted is None) == (not head.kept)
    assert head.after >= head.before or not head.kept


def test_wrong_labels_are_not_kept_when_they_hurt_held_out_accuracy() -> None:
    rng = np.random.default_rng(4)
    model = ToyModel()
    x, y = _domain(rng, 60, shift=False)
    groups = np.arange(60) % 3
    noisy = np.where(groups == 0, (y + 1) % 3, y)  # photo 0's "corrections" are all wrong
    examples = ExampleSet("toy", model.run(x), {"kind": noisy}, groups)
    fitted, report = adapt_model(model, examples, seed=0)
    head = report.heads[0]
    if head.kept:
        assert head.after >= head.before
    else:
        assert fitted is None


def test_too_few_examples_are_reported_not_fitted() -> None:
    model = ToyModel()
    x, y = _domain(np.random.default_rng(5), 4, shift=True)
    fitted, report = adapt_model(model, _examples(model, x, y, photos=2))
    assert fitted is None
    assert "too few" in report.heads[0].reason


def test_save_load_round_trip_gives_identical_logits(tmp_path) -> None:
    model = ToyModel()
    x, y = _domain(np.random.default_rng(6), 60, shift=True)
    fitted, _ = adapt_model(model, _examples(model, x, y, photos=3))
    adaptation = Adaptation((fitted,), "2026-11-30T08:00:00+00:00", ({"model": "toy"},))
    sha = save_adaptation(adaptation, tmp_path / "p.adapt.npz")
    loaded = load_adaptation(tmp_path / "p.adapt.npz", sha)
    assert loaded.created_at == adaptation.created_at and loaded.report == adaptation.report
    out = model.run(x)
    np.testing.assert_array_equal(apply_head(loaded, "toy", out)["kind"], apply_head(adaptation, "toy", out)["kind"])


@functools.cache
def _saved(_unused=None, sha256: str = "1" * 64) -> tuple[Adaptation, bytes]:
    model = ToyModel(sha256)
    x, y = _domain(np.random.default_rng(7), 60, shift=True)
    fitted, _ = adapt_model(model, _examples(model, x, y, photos=3))
    adaptation = Adaptation((fitted,))
    return adaptation, to_npz_bytes(adaptation)


def _meta_edit(data: bytes, change) -> bytes:
    import io

    with np.load(io.BytesIO(data)) as archive:
        arrays = {k: archive[k] for k in archive.files}
    meta = json.loads(arrays["meta"].tobytes())
    change(meta, arrays)
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda d: d[: len(d) // 2], "not a readable .npz"),
        (lambda d: b"hello", "not a readable .npz"),
        (lambda d: _meta_edit(d, lambda m, a: m.update(format="other")), "expected format"),
        (lambda d: _meta_edit(d, lambda m, a: m.update(version=99)), "newer than this tablescan"),
        (lambda d: _meta_edit(d, lambda m, a: a.pop("m0_h0_weights")), "KeyError"),
        (lambda d: _meta_edit(d, lambda m, a: a.update(m0_h0_bias=np.zeros(5))), "expected shape (3,)"),
        (lambda d: _meta_edit(d, lambda m, a: a.update(m0_h0_bias=np.full(3, np.nan))), "not finite"),
        (lambda d: _meta_edit(d, lambda m, a: m.pop("models")), "KeyError"),
    ],
    ids=["truncated", "garbage", "format", "version", "missing-array", "shape", "nan", "no-models"],
)
def test_corrupt_files_are_refused_with_a_clear_message(tmp_path, damage, message) -> None:
    _, data = _saved()
    path = tmp_path / "bad.adapt.npz"
    path.write_bytes(damage(data))
    with pytest.raises(AdaptationError) as caught:
        load_adaptation(path)
    text = str(caught.value)
    assert message in text and str(path) in text and "\n" not in text
    assert caught.value.exit_code == 2


def test_changed_file_is_refused_by_its_recorded_sha(tmp_path) -> None:
    adaptation, _ = _saved()
    path = tmp_path / "p.adapt.npz"
    sha = save_adaptation(adaptation, path)
    other, _ = _saved(None, "2" * 64)
    save_adaptation(other, path)
    with pytest.raises(AdaptationError, match="is not the recorded"):
        load_adaptation(path, sha)
    with pytest.raises(AdaptationError, match="adaptation file missing"):
        load_adaptation(tmp_path / "none.npz")


@pytest.mark.parametrize(
    ("model", "expectation"),
    [
        (ToyModel("1" * 64), nullcontext()),
        (ToyModel("9" * 64), pytest.raises(AdaptationError, match="retrained since")),
        (ToyModel("1" * 64, with_embedding=False), pytest.raises(AdaptationError, match="no outputs")),
    ],
    ids=["same", "other-sha", "no-embedding"],
)
def test_mismatched_model_is_refused(tmp_path, model, expectation) -> None:
    adaptation, _ = _saved()
    with expectation:
        AdaptedModel(model, adaptation.model("toy"), "p.adapt.npz")


def test_other_classes_are_refused() -> None:
    adaptation, _ = _saved(None)
    model = ToyModel()
    model.manifest = Manifest("toy", "1", "1" * 64, ("a", "b", "x"), (1, DIMS, 1, 1), 1.0, (("kind", ("a", "b", "x")),))
    with pytest.raises(AdaptationError, match="has classes"):
        adapt_reader(type("R", (), {"__init__": lambda self: setattr(self, "m", model)})(), adaptation)


class ToyReader:
    game = "toy"

    def __init__(self) -> None:
        self.classifier = ToyModel()
        self.other = 3

    def read(self, x: np.ndarray) -> np.ndarray:
        return self.classifier.run(x)["kind"]


def test_reset_restores_shipped_behaviour_exactly(tmp_path) -> None:
    adaptation, _ = _saved()
    reader = ToyReader()
    x, _ = _domain(np.random.default_rng(8), 50, shift=True)
    shipped = reader.read(x)
    adapted_reader = adapt_reader(reader, adaptation)
    assert adapted_reader is not reader and isinstance(reader.classifier, ToyModel)  # the shipped reader is untouched
    assert not np.array_equal(adapted_reader.read(x), shipped)
    assert adapt_reader(reader, None) is reader
    assert adapt_reader(reader, Adaptation(())) is reader
    np.testing.assert_array_equal(adapt_reader(reader, None).read(x), shipped)
    out = reader.classifier.run(x)
    assert apply_head(None, "toy", out) is out
    assert apply_head(adaptation, "other_model", out) is out


@pytest.mark.parametrize(
    ("game", "value", "expected"),
    [
        ("sagrada", "B4", {"die": "die", "colour": "B", "value": "4"}),
        ("sagrada", ".", {"die": "empty"}),
        # an empty cell with the pattern card's print under it (``cell_label``): blank, a colour, a value
        ("sagrada", "..", {"die": "empty", "colour": "none", "value": "none"}),
        ("sagrada", ".P", {"die": "empty", "colour": "P", "value": "none"}),
        ("sagrada", ".6", {"die": "empty", "colour": "none", "value": "6"}),
        ("sagrada", ".X", {}),
        ("sagrada", "X9", {}),
        ("alhambra", "fountain", {"kind": "fountain", "walls": (0, 0, 0, 0), "rotation": "0"}),
        # the heads a reading uses: the kind, each wall (top, right, bottom, left), the turn; not the price
        # (the price octagon reader's: test_the_tile_classifier_price_is_never_read_so_never_taught)
        ("alhambra", "tower:NE", {"kind": "tower", "walls": (1, 1, 0, 0), "rotation": "0"}),
        ("alhambra", "castle:NE", {}),
        ("alhambra", "", {"kind": "none"}),
    ],
)
def test_head_labels(game, value, expected) -> None:
    assert head_labels(game, value) == expected


def test_the_tile_classifier_price_is_never_read_so_never_taught() -> None:
    """A building tile's price is the octagon reader's whatever the tile classifier's price head says: adapting that
    head would change no reading, and its held-out misses would count against the walls and kinds that are read."""
    from scanner.alhambra.octagon import OctagonPredictions, merge_octagons
    from scanner.alhambra.tiles import KINDS, PRICES, TilePredictions
    from scoring.alhambra.tiles import CATALOGUE

    rng = np.random.default_rng(5)

    def rows(n: int, width: int) -> np.ndarray:
        p = rng.random((n, width))
        return p / p.sum(axis=1, keepdims=True)

    octagons = OctagonPredictions(
        np.tile([0.9, 0.05, 0.03, 0.02], (2, 1)), rows(8, 6).reshape(2, 4, 6), rows(8, len(PRICES)).reshape(2, 4, 12)
    )
    merged = []
    for _ in range(2):  # two different price heads, the same octagons
        tiles = TilePredictions(rows(3, len(KINDS)), rng.random((3, 4)), rows(3, len(PRICES)), rows(3, 4))
        merged.append(merge_octagons(tiles, [0, 2], octagons).price)
    assert np.allclose(merged[0][[0, 2]], merged[1][[0, 2]]) and not np.allclose(merged[0][1], merged[1][1])
    for tile in CATALOGUE:
        value = "fountain" if tile.type == "fountain" else f"{tile.type}:{tile.walls}"
        assert "price" not in head_labels("alhambra", value)


def test_head_labels_unknown_game() -> None:
    with pytest.raises(AdaptationError, match="no adaptable classifier"):
        head_labels("splendor", "3")


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 9)), min_size=2, max_size=40), st.integers(0, 5))
def test_holdout_split_is_a_partition_and_keeps_photos_and_cells_whole(rows, seed) -> None:
    groups = np.array([g for g, _ in rows])
    items = np.array([g * 10 + i for g, i in rows])  # a cell belongs to one photo
    train, test = split_holdout(groups, seed=seed, items=items)
    assert sorted(np.concatenate([train, test]).tolist()) == list(range(len(groups)))
    assert len(test) >= 1
    assert not set(items[train].tolist()) & set(items[test].tolist())
    if len(np.unique(groups)) >= 2:
        assert not set(groups[train].tolist()) & set(groups[test].tolist())
        assert len(train) >= 1


def test_dihedral_copies_are_the_eight_turns_and_mirrors() -> None:
    from scanner.adapt import dihedral

    crop = np.arange(4 * 4 * 3, dtype=np.uint8).reshape(1, 4, 4, 3)
    copies, variants = dihedral(np.concatenate([crop, crop + 100]))
    assert copies.shape == (16, 4, 4, 3) and variants.tolist() == list(range(8)) * 2
    np.testing.assert_array_equal(copies[0], crop[0])
    np.testing.assert_array_equal(copies[8], crop[0] + 100)
    assert len({c.tobytes() for c in copies[:8]}) == 8


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000))
def test_fit_never_raises_training_loss(seed) -> None:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(30, 4))
    z = rng.normal(size=(30, 3))
    y = rng.integers(0, 3, 30)
    from scanner.adapt import log_loss

    fit = fit_head("h", CLASSES, x, z, y, l2=0.01, steps=100)
    assert log_loss(fit.adjust(x, z), y) <= log_loss(z, y) + 1e-9


def _head_data(rng: np.random.Generator, rows: int, binary: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features of uneven scales, shipped logits and labels (some -1: unlabelled) of a 3-class head, or a binary one's 0/1 rows."""
    x = rng.normal(size=(rows, 5)) * rng.uniform(0.2, 3.0, 5)
    z = rng.normal(size=(rows, 3))
    y = (rng.random((rows, 3)) < 0.4).astype(np.int64) if binary else rng.integers(-1, 3, rows)
    return x, z, y


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000), st.booleans())
def test_heads_fitted_side_by_side_are_those_fitted_one_by_one(seed, binary) -> None:
    from scanner.adapt.head import fit_heads

    x, z, y = _head_data(np.random.default_rng(seed), 40, binary)
    strengths = (1.0, 3e-3, 0.1)
    together = fit_heads("h", CLASSES, x, z, y, temperature=0.8, l2s=strengths, steps=60, binary=binary)
    alone = [fit_head("h", CLASSES, x, z, y, temperature=0.8, l2=l2, steps=60, binary=binary) for l2 in strengths]
    for a, b in zip(together, alone):
        np.testing.assert_allclose(a.weights, b.weights, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(a.bias, b.bias, rtol=1e-9, atol=1e-12)
        assert a.logit_scale == pytest.approx(b.logit_scale, rel=1e-9) and a.binary == binary
    # each strength is its own: the strongest pull keeps its weights smallest
    assert np.abs(together[0].weights).sum() < np.abs(together[1].weights).sum()


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000), st.booleans())
def test_heads_fitted_on_parts_together_are_those_fitted_on_each_part(seed, binary) -> None:
    from scanner.adapt.head import fit_heads

    rng = np.random.default_rng(seed)
    x, z, y = _head_data(rng, 41, binary)
    order = rng.permutation(41)
    parts = [np.sort(order[:17]), np.sort(order[17:])]  # of unequal sizes: the shorter part is padded
    strengths = (1.0, 0.01)
    together = fit_heads("h", CLASSES, x, z, y, temperature=0.8, l2s=strengths, steps=60, binary=binary, parts=parts)
    apart = [
        fit
        for part in parts
        for fit in fit_heads("h", CLASSES, x[part], z[part], y[part], temperature=0.8, l2s=strengths, steps=60, binary=binary)
    ]
    assert len(together) == len(apart) == 4
    for a, b in zip(together, apart):
        np.testing.assert_allclose(a.mean, b.mean, rtol=1e-12)
        np.testing.assert_allclose(a.scale, b.scale, rtol=1e-12)
        np.testing.assert_allclose(a.adjust(x, z), b.adjust(x, z), rtol=1e-9, atol=1e-9)
        assert a.logit_scale == pytest.approx(b.logit_scale, rel=1e-9)
    # each part learns its own rows: the two parts' heads differ
    assert not np.allclose(together[0].weights, together[2].weights)


def test_heads_fitted_on_parts_need_labelled_rows_in_each() -> None:
    from scanner.adapt.head import fit_heads

    rng = np.random.default_rng(0)
    x, z = rng.normal(size=(6, 2)), rng.normal(size=(6, 3))
    y = np.array([0, 1, 2, -1, -1, -1])
    with pytest.raises(ValueError, match="no labelled examples"):
        fit_heads("h", CLASSES, x, z, y, parts=[np.arange(3), np.arange(3, 6)])


# --------------------------------------------------------------------------------------------
# the command: learn from an export-corrections folder, keep, refuse, reset

SAGRADA_HEADS = (
    ("die", ("empty", "die")),
    ("colour", ("none", "R", "Y", "G", "B", "P")),
    ("value", ("none", "1", "2", "3", "4", "5", "6")),
)
SHIPPED_LOOK = {"R": (200, 30, 30), "Y": (230, 200, 40), "G": (40, 150, 60), "B": (30, 80, 200), "P": (120, 40, 140)}
# another printing of the game: every colour is off, several enough to be read as a neighbour
OTHER_LOOK = {"R": (225, 125, 45), "Y": (190, 215, 60), "G": (40, 140, 150), "B": (110, 60, 200), "P": (170, 60, 110)}


class ToyDice(OnnxModel):
    """A stand-in for sagrada_dice: colour logits from the crop centre's mean colour, fixed die/value logits."""

    def __init__(self, sha256: str = "5" * 64) -> None:
        self.manifest = Manifest("sagrada_dice", "1", sha256, ("empty", "die"), (1, 3, 48, 48), 1.0, SAGRADA_HEADS)
        self.output_names = ["die", "colour", "value", "embedding"]
        self.input_name = "input"
        self.path = "toy/sagrada_dice/model.onnx"

    def run(self, batch: np.ndarray) -> dict[str, np.ndarray]:
        centre = batch[:, :, 16:32, 16:32].mean(axis=(2, 3)) * 255.0  # (N, 3)
        protos = np.array([(128, 128, 128)] + [SHIPPED_LOOK[c] for c in "RYGBP"], np.float64)
        colour = -((centre[:, None, :] - protos[None]) ** 2).sum(axis=2) / 800.0
        n = len(batch)
        return {
            "die": np.tile(np.float32([0, 2]), (n, 1)),
            "colour": colour.astype(np.float32),
            "value": np.tile(np.float32([2, 0, 0, 0, 0, 0, 0]), (n, 1)),
            "embedding": (centre / 255.0).astype(np.float32),
        }


def _cell_crop(rng: np.random.Generator, rgb: tuple[int, int, int], size: int = 96) -> np.ndarray:
    crop = np.full((size, size, 3), 20.0)
    crop[12:-12, 12:-12] = rgb
    return np.clip(crop + rng.normal(0, 12, crop.shape), 0, 255).astype(np.uint8)


def _export_folder(folder, look: dict, photos: int = 3, per_photo: int = 14, seed: int = 0) -> None:
    from PIL import Image

    rng = np.random.default_rng(seed)
    items = []
    for p in range(photos):
        for i in range(per_photo):
            colour = "RYGBP"[int(rng.integers(5))]
            label = f"{colour}{int(rng.integers(1, 7))}"
            relative = f"crops/sagrada/{label}/p{p}-{i}.png"
            (folder / relative).parent.mkdir(parents=True, exist_ok=True)
            Image.fromarray(_cell_crop(rng, look[colour])).save(folder / relative)
            items.append({"game": "sagrada", "label": label, "photo_sha256": f"photo{p}", "crop": relative})
    (folder / "index.json").write_text(json.dumps({"count": len(items), "items": items}))


def _colour_accuracy(model, look: dict, seed: int = 9) -> float:
    from scanner.adapt import crop_margin, pad_cell_crop

    rng = np.random.default_rng(seed)
    colours = ["RYGBP"[int(k)] for k in rng.integers(0, 5, 200)]
    crops = np.stack([pad_cell_crop(_cell_crop(rng, look[c]), 48, crop_margin("sagrada_dice")) for c in colours])
    batch = np.ascontiguousarray(crops.transpose(0, 3, 1, 2), dtype=np.float32) / 255.0
    read = np.argmax(model.run(batch)["colour"], axis=1)
    return float(np.mean(read == np.array([" RYGBP".index(c) for c in colours])))


@pytest.fixture
def toy_dice(monkeypatch, tmp_path):
    model = ToyDice()
    monkeypatch.setattr("scanner.model.load_model", lambda name: model)
    monkeypatch.setenv("TABLESCAN_PROFILE_DIR", str(tmp_path / "profiles"))
    return model


def test_adapt_command_keeps_what_helps_and_reset_removes_it(tmp_path, toy_dice) -> None:
    from click.testing import CliRunner

    from calibration.profile import load_profile
    from scanner.adapt import profile_adaptation
    from tablescan.cli import cli

    _export_folder(tmp_path / "export", OTHER_LOOK)
    runner = CliRunner()
    result = runner.invoke(cli, ["adapt", "--from", str(tmp_path / "export"), "--profile", "mine"])
    assert result.exit_code == 0, result.output
    assert "colour" in result.output and "kept the adaptation of sagrada_dice" in result.output
    profiles = tmp_path / "profiles"
    assert (profiles / "mine.adapt.npz").is_file()
    profile = load_profile("mine")
    assert profile.adaptation["sha256"] and profile.adaptation["models"] == ["sagrada_dice"]
    adaptation = profile_adaptation(profile)
    before = _colour_accuracy(toy_dice, OTHER_LOOK)
    after = _colour_accuracy(AdaptedModel(toy_dice, adaptation.model("sagrada_dice")), OTHER_LOOK)
    assert before < 0.7 and after > 0.95
    assert AdaptedModel(toy_dice, adaptation.model("sagrada_dice")).manifest.label.startswith("sagrada_dice 1+adapted")

    _export_folder(tmp_path / "few", OTHER_LOOK, photos=1, per_photo=3)  # too few to fit: the earlier adaptation stays
    result = runner.invoke(cli, ["adapt", "--from", str(tmp_path / "few"), "--profile", "mine"])
    assert result.exit_code == 0 and "kept nothing new" in result.output
    assert "earlier adaptation of sagrada_dice stays in use" in result.output
    assert load_profile("mine").adaptation == profile.adaptation

    result = runner.invoke(cli, ["adapt", "--reset", "--profile", "mine"])
    assert result.exit_code == 0 and "adaptation removed" in result.output
    assert not (profiles / "mine.adapt.npz").exists()
    assert load_profile("mine").adaptation is None and profile_adaptation(load_profile("mine")) is None


def test_a_first_adapt_that_keeps_nothing_still_makes_the_profile_it_names(tmp_path, toy_dice) -> None:
    """FORMATS.md: later scans with ``--profile NAME`` read with it; kept nothing, it reads with the shipped models."""
    from click.testing import CliRunner

    from calibration.errors import CalibrationError
    from calibration.profile import load_profile
    from tablescan.cli import cli

    with pytest.raises(CalibrationError, match="not found"):
        load_profile("first")
    _export_folder(tmp_path / "few", OTHER_LOOK, photos=1, per_photo=3)  # too few to fit anything
    result = CliRunner().invoke(cli, ["adapt", "--from", str(tmp_path / "few"), "--profile", "first"])
    assert result.exit_code == 0 and "kept nothing new" in result.output, result.output
    assert "scans keep using the shipped models (with `--profile first` too)" in result.output
    profile = load_profile("first")
    assert profile.adaptation is None and profile.camera is None and profile.colour is None
    assert not (tmp_path / "profiles" / "first.adapt.npz").exists()


def test_adapt_command_keeps_nothing_when_the_set_already_reads_right(tmp_path, toy_dice) -> None:
    from click.testing import CliRunner

    from tablescan.cli import cli

    _export_folder(tmp_path / "export", SHIPPED_LOOK)
    result = CliRunner().invoke(cli, ["adapt", "--from", str(tmp_path / "export")])
    assert result.exit_code == 0, result.output
    kept_before = (tmp_path / "profiles" / "default.adapt.npz").exists()
    assert ("kept nothing new" in result.output) != kept_before
    result = CliRunner().invoke(cli, ["adapt", "--from", str(tmp_path / "export"), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    colour = next(h for h in report["models"][0]["heads"] if h["head"] == "colour")
    assert colour["before"] == 1.0 and colour["after"] == 1.0
    if (tmp_path / "profiles" / "default.adapt.npz").exists():  # kept for other heads, or sharper colour odds
        from calibration.profile import load_profile
        from scanner.adapt import profile_adaptation

        adapted = AdaptedModel(toy_dice, profile_adaptation(load_profile("default")).model("sagrada_dice"))
        assert _colour_accuracy(adapted, SHIPPED_LOOK) == _colour_accuracy(toy_dice, SHIPPED_LOOK) == 1.0


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda folder: folder.mkdir(), "index.json: not found"),
        (lambda folder: (folder.mkdir(), (folder / "index.json").write_text("{")), "unreadable corrections index"),
        (lambda folder: (folder.mkdir(), (folder / "index.json").write_text('{"items": []}')), "no corrected or confirmed scans"),
    ],
    ids=["no-index", "bad-index", "empty"],
)
def test_adapt_command_bad_sources_exit_2_with_one_line(tmp_path, toy_dice, setup, message) -> None:
    from click.testing import CliRunner

    from tablescan.cli import cli

    setup(tmp_path / "export")
    result = CliRunner().invoke(cli, ["adapt", "--from", str(tmp_path / "export")])
    assert result.exit_code == 2
    assert message in result.output and result.output.count("\n") == 1


def test_corrupt_or_stale_profile_adaptation_is_refused(tmp_path, toy_dice) -> None:
    from click.testing import CliRunner

    from calibration.profile import load_profile
    from scanner.adapt import profile_adaptation
    from tablescan.cli import cli

    _export_folder(tmp_path / "export", OTHER_LOOK)
    assert CliRunner().invoke(cli, ["adapt", "--from", str(tmp_path / "export"), "--profile", "p"]).exit_code == 0
    adaptation = profile_adaptation(load_profile("p"))
    with pytest.raises(AdaptationError, match="retrained since"):
        AdaptedModel(ToyDice("6" * 64), adaptation.model("sagrada_dice"))
    path = tmp_path / "profiles" / "p.adapt.npz"
    path.write_bytes(path.read_bytes()[:-40])
    with pytest.raises(AdaptationError, match="is not the recorded"):
        profile_adaptation(load_profile("p"))


# --------------------------------------------------------------------------------------------
# examples from the review database's photos


class FakeScanner:
    """Reads every photo as the same 2x2 board; a photo named 'bad.jpg' cannot be read."""

    def __init__(self) -> None:
        self.calls = []

    def scan(self, source, game, *, corners=None, name=None):
        from types import SimpleNamespace

        from scanner.errors import BoardNotFoundError
        from scanner.reading import CellReading

        self.calls.append((str(source), game, None if corners is None else np.asarray(corners).tolist()))
        if str(source).endswith("bad.jpg") or (str(source).endswith("c.jpg") and corners is not None):
            raise BoardNotFoundError(f"{name}: board not found")
        cells = []
        for r in range(2):
            for c in range(2):
                square = ((c * 10.0, r * 10.0), (c * 10.0 + 10, r * 10.0), (c * 10.0 + 10, r * 10.0 + 10), (c * 10.0, r * 10.0 + 10))
                crop = np.full((48, 48, 3), 40 * (r * 2 + c), np.uint8)
                cells.append(CellReading((r, c), ".", 0.9, square, (), crop))
        return SimpleNamespace(cells=tuple(cells), photo=SimpleNamespace(scale=2.0))


def test_examples_from_photos_label_cells_by_centre() -> None:
    from scanner.adapt import LabelledPhoto, examples_from_photos

    model = ToyDice()
    # labels in full-photo px (scale 2): cell (0,0) centre (10,10), (1,1) centre (30,30); one label matches nothing
    photos = [
        LabelledPhoto("a.jpg", "sagrada", ((0, 0), (40, 0), (40, 40), (0, 40)), (((10, 11), "R3"), ((29, 30), "."), ((200, 200), "B2")), 7),
        LabelledPhoto("bad.jpg", "sagrada", None, (((10, 10), "G1"),), 8),
        LabelledPhoto("c.jpg", "sagrada", ((0, 0), (1, 0), (1, 1), (0, 1)), (((500, 500), "G1"),), 9, "kitchen.jpg"),
    ]
    scanner = FakeScanner()
    sets, notes = examples_from_photos(scanner, photos, load=lambda name: model)
    everything = sets["sagrada_dice"]
    assert len(everything) == 16 and everything.item_ids.tolist() == [0] * 8 + [1] * 8  # each cell turned and mirrored
    examples = everything.subset(np.flatnonzero(everything.as_read))
    assert len(examples) == 2 and examples.groups.tolist() == [7, 7]
    # the empty cell labels the die head alone: its colour and value heads read the pattern card's print
    assert examples.labels["colour"].tolist() == [1, -1] and examples.labels["value"].tolist() == [3, -1]
    assert examples.labels["die"].tolist() == [1, 0]
    np.testing.assert_allclose(examples.outputs["embedding"][:, 0], [0.0, 120 / 255], atol=1e-6)
    # read as first scanned (no corners); with the stored corners too while labelled cells remain unmatched
    assert scanner.calls[:2] == [("a.jpg", "sagrada", None), ("a.jpg", "sagrada", [[0, 0], [40, 0], [40, 40], [0, 40]])]
    assert len(notes) == 2 and "bad.jpg: skipped (bad.jpg: board not found)" in notes[0]
    assert notes[1].startswith("kitchen.jpg: skipped (no read cell matches")
    assert scanner.calls[-2:] == [("c.jpg", "sagrada", None), ("c.jpg", "sagrada", [[0, 0], [1, 0], [1, 1], [0, 1]])]


def test_review_database_boards_become_labelled_photos(tmp_path) -> None:
    from tablescan.adapt import labelled_photos
    from tablescan.review.db import Store

    store = Store(tmp_path / "review.sqlite3")
    game = store.create_game("sagrada", "evening", {}, [("Ana", {}), ("Bo", {})])
    ana, bo = (p["id"] for p in store.players(game))
    photo = store.add_photo("ab" * 32, ".jpg", b"jpeg bytes", "image/jpeg", (800, 600), "ana.jpg")
    store.attach_photo(game, ana, photo.id)
    square = [[0, 0], [10, 0], [10, 10], [0, 10]]
    store.store_scan(
        game,
        ana,
        [[0, 0], [50, 0], [50, 40], [0, 40]],
        "sagrada_dice 1",
        [
            {"cell": "0,0", "value": "R3", "confidence": 0.5, "polygon": square},
            {"cell": "0,1", "value": ".", "confidence": 0.9, "polygon": [[10, 0], [20, 0], [20, 10], [10, 10]]},
        ],
    )
    assert store.correct_cell(game, ana, "0,0", "Y3")
    store.set_initial_cells(bo, {"0,0": "G1"})  # typed in by hand, no photo: not an example
    splendor = store.create_game("splendor", "cards", {}, [("Cy", {})])
    assert splendor
    photos = labelled_photos(store)
    assert len(photos) == 1
    (labelled,) = photos
    assert labelled.game == "sagrada" and labelled.group == photo.id and labelled.source == store.photo_path(photo)
    assert labelled.name == "ana.jpg"
    assert labelled.corners == ((0, 0), (50, 0), (50, 40), (0, 40))
    assert dict((value, centre) for centre, value in labelled.cells) == {"Y3": (5.0, 5.0), ".": (15.0, 5.0)}


SHIPPED_DICE = Path(__file__).resolve().parents[2] / "models" / "sagrada_dice" / "model.onnx"


@pytest.mark.skipif(not SHIPPED_DICE.exists(), reason="the Sagrada dice model is not built")
def test_scanner_with_reset_profile_reads_exactly_as_shipped(tmp_path, monkeypatch, make_scanner) -> None:
    import cv2

    from calibration.profile import Profile, load_profile, save_profile
    from scanner.adapt import (
        HeadFit,
        ModelAdaptation,
        adaptation_file,
        profile_reference,
    )
    from scanner.model import load_model
    from tablescan.adapt import reset_profile

    monkeypatch.setenv("TABLESCAN_PROFILE_DIR", str(tmp_path))
    rng = np.random.default_rng(0)
    image = np.full((480, 640, 3), 60, np.uint8)
    for r in range(4):
        for c in range(5):
            image[80 + r * 80 + 8 : 80 + r * 80 + 72, 70 + c * 100 + 8 : 70 + c * 100 + 92] = rng.integers(0, 255, 3)
    photo = cv2.imencode(".png", image[:, :, ::-1])[1].tobytes()
    corners = np.array([[70, 80], [570, 80], [570, 400], [70, 400]], float)
    shipped = make_scanner().scan(photo, "sagrada", corners=corners, name="grid.png")

    dice = load_model("sagrada_dice")
    basis = tuple(sorted(head for head, _ in dice.manifest.heads))  # an affine re-fit on the logits
    dims = sum(len(classes) for _, classes in dice.manifest.heads)
    heads = tuple(
        HeadFit(
            head, tuple(classes), 1.0, np.zeros(dims), np.ones(dims), rng.normal(0, 2, (dims, len(classes))), rng.normal(0, 2, len(classes))
        )
        for head, classes in dice.manifest.heads
    )
    adaptation = Adaptation((ModelAdaptation("sagrada_dice", dice.manifest.sha256, basis, heads),))
    path = adaptation_file("mine")
    sha = save_adaptation(adaptation, path)
    save_profile(Profile("mine", adaptation=profile_reference(path, sha, adaptation)))
    adapted = make_scanner(load_profile("mine")).scan(photo, "sagrada", corners=corners, name="grid.png")
    assert [(c.value, c.confidence) for c in adapted.cells] != [(c.value, c.confidence) for c in shipped.cells]
    assert "+adapted" in adapted.player["scan"]["model"]

    assert reset_profile("mine")
    after = make_scanner(load_profile("mine")).scan(photo, "sagrada", corners=corners, name="grid.png")
    assert [(c.value, c.confidence, c.alternatives) for c in after.cells] == [
        (c.value, c.confidence, c.alternatives) for c in shipped.cells
    ]
    assert after.document["players"][0]["window"] == shipped.document["players"][0]["window"]
    assert after.player["scan"]["model"] == shipped.player["scan"]["model"]


# --------------------------------------------------------------------------------------------
# the review screen's button


@pytest.fixture
def review(tmp_path, monkeypatch):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient
    from tablescan.review.app import create_app

    monkeypatch.setenv("TABLESCAN_PROFILE_DIR", str(tmp_path / "profiles"))
    with TestClient(create_app(tmp_path / "review.sqlite3")) as client:
        yield client


def test_review_adapt_button_without_corrections_says_what_to_do(review) -> None:
    assert 'action="/adapt"' in review.get("/").text
    response = review.post("/api/adapt", json={"profile": "kitchen"})
    assert response.status_code == 422
    assert "no corrected or confirmed scans" in response.json()["error"]
    page = review.post("/adapt", data={"profile": "kitchen"})
    assert page.status_code == 422 and "no corrected or confirmed scans" in page.text
    assert review.post("/api/adapt", json={"profile": "../x"}).status_code == 400
    assert review.post("/api/adapt", content=b"[1]").status_code == 400


def test_review_adapt_button_runs_the_same_adaptation(review, monkeypatch) -> None:
    from tablescan import adapt as command

    calls = []

    def fake(name, *, store):
        calls.append((name, store.path.name))
        report = ModelReportStub()
        return command.AdaptOutcome(name, (report,), (), Path("/p/kitchen.adapt.npz"), ("sagrada_dice",))

    monkeypatch.setattr(command, "adapt_profile", fake)
    assert review.app.state.profile is None
    page = review.post("/adapt", data={"profile": ""})  # the box left empty: the review's profile, else default
    assert page.status_code == 200 and "--profile default" in page.text and "80.0% -&gt;  95.0%" in page.text
    assert review.app.state.profile == "default"  # kept: the screen's later scans read with it
    data = review.post("/api/adapt", json={"profile": "kitchen"}).json()
    assert data["saved"] == "/p/kitchen.adapt.npz" and data["kept"] == ["sagrada_dice"]
    assert review.post("/api/adapt").json()["profile"] == "kitchen"
    assert calls == [("default", "review.sqlite3"), ("kitchen", "review.sqlite3"), ("kitchen", "review.sqlite3")]


def ModelReportStub():
    from scanner.adapt import HeadReport, ModelReport

    head = HeadReport("colour", 40, 20, 0.8, 0.95, 0.5, 0.2, 0.01, True, "more held-out cells right")
    return ModelReport("sagrada_dice", ("embedding",), 60, 3, (head,), 0.8, 0.95)


def test_doctests_of_the_adaptation_module() -> None:
    import doctest

    import scanner.adapt

    failures, tried = doctest.testmod(scanner.adapt)
    assert tried >= 10 and failures == 0


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 9)), min_size=2, max_size=60), st.integers(0, 5))
def test_holdout_folds_never_train_on_what_they_check(rows, seed) -> None:
    from scanner.adapt import holdout_folds

    groups = np.array([g for g, _ in rows])
    items = np.array([g * 10 + i for g, i in rows])
    folds = holdout_folds(groups, items, seed)
    held = np.concatenate([test for _, test in folds])
    assert len(held) == len(set(held.tolist()))  # nobody is checked twice
    assert sorted(held.tolist()) == list(range(len(groups)))  # everybody is checked once
    for train, test in folds:
        assert not set(items[train].tolist()) & set(items[test].tolist())
        if len(np.unique(groups)) >= 2:  # whole photos held out, with every cell they show; one photo: its cells
            assert not set(groups[train].tolist()) & set(groups[test].tolist())


def test_review_adapt_form_shows_a_bad_profile_name_beside_its_field(review) -> None:
    page = review.post("/adapt", data={"profile": "../x"})
    assert page.status_code == 400
    assert 'id="profile-error"' in page.text  # on the start page, beside the field, not on an error page
    assert 'value="../x"' in page.text  # what was typed comes back
    assert 'action="/adapt"' in page.text
