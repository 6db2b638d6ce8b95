"""Splendor scoring core: tableau state, prestige, the tie-break and deck and noble checks.

A player's tableau holds the purchased development cards (each gives one bonus colour and
0-5 prestige points), the nobles that visited (3 points each) and up to three reserved cards,
which never score. The document format is the Splendor section of FORMATS.md.

>>> state = SplendorState.from_json({"game": "splendor", "players": [
...     {"name": "Ana", "cards": [{"id": "L3-red-2"}, {"bonus": "white", "points": 1}], "nobles": 2},
...     {"name": "Bo", "cards": [{"bonus": "blue", "points": 5}], "nobles": 0}]})
>>> report = score(state)
>>> [(p.name, p.prestige) for p in report.players], report.winner, report.game_over
([('Ana', 11), ('Bo', 5)], None, False)
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from typing import Any

from scoring.data import load_data
from scoring.errors import StateError
from scoring.fields import child, describe, expect_int, expect_list, expect_object, expect_str, fail, field
from scoring.game import Game
from scoring.issue import Issue

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
DECK: dict[tuple[int, str, int], int] = dict(
    Counter((card["level"], card["bonus"], card["points"]) for card in _RAW["cards"])
)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _bonus_text(bonuses: dict[str, int], colors: tuple[str, ...] = COLORS) -> str:
    return ", ".join(f"{color} {bonuses[color]}" for color in colors)


@dataclass(frozen=True)
class Card:
    """One purchased development card: its bonus colour, prestige points and, when known, level and id.

    A card given by id takes its level, bonus and points from ``data/splendor_cards.json``;
    a card given as bonus + points may leave its level unknown (``None``).

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
                raise StateError(
                    f"card.points: a level-{self.level} card has {_level_points_text(self.level)} points, "
                    f"got {self.points}"
                )
        if self.id is not None:
            raw = _RAW_CARDS.get(self.id)
            if raw is None:
                raise StateError(f"card.id: unknown card id {describe(self.id)}")
            if (raw["bonus"], raw["points"], raw["level"]) != (self.bonus, self.points, self.level):
                raise StateError(
                    f"card.id: {self.id} is not a level-{self.level} {self.bonus} {self.points}-point card"
                )

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
                    f"unknown card id {describe(card_id)}; ids look like 'L1-white-1' (see data/splendor_cards.json)",
                )
            card = CARDS[card_id]
            for key in ("bonus", "points", "level"):
                given = obj.get(key)
                if given is not None and given != getattr(card, key):
                    raise fail(
                        child(path, key), f"card {card_id} has {key} {getattr(card, key)!r}, got {describe(given)}"
                    )
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

    def to_json(self) -> dict:
        """Return the FORMATS.md form: ``{"id": ...}`` when the id is known, else bonus and points.

        >>> Card("green", 2, level=2).to_json(), CARDS["L1-red-8"].to_json()
        ({'bonus': 'green', 'points': 2, 'level': 2}, {'id': 'L1-red-8'})
        """
        if self.id is not None:
            return {"id": self.id}
        doc: dict = {"bonus": self.bonus, "points": self.points}
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
        """Return the non-zero requirements by colour."""
        return {color: need for color, need in zip(COLORS, self.requires, strict=True) if need}

    def is_met_by(self, bonuses: dict[str, int]) -> bool:
        """Return whether ``bonuses`` (colour -> purchased cards) meet this noble's requirement."""
        return all(bonuses.get(color, 0) >= need for color, need in self.requirement.items())


