"""models/alhambra."""
