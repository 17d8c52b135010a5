"""RGB-D + semantic frames/s on a generated house vs the bare Embree ray cast of the same camera;
geodesic queries/s.

``python -m benchmarks embodied_render [--frames N] [--size 256]``. The candidate renders the full
observation (ray generation, cast, albedo lookup, shading, depth, instance ids) at the poses of a
traversal; the baseline casts the same pre-built rays and does nothing else: the ratio is the
fraction of the ray-throughput bound the renderer reaches. The same frames are also rendered from
the house exported to HM3D files and read back (texture look-ups for colours and instance ids).
Geodesic queries are timed cold (a new goal per query: one Dijkstra + path + string pulling) and
warm (one goal, many starts), and the navigation grid's build from the house's triangles.
"""

from __future__ import annotations

import argparse
import tempfile

import numpy as np

from benchmarks.harness import report, time_best
from memgym.datasets.traversal import TraversalConfig, generate_traversal
from memgym.scenes.hm3d import HM3DScene, export_hm3d
from memgym.scenes.poses import quat_from_yaw, quat_to_matrix, yaw_from_quat
from memgym.scenes.spec import SceneSpec, load_scene
from memgym.sensors.camera import CameraConfig, RGBDCamera


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks embodied_render")
    parser.add_argument("--frames", type=int, default=60)
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--queries", type=int, default=40)
    args = parser.parse_args(argv)

    spec = SceneSpec(seed=0)
    scene = load_scene(spec)
    camera = CameraConfig(width=args.size, height=args.size)
    traversal = generate_traversal(
        scene,
        spec,
        np.random.default_rng(0),
        TraversalConfig(min_goals=5, max_goals=5),
        CameraConfig(width=32, height=32),
    )
    frames = traversal.frames[:: max(1, len(traversal.frames) // args.frames)][: args.frames]
    poses = [(np.asarray(f.position), yaw_from_quat(np.asarray(f.rotation))) for f in frames]
    sensor = RGBDCamera(camera)
    camera_rays = camera.intrinsics.camera_rays().reshape(-1, 3)
    rays = []
    for position, yaw in poses:
        r = np.empty((len(camera_rays), 6), np.float32)
        r[:, :3] = sensor.camera_position(position)
        r[:, 3:] = camera_rays @ quat_to_matrix(quat_from_yaw(yaw)).T
        rays.append(r)

    def full() -> None:
        for position, yaw in poses:
            sensor.observe(scene, position, yaw)

    def bare() -> None:
        for r in rays:
            scene.cast_depth(r)

    full()  # warm up (BVH build, caches)
    # interleaved rounds, best of each: a shared machine's load then hits both alike
    rounds = [
        (
            time_best(
                f"RGB-D+semantic render {args.size}x{args.size}", full, units=len(poses), unit_name="frames", repeats=1
            ),
            time_best("bare Embree cast, same rays", bare, units=len(poses), unit_name="frames", repeats=1),
        )
        for _ in range(4)
    ]
    candidate = min((r[0] for r in rounds), key=lambda t: t.seconds)
    baseline = min((r[1] for r in rounds), key=lambda t: t.seconds)
    pixels = args.size * args.size

    # the same house read back from HM3D files: texture look-ups for colours and instance ids
    with tempfile.TemporaryDirectory() as folder:
        hm3d = HM3DScene.load(export_hm3d(scene, folder, "house"))

    def full_hm3d() -> None:
        for position, yaw in poses:
            sensor.observe(hm3d, position, yaw)

    full_hm3d()
    hm3d_t = min(
        (
            time_best("HM3D files, same frames", full_hm3d, units=len(poses), unit_name="frames", repeats=1)
            for _ in range(2)
        ),
        key=lambda t: t.seconds,
    )

    build_t = time_best("navigation grid build", scene._build_navgrid, units=1, unit_name="grids")
    nav = scene.navgrid
    rng = np.random.default_rng(1)
    starts = [nav.sample_navigable(rng) for _ in range(args.queries)]
    goals = [nav.sample_navigable(rng) for _ in range(args.queries)]
    nav._fields.clear()

    def cold() -> None:
        nav._fields.clear()
        for s, g in zip(starts, goals):
            nav.geodesic(s, g)

    def warm() -> None:
        for s in starts:
            nav.geodesic(s, goals[0])

    cold_t = time_best("geodesic, new goal each query", cold, units=len(starts), unit_name="queries")
    warm_t = time_best("geodesic, one goal, many starts", warm, units=len(starts), unit_name="queries")
    report(
        "embodied_render: observation frames vs the ray-throughput bound",
        candidate,
        baseline,
        extra=[
            f"bare cast: {baseline.rate * pixels / 1e6:.1f} M rays/s; render: {candidate.rate * pixels / 1e6:.1f} M rays/s",
            f"{hm3d_t.label:<40} {hm3d_t.rate:12.1f} frames/s  ({hm3d_t.rate / baseline.rate:.2f}x the bare cast)",
            f"{cold_t.label:<40} {cold_t.rate:12.1f} queries/s  ({nav.navigable.sum()} navigable cells)",
            f"{warm_t.label:<40} {warm_t.rate:12.1f} queries/s",
            f"{build_t.label:<40} {build_t.seconds * 1e3:12.1f} ms  ({len(scene.triangles)} triangles)",
        ],
    )
