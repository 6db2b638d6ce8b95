"""Alhambra tile locator: tile-centre heatmap and tile mask (trained by ``models.alhambra_tiles.train``)."""
