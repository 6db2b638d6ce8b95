"""Readers with adapted models: an ``OnnxModel`` stand-in whose ``run`` returns the adapted logits."""

from __future__ import annotations

import copy
import functools
from dataclasses import replace
from typing import Any

import numpy as np

from scanner.adapt.examples import CROP_FEATURES
from scanner.adapt.fitting import ModelAdaptation
from scanner.adapt.labels import CLASSIFIERS, PART_MODELS, cell_classifier, presence_head
from scanner.adapt.memory import CellMemory
from scanner.adapt.storage import Adaptation
from scanner.errors import AdaptationError, BoardNotFoundError, Remedy
from scanner.model import OnnxModel


def check_model(fitted: ModelAdaptation, model: Any, source: str = "adaptation", profile: str | None = None) -> None:
    """Refuse an adaptation fitted for another version of ``model`` (sha256, classes or outputs differ).

    Raises:
        AdaptationError: the adaptation does not belong to this model file.
    """
    manifest = model.manifest
    redo = Remedy.ADAPT_AGAIN.words
    if fitted.model != manifest.name:
        raise AdaptationError(
            f"{source}: adapted for model {fitted.model!r}, not {manifest.name!r}; {redo}", remedy=Remedy.ADAPT_AGAIN, profile=profile
        )
    if fitted.sha256 != manifest.sha256:
        raise AdaptationError(
            f"{source}: adapted for {fitted.model} sha256 {fitted.sha256[:12]}..., but the shipped model is "
            f"{manifest.sha256[:12]}... (retrained since); {redo}",
            remedy=Remedy.ADAPT_AGAIN,
            profile=profile,
        )
    heads = dict(manifest.heads) or {fit.head: manifest.classes for fit in fitted.heads}
    for fit in fitted.heads:
        if tuple(heads.get(fit.head, ())) != fit.classes:
            raise AdaptationError(
                f"{source}: head {fit.head!r} of {fitted.model} has classes {list(heads.get(fit.head, ()))}, "
                f"the adaptation {list(fit.classes)}; {redo}",
                remedy=Remedy.ADAPT_AGAIN,
                profile=profile,
            )
    outputs = set(getattr(model, "output_names", ())) or None
    if outputs is not None:
        missing = sorted(set(fitted.inputs) - outputs - set(CROP_FEATURES))
        if missing:
            raise AdaptationError(f"{source}: {fitted.model} has no outputs {missing}; {redo}", remedy=Remedy.ADAPT_AGAIN, profile=profile)


class AdaptedModel:
    """An ``OnnxModel`` whose ``run`` returns the adapted logits; everything else is the shipped model's.

    Its heads were fitted on the crops as the readers cut them, turned and mirrored
    (``examples.dihedral``); a reader shows it every view it shows the shipped model.
    """

    def __init__(self, model: Any, fitted: ModelAdaptation, source: str = "adaptation", profile: str | None = None) -> None:
        check_model(fitted, model, source, profile)
        self.model = model
        self.fitted = fitted
        # reports name the model "<name> <version>+adapted (sha256 ...)": a scan says it used adapted heads
        self.manifest = replace(model.manifest, version=f"{model.manifest.version}+adapted")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)

    @property
    def memory(self) -> CellMemory | None:
        """The corrected cells the reader looks doubtful cells up in (``scanner.adapt.memory``), or None."""
        return self.fitted.memory

    def run(self, batch: np.ndarray) -> dict[str, np.ndarray]:
        """Run the shipped model and adapt its logits.

        Raises:
            ModelError: the batch does not match the model's input.
        """
        return self.fitted.apply(self.model.run(batch), batch)


def adapt_reader(reader: Any, adaptation: Adaptation | None, *, fallback: Any = None) -> Any:
    """Return a copy of ``reader`` whose ``OnnxModel`` attributes covered by ``adaptation`` are adapted.

    ``None`` (or an adaptation of other models) returns ``reader`` itself: the shipped behaviour.
    Where the adaptation covers both the game's part reader (an Alhambra tile's octagon) and other
    models, the reader with the part reader's adaptation alone is the one the others fall back to
    (``read_with_fallback``): where the adapted cell classifier loses a board, what the part reader
    learnt still reads it, as ``tablescan adapt`` judged them. ``fallback`` is another reader of
    the same models as ``reader`` to fall back to instead (one that recalls its readings).

    Raises:
        AdaptationError: the adaptation was fitted for another version of a model the reader uses.
    """
    if adaptation is None:
        return reader
    part = PART_MODELS.get(getattr(reader, "game", None) or "")
    under = adaptation.model(part) if part is not None else None
    if under is not None and len(adaptation.models) > 1:
        others = tuple(m for m in adaptation.models if m is not under)
        layered = replace(adaptation, models=(under,))
        return adapt_reader(adapt_reader(reader, layered), replace(adaptation, models=others), fallback=fallback)
    swaps = {}
    for attribute, value in vars(reader).items():
        if isinstance(value, OnnxModel):
            fitted = adaptation.model(value.manifest.name)
            if fitted is not None:
                swaps[attribute] = AdaptedModel(value, fitted, adaptation.source, adaptation.profile)
    if not swaps:
        return reader
    adapted = copy.copy(reader)
    for attribute, value in swaps.items():
        setattr(adapted, attribute, value)
    counted = changes_presence(Adaptation(tuple(model.fitted for model in swaps.values())))
    adapted.read = functools.partial(
        read_with_fallback, type(reader).read.__get__(adapted), reader if fallback is None else fallback, count_cells=counted
    )
    return adapted


def changes_presence(adaptation: Adaptation) -> bool:
    """Whether ``adaptation`` may change whether a cell holds anything at all: its game's presence head adapted
    in full (``HeadFit.kept_first`` keeps the shipped P(nothing there)).

    >>> changes_presence(Adaptation(()))
    False
    """
    return any(fit.head == presence_head(model.model) and not fit.kept_first for model in adaptation.models for fit in model.heads)


def read_with_fallback(adapted_read: Any, shipped: Any, photo: Any, *, count_cells: bool = True, **options: Any) -> Any:
    """Read with the adapted models; where they find no board, or fewer cells than the shipped reader, read its board.

    The readers judge the boards they find by how surely their cells read, so adapted heads may
    choose another grid or lattice than the shipped ones; where that loses the board, the shipped
    reader's board is read instead (with the adapted heads, on its corners): adapting never loses a
    board. On boards of cells relative to one another (a palace: ``fixed_cells`` false) adapted heads
    that say whether a cell holds anything (``count_cells``: ``changes_presence``) may also call
    tiles empty that the shipped ones see; a reading of fewer cells than the shipped reader's is
    read again on its board, and when that still sees fewer, the shipped reading stands. Heads that
    leave that to the shipped model are not counted against it: the reading is made once.

    Raises:
        BoardNotFoundError: neither finds a board (the shipped reader's error).
    """
    given = options.get("corners") is not None
    try:
        reading = adapted_read(photo, **options)
    except BoardNotFoundError:
        if given:
            raise
        reading = None
    game = getattr(shipped, "game", None)
    counts = count_cells and game in CLASSIFIERS and not cell_classifier(game).fixed_cells
    if given or (reading is not None and not counts):
        return reading
    try:
        found = shipped.read(photo, **options)
    except BoardNotFoundError:
        if reading is not None:
            return reading
        raise
    if reading is not None and len(reading.cells) >= len(found.cells):
        return reading
    try:
        again = adapted_read(photo, **{**options, "corners": np.asarray(found.corners, dtype=np.float32)})
    except BoardNotFoundError:
        return found
    return again if len(again.cells) >= len(found.cells) else found
