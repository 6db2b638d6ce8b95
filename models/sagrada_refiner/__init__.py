"""The sagrada_refiner model (trained with the other Sagrada models by `python -m models.sagrada_dice.train`)."""
