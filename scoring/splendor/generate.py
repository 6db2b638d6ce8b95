"""Seeded random legal Splendor games, played to their end."""

from __future__ import annotations

import random
from collections import Counter

from scoring.errors import StateError
from scoring.fields import describe
from scoring.splendor.cards import (
    CARDS,
    LEVELS,
    MAX_PLAYERS,
    MAX_RESERVED,
    NOBLE_POINTS,
    NOBLES,
    WINNING_PRESTIGE,
    Card,
)
from scoring.splendor.rules import validate  # noqa: F401  (the doctest checks the result)
from scoring.splendor.state import SplendorPlayer, SplendorState

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
        if any(sum(c.points for c in cards) + NOBLE_POINTS * len(v) >= WINNING_PRESTIGE for cards, v in zip(bought, visits, strict=True)):
            break
    table = []
    for p in range(count):
        tableau = tuple(_random_form(rng, card) for card in bought[p])
        nobles: int | tuple[str, ...] = tuple(visits[p]) if rng.random() < 0.5 else len(visits[p])
        table.append(SplendorPlayer(_NAMES[p], tableau, nobles, rng.randint(0, MAX_RESERVED)))
    return SplendorState(tuple(table))


def _pick(rng: random.Random, cards: list[Card], owned: list[Card], in_play: list[str]) -> Card:
    """Take one of the four face-up cards (the deck's end), mostly one an in-play noble wants."""
    market = cards[-4:]
    have = Counter(card.bonus for card in owned)
    wanted = {color for noble_id in in_play for color, need in NOBLES[noble_id].requirement.items() if have[color] < need}
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
