"""The Alhambra tile classifier as adaptation sees it: its model, its crops' margin, a cell value's head labels.

The crops a reading keeps are upright (``scanner.alhambra.decode.turn_upright``), so a tile's walls
N, E, S, W are its crop's top, right, bottom and left. ``scanner.alhambra.adaptable`` joins these
into the game's ``CellClassifier`` with the crops of the empty cells around a palace.
"""

from __future__ import annotations

from typing import Any

from scoring.alhambra.palace import BUILDING_TYPES

MODEL = "alhambra_tiles"
CROP_MARGIN = 0.15  # extra border around a cell, in tile pitches
UPRIGHT_SIDES = "NESW"  # the walls head's classes (top, right, bottom, left) on an upright crop
MIRROR = (0, 3, 2, 1)  # a crop mirrored left to right: its right wall is the left one, and back
KINDS = ("none", "fountain", *BUILDING_TYPES)  # the kind head's classes (scanner.alhambra.tiles.KINDS)


def head_labels(value: str) -> dict[str, Any]:
    """Return the class each adapted head of ``alhambra_tiles`` should give an upright crop of a cell whose value is ``value``.

    ``walls`` is 0/1 per crop side (top, right, bottom, left); ``rotation`` is the upright crop's.
    The price head is not taught: a building tile's price is the price octagon reader's
    (``scanner.alhambra.octagon.merge_octagons`` puts it in place of this model's), so an adapted
    price head would change no reading, yet its misses among the held-out cells would count
    against the heads that are read (``scanner.adapt.fitting``: every head right together).

    >>> head_labels("garden:NS")
    {'kind': 'garden', 'walls': (1, 0, 1, 0), 'rotation': '0'}
    >>> head_labels("tower:NEW")
    {'kind': 'tower', 'walls': (1, 1, 0, 1), 'rotation': '0'}
    >>> head_labels("fountain")
    {'kind': 'fountain', 'walls': (0, 0, 0, 0), 'rotation': '0'}
    >>> head_labels("")
    {'kind': 'none'}
    >>> head_labels("castle:N")
    {}
    """
    text = str(value).strip()
    if text in ("", "."):
        return {"kind": "none"}
    kind, _, walls = text.partition(":")
    if kind not in KINDS or any(side not in UPRIGHT_SIDES for side in walls):
        return {}
    return {"kind": kind, "walls": tuple(int(side in walls) for side in UPRIGHT_SIDES), "rotation": "0"}


def turn_labels(labels: dict[str, Any], variant: int) -> dict[str, Any]:
    """The labels of the upright crop turned ``variant % 4`` quarter turns counter-clockwise, then mirrored when ``variant >= 4``.

    Kind and price do not turn; the walls move round with the crop's sides; a mirrored tile has no rotation.

    >>> turn_labels({"kind": "garden", "walls": (1, 0, 0, 0), "rotation": "0"}, 1)
    {'kind': 'garden', 'walls': (0, 0, 0, 1), 'rotation': '90'}
    >>> turn_labels({"walls": (0, 1, 0, 0), "rotation": "0"}, 4)
    {'walls': (0, 0, 0, 1)}
    """
    turned = dict(labels)
    quarter = variant % 4
    if "walls" in labels:
        walls = labels["walls"]
        walls = tuple(walls[(side + quarter) % 4] for side in range(4))  # crop = rot90(upright, k): side j shows upright side j + k
        turned["walls"] = tuple(walls[i] for i in MIRROR) if variant >= 4 else walls
    if "rotation" in labels:
        if variant >= 4:
            del turned["rotation"]
        else:
            turned["rotation"] = ("0", "90", "180", "270")[quarter]
    return turned
