"""The review database's schema, as ordered migrations (``tablescan.review.db.Store.migrate`` applies them)."""

from __future__ import annotations

# (version, statements), applied in order; never edit a released entry, append a new one.
MIGRATIONS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (
        1,
        (
            """CREATE TABLE games (
                id INTEGER PRIMARY KEY,
                game TEXT NOT NULL CHECK (game IN ('alhambra', 'sagrada', 'splendor')),
                name TEXT NOT NULL,
                settings TEXT NOT NULL DEFAULT '{}',
                created_at TEXT NOT NULL,
                updated_at TEXT NOT NULL)""",
            """CREATE TABLE photos (
                id INTEGER PRIMARY KEY,
                sha256 TEXT NOT NULL UNIQUE,
                filename TEXT NOT NULL,
                original_name TEXT,
                media_type TEXT NOT NULL,
                width_px INTEGER NOT NULL,
                height_px INTEGER NOT NULL,
                bytes INTEGER NOT NULL,
                created_at TEXT NOT NULL)""",
            """CREATE TABLE players (
                id INTEGER PRIMARY KEY,
                game_id INTEGER NOT NULL REFERENCES games(id),
                position INTEGER NOT NULL,
                name TEXT NOT NULL,
                fields TEXT NOT NULL DEFAULT '{}',
                photo_id INTEGER REFERENCES photos(id),
                corners TEXT,
                model TEXT,
                UNIQUE (game_id, position))""",
            """CREATE TABLE readings (
                player_id INTEGER NOT NULL REFERENCES players(id),
                cell TEXT NOT NULL,
                value TEXT NOT NULL,
                confidence REAL,
                polygon TEXT,
                source TEXT NOT NULL CHECK (source IN ('manual', 'scan', 'corrected')),
                updated_at TEXT NOT NULL,
                PRIMARY KEY (player_id, cell))""",
            """CREATE TABLE corrections (
                id INTEGER PRIMARY KEY,
                player_id INTEGER NOT NULL REFERENCES players(id),
                cell TEXT NOT NULL,
                old_value TEXT,
                new_value TEXT NOT NULL,
                model TEXT,
                photo_id INTEGER REFERENCES photos(id),
                polygon TEXT,
                confidence REAL,
                created_at TEXT NOT NULL)""",
        ),
    ),
    (
        2,
        (
            """CREATE TABLE rounds (
                id INTEGER PRIMARY KEY,
                game_id INTEGER NOT NULL REFERENCES games(id),
                round INTEGER NOT NULL,
                report TEXT NOT NULL,
                created_at TEXT NOT NULL,
                UNIQUE (game_id, round))""",
            "CREATE INDEX corrections_by_player ON corrections (player_id, cell)",
            "CREATE INDEX players_by_game ON players (game_id, position)",
        ),
    ),
    (
        3,
        (
            # every scanned cell as a labelled example for ``tablescan adapt``: the rectified crop the cell
            # classifier read (PNG), what it read, and which model; the label is the cell's current value
            # (``label`` NULL) until the player moves to another photo, when it is frozen
            """CREATE TABLE examples (
                id INTEGER PRIMARY KEY,
                player_id INTEGER NOT NULL REFERENCES players(id),
                photo_id INTEGER NOT NULL REFERENCES photos(id),
                cell TEXT NOT NULL,
                crop BLOB NOT NULL,
                read_value TEXT,
                confidence REAL,
                model TEXT,
                model_sha256 TEXT,
                label TEXT,
                origin TEXT NOT NULL CHECK (origin IN ('scan', 'derived')),
                created_at TEXT NOT NULL,
                UNIQUE (player_id, photo_id, cell))""",
            "CREATE INDEX examples_by_photo ON examples (photo_id)",
        ),
    ),
    (
        4,
        (
            # the scanner's verdict on a player's board as read from one photo (FORMATS.md ``scan.review``,
            # JSON): each scan of that photo replaces it; the screen shows the one of the current photo
            """CREATE TABLE scan_reviews (
                player_id INTEGER NOT NULL REFERENCES players(id),
                photo_id INTEGER NOT NULL REFERENCES photos(id),
                review TEXT NOT NULL,
                created_at TEXT NOT NULL,
                PRIMARY KEY (player_id, photo_id))""",
        ),
    ),
    (
        5,
        (
            # the scanner's next readings of a cell (JSON list of stored values, most likely first), offered
            # first by the picker; NULL for cells entered by hand or scanned before this column
            "ALTER TABLE readings ADD COLUMN alternatives TEXT",
        ),
    ),
    (
        6,
        (
            # game-night management: a deleted game or removed player is only marked (undo brings it back,
            # nothing is lost); ``changes`` is the undo history, each change as the difference it made
            # (``tablescan.review.history``), ``player_id`` naming the board whose cells it changed
            "ALTER TABLE games ADD COLUMN deleted_at TEXT",
            "ALTER TABLE players ADD COLUMN removed_at TEXT",
            """CREATE TABLE changes (
                id INTEGER PRIMARY KEY,
                game_id INTEGER NOT NULL REFERENCES games(id),
                player_id INTEGER REFERENCES players(id),
                label TEXT NOT NULL,
                diff TEXT NOT NULL,
                state TEXT NOT NULL CHECK (state IN ('done', 'undone', 'dropped', 'stale')),
                created_at TEXT NOT NULL,
                undone_at TEXT)""",
            "CREATE INDEX changes_by_game ON changes (game_id, state, id)",
        ),
    ),
    (
        7,
        (
            # beside the cell's crop, the patches of it the game's part reader read (PNG, side by side: an
            # Alhambra tile's price octagon, its corner patch and its close one), so corrections teach that
            # reader too; NULL for cells it does not read and examples stored before this column
            "ALTER TABLE examples ADD COLUMN part BLOB",
        ),
    ),
)
LATEST_VERSION = MIGRATIONS[-1][0]
