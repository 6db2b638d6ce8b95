"""Export a trained network to ``models/<name>/model.onnx`` with its manifest, the same way for every game.

The ONNX file's ``metadata_props`` repeat the manifest's name, version, classes, heads, input spec
and commit; ``manifest.json`` is written in the one format of ``scanner.model.Manifest``, with the
sha256 of the bytes just written.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import subprocess
import warnings
from pathlib import Path
from typing import Any

import onnx
import torch

from scanner.model import Manifest, save_manifest

MODELS = Path(__file__).resolve().parent
VERSION = "1"
PENDING = "0" * 64  # the sha256 of a manifest before its file is written


def commit() -> str:
    """The short id of the checked-out commit, or ``unknown`` outside a git checkout."""
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True, cwd=MODELS
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def to_onnx(net: torch.nn.Module, example: torch.Tensor, outputs: list[str], *, dynamic_batch: bool) -> onnx.ModelProto:
    """Trace ``net`` (in evaluation mode) on ``example`` into an ONNX graph, opset 17, input named ``input``."""
    buffer = io.BytesIO()
    axes = {"input": {0: "batch"}, **{name: {0: "batch"} for name in outputs}} if dynamic_batch else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # torch's stubs omit file objects as the target
        torch.onnx.export(
            net.eval(),
            (example,),
            buffer,  # type: ignore[arg-type]
            input_names=["input"],
            output_names=outputs,
            dynamic_axes=axes,
            opset_version=17,
            dynamo=False,
        )
    return onnx.load_from_string(buffer.getvalue())


def manifest_for(name: str, game: str, **fields: Any) -> Manifest:
    """A manifest for model ``name`` of ``game`` (version, train module and commit filled in; sha256 pending)."""
    return Manifest(name=name, version=VERSION, sha256=PENDING, train=f"models.{game}.train", commit=commit(), **fields)


def write_model(model: onnx.ModelProto, manifest: Manifest, models: Path = MODELS) -> Manifest:
    """Write ``models/<name>/model.onnx`` (metadata from ``manifest``) and its ``manifest.json``; return the manifest written.

    Raises:
        ValueError: the graph's outputs are not the manifest's ``outputs``.
    """
    names = [output.name for output in model.graph.output]
    if manifest.outputs and names != [name for name, _ in manifest.outputs]:
        raise ValueError(f"{manifest.name}: graph outputs {names} differ from the manifest's {[n for n, _ in manifest.outputs]}")
    folder = models / manifest.name
    folder.mkdir(parents=True, exist_ok=True)
    meta = {
        "classes": json.dumps(list(manifest.classes)),
        "heads": json.dumps({h: list(c) for h, c in manifest.heads}),
        "input": json.dumps(manifest.input_spec),
        "commit": manifest.commit,
        "name": manifest.name,
        "version": manifest.version,
    }
    del model.metadata_props[:]
    for key, value in meta.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    data = model.SerializeToString()
    (folder / "model.onnx").write_bytes(data)
    written = dataclasses.replace(manifest, sha256=hashlib.sha256(data).hexdigest())
    save_manifest(folder / "manifest.json", written)
    print(f"wrote {folder / 'model.onnx'} ({len(data) / 1024:.0f} KiB, sha256 {written.sha256[:12]})", flush=True)
    return written
