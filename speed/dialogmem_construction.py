"""DialogMem episode construction (content, dialogue turns, realisation + validation, task specs
and filters) per second vs generating the traversal it is built on; the traversal's visibility
counts vs full-frame semantic renders; and the time of ``DialogMem-v0``'s first reset.

``python -m speed dialogmem_construction [--goals 8] [--no-reset]``.

1. The baseline is the simulator work of one episode (sampling goals, walking them, counting the
   visible objects); the candidate is everything DialogMem adds on top of a finished traversal with
   the template realiser. A ratio far above 1 means dataset generation time is dominated by the
   simulator, not by the dialogue and task pipeline.
2. Visibility of the traversal's frames at the default visibility resolution (64 x 64): the
   :class:`InstanceCoverage` counts the traversal uses (pixels inside projected object boxes, poses
   in one batch) vs a full-frame semantic render per frame; both must give the same objects and
   fractions.
3. Real-house clutter (``house.clutter=hm3d``, the default of ``memgym generate dialogmem``) against
   the same seed's house without it: building the house (furnishing, view points), walking the
   traversal, constructing the episode, and rendering its frames (RGB-D + semantic, 128 x 128), with
   object and triangle counts.
4. ``gymnasium.make("memgym/DialogMem-v0").reset(seed=0)`` in a fresh Python process (best of two):
   seconds importing gymnasium and memgym, making the env, and the reset split into scene build,
   traversal, dialogue construction and the rest (plugin imports on the first registry lookup,
   bookkeeping).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

import numpy as np

from memgym.datasets.dialogmem.episode import build_episode
from memgym.datasets.traversal import TraversalConfig, generate_traversal, visible_objects
from memgym.scenes.coverage import InstanceCoverage
from memgym.scenes.poses import quat_from_yaw, yaw_from_quat
from memgym.scenes.spec import SceneSpec, load_scene
from memgym.sensors.camera import CameraConfig, RGBDCamera
from speed.harness import Timing, report, time_best


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m speed dialogmem_construction")
    parser.add_argument("--goals", type=int, default=8, help="navigation goals per traversal")
    parser.add_argument("--no-reset", action="store_true", help="skip the fresh-process reset timing")
    args = parser.parse_args(argv)

    spec = SceneSpec(seed=0)
    scene = load_scene(spec)
    config = TraversalConfig(min_goals=args.goals, max_goals=args.goals)
    camera = CameraConfig(width=64, height=64)
    traversal = generate_traversal(scene, spec, np.random.default_rng(0), config, camera)

    def traverse() -> None:
        generate_traversal(scene, spec, np.random.default_rng(0), config, camera)

    def construct() -> None:
        build_episode(episode_id="bench", objects=scene.objects, traversal=traversal, rng=np.random.default_rng(0))

    episode = build_episode(
        episode_id="bench", objects=scene.objects, traversal=traversal, rng=np.random.default_rng(0)
    )
    baseline = time_best("traversal generation", traverse, units=1, unit_name="episodes", repeats=2)
    candidate = time_best("dialogue + items construction", construct, units=1, unit_name="episodes", repeats=5)
    report(
        "DialogMem episode construction",
        candidate,
        baseline,
        [f"episode: {len(traversal.frames)} frames, {len(episode.dialogue)} turns, {len(episode.items)} items"],
    )
    visibility(scene, spec, args.goals)
    clutter(args.goals)
    if not args.no_reset:
        reset_in_fresh_process()


def visibility(scene, spec: SceneSpec, goals: int) -> None:
    """Section 2: the traversal's visibility counts vs one full-frame semantic render per frame."""
    config = TraversalConfig(min_goals=goals, max_goals=goals)
    traversal = generate_traversal(scene, spec, np.random.default_rng(1), config)  # default 256 px camera
    sensor = RGBDCamera(CameraConfig(width=config.visibility_width, height=config.visibility_width))
    coverage = InstanceCoverage(scene, sensor.intrinsics)
    ids = sorted({o.semantic_id for o in scene.objects})
    eyes = np.stack([sensor.camera_position(np.asarray(f.position)) for f in traversal.frames])
    rotations = np.stack([quat_from_yaw(yaw_from_quat(np.asarray(f.rotation))) for f in traversal.frames])
    threshold = config.min_coverage * coverage.size

    def full() -> list[dict[str, float]]:
        return [
            visible_objects(scene.render_semantic(eye, rotation, sensor.intrinsics), scene, config.min_coverage)
            for eye, rotation in zip(eyes, rotations)
        ]

    def culled() -> list[dict[int, int]]:
        return [
            c
            for k in range(0, len(eyes), 256)
            for c in coverage.counts(eyes[k : k + 256], rotations[k : k + 256], threshold, ids)
        ]

    expected = full()
    got = [
        {scene.object_by_semantic_id(i).object_id: round(n / coverage.size, 4) for i, n in c.items()} for c in culled()
    ]
    if got != expected:
        raise AssertionError("visibility counts differ from the full-frame renders")
    frames = len(eyes)
    baseline = time_best("full-frame semantic renders", full, units=frames, unit_name="frames", repeats=2)
    candidate = time_best("culled batched counts (traversal)", culled, units=frames, unit_name="frames", repeats=2)
    report(
        "Traversal visibility (64 x 64, identical results)",
        candidate,
        baseline,
        [f"{frames} frames, {sum(map(len, expected))} object sightings"],
    )