CARDS: dict[str, Card] = {
    raw["id"]: Card(raw["bonus"], raw["points"], raw["level"], raw["id"]) for raw in _RAW["cards"]
}
NOBLES: dict[str, Noble] = {
    raw["id"]: Noble(raw["id"], tuple(raw["requires"][color] for color in COLORS), raw["points"])
    for raw in _RAW["nobles"]
}


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
            f"{self.name}: {_bonus_text(self.bonuses)} | {_plural(len(self.cards), 'card')}, "
            f"{self.card_points} card points, nobles {nobles or 0}, {self.reserved} reserved"
        )

    @property
    def noble_count(self) -> int:
        """Return how many nobles visited the player."""
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
        """Return card points plus noble points; reserved cards never score."""
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
            Card.from_json(item, child(cards_path, index))
            for index, item in enumerate(expect_list(field(obj, "cards", path), cards_path))
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

    def to_json(self) -> dict:
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
                raise StateError(
                    f"players[{index}].name: duplicate name {describe(player.name)}; each player needs a distinct name"
                )
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

    def to_json(self) -> dict:
        """Return the FORMATS.md document (``from_json`` inverts it exactly).

        >>> SplendorState((SplendorPlayer("Ana"),)).to_json()
        {'game': 'splendor', 'players': [{'name': 'Ana', 'cards': [], 'nobles': 0, 'reserved': 0}]}
        """
        return {"game": "splendor", "players": [player.to_json() for player in self.players]}


# --------------------------------------------------------------------------- checks


def validate(state: SplendorState) -> list[Issue]:
    """List the tableau findings: deck counts, repeated card or noble ids, noble requirements, limits.

    ``Issue.player`` is the player's index; a finding that involves several players is listed once
    under each of them. ``Issue.cells`` are ``(player, card index)`` pairs of the cards involved.

    >>> too_many = [{"bonus": "white", "points": 1, "level": 1}] * 2
    >>> state = SplendorState.from_json({"players": [{"name": "Ana", "cards": too_many, "reserved": 4}]})
    >>> [(issue.rule, issue.player) for issue in validate(state)]
    [('too-many-reserved', 0), ('too-many-cards', 0)]
    """
    issues: list[Issue] = []
    for index, player in enumerate(state.players):
        if player.reserved > MAX_RESERVED:
            issues.append(
                Issue(
                    "too-many-reserved",
                    f"{player.name} has {player.reserved} reserved cards; a player may hold at most {MAX_RESERVED}",
                    player=index,
                )
            )
    issues.extend(_card_issues(state))
    issues.extend(_noble_issues(state))
    return issues


def _spread(rule: str, detail: str, cells: list[tuple[int, int]], players: list[int]) -> list[Issue]:
    """One Issue per involved player (in seating order), each naming every involved card."""
    return [Issue(rule, detail, cells=tuple(cells), player=p) for p in sorted(set(players))]


def _card_issues(state: SplendorState) -> list[Issue]:
    issues: list[Issue] = []
    first_seen: dict[str, tuple[int, int]] = {}
    # (bonus, points) -> level or None -> positions of the cards counted against the deck
    kinds: dict[tuple[str, int], dict[int | None, list[tuple[int, int]]]] = {}
    for p, player in enumerate(state.players):
        for c, card in enumerate(player.cards):
            if card.id is not None:
                if card.id in first_seen:
                    q, d = first_seen[card.id]
                    detail = (
                        f"card {card.id} appears twice, as {state.players[q].name}'s card {d + 1} "
                        f"and {player.name}'s card {c + 1}; the deck holds one of each card"
                    )
                    issues.extend(_spread("card-used-twice", detail, [(q, d), (p, c)], [q, p]))
                    continue
                first_seen[card.id] = (p, c)
            kinds.setdefault((card.bonus, card.points), {}).setdefault(card.level, []).append((p, c))
    for (bonus, points), by_level in sorted(kinds.items(), key=lambda item: (COLORS.index(item[0][0]), item[0][1])):
        kind = f"{bonus} {points}-point"
        free = 0
        for level in LEVELS:
            held = DECK.get((level, bonus, points), 0)
            placed = by_level.get(level, [])
            if len(placed) > held:
                detail = (
                    f"{len(placed)} level-{level} {kind} cards, but the deck holds {held}{_owner_text(state, placed)}"
                )
                issues.extend(_spread("too-many-cards", detail, placed, [p for p, _ in placed]))
            free += max(0, held - len(placed))
        unknown = by_level.get(None, [])
        if len(unknown) > free:
            per_level = [(level, DECK[(level, bonus, points)]) for level in LEVELS if (level, bonus, points) in DECK]
            total = sum(held for _, held in per_level)
            where = " and ".join(f"{held} at level {level}" for level, held in per_level)
            known = sum(len(cards) for level, cards in by_level.items() if level is not None)
            detail = (
                f"{len(unknown)} {kind} cards without a level, but the deck holds {total} {kind} "
                f"{'card' if total == 1 else 'cards'} ({where})"
            )
            if known:
                detail += f" and {known} {'is' if known == 1 else 'are'} already given with a level"
            detail += f", so at most {free} more can be on the table{_owner_text(state, unknown)}"
            placed = [pos for cards in by_level.values() for pos in cards]
            issues.extend(_spread("too-many-cards", detail, sorted(placed), [p for p, _ in unknown]))
    return issues


