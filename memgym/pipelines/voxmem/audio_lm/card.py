"""The model card (``README.md``) written next to the trained audio LM."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np

from memgym.pipelines.voxmem.audio_lm.parts import SYSTEM_PROMPT


def _curve(losses: list[float], points: int = 6) -> str:
    if not losses:
        return "not run"
    chunks = np.array_split(np.asarray(losses), min(points, len(losses)))
    return " -> ".join(f"{chunk.mean():.3f}" for chunk in chunks)


def _adapters(config: Any) -> str:
    if not config.lm_rank:
        return ""
    when = (
        f" trained first on text alone ({config.text_steps} steps of stage 0), then frozen"
        if config.text_steps
        else " trained with the audio side"
    )
    if config.read_steps:
        when += f", then trained on the audio side's tokens ({config.read_steps} steps of stage 1c)"
    return (
        f", and rank-{config.lm_rank} adapters on the language model's attention projections (query, key, value,"
        f" output),{when}, merged into those weights in the saved checkpoint"
    )


def _text_stage(config: Any, losses: dict[str, list[float]]) -> str:
    if not config.text_steps:
        return ""
    return (
        "* stage 0 (text, adapters only): each statement written as text in the audio slot"
        f" (`[cue, sound] words`{_blanks(config)}), every single-clip question about it:"
        f" {len(losses['text'])} steps x {config.batch_size} statements drawn afresh (never rendered)\n"
    )


def _blanks(config: Any) -> str:
    return f", a mean of {config.text_blanks:g} audio tokens after each word" if config.text_blanks else ""


def _embed_stage(config: Any, losses: dict[str, list[float]]) -> str:
    if not config.embed_steps:
        return ""
    return (
        "* stage 1b (embedding): each audio token pulled onto the input embedding of the word piece stage 1's"
        f" CTC readout names for it: {len(losses['embed'])} steps x {config.align_batch} clips\n"
    )


def _read_stage(config: Any, losses: dict[str, list[float]]) -> str:
    if not config.read_steps:
        return ""
    return (
        "* stage 1c (reading, adapters only, the audio side frozen): transcript and `said` questions about pool"
        " clips, each audio token moved from the embedding of the word piece its readout names to the token as it"
        f" is over {config.read_ramp} steps: {len(losses['read'])} steps x {config.batch_size} clips"
        f"{_histories(config)}\n"
    )


def _histories(config: Any) -> str:
    if not config.read_history:
        return ""
    return (
        f" ({config.read_history:.0%} of them histories of 2-{config.read_turns} pool clips in the evaluation's"
        " chat layout, asked a value said, a value restated, and a subject never mentioned)"
    )


def _tags(config: Any) -> str:
    if not config.align_tags or not {"cue", "sound"} & set(config.tasks):
        return ""
    return (
        f", plus {config.align_tags:g} x the cross-entropy of each clip's cue and background sound among"
        " their answers' embeddings from its mean audio token"
    )


def _millions(count: int) -> str:
    return f"{count / 1e6:.1f} M"


def _cell(interval: dict[str, float]) -> str:
    return f"{100 * interval['estimate']:.1f} [{100 * interval['low']:.1f}, {100 * interval['high']:.1f}]"


def write_card(
    path: Path,
    config: Any,
    losses: dict[str, list[float]],
    scores: dict[str, Any],
    transcript: dict[str, Any],
    train_voices: list[str],
    heldout_voices: list[str],
    cpu_s: dict[str, float],
    parameters: dict[str, int],
    text: dict[str, Any] | None = None,
) -> Path:
    """Write the card: parts, data, steps, losses and held-out scores (``parameters``: counts of
    ``encoder``, ``projector``, ``language_model`` and ``trained``; ``transcript``: the held-out
    transcript measure of :func:`~memgym.pipelines.voxmem.audio_lm.heard.transcript_heard`; ``text``:
    the text ceiling of :func:`~memgym.pipelines.voxmem.audio_lm.heard.text_heard`, if measured)."""
    text = (
        _model_section(config, parameters)
        + _data_section(config, losses, train_voices, heldout_voices)
        + _losses_section(losses, cpu_s)
        + _scores_section(scores, transcript, text or {})
    )
    path.write_text(text)
    return path


def _model_section(config: Any, parameters: dict[str, int]) -> str:
    """The front matter, the title and the model's parts, training and limits."""
    settings = ", ".join(f"`{k}={v}`" for k, v in dataclasses.asdict(config).items() if k != "out")
    return f"""---
library_name: transformers
pipeline_tag: audio-text-to-text
tags: [memgym, voxmem, qwen2_audio-layout]
---
# memgym small audio LM (Whisper tiny.en encoder + SmolLM2-135M-Instruct)

Built by `memgym train voxmem` ({settings}). The smallest real instance of the audio-LM class
for VoxMem, not a replacement for Qwen2-Audio: {_millions(sum(parameters.values()) - parameters["trained"])}
parameters (encoder {_millions(parameters["encoder"])}, projector {_millions(parameters["projector"])}, language model
{_millions(parameters["language_model"])} with its output matrix; {_millions(parameters["trained"])} trained).

* **Layout**: `Qwen2AudioForConditionalGeneration` (`model_type: qwen2_audio`): Whisper tiny.en encoder
  (4 layers, 80 mel bins, 30 s window, 2-frame pooling: 25 audio tokens per second), a linear
  projector 384 -> 576, SmolLM2-135M-Instruct (Llama, 8192 positions) as the language model.
  Loads with `transformers.Qwen2AudioForConditionalGeneration.from_pretrained(folder)` and
  `AutoProcessor.from_pretrained(folder)`; in memgym as `hf_audio:<folder>`.
* **Trained**: the projector, the top {config.train_layers} encoder layers and the encoder's final
  layer norm{_adapters(config)}. Frozen: the other encoder layers and the language model's own weights.
* **Prompt**: ChatML; system prompt "{SYSTEM_PROMPT}" unless the chat brings its own; each audio
  part renders as `Audio k: <|audio_bos|><|AUDIO|>...<|audio_eos|>`.
* **Limits**: each clip at most 30 s (the encoder window; longer ones are refused, not cut); the
  whole prompt at most 8192 tokens (longer histories are refused as over context).

"""