def clutter(goals: int) -> None:
    """Section 3: a cluttered house vs the same seed's house without clutter, built and used end to end."""
    from memgym.scenes.procedural import HouseConfig, generate_house

    config = TraversalConfig(min_goals=goals, max_goals=goals)
    camera = CameraConfig(width=128, height=128)
    sizes: dict[str, tuple[int, int, int]] = {}

    def episode(kind: str) -> None:
        house_config = HouseConfig(clutter=kind)
        spec = SceneSpec(seed=0, options={"house": {"clutter": kind}})
        house = generate_house(0, house_config)
        traversal = generate_traversal(house, spec, np.random.default_rng(0), config, camera)
        build_episode(episode_id="bench", objects=house.objects, traversal=traversal, rng=np.random.default_rng(0))
        sensor = RGBDCamera(camera)
        positions, yaws = traversal.positions(), traversal.yaws()
        for k in range(0, len(positions), 16):
            sensor.render_batch(house, positions[k : k + 16], yaws[k : k + 16])
        sizes[kind] = (len(house.objects), house.soup.num_triangles, len(traversal.frames))

    wall = dict.fromkeys(("none", "hm3d"), float("inf"))
    cpu = dict(wall)
    for _ in range(2):  # interleaved, best of two each: a busy machine slows both alike
        for kind in wall:
            start = (time.perf_counter(), time.process_time())
            episode(kind)
            wall[kind] = min(wall[kind], time.perf_counter() - start[0])
            cpu[kind] = min(cpu[kind], time.process_time() - start[1])
    report(
        "Real-house clutter: house build + traversal + construction + 128 x 128 render",
        Timing("house.clutter=hm3d", wall["hm3d"], 1, "episodes"),
        Timing("house.clutter=none", wall["none"], 1, "episodes"),
        [f"{k}: {n} objects, {t} triangles, {f} frames, {cpu[k]:.1f} CPU s" for k, (n, t, f) in sizes.items()]
        + [f"CPU time ratio: {cpu['none'] / cpu['hm3d']:.2f}x the baseline's rate"],
    )


_RESET_SCRIPT = """
import json, sys, time
def now():
    return time.perf_counter(), time.process_time()
def since(start):
    return [a - b for a, b in zip(now(), start)]
t0 = now()
import gymnasium, memgym
out = {"import gymnasium + memgym": since(t0)}
t0 = now()
env = gymnasium.make("memgym/DialogMem-v0")
out["make"] = since(t0)
from memgym.envs import dialogmem_env
from memgym.scenes.procedural import ProceduralHouse
phases = {"scene build": [0.0, 0.0], "traversal": [0.0, 0.0], "dialogue construction": [0.0, 0.0]}
def timed(name, fn):
    def call(*args, **kwargs):
        start = now()
        try:
            return fn(*args, **kwargs)
        finally:
            phases[name] = [a + b for a, b in zip(phases[name], since(start))]
    return call
build = ProceduralHouse.from_spec.__func__
ProceduralHouse.from_spec = classmethod(lambda cls, spec: timed("scene build", build)(cls, spec))
dialogmem_env.generate_traversal = timed("traversal", dialogmem_env.generate_traversal)
dialogmem_env.build_episode = timed("dialogue construction", dialogmem_env.build_episode)
t0 = now()
env.reset(seed=0)
out["reset"] = since(t0)
json.dump({**out, **phases}, sys.stdout)
"""


def reset_in_fresh_process() -> None:
    """Section 3: ``DialogMem-v0``'s first ``reset(seed=0)`` in a fresh process, by phase."""
    runs = []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", _RESET_SCRIPT], capture_output=True, text=True, check=True)
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    names = [*runs[0], "rest of reset (plugin imports, bookkeeping)"]
    best = dict(min(runs, key=lambda r: r["reset"][0]))
    inside = [sum(best[k][i] for k in ("scene build", "traversal", "dialogue construction")) for i in (0, 1)]
    best["rest of reset (plugin imports, bookkeeping)"] = [best["reset"][i] - inside[i] for i in (0, 1)]
    lines = [
        "== DialogMem-v0 first reset(seed=0), fresh process (best of 2) ==",
        f"{'':<44} {'wall s':>8} {'CPU s':>8}",
    ]
    for name in names:
        lines.append(f"{name:<44} {best[name][0]:8.2f} {best[name][1]:8.2f}")
    print("\n".join(lines), flush=True)
