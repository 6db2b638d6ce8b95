"""Calibration benchmark: camera fit error across distortion levels, colour error across casts,
and (when the scanner and its models exist) cell accuracy on cast and distorted renders with
and without a profile.

    .venv/bin/python tests/benchmarks/bench_calibration.py [--quick]

Prints tables; asserts nothing. Every render is seeded, so the figures repeat.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from calibration import CameraModel, ColourCorrection, Profile, Target
from calibration.camera import calibrate_camera, distort_points, undistort_points
from calibration.colour import apply_colour, estimate_colour
from calibration.synthetic import cast_colour, distort_image, random_poses, render_view, window_board
from scoring.errors import TableError

TARGET = Target()
DISTORTIONS = {  # (k1, k2, p1, p2, k3)
    "none": (0.0, 0.0, 0.0, 0.0, 0.0),
    "mild barrel (phone main)": (-0.05, 0.01, 0.0, 0.0, 0.0),
    "barrel": (-0.15, 0.04, 0.0005, -0.0003, 0.0),
    "strong barrel (wide)": (-0.3, 0.1, 0.001, 0.0005, 0.0),
    "pincushion": (0.1, -0.02, 0.0, 0.0, 0.0),
}
CASTS = {
    "warm tungsten": (1.25, 1.0, 0.7),
    "cool shade": (0.8, 0.95, 1.25),
    "one stop under": (0.5, 0.5, 0.5),
    "green fluorescent": (0.9, 1.2, 0.85),
    "dim and warm": (0.7, 0.55, 0.35),
}


def degrade(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Blur, sensor noise and JPEG, as a phone photo would have."""
    blurred = cv2.GaussianBlur(image, (0, 0), 0.8)
    noisy = np.clip(blurred + rng.normal(0, 3.0, image.shape), 0, 255).astype(np.uint8)
    ok, data = cv2.imencode(".jpg", noisy, [cv2.IMWRITE_JPEG_QUALITY, 85])
    return cv2.imdecode(data, cv2.IMREAD_UNCHANGED)


def map_error_px(truth: CameraModel, fitted: CameraModel, inner: float = 1.0) -> float:
    """Worst bend left after undistorting with the fitted model instead of the true one, in pixels.

    Points on a grid over the central ``inner`` part of the image are undistorted with both
    models; the best homography between the two sets is removed (a plane's rectification absorbs
    it) and the largest remaining distance is returned: what would bend a straight board edge.
    """
    margin_x, margin_y = (1 - inner) / 2 * truth.width_px, (1 - inner) / 2 * truth.height_px
    xs, ys = np.meshgrid(
        np.linspace(margin_x, truth.width_px - 1 - margin_x, 17),
        np.linspace(margin_y, truth.height_px - 1 - margin_y, 13),
    )
    points = np.stack([xs.ravel(), ys.ravel()], axis=1)
    size = (truth.width_px, truth.height_px)
    ideal, fitted_points = undistort_points(points, truth, size), undistort_points(points, fitted, size)
    homography, _ = cv2.findHomography(fitted_points, ideal, 0)
    mapped = cv2.perspectiveTransform(fitted_points.reshape(-1, 1, 2), homography).reshape(-1, 2)
    return float(np.max(np.linalg.norm(mapped - ideal, axis=1)))


def _fit_rows(target: Target, distortion, photos: str, seeds: int, views: int, pose_options: dict) -> np.ndarray:
    rows = []
    for seed in range(seeds):
        truth = CameraModel(640, 480, 560.0 + 10 * seed, 556.0 + 10 * seed, 322.0 + seed, 243.0 - seed, distortion)
        rng = np.random.default_rng(seed)
        images = []
        for index, (rvec, tvec) in enumerate(random_poses(target, truth, views, seed=100 + seed, **pose_options)):
            image = render_view(target, truth, rvec, tvec)
            images.append((f"v{index}", degrade(image, rng) if photos == "phone" else image))
        start = time.perf_counter()
        fit = calibrate_camera(images, target, skip_missing=True).camera
        seconds = time.perf_counter() - start
        rows.append(
            (
                fit.rms_px,
                100 * max(abs(fit.fx / truth.fx - 1), abs(fit.fy / truth.fy - 1)),
                max(abs(fit.cx - truth.cx), abs(fit.cy - truth.cy)),
                abs(fit.distortion[0] - truth.distortion[0]),
                map_error_px(truth, fit),
                map_error_px(truth, fit, inner=0.8),
                seconds,
            )
        )
    return np.array(rows)


