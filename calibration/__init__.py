"""Camera and colour calibration: named profiles that the scanner applies before reading a photo.

The scanner's entry points are ``load_profile``, ``apply_profile`` and, for mapping points,
``undistort_points`` / ``distort_points``.
"""

from calibration.camera import (
    CameraFit,
    CameraModel,
    TargetView,
    calibrate_camera,
    distort_points,
    find_target,
    undistort_image,
    undistort_points,
)
from calibration.colour import ColourCorrection, apply_colour, estimate_colour
from calibration.errors import CalibrationError, TargetNotFoundError
from calibration.profile import Profile, apply_profile, list_profiles, load_profile, profile_dir, save_profile
from calibration.target import Target

__all__ = [
    "CalibrationError",
    "CameraFit",
    "CameraModel",
    "ColourCorrection",
    "Profile",
    "Target",
    "TargetNotFoundError",
    "TargetView",
    "apply_colour",
    "apply_profile",
    "calibrate_camera",
    "distort_points",
    "estimate_colour",
    "find_target",
    "list_profiles",
    "load_profile",
    "profile_dir",
    "save_profile",
    "undistort_image",
    "undistort_points",
]
