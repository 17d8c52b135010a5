"""What a job left undone: counted over the run folders it wrote, said once (memgym.core.outcome)."""

from __future__ import annotations

import dataclasses

import pytest

from memgym.core.errors import MemgymError
from memgym.core.outcome import note_dropped, watch_job
from memgym.core.results import RunStore


@dataclasses.dataclass
class Cfg:
    name: str = "a"


def test_partial_failures_over_every_run_folder_give_one_warning(tmp_path):
    with watch_job() as outcome:
        first = RunStore.open(tmp_path, "eval", Cfg(), name="one")
        first.append_many([("a", {"acc": 1.0}), ("b", {"error": "judge: cannot connect"})])
        second = RunStore.open(tmp_path, "eval", Cfg(), name="two")
        second.append_many([("c", {"acc": 0.0}), ("d", {"error": "other"}), ("e", {"error": "third"})])
        RunStore.open(tmp_path, "eval", Cfg(), name="one")  # reopening counts the folder once
    assert outcome.finish() == [
        "memgym: warning: 3 of 5 items failed (first: judge: cannot connect); re-run the same command to retry them"
    ]
    with watch_job() as retry:  # the re-run retries the errored rows: nothing left to say
        store = RunStore.open(tmp_path, "eval", Cfg(), name="one")
        store.append("b", {"acc": 1.0})
    assert retry.finish() == []


def test_a_run_folder_whose_items_all_failed_is_an_error(tmp_path):
    with watch_job() as outcome:
        RunStore.open(tmp_path, "eval", Cfg(), name="ok").append("a", {"acc": 1.0})
        RunStore.open(tmp_path, "eval", Cfg(), name="bad").append_many([("a", {"error": "e1"}), ("b", {"error": "e2"})])
    with pytest.raises(MemgymError, match=r"all 2 items of .*bad.results\.jsonl failed \(first error: e1\)"):
        outcome.finish()


def test_dropped_items_and_untracked_use(tmp_path):
    note_dropped(3, 10, "outside a job")  # library use: nothing is tracked
    RunStore.open(tmp_path, "eval", Cfg()).append("a", {"error": "x"})
    with watch_job() as outcome:
        note_dropped(0, 10, "nothing dropped")
        note_dropped(2, 15, "vox00003 failed intelligible", "raise max_revisions")
        RunStore.open(tmp_path, "train", Cfg())  # a folder without rows counts for nothing
    assert outcome.finish() == [
        "memgym: warning: 2 of 15 items dropped (first: vox00003 failed intelligible); raise max_revisions"
    ]
