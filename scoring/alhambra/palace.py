"""Alhambra palace geometry: walls, placement legality, the longest outer wall and random palaces.

A palace maps grid cells ``(x, y)`` (x grows east, y grows south, as in FORMATS.md) to
``Tile``s (``scoring.alhambra.tiles``, whose names are re-exported here). Cell ``(x, y)``
covers the unit square whose corners are ``(x, y)`` .. ``(x + 1, y + 1)``; a wall segment
runs between two such corners, and segments meet at corners.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping

from scoring.alhambra.tiles import (
    BUILDING_TYPES,
    CATALOGUE,
    FOUNTAIN,
    FOUNTAIN_TILE,
    LEGAL_WALLS,
    OPPOSITE,
    SIDES,
    STEP,
    Cell,
    Segment,
    Tile,
    catalogue_counts,
    tile_by_id,
    walls_problem,
)
from scoring.errors import StateError
from scoring.fields import describe
from scoring.issue import Issue

__all__ = [
    "BUILDING_TYPES",
    "CATALOGUE",
    "FOUNTAIN",
    "FOUNTAIN_TILE",
    "LEGAL_WALLS",
    "OPPOSITE",
    "SIDES",
    "STEP",
    "Cell",
    "Segment",
    "Tile",
    "catalogue_counts",
    "cell_text",
    "fountain_cells",
    "generate_palace",
    "holes",
    "longest_wall",
    "neighbour",
    "outer_segments",
    "palace_text",
    "reachable",
    "segment_ends",
    "tile_by_id",
    "touching",
    "validate_palace",
    "wall_mismatches",
    "walls_problem",
]


def cell_text(cell: Cell) -> str:
    """Return a cell as players read it.

    >>> cell_text((-1, 2))
    '(-1, 2)'
    """
    return f"({cell[0]}, {cell[1]})"


def neighbour(cell: Cell, side: str) -> Cell:
    """Return the cell beyond ``side`` of ``cell``.

    >>> neighbour((0, 0), "N"), neighbour((0, 0), "E")
    ((0, -1), (1, 0))
    """
    dx, dy = STEP[side]
    return (cell[0] + dx, cell[1] + dy)


def segment_ends(segment: Segment) -> tuple[Cell, Cell]:
    """Return the two grid corners a wall segment joins.

    >>> segment_ends(((0, 0), "E"))
    ((1, 0), (1, 1))
    """
    (x, y), side = segment
    if side == "N":
        return (x, y), (x + 1, y)
    if side == "E":
        return (x + 1, y), (x + 1, y + 1)
    if side == "S":
        return (x, y + 1), (x + 1, y + 1)
    return (x, y), (x, y + 1)


def fountain_cells(palace: Mapping[Cell, Tile]) -> list[Cell]:
    """Return the cells holding a fountain, sorted.

    >>> fountain_cells({(0, 0): FOUNTAIN_TILE, (1, 0): Tile("garden")})
    [(0, 0)]
    """
    return sorted(cell for cell, tile in palace.items() if tile.type == FOUNTAIN)


def wall_mismatches(palace: Mapping[Cell, Tile]) -> list[tuple[Cell, str, Cell]]:
    """Return ``(cell, side, other)`` for each pair of neighbours where one side is walled and the other open.

    >>> wall_mismatches({(0, 0): FOUNTAIN_TILE, (1, 0): Tile("garden", "W")})
    [((0, 0), 'E', (1, 0))]
    """
    found = []
    for cell in sorted(palace):
        tile = palace[cell]
        for side in "ES":
            other = neighbour(cell, side)
            other_tile = palace.get(other)
            if other_tile is not None and (side in tile.walls) != (OPPOSITE[side] in other_tile.walls):
                found.append((cell, side, other))
    return found


def touching(palace: Mapping[Cell, Tile], starts: Iterable[Cell]) -> set[Cell]:
    """Return the tiles connected to ``starts`` through shared sides, walls or not.

    >>> sorted(touching({(0, 0): FOUNTAIN_TILE, (1, 0): Tile("garden", "W"), (5, 5): Tile("tower")}, [(0, 0)]))
    [(0, 0), (1, 0)]
    """
    return _flood(palace, starts, walled=True)


def reachable(palace: Mapping[Cell, Tile], starts: Iterable[Cell]) -> set[Cell]:
    """Return the tiles reachable on foot from ``starts``: through sides open on both tiles.

    >>> sorted(reachable({(0, 0): FOUNTAIN_TILE, (1, 0): Tile("garden", "W"), (0, 1): Tile("tower")}, [(0, 0)]))
    [(0, 0), (0, 1)]
    """
    return _flood(palace, starts, walled=False)


def _flood(palace: Mapping[Cell, Tile], starts: Iterable[Cell], *, walled: bool) -> set[Cell]:
    seen = {cell for cell in starts if cell in palace}
    todo = list(seen)
    while todo:
        cell = todo.pop()
        tile = palace[cell]
        for side in SIDES:
            other = neighbour(cell, side)
            if other in seen:
                continue
            other_tile = palace.get(other)
            if other_tile is None:
                continue
            if not walled and (side in tile.walls or OPPOSITE[side] in other_tile.walls):
                continue
            seen.add(other)
            todo.append(other)
    return seen


def holes(palace: Mapping[Cell, Tile]) -> list[Cell]:
    """Return the holes: empty cells with a tile on each of their four sides, in reading order.

    This is the rule's letter ("an empty space surrounded on all four sides"). A larger
    enclosed space is not a hole: it is legal, although it can never be filled.

    >>> ring = {(x, y): Tile("garden") for x in range(3) for y in range(3) if (x, y) != (1, 1)}
    >>> holes(ring)
    [(1, 1)]
    """
    empty = {neighbour(cell, side) for cell in palace for side in SIDES} - set(palace)
    return sorted((cell for cell in empty if all(neighbour(cell, side) in palace for side in SIDES)), key=_reading_order)


def _reading_order(cell: Cell) -> tuple[int, int]:
    return (cell[1], cell[0])


def outer_segments(palace: Mapping[Cell, Tile]) -> list[Segment]:
    """Return the outer wall segments: walled sides with no tile beyond, in cell then NESW order.

    >>> outer_segments({(0, 0): FOUNTAIN_TILE, (1, 0): Tile("garden", "NE"), (2, 0): Tile("tower", "W")})
    [((1, 0), 'N')]
    """
    return [(cell, side) for cell in sorted(palace) for side in palace[cell].walls if neighbour(cell, side) not in palace]


def longest_wall(palace: Mapping[Cell, Tile]) -> tuple[int, list[Segment]]:
    """Return the length of the longest continuous outer wall and its segments in walking order.

    Segments join at tile corners; the wall is the longest trail that uses each segment at most
    once (a closed loop of L segments counts L). Where the palace pinches at a corner, four
    segments meet there and the trail may go on along any of them. The search is exact; only a
    pathological board (thousands of pinched corners) could exhaust its step budget, and then
    the longest trail found so far is returned.

    >>> longest_wall({(0, 0): FOUNTAIN_TILE, (1, 0): Tile("garden", "NE"), (1, 1): Tile("tower", "ES")})
    (4, [((1, 0), 'N'), ((1, 0), 'E'), ((1, 1), 'E'), ((1, 1), 'S')])
    """
    segments = outer_segments(palace)
    links: dict[Cell, list[tuple[int, Cell]]] = {}
    for index, segment in enumerate(segments):
        start, end = segment_ends(segment)
        links.setdefault(start, []).append((index, end))
        links.setdefault(end, []).append((index, start))
    used = [False] * len(segments)
    budget = [_TRAIL_BUDGET]
    best: list[int] = []
    seen: set[Cell] = set()
    for corner in sorted(links, key=_reading_order):
        if corner in seen:
            continue
        component = _corner_component(links, corner)
        seen |= component
        size = len({index for c in component for index, _ in links[c]})
        if size <= len(best):
            continue
        # A longest trail can always start at a corner where the wall branches or ends; a
        # component without one is a single closed loop.
        starts = [c for c in component if len(links[c]) != 2] or [corner]
        for start in sorted(starts, key=_reading_order):
            found = _longest_trail_from(links, used, start, size, budget)
            if len(found) > len(best):
                best = found
            if len(found) == size or budget[0] <= 0:
                break
    return len(best), [segments[index] for index in best]


_TRAIL_BUDGET = 200_000


def _corner_component(links: dict[Cell, list[tuple[int, Cell]]], first: Cell) -> set[Cell]:
    component, todo = {first}, [first]
    while todo:
        for _, other in links[todo.pop()]:
            if other not in component:
                component.add(other)
                todo.append(other)
    return component


def _longest_trail_from(
    links: dict[Cell, list[tuple[int, Cell]]], used: list[bool], start: Cell, limit: int, budget: list[int]
) -> list[int]:
    """Depth-first search over trails from ``start`` (iterative: walls may be long)."""
    best: list[int] = []
    path: list[int] = []
    corners = [start]
    tried = [0]
    while corners:
        options = links[corners[-1]]
        i = tried[-1]
        while i < len(options) and used[options[i][0]]:
            i += 1
        if i < len(options) and budget[0] > 0:
            tried[-1] = i + 1
            index, other = options[i]
            used[index] = True
            path.append(index)
            corners.append(other)
            tried.append(0)
            budget[0] -= 1
            continue
        if len(path) > len(best):
            best = list(path)
            if len(best) == limit:
                break
        corners.pop()
        tried.pop()
        if path:
            used[path.pop()] = False
    for index in path:
        used[index] = False
    return best


_ABBREVIATION = {FOUNTAIN: " F ", **{kind: kind[:3].title() for kind in BUILDING_TYPES}}
_MAX_DRAWN_SPAN = 40


def palace_text(palace: Mapping[Cell, Tile]) -> str:
    """Draw a palace in ASCII, north up: ``=`` and ``#`` are walls, ``-`` and ``|`` open edges.

    Each tile shows its type's first three letters (``F`` the fountain); an open side between
    two tiles is left blank.

    >>> print(palace_text({(0, 0): FOUNTAIN_TILE, (1, 0): Tile("garden", "NE")}))
    +---+===+
    | F  Gar#
    +---+---+
    """
    if not palace:
        return "(empty palace)"
    xs = [x for x, _ in palace]
    ys = [y for _, y in palace]
    if max(xs) - min(xs) > _MAX_DRAWN_SPAN or max(ys) - min(ys) > _MAX_DRAWN_SPAN:
        return f"(palace spans more than {_MAX_DRAWN_SPAN} cells; not drawn)"
    lines = []
    for y in range(min(ys), max(ys) + 2):
        edges, cells = [], []
        for x in range(min(xs), max(xs) + 2):
            edges.append(_corner(palace, x, y))
            if x <= max(xs):
                edges.append(_edge(palace.get((x, y - 1)), "S", palace.get((x, y)), "N", "===", "---", "   "))
            cells.append(_edge(palace.get((x - 1, y)), "E", palace.get((x, y)), "W", "#", "|", " "))
            if x <= max(xs):
                tile = palace.get((x, y))
                cells.append(_ABBREVIATION[tile.type] if tile else "   ")
        lines.append("".join(edges).rstrip())
        if y <= max(ys):
            lines.append("".join(cells).rstrip())
    return "\n".join(lines)


def _corner(palace: Mapping[Cell, Tile], x: int, y: int) -> str:
    return "+" if any(cell in palace for cell in ((x - 1, y - 1), (x, y - 1), (x - 1, y), (x, y))) else " "


def _edge(before: Tile | None, side: str, after: Tile | None, other_side: str, wall: str, rim: str, blank: str) -> str:
    if (before is not None and side in before.walls) or (after is not None and other_side in after.walls):
        return wall
    if (before is None) != (after is None):
        return rim
    return blank


def validate_palace(palace: Mapping[Cell, Tile]) -> list[Issue]:
    """Return every placement-rule break in one palace (``Issue.player`` left ``None``).

    Rules: ``fountain-count`` (not exactly one fountain), ``wall-faces-open-side`` (a wall
    against an open side), ``detached`` (a tile not joined to the fountain's tiles),
    ``unreachable`` (joined, but walls block every path on foot from the fountain), ``hole``
    (an empty space with a tile on all four sides).

    >>> [i.rule for i in validate_palace({(0, 0): FOUNTAIN_TILE, (1, 0): Tile("garden", "W")})]
    ['wall-faces-open-side', 'unreachable']
    """
    issues: list[Issue] = []
    fountains = fountain_cells(palace)
    if len(fountains) != 1:
        where = f" at {', '.join(map(cell_text, fountains))}" if fountains else ""
        issues.append(Issue("fountain-count", f"expected exactly one fountain, found {len(fountains)}{where}", tuple(fountains)))
    for cell, side, other in wall_mismatches(palace):
        walled, open_ = (cell, other) if side in palace[cell].walls else (other, cell)
        walled_side = side if walled == cell else OPPOSITE[side]
        issues.append(
            Issue(
                "wall-faces-open-side",
                f"the {walled_side} wall of {cell_text(walled)} ({palace[walled]}) faces the open "
                f"{OPPOSITE[walled_side]} side of {cell_text(open_)} ({palace[open_]})",
                (walled, open_),
            )
        )
    if fountains:
        joined = touching(palace, fountains)
        on_foot = reachable(palace, fountains)
        for cell in sorted(palace, key=_reading_order):
            if cell not in joined:
                alone = all(neighbour(cell, side) not in palace for side in SIDES)
                what = "touches no other tile" if alone else "is not joined to the fountain's tiles"
                issues.append(Issue("detached", f"{cell_text(cell)} ({palace[cell]}) {what}", (cell,)))
            elif cell not in on_foot:
                issues.append(
                    Issue(
                        "unreachable",
                        f"{cell_text(cell)} ({palace[cell]}) cannot be reached on foot from the fountain: walls block every path",
                        (cell,),
                    )
                )
    for cell in holes(palace):
        issues.append(Issue("hole", f"the empty space at {cell_text(cell)} has a tile on all four sides", (cell,)))
    return issues


def generate_palace(rng: random.Random, size: int, used: set[int] | None = None) -> dict[Cell, Tile]:
    """Grow a random legal palace of ``size`` building tiles around a fountain at (0, 0).

    Each catalogue tile is used at most once and never one whose id is in ``used``; the ids
    taken are added to ``used``, so that several palaces of one game share the tile set.
    Every step keeps walls matching, every tile reachable on foot and no hole.

    >>> palace = generate_palace(random.Random(7), 10)
    >>> len(palace), validate_palace(palace)
    (11, [])

    Raises:
        StateError: when fewer than ``size`` unused tiles remain, or no legal palace was found.
    """
    if used is None:
        used = set()
    free = [tile for tile in CATALOGUE if tile.tile_id not in used]
    if isinstance(size, bool) or not isinstance(size, int) or not 0 <= size <= len(free):
        raise StateError(f"size: expected an integer 0-{len(free)} (unused tiles left), got {describe(size)}")
    for _ in range(100):
        palace = _grow(rng, size, list(free))
        if palace is not None:
            used.update(tile.tile_id for tile in palace.values() if tile.tile_id is not None)
            return palace
    raise StateError(f"size: could not grow a legal palace of {size} tiles from the tiles left")


def _grow(rng: random.Random, size: int, pool: list[Tile]) -> dict[Cell, Tile] | None:
    palace: dict[Cell, Tile] = {(0, 0): FOUNTAIN_TILE}
    while len(palace) <= size:
        frontier = sorted({neighbour(cell, side) for cell in palace for side in SIDES} - set(palace))
        rng.shuffle(frontier)
        placed = False
        for cell in frontier:
            order = list(range(len(pool)))
            rng.shuffle(order)
            fitting = next((i for i in order if _fits(palace, cell, pool[i])), None)
            if fitting is None:
                continue
            palace[cell] = pool[fitting]
            if holes(palace):
                del palace[cell]
                continue
            pool.pop(fitting)
            placed = True
            break
        if not placed:
            return None
    return palace


def _fits(palace: Mapping[Cell, Tile], cell: Cell, tile: Tile) -> bool:
    """Whether ``tile`` at the empty ``cell`` matches every neighbour and opens onto one of them."""
    opens = False
    for side in SIDES:
        other = palace.get(neighbour(cell, side))
        if other is None:
            continue
        walled = side in tile.walls
        if walled != (OPPOSITE[side] in other.walls):
            return False
        opens = opens or not walled
    return opens
