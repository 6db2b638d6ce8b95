"""Alhambra models: shipped files match their manifests and cards; the renderer gives legal, exact labels."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import numpy as np
import pytest

from models.alhambra.render import render
from scanner.alhambra.octagon import MODEL as OCTAGON_MODEL
from scanner.alhambra.octagon import PATCH_PX
from scanner.alhambra.reader import CROP_PX, KINDS, LOCATE_MODEL, LOCATE_SIZE, PRICES, TILES_MODEL
from scanner.errors import ModelError
from scanner.model import OnnxModel, load_manifest
from scoring.alhambra.palace import BUILDING_TYPES
from scoring.registry import GAMES

MODELS = Path(__file__).resolve().parents[2] / "models"


@pytest.mark.parametrize(
    "name, shape",
    [
        (LOCATE_MODEL, [1, 3, LOCATE_SIZE[1], LOCATE_SIZE[0]]),
        (TILES_MODEL, [1, 3, CROP_PX, CROP_PX]),
        (OCTAGON_MODEL, [1, 3, PATCH_PX, PATCH_PX]),
    ],
)
def test_shipped_model_matches_manifest_and_card(name, shape):
    folder = MODELS / name
    data = (folder / "model.onnx").read_bytes()
    manifest = load_manifest(folder / "manifest.json")
    assert len(data) <= 2 * 1024 * 1024
    assert hashlib.sha256(data).hexdigest() == manifest.sha256
    assert list(manifest.input_shape) == shape
    card = (folder / "MODEL_CARD.md").read_text()
    assert manifest.sha256 in card
    assert str(shape) in card


def test_tile_model_heads_and_temperatures():
    manifest = load_manifest(MODELS / TILES_MODEL / "manifest.json")
    assert dict(manifest.heads)["kind"] == KINDS
    assert set(dict(manifest.temperatures)) == {"kind", "walls", "price", "rotation"}
    assert all(0.2 < t < 6 for _, t in manifest.temperatures)
    model = OnnxModel(TILES_MODEL)
    out = model.run(np.zeros((3, 3, CROP_PX, CROP_PX), np.float32))
    assert out["kind"].shape == (3, len(KINDS)) and out["walls"].shape == (3, 4)


def test_octagon_model_heads_and_temperatures():
    manifest = load_manifest(MODELS / OCTAGON_MODEL / "manifest.json")
    assert dict(manifest.heads)["kind"] == BUILDING_TYPES and dict(manifest.heads)["price"] == PRICES
    assert set(dict(manifest.temperatures)) == {"present", "kind", "price"}
    assert all(0.2 < t < 6 for _, t in manifest.temperatures)
    out = OnnxModel(OCTAGON_MODEL).run(np.zeros((5, 3, PATCH_PX, PATCH_PX), np.float32))
    assert out["present"].shape == (5,) and out["kind"].shape == (5, len(BUILDING_TYPES)) and out["price"].shape == (5, len(PRICES))


def test_octagon_reader_reads_held_out_renders():
    """On photos it never trained on (held-out seeds, each training style), through the true lattice: which corner, type, price."""
    from models.alhambra.make_dataset import OCTAGON_RENDER
    from scanner.alhambra.octagon import crop_octagons, price_patches, read_close, read_octagons

    model = OnnxModel(OCTAGON_MODEL)
    corner_right = kind_right = price_right = close_right = close_kind_right = close_seen = tiles = 0
    for seed, style in ((2_000_001, "classic"), (2_000_002, "woodcut"), (2_000_003, "collage")):
        sample = render(seed, style=style, randomise=True, card=True, size=12, **OCTAGON_RENDER)
        info = sample.label["render"]
        buildings = [cell for cell in info["cells"] if cell["value"] != "fountain"]
        patches = crop_octagons(sample.image_rgb, np.asarray(info["grid_to_photo"]), [tuple(cell["at"]) for cell in buildings])
        read = read_octagons(model, dict(model.manifest.temperatures), patches)
        close_kind, close, close_present = read_close(
            model,
            dict(model.manifest.temperatures),
            price_patches(sample.image_rgb, np.asarray(info["grid_to_photo"]), [tuple(cell["at"]) for cell in buildings], 0),
        )
        for i, cell in enumerate(buildings):  # the render's grid is upright: the octagon is in patch 0
            tiles += 1
            corner_right += int(read.present[i].argmax() == 0)
            kind_right += BUILDING_TYPES[int(read.kind[i, 0].argmax())] == cell["value"].split(":")[0]
            price_right += PRICES[int(read.price[i, 0].argmax())] == str(cell["price"])
            close_right += PRICES[int(close[i].argmax())] == str(cell["price"])
            close_kind_right += BUILDING_TYPES[int(close_kind[i].argmax())] == cell["value"].split(":")[0]
            close_seen += close_present[i] >= 0.5
    assert tiles == 36
    assert corner_right == tiles and kind_right == tiles
    assert price_right >= 0.9 * tiles
    assert close_right >= 0.9 * tiles and close_kind_right >= 0.9 * tiles, (
        f"the close patches read {close_right} prices, {close_kind_right} types of {tiles}"
    )
    assert close_seen == tiles, f"an octagon seen in {close_seen} of {tiles} close patches"


def test_octagon_reader_reads_the_digit_not_what_the_catalogue_pairs_with_the_colour():
    """Held-out renders whose tiles are printed with other prices and walls than the catalogue's: the price is the digit drawn.

    A reader trained on catalogue tiles alone read a price from the octagon's colour and the walls
    beside it (the catalogue all but pairs them): on such tiles it read 40-44% of prices right.
    """
    from models.alhambra.make_dataset import OCTAGON_RENDER
    from scanner.alhambra.octagon import price_patches, read_close

    model = OnnxModel(OCTAGON_MODEL)
    right = sure_wrong = tiles = 0
    for seed, style in ((2_000_011, "painted"), (2_000_012, "woodcut"), (2_000_013, "collage"), (2_000_014, "classic")):
        sample = render(seed, style=style, card=True, size=12, off_catalogue=1.0, **OCTAGON_RENDER)
        info = sample.label["render"]
        buildings = [cell for cell in info["cells"] if cell["value"] != "fountain"]
        grid = np.asarray(info["grid_to_photo"])
        _, price, _ = read_close(
            model, dict(model.manifest.temperatures), price_patches(sample.image_rgb, grid, [tuple(c["at"]) for c in buildings], 0)
        )
        for i, cell in enumerate(buildings):
            tiles += 1
            read = PRICES[int(price[i].argmax())]
            right += read == str(cell["price"])
            sure_wrong += read != str(cell["price"]) and price[i].max() >= 0.9
    assert tiles == 48
    assert right >= 0.85 * tiles and sure_wrong <= 2, f"{right} of {tiles} prices right, {sure_wrong} wrong at >= 90%"


def test_off_catalogue_renders_print_and_label_other_prices_and_walls():
    """``off_catalogue``: about that share of tiles get another price, apart another walls, labelled as drawn; 0 draws nothing."""
    from models.alhambra.render import catalogue

    listed = {(tile["type"], tile["price"], tile["walls"]) for tile in catalogue()}
    assert np.array_equal(render(7, out_size=(640, 480)).image_rgb, render(7, out_size=(640, 480), off_catalogue=0.0).image_rgb)
    changed = price_changed = tiles = 0
    for seed in range(20):
        plain, off = render(seed, out_size=(320, 240), size=12), render(seed, out_size=(320, 240), size=12, off_catalogue=0.5)
        for before, after in zip(plain.label["render"]["cells"], off.label["render"]["cells"]):
            assert before["at"] == after["at"]
            if before["value"] == "fountain":
                continue
            tiles += 1
            kind, _, walls = after["value"].partition(":")
            assert 2 <= after["price"] <= 13 and set(walls) <= set("NESW") and kind == before["value"].partition(":")[0]
            moved = (after["value"], after["price"]) != (before["value"], before["price"])
            changed += moved
            price_changed += after["price"] != before["price"]
            assert (after["tile_id"] is None) == moved
            assert moved or (kind, after["price"], walls) in listed
    assert tiles == 240
    assert 0.6 * tiles < changed < 0.9 * tiles and 0.35 * tiles < price_changed < 0.65 * tiles


def test_truncated_model_names_the_file_and_the_rebuild(tmp_path):
    folder = tmp_path / TILES_MODEL
    folder.mkdir()
    (folder / "manifest.json").write_text((MODELS / TILES_MODEL / "manifest.json").read_text())
    (folder / "model.onnx").write_bytes((MODELS / TILES_MODEL / "model.onnx").read_bytes()[:1000])
    with pytest.raises(ModelError, match=r"model.onnx.*models.alhambra.train"):
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
    from models.alhambra.render import PRICE_FILL, draw_tile

    rng = np.random.default_rng(0)
    for kind, colour in PRICE_FILL.items():
        art = draw_tile({"type": kind, "walls": "", "price": 7}, rng, 128)
        patch = art[int(0.79 * 128) - 12 : int(0.79 * 128) - 8, int(0.79 * 128) - 3 : int(0.79 * 128) + 3]
        assert np.abs(patch.reshape(-1, 3).mean(axis=0) - colour).max() < 45, kind


class _Refusing:
    def read(self, photo, **_):
        from scanner.errors import BoardNotFoundError

        raise BoardNotFoundError(f"{photo.name}: photo too dark")


class _Misaligned:
    """The shipped reader, but its lattice reported 20% of a pitch off and one tile's reading spoiled."""

    def __init__(self, reader) -> None:
        self.reader = reader

    def read(self, photo, trace):
        import dataclasses

        from scanner.alhambra.reader import Lattice

        reading = self.reader.read(photo, trace=trace)
        lattice = trace["lattice"]
        moved = lattice.grid_to_image @ np.array([[1, 0, 0.2], [0, 1, 0], [0, 0, 1]])
        trace["lattice"] = Lattice(lattice.cells, moved, lattice.pitch_px, lattice.stray, lattice.far)
        cells = list(reading.cells)
        index = next(i for i, cell in enumerate(cells) if cell.value != "fountain")
        spoiled = "tower:NESW" if cells[index].value != "tower:NESW" else "garden:NESW"
        cells[index] = dataclasses.replace(cells[index], value=spoiled)
        return dataclasses.replace(reading, cells=tuple(cells))


