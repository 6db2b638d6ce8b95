"""The review screen's SQLite store: ordered migrations, and one short transaction per change.

Every write commits before the request returns, so killing the server loses nothing.
All SQL takes its values as parameters; table and column names are never built from input.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from platformdirs import user_data_dir

from tablescan.review import history
from tablescan.review.errors import DatabaseError, NotFoundError
from tablescan.review.migrations import LATEST_VERSION, MIGRATIONS

__all__ = ["LATEST_VERSION", "MIGRATIONS", "PhotoRecord", "Store", "default_db_path", "now_text"]


def default_db_path() -> Path:
    """Return the default database file, in the user's data directory."""
    return Path(user_data_dir("tablescan", appauthor=False)) / "review.sqlite3"


def now_text() -> str:
    """Return the current UTC time as ISO 8601 text, to the microsecond (pages poll for changes by it)."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


@dataclass(frozen=True)
class PhotoRecord:
    """A stored photo: its content hash names the file, which lies in the store's photo folder."""

    id: int
    sha256: str
    filename: str
    original_name: str | None
    media_type: str
    width_px: int
    height_px: int
    bytes: int


def _inserted_id(cursor: sqlite3.Cursor, what: str) -> int:
    if cursor.lastrowid is None:
        raise DatabaseError(f"{what}: the database gave no id for the new row")
    return cursor.lastrowid


def _photo(row: sqlite3.Row | None) -> PhotoRecord | None:
    if row is None:
        return None
    return PhotoRecord(
        id=row["id"],
        sha256=row["sha256"],
        filename=row["filename"],
        original_name=row["original_name"],
        media_type=row["media_type"],
        width_px=row["width_px"],
        height_px=row["height_px"],
        bytes=row["bytes"],
    )


def _loads(text: str | None, default: Any = None) -> Any:
    return default if text is None else json.loads(text)


def _dumps(value: Any) -> str | None:
    return None if value is None else json.dumps(value, separators=(",", ":"), ensure_ascii=False)


