"""Alhambra scoring core: board state, validation, majorities, walls, market awards and ranking.

The document format is the Alhambra section of FORMATS.md.

Modules: ``tiles`` (the shipped tile catalogue), ``palace`` (walls, legality, the longest
wall, random legal palaces), ``state`` (the game and its JSON form), ``rules``
(``validate``), ``score`` (majorities, walls, market, the report) and ``generate`` (random
legal games); their public names are re-exported here.

>>> doc = {"game": "alhambra", "scoring_round": 1, "players": [
...     {"name": "Ana", "palace": [{"at": [0, 0], "tile": "fountain"},
...                                {"at": [1, 0], "type": "garden", "walls": "N"}]},
...     {"name": "Bo", "palace": [{"at": [0, 0], "tile": "fountain"}]}]}
>>> report = score(AlhambraState.from_json(doc))
>>> report.to_json()["players"][0]["majorities"], report.to_json()["players"][0]["longest_wall"]
({'garden': 5}, 1)
>>> report.to_json()["ranking"]
['Ana', 'Bo']
"""

from __future__ import annotations

from scoring.alhambra.generate import generate
from scoring.alhambra.palace import (
    BUILDING_TYPES,
    CATALOGUE,
    FOUNTAIN,
    FOUNTAIN_TILE,
    LEGAL_WALLS,
    Cell,
    Segment,
    Tile,
    catalogue_counts,
    cell_text,
    generate_palace,
    longest_wall,
    palace_text,
    tile_by_id,
    validate_palace,
    walls_problem,
)
from scoring.alhambra.rules import validate
from scoring.alhambra.score import (
    AlhambraReport,
    PlayerScore,
    Standing,
    building_counts,
    market_awards,
    place_points,
    rank_majorities,
    score,
)
from scoring.alhambra.state import (
    CURRENCIES,
    DIRK,
    MAX_PLAYERS,
    AlhambraPlayer,
    AlhambraState,
    palace_map,
    tile_by_id_at,
)
from scoring.game import Game

__all__ = [
    "BUILDING_TYPES",
    "CATALOGUE",
    "CURRENCIES",
    "DIRK",
    "FOUNTAIN",
    "FOUNTAIN_TILE",
    "GAME",
    "LEGAL_WALLS",
    "MAX_PLAYERS",
    "AlhambraPlayer",
    "AlhambraReport",
    "AlhambraState",
    "Cell",
    "PlayerScore",
    "Segment",
    "Standing",
    "Tile",
    "building_counts",
    "catalogue_counts",
    "cell_text",
    "generate",
    "generate_palace",
    "longest_wall",
    "market_awards",
    "palace_map",
    "palace_text",
    "place_points",
    "rank_majorities",
    "score",
    "tile_by_id",
    "tile_by_id_at",
    "validate",
    "validate_palace",
    "walls_problem",
]

GAME: Game[AlhambraState, AlhambraReport] = Game(
    id="alhambra",
    title="Alhambra",
    parse=AlhambraState.from_json,
    validate=validate,
    score=score,
    generate=generate,
)
