"""``tablescan synth``: render seeded synthetic photos with exact truth files."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
import cv2

from scoring.errors import StateError
from tablescan.games import GAMES, renderable_games

SYNTH_GAMES = renderable_games()


def render_sample(game: str, seed: int) -> Any:
    """Render one sample of ``game`` with its registered renderer (``models.<game>.render``).

    Raises:
        StateError: the game has no renderer.
    """
    if game not in SYNTH_GAMES:
        raise StateError(f"--game: expected one of {', '.join(SYNTH_GAMES)}; got {game!r}")
    return GAMES[game].render(seed)


def write_sample(sample: Any, out_dir: Path, stem: str, quality: int = 95) -> Path:
    """Write ``<stem>.jpg`` and its truth ``<stem>.json`` into ``out_dir``; returns the photo's path."""
    photo = out_dir / f"{stem}.jpg"
    ok, data = cv2.imencode(".jpg", cv2.cvtColor(sample.image_rgb, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:  # pragma: no cover - cv2 always encodes uint8 RGB
        raise RuntimeError(f"{photo}: JPEG encoding failed")
    photo.write_bytes(data.tobytes())
    (out_dir / f"{stem}.json").write_text(json.dumps(sample.label, indent=1) + "\n", encoding="utf-8")
    return photo


@click.command()
@click.option("--game", required=True, type=click.Choice(SYNTH_GAMES), help="Which game's board to render.")
@click.option("--count", default=10, show_default=True, type=click.IntRange(1, 100_000), help="How many photos.")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path), help="Output folder.")
@click.option("--seed", default=0, show_default=True, type=int, help="First seed; photo i uses seed + i.")
def synth(game: str, count: int, out_dir: Path, seed: int) -> None:
    """Render COUNT synthetic table photos of GAME with truth JSON sidecars (same stem)."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise StateError(f"--out {out_dir}: cannot create the folder ({error.strerror or error})") from None
    with click.progressbar(range(seed, seed + count), label=f"rendering {game}", file=sys.stderr) as seeds:
        for index in seeds:
            write_sample(render_sample(game, index), out_dir, f"{game}_{index:06d}")
    click.echo(f"wrote {count} photos with truth files to {out_dir}")
