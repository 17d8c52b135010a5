"""Hand-built scenes with known geometry: a closed box room with optional inner walls and boxes.

Used to check rendering and navigation against analytic answers (and handy for debugging).
"""

from __future__ import annotations

from memgym.scenes import meshes
from memgym.scenes.mesh_scene import MeshScene, PerTriangleLookup
from memgym.scenes.meshes import TriangleSoup
from memgym.scenes.navigation import AgentSpec

FLOOR, CEILING, WALL, OBJECT = 1, 2, 3, 7


def box_room(
    width: float = 6.0,
    depth: float = 4.0,
    height: float = 2.5,
    *,
    inner_walls: list[tuple[tuple[float, float, float], tuple[float, float, float]]] = (),
    objects: list[tuple[tuple[float, float, float], tuple[float, float, float], int]] = (),
    agent: AgentSpec | None = None,
) -> MeshScene:
    """A closed room ``[0, width] x [0, height] x [0, depth]`` (inner faces at those planes).

    ``inner_walls`` are ``(centre, size)`` boxes with the wall id; ``objects`` ``(centre, size, id)``.
    """
    t = 0.2
    parts = [
        meshes.box((width / 2, -t / 2, depth / 2), (width, t, depth), (0.6, 0.5, 0.4), FLOOR),
        meshes.box((width / 2, height + t / 2, depth / 2), (width, t, depth), (0.9, 0.9, 0.9), CEILING),
        meshes.box((-t / 2, height / 2, depth / 2), (t, height, depth + 2 * t), (0.8, 0.8, 0.7), WALL),
        meshes.box((width + t / 2, height / 2, depth / 2), (t, height, depth + 2 * t), (0.8, 0.8, 0.7), WALL),
        meshes.box((width / 2, height / 2, -t / 2), (width + 2 * t, height, t), (0.8, 0.8, 0.7), WALL),
        meshes.box((width / 2, height / 2, depth + t / 2), (width + 2 * t, height, t), (0.8, 0.8, 0.7), WALL),
    ]
    parts += [meshes.box(c, s, (0.7, 0.7, 0.7), WALL) for c, s in inner_walls]
    parts += [meshes.box(c, s, (0.2, 0.3, 0.8), sid) for c, s, sid in objects]
    soup = TriangleSoup.concatenate(parts)
    return MeshScene(
        soup.vertices,
        soup.triangles,
        PerTriangleLookup(soup.colors, soup.semantic),
        agent=agent,
        floor_height=0.0,
        scene_id="box-room",
    )
