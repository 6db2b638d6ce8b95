"""Sagrada from a photo: find the window's grid, crop its 20 cells, read the dice, decode with the rules."""

from scanner.sagrada.classifier import CLASSIFIER
from scanner.sagrada.reader import make_reader
from scanner.sagrada.verdict import VERDICT

__all__ = ["CLASSIFIER", "VERDICT", "make_reader"]
