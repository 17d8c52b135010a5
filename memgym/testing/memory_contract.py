"""The memory contract: what every registered memory must do for an evaluation to use it.

A memory registered under a name (``@register_memory`` or a ``memgym.memories`` entry point) is
played by the :class:`~memgym.testing.harness.Harness` of the benchmark whose evaluation takes it,
through that benchmark's registered env and agent, as the evaluation plays it. It must:

1. **register**: subclass :class:`~memgym.core.protocols.Memory` and read only words of
   :data:`~memgym.core.protocols.READS` (an instance no more than its class);
2. **build from options**: ``from_options(options)`` of the evaluation's options returns an
   instance of the class, and so do the options as its run store records them
   (``stored_options(options)``, of the same type: the run folder's hash is taken of them);
3. **refuse bad options clearly**: given options it cannot read, ``from_options`` either builds
   anyway (a memory that takes none) or raises a :class:`~memgym.core.errors.MemgymError`, the
   one-line ``memgym: error:`` the CLI prints (not an ``AttributeError`` from deep inside);
4. **form and answer**: observe every formation observation of an episode of the env, answer
   each use item through the agent without error, hand the agent evidence it reads
   (:meth:`Harness.evidence_problem`), and show JSON-ready :meth:`~Memory.contents` (and
   :meth:`~Memory.snapshots` None or a sequence);
5. **be deterministic**: two memories built from the same options play the same episode into the
   same evidence, actions and scores;
6. **isolate episodes**: a memory that played one episode, then (``reset`` by the loop) another,
   gives on the second what a fresh memory gives;
7. **restore its state**: a fresh memory given ``load_state_dict(state_dict())`` of a formed one
   answers the use phase the same.

:func:`check_memory` runs them all (the suite does so for every registered memory);
:class:`MemoryChecks` runs them one by one, sharing the episodes it plays.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any

from memgym.agents.agent import answer_items, run_episode
from memgym.core.episode import Episode
from memgym.core.errors import MemgymError
from memgym.core.protocols import READS, Memory
from memgym.core.registry import MEMORIES
from memgym.testing.compare import difference
from memgym.testing.harness import Harness, harness_for


class Unreadable:
    """Options no memory can read (no attributes, not a mapping): the bad options of check 3."""

    def __repr__(self) -> str:
        return "Unreadable()"


@dataclasses.dataclass
class Play:
    """One episode played by one memory: what ``retrieve`` returned for each use item
    (``evidence``), the agent's ``actions``, the env's ``scores``, answer ``errors``, and the
    memory's ``state`` and ``contents`` right after formation; ``memory`` played it."""

    evidence: list[Any]
    actions: list[Any]
    scores: list[dict[str, Any]]
    errors: list[str]
    formation_steps: int
    state: dict[str, Any] | None = None
    contents: dict[str, Any] | None = None
    memory: Memory | None = dataclasses.field(default=None, repr=False)

    def outcome(self) -> dict[str, Any]:
        """What must repeat: evidence, actions and scores."""
        return {"evidence": self.evidence, "actions": self.actions, "scores": self.scores}


