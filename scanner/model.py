"""Shipped ONNX models: integrity-checked loading and calibrated inference with onnxruntime.

Each model lives in ``models/<name>/`` as ``model.onnx`` beside ``manifest.json``, one format for
every model (``Manifest.to_json`` writes it, ``load_manifest`` reads it)::

    {"name": "sagrada_dice", "version": "1", "train": "models.sagrada.train", "commit": "80423b3",
     "sha256": "<64 hex>", "input": {"shape": [1, 3, H, W], "dtype": "float32", "layout": "NCHW RGB",
     "normalise": "x / 255"}, "outputs": {"<output>": "<what it holds>"}, "classes": [...],
     "heads": {"<head>": [...]}, "temperature": T, "temperatures": {"<head>": T}, "recipe": {...}}

Only ``name``, ``version``, ``sha256`` and ``input.shape`` are required to read one; the rest
default to empty. The manifest is written by ``models/export.py``; ``MODEL_CARD.md`` repeats it
for people.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort

from scanner.errors import ModelError

RecipeValue = str | int | float


def models_dir() -> Path:
    """Return the directory holding the shipped models (the ``models`` package)."""
    return Path(str(resources.files("models")))


def rebuild_hint(name: str, train: str = "") -> str:
    """The remedy for a broken model: the training command its manifest names.

    Without a manifest to ask (missing or unreadable), the game is taken from the model's name.
    """
    module = train or f"models.{name.split('_')[0]}.train"
    return f"rebuild it with `python -m {module}`"


def _expect(value: Any, kind: type | tuple[type, ...], where: str, expected: str) -> Any:
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ValueError(f"{where}: expected {expected}, got {value!r}")
    return value


def _names(value: Any, where: str) -> tuple[str, ...]:
    _expect(value, list, where, "a list of names")
    return tuple(_expect(item, str, f"{where}[{i}]", "a name") for i, item in enumerate(value))


def _mapping(value: Any, where: str) -> dict[str, Any]:
    result: dict[str, Any] = _expect(value, dict, where, "an object")
    return result


@dataclass(frozen=True)
class Manifest:
    """Everything ``manifest.json`` records about one shipped model; ``from_json``/``to_json`` are exact inverses.

    ``heads``, ``temperatures``, ``outputs`` and ``recipe`` are ``(key, value)`` pairs in file order.
    ``train`` is the module that rebuilds the model (``python -m <train>``).

    Raises:
        ValueError: a field is impossible (not a sha256, an empty or non-positive input shape,
            a temperature that is not positive).
    """

    name: str
    version: str
    sha256: str
    classes: tuple[str, ...]
    input_shape: tuple[int, ...]
    temperature: float = 1.0
    heads: tuple[tuple[str, tuple[str, ...]], ...] = ()
    input_dtype: str = "float32"
    input_layout: str = "NCHW RGB"
    input_normalise: str = "x / 255"
    temperatures: tuple[tuple[str, float], ...] = ()
    outputs: tuple[tuple[str, str], ...] = ()
    train: str = ""
    commit: str = ""
    recipe: tuple[tuple[str, RecipeValue], ...] = ()

    def __post_init__(self) -> None:
        if len(self.sha256) != 64 or any(c not in "0123456789abcdef" for c in self.sha256):
            raise ValueError(f"sha256: expected 64 lowercase hex digits, got {self.sha256!r}")
        if not self.input_shape or any(not isinstance(d, int) or d < 1 for d in self.input_shape):
            raise ValueError(f"input.shape: expected positive integers, got {list(self.input_shape)}")
        for where, value in (("temperature", self.temperature), *((f"temperatures.{k}", v) for k, v in self.temperatures)):
            if not value > 0:
                raise ValueError(f"{where}: expected a positive temperature, got {value}")

    @property
    def label(self) -> str:
        """Short label for reports: name, version and the start of the sha256."""
        return f"{self.name} {self.version} (sha256 {self.sha256[:12]})"

    @property
    def rebuild(self) -> str:
        """The remedy when the model's file is broken: the command that rebuilds it."""
        return rebuild_hint(self.name, self.train)

    def temperature_of(self, head: str) -> float:
        """The calibration temperature of ``head``: its own when recorded, else the model's one."""
        return dict(self.temperatures).get(head, self.temperature)

    @property
    def input_spec(self) -> dict[str, Any]:
        """The ``input`` object as written in the file (also stored in the ONNX metadata)."""
        return {"shape": list(self.input_shape), "dtype": self.input_dtype, "layout": self.input_layout, "normalise": self.input_normalise}

    @classmethod
    def from_json(cls, doc: Any) -> Manifest:
        """Read a manifest document (``json.loads`` of the file); unknown keys are ignored.

        Raises:
            ValueError: a required key is missing or a value has the wrong type; the message names its JSON path.
        """
        doc = _mapping(doc, "manifest")
        for key in ("name", "version", "sha256", "input"):
            if key not in doc:
                raise ValueError(f"{key}: missing")
        spec = _mapping(doc["input"], "input")
        if "shape" not in spec:
            raise ValueError("input.shape: missing")
        shape = _expect(spec["shape"], list, "input.shape", "a list of integers")
        heads = _mapping(doc.get("heads", {}), "heads")
        temperatures = _mapping(doc.get("temperatures", {}), "temperatures")
        outputs = _mapping(doc.get("outputs", {}), "outputs")
        recipe = _mapping(doc.get("recipe", {}), "recipe")
        return cls(
            name=_expect(doc["name"], str, "name", "a name"),
            version=str(_expect(doc["version"], (str, int), "version", "a version")),
            sha256=_expect(doc["sha256"], str, "sha256", "64 hex digits"),
            classes=_names(doc.get("classes", []), "classes"),
            input_shape=tuple(_expect(d, int, f"input.shape[{i}]", "an integer") for i, d in enumerate(shape)),
            temperature=float(_expect(doc.get("temperature", 1.0), (int, float), "temperature", "a number")),
            heads=tuple((head, _names(names, f"heads.{head}")) for head, names in heads.items()),
            input_dtype=_expect(spec.get("dtype", "float32"), str, "input.dtype", "a dtype name"),
            input_layout=_expect(spec.get("layout", "NCHW RGB"), str, "input.layout", "a layout"),
            input_normalise=_expect(spec.get("normalise", "x / 255"), str, "input.normalise", "a description"),
            temperatures=tuple(
                (head, float(_expect(t, (int, float), f"temperatures.{head}", "a number"))) for head, t in temperatures.items()
            ),
            outputs=tuple((out, _expect(what, str, f"outputs.{out}", "a description")) for out, what in outputs.items()),
            train=_expect(doc.get("train", ""), str, "train", "a module name"),
            commit=_expect(doc.get("commit", ""), str, "commit", "a commit"),
            recipe=tuple((key, _expect(value, (str, int, float), f"recipe.{key}", "a number or text")) for key, value in recipe.items()),
        )

    def to_json(self) -> dict[str, Any]:
        """The manifest document, every field in the one format (``from_json``'s exact inverse)."""
        return {
            "name": self.name,
            "version": self.version,
            "train": self.train,
            "commit": self.commit,
            "sha256": self.sha256,
            "input": self.input_spec,
            "outputs": dict(self.outputs),
            "classes": list(self.classes),
            "heads": {head: list(names) for head, names in self.heads},
            "temperature": self.temperature,
            "temperatures": dict(self.temperatures),
            "recipe": dict(self.recipe),
        }