def test_diagnosis_blames_the_right_stage():
    from models.alhambra.diagnose import diagnose_photo
    from scanner.alhambra.reader import make_reader

    seed = 2_500_000  # read exactly by the shipped reader
    truth = len(render(seed).label["render"]["cells"])
    reader = make_reader()
    assert diagnose_photo(reader, seed)["wrong"] == 0
    refused = diagnose_photo(_Refusing(), seed)
    assert refused["causes"] == {"refused": truth} and "too dark" in refused["note"]
    misaligned = diagnose_photo(_Misaligned(reader), seed)
    assert misaligned["wrong"] == 1 and misaligned["causes"] == {"crop misaligned": 1}


def test_misalign_moves_crops_by_at_most_the_shift_and_keeps_some_still():
    torch = pytest.importorskip("torch", reason="training code needs the train extra")

    from models.alhambra.train import SHIFT, SHIFT_P, _misalign
    from scanner.alhambra.reader import CROP_MARGIN

    n = 400
    x = torch.zeros(n, 3, CROP_PX, CROP_PX)
    x[:, :, 30:34, 30:34] = 1.0  # a bright dot at the centre
    y = _misalign(x, torch.Generator().manual_seed(1))
    weight = y[:, 0]
    grid = torch.arange(CROP_PX, dtype=torch.float32) + 0.5
    cx = (weight.sum(1) * grid).sum(1) / weight.sum((1, 2))
    cy = (weight.sum(2) * grid).sum(1) / weight.sum((1, 2))
    moved = torch.hypot(cx - 32, cy - 32)
    pitch_px = CROP_PX / (1 + 2 * CROP_MARGIN)
    limit = SHIFT * pitch_px * 2**0.5 + 1.0  # both axes at the limit, plus a pixel for the turn/scale
    assert moved.max() <= limit
    assert moved.max() > 0.7 * SHIFT * pitch_px  # some crops really are moved far
    still = (moved < 0.05).float().mean()
    assert abs(still - (1 - SHIFT_P)) < 0.08
    assert torch.equal(y, _misalign(x, torch.Generator().manual_seed(1)))  # seeded: reproducible


