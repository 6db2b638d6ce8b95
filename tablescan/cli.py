"""The ``tablescan`` command line: the only place that reads argv and picks exit codes.

Each command lives in its own module; this one assembles the group.

Exit status: 0 success, 2 bad input (one line on stderr naming what is wrong), 1 anything else.
"""

from __future__ import annotations

import click

from scanner.errors import AdaptationError, Remedy, in_own_words
from scoring.errors import TableError
from tablescan.adapt import adapt
from tablescan.calibrate import calibrate, calibration_flags
from tablescan.corrections import export_corrections_command
from tablescan.documents import FORMATS_DOC
from tablescan.games import GAMES
from tablescan.review.command import review
from tablescan.scan import scan
from tablescan.score import score
from tablescan.synth import synth


class _Group(click.Group):
    """A click group that turns any ``TableError`` into one stderr line and its exit code."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except TableError as error:
            click.echo(f"tablescan: {_in_cli_words(error)}", err=True)
            ctx.exit(error.exit_code)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as error:
            command = error.ctx.command_path if error.ctx is not None else "tablescan"
            message = " ".join(error.format_message().split())
            click.echo(f"tablescan: {message} (see `{command} --help`)", err=True)
            ctx.exit(error.exit_code)


def _in_cli_words(error: TableError) -> str:
    """The error as one line, its remedy worded as the flag or command that applies it."""
    option = f" --profile {error.profile}" if isinstance(error, AdaptationError) and error.profile else ""
    flags = {
        Remedy.SET_CORNERS: "give --corners x,y,x,y,x,y,x,y",
        Remedy.CHOOSE_GAME: "choose one with --game",
        Remedy.ADAPT_AGAIN: f"run `tablescan adapt{option}` again to re-fit it, or `tablescan adapt{option} --reset` to use the shipped models",
        Remedy.RESET_ADAPTATION: f"run `tablescan adapt{option} --reset`",
    }
    return in_own_words(error, flags | calibration_flags(error))


_TITLES = sorted(entry.title for entry in GAMES.values())


@click.group(
    cls=_Group,
    context_settings={"help_option_names": ["-h", "--help"]},
    help=f"Score board games from photos: {', '.join(_TITLES[:-1])} and {_TITLES[-1]}.",
    epilog=f"File formats, the command line and exit codes: {FORMATS_DOC} (in the project).",
)
@click.version_option(package_name="tablescan")
def cli() -> None:
    """The ``tablescan`` group (its help, above, names the registered games)."""


for _command in (score, scan, review, export_corrections_command, calibrate, adapt, synth):
    cli.add_command(_command)


def main() -> None:
    """Console entry point."""
    cli(prog_name="tablescan")
