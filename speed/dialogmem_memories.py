"""Memory formation frames/s of every registered DialogMem memory vs rendering the same frames.

``python -m speed dialogmem_memories [--size 256] [--goals 5] [--memories a,b] [--perception simulated]
[--adjacent]``. One DialogMem
episode is generated (house 0, as ``DialogMemEnv`` builds houses by default: the datasets' 6-9 rooms
with real-house clutter); its formation stream is played through ``DialogMemEnv`` once to
time rendering (RGB-D + semantic frames, as a visual memory's evaluation renders them, and the
observation dicts, the baseline; the process's frame cache is off, so every repeat renders), and the observations are kept. Each memory (every registered memory defined under
``memgym.memory.embodied``, or those named with ``--memories``) is then reset and fed the same
observations with ``observe``, best of three (with ``--adjacent`` the render is timed again just
before each memory and that memory's ratio is taken against it, so a machine whose load drifts
during the run compares neighbouring measurements); each is bound to the episode first
(``bind_episode``: the gt detector's labels, the probes' annotations), outside the timing. A ratio of at least 3 means building
the memory costs well under rendering its input. Visual memories perceive with ``--perception``
(default ``simulated``, the memories' default: detector errors, depth noise, odometry drift;
``exact``: the perfect-perception probe).
"""

from __future__ import annotations

import argparse

from memgym.core.errors import ConfigError
from memgym.core.registry import MEMORIES
from memgym.envs.dialogmem_env import DialogMemEnv
from memgym.memory import memory_reads
from memgym.sensors.frame_cache import shared_frame_cache
from speed.harness import report, time_best

EMBODIED_MEMORIES = "memgym.memory.embodied."


def dialogmem_memories() -> list[str]:
    """Registered memories defined in ``memgym.memory.embodied`` (DialogMem's memories and probes),
    read from where each name points (nothing imported)."""
    return [name for name in MEMORIES.names() if MEMORIES.locate(name)[0].startswith(EMBODIED_MEMORIES)]


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m speed dialogmem_memories")
    parser.add_argument("--size", type=int, default=256, help="camera width = height, pixels (the eval default)")
    parser.add_argument("--goals", type=int, default=5, help="navigation goals of the traversal")
    parser.add_argument("--memories", default="", help="comma-separated names (default: all DialogMem memories)")
    parser.add_argument("--perception", default="simulated", choices=["simulated", "exact"], help="visual memories")
    parser.add_argument(
        "--adjacent", action="store_true", help="re-time the render before each memory (loaded machines)"
    )
    args = parser.parse_args(argv)
    names = [n for n in args.memories.split(",") if n] or dialogmem_memories()

    env = DialogMemEnv(
        {
            "house_seed": 0,
            "traversal": {"min_goals": args.goals, "max_goals": args.goals},
            "camera": {"width": args.size, "height": args.size},
            "semantic": True,  # the visual memories' gt detector reads it; rendered in the baseline too
        }
    )
    shared_frame_cache().max_bytes = 0  # the baseline renders every frame (no in-process reuse of earlier repeats)
    env.reset(seed=0)  # generates the episode (not timed)
    episode = env.episode
    observations = []

    def render() -> None:
        observations.clear()
        observation, info = env.reset(options={"episode": episode})
        while info["phase"] == "formation":
            observations.append(observation)
            observation, _, _, _, info = env.step(env.formation_action())

    baseline = time_best(
        f"render formation {args.size}x{args.size}", render, units=len(episode.traversal.frames), unit_name="frames"
    )
    summary = []
    for name in names:
        try:
            cls = MEMORIES.get(name)
            memory = cls(perception=args.perception) if "frames" in memory_reads(name) else cls()
        except ConfigError as exc:  # e.g. 3dmem+clip without a CLIP model folder here
            print(f"{name}: skipped ({exc})", flush=True)
            continue
        memory.bind_episode(episode)  # a no-op for memories that read no annotations

        def form(memory=memory) -> None:
            memory.reset()
            for observation in observations:
                memory.observe(observation)

        reference = baseline
        if args.adjacent:
            reference = time_best(
                f"render before {name}", render, units=len(observations), unit_name="frames", repeats=1
            )
        timing = time_best(f"{name}: observe", form, units=len(observations), unit_name="frames")
        report(f"dialogmem_memories: {name} formation vs rendering", timing, reference)
        summary.append(f"{name:<24} {timing.rate:12.1f} frames/s  {timing.rate / reference.rate:8.1f}x the render")
    print(f"== summary ({len(observations)} frames, render {baseline.rate:.1f} frames/s) ==")
    print("\n".join(summary), flush=True)
