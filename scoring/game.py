"""What every game module offers, gathered in one typed record for the shells."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from scoring.issue import Issue
from scoring.report import Report

StateT = TypeVar("StateT")
ReportT = TypeVar("ReportT", bound=Report, covariant=True)


@dataclass(frozen=True)
class Game(Generic[StateT, ReportT]):
    """The entry points of one game's scoring core, typed by its state and report classes.

    ``parse`` turns a FORMATS.md document into the game's state (raising ``StateError``),
    ``validate`` lists placement ``Issue``s, ``score`` returns the game's ``Report``,
    ``generate(rng, **options)`` builds a random legal state.

    >>> from scoring.registry import GAMES
    >>> GAMES["splendor"].title
    'Splendor'
    """

    id: str
    title: str
    parse: Callable[[object], StateT]
    validate: Callable[[StateT], list[Issue]]
    score: Callable[[StateT], ReportT]
    generate: Callable[..., StateT]
