"""Export the trained Alhambra networks to ONNX with their manifests (read by ``scanner.model``)."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
from pathlib import Path

import onnx
import torch

from scanner.alhambra.reader import CROP_PX, KINDS, LOCATE_MODEL, LOCATE_SIZE, PRICES, ROTATIONS, TILES_MODEL

MODELS = Path(__file__).resolve().parents[1]
VERSION = "1"


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=MODELS, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _to_onnx(net: torch.nn.Module, example: torch.Tensor, outputs: list[str], dynamic_batch: bool) -> onnx.ModelProto:
    buffer = io.BytesIO()
    axes = {"input": {0: "batch"}, **{name: {0: "batch"} for name in outputs}} if dynamic_batch else None
    torch.onnx.export(net, example, buffer, input_names=["input"], output_names=outputs, dynamic_axes=axes, opset_version=17, dynamo=False)
    return onnx.load_from_string(buffer.getvalue())


def _write(name: str, model: onnx.ModelProto, manifest: dict) -> Path:
    folder = MODELS / name
    folder.mkdir(exist_ok=True)
    meta = {"classes": json.dumps(manifest["classes"]), "heads": json.dumps(manifest.get("heads", {})),
            "input": json.dumps(manifest["input"]), "commit": _commit(), "version": VERSION}
    del model.metadata_props[:]
    for key, value in meta.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    data = model.SerializeToString()
    (folder / "model.onnx").write_bytes(data)
    manifest = {"name": name, "version": VERSION, "sha256": hashlib.sha256(data).hexdigest(), **manifest, "commit": meta["commit"]}
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    print(f"{folder / 'model.onnx'}: {len(data) / 1024:.0f} KiB sha256 {manifest['sha256'][:12]}")
    _update_card(folder / "MODEL_CARD.md", manifest, len(data))
    return folder / "model.onnx"


def _update_card(path: Path, manifest: dict, size: int) -> None:
    """Fill the card's export block: file size, sha256, input, temperatures, recipe."""
    lines = [
        "<!-- export:start -->",
        f"**File.** `model.onnx`, {size / 1024:.0f} KiB, sha256 `{manifest['sha256']}`, version {manifest['version']}, commit {manifest['commit']}.",
        f"Input shape `{manifest['input']['shape']}` ({manifest['input']['dtype']}, {manifest['input']['layout']}, {manifest['input']['normalise']}).",
    ]
    if "temperatures" in manifest:
        lines.append("Temperatures: " + ", ".join(f"{k} {v}" for k, v in manifest["temperatures"].items()) + ".")
    lines.append("Training recipe: " + ", ".join(f"{k} {v}" for k, v in manifest.get("recipe", {}).items()) + ".")
    lines.append("<!-- export:end -->")
    block = "\n".join(lines)
    text = path.read_text(encoding="utf-8") if path.is_file() else f"# {manifest['name']}\n\n<!-- export:start -->\n<!-- export:end -->\n"
    start, end = text.index("<!-- export:start -->"), text.index("<!-- export:end -->") + len("<!-- export:end -->")
    path.write_text(text[:start] + block + text[end:], encoding="utf-8")


def export_locate(net: torch.nn.Module, recipe: dict) -> Path:
    """Write ``models/alhambra_locate/model.onnx`` and its manifest."""
    width, height = LOCATE_SIZE
    model = _to_onnx(net.eval(), torch.zeros(1, 3, height, width), ["heat", "mask"], dynamic_batch=False)
    manifest = {
        "classes": ["tile-centre", "tile-area"],
        "heads": {"heat": ["tile-centre"], "mask": ["tile-area"]},
        "input": {"shape": [1, 3, height, width], "dtype": "float32", "layout": "NCHW RGB",
                  "normalise": "x / 255, photo letterboxed to 320x240 (portrait transposed)"},
        "output": "logits at stride 4 (1, 1, 60, 80); sigmoid gives probabilities",
        "temperature": 1.0,
        "recipe": recipe,
    }
    return _write(LOCATE_MODEL, model, manifest)


def export_tiles(net: torch.nn.Module, temperatures: dict[str, float], recipe: dict) -> Path:
    """Write ``models/alhambra_tiles/model.onnx`` and its manifest (per-head temperatures)."""
    heads = ["kind", "walls", "price", "rotation"]
    net.eval().embedding_output = True  # plus the 128-d pooled features, for tablescan adapt
    try:
        model = _to_onnx(net, torch.zeros(1, 3, CROP_PX, CROP_PX), [*heads, "embedding"], dynamic_batch=True)
    finally:
        net.embedding_output = False
    manifest = {
        "outputs": {"logits": heads, "embedding": "embedding"},
        "classes": list(KINDS),
        "heads": {"kind": list(KINDS), "walls": ["top", "right", "bottom", "left"], "price": list(PRICES), "rotation": list(ROTATIONS)},
        "input": {"shape": [1, 3, CROP_PX, CROP_PX], "dtype": "float32", "layout": "NCHW RGB",
                  "normalise": "x / 255, crop of one lattice cell from scanner.alhambra.reader.crop_cells"},
        "temperature": temperatures.get("kind", 1.0),
        "temperatures": temperatures,
        "recipe": recipe,
    }
    return _write(TILES_MODEL, model, manifest)