def manifest_text(manifest: Manifest) -> str:
    """The bytes ``save_manifest`` writes: the one format, indented by one space, newline-terminated."""
    return json.dumps(manifest.to_json(), indent=1) + "\n"


def load_manifest(path: Path) -> Manifest:
    """Read ``manifest.json`` at ``path``.

    Raises:
        ModelError: the file is missing or unreadable; the message names the file, the JSON path and the rebuild command.
    """
    name = path.parent.name
    if not path.is_file():
        raise ModelError(f"{path}: model manifest missing; {rebuild_hint(name)}")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ModelError(f"{path}: unreadable manifest ({error}); {rebuild_hint(name)}") from None
    train = doc.get("train", "") if isinstance(doc, dict) and isinstance(doc.get("train"), str) else ""
    try:
        return Manifest.from_json(doc)
    except ValueError as error:
        raise ModelError(f"{path}: unreadable manifest ({error}); {rebuild_hint(name, train)}") from None


def save_manifest(path: Path, manifest: Manifest) -> None:
    """Write ``manifest`` to ``path`` in the one format."""
    path.write_text(manifest_text(manifest), encoding="utf-8")


class OnnxModel:
    """One ONNX model loaded once into an onnxruntime session, checked against its manifest."""

    def __init__(self, name: str, directory: Path | None = None, *, threads: int = 2) -> None:
        folder = (directory or models_dir()) / name
        model_path = folder / "model.onnx"
        self.manifest = load_manifest(folder / "manifest.json")
        rebuild = self.manifest.rebuild
        if not model_path.is_file():
            raise ModelError(f"{model_path}: model file missing; {rebuild}")
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
        # a scan runs several sessions in turn, each with its own pool of threads: a pool left spinning
        # for work after its run takes a core from the next session and from the image work between
        # (on 2 cores, model work per board fell from 30 to 17 ms with spinning off)
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
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


def image_batch(images: np.ndarray) -> np.ndarray:
    """uint8 RGB images (N, H, W, 3) as the models' float32 NCHW input in 0-1 (x / 255), made in one pass."""
    return np.ascontiguousarray(np.asarray(images).transpose(0, 3, 1, 2), dtype=np.float32) / np.float32(255.0)


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
