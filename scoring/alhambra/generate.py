"""Seeded random legal Alhambra games: palaces grown from one shared tile set."""

from __future__ import annotations

import random

from scoring.alhambra.palace import (
    BUILDING_TYPES,
    CATALOGUE,
    generate_palace,
)
from scoring.alhambra.rules import validate  # noqa: F401  (the doctest checks the result)
from scoring.alhambra.state import CURRENCIES, MAX_PLAYERS, AlhambraPlayer, AlhambraState
from scoring.errors import StateError
from scoring.fields import describe

_NAMES = ("Ana", "Bo", "Chen", "Dana", "Emre", "Femi")
_DEFAULT_SIZE = {1: 5, 2: 11, 3: 17}


_GAME_ATTEMPTS = 20  # whole games drawn before giving up (5-6 players of 10 tiles use nearly every tile)


def generate(
    rng: random.Random, players: int = 2, size: int | None = None, scoring_round: int = 3, dirk: bool | None = None
) -> AlhambraState:
    """Return a random legal game: one palace per player grown from one shared tile set.

    ``size`` is the number of building tiles per palace (default by round, capped so the 54
    tiles suffice); a tile or two may wait in each reserve. Round 3 adds money and a market;
    2-player games get Dirk unless ``dirk`` is False. ``validate`` finds nothing in the result.

    >>> state = generate(random.Random(1), players=3, scoring_round=2)
    >>> len(state.players), validate(state)
    (3, [])

    Raises:
        StateError: for 1-6 players not given, or palaces too big for the tile set.
    """
    if isinstance(players, bool) or not isinstance(players, int) or not 1 <= players <= MAX_PLAYERS:
        raise StateError(f"players: expected an integer 1-{MAX_PLAYERS}, got {describe(players)}")
    if isinstance(scoring_round, bool) or scoring_round not in (1, 2, 3):
        raise StateError(f"scoring_round: expected an integer 1-3, got {describe(scoring_round)}")
    if size is None:
        size = min(_DEFAULT_SIZE[scoring_round], (len(CATALOGUE) - len(CURRENCIES)) // players)
    if isinstance(size, bool) or not isinstance(size, int) or not 0 <= size <= len(CATALOGUE) // players:
        raise StateError(f"size: expected an integer 0-{len(CATALOGUE) // players} for {players} players, got {describe(size)}")
    for attempt in range(_GAME_ATTEMPTS):  # the last palaces grow from what the first left: start over if they cannot
        used: set[int] = set()
        try:
            palaces = [generate_palace(rng, size, used) for _ in range(players)]
            break
        except StateError:
            if attempt == _GAME_ATTEMPTS - 1:
                raise
    left = [tile for tile in CATALOGUE if tile.tile_id not in used]
    rng.shuffle(left)
    market = None
    if scoring_round == 3:
        market = tuple((currency, left.pop()) for currency in CURRENCIES if left)
    members = []
    for index, palace in enumerate(palaces):
        reserve = tuple(left.pop() for _ in range(min(len(left), rng.randint(0, 2))))
        money = {currency: rng.randint(0, 12) for currency in CURRENCIES} if scoring_round == 3 else None
        before = 0 if scoring_round == 1 else rng.randint(5, 30) * (scoring_round - 1)
        members.append(AlhambraPlayer(_NAMES[index], tuple(palace.items()), reserve, before, money))
    with_dirk = players == 2 if dirk is None else dirk
    dirk_counts = {kind: rng.randint(0, 2 * scoring_round) for kind in BUILDING_TYPES} if with_dirk else None
    return AlhambraState(scoring_round, tuple(members), dirk_counts, market)
