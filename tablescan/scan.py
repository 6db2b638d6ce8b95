"""``tablescan scan``: photos -> board state (FORMATS.md, with its ``scan`` block), overlay and score."""

from __future__ import annotations

import copy
import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import click
import numpy as np

from calibration import load_profile
from scanner import Photo, Scanner, load_photo, merge_documents
from scanner.geometry import parse_corners
from scanner.overlay import draw_overlay, save_overlay
from scanner.photo import MAX_FILE_BYTES
from scanner.pipeline import WORKING_LONG_SIDE_PX
from scoring.errors import StateError
from tablescan.documents import FORMATS_DOC, read_document, read_limited, score_document, source_label
from tablescan.games import GAMES, GameEntry, readers, scannable_games

OVERLAY_SUFFIXES = (".png", ".jpg", ".jpeg")
MIN_CORNER_SIDE_PX = 16


def _split(text: str | None) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()] if text else []


def apply_settings(
    document: dict, *, game_file: dict | None, objectives: list[Any], private: list[Any], favor: list[Any], scoring_round: int | None
) -> dict:
    """Return a copy of a scanned document with the game's settings filled in.

    Settings come from a game file (players matched by name, else by position; scanned board keys win)
    and then from the command-line options (values as the document stores them), which win over the file.

    Raises:
        StateError: a game file of another game, or an option with the wrong number of values.
    """
    doc = copy.deepcopy(document)
    players = doc["players"]
    if game_file is not None:
        if game_file.get("game") not in (None, doc["game"]):
            raise StateError(f"--game-file: game is {game_file.get('game')!r}, the photos are {doc['game']!r}")
        board_keys = {"window", "pattern", "palace", "cards", "scan"}
        for key, value in game_file.items():
            if key != "players":
                doc[key] = copy.deepcopy(value)
        file_players = game_file.get("players") or []
        by_name = {p.get("name"): p for p in file_players if isinstance(p, dict)}
        for index, player in enumerate(players):
            source = by_name.get(player["name"])
            if source is None and index < len(file_players) and isinstance(file_players[index], dict):
                source = file_players[index]
            for key, value in (source or {}).items():
                if key not in board_keys and key != "name":
                    player[key] = copy.deepcopy(value)
    if objectives:
        doc["public_objectives"] = objectives
    if scoring_round is not None:
        doc["scoring_round"] = scoring_round
    for option, values, key in (("--private", private, "private_objective"), ("--favor", favor, "favor_tokens")):
        if not values:
            continue
        if len(values) not in (1, len(players)):
            raise StateError(f"{option}: expected 1 or {len(players)} comma-separated values (one per photo), got {len(values)}")
        for index, player in enumerate(players):
            player[key] = values[0] if len(values) == 1 else values[index]
    return doc


def flag_values(entry: GameEntry, given: dict[str, list[str]]) -> dict[str, list[Any]]:
    """Return each given settings flag's values as the game's document stores them.

    Raises:
        StateError: a flag the game does not take, or a value it has no such thing as (naming the flag).
    """
    values: dict[str, list[Any]] = {}
    for flag, texts in given.items():
        if not texts:
            values[flag] = []
            continue
        if flag not in entry.form.scan_flags:
            takes = ", ".join(entry.form.scan_flags) or "no settings flags"
            raise StateError(f"{flag}: {entry.title} has no such setting ({entry.title} scans take {takes}); leave it out")
        try:
            values[flag] = [entry.form.flag_value(flag, text) for text in texts]
        except StateError as error:
            raise StateError(f"{flag}: {error}") from None
    return values


def check_output_path(option: str, target: str, suffixes: tuple[str, ...] = ()) -> None:
    """Refuse an output path that cannot be written, before any scanning.

    Raises:
        StateError: the folder is missing or read-only, the path is a folder, or the extension is not one of ``suffixes``.
    """
    path = Path(target)
    if suffixes and path.suffix.lower() not in suffixes:
        raise StateError(f"{option} {target}: expected a file name ending in {' or '.join(suffixes)}")
    folder = path.parent
    if path.is_dir():
        raise StateError(f"{option} {target}: is a folder; give a file name")
    if not folder.is_dir():
        raise StateError(f"{option} {target}: no folder {folder}; create it first or write elsewhere")
    if not os.access(folder, os.W_OK):
        raise StateError(f"{option} {target}: folder {folder} is not writable; write elsewhere")


