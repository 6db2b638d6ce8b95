"""``tablescan calibrate``: print a target, fit a camera, measure colour, list and show profiles."""

from __future__ import annotations

import json
from pathlib import Path

import click

from calibration import (
    CalibrationError,
    Profile,
    Target,
    apply_colour,
    calibrate_camera,
    estimate_colour,
    list_profiles,
    load_profile,
    profile_dir,
    save_profile,
)
from calibration.colour import DEFAULT_LEVEL, preview_image
from calibration.image import load_image, save_image
from calibration.profile import PROFILE_DIR_ENV, check_name, profile_path
from calibration.target import DICTIONARIES, KINDS, save_target
from scoring.errors import Remedy


def calibration_flags(error: BaseException) -> dict[Remedy, str]:
    """How the CLI words calibration's remedies: as the flags and commands that apply them."""
    name = error.profile if isinstance(error, CalibrationError) and error.profile else "NAME"
    return {
        Remedy.USE_CHARUCO: "calibrate with --kind charuco",
        Remedy.SKIP_MISSING: "drop the photo (--skip-missing)",
        Remedy.GIVE_REGION: "give one with --region x,y,w,h",
        Remedy.MAKE_PROFILE: (
            f"create it with `tablescan calibrate camera PHOTOS... --name {name}` or `tablescan calibrate colour PHOTO --name {name}` "
            "(`tablescan calibrate list` shows saved profiles)"
        ),
    }