def _data_section(
    config: Any,
    losses: dict[str, list[float]],
    train_voices: list[str],
    heldout_voices: list[str],
) -> str:
    """The ``## Data`` section: speech source, voices per split and each stage's steps."""
    return f"""## Data
Speech synthesised by memgym's VoxMem turn renderer (eSpeak NG voices, paralinguistic cues,
background sounds of the synthetic library mixed at {config.snr_db:g} dB on {100 * config.sound_rate:.0f} % of
clips), saying statements of VoxMem's template writer over its 20 topic families. Never
VoxMem's evaluation histories.

* training voices ({len(train_voices)}): {", ".join(train_voices)}; sound recordings of the library's `train` split
* held-out voices ({len(heldout_voices)}): {", ".join(heldout_voices)}; sound recordings of the `eval` split
* {config.clip_pool} distinct training clips, each rendered and encoded once; every example asks about them
{_text_stage(config, losses)}* stage 1 (alignment, CTC of the words over the audio tokens through the LM's tied output matrix,
  restricted to the statements' word pieces{_tags(config)}): {len(losses["align"])} steps x {config.align_batch} clips
{_embed_stage(config, losses)}{_read_stage(config, losses)}{_instruct_stage(config, losses)}
"""


def _instruct_stage(config: Any, losses: dict[str, list[float]]) -> str:
    if not config.steps:
        return "* stage 2 (instruction through the LM): not run\n"
    return f"""* stage 2 (instruction, loss on answer tokens through the LM): {len(losses["instruct"])} steps x
  {config.batch_size} clips or clip pairs; transcripts only for the first {config.transcript_steps} steps, then every
  question of {", ".join(t for t in config.tasks if t != "speaker")} about each clip, and in {100 * config.speaker_share:.0f} % of
  the groups a speaker question about a pair of clips instead
"""


