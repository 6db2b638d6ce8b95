"""The ``tablescan`` command line: the only place that reads argv and picks exit codes.

Exit status: 0 success, 2 bad input (one line on stderr naming what is wrong), 1 anything else.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from scoring.errors import StateError, TableError


class _Group(click.Group):
    """A click group that turns any ``TableError`` into one stderr line and its exit code."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except TableError as error:
            click.echo(f"tablescan: {_in_cli_words(error)}", err=True)
            ctx.exit(error.exit_code)


def _in_cli_words(error: TableError) -> str:
    """The error as one line, a scanner error's remedy worded as the flag that applies it."""
    message = str(error).replace("\n", " ")
    try:  # the scanner is optional (and heavy): it is only imported here once an error has happened
        from scanner.errors import AdaptationError, Remedy, in_own_words
    except ImportError:
        return message
    option = f" --profile {error.profile}" if isinstance(error, AdaptationError) and error.profile else ""
    flags = {
        Remedy.SET_CORNERS: "give --corners x,y,x,y,x,y,x,y",
        Remedy.CHOOSE_GAME: "choose one with --game",
        Remedy.ADAPT_AGAIN: f"run `tablescan adapt{option}` again to re-fit it, or `tablescan adapt{option} --reset` to use the shipped models",
        Remedy.RESET_ADAPTATION: f"run `tablescan adapt{option} --reset`",
    }
    return in_own_words(error, flags)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="tablescan")
def cli() -> None:
    """Score board games from photos: Alhambra, Sagrada and Splendor."""


def read_document(source: str) -> dict:
    """Read a JSON game document from a path or ``-`` (stdin).

    Raises:
        StateError: unreadable file or invalid JSON, naming the file.
    """
    label = "<stdin>" if source == "-" else source
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise StateError(f"{label}: no such file") from None
    except IsADirectoryError:
        raise StateError(f"{label}: is a directory, expected a JSON game file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise StateError(f"{label}: cannot read ({error.__class__.__name__}: {error})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise StateError(
            f"{label}: invalid JSON at line {error.lineno} column {error.colno} ({error.msg})"
        ) from None


def score_document(doc: dict, label: str):
    """Parse and score a game document; errors are prefixed with ``label``.

    Raises:
        StateError: the document does not follow FORMATS.md.
    """
    from scoring.registry import game_of

    try:
        game = game_of(doc)
        state = game.parse(doc)
    except StateError as error:
        raise StateError(f"{label}: {error}") from None
    return game.score(state)


@cli.command()
@click.argument("game_file", metavar="GAME.json")
@click.option("--format", "fmt", type=click.Choice(["json", "text"]), default="json", show_default=True)
def score(game_file: str, fmt: str) -> None:
    """Score a game file (a path, or - for standard input)."""
    doc = read_document(game_file)
    report = score_document(doc, "<stdin>" if game_file == "-" else game_file)
    if fmt == "json":
        click.echo(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    else:
        click.echo(report.to_text())


# Each subcommand lives in its own module; they are registered here, after ``cli`` exists.
from tablescan.adapt import adapt  # noqa: E402
from tablescan.calibrate import calibrate  # noqa: E402
from tablescan.corrections import export_corrections_command  # noqa: E402
from tablescan.review.command import review  # noqa: E402
from tablescan.scan import scan  # noqa: E402
from tablescan.synth import synth  # noqa: E402

for _command in (scan, review, export_corrections_command, calibrate, adapt, synth):
    cli.add_command(_command)


def main() -> None:
    """Console entry point."""
    cli(prog_name="tablescan")