def _target_options(function):
    options = [
        click.option(
            "--kind",
            type=click.Choice(KINDS),
            default="chessboard",
            show_default=True,
            help="chessboard: whole board in every photo; charuco: partial views allowed.",
        ),
        click.option("--columns", type=int, default=9, show_default=True, help="Inner corners across."),
        click.option("--rows", type=int, default=6, show_default=True, help="Inner corners down."),
        click.option("--square-mm", type=float, default=25.0, show_default=True, help="Side of one square."),
        click.option("--marker-mm", type=float, default=0.0, help="ChArUco marker side [default: 0.7 of the square]."),
        click.option(
            "--dictionary",
            type=click.Choice(DICTIONARIES),
            default="DICT_5X5_100",
            show_default=True,
            help="ChArUco marker dictionary.",
        ),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def _target(kind: str, columns: int, rows: int, square_mm: float, marker_mm: float, dictionary: str) -> Target:
    return Target(columns=columns, rows=rows, square_mm=square_mm, kind=kind, marker_mm=marker_mm, dictionary=dictionary)


def _existing(name: str, directory: Path | None) -> Profile:
    """The saved profile ``name``, or a new empty one when there is none yet."""
    check_name(name)
    if not profile_path(name, directory).exists():
        return Profile(name=name)
    return load_profile(name, directory)


def _parse_region(text: str | None) -> tuple[int, int, int, int] | None:
    if text is None:
        return None
    parts = text.replace(" ", "").split(",")
    try:
        values = tuple(int(part) for part in parts)
    except ValueError:
        values = ()
    if len(values) != 4:
        raise CalibrationError(f"--region: expected x,y,w,h in whole pixels, got '{text}'")
    return values


@click.group()
@click.option(
    "--profile-dir",
    type=click.Path(file_okay=False, path_type=Path),
    envvar=PROFILE_DIR_ENV,
    default=None,
    help=f"Where profiles are kept (default: the user's config dir; env {PROFILE_DIR_ENV}).",
)
@click.pass_context
def calibrate(ctx: click.Context, profile_dir: Path | None) -> None:
    """Make camera and colour profiles that make every later scan more exact."""
    ctx.obj = profile_dir


@calibrate.command()
@click.argument("out", metavar="OUT.png|OUT.pdf", type=click.Path(dir_okay=False, path_type=Path))
@_target_options
@click.option("--dpi", type=int, default=300, show_default=True)
def target(out: Path, dpi: int, **target_options) -> None:
    """Write a printable chessboard or ChArUco target, to scale."""
    spec = _target(**target_options)
    save_target(out, spec, dpi)
    click.echo(f"wrote {out}: {spec.describe()}; print at 100 % and check the 50 mm bar with a ruler")


@calibrate.command()
@click.argument("photos", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--name", required=True, help="Profile name (letters, digits, . _ -).")
@_target_options
@click.option("--skip-missing", is_flag=True, help="Drop photos where the target is not found instead of failing.")
@click.pass_obj
def camera(directory: Path | None, photos: tuple[Path, ...], name: str, skip_missing: bool, **target_options) -> None:
    """Fit the camera's intrinsics and lens distortion from photos of the printed target."""
    profile = _existing(name, directory)
    spec = _target(**target_options)
    views = ((photo.name, load_image(photo)) for photo in photos)  # read one at a time
    fit = calibrate_camera(views, spec, skip_missing=skip_missing)
    profile = Profile(name=name, camera=fit.camera, colour=profile.colour, adaptation=profile.adaptation)
    path = save_profile(profile, directory)
    cam = fit.camera
    worst_name, worst = max(fit.view_rms_px, key=lambda item: item[1])
    click.echo(f"saved profile '{name}' to {path}")
    click.echo(f"  views: {cam.views}" + (f" ({len(fit.skipped)} skipped: {', '.join(fit.skipped)})" if fit.skipped else ""))
    click.echo(f"  reprojection error: {cam.rms_px:.3f} px RMS (worst {worst_name}: {worst:.3f} px)")
    sfx, sfy, scx, scy = fit.std_px
    click.echo(f"  fx {cam.fx:.1f} ± {sfx:.1f}, fy {cam.fy:.1f} ± {sfy:.1f}, cx {cam.cx:.1f} ± {scx:.1f}, cy {cam.cy:.1f} ± {scy:.1f} px")
    k1, k2, p1, p2, _k3 = cam.distortion
    click.echo(f"  distortion: k1 {k1:+.4f}, k2 {k2:+.4f}, p1 {p1:+.5f}, p2 {p2:+.5f}")


@calibrate.command()
@click.argument("photo", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--name", required=True, help="Profile name (letters, digits, . _ -).")
@click.option(
    "--region",
    metavar="X,Y,W,H",
    default=None,
    help="White or light grey reference, in pixels (default: found automatically).",
)
@click.option(
    "--level",
    type=float,
    default=DEFAULT_LEVEL,
    show_default=True,
    help="sRGB value the reference should read (118 for an 18 % grey card).",
)
@click.option("--preview", type=click.Path(dir_okay=False, path_type=Path), default=None, help="Write before/after side by side.")
@click.pass_obj
def colour(directory: Path | None, photo: Path, name: str, region: str | None, level: float, preview: Path | None) -> None:
    """Measure white balance and exposure from a white/grey reference in a photo of the board."""
    profile = _existing(name, directory)
    box = _parse_region(region)
    image = load_image(photo)
    correction = estimate_colour(image, box, level=level, name=photo.name)
    profile = Profile(name=name, camera=profile.camera, colour=correction, adaptation=profile.adaptation)
    path = save_profile(profile, directory)
    click.echo(f"saved profile '{name}' to {path}")
    gains = ", ".join(f"{g:.3f}" for g in correction.gains)
    click.echo(f"  gains R,G,B: {gains} (exposure {correction.exposure_ev:+.2f} EV), from {correction.reference}")
    if preview is not None:
        save_image(preview, preview_image(image, apply_colour(image, correction), box))
        click.echo(f"  before/after: {preview}")


@calibrate.command("list")
@click.pass_obj
def list_command(directory: Path | None) -> None:
    """List the saved profiles."""
    folder = directory or profile_dir()
    names = list_profiles(folder)
    if not names:
        click.echo(f"no profiles in {folder}; make one with `tablescan calibrate camera` or `tablescan calibrate colour`")
        return
    for name in names:
        try:
            profile = load_profile(name, folder)
            parts = [part for part, present in (("camera", profile.camera), ("colour", profile.colour)) if present is not None]
            click.echo(f"{name}\t{' + '.join(parts) or 'empty'}")
        except CalibrationError as error:
            click.echo(f"{name}\tcorrupt: {error}")


@calibrate.command()
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print the profile's JSON.")
@click.pass_obj
def show(directory: Path | None, name: str, as_json: bool) -> None:
    """Show a saved profile (by name, or a .json path)."""
    profile = load_profile(name, directory)
    click.echo(json.dumps(profile.to_json(), indent=2) if as_json else profile.describe())
