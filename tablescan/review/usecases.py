"""What the review screen does, as plain functions over the ``Store``: no HTTP in here.

Each use case checks its input (a ``StateError`` names the field), changes the store and leaves
showing the result to its caller (``tablescan.review.view.game_view``). The routes in
``tablescan/review/routes/`` turn requests into these calls.
"""

from __future__ import annotations

import hashlib
import io
import logging
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from PIL import Image, UnidentifiedImageError

from scoring.errors import StateError, TableError
from tablescan.adapt import misplaced_photos
from tablescan.games import GAMES, game_entry
from tablescan.review import scanning
from tablescan.review.board import normalize_cell
from tablescan.review.db import PhotoRecord, Store
from tablescan.review.errors import NotFoundError, PhotoRefusedError, UploadError
from tablescan.review.scanning import ScanOutcome
from tablescan.review.view import game_result, game_view

log = logging.getLogger("tablescan.review")
MAX_PLAYERS = 6
MAX_NAME = 40
MAX_TITLE = 60
IMAGE_FORMATS = {"JPEG": (".jpg", "image/jpeg"), "PNG": (".png", "image/png"), "WEBP": (".webp", "image/webp")}
EXIF_ORIENTATION = 0x0112
TURNED = (5, 6, 7, 8)  # EXIF orientations that swap width and height


def check_name(value: Any, path: str) -> str:
    """Return a player or game name, stripped.

    >>> check_name(" Ana ", "players[0]")
    'Ana'

    Raises:
        StateError: empty or longer than 40 characters.
    """
    if not isinstance(value, str) or not value.strip() or len(value.strip()) > MAX_NAME:
        raise StateError(f"{path}: expected a name of 1-{MAX_NAME} characters, got {value!r}")
    return value.strip()


def check_object(value: Any, path: str) -> dict:
    """Return ``value`` when it is a JSON object.

    Raises:
        StateError: anything else.
    """
    if not isinstance(value, dict):
        raise StateError(f"{path}: expected an object")
    return value


def create_game(store: Store, game: Any, name: Any, player_names: list, settings: Any = None) -> int:
    """Create a game with its players (blank boards, default settings and fields); return its id.

    Raises:
        StateError: an unknown game, bad or repeated player names, a player count the game cannot have,
            or bad settings.
    """
    entry = game_entry(game)
    form = entry.form
    names = [check_name(n, f"players[{i}]") for i, n in enumerate(player_names) if str(n).strip()]
    if not 1 <= len(names) <= MAX_PLAYERS:
        raise StateError(f"players: expected 1-{MAX_PLAYERS} player names, got {len(names)}")
    if len(set(names)) != len(names):
        raise StateError("players: every player needs a different name")
    form.check_player_count(len(names))
    title = str(name).strip()[:MAX_TITLE] or f"{entry.title} night"
    chosen = form.default_settings(len(names))
    if settings is not None:
        chosen = form.clean_settings(chosen, check_object(settings, "settings"), len(names))
    players = [(n, form.default_fields(i)) for i, n in enumerate(names)]
    return store.create_game(entry.id, title, chosen, players, form.blank_cells())


def change_game(store: Store, game_id: int, change: dict) -> None:
    """Rename a game and/or change its settings (``change`` holds ``name`` and/or ``settings``).

    Raises:
        StateError: a bad name or setting.
        NotFoundError: no such game.
    """
    game = store.game(game_id)
    settings = None
    if "settings" in change:
        count = len(store.players(game_id))
        form = GAMES[game["game"]].form
        settings = form.clean_settings(game["settings"], check_object(change["settings"], "settings"), count)
    name = check_name(change["name"], "name") if "name" in change else None
    label = "rename the game" if settings is None else "change the settings" if name is None else "change the game"
    store.update_game(game_id, name=name, settings=settings, label=label)