class Store:
    """Games, players, photos, readings, corrections and rounds in one SQLite file.

    Photos live beside the database in ``<db stem>-photos/``, named by their sha256.

    Raises:
        DatabaseError: (on construction) the file cannot be opened or is from a newer tablescan.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.photo_dir = self.path.with_name(self.path.stem + "-photos")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.photo_dir.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise DatabaseError(f"{self.path}: cannot create its folder ({error.strerror})") from None
        self.migrate()

    # -- connections -------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(self.path, timeout=15, isolation_level=None)
        except sqlite3.Error as error:
            raise DatabaseError(f"{self.path}: cannot open the database ({error})") from None
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA foreign_keys = ON")
        # WAL with NORMAL sync: a commit survives the server being killed (only a power cut can lose the last one)
        conn.execute("PRAGMA synchronous = NORMAL")
        return conn

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Yield a connection inside one immediate transaction, committed on success."""
        conn = self._connect()
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        finally:
            conn.close()

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """Yield a connection for reads only."""
        conn = self._connect()
        try:
            yield conn
        finally:
            conn.close()

    def schema_version(self) -> int:
        """Return the schema version the database is at (0 for a new file)."""
        with self.reading() as conn:
            return _version(conn)

    def migrate(self) -> int:
        """Apply every migration newer than the file's schema version, each in its own transaction.

        Raises:
            DatabaseError: the file is not a database or is newer than this program.
        """
        try:
            conn = self._connect()
            try:
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
                current = _version(conn)
                if current > LATEST_VERSION:
                    raise DatabaseError(
                        f"{self.path}: schema version {current} is newer than this tablescan knows "
                        f"({LATEST_VERSION}); upgrade tablescan or use another --db"
                    )
                for version, statements in MIGRATIONS:
                    if version <= current:
                        continue
                    conn.execute("BEGIN IMMEDIATE")
                    try:
                        for statement in statements:
                            conn.execute(statement)
                        conn.execute("DELETE FROM schema_version")
                        conn.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))
                    except BaseException:
                        conn.execute("ROLLBACK")
                        raise
                    conn.execute("COMMIT")
                return _version(conn)
            finally:
                conn.close()
        except sqlite3.DatabaseError as error:
            raise DatabaseError(f"{self.path}: not a usable tablescan database ({error})") from None

    # -- games -------------------------------------------------------------------------------

    def create_game(
        self, game: str, name: str, settings: dict, players: list[tuple[str, dict]], cells: dict[str, str] | None = None
    ) -> int:
        """Insert a game with its players (name, fields) in turn order, each board set to ``cells``; return its id.

        All in one transaction: a game is there whole or not at all.
        """
        stamp = now_text()
        with self.transaction() as conn:
            cursor = conn.execute(
                "INSERT INTO games (game, name, settings, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
                (game, name, _dumps(settings), stamp, stamp),
            )
            game_id = _inserted_id(cursor, "game")
            for position, (player_name, fields) in enumerate(players):
                cursor = conn.execute(
                    "INSERT INTO players (game_id, position, name, fields) VALUES (?, ?, ?, ?)",
                    (game_id, position, player_name, _dumps(fields)),
                )
                for cell, value in (cells or {}).items():
                    conn.execute(
                        "INSERT INTO readings (player_id, cell, value, source, updated_at) VALUES (?, ?, ?, 'manual', ?)",
                        (cursor.lastrowid, cell, value, stamp),
                    )
        return game_id

    def list_games(self, deleted: bool = False) -> list[dict]:
        """Return every game (with ``deleted``: every deleted one instead), newest first, with its player names."""
        where = "deleted_at IS NOT NULL" if deleted else "deleted_at IS NULL"
        with self.reading() as conn:
            games = conn.execute(
                f"SELECT id, game, name, created_at, updated_at, deleted_at FROM games WHERE {where} ORDER BY updated_at DESC, id DESC"
            ).fetchall()
            result = []
            for row in games:
                names = [
                    r["name"]
                    for r in conn.execute(
                        "SELECT name FROM players WHERE game_id = ? AND removed_at IS NULL ORDER BY position", (row["id"],)
                    )
                ]
                result.append({**dict(row), "players": names})
            return result

    def game(self, game_id: int, deleted: bool = False) -> dict:
        """Return one game row (settings parsed); a deleted game only with ``deleted``.

        Raises:
            NotFoundError: no such game, or it was deleted.
        """
        with self.reading() as conn:
            row = conn.execute("SELECT * FROM games WHERE id = ?", (game_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"game {game_id}: no such game")
        if row["deleted_at"] is not None and not deleted:
            raise NotFoundError(f"game {game_id}: this game was deleted; the games list can bring it back")
        return {**dict(row), "settings": _loads(row["settings"], {})}

    def update_game(self, game_id: int, *, name: str | None = None, settings: dict | None = None, label: str = "change the game") -> None:
        """Change a game's name and/or settings (a change undo can take back, named ``label``).

        Raises:
            NotFoundError: no such game.
        """
        self.game(game_id)
        with self.transaction() as conn, self._recorded(conn, game_id, label, {"game": True}):
            if name is not None:
                conn.execute("UPDATE games SET name = ? WHERE id = ?", (name, game_id))
            if settings is not None:
                conn.execute("UPDATE games SET settings = ? WHERE id = ?", (_dumps(settings), game_id))
            conn.execute("UPDATE games SET updated_at = ? WHERE id = ?", (now_text(), game_id))

    def touch(self, conn: sqlite3.Connection, game_id: int) -> None:
        """Mark a game as changed now (inside a transaction)."""
        conn.execute("UPDATE games SET updated_at = ? WHERE id = ?", (now_text(), game_id))

    # -- players -----------------------------------------------------------------------------

    def players(self, game_id: int) -> list[dict]:
        """Return a game's players in turn order, each with fields, photo and readings."""
        with self.reading() as conn:
            rows = conn.execute("SELECT * FROM players WHERE game_id = ? AND removed_at IS NULL ORDER BY position", (game_id,)).fetchall()
            return [self._player(conn, row) for row in rows]

    def player(self, game_id: int, player_id: int) -> dict:
        """Return one player of a game.

        Raises:
            NotFoundError: no such player in that game.
        """
        with self.reading() as conn:
            row = conn.execute("SELECT * FROM players WHERE id = ? AND game_id = ? AND removed_at IS NULL", (player_id, game_id)).fetchone()
            if row is None:
                raise NotFoundError(f"game {game_id}: has no player {player_id}")
            return self._player(conn, row)

    def _player(self, conn: sqlite3.Connection, row: sqlite3.Row) -> dict:
        photo = None
        if row["photo_id"] is not None:
            photo = _photo(conn.execute("SELECT * FROM photos WHERE id = ?", (row["photo_id"],)).fetchone())
        readings = [
            {
                "cell": r["cell"],
                "value": r["value"],
                "confidence": r["confidence"],
                "polygon": _loads(r["polygon"]),
                "source": r["source"],
                **({"alternatives": _loads(r["alternatives"])} if r["alternatives"] else {}),
            }
            for r in conn.execute("SELECT * FROM readings WHERE player_id = ? ORDER BY rowid", (row["id"],))
        ]
        review = None
        if row["photo_id"] is not None:
            found = conn.execute(
                "SELECT review FROM scan_reviews WHERE player_id = ? AND photo_id = ?", (row["id"], row["photo_id"])
            ).fetchone()
            review = None if found is None else _loads(found["review"])
        return {
            "id": row["id"],
            "position": row["position"],
            "name": row["name"],
            "fields": _loads(row["fields"], {}),
            "photo": photo,
            "corners": _loads(row["corners"]),
            "model": row["model"],
            "review": review,
            "readings": readings,
        }

    def update_player(
        self, game_id: int, player_id: int, *, name: str | None = None, fields: dict | None = None, label: str = "change a player"
    ) -> None:
        """Change a player's name and/or fields (private objective, money, ...); undo can take it back.

        Raises:
            NotFoundError: no such player in that game.
        """
        self.player(game_id, player_id)
        with self.transaction() as conn, self._recorded(conn, game_id, label, {"players": [player_id]}):
            if name is not None:
                conn.execute("UPDATE players SET name = ? WHERE id = ?", (name, player_id))
            if fields is not None:
                conn.execute("UPDATE players SET fields = ? WHERE id = ?", (_dumps(fields), player_id))
            self.touch(conn, game_id)

    # -- readings and corrections --------------------------------------------------------------

    def set_initial_cells(self, player_id: int, cells: dict[str, str]) -> None:
        """Write a player's board as manual readings, recording no corrections (a starting board)."""
        stamp = now_text()
        with self.transaction() as conn:
            for cell, value in cells.items():
                conn.execute(
                    "INSERT OR REPLACE INTO readings (player_id, cell, value, source, updated_at) VALUES (?, ?, ?, 'manual', ?)",
                    (player_id, cell, value, stamp),
                )

    def correct_cell(self, game_id: int, player_id: int, cell: str, value: str) -> bool:
        """Set one cell's value and record the change as a correction; return False if unchanged.

        Raises:
            NotFoundError: no such player in that game.
        """
        return self.correct_cells(game_id, player_id, [(cell, value)]) == 1

    def correct_cells(self, game_id: int, player_id: int, changes: list[tuple[str, str]], label: str = "correct a board") -> int:
        """Set cells' values in one transaction, recording each real change as a correction; return how many changed.

        The whole edit is one change undo can take back (named ``label``).

        Raises:
            NotFoundError: no such player in that game.
        """
        player = self.player(game_id, player_id)
        stamp = now_text()
        changed = 0
        scope = {"cells": {player_id: [cell for cell, _ in changes]}}
        with self.transaction() as conn, self._recorded(conn, game_id, label, scope, player_id=player_id):
            for cell, value in changes:
                row = conn.execute("SELECT * FROM readings WHERE player_id = ? AND cell = ?", (player_id, cell)).fetchone()
                old = None if row is None else row["value"]
                if old == value:
                    continue
                changed += 1
                conn.execute(
                    "INSERT INTO corrections (player_id, cell, old_value, new_value, model, photo_id, polygon, "
                    "confidence, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        player_id,
                        cell,
                        old,
                        value,
                        player["model"],
                        player["photo"].id if player["photo"] else None,
                        None if row is None else row["polygon"],
                        None if row is None else row["confidence"],
                        stamp,
                    ),
                )
                if row is None:
                    conn.execute(
                        "INSERT INTO readings (player_id, cell, value, source, updated_at) VALUES (?, ?, ?, 'manual', ?)",
                        (player_id, cell, value, stamp),
                    )
                else:
                    source = "manual" if row["source"] == "manual" else "corrected"
                    conn.execute(
                        "UPDATE readings SET value = ?, source = ?, updated_at = ? WHERE player_id = ? AND cell = ?",
                        (value, source, stamp, player_id, cell),
                    )
            if changed:
                self.touch(conn, game_id)
        return changed

    def corrections(self, player_id: int | None = None) -> list[dict]:
        """Return recorded corrections (all, or one player's), oldest first, with game and photo."""
        query = (
            "SELECT c.*, g.game AS game, g.id AS game_id, ph.sha256 AS photo_sha256 FROM corrections c "
            "JOIN players p ON p.id = c.player_id JOIN games g ON g.id = p.game_id "
            "LEFT JOIN photos ph ON ph.id = c.photo_id"
        )
        params: tuple = ()
        if player_id is not None:
            query += " WHERE c.player_id = ?"
            params = (player_id,)
        query += " ORDER BY c.id"
        with self.reading() as conn:
            rows = conn.execute(query, params).fetchall()
        return [{**dict(row), "polygon": _loads(row["polygon"])} for row in rows]

    # -- photos and scans --------------------------------------------------------------------

    def add_photo(
        self, sha256: str, suffix: str, data: bytes, media_type: str, size: tuple[int, int], original_name: str | None
    ) -> PhotoRecord:
        """Store a photo once by content hash (file first, then its row) and return its record."""
        filename = f"{sha256}{suffix}"
        target = self.photo_dir / filename
        if not target.exists():
            partial = target.with_suffix(target.suffix + ".part")
            partial.write_bytes(data)
            partial.replace(target)
        with self.transaction() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO photos (sha256, filename, original_name, media_type, width_px, height_px, "
                "bytes, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (sha256, filename, original_name, media_type, size[0], size[1], len(data), now_text()),
            )
            record = _photo(conn.execute("SELECT * FROM photos WHERE sha256 = ?", (sha256,)).fetchone())
        if record is None:  # the row was just written in this transaction
            raise DatabaseError(f"photo {sha256[:12]}: not found right after storing it; the database is damaged")
        return record

    def photo_by_sha(self, sha256: str) -> PhotoRecord:
        """Return a stored photo by its hash.

        Raises:
            NotFoundError: no photo with that hash.
        """
        with self.reading() as conn:
            record = _photo(conn.execute("SELECT * FROM photos WHERE sha256 = ?", (sha256,)).fetchone())
        if record is None:
            raise NotFoundError(f"photo {sha256[:12]}: no such photo")
        return record

    def photo_path(self, record: PhotoRecord) -> Path:
        """Return where a stored photo's file lies (the name comes from the database, never a client)."""
        return self.photo_dir / record.filename

    def attach_photo(self, game_id: int, player_id: int, photo_id: int) -> None:
        """Make a photo the player's current one (clearing corners and model until it is scanned).

        The examples of the player's earlier photos keep the labels their cells have now.
        """
        with self.transaction() as conn:
            _freeze_labels(conn, player_id, photo_id)
            conn.execute(
                "UPDATE players SET photo_id = ?, corners = NULL, model = NULL WHERE id = ? AND game_id = ?",
                (photo_id, player_id, game_id),
            )
            self.touch(conn, game_id)

    def set_corners(self, game_id: int, player_id: int, corners: list | None) -> None:
        """Store the player's board corners (TL, TR, BR, BL photo pixels) without a scan."""
        with self.transaction() as conn:
            conn.execute("UPDATE players SET corners = ? WHERE id = ? AND game_id = ?", (_dumps(corners), player_id, game_id))
            self.touch(conn, game_id)

    def store_scan(
        self,
        game_id: int,
        player_id: int,
        corners: list,
        model: str | None,
        readings: list[dict],
        *,
        keep_corrected: bool = False,
        examples: list[dict] | None = None,
        review: dict | None = None,
        fields: dict | None = None,
    ) -> None:
        """Replace a player's readings with a scan's (value, confidence, polygon, alternatives per cell).

        The scan's ``review`` (FORMATS.md ``scan.review``) replaces the one stored for the current photo
        (None: the scan gave none); what the scan read of the player's ``fields`` (a Sagrada pattern
        card) is merged into them.

        With ``keep_corrected`` (a re-read of the same photo), cells the players corrected keep their
        corrected value; they take the new outline and confidence. The scan's ``examples`` (cell, crop
        PNG bytes, read, confidence, model, model_sha256, and where a part reader read the cell its
        patches, ``part``) replace the ones stored for this photo.
        """
        stamp = now_text()
        with self.transaction() as conn:
            history.stale_cells(conn, player_id)  # the cells are read afresh: earlier edits of them no longer undo
            photo = conn.execute("SELECT photo_id FROM players WHERE id = ?", (player_id,)).fetchone()
            photo_id = None if photo is None else photo["photo_id"]
            if photo_id is not None:
                conn.execute("DELETE FROM examples WHERE player_id = ? AND photo_id = ?", (player_id, photo_id))
                for example in examples or []:
                    _insert_example(conn, player_id, photo_id, example, "scan", stamp)
                conn.execute("DELETE FROM scan_reviews WHERE player_id = ? AND photo_id = ?", (player_id, photo_id))
                if review is not None:
                    conn.execute(
                        "INSERT INTO scan_reviews (player_id, photo_id, review, created_at) VALUES (?, ?, ?, ?)",
                        (player_id, photo_id, _dumps(review), stamp),
                    )
            kept = {}
            if keep_corrected:
                kept = {
                    row["cell"]: row["value"]
                    for row in conn.execute("SELECT cell, value FROM readings WHERE player_id = ? AND source = 'corrected'", (player_id,))
                }
            conn.execute(
                "UPDATE players SET corners = ?, model = ? WHERE id = ? AND game_id = ?",
                (_dumps(corners), model, player_id, game_id),
            )
            if fields:
                current = conn.execute("SELECT fields FROM players WHERE id = ?", (player_id,)).fetchone()
                merged = {**_loads(current["fields"], {}), **fields}
                conn.execute("UPDATE players SET fields = ? WHERE id = ?", (_dumps(merged), player_id))
            conn.execute("DELETE FROM readings WHERE player_id = ?", (player_id,))
            for reading in readings:
                cell = reading["cell"]
                conn.execute(
                    "INSERT OR REPLACE INTO readings (player_id, cell, value, confidence, polygon, alternatives, source, updated_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        player_id,
                        cell,
                        kept.get(cell, reading["value"]),
                        reading.get("confidence"),
                        _dumps(reading.get("polygon")),
                        _dumps(reading.get("alternatives") or None),
                        "corrected" if cell in kept else "scan",
                        stamp,
                    ),
                )
            self.touch(conn, game_id)

    # -- labelled examples for adaptation ------------------------------------------------------

    def add_examples(self, player_id: int, photo_id: int, examples: list[dict], origin: str = "derived") -> int:
        """Store examples for a player's photo (those of cells already stored stay); return how many were new."""
        stamp = now_text()
        with self.transaction() as conn:
            before = conn.total_changes
            for example in examples:
                _insert_example(conn, player_id, photo_id, example, origin, stamp, replace=False)
            return conn.total_changes - before

    def examples(self, games: tuple[str, ...] | None = None, player_id: int | None = None) -> list[dict]:
        """Return every stored example with its game, photo and label, oldest first.

        The label is the frozen one, else the cell's current value (a correction, or the reading the
        players confirmed by leaving it); an empty cell read around the board (``read`` "") that the
        players left empty is labelled ""; other examples whose cell no longer exists have label None.
        """
        query = (
            "SELECT e.*, g.game AS game, g.id AS game_id, ph.sha256 AS photo_sha256, ph.original_name AS photo_name, "
            # a cell read as empty around the board (read_value '') with no reading stays empty
            "COALESCE(e.label, CASE WHEN p.photo_id = e.photo_id THEN COALESCE(r.value, "
            "CASE WHEN e.read_value = '' THEN '' END) END) AS current_label, "
            "r.source AS source FROM examples e "
            "JOIN players p ON p.id = e.player_id JOIN games g ON g.id = p.game_id JOIN photos ph ON ph.id = e.photo_id "
            "LEFT JOIN readings r ON r.player_id = e.player_id AND r.cell = e.cell "
            + ("WHERE e.player_id = ? " if player_id is not None else "")
            + "ORDER BY e.id"
        )
        with self.reading() as conn:
            rows = conn.execute(query, () if player_id is None else (player_id,)).fetchall()
        result = []
        for row in rows:
            if games is not None and row["game"] not in games:
                continue
            item = dict(row)
            item["label"] = item.pop("current_label")
            if row["label"] is not None:
                item["source"] = "frozen"
            result.append(item)
        return result

    def photos_without_examples(self) -> list[tuple[int, int]]:
        """(player id, photo id) of every scanned player board (cells with outlines) whose photo has no examples."""
        with self.reading() as conn:
            rows = conn.execute(
                "SELECT DISTINCT p.id AS player_id, p.photo_id AS photo_id FROM players p "
                "JOIN readings r ON r.player_id = p.id AND r.polygon IS NOT NULL "
                "WHERE p.photo_id IS NOT NULL AND NOT EXISTS "
                "(SELECT 1 FROM examples e WHERE e.player_id = p.id AND e.photo_id = p.photo_id) ORDER BY p.id"
            ).fetchall()
        return [(int(r["player_id"]), int(r["photo_id"])) for r in rows]

    # -- rounds (Alhambra's three scorings) ----------------------------------------------------

    def rounds(self, game_id: int) -> list[dict]:
        """Return a game's recorded scoring rounds, in order."""
        with self.reading() as conn:
            rows = conn.execute("SELECT round, report, created_at FROM rounds WHERE game_id = ? ORDER BY round", (game_id,)).fetchall()
        return [{"round": r["round"], "report": _loads(r["report"]), "created_at": r["created_at"]} for r in rows]

    def record_round(
        self, game_id: int, round_number: int, report: dict, score_before: dict[int, int], settings: dict, label: str = "record a round"
    ) -> None:
        """Store a round's report, carry each player's total into score_before, save new settings; undo can take it back."""
        scope = {"game": True, "players": list(score_before), "rounds": [round_number]}
        with self.transaction() as conn, self._recorded(conn, game_id, label, scope):
            conn.execute(
                "INSERT OR REPLACE INTO rounds (game_id, round, report, created_at) VALUES (?, ?, ?, ?)",
                (game_id, round_number, _dumps(report), now_text()),
            )
            for player_id, total in score_before.items():
                row = conn.execute("SELECT fields FROM players WHERE id = ?", (player_id,)).fetchone()
                fields = _loads(row["fields"], {})
                fields["score_before"] = total
                conn.execute("UPDATE players SET fields = ? WHERE id = ?", (_dumps(fields), player_id))
            conn.execute("UPDATE games SET settings = ? WHERE id = ?", (_dumps(settings), game_id))
            self.touch(conn, game_id)

    # -- game-night management: deleting games, adding and removing players, undo and redo ----

    @contextmanager
    def _recorded(
        self, conn: sqlite3.Connection, game_id: int, label: str, scope: history.Scope, player_id: int | None = None
    ) -> Iterator[None]:
        """Keep what the enclosed writes change of ``scope`` as one change undo can take back."""
        before = history.capture(conn, game_id, scope)
        yield
        history.record(conn, game_id, label, before, history.capture(conn, game_id, scope), now_text(), player_id)

    def delete_game(self, game_id: int) -> str:
        """Mark a game deleted (it leaves the list; ``restore_game`` brings it back whole); return when.

        Raises:
            NotFoundError: no such game, or already deleted.
        """
        self.game(game_id)
        stamp = now_text()
        with self.transaction() as conn:
            conn.execute("UPDATE games SET deleted_at = ? WHERE id = ?", (stamp, game_id))
        return stamp

    def restore_game(self, game_id: int) -> None:
        """Bring a deleted game back to the list.

        Raises:
            NotFoundError: no such game.
        """
        self.game(game_id, deleted=True)
        with self.transaction() as conn:
            conn.execute("UPDATE games SET deleted_at = NULL WHERE id = ?", (game_id,))
            self.touch(conn, game_id)

    def add_player(self, game_id: int, name: str, fields: dict, cells: dict[str, str], settings: dict, label: str = "add a player") -> int:
        """Add a player after the others, their board set to ``cells``, and save the game's new ``settings``; return the id.

        One change undo can take back (the player is then marked removed, as by ``remove_player``).
        """
        stamp = now_text()
        with self.transaction() as conn:
            top = conn.execute("SELECT MAX(position) FROM players WHERE game_id = ?", (game_id,)).fetchone()[0]
            # written as removed first, so the change undo keeps is the player's arrival
            cursor = conn.execute(
                "INSERT INTO players (game_id, position, name, fields, removed_at) VALUES (?, ?, ?, ?, ?)",
                (game_id, 0 if top is None else top + 1, name, _dumps(fields), stamp),
            )
            player_id = _inserted_id(cursor, "player")
            for cell, value in cells.items():
                conn.execute(
                    "INSERT INTO readings (player_id, cell, value, source, updated_at) VALUES (?, ?, ?, 'manual', ?)",
                    (player_id, cell, value, stamp),
                )
            with self._recorded(conn, game_id, label, {"game": True, "players": [player_id]}):
                conn.execute("UPDATE players SET removed_at = NULL WHERE id = ?", (player_id,))
                conn.execute("UPDATE games SET settings = ? WHERE id = ?", (_dumps(settings), game_id))
            self.touch(conn, game_id)
        return player_id

    def remove_player(self, game_id: int, player_id: int, settings: dict, label: str = "remove a player") -> None:
        """Mark a player removed (board, photo and corrections stay for undo) and save the game's new ``settings``.

        Raises:
            NotFoundError: no such player in that game.
        """
        self.player(game_id, player_id)
        with self.transaction() as conn:
            with self._recorded(conn, game_id, label, {"game": True, "players": [player_id]}):
                conn.execute("UPDATE players SET removed_at = ? WHERE id = ?", (now_text(), player_id))
                conn.execute("UPDATE games SET settings = ? WHERE id = ?", (_dumps(settings), game_id))
            self.touch(conn, game_id)

    def removed_players(self, game_id: int) -> list[dict]:
        """Return the players removed from a game (id, name, when), most recently removed first."""
        with self.reading() as conn:
            rows = conn.execute(
                "SELECT id, name, removed_at FROM players WHERE game_id = ? AND removed_at IS NOT NULL ORDER BY removed_at DESC",
                (game_id,),
            ).fetchall()
        return [dict(row) for row in rows]

    def restore_player(self, game_id: int, player_id: int, settings: dict, label: str = "bring a player back") -> None:
        """Bring a removed player back with their board, photo and corrections; save the game's new ``settings``.

        Raises:
            NotFoundError: no such removed player in that game.
        """
        with self.transaction() as conn:
            row = conn.execute(
                "SELECT id FROM players WHERE id = ? AND game_id = ? AND removed_at IS NOT NULL", (player_id, game_id)
            ).fetchone()
            if row is None:
                raise NotFoundError(f"game {game_id}: has no removed player {player_id}")
            with self._recorded(conn, game_id, label, {"game": True, "players": [player_id]}):
                conn.execute("UPDATE players SET removed_at = NULL WHERE id = ?", (player_id,))
                conn.execute("UPDATE games SET settings = ? WHERE id = ?", (_dumps(settings), game_id))
            self.touch(conn, game_id)

    def undo_state(self, game_id: int) -> dict:
        """Return what undo and redo would take back or bring again (their labels, None for nothing)."""
        with self.reading() as conn:
            undo, redo = history.next_undo(conn, game_id), history.next_redo(conn, game_id)
        return {"undo": None if undo is None else undo["label"], "redo": None if redo is None else redo["label"]}

    def undo(self, game_id: int) -> str | None:
        """Take back the game's newest change still in effect; return its label (None: nothing to undo).

        Raises:
            NotFoundError: no such game.
        """
        return self._step(game_id, redo=False)

    def redo(self, game_id: int) -> str | None:
        """Make the change undone last again; return its label (None: nothing to redo).

        Raises:
            NotFoundError: no such game.
        """
        return self._step(game_id, redo=True)

    def _step(self, game_id: int, *, redo: bool) -> str | None:
        """Undo the newest change still in effect (or redo the one undone last); return its label, None for nothing."""
        self.game(game_id)
        stamp = now_text()
        with self.transaction() as conn:
            change = (history.next_redo if redo else history.next_undo)(conn, game_id)
            if change is None:
                return None
            history.apply(conn, game_id, json.loads(change["diff"]), 1 if redo else 0, stamp)
            if redo:
                conn.execute("UPDATE changes SET state = 'done', undone_at = NULL WHERE id = ?", (change["id"],))
            else:
                conn.execute("UPDATE changes SET state = 'undone', undone_at = ? WHERE id = ?", (stamp, change["id"]))
            self.touch(conn, game_id)
            return str(change["label"])


