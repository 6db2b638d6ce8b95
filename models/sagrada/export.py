"""Export the trained Sagrada networks to ONNX with their manifests (what ``scanner.model`` checks)."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import warnings
from pathlib import Path

import onnx
import torch

from models.sagrada.make_dataset import COLOURS, VALUES
from models.sagrada.nets import CellNetWithEmbedding
from scanner.sagrada.grid import FINDER_PX, PATCH_PX
from scanner.sagrada.cells import CROP_PX

MODELS = Path(__file__).resolve().parents[1]
VERSION = "1"


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True,
                              cwd=MODELS).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def write_model(net: torch.nn.Module, name: str, size: int, outputs: list[str], manifest: dict) -> Path:
    """Export ``net`` as ``models/<name>/model.onnx`` (dynamic batch) and write its ``manifest.json``."""
    folder = MODELS / name
    folder.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(net.eval(), (torch.zeros(1, 3, size, size),), buffer, input_names=["input"], output_names=outputs,
                          dynamic_axes={"input": {0: "batch"}, **{o: {0: "batch"} for o in outputs}}, opset_version=17,
                          dynamo=False)
    model = onnx.load_from_string(buffer.getvalue())
    spec = {"shape": [1, 3, size, size], "dtype": "float32", "layout": "NCHW RGB", "normalise": "x / 255"}
    meta = {"classes": json.dumps(manifest.get("classes", [])), "heads": json.dumps(manifest.get("heads", {})),
            "input": json.dumps(spec), "commit": _commit(), "name": name, "version": VERSION}
    del model.metadata_props[:]
    for key, value in meta.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    data = model.SerializeToString()
    path = folder / "model.onnx"
    path.write_bytes(data)
    full = {"name": name, "version": VERSION, "sha256": hashlib.sha256(data).hexdigest(), **manifest, "input": spec}
    (folder / "manifest.json").write_text(json.dumps(full, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path} ({len(data) / 1024:.0f} KiB)", flush=True)
    return path


def export_cells(net: torch.nn.Module, temperature: float) -> Path:
    """Export the cell classifier (heads die, colour, value) with its fitted temperature."""
    heads = {"die": ["empty", "die"], "colour": list(COLOURS), "value": list(VALUES)}
    return write_model(CellNetWithEmbedding(net), "sagrada_dice", CROP_PX, ["die", "colour", "value", "embedding"],
                       {"classes": ["empty", "die"], "heads": heads, "temperature": round(float(temperature), 4)})


def export_finder(net: torch.nn.Module) -> Path:
    """Export the grid finder (mask logits)."""
    return write_model(net, "sagrada_finder", FINDER_PX, ["mask"], {"classes": ["grid"], "temperature": 1.0})


def export_refiner(net: torch.nn.Module) -> Path:
    """Export the corner refiner (heatmap logits and top-left turn logits)."""
    return write_model(net, "sagrada_refiner", PATCH_PX, ["heat", "turn"],
                       {"classes": ["TL", "TR", "BR", "BL"], "heads": {"turn": ["0", "1", "2", "3"]}, "temperature": 1.0})
