"""No game switch outside the registry and the per-game folders (STYLE.md, "One home per game").

A game switch is code that branches on a game id literal: ``game == "sagrada"``, ``!=``,
``game in ("alhambra", "sagrada")``, a ``case "splendor":``, or a module-level mapping keyed by game
ids. Such code belongs in the game's own folder or in the one registry (``tablescan/games.py``) and
the per-game review forms (``tablescan/review/forms/<game>.py``); everything else asks the registry.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GAME_IDS = {"sagrada", "alhambra", "splendor"}
SCANNED = ("tablescan", "scanner", "models", "calibration")


def _allowed(relative: Path) -> bool:
    parts = relative.parts
    if relative.as_posix() == "tablescan/games.py":
        return True
    if parts[:3] == ("tablescan", "review", "forms") and len(parts) == 4:
        return True
    # scanner/<game>/..., models/<game>/...
    return parts[0] in {"scanner", "models"} and len(parts) > 2 and parts[1] in GAME_IDS


def _game_literals(node: ast.AST | None) -> list[str]:
    """The game ids written as a string literal in ``node`` or directly in its tuple/list/set."""
    if isinstance(node, ast.Constant) and node.value in GAME_IDS:
        return [str(node.value)]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [name for element in node.elts for name in _game_literals(element)]
    return []


def _match_literals(pattern: ast.pattern) -> list[str]:
    if isinstance(pattern, ast.MatchValue):
        return _game_literals(pattern.value)
    if isinstance(pattern, ast.MatchOr):
        return [name for option in pattern.patterns for name in _match_literals(option)]
    if isinstance(pattern, ast.MatchAs) and pattern.pattern is not None:
        return _match_literals(pattern.pattern)
    return []


def _switches(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """(line, what) of each game switch in ``tree``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            names = [name for operand in (node.left, *node.comparators) for name in _game_literals(operand)]
            if names and any(isinstance(op, ast.Eq | ast.NotEq | ast.In | ast.NotIn | ast.Is | ast.IsNot) for op in node.ops):
                yield node.lineno, f"comparison with {', '.join(sorted(set(names)))}"
        elif isinstance(node, ast.match_case):
            names = _match_literals(node.pattern)
            if names:
                yield node.pattern.lineno, f"case {', '.join(sorted(set(names)))}"
    for statement in tree.body:
        if isinstance(statement, ast.Assign | ast.AnnAssign) and statement.value is not None:
            for node in ast.walk(statement.value):
                if isinstance(node, ast.Dict):
                    names = [name for key in node.keys for name in _game_literals(key)]
                    if names:
                        yield node.lineno, f"module-level mapping keyed by {', '.join(sorted(set(names)))}"


def game_switches() -> list[str]:
    """``path:line: what`` of each game switch outside the allowed places."""
    found = []
    for package in SCANNED:
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT)
            if _allowed(relative):
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            found.extend(f"{relative.as_posix()}:{line}: {what}" for line, what in sorted(set(_switches(tree))))
    return found


def test_the_detector_sees_each_kind_of_switch() -> None:
    source = """
TABLE = {"sagrada": 1, "other": 2}
def f(game):
    if game == "alhambra" or "splendor" != game:
        pass
    if game in ("sagrada", "x"):
        pass
    match game:
        case "splendor" | "y":
            pass
    local = {"sagrada": 3}  # inside a function: a lookup table, not a module-level mapping
    return game == "board"
"""
    found = sorted(_switches(ast.parse(source)))
    assert [line for line, _ in found] == [2, 4, 4, 6, 9]


def test_the_allowed_places() -> None:
    assert _allowed(Path("tablescan/games.py"))
    assert _allowed(Path("tablescan/review/forms/sagrada.py"))
    assert _allowed(Path("scanner/alhambra/reader.py"))
    assert _allowed(Path("models/sagrada/train.py"))
    assert not _allowed(Path("scanner/pipeline.py"))
    assert not _allowed(Path("models/train.py"))
    assert not _allowed(Path("tablescan/cli.py"))


def test_no_game_switch_outside_the_registry_and_game_folders() -> None:
    offenders = game_switches()
    assert offenders == [], "game switches outside tablescan/games.py and the per-game folders:\n" + "\n".join(offenders)
