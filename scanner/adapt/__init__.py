"""Adapting the shipped classifiers to one game set, from corrected readings, in numpy only.

Renders never look exactly like a given copy of the game under a given lamp. After a few scans have
been corrected in the review screen, ``adapt_model`` re-fits a small *residual head* per classifier
head on those examples::

    adapted_logits = shipped_logits + standardise(features) @ W + b

``features`` are, per head, whichever held-out checking reads best of: the model's ``embedding``
output (its penultimate layer; without one, all its logits concatenated: an affine re-fit), the
crop's own colour features (``crop_colour_features``: a hue histogram and colour statistics of
its centre, which a new printing's colours move in ways a few examples can learn), or both. ``W`` and ``b``
start at zero and are pulled back towards zero (L2, strength chosen by cross-validation), so with
few examples the head stays close to the shipped one. Each example is held out once (whole photos
when there are several) and read by a head fitted without it: a head is kept only when that
held-out accuracy does not drop and the held-out log-loss does (unseen cells read more surely, no
fewer of them right); the head that says whether a cell holds anything at all (a game's
``presence_head``) only when that accuracy rises. The kept heads are then re-fitted on every example.

The result, an ``Adaptation``, is saved as an ``.npz`` file (no pickles) beside the calibration
profile that selects it; it records each model's sha256 and classes, and loading refuses a corrupt
file or one fitted for another model. Readers use it through ``adapt_reader`` (which wraps the
reader's ``OnnxModel`` attributes so their ``run`` returns adapted logits) or ``apply_head``; the
shipped model files are never touched, and without an adaptation nothing changes at all.

A game's part reader (``CellClassifier.part``: the Alhambra price octagon reader, which gives a tile
its type and price) is adapted the same way, on the patches each reading keeps of its cells
(``examples_from_parts``).

The package's modules: ``labels`` (which classifier and part reader a game is read with, a value's head classes),
``examples`` (``ExampleSet``), ``head`` (``HeadFit``, ``fit_head``), ``fitting`` (``adapt_model``
and its held-out check), ``storage`` (``Adaptation``, the ``.npz`` file), ``adapted``
(``AdaptedModel``, ``adapt_reader``), ``memory`` (``CellMemory``: corrected dice a doubtful cell is looked up
in), ``profiles`` and ``photos`` (examples from corrected photos).
"""

import inspect

from scanner.adapt import adapted, examples, fitting, head, labels, memory, photos, profiles, storage
from scanner.adapt.adapted import AdaptedModel, adapt_reader, changes_presence, check_model
from scanner.adapt.examples import (
    CROP_COLOUR,
    CROP_FEATURES,
    CROP_SIDES,
    CROP_WALLS,
    HUE_BINS,
    ExampleSet,
    crop_colour_features,
    crop_side_features,
    crop_wall_features,
    dihedral,
    examples_from_crops,
    examples_from_parts,
    label_indices,
    labelled_rows,
    pooled_embeddings,
    with_crop_colour,
)
from scanner.adapt.fitting import (
    EMBEDDING,
    HOLDOUT_FRACTION,
    L2_CHOICES,
    MIN_EXAMPLES,
    HeadReport,
    HeadTrial,
    ModelAdaptation,
    ModelReport,
    adapt_model,
    choose_basis,
    feature_matrix,
    fitting_basis,
    holdout_folds,
    holds_right,
    rows_right,
    split_holdout,
)
from scanner.adapt.head import LEARNING_RATE, SCALE_L2, STEPS, HeadFit, accuracy, fit_head, keep_first_class, log_loss
from scanner.adapt.labels import (
    CLASSIFIERS,
    PART_MODELS,
    cell_classifier,
    crop_margin,
    game_of_model,
    head_crop_features,
    head_labels,
    part_reader,
    presence_head,
)
from scanner.adapt.memory import (
    RECALL,
    RECALL_BAR,
    RECALL_BOOST,
    RECALL_MARGIN,
    CellMemory,
    memory_from_examples,
    unit_rows,
)
from scanner.adapt.photos import (
    LabelledPhoto,
    classifier_manifest,
    decode_crop,
    decode_patches,
    encode_crop,
    encode_patches,
    examples_from_photos,
    pad_cell_crop,
    read_labelled_photo,
    scan_examples,
)
from scanner.adapt.profiles import adaptation_file, profile_adaptation, profile_reference, without_adaptation
from scanner.adapt.storage import (
    ADAPTATION_FORMAT,
    ADAPTATION_VERSION,
    Adaptation,
    apply_head,
    file_sha256,
    from_npz_bytes,
    load_adaptation,
    save_adaptation,
    to_npz_bytes,
)
from scanner.errors import AdaptationError

# ``doctest.testmod(scanner.adapt)`` runs the examples of every function and class of the package's modules
__test__ = {
    f"{module.__name__}.{name}": value
    for module in (adapted, examples, fitting, head, labels, memory, photos, profiles, storage)
    for name, value in vars(module).items()
    if (inspect.isfunction(value) or inspect.isclass(value)) and value.__module__ == module.__name__
}

__all__ = [
    "ADAPTATION_FORMAT",
    "ADAPTATION_VERSION",
    "CLASSIFIERS",
    "CROP_COLOUR",
    "CROP_FEATURES",
    "CROP_SIDES",
    "CROP_WALLS",
    "EMBEDDING",
    "HOLDOUT_FRACTION",
    "HUE_BINS",
    "L2_CHOICES",
    "LEARNING_RATE",
    "MIN_EXAMPLES",
    "PART_MODELS",
    "RECALL",
    "RECALL_BAR",
    "RECALL_BOOST",
    "RECALL_MARGIN",
    "SCALE_L2",
    "STEPS",
    "Adaptation",
    "AdaptationError",
    "AdaptedModel",
    "CellMemory",
    "ExampleSet",
    "HeadFit",
    "HeadReport",
    "HeadTrial",
    "LabelledPhoto",
    "ModelAdaptation",
    "ModelReport",
    "accuracy",
    "adapt_model",
    "adapt_reader",
    "adaptation_file",
    "apply_head",
    "cell_classifier",
    "changes_presence",
    "check_model",
    "choose_basis",
    "classifier_manifest",
    "crop_colour_features",
    "crop_side_features",
    "crop_wall_features",
    "crop_margin",
    "decode_crop",
    "decode_patches",
    "dihedral",
    "encode_crop",
    "encode_patches",
    "examples_from_crops",
    "examples_from_parts",
    "examples_from_photos",
    "feature_matrix",
    "file_sha256",
    "fit_head",
    "fitting_basis",
    "from_npz_bytes",
    "game_of_model",
    "head_crop_features",
    "head_labels",
    "presence_head",
    "holdout_folds",
    "holds_right",
    "keep_first_class",
    "label_indices",
    "labelled_rows",
    "load_adaptation",
    "log_loss",
    "memory_from_examples",
    "pad_cell_crop",
    "part_reader",
    "pooled_embeddings",
    "profile_adaptation",
    "profile_reference",
    "read_labelled_photo",
    "rows_right",
    "save_adaptation",
    "scan_examples",
    "split_holdout",
    "to_npz_bytes",
    "unit_rows",
    "with_crop_colour",
    "without_adaptation",
]
