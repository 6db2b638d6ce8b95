"""Camera calibration: find the target in photos, fit intrinsics and lens distortion, undistort.

The model is OpenCV's pinhole camera with distortion ``(k1, k2, p1, p2, k3)``; ``k3`` is held
at zero because phone lenses rarely need it and a handful of views over-fit it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import cv2
import numpy as np

from calibration.errors import CalibrationError, TargetNotFoundError
from calibration.image import check_image
from calibration.jsonfields import expect_number, expect_numbers
from calibration.target import DICTIONARIES, Target, charuco_board
from scoring.errors import Remedy
from scoring.fields import child, expect_int, expect_object
from scoring.fields import field as json_field

MIN_VIEWS = 5
MIN_CHARUCO_CORNERS = 8
DETECT_LONG_SIDE_PX = 1600
DUPLICATE_FRACTION = 0.01  # views whose corners differ by < 1 % of the image diagonal are one view
MAX_RELATIVE_STD = 0.02  # focal length and principal point must be known to 2 % (one sigma)
MIN_TILT_DEG = 10.0
ASPECT_TOLERANCE = 0.01


def _five(values: tuple[float, ...]) -> tuple[float, float, float, float, float]:
    """The five distortion coefficients of a checked 5-number list."""
    k1, k2, p1, p2, k3 = values
    return (k1, k2, p1, p2, k3)


@dataclass(frozen=True)
class CameraModel:
    """Intrinsics and distortion of one camera at one zoom, for photos ``width_px`` x ``height_px``."""

    width_px: int
    height_px: int
    fx: float
    fy: float
    cx: float
    cy: float
    distortion: tuple[float, float, float, float, float] = (0.0, 0.0, 0.0, 0.0, 0.0)
    rms_px: float = 0.0
    views: int = 0
    target: Target = field(default_factory=Target)

    def __post_init__(self) -> None:
        if self.width_px < 1 or self.height_px < 1:
            raise CalibrationError(f"camera size: expected positive pixels, got {self.width_px}x{self.height_px}")
        if not (self.fx > 0 and self.fy > 0):
            raise CalibrationError(f"camera focal length: expected positive, got fx={self.fx}, fy={self.fy}")
        if len(self.distortion) != 5:
            raise CalibrationError(f"camera distortion: expected 5 coefficients, got {len(self.distortion)}")

    def matrix(self, size: tuple[int, int] | None = None) -> np.ndarray:
        """The 3 x 3 camera matrix, scaled to an image of ``size`` = (width_px, height_px) when given."""
        sx, sy = (1.0, 1.0) if size is None else (size[0] / self.width_px, size[1] / self.height_px)
        return np.array([[self.fx * sx, 0.0, self.cx * sx], [0.0, self.fy * sy, self.cy * sy], [0.0, 0.0, 1.0]])

    def to_json(self) -> dict:
        """The camera as a JSON object (``from_json`` is its inverse)."""
        return {
            "width_px": self.width_px,
            "height_px": self.height_px,
            "fx": self.fx,
            "fy": self.fy,
            "cx": self.cx,
            "cy": self.cy,
            "distortion": list(self.distortion),
            "rms_px": self.rms_px,
            "views": self.views,
            "target": self.target.to_json(),
        }

    @classmethod
    def from_json(cls, doc: Any, path: str = "camera") -> CameraModel:
        """Read a camera written by ``to_json``.

        Raises:
            StateError: a key is missing or has the wrong type, naming its JSON path.
            CalibrationError: the values are impossible.
        """
        obj = expect_object(doc, path)

        def number(key: str, positive: bool = True) -> float:
            return expect_number(json_field(obj, key, path), child(path, key), positive=positive)

        return cls(
            width_px=expect_int(json_field(obj, "width_px", path), child(path, "width_px"), low=1),
            height_px=expect_int(json_field(obj, "height_px", path), child(path, "height_px"), low=1),
            fx=number("fx"),
            fy=number("fy"),
            cx=number("cx", False),
            cy=number("cy", False),
            distortion=_five(expect_numbers(json_field(obj, "distortion", path), child(path, "distortion"), 5)),
            rms_px=expect_number(json_field(obj, "rms_px", path, 0.0), child(path, "rms_px")),
            views=expect_int(json_field(obj, "views", path, 0), child(path, "views"), low=0),
            target=Target.from_json(json_field(obj, "target", path, {}), child(path, "target")),
        )


@dataclass(frozen=True)
class CameraFit:
    """A fitted camera with the evidence behind it: per-view error and one-sigma uncertainties."""

    camera: CameraModel
    view_rms_px: tuple[tuple[str, float], ...]
    std_px: tuple[float, float, float, float]  # fx, fy, cx, cy
    tilt_deg: tuple[float, ...]
    skipped: tuple[str, ...] = ()


@dataclass(frozen=True)
class TargetView:
    """The target's corners found in one photo: pixels and which corners they are."""

    name: str
    image_points: np.ndarray  # (N, 2) float32 pixels
    ids: np.ndarray  # (N,) int indices into ``Target.object_points()``

    def object_points(self, target: Target) -> np.ndarray:
        """The board-plane positions (mm) of the found corners, (N, 3) float32."""
        return target.object_points()[self.ids]


