"""The shipped readers, keyed by game id: the one place in ``scanner`` that names the games it reads.

A ``Scanner`` takes any mapping of game id -> zero-argument reader factory; without one it uses
``READERS``. ``CLASSIFIERS`` names each game's adaptable cell classifier (``scanner.adapt``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

from scanner import alhambra, sagrada
from scanner.reading import BoardReader, CellClassifier

ReaderFactory = Callable[[], BoardReader]

READERS: Mapping[str, ReaderFactory] = MappingProxyType({"sagrada": sagrada.make_reader, "alhambra": alhambra.make_reader})
CLASSIFIERS: Mapping[str, CellClassifier] = MappingProxyType({"sagrada": sagrada.CLASSIFIER, "alhambra": alhambra.CLASSIFIER})
# game id -> the module defining its reader (for callers that only ask which games can be read)
READER_MODULES: Mapping[str, str] = MappingProxyType({"sagrada": "scanner.sagrada.reader", "alhambra": "scanner.alhambra.reader"})