def _owner_text(state: SplendorState, positions: list[tuple[int, int]]) -> str:
    owners = Counter(p for p, _ in positions)
    if len(owners) == 1:
        return ""
    return " (" + ", ".join(f"{state.players[p].name} {n}" for p, n in sorted(owners.items())) + ")"


def _noble_issues(state: SplendorState) -> list[Issue]:
    issues: list[Issue] = []
    first_seen: dict[str, int] = {}
    fixed: set[str] = set()
    requirement_broken = False
    for p, player in enumerate(state.players):
        bonuses = player.bonuses
        if isinstance(player.nobles, tuple):
            for noble_id in player.nobles:
                noble = NOBLES.get(noble_id)
                if noble is None:
                    detail = f"{player.name}'s noble {noble_id!r} is not a Splendor noble (ids N1-N{len(NOBLES)})"
                    issues.append(Issue("unknown-noble", detail, player=p))
                    continue
                if noble_id in first_seen:
                    q = first_seen[noble_id]
                    owners = f"{player.name} twice" if q == p else f"{state.players[q].name} and {player.name}"
                    detail = f"noble {noble_id} is listed for {owners}; each noble visits only one player, once"
                    issues.extend(_spread("noble-twice", detail, [], [q, p]))
                    continue
                first_seen[noble_id] = p
                fixed.add(noble_id)
                if not noble.is_met_by(bonuses):
                    need = " and ".join(f"{n} {color}" for color, n in noble.requirement.items())
                    has = _bonus_text(bonuses, tuple(noble.requirement))
                    detail = f"noble {noble_id} needs {need} bonuses; {player.name} has {has}"
                    issues.append(Issue("noble-requirement", detail, player=p))
                    requirement_broken = True
        elif player.nobles:
            met = [noble.id for noble in NOBLES.values() if noble.is_met_by(bonuses)]
            if player.nobles > len(met):
                detail = (
                    f"{player.name} has {_plural(player.nobles, 'noble')}, but bonuses {_bonus_text(bonuses)} "
                    f"meet the requirement of only {len(met)} ({', '.join(met) or 'none'})"
                )
                issues.append(Issue("noble-requirement", detail, player=p))
                requirement_broken = True
    total = sum(player.noble_count for player in state.players)
    count = len(state.players)
    limit = count + 1 if count >= 2 else MAX_NOBLES
    if total > limit:
        game = f"a {count}-player game puts only {limit} in play" if count >= 2 else f"a game has at most {limit}"
        holders = [p for p, player in enumerate(state.players) if player.noble_count]
        issues.extend(_spread("too-many-nobles", f"{total} nobles across the game, but {game}", [], holders))
    elif not requirement_broken:
        issues.extend(_shared_noble_issues(state, fixed))
    return issues


