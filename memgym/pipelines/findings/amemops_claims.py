"""The AMemOps findings (:class:`~memgym.pipelines.findings.claim.Claim` each)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from memgym.pipelines.findings import measures as m
from memgym.pipelines.findings.claim import Claim, Measured, Outcome, Tables, runs_of
from memgym.pipelines.findings.verdicts import Effect

ERASING = ("gdn2", "kda", "gdn")


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


def _step(checkpoint: Any) -> tuple[int, str]:
    return (int(checkpoint), "") if str(checkpoint).isdigit() else (-1, str(checkpoint))


def am_erasing(core: str) -> Callable[[Tables], Outcome]:
    def measure(t: Tables) -> Outcome:
        from memgym.tasks.amemops_tables import averaged_contrast

        rows = _final_checkpoint(t.amemops)
        models = {r["model"] for r in rows}
        if core not in models or "no_erase" not in models:
            return f"needs {core} and no_erase evaluated on the same streams: {TRAIN_AM}"
        interval = averaged_contrast(
            rows, (core,), ("no_erase",), "post_update", rng=m.labelled_rng(f"am|{core}"), n_resamples=m.N_RESAMPLES
        )
        if interval is None:
            return f"needs post-update queries of {core} and no_erase: {TRAIN_AM}"
        n = len({r["stream"] for r in rows if r["model"] == core and r["query_type"] == "post_update"})
        effect = Effect(interval.estimate, interval.low, interval.high, n)
        return Measured(
            effect, f"{core} - no_erase on post-update queries (streams and seeds resampled)", runs_of(rows, core)
        )

    return measure


def am_update_specific(t: Tables) -> Outcome:
    from memgym.tasks.amemops_interaction import update_interactions

    rows = [r for r in _final_checkpoint(t.amemops) if r["model"] in ("gdn2", "no_erase")]
    results = (
        update_interactions(rows, ["gdn2:no_erase"], rng=m.labelled_rng("am|interaction"), n_resamples=m.N_RESAMPLES)
        if rows
        else []
    )
    found = [r for r in results if r.labels["term"] == "interaction" and r.labels["attribute"] == "all"]
    if not found or found[0].interval is None:
        return f"needs gdn2 and no_erase on streams with initial and post-update queries: {TRAIN_AM}"
    result = found[0]
    effect = Effect(result.estimate, result.interval.low, result.interval.high, int(result.labels["streams"]))
    return Measured(
        effect, "(gdn2 - no_erase) on post-update minus on initial (streams and seeds resampled)", runs_of(rows, "gdn2")
    )


def am_norope_delay(t: Tables) -> Outcome:
    rows = [r for r in t.amemops if r.get("earlier") is not None]
    if not rows:
        return "needs a matched-history evaluation: memgym eval amemops --config amemops_history.yaml"
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
        f"(gdn2 - attention) on updates minus on no-update, {longest:.0f} s delay",
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
)
