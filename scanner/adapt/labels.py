"""Which classifier a game's cells are read with, and which class each of its heads should give a cell value.

The per-game knowledge lives in each game's folder (``scanner/<game>/classifier.py``); this module
only looks it up in ``scanner.readers.CLASSIFIERS``.
"""

from __future__ import annotations

from typing import Any

from scanner.errors import AdaptationError
from scanner.readers import CLASSIFIERS as GAME_CLASSIFIERS
from scanner.reading import CellClassifier

# game -> its cell classifier, whose heads the adaptation re-fits
CLASSIFIERS = {game: classifier.model for game, classifier in GAME_CLASSIFIERS.items()}


def cell_classifier(game: str) -> CellClassifier:
    """Return the adaptable cell classifier ``game`` is read with.

    Raises:
        AdaptationError: the game has no adaptable classifier.
    """
    try:
        return GAME_CLASSIFIERS[game]
    except KeyError:
        raise AdaptationError(f"game {game!r}: no adaptable classifier (adaptable: {', '.join(sorted(GAME_CLASSIFIERS))})") from None


def head_labels(game: str, value: str) -> dict[str, Any]:
    """Return the class each classifier head should give a cell whose (corrected) value is ``value``.

    >>> head_labels("sagrada", "B4")
    {'die': 'die', 'colour': 'B', 'value': '4'}
    >>> head_labels("alhambra", "garden:NS")
    {'kind': 'garden', 'walls': (1, 0, 1, 0), 'rotation': '0'}

    Raises:
        AdaptationError: the game has no adaptable classifier.
    """
    return cell_classifier(game).head_labels(value)


def crop_margin(model_name: str) -> float:
    """The context margin (in cell pitches, each side) of the crops ``model_name`` reads.

    Raises:
        AdaptationError: the model is not an adaptable classifier.
    """
    for classifier in GAME_CLASSIFIERS.values():
        if classifier.model == model_name:
            return float(classifier.margin)
    raise AdaptationError(f"model {model_name!r}: not an adaptable classifier")
