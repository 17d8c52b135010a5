"""The evaluation driver (memgym.core.driver): memory selection folded once, resume, groups, tables."""

from __future__ import annotations

import dataclasses
import functools

import pytest

from memgym.core.config import load_config
from memgym.core.driver import Evaluation, drive, select_memories
from memgym.core.errors import ConfigError
from memgym.core.results import RunStore
from memgym.core.seeding import config_hash


def test_select_memories_folds_memory_memories_and_a_synonym_once():
    assert select_memories("", (), ("dialogue",)) == ("dialogue",)
    assert select_memories("frames", (), ("dialogue",)) == ("frames",)
    assert select_memories("", ("a", "b"), ("dialogue",)) == ("a", "b")
    with pytest.raises(ConfigError, match="not both"):
        select_memories("dialogue", ("frames",), ("dialogue",))
    with pytest.raises(ConfigError, match="memories lists a memory twice"):
        select_memories("", ("a", "a"), ())
    paper = ("gdn2", "kda")
    assert select_memories("", (), (), synonym=("models", ("kda",), paper)) == ("kda",)
    assert select_memories("gdn2", (), (), synonym=("models", paper, paper)) == ("gdn2",)
    for memory, memories, models in (("gdn2", (), ("kda",)), ("gdn2", ("kda",), paper)):
        with pytest.raises(ConfigError, match="to evaluate once: models="):
            select_memories(memory, memories, (), synonym=("models", models, paper))
    with pytest.raises(ConfigError, match="models lists a memory twice"):
        select_memories("", (), (), synonym=("models", ("kda", "kda"), paper))
    checked = []
    select_memories("", ("a", "b"), (), check=checked.append)
    assert checked == ["a", "b"]


def test_every_eval_folds_memory_keys_the_same_way():
    """``memory=`` with ``memories=`` is one error in every eval (DialogMem kept ``memories`` and
    dropped ``memory=dialogue``; VoxMem dropped a ``memories`` list equal to its default); the
    intervention job takes them too, with the hash of ``models=[...]``."""
    from memgym.pipelines.amemops.interventions import AMemOpsInterventionConfig
    from memgym.pipelines.dialogmem.eval_config import DialogMemEvalConfig
    from memgym.pipelines.voxmem.evaluation import DEFAULT_MEMORIES, VoxMemEvalConfig

    with pytest.raises(ConfigError, match="not both"):
        load_config(DialogMemEvalConfig, overrides=["memory=dialogue", "memories=[frames]"]).memory_names()
    assert load_config(DialogMemEvalConfig).memory_names() == ["dialogue"]
    with pytest.raises(ConfigError, match="not both"):
        load_config(VoxMemEvalConfig, overrides=["memory=cascaded", f"memories=[{','.join(DEFAULT_MEMORIES)}]"])
    assert load_config(VoxMemEvalConfig).memories == DEFAULT_MEMORIES
    assert config_hash(load_config(VoxMemEvalConfig)) == config_hash(
        load_config(VoxMemEvalConfig, overrides=[f"memories=[{','.join(DEFAULT_MEMORIES)}]"])
    )
    by_models = load_config(AMemOpsInterventionConfig, overrides=["models=[gdn2]"])
    for given in ("memory=gdn2", "memories=[gdn2]"):
        folded = load_config(AMemOpsInterventionConfig, overrides=[given])
        assert folded == by_models and config_hash(folded) == config_hash(by_models)
    with pytest.raises(ConfigError, match="to evaluate once"):
        load_config(AMemOpsInterventionConfig, overrides=["memory=gdn2", "models=[kda]"])
    with pytest.raises(ConfigError, match="no recurrent state S"):
        load_config(AMemOpsInterventionConfig, overrides=["memory=attention"])


@dataclasses.dataclass(frozen=True)
class Config:
    items: tuple[str, ...] = ("a", "b", "c", "d")
    fail: tuple[str, ...] = ()
    executor: str = "local"


def square_worker(config: Config, played: list[str]):
    def play(item: str) -> dict:
        played.append(item)
        if item in config.fail:
            return {"error": f"{item} failed"}
        return {"value": ord(item) ** 2}

    return play


class Squares(Evaluation):
    """Rows ``{"value": ord(item) ** 2}``; the first two items at once, the rest one at a time."""

    def __init__(self, config: Config) -> None:
        super().__init__(config)
        self.played: list[str] = []
        self.tables = 0

    def work(self, done):
        return [(item, item) for item in self.config.items if item not in done]

    def setup(self):
        return functools.partial(square_worker, self.config, self.played)

    def groups(self, work):
        return [(work[:2], 2), (work[2:], 1)]

    def write_tables(self, store):
        self.tables += 1


def test_drive_resumes_redoes_errors_keeps_order_and_writes_tables(tmp_path):
    config = Config(fail=("c",))
    store = RunStore.open(tmp_path, "squares", config, name="run")
    first = Squares(config)
    drive(first, store, progress=False)
    assert [r["key"] for r in store.rows()] == ["a", "b", "c", "d"] and first.tables == 1
    assert sorted(first.played) == ["a", "b", "c", "d"] and store.rows()[2]["error"] == "c failed"
    again = Squares(dataclasses.replace(config, fail=()))
    drive(again, store, progress=False)
    assert again.played == ["c"] and again.tables == 1  # only the errored item is played again
    assert [(r["key"], r["value"]) for r in store.rows()] == [("a", 9409), ("b", 9604), ("d", 10000), ("c", 9801)]
    assert store.rows()[-1]["earlier_errors"] == ["c failed"]


def test_every_evaluations_fast_paths_name_a_test_that_exists():
    from pathlib import Path

    from memgym.pipelines.amemops.evaluate import AMemOpsEvaluation
    from memgym.pipelines.amemops.interventions import InterventionEvaluation
    from memgym.pipelines.dialogmem.evaluation import DialogMemEvaluation
    from memgym.pipelines.voxmem.evaluation import VoxMemEvaluation

    root = Path(__file__).resolve().parents[2]
    for evaluation in (DialogMemEvaluation, VoxMemEvaluation, AMemOpsEvaluation, InterventionEvaluation):
        assert evaluation.fast_paths, evaluation.__name__
        for name, test in evaluation.fast_paths.items():
            path, function = test.split("::")
            assert f"def {function}(" in (root / path).read_text(encoding="utf-8"), (evaluation.__name__, name)
