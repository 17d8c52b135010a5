"""RGB-D + semantic frames/s on a generated house vs the bare Embree ray cast of the same camera;
geodesic queries/s.

``python -m speed embodied_render [--frames N] [--size 256] [--batch 16]``. The candidate
renders the full observation (ray generation, cast, albedo lookup, shading, depth, instance ids)
at the poses of a traversal, one pose per call (``RGBDCamera.observe``) and ``--batch`` poses per
call (``RGBDCamera.render_batch``: one cast); the baseline casts the same pre-built rays, grouped
the same way, and does nothing else: each ratio is the fraction of the ray-throughput bound the
renderer reaches. The same frames are also rendered from the house exported to HM3D files and
read back (texture look-ups for colours and instance ids), and served again by a
:class:`~memgym.sensors.frame_cache.FrameCache`. Rounds of all variants are interleaved and the best
of each kept, so that a shared machine's load hits them alike; the load average is printed, and
the CPU time of each variant (all threads): on a saturated machine the wall-clock ratio tends to
the CPU-time ratio, which load hardly moves.
Geodesic queries are timed cold (a new goal per query: one Dijkstra + path + string pulling) and
warm (one goal, many starts), and the navigation grid's build from the house's triangles.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable

import numpy as np

from memgym.datasets.traversal import TraversalConfig, generate_traversal
from memgym.scenes.hm3d import HM3DScene, export_hm3d
from memgym.scenes.mesh_scene import MeshScene
from memgym.scenes.poses import quat_from_yaw, quat_to_matrix, yaw_from_quat
from memgym.scenes.spec import SceneSpec, load_scene
from memgym.sensors.camera import CameraConfig, RGBDCamera
from memgym.sensors.frame_cache import FrameCache
from speed.harness import Timing, report, time_best


def render_timings(
    scene: MeshScene, sensor: RGBDCamera, positions: np.ndarray, yaws: np.ndarray, batch: int, rounds: int, name: str
) -> dict[str, tuple[Timing, float]]:
    """Best-of-``rounds`` interleaved timings of rendering the poses one and ``batch`` per call, and
    of the bare cast of the same rays grouped the same way: ``label -> (wall-clock timing, fewest
    CPU seconds of the process, all threads)``."""
    camera_rays = sensor.intrinsics.camera_rays().reshape(-1, 3)
    rays = np.empty((len(yaws), len(camera_rays), 6), np.float32)
    for r, position, yaw in zip(rays, positions, yaws):
        r[:, :3] = sensor.camera_position(position)
        r[:, 3:] = camera_rays @ quat_to_matrix(quat_from_yaw(yaw)).T
    starts = range(0, len(yaws), batch)
    variants: dict[str, Callable[[], object]] = {
        "render, 1 pose per call": lambda: [sensor.observe(scene, p, y) for p, y in zip(positions, yaws)],
        "bare cast, 1 pose per call": lambda: [scene.cast_depth(r) for r in rays],
        f"render, {batch} poses per call": lambda: [
            sensor.render_batch(scene, positions[i : i + batch], yaws[i : i + batch]) for i in starts
        ],
        f"bare cast, {batch} poses per call": lambda: [
            scene.cast_depth(rays[i : i + batch].reshape(-1, 6)) for i in starts
        ],
    }
    for fn in variants.values():
        fn()  # warm up (BVH build, caches)
    best: dict[str, tuple[Timing, float]] = {}
    for _ in range(rounds):
        for label, fn in variants.items():
            cpu = time.process_time()
            t = time_best(f"{name}: {label}", fn, units=len(yaws), unit_name="frames", repeats=1)
            cpu = time.process_time() - cpu
            if label not in best:
                best[label] = (t, cpu)
            best[label] = (min(best[label][0], t, key=lambda x: x.seconds), min(best[label][1], cpu))
    return best


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m speed embodied_render")
    parser.add_argument("--frames", type=int, default=64)
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--queries", type=int, default=40)
    args = parser.parse_args(argv)
    load_before = os.getloadavg()

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
    positions = np.array([f.position for f in frames], float)
    yaws = np.array([yaw_from_quat(np.asarray(f.rotation)) for f in frames])
    sensor = RGBDCamera(camera)
    with tempfile.TemporaryDirectory() as folder:
        hm3d = HM3DScene.load(export_hm3d(scene, folder, "house"))
    timings = {
        name: render_timings(mesh, sensor, positions, yaws, args.batch, args.rounds, name)
        for name, mesh in (("house", scene), ("HM3D files", hm3d))
    }
    cache = FrameCache()
    cache.render(sensor, scene, positions, yaws)
    cached = time_best(
        "house: from a FrameCache (hit)",
        lambda: cache.render(sensor, scene, positions, yaws),
        units=len(yaws),
        unit_name="frames",
    )
    lines = []
    for best in timings.values():
        for n in (1, args.batch):
            plural = "" if n == 1 else "s"
            (render, render_cpu), (bare, bare_cpu) = (
                best[f"render, {n} pose{plural} per call"],
                best[f"bare cast, {n} pose{plural} per call"],
            )
            lines.append(
                f"{render.label:<44} {render.rate:8.1f} frames/s  {bare.rate:8.1f} bare cast  ({render.rate / bare.rate:.2f}x); "
                f"CPU {render_cpu / render.units * 1e3:.2f} vs {bare_cpu / bare.units * 1e3:.2f} ms/frame ({bare_cpu / render_cpu:.2f}x)"
            )
    lines.append(f"{cached.label:<44} {cached.rate:8.1f} frames/s")
    house = timings["house"]
    candidate = house[f"render, {args.batch} poses per call"][0]
    baseline = house[f"bare cast, {args.batch} poses per call"][0]
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
    load_after = os.getloadavg()
    report(
        f"embodied_render: {args.size}x{args.size} RGB-D+semantic frames vs the ray-throughput bound",
        candidate,
        baseline,
        extra=[
            *lines,
            f"{cold_t.label:<44} {cold_t.rate:8.1f} queries/s  ({nav.navigable.sum()} navigable cells)",
            f"{warm_t.label:<44} {warm_t.rate:8.1f} queries/s",
            f"{build_t.label:<44} {build_t.seconds * 1e3:8.1f} ms  ({len(scene.triangles)} triangles)",
            f"machine: {os.cpu_count()} CPUs, load average {load_before[0]:.2f} at the start, {load_after[0]:.2f} at the end",
        ],
    )