class MemoryChecks:
    """The checks of the module docstring for the memory registered as ``name``.

    Args:
        name: a registered memory name.
        options: what it is built from (default: its harness's :meth:`~Harness.options`).
        harness: the benchmark harness (default: :func:`~memgym.testing.harness.harness_for` its class).
    """

    def __init__(self, name: str, options: Any = None, harness: Harness | None = None) -> None:
        self.name = name
        self.cls = MEMORIES.get(name)
        self.harness = harness if harness is not None else harness_for(self.cls)
        self.options = options if options is not None else self.harness.options(name)
        self._plays: dict[str, Play] = {}

    # ----- the checks ------------------------------------------------------------------------
    def check_registered(self) -> None:
        """1: a :class:`Memory` subclass reading words of :data:`READS`."""
        self._expect(isinstance(self.cls, type) and issubclass(self.cls, Memory), "is not a Memory subclass")
        unknown = set(self.cls.reads) - set(READS)
        self._expect(not unknown, f"reads {sorted(unknown)}, which are not words of memgym.core.protocols.READS")

    def check_builds(self) -> None:
        """2: ``from_options`` of the evaluation's options, and of their stored form, builds an
        instance reading no more than its class."""
        memory = self.build()
        self._expect(isinstance(memory, self.cls), f"from_options returned {type(memory).__name__}")
        extra = set(memory.reads) - set(self.cls.reads)
        self._expect(not extra, f"an instance reads {sorted(extra)}, more than its class's reads")
        stored = self.cls.stored_options(self.options)
        self._expect(
            type(stored) is type(self.options),
            f"stored_options returned {type(stored).__name__}, not the {type(self.options).__name__} it was given",
        )
        self._expect(isinstance(self.cls.from_options(stored), self.cls), "from_options(stored_options(...)) failed")

    def check_bad_options(self) -> None:
        """3: options it cannot read build anyway or raise one MemgymError."""
        try:
            self.cls.from_options(Unreadable())
        except MemgymError:
            return
        except Exception as exc:  # what the check is about: any other error is unclear to a user
            self._fail(
                f"from_options(options it cannot read) raised {type(exc).__name__}: {exc}; raise a "
                "memgym.core.errors.ConfigError naming what it builds from"
            )

    def check_forms_and_answers(self) -> None:
        """4: plays an episode; every item answered, the evidence readable, the contents JSON-ready."""
        play = self.play("first")
        self._expect(play.formation_steps > 0, "its episode had no formation steps")
        self._expect(not play.errors, f"answering raised: {play.errors[:1]}")
        self._expect(play.evidence, "retrieve was never called in the use phase")
        for evidence in play.evidence:
            problem = self.harness.evidence_problem(evidence, self._memory_of("first"))
            self._expect(problem is None, str(problem))
        try:
            json.dumps(play.contents)
        except (TypeError, ValueError) as exc:
            self._fail(f"contents() after formation is not JSON-ready: {exc}")
        snapshots = self._memory_of("first").snapshots()
        self._expect(
            snapshots is None or isinstance(snapshots, list | tuple),
            f"snapshots() returned {type(snapshots).__name__}, not None or a sequence",
        )

    def check_deterministic(self) -> None:
        """5: two memories from the same options play the same episode alike."""
        found = difference(self.play("second").outcome(), self.play("second again").outcome())
        self._expect(found is None, f"two memories from the same options played the same episode differently, {found}")

    def check_isolates_episodes(self) -> None:
        """6: after another episode, an episode plays as on a fresh memory."""
        found = difference(self.play("second after first").outcome(), self.play("second").outcome())
        self._expect(
            found is None, f"after playing another episode it played an episode differently than when fresh, {found}"
        )

    def check_restores_state(self) -> None:
        """7: ``load_state_dict(state_dict())`` of a formed memory answers the same."""
        formed = self.play("second")
        episode = self.harness.episodes()[1]
        memory = self.build()
        env = self.harness.env(memory)
        if env.unwrapped.episode is None or env.unwrapped.episode.episode_id != episode.episode_id:
            self._play(self.build(), episode)  # the env replays the use phase of the episode it played last
        memory.reset()
        memory.bind_episode(episode, **self.harness.context(episode))
        memory.load_state_dict(formed.state)
        agent = self.harness.agent(memory)
        evidence = self._record(memory)
        observation, info = env.unwrapped.rewind_use()
        answers, _ = answer_items(env, agent, observation, info, (MemgymError,))
        restored = Play(evidence, [a.action for a in answers], [a.score for a in answers], [], 0)
        found = difference(restored.outcome(), formed.outcome())
        self._expect(found is None, f"a memory given load_state_dict(state_dict()) answered differently, {found}")

    def check_all(self) -> None:
        """Every check, in the module docstring's order."""
        for check in CHECKS:
            getattr(self, check)()

    # ----- playing ---------------------------------------------------------------------------
    def build(self) -> Memory:
        """A fresh memory from :attr:`options`."""
        return self.cls.from_options(self.options)

    def play(self, which: str) -> Play:
        """The play ``which`` (kept once played): ``first`` / ``second`` (a fresh memory on the
        first / second episode), ``second again`` (another fresh memory on the second) or ``second
        after first`` (the memory of ``first`` then on the second)."""
        if which not in self._plays:
            first, second = self.harness.episodes()
            if which == "second after first":
                self.play("first")
                self._plays[which] = self._play(self._memory_of("first"), second)
            else:
                self._plays[which] = self._play(self.build(), first if which == "first" else second)
        return self._plays[which]

    def _memory_of(self, which: str) -> Memory:
        memory = self.play(which).memory
        assert memory is not None
        return memory

    def _play(self, memory: Memory, episode: Episode) -> Play:
        env, agent = self.harness.env(memory), self.harness.agent(memory)
        evidence = self._record(memory)
        formed: dict[str, Any] = {}

        def after_formation(agent: Any) -> None:  # a copy: the use phase may change what the memory holds
            self.harness.after_formation(agent)
            formed["state"], formed["contents"] = copy.deepcopy(agent.memory.state_dict()), agent.memory.contents()

        try:
            result = run_episode(
                env,
                agent,
                episode=episode,
                options=self.harness.reset_options(episode),
                context=self.harness.context(episode),
                answer_errors=(MemgymError,),
                after_formation=after_formation,
            )
        finally:
            vars(memory).pop("retrieve", None)
        errors = [a.error for a in result.answers if a.error]
        actions = [a.action for a in result.answers]
        scores = [a.score for a in result.answers]
        return Play(evidence, actions, scores, errors, result.formation_steps, memory=memory, **formed)

    @staticmethod
    def _record(memory: Memory) -> list[Any]:
        """Keep what ``memory.retrieve`` returns from now on (until its instance attribute goes)."""
        evidence: list[Any] = []
        retrieve = type(memory).retrieve.__get__(memory)

        def recording(query: Any) -> Any:
            reply = retrieve(query)
            evidence.append(reply)
            return reply

        memory.retrieve = recording  # type: ignore[method-assign]
        return evidence

    def _expect(self, condition: Any, problem: str) -> None:
        if not condition:
            self._fail(problem)

    def _fail(self, problem: str) -> None:
        raise AssertionError(f"memory '{self.name}' ({self.harness.benchmark}): {problem}")


