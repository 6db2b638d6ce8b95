"""Splendor's cards and nobles: the deck as shipped, card and noble records, their JSON forms."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from scoring.data import load_data
from scoring.errors import StateError
from scoring.fields import child, describe, expect_int, expect_object, expect_str, fail, field

COLORS = ("white", "blue", "green", "red", "black")
LEVELS = (1, 2, 3)
WINNING_PRESTIGE = 15
NOBLE_POINTS = 3
MAX_RESERVED = 3
MAX_PLAYERS = 4
MAX_NOBLES = MAX_PLAYERS + 1
MAX_CARD_POINTS = 5

_RAW = load_data("splendor", "cards")
_RAW_CARDS = {card["id"]: card for card in _RAW["cards"]}
# How many cards of each (level, bonus, points) kind the deck holds, e.g. (1, "white", 1) -> 1.
DECK: dict[tuple[int, str, int], int] = dict(Counter((card["level"], card["bonus"], card["points"]) for card in _RAW["cards"]))


def plural(count: int, word: str) -> str:
    """Return ``count`` and ``word``, with an ``s`` unless the count is 1.

    >>> plural(1, "card"), plural(0, "noble")
    ('1 card', '0 nobles')
    """
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def bonus_text(bonuses: dict[str, int], colors: tuple[str, ...] = COLORS) -> str:
    """Return the bonus count of each of ``colors``, in that order.

    >>> bonus_text({"white": 1, "red": 2}, ("red", "white"))
    'red 2, white 1'

    Raises:
        KeyError: when ``bonuses`` lacks one of the colours.
    """
    return ", ".join(f"{color} {bonuses[color]}" for color in colors)


@dataclass(frozen=True)
class Card:
    """One purchased development card: its bonus colour, prestige points and, when known, level and id.

    A card given by id takes its level, bonus and points from the shipped deck
    (``scoring/splendor/data/cards.json``); a card given as bonus + points may leave its level unknown (``None``).

    >>> Card("white", 1).possible_levels
    (1, 2)
    >>> Card.from_json({"id": "L1-white-8"}, "cards[0]")
    Card(bonus='white', points=1, level=1, id='L1-white-8')

    Raises:
        StateError: an unknown colour or id, or points the deck never prints for that level.
    """

    bonus: str
    points: int
    level: int | None = None
    id: str | None = None

    def __post_init__(self) -> None:
        if self.bonus not in COLORS:
            raise StateError(f"card.bonus: expected one of {', '.join(COLORS)}; got {describe(self.bonus)}")
        expect_int(self.points, "card.points", low=0, high=MAX_CARD_POINTS)
        if self.level is not None:
            expect_int(self.level, "card.level", low=1, high=3)
            if (self.level, self.bonus, self.points) not in DECK:
                raise StateError(f"card.points: a level-{self.level} card has {_level_points_text(self.level)} points, got {self.points}")
        if self.id is not None:
            raw = _RAW_CARDS.get(self.id)
            if raw is None:
                raise StateError(f"card.id: unknown card id {describe(self.id)}")
            if (raw["bonus"], raw["points"], raw["level"]) != (self.bonus, self.points, self.level):
                raise StateError(f"card.id: {self.id} is not a level-{self.level} {self.bonus} {self.points}-point card")

    @property
    def possible_levels(self) -> tuple[int, ...]:
        """Return the levels this card can come from (one when the level is known).

        >>> Card("red", 3).possible_levels, Card("red", 3, level=3).possible_levels
        ((2, 3), (3,))
        """
        if self.level is not None:
            return (self.level,)
        return tuple(level for level in LEVELS if (level, self.bonus, self.points) in DECK)

    @classmethod
    def from_json(cls, value: Any, path: str) -> Card:
        """Parse ``{"id": ...}`` or ``{"bonus": colour, "points": n}`` (optionally ``"level"``).

        >>> Card.from_json({"bonus": "black", "points": 4}, "x")
        Card(bonus='black', points=4, level=None, id=None)
        >>> Card.from_json({"id": "L9-pink-1"}, "players[0].cards[2]")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        scoring.errors.StateError: players[0].cards[2].id: unknown card id 'L9-pink-1'; ids look like ...

        Raises:
            StateError: naming the JSON path of a wrong type, unknown id or colour, or impossible points.
        """
        obj = expect_object(value, path)
        card_id = obj.get("id")
        if card_id is not None:
            card_id = expect_str(card_id, child(path, "id"))
            if card_id not in CARDS:
                raise fail(
                    child(path, "id"),
                    f"unknown card id {describe(card_id)}; ids look like 'L1-white-1' (see scoring/splendor/data/cards.json)",
                )
            card = CARDS[card_id]
            printed: tuple[tuple[str, object], ...] = (("bonus", card.bonus), ("points", card.points), ("level", card.level))
            for key, have in printed:
                given = obj.get(key)
                if given is not None and given != have:
                    raise fail(child(path, key), f"card {card_id} has {key} {have!r}, got {describe(given)}")
            return card
        bonus = expect_str(field(obj, "bonus", path), child(path, "bonus"), COLORS)
        points = expect_int(field(obj, "points", path), child(path, "points"), low=0, high=MAX_CARD_POINTS)
        level = obj.get("level")
        if level is not None:
            level = expect_int(level, child(path, "level"), low=1, high=3)
            if (level, bonus, points) not in DECK:
                raise fail(
                    child(path, "points"),
                    f"a level-{level} card has {_level_points_text(level)} points, got {points}",
                )
        return cls(bonus, points, level)

    def to_json(self) -> dict[str, Any]:
        """Return the FORMATS.md form: ``{"id": ...}`` when the id is known, else bonus and points.

        >>> Card("green", 2, level=2).to_json(), CARDS["L1-red-8"].to_json()
        ({'bonus': 'green', 'points': 2, 'level': 2}, {'id': 'L1-red-8'})
        """
        if self.id is not None:
            return {"id": self.id}
        doc: dict[str, Any] = {"bonus": self.bonus, "points": self.points}
        if self.level is not None:
            doc["level"] = self.level
        return doc


def _level_points_text(level: int) -> str:
    values = sorted({points for (lvl, _, points) in DECK if lvl == level})
    return f"{values[0]}-{values[-1]}"


@dataclass(frozen=True)
class Noble:
    """A noble tile: its id, the bonuses it requires (in ``COLORS`` order) and its prestige.

    >>> NOBLES["N1"].requirement
    {'white': 4, 'blue': 4}
    >>> NOBLES["N1"].is_met_by({"white": 4, "blue": 5, "green": 0, "red": 0, "black": 0})
    True
    """

    id: str
    requires: tuple[int, ...]
    points: int = NOBLE_POINTS

    @property
    def requirement(self) -> dict[str, int]:
        """Return the non-zero requirements by colour.

        >>> Noble("x", (4, 4, 0, 0, 0)).requirement
        {'white': 4, 'blue': 4}
        """
        return {color: need for color, need in zip(COLORS, self.requires, strict=True) if need}

    def is_met_by(self, bonuses: dict[str, int]) -> bool:
        """Return whether ``bonuses`` (colour -> purchased cards) meet this noble's requirement.

        >>> Noble("x", (4, 4, 0, 0, 0)).is_met_by({"white": 4, "blue": 3})
        False
        """
        return all(bonuses.get(color, 0) >= need for color, need in self.requirement.items())


CARDS: dict[str, Card] = {raw["id"]: Card(raw["bonus"], raw["points"], raw["level"], raw["id"]) for raw in _RAW["cards"]}
NOBLES: dict[str, Noble] = {
    raw["id"]: Noble(raw["id"], tuple(raw["requires"][color] for color in COLORS), raw["points"]) for raw in _RAW["nobles"]
}
