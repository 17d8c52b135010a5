"""Scorers a test registers at runtime (``@register_scorer`` in a script: no plugin table entry, no
entry point), one per benchmark's task, to check that each eval config selects any registered
scorer of its task (``qa_scorer=``, ``scorer=``)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from memgym.core.protocols import Scorer
from memgym.core.registry import SCORERS, register_scorer
from memgym.tasks.attribute_retrieval import AttributeQueryScorer
from memgym.tasks.voxmem.scoring import VoxMemScorer


class AnswerLength(Scorer):
    """DialogMem QA: the answer's length in characters; reward 1 for a non-empty answer. Counts its calls."""

    tasks = frozenset({"qa"})
    calls = 0

    def score(self, item, prediction):
        AnswerLength.calls += 1
        return {"answer_chars": len(prediction), "reward": float(bool(prediction))}


class TaggedVoxMem(VoxMemScorer):
    """VoxMem's verdict plus the reply's length (the VoxMem tables read the verdict keys)."""

    def score(self, item, prediction):
        return {**super().score(item, prediction), "reply_chars": len(prediction)}


class Inverted(AttributeQueryScorer):
    """AMemOps: a query counts as correct when the predicted class is *not* the answer."""

    def score(self, item, prediction):
        row = super().score(item, prediction)
        return {**row, "correct": not row["correct"], "reward": 1.0 - row["reward"]}


@contextlib.contextmanager
def registered(name: str, cls: type[Scorer]) -> Iterator[None]:
    """``cls`` registered as ``name`` by the decorator, for the ``with`` block only."""
    register_scorer(name)(cls)
    try:
        assert SCORERS.locate(name)[1] == "runtime"
        yield
    finally:
        del SCORERS._entries[name]