def _print_rows(label: str, photos: str, a: np.ndarray) -> None:
    mean, worst = a.mean(axis=0), a.max(axis=0)
    print(
        f"{label:26} {photos:7} {mean[0]:6.3f} ({worst[0]:.3f}) {mean[1]:6.3f} ({worst[1]:.3f}) "
        f"{mean[2]:6.2f} ({worst[2]:.2f}) {mean[3]:7.4f} ({worst[3]:.4f}) {mean[4]:6.3f} ({worst[4]:.3f}) "
        f"{mean[5]:6.3f} ({worst[5]:.3f}) {mean[6]:6.2f}"
    )


HEADER = (
    f"{'distortion':26} {'photos':7} {'rms px':>13} {'fx,fy err %':>13} {'cx,cy err px':>14} {'k1 err':>15} "
    f"{'bend px':>13} {'bend 80% px':>13} {'s/fit':>6}"
)


def bench_camera(seeds: int, views: int) -> None:
    print(
        f"\n== camera: {views} views of a 9 x 6 chessboard spread over the frame, 640x480 px, {seeds} seeds per row "
        "(mean; worst in brackets)"
    )
    print("   bend px: largest non-projective error left after undistorting, whole frame / central 80 %")
    print(HEADER)
    for label, distortion in DISTORTIONS.items():
        for photos in ("clean", "phone"):
            _print_rows(label, photos, _fit_rows(TARGET, distortion, photos, seeds, views, {"fill": 0.45, "spread": 0.3}))
    charuco = Target(kind="charuco")
    print(f"\n== camera: {views} close, partial views of a 9 x 6 ChArUco board (runs off the frame, reaches its corners)")
    print(HEADER)
    for label in ("none", "barrel", "strong barrel (wide)"):
        for photos in ("clean", "phone"):
            options = {"fill": 0.9, "spread": 0.35, "whole": False}
            _print_rows(label, photos, _fit_rows(charuco, DISTORTIONS[label], photos, seeds, views, options))


def _mae(original: np.ndarray, cast: np.ndarray, image: np.ndarray) -> float:
    unclipped = (cast.max(axis=2) < 255) & (cast.min(axis=2) > 0)
    return float(np.abs(image.astype(int) - original.astype(int))[unclipped].mean())


def _jpeg(image: np.ndarray, quality: int = 85) -> np.ndarray:
    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    return cv2.imdecode(data, cv2.IMREAD_UNCHANGED)


def bench_colour() -> None:
    print("\n== colour: window_board render, mean abs error 0-255 against the clean render over unclipped pixels")
    print("   cast in linear light; 'jpeg' compresses the cast photo (q85; floor = error of the clean render's own JPEG);")
    print("   'sRGB cast' multiplies the encoded values instead, a cast the linear model does not match exactly")
    print(f"{'cast':20} {'before':>7} {'region':>7} {'auto':>7} {'jpeg auto':>10} {'jpeg floor':>11} {'sRGB cast before':>17} {'auto':>6}")
    original = window_board(0)
    floor = _mae(original, original, _jpeg(original))
    for label, gains in CASTS.items():
        cast = cast_colour(original, gains)
        region = apply_colour(cast, estimate_colour(cast, (10, 10, 40, 40), level=210))
        auto = apply_colour(cast, estimate_colour(cast, level=210))
        jpeg = _jpeg(cast)
        auto_jpeg = apply_colour(jpeg, estimate_colour(jpeg, level=210))
        gamma_cast = np.clip(np.round(original * np.array(gains) ** (1 / 2.2)), 0, 255).astype(np.uint8)
        gamma_fixed = apply_colour(gamma_cast, estimate_colour(gamma_cast, level=210))
        print(
            f"{label:20} {_mae(original, cast, cast):7.2f} {_mae(original, cast, region):7.2f} {_mae(original, cast, auto):7.2f} "
            f"{_mae(original, cast, auto_jpeg):10.2f} {floor:11.2f} {_mae(original, gamma_cast, gamma_cast):17.2f} "
            f"{_mae(original, gamma_cast, gamma_fixed):6.2f}"
        )


