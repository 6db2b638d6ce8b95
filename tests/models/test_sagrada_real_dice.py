"""The real dice colour labels (models/sagrada/real_dice_colours.json) and what the cell model reads of them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

LABELS = Path(__file__).resolve().parents[2] / "models" / "sagrada" / "real_dice_colours.json"
REALDATA = Path(__file__).resolve().parents[3] / "shared" / "realdata"
DICE = REALDATA / "dice-nellbyler-d6" / "annotations.json"
COLOUR_FLOOR = 0.97  # held-out fold, as the scanner reads a cell
TINTED_FLOOR = 0.97  # the model before the white reference: 92.07% warm, 91.16% cool


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


@pytest.mark.skipif(not DICE.is_file(), reason="needs ../shared/realdata")
def test_value_corrections_name_annotated_boxes_and_reach_every_reader_of_the_values():
    from models.sagrada import composite, make_dataset

    images = sorted(json.loads(DICE.read_text())["images"], key=lambda item: item["file"])
    boxes = {(item["file"], k): int(die["value"]) for item in images for k, die in enumerate(item["dice"])}
    corrections = composite.value_corrections()
    assert corrections and all(key in boxes and 1 <= value <= 6 and value != boxes[key] for key, value in corrections.items())
    # the held-out fold's values as the cell model is measured on them, and the composites' real dice
    files = [item["file"] for item in images]
    fold = {key: value for key, value in corrections.items() if files.index(key[0]) % 2 == 1}
    assert fold
    flat = [(item["file"], k) for item in images[1::2] for k in range(len(item["dice"]))]
    values = make_dataset.real_dice(1)[1]
    assert all(values[flat.index(key)] == value for key, value in fold.items())
    pool = {die.source: die.value for die in composite.nellbyler_dice(folds=(0, 1))}
    for (file, k), value in corrections.items():
        assert pool.get(f"nellbyler/{file}/{k}", value) == value


def _die_crop(body=(40, 70, 200), tray=(200, 200, 196), pips=((24, 24), (17, 17), (31, 31))) -> np.ndarray:
    """A 48x48 crop: a square die of colour ``body`` with white pips on a light grey tray."""
    crop = np.full((48, 48, 3), tray, np.uint8)
    crop[12:36, 12:36] = body
    for y, x in pips:
        crop[y - 2 : y + 2, x - 2 : x + 2] = 245
    return crop


def test_white_reference_balances_a_tinted_crop_on_its_pips():
    torch = pytest.importorskip("torch", reason="training code needs the train extra")
    from models.sagrada.nets import WhiteReference

    crop = torch.from_numpy(_die_crop()).permute(2, 0, 1)[None].float() / 255
    warm = crop * torch.tensor([1.0, 0.85, 0.6])[None, :, None, None]  # warm light (pips not clipped)
    plain, tinted = WhiteReference()(crop), WhiteReference()(warm)
    assert plain.shape == (1, 6, 48, 48) and torch.equal(tinted[:, :3], warm)  # the crop itself passes through
    pip = tinted[0, 3:, 23, 23]
    assert float(pip.max() - pip.min()) < 0.02  # the pips read white again
    body_before, body_after = warm[0, :, 14, 14], tinted[0, 3:, 14, 14]
    assert float((body_before - crop[0, :, 14, 14]).abs().max()) > 0.05  # the tint moved the body's colour
    assert float((body_after - plain[0, 3:, 14, 14]).abs().max()) < 0.02  # balanced, it is back where it was


def test_die_masks_cover_the_die_not_the_tray():
    from models.sagrada.real_dice import die_masks

    crops = np.stack([_die_crop(), _die_crop(body=(30, 150, 60))])
    masks = die_masks(crops)
    die = np.zeros((48, 48), bool)
    die[12:36, 12:36] = True
    assert masks.shape == (2, 48, 48)
    assert (masks[:, 14:34, 14:34] > 0.5).all()  # the die, pips and all, less its outer 2 px (shadow and halo)
    assert (masks[:, ~die] > 0.5).mean() < 0.01


def test_a_yellowed_die_turns_yellow_and_keeps_its_white_pips_and_the_tray():
    import cv2

    from models.sagrada.real_dice import die_masks, yellowed

    for body in ((40, 70, 200), (150, 20, 30), (30, 20, 45)):  # blue, red and a dark purple die
        crop = _die_crop(body=body)
        turned = yellowed(crop, die_masks(crop[None])[0], np.random.default_rng(1))
        assert turned is not None
        hsv = cv2.cvtColor(turned, cv2.COLOR_RGB2HSV).astype(int)
        assert 18 <= hsv[28, 17, 0] <= 34 and hsv[28, 17, 2] > 170  # a light yellow body, even from a dark die
        assert (turned[23:25, 23:25].astype(int) >= 230).all()  # the pips stay white
        assert np.array_equal(turned[:8], crop[:8]) and np.array_equal(turned[:, :8], crop[:, :8])  # the tray is untouched
    assert yellowed(np.full((48, 48, 3), 200, np.uint8), np.zeros((48, 48), np.float32), np.random.default_rng(1)) is None


def test_yellow_copies_are_labelled_yellow_with_their_die_value():
    from models.sagrada.make_dataset import COLOURS
    from models.sagrada.real_dice import RealDice, with_yellow_copies

    crops = np.stack([_die_crop(), _die_crop(body=(150, 20, 30)), _die_crop(body=(250, 250, 250))])
    real = RealDice(crops, np.array([3, 5, 2]), np.array([COLOURS.index("B"), COLOURS.index("R"), 0]), np.array([0, 2, 4]))
    grown = with_yellow_copies(real, 1.0, seed=3)
    assert len(grown.crops) == 5  # both dice of Sagrada's colours, never the one of another colour
    assert grown.colours[3:].tolist() == [COLOURS.index("Y")] * 2
    assert grown.values[3:].tolist() == [3, 5] and grown.photos[3:].tolist() == [0, 2]
    assert np.array_equal(grown.crops[:3], crops)
    assert len(with_yellow_copies(real, 0.0, seed=3).crops) == 3


@pytest.mark.skipif(not DICE.is_file(), reason="needs ../shared/realdata")
def test_real_dice_folds_carry_their_colour_labels():
    from models.sagrada.real_dice import load_real_dice

    folds = [load_real_dice(0), load_real_dice(1)]
    assert [len(f.crops) for f in folds] == [728, 759]  # split by photo: even and odd photos
    assert not set(folds[0].photos) & set(folds[1].photos)
    counts = json.loads(LABELS.read_text())["counts"]
    for index, letter in enumerate(("R", "Y", "G", "B", "P"), start=1):
        assert sum(int((f.colours == index).sum()) for f in folds) == counts[letter]


@pytest.mark.skipif(not DICE.is_file(), reason="needs ../shared/realdata")
def test_shipped_cell_model_reads_held_out_real_dice_colours():
    from models.sagrada.evaluate import evaluate_real_dice_colours
    from scanner.sagrada.reader import SagradaReader

    result = evaluate_real_dice_colours(SagradaReader(), fold=1)  # photos never trained on
    assert result["dice"] == 327
    assert result["colour_accuracy"] >= COLOUR_FLOOR, result["colour_confusion"]  # the model before real colours: 92.99%
    assert result["colour_confident_wrong"] <= 1


@pytest.mark.skipif(not DICE.is_file(), reason="needs ../shared/realdata")
def test_shipped_cell_model_reads_real_dice_colours_under_a_tinted_light():
    from models.sagrada.real_dice import load_real_dice
    from scanner.sagrada.reader import STATES, SagradaReader

    real = load_real_dice(1)
    crops, truth = real.crops[real.coloured], real.colours[real.coloured]
    reader = SagradaReader()
    right = []
    for gains in ((1.0, 0.88, 0.7), (0.8, 0.92, 1.0)):  # warm (tungsten-like) and cool (shade-like) light
        tinted = np.clip(crops * np.array(gains), 0, 255).astype(np.uint8)
        read = [STATES[k][0] for k in reader.classify(tinted).argmax(axis=1)]
        right.append(np.mean([r == "_RYGBP"[t] for r, t in zip(read, truth)]))
    assert min(right) >= TINTED_FLOOR, right


def _pool_of(counts: dict[tuple[str, int], int]):
    from models.sagrada.composite import DicePool, RealDie

    face, mask = np.zeros((4, 4, 3), np.uint8), np.full((4, 4), 255, np.uint8)
    return DicePool([RealDie(face, mask, c, v, f"{c}{v}/{k}") for (c, v), n in counts.items() for k in range(n)])


def test_one_set_takes_a_copys_dice_with_each_colours_values_spread_evenly():
    from models.sagrada.composite import one_set

    counts = {(c, v): 6 for c in "RGBP" for v in range(1, 7)} | {("Y", 2): 5, ("Y", 5): 1}  # yellow: 6 dice, two values
    pool = _pool_of(counts)
    chosen = one_set(pool, seed=3, per_colour=18)
    names = [die.source for die in chosen.dice]
    assert len(names) == len(set(names)) and set(names) <= {die.source for die in pool.dice}  # each a die of the pool, once
    for colour in "RGBP":
        values = [die.value for die in chosen.dice if die.colour == colour]
        assert sorted(values) == sorted(list(range(1, 7)) * 3)  # 18: three of each value
    assert sorted(die.value for die in chosen.dice if die.colour == "Y") == [2, 2, 2, 2, 2, 5]  # all the pool has
    assert names == [die.source for die in one_set(pool, seed=3, per_colour=18).dice]  # the same seed, the same set
    assert names != [die.source for die in one_set(pool, seed=4, per_colour=18).dice]