def read_game_file(source: str) -> dict:
    """Read a ``--game-file``: a JSON object whose ``players``, when given, is a list of objects.

    Raises:
        StateError: unreadable, over a limit, or not shaped like a game file.
    """
    doc = read_document(source)
    label = f"--game-file {source_label(source)}"
    if not isinstance(doc, dict):
        raise StateError(f"{label}: expected a JSON object (a game file, FORMATS.md), got a {_json_kind(doc)}")
    players = doc.get("players")
    if players is not None and (not isinstance(players, list) or not all(isinstance(p, dict) for p in players)):
        got = "a list holding other things" if isinstance(players, list) else f"a {_json_kind(players)}"
        raise StateError(f"{label}: players: expected a list of player objects, got {got}")
    return doc


def _json_kind(value: Any) -> str:
    kinds = {dict: "JSON object", list: "JSON list", str: "string", bool: "true/false", int: "number", float: "number"}
    return kinds.get(type(value), "null")


def parse_corner_flag(text: str) -> np.ndarray:
    """Parse ``--corners`` into ordered (4, 2) points, refusing NaN, infinities and degenerate shapes.

    Raises:
        StateError: not eight finite numbers, or points too close together / in a line to frame a board.
    """
    with np.errstate(all="ignore"):
        try:
            points = parse_corners(text)
        except ValueError as error:
            raise StateError(f"--corners: {str(error).removeprefix('corners: ')}") from None
        if not np.isfinite(points).all():
            raise StateError(f"--corners: expected 8 finite numbers x,y,x,y,x,y,x,y in photo pixels, got {text!r}")
        sides = np.linalg.norm(points - np.roll(points, 1, axis=0), axis=1)
        x, y = points[:, 0].astype(np.float64), points[:, 1].astype(np.float64)
        area = 0.5 * abs(float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))))
    if float(sides.min()) < MIN_CORNER_SIDE_PX or area < MIN_CORNER_SIDE_PX * float(sides.max()):
        raise StateError(
            f"--corners: the four points do not frame a board (a side under {MIN_CORNER_SIDE_PX} px, or the points in a line); "
            "give the board's four corners TL,TR,BR,BL"
        )
    return points


def check_corners_on_photo(points: np.ndarray, photo: Photo) -> None:
    """Refuse corners that fall outside the photo.

    Raises:
        StateError: a corner outside the photo's full-size pixel range.
    """
    width, height = photo.full_size
    outside = [f"{x:g},{y:g}" for x, y in points.tolist() if not (0 <= x <= width and 0 <= y <= height)]
    if outside:
        raise StateError(
            f"--corners: {' '.join(outside)} outside the {width}x{height} px photo {photo.name}; give corners inside the photo"
        )


def _settings_help() -> str:
    """The scan help's closing lines: each scannable game's settings flags and the names they accept (from the forms)."""
    paragraphs = [f"The formats and exit codes: {FORMATS_DOC}."]
    for game in scannable_games():
        entry = GAMES[game]
        lines = [f"{entry.title} (--game {game}) takes {', '.join(entry.form.scan_flags) or 'no settings flags'}."]
        for key, names in entry.form.options().items():
            shown = ", ".join(name["name"] if isinstance(name, dict) else str(name) for name in names)
            lines.extend(textwrap.wrap(f"{key.replace('_', ' ')}: {shown}.", width=76, break_on_hyphens=False, subsequent_indent="  "))
        paragraphs.append("\b\n" + "\n".join(lines))  # \b: click keeps these lines as they are
    return "\n\n".join(paragraphs)


