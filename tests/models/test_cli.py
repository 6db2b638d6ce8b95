"""Usage errors of the commands under ``models``: one line naming what is wrong, exit status 2."""

from __future__ import annotations

import pytest

from models import compare, train
from models.alhambra import transfer as alhambra_transfer
from models.sagrada import transfer as sagrada_transfer


@pytest.mark.parametrize(
    "main, argv, names",
    [
        (alhambra_transfer.main, ["--sets", "guidez"], ["--sets", "guidez", "held_out, training, guides"]),
        (alhambra_transfer.main, ["--size", "10x10"], ["--size", "480 px"]),
        (alhambra_transfer.main, ["--first", "-1"], ["--first", "0 or more"]),
        (sagrada_transfer.main, ["--workers", "0"], ["--workers", "1 or more"]),
        (compare.main, ["before.json"], ["after"]),
        (train.main, ["--no-such-flag"], ["--no-such-flag"]),
    ],
)
def test_a_usage_error_is_one_line_and_exit_status_2(capsys, main, argv, names) -> None:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert all(name in err for name in names), err
    assert err.rstrip().endswith("(see --help)")
