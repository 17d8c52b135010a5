"""The AMemOps findings (:class:`~memgym.pipelines.findings.claim.Claim` each).

Eval rows name a model by its core, bare (``gdn2``) or with a variant suffix: ``gdn2@cpu-audio``
when trained with ``preset=cpu-audio`` (:mod:`memgym.pipelines.amemops.presets`), ``gdn2@noconv``
for a named variant. A comparison takes all of its models from one variant (:func:`one_variant`),
never a mix, and says which it used.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from memgym.pipelines.findings import measures as m
from memgym.pipelines.findings.amemops_training import am_conv_pitch, am_familiarity
from memgym.pipelines.findings.claim import Claim, Measured, Outcome, Tables, runs_of
from memgym.pipelines.findings.verdicts import Effect

ERASING = ("gdn2", "kda", "gdn")
MIN_SEEDS = 3
"""Training seeds an erasure comparison needs before it decides: at CPU scale one seed's margin
hangs on the CPU's arithmetic (docs/amemops_models.md, "The cpu-tiny learning check")."""


TRAIN_AM = "memgym eval amemops preset=cpu-audio train=true"


def _final_checkpoint(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per model, only the rows of its last checkpoint (the paper reports final checkpoints), and
    no matched-history rows (measured apart)."""
    rows = [r for r in rows if r.get("earlier") is None]
    last: dict[str, Any] = {}
    for row in rows:
        step = row.get("checkpoint")
        if row["model"] not in last or _step(step) > _step(last[row["model"]]):
            last[row["model"]] = step
    return [r for r in rows if r.get("checkpoint") == last[r["model"]]]


def one_variant(rows: Sequence[dict[str, Any]], cores: Sequence[str]) -> tuple[list[dict[str, Any]], str]:
    """The rows of the one variant (``@suffix``, "" for bare names) that holds every core of
    ``cores``, renamed to their core, and a note naming the variant and any other left out.

    Several complete variants: the bare names (the paper's training) first, then the variant
    with the most streams, then the first by name. No complete variant: no rows.
    """
    held: dict[str, set[str]] = {}
    streams: dict[str, set[Any]] = {}
    for row in rows:
        core, _, suffix = str(row["model"]).partition("@")
        if core in cores:
            held.setdefault(suffix, set()).add(core)
            streams.setdefault(suffix, set()).add(row.get("stream"))
    complete = sorted((s for s in held if held[s] >= set(cores)), key=lambda s: (s != "", -len(streams[s]), s))
    if not complete:
        return [], ""
    chosen = complete[0]
    names = {f"{c}@{chosen}" if chosen else c: c for c in cores}
    picked = [{**r, "model": names[r["model"]]} for r in rows if r["model"] in names]
    others = sorted(f"@{s}" if s else "bare names" for s in held if s != chosen)
    note = f"models {', '.join(names)}" if chosen else ""
    if others:
        note += ("; " if note else "bare names; ") + f"not merged with {', '.join(others)}"
    return picked, note


def _with_note(text: str, note: str) -> str:
    return f"{text} [{note}]" if note else text


def _seeds(rows: Sequence[dict[str, Any]], models: Sequence[str]) -> int:
    """The fewest training seeds any of ``models`` has in ``rows``."""
    return min(len({r["seed"] for r in rows if r["model"] == model}) for model in models)


def _step(checkpoint: Any) -> tuple[int, str]:
    return (int(checkpoint), "") if str(checkpoint).isdigit() else (-1, str(checkpoint))


def am_erasing(core: str) -> Callable[[Tables], Outcome]:
    def measure(t: Tables) -> Outcome:
        from memgym.tasks.amemops.tables import averaged_contrast

        rows, note = one_variant(_final_checkpoint(t.amemops), (core, "no_erase"))
        if not rows:
            return f"needs {core} and no_erase (one preset: the same @suffix) evaluated on the same streams: {TRAIN_AM}"
        interval = averaged_contrast(
            rows, (core,), ("no_erase",), "post_update", rng=m.labelled_rng(f"am|{core}"), n_resamples=m.N_RESAMPLES
        )
        if interval is None:
            return f"needs post-update queries of {core} and no_erase: {TRAIN_AM}"
        n = len({r["stream"] for r in rows if r["model"] == core and r["query_type"] == "post_update"})
        effect = Effect(interval.estimate, interval.low, interval.high, n, _seeds(rows, (core, "no_erase")))
        text = f"{core} - no_erase on post-update queries (streams and seeds resampled)"
        return Measured(effect, _with_note(text, note), runs_of(rows, core))

    return measure


def am_update_specific(t: Tables) -> Outcome:
    from memgym.tasks.amemops.interaction import update_interactions

    rows, note = one_variant(_final_checkpoint(t.amemops), ("gdn2", "no_erase"))
    results = (
        update_interactions(rows, ["gdn2:no_erase"], rng=m.labelled_rng("am|interaction"), n_resamples=m.N_RESAMPLES)
        if rows
        else []
    )
    found = [r for r in results if r.labels["term"] == "interaction" and r.labels["attribute"] == "all"]
    if not found or found[0].interval is None:
        return f"needs gdn2 and no_erase (one preset) on streams with initial and post-update queries: {TRAIN_AM}"
    result = found[0]
    streams = int(result.labels["streams"])
    effect = Effect(
        result.estimate, result.interval.low, result.interval.high, streams, _seeds(rows, ("gdn2", "no_erase"))
    )
    text = "(gdn2 - no_erase) on post-update minus on initial (streams and seeds resampled)"
    return Measured(effect, _with_note(text, note), runs_of(rows, "gdn2"))


def am_norope_delay(t: Tables) -> Outcome:
    rows, note = one_variant([r for r in t.amemops if r.get("earlier") is not None], ("gdn2", "attention"))
    if not rows:
        return (
            "needs a matched-history evaluation of gdn2 and attention (one preset): "
            "memgym eval amemops --config amemops_history.yaml"
        )
    longest = max(float(r["delay_s"]) for r in rows)
    tidy = [
        {
            "system": r["model"],
            "item": r["template"],
            "score": 100.0 * float(r["correct"]),
            "operation": r["operation"],
            "run": r["run"],
        }
        for r in rows
        if float(r["delay_s"]) == longest and r.get("earlier") == "target"
    ]
    effect = m.gain_interaction(
        tidy,
        "gdn2",
        "attention",
        lambda r: r["operation"] == "updated",
        lambda r: r["operation"] == "no_update",
        "am|norope",
    )
    if effect is None:
        return "needs gdn2 and attention (no RoPE) on updated and no-update templates at the longest delay"
    return Measured(
        effect,
        _with_note(f"(gdn2 - attention) on updates minus on no-update, {longest:.0f} s delay", note),
        runs_of(tidy, "gdn2", "attention"),
    )


AMEMOPS: tuple[Claim, ...] = (
    *(
        Claim(
            f"am-{core}-over-no-erase",
            "amemops",
            f"{core.upper()} (erasing) beats no-erase on post-update queries",
            "GDN2 +11.3 [1.9, 24.8] (Set 2, fixed); +5.5 [3.4, 7.7] ESC-50; symbolic 82.7-85.1% vs 58.2%",
            "positive",
            am_erasing(core),
            min_items=20,
            min_seeds=MIN_SEEDS,
            paper_effect=11.3 if core == "gdn2" else None,
        )
        for core in ERASING
    ),
    Claim(
        "am-update-specific",
        "amemops",
        "Erasure's advantage is specific to updates (post-update minus initial)",
        "erasure improves updating (no initial-query advantage reported)",
        "positive",
        am_update_specific,
        min_items=20,
        min_seeds=MIN_SEEDS,
    ),
    Claim(
        "am-norope-long-delay",
        "amemops",
        "Attention without RoPE loses more than GDN2 on updates at long delays",
        "update loss 33-35 pp (no-RoPE attention) vs 9-11 pp (GDN2) at 120 s",
        "positive",
        am_norope_delay,
        min_items=20,
        paper_effect=24.0,
    ),
    Claim(
        "am-familiarity",
        "amemops",
        "Training on other recordings of the test instruments raises GDN2's update advantage over RoPE attention",
        "I = 13.4 pp [8.7, 18.0] (gain 9.6, pan 16.8; NSynth Sets 1 and 2, 24k steps)",
        "positive",
        lambda t: am_familiarity(_final_checkpoint(t.amemops)),
        min_items=20,
        paper_effect=13.4,
    ),
    Claim(
        "am-conv-large-pitch",
        "amemops",
        "The four-frame convolution helps retrieval across large pitch differences",
        "convolution helps retrieval across large pitch differences (Fig. 2a; no number given)",
        "positive",
        lambda t: am_conv_pitch(_final_checkpoint(t.amemops)),
        min_items=20,
    ),
)
