"""Rebuild the Alhambra locator: the same command trains every Alhambra model (``models.alhambra_tiles.train``)."""

from models.alhambra_tiles.train import main

if __name__ == "__main__":
    main()
