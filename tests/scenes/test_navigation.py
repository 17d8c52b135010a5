import math

import numpy as np
import pytest
from clearance_check import body_samples, clearances

from memgym.scenes.clearance import clearance_reach
from memgym.scenes.locomotion import ActionSpec, AgentState, GreedyFollower, apply_action
from memgym.scenes.mesh_scene import MeshScene
from memgym.scenes.navigation import AgentSpec, NavGrid
from memgym.scenes.procedural import generate_house
from memgym.scenes.simple import box_room

AGENT = AgentSpec(radius=0.2, cell_size=0.05)


def test_geodesic_equals_straight_line_in_empty_room():
    nav = box_room(6.0, 4.0, agent=AGENT).navgrid
    assert nav.num_islands == 1
    for start, goal in [((0.5, 0, 0.5), (5.5, 0, 3.5)), ((1.03, 0, 2.2), (4.71, 0, 0.61)), ((3, 0, 3), (3, 0, 1))]:
        result = nav.geodesic(start, goal)
        assert result.status == "ok"
        assert result.distance == pytest.approx(math.dist((start[0], start[2]), (goal[0], goal[2])), abs=1e-9)
        assert len(result.path) == 2


def test_geodesic_goes_around_a_wall():
    # a wall along x = 4 from z = 0 to z = 3 leaves a 1 m gap at z in (3, 4)
    t = 0.1
    scene = box_room(8.0, 4.0, inner_walls=[((4.0, 1.25, 1.5), (t, 2.5, 3.0))], agent=AGENT)
    start, goal = np.array([2.0, 0.0, 1.0]), np.array([6.0, 0.0, 1.0])
    result = scene.geodesic(start, goal)
    r = AGENT.radius
    c1, c2 = np.array([4 - t / 2 - r, 3 + r]), np.array([4 + t / 2 + r, 3 + r])
    reference = np.linalg.norm(c1 - start[[0, 2]]) + np.linalg.norm(c2 - c1) + np.linalg.norm(goal[[0, 2]] - c2)
    assert result.status == "ok"
    assert result.distance > 4.0 + 1.0  # much longer than the straight line
    assert result.distance == pytest.approx(reference, rel=0.03)
    # every point of the path keeps the radius from the faces (sampled independently) and it passes the gap
    points = np.concatenate([np.linspace(a, b, 200) for a, b in zip(result.path[:-1], result.path[1:])])
    assert _face_clearance(scene, points) >= r - 1e-3
    assert result.path[:, 2].max() > 3.0


def test_geodesic_passes_a_gap_the_agent_fits_through_but_no_navigable_cell_does():
    """A 0.43 m gap (0.215 m clearance at its middle row of cell centres) in a wall: the 0.4 m agent
    fits, so the geodesic goes straight through over the passable cells, keeping the radius; no
    navigable cell (every point keeping the radius) lies in it, so poses stay on either side."""
    walls = [((4.0, 1.25, 0.905), (0.1, 2.5, 1.81)), ((4.0, 1.25, 3.12), (0.1, 2.5, 1.76))]  # gap z 1.81-2.24
    scene = box_room(8.0, 4.0, inner_walls=walls, agent=AGENT)
    nav = scene.navgrid
    start, goal = np.array([2.0, 0.0, 2.025]), np.array([6.0, 0.0, 2.025])
    assert nav.num_islands == 2 and nav.island_of(start) != nav.island_of(goal)
    assert nav.passable[nav.cell_of((4.0, 0.0, 2.025))] and not nav.navigable[nav.cell_of((4.0, 0.0, 2.025))]
    result = nav.geodesic(start, goal)
    assert result.status == "ok" and result.distance == pytest.approx(4.0, abs=1e-6)
    points = np.concatenate([np.linspace(a, b, 400) for a, b in zip(result.path[:-1], result.path[1:])])
    assert _face_clearance(scene, points) >= AGENT.radius - 1e-3


def _face_clearance(scene: MeshScene, points: np.ndarray) -> float:
    """Least distance (m) from ``points`` ``(K, 3)`` to the scene's faces in the agent's body,
    sampled every 1 cm (tests/support/clearance_check.py; not cached: box rooms share one id)."""
    agent, floor = scene.agent, scene.floor_height
    band = (floor + agent.max_climb + 1e-3, floor + agent.height)
    return float(clearances(points, body_samples(scene.vertices[scene.triangles], *band, spacing=0.01)).min())