def _shared_noble_issues(state: SplendorState, fixed: set[str]) -> list[Issue]:
    """Nobles given as counts must be distinct tiles: match each to a noble its owner's bonuses meet."""
    slots: list[tuple[int, list[str]]] = []
    for p, player in enumerate(state.players):
        if not isinstance(player.nobles, tuple):
            options = [n.id for n in NOBLES.values() if n.id not in fixed and n.is_met_by(player.bonuses)]
            slots.extend((p, options) for _ in range(player.nobles))
    taken: dict[str, int] = {}

    def assign(slot: int, visited: set[str]) -> bool:
        for noble_id in slots[slot][1]:
            if noble_id not in visited:
                visited.add(noble_id)
                if noble_id not in taken or assign(taken[noble_id], visited):
                    taken[noble_id] = slot
                    return True
        return False

    matched = sum(assign(slot, set()) for slot in range(len(slots)))
    if matched == len(slots):
        return []
    players = sorted({p for p, _ in slots})
    names = ", ".join(f"{state.players[p].name} {state.players[p].nobles}" for p in players)
    options = sorted({n for _, opts in slots for n in opts}, key=lambda n: int(n[1:]))
    detail = (
        f"the nobles counted for {names} must be {len(slots)} different tiles, but their bonuses "
        f"allow at most {matched} different nobles ({', '.join(options) or 'none'})"
    )
    if fixed:
        detail += f" besides {', '.join(sorted(fixed, key=lambda n: int(n[1:])))} listed by id"
    return _spread("nobles-shared", detail, [], players)


# --------------------------------------------------------------------------- scoring


@dataclass(frozen=True)
class PlayerScore:
    """One player's line of the report: prestige and what it is made of."""

    name: str
    prestige: int
    cards: int
    nobles: int
    card_points: int
    noble_points: int
    reserved: int
    bonuses: tuple[tuple[str, int], ...]
    points_by_level: tuple[tuple[str, int], ...]
    violations: tuple[Issue, ...]

    def to_json(self) -> dict:
        """Return the FORMATS.md per-player entry."""
        return {
            "name": self.name,
            "prestige": self.prestige,
            "cards": self.cards,
            "nobles": self.nobles,
            "violations": [_violation_json(issue) for issue in self.violations],
        }


def _violation_json(issue: Issue) -> dict:
    doc: dict = {"rule": issue.rule, "detail": issue.detail}
    if issue.cells:
        doc["cards"] = [list(cell) for cell in issue.cells]
    return doc


@dataclass(frozen=True)
class SplendorReport:
    """The score of a Splendor table: per-player lines, ranking, winner and whether the game is over.

    ``winner`` is a name, a tuple of names for a shared win, or ``None`` while nobody has 15.
    """

    players: tuple[PlayerScore, ...]
    ranking: tuple[str, ...]
    winner: str | tuple[str, ...] | None
    game_over: bool
    message: str | None

    def to_json(self) -> dict:
        """Return the FORMATS.md report (``message`` only when the game is not over).

        >>> doc = {"players": [{"name": "Ana", "cards": [{"bonus": "red", "points": 5}] * 1, "nobles": 4},
        ...                    {"name": "Bo", "cards": []}]}
        >>> report = score(SplendorState.from_json(doc)).to_json()
        >>> report["ranking"], report["winner"], report["game_over"], report["players"][0]["prestige"]
        (['Ana', 'Bo'], 'Ana', True, 17)
        """
        doc: dict = {
            "game": "splendor",
            "players": [player.to_json() for player in self.players],
            "ranking": list(self.ranking),
            "winner": list(self.winner) if isinstance(self.winner, tuple) else self.winner,
            "game_over": self.game_over,
        }
        if self.message is not None:
            doc["message"] = self.message
        return doc

    def to_text(self) -> str:
        """Return a plain-text report: cards per colour, points per level, nobles and total per player."""
        width = max(len(player.name) for player in self.players)
        lines = []
        for player in self.players:
            lines.append(f"{player.name:<{width}}  {player.prestige} prestige")
            colours = ", ".join(f"{color} {n}" for color, n in player.bonuses)
            lines.append(f"  cards    {player.cards:>2}: {colours}")
            levels = ", ".join(f"{label} {points}" for label, points in player.points_by_level)
            lines.append(f"  points   {player.card_points:>2}: {levels}")
            lines.append(f"  nobles   {player.noble_points:>2}: {player.nobles} x {NOBLE_POINTS}")
            if player.reserved:
                lines.append(f"  reserved {player.reserved:>2} (never score)")
            lines.append(f"  total    {player.prestige:>2}")
            for issue in player.violations:
                lines.append(f"  ! {issue.rule}: {issue.detail}")
        by_name = {player.name: player for player in self.players}
        ranking = ", ".join(
            f"{place}. {name} {by_name[name].prestige} ({_plural(by_name[name].cards, 'card')})"
            for place, name in enumerate(self.ranking, start=1)
        )
        lines.append(f"Ranking: {ranking}")
        if isinstance(self.winner, tuple):
            lines.append(f"Shared win: {', '.join(self.winner)}")
        elif self.winner is not None:
            lines.append(f"Winner: {self.winner}{_tie_break_text(by_name, self.ranking)}")
        if self.message is not None:
            lines.append(self.message)
        return "\n".join(lines)


