"""The Sagrada cell ensemble: networks trained side by side, read and exported as one."""

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


def _tiny_cells(count: int = 8) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    crops = rng.integers(0, 256, (count, 48, 48, 3), dtype=np.uint8)
    labels = np.stack([rng.integers(0, 2, count), rng.integers(0, 6, count), rng.integers(0, 7, count)], axis=1).astype(np.int64)
    return crops, labels


def test_networks_trained_side_by_side_each_learn_as_if_alone(monkeypatch):
    """The first of two networks trained on shared batches ends as the one network trained alone; the second differs."""
    monkeypatch.setattr(train.fast, "BF16", False)  # float32 throughout: the two runs' sums are the same to rounding
    monkeypatch.setattr(torch.nn.Dropout, "forward", lambda self, x: x)  # dropout draws from torch's global generator
    crops, labels = _tiny_cells()
    config = train.FitConfig("cells", epochs=1, batch=4, lr=3e-3, peak_lr=4e-3, seed=11)
    alone = train.train_cells(crops, labels, config, members=1, log=lambda line: None)
    pair = train.train_cells(crops, labels, config, members=2, log=lambda line: None)
    assert isinstance(alone, CellNet) and isinstance(pair, CellEnsemble) and len(pair.members) == 2
    first, second = (dict(member.state_dict()) for member in pair.members)
    for name, weight in alone.state_dict().items():
        assert torch.allclose(first[name].float(), weight.float(), atol=1e-5), name
    assert any(not torch.allclose(first[name], second[name]) for name in first if first[name].is_floating_point())


def test_the_cell_model_has_the_configured_number_of_networks(monkeypatch):
    crops, labels = _tiny_cells()
    tuned: list[object] = []

    def fake_tune(net, crops, labels, real, config, **options):
        tuned.append(net)
        return net

    monkeypatch.setattr(train, "fine_tune_real", fake_tune)
    config = dataclasses.replace(train.CONFIG, cell_members=3, cells=dataclasses.replace(train.CONFIG.cells, epochs=1, batch=8))
    net = train.train_cell_networks(crops, labels, None, config, log=lambda line: None)
    assert isinstance(net, CellEnsemble) and len(net.members) == 3 and tuned == []  # no real dice: no fine-tune
    net = train.train_cell_networks(crops, labels, object(), config, log=lambda line: None)  # type: ignore[arg-type]
    assert tuned == [net]


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