def find_target(image_rgb: np.ndarray, target: Target, name: str = "<image>") -> TargetView:
    """Find the target's inner corners in a photo.

    A chessboard must be wholly in view (all corners, row by row); a ChArUco board may be partly
    in view (at least ``MIN_CHARUCO_CORNERS`` corners, not all on one line). Large photos are
    searched at reduced size and the corners refined at full size.

    Raises:
        TargetNotFoundError: the target is not (or not enough of it is) visible, naming the photo.
    """
    grey = cv2.cvtColor(check_image(image_rgb), cv2.COLOR_RGB2GRAY)
    scale = min(1.0, DETECT_LONG_SIDE_PX / max(grey.shape))
    small = grey if scale == 1.0 else cv2.resize(grey, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    if target.kind == "charuco":
        points, ids = _find_charuco(small, target)
        hint = "show at least a third of the printed board, flat, sharp and well lit"
    else:
        points, ids = _find_chessboard(small, target)
        hint = "show the whole printed target, flat, sharp and well lit"
    if points is None:
        remedy = None
        if target.kind == "chessboard" and _shows_markers(small):
            hint, remedy = f"it shows ArUco markers: for a ChArUco board {Remedy.USE_CHARUCO.words}", Remedy.USE_CHARUCO
        raise TargetNotFoundError(f"{name}: calibration target not found (looked for a {target.describe()}); {hint}", remedy=remedy)
    if scale != 1.0:
        points = (points + 0.5) / scale - 0.5
        window = max(3, int(round(2 / scale)))
        criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 40, 0.01)
        points = cv2.cornerSubPix(grey, points.reshape(-1, 1, 2), (window, window), (-1, -1), criteria).reshape(-1, 2)
    return TargetView(name=name, image_points=points.astype(np.float32), ids=ids)


def _find_chessboard(grey: np.ndarray, target: Target) -> tuple[np.ndarray | None, np.ndarray]:
    # The classic finder is fast and, refined, as exact on clean views; the sector-based one
    # copes better with blur, noise and uneven light, so it is the second try.
    flags = cv2.CALIB_CB_ADAPTIVE_THRESH | cv2.CALIB_CB_NORMALIZE_IMAGE | cv2.CALIB_CB_FAST_CHECK
    found, corners = cv2.findChessboardCorners(grey, target.pattern_size, flags=flags)
    if found:
        criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 40, 0.01)
        spacing = float(np.min(np.linalg.norm(np.diff(corners.reshape(-1, 2), axis=0), axis=1)))
        half = int(np.clip(spacing * 0.4, 2, 5))  # the search window must not reach the next corner
        corners = cv2.cornerSubPix(grey, corners, (half, half), (-1, -1), criteria)
    else:
        found, corners = cv2.findChessboardCornersSB(grey, target.pattern_size, flags=cv2.CALIB_CB_NORMALIZE_IMAGE)
    ids = np.arange(target.columns * target.rows)
    return (corners.reshape(-1, 2).astype(np.float32) if found else None), ids


