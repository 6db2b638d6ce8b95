"""Photo-like table scenes: a top-down board image placed under a random phone camera.

``place_on_table(board_rgb, rng)`` puts a board (its art as seen straight from above) on a random
table texture with clutter, projects it through a pinhole camera (tilt up to 40 degrees, any
in-plane rotation, distance, focal length, small radial lens distortion), lights it (gradient, soft
shadows, glare), shifts white balance and colour space, blurs and adds noise. Parts of the art can
stand above the board (``height_map`` in mm, e.g. dice): they are drawn as stacked slices so their
side faces show when the camera is tilted. ``encode_jpeg`` then compresses with a random quality.

Everything is driven by one ``numpy.random.Generator``: the same seed gives the same picture.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

import cv2
import numpy as np

MAX_TILT_DEG = 40.0


@dataclass(frozen=True)
class Shot:
    """One rendered photo and where the board ended up in it.

    ``board_to_photo`` maps board-art pixels (table plane) to photo pixels before lens distortion;
    ``project`` applies both. ``corners`` are the board art's corners TL, TR, BR, BL in photo px.
    """

    image_rgb: np.ndarray
    board_to_photo: np.ndarray
    corners: np.ndarray
    meta: dict[str, Any] = field(default_factory=dict)

    def project(self, points: np.ndarray, height_mm: float = 0.0) -> np.ndarray:
        """Map (N, 2) board-art pixels (at ``height_mm`` above the board) to photo pixels."""
        homography = self.meta["_plane"](height_mm) if height_mm else self.board_to_photo
        pts = np.asarray(points, dtype=np.float64).reshape(-1, 1, 2)
        mapped = cv2.perspectiveTransform(pts, homography).reshape(-1, 2)
        return distort_points(mapped, self.meta["lens_k1"], self.image_rgb.shape[1], self.image_rgb.shape[0])


# --------------------------------------------------------------------------------------------- camera


def _rotation(axis: str, angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    if axis == "x":
        return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def camera_planes(
    art_size: tuple[int, int],
    px_per_mm: float,
    *,
    tilt_deg: float,
    azimuth_deg: float,
    roll_deg: float,
    focal_px: float,
    distance_mm: float,
):
    """Return a function height_mm -> 3x3 homography from board-art px to (unshifted) photo px.

    World axes: X right and Y down along the art, Z into the table; the camera looks at the board
    centre from ``distance_mm`` away, tilted ``tilt_deg`` from straight down.
    """
    width, height = art_size
    rot = _rotation("z", np.radians(roll_deg)) @ _rotation("x", np.radians(tilt_deg)) @ _rotation("z", np.radians(azimuth_deg))
    centre = -distance_mm * rot[2]  # camera centre: back along the optical axis from the target (origin)
    trans = -rot @ centre
    intrinsics = np.array([[focal_px, 0, 0], [0, focal_px, 0], [0, 0, 1.0]])
    art_to_world = np.array([[1 / px_per_mm, 0, -width / (2 * px_per_mm)], [0, 1 / px_per_mm, -height / (2 * px_per_mm)], [0, 0, 1]])

    def plane(height_mm: float) -> np.ndarray:
        extr = np.column_stack([rot[:, 0], rot[:, 1], rot[:, 2] * (-height_mm) + trans])
        homography = intrinsics @ extr @ art_to_world
        return homography / homography[2, 2]

    return plane


def distort_points(points: np.ndarray, k1: float, width: int, height: int) -> np.ndarray:
    """Apply the renderer's radial lens distortion (the inverse of its remap) to photo points."""
    if not k1:
        return np.asarray(points, dtype=np.float64)
    centre = np.array([width / 2, height / 2])
    norm = max(width, height) / 2
    target = (np.asarray(points, dtype=np.float64) - centre) / norm  # undistorted position
    guess = target.copy()
    for _ in range(20):  # solve guess * (1 + k1 |guess|^2) = target
        r2 = (guess**2).sum(axis=1, keepdims=True)
        guess = target / (1 + k1 * r2)
    return guess * norm + centre


def _lens_remap(image: np.ndarray, k1: float) -> np.ndarray:
    height, width = image.shape[:2]
    norm = max(width, height) / 2
    dx = ((np.arange(width, dtype=np.float32) - width / 2) / norm)[None, :]
    dy = ((np.arange(height, dtype=np.float32) - height / 2) / norm)[:, None]
    factor = 1 + k1 * (dx * dx + dy * dy)
    map_x = (dx * factor * norm + width / 2).astype(np.float32)
    map_y = (dy * factor * norm + height / 2).astype(np.float32)
    return cv2.remap(image, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)


