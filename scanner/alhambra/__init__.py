"""scanner/alhambra."""
