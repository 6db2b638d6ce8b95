"""The project's own reference (docs/formats.md) exists, is linked, and the README's Quick start names real files."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from tablescan.cli import cli
from tablescan.documents import FORMATS_DOC
from tablescan.games import GAMES, scannable_games

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
QUICK_START = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]


def test_the_reference_exists_and_is_linked_from_readme_and_help() -> None:
    assert (ROOT / FORMATS_DOC).is_file()
    assert f"]({FORMATS_DOC})" in README
    for args in ([], ["scan"]):
        assert FORMATS_DOC in CliRunner().invoke(cli, [*args, "--help"]).output


@pytest.mark.parametrize("name", sorted(set(re.findall(r"sample_images/[\w.]+", QUICK_START))))
def test_quick_start_names_bundled_samples(name: str) -> None:
    assert (ROOT / name).is_file(), name


@pytest.mark.parametrize(
    ("heading", "keys"),
    [
        ("## Sagrada", ["window", "public_objectives", "private_objective"]),
        ("## Alhambra", ["palace", "scoring_round"]),
        ("## Splendor", ["cards", "nobles"]),
        ("## The scan block", ["corners", "confidence", "review", "needed", "reasons"]),
        ("## Exit codes", ["| 0 |", "| 2 |", "| 1 |"]),
    ],
)
def test_the_reference_covers(heading: str, keys: list[str]) -> None:
    text = (ROOT / FORMATS_DOC).read_text(encoding="utf-8")
    section = text.split(heading, 1)[1].split("\n## ", 1)[0]
    assert all(key in section for key in keys)


def test_scan_help_names_each_games_choices_from_the_forms() -> None:
    shown = CliRunner().invoke(cli, ["scan", "--help"]).output
    assert "splendor" not in shown.split("--game")[1].split("\n")[0]
    for game in scannable_games():
        for names in GAMES[game].form.options().values():
            for name in names:
                word = name["name"] if isinstance(name, dict) else name
                assert word.split()[0] in shown, word
