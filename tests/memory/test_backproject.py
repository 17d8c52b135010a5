"""Back-projection against hand-built box scenes: points on the surface, a fused box's centre."""

from __future__ import annotations

import numpy as np
import pytest

from memgym.memory.embodied.backproject import (
    CameraModel,
    backproject,
    remove_outliers,
    valid_depth,
    voxel_downsample,
    voxel_keys,
)
from memgym.memory.embodied.detections import GroundTruthDetector
from memgym.memory.embodied.object_map import ObjectMap
from memgym.memory.embodied.perception import Perception
from memgym.sensors.camera import CameraConfig
from tests.support.box_scene import box_scene, views_around

CAMERA = CameraConfig(width=96, height=72, hfov=80.0, sensor_height=1.25)
MODEL = CameraModel(hfov=80.0, sensor_height=1.25)
CENTRE, SIZE = (1.0, 0.3, -2.0), (0.8, 0.6, 0.4)


@pytest.fixture(scope="module")
def scene():
    return box_scene([(CENTRE, SIZE, 7)])


def test_masked_pixels_land_on_the_box_surface(scene):
    view = views_around(scene, CENTRE, 2.5, 3, CAMERA)[1]
    pixels = np.flatnonzero((view["semantic"] == 7) & valid_depth(view["depth"], MODEL))
    assert len(pixels) > 100
    points = backproject(view["depth"], pixels, view["position"], view["rotation"], MODEL)
    low, high = np.array(CENTRE) - np.array(SIZE) / 2, np.array(CENTRE) + np.array(SIZE) / 2
    assert np.all(points >= low - 2e-3) and np.all(points <= high + 2e-3)
    on_a_face = np.min(np.abs(np.concatenate([points - low, points - high], axis=1)), axis=1)
    assert on_a_face.max() < 2e-3


def test_fused_box_centre_and_size_within_a_few_cm(scene):
    perception = Perception(GroundTruthDetector({7: "box"}), MODEL, stride=1, voxel=0.02)
    objects = ObjectMap(voxel=0.02)
    for k, view in enumerate(views_around(scene, CENTRE, 2.5, 12, CAMERA)):  # walking around it
        objects.add(perception.views(view, k))
    assert len(objects.instances) == 1
    instance = objects.instances[0]
    assert instance.label == "box" and sorted(instance.frames) == list(range(12))
    np.testing.assert_allclose(instance.location, CENTRE, atol=0.03)
    np.testing.assert_allclose(instance.box[1] - instance.box[0], SIZE, atol=0.05)


def test_one_view_sees_only_near_faces(scene):
    """A single view from +x sees the +x face and part of the top: the far edge is missing, so
    the estimate is biased towards the camera (why memories fuse many views)."""
    perception = Perception(GroundTruthDetector({7: "box"}), MODEL, stride=1, voxel=0.02)
    objects = ObjectMap(voxel=0.02)
    objects.add(perception.views(views_around(scene, CENTRE, 2.5, 4, CAMERA)[0], 0))
    location = np.array(objects.instances[0].location)
    np.testing.assert_allclose(location[[1, 2]], np.array(CENTRE)[[1, 2]], atol=0.03)
    assert CENTRE[0] < location[0] < CENTRE[0] + SIZE[0] / 2


def test_voxel_downsample_is_the_per_cell_mean():
    rng = np.random.default_rng(0)
    points = rng.uniform(-1, 1, (500, 3))
    down = voxel_downsample(points, 0.25)
    cells: dict[tuple, list] = {}
    for p in points:
        cells.setdefault(tuple(np.floor(p / 0.25).astype(int)), []).append(p)
    reference = np.array([np.mean(cells[c], axis=0) for c in cells])
    assert down.shape == reference.shape
    np.testing.assert_allclose(np.sort(down, axis=0), np.sort(reference, axis=0), atol=1e-12)
    assert np.all(np.diff(voxel_keys(down, 0.25)) > 0)


def test_statistical_outlier_removal_drops_a_stray_point():
    rng = np.random.default_rng(1)
    cloud = np.concatenate([rng.normal(0, 0.05, (300, 3)), [[3.0, 3.0, 3.0]]])
    kept = remove_outliers(cloud)
    assert len(kept) < len(cloud) and not np.any(np.all(kept == [3.0, 3.0, 3.0], axis=1))


def test_views_from_four_sides_fuse_into_one_box(scene):
    """Faces seen from 90 degrees apart share few cells; a new face inside the box fused so far joins it."""
    perception = Perception(GroundTruthDetector({7: "box"}), MODEL, stride=1, voxel=0.02)
    objects = ObjectMap(voxel=0.02)
    for k, view in enumerate(views_around(scene, CENTRE, 2.5, 4, CAMERA)):
        objects.add(perception.views(view, k))
    assert len(objects.instances) == 1
    np.testing.assert_allclose(objects.instances[0].location, CENTRE, atol=0.03)
