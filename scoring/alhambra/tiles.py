"""Alhambra's tiles as shipped: building types, wall patterns, the 54-tile catalogue and the fountain.

Tiles never rotate; ``walls`` names the walled sides in ``NESW`` order.
"""

from __future__ import annotations

from dataclasses import dataclass

from scoring.data import load_data
from scoring.errors import StateError
from scoring.fields import describe

BUILDING_TYPES = ("pavilion", "seraglio", "arcades", "chambers", "garden", "tower")
FOUNTAIN = "fountain"
SIDES = "NESW"
STEP = {"N": (0, -1), "E": (1, 0), "S": (0, 1), "W": (-1, 0)}
OPPOSITE = {"N": "S", "E": "W", "S": "N", "W": "E"}

Cell = tuple[int, int]
Segment = tuple[Cell, str]

_ROWS = load_data("alhambra", "tiles")["tiles"]
_ROW_BY_ID = {row["id"]: row for row in _ROWS}

# The 13 wall patterns printed on the 54 building tiles (and the fountain's ""), NESW order.
LEGAL_WALLS: tuple[str, ...] = tuple(
    sorted({row["walls"] for row in _ROWS}, key=lambda walls: (len(walls), [SIDES.index(s) for s in walls]))
)


def walls_problem(walls: object) -> str | None:
    """Return why ``walls`` is not a walls string (sides of ``NESW``, in that order), or ``None``.

    >>> walls_problem("NE"), walls_problem("")
    (None, None)
    >>> walls_problem("SN")
    "expected walled sides from 'NESW' written in that order, e.g. 'NE', 'ESW' or '', got 'SN'"
    """
    if isinstance(walls, str):
        indexes = [SIDES.find(side) for side in walls]
        if -1 not in indexes and all(a < b for a, b in zip(indexes, indexes[1:])):
            return None
    return f"expected walled sides from 'NESW' written in that order, e.g. 'NE', 'ESW' or '', got {describe(walls)}"


@dataclass(frozen=True)
class Tile:
    """One palace tile: a building type (or ``"fountain"``), its walled sides, catalogue id and price.

    A ``tile_id`` must agree with the catalogue; the price is then filled in from it.

    >>> Tile("garden", "NE")
    Tile(type='garden', walls='NE', tile_id=None, price=None)
    >>> Tile("tower", "NEW", tile_id=44).price
    7
    >>> Tile("tower", "NN")
    Traceback (most recent call last):
    ...
    scoring.errors.StateError: walls: expected walled sides from 'NESW' written in that order, e.g. 'NE', 'ESW' or '', got 'NN'

    Raises:
        StateError: unknown type, malformed walls, a walled fountain, or a tile_id that disagrees.
    """

    type: str
    walls: str = ""
    tile_id: int | None = None
    price: int | None = None

    def __post_init__(self) -> None:
        if self.type not in BUILDING_TYPES and self.type != FOUNTAIN:
            raise StateError(f"type: expected one of {', '.join(BUILDING_TYPES)} or fountain, got {describe(self.type)}")
        problem = walls_problem(self.walls)
        if problem:
            raise StateError(f"walls: {problem}")
        if self.type == FOUNTAIN:
            if self.walls or self.tile_id is not None or self.price is not None:
                raise StateError("fountain: the fountain has no walls, tile_id or price")
            return
        if self.tile_id is None:
            return
        row = _ROW_BY_ID.get(self.tile_id) if isinstance(self.tile_id, int) else None
        if row is None or isinstance(self.tile_id, bool):
            raise StateError(f"tile_id: expected an integer 1-{len(_ROWS)}, got {describe(self.tile_id)}")
        if (row["type"], row["walls"]) != (self.type, self.walls):
            raise StateError(
                f"tile_id: tile {self.tile_id} is a {row['type']} with walls {row['walls']!r}, not a {self.type} with walls {self.walls!r}"
            )
        if self.price is None:
            object.__setattr__(self, "price", row["price"])
        elif self.price != row["price"]:
            raise StateError(f"price: tile {self.tile_id} costs {row['price']}, got {describe(self.price)}")

    @property
    def kind(self) -> tuple[str, str]:
        """The (type, walls) pair that identifies a tile up to the duplicates the game holds.

        >>> Tile("tower", "NE").kind
        ('tower', 'NE')
        """
        return (self.type, self.walls)

    def __str__(self) -> str:
        text = self.type if self.type == FOUNTAIN else f"{self.type} {self.walls or '-'}"
        return text if self.tile_id is None else f"{text} #{self.tile_id}"


FOUNTAIN_TILE = Tile(FOUNTAIN)
CATALOGUE: tuple[Tile, ...] = tuple(Tile(row["type"], row["walls"], row["id"], row["price"]) for row in _ROWS)


def tile_by_id(tile_id: int) -> Tile:
    """Return the catalogue tile with this id.

    >>> str(tile_by_id(23))
    'arcades - #23'

    Raises:
        StateError: when no tile has this id.
    """
    if isinstance(tile_id, bool) or not isinstance(tile_id, int) or not 1 <= tile_id <= len(CATALOGUE):
        raise StateError(f"tile_id: expected an integer 1-{len(CATALOGUE)}, got {describe(tile_id)}")
    return CATALOGUE[tile_id - 1]


def catalogue_counts() -> dict[tuple[str, str], int]:
    """Return how many tiles of each (type, walls) the game holds.

    >>> catalogue_counts()[("tower", "")], catalogue_counts().get(("tower", "NS"), 0)
    (2, 0)
    """
    counts: dict[tuple[str, str], int] = {}
    for tile in CATALOGUE:
        counts[tile.kind] = counts.get(tile.kind, 0) + 1
    return counts
