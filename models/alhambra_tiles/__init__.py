"""Alhambra tile classifier (and, trained by the same command, the tile locator)."""
