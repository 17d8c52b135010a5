"""Does the model hear? Held-out questions answered with the clips and with silence in their place.

For every scored task (:data:`~memgym.pipelines.voxmem.audio_lm.data.SCORED_TASKS`) the model
ranks the task's candidate answers by log-probability (:meth:`AudioLM.score`) after the held-out
clips (voices and sound recordings never heard in training) and after silence of the same
lengths (the *no-audio baseline*: the same model, prompt and number of audio tokens, no signal).
Accuracy is the share of examples whose top candidate is the answer; chance is the mean of
``1 / len(candidates)`` and *majority* the share of the most frequent answer (e.g. "nothing" for
sound questions, where half the clips have no sound). Intervals: 95 % percentile bootstrap over examples (the difference paired).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from memgym.core.statistics import bootstrap_difference, bootstrap_mean
from memgym.pipelines.voxmem.audio_lm.data import SCORED_TASKS, example_rng, make_example


def evaluate_heard(
    lm: Any, speech: Any, per_task: int, seed: int, *, tasks: tuple[str, ...] = SCORED_TASKS, progress: bool = False
) -> dict[str, Any]:
    """Per scored task among ``tasks``: ``n``, ``chance``, ``audio`` / ``silence`` accuracy and ``difference`` (each
    ``{"estimate", "low", "high"}``), and the per-example ``correct`` lists."""
    results: dict[str, Any] = {}
    for t, task in enumerate(task for task in SCORED_TASKS if task in tasks):
        heard, silent, chance, answers = [], [], [], []
        for i in range(per_task):
            rng = example_rng(seed, f"heldout/{task}", i)
            example = make_example(task, speech.voices, speech.sound_classes, 0.5, rng)
            audios = [speech.audio(c) for c in example.clips]
            target = example.candidates.index(example.answer)
            for waves, out in ((audios, heard), ([np.zeros_like(a) for a in audios], silent)):
                scores = lm.score([lm.prefix(w) for w in waves], example.question, example.candidates)
                out.append(float(int(np.argmax(scores)) == target))
            chance.append(1.0 / len(example.candidates))
            answers.append(example.answer)
        rng = np.random.default_rng(seed + 1000 * t)
        results[task] = {
            "n": per_task,
            "chance": float(np.mean(chance)),
            "majority": max(answers.count(a) for a in set(answers)) / len(answers),
            "audio": _interval(bootstrap_mean(heard, rng=rng)),
            "silence": _interval(bootstrap_mean(silent, rng=rng)),
            "difference": _interval(bootstrap_difference(heard, silent, rng=rng, paired=True)),
            "correct": {"audio": heard, "silence": silent},
        }
        if progress:
            r = results[task]
            print(
                f"audio_lm: held-out {task}: audio {r['audio']['estimate']:.2f} silence "
                f"{r['silence']['estimate']:.2f} chance {r['chance']:.2f}",
                flush=True,
            )
    return results


def _interval(interval: Any) -> dict[str, float]:
    return {"estimate": interval.estimate, "low": interval.low, "high": interval.high}
