"""The real dice colour labels (models/sagrada/real_dice_colours.json) and what the cell model reads of them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

LABELS = Path(__file__).resolve().parents[2] / "models" / "sagrada" / "real_dice_colours.json"
REALDATA = Path(__file__).resolve().parents[3] / "shared" / "realdata"
DICE = REALDATA / "dice-nellbyler-d6" / "annotations.json"


def test_labels_file_holds_only_known_labels_and_agrees_with_its_counts():
    document = json.loads(LABELS.read_text())
    labels = [label for dice in document["images"].values() for label in dice]
    assert len(document["images"]) == 200 and len(labels) == 1487
    assert set(labels) <= {"R", "Y", "G", "B", "P", "other"}
    assert {k: labels.count(k) for k in document["counts"]} == document["counts"]
    for colour in "RGBP":  # every Sagrada colour but yellow (no yellow die of the photos has white pips) is there
        assert labels.count(colour) >= 50


@pytest.mark.skipif(not DICE.is_file(), reason="needs ../shared/realdata")
def test_labels_cover_every_annotated_box():
    images = {item["file"]: item["dice"] for item in json.loads(DICE.read_text())["images"]}
    labelled = json.loads(LABELS.read_text())["images"]
    assert labelled.keys() == images.keys()
    assert all(len(labelled[name]) == len(dice) for name, dice in images.items())
