"""Splendor game state: each player's tableau (cards, nobles, reserved) and the table."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from scoring.errors import StateError
from scoring.fields import child, describe, expect_int, expect_list, expect_object, expect_str, fail, field
from scoring.splendor.cards import (
    CARDS,  # noqa: F401  (doctests)
    COLORS,
    MAX_PLAYERS,
    NOBLE_POINTS,
    NOBLES,
    Card,
    bonus_text,
    plural,
)


@dataclass(frozen=True)
class SplendorPlayer:
    """One player's tableau: purchased cards, nobles (a count or a tuple of noble ids), reserved cards.

    >>> player = SplendorPlayer("Ana", (CARDS["L3-red-2"], Card("white", 1)), nobles=("N1",))
    >>> player.prestige, player.noble_count, player.bonuses["red"]
    (8, 1, 1)
    >>> print(player)
    Ana: white 1, blue 0, green 0, red 1, black 0 | 2 cards, 5 card points, nobles N1, 0 reserved

    Raises:
        StateError: a wrong type or a negative count.
    """

    name: str
    cards: tuple[Card, ...] = ()
    nobles: int | tuple[str, ...] = 0
    reserved: int = 0

    def __post_init__(self) -> None:
        expect_str(self.name, "player.name")
        if not isinstance(self.cards, tuple) or not all(isinstance(card, Card) for card in self.cards):
            raise StateError(f"player.cards: expected a tuple of Card, got {describe(self.cards)}")
        if isinstance(self.nobles, tuple):
            for index, noble in enumerate(self.nobles):
                expect_str(noble, f"player.nobles[{index}]")
        else:
            expect_int(self.nobles, "player.nobles", low=0)
        expect_int(self.reserved, "player.reserved", low=0)

    def __str__(self) -> str:
        nobles = ", ".join(self.nobles) if isinstance(self.nobles, tuple) else str(self.nobles)
        return (
            f"{self.name}: {bonus_text(self.bonuses)} | {plural(len(self.cards), 'card')}, "
            f"{self.card_points} card points, nobles {nobles or 0}, {self.reserved} reserved"
        )

    @property
    def noble_count(self) -> int:
        """Return how many nobles visited the player.

        >>> SplendorPlayer("Ana", (), 2).noble_count, SplendorPlayer("Bo", (), ()).noble_count
        (2, 0)
        """
        return len(self.nobles) if isinstance(self.nobles, tuple) else self.nobles

    @property
    def bonuses(self) -> dict[str, int]:
        """Return the purchased cards per bonus colour, in ``COLORS`` order."""
        counts = Counter(card.bonus for card in self.cards)
        return {color: counts[color] for color in COLORS}

    @property
    def card_points(self) -> int:
        """Return the prestige printed on the purchased cards."""
        return sum(card.points for card in self.cards)

    @property
    def noble_points(self) -> int:
        """Return the prestige of the nobles (3 each; an unknown id still counts as a noble)."""
        return NOBLE_POINTS * self.noble_count

    @property
    def prestige(self) -> int:
        """Return card points plus noble points; reserved cards never score.

        >>> ana = SplendorPlayer("Ana", (CARDS["L3-red-2"],), 1, reserved=2)
        >>> ana.card_points, ana.noble_points, ana.prestige, ana.bonuses["red"]
        (4, 3, 7, 1)
        """
        return self.card_points + self.noble_points

    @classmethod
    def from_json(cls, value: Any, path: str) -> SplendorPlayer:
        """Parse one player object of FORMATS.md.

        >>> SplendorPlayer.from_json({"name": "Bo", "cards": [], "nobles": -1}, "players[1]")
        Traceback (most recent call last):
        ...
        scoring.errors.StateError: players[1].nobles: expected a count >= 0 or a list of noble ids, got -1

        Raises:
            StateError: naming the JSON path of a missing key, wrong type or negative count.
        """
        obj = expect_object(value, path)
        name = expect_str(field(obj, "name", path), child(path, "name"))
        cards_path = child(path, "cards")
        cards = tuple(
            Card.from_json(item, child(cards_path, index)) for index, item in enumerate(expect_list(field(obj, "cards", path), cards_path))
        )
        nobles_path = child(path, "nobles")
        raw_nobles = field(obj, "nobles", path, 0)
        nobles: int | tuple[str, ...]
        if isinstance(raw_nobles, list):
            nobles = tuple(expect_str(item, child(nobles_path, index)) for index, item in enumerate(raw_nobles))
            for index, noble_id in enumerate(nobles):
                if noble_id not in NOBLES:
                    raise fail(child(nobles_path, index), f"unknown noble id {noble_id!r}; expected one of N1-N{len(NOBLES)}")
        elif isinstance(raw_nobles, int) and not isinstance(raw_nobles, bool) and raw_nobles >= 0:
            nobles = raw_nobles
        else:
            raise fail(nobles_path, f"expected a count >= 0 or a list of noble ids, got {describe(raw_nobles)}")
        reserved = expect_int(field(obj, "reserved", path, 0), child(path, "reserved"), low=0)
        return cls(name, cards, nobles, reserved)

    def to_json(self) -> dict[str, Any]:
        """Return the FORMATS.md player object (``from_json`` inverts it exactly).

        >>> SplendorPlayer("Bo", (Card("blue", 0),), nobles=("N3",), reserved=2).to_json()
        {'name': 'Bo', 'cards': [{'bonus': 'blue', 'points': 0}], 'nobles': ['N3'], 'reserved': 2}
        """
        nobles = list(self.nobles) if isinstance(self.nobles, tuple) else self.nobles
        return {
            "name": self.name,
            "cards": [card.to_json() for card in self.cards],
            "nobles": nobles,
            "reserved": self.reserved,
        }


@dataclass(frozen=True)
class SplendorState:
    """A Splendor table at the end of a game: 1-4 players with distinct names, in seating order.

    >>> SplendorState((SplendorPlayer("Ana"), SplendorPlayer("Ana")))
    Traceback (most recent call last):
    ...
    scoring.errors.StateError: players[1].name: duplicate name 'Ana'; each player needs a distinct name

    Raises:
        StateError: no players, more than four, or a repeated name.
    """

    players: tuple[SplendorPlayer, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.players, tuple) or not all(isinstance(p, SplendorPlayer) for p in self.players):
            raise StateError(f"players: expected a tuple of SplendorPlayer, got {describe(self.players)}")
        if not 1 <= len(self.players) <= MAX_PLAYERS:
            raise StateError(f"players: expected 1-{MAX_PLAYERS} players, got {len(self.players)}")
        seen: set[str] = set()
        for index, player in enumerate(self.players):
            if player.name in seen:
                raise StateError(f"players[{index}].name: duplicate name {describe(player.name)}; each player needs a distinct name")
            seen.add(player.name)

    def __str__(self) -> str:
        return "\n".join(str(player) for player in self.players)

    @classmethod
    def from_json(cls, doc: Any) -> SplendorState:
        """Parse a FORMATS.md Splendor document; unknown keys (such as ``scan``) are ignored.

        >>> teal = {"bonus": "teal", "points": 1}
        >>> SplendorState.from_json({"game": "splendor", "players": [{"name": "Ana", "cards": [teal]}]})
        Traceback (most recent call last):
        ...
        scoring.errors.StateError: players[0].cards[0].bonus: expected one of white, blue, green, red, black; got 'teal'

        Raises:
            StateError: naming the JSON path of whatever does not follow FORMATS.md.
        """
        obj = expect_object(doc, "")
        game = obj.get("game", "splendor")
        if game != "splendor":
            raise fail("game", f"expected 'splendor', got {describe(game)}")
        raw_players = expect_list(field(obj, "players", ""), "players")
        if not 1 <= len(raw_players) <= MAX_PLAYERS:
            raise fail("players", f"expected 1-{MAX_PLAYERS} players, got {len(raw_players)}")
        players = tuple(SplendorPlayer.from_json(item, child("players", i)) for i, item in enumerate(raw_players))
        return cls(players)

    def to_json(self) -> dict[str, Any]:
        """Return the FORMATS.md document (``from_json`` inverts it exactly).

        >>> SplendorState((SplendorPlayer("Ana"),)).to_json()
        {'game': 'splendor', 'players': [{'name': 'Ana', 'cards': [], 'nobles': 0, 'reserved': 0}]}
        """
        return {"game": "splendor", "players": [player.to_json() for player in self.players]}
