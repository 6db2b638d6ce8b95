"""Synthetic photos with exact labels: a shared table scene (``scene``) and each game's component art."""