def test_disconnected_points_are_unreachable_with_status():
    scene = box_room(8.0, 4.0, inner_walls=[((4.0, 1.25, 2.0), (0.1, 2.5, 4.0))], agent=AGENT)
    nav = scene.navgrid
    assert nav.num_islands == 2
    result = nav.geodesic((2.0, 0, 2.0), (6.0, 0, 2.0))
    assert result.status == "unreachable" and math.isinf(result.distance) and len(result.path) == 0
    assert math.isinf(scene.geodesic_distance(np.array([2.0, 0, 2.0]), np.array([6.0, 0, 2.0])))
    assert len(scene.shortest_path(np.array([2.0, 0, 2.0]), np.array([6.0, 0, 2.0]))) == 0


def test_points_off_the_navmesh():
    nav = box_room(6.0, 4.0, agent=AGENT).navgrid
    far = nav.geodesic((30.0, 0.0, 30.0), (3.0, 0.0, 2.0))
    assert far.status == "start_off_navmesh" and math.isinf(far.distance)
    assert nav.geodesic((3.0, 0.0, 2.0), (30.0, 0.0, 30.0)).status == "goal_off_navmesh"
    # near the wall: snapped onto the floor, at least a radius away from the wall
    snapped = nav.snap((0.02, 1.0, 2.0))
    assert snapped is not None and nav.is_navigable(snapped) and snapped[0] >= AGENT.radius
    assert not nav.is_navigable((0.05, 0.0, 2.0))


def test_furniture_blocks_and_agent_height_clearance():
    # a table top at 0.75 m blocks the agent under it; a shelf at 2 m (above the agent) does not
    scene = box_room(
        6.0,
        4.0,
        objects=[((1.5, 0.75, 2.0), (1.0, 0.05, 1.0), 9), ((4.5, 2.0, 2.0), (1.0, 0.05, 1.0), 10)],
        agent=AGENT,
    )
    nav = scene.navgrid
    assert not nav.is_navigable((1.5, 0.0, 2.0))
    assert nav.is_navigable((4.5, 0.0, 2.0))


def test_move_forward_and_collision_sliding():
    nav = box_room(6.0, 4.0, agent=AGENT).navgrid
    spec = ActionSpec()
    state = AgentState(np.array([3.0, 0.0, 2.0]), 0.0)
    moved, collided = apply_action(nav, state, "move_forward", spec)
    np.testing.assert_allclose(moved.position, [3.0, 0.0, 1.75], atol=1e-6)
    assert not collided
    turned, _ = apply_action(nav, state, "turn_left", spec)
    assert turned.yaw == pytest.approx(math.radians(30))
    # walking diagonally into the z=0 wall slides along it (x keeps changing)
    state = AgentState(np.array([3.0, 0.0, AGENT.radius + 0.1]), math.radians(45))
    for _ in range(4):
        state, collided = apply_action(nav, state, "move_forward", spec)
    assert collided
    assert state.position[0] < 3.0 - 0.4  # slid toward -x
    assert nav.is_navigable(state.position)
    with pytest.raises(ValueError, match="unknown action"):
        apply_action(nav, state, "jump", spec)


def test_greedy_follower_reaches_goals_in_a_house():
    house = generate_house(1)
    nav = house.navgrid
    rng = np.random.default_rng(0)
    follower = GreedyFollower(nav, ActionSpec(), goal_radius=0.3)
    state = AgentState(nav.sample_navigable(rng), 0.0)
    for obj in house.objects[:5]:
        goals = np.array([v.position for v in obj.view_points])
        for _ in range(600):
            action = follower.next_action(state, goals)
            if action == "stop":
                break
            state, _ = apply_action(nav, state, action)
        assert nav.geodesic(state.position, goals).distance <= 0.3


def _quad(x0, x1, z0, z1, y0, y1=None):
    """Two triangles covering ``[x0, x1] x [z0, z1]``, rising linearly in x from ``y0`` to ``y1``."""
    y1 = y0 if y1 is None else y1
    a, b, c, d = (x0, y0, z0), (x1, y1, z0), (x1, y1, z1), (x0, y0, z1)
    return [np.array([a, b, c]), np.array([a, c, d])]