def _shows_markers(grey: np.ndarray) -> bool:
    """True when the photo holds several ArUco markers of the dictionaries targets are printed with."""
    for dictionary in DICTIONARIES:
        detector = cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, dictionary)))
        _corners, ids, _rejected = detector.detectMarkers(grey)
        if ids is not None and len(ids) >= 4:
            return True
    return False


def _find_charuco(grey: np.ndarray, target: Target) -> tuple[np.ndarray | None, np.ndarray]:
    detector = cv2.aruco.CharucoDetector(charuco_board(target))
    corners, ids, _marker_corners, _marker_ids = detector.detectBoard(grey)
    if corners is None or ids is None or len(ids) < MIN_CHARUCO_CORNERS:
        return None, np.zeros(0, int)
    ids = ids.ravel().astype(int)
    plane = target.object_points()[ids][:, :2]
    spread = np.linalg.svd(plane - plane.mean(axis=0), compute_uv=False)
    if spread[-1] < 0.5 * target.square_mm:  # all on one line: no pose, no use
        return None, np.zeros(0, int)
    return corners.reshape(-1, 2).astype(np.float32), ids


def calibrate_camera(
    views: Iterable[tuple[str, np.ndarray]],
    target: Target | None = None,
    *,
    min_views: int = MIN_VIEWS,
    skip_missing: bool = False,
) -> CameraFit:
    """Fit a camera model from named photos of the target.

    ``views`` may be a generator: each photo is searched and dropped before the next is read,
    so a dozen full-size phone photos never sit in memory together.

    Raises:
        TargetNotFoundError: the target is missing in a photo (unless ``skip_missing``), naming it.
        CalibrationError: photos of different sizes, too few views, views too alike to pin the
            focal length, or a fit whose reprojection error shows a bent target or blurred photos.
    """
    target = target or Target()
    names, found, missing = [], [], []
    first_name, size, marker_hint = "", None, ""
    for name, image in views:
        height, width = check_image(image).shape[:2]
        if size is None:
            first_name, size = name, (width, height)
        elif (width, height) != size:
            raise CalibrationError(
                f"{name}: {width}x{height} px, but {first_name} is {size[0]}x{size[1]} px; "
                "take every calibration photo with the same camera, zoom and orientation"
            )
        try:
            found.append(find_target(image, target, name))
            names.append(name)
        except TargetNotFoundError as error:
            missing.append(name)
            if error.remedy is Remedy.USE_CHARUCO:
                marker_hint = f"they show ArUco markers: for a ChArUco board {Remedy.USE_CHARUCO.words}"
    if size is None:
        raise CalibrationError(f"no calibration photos given; take {min_views} or more (10-15 is better)")
    width, height = size
    if missing and not skip_missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise TargetNotFoundError(
            f"{shown}: calibration target not found (looked for a {target.describe()}); "
            + (marker_hint or f"retake with the whole target in view, or {Remedy.SKIP_MISSING.words}"),
            remedy=Remedy.USE_CHARUCO if marker_hint else Remedy.SKIP_MISSING,
        )
    if len(names) < min_views:
        raise CalibrationError(
            f"too few views: the target was found in {len(names)} photo(s), at least {min_views} are needed "
            "(10-15 is better), each from a different angle"
        )
    duplicates = _near_duplicates(found, target, math.hypot(width, height) * DUPLICATE_FRACTION)
    distinct = len(names) - len(duplicates)
    if distinct < min_views:
        pairs = ", ".join(f"{a} = {b}" for a, b in duplicates[:3])
        raise CalibrationError(
            f"views too similar: only {distinct} distinct views among {len(names)} photos ({pairs}); "
            f"move and tilt the camera between photos, at least {min_views} different views are needed"
        )
    object_points = [view.object_points(target) for view in found]
    image_points = [view.image_points.reshape(-1, 1, 2) for view in found]
    flags = cv2.CALIB_FIX_K3
    # OpenCV's stubs want arrays for the initial camera matrix and distortion; None asks it to start from scratch.
    rms, matrix, distortion, rvecs, _tvecs, std_intrinsics, _std_extrinsics, per_view = cv2.calibrateCameraExtended(  # type: ignore[call-overload]
        object_points, image_points, (width, height), None, None, flags=flags
    )
    fx, fy, cx, cy = (float(matrix[0, 0]), float(matrix[1, 1]), float(matrix[0, 2]), float(matrix[1, 2]))
    std_fx, std_fy, std_cx, std_cy = (float(s) for s in np.asarray(std_intrinsics).ravel()[:4])
    std = (std_fx, std_fy, std_cx, std_cy)
    tilts = tuple(_tilt_deg(rvec) for rvec in rvecs)
    relative = max(std[0] / fx, std[1] / fy, std[2] / width, std[3] / height)
    if not np.all(np.isfinite(std)) or relative > MAX_RELATIVE_STD or max(tilts) < MIN_TILT_DEG:
        raise CalibrationError(
            f"views too similar: the focal length is not pinned down (max tilt {max(tilts):.0f} deg, "
            f"uncertainty {100 * relative:.1f} %); add photos with the target tilted 20-45 deg "
            "in different directions"
        )
    limit = max(1.0, 0.001 * math.hypot(width, height))
    if rms > limit:
        worst = max(zip(per_view.ravel(), names))
        raise CalibrationError(
            f"reprojection error {rms:.2f} px is above {limit:.2f} px (worst {worst[1]}: {worst[0]:.2f} px); "
            "use sharp photos of a flat target, or drop the worst photo"
        )
    k1, k2, p1, p2, k3 = (float(d) for d in np.asarray(distortion).ravel()[:5])
    camera = CameraModel(
        width_px=width,
        height_px=height,
        fx=fx,
        fy=fy,
        cx=cx,
        cy=cy,
        distortion=(k1, k2, p1, p2, k3),
        rms_px=float(rms),
        views=len(names),
        target=target,
    )
    view_rms = tuple((name, float(err)) for name, err in zip(names, np.asarray(per_view).ravel()))
    return CameraFit(camera=camera, view_rms_px=view_rms, std_px=std, tilt_deg=tilts, skipped=tuple(missing))


