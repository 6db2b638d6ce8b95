"""THE registry of the shells: one entry per game id joins its rules, review form, reader and renderer.

The CLI and the review screen ask ``GAMES``; they hold no ``if game == ...`` and no copy of a game's
names. Adding a game is adding its folders (``scoring/<game>/``, a form in
``tablescan/review/forms/``, optionally ``scanner/<game>/`` and ``models/<game>/``) and one entry here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scoring import registry
from scoring.errors import StateError
from scoring.game import Game
from tablescan.review.forms import ReviewForm
from tablescan.review.forms import alhambra as alhambra_form
from tablescan.review.forms import sagrada as sagrada_form
from tablescan.review.forms import splendor as splendor_form


@dataclass(frozen=True)
class GameEntry:
    """One game as the shells see it.

    ``reader_module`` names the module whose ``make_reader()`` reads the game's photos (None: the
    game is scored from typed-in boards only); ``renderer_module`` the one whose ``render(seed)``
    draws synthetic photos for ``tablescan synth`` (None: no renderer). Both are named, not imported:
    the scanner imports a reader when it first reads that game (a reader binds its models then), and
    renderers are training-side code (``models/``) that only ``tablescan synth`` needs.

    Raises:
        StateError: an entry whose id is not a scoring core's game.
    """

    id: str
    form: ReviewForm
    reader_module: str | None = None
    renderer_module: str | None = None

    def __post_init__(self) -> None:
        if self.id not in registry.GAMES:
            raise StateError(f"game {self.id!r}: no scoring core of that id (scoring/{self.id}/)")

    @property
    def rules(self) -> Game:
        """The game's scoring core (looked up by id, so the scoring registry stays its one home)."""
        return registry.GAMES[self.id]

    @property
    def title(self) -> str:
        """The game's name as players know it."""
        return self.rules.title

    @property
    def scannable(self) -> bool:
        """Whether the game can be read from photos."""
        return self.reader_module is not None

    def make_reader(self) -> Any:
        """Return a new reader of this game's photos.

        Raises:
            StateError: the game has no photo reader.
        """
        if self.reader_module is None:
            raise StateError(f"{self.id}: no photo reader for this game; enter the board by hand")
        return importlib.import_module(self.reader_module).make_reader()

    def render(self, seed: int) -> Any:
        """Render one seeded synthetic photo of this game (imports the training-side renderer).

        Raises:
            StateError: the game has no renderer.
        """
        if self.renderer_module is None:
            raise StateError(f"{self.id}: no renderer for this game")
        return importlib.import_module(self.renderer_module).render(seed)


GAMES: dict[str, GameEntry] = {
    entry.id: entry
    for entry in (
        GameEntry("alhambra", alhambra_form.FORM, "scanner.alhambra.reader", "models.alhambra.render"),
        GameEntry("sagrada", sagrada_form.FORM, "scanner.sagrada.reader", "models.sagrada.render"),
        GameEntry("splendor", splendor_form.FORM),
    )
}


def game_entry(game: Any) -> GameEntry:
    """Return the entry of game id ``game``.

    >>> game_entry("sagrada").title
    'Sagrada'

    Raises:
        StateError: no game has this id.
    """
    if not isinstance(game, str) or game not in GAMES:
        raise StateError(f"game: expected one of {', '.join(GAMES)}, got {game!r}")
    return GAMES[game]


def scannable_games() -> tuple[str, ...]:
    """Return the ids of the games read from photos, sorted."""
    return tuple(sorted(game for game, entry in GAMES.items() if entry.scannable))


def readers() -> dict[str, Callable[[], Any]]:
    """Return game id -> reader factory for every game read from photos (what a ``Scanner`` takes)."""
    return {game: GAMES[game].make_reader for game in scannable_games()}


def renderable_games() -> tuple[str, ...]:
    """Return the ids of the games ``tablescan synth`` can render."""
    return tuple(game for game, entry in GAMES.items() if entry.renderer_module is not None)


def review_options() -> dict[str, Any]:
    """Return every game's option lists merged, as the game page receives them."""
    merged: dict[str, Any] = {}
    for entry in GAMES.values():
        merged.update(entry.form.options())
    return merged