def _losses_section(losses: dict[str, list[float]], cpu_s: dict[str, float]) -> str:
    """The ``## Losses`` section: each stage's loss curve and the CPU seconds spent."""
    return f"""## Losses (mean over equal parts of each stage)
* stage 0: {_curve(losses.get("text", []))}
* stage 1: {_curve(losses["align"])}
* stage 1b: {_curve(losses.get("embed", []))}
* stage 1c: {_curve(losses.get("read", []))}
* stage 2: {_curve(losses["instruct"])}

CPU seconds of the training process (all its threads; eSpeak runs in a child process, not
counted): {", ".join(f"{k} {v:.0f}" for k, v in cpu_s.items())}.

"""


def _transcript_line(transcript: dict[str, Any]) -> str:
    """The held-out transcript measure in one sentence."""

    def nats(interval: dict[str, float]) -> str:
        return f"{interval['estimate']:.2f} [{interval['low']:.2f}, {interval['high']:.2f}]"

    loss, accuracy = transcript["loss"], transcript["accuracy"]
    return (
        f"Held-out statements written down ({transcript['n']} clips, teacher-forced): loss per word piece "
        f"{nats(loss['audio'])} nats with the clip, {nats(loss['silence'])} with silence (silence - audio "
        f"{nats(loss['difference'])}); word pieces predicted top-1 {_cell(accuracy['audio'])} % with the clip, "
        f"{_cell(accuracy['silence'])} % with silence (difference {_cell(accuracy['difference'])})."
    )


def _text_ceiling(text: dict[str, Any]) -> str:
    """The text ceiling's table (empty without stage 0)."""
    if not text:
        return ""
    rows = "\n".join(
        f"| {task} | {r['n']} | {_cell(r['text'])} | {_cell(r['empty'])} | {_cell(r['difference'])} |"
        for task, r in text.items()
    )
    return f"""
Text ceiling: the same held-out questions with each statement written as text in the audio slot
(`[cue, sound] words`, what stage 0 trained on) against an empty slot.

| task | n | with the text | empty slot | text - empty |
| --- | ---: | ---: | ---: | ---: |
{rows}
"""


def _scores_section(scores: dict[str, Any], transcript: dict[str, Any], text: dict[str, Any]) -> str:
    """The ``## Held-out scores`` section: the transcript measure, one table row per task, the text
    ceiling (stage 0 only), then what each task asks."""
    rows = "\n".join(
        f"| {task} | {r['n']} | {100 * r['chance']:.1f} | {100 * r['majority']:.1f} | "
        f"{_cell(r['audio'])} | {_cell(r['silence'])} | {_cell(r['difference'])} | "
        f"{_cell(r['per_token']['audio'])} | {_cell(r['per_token']['silence'])} |"
        for task, r in scores.items()
    )
    return f"""## Held-out scores
{_transcript_line(transcript)}

Candidate answers ranked by log-probability (summed over their tokens; *per token*: divided by
the token count); *silence* is the same model given silence of the same lengths instead of the
clips. Accuracy in %, 95 % bootstrap intervals (difference paired).

| task | n | chance | majority answer | with audio | with silence | audio - silence | per token: audio | per token: silence |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
{rows}
{_text_ceiling(text)}

Tasks: `said` = the value a statement gave (the family's values), `speaker` = whether two clips
have the same voice (yes/no), `cue` = how the speaker sounded (7 cues), `sound` = what was audible
in the background (28 classes or nothing), `noise` = whether anything was audible besides the
voice (yes/no).
"""
