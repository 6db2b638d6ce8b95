"""Alhambra from a photo: locate the tiles, fit their lattice, read each tile, decode the palace with the rules."""

from scanner.alhambra.adaptable import CLASSIFIER
from scanner.alhambra.reader import make_reader
from scanner.alhambra.verdict import VERDICT

__all__ = ["CLASSIFIER", "VERDICT", "make_reader"]