class ScannedGame(click.Choice):
    """``--game``: a game read from photos; a game the project only scores is named as such, with what to do instead."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        entry = GAMES.get(str(value).strip().lower())
        if entry is not None and not entry.scannable:
            self.fail(
                f"{entry.title} is not read from photos yet: write its game file (FORMATS.md) and run `tablescan score GAME.json`",
                param,
                ctx,
            )
        return super().convert(value, param, ctx)


@click.command(epilog=_settings_help())
@click.argument("photos", nargs=-1, required=True, metavar="PHOTO...")
@click.option("--game", "game", type=ScannedGame(scannable_games()), required=True, help="Which game the photos show.")
@click.option("--json", "json_out", metavar="FILE", help="Write the board-state document here (- for standard output).")
@click.option(
    "--overlay",
    "overlay_out",
    metavar="FILE",
    help="Draw the found grid and readings (.png or .jpg); with several photos, one file each (OUT-<photo>.png).",
)
@click.option("--corners", help="The board's four corners in photo pixels, x,y,x,y,x,y,x,y (skips the search; one photo).")
@click.option("--players", help="Player names, comma-separated, one per photo (default: the photo's file name).")
@click.option("--score", "do_score", is_flag=True, help="Score the scanned game straight away.")
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True, help="Score output format (with --score)."
)
@click.option(
    "--game-file",
    metavar="GAME.json",
    help="A game file with the settings (objectives, private objectives, favor tokens, round, money ...).",
)
@click.option("--objectives", help="Sagrada: the public objective ids, comma-separated (written into the document; scored with --score).")
@click.option("--private", help="Sagrada: private objective colour(s), name or letter, one per photo or one for all.")
@click.option("--favor", help="Sagrada: unused favor tokens, one per photo or one for all.")
@click.option("--round", "scoring_round", type=click.IntRange(1, 3), help="Alhambra: the scoring round (default 3).")
@click.option("--profile", help="A calibration profile name or path, applied before reading.")
def scan(
    photos, game, json_out, overlay_out, corners, players, do_score, fmt, game_file, objectives, private, favor, scoring_round, profile
) -> None:
    """Scan one photo per player (- reads one from standard input), print the board state (or, with --score, the score)."""

    names = _split(players)
    if names and len(names) != len(photos):
        raise StateError(f"--players: expected {len(photos)} names (one per photo), got {len(names)}")
    if photos.count("-") > 1:
        raise StateError("PHOTO: standard input (-) can be read once; give the other photos as files")
    if corners and len(photos) != 1:
        raise StateError("--corners: give --corners with exactly one photo")
    corner_points = parse_corner_flag(corners) if corners else None
    entry = GAMES[game]
    given = {"--objectives": _split(objectives), "--private": _split(private), "--favor": _split(favor)}
    given["--round"] = [str(scoring_round)] if scoring_round is not None else []
    values = flag_values(entry, given)
    for flag in ("--private", "--favor"):  # one value for all photos, or one each
        if len(values[flag]) not in (0, 1, len(photos)):
            raise StateError(f"{flag}: expected 1 or {len(photos)} comma-separated values (one per photo), got {len(values[flag])}")
    if json_out == "-" and do_score:
        raise StateError("--json -: with --score the score goes to standard output; give --json a file name")
    if json_out and json_out != "-":
        check_output_path("--json", json_out)
    if overlay_out:
        check_output_path("--overlay", overlay_out, OVERLAY_SUFFIXES)
    settings = read_game_file(game_file) if game_file else None

    loaded_profile = None
    if profile:
        loaded_profile = load_profile(profile)
    scanner = Scanner(profile=loaded_profile, readers=readers())

    files: list[str | bytes] = [read_limited(sys.stdin.buffer, "<stdin>", MAX_FILE_BYTES, "a photo") if p == "-" else p for p in photos]
    sources: list[str | bytes | Photo] = list(files)
    if corner_points is not None:
        photo = load_photo(files[0], name="stdin" if photos[0] == "-" else None, min_long_side_px=WORKING_LONG_SIDE_PX)
        check_corners_on_photo(corner_points, photo)
        sources[0] = photo
    results = []
    quiet = len(photos) < 2 or not sys.stderr.isatty()  # piped: no "Scanning" line before an answer or an error
    with click.progressbar(sources, label="Scanning", file=sys.stderr, hidden=quiet) as bar:
        for index, source in enumerate(bar):
            name = "stdin" if isinstance(source, bytes) else None
            results.append(scanner.scan(source, game, corners=corner_points, player_name=names[index] if names else None, name=name))

    document = merge_documents([result.to_json() for result in results])
    document = apply_settings(
        document,
        game_file=settings,
        objectives=values["--objectives"],
        private=values["--private"],
        favor=values["--favor"],
        scoring_round=scoring_round,
    )

    if overlay_out:
        for result in results:
            target = Path(overlay_out)
            if len(results) > 1:
                target = target.with_name(f"{target.stem}-{Path(result.photo.name).stem}{target.suffix}")
            overridden = {(o.cell[0], o.cell[1]) for o in result.overrides}
            image = draw_overlay(result.photo.image_rgb, result.image_corners, result.cells, overridden)
            try:
                save_overlay(str(target), image)
            except OSError as error:
                raise StateError(f"--overlay {target}: cannot write ({error})") from None
    text = json.dumps(document, indent=2, ensure_ascii=False)
    if json_out and json_out != "-":
        try:
            Path(json_out).write_text(text + "\n", encoding="utf-8")
        except OSError as error:
            raise StateError(f"--json {json_out}: cannot write ({error.strerror or error})") from None
    for result in results:  # the scan's verdict on itself (scan.review), in the players' words
        if result.review is not None and result.review.needed:
            click.echo(f"{result.photo.name}: look before taking the score: {'; '.join(result.review.reasons)}", err=True)
    if do_score:
        report = score_document(document, "scan")
        click.echo(json.dumps(report.to_json(), indent=2, ensure_ascii=False) if fmt == "json" else report.to_text())
    elif not json_out or json_out == "-":
        click.echo(text)