def undistort_image(image_rgb: np.ndarray, camera: CameraModel) -> np.ndarray:
    """Remove the lens distortion from a photo taken with ``camera``; returns a new array.

    The camera matrix is kept, so the centre of the photo keeps its scale. A photo smaller or
    larger than the calibration photos with the same aspect uses the scaled model; a photo in the
    other orientation (portrait vs landscape) is assumed turned 90 deg clockwise from the sensor.

    Raises:
        CalibrationError: the photo's aspect ratio matches neither orientation of the calibration.
    """
    image = check_image(image_rgb)
    height, width = image.shape[:2]
    turned = _orientation(camera, width, height)
    if turned:
        sensor = np.ascontiguousarray(np.rot90(image, 1))
        out = _undistort_upright(sensor, camera)
        return np.ascontiguousarray(np.rot90(out, -1))
    return _undistort_upright(image, camera)


def undistort_points(points_xy: np.ndarray, camera: CameraModel, size: tuple[int, int]) -> np.ndarray:
    """Map pixel positions in a distorted photo of ``size`` (width_px, height_px) to the undistorted image.

    Raises:
        CalibrationError: ``size`` does not match the calibration's aspect ratio (either orientation).
    """
    return _map_points(points_xy, camera, size, inverse=False)


def distort_points(points_xy: np.ndarray, camera: CameraModel, size: tuple[int, int]) -> np.ndarray:
    """Map pixel positions in an undistorted image back to the photo as taken (inverse of ``undistort_points``).

    Raises:
        CalibrationError: ``size`` does not match the calibration's aspect ratio (either orientation).
    """
    return _map_points(points_xy, camera, size, inverse=True)


