"""The package boundaries of STYLE.md: a wrong-way import fails here."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STDLIB = set(sys.stdlib_module_names)

# package -> top-level modules it may import besides the standard library and itself
ALLOWED = {
    "scoring": set(),
    "calibration": {"scoring", "numpy", "cv2", "PIL", "pillow_heif", "platformdirs"},
    "scanner": {"scoring", "calibration", "numpy", "cv2", "onnxruntime", "PIL", "pillow_heif"},
}
NEVER_AT_RUNTIME = {"torch", "torchvision", "onnx", "tablescan"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def _files(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_engine_imports_stay_inside_their_boundary(package: str) -> None:
    wrong = {}
    for path in _files(package):
        extra = _imports(path) - STDLIB - {package} - ALLOWED[package]
        if extra:
            wrong[str(path.relative_to(ROOT))] = sorted(extra)
    assert wrong == {}


def test_scoring_does_no_io_or_clock() -> None:
    banned = {"os", "time", "datetime", "socket", "urllib", "http", "subprocess", "pathlib", "shutil"}
    wrong = {str(path.relative_to(ROOT)): sorted(_imports(path) & banned) for path in _files("scoring") if _imports(path) & banned}
    assert wrong == {}


def test_no_engine_imports_the_shells_or_training_deps() -> None:
    wrong = {}
    for package in ("scoring", "scanner", "calibration"):
        for path in _files(package):
            bad = _imports(path) & NEVER_AT_RUNTIME
            if bad:
                wrong[str(path.relative_to(ROOT))] = sorted(bad)
    assert wrong == {}