def test_train_only_retrains_what_it_names(monkeypatch):
    pytest.importorskip("torch", reason="training code needs the train extra")
    pytest.importorskip("onnx", reason="training code needs the train extra")
    from models.alhambra import export, train

    calls = []
    arrays = {key: np.zeros(2) for key in train.OCTAGON_KEYS}
    monkeypatch.setattr(train, "build", lambda split, count, workers=2: calls.append(("build", split)) or dict(arrays))
    monkeypatch.setattr(train, "train_locate", lambda data, config: calls.append("train_locate") or "locate")
    monkeypatch.setattr(train, "train_tiles", lambda data, config: calls.append(("train_tiles", config.epochs)) or "net")
    monkeypatch.setattr(
        train,
        "train_octagon",
        lambda data, config, negative_share: (
            calls.append(("train_octagon", config.epochs, len(data["oct_present"]), negative_share)) or "oct"
        ),
    )
    monkeypatch.setattr(train, "fit_temperatures", lambda net, data: {"kind": 1.0})
    monkeypatch.setattr(train, "fit_octagon_temperatures", lambda net, data: {"kind": 1.0})
    monkeypatch.setattr(export, "export_locate", lambda net, recipe: calls.append("export_locate"))
    monkeypatch.setattr(export, "export_tiles", lambda net, temps, recipe: calls.append(("export_tiles", sorted(recipe))))
    monkeypatch.setattr(export, "export_octagon", lambda net, temps, recipe: calls.append(("export_octagon", sorted(recipe))))

    def trained() -> list:
        names = [call if isinstance(call, str) else call[0] for call in calls]
        return [name for name in names if name.startswith(("train_", "export_"))]

    train.main(["--only", "tiles", "--tile-epochs", "3", "--skip-evaluate", "--threads", "1"])
    assert ("train_tiles", 3) in calls and trained() == ["train_tiles", "export_tiles"]
    assert "locate_epochs" not in calls[-1][1] and "tile_misalign" in calls[-1][1]
    calls.clear()
    train.main(["--only", "readers", "--octagon-epochs", "2", "--skip-evaluate", "--threads", "1"])
    # the octagon reader learns from the training renders and the sharp photos together, calibrated on the val set
    assert ("build", "octagon") in calls and ("train_octagon", 2, 4, train.CONFIG.octagon_negative_share) in calls
    assert trained() == ["train_tiles", "export_tiles", "train_octagon", "export_octagon"]
    assert "locate_epochs" not in calls[-1][1] and "octagon_renders" in calls[-1][1]
    calls.clear()
    train.main(["--skip-evaluate", "--threads", "1"])  # the full command trains and exports all three
    assert trained() == ["train_tiles", "export_tiles", "train_locate", "export_locate", "train_octagon", "export_octagon"]

    # on two cores: the octagon photos are rendered before the lanes start; the octagon reader (the
    # longest) trains in this process, the tile classifier and then the locator in the other lane
    lanes = []

    def inline_lane(target, *args):
        calls.append("lane starts")
        lanes.append(args[4])
        target(*args)
        calls.append("lane ends")

    monkeypatch.setattr(train.fast, "start_lane", inline_lane)
    monkeypatch.setattr(train.fast, "join_lane", lambda process, what: calls.append(("joined", what)))
    calls.clear()
    train.main(["--skip-evaluate", "--threads", "2"])
    assert lanes == [("locate", "tiles")]
    order = [call if isinstance(call, str) else call[0] for call in calls]
    assert order.index("build") < order.index("lane starts") and ("build", "octagon") in calls[: order.index("lane starts")]
    assert trained() == ["train_tiles", "export_tiles", "train_locate", "export_locate", "train_octagon", "export_octagon"]
    assert calls[-1] == ("joined", "locate and tiles")


