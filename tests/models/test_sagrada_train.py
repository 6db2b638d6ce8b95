"""The Sagrada cell ensemble: networks trained apart, read and exported as one."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="training code needs the train extra")

from models.sagrada import train  # noqa: E402
from models.sagrada.nets import CellEnsemble, CellNet, CellNetWithEmbedding  # noqa: E402


def _members(count: int) -> list[CellNet]:
    torch.manual_seed(5)
    return [CellNet().eval() for _ in range(count)]


def test_an_ensemble_reads_the_mean_of_its_members_log_probabilities():
    members = _members(3)
    x = torch.rand(6, 3, 48, 48)
    with torch.no_grad():
        got = CellEnsemble(members).eval()(x)
        for head in range(3):
            each = torch.stack([torch.log_softmax(member(x)[head], dim=1) for member in members])
            assert torch.allclose(got[head], each.mean(dim=0), atol=1e-6)
            # a mean of log-probabilities is a head's logits: its softmax is a distribution
            assert torch.allclose(torch.softmax(got[head], dim=1).sum(dim=1), torch.ones(6))


def test_an_exported_ensemble_gives_every_members_features_for_adapting():
    members = _members(2)
    x = torch.rand(2, 3, 48, 48)
    with torch.no_grad():
        die, colour, value, embedding = CellNetWithEmbedding(CellEnsemble(members).eval())(x)
        assert (die.shape, colour.shape, value.shape, embedding.shape) == ((2, 2), (2, 6), (2, 7), (2, 128))
        assert torch.allclose(embedding[:, 64:], members[1].features(x))
        single = CellNetWithEmbedding(members[0])(x)  # one network: its own logits and 64-d features
        assert single[3].shape == (2, 64) and torch.allclose(single[0], members[0](x)[0])


def test_an_ensemble_needs_a_member():
    with pytest.raises(ValueError, match="at least one member"):
        CellEnsemble([])


def test_each_member_trains_and_fine_tunes_on_seeds_of_its_own(monkeypatch):
    seen: list[tuple[str, int]] = []

    def fake_train(crops, labels, config, *, log=print):
        seen.append(("train", config.seed))
        return CellNet()

    def fake_tune(net, crops, labels, real, config, **options):
        seen.append(("tune", config.seed))
        return net

    monkeypatch.setattr(train, "train_cells", fake_train)
    monkeypatch.setattr(train, "fine_tune_real", fake_tune)
    crops, labels = np.zeros((4, 48, 48, 3), np.uint8), np.zeros((4, 3), np.int64)
    real = object()
    for member in range(3):
        train.train_cell_member(member, crops, labels, real, train.CONFIG)  # type: ignore[arg-type]
    step = train.MEMBER_SEED_STEP
    assert seen == [
        (kind, base + member * step)
        for member in range(3)
        for kind, base in (("train", train.CONFIG.cells.seed), ("tune", train.CONFIG.fine_tune.seed))
    ]
    seen.clear()
    train.train_cell_member(1, crops, labels, None, train.CONFIG)  # no real dice: no fine-tune
    assert seen == [("train", train.CONFIG.cells.seed + step)]


def test_the_ensemble_size_is_a_checked_setting():
    assert train.CONFIG.cell_members >= 1
    with pytest.raises(ValueError, match="cell_members"):
        dataclasses.replace(train.CONFIG, cell_members=0)


@pytest.mark.parametrize("flag", ["--cell-members", "--photos", "--cell-epochs"])
def test_the_command_refuses_a_count_below_one_in_one_line(flag, capsys):
    with pytest.raises(SystemExit) as stop:
        train.main([flag, "0", "--skip-evaluate"])
    assert stop.value.code == 2
    assert "expected" in capsys.readouterr().err.strip().splitlines()[-1]
