"""``memgym eval dialogmem sweep=link_quality``: DialogMem's diagnosis of linked dialogue on 3D-Mem.

On one shared, stratified subset of items (:func:`stratified_subset`: ``subset_navigation``
navigation and ``subset_qa`` QA items, allocated across content types in proportion to their
counts, fewer when the dataset has fewer; recorded in ``subset.json``) it evaluates

* the baselines ``3dmem`` and ``3dmem+dialogue``,
* the linkers ``3dmem+clip`` (when ``link.clip_model`` is set; skipped and said so otherwise) and
  ``3dmem+vlm``,
* the ``controlled`` linker at link quality 0, ``sweep_step``, ..., 100 in both error modes
  (``missing`` and ``wrong`` links),
* the probes ``3dmem+gt_metadata``, ``3dmem+oracle_selection``, ``3dmem+oracle_position``,
* and any memories named in ``memories=[...]`` (e.g. ``dialogue``, ``frames``) for Table 3.

The 3D-Mem variants share their formation: per episode the stream is played once into a
``3dmem`` store, and every variant starts from a copy of it (its linker or probe applied) and
answers the items after :meth:`~memgym.envs.dialogmem_env.DialogMemEnv.rewind_use`. Each variant
is a resumable :class:`~memgym.core.results.RunStore` under ``NAME/sweep/<variant>/``, with its link
counts (``links.json``, measured from the annotations outside the memory) and the reasoner's and
judge's token counts (``environment.json`` ``throughput``; the shared formation's replies count
with the first variant played after it). The tables and the figure are rewritten after every
episode::

    NAME/subset.json          the item keys and the counts per task and content type
    NAME/comparison.{md,csv,png}  every system but the controlled levels: overall, by content type
                              (Tables 4 and 5), verbalised and updated, bootstrap intervals
    NAME/table3.md            main comparison: navigation and QA per system with link quality,
                              McNemar's exact test (navigation) and a paired bootstrap interval
                              (QA) against 3dmem+dialogue on the same items
    NAME/link_quality.{md,csv}  the controlled levels: measured link quality, navigation, QA
    NAME/link_quality.png     Figure 2: navigation and QA against link quality, missing vs wrong
                              links, the linkers as points, probes and baselines as dashed lines
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from memgym.backends.errors import ReasonerError
from memgym.backends.throughput import record_counts, take_throughput
from memgym.core.benchmark import JobArgs
from memgym.core.config import load_config
from memgym.core.errors import ConfigError
from memgym.core.figures import label_line_ends, legend_outside, save_figure, system_styles
from memgym.core.outputs import write_text_atomic
from memgym.core.results import RunStore, run_name, to_csv, to_markdown
from memgym.core.seeding import config_hash
from memgym.core.statistics import bootstrap_difference, mcnemar_exact
from memgym.datasets.dialogmem.episode import DialogMemEpisode
from memgym.memory.embodied.ground_truth import SceneTruth
from memgym.pipelines.dialogmem.comparison import labelled_rng, qa_metric, write_comparison
from memgym.pipelines.dialogmem.eval_config import DialogMemEvalConfig, embodied_memory, store_config
from memgym.pipelines.dialogmem.evaluation import (
    build_env,
    build_memory,
    evaluate_memory,
    formed_links,
    item_key,
    item_rows,
    load_episodes,
    qa_judge,
    qa_scorers,
    write_tables,
)
from memgym.pipelines.dialogmem.memory_measures import LinkLog, Localisation

BASELINES = ("3dmem", "3dmem+dialogue")
LINKED = ("3dmem+clip", "3dmem+vlm")
PROBES = ("3dmem+gt_metadata", "3dmem+oracle_selection", "3dmem+oracle_position")
REFERENCE = "3dmem+dialogue"
"""The system Table 3's tests compare against (the paper's Figure-2 baseline)."""


@dataclasses.dataclass(frozen=True)
class Variant:
    """One evaluated system of the sweep.

    Attributes:
        name: its label and folder (``3dmem+vlm``, ``controlled-wrong-040``).
        memory: the registered memory.
        kind: ``baseline``, ``linker``, ``controlled``, ``probe`` or ``memory`` (an extra one).
        mode: controlled: ``missing`` or ``wrong``.
        level: controlled: the requested link quality, percent.
    """

    name: str
    memory: str
    kind: str
    mode: str = ""
    level: float = 0.0

    def config(self, base: DialogMemEvalConfig) -> DialogMemEvalConfig:
        """``base`` evaluating this variant alone."""
        plain = DialogMemEvalConfig()  # the subset's settings do not change a row: a store serves any subset
        # only the link options the variant reads, so setting link.clip_model later keeps the other stores
        link = plain.link
        if self.memory == "3dmem+clip":
            link = dataclasses.replace(link, clip_model=base.link.clip_model, top_k=base.link.top_k)
        elif self.mode:
            link = dataclasses.replace(link, quality=self.level, mode=self.mode, seed=base.link.seed)
        return dataclasses.replace(
            base,
            memory=self.memory,
            memories=(),
            sweep="",
            link=link,
            sweep_step=plain.sweep_step,
            subset_navigation=plain.subset_navigation,
            subset_qa=plain.subset_qa,
            subset_seed=plain.subset_seed,
        )

    @property
    def shares_formation(self) -> bool:
        """Built on the shared ``3dmem`` formation."""
        return self.memory.startswith("3dmem")


def sweep_levels(step: int) -> list[float]:
    """0, step, 2 step, ... and 100 (percent)."""
    if not 1 <= step <= 100:
        raise ConfigError(f"sweep_step must be within 1..100, got {step}")
    return sorted({*range(0, 100, step), 100})


def sweep_variants(config: DialogMemEvalConfig) -> tuple[list[Variant], list[str]]:
    """The variants of the sweep in table order, and notes on the ones left out."""
    variants = [Variant(m, m, "baseline") for m in BASELINES]
    notes = []
    for memory in LINKED:
        if memory == "3dmem+clip" and not config.link.clip_model:
            notes.append("3dmem+clip skipped: no CLIP model (set link.clip_model=<folder or hub id>).")
            continue
        variants.append(Variant(memory, memory, "linker"))
    variants += [Variant(m, m, "probe") for m in PROBES]
    for mode in ("missing", "wrong"):
        variants += [
            Variant(f"controlled-{mode}-{level:03d}", "3dmem+controlled", "controlled", mode, float(level))
            for level in sweep_levels(config.sweep_step)
        ]
    for memory in config.memories:
        embodied_memory(memory)
    taken = {v.memory for v in variants}
    variants += [Variant(m, m, "memory") for m in config.memories if m not in taken]
    return variants, notes


def stratified_subset(
    episodes: Sequence[DialogMemEpisode], navigation: int, qa: int, seed: int
) -> tuple[list[str], list[dict[str, Any]]]:
    """Item keys of the subset (in dataset order) and its counts per task and content type.

    Per task, ``n`` = min(requested, available) items are allocated to the content types in
    proportion to their sizes (largest remainders, ties to the type named first alphabetically)
    and drawn within each type by a generator seeded from ``seed``, the task and the type.
    """
    keys, counts = [], []
    for task, wanted in (("navigation", navigation), ("qa", qa)):
        groups: dict[str, list[str]] = {}
        for episode in episodes:
            for item in episode.items:
                if item.task == task:
                    groups.setdefault(str(item.annotations.get("content_type", "")), []).append(item_key(episode, item))
        total = sum(len(g) for g in groups.values())
        n = min(wanted, total)
        share = {t: n * len(g) / total for t, g in groups.items()} if total else {}
        take = {t: int(s) for t, s in share.items()}
        for t in sorted(share, key=lambda t: (-(share[t] - take[t]), t))[: n - sum(take.values())]:
            take[t] += 1
        for content_type in sorted(groups):
            members = groups[content_type]
            rng = labelled_rng(seed, "subset", task, content_type)
            keys += [members[i] for i in sorted(rng.permutation(len(members))[: take[content_type]])]
            counts.append(
                {"task": task, "content_type": content_type, "available": len(members), "n": take[content_type]}
            )
    order = {item_key(e, i): k for k, (e, i) in enumerate((e, i) for e in episodes for i in e.items)}
    return sorted(keys, key=order.__getitem__), counts


def sweep(args: JobArgs) -> Path:
    """``memgym eval dialogmem sweep=link_quality ...``: load the eval config and :func:`run_sweep`."""
    return run_sweep(load_config(DialogMemEvalConfig, path=args.config_path, overrides=args.overrides), args)


def run_sweep(config: DialogMemEvalConfig, args: JobArgs) -> Path:
    """Run the sweep (module docstring); returns its folder ``RUNS/eval-dialogmem/NAME``."""
    if config.sweep != "link_quality":
        raise ConfigError(f"sweep must be 'link_quality' (or empty), got {config.sweep!r}")
    episodes, _ = load_episodes(Path(config.dataset))  # unusable episodes have no items to draw
    if config.max_episodes:
        episodes = episodes[: config.max_episodes]
    digest = config_hash(dataclasses.replace(config, memory="", memories=()))
    folder_name = config.name or run_name(
        args.runs_dir, "eval-dialogmem", [config.sweep, Path(config.dataset).stem], digest
    )
    folder = Path(args.runs_dir) / "eval-dialogmem" / folder_name
    subset, counts = stratified_subset(episodes, config.subset_navigation, config.subset_qa, config.subset_seed)
    folder.mkdir(parents=True, exist_ok=True)
    write_text_atomic(folder / "subset.json", json.dumps({"counts": counts, "items": subset}, indent=1))
    only = set(subset)
    variants, notes = sweep_variants(config)
    stores = {
        v.name: RunStore.open(
            args.runs_dir, "eval-dialogmem", store_config(v.config(config)), name=f"{folder_name}/sweep/{v.name}"
        )
        for v in variants
    }
    shared = SharedFormation(config, [v for v in variants if v.shares_formation], folder / "judge_cache.jsonl")
    for episode in tqdm(episodes, desc="sweep episodes", disable=not args.progress):
        if shared.play(episode, stores, only):
            write_sweep(folder, variants, stores, notes, config, only)
    for v in variants:
        if not v.shares_formation:  # extra memories: their own formation, the same subset
            evaluate_memory(v.config(config), stores[v.name], episodes, [], args.progress, only)
    for store in stores.values():
        write_tables(store)
    write_sweep(folder, variants, stores, notes, config, only)
    return folder


class SharedFormation:
    """The 3D-Mem variants of the sweep played on one formation per episode: the stream is played
    once into a ``3dmem`` memory (the agents' :func:`~memgym.agents.agent.form_episode`), each
    variant's memory loads a copy of its state, is bound to the episode and answers the items after
    ``rewind_use`` (:func:`~memgym.agents.agent.answer_items`); where an answer lands is measured
    with the shared formation's provenance. tests/pipelines/dialogmem/test_link_sweep.py checks that this
    gives each variant the rows and link counts its own formation gives (before that test, the
    sweep's navigation rows lacked ``picked_target``)."""

    def __init__(self, config: DialogMemEvalConfig, variants: list[Variant], judge_cache: Path) -> None:
        from memgym.agents.reasoner_agent import ReasonerAgent
        from memgym.backends.config import build_reasoner

        reasoner = build_reasoner(config.reasoner)
        judge = qa_judge(config, judge_cache)
        self.models = {"reasoner": reasoner, "judge": None if judge is None else judge.reasoner}
        base = build_memory(dataclasses.replace(config, memory="3dmem"))
        self.env = build_env(config, base, qa_scorers(config, judge))
        self.former = ReasonerAgent(base, reasoner)
        budgets = (config.reasoner.max_new_tokens, config.answer_tokens)
        self.agents = {v.name: ReasonerAgent(build_memory(v.config(config)), reasoner, *budgets) for v in variants}

    def play(self, episode: DialogMemEpisode, stores: dict[str, RunStore], only: set[str]) -> bool:
        """Play ``episode`` for every variant with items of ``only`` left to score; whether any had."""
        from memgym.agents.agent import answer_items, form_episode

        chosen = [i for i in episode.items if item_key(episode, i) in only]
        pending = {}
        for name in self.agents:
            done = stores[name].done_keys()
            pending[name] = {i.item_id for i in chosen if item_key(episode, i) not in done}
        if not any(pending.values()):
            return False
        options = {"score_items": set().union(*pending.values())}
        form_episode(self.env, self.former, episode=episode, options=options)
        state = self.former.memory.state_dict()
        # the formation's provenance (kept out of memory states): the variants hold its instances
        truth = SceneTruth.of(episode)
        located = Localisation(episode, self.former.memory.entry_objects(truth), truth)
        for name, agent in self.agents.items():
            if not pending[name]:
                continue
            agent.memory.load_state_dict({**state, "options": agent.memory.options})
            agent.memory.bind_episode(episode)
            observation, info = self.env.unwrapped.rewind_use(pending[name])
            links = formed_links(episode, agent)
            answers, _ = answer_items(self.env, agent, observation, info, (ReasonerError,))
            store = stores[name]
            if links is not None:
                LinkLog(store.folder / "links.json").save(episode.episode_id, links)
            store.append_many(item_rows(episode, answers, located))
            record_counts(store, take_throughput(self.models))  # the shared formation's replies count with the first
        return True


def write_sweep(
    folder: Path,
    variants: Sequence[Variant],
    stores: Mapping[str, RunStore],
    notes: Sequence[str],
    config: DialogMemEvalConfig,
    only: set[str],
) -> None:
    """Write the sweep's tables and figure (module docstring) from the stores' rows of the
    subset ``only`` so far."""
    rows = {v.name: [r for r in stores[v.name].rows() if "task" in r and r["key"] in only] for v in variants}
    played = {key.split("|", 1)[0] for key in only}  # episodes with subset items (item_key's prefix)
    links = {v.name: LinkLog(stores[v.name].folder / "links.json").total(played) for v in variants}
    systems = [v for v in variants if v.kind != "controlled"]
    write_comparison(
        folder,
        {v.name: rows[v.name] for v in systems},
        seed=config.bootstrap_seed,
        n_resamples=config.bootstrap_resamples,
    )
    metric = qa_metric([r for v in variants for r in rows[v.name]])
    summary = {v.name: summarise(rows[v.name], metric) for v in variants}
    table3 = main_table(systems, rows, summary, links, metric, config)
    write_text_atomic(
        folder / "table3.md",
        "# DialogMem Table 3: memory systems and linkers on the sweep subset\n\n"
        + to_markdown(table3, digits=1)
        + f"\nNavigation: geodesic success (%); QA: {metric} (0-100). Link quality: % of linkable turns linked to "
        "a snapshot showing an object they refer to. McNemar: exact test of navigation successes against "
        f"{REFERENCE} on the items both scored; QA diff: paired bootstrap 95% interval of the mean difference.\n"
        + "".join(f"\n{n}\n" for n in notes),
    )
    levels = [
        {
            "mode": v.mode,
            "level": v.level,
            "link_quality": links[v.name].quality,
            "navigation": summary[v.name]["navigation"],
            "n_navigation": summary[v.name]["n_navigation"],
            "qa": summary[v.name]["qa"],
            "n_qa": summary[v.name]["n_qa"],
        }
        for v in variants
        if v.kind == "controlled"
    ]
    write_text_atomic(folder / "link_quality.csv", to_csv(levels))
    write_text_atomic(
        folder / "link_quality.md",
        "# Link-quality sweep (controlled linker)\n\n"
        + to_markdown(levels, digits=1)
        + f"\nnavigation: geodesic success (%); qa: {metric}; link_quality: measured (%).\n",
    )
    plot_link_quality(folder / "link_quality.png", variants, summary, links, metric)


def summarise(rows: Sequence[dict[str, Any]], metric: str) -> dict[str, Any]:
    """Mean navigation success (%) and QA score (0-100) of scored rows, with their counts."""
    nav = [
        100.0 * r["geodesic_success"]
        for r in rows
        if r["task"] == "navigation" and r.get("geodesic_success") is not None
    ]
    qa = [
        r[metric] * (1.0 if metric == "llm_match" else 100.0)
        for r in rows
        if r["task"] == "qa" and r.get(metric) is not None
    ]
    return {
        "navigation": float(np.mean(nav)) if nav else None,
        "n_navigation": len(nav),
        "qa": float(np.mean(qa)) if qa else None,
        "n_qa": len(qa),
    }


def main_table(
    systems: Sequence[Variant],
    rows: Mapping[str, Sequence[dict[str, Any]]],
    summary: Mapping[str, dict[str, Any]],
    links: Mapping[str, Any],
    metric: str,
    config: DialogMemEvalConfig,
) -> list[dict[str, Any]]:
    """Table 3 rows: system, kind, navigation, QA, link quality and the paired tests against
    :data:`REFERENCE`."""
    scale = 1.0 if metric == "llm_match" else 100.0
    reference = {(r["key"], r["task"]): r for r in rows.get(REFERENCE, ())}
    table = []
    for v in systems:
        line = {"system": v.name, "kind": v.kind, **summary[v.name]}
        line["link_quality"] = links[v.name].quality if links[v.name].turns else None
        paired_nav = [
            (bool(reference[r["key"], "navigation"]["geodesic_success"]), bool(r["geodesic_success"]))
            for r in rows[v.name]
            if r["task"] == "navigation"
            and r.get("geodesic_success") is not None
            and reference.get((r["key"], "navigation"), {}).get("geodesic_success") is not None
        ]
        paired_qa = [
            (reference[r["key"], "qa"][metric] * scale, r[metric] * scale)
            for r in rows[v.name]
            if r["task"] == "qa"
            and r.get(metric) is not None
            and reference.get((r["key"], "qa"), {}).get(metric) is not None
        ]
        if v.name != REFERENCE and paired_nav:
            n01, n10, p = mcnemar_exact([a for a, _ in paired_nav], [b for _, b in paired_nav])
            line["mcnemar"] = f"+{n01}/-{n10}, p={p:.3g}"
        if v.name != REFERENCE and paired_qa:
            ref, own = zip(*paired_qa)
            rng = labelled_rng(config.bootstrap_seed, "qa-diff", v.name)
            diff = bootstrap_difference(own, ref, rng=rng, paired=True, n_resamples=config.bootstrap_resamples)
            line["qa_diff"] = f"{diff.estimate:+.1f} [{diff.low:+.1f}, {diff.high:+.1f}]"
        table.append(line)
    return table


def _controlled_points(
    variants: Sequence[Variant], summary: Mapping[str, dict[str, Any]], links: Mapping[str, Any], task: str, mode: str
) -> list[tuple[float, float]]:
    """``(link quality, score on task)`` of the controlled variants of ``mode`` that have both,
    by link quality."""
    points = [
        (links[v.name].quality, summary[v.name][task])
        for v in variants
        if v.kind == "controlled" and v.mode == mode and summary[v.name][task] is not None
    ]
    return sorted(p for p in points if p[0] is not None)


def plot_link_quality(
    path: Path,
    variants: Sequence[Variant],
    summary: Mapping[str, dict[str, Any]],
    links: Mapping[str, Any],
    metric: str,
) -> Path:
    """Figure 2: navigation and QA against measured link quality (module docstring)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(13, 4.5))
    curves = [f"{mode} links" for mode in ("missing", "wrong")]
    linkers = [v.name for v in variants if v.kind == "linker"]
    references = [v for v in variants if v.kind in ("probe", "baseline")]
    styles = system_styles([*curves, *linkers, *(v.name for v in references)])
    for axis, task, title in zip(axes, ("navigation", "qa"), ("navigation: geodesic success (%)", f"QA: {metric}")):
        axis.set_xlim(-3, 103)
        axis.set_ylim(0, 105)
        ends = []  # direct labels of the lines, pushed apart where they would overlap
        for mode, name in zip(("missing", "wrong"), curves):
            points = _controlled_points(variants, summary, links, task, mode)
            if points:
                style = styles[name]
                axis.plot(*zip(*points), marker=style["marker"], color=style["color"], label=name)
                ends.append((name, *points[-1], style["color"]))
        for name in linkers:
            if summary[name][task] is not None and links[name].quality is not None:
                axis.scatter(
                    [links[name].quality], [summary[name][task]], marker="*", s=150, zorder=3,
                    color=styles[name]["color"], edgecolor="black", linewidth=0.5, label=name,
                )  # fmt: skip
        for v in references:
            value = summary[v.name][task]
            if value is not None:
                axis.hlines(value, -3, 103, linestyles="--", linewidth=1, color=styles[v.name]["color"], label=v.name)
                ends.append((v.name, 100.0, value, styles[v.name]["color"]))
        label_line_ends(axis, ends)
        axis.set_xticks(range(0, 101, 20))
        axis.set_xlabel("link quality (%)")
        axis.set_title(title)
    fig.tight_layout()
    legend_outside(fig, list(axes))
    return save_figure(fig, path, dpi=100, tight=True)