def _cells(document: dict) -> list[str]:
    return " ".join(document["players"][0]["window"]).split()


def bench_models(count: int) -> None:
    print(f"\n== models: Sagrada cell accuracy on {count} renders, warm cast + barrel lens added, with and without a profile")
    try:
        from models.sagrada import render as sagrada_renders
        from scanner import Scanner
        from scanner.photo import Photo

        Scanner().reader("sagrada")
    except (ImportError, AttributeError, TableError, OSError) as error:
        print(f"skipped: the scanner or its Sagrada model is not available ({error.__class__.__name__}: {error})")
        return
    size = (1200, 900)
    lens = CameraModel(size[0], size[1], 1000.0, 1000.0, 604.0, 446.0, (-0.18, 0.05, 0.0, 0.0, 0.0))
    gains = CASTS["warm tungsten"]
    # Camera part: a real fit on chessboard photos taken through the same lens.
    views = [(f"v{i}", render_view(TARGET, lens, r, t)) for i, (r, t) in enumerate(random_poses(TARGET, lens, 10, seed=5))]
    camera = calibrate_camera(views, TARGET).camera
    # Colour part, grey-card workflow: an 18 % card photographed under the same light.
    card = cast_colour(np.full((64, 64, 3), 118, np.uint8), gains)
    card_colour = estimate_colour(card, (0, 0, 64, 64), level=118, name="card")
    plain = Scanner()
    keys = (
        "clean render",
        "cast + lens",
        "cast + lens, camera profile",
        "cast + lens, camera + grey card",
        "cast + lens, camera + auto colour",
    )
    results = {(key, mode): [] for key in keys for mode in ("search", "corners")}
    failures = dict.fromkeys(results, 0)
    first_error: dict = {}
    for seed in range(count):
        sample = sagrada_renders.render(1000 + seed, out_size=size)
        truth = _cells(sample.label)
        corners = np.asarray(sample.label["render"]["corners"], np.float64)
        spoiled = cast_colour(distort_image(sample.image_rgb, lens), gains)
        spoiled_corners = distort_points(corners, lens, size)
        undone_corners = undistort_points(spoiled_corners, camera, size)
        try:  # auto reference on the photo itself, levelled to what the clean render shows there
            clean_ref, spoiled_ref = estimate_colour(sample.image_rgb), estimate_colour(spoiled)
            auto = ColourCorrection(gains=tuple(a / b for a, b in zip(spoiled_ref.gains, clean_ref.gains)), reference="auto")
        except TableError:
            auto = None
        runs = (
            (keys[0], plain, sample.image_rgb, corners),
            (keys[1], plain, spoiled, spoiled_corners),
            (keys[2], Scanner(profile=Profile(name="b", camera=camera)), spoiled, undone_corners),
            (keys[3], Scanner(profile=Profile(name="b", camera=camera, colour=card_colour)), spoiled, undone_corners),
            (keys[4], Scanner(profile=Profile(name="b", camera=camera, colour=auto)), spoiled, undone_corners),
        )
        for key, scanner, image, known in runs:
            for mode in ("search", "corners"):
                try:
                    result = scanner.scan(
                        Photo.from_array(image, f"render{seed}.png"),
                        "sagrada",
                        corners=known if mode == "corners" else None,
                    )
                    read = _cells(result.document)
                    results[key, mode].append(np.mean([a == b for a, b in zip(read, truth)]))
                except TableError as error:
                    failures[key, mode] += 1
                    first_error.setdefault((key, mode), str(error))
                    results[key, mode].append(0.0)
    print("   search: the scanner finds the board; corners: the true corners are given (classification alone)")
    print(f"{'':36} {'search':>8} {'not found':>10} {'corners':>8}")
    for key in keys:
        print(
            f"{key:36} {100 * np.mean(results[key, 'search']):7.2f}% {failures[key, 'search']:10d} "
            f"{100 * np.mean(results[key, 'corners']):7.2f}%"
        )
    for (key, mode), message in first_error.items():
        print(f"   first error, {key} / {mode}: {message}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer seeds and renders")
    args = parser.parse_args()
    bench_camera(seeds=2 if args.quick else 5, views=10)
    bench_colour()
    bench_models(count=4 if args.quick else 20)


if __name__ == "__main__":
    main()
