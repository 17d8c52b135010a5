"""``memgym eval amemops`` scoring speed: streams played through ``memgym/AMemOps-v0`` and the agent
loop (what the eval does) against one direct chunked pass per stream with no env (what it did before).

Both score the same streams with the same untrained model and the same precomputed inputs (the
eval's feature cache) and must write the same rows (checked before timing). Two sizes: the
``cpu-tiny`` symbolic model (one layer, width 64) and the ``cpu-audio`` model (two layers, width
64, two heads of 32) on 384-frame streams. The paths alternate in one process and are timed in CPU
seconds of the process, which the load of a shared machine disturbs less than wall time: each
stream is played by the three paths in turn, ``--repeats`` times, and a path's time is the sum
over streams of its fastest play of each (a burst of load then spoils one play, not a whole
pass). The load average is printed with each result.

The ratio to the direct pass is what the eval's scoring costs now against before. The core memory
runs its model under ``torch.inference_mode`` (the direct pass ran under ``no_grad``; the kernels
and numbers are the same), so a third line times the direct pass under ``inference_mode`` too: the
env loop's ratio to it is the cost of the loop alone (formation blocks, one env step per query,
the memory's bookkeeping, the rows).

Usage: ``python -m speed amemops_eval [--streams 24] [--repeats 5]``.
"""

from __future__ import annotations

import argparse
import os
import time

import torch

from memgym.datasets.amemops.config import StreamConfig
from memgym.memory.recurrent.model import AMemOpsModel, ModelConfig
from memgym.pipelines.amemops.configs import DataConfig
from memgym.pipelines.amemops.evaluate import eval_agent, score_stream, stream_env
from memgym.pipelines.amemops.streams import stream_tensors
from memgym.tasks.amemops.scoring import OPERATION_TO_QUERY_TYPE
from speed.harness import Timing, report

SHORT = {
    "frames": 384,
    "n_initial": 2,
    "n_update": 4,
    "n_interference": 0,
    "n_absent": 1,
    "distractors": (1,),
    "offset_seconds": (2, 4),
    "split": "eval",
}
SIZES = {
    "cpu-tiny (symbolic)": (
        DataConfig(inputs="symbolic", stream=StreamConfig(attribute_values=16, **SHORT)),
        {"layers": 1, "heads": 1, "head_dim": 64},
    ),
    "cpu-audio": (DataConfig(stream=StreamConfig(**SHORT)), {"layers": 2, "heads": 2, "head_dim": 32}),
}


def direct_rows(model: AMemOpsModel, stream, arrays, grad_mode=torch.no_grad) -> list[dict]:
    """The former eval's ``score_stream`` (chunked form, before it played the env): one chunked pass
    over the whole stream (under ``grad_mode``), the argmax at each query's end, the same rows."""
    labels = {"gain": arrays[1], "pan": arrays[2]}
    with grad_mode():
        out = model(torch.from_numpy(arrays[0])[None].to("cpu"))
    rows = []
    for item in stream.items:
        attribute, frame = item.annotations["attribute"], item.annotations["end_frame"]
        prediction, answer = int(out[attribute][0, frame].argmax()), int(labels[attribute][frame])
        rows.append(
            {
                "query": item.item_id,
                "query_type": OPERATION_TO_QUERY_TYPE[item.annotations["operation"]],
                "attribute": attribute,
                "answer": answer,
                "prediction": prediction,
                "correct": int(prediction == answer),
                "previous_value": int(prediction == item.annotations.get("previous_index", -1)),
                **{k: item.annotations.get(k) for k in ("operation", "delay_s", "load", "earlier", "template")},
                "recordings": stream.recordings,
                **({"joint": True} if item.annotations.get("joint") else {}),
            }
        )
    return rows


def compare(title: str, data: DataConfig, arch: dict[str, int], n_streams: int, repeats: int) -> None:
    """Time both paths on ``n_streams`` streams of ``data`` with a GDN2 model of ``arch``; print the ratio."""
    tensors = stream_tensors(data)
    streams = [(tensors.stream(i), tensors.arrays(i)) for i in range(n_streams)]  # cached, untimed
    torch.manual_seed(0)
    classes = tensors.n_classes
    config = ModelConfig(
        core="gdn2", input_dim=tensors.input_dim, width=64, mlp_hidden=128, n_gain=classes, n_pan=classes, **arch
    )
    model = AMemOpsModel(config).eval()
    env, agent = stream_env(data, tensors.library), eval_agent(model, "chunked")
    queries = sum(len(s.items) for s, _ in streams)
    paths = {
        "env": lambda s, a: score_stream(env, agent, s, a[0]),
        "direct": lambda s, a: direct_rows(model, s, a),
        "inference": lambda s, a: direct_rows(model, s, a, torch.inference_mode),
    }
    for s, a in streams:  # the same rows, or the timing compares different work
        assert paths["env"](s, a) == paths["direct"](s, a), f"env and direct rows differ on {s.episode_id}"
    fastest = {name: [float("inf")] * n_streams for name in paths}
    for _ in range(repeats):  # stream by stream the paths alternate, so all see the same load
        for i, (s, a) in enumerate(streams):
            for name, play in paths.items():
                start = time.process_time()
                play(s, a)
                fastest[name][i] = min(fastest[name][i], time.process_time() - start)
    best = {name: sum(times) for name, times in fastest.items()}  # each stream's fastest play, summed
    env_time = Timing("env loop (memgym eval amemops)", best["env"], n_streams, "streams (CPU s)")
    direct = Timing("direct chunked pass, no env (before)", best["direct"], n_streams, "streams (CPU s)")
    extra = [
        f"direct pass under inference_mode: the env loop runs at {best['inference'] / best['env']:.2f}x it "
        "(the loop's own cost)",
        "load average (1, 5, 15 min): {:.2f} {:.2f} {:.2f} on {} CPUs".format(*os.getloadavg(), os.cpu_count()),
    ]
    report(f"amemops eval scoring, {title}, {queries} queries", env_time, direct, extra)
    env.close()


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m speed amemops_eval")
    parser.add_argument("--streams", type=int, default=24)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    for title, (data, arch) in SIZES.items():
        compare(title, data, arch, args.streams, args.repeats)


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
