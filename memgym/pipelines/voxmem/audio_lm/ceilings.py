"""What the small audio LM's parts can do at most, measured without training it (issue 39 item 3).

Two ceilings, each on the held-out voices and the ``eval`` sound recordings:

* **Encoder** (is the information there?): a logistic regression on the frozen Whisper tiny.en
  features the projector reads (mean and standard deviation over a clip's audio tokens, ``2 x 384``),
  fitted on training-voice clips, predicts the cue, the sound (or nothing) and whether a sound is
  audible; for the speaker, the cosine similarity of two clips' mean features decides "same voice"
  at the threshold best on training pairs.
* **Language model** (can the frozen SmolLM2 answer when the words are given?): the ``said``
  question with the statement as text in the prompt in place of the audio, candidates ranked by
  log-probability as in :mod:`~memgym.pipelines.voxmem.audio_lm.heard`; and with nothing (its prior).

Run: ``python -m memgym.pipelines.voxmem.audio_lm.ceilings OUT [n_train] [n_heldout]``; writes
``OUT/ceilings.json`` (accuracies with 95 % bootstrap intervals). With a training checkpoint,
``... ceilings OUT CHECKPOINT [n_heldout]`` measures how well its projector's stage 1 tags name
the held-out clips' cue and sound (:func:`tag_readout`, ``OUT/tags.json``); with a training run
folder, ``... ceilings OUT RUN [n_heldout]`` scores ``said`` with its audio tokens as they are and
snapped to the word pieces its CTC readout names (:func:`snapped_said`, ``OUT/snapped.json``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from memgym.core.statistics import bootstrap_mean
from memgym.pipelines.voxmem.audio_lm.data import ask, draw_clip, example_rng, sound_name


def pooled_features(lm: Any, audio: np.ndarray) -> np.ndarray:
    """``(768,)`` mean and standard deviation over the clip's projector inputs (frozen encoder, pooled, normed)."""
    import torch

    from memgym.pipelines.voxmem.audio_lm.encoding import finish_encoding

    with torch.no_grad():
        feats = finish_encoding(lm.encoder, lm.prefix(audio), lm.start).numpy()
    return np.concatenate([feats.mean(0), feats.std(0)])


def _interval(hits: list[float], seed: int) -> dict[str, float]:
    i = bootstrap_mean(hits, rng=np.random.default_rng(seed))
    return {"estimate": i.estimate, "low": i.low, "high": i.high, "n": len(hits)}


