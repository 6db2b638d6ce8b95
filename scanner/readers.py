"""The games ``scanner`` reads, found from its per-game folders: no game id is written here.

Each folder ``scanner/<game>/`` whose package exposes ``make_reader`` (a zero-argument reader
factory) and ``CLASSIFIER`` (its adaptable cell classifier) is the reader of game ``<game>``; the
folder's name is the game id. Adding a readable game is adding its folder. A ``Scanner`` takes any
mapping of game id -> reader factory (the shells pass the registry's); without one it uses ``READERS``.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType, ModuleType

from scanner.reading import BoardReader, CellClassifier

ReaderFactory = Callable[[], BoardReader]


def _game_packages() -> dict[str, ModuleType]:
    """Return game id -> package for every ``scanner/<game>/`` folder that offers a reader."""
    found = {}
    for info in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if info.ispkg:
            package = importlib.import_module(f"scanner.{info.name}")
            if callable(getattr(package, "make_reader", None)) and isinstance(getattr(package, "CLASSIFIER", None), CellClassifier):
                found[info.name] = package
    return dict(sorted(found.items()))


_PACKAGES = _game_packages()
READERS: Mapping[str, ReaderFactory] = MappingProxyType({game: package.make_reader for game, package in _PACKAGES.items()})
CLASSIFIERS: Mapping[str, CellClassifier] = MappingProxyType({game: package.CLASSIFIER for game, package in _PACKAGES.items()})
# game id -> the module defining its reader (for callers that only ask which games can be read)
READER_MODULES: Mapping[str, str] = MappingProxyType({game: package.make_reader.__module__ for game, package in _PACKAGES.items()})
