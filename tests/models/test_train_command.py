"""``python -m models.train``: both games' commands run at once, their output told apart, a failure reported."""

from __future__ import annotations

import sys

from models.train import run_together


def _python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_both_commands_run_at_once_with_their_lines_labelled(capsys, tmp_path):
    # each waits for the other's file: run one after the other, they would never finish
    first = "import pathlib, time\np = pathlib.Path('{}')\np.joinpath('a').touch()\nwhile not p.joinpath('b').exists(): time.sleep(0.01)\nprint('one')"
    second = "import pathlib, time\np = pathlib.Path('{}')\np.joinpath('b').touch()\nwhile not p.joinpath('a').exists(): time.sleep(0.01)\nprint('two')"
    status = run_together([("sagrada", _python(first.format(tmp_path))), ("alhambra", _python(second.format(tmp_path)))])
    out = capsys.readouterr().out
    assert status == 0
    assert "[sagrada] one\n" in out and "[alhambra] two\n" in out
    assert "== [sagrada] exit 0" in out and "== [alhambra] exit 0" in out


def test_a_failing_command_gives_its_status_and_the_other_still_finishes(capsys):
    status = run_together([("sagrada", _python("import sys; sys.exit(3)")), ("alhambra", _python("print('done')"))])
    out = capsys.readouterr().out
    assert status == 3
    assert "[alhambra] done\n" in out and "== [sagrada] exit 3" in out
