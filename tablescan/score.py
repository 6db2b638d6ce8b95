"""``tablescan score``: a game file -> its score report (JSON or text)."""

from __future__ import annotations

import json

import click

from tablescan.documents import read_document, score_document, source_label


@click.command()
@click.argument("game_file", metavar="GAME.json")
@click.option("--format", "fmt", type=click.Choice(["json", "text"]), default="json", show_default=True)
def score(game_file: str, fmt: str) -> None:
    """Score a game file (a path, or - for standard input)."""
    doc = read_document(game_file)
    report = score_document(doc, source_label(game_file))
    if fmt == "json":
        click.echo(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    else:
        click.echo(report.to_text())