def change_player(store: Store, game_id: int, player_id: int, change: dict) -> None:
    """Rename a player and/or change their fields (``change`` holds ``name`` and/or ``fields``).

    Raises:
        StateError: a bad or taken name, a bad field.
        NotFoundError: no such game or player.
    """
    game = store.game(game_id)
    player = store.player(game_id, player_id)
    name = check_name(change["name"], "name") if "name" in change else None
    if name is not None and name in {p["name"] for p in store.players(game_id) if p["id"] != player_id}:
        raise StateError(f"name: another player is already called {name!r}")
    fields = None
    if "fields" in change:
        form = GAMES[game["game"]].form
        fields = form.clean_fields(player["fields"], check_object(change["fields"], "fields"))
    what = [f"rename {player['name']}"] if name is not None else []
    if fields is not None:
        what.append(f"set {player['name']}'s " + ", ".join(key.replace("_", " ") for key in change["fields"]))
    store.update_player(game_id, player_id, name=name, fields=fields, label="; ".join(what) or "change a player")


def correct_cells(store: Store, game_id: int, player_id: int, changes: Any) -> str | None:
    """Store the players' values for some cells (a list of ``{cell, value}``); return ``corners_first``'s advice.

    Raises:
        StateError: not a list of cell edits, or a cell or value the game has no such thing as.
        NotFoundError: no such game or player.
    """
    game = store.game(game_id)
    if not isinstance(changes, list) or not changes:
        raise StateError("cells: expected a list of {cell, value}")
    cleaned = []
    for index, change in enumerate(changes):
        if not isinstance(change, dict):
            raise StateError(f"cells[{index}]: expected an object with cell and value")
        cleaned.append(normalize_cell(game["game"], change.get("cell"), change.get("value")))
    player = store.player(game_id, player_id)
    label = (
        f"set a cell of {player['name']}'s board to {cleaned[0][1]}"
        if len(cleaned) == 1
        else f"set {len(cleaned)} cells of {player['name']}'s board"
    )
    store.correct_cells(game_id, player_id, cleaned, label=label)
    return corners_first(store, game_id, player_id)


def corners_first(store: Store, game_id: int, player_id: int) -> str | None:
    """What to do before correcting more cells when the board's corrections say its grid lies a cell off, else None.

    Crops cut from a misplaced grid show other cells than the ones they are corrected as (adapting
    leaves such a photo out, ``tablescan.adapt.misplaced_photos``): the corners come first, then the cells.
    """
    player = store.player(game_id, player_id)
    if player["photo"] is None:
        return None
    rows = [row for row in store.examples(player_id=player_id) if row["photo_id"] == player["photo"].id]
    misplaced, _ = misplaced_photos(rows)
    if not misplaced:
        return None
    return (
        "the corrections match the readings one cell over: the grid lies off the board; drag its four corners onto "
        "the board's own corners first (the photo is read again, your corrections kept), then correct what is still wrong"
    )


