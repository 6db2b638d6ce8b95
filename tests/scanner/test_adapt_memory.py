"""The memory of corrected dice: what it recalls, how it is saved, how the reader and the checks use it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from scanner.adapt import (
    ADAPTATION_VERSION,
    RECALL,
    Adaptation,
    AdaptationError,
    CellMemory,
    ExampleSet,
    ModelAdaptation,
    adapt_model,
    load_adaptation,
    memory_from_examples,
    pooled_embeddings,
    save_adaptation,
)
from scanner.sagrada.reader import STATES, SagradaReader, pooled_views, recall_poolings


def _memory(keys, labels, **options) -> CellMemory:
    return CellMemory(np.asarray(keys, np.float32), {head: np.asarray(v, np.int64) for head, v in labels.items()}, **options)


def test_an_identical_look_recalls_its_label_with_the_full_boost() -> None:
    memory = _memory([[1, 0, 0], [0, 1, 0]], {"value": [4, 6]})
    key, gain = memory.nearest(np.array([[2.0, 0, 0], [0, 0, 1.0]]))
    assert key.tolist() == [0, -1]  # the second looks like neither
    assert gain[0] == pytest.approx(memory.boost) and gain[1] == 0.0


def test_a_look_under_the_bar_or_near_a_die_of_another_label_recalls_nothing() -> None:
    near = np.array([[1.0, 0.2, 0]])  # cosine 0.98 to the first key
    alone = _memory([[1, 0, 0]], {"value": [4]})
    assert alone.nearest(near)[0].tolist() == [0]
    rival = _memory([[1, 0, 0], [1, 0.25, 0]], {"value": [4, 6]})  # another label as near, within the margin
    assert rival.nearest(near)[0].tolist() == [-1]
    same = _memory([[1, 0, 0], [1, 0.25, 0]], {"value": [4, 4]})  # a second look at the same die is no rival
    assert same.nearest(near)[0].tolist() in ([0], [1])
    assert _memory([[1, 0, 0]], {"value": [4]}, bar=0.99).nearest(near)[0].tolist() == [-1]


def test_recalled_classes_gain_and_every_head_stays_a_distribution() -> None:
    memory = _memory([[1, 0]], {"colour": [4], "value": [-1]})
    logs = {"colour": np.log(np.full((2, 6), 1 / 6)), "value": np.log(np.full((2, 7), 1 / 7)), "die": np.log([[0.5, 0.5]] * 2)}
    out = memory.apply(logs, np.array([[1.0, 0.0], [0.0, 1.0]]))
    assert out["colour"][0].argmax() == 4 and np.exp(out["colour"][0, 4]) > 0.9
    np.testing.assert_allclose(out["colour"][1], logs["colour"][1])  # the second cell recalls nothing
    np.testing.assert_allclose(out["value"], logs["value"])  # a head the die did not teach
    np.testing.assert_allclose(out["die"], logs["die"])
    np.testing.assert_allclose(np.exp(out["colour"]).sum(axis=1), 1.0)


def test_bad_memories_are_refused() -> None:
    with pytest.raises(AdaptationError, match="expected 2 class indices"):
        _memory([[1, 0], [0, 1]], {"value": [1]})
    with pytest.raises(AdaptationError, match="finite"):
        _memory([[np.nan, 0]], {"value": [1]})
    with pytest.raises(AdaptationError, match="width 2"):
        _memory([[1, 0]], {"value": [1]}).nearest(np.zeros((1, 3)))
    with pytest.raises(AdaptationError, match="3 keys are not 2 per cell"):
        _memory([[1, 0], [0, 1], [1, 1]], {"value": [1, 1, 2]}, poolings=2)


def test_a_memory_is_saved_and_loaded_exactly(tmp_path) -> None:
    memory = _memory([[0.6, 0.8], [1, 0]], {"die": [1, 1], "colour": [2, 4], "value": [5, 3]}, boost=3.0, poolings=2)
    fitted = ModelAdaptation("sagrada_dice", "7" * 64, ("embedding",), (), memory)
    sha = save_adaptation(Adaptation((fitted,)), tmp_path / "p.adapt.npz")
    loaded = load_adaptation(tmp_path / "p.adapt.npz", sha).model("sagrada_dice")
    assert loaded is not None and loaded.heads == () and loaded.memory is not None
    np.testing.assert_array_equal(loaded.memory.keys, memory.keys)
    assert {h: v.tolist() for h, v in loaded.memory.labels.items()} == {"die": [1, 1], "colour": [2, 4], "value": [5, 3]}
    assert (loaded.memory.bar, loaded.memory.margin, loaded.memory.boost) == (memory.bar, memory.margin, 3.0)
    assert loaded.memory.poolings == 2 and loaded.memory.cells == 1


class _Dice:
    """A cell model that reads every crop as a blue die, a 4 or a 6 alike, and embeds it by its mean colour."""

    manifest = SimpleNamespace(temperature=1.0, label="stub", name="sagrada_dice")

    def __init__(self, memory: CellMemory | None = None) -> None:
        if memory is not None:
            self.memory = memory

    def run(self, batch: np.ndarray) -> dict[str, np.ndarray]:
        n = len(batch)
        value = np.full((n, 7), -9.0)
        value[:, 4] = value[:, 6] = 0.0
        return {
            "die": np.tile([-9.0, 9.0], (n, 1)),
            "colour": np.tile([-9.0, -9, -9, -9, 9, -9], (n, 1)),
            "value": value,
            "embedding": batch.mean(axis=(2, 3)),
        }


def test_a_doubtful_cell_that_looks_like_a_corrected_die_reads_as_it() -> None:
    crops = np.zeros((2, 48, 48, 3), np.uint8)
    crops[0, ..., 2] = 200  # the corrected die's look: blue
    crops[1, ..., 0] = 200  # another die: red light
    key = np.mean([v.mean(axis=(1, 2)) for v in pooled_views(crops[:1])], axis=0)
    memory = _memory(key, {"die": [1], "colour": [4], "value": [6]})
    shipped = SagradaReader(dice=_Dice()).classify(crops)
    remembering = SagradaReader(dice=_Dice(memory)).classify(crops)
    b4, b6 = STATES.index("B4"), STATES.index("B6")
    assert shipped[0, b4] == pytest.approx(shipped[0, b6], rel=1e-6)  # a coin's toss without the memory
    assert remembering[0, b6] > 0.9 > remembering[0, b4]
    np.testing.assert_allclose(remembering[1], shipped[1])  # a die that looks like no corrected one is read as shipped


class _ZoomedDice(_Dice):
    """As ``_Dice``, for a blue square in the middle of a red crop: the closer it looks, the more blue it sees, and
    the surer it reads a 6 over a 4 (a closer look at the board reads surer); it embeds a crop by its blue share."""

    def run(self, batch: np.ndarray) -> dict[str, np.ndarray]:
        out = super().run(batch)
        blue = batch[:, 2].mean(axis=(1, 2)) * 255 / 200  # the share of the crop that is blue (input NCHW in 0-1)
        out["value"][:, 6] = 10 * (blue - 0.3)
        out["embedding"] = np.stack([2 * blue - 1, np.full(len(batch), 0.1)], axis=1)
        return out


def test_a_die_is_remembered_as_each_look_at_a_board_pools_it() -> None:
    """A doubtful board read 1.4 times closer pools its cells there: a corrected B4 keyed only as cut (cosine 0.8 to
    that pooling) is not recalled; keyed once per pooling (``recall_poolings``), it is."""
    crops = np.zeros((20, 48, 48, 3), np.uint8)
    crops[..., 0] = 200
    crops[:, 12:36, 12:36] = (0, 0, 200)
    model = _ZoomedDice()
    keys = pooled_embeddings(model, crops[:1], recall_poolings)
    assert keys.shape == (1, 3, 2)
    labels = {"die": np.array([1]), "colour": np.array([4]), "value": np.array([4])}
    memory = memory_from_examples(keys, labels, np.array([True]), np.array([True]))
    assert memory is not None and len(memory) == 3 and memory.cells == 1 and memory.poolings == 3
    as_cut = memory_from_examples(keys[:, 0], labels, np.array([True]), np.array([True]))
    assert as_cut is not None and len(as_cut) == as_cut.cells == 1
    b4, b6 = STATES.index("B4"), STATES.index("B6")
    shipped = SagradaReader(dice=model).classify(crops)
    assert shipped[0, b6] > shipped[0, b4]  # read closer, the 6 wins
    assert SagradaReader(dice=_ZoomedDice(as_cut)).classify(crops)[0].argmax() == b6
    remembering = SagradaReader(dice=_ZoomedDice(memory)).read_cells(crops)
    assert remembering.states[0, b4] > 0.9 > remembering.states[0, b6]
    assert SagradaReader(dice=model).read_cells(crops).split[0] == "B4"  # its looks as cut lean to a 4 ...
    assert remembering.split[0] == ""  # ... which the corrected die settles: not named for review


class _Toy:
    """A model with an embedding and one head, ``kind`` (class 0 its nothing)."""

    manifest = SimpleNamespace(
        name="toy", sha256="1" * 64, heads=(("kind", ("none", "a", "b")),), classes=("none", "a", "b"), temperature=1.0
    )


def test_corrected_cells_read_doubtfully_are_remembered_by_their_pooled_look() -> None:
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 3, 60)
    logits = np.eye(3)[labels] * 3.0 + rng.normal(0, 1, (60, 3))
    recall = rng.normal(size=(60, 5))
    outputs = {"kind": logits, "embedding": rng.normal(size=(60, 4))}
    fitted, report = adapt_model(_Toy(), ExampleSet("toy", {**outputs, RECALL: recall}, {"kind": labels}, np.arange(60) % 3))
    assert fitted is not None and fitted.memory is not None
    sure = np.exp(logits[np.arange(60), labels]) / np.exp(logits).sum(axis=1) >= 0.95
    chosen = (labels > 0) & ~sure  # "none" is not remembered, nor a cell the heads read surely
    assert 0 < chosen.sum() < (labels > 0).sum()
    assert len(fitted.memory) == int(chosen.sum()) == report.remembered
    np.testing.assert_allclose(fitted.memory.keys[0], recall[chosen][0] / np.linalg.norm(recall[chosen][0]), rtol=1e-6)
    assert fitted.memory.labels["kind"].tolist() == labels[chosen].tolist()
    assert "remembers" in report.to_text()
    plain, plain_report = adapt_model(_Toy(), ExampleSet("toy", outputs, {"kind": labels}, np.arange(60) % 3))
    assert (plain is None or plain.memory is None) and plain_report.remembered == 0


_WINDOW = {f"{r},{c}": "B1" for r in range(4) for c in range(5)}  # the truth of both corrected photos below


class _Adapted:
    """What ``adapt_reader`` stands in as below: a reader with the adaptation judged."""


def _judged_on_two_photos(monkeypatch, fitted: ModelAdaptation, fold: ModelAdaptation | None, read_p0) -> tuple:
    """``judge_end_to_end`` of ``fitted`` on two corrected photos of ``_WINDOW``: p1 read right with no cell to check,
    p0 as ``read_p0(adapted)`` says (its values, its cells to check); each fold fitted without a photo is ``fold``."""
    import tablescan.adapt as adapt

    boards = [{"photo": Path(f"p{k}.jpg"), "name": f"p{k}.jpg", "truth": _WINDOW, "corners": None, "photo_id": k} for k in range(2)]

    def read(scanner, game, board):
        if board["name"] != "p0.jpg":
            return dict(_WINDOW), None, 0
        values, to_check = read_p0(isinstance(scanner.factories.get(game)(), _Adapted))
        return values, None, to_check

    monkeypatch.setattr(adapt, "adapt_model", lambda model, subset, **options: (fold, None))
    monkeypatch.setattr(adapt, "_read_board", read)
    monkeypatch.setattr(adapt, "adapt_reader", lambda reader, adaptation, **_: _Adapted())
    monkeypatch.setattr(adapt, "readers", lambda: {"sagrada": lambda: object()})
    monkeypatch.setattr(adapt, "cell_classifier", lambda game: type("C", (), {"fixed_cells": ()})())
    examples = ExampleSet("sagrada_dice", {"value": np.zeros((4, 7))}, {"value": np.zeros(4, np.int64)}, np.array([0, 0, 1, 1]))
    model = SimpleNamespace(manifest=SimpleNamespace(heads=()))
    return adapt.judge_end_to_end(fitted, SimpleNamespace(cells_gained=0.0), model, examples, boards, "sagrada", None, {}, 0)


def _value_head():
    from scanner.adapt.head import HeadFit

    return HeadFit("value", tuple("0123456"), 1.0, np.zeros(2), np.ones(2), np.zeros((2, 7)), np.zeros(7))


@pytest.mark.parametrize(
    ("heads", "held_out", "wrong", "kept"),
    [(False, True, 1, True), (False, False, 1, False), (True, True, 1, False), (False, False, 2, True), (True, False, 2, True)],
)
def test_a_memory_alone_is_kept_on_a_die_recalled_in_a_photo_held_out(
    monkeypatch, heads: bool, held_out: bool, wrong: int, kept: bool
) -> None:
    """One cell more read right is no evidence for residual heads; for a memory it is, where the photo was held out.
    Two cells more of the corrected photos keep either, the photos held out reading no worse: the odd die a player
    corrected once, recalled in no other corrected photo, is still the one that comes back."""
    import tablescan.adapt as adapt

    memory = _memory([[1, 0]], {"value": [2]})
    fitted = ModelAdaptation("sagrada_dice", "7" * 64, ("embedding",), (_value_head(),) if heads else (), memory)
    fold = ModelAdaptation("sagrada_dice", "7" * 64, ("embedding",), (), _memory([[1, 0]], {"value": [2]})) if held_out else None
    misread = {f"0,{c}": "Y2" for c in range(wrong)}  # p0's dice read right with the adaptation, also (held_out) fitted without p0
    check, held = _judged_on_two_photos(
        monkeypatch, fitted, fold, lambda adapted: (dict(_WINDOW) if adapted else {**_WINDOW, **misread}, 0)
    )
    assert check.kept is kept and (check.right_before, check.right_after) == (40 - wrong, 40)
    assert held is not None and (held.right_before, held.right_after) == ((40 - wrong, 40) if held_out else (40 - wrong,) * 2)
    assert ("memory of 1 corrected dice alone" in check.reason) is (kept and not heads) and check.remembered == (
        1 if kept and not heads else 0
    )
    if kept and not heads:  # what the command prints says why
        outcome = adapt.AdaptOutcome("mine", (), saved=Path("mine.adapt.npz"), kept_models=("sagrada_dice",), checks=(check, held))
        assert "it remembers the dice the players corrected" in outcome.summary and check.to_json()["remembered"] == 1


@pytest.mark.parametrize(
    ("heads", "held_out", "settled", "kept"),
    [(False, True, 2, True), (False, True, 1, False), (False, False, 2, False), (True, True, 2, False)],
)
def test_a_memory_alone_is_kept_where_it_settles_doubts_on_photos_held_out(
    monkeypatch, heads: bool, held_out: bool, settled: int, kept: bool
) -> None:
    """Every cell read right either way, but dice read doubtfully (cells the review names) read surely with the memory,
    also made without their photo: ``MIN_GAIN_CELLS`` fewer cells for the players to check keep a memory, not heads."""
    memory = _memory([[1, 0]], {"value": [2]})
    fitted = ModelAdaptation("sagrada_dice", "7" * 64, ("embedding",), (_value_head(),) if heads else (), None if heads else memory)
    # p0's 3 doubtful dice, ``settled`` of them read surely by the adaptation (held_out: also fitted without p0)
    check, held = _judged_on_two_photos(
        monkeypatch, fitted, fitted if held_out else None, lambda adapted: (dict(_WINDOW), 3 - settled if adapted else 3)
    )
    assert check.kept is kept and (check.right_before, check.right_after) == (40, 40)
    assert (check.check_before, check.check_after) == (3, 3 - settled)
    assert held is not None and (held.check_before, held.check_after) == (3, 3 - settled if held_out else 3)
    assert (f"{settled} fewer cells to check" in check.reason) is kept
    assert "cells to check 3 -> " in check.to_text() and check.to_json()["cells_to_check"] == {"shipped": 3, "adapted": 3 - settled}


def test_a_scan_counts_the_cells_its_review_asks_to_check() -> None:
    from scanner.pipeline import Scanner
    from scanner.sagrada.verdict import THRESHOLDS

    result = Scanner().scan(Path(__file__).parents[2] / "sample_images" / "sagrada_tilted_01.jpg", "sagrada")
    assert result.cell_bar == THRESHOLDS.cell
    doubtful = [cell for cell in result.cells if cell.confidence < THRESHOLDS.cell]
    assert result.cells_to_check == len(doubtful) > 0
    named = " ".join(result.scan.review.reasons)
    assert all(f"r{cell.cell[0] + 1}c{cell.cell[1] + 1}" in named for cell in doubtful[:2])


@pytest.mark.parametrize(
    ("heads_kept", "memory_kept", "expected", "judged"),
    [
        (True, True, "heads", ["heads"]),  # heads that pass keep no memory: it would have vouched for them
        (False, True, "memory", ["heads", "memory"]),
        (False, False, None, ["heads", "memory"]),
    ],
)
def test_heads_are_judged_without_the_memory_and_the_memory_alone_after_them(
    monkeypatch, heads_kept: bool, memory_kept: bool, expected: str | None, judged: list[str]
) -> None:
    import tablescan.adapt as adapt

    seen: list[str] = []

    def judge(fitted, report, *context):
        what = "heads" if fitted.heads else "memory"
        assert not (fitted.heads and fitted.memory is not None)  # never judged together
        seen.append(what)
        kept = heads_kept if what == "heads" else memory_kept
        return SimpleNamespace(kept=kept, reason=what), None

    monkeypatch.setattr(adapt, "judge_end_to_end", judge)
    head = _value_head()
    fitted = ModelAdaptation("sagrada_dice", "7" * 64, ("embedding",), (head,), _memory([[1, 0]], {"value": [2]}))
    chosen, checks, notes = adapt.settle_end_to_end(fitted, SimpleNamespace(), ())
    assert seen == judged
    if expected is None:
        assert chosen is None and [c.reason for c in checks] == ["heads"]  # the players read why the heads were refused
    elif expected == "heads":
        assert chosen is not None and chosen.heads and chosen.memory is None
    else:
        assert chosen is not None and not chosen.heads and chosen.memory is not None
        assert "residual heads not kept" in notes[0]


@pytest.mark.parametrize("part", ["heads", "memory"])
def test_photos_held_out_are_read_with_folds_made_of_what_is_judged(monkeypatch, part: str) -> None:
    """Heads judged alone are checked on folds without a memory (it would read the photos right for them), and back."""
    import tablescan.adapt as adapt

    head = _value_head()
    memory = _memory([[1, 0]], {"value": [2]})
    both = ModelAdaptation("sagrada_dice", "7" * 64, ("embedding",), (head,), memory)
    read_with: list = []

    def check(boards, game, fitted, base=None, *, per_board=None, cache=None, beside=()):
        read_with.extend(per_board)
        return SimpleNamespace(right_before=1, right_after=1, cells_before=1, cells_after=1)

    monkeypatch.setattr(adapt, "adapt_model", lambda model, subset, **options: (both, None))
    monkeypatch.setattr(adapt, "check_end_to_end", check)
    monkeypatch.setattr(adapt, "replace", lambda obj, **changes: obj if isinstance(obj, SimpleNamespace) else replace(obj, **changes))
    judged = replace(both, memory=None) if part == "heads" else replace(both, heads=())
    examples = ExampleSet("sagrada_dice", {"value": np.zeros((4, 7))}, {"value": np.zeros(4, np.int64)}, np.array([1, 1, 2, 2]))
    boards = [{"photo": Path(f"p{i}.jpg"), "name": f"p{i}.jpg", "truth": {}, "corners": None, "photo_id": i} for i in (1, 2)]
    adapt.held_out_end_to_end(SimpleNamespace(manifest=SimpleNamespace(heads=())), examples, boards, "sagrada", judged)
    assert len(read_with) == 2
    assert all(bool(fold.heads) == (part == "heads") and (fold.memory is not None) == (part == "memory") for fold in read_with)


def test_an_adaptation_file_of_version_3_still_loads_without_a_memory(tmp_path) -> None:
    import io
    import json

    from scanner.adapt import from_npz_bytes, to_npz_bytes

    head = _value_head()
    data = to_npz_bytes(Adaptation((ModelAdaptation("sagrada_dice", "7" * 64, ("embedding",), (head,)),)))
    with np.load(io.BytesIO(data)) as archive:
        arrays = {name: archive[name] for name in archive.files}
    meta = json.loads(arrays["meta"].tobytes())
    assert meta["version"] == ADAPTATION_VERSION and "memory" not in meta["models"][0]
    meta["version"] = 3
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    loaded = from_npz_bytes(buffer.getvalue()).model("sagrada_dice")
    assert loaded is not None and loaded.memory is None and loaded.heads[0].head == "value"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda arrays: arrays.update(m0_memory_keys=np.full((2, 2), np.nan, np.float32)), "finite"),
        (lambda arrays: arrays.update(m0_memory_value=np.zeros(5, np.int64)), "expected 2 class indices"),
        (lambda arrays: arrays.pop("m0_memory_keys"), "KeyError"),
    ],
    ids=["nan-keys", "labels-count", "missing-keys"],
)
def test_a_damaged_memory_is_refused_as_a_corrupt_file(change, message) -> None:
    import io

    from scanner.adapt import from_npz_bytes, to_npz_bytes

    memory = _memory([[0.6, 0.8], [1, 0]], {"value": [5, 3]})
    data = to_npz_bytes(Adaptation((ModelAdaptation("sagrada_dice", "7" * 64, ("embedding",), (), memory),)))
    with np.load(io.BytesIO(data)) as archive:
        arrays = {name: archive[name] for name in archive.files}
    change(arrays)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    with pytest.raises(AdaptationError, match=f"corrupt adaptation file .*{message}"):
        from_npz_bytes(buffer.getvalue(), "mine.adapt.npz")
