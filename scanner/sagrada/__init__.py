"""scanner/sagrada."""
