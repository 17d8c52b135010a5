"""Top-down maps: occupancy, labelled objects, a trajectory and the current pose, as an image.

The map is drawn in the x-z plane of the Habitat frame with +x to the right and +z down (the
view from above with -z, the agent's default forward, pointing up the image). Navigable floor is
light, the rest of the floor plan (walls, furniture) dark; room names are written in grey;
objects are outlined boxes with their category; the trajectory is a line from blue (start) to red (end) and the current pose a
triangle pointing along the heading.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from PIL import Image, ImageDraw

from memgym.scenes.mesh_scene import MeshScene
from memgym.scenes.poses import forward_vector

NAVIGABLE = (236, 236, 228)
BLOCKED = (92, 92, 100)
OUTSIDE = (255, 255, 255)


def topdown_map(
    scene: MeshScene,
    *,
    trajectory: np.ndarray | None = None,
    pose: tuple[np.ndarray, float] | None = None,
    highlight: Sequence[str] = (),
    pixels_per_meter: float = 40.0,
    labels: bool = True,
) -> np.ndarray:
    """Draw the map of ``scene``.

    Args:
        scene: the scene (its navigation grid and objects are drawn).
        trajectory: ``(T, 3)`` agent positions in metres, drawn as a line.
        pose: current ``(position (3,), yaw rad)``, drawn as a triangle.
        highlight: object ids drawn thicker (e.g. the navigation goals).
        pixels_per_meter: map scale.
        labels: write each object's category next to it.
    Returns:
        ``(H, W, 3) uint8`` RGB image.
    """
    nav = scene.navgrid
    scale = pixels_per_meter * nav.cell
    raw = np.zeros(nav.navigable.shape + (3,), np.uint8)
    raw[:] = OUTSIDE
    raw[~nav.navigable] = BLOCKED
    raw[nav.navigable] = NAVIGABLE
    h, w = nav.navigable.shape
    image = Image.fromarray(raw).resize((max(1, round(w * scale)), max(1, round(h * scale))), Image.NEAREST)
    draw = ImageDraw.Draw(image)

    def to_px(x: float, z: float) -> tuple[float, float]:
        return ((x - nav.origin[0]) * pixels_per_meter, (z - nav.origin[1]) * pixels_per_meter)

    if labels:
        for region in scene.regions:
            x0, z0, x1, z1 = region.bounds
            cx, cy = to_px((x0 + x1) / 2, (z0 + z1) / 2)
            draw.text((cx - 3 * len(region.name), cy), region.name.upper(), fill=(150, 150, 160))
    highlight = set(highlight)
    for obj in scene.objects:
        x, _, z = obj.position
        sx, _, sz = obj.size
        p0, p1 = to_px(x - sx / 2, z - sz / 2), to_px(x + sx / 2, z + sz / 2)
        color = _category_color(obj.category)
        width = 3 if obj.object_id in highlight else 1
        draw.rectangle([p0, p1], outline=color, width=width)
        if labels:
            draw.text((p0[0] + 1, p0[1] + 1), obj.category, fill=(20, 20, 20))
    if trajectory is not None and len(trajectory) > 1:
        _draw_trajectory(draw, [to_px(p[0], p[2]) for p in np.asarray(trajectory)])
    if pose is not None:
        _draw_pose(draw, to_px(pose[0][0], pose[0][2]), pose[1], 0.35 * pixels_per_meter)
    return np.asarray(image, np.uint8)


def _draw_trajectory(draw: ImageDraw.ImageDraw, pts: list[tuple[float, float]]) -> None:
    """The trajectory through pixel points ``pts``, from blue (start) to red (end)."""
    n = len(pts) - 1
    for i in range(n):
        f = i / max(n - 1, 1)
        draw.line([pts[i], pts[i + 1]], fill=(int(40 + 200 * f), 60, int(220 - 180 * f)), width=2)


def _draw_pose(draw: ImageDraw.ImageDraw, centre: tuple[float, float], yaw: float, r: float) -> None:
    """A triangle at pixel ``centre`` pointing along ``yaw`` (radians), ``r`` pixels to its tip."""
    cx, cy = centre
    f = forward_vector(yaw)
    tip = (cx + f[0] * r, cy + f[2] * r)
    left = (cx + (f[2] * 0.5 - f[0] * 0.5) * r, cy + (-f[0] * 0.5 - f[2] * 0.5) * r)
    right = (cx + (-f[2] * 0.5 - f[0] * 0.5) * r, cy + (f[0] * 0.5 - f[2] * 0.5) * r)
    draw.polygon([tip, left, right], fill=(230, 30, 30), outline=(0, 0, 0))


def _category_color(category: str) -> tuple[int, int, int]:
    digest = sum((i + 1) * ord(c) for i, c in enumerate(category))
    hue = (digest * 0.61803398875) % 1.0
    r, g, b = (abs(math.sin(math.pi * (hue + k / 3))) for k in range(3))
    return (int(40 + 180 * r), int(40 + 160 * g), int(40 + 180 * b))
