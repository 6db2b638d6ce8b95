"""The ``tablescan`` program: thin shells (CLI, review screen) over scoring, scanner and calibration."""

__version__ = "0.1.0"