def test_octagon_epochs_keep_every_octagon_and_a_share_of_the_rest(monkeypatch):
    torch = pytest.importorskip("torch", reason="training code needs the train extra")
    from models.alhambra import train

    present = np.array([1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0])  # 2 octagons, 10 other corners
    data = {
        "oct_patches": np.zeros((12, 48, 48, 3), np.uint8),
        "oct_present": present,
        "oct_kind": np.where(present > 0, 2, -1),
        "oct_price": np.where(present > 0, 5, -1),
    }
    epochs = []

    def fake_fit(net, count, step, config, generator, *, draw, log):
        epochs.extend(draw(generator) for _ in range(3))
        assert count == len(epochs[0])
        return net

    monkeypatch.setattr(train, "fit", fake_fit)
    train.train_octagon(data, dataclasses.replace(train.CONFIG.octagon, epochs=3), negative_share=0.3)
    assert all(len(order) == 2 + 3 for order in epochs)  # both octagons and 3 of the 10 others, each epoch
    assert all({0, 6} <= set(order.tolist()) and len(set(order.tolist())) == 5 for order in epochs)
    assert len({tuple(sorted(order.tolist())) for order in epochs}) > 1  # the others are drawn anew

    # the presence loss weighs the kept negatives up: the same mean as over all of them
    logits = torch.tensor([2.0, -1.0, 0.5, -3.0])
    labels = torch.tensor([1, 0, 0, 0])
    unused = (torch.zeros(4, 6), torch.zeros(4, 12))
    ignored = torch.full((4,), -1)
    weighted = train.octagon_losses((logits, *unused), labels, ignored, ignored, negative_weight=3.0)
    full = torch.nn.functional.binary_cross_entropy_with_logits(
        torch.tensor([2.0, -1.0, -1.0, -1.0, 0.5, 0.5, 0.5, -3.0, -3.0, -3.0]), torch.tensor([1.0] + [0.0] * 9)
    )
    assert torch.isclose(weighted, full)
    plain = train.octagon_losses((logits, *unused), labels, ignored, ignored)
    assert torch.isclose(plain, torch.nn.functional.binary_cross_entropy_with_logits(logits, labels.float()))