def encoder_ceiling(train: list[tuple[Any, np.ndarray]], heldout: list[tuple[Any, np.ndarray]]) -> dict[str, Any]:
    """Probe accuracies (``cue``, ``sound``, ``noise``, ``speaker``) from ``(clip, features)`` pairs."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    x_train = np.stack([f for _, f in train])
    x_test = np.stack([f for _, f in heldout])
    scaler = StandardScaler().fit(x_train)
    labels = {
        "cue": lambda c: c.cue,
        "sound": lambda c: sound_name(c.sound),
        "noise": lambda c: bool(c.sound),
    }
    out: dict[str, Any] = {}
    for k, (task, label) in enumerate(labels.items()):
        probe = LogisticRegression(C=0.1, max_iter=2000).fit(scaler.transform(x_train), [label(c) for c, _ in train])
        guess = probe.predict(scaler.transform(x_test))
        out[task] = _interval([float(g == label(c)) for g, (c, _) in zip(guess, heldout)], k)
    out["speaker"] = _speaker_ceiling(train, heldout)
    return out


def _speaker_ceiling(train: list[tuple[Any, np.ndarray]], heldout: list[tuple[Any, np.ndarray]]) -> dict[str, Any]:
    """Same voice or not, for consecutive pairs, by the cosine of the clips' mean features (threshold from training pairs)."""

    def pairs(rows: list[tuple[Any, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
        sims, same = [], []
        for i in range(len(rows)):
            for j in range(i + 1, len(rows)):
                a, b = rows[i][1][:384], rows[j][1][:384]
                sims.append(float(a @ b / np.linalg.norm(a) / np.linalg.norm(b)))
                same.append(rows[i][0].voice == rows[j][0].voice)
        return np.array(sims), np.array(same)

    sims, same = pairs(train)
    # balanced accuracy on training pairs picks the threshold (same-voice pairs are the minority)
    grid = np.quantile(sims, np.linspace(0.01, 0.99, 197))
    balanced = [(np.mean(sims[same] >= t) + np.mean(sims[~same] < t)) / 2 for t in grid]
    threshold = float(grid[int(np.argmax(balanced))])
    sims, same = pairs(heldout)
    rng = np.random.default_rng(5)
    picks = np.concatenate([rng.choice(np.flatnonzero(same), 100), rng.choice(np.flatnonzero(~same), 100)])
    return {**_interval([float((sims[k] >= threshold) == same[k]) for k in picks], 3), "threshold": threshold}


def language_model_ceiling(lm: Any, clips: list[Any], sound_classes: tuple[str, ...]) -> dict[str, Any]:
    """``said`` answered by the frozen LM from the statement as text, and from nothing (its prior)."""
    with_text, prior = [], []
    for clip in clips:
        example = ask("said", (clip,), sound_classes)
        target = example.candidates.index(example.answer)
        for question, out in (
            (f'The user said: "{clip.text}"\n{example.question}', with_text),
            (example.question, prior),
        ):
            out.append(float(int(np.argmax(lm.score([], question, example.candidates))) == target))
    chance = float(np.mean([1 / len(ask("said", (c,), sound_classes).candidates) for c in clips]))
    return {"said_from_text": _interval(with_text, 1), "said_prior": _interval(prior, 2), "said_chance": chance}


def main(out: Path, n_train: int, n_heldout: int) -> dict[str, Any]:
    """Measure both ceilings with ``n_train`` training-voice and ``n_heldout`` held-out clips (seed 0)."""
    import torch

    from memgym.datasets.speech.voices import espeak_voice_bank
    from memgym.pipelines.voxmem.audio_lm import parts
    from memgym.pipelines.voxmem.audio_lm.config import DEFAULT_HELDOUT_VOICES
    from memgym.pipelines.voxmem.audio_lm.data import split_voices
    from memgym.pipelines.voxmem.audio_lm.model import AudioLM
    from memgym.pipelines.voxmem.audio_lm.train import Speech

    torch.set_num_threads(1)
    train_voices, heldout_voices = split_voices(espeak_voice_bank(), DEFAULT_HELDOUT_VOICES)
    lm = AudioLM(*parts.build_from_packages(0), train_layers=0)
    rows: dict[str, list[tuple[Any, np.ndarray]]] = {}
    for split, voices, sounds, n in (
        ("train", train_voices, "train", n_train),
        ("heldout", heldout_voices, "eval", n_heldout),
    ):
        speech = Speech(out / "clips" / split, voices, sounds, 15.0)
        clips = [draw_clip(voices, speech.sound_classes, 0.5, example_rng(0, f"ceiling/{split}", k)) for k in range(n)]
        rows[split] = [(c, pooled_features(lm, speech.audio(c))) for c in clips]
    result = {
        "encoder": encoder_ceiling(rows["train"], rows["heldout"]),
        "language_model": language_model_ceiling(lm, [c for c, _ in rows["heldout"]], speech.sound_classes),
        "n_train": n_train,
        "n_heldout": n_heldout,
    }
    (out / "ceilings.json").write_text(json.dumps(result, indent=1) + "\n")
    return result


def tag_readout(out: Path, checkpoint: Path, n_heldout: int) -> dict[str, Any]:
    """Accuracy of a trained projector's stage 1 tags on held-out clips: each clip's cue and sound
    as the answer whose embedding row has the largest dot product with the clip's mean audio token
    (what :meth:`AudioLM.tag_loss` trains), the clips :func:`main` draws (seed 0); writes ``OUT/tags.json``."""
    import torch

    from memgym.datasets.speech.voices import espeak_voice_bank
    from memgym.pipelines.voxmem.audio_lm import parts
    from memgym.pipelines.voxmem.audio_lm.config import DEFAULT_HELDOUT_VOICES
    from memgym.pipelines.voxmem.audio_lm.data import split_voices
    from memgym.pipelines.voxmem.audio_lm.model import AudioLM
    from memgym.pipelines.voxmem.audio_lm.train import Speech

    torch.set_num_threads(1)
    _, voices = split_voices(espeak_voice_bank(), DEFAULT_HELDOUT_VOICES)
    processor, model = parts.build_from_packages(0)
    model.load_state_dict(torch.load(checkpoint, weights_only=False)["trainable"], strict=False)
    lm = AudioLM(processor, model, train_layers=0)
    speech = Speech(out / "clips" / "heldout", voices, "eval", 15.0)
    clips = [
        draw_clip(voices, speech.sound_classes, 0.5, example_rng(0, "ceiling/heldout", k)) for k in range(n_heldout)
    ]
    result: dict[str, Any] = {"checkpoint": str(checkpoint)}
    hits: dict[str, list[float]] = {"cue": [], "sound": []}
    with torch.no_grad():
        for clip in clips:
            pooled = lm.audio_embeds(lm.prefix(speech.audio(clip))).mean(0)
            for task in hits:
                example = ask(task, (clip,), speech.sound_classes)
                guess = int(torch.argmax(lm.answer_rows(example.candidates) @ pooled))
                hits[task].append(float(example.candidates[guess] == example.answer))
    for k, (task, values) in enumerate(hits.items()):
        result[task] = _interval(values, 11 + k)
    (out / "tags.json").write_text(json.dumps(result, indent=1) + "\n")
    return result


def snapped_said(out: Path, run: Path, n_heldout: int) -> dict[str, Any]:
    """``said`` on held-out clips (the examples of :func:`~memgym.pipelines.voxmem.audio_lm.heard.evaluate_heard`)
    for the trained model of the run folder ``run`` (its ``checkpoint.pt``): with its audio tokens as
    they are, *snapped* (each replaced by the input embedding of the word piece its CTC readout over
    the pool's word pieces names, :meth:`AudioLM.ctc_targets`), and with silence; writes ``OUT/snapped.json``.

    Snapped answers measure what the words the audio side carries would give if the LM read them as
    tokens: the gap to "as they are" is the part lost between the readout and the LM's reading.
    """
    import torch

    from memgym.datasets.speech.voices import espeak_voice_bank
    from memgym.pipelines.voxmem.audio_lm import parts
    from memgym.pipelines.voxmem.audio_lm.config import AudioLMTrainConfig
    from memgym.pipelines.voxmem.audio_lm.data import make_example, split_voices
    from memgym.pipelines.voxmem.audio_lm.model import AudioLM
    from memgym.pipelines.voxmem.audio_lm.train import Pool, Speech

    torch.set_num_threads(1)
    state = torch.load(run / "checkpoint.pt", weights_only=False)
    config = AudioLMTrainConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in state["config"].items()})
    train_voices, voices = split_voices(espeak_voice_bank(), config.heldout_voices)
    processor, model = parts.build_from_packages(config.seed)
    lm = AudioLM(processor, model, config.train_layers, config.lm_rank, config.seed)
    model.load_state_dict(state["trainable"], strict=False)
    vocabulary = Pool(lm, Speech(out / "clips" / "train", train_voices, "train", config.snr_db), config).vocabulary
    speech = Speech(out / "clips" / "heldout", voices, "eval", config.snr_db)
    table = model.get_input_embeddings().weight
    original = lm.audio_embeds
    ways = {
        "audio": original,
        "snapped": lambda prefix: table[lm.readout(original(prefix), vocabulary, config.align_cosine)],
        "silence": original,
    }
    hits: dict[str, list[float]] = {way: [] for way in ways}
    for i in range(n_heldout):
        example = make_example(
            "said", speech.voices, speech.sound_classes, 0.5, example_rng(config.seed, "heldout/said", i)
        )
        audio = speech.audio(example.clips[0])
        for way, embeds in ways.items():
            lm.audio_embeds = embeds
            prefix = lm.prefix(np.zeros_like(audio) if way == "silence" else audio)
            scores = lm.score([prefix], example.question, example.candidates)
            hits[way].append(float(example.candidates[int(np.argmax(scores))] == example.answer))
    lm.audio_embeds = original
    result = {"run": str(run), **{way: _interval(h, 21 + k) for k, (way, h) in enumerate(hits.items())}}
    (out / "snapped.json").write_text(json.dumps(result, indent=1) + "\n")
    return result


if __name__ == "__main__":
    folder = Path(sys.argv[1])
    folder.mkdir(parents=True, exist_ok=True)
    if len(sys.argv) > 2 and Path(sys.argv[2]).is_dir():  # OUT RUN [n_heldout]: said with snapped audio tokens
        print(json.dumps(snapped_said(folder, Path(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 40)))
    elif len(sys.argv) > 2 and sys.argv[2].endswith(".pt"):  # OUT CHECKPOINT [n_heldout]: the tag readout
        print(json.dumps(tag_readout(folder, Path(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 120)))
    else:
        args = [int(a) for a in sys.argv[2:4]]
        print(json.dumps(main(folder, *(args or [320, 120])), indent=1))