def _tie_break_text(by_name: dict[str, PlayerScore], ranking: tuple[str, ...]) -> str:
    first = by_name[ranking[0]]
    tied = [by_name[name] for name in ranking[1:] if by_name[name].prestige == first.prestige]
    if not tied:
        return ""
    others = ", ".join(f"{player.name} {player.cards}" for player in tied)
    return f" (tied on {first.prestige} prestige; fewest cards wins: {first.cards} against {others})"


def _level_label(card: Card) -> str:
    levels = card.possible_levels
    return f"L{levels[0]}" if len(levels) == 1 else "level ?"


def score(state: SplendorState) -> SplendorReport:
    """Score a table: prestige per player, ranking (most prestige, then fewest cards) and the winner.

    A tie on both prestige and card count is a shared win; while nobody has 15 prestige the game
    is not over and there is no winner yet (the ranking still shows the order).

    >>> ana = [{"bonus": color, "points": 5} for color in ("red", "blue", "green")]
    >>> bo = [{"bonus": "white", "points": 5}, {"bonus": "black", "points": 5}, {"id": "L3-red-2"}, {"id": "L1-red-8"}]
    >>> doc = {"players": [{"name": "Bo", "cards": bo}, {"name": "Ana", "cards": ana}]}
    >>> report = score(SplendorState.from_json(doc))
    >>> report.ranking, report.winner
    (('Ana', 'Bo'), 'Ana')
    >>> [line.prestige for line in report.players], validate(SplendorState.from_json(doc))
    ([15, 15], [])
    """
    issues = validate(state)
    lines = []
    for index, player in enumerate(state.players):
        by_level: Counter[str] = Counter()
        for card in player.cards:
            by_level[_level_label(card)] += card.points
        labels = ["L1", "L2", "L3"] + (["level ?"] if "level ?" in by_level else [])
        lines.append(
            PlayerScore(
                name=player.name,
                prestige=player.prestige,
                cards=len(player.cards),
                nobles=player.noble_count,
                card_points=player.card_points,
                noble_points=player.noble_points,
                reserved=player.reserved,
                bonuses=tuple(player.bonuses.items()),
                points_by_level=tuple((label, by_level[label]) for label in labels),
                violations=tuple(issue for issue in issues if issue.player == index),
            )
        )
    order = sorted(range(len(lines)), key=lambda i: (-lines[i].prestige, lines[i].cards))
    best = lines[order[0]]
    leaders = tuple(lines[i].name for i in order if (lines[i].prestige, lines[i].cards) == (best.prestige, best.cards))
    game_over = best.prestige >= WINNING_PRESTIGE
    winner: str | tuple[str, ...] | None = None
    message = None
    if game_over:
        winner = leaders[0] if len(leaders) == 1 else leaders
    else:
        message = (
            f"The game is not over: nobody has {WINNING_PRESTIGE} prestige yet "
            f"(highest {best.prestige}, {', '.join(leaders)}); no winner"
        )
    return SplendorReport(
        players=tuple(lines),
        ranking=tuple(lines[i].name for i in order),
        winner=winner,
        game_over=game_over,
        message=message,
    )


