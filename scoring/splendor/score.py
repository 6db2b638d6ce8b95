"""Splendor scoring: prestige per player, the ranking (most prestige, then fewest cards) and the winner."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from scoring.issue import Issue
from scoring.report import Evidence, check_ranking
from scoring.splendor.cards import (
    NOBLE_POINTS,
    WINNING_PRESTIGE,
    Card,
    plural,
)
from scoring.splendor.rules import validate
from scoring.splendor.state import SplendorState


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

    @property
    def evidence(self) -> tuple[Evidence, ...]:
        """Nothing: Splendor scores cards and nobles, not board cells.

        >>> score(SplendorState.from_json({"players": [{"name": "Ana", "cards": []}]})).players[0].evidence
        ()
        """
        return ()

    @property
    def total(self) -> int:
        """The player's points: their prestige (the name every game's report uses).

        >>> score(SplendorState.from_json({"players": [{"name": "Ana", "cards": [{"id": "L3-red-2"}]}]})).players[0].total
        4
        """
        return self.prestige

    def to_json(self) -> dict[str, Any]:
        """Return the FORMATS.md per-player entry.

        >>> doc = {"players": [{"name": "Ana", "cards": [{"id": "L3-red-2"}]}]}
        >>> score(SplendorState.from_json(doc)).players[0].to_json()
        {'name': 'Ana', 'prestige': 4, 'cards': 1, 'nobles': 0, 'violations': []}
        """
        return {
            "name": self.name,
            "prestige": self.prestige,
            "cards": self.cards,
            "nobles": self.nobles,
            "violations": [_violation_json(issue) for issue in self.violations],
        }


def _violation_json(issue: Issue) -> dict[str, Any]:
    doc: dict[str, Any] = {"rule": issue.rule, "detail": issue.detail}
    if issue.cells:
        doc["cards"] = [list(cell) for cell in issue.cells]
    return doc


@dataclass(frozen=True)
class SplendorReport:
    """The score of a Splendor table: per-player lines, ranking, winner and whether the game is over.

    ``winner`` is a name, a tuple of names for a shared win, or ``None`` while nobody has 15.
    ``tie_breaks`` has one sentence per pair of neighbours in the ranking with equal prestige.
    """

    players: tuple[PlayerScore, ...]
    ranking: tuple[str, ...]
    winner: str | tuple[str, ...] | None
    game_over: bool
    message: str | None
    tie_breaks: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        check_ranking(self.players, self.ranking, self.tie_breaks)

    def to_json(self) -> dict[str, Any]:
        """Return the FORMATS.md report (``message`` only when the game is not over).

        >>> doc = {"players": [{"name": "Ana", "cards": [{"bonus": "red", "points": 5}] * 1, "nobles": 4},
        ...                    {"name": "Bo", "cards": []}]}
        >>> report = score(SplendorState.from_json(doc)).to_json()
        >>> report["ranking"], report["winner"], report["game_over"], report["players"][0]["prestige"]
        (['Ana', 'Bo'], 'Ana', True, 17)
        """
        doc: dict[str, Any] = {
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
        """Return a plain-text report: cards per colour, points per level, nobles and total per player.

        >>> doc = {"players": [{"name": "Ana", "cards": [{"id": "L3-red-2"}], "nobles": 1}]}
        >>> print(score(SplendorState.from_json(doc)).to_text().splitlines()[0])
        Ana  7 prestige
        """
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
            f"{place}. {name} {by_name[name].prestige} ({plural(by_name[name].cards, 'card')})"
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
            f"The game is not over: nobody has {WINNING_PRESTIGE} prestige yet (highest {best.prestige}, {', '.join(leaders)}); no winner"
        )
    return SplendorReport(
        players=tuple(lines),
        ranking=tuple(lines[i].name for i in order),
        winner=winner,
        game_over=game_over,
        message=message,
        tie_breaks=tuple(_tie_sentence(lines[a], lines[b]) for a, b in zip(order, order[1:]) if lines[a].prestige == lines[b].prestige),
    )


def _tie_sentence(first: PlayerScore, second: PlayerScore) -> str:
    head = f"{first.name} and {second.name} both have {first.prestige} prestige"
    if first.cards != second.cards:
        return f"{head}; {first.name} ranks higher on fewer development cards ({first.cards} vs {second.cards})"
    return f"{head} and {first.cards} development cards; they share the place"
