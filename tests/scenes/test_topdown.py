import numpy as np

from memgym.scenes.procedural import generate_house
from memgym.scenes.topdown import BLOCKED, NAVIGABLE, topdown_map


def test_map_shows_floor_objects_trajectory_and_pose():
    house = generate_house(0)
    nav = house.navgrid
    plain = topdown_map(house, labels=False, pixels_per_meter=20)
    rows, cols = (round(n * nav.cell * 20) for n in nav.navigable.shape)  # 20 pixels a metre
    assert plain.dtype == np.uint8 and plain.shape == (rows, cols, 3)
    colours = {tuple(c) for c in plain.reshape(-1, 3)[::7]}
    assert NAVIGABLE in colours and BLOCKED in colours
    start, end = nav.sample_navigable(np.random.default_rng(0)), nav.sample_navigable(np.random.default_rng(1))
    path = house.shortest_path(start, end)
    drawn = topdown_map(house, trajectory=path, pose=(end, 0.0), labels=True, pixels_per_meter=20)
    assert drawn.shape == plain.shape
    pose_red = (drawn[..., 0] > 200) & (drawn[..., 1] < 60) & (drawn[..., 2] < 60)
    assert pose_red.any()
    # the pose marker is drawn where the end point is
    ys, xs = np.nonzero(pose_red)
    px = (end[0] - nav.origin[0]) * 20, (end[2] - nav.origin[1]) * 20
    assert abs(xs.mean() - px[0]) < 8 and abs(ys.mean() - px[1]) < 8
    assert (drawn != plain).sum() > 100  # trajectory and labels
