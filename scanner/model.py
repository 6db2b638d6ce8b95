"""Shipped ONNX models: integrity-checked loading and calibrated inference with onnxruntime.

Each model lives in ``models/<name>/`` as ``model.onnx`` beside ``manifest.json``:
``{"name", "version", "sha256", "classes": [...], "input": {"shape": [1, 3, H, W], "dtype": "float32",
"layout": "NCHW RGB", "normalise": "x / 255"}, "temperature": T}``. The manifest is written by the
model's ``export.py``; ``MODEL_CARD.md`` repeats it for people.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

import numpy as np
import onnxruntime as ort

from scanner.errors import ModelError


def models_dir() -> Path:
    """Return the directory holding the shipped models (the ``models`` package)."""
    return Path(str(resources.files("models")))


@dataclass(frozen=True)
class Manifest:
    """What ``manifest.json`` records about one shipped model."""

    name: str
    version: str
    sha256: str
    classes: tuple[str, ...]
    input_shape: tuple[int, ...]
    temperature: float = 1.0
    heads: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def label(self) -> str:
        """Short label for reports: name, version and the start of the sha256."""
        return f"{self.name} {self.version} (sha256 {self.sha256[:12]})"


class OnnxModel:
    """One ONNX model loaded once into an onnxruntime session, checked against its manifest."""

    def __init__(self, name: str, directory: Path | None = None, *, threads: int = 2) -> None:
        folder = (directory or models_dir()) / name
        rebuild = f"rebuild it with `python -m models.{name.split('_')[0]}.train`"
        manifest_path = folder / "manifest.json"
        model_path = folder / "model.onnx"
        if not manifest_path.is_file():
            raise ModelError(f"{manifest_path}: model manifest missing; {rebuild}")
        if not model_path.is_file():
            raise ModelError(f"{model_path}: model file missing; {rebuild}")
        try:
            raw = json.loads(manifest_path.read_text(encoding="utf-8"))
            self.manifest = Manifest(
                name=raw["name"],
                version=str(raw["version"]),
                sha256=raw["sha256"],
                classes=tuple(raw.get("classes", ())),
                input_shape=tuple(raw["input"]["shape"]),
                temperature=float(raw.get("temperature", 1.0)),
                heads=tuple((head, tuple(classes)) for head, classes in raw.get("heads", {}).items()),
            )
        except (ValueError, KeyError, TypeError) as error:
            raise ModelError(f"{manifest_path}: unreadable manifest ({error}); {rebuild}") from None
        data = model_path.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        if digest != self.manifest.sha256:
            raise ModelError(
                f"{model_path}: sha256 {digest[:12]}... does not match the recorded "
                f"{self.manifest.sha256[:12]}... (truncated or replaced file); {rebuild}"
            )
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        try:
            self.session = ort.InferenceSession(data, sess_options=options, providers=["CPUExecutionProvider"])
        except Exception as error:  # onnxruntime raises its own exception types
            raise ModelError(f"{model_path}: onnxruntime cannot load it ({error}); {rebuild}") from None
        self.input_name = self.session.get_inputs()[0].name
        self.output_names = [output.name for output in self.session.get_outputs()]
        self.path = model_path

    def run(self, batch: np.ndarray) -> dict[str, np.ndarray]:
        """Run the model on a float32 NCHW batch and return every output by name.

        Raises:
            ModelError: the batch does not match the model's input.
        """
        expected = self.manifest.input_shape[1:]
        if batch.dtype != np.float32 or tuple(batch.shape[1:]) != tuple(expected):
            raise ModelError(f"{self.path}: expected input (N, {', '.join(map(str, expected))}) float32, got {batch.shape} {batch.dtype}")
        outputs = self.session.run(self.output_names, {self.input_name: batch})
        return dict(zip(self.output_names, outputs))


def softmax(logits: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    """Return row-wise softmax probabilities of ``logits / temperature``."""
    scaled = logits.astype(np.float64) / temperature
    scaled -= scaled.max(axis=-1, keepdims=True)
    exp = np.exp(scaled)
    return exp / exp.sum(axis=-1, keepdims=True)


@cache
def load_model(name: str) -> OnnxModel:
    """Return the shipped model ``name``, loaded once per process.

    Raises:
        ModelError: the file is missing, corrupt or not the recorded one.
    """
    return OnnxModel(name)
