"""Sagrada scoring core (being written)."""

from scoring.errors import StateError
from scoring.game import Game


def _todo(*args, **kwargs):
    raise StateError("sagrada: scoring is not implemented yet")


GAME = Game(id="sagrada", title="Sagrada", parse=_todo, validate=_todo, score=_todo, generate=_todo)
