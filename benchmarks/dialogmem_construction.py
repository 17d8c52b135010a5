"""DialogMem episode construction (content, dialogue turns, realisation + validation, task specs
and filters) per second vs generating the traversal it is built on.

``python -m benchmarks dialogmem_construction [--goals 8]``. The baseline is the simulator work of
one episode (sampling goals, walking them, rendering the visibility masks); the candidate is
everything DialogMem adds on top of a finished traversal with the template realiser. A ratio far
above 1 means dataset generation time is dominated by the simulator, not by the dialogue and task
pipeline.
"""

from __future__ import annotations

import argparse

import numpy as np

from benchmarks.harness import report, time_best
from memgym.datasets.dialogmem.episode import build_episode
from memgym.datasets.traversal import TraversalConfig, generate_traversal
from memgym.scenes.spec import SceneSpec, load_scene
from memgym.sensors.camera import CameraConfig


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks dialogmem_construction")
    parser.add_argument("--goals", type=int, default=8, help="navigation goals per traversal")
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
