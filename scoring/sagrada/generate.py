"""Seeded random Sagrada windows and finished games that break no placement rule."""

from __future__ import annotations

import random

from scoring.sagrada.cards import PATTERNS, Pattern, print_allows
from scoring.sagrada.objectives import OBJECTIVES
from scoring.sagrada.rules import (
    validate,  # noqa: F401  (the doctests check the result)
    window_violations,  # noqa: F401  (the doctests check the result)
)
from scoring.sagrada.state import (
    COLOR_CHOICES,
    MAX_PLAYERS,
    PUBLIC_COUNT,
    SOLO_PUBLIC_COUNT,
    SagradaPlayer,
    SagradaState,
    SoloSetup,
)
from scoring.sagrada.window import (
    COLORS,
    COLS,
    DICE_PER_COLOR,
    ROWS,
    VALUES,
    Cell,
    Die,
    Window,
    cells,
    diagonal,
    on_edge,
    orthogonal,
)

__all__ = ["PLAYER_NAMES", "generate", "generate_window"]


PLAYER_NAMES = ("Ana", "Bo", "Cyd", "Dev")


def generate(
    rng: random.Random,
    players: int = 3,
    *,
    empty: int | None = None,
    patterns: bool = True,
) -> SagradaState:
    """Return a random finished game whose windows break no placement rule.

    ``players`` 1 gives a solo game. ``empty`` fixes each window's empty cells (default: a
    random 0-3, mostly 0). Colours respect the bag (18 dice each); patterns, private
    objectives and public objectives are distinct as in a real game.

    >>> state = generate(random.Random(7), players=4)
    >>> len(state.players), validate(state)
    (4, [])

    Raises:
        ValueError: when ``players`` is not 1-4, ``empty`` not 0-20, or no game can be dealt from the bag.
    """
    if isinstance(players, bool) or not isinstance(players, int) or not 1 <= players <= MAX_PLAYERS:
        raise ValueError(f"players: expected 1-{MAX_PLAYERS}, got {players!r}")
    solo = players == 1
    objectives = tuple(rng.sample(sorted(OBJECTIVES), SOLO_PUBLIC_COUNT if solo else PUBLIC_COUNT))
    cards: list[str | None] = list(rng.sample(sorted(PATTERNS), players)) if patterns else [None] * players
    colors = rng.sample(COLOR_CHOICES, 2 if solo else players)
    for attempt in range(20):  # the bag can run dry for late players: deal every window again
        supply = {color: DICE_PER_COLOR for color in COLORS}
        made = []
        try:
            for index in range(players):
                card = cards[index]
                pattern = PATTERNS[card] if card is not None else None
                holes = empty if empty is not None else rng.choice((0, 0, 0, 0, 1, 1, 2, 3))
                window = generate_window(rng, pattern, holes, supply)
                tokens = 0 if solo else rng.randint(0, pattern.difficulty if pattern is not None else 4)
                made.append(SagradaPlayer(PLAYER_NAMES[index], window, pattern, None if solo else colors[index], tokens))
            break
        except ValueError:
            if attempt == 19:
                raise
    setup = SoloSetup(tuple(colors), rng.randint(15, 60)) if solo else None
    return SagradaState(objectives, tuple(made), setup)


def generate_window(
    rng: random.Random,
    pattern: Pattern | None = None,
    empty: int = 0,
    supply: dict[str, int] | None = None,
) -> Window:
    """Return a random legal window: no placement-rule break at all.

    No two orthogonally adjacent dice share a colour or value, every die obeys ``pattern``'s
    prints (when given), exactly ``empty`` cells stay empty and the dice form one group,
    touching each other at least diagonally, that reaches the edge. ``supply`` (colour letter
    -> dice left in the bag) is decremented as dice are used; colours that run out are avoided.

    >>> w = generate_window(random.Random(1), PATTERNS["Virtus"], empty=2)
    >>> window_violations(w, PATTERNS["Virtus"]), sum(d is None for row in w for d in row)
    ([], 2)

    Raises:
        ValueError: when ``empty`` is not 0-20 or no legal window exists for the supply.
    """
    if isinstance(empty, bool) or not isinstance(empty, int) or not 0 <= empty <= ROWS * COLS:
        raise ValueError(f"empty: expected an integer 0-{ROWS * COLS}, got {empty!r}")
    for _ in range(50):
        occupied = _random_group(rng, ROWS * COLS - empty)
        filled = _fill(rng, occupied, pattern, supply)
        if filled is not None:
            if supply is not None:
                for die in filled.values():
                    supply[die.color] -= 1
            return tuple(tuple(filled.get((r, c)) for c in range(COLS)) for r in range(ROWS))
    raise ValueError("no legal window found for this pattern and dice supply")


def _random_group(rng: random.Random, size: int) -> set[Cell]:
    """Grow a random group of ``size`` cells from an edge cell, each touching the group."""
    if size == 0:
        return set()
    if size == ROWS * COLS:
        return set(cells())
    group = {rng.choice([cell for cell in cells() if on_edge(cell)])}
    while len(group) < size:
        frontier = sorted({n for cell in group for n in orthogonal(cell) + diagonal(cell)} - group)
        group.add(rng.choice(frontier))
    return group


def _fill(rng: random.Random, occupied: set[Cell], pattern: Pattern | None, supply: dict[str, int] | None) -> dict[Cell, Die] | None:
    """Backtracking search for dice on ``occupied`` cells obeying every placement rule.

    The most constrained cell goes next; dice are tried in a random order that favours the
    colours with most dice left, so several windows drawn from one bag stay balanced.
    """
    left = dict(supply) if supply is not None else {color: ROWS * COLS for color in COLORS}
    placed: dict[Cell, Die] = {}
    open_cells = set(occupied)
    budget = [2000]

    base = {cell: [die for die in _ALL_DICE if pattern is None or print_allows(pattern.restriction(cell), die)] for cell in occupied}
    around = {cell: orthogonal(cell) for cell in occupied}

    def options(cell: Cell) -> list[Die]:
        taken = [placed[n] for n in around[cell] if n in placed]
        colors = {die.color for die in taken}
        values = {die.value for die in taken}
        return [die for die in base[cell] if left[die.color] > 0 and die.color not in colors and die.value not in values]

    def search() -> bool:
        if not open_cells:
            return True
        budget[0] -= 1
        if budget[0] < 0:
            return False
        cell, found = min(((cell, options(cell)) for cell in sorted(open_cells)), key=lambda item: len(item[1]))
        weighted = sorted(found, key=lambda die: rng.random() ** (1 / left[die.color]), reverse=True)
        open_cells.discard(cell)
        for die in weighted:
            placed[cell] = die
            left[die.color] -= 1
            if search():
                return True
            left[die.color] += 1
            del placed[cell]
        open_cells.add(cell)
        return False

    return placed if search() else None


_ALL_DICE: tuple[Die, ...] = tuple(Die(color, value) for color in COLORS for value in VALUES)