def _map_points(points_xy: np.ndarray, camera: CameraModel, size: tuple[int, int], inverse: bool) -> np.ndarray:
    width, height = size
    points = np.asarray(points_xy, np.float64).reshape(-1, 2).copy()
    turned = _orientation(camera, width, height)
    if turned:  # upright (x, y) -> sensor (y, W - 1 - x), the inverse of a 90 deg clockwise turn
        points = np.stack([points[:, 1], width - 1 - points[:, 0]], axis=1)
        width, height = height, width
    matrix = camera.matrix((width, height))
    distortion = np.array(camera.distortion)
    if inverse:
        normal = (points - matrix[:2, 2]) / np.array([matrix[0, 0], matrix[1, 1]])
        rays = np.concatenate([normal, np.ones((len(normal), 1))], axis=1)
        mapped, _ = cv2.projectPoints(rays, np.zeros(3), np.zeros(3), matrix, distortion)
    else:
        criteria = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 40, 1e-9)
        mapped = cv2.undistortPoints(points.reshape(-1, 1, 2), matrix, distortion, R=None, P=matrix, criteria=criteria)
    mapped = mapped.reshape(-1, 2)
    if turned:  # sensor (u, v) -> upright (x, y) = (H_sensor - 1 - v, u)
        mapped = np.stack([height - 1 - mapped[:, 1], mapped[:, 0]], axis=1)
    return mapped.astype(np.float64)


def _orientation(camera: CameraModel, width: int, height: int) -> bool:
    """True when the photo is in the other orientation than the calibration photos."""
    aspect = camera.width_px / camera.height_px
    if abs(width / height - aspect) <= ASPECT_TOLERANCE * aspect:
        return False
    if abs(height / width - aspect) <= ASPECT_TOLERANCE * aspect:
        return True
    raise CalibrationError(
        f"photo is {width}x{height} px but the camera profile was made from {camera.width_px}x{camera.height_px} px "
        "photos (another aspect ratio: cropped, or another camera or mode); calibrate this camera mode"
    )


def _undistort_upright(image: np.ndarray, camera: CameraModel) -> np.ndarray:
    height, width = image.shape[:2]
    map1, map2 = _undistort_maps(camera, width, height)
    return cv2.remap(image, map1, map2, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


@lru_cache(maxsize=4)
def _undistort_maps(camera: CameraModel, width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    matrix = camera.matrix((width, height))
    return cv2.initUndistortRectifyMap(matrix, np.array(camera.distortion), None, matrix, (width, height), cv2.CV_16SC2)


def _near_duplicates(views: list[TargetView], target: Target, tolerance_px: float) -> list[tuple[str, str]]:
    """Pairs (later, earlier) of views whose shared corners nearly coincide.

    A chessboard may be numbered from either end, so both directions are tried.
    """
    count = target.columns * target.rows
    kept: list[TargetView] = []
    duplicates: list[tuple[str, str]] = []
    for view in views:
        match = None
        for other in kept:
            numberings = [view.ids] if target.kind == "charuco" else [view.ids, count - 1 - view.ids]
            for ids in numberings:
                mine = dict(zip(ids.tolist(), view.image_points))
                shared = [i for i in other.ids.tolist() if i in mine]
                if len(shared) < 0.5 * min(len(view.ids), len(other.ids)):
                    continue
                theirs = dict(zip(other.ids.tolist(), other.image_points))
                distance = np.mean([np.linalg.norm(mine[i] - theirs[i]) for i in shared])
                if distance < tolerance_px:
                    match = other
                    break
            if match is not None:
                break
        if match is None:
            kept.append(view)
        else:
            duplicates.append((view.name, match.name))
    return duplicates


def _tilt_deg(rvec: np.ndarray) -> float:
    """Angle between the target's normal and the optical axis, in degrees."""
    rotation, _ = cv2.Rodrigues(np.asarray(rvec, np.float64))
    return float(np.degrees(np.arccos(np.clip(abs(rotation[2, 2]), 0.0, 1.0))))
