"""Export the trained Alhambra networks to ONNX with their manifests (read by ``scanner.model``)."""

from __future__ import annotations

from pathlib import Path

import torch

from models.alhambra.net import OctagonNet, TileNet
from models.export import manifest_for, to_onnx, write_model
from scanner.alhambra.octagon import MODEL as OCTAGON_MODEL
from scanner.alhambra.octagon import PATCH_PX
from scanner.alhambra.reader import CROP_PX, KINDS, LOCATE_MODEL, LOCATE_SIZE, PRICES, ROTATIONS, TILES_MODEL
from scanner.model import Manifest, RecipeValue
from scoring.alhambra.palace import BUILDING_TYPES

MODELS = Path(__file__).resolve().parents[1]


def write_card_block(path: Path, manifest: Manifest, size: int) -> None:
    """Fill the card's export block (file size, sha256, input, temperatures, recipe) from the manifest written."""
    lines = [
        "<!-- export:start -->",
        f"**File.** `model.onnx`, {size / 1024:.0f} KiB, sha256 `{manifest.sha256}`, version {manifest.version}, commit {manifest.commit}.",
        f"Input shape `{list(manifest.input_shape)}` ({manifest.input_dtype}, {manifest.input_layout}, {manifest.input_normalise}).",
    ]
    if manifest.temperatures:
        lines.append("Temperatures: " + ", ".join(f"{k} {v}" for k, v in manifest.temperatures) + ".")
    lines.append("Training recipe: " + ", ".join(f"{k} {v}" for k, v in manifest.recipe) + ".")
    lines.append("<!-- export:end -->")
    block = "\n".join(lines)
    text = path.read_text(encoding="utf-8") if path.is_file() else f"# {manifest.name}\n\n<!-- export:start -->\n<!-- export:end -->\n"
    start, end = text.index("<!-- export:start -->"), text.index("<!-- export:end -->") + len("<!-- export:end -->")
    path.write_text(text[:start] + block + text[end:], encoding="utf-8")


def _write(model: torch.nn.Module, example: torch.Tensor, manifest: Manifest, *, dynamic_batch: bool) -> Path:
    outputs = [name for name, _ in manifest.outputs]
    written = write_model(to_onnx(model, example, outputs, dynamic_batch=dynamic_batch), manifest, MODELS)
    folder = MODELS / written.name
    write_card_block(folder / "MODEL_CARD.md", written, (folder / "model.onnx").stat().st_size)
    return folder / "model.onnx"


def export_locate(net: torch.nn.Module, recipe: dict[str, RecipeValue]) -> Path:
    """Write ``models/alhambra_locate/model.onnx`` and its manifest."""
    width, height = LOCATE_SIZE
    logits = f"logits at stride 4 (1, 1, {height // 4}, {width // 4}); sigmoid gives probabilities"
    manifest = manifest_for(
        LOCATE_MODEL,
        "alhambra",
        classes=("tile-centre", "tile-area"),
        heads=(("heat", ("tile-centre",)), ("mask", ("tile-area",))),
        outputs=(("heat", logits), ("mask", logits)),
        input_shape=(1, 3, height, width),
        input_normalise=f"x / 255, photo letterboxed to {width}x{height} (portrait transposed)",
        recipe=tuple(recipe.items()),
    )
    return _write(net, torch.zeros(1, 3, height, width), manifest, dynamic_batch=False)


def export_tiles(net: TileNet, temperatures: dict[str, float], recipe: dict[str, RecipeValue]) -> Path:
    """Write ``models/alhambra_tiles/model.onnx`` and its manifest (per-head temperatures)."""
    heads = (
        ("kind", tuple(KINDS)),
        ("walls", ("top", "right", "bottom", "left")),
        ("price", tuple(PRICES)),
        ("rotation", tuple(ROTATIONS)),
    )
    manifest = manifest_for(
        TILES_MODEL,
        "alhambra",
        classes=tuple(KINDS),
        heads=heads,
        outputs=(*((head, "logits") for head, _ in heads), ("embedding", "embedding")),
        input_shape=(1, 3, CROP_PX, CROP_PX),
        input_normalise="x / 255, crop of one lattice cell from scanner.alhambra.reader.crop_cells",
        temperature=temperatures.get("kind", 1.0),
        temperatures=tuple(temperatures.items()),
        recipe=tuple(recipe.items()),
    )
    net.eval().embedding_output = True  # plus the 128-d pooled features, for tablescan adapt
    try:
        return _write(net, torch.zeros(1, 3, CROP_PX, CROP_PX), manifest, dynamic_batch=True)
    finally:
        net.embedding_output = False


def export_octagon(net: OctagonNet, temperatures: dict[str, float], recipe: dict[str, RecipeValue]) -> Path:
    """Write ``models/alhambra_octagon/model.onnx`` and its manifest (per-head temperatures)."""
    heads = (("present", ("upright-octagon",)), ("kind", tuple(BUILDING_TYPES)), ("price", tuple(PRICES)))
    manifest = manifest_for(
        OCTAGON_MODEL,
        "alhambra",
        classes=tuple(BUILDING_TYPES),
        heads=heads,
        outputs=tuple((head, "logits") for head, _ in heads),
        input_shape=(1, 3, PATCH_PX, PATCH_PX),
        input_normalise="x / 255, one corner patch of a tile (scanner.alhambra.octagon.crop_octagons) or its close price patch (price_patches)",
        temperature=temperatures.get("kind", 1.0),
        temperatures=tuple(temperatures.items()),
        recipe=tuple(recipe.items()),
    )
    return _write(net.eval(), torch.zeros(1, 3, PATCH_PX, PATCH_PX), manifest, dynamic_batch=True)
