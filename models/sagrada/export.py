"""Export the trained Sagrada networks to ONNX with their manifests (what ``scanner.model`` checks)."""

from __future__ import annotations

import torch

from models.export import manifest_for, to_onnx, write_model
from models.sagrada.make_dataset import COLOURS, VALUES
from models.sagrada.nets import CellEnsemble, CellNet, CellNetWithEmbedding
from scanner.model import Manifest
from scanner.sagrada.cells import CROP_PX
from scanner.sagrada.grid import FINDER_PX, PATCH_PX
from scanner.sagrada.lattice import LOCATE_SIZE


def _export(net: torch.nn.Module, size: int, manifest: Manifest) -> Manifest:
    outputs = [name for name, _ in manifest.outputs]
    return write_model(to_onnx(net, torch.zeros(1, 3, size, size), outputs, dynamic_batch=True), manifest)


def export_cells(net: CellNet | CellEnsemble, temperature: float) -> Manifest:
    """Export the cell classifier (heads die, colour, value, plus its embedding) with its fitted temperature."""
    heads = (("die", ("empty", "die")), ("colour", tuple(COLOURS)), ("value", tuple(VALUES)))
    outputs = (("die", "logits"), ("colour", "logits"), ("value", "logits"), ("embedding", "embedding"))
    manifest = manifest_for(
        "sagrada_dice",
        "sagrada",
        classes=("empty", "die"),
        heads=heads,
        outputs=outputs,
        input_shape=(1, 3, CROP_PX, CROP_PX),
        temperature=round(float(temperature), 4),
    )
    return _export(CellNetWithEmbedding(net), CROP_PX, manifest)


def export_finder(net: torch.nn.Module) -> Manifest:
    """Export the grid finder (mask logits)."""
    manifest = manifest_for(
        "sagrada_finder", "sagrada", classes=("grid",), outputs=(("mask", "logits"),), input_shape=(1, 3, FINDER_PX, FINDER_PX)
    )
    return _export(net, FINDER_PX, manifest)


def export_refiner(net: torch.nn.Module) -> Manifest:
    """Export the corner refiner (heatmap logits and top-left turn logits)."""
    manifest = manifest_for(
        "sagrada_refiner",
        "sagrada",
        classes=("TL", "TR", "BR", "BL"),
        heads=(("turn", ("0", "1", "2", "3")),),
        outputs=(("heat", "logits"), ("turn", "logits")),
        input_shape=(1, 3, PATCH_PX, PATCH_PX),
    )
    return _export(net, PATCH_PX, manifest)


def export_locate(net: torch.nn.Module) -> Manifest:
    """Export the cell-centre locator (centre heatmap and grid-mask logits)."""
    width, height = LOCATE_SIZE
    manifest = manifest_for(
        "sagrada_locate",
        "sagrada",
        classes=("cell centre", "grid"),
        outputs=(("heat", "logits"), ("mask", "logits")),
        input_shape=(1, 3, height, width),
    )
    return write_model(to_onnx(net, torch.zeros(1, 3, height, width), ["heat", "mask"], dynamic_batch=True), manifest)
