import numpy as np
import pytest

from memgym.scenes.coverage import InstanceCoverage
from memgym.scenes.mesh_scene import MeshScene, PerTriangleLookup, PinholeIntrinsics, SurfaceLookup
from memgym.scenes.poses import heading_to, quat_from_yaw
from memgym.scenes.spec import SceneSpec, load_scene

INTRINSICS = PinholeIntrinsics(48, 36, 90.0)


@pytest.fixture(scope="module")
def scene():
    return load_scene(SceneSpec(seed=0))


def _poses(scene, count=40):
    """Random standing poses plus poses right at objects (eye inside or beside their boxes)."""
    rng = np.random.default_rng(0)
    nav = scene.navgrid
    eyes, rotations = [], []
    for _ in range(count):
        eyes.append(nav.sample_navigable(rng) + [0.0, 1.25, 0.0])
        rotations.append(quat_from_yaw(rng.uniform(-np.pi, np.pi)))
    for obj in scene.objects[:20]:
        centre = np.asarray(obj.position, float)
        for offset in ([0.0, 0.0, 0.0], [0.3, 0.2, -0.1], [0.6, 0.5, 0.0]):
            eye = centre + offset
            eyes.append(eye)
            rotations.append(quat_from_yaw(heading_to(eye + [0.2, 0, 0.1], centre) + rng.uniform(-1, 1)))
    return np.array(eyes), np.array(rotations)


def _full_render_counts(scene, eye, rotation, min_pixels, ids):
    counts = np.bincount(scene.render_semantic(eye, rotation, INTRINSICS).ravel())
    return {i: int(counts[i]) for i in ids if i < len(counts) and counts[i] >= min_pixels}


@pytest.mark.parametrize("fraction", [0.05, 1e-9])
def test_counts_equal_full_renders(scene, fraction):
    """Culled, batched counts equal a full-frame render's, down to instances of one pixel."""
    eyes, rotations = _poses(scene)
    ids = sorted({o.semantic_id for o in scene.objects})
    coverage = InstanceCoverage(scene, INTRINSICS)
    min_pixels = fraction * coverage.size
    got = coverage.counts(eyes, rotations, min_pixels, ids)
    expected = [_full_render_counts(scene, e, r, min_pixels, ids) for e, r in zip(eyes, rotations)]
    assert got == expected
    assert sum(map(len, expected)) > 20  # the poses do see objects
    assert coverage.counts(eyes[:0], rotations[:0], min_pixels, ids) == []


def test_instance_boxes_bound_their_triangles(scene):
    ids, boxes = scene.instance_boxes()
    assert np.all(np.diff(ids) > 0) and ids[0] > 0
    per_triangle = scene.lookup.semantic_ids
    for k in (0, len(ids) // 2, len(ids) - 1):
        corners = scene.vertices[scene.triangles[per_triangle == ids[k]]].reshape(-1, 3)
        np.testing.assert_array_equal(boxes[k], [corners.min(0), corners.max(0)])


class _Textured(SurfaceLookup):
    """Per-triangle values behind a lookup that is not a PerTriangleLookup (as HM3D's textures)."""

    def __init__(self, inner: PerTriangleLookup) -> None:
        self.inner = inner

    def albedo(self, primitive_ids, uvs):
        return self.inner.albedo(primitive_ids, uvs)

    def semantic(self, primitive_ids, uvs):
        return self.inner.semantic(primitive_ids, uvs)

    def arrays(self):
        return self.inner.arrays()


def test_scenes_without_per_triangle_ids_are_rendered_in_full(scene):
    textured = MeshScene(scene.vertices, scene.triangles, _Textured(scene.lookup), floor_height=scene.floor_height)
    assert textured.instance_boxes() is None
    eyes, rotations = _poses(scene, count=5)
    ids = sorted({o.semantic_id for o in scene.objects})
    expected = InstanceCoverage(scene, INTRINSICS).counts(eyes, rotations, 30, ids)
    assert InstanceCoverage(textured, INTRINSICS).counts(eyes, rotations, 30, ids) == expected
