"""Doctests in every package, with or without the ``train`` extra.

``--doctest-modules`` imports each module under ``scoring``, ``scanner``, ``calibration``,
``tablescan`` and ``models``. Modules that import the training deps (torch, onnx) at their top,
directly or through another project module, cannot be imported without the ``train`` extra, so
when torch is missing they are left out of collection instead of failing it. Which modules those
are is read from the source (AST), so a new training module needs no entry here.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent
PACKAGES = ("scoring", "scanner", "calibration", "tablescan", "models")
TRAIN_EXTRA = {"torch", "torchvision", "onnx", "onnxscript"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _top_level_imports(path: Path) -> set[str]:
    """Dotted names imported when the module is imported (function bodies left out)."""
    names: set[str] = set()
    pending: list[ast.AST] = list(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)).body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                package = _module_name(path).split(".")
                if path.name != "__init__.py":
                    package.pop()
                package = package[: len(package) - (node.level - 1)]
                base = ".".join([*package, node.module] if node.module else package)
            else:
                base = node.module or ""
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
        pending.extend(ast.iter_child_nodes(node))
    return names


def needs_train_extra() -> list[Path]:
    """Project modules that import torch or onnx on import, directly or through project modules."""
    files = {_module_name(path): path for package in PACKAGES for path in (ROOT / package).rglob("*.py")}
    imports = {module: _top_level_imports(path) for module, path in files.items()}
    heavy = {module for module, names in imports.items() if {name.split(".")[0] for name in names} & TRAIN_EXTRA}
    changed = True
    while changed:
        changed = False
        for module, names in imports.items():
            if module not in heavy and names & heavy:
                heavy.add(module)
                changed = True
    return sorted(files[module] for module in heavy)


# Benchmarks are scripts that print figures, not tests (STYLE.md): never imported by collection.
collect_ignore_glob: list[str] = ["tests/benchmarks/*"]
collect_ignore: list[str] = []
if importlib.util.find_spec("torch") is None:
    collect_ignore = [str(path.relative_to(ROOT)) for path in needs_train_extra()]