CHECKS = (
    "check_registered",
    "check_builds",
    "check_bad_options",
    "check_forms_and_answers",
    "check_deterministic",
    "check_isolates_episodes",
    "check_restores_state",
)
"""The checks of :class:`MemoryChecks`, in the order of the module docstring."""


def check_memory(name: str, options: Any = None, harness: Harness | None = None) -> None:
    """Run every check of the memory contract on the memory registered as ``name``.

    Raises:
        AssertionError: the first check it fails, naming the memory and what went wrong.
    """
    MemoryChecks(name, options, harness).check_all()


class MemoryContract:
    """The memory contract as a test class to mix in (dm_env's ``EnvironmentTestMixin`` style):
    set ``memory_name`` (and ``memory_options``, or a ``harness``, when the defaults do not
    build it) and pytest or unittest runs one test per check::

        from memgym.testing import MemoryContract

        class TestKeywordNotes(MemoryContract):
            memory_name = "keyword_notes"
    """

    memory_name: str = ""
    memory_options: Any = None
    harness: Harness | None = None
    _checks: dict[tuple[type, str], MemoryChecks] = {}

    def memory_checks(self) -> MemoryChecks:
        """The checks of this class's memory (built once per class, so plays are shared)."""
        key = (type(self), self.memory_name)
        if key not in MemoryContract._checks:
            MemoryContract._checks[key] = MemoryChecks(self.memory_name, self.memory_options, self.harness)
        return MemoryContract._checks[key]

    def test_registered(self) -> None:
        self.memory_checks().check_registered()

    def test_builds_from_options(self) -> None:
        self.memory_checks().check_builds()

    def test_bad_options_raise_a_clear_error(self) -> None:
        self.memory_checks().check_bad_options()

    def test_forms_and_answers(self) -> None:
        self.memory_checks().check_forms_and_answers()

    def test_deterministic(self) -> None:
        self.memory_checks().check_deterministic()

    def test_isolates_episodes(self) -> None:
        self.memory_checks().check_isolates_episodes()

    def test_restores_state(self) -> None:
        self.memory_checks().check_restores_state()
