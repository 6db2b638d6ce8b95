"""``tablescan scan``: photos -> board state (FORMATS.md, with its ``scan`` block), overlay and score."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import click

from calibration import load_profile
from scanner import Scanner, merge_documents
from scanner.geometry import parse_corners
from scanner.overlay import draw_overlay, save_overlay
from scoring.errors import StateError
from tablescan.documents import read_document, score_document
from tablescan.games import readers, scannable_games


def _split(text: str | None) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()] if text else []


def apply_settings(
    document: dict, *, game_file: dict | None, objectives: list[str], private: list[str], favor: list[str], scoring_round: int | None
) -> dict:
    """Return a copy of a scanned document with the game's settings filled in.

    Settings come from a game file (players matched by name, else by position; scanned board keys win)
    and then from the command-line options, which win over the file.

    Raises:
        StateError: an option has the wrong number of values or a bad number.
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
            value = values[0] if len(values) == 1 else values[index]
            if key == "favor_tokens":
                try:
                    value = int(value)
                except ValueError:
                    raise StateError(f"{option}: expected whole numbers, got {value!r}") from None
            player[key] = value
    return doc


@click.command()
@click.argument("photos", nargs=-1, required=True, metavar="PHOTO...")
@click.option("--game", "game", type=click.Choice(scannable_games()), required=True, help="Which game the photos show.")
@click.option("--json", "json_out", type=click.Path(dir_okay=False, writable=True), help="Write the board-state document here.")
@click.option(
    "--overlay",
    "overlay_out",
    type=click.Path(dir_okay=False, writable=True),
    help="Draw the found grid and readings (PNG); with several photos, one file each (OUT-<photo>.png).",
)
@click.option("--corners", help="The board's four corners in photo pixels, x,y,x,y,x,y,x,y (skips the search; one photo).")
@click.option("--players", help="Player names, comma-separated, one per photo (default: the photo's file name).")
@click.option("--score", "do_score", is_flag=True, help="Score the scanned game straight away.")
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True, help="Score output format (with --score)."
)
@click.option(
    "--game-file",
    type=click.Path(dir_okay=False),
    help="A game file with the settings (objectives, private objectives, favor tokens, round, money ...).",
)
@click.option("--objectives", help="Sagrada: the public objective ids, comma-separated.")
@click.option("--private", help="Sagrada: private objective colour(s), one per photo or one for all.")
@click.option("--favor", help="Sagrada: unused favor tokens, one per photo or one for all.")
@click.option("--round", "scoring_round", type=click.IntRange(1, 3), help="Alhambra: the scoring round (default 3).")
@click.option("--profile", help="A calibration profile name or path, applied before reading.")
def scan(
    photos, game, json_out, overlay_out, corners, players, do_score, fmt, game_file, objectives, private, favor, scoring_round, profile
) -> None:
    """Scan one photo per player, print the board state (or, with --score, the score)."""

    names = _split(players)
    if names and len(names) != len(photos):
        raise click.BadParameter(f"expected {len(photos)} names (one per photo), got {len(names)}", param_hint="--players")
    if corners and len(photos) != 1:
        raise click.BadParameter("give --corners with exactly one photo", param_hint="--corners")
    try:
        corner_points = parse_corners(corners) if corners else None
    except ValueError as error:
        raise click.BadParameter(str(error).removeprefix("corners: "), param_hint="--corners") from None
    settings = read_document(game_file) if game_file else None

    loaded_profile = None
    if profile:
        loaded_profile = load_profile(profile)
    scanner = Scanner(profile=loaded_profile, readers=readers())

    results = []
    with click.progressbar(photos, label="Scanning", file=sys.stderr, hidden=len(photos) < 2) as bar:
        for index, photo in enumerate(bar):
            results.append(scanner.scan(photo, game, corners=corner_points, player_name=names[index] if names else None))

    document = merge_documents([result.to_json() for result in results])
    document = apply_settings(
        document,
        game_file=settings,
        objectives=_split(objectives),
        private=_split(private),
        favor=_split(favor),
        scoring_round=scoring_round,
    )

    if overlay_out:
        for result in results:
            target = Path(overlay_out)
            if len(results) > 1:
                target = target.with_name(f"{target.stem}-{Path(result.photo.name).stem}{target.suffix or '.png'}")
            overridden = {(o.cell[0], o.cell[1]) for o in result.overrides}
            image = draw_overlay(result.photo.image_rgb, result.image_corners, result.cells, overridden)
            save_overlay(str(target), image)
    text = json.dumps(document, indent=2, ensure_ascii=False)
    if json_out:
        Path(json_out).write_text(text + "\n", encoding="utf-8")
    for result in results:
        for override in result.overrides:
            click.echo(
                f"{result.photo.name}: cell {list(override.cell)} read {override.model_value} "
                f"({override.model_confidence:.0%}) -> {override.chosen_value} by the rules: {override.reason}",
                err=True,
            )
        unsure = [r for r in result.least_certain(3) if r.confidence < 0.9]
        if unsure:
            cells = ", ".join(f"{list(r.cell)} {r.value} ({r.confidence:.0%})" for r in unsure)
            click.echo(f"{result.photo.name}: please check {cells}", err=True)
    if do_score:
        report = score_document(document, "scan")
        click.echo(json.dumps(report.to_json(), indent=2, ensure_ascii=False) if fmt == "json" else report.to_text())
    elif not json_out:
        click.echo(text)
