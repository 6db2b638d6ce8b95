"""``tablescan review``: the local web app where a table scores a whole game night."""
