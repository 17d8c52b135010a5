import math

import numpy as np
import pytest

from memgym.scenes.locomotion import ActionSpec, AgentState, GreedyFollower, apply_action
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
    # the path stays on navigable cells and passes through the gap
    assert all(scene.navgrid.line_of_sight(a, b) for a, b in zip(result.path[:-1], result.path[1:]))
    assert result.path[:, 2].max() > 3.0


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
    import memgym.scenes.navigation as navigation

    agent = AgentSpec(radius=0.2, cell_size=0.1)
    surface = np.array(_quad(0, 4, 0, 2, 0.0) + _quad(4, 6, 0, 2, 0.0, 1.0) + _quad(0, 2, 0, 2, 0.3))
    bounds = np.array([[-1.0, 0.0, -1.0], [7.0, 3.0, 3.0]])
    whole = NavGrid.from_surface_triangles(surface, bounds, agent, floor_height=0.0)
    monkeypatch.setattr(navigation, "_RASTER_CHUNK", 7)
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
    assert points[0][0] == pytest.approx(4.0 - 0.05 - AGENT.radius, abs=AGENT.cell_size)
    assert len(nav.island_points_near((30.0, 0.0, 2.0), left)) == 0
