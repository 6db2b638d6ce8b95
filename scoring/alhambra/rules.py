"""Alhambra rule checks over a whole game: each palace's breaks and tiles used more often than the game has them."""

from __future__ import annotations

from scoring.alhambra.palace import (
    FOUNTAIN,
    Cell,
    Tile,  # noqa: F401  (doctests)
    catalogue_counts,
    cell_text,
    validate_palace,
)
from scoring.alhambra.state import AlhambraPlayer, AlhambraState, palace_map  # noqa: F401  (doctests)
from scoring.issue import Issue


def validate(state: AlhambraState) -> list[Issue]:
    """Return every rule break of every palace, plus tiles used more often than the game has them.

    ``Issue.player`` is the player's index; ``tile-overused`` counts a (type, walls) pair over
    all palaces and reserves; ``no-such-tile`` flags a pair the game does not have at all.

    >>> ana = AlhambraPlayer("Ana", {(0, 0): Tile("fountain"), (1, 0): Tile("tower", "NEW")})
    >>> bo = AlhambraPlayer("Bo", {(0, 0): Tile("fountain")}, reserve=[Tile("tower", "NEW")])
    >>> [(issue.rule, issue.player) for issue in validate(AlhambraState(1, (ana, bo)))]
    [('wall-faces-open-side', 0), ('unreachable', 0), ('tile-overused', 0), ('tile-overused', 1)]
    """
    issues = []
    for index, player in enumerate(state.players):
        for issue in validate_palace(palace_map(player)):
            issues.append(Issue(issue.rule, issue.detail, issue.cells, index, issue.explained_by))
    issues.extend(_overuse(state))
    return sorted(issues, key=lambda issue: -1 if issue.player is None else issue.player)


def _overuse(state: AlhambraState) -> list[Issue]:
    # (type, walls) -> player index -> ([palace cells], reserve count)
    uses: dict[tuple[str, str], dict[int, tuple[list[Cell], list[int]]]] = {}
    for index, player in enumerate(state.players):
        for cell, tile in player.palace:
            if tile.type != FOUNTAIN:
                uses.setdefault(tile.kind, {}).setdefault(index, ([], [0]))[0].append(cell)
        for tile in player.reserve:
            uses.setdefault(tile.kind, {}).setdefault(index, ([], [0]))[1][0] += 1
    held = catalogue_counts()
    issues = []
    for kind, by_player in uses.items():
        total = sum(len(cells) + reserved[0] for cells, reserved in by_player.values())
        have = held.get(kind, 0)
        if total <= have:
            continue
        name = f"{kind[0]} with walls {kind[1]!r}"
        where = "; ".join(
            f"{state.players[index].name}: "
            + ", ".join([cell_text(cell) for cell in cells] + ([f"{reserved[0]} in reserve"] if reserved[0] else []))
            for index, (cells, reserved) in sorted(by_player.items())
        )
        for index, (cells, _) in sorted(by_player.items()):
            if have == 0:
                detail = f"the game has no {name} (a misread tile?); used at {where}"
                issues.append(Issue("no-such-tile", detail, tuple(cells), index))
            else:
                detail = f"{name} used {total} times, the game has {have}: {where}"
                issues.append(Issue("tile-overused", detail, tuple(cells), index))
    return issues
