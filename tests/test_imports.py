"""The project's import graph: no cycles, and imports at the top of modules.

The graph is built from the source (AST) of every ``.py`` file in the project's own packages, so an
import inside a function counts as much as one at the top ("late imports count"): hiding a cycle in
a function body does not remove it.

An edge goes from a module to each project module it imports:

- ``import a.b.c`` and ``from a.b.c import name`` (``name`` not a submodule) point at ``a.b.c``;
- ``from a.b import c`` points at ``a.b.c`` when that is a module, else at ``a.b`` (a name from
  the package's ``__init__``);
- relative imports resolve against the importing module's package.

Importing ``a.b.c`` also runs ``a/__init__.py`` and ``a/b/__init__.py``, but those implicit parent
edges are left out: a package ``__init__`` that re-exports its submodules is not a cycle. It becomes
one only when a submodule imports names back from its package's ``__init__`` (``from . import x``
where ``x`` is not a module, or ``from a.b import x``), which the rules above record.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("scoring", "scanner", "calibration", "models", "tablescan")

# Third-party modules that may be imported inside a function: heavy, optional ones that only the
# training extra (or one rarely used path) needs, so importing the module itself stays cheap and
# works without them.
LATE_IMPORT_ALLOWED = {
    "torch",  # the `train` extra; only training and export code needs it
    "torchvision",
    "onnx",  # the `train` extra; exporting and checking model graphs
    "onnxscript",  # pulled in by torch.onnx export
    "hypothesis",  # test-only strategies offered by the engines
    "uvicorn",  # only `tablescan review` serves; the app itself needs no server
    "playwright",  # browser tests
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _project_files() -> dict[str, Path]:
    files: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            files[_module_name(path)] = path
    return files


FILES = _project_files()
MODULES = set(FILES)


def _is_package(module: str) -> bool:
    return FILES[module].name == "__init__.py"


def _absolute(module: str, node: ast.ImportFrom) -> str:
    """The absolute module named by ``from <node.module> import ...`` inside ``module``."""
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    if not _is_package(module):
        base.pop()
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _nearest_module(name: str) -> str | None:
    """``name`` or its longest dotted prefix that is a project module (``a.b.f`` -> ``a.b``)."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in MODULES:
            return candidate
        parts.pop()
    return None


def _imported_modules(module: str, tree: ast.AST) -> set[str]:
    targets: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found = _nearest_module(alias.name)
                if found:
                    targets.add(found)
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(module, node)
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                if submodule in MODULES:
                    targets.add(submodule)
                else:
                    found = _nearest_module(source)
                    if found:
                        targets.add(found)
    targets.discard(module)
    return targets


def import_graph() -> dict[str, set[str]]:
    """Each project module -> the project modules it imports anywhere in its source."""
    return {
        module: _imported_modules(module, ast.parse(path.read_text(encoding="utf-8"), filename=str(path))) for module, path in FILES.items()
    }


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of ``graph``, each sorted, iteratively (no recursion).

    >>> strongly_connected({"a": {"b"}, "b": {"a", "c"}, "c": set()})
    [['a', 'b'], ['c']]
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = counter
                counter += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return sorted(components)


def _describe(component: list[str], graph: dict[str, set[str]]) -> str:
    members = set(component)
    edges = [f"{a} -> {b}" for a in component for b in sorted(graph[a] & members)]
    return f"{' <-> '.join(component)}: " + "; ".join(edges)


def test_the_import_graph_has_no_cycles() -> None:
    graph = import_graph()
    cycles = [_describe(c, graph) for c in strongly_connected(graph) if len(c) > 1]
    assert cycles == [], "import cycles (late imports count):\n" + "\n".join(cycles)


def test_the_graph_sees_the_project() -> None:
    graph = import_graph()
    assert {"scoring", "scanner", "calibration", "models", "tablescan"} <= MODULES
    assert "tablescan.cli" in graph and graph["tablescan.cli"], "the CLI imports the engines"


def _late_imports(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, top-level name) of each import inside a function body of ``tree``."""
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield node.lineno, alias.name
            elif isinstance(node, ast.ImportFrom):
                yield node.lineno, ("." * node.level) + (node.module or "")


def late_import_offenders() -> list[str]:
    """``path:line: name`` of each import inside a function that is not of an allowed heavy module."""
    found = set()
    for path in FILES.values():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for line, name in _late_imports(tree):
            if name.split(".")[0] not in LATE_IMPORT_ALLOWED:
                found.add((str(path.relative_to(ROOT)), line, name))
    return [f"{p}:{line}: {name}" for p, line, name in sorted(found)]


def test_imports_sit_at_the_top_of_modules() -> None:
    offenders = late_import_offenders()
    per_package = Counter(o.split("/")[0] for o in offenders)
    summary = ", ".join(f"{package} {count}" for package, count in sorted(per_package.items()))
    assert offenders == [], f"imports inside functions ({summary}); move them to the top:\n" + "\n".join(offenders)
