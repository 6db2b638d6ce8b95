"""Seeded random finished Sagrada games that break no placement rule."""

from __future__ import annotations

import random

from scoring.sagrada.objectives import OBJECTIVES
from scoring.sagrada.rules import validate  # noqa: F401  (the doctests check the result)
from scoring.sagrada.state import (
    COLOR_CHOICES,
    MAX_PLAYERS,
    PUBLIC_COUNT,
    SOLO_PUBLIC_COUNT,
    SagradaPlayer,
    SagradaState,
    SoloSetup,
)
from scoring.sagrada.window import COLORS, DICE_PER_COLOR, PATTERNS, generate_window

__all__ = ["PLAYER_NAMES", "generate"]


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

