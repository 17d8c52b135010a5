"""DialogMem evaluation against an OpenAI-compatible server: episodes played at once
(``reasoner.concurrency=8``, the judge too) vs one at a time (``concurrency=1``), against a local
fake server that answers each chat completion after a fixed delay (a model server that batches,
like vLLM, answers concurrent requests in about the time of one). The reasoner answers every
item and an LLM-match judge rates every QA answer; the memory forms and the frames render in
this process, which the two runs share (the frames are rendered once, by the warm-up run).

    python -m speed eval_concurrency [EPISODES] [DELAY_S]     # default 8 episodes, 0.2 s
"""

from __future__ import annotations

import tempfile
import zlib
from pathlib import Path

from memgym.core.benchmark import JobArgs
from memgym.pipelines.dialogmem.evaluation import evaluate
from memgym.pipelines.dialogmem.generation import generate
from speed.harness import report, time_best
from speed.openai_concurrency import delayed_server

HOUSES = ("first_house_seed=5", "house.min_rooms=3", "house.max_rooms=4", "traversal.min_goals=2",
          "traversal.max_goals=3", "camera.width=32", "camera.height=24")  # fmt: skip
"""Small quick houses (tests/support/small_houses.py)."""


def model_reply(content: object) -> str:
    """A 1-5 rating to a judge prompt, else a short answer; both a function of the prompt."""
    digest = zlib.crc32(str(content).encode())
    return str(1 + digest % 5) if "Candidate answer:" in str(content) else f"the {('red', 'blue')[digest % 2]} one"


def main(argv: list[str]) -> None:
    episodes = int(argv[0]) if argv else 8
    delay_s = float(argv[1]) if len(argv) > 1 else 0.2
    server = delayed_server(delay_s, model_reply)
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    with tempfile.TemporaryDirectory() as tmp:
        dataset = generate(JobArgs(overrides=(f"scenes={episodes}", *HOUSES), out=Path(tmp) / "d.jsonl",
                                   progress=False))  # fmt: skip
        runs = iter(range(1000))

        def run(concurrency: int) -> Path:  # a fresh runs folder each time: nothing to resume
            overrides = (f"dataset={dataset}", "camera.width=32", "camera.height=24", "reasoner.backend=openai",
                         "reasoner.model=m", f"reasoner.base_url={url}", f"reasoner.concurrency={concurrency}",
                         "qa_scorer=llm_match", "judge.backend=openai", "judge.model=j", f"judge.base_url={url}",
                         f"judge.concurrency={concurrency}")  # fmt: skip
            return evaluate(JobArgs(overrides=overrides, runs_dir=Path(tmp) / f"r{next(runs)}", progress=False))

        first = run(8)  # warm-up: imports, rendered frames
        items = len((first / "dialogue" / "results.jsonl").read_text().splitlines())
        concurrent = time_best("eval, concurrency=8", lambda: run(8), units=items, unit_name="items", repeats=1)
        single = time_best("eval, one at a time (concurrency=1)", lambda: run(1), units=items, unit_name="items",
                           repeats=1)  # fmt: skip
        rows = [(Path(tmp) / f"r{k}").glob("eval-dialogmem/*/dialogue/results.jsonl") for k in (1, 2)]
        texts = [next(found).read_text() for found in rows]
        assert texts[0] == texts[1], "concurrency changed the results"
    server.shutdown()
    server.server_close()
    report(
        f"eval_concurrency: DialogMem eval of {episodes} episodes ({items} items), server delay {delay_s:g} s",
        concurrent,
        single,
        [f"ideal: {min(8, episodes)}.00x (episodes at once) when the server's delay is all of an item's time; "
         "the memory, the env and rendering run in this process"],
    )  # fmt: skip
