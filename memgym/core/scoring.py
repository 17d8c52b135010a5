"""Choosing a scorer for a task by its registered name, and building it for an env's episodes.

Every benchmark env (:class:`~memgym.envs.two_phase.TwoPhaseEnv`) scores a use-phase answer with
the scorer its configuration names for the item's task (``task_scorers``: task -> a name of the
``SCORERS`` registry, ``memgym list scorers``). A scorer fits a task when the task is one of its
:attr:`~memgym.core.protocols.Scorer.tasks`. The env builds it with
:meth:`~memgym.core.protocols.Scorer.from_context` from a :class:`ScorerContext` (what the env
knows: the episode's dataset folder); an evaluation whose scorer needs a judge model
(:attr:`~memgym.core.protocols.Scorer.judged`, or one it may use, as VoxMem's) passes the env a
:func:`judged_scorer` factory instead, which the env builds with its context plus the judge.

>>> scorer_class("token_f1", "qa", "qa_scorer").__name__
'TokenF1Scorer'
>>> scorer_class("token_f", "qa", "qa_scorer")
Traceback (most recent call last):
...
memgym.core.errors.ConfigError: qa_scorer: unknown scorer 'token_f' (did you mean 'token_f1'?); scorers of qa items: exact_match, llm_match, token_f1
>>> from memgym.core.episode import TaskItem
>>> scorer = build_scorer("exact_match", "qa", ScorerContext(), "task_scorers.qa")
>>> scorer.score(TaskItem(item_id="q0", task="qa", prompt="Which colour is the mug?", answer="red"), "Red.")
{'exact_match': 1.0, 'reward': 1.0}
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable

from memgym.core.errors import ConfigError, PluginImportError
from memgym.core.protocols import Judge, Scorer, ScorerContext
from memgym.core.registry import SCORERS
from memgym.core.suggest import did_you_mean

ScorerFactory = Callable[[ScorerContext], "Scorer"]
"""Builds a scorer from an env's :class:`ScorerContext` (e.g. :func:`judged_scorer`)."""


def scorer_class(name: str, task: str, where: str) -> type[Scorer]:
    """The scorer registered as ``name``, if it scores ``task`` items.

    Args:
        where: the config key naming it (``qa_scorer``, ``task_scorers.qa``), for messages.
    Raises:
        ConfigError: ``name`` is not registered (with the close names), or its scorer scores
            other tasks (with the scorers of ``task``).
    """
    if name not in SCORERS:
        raise ConfigError(
            f"{where}: unknown scorer '{name}'{did_you_mean(name, SCORERS.names())}; "
            f"scorers of {task} items: {', '.join(task_scorer_names(task)) or 'none registered'}"
        )
    cls = SCORERS.get(name)
    if not fits(cls, task):
        raise ConfigError(
            f"{where}: scorer '{name}' scores {', '.join(sorted(cls.tasks))} items, not {task}; "
            f"scorers of {task} items: {', '.join(task_scorer_names(task)) or 'none registered'}"
        )
    return cls


def fits(cls: type[Scorer], task: str) -> bool:
    """Whether scorer class ``cls`` scores ``task`` items (one that declares no tasks scores any)."""
    return not cls.tasks or task in cls.tasks


def task_scorer_names(task: str) -> list[str]:
    """Sorted registered names whose scorers score ``task`` items (imports every scorer module;
    one whose module cannot be imported is left out)."""
    names = []
    for name in SCORERS.names():
        try:
            cls = SCORERS.get(name)
        except PluginImportError:
            continue
        if fits(cls, task):
            names.append(name)
    return names


def build_scorer(spec: str | Scorer | ScorerFactory, task: str, context: ScorerContext, where: str) -> Scorer:
    """The scorer of ``task`` items that ``spec`` gives: a registered name (built with
    :meth:`~memgym.core.protocols.Scorer.from_context`), a scorer, or a factory called with
    ``context``.

    Raises:
        ConfigError: an unknown name, or a scorer of other tasks.
        TypeError: ``spec`` (or what a factory returned) is not a scorer.
    """
    scorer = scorer_class(spec, task, where).from_context(context) if isinstance(spec, str) else spec
    if not isinstance(scorer, Scorer):
        scorer = scorer(context) if callable(scorer) else scorer
    if not isinstance(scorer, Scorer):
        raise TypeError(f"{where}: expected a Scorer, a registered name or a factory, got {type(scorer).__name__}")
    if not fits(type(scorer), task):
        raise ConfigError(
            f"{where}: {type(scorer).__name__} scores {', '.join(sorted(scorer.tasks))} items, not {task}"
        )
    return scorer


def judged_scorer(name: str, judge: Judge | None) -> ScorerFactory:
    """A factory building the registered scorer ``name`` with an env's context and ``judge``
    (picklable: Ray workers and async vector envs build it in their own process)."""
    return functools.partial(_with_judge, name, judge)


def _with_judge(name: str, judge: Judge | None, context: ScorerContext) -> Scorer:
    return SCORERS.get(name).from_context(dataclasses.replace(context, judge=judge))
