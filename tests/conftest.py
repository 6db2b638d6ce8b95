"""Suite-wide settings: under CI, property tests draw the same examples every run."""

import os

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(scope="session")
def make_scanner():
    """Build a ``Scanner`` that reads both shipped games: ``make_scanner(profile=None)``.

    The scanner is imported here, not at the top, so the scoring tests run without its heavy dependencies.
    """
    from scanner import Scanner
    from scanner.alhambra import make_reader as make_alhambra_reader
    from scanner.sagrada import make_reader as make_sagrada_reader

    def make(profile=None) -> Scanner:
        return Scanner(profile, readers={"sagrada": make_sagrada_reader, "alhambra": make_alhambra_reader})

    return make