def check_image(data: bytes, label: str) -> tuple[str, str, tuple[int, int]]:
    """Return an uploaded photo's file suffix, media type and size as shown (EXIF orientation applied).

    The whole image is decoded (a JPEG at 1/8 scale), so a truncated or damaged file is refused here.

    Raises:
        UploadError: not a readable JPEG, PNG or WebP image.
    """
    try:
        with Image.open(io.BytesIO(data)) as probe:
            probe.verify()
        with Image.open(io.BytesIO(data)) as image:
            kind = image.format
            width, height = image.size
            # the size as shown, EXIF orientation applied (as the scanner loads it)
            turned = image.getexif().get(EXIF_ORIENTATION) in TURNED
            size = (height, width) if turned else (width, height)
            if kind == "JPEG":
                image.draft("RGB", (max(1, width // 8), max(1, height // 8)))  # decodes every block, at an eighth of the cost
            image.load()
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, Image.DecompressionBombError):
        raise UploadError(f"{label}: not a readable image (damaged, cut short or not a photo); upload a JPEG, PNG or WebP photo") from None
    if kind not in IMAGE_FORMATS:
        raise UploadError(f"{label}: {kind} images are not accepted; upload a JPEG, PNG or WebP photo")
    suffix, media_type = IMAGE_FORMATS[kind]
    return suffix, media_type, size


def upload_photo(store: Store, game_id: int, player_id: int, data: bytes, original: str | None, profile: str | None) -> str | None:
    """Check an uploaded photo, read it when the game has a scanner, and keep it as the player's board photo.

    A photo the scanner cannot read never replaces one it could: the earlier photo and its readings
    stay, so readings always belong to the photo they were read from. Returns a notice for the screen.

    Raises:
        UploadError: not an accepted image.
        PhotoRefusedError: the scanner cannot read it and the player's current photo was read.
        NotFoundError: no such game or player.
    """
    game = store.game(game_id)
    player = store.player(game_id, player_id)
    label = original or "photo"
    suffix, media_type, size = check_image(data, label)
    if game["game"] not in scanning.scanner_games():
        _keep_photo(store, game_id, player_id, data, suffix, media_type, size, original)
        return unscanned_notice(store, game_id, "photo stored") + ", so enter the board by hand"
    with tempfile.TemporaryDirectory(prefix="tablescan-upload-") as folder:
        path = Path(folder) / f"upload{suffix}"
        path.write_bytes(data)
        outcome = _read(path, game["game"], player, None, label, profile)
    if isinstance(outcome, str):
        if _was_read(player):
            raise PhotoRefusedError(f"{outcome}; this photo was not used, the earlier photo and its readings are kept")
        _keep_photo(store, game_id, player_id, data, suffix, media_type, size, original)
        return outcome
    _keep_photo(store, game_id, player_id, data, suffix, media_type, size, original)
    _store_outcome(store, game_id, player_id, player, outcome, reread=False)
    return None


def _keep_photo(
    store: Store, game_id: int, player_id: int, data: bytes, suffix: str, media_type: str, size: tuple[int, int], original: str | None
) -> PhotoRecord:
    record = store.add_photo(hashlib.sha256(data).hexdigest(), suffix, data, media_type, size, original)
    store.attach_photo(game_id, player_id, record.id)
    return record


def _was_read(player: dict) -> bool:
    """Whether the player's current photo gave readings (cells outlined on it)."""
    return player["photo"] is not None and any(r["polygon"] for r in player["readings"])


def scannable(store: Store, game_id: int) -> bool:
    """Whether this installation can read the game's boards from photos.

    Raises:
        NotFoundError: no such game.
    """
    return store.game(game_id)["game"] in scanning.scanner_games()


def unscanned_notice(store: Store, game_id: int, what: str) -> str:
    """Return the notice for a game without a photo scanner (``what``: what was kept)."""
    return f"{what}; {GAMES[store.game(game_id)['game']].title} has no photo scanner yet"


def _read(path: Path, game: str, player: dict, corners: list | None, name: str | None, profile: str | None) -> ScanOutcome | str:
    """Scan a photo file; return its outcome, or the notice that says (in the screen's words) why it could not be read."""
    try:
        return scanning.scan_photo(path, game, corners=corners, player_name=player["name"], name=name, profile=profile)
    except TableError as error:
        return scanning.in_screen_words(error)
    except Exception:  # a scanner bug must not cost the table its game: say so in plain words, log the details
        log.exception("scanning %s for player %s failed", name, player["id"])
        return f"{name or 'photo'}: the scanner failed on this photo (details are in the server log); enter the board by hand"


def rescan(store: Store, game_id: int, player_id: int, corners: list | None, profile: str | None) -> str | None:
    """Scan the player's photo, storing readings; return a notice instead of failing on a bad photo.

    ``corners`` (TL, TR, BR, BL in photo pixels) skip the board search; ``profile`` names a calibration.

    Raises:
        StateError: the player has no photo.
        NotFoundError: no such game or player.
    """
    game = store.game(game_id)
    player = store.player(game_id, player_id)
    if player["photo"] is None:
        raise StateError("photo: this player has no photo yet; upload one first")
    # the "Adapt to my set" button may switch ``profile`` to the adapted profile
    outcome = _read(store.photo_path(player["photo"]), game["game"], player, corners, player["photo"].original_name, profile)
    if isinstance(outcome, str):
        if corners is not None:
            store.set_corners(game_id, player_id, corners)
        return outcome
    _store_outcome(store, game_id, player_id, player, outcome, reread=corners is not None)
    return None


def _store_outcome(store: Store, game_id: int, player_id: int, player: dict, outcome: ScanOutcome, reread: bool) -> None:
    # a re-read of the same photo (new corners) keeps the players' corrections; a new photo starts afresh
    store.store_scan(
        game_id,
        player_id,
        outcome.corners,
        outcome.model,
        outcome.readings,
        keep_corrected=reread,
        examples=outcome.examples,  # each cell's crop, a labelled example for `tablescan adapt`
        review=outcome.review,
        fields=_scanned_fields(player["fields"], outcome.fields, reread=reread),
    )


def _scanned_fields(current: dict, scanned: dict, reread: bool) -> dict:
    """What a scan sets of a player's fields: all it read on a fresh read; on a re-read with dragged
    corners only those still unset, so a pattern the players chose since stays theirs."""
    if not reread:
        return dict(scanned)
    return {key: value for key, value in scanned.items() if not current.get(key)}


def check_corners(corners: Any) -> list[list[float]] | None:
    """Return four ``[x, y]`` corners as floats (None stays None).

    >>> check_corners([[0, 0], [9, 0], [9, 9], [0, 9]])[2]
    [9.0, 9.0]

    Raises:
        StateError: not four points of two numbers.
    """
    if corners is None:
        return None
    if (
        not isinstance(corners, list)
        or len(corners) != 4
        or any(not isinstance(p, list) or len(p) != 2 or not all(isinstance(v, (int, float)) for v in p) for p in corners)
    ):
        raise StateError("corners: expected 4 [x, y] points, clockwise from top-left")
    return [[float(x), float(y)] for x, y in corners]


def record_round(store: Store, game_id: int) -> None:
    """Record the current scoring of a game scored in rounds and move on to the next round.

    Raises:
        StateError: the game is not scored in rounds, or its board does not score.
        NotFoundError: no such game.
    """
    game = store.game(game_id)
    entry = GAMES[game["game"]]
    if not entry.form.several_scorings:
        raise StateError(f"game {game_id}: only {_round_games()} has several scorings")
    view = game_view(store, game_id)
    if view["report"] is None:
        raise StateError(f"round {game['settings'].get('scoring_round', 1)}: cannot be recorded: {view['error']}")
    if view["incomplete"]:  # a recorded round is carried forward: it must not hold a guess
        raise StateError(f"round {game['settings'].get('scoring_round', 1)}: cannot be recorded yet: {'; '.join(view['incomplete'])}")
    round_number = game["settings"].get("scoring_round", 1)
    totals = {p["id"]: (p["report"] or {}).get("total", 0) for p in view["players"]}
    settings = dict(game["settings"])
    if round_number < entry.form.last_round:
        settings["scoring_round"] = round_number + 1
        carry = totals
    else:
        carry = {}
    store.record_round(game_id, round_number, view["report"], carry, settings, label=f"record scoring {round_number}")


def _round_games() -> str:
    return " and ".join(entry.title for entry in GAMES.values() if entry.form.several_scorings)


# -- game-night management -----------------------------------------------------------------------

UNDO_DELETE_MINUTES = 30  # how long the games list offers to bring a deleted game back (it stays in the file)


def delete_game(store: Store, game_id: int) -> None:
    """Delete a game from the list; ``restore_game`` brings it back (nothing is removed from the file).

    Raises:
        NotFoundError: no such game, or already deleted.
    """
    store.delete_game(game_id)


def restore_game(store: Store, game_id: int) -> None:
    """Bring a deleted game back.

    Raises:
        NotFoundError: no such game.
    """
    store.restore_game(game_id)


def add_player(store: Store, game_id: int, name: Any) -> int:
    """Add a player after the others, with a blank board and nothing set; return their id.

    Raises:
        StateError: a bad or taken name, or one player too many.
        NotFoundError: no such game.
    """
    game = store.game(game_id)
    form = GAMES[game["game"]].form
    players = store.players(game_id)
    name = check_name(name, "name")
    if name in {p["name"] for p in players}:
        raise StateError(f"name: another player is already called {name!r}")
    if len(players) >= MAX_PLAYERS:
        raise StateError(f"players: a game has at most {MAX_PLAYERS} players")
    form.check_player_count(len(players) + 1)
    settings = form.settings_for_count(game["settings"], len(players) + 1)
    return store.add_player(game_id, name, form.default_fields(len(players)), form.blank_cells(), settings, label=f"add {name}")


def remove_player(store: Store, game_id: int, player_id: int) -> None:
    """Remove a player from the game; their board, photo and corrections are kept, and undo brings them back.

    Raises:
        StateError: the game would have too few players.
        NotFoundError: no such game or player.
    """
    game = store.game(game_id)
    form = GAMES[game["game"]].form
    player = store.player(game_id, player_id)
    count = len(store.players(game_id)) - 1
    if count < 1:
        raise StateError(f"players: {player['name']} is the only player; delete the game instead")
    form.check_player_count(count)
    store.remove_player(game_id, player_id, form.settings_for_count(game["settings"], count), label=f"remove {player['name']}")


def restore_player(store: Store, game_id: int, player_id: int) -> None:
    """Bring a removed player back, board, photo and corrections as they were.

    Raises:
        StateError: another player took their name since, or the game is full.
        NotFoundError: no such game, or no such removed player.
    """
    game = store.game(game_id)
    form = GAMES[game["game"]].form
    players = store.players(game_id)
    removed = next((p for p in store.removed_players(game_id) if p["id"] == player_id), None)
    if removed is None:
        raise NotFoundError(f"game {game_id}: has no removed player {player_id}")
    if removed["name"] in {p["name"] for p in players}:
        raise StateError(f"name: another player is called {removed['name']!r} now; rename them first")
    if len(players) >= MAX_PLAYERS:
        raise StateError(f"players: a game has at most {MAX_PLAYERS} players")
    form.check_player_count(len(players) + 1)
    settings = form.settings_for_count(game["settings"], len(players) + 1)
    store.restore_player(game_id, player_id, settings, label=f"bring {removed['name']} back")


def undo(store: Store, game_id: int) -> str:
    """Take back the game's last change (any phone's); return the notice saying what was undone.

    Raises:
        NotFoundError: no such game.
    """
    label = store.undo(game_id)
    return "nothing to undo" if label is None else f"undone: {label}"


def redo(store: Store, game_id: int) -> str:
    """Make the change undone last again; return the notice saying what was redone.

    Raises:
        NotFoundError: no such game.
    """
    label = store.redo(game_id)
    return "nothing to redo" if label is None else f"redone: {label}"


def games_list(store: Store, now: datetime | None = None) -> dict:
    """Return the games list: each game with how it stands, and the games deleted in the last minutes (undoable)."""
    games = [{**game, "result": game_result(store, game["id"])} for game in store.list_games()]
    since = (now or datetime.now(UTC)) - timedelta(minutes=UNDO_DELETE_MINUTES)
    deleted = [game for game in store.list_games(deleted=True) if datetime.fromisoformat(game["deleted_at"]) >= since]
    return {"games": games, "deleted": deleted, "undo_delete_minutes": UNDO_DELETE_MINUTES}