def test_grid_from_surface_triangles_follows_floor_levels():
    agent = AgentSpec(radius=0.2, cell_size=0.1)
    # ground floor 0..4 x 0..2, a ramp 4..6 rising to 1 m, an upper floor over 0..2 at 2.5 m
    surface = np.array(_quad(0, 4, 0, 2, 0.0) + _quad(4, 6, 0, 2, 0.0, 1.0) + _quad(0, 2, 0, 2, 2.5))
    bounds = np.array([[-1.0, 0.0, -1.0], [7.0, 3.0, 3.0]])
    ground = NavGrid.from_surface_triangles(surface, bounds, agent, floor_height=0.0)
    # cells whose centre is within 0.5 m of the floor level: x < 5.0 (ramp height 0.5 at x = 5)
    assert ground.navigable.sum() == 50 * 20
    assert ground.is_navigable((4.9, 7.0, 1.0)) and not ground.is_navigable((5.1, 0.0, 1.0))
    assert ground.heights[ground.cell_of((1.0, 0.0, 1.0))] == pytest.approx(0.0)  # not the upper floor
    assert ground.heights[ground.cell_of((4.55, 0.0, 1.0))] == pytest.approx(0.275)
    upper = NavGrid.from_surface_triangles(surface, bounds, agent, floor_height=2.5)
    assert upper.navigable.sum() == 20 * 20 and upper.heights[upper.cell_of((1.0, 0.0, 1.0))] == pytest.approx(2.5)
    # extra erosion removes the border cells closer than 0.15 m (1 cell at 0.1 m) to the edge
    eroded = NavGrid.from_surface_triangles(surface, bounds, agent, floor_height=2.5, erosion=0.15)
    assert eroded.navigable.sum() == 18 * 18
    assert upper.geodesic((0.5, 2.5, 0.5), (1.5, 2.5, 1.5)).distance == pytest.approx(np.sqrt(2))


def test_surface_rasterisation_in_chunks_matches_one_pass(monkeypatch):
    import memgym.scenes.nav_raster as nav_raster

    agent = AgentSpec(radius=0.2, cell_size=0.1)
    surface = np.array(_quad(0, 4, 0, 2, 0.0) + _quad(4, 6, 0, 2, 0.0, 1.0) + _quad(0, 2, 0, 2, 0.3))
    bounds = np.array([[-1.0, 0.0, -1.0], [7.0, 3.0, 3.0]])
    whole = NavGrid.from_surface_triangles(surface, bounds, agent, floor_height=0.0)
    monkeypatch.setattr(nav_raster, "RASTER_CHUNK", 7)
    chunked = NavGrid.from_surface_triangles(surface, bounds, agent, floor_height=0.0)
    np.testing.assert_array_equal(chunked.navigable, whole.navigable)
    np.testing.assert_array_equal(chunked.heights, whole.heights)
    assert whole.heights[whole.cell_of((1.0, 0.0, 1.0))] == pytest.approx(0.0)  # nearer than the 0.3 m deck


def test_island_points_near_are_sorted_and_stay_on_the_island():
    scene = box_room(8.0, 4.0, inner_walls=[((4.0, 1.25, 2.0), (0.1, 2.5, 4.0))], agent=AGENT)
    nav = scene.navgrid
    left = nav.island_of((1.0, 0.0, 2.0))
    assert left != nav.island_of((6.0, 0.0, 2.0))
    points = nav.island_points_near((4.3, 0.0, 2.0), left)
    assert len(points) and all(nav.island_of(p) == left for p in points)
    distances = np.hypot(points[:, 0] - 4.3, points[:, 2] - 2.0)
    assert np.all(np.diff(distances) >= 0) and distances.max() <= AGENT.snap_distance
    assert points[0][0] == pytest.approx(4.0 - 0.05 - clearance_reach(AGENT), abs=AGENT.cell_size)
    assert len(nav.island_points_near((30.0, 0.0, 2.0), left)) == 0


# ----- walls that touch, overlap or have no thickness: no answer may depend on tie-breaking --------
WALLS = {
    # (centre, size) of a wall across the 8 x 4 m room at x = 4, its bottom on the floor's top face
    "flush": ((4.0, 1.25, 2.0), (0.1, 2.5, 4.0)),  # ends flush with the outer walls' inner faces
    "overlapping": ((4.0, 1.2, 2.0), (0.1, 2.6, 4.4)),  # into the outer walls and the floor slab
    "zero-thickness": ((4.0, 1.25, 2.0), (0.0, 2.5, 4.0)),  # two coincident quads, on a cell boundary
    "zero-thickness on centres": ((4.025, 1.25, 2.0), (0.0, 2.5, 4.0)),  # through a column of cell centres
    "thinner than a cell": ((4.01, 1.25, 2.0), (0.02, 2.5, 4.0)),  # between two columns of centres
    "thick": ((4.0, 1.25, 2.0), (1.0, 2.5, 4.0)),  # its inside is on the floor, a column test's blind spot
}