# --------------------------------------------------------------------------------------------- table


def _smooth_noise(rng: np.random.Generator, shape: tuple[int, int], cells: int) -> np.ndarray:
    """Return smooth noise in [0, 1] of ``shape`` from a ``cells``-wide random grid."""
    h, w = shape
    small = rng.random((max(2, cells * h // max(w, 1)), max(2, cells))).astype(np.float32)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC).clip(0, 1)


TABLE_KINDS = ("wood", "cloth", "stone", "plain", "tiles")


def table_texture(rng: np.random.Generator, size: tuple[int, int], kind: str | None = None) -> np.ndarray:
    """Return a random table surface (``kind`` one of ``TABLE_KINDS``, random when None) as (H, W, 3) uint8.

    Raises:
        ValueError: ``kind`` is not one of ``TABLE_KINDS``.
    """
    width, height = size
    if kind is None:
        kind = rng.choice(["wood", "cloth", "stone", "plain", "tiles", "wood"])
    elif kind not in TABLE_KINDS:
        raise ValueError(f"table: expected one of {', '.join(TABLE_KINDS)}, got {kind!r}")
    base = rng.uniform(20, 235, 3)
    if rng.random() < 0.5:  # browns and greys are the common tables
        base = np.array([rng.uniform(60, 200)] * 3) * np.array([1.0, rng.uniform(0.75, 0.95), rng.uniform(0.5, 0.85)])
    small = (max(8, width // 4), max(8, height // 4))
    sw, sh = small
    if kind == "wood":
        ys, xs = np.mgrid[0:sh, 0:sw].astype(np.float32)
        angle = rng.uniform(0, np.pi)
        across = -xs * np.sin(angle) + ys * np.cos(angle)
        warp = _smooth_noise(rng, (sh, sw), 6) * rng.uniform(10, 40)
        grain = np.sin((across + warp) * rng.uniform(0.2, 0.8)) * 0.5 + 0.5
        streak = _smooth_noise(rng, (sh, sw), 40) * 0.3
        shade = 0.75 + 0.25 * grain + streak - 0.15
    elif kind == "cloth":
        shade = 0.85 + 0.15 * rng.random((sh, sw)).astype(np.float32) + 0.1 * _smooth_noise(rng, (sh, sw), 8)
    elif kind == "stone":
        shade = 0.7 + 0.3 * _smooth_noise(rng, (sh, sw), 30) + 0.2 * _smooth_noise(rng, (sh, sw), 5)
    elif kind == "tiles":
        ys, xs = np.mgrid[0:sh, 0:sw]
        pitch = rng.integers(20, 80)
        lines = ((xs % pitch) < 2) | ((ys % pitch) < 2)
        shade = np.where(lines, 0.6, 1.0).astype(np.float32) + 0.1 * _smooth_noise(rng, (sh, sw), 10)
    else:
        shade = 0.9 + 0.1 * _smooth_noise(rng, (sh, sw), 4)
    texture = np.clip(shade[..., None] * base, 0, 255).astype(np.uint8)
    return cv2.resize(texture, (width, height), interpolation=cv2.INTER_LINEAR)


def add_clutter(image: np.ndarray, rng: np.random.Generator, keep_out: np.ndarray | None = None, count: int | None = None) -> np.ndarray:
    """Draw random cards, coins, loose dice, other boards and a hand onto ``image`` (returns a copy).

    ``keep_out`` is a polygon (N, 2) in image px that clutter must not cover.
    """
    out = image.copy()
    height, width = out.shape[:2]
    scale = min(width, height)
    mask_keep = np.zeros((height, width), np.uint8)
    if keep_out is not None:
        cv2.fillPoly(mask_keep, [np.round(keep_out).astype(np.int32)], 255)
    count = int(rng.integers(0, 9)) if count is None else count
    for _ in range(count):
        layer = np.zeros_like(out)
        mask = np.zeros((height, width), np.uint8)
        kind = rng.choice(["card", "coin", "die", "board", "hand", "card", "die"])
        centre = rng.uniform([0, 0], [width, height])
        colour = tuple(int(c) for c in rng.integers(0, 256, 3))
        if kind in ("card", "board"):
            size = rng.uniform(0.1, 0.3) * scale if kind == "card" else rng.uniform(0.3, 0.6) * scale
            box = cv2.boxPoints(((float(centre[0]), float(centre[1])), (size, size * rng.uniform(0.6, 1.5)), float(rng.uniform(0, 180))))
            pts = np.round(box).astype(np.int32)
            cv2.fillPoly(layer, [pts], colour)
            cv2.fillPoly(mask, [pts], 255)
            for _ in range(int(rng.integers(0, 6))):  # print on the card
                p = (centre + rng.normal(0, size / 5, 2)).astype(int)
                cv2.circle(
                    layer, tuple(int(v) for v in p), int(rng.uniform(2, size / 6)), tuple(int(c) for c in rng.integers(0, 256, 3)), -1
                )
            cv2.fillPoly(mask, [pts], 255)
        elif kind == "coin":
            radius = int(rng.uniform(0.015, 0.05) * scale)
            cv2.circle(layer, tuple(int(v) for v in centre), radius, colour, -1, cv2.LINE_AA)
            cv2.circle(mask, tuple(int(v) for v in centre), radius, 255, -1, cv2.LINE_AA)
        elif kind == "die":
            size = rng.uniform(0.03, 0.07) * scale
            hue = [(200, 30, 30), (230, 200, 30), (30, 150, 60), (30, 70, 200), (120, 40, 150)][int(rng.integers(0, 5))]
            box = cv2.boxPoints(((float(centre[0]), float(centre[1])), (size, size), float(rng.uniform(0, 90))))
            pts = np.round(box).astype(np.int32)
            cv2.fillPoly(layer, [pts], hue)
            cv2.fillPoly(mask, [pts], 255)
            for _ in range(int(rng.integers(1, 7))):
                p = centre + rng.uniform(-size / 3, size / 3, 2)
                cv2.circle(layer, tuple(int(v) for v in p), max(1, int(size / 10)), (245, 245, 245), -1)
        else:  # hand or arm reaching in from an edge
            edge = int(rng.integers(0, 4))
            start = [
                np.array([rng.uniform(0, width), 0]),
                np.array([width, rng.uniform(0, height)]),
                np.array([rng.uniform(0, width), height]),
                np.array([0, rng.uniform(0, height)]),
            ][edge]
            end = start + (np.array([width / 2, height / 2]) - start) * rng.uniform(0.1, 0.35)
            skin = (int(rng.uniform(120, 235)), int(rng.uniform(80, 180)), int(rng.uniform(60, 150)))
            cv2.line(layer, tuple(int(v) for v in start), tuple(int(v) for v in end), skin, int(0.08 * scale))
            cv2.circle(layer, tuple(int(v) for v in end), int(0.06 * scale), skin, -1)
            cv2.line(mask, tuple(int(v) for v in start), tuple(int(v) for v in end), 255, int(0.08 * scale))
            cv2.circle(mask, tuple(int(v) for v in end), int(0.06 * scale), 255, -1)
        mask[mask_keep > 0] = 0
        x, y, w, h = cv2.boundingRect(mask)
        if w == 0 or h == 0:
            continue
        pad = int(8 + scale * 0.02)
        x0, y0, x1, y1 = max(0, x - pad), max(0, y - pad), min(width, x + w + pad), min(height, y + h + pad)
        sub_mask = mask[y0:y1, x0:x1]
        # soft contact shadow, then the object
        shadow = cv2.GaussianBlur(sub_mask, (0, 0), 3 + scale * 0.004)
        shadow = np.roll(shadow, (int(rng.integers(1, 6)), int(rng.integers(1, 6))), axis=(0, 1)).astype(np.float32) / 255
        sub = out[y0:y1, x0:x1].astype(np.float32) * (1 - 0.35 * shadow[..., None])
        sub = sub.astype(np.uint8)
        sub[sub_mask > 0] = layer[y0:y1, x0:x1][sub_mask > 0]
        out[y0:y1, x0:x1] = sub
    return out


# --------------------------------------------------------------------------------------------- placement


def _sample_camera(rng: np.random.Generator) -> dict[str, float]:
    tilt = float(rng.uniform(0, MAX_TILT_DEG) if rng.random() < 0.7 else rng.uniform(0, 12))
    return {
        "tilt_deg": tilt,
        "azimuth_deg": float(rng.uniform(0, 360)),
        "roll_deg": float(rng.uniform(-180, 180) if rng.random() < 0.6 else rng.normal(0, 8)),
    }


def place_on_table(
    board_rgb: np.ndarray,
    rng: np.random.Generator,
    *,
    out_size: tuple[int, int] = (1600, 1200),
    board_alpha: np.ndarray | None = None,
    height_map: np.ndarray | None = None,
    px_per_mm: float = 6.0,
    fill: float | None = None,
    clutter: bool = True,
    camera: dict[str, float] | None = None,
    raised: list[Raised] | None = None,
    table: str | None = None,
) -> Shot:
    """Photograph ``board_rgb`` (top-down art, ``px_per_mm`` pixels per millimetre) lying on a table.

    ``raised`` lists prisms standing on the board (dice): each is drawn with its side faces and its
    top face (the art inside its footprint) at its height, nearest the camera last. ``height_map``
    (mm above the board, same size as the art) is a cruder alternative drawn as stacked slices.
    ``fill`` is the board's long side as a fraction of the photo's short side (random when None);
    ``table`` the surface's kind (``TABLE_KINDS``, random when None).
    Returns a ``Shot`` with the (not yet JPEG-compressed) photo and where the board landed.
    """
    board_rgb = np.ascontiguousarray(board_rgb)
    art_h, art_w = board_rgb.shape[:2]
    width, height = out_size
    cam = dict(camera or _sample_camera(rng))
    focal = float(max(width, height) * rng.uniform(0.65, 1.15))  # phones: about 0.75-0.9
    fill = float(fill if fill is not None else rng.uniform(0.45, 0.95))
    board_long_mm = max(art_w, art_h) / px_per_mm
    distance = focal * board_long_mm / (fill * min(width, height))
    plane = camera_planes((art_w, art_h), px_per_mm, focal_px=focal, distance_mm=distance, **cam)
    art_corners = np.array([[0, 0], [art_w, 0], [art_w, art_h], [0, art_h]], dtype=np.float64)
    base = plane(0.0)
    top_h = float(height_map.max()) if height_map is not None else 0.0
    if raised:
        top_h = max(top_h, max(item.height_mm for item in raised))
    proj = cv2.perspectiveTransform(art_corners.reshape(-1, 1, 2), base).reshape(-1, 2)
    if top_h:
        proj = np.vstack([proj, cv2.perspectiveTransform(art_corners.reshape(-1, 1, 2), plane(top_h)).reshape(-1, 2)])
    lo, hi = proj.min(axis=0), proj.max(axis=0)
    span = hi - lo
    margin = 0.03 * min(width, height)
    shrink = min(1.0, (width - 2 * margin) / span[0], (height - 2 * margin) / span[1])
    free = np.array([width, height]) - span * shrink - 2 * margin
    offset = margin + rng.uniform(0, 1, 2) * np.maximum(free, 0) - lo * shrink
    shift = np.array([[shrink, 0, offset[0]], [0, shrink, offset[1]], [0, 0, 1]])

    def plane_photo(height_mm: float) -> np.ndarray:
        homography = shift @ plane(height_mm)
        return homography / homography[2, 2]

    board_to_photo = plane_photo(0.0)
    corners = cv2.perspectiveTransform(art_corners.reshape(-1, 1, 2), board_to_photo).reshape(-1, 2)

    # table with clutter kept off the board, then the board's drop shadow
    surface = table_texture(rng, (width, height), table)
    if clutter:
        surface = add_clutter(surface, rng, keep_out=corners)
    alpha = np.full((art_h, art_w), 255, np.uint8) if board_alpha is None else board_alpha.astype(np.uint8)
    shadow_h = plane_photo(0.0).copy()
    sdx, sdy = rng.normal(0, 0.012 * min(width, height), 2)
    shadow_h = np.array([[1, 0, sdx], [0, 1, sdy], [0, 0, 1]]) @ shadow_h
    shadow = cv2.warpPerspective(alpha, shadow_h, (width, height))
    small = cv2.resize(shadow, (width // 4, height // 4), interpolation=cv2.INTER_AREA)
    small = cv2.GaussianBlur(small, (0, 0), 0.5 + 0.0025 * min(width, height)).astype(np.float32) / 255
    dark = 1 - rng.uniform(0.2, 0.5) * cv2.resize(small, (width, height), interpolation=cv2.INTER_LINEAR)
    image = cv2.multiply(surface.astype(np.float32), cv2.merge([dark, dark, dark]))

    # the board itself, then raised slices (side faces darker and blurred, the top face sharp)
    levels = [(0.0, board_rgb, alpha)]
    if height_map is not None and top_h > 0:
        side_art = cv2.blur(board_rgb, (9, 9)).astype(np.float32) * 0.7
        n_slices = int(np.clip(np.ceil(top_h * np.sin(np.radians(cam["tilt_deg"])) / 1.5), 0, 8)) + 1
        for k in range(1, n_slices + 1):
            h_mm = top_h * k / n_slices
            mask = ((height_map >= h_mm - 1e-6) & (alpha > 0)).astype(np.uint8) * 255
            art = board_rgb if k == n_slices else side_art.astype(np.uint8)
            levels.append((h_mm, art, mask))
    for h_mm, art, mask in levels:
        homography = plane_photo(h_mm)
        pts = cv2.perspectiveTransform(art_corners.reshape(-1, 1, 2), homography).reshape(-1, 2)
        x0, y0 = np.floor(pts.min(axis=0)).astype(int).clip(0, [width - 1, height - 1])
        x1, y1 = np.ceil(pts.max(axis=0)).astype(int).clip(1, [width, height])
        if x1 <= x0 or y1 <= y0:
            continue
        roi = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1]]) @ homography
        warped = cv2.warpPerspective(art, roi, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR)
        walpha: np.ndarray = cv2.warpPerspective(mask, roi, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR).astype(np.float32) / 255
        walpha = cv2.merge([walpha, walpha, walpha])
        region = image[y0:y1, x0:x1]
        image[y0:y1, x0:x1] = region + cv2.multiply(warped.astype(np.float32) - region, walpha)

    if raised:
        _draw_raised(image, board_rgb, raised, plane_photo, rng)
    meta: dict[str, Any] = {**cam, "focal_px": round(focal, 1), "distance_mm": round(distance, 1), "fill": round(fill, 3)}
    image, light_meta = _light(image, rng)
    meta.update(light_meta)
    k1 = float(rng.uniform(-0.06, 0.06)) if rng.random() < 0.6 else 0.0
    image_u8 = cv2.convertScaleAbs(image)  # saturating float -> uint8
    if k1:
        image_u8 = _lens_remap(image_u8, k1)
    image_u8, finish_meta = _finish(image_u8, rng)
    meta.update(finish_meta)
    meta["lens_k1"] = round(k1, 4)
    meta["_plane"] = plane_photo
    corners = distort_points(corners, meta["lens_k1"], width, height)
    meta["lens_k1"] = k1
    return Shot(image_rgb=image_u8, board_to_photo=board_to_photo, corners=corners.astype(np.float64), meta=meta)


@dataclass(frozen=True)
class Raised:
    """A prism standing on the board: its footprint (N, 2) in art px, height and side colour (RGB)."""

    footprint: np.ndarray
    height_mm: float
    side_rgb: tuple[float, float, float]


def _draw_raised(image: np.ndarray, art: np.ndarray, raised: list[Raised], plane_photo, rng: np.random.Generator) -> None:
    """Draw prisms in place onto the float32 photo: sides as the hull of both faces, then the top face."""
    height, width = image.shape[:2]
    base = plane_photo(0.0)
    order = []
    for item in raised:
        centre = np.append(np.asarray(item.footprint, np.float64).mean(axis=0), 1.0)
        order.append(float((base @ centre)[2]))  # proportional to depth: far ones first
    for index in np.argsort(order)[::-1]:
        item = raised[int(index)]
        foot = np.asarray(item.footprint, np.float64).reshape(-1, 1, 2)
        top_h = plane_photo(item.height_mm)
        bottom = cv2.perspectiveTransform(foot, base).reshape(-1, 2)
        top = cv2.perspectiveTransform(foot, top_h).reshape(-1, 2)
        hull = cv2.convexHull(np.vstack([bottom, top]).astype(np.float32)).reshape(-1, 2)
        x0, y0 = np.floor(hull.min(axis=0)).astype(int).clip(0, [width - 1, height - 1])
        x1, y1 = np.ceil(hull.max(axis=0)).astype(int).clip(1, [width, height])
        if x1 <= x0 or y1 <= y0:
            continue
        roi_w, roi_h = x1 - x0, y1 - y0
        side = np.zeros((roi_h, roi_w), np.uint8)
        cv2.fillPoly(side, [np.round((hull - [x0, y0]) * 4).astype(np.int32)], 255, cv2.LINE_AA, shift=2)
        alpha = side.astype(np.float32)[..., None] / 255
        shade = np.array(item.side_rgb, np.float32) * float(rng.uniform(0.85, 1.1))
        region = image[y0:y1, x0:x1]
        region[:] = region * (1 - alpha) + shade * alpha
        # the top face: the art inside the footprint, warped at the prism's height
        fx0, fy0 = np.floor(foot.reshape(-1, 2).min(axis=0)).astype(int)
        fx1, fy1 = np.ceil(foot.reshape(-1, 2).max(axis=0)).astype(int) + 1
        fx0, fy0 = max(fx0, 0), max(fy0, 0)
        patch = art[fy0:fy1, fx0:fx1]
        mask = np.zeros(patch.shape[:2], np.uint8)
        cv2.fillPoly(mask, [np.round((foot.reshape(-1, 2) - [fx0, fy0]) * 4).astype(np.int32)], 255, cv2.LINE_AA, shift=2)
        to_roi = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1]]) @ top_h @ np.array([[1, 0, fx0], [0, 1, fy0], [0, 0, 1]])
        warped = cv2.warpPerspective(patch, to_roi, (roi_w, roi_h), flags=cv2.INTER_LINEAR)
        walpha = cv2.warpPerspective(mask, to_roi, (roi_w, roi_h), flags=cv2.INTER_LINEAR).astype(np.float32)[..., None] / 255
        region[:] = region * (1 - walpha) + warped.astype(np.float32) * walpha


def _light(image: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, dict[str, Any]]:
    """Directional light falloff, soft cast shadows and glare spots (float32 in, float32 out)."""
    height, width = image.shape[:2]
    ys, xs = np.mgrid[0:height:8, 0:width:8].astype(np.float32)
    angle = rng.uniform(0, 2 * np.pi)
    strength = rng.uniform(0.0, 0.45)
    ramp = (xs * np.cos(angle) + ys * np.sin(angle)) / max(width, height)
    gain = 1 - strength * (ramp - ramp.min()) / max(np.ptp(ramp), 1e-6)
    brightness = float(rng.uniform(0.55, 1.25) if rng.random() < 0.8 else rng.uniform(0.35, 0.6))
    gain = gain * brightness
    n_shadows = int(rng.integers(0, 3))
    for _ in range(n_shadows):  # a soft shadow (phone, arm, lamp) crossing the scene
        pts = rng.uniform([0, 0], [xs.shape[1], xs.shape[0]], (int(rng.integers(3, 6)), 2)).astype(np.int32)
        mask = np.zeros(xs.shape, np.float32)
        cv2.fillPoly(mask, [cv2.convexHull(pts)], 1.0)
        mask = cv2.GaussianBlur(mask, (0, 0), rng.uniform(1, 6))
        gain = gain * (1 - rng.uniform(0.15, 0.5) * mask)
    n_glare = int(rng.integers(0, 3)) if rng.random() < 0.5 else 0
    glare = np.zeros(xs.shape, np.float32)
    for _ in range(n_glare):
        spot = np.zeros(xs.shape, np.float32)
        centre = (int(rng.uniform(0, xs.shape[1])), int(rng.uniform(0, xs.shape[0])))
        axes = (max(1, int(rng.uniform(0.02, 0.12) * xs.shape[1])), max(1, int(rng.uniform(0.01, 0.06) * xs.shape[0])))
        cv2.ellipse(spot, centre, axes, float(rng.uniform(0, 180)), 0, 360, 1.0, -1)
        glare += cv2.GaussianBlur(spot, (0, 0), max(axes) / 3 + 1) * rng.uniform(40, 160)
    gain = cv2.resize(gain.astype(np.float32), (width, height), interpolation=cv2.INTER_LINEAR)
    image = cv2.multiply(image, cv2.merge([gain, gain, gain]))
    if n_glare:
        glare = cv2.resize(glare, (width, height), interpolation=cv2.INTER_LINEAR)
        image = cv2.add(image, cv2.merge([glare, glare, glare]))
    return image, {
        "light_angle": round(float(angle), 3),
        "light_strength": round(float(strength), 3),
        "brightness": round(brightness, 3),
        "shadows": n_shadows,
        "glare_spots": n_glare,
    }


@cache
def _noise_tile() -> np.ndarray:
    """A fixed 509x509 tile of unit Gaussian noise, reused at random offsets (fast sensor noise); made once, read-only (it is shared)."""
    tile = np.random.default_rng(12345).standard_normal((509, 509, 3)).astype(np.float32)
    tile.flags.writeable = False
    return tile


def _wrapped(tile: np.ndarray, offset: tuple[int, int], shape: tuple[int, int]) -> np.ndarray:
    """``tile`` repeated over an image of ``shape`` (height, width), starting at ``offset`` (row, column) inside it."""
    rolled = np.roll(tile, (-offset[0], -offset[1]), axis=(0, 1))
    below, right = max(0, shape[0] - tile.shape[0]), max(0, shape[1] - tile.shape[1])
    return cv2.copyMakeBorder(rolled, 0, below, 0, right, cv2.BORDER_WRAP)[: shape[0], : shape[1]]


def _finish(image: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, dict[str, Any]]:
    """White balance, colour-space shift, saturation, gamma, blur and sensor noise (uint8 in and out)."""
    wb = np.array([rng.uniform(0.8, 1.2), 1.0, rng.uniform(0.8, 1.2)], np.float32)
    mix = np.eye(3, dtype=np.float32) + rng.normal(0, 0.04, (3, 3)).astype(np.float32)  # ICC-like shift
    mix /= mix.sum(axis=1, keepdims=True)
    sat = float(rng.uniform(0.7, 1.3))
    saturate = sat * np.eye(3, dtype=np.float32) + (1 - sat) / 3
    matrix = np.diag(wb) @ saturate @ mix
    img = cv2.transform(image, matrix.astype(np.float32))  # saturating uint8 arithmetic
    gamma = float(rng.uniform(0.8, 1.25))
    lut = np.clip(255 * (np.arange(256) / 255.0) ** gamma, 0, 255).astype(np.uint8)
    img = cv2.LUT(img, lut)
    blur = float(rng.uniform(0, 1.6)) if rng.random() < 0.6 else 0.0
    if blur > 0.3:
        img = cv2.GaussianBlur(img, (0, 0), blur)
    motion = 0
    if rng.random() < 0.15:
        motion = int(rng.integers(3, 9))
        kernel: np.ndarray = np.zeros((motion, motion), np.float32)
        kernel[motion // 2, :] = 1.0 / motion
        rot = cv2.getRotationMatrix2D((motion / 2 - 0.5, motion / 2 - 0.5), float(rng.uniform(0, 180)), 1.0)
        kernel = cv2.warpAffine(kernel, rot, (motion, motion))
        img = cv2.filter2D(img, -1, kernel / max(kernel.sum(), 1e-6))
    noise = float(rng.uniform(0, 8))
    if noise > 0.5:
        tile = _noise_tile()
        dy, dx = (int(v) for v in rng.integers(0, tile.shape[0], 2))
        grain = _wrapped(tile, (dy, dx), img.shape[:2])
        img = cv2.scaleAdd(grain, noise, img.astype(np.float32))
        img = cv2.convertScaleAbs(img)
    return img, {
        "white_balance": [round(float(v), 3) for v in wb],
        "saturation": round(sat, 3),
        "gamma": round(gamma, 3),
        "blur_sigma": round(blur, 2),
        "motion_blur_px": motion,
        "noise_sigma": round(noise, 2),
    }


def encode_jpeg(image_rgb: np.ndarray, rng: np.random.Generator, quality: int | None = None) -> tuple[bytes, int]:
    """JPEG-encode an RGB image with a random quality (55-95) unless given; returns (bytes, quality)."""
    q = int(rng.integers(55, 96)) if quality is None else int(quality)
    ok, buffer = cv2.imencode(".jpg", cv2.cvtColor(image_rgb, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, q])
    if not ok:  # pragma: no cover - cv2 always encodes uint8 RGB
        raise RuntimeError("JPEG encoding failed")
    return buffer.tobytes(), q


def jpeg_roundtrip(image_rgb: np.ndarray, rng: np.random.Generator, quality: int | None = None) -> tuple[np.ndarray, int]:
    """Return the image after JPEG compression at a random quality, and the quality used."""
    data, q = encode_jpeg(image_rgb, rng, quality)
    decoded = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if decoded is None:
        raise ValueError(f"JPEG at quality {q}: OpenCV could not decode its own encoding")
    return cv2.cvtColor(decoded, cv2.COLOR_BGR2RGB), q


def public_meta(meta: dict[str, Any]) -> dict[str, Any]:
    """Return the JSON-safe part of a shot's meta (drops private callables)."""
    return {key: value for key, value in meta.items() if not key.startswith("_")}


# --------------------------------------------------------------------------------------------- views


def draw_overlay(image_rgb: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, dict[str, Any]]:
    """Draw another camera app's guide over a finished photo: thin white lines, corner brackets, marks.

    Returns a new image and what was drawn. The board under it is unchanged (the overlay is on the
    picture, not on the table), so a label's geometry stays true.
    """
    out = image_rgb.copy()
    height, width = out.shape[:2]
    layer = out.copy()
    white = tuple(int(v) for v in rng.uniform(225, 255, 3))
    thick = max(1, int(round(min(width, height) * rng.uniform(0.001, 0.004))))
    drawn: list[str] = []
    if rng.random() < 0.7:  # rule-of-thirds (or quarters) grid across the whole frame
        parts = int(rng.choice([3, 4]))
        for k in range(1, parts):
            x, y = int(width * k / parts), int(height * k / parts)
            cv2.line(layer, (x, 0), (x, height - 1), white, thick, cv2.LINE_AA)
            cv2.line(layer, (0, y), (width - 1, y), white, thick, cv2.LINE_AA)
        drawn.append(f"grid{parts}")
    if rng.random() < 0.6:  # a framing rectangle or its corner brackets
        mx, my = rng.uniform(0.03, 0.2) * width, rng.uniform(0.03, 0.2) * height
        x0, y0, x1, y1 = int(mx), int(my), int(width - mx), int(height - my)
        if rng.random() < 0.5:
            cv2.rectangle(layer, (x0, y0), (x1, y1), white, thick, cv2.LINE_AA)
            drawn.append("frame")
        else:
            arm = int(min(width, height) * rng.uniform(0.04, 0.12))
            for cx, cy, sx, sy in ((x0, y0, 1, 1), (x1, y0, -1, 1), (x1, y1, -1, -1), (x0, y1, 1, -1)):
                cv2.line(layer, (cx, cy), (cx + sx * arm, cy), white, thick * 2, cv2.LINE_AA)
                cv2.line(layer, (cx, cy), (cx, cy + sy * arm), white, thick * 2, cv2.LINE_AA)
            drawn.append("brackets")
    for _ in range(int(rng.integers(0, 4))):  # marks: a focus square, a cross, a level circle, a word
        x, y = int(rng.uniform(0.1, 0.9) * width), int(rng.uniform(0.1, 0.9) * height)
        size = int(min(width, height) * rng.uniform(0.02, 0.06))
        kind = int(rng.integers(0, 4))
        if kind == 0:
            cv2.rectangle(layer, (x - size, y - size), (x + size, y + size), (255, 215, 60), thick, cv2.LINE_AA)
        elif kind == 1:
            cv2.line(layer, (x - size, y), (x + size, y), white, thick, cv2.LINE_AA)
            cv2.line(layer, (x, y - size), (x, y + size), white, thick, cv2.LINE_AA)
        elif kind == 2:
            cv2.circle(layer, (x, y), size, white, thick, cv2.LINE_AA)
        else:
            cv2.putText(layer, "ALIGN", (x, y), cv2.FONT_HERSHEY_SIMPLEX, size / 30, white, thick, cv2.LINE_AA)
        drawn.append(["focus", "cross", "circle", "text"][kind])
    opacity = float(rng.uniform(0.6, 1.0))
    out = cv2.addWeighted(layer, opacity, out, 1 - opacity, 0)
    return out, {"overlay": drawn, "overlay_opacity": round(opacity, 3)}


def crop_view(image_rgb: np.ndarray, box: tuple[float, float, float, float], out_size: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Cut ``box`` (x0, y0, x1, y1 in image px) out of the photo and scale it to ``out_size``.

    Returns the new image and the 3x3 affine taking old photo px to new ones (``map_points``). A
    crop that is not centred on the photo moves the principal point off the new image's centre.
    """
    x0, y0, x1, y1 = box
    width, height = out_size
    affine = np.array([[width / (x1 - x0), 0, -x0 * width / (x1 - x0)], [0, height / (y1 - y0), -y0 * height / (y1 - y0)], [0, 0, 1.0]])
    shrink = (x1 - x0) / width
    source = cv2.GaussianBlur(image_rgb, (0, 0), 0.5 * (shrink - 1)) if shrink > 1.2 else image_rgb  # no aliasing when shrinking
    cut = cv2.warpAffine(source, affine[:2], (width, height), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return cut, affine


def map_points(points: np.ndarray, affine: np.ndarray) -> np.ndarray:
    """Apply a 3x3 affine (``crop_view``'s) to (N, 2) points."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    return pts @ affine[:2, :2].T + affine[:2, 2]


def view_box(
    points: np.ndarray, image_size: tuple[int, int], out_size: tuple[int, int], margin: float, rng: np.random.Generator, spare: float = 0.0
) -> tuple[float, float, float, float]:
    """A crop box of ``out_size``'s aspect holding ``points`` (plus ``margin`` of their extent on each side).

    ``spare`` (0-1) enlarges the box by up to that share and places the points anywhere inside it
    (an off-centre crop); the box is kept inside the image where it fits.
    """
    width, height = image_size
    lo, hi = np.asarray(points).min(axis=0), np.asarray(points).max(axis=0)
    span = (hi - lo) * (1 + 2 * margin)
    aspect = out_size[0] / out_size[1]
    need_w = max(span[0], span[1] * aspect)
    box_w = max(need_w, min(need_w * (1 + spare * rng.random()), width, height * aspect))  # inside the photo where it can be
    box_h = box_w / aspect
    centre = (lo + hi) / 2 + (rng.uniform(-0.5, 0.5, 2) * np.maximum([box_w - span[0], box_h - span[1]], 0) if spare else 0)
    x0 = float(np.clip(centre[0] - box_w / 2, 0, max(0.0, width - box_w))) if box_w <= width else float(centre[0] - box_w / 2)
    y0 = float(np.clip(centre[1] - box_h / 2, 0, max(0.0, height - box_h))) if box_h <= height else float(centre[1] - box_h / 2)
    return x0, y0, x0 + box_w, y0 + box_h