def test_fast_training_arithmetic_matches_float32_and_hands_back_a_plain_network():
    torch = pytest.importorskip("torch", reason="training code needs the train extra")
    from models import fast
    from models.alhambra.net import TileNet

    torch.manual_seed(0)
    plain = TileNet().eval()
    quick = fast.prepare(TileNet())
    quick.load_state_dict(plain.state_dict())
    quick.eval()
    x = torch.rand(8, 3, CROP_PX, CROP_PX)
    with torch.no_grad():
        expected = plain(x)
        got = fast.forward(quick, x)
    assert all(g.dtype == torch.float32 for g in got)  # the losses see float32
    for e, g in zip(expected, got):  # bfloat16 products: close, not equal
        assert torch.allclose(e, g, atol=0.05 * float(e.abs().max()) + 0.02)
    quick.train()
    loss = sum(o.float().mean() for o in fast.forward(quick, x))
    loss.backward()
    assert all(p.grad is not None and p.grad.dtype == torch.float32 for p in quick.parameters() if p.requires_grad)
    done = fast.finish(quick)
    assert not done.training
    assert all(p.is_contiguous() for p in done.parameters())  # exported as a plain NCHW network


def test_every_building_teaches_the_price_in_its_close_patch_too(monkeypatch):
    """The octagon data's second look at each building is its close price patch, cut as the scanner cuts it (``price_patches``)."""
    from models.alhambra import make_dataset

    calls = []

    def spy(image, grid_to_image, cells, turn, nudge=None):
        calls.append((len(cells), turn, None if nudge is None else np.abs(nudge).max()))
        return np.full((len(cells), PATCH_PX, PATCH_PX, 3), 7, np.uint8)

    monkeypatch.setattr(make_dataset, "price_patches", spy)
    arrays = make_dataset.sample_arrays(500_003, sharp=True)
    assert len(calls) == 1
    count, turn, nudge = calls[0]
    close = np.flatnonzero((arrays["oct_patches"] == 7).all(axis=(1, 2, 3)))
    assert turn == 0 and len(close) == count and 0 < nudge <= 2 * make_dataset.PRICE_NUDGE
    assert (close == np.arange(len(arrays["oct_present"]) - count, len(arrays["oct_present"]))).all()  # the last patches
    assert (arrays["oct_present"][close] == 1).all() and (arrays["oct_price"][close] >= 0).all() and (arrays["oct_kind"][close] >= 0).all()
    corner = np.flatnonzero(arrays["oct_present"] == 1)[:count]  # each building's upright corner patch, in the same order
    assert (arrays["oct_price"][corner] == arrays["oct_price"][close]).all()