def _rebuilt(scene, vertices=None, triangles=None):
    """The same scene with its vertices moved or its triangles reordered."""
    return MeshScene(
        scene.vertices if vertices is None else vertices,
        scene.triangles if triangles is None else triangles,
        scene.lookup,
        agent=AGENT,
        floor_height=0.0,
    )


@pytest.mark.parametrize("name", WALLS)
def test_walls_split_the_room_whatever_the_tie_breaking(name):
    (x, _, _), size = WALLS[name]
    scene = box_room(8.0, 4.0, inner_walls=[WALLS[name]], agent=AGENT)
    nav = scene.navgrid
    assert nav.num_islands == 2
    assert nav.geodesic((2.0, 0, 2.0), (6.0, 0, 2.0)).status == "unreachable"
    # the agent keeps its radius from the wall's faces (0.2 m + up to two 5 cm cells)
    half = size[0] / 2
    assert nav.is_navigable((x - half - 0.31, 0, 2.0)) and nav.is_navigable((x + half + 0.31, 0, 2.0))
    assert not nav.is_navigable((x - half - 0.19, 0, 2.0)) and not nav.is_navigable((x + half + 0.19, 0, 2.0))
    # the order of coincident faces, and sub-micrometre moves of every vertex, change nothing ...
    rng = np.random.default_rng(7)
    shuffled = _rebuilt(scene, triangles=scene.triangles[rng.permutation(len(scene.triangles))])
    np.testing.assert_array_equal(shuffled.navgrid.navigable, nav.navigable)
    # ... except that faces through cell centres may move to either side of them: one cell next to the wall
    cols = nav.origin[0] + (np.arange(nav.navigable.shape[1]) + 0.5) * nav.cell
    compared = slice(None) if name != "zero-thickness on centres" else np.abs(cols - x) > 0.3
    for _ in range(3):
        jitter = rng.uniform(-1e-6, 1e-6, scene.vertices.shape).astype(np.float32)
        moved = _rebuilt(scene, vertices=scene.vertices + jitter).navgrid
        assert moved.num_islands == 2
        np.testing.assert_array_equal(moved.navigable[:, compared], nav.navigable[:, compared])


def test_walls_meeting_flush_or_overlapping_seal_rooms():
    # along z = 2 a wall in two pieces, the left one flush with the outer wall, the right one overlapping
    # it; the wall along x = 4 stands flush on the first wall's face (z = 1.95)
    walls = [
        ((2.0, 1.25, 2.0), (4.0, 2.5, 0.1)),
        ((6.0, 1.2, 2.0), (4.4, 2.6, 0.1)),
        ((4.0, 1.25, 0.975), (0.1, 2.5, 1.95)),
    ]
    nav = box_room(8.0, 4.0, inner_walls=walls, agent=AGENT).navgrid
    assert nav.num_islands == 3
    assert len({nav.island_of((2.0, 0, 1.0)), nav.island_of((6.0, 0, 1.0)), nav.island_of((4.0, 0, 3.0))}) == 3
    assert nav.geodesic((1.0, 0, 3.0), (7.0, 0, 3.0)).distance == pytest.approx(6.0, abs=1e-9)


def test_zero_thickness_wall_is_walked_around():
    # the wall of test_geodesic_goes_around_a_wall with no thickness at all
    scene = box_room(8.0, 4.0, inner_walls=[((4.0, 1.25, 1.5), (0.0, 2.5, 3.0))], agent=AGENT)
    start, goal = np.array([3.7, 0.0, 1.0]), np.array([4.3, 0.0, 1.0])
    result = scene.geodesic(start, goal)
    corner = np.array([4.0, 3.0 + clearance_reach(AGENT)])  # every point of its cells keeps the radius
    bound = np.linalg.norm(corner - start[[0, 2]]) + np.linalg.norm(goal[[0, 2]] - corner)
    assert result.status == "ok"
    assert bound - 0.05 <= result.distance <= bound * 1.1  # the grid keeps up to 1.5 cells more
    assert result.path[:, 2].max() > 3.0


