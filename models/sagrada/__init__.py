"""models/sagrada."""