def _insert_example(
    conn: sqlite3.Connection, player_id: int, photo_id: int, example: dict, origin: str, stamp: str, replace: bool = True
) -> None:
    verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
    conn.execute(
        f"{verb} INTO examples (player_id, photo_id, cell, crop, part, read_value, confidence, model, model_sha256, origin, "
        "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            player_id,
            photo_id,
            str(example["cell"]),
            sqlite3.Binary(bytes(example["crop"])),
            None if example.get("part") is None else sqlite3.Binary(bytes(example["part"])),
            example.get("read"),
            example.get("confidence"),
            example.get("model"),
            example.get("model_sha256"),
            origin,
            stamp,
        ),
    )


def _freeze_labels(conn: sqlite3.Connection, player_id: int, new_photo_id: int | None) -> None:
    """Give the examples of the player's current photo the labels their cells have now (it is being replaced)."""
    conn.execute(
        "UPDATE examples SET label = COALESCE((SELECT r.value FROM readings r WHERE r.player_id = examples.player_id "
        "AND r.cell = examples.cell), CASE WHEN examples.read_value = '' THEN '' END) "
        "WHERE player_id = ? AND label IS NULL AND photo_id IS NOT ? "
        "AND photo_id = (SELECT photo_id FROM players WHERE id = ?)",
        (player_id, new_photo_id, player_id),
    )


def _version(conn: sqlite3.Connection) -> int:
    exists = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'").fetchone()
    if exists is None:
        return 0
    row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
    return int(row[0] or 0)