def test_zero_thickness_wall_under_hm3d_mesh_navigation(tmp_path):
    from memgym.scenes.hm3d import HM3DScene, export_hm3d

    room = box_room(4.0, 3.0, inner_walls=[((2.0, 1.25, 0.6), (0.0, 2.5, 1.2))], agent=AGENT)
    scene = HM3DScene.load(export_hm3d(room, tmp_path / "00001-WALL", "WALL"), navigation="mesh", agent=AGENT)
    start, goal = np.array([1.7, 0.0, 0.6]), np.array([2.3, 0.0, 0.6])  # 0.6 m apart through the wall
    # around the wall's end: through (2, 1.2 + radius) at best
    assert scene.geodesic_distance(start, goal) >= 2 * math.hypot(0.3, 0.6 + AGENT.radius) - 0.05 > 1.6


def _slab_through_centres(y0: float, y1: float) -> np.ndarray:
    """The slab ``[0, 4] x [y0, y1] x [0, 3]`` as triangles ``(T, 3, 3)``, counter-clockwise seen
    from outside. Its top's edges and vertices run through the centres of 0.125 m cells from
    x, z = -0.25 (exact binary fractions): a fan around a centre, an inner square along rows and
    columns of centres, diagonals through centres. Its bottom is two triangles, so a top counted
    twice or not at all at a centre does not cancel out."""
    c = (2.0625, 1.5625)
    inner = [(1.0625, 0.5625), (3.0625, 0.5625), (3.0625, 2.5625), (1.0625, 2.5625)]
    outer = [(0.0, 0.0), (4.0, 0.0), (4.0, 3.0), (0.0, 3.0)]
    top = []
    for i in range(4):
        (a, b), (p, q) = (inner[i], inner[(i + 1) % 4]), (outer[i], outer[(i + 1) % 4])
        top += [(c, a, b), (p, q, b), (p, b, a)]
    bottom = [(outer[0], outer[1], outer[2]), (outer[0], outer[2], outer[3])]
    tri = []
    for y, up, faces in ((y1, True, top), (y0, False, bottom)):
        for t in faces:
            t = np.array([(x, y, z) for x, z in t])
            normal_y = np.cross(t[1] - t[0], t[2] - t[0])[1]
            tri.append(t if (normal_y > 0) == up else t[[0, 2, 1]])
    for (ax, az), (bx, bz) in zip(outer, outer[1:] + outer[:1]):  # the sides close the slab
        tri += [
            np.array([(ax, y0, az), (bx, y1, bz), (bx, y0, bz)]),
            np.array([(ax, y0, az), (ax, y1, az), (bx, y1, bz)]),
        ]
    return np.array(tri)


def test_solids_triangulated_through_cell_centres_leave_no_holes():
    # each vertical line crosses each face exactly once: a centre on a shared edge or vertex counted
    # twice (or not at all) would read as inside the ceiling slab (or as no floor)
    from memgym.scenes import meshes

    agent = AgentSpec(radius=0.25, cell_size=0.125)
    t = 0.25
    walls = [((-t / 2, 3.0, 1.5), (t, 2.7, 3.0 + 2 * t)), ((4 + t / 2, 3.0, 1.5), (t, 2.7, 3.0 + 2 * t))]
    walls += [((2.0, 3.0, -t / 2), (4.0 + 2 * t, 2.7, t)), ((2.0, 3.0, 3 + t / 2), (4.0 + 2 * t, 2.7, t))]
    walls = [meshes.box((x, y - 1.65, z), size, (1, 1, 1), 3) for (x, y, z), size in walls]
    plain = [meshes.box((2.0, -0.1, 1.5), (4.0, 0.2, 3.0), (1, 1, 1), 1)]
    plain.append(meshes.box((2.0, 2.6, 1.5), (4.0, 0.2, 3.0), (1, 1, 1), 2))
    bounds = np.array([[-t, -0.2, -t], [4 + t, 2.7, 3 + t]])
    wall_tri = np.concatenate([w.vertices[w.triangles] for w in walls])
    reference = NavGrid.from_mesh(
        np.concatenate([wall_tri] + [p.vertices[p.triangles] for p in plain]), bounds, agent, 0.0
    )
    fans = np.concatenate([wall_tri, _slab_through_centres(-0.2, 0.0), _slab_through_centres(2.5, 2.7)])
    nav = NavGrid.from_mesh(fans, bounds, agent, 0.0)
    assert nav.heights.min() == 0.0 == nav.heights.max()
    # the floor cells whose every point keeps a radius from the walls: centres 3 cells (0.3125 m) in or more
    assert reference.navigable.sum() == (32 - 6) * (24 - 6)
    np.testing.assert_array_equal(nav.navigable, reference.navigable)


