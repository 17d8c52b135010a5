"""The update-specific erasure interaction: estimates equal hand computations, paired intervals."""

from __future__ import annotations

import numpy as np

from memgym.tasks.amemops.interaction import (
    intervening_markdown,
    operation_accuracy,
    update_interaction_report,
    update_interactions,
)


def _rows(rng: np.random.Generator, accuracy: dict[tuple[str, str], float], n_streams: int = 30, seeds=(0, 1)):
    """Per-query rows: two queries per (model, seed, stream, query type), each correct with the
    given probability plus a per-stream difficulty shared by every model (what pairing removes)."""
    rows = []
    difficulty = rng.normal(0.0, 0.2, size=n_streams)
    for (model, query_type), p in accuracy.items():
        for seed in seeds:
            for stream in range(n_streams):
                for attribute in ("gain", "pan"):
                    correct = int(rng.random() < np.clip(p + difficulty[stream], 0, 1))
                    rows.append(
                        {
                            "model": model,
                            "seed": seed,
                            "checkpoint": 200,
                            "stream": f"s{stream}",
                            "query_type": query_type,
                            "attribute": attribute,
                            "correct": correct,
                        }
                    )
    return rows


def _hand_mean(rows, model, query_type, attribute="all"):
    """Stream means within seed, then streams, then seeds (percent)."""
    per_seed = {}
    for r in rows:
        if r["model"] == model and r["query_type"] == query_type and attribute in ("all", r["attribute"]):
            per_seed.setdefault(r["seed"], {}).setdefault(r["stream"], []).append(r["correct"])
    return 100 * np.mean([np.mean([np.mean(v) for v in streams.values()]) for streams in per_seed.values()])


ACCURACY = {
    ("gdn2", "post_update"): 0.8,
    ("gdn2", "initial"): 0.7,
    ("no_erase", "post_update"): 0.5,
    ("no_erase", "initial"): 0.6,
}


def test_interaction_is_the_difference_of_differences_with_an_interval():
    rows = _rows(np.random.default_rng(0), ACCURACY, n_streams=60, seeds=(0, 1, 2))
    results = update_interactions(rows, ["gdn2:no_erase"], rng=np.random.default_rng(1), n_resamples=2000)
    terms = {(r.labels["attribute"], r.labels["term"]): r for r in results}
    for attribute in ("all", "gain", "pan"):
        post = _hand_mean(rows, "gdn2", "post_update", attribute) - _hand_mean(
            rows, "no_erase", "post_update", attribute
        )
        initial = _hand_mean(rows, "gdn2", "initial", attribute) - _hand_mean(rows, "no_erase", "initial", attribute)
        assert np.isclose(terms[attribute, "post_update"].estimate, post)
        assert np.isclose(terms[attribute, "initial"].estimate, initial)
        assert np.isclose(terms[attribute, "interaction"].estimate, post - initial)
    interaction = terms["all", "interaction"]
    assert 0 < interaction.interval.low < 20 < interaction.interval.high  # true (0.8 - 0.5) - (0.7 - 0.6): +20 pp
    assert terms["all", "initial"].interval.low < 10 < terms["all", "initial"].interval.high  # true +10 pp
    assert interaction.labels["streams"] == 60


def test_no_interaction_when_the_gap_is_the_same_on_both_query_types():
    same = {("a", "post_update"): 0.8, ("a", "initial"): 0.8, ("b", "post_update"): 0.6, ("b", "initial"): 0.6}
    rows = _rows(np.random.default_rng(2), same, n_streams=60)
    results = update_interactions(rows, ["a:b"], rng=np.random.default_rng(3), n_resamples=2000)
    interaction = next(r for r in results if r.labels == r.labels | {"attribute": "all", "term": "interaction"})
    assert interaction.interval.low < 0 < interaction.interval.high


