"""Splendor checks: cards and nobles used more often than the game has them, nobles not earned."""

from __future__ import annotations

from collections import Counter

from scoring.issue import Issue
from scoring.splendor.cards import (
    COLORS,
    DECK,
    LEVELS,
    MAX_NOBLES,
    MAX_RESERVED,
    NOBLES,
    bonus_text,
    plural,
)
from scoring.splendor.state import SplendorState


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
                detail = f"{len(placed)} level-{level} {kind} cards, but the deck holds {held}{_owner_text(state, placed)}"
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
                    has = bonus_text(bonuses, tuple(noble.requirement))
                    detail = f"noble {noble_id} needs {need} bonuses; {player.name} has {has}"
                    issues.append(Issue("noble-requirement", detail, player=p))
                    requirement_broken = True
        elif player.nobles:
            met = [noble.id for noble in NOBLES.values() if noble.is_met_by(bonuses)]
            if player.nobles > len(met):
                detail = (
                    f"{player.name} has {plural(player.nobles, 'noble')}, but bonuses {bonus_text(bonuses)} "
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