def test_subdividing_the_mesh_changes_nothing():
    import trimesh

    scene = box_room(8.0, 4.0, inner_walls=[WALLS["flush"], ((2.0, 1.25, 3.0), (0.0, 2.5, 2.0))], agent=AGENT)
    vertices, triangles = scene.vertices.astype(np.float64), scene.triangles
    for _ in range(3):  # each triangle into 4, three times: 64 for each, with many shared edges
        vertices, triangles = trimesh.remesh.subdivide(vertices, triangles)
    fine = NavGrid.from_mesh(vertices[triangles], scene.bounds(), AGENT, 0.0)
    np.testing.assert_array_equal(fine.navigable, scene.navgrid.navigable)
    np.testing.assert_array_equal(fine.heights, scene.navgrid.heights)


def test_room_of_one_sided_surfaces_like_a_scan():
    # a scan has no closed solids: one quad per floor, ceiling and wall, facing into the room
    def quad(a, b, c, d):  # counter-clockwise seen from the side it faces
        return [np.array([a, b, c]), np.array([a, c, d])]

    w, d, h = 6.0, 4.0, 2.5
    tri = quad((0, 0, 0), (0, 0, d), (w, 0, d), (w, 0, 0)) + quad((0, h, 0), (w, h, 0), (w, h, d), (0, h, d))
    tri += quad((0, 0, 0), (w, 0, 0), (w, h, 0), (0, h, 0)) + quad((0, 0, d), (0, h, d), (w, h, d), (w, 0, d))
    tri += quad((0, 0, 0), (0, h, 0), (0, h, d), (0, 0, d)) + quad((w, 0, 0), (w, 0, d), (w, h, d), (w, h, 0))
    tri = np.array(tri, float)
    normals = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    centre = np.array([w / 2, h / 2, d / 2])
    assert (np.einsum("ij,ij->i", normals, centre - tri[:, 0]) > 0).all()  # every face looks into the room
    bounds = np.array([[0.0, 0.0, 0.0], [w, h, d]])
    nav = NavGrid.from_mesh(tri, bounds, AGENT, 0.0)
    # the walls lie on the grid's edge and still keep the agent a radius away
    assert nav.num_islands == 1 and nav.navigable.sum() == (120 - 10) * (80 - 10)  # centres >= 0.2354 m in
    assert nav.navigable.sum() == box_room(w, d, agent=AGENT).navgrid.navigable.sum()
    # a one-sided partition (facing -x) across the room at x = 3 splits it
    split = NavGrid.from_mesh(
        np.concatenate([tri, quad((3, 0, 0), (3, 0, d), (3, h, d), (3, h, 0))]), bounds, AGENT, 0.0
    )
    assert split.num_islands == 2 and split.island_of((2.0, 0, 2.0)) != split.island_of((4.0, 0, 2.0))


def test_knight_moves_join_cells_only_over_free_cells():
    """The cell graph holds the 8 neighbours and the 8 knight moves (length sqrt(5) cells), a knight
    move only when both cells its segment crosses are navigable (no corner of a blocked cell cut)."""
    agent = AgentSpec(radius=0.0, cell_size=0.1)
    walkable = np.ones((6, 6), bool)
    open_grid = NavGrid(walkable, np.zeros((6, 6), np.float32), (0.0, 0.0), agent, 0.0, erosion=0.0)
    graph, node = open_grid._walk.graph, open_grid._walk.node_of
    assert graph[node[2, 2], node[3, 4]] == pytest.approx(0.1 * math.sqrt(5))
    assert graph[node[2, 2], node[4, 1]] == pytest.approx(0.1 * math.sqrt(5))
    walkable[2, 3] = False  # crossed by the move (2, 2) -> (3, 4), not by (2, 2) -> (4, 1)
    blocked = NavGrid(walkable, np.zeros((6, 6), np.float32), (0.0, 0.0), agent, 0.0, erosion=0.0)
    graph, node = blocked._walk.graph, blocked._walk.node_of
    assert graph[node[2, 2], node[3, 4]] == 0 and graph[node[2, 2], node[4, 1]] > 0
    # on a graph of 16 neighbours the field's metric is within 3% of the straight line
    node = open_grid._walk.node_of
    dist, _, _ = open_grid._walk.field((int(node[0, 0]),))
    assert dist[node[5, 2]] == pytest.approx(0.1 * (math.sqrt(5) * 2 + 1), rel=1e-9)
    assert dist[node[5, 2]] <= 1.03 * 0.1 * math.hypot(5, 2)