# --------------------------------------------------------------------------- generator

_NAMES = ("Ana", "Bo", "Cy", "Dee")


def generate(rng: random.Random, players: int | None = None) -> SplendorState:
    """Play a random but legal game to its end and return the final table.

    Each turn a player buys a card (early turns favour level 1, later ones levels 2 and 3) and
    may be visited by one noble in play; the game ends after the round in which someone reaches
    15, or when the deck runs out. Cards come by id, as bonus + points, or with a level; nobles as
    ids or a count, so every input form is exercised.

    >>> state = generate(random.Random(7), players=3)
    >>> len(state.players), validate(state)
    (3, [])

    Raises:
        StateError: when ``players`` is not 2-4.
    """
    count = rng.randint(2, MAX_PLAYERS) if players is None else players
    if isinstance(count, bool) or not isinstance(count, int) or not 2 <= count <= MAX_PLAYERS:
        raise StateError(f"players: expected 2-{MAX_PLAYERS}, got {describe(count)}")
    deck = {level: [card for card in CARDS.values() if card.level == level] for level in LEVELS}
    for cards in deck.values():
        rng.shuffle(cards)
    in_play = rng.sample(sorted(NOBLES), count + 1)
    bought: list[list[Card]] = [[] for _ in range(count)]
    visits: list[list[str]] = [[] for _ in range(count)]
    turn = 0
    while any(deck.values()):
        for p in range(count):
            weights = [
                max(1, 12 - turn) if deck[1] else 0,
                max(0, turn - 2) if deck[2] else 0,
                max(0, turn - 8) if deck[3] else 0,
            ]
            if not any(weights):
                weights = [len(deck[level]) for level in LEVELS]
            if not any(weights):
                break
            level = rng.choices(LEVELS, weights=weights)[0]
            bought[p].append(_pick(rng, deck[level], bought[p], in_play))
            bonuses = Counter(card.bonus for card in bought[p])
            for noble_id in in_play:
                if NOBLES[noble_id].is_met_by(bonuses):
                    visits[p].append(noble_id)
                    in_play.remove(noble_id)
                    break
        turn += 1
        if any(
            sum(c.points for c in cards) + NOBLE_POINTS * len(v) >= WINNING_PRESTIGE
            for cards, v in zip(bought, visits, strict=True)
        ):
            break
    table = []
    for p in range(count):
        cards = tuple(_random_form(rng, card) for card in bought[p])
        nobles: int | tuple[str, ...] = tuple(visits[p]) if rng.random() < 0.5 else len(visits[p])
        table.append(SplendorPlayer(_NAMES[p], cards, nobles, rng.randint(0, MAX_RESERVED)))
    return SplendorState(tuple(table))


def _pick(rng: random.Random, cards: list[Card], owned: list[Card], in_play: list[str]) -> Card:
    """Take one of the four face-up cards (the deck's end), mostly one an in-play noble wants."""
    market = cards[-4:]
    have = Counter(card.bonus for card in owned)
    wanted = {
        color for noble_id in in_play for color, need in NOBLES[noble_id].requirement.items() if have[color] < need
    }
    useful = [card for card in market if card.bonus in wanted]
    choice = rng.choice(useful if useful and rng.random() < 0.7 else market)
    cards.remove(choice)
    return choice


def _random_form(rng: random.Random, card: Card) -> Card:
    form = rng.random()
    if form < 0.5:
        return card
    if form < 0.75:
        return Card(card.bonus, card.points, card.level)
    return Card(card.bonus, card.points)


GAME = Game(
    id="splendor",
    title="Splendor",
    parse=SplendorState.from_json,
    validate=validate,
    score=score,
    generate=generate,
)
