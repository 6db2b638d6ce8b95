"""Which classifier a game's cells are read with, and which class each of its heads should give a cell value.

The per-game knowledge lives in each game's folder (``scanner/<game>/classifier.py``); this module
only looks it up in ``scanner.readers.CLASSIFIERS``.
"""

from __future__ import annotations

from typing import Any

from scanner.errors import AdaptationError
from scanner.readers import CLASSIFIERS as GAME_CLASSIFIERS
from scanner.reading import CellClassifier, PartReader

# game -> its cell classifier, whose heads the adaptation re-fits
CLASSIFIERS = {game: classifier.model for game, classifier in GAME_CLASSIFIERS.items()}
# game -> the model reading a part of its cells (an Alhambra tile's price octagon), adapted from the same corrections
PART_MODELS = {game: classifier.part.model for game, classifier in GAME_CLASSIFIERS.items() if classifier.part is not None}


def cell_classifier(game: str) -> CellClassifier:
    """Return the adaptable cell classifier ``game`` is read with.

    Raises:
        AdaptationError: the game has no adaptable classifier.
    """
    try:
        return GAME_CLASSIFIERS[game]
    except KeyError:
        raise AdaptationError(f"game {game!r}: no adaptable classifier (adaptable: {', '.join(sorted(GAME_CLASSIFIERS))})") from None


def _classifier_of(model_name: str) -> CellClassifier | None:
    """The game's adaptable classifier whose model is ``model_name``, or None."""
    return next((classifier for classifier in GAME_CLASSIFIERS.values() if classifier.model == model_name), None)


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
    classifier = _classifier_of(model_name)
    if classifier is None:
        raise AdaptationError(f"model {model_name!r}: not an adaptable classifier")
    return float(classifier.margin)


def head_crop_features(model_name: str, head: str, default: tuple[str, ...]) -> tuple[str, ...]:
    """The crop features head ``head`` of ``model_name`` may read (its game's ``crop_features``), else ``default``.

    >>> head_crop_features("alhambra_tiles", "walls", ("crop_colour",))
    ('crop_walls',)
    >>> head_crop_features("sagrada_dice", "colour", ("crop_colour",))
    ('crop_colour',)
    """
    classifier = _classifier_of(model_name)
    return default if classifier is None else tuple(classifier.crop_features.get(head, default))


def presence_head(model_name: str) -> str | None:
    """The head of ``model_name`` that says whether a cell holds anything (its game's ``presence_head``), or None.

    >>> presence_head("alhambra_tiles"), presence_head("sagrada_dice")
    ('kind', None)
    """
    classifier = _classifier_of(model_name)
    return None if classifier is None else classifier.presence_head


def part_reader(game: str) -> PartReader | None:
    """The reader of a part of ``game``'s cells (``CellClassifier.part``), or None.

    >>> part_reader("alhambra").model, part_reader("sagrada")
    ('alhambra_octagon', None)

    Raises:
        AdaptationError: the game has no adaptable classifier.
    """
    return cell_classifier(game).part


def game_of_model(model_name: str) -> str:
    """The game whose cell classifier or part reader ``model_name`` is.

    >>> game_of_model("alhambra_octagon"), game_of_model("sagrada_dice")
    ('alhambra', 'sagrada')

    Raises:
        AdaptationError: no game adapts ``model_name``.
    """
    for game, classifier in GAME_CLASSIFIERS.items():
        if model_name == classifier.model or (classifier.part is not None and model_name == classifier.part.model):
            return game
    raise AdaptationError(f"model {model_name!r}: not an adaptable classifier or part reader")
