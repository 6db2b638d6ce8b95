"""The argument parser of the training, benchmark and evaluation commands under ``models``.

A usage error (an unknown flag, a value that does not parse, a check the command makes itself with
``parser.error``) is one line naming what is wrong, and the command exits with status 2, as
``tablescan`` does; ``--help`` still prints the whole usage.
"""

from __future__ import annotations

import argparse
from typing import NoReturn


class CommandParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose errors are one line: ``prog: error: what (see --help)``."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")
