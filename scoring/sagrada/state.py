"""Sagrada game state: players, the solo setup and the game, with ``from_json``/``to_json``.

``SAMPLE`` is the FORMATS.md example document the doctests score.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scoring.errors import StateError
from scoring.fields import child, describe, expect_int, expect_list, expect_object, expect_str
from scoring.sagrada.cards import Pattern, pattern_named
from scoring.sagrada.objectives import OBJECTIVES
from scoring.sagrada.window import (
    COLOR_NAMES,
    Window,
    check_window,
    empty_window,  # noqa: F401  (the doctests build empty windows)
    parse_window,
    window_rows,
)

__all__ = [
    "COLOR_CHOICES",
    "EMPTY_PENALTY",
    "MAX_FAVOR_TOKENS",
    "MAX_PLAYERS",
    "PUBLIC_COUNT",
    "ROUND_TRACK_MAX",
    "SAMPLE",
    "SOLO_EMPTY_PENALTY",
    "SOLO_PUBLIC_COUNT",
    "SagradaPlayer",
    "SagradaState",
    "SoloSetup",
]

PUBLIC_COUNT = 3
SOLO_PUBLIC_COUNT = 2
MAX_PLAYERS = 4
EMPTY_PENALTY = 1
SOLO_EMPTY_PENALTY = 3
MAX_FAVOR_TOKENS = 6  # the hardest patterns give 6; unused tokens never exceed what the pattern gave
ROUND_TRACK_MAX = 240  # 10 rounds x at most 4 leftover dice x 6 pips
COLOR_CHOICES = tuple(COLOR_NAMES.values())


def _color_name(value: Any, where: str) -> str:
    """Return a private objective colour name; a colour letter is accepted and named."""
    if isinstance(value, str) and value in COLOR_NAMES:
        return COLOR_NAMES[value]
    return expect_str(value, where, COLOR_CHOICES)


@dataclass(frozen=True)
class SagradaPlayer:
    """One player's finished window and what they hold.

    ``pattern`` may be given as a name and is stored as the ``Pattern``; ``private_objective``
    is a colour name (``"red"``; a letter like ``"R"`` is accepted), ``None`` in a solo game or
    when not known yet (it then scores 0, with a report warning).

    >>> SagradaPlayer("Ana", empty_window(), "Virtus", "red", 2).pattern.difficulty
    5

    Raises:
        StateError: on a bad field; the message starts with the field's name.
    """

    name: str
    window: Window
    pattern: Pattern | None = None
    private_objective: str | None = None
    favor_tokens: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise StateError(f"name: expected a non-empty string, got {describe(self.name)}")
        check_window(self.window, "window")
        if self.pattern is not None:
            object.__setattr__(self, "pattern", pattern_named(self.pattern, "pattern"))
        if self.private_objective is not None:
            object.__setattr__(self, "private_objective", _color_name(self.private_objective, "private_objective"))
        high = self.pattern.difficulty if self.pattern is not None else MAX_FAVOR_TOKENS
        try:
            expect_int(self.favor_tokens, "favor_tokens", low=0, high=high)
        except StateError as error:
            if self.pattern is not None and isinstance(self.favor_tokens, int) and self.favor_tokens > high:
                raise StateError(
                    f"favor_tokens: expected 0-{high} (pattern {self.pattern.name} gives {high} tokens), got {self.favor_tokens}"
                ) from None
            raise error from None

    def __str__(self) -> str:
        return "\n".join([f"{self.name}:"] + [f"  {row}" for row in window_rows(self.window)])

    @classmethod
    def from_json(cls, doc: Any, path: str = "player") -> SagradaPlayer:
        """Return the player a FORMATS.md player object describes.

        >>> SagradaPlayer.from_json({"name": "Bo", "window": ["R7"]}, "players[1]")
        Traceback (most recent call last):
        ...
        scoring.errors.StateError: players[1].window: expected 4 rows (top row first), got 1

        Raises:
            StateError: naming the JSON path below ``path``.
        """
        expect_object(doc, path)
        if "window" not in doc:
            raise StateError(f"{child(path, 'window')}: missing required key")
        window = parse_window(doc["window"], child(path, "window"))
        try:
            return cls(
                name=doc.get("name"),
                window=window,
                pattern=doc.get("pattern"),
                private_objective=doc.get("private_objective"),
                favor_tokens=doc["favor_tokens"] if doc.get("favor_tokens") is not None else 0,
            )
        except StateError as error:
            message = str(error)
            if message.startswith("name: expected") and "name" not in doc:
                message = "name: missing required key"
            raise StateError(f"{path}.{message}") from None

    def to_json(self, solo: bool = False) -> dict[str, Any]:
        """Return the FORMATS.md player object (no favor tokens in a solo game).

        >>> SagradaPlayer("Bo", empty_window(), None, "blue", 1).to_json()["favor_tokens"]
        1
        """
        doc: dict[str, Any] = {"name": self.name, "window": window_rows(self.window)}
        if self.pattern is not None:
            doc["pattern"] = self.pattern.name
        if self.private_objective is not None:
            doc["private_objective"] = self.private_objective
        if not solo or self.favor_tokens:
            doc["favor_tokens"] = self.favor_tokens
        return doc


@dataclass(frozen=True)
class SoloSetup:
    """The solo game's extras: two private objective colours and the round track's sum.

    >>> SoloSetup(("red", "blue"), 34).round_track_sum
    34

    Raises:
        StateError: on bad colours or a sum outside 0-240; the message starts with the field.
    """

    private_objectives: tuple[str, ...]
    round_track_sum: int

    def __post_init__(self) -> None:
        colors = self.private_objectives
        if not isinstance(colors, (tuple, list)) or len(colors) != 2:
            got = describe(list(colors)) if isinstance(colors, tuple) else describe(colors)
            raise StateError(f"private_objectives: expected 2 colour names, got {got}")
        names = tuple(_color_name(color, f"private_objectives[{i}]") for i, color in enumerate(colors))
        if names[0] == names[1]:
            raise StateError(f"private_objectives[1]: expected a colour other than {names[0]!r}, got it twice")
        object.__setattr__(self, "private_objectives", names)
        expect_int(self.round_track_sum, "round_track_sum", low=0, high=ROUND_TRACK_MAX)

    @classmethod
    def from_json(cls, doc: Any, path: str = "solo") -> SoloSetup:
        """Return the solo block of a FORMATS.md document.

        >>> SoloSetup.from_json({"private_objectives": ["red", "red"], "round_track_sum": 30})
        Traceback (most recent call last):
        ...
        scoring.errors.StateError: solo.private_objectives[1]: expected a colour other than 'red', got it twice

        Raises:
            StateError: naming the JSON path below ``path``.
        """
        expect_object(doc, path)
        for key in ("private_objectives", "round_track_sum"):
            if doc.get(key) is None:
                raise StateError(f"{child(path, key)}: missing required key")
        colors = expect_list(doc["private_objectives"], child(path, "private_objectives"), 2)
        try:
            return cls(tuple(colors), doc["round_track_sum"])
        except StateError as error:
            raise StateError(f"{path}.{error}") from None

    def to_json(self) -> dict[str, Any]:
        """Return the FORMATS.md solo block.

        >>> SoloSetup(("R", "blue"), 30).to_json()
        {'private_objectives': ['red', 'blue'], 'round_track_sum': 30}
        """
        return {"private_objectives": list(self.private_objectives), "round_track_sum": self.round_track_sum}


@dataclass(frozen=True)
class SagradaState:
    """A finished Sagrada game: public objective ids, players in final-round turn order, solo extras.

    >>> state = SagradaState.from_json(SAMPLE)
    >>> [p.name for p in state.players], state.public_objectives[0]
    (['Ana', 'Bo'], 'row-color-variety')

    Raises:
        StateError: on an impossible game; the message starts with the JSON path.
    """

    public_objectives: tuple[str, ...]
    players: tuple[SagradaPlayer, ...]
    solo: SoloSetup | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "public_objectives", tuple(self.public_objectives))
        object.__setattr__(self, "players", tuple(self.players))
        self._check_players()
        self._check_objectives()

    def _check_players(self) -> None:
        players = self.players
        if not players:
            raise StateError("players: expected 1-4 players, got none")
        if len(players) > MAX_PLAYERS:
            raise StateError(f"players: expected 1-{MAX_PLAYERS} players, got {len(players)}")
        for i, player in enumerate(players):
            if not isinstance(player, SagradaPlayer):
                raise StateError(f"players[{i}]: expected a SagradaPlayer, got {type(player).__name__}")
        if self.solo is not None and not isinstance(self.solo, SoloSetup):
            raise StateError(f"solo: expected a SoloSetup, got {type(self.solo).__name__}")
        if self.solo is not None and len(players) != 1:
            raise StateError(f"solo: the solo variant has exactly 1 player, got {len(players)}")
        seen: dict[str, int] = {}
        for i, player in enumerate(players):
            if player.name in seen:
                first = seen[player.name]
                raise StateError(f"players[{i}].name: duplicate name {player.name!r} (also players[{first}])")
            seen[player.name] = i
        if self.solo is not None:
            player = players[0]
            if player.private_objective is not None:
                raise StateError("players[0].private_objective: a solo player has none; the two colours go in solo.private_objectives")
            if player.favor_tokens != 0:
                raise StateError(f"players[0].favor_tokens: the solo game uses no favor tokens, got {player.favor_tokens}")
            return

    def warnings(self) -> list[str]:
        """Return what is missing or doubtful but scoreable, one line each.

        >>> SagradaState(("light-shades",), (SagradaPlayer("Ana", empty_window()),)).warnings()[0]
        'public_objectives: 1 of 3 cards given; the missing ones score nothing'
        """
        notes = []
        wanted = SOLO_PUBLIC_COUNT if self.solo is not None else PUBLIC_COUNT
        if len(self.public_objectives) < wanted:
            given = len(self.public_objectives)
            notes.append(f"public_objectives: {given} of {wanted} cards given; the missing ones score nothing")
        if self.solo is None and len(self.players) == 1:
            notes.append('players: one player and no "solo" block: scored by the multiplayer rules')
        colors: dict[str, int] = {}
        patterns: dict[str, int] = {}
        for i, player in enumerate(self.players):
            if self.solo is None and player.private_objective is None:
                notes.append(f"players[{i}].private_objective: not given; scored 0")
            elif player.private_objective in colors:
                notes.append(
                    f"players[{i}].private_objective: {player.private_objective!r} is also "
                    f"players[{colors[player.private_objective]}]'s, yet each colour's card exists once"
                )
            elif player.private_objective is not None:
                colors[player.private_objective] = i
            if player.pattern is not None and player.pattern.name in patterns:
                first = patterns[player.pattern.name]
                notes.append(f"players[{i}].pattern: {player.pattern.name!r} is also players[{first}]'s, yet each pattern card exists once")
            elif player.pattern is not None:
                patterns[player.pattern.name] = i
        return notes

    def _check_objectives(self) -> None:
        wanted = SOLO_PUBLIC_COUNT if self.solo is not None else PUBLIC_COUNT
        game = "the solo game" if self.solo is not None else "a multiplayer game"
        if len(self.public_objectives) > wanted:
            raise StateError(
                f"public_objectives: expected at most {wanted} ids ({game} reveals {wanted} cards), got {len(self.public_objectives)}"
            )
        for i, objective in enumerate(self.public_objectives):
            expect_str(objective, f"public_objectives[{i}]", tuple(OBJECTIVES))
            if objective in self.public_objectives[:i]:
                raise StateError(f"public_objectives[{i}]: duplicate objective {objective!r}")

    @classmethod
    def from_json(cls, doc: Any) -> SagradaState:
        """Return the state a FORMATS.md Sagrada document describes; inverse of ``to_json``.

        Unknown keys (e.g. a scan's ``scan`` objects) are ignored.

        >>> SagradaState.from_json({"game": "sagrada", "public_objectives": [], "players": []})
        Traceback (most recent call last):
        ...
        scoring.errors.StateError: players: expected 1-4 players, got none

        Raises:
            StateError: naming the JSON path and what was expected.
        """
        expect_object(doc, "")
        if "game" in doc and doc["game"] != "sagrada":
            raise StateError(f"game: expected 'sagrada', got {describe(doc['game'])}")
        for key in ("public_objectives", "players"):
            if doc.get(key) is None:
                raise StateError(f"{key}: missing required key")
        objectives = expect_list(doc["public_objectives"], "public_objectives")
        for i, objective in enumerate(objectives):
            expect_str(objective, f"public_objectives[{i}]", tuple(OBJECTIVES))
        players_doc = expect_list(doc["players"], "players")
        if len(players_doc) > MAX_PLAYERS:
            raise StateError(f"players: expected 1-{MAX_PLAYERS} players, got {len(players_doc)}")
        players = tuple(SagradaPlayer.from_json(p, f"players[{i}]") for i, p in enumerate(players_doc))
        solo = SoloSetup.from_json(doc["solo"]) if doc.get("solo") is not None else None
        return cls(tuple(objectives), players, solo)

    def to_json(self) -> dict[str, Any]:
        """Return the FORMATS.md document; inverse of ``from_json``.

        >>> SagradaState.from_json(SAMPLE).to_json() == SAMPLE
        True
        """
        doc: dict[str, Any] = {
            "game": "sagrada",
            "public_objectives": list(self.public_objectives),
            "players": [player.to_json(self.solo is not None) for player in self.players],
        }
        if self.solo is not None:
            doc["solo"] = self.solo.to_json()
        return doc

    def __str__(self) -> str:
        return "\n".join(str(player) for player in self.players)


SAMPLE = {
    "game": "sagrada",
    "public_objectives": ["row-color-variety", "light-shades", "color-diagonals"],
    "players": [
        {
            "name": "Ana",
            "window": ["B4 Y3 G6 R1 P2", "G2 P5 B1 G4 R6", ". . . . .", ". . . . ."],
            "private_objective": "red",
            "favor_tokens": 2,
        },
        {
            "name": "Bo",
            "window": [". . . . .", ". . . . .", "Y1 B2 R3 G4 P5", ". . . . ."],
            "private_objective": "blue",
            "favor_tokens": 1,
        },
    ],
}