def test_averaged_side_and_operation_accuracy(tmp_path):
    accuracy = ACCURACY | {("kda", "post_update"): 0.9, ("kda", "initial"): 0.7}
    rows = _rows(np.random.default_rng(4), accuracy)
    results = update_interactions(rows, ["gdn2+kda:no_erase"], rng=np.random.default_rng(5), n_resamples=500)
    post = next(r for r in results if r.labels["attribute"] == "all" and r.labels["term"] == "post_update")
    hand = (_hand_mean(rows, "gdn2", "post_update") + _hand_mean(rows, "kda", "post_update")) / 2
    assert np.isclose(post.estimate, hand - _hand_mean(rows, "no_erase", "post_update"))
    cells = operation_accuracy(rows, ["gdn2", "kda", "no_erase"], rng=np.random.default_rng(6), n_resamples=500)
    kda = next(c for c in cells if c.labels == c.labels | {"model": "kda", "query_type": "initial", "attribute": "all"})
    assert np.isclose(kda.estimate, _hand_mean(rows, "kda", "initial"))
    text = update_interaction_report(rows, ["gdn2", "kda", "no_erase"], ["gdn2:no_erase"], tmp_path, n_resamples=200)
    assert text == (tmp_path / "update_interaction.md").read_text()
    assert "| gdn2:no_erase | 200 | all | 30 |" in text and "| kda | 200 | all |" in text
    assert (
        update_interaction_report(rows, ["gdn2", "kda", "no_erase"], ["gdn2:no_erase"], tmp_path, n_resamples=200)
        == text
    )


def test_a_higher_level_widens_the_intervals_on_the_same_resamples():
    rows = _rows(np.random.default_rng(7), ACCURACY, n_streams=40)
    at = {
        level: {
            (r.labels["attribute"], r.labels["term"]): r
            for r in update_interactions(
                rows, ["gdn2:no_erase"], rng=np.random.default_rng(8), n_resamples=1000, level=level
            )
        }
        for level in (0.95, 0.9875)
    }
    default = update_interactions(rows, ["gdn2:no_erase"], rng=np.random.default_rng(8), n_resamples=1000)
    assert [r.interval for r in default] == [r.interval for r in at[0.95].values()]
    for key, wide in at[0.9875].items():
        narrow = at[0.95][key]
        assert wide.estimate == narrow.estimate and wide.interval.level == 0.9875
        assert wide.interval.low <= narrow.interval.low and wide.interval.high >= narrow.interval.high
    assert any(at[0.9875][k].interval.high > at[0.95][k].interval.high for k in at[0.95])


def test_intervening_markdown_splits_the_interaction_by_writes_since_the_answer():
    """No-erase loses updated queries only where other writes intervene: the interaction shows in
    the upper stratum and not the lower one; wrong post-update answers that gave the superseded value
    are counted per stratum; absent-source queries (intervening None) are left out."""
    rng = np.random.default_rng(7)
    rows = []
    for intervening, bad in ((0, 0.8), (3, 0.3)):
        accuracy = ACCURACY | {("no_erase", "post_update"): bad, ("no_erase", "initial"): 0.8}
        accuracy |= {("gdn2", "post_update"): 0.8, ("gdn2", "initial"): 0.8}
        for r in _rows(rng, accuracy, n_streams=40):
            r["stream"] += f"-{intervening}"
            r["intervening"] = intervening
            r["previous_value"] = int(
                r["query_type"] == "post_update" and not r["correct"] and r["model"] == "no_erase"
            )
            rows.append(r)
    rows.append(rows[0] | {"query_type": "absent", "intervening": None})
    text = intervening_markdown(rows, ["gdn2", "no_erase"], ["gdn2:no_erase"], n_resamples=300)
    lower, upper = text.split("## 2 or more intervening writes")
    assert "## fewer than 2 intervening writes" in lower and "### Accuracy (%) by query type" in upper

    def interaction(part):
        line = next(x for x in part.splitlines() if x.startswith("| gdn2:no_erase | 200 | all |"))
        return float(line.split("|")[-2].split()[0])

    assert abs(interaction(lower)) < 12 and interaction(upper) > 30  # true 0 and +50 pp
    wrong = [r for r in rows if r["model"] == "no_erase" and r["query_type"] == "post_update" and not r["correct"]]
    high = sum(r["intervening"] == 3 for r in wrong)
    assert f"| no_erase | 200 | all | {high} | 100.0 |" in upper
    assert "| gdn2 | 200 | all | " in upper and "| - |" not in upper.split("superseded value")[1].split("gdn2")[0]
