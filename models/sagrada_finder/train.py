"""Rebuild sagrada_finder: every Sagrada model is trained together by `models.sagrada_dice.train`."""

from models.sagrada_dice.train import main

if __name__ == "__main__":
    main()
