"""Which item is which: the cell and subtype of every item, the source of every AR item, and the
plan of an item's draw (its question, answer and sessions' facts).

Items cycle through the cells (and their subtypes). Plans are drawn from the item's sub-seed
(``episode_rng(digest, seed, index + 100_003 * attempt)``), so a redraw is a new plan and the same
config gives the same plans.
"""

from __future__ import annotations

import dataclasses

from memgym.core.errors import ConfigError, MemgymError
from memgym.core.seeding import episode_rng
from memgym.datasets.speech.cues import CUE_WORDS
from memgym.datasets.voxmem.config import VoxMemConfig
from memgym.datasets.voxmem.oracle import sound_label
from memgym.datasets.voxmem.plans import plan_item
from memgym.datasets.voxmem.records import Plan
from memgym.datasets.voxmem.refusal import derive_refusal, refusal_edit
from memgym.datasets.voxmem.separability import item_root
from memgym.datasets.voxmem.taxonomy import BUILDABLE_CELLS, OPERATIONS, SUBTYPES
from memgym.datasets.voxmem.writing import DialogueWriter, LLMWriter, paraphrase_question


@dataclasses.dataclass(eq=False)
class ItemLayout:
    """The items of a build and their plans.

    Args:
        config: the build config (``items``, ``seed``, ``users``, ``refusal_scope``).
        cells: (evidence, operation) of the cells to cycle through.
        digest: the build's seed digest (:attr:`VoxMemBuilder.digest`).
        sound_classes: the sound classes plans may name.
        writer: the dialogue writer (an :class:`LLMWriter` rewords questions).
    """

    config: VoxMemConfig
    cells: list[tuple[str, str]]
    digest: str
    sound_classes: list[str]
    writer: DialogueWriter
    _layout: tuple[list[tuple[str, str, str]], dict[int, int]] | None = dataclasses.field(default=None, init=False)

    def schedule(self) -> list[tuple[str, str, str]]:
        """(evidence, operation, subtype) of every item, cycling cells then subtypes (before :meth:`layout`)."""
        out = []
        for i in range(self.config.items):
            evidence, operation = self.cells[i % len(self.cells)]
            subs = SUBTYPES[operation]
            out.append((evidence, operation, subs[(i // len(self.cells)) % len(subs)]))
        return out

    def layout(self) -> tuple[list[tuple[str, str, str]], dict[int, int]]:
        """Every item's (evidence, operation, subtype), and the source item of every AR item.

        Each AR item gets its own non-AR item of the same evidence type from this dataset: the
        first unused one (of the operation its subtype names, then IE, MSR, TET) whose plan can be
        refused (:func:`refusal_edit`). When no unused one can, the first unused one whose cell
        has a refusable subtype is switched to that subtype (speaker and sound evidence can only
        be refused for some subtypes, e.g. speaker IE cue-to-fact but not context-to-cue).

        Returns:
            ``(schedule, sources)``: the schedule and AR item index -> source item index.
        Raises:
            ConfigError: an AR item has no possible source among the dataset's items.
        """
        if self._layout is not None:
            return self._layout
        schedule = self.schedule()
        sources: dict[int, int] = {}
        for index, (evidence, operation, subtype) in enumerate(schedule):
            if operation == "AR":
                wanted = subtype.removeprefix("from_")
                sources[index] = self._source_of(index, evidence, wanted, schedule, set(sources.values()))
        self._layout = (schedule, sources)
        return self._layout

    def _source_of(
        self, index: int, evidence: str, wanted: str, schedule: list[tuple[str, str, str]], used: set[int]
    ) -> int:
        """The source item of AR item ``index`` (see :meth:`layout`): the first unused item of
        ``evidence`` (of operation ``wanted`` first) that can be refused, else the first whose
        subtype can be switched to one that can (``schedule`` is updated).

        Raises:
            ConfigError: none can.
        """
        free = [j for j, (e, op, _) in enumerate(schedule) if e == evidence and op != "AR" and j not in used]
        free.sort(key=lambda j: (schedule[j][1] != wanted, OPERATIONS.index(schedule[j][1]), j))
        pick = next((j for j in free if self._refusable(j, schedule[j])), None)
        for j in free if pick is None else ():
            sub = next((t for t in SUBTYPES[schedule[j][1]] if self._refusable(j, (*schedule[j][:2], t))), None)
            if sub is not None:
                schedule[j], pick = (*schedule[j][:2], sub), j
                break
        if pick is None:
            usable = [
                f"{evidence}/{op} ({sub})"
                for (e, op) in BUILDABLE_CELLS
                if e == evidence and op != "AR"
                for sub in SUBTYPES[op]
                if self._refusable(index, (e, op, sub))
            ]
            raise ConfigError(
                f"cells/items: AR item {index} ({evidence}/AR) has no {evidence} item left to derive from (an AR "
                f"item reuses the history of its own item of the same evidence type); {evidence} AR items can "
                f"derive from {', '.join(usable)}: add such cells or more items"
            )
        return pick

    def may_be_refused(self, plan: Plan) -> bool:
        """Whether an AR item may be derived from ``plan``, so its history keeps that item's refusal too.

        An edit that removes the evidence of an audio-native item (``drop_context`` under
        ``refusal_scope=every_subtype``) would also rule out every haystack on the question's
        subject, so it is kept only for the items :meth:`layout` pairs with an AR item; other
        items keep their same-subject haystacks (a redrawn AR item deriving from them is checked
        by QC like any other).
        """
        edit = refusal_edit(plan, self.config.refusal_scope)
        if edit is None:
            return False
        if edit != "drop_context" or plan.evidence == "semantics":
            return True
        sources = self.layout()[1]
        index = int(item_root(plan.plan_id).removeprefix("vox"))
        return index in sources.values() or index in sources  # a paired source or a stand-in

    def _refusable(self, index: int, cell: tuple[str, str, str]) -> bool:
        return refusal_edit(self._draw(index, 0, cell), self.config.refusal_scope) is not None

    def _draw(self, index: int, attempt: int, cell: tuple[str, str, str]) -> Plan:
        """The unworded plan of non-AR item ``index`` with (evidence, operation, subtype) ``cell``."""
        rng = episode_rng(self.digest, self.config.seed, index + 100_003 * attempt)
        plan_id = f"vox{index:05d}" + (f"r{attempt}" if attempt else "")
        return plan_item(plan_id, *cell, self.sound_classes, rng, users=self.config.users)

    def plan(self, index: int, attempt: int, *, word: bool = True) -> Plan:
        """The plan of non-AR item ``index`` (redraw ``attempt``); AR plans come from :meth:`refusal_plan`.

        ``word=False`` skips rewording the question (plans only needed for their facts).
        """
        cell = self.layout()[0][index]
        if cell[1] == "AR":
            raise MemgymError(f"item {index} is an AR item; its plan is derived from its source (refusal_plan)")
        plan = self._draw(index, attempt, cell)
        return self._worded(plan) if word else plan

    def refusal_plan(self, index: int, attempt: int, asked: dict[int, Plan], taken: set[str]) -> Plan | None:
        """The plan of AR item ``index``, derived from a kept item of ``asked`` (index -> plan).

        Attempt 0 derives from the item :meth:`layout` paired it with; each further attempt from
        the next kept, refusable item of the same evidence type not ``taken`` by another AR item
        (its operation first, then by index). ``None`` when no source is left.
        """
        schedule, sources = self.layout()
        evidence, _, subtype = schedule[index]
        wanted = subtype.removeprefix("from_")
        scope = self.config.refusal_scope
        candidates = sorted(
            (
                j
                for j, p in asked.items()
                if p.evidence == evidence and p.plan_id not in taken and refusal_edit(p, scope)
            ),
            key=lambda j: (j != sources[index], asked[j].operation != wanted, j),
        )
        if attempt >= len(candidates):
            return None
        plan_id = f"vox{index:05d}" + (f"r{attempt}" if attempt else "")
        return derive_refusal(asked[candidates[attempt]], plan_id, scope)

    def standin_source(self, index: int, attempt: int) -> Plan | None:
        """A fresh source for AR item ``index``'s redraw ``attempt`` once no kept item is left to
        derive from (:meth:`refusal_plan` is ``None``), so that an AR item whose sources all fail
        QC is redrawn rather than dropped.

        The stand-in is drawn from the AR item's own sub-seed in the cell of the source
        :meth:`layout` paired it with (its subtype first, then the cell's other subtypes that can
        be refused); it is not an item of the dataset, only the history the AR item is edited
        from, and it carries the AR item's redraw id (``vox<index>r<attempt>``). ``None`` when no
        subtype of that cell can be refused.
        """
        schedule, sources = self.layout()
        evidence, operation, subtype = schedule[sources[index]]
        for sub in dict.fromkeys([subtype, *SUBTYPES[operation]]):
            plan = self._draw(index, attempt, (evidence, operation, sub))
            if refusal_edit(plan, self.config.refusal_scope) is not None:
                return self._worded(plan)
        return None

    def _worded(self, plan: Plan) -> Plan:
        """The plan with its question reworded by the LLM writer's reasoner (template writer: unchanged)."""
        if not isinstance(self.writer, LLMWriter):
            return plan
        keep = [*plan.query.subjects, *(sound_label(o) for o in plan.query.options)]
        keep += [sound_label(plan.query.sound)] if plan.query.sound else []
        keep += [CUE_WORDS[plan.query.cue]] if plan.query.cue else []
        question, _ = paraphrase_question(self.writer.reasoner, plan.question, keep)
        return dataclasses.replace(plan, question=question)
