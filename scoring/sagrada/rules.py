"""Sagrada placement rules: the checks on one window and on every player's window of a game."""

from __future__ import annotations

from scoring.issue import Issue
from scoring.sagrada.cards import Pattern, print_allows, tools_explaining
from scoring.sagrada.state import SAMPLE, SagradaState  # noqa: F401  (SAMPLE: the doctests' game)
from scoring.sagrada.window import (
    COLOR_NAMES,
    COLORS,
    Window,
    check_window,
    diagonal,
    dice_of,
    on_edge,
    orthogonal,
    parse_window,  # noqa: F401  (the doctests read windows)
    place_name,
)

__all__ = ["RULES", "validate", "window_violations"]

RULES: tuple[str, ...] = (
    "orthogonal-same-color",
    "orthogonal-same-value",
    "color-restriction",
    "value-restriction",
    "isolated-die",
    "no-edge-die",
)


def window_violations(window: Window, pattern: Pattern | None = None) -> list[Issue]:
    """Return every placement-rule break in a finished window, in ``RULES`` order.

    Same colour or value orthogonally adjacent is never legal (a misread or a mistake). A die
    off its pattern print (when ``pattern`` is given), a die touching no other die (when the
    window has two or more dice) and a window with dice but none on its edge can each be the
    work of a tool card: ``explained_by`` names those cards.

    >>> w = parse_window(["R3 R5 . . .", ". . . . .", ". . . . .", ". . . . ."])
    >>> [(i.rule, i.cells) for i in window_violations(w)]
    [('orthogonal-same-color', ((0, 0), (0, 1)))]
    """
    window = check_window(window)
    issues: list[Issue] = []
    placed = dice_of(window)
    pairs = [
        (cell, die, other, neighbour)
        for cell, die in placed
        for other in orthogonal(cell)
        if other > cell and (neighbour := window[other[0]][other[1]]) is not None
    ]
    for cell, die, other, neighbour in pairs:
        if die.color == neighbour.color:
            issues.append(
                Issue(
                    "orthogonal-same-color",
                    f"{die} at {place_name(cell)} and {neighbour} at {place_name(other)} are orthogonally "
                    f"adjacent and both {COLOR_NAMES[die.color]}",
                    cells=(cell, other),
                )
            )
    for cell, die, other, neighbour in pairs:
        if die.value == neighbour.value:
            issues.append(
                Issue(
                    "orthogonal-same-value",
                    f"{die} at {place_name(cell)} and {neighbour} at {place_name(other)} are orthogonally "
                    f"adjacent and both show {die.value}",
                    cells=(cell, other),
                )
            )
    if pattern is not None:
        for rule, is_color in (("color-restriction", True), ("value-restriction", False)):
            for cell, die in placed:
                mark = pattern.restriction(cell)
                if mark == "." or (mark in COLORS) != is_color or print_allows(mark, die):
                    continue
                wanted = f"a {COLOR_NAMES[mark]} die" if is_color else f"a {mark}"
                issues.append(
                    Issue(
                        rule,
                        f"{die} at {place_name(cell)} sits where {pattern.name} asks for {wanted}",
                        cells=(cell,),
                        explained_by=tools_explaining(rule),
                    )
                )
    if len(placed) >= 2:
        for cell, die in placed:
            around = orthogonal(cell) + diagonal(cell)
            if all(window[r][c] is None for r, c in around):
                issues.append(
                    Issue(
                        "isolated-die",
                        f"{die} at {place_name(cell)} touches no other die, not even diagonally",
                        cells=(cell,),
                        explained_by=tools_explaining("isolated-die"),
                    )
                )
    if placed and not any(on_edge(cell) for cell, _ in placed):
        issues.append(
            Issue(
                "no-edge-die",
                f"none of the {len(placed)} dice is on the window's edge (the first die must be placed there)",
                cells=tuple(cell for cell, _ in placed),
                explained_by=tools_explaining("no-edge-die"),
            )
        )
    return issues


def validate(state: SagradaState) -> list[Issue]:
    """Return every player's placement-rule breaks (``Issue.player`` is the player's index).

    >>> validate(SagradaState.from_json(SAMPLE))
    []
    """
    issues = []
    for index, player in enumerate(state.players):
        for issue in window_violations(player.window, player.pattern):
            issues.append(Issue(issue.rule, issue.detail, issue.cells, index, issue.explained_by))
    return issues
