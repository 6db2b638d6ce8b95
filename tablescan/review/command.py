"""The ``tablescan review`` command: serve the review screen and print its address."""

from __future__ import annotations

import errno
import secrets
import socket
from pathlib import Path

import click
import uvicorn

from calibration import load_profile
from calibration.profile import profile_path
from scoring.errors import StateError
from tablescan.review.app import create_app
from tablescan.review.db import default_db_path

__all__ = ["default_db_path", "default_profile", "review", "review_address"]


def default_profile() -> str | None:
    """Return 'default' when that calibration profile exists (tablescan adapt writes it), else None."""
    try:
        return "default" if profile_path("default").exists() else None
    except OSError:  # an unreadable profile folder: scan without calibration
        return None


def _lan_address() -> str:
    """Return this machine's address on the local network (best guess, no traffic sent)."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("10.255.255.255", 1))
        return probe.getsockname()[0]
    except OSError:
        return socket.gethostname()
    finally:
        probe.close()


def review_address(host: str, port: int, token: str | None) -> str:
    """Return the address to open (with ``?token=`` in LAN mode).

    >>> review_address("127.0.0.1", 8000, None)
    'http://127.0.0.1:8000/'
    """
    shown = _lan_address() if host in ("0.0.0.0", "::", "") else host
    if ":" in shown:
        shown = f"[{shown}]"
    return f"http://{shown}:{port}/" + (f"?token={token}" if token else "")


def check_port_free(host: str, port: int) -> None:
    """Refuse a port another program already listens on (probed the way uvicorn binds it).

    Raises:
        StateError: the address is in use or cannot be bound on this machine.
    """
    if port == 0:
        return
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                raise StateError(
                    f"--port {port}: {host}:{port} is already in use (another tablescan review?); choose a free one, e.g. --port {port + 1}"
                ) from None
            raise StateError(
                f"--host {host} --port {port}: cannot listen there ({error.strerror or error}); check --host and --port"
            ) from None


def check_db_folder(path: Path) -> None:
    """Refuse a ``--db`` file in a folder that does not exist (rather than creating folders silently).

    Raises:
        StateError: the folder is missing or is not a folder.
    """
    if not path.parent.is_dir():
        raise StateError(f"--db {path}: no folder {path.parent}; create it first or choose another --db")


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="0.0.0.0 lets phones on the network join (token required).")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535))
@click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="SQLite file (default: review.sqlite3 in the user data directory).",
)
@click.option(
    "--profile", default=None, help="Calibration profile for photo scans (default: 'default' when it exists, e.g. after tablescan adapt)."
)
def review(host: str, port: int, db_path: Path | None, profile: str | None) -> None:
    """Serve the review screen: create games, correct readings, see the live score."""
    token = None if host in ("127.0.0.1", "localhost", "::1") else secrets.token_urlsafe(24)
    if db_path is not None:
        check_db_folder(db_path)
    check_port_free(host, port)
    path = db_path or default_db_path()
    profile = profile or default_profile()
    if profile:
        load_profile(profile)  # a missing or corrupt profile: one line now rather than at the first scan
    app = create_app(path, token=token, profile=profile, join_url=review_address(host, port, token) if token else None)
    click.echo(f"tablescan review: database {path}" + (f", calibration profile '{profile}'" if profile else ""))
    click.echo(f"tablescan review: open {review_address(host, port, token)}")
    if token:
        click.echo("tablescan review: anyone with this address (token included) can edit the games")
    uvicorn.run(app, host=host, port=port, log_level="warning")
