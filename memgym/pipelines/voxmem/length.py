"""Length or competition: splitting VoxMem's 8K -> 64K decline with the length-controlled build.

Two builds of the same items (``memgym generate voxmem ...`` and the same with
``length_control=fixed_competition``) share their smallest history; above it the default adds
haystacks on the question's subject at every level, the control only other-subject haystacks and
fillers. With per-item correctness from ``memgym eval voxmem`` on each build (same memories,
same model), for each memory and model, over the items scored in both runs::

    total decline  = default(largest) - default(smallest)
    length         = control(largest) - control(smallest)
    competition    = default(largest) - control(largest)

each a paired bootstrap interval over items (the three share the items; ``total = length +
competition`` when the smallest histories score alike, which the identical smallest histories
make true for a deterministic memory: ``smallest_differs`` counts items where they do not).

    python -m memgym.pipelines.voxmem.length DEFAULT_RUN CONTROL_RUN
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from memgym.core.errors import MemgymError
from memgym.core.statistics import bootstrap_difference, bootstrap_mean
from memgym.pipelines.reporting import read_results


def _correct(rows: Sequence[dict[str, Any]]) -> dict[tuple[str, str], dict[str, dict[int, float]]]:
    """(model, memory) -> item -> budget -> correctness (rows without a verdict left out)."""
    out: dict = {}
    for row in rows:
        if row.get("correct") is None:
            continue
        key = (row["model"], row["memory"])
        out.setdefault(key, {}).setdefault(row["item_id"], {})[int(row["budget"])] = float(row["correct"])
    return out


def length_vs_competition(
    default_rows: Sequence[dict[str, Any]], control_rows: Sequence[dict[str, Any]], *, seed: int = 0
) -> dict[tuple[str, str], dict[str, Any]]:
    """The decomposition of the module docstring per (model, memory) scored in both runs.

    Returns:
        (model, memory) -> ``{"items", "budgets", "accuracy": {"default", "control"} -> budget ->
        Interval, "total", "length", "competition": Interval, "smallest_differs": int}``; accuracies
        and differences are fractions (x100 for percent points).
    """
    default, control = _correct(default_rows), _correct(control_rows)
    out = {}
    for key in sorted(set(default) & set(control)):
        budgets = sorted(
            {b for per in default[key].values() for b in per} & {b for per in control[key].values() for b in per}
        )
        if len(budgets) < 2:
            continue
        low, high = budgets[0], budgets[-1]
        items = sorted(
            i
            for i in set(default[key]) & set(control[key])
            if all(b in default[key][i] and b in control[key][i] for b in budgets)
        )
        if not items:
            continue
        d = {b: np.array([default[key][i][b] for i in items]) for b in budgets}
        c = {b: np.array([control[key][i][b] for i in items]) for b in budgets}

        def paired(a, b):
            return bootstrap_difference(a, b, rng=np.random.default_rng(seed), paired=True)

        out[key] = {
            "items": len(items),
            "budgets": budgets,
            "accuracy": {
                name: {b: bootstrap_mean(v[b], rng=np.random.default_rng(seed)) for b in budgets}
                for name, v in (("default", d), ("control", c))
            },
            "total": paired(d[high], d[low]),
            "length": paired(c[high], c[low]),
            "competition": paired(d[high], c[high]),
            "smallest_differs": int(np.sum(d[low] != c[low])),
        }
    return out


def markdown(result: dict[tuple[str, str], dict[str, Any]]) -> str:
    """Tables of :func:`length_vs_competition`: accuracy per budget, then the decomposition (points)."""
    lines = []
    for (model, memory), r in result.items():
        lines += [f"### {memory} / {model} ({r['items']} items in both builds)", ""]
        lines += ["| build | " + " | ".join(f"{b // 1024}K" for b in r["budgets"]) + " |"]
        lines += ["| --- |" + " ---: |" * len(r["budgets"])]
        for name, label in (("default", "default"), ("control", "fixed_competition")):
            cells = [f"{100 * r['accuracy'][name][b].estimate:.1f}" for b in r["budgets"]]
            lines += [f"| {label} | " + " | ".join(cells) + " |"]
        lines += ["", "| contrast (points, paired 95 % CI) | estimate |", "| --- | ---: |"]
        for name, label in (
            ("total", "total decline: default largest - smallest"),
            ("length", "length: control largest - smallest"),
            ("competition", "competition: default - control at the largest"),
        ):
            iv = r[name]
            lines += [f"| {label} | {100 * iv.estimate:+.1f} [{100 * iv.low:+.1f}, {100 * iv.high:+.1f}] |"]
        lines += ["", f"items whose smallest histories scored differently: {r['smallest_differs']}", ""]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m memgym.pipelines.voxmem.length DEFAULT_RUN CONTROL_RUN``: print the tables."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2:
        print("usage: python -m memgym.pipelines.voxmem.length DEFAULT_RUN CONTROL_RUN", file=sys.stderr)
        return 2
    try:
        result = length_vs_competition(read_results(args[0]), read_results(args[1]))
    except MemgymError as exc:
        print(f"memgym: error: {exc}", file=sys.stderr)
        return 2
    if not result:
        print("memgym: error: the two runs share no memory and model scored at two budgets", file=sys.stderr)
        return 2
    print(markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
