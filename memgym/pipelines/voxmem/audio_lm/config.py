"""Configuration of ``memgym train voxmem`` (the small audio LM)."""

from __future__ import annotations

import dataclasses

from memgym.core.errors import ConfigError
from memgym.pipelines.voxmem.audio_lm.data import TASKS

DEFAULT_HELDOUT_VOICES: tuple[str, ...] = ("espeak-02", "espeak-07", "espeak-25", "espeak-27")
"""One voice of each broad kind (British RP male, Caribbean, British RP female, Lancastrian), never
heard in training."""


@dataclasses.dataclass(frozen=True)
class AudioLMTrainConfig:
    """``memgym train voxmem`` keys (see docs/voxmem_eval.md, *A small audio LM*)."""

    out: str = dataclasses.field(default="runs/voxmem_audio_lm", metadata={"help": "output folder (resumes)"})
    seed: int = dataclasses.field(default=0, metadata={"help": "seed of the projector and of every example"})
    clip_pool: int = dataclasses.field(
        default=4000,
        metadata={"help": "distinct training clips (each rendered and encoded once; examples ask about them)"},
    )
    align_clips: int = dataclasses.field(
        default=12000, metadata={"help": "stage 1: clips of CTC transcript alignment, drawn from the pool (0 skips it)"}
    )
    align_tags: float = dataclasses.field(
        default=0.0,
        metadata={
            "help": "stage 1: weight of the cue and sound tag loss (each clip's mean audio token names them; 0: none)"
        },
    )
    align_batch: int = dataclasses.field(default=8, metadata={"help": "stage 1: clips per optimiser step"})
    align_cosine: float = dataclasses.field(
        default=25.0,
        metadata={
            "help": "stage 1: CTC scores = align_cosine x the cosine of each audio token to the word pieces'"
            " embeddings instead of their dot product (0); the readouts of stages 1b and 1c score the same way"
        },
    )
    align_norm: float = dataclasses.field(
        default=1.0,
        metadata={
            "help": "stage 1: weight of a penalty holding each audio token's norm at the token embeddings' mean"
            " norm (0: none)"
        },
    )
    embed_steps: int = dataclasses.field(
        default=0,
        metadata={
            "help": "stage 1b: steps of align_batch clips pulling each audio token onto the input embedding of the"
            " word piece stage 1's CTC readout names for it (0: none)"
        },
    )
    read_steps: int = dataclasses.field(
        default=100,
        metadata={
            "help": "stage 1c: steps training the LM adapters (needs lm_rank) on the audio side's own tokens"
            " (transcript and said about pool clips, audio side frozen), each token moved from the embedding of"
            " the word piece its readout names to the token as it is over read_ramp steps (0: none)"
        },
    )
    read_ramp: int = dataclasses.field(
        default=60,
        metadata={"help": "stage 1c: steps over which the tokens move from snapped to as they are (0: as they are)"},
    )
    read_history: float = dataclasses.field(
        default=0.0,
        metadata={
            "help": "stage 1c: share of example groups that are VoxMem-style histories of pool clips (sessions,"
            " assistant replies, the evaluation's chat layout) with questions about a value said, a value"
            " restated and a subject never mentioned, instead of one clip (0: none)"
        },
    )
    read_turns: int = dataclasses.field(
        default=8, metadata={"help": "stage 1c: most user turns in a history (read_history; at least 2)"}
    )
    steps: int = dataclasses.field(
        default=0, metadata={"help": "stage 2: optimiser steps through the LM (0: none, after stage 1c)"}
    )
    transcript_steps: int = dataclasses.field(
        default=0, metadata={"help": "stage 2: first steps on transcript continuation only (then the task mix)"}
    )
    batch_size: int = dataclasses.field(default=4, metadata={"help": "stage 2: examples per step"})
    lr: float = dataclasses.field(default=3e-3, metadata={"help": "AdamW learning rate (both stages)"})
    train_layers: int = dataclasses.field(
        default=2,
        metadata={
            "help": "top Whisper encoder layers that learn (0-4; 0: only the projector and final norm); LM frozen"
        },
    )
    encoder_lr: float = dataclasses.field(
        default=5e-4,
        metadata={"help": "AdamW learning rate of the trained encoder layers (stages 1, 1b and 2; lr for the rest)"},
    )
    lm_rank: int = dataclasses.field(
        default=8,
        metadata={"help": "rank of trained adapters on the LM's attention projections (0: the LM wholly frozen)"},
    )
    text_steps: int = dataclasses.field(
        default=80,
        metadata={
            "help": "stage 0: steps training the LM adapters (needs lm_rank) on questions with each statement as"
            " text in the audio slot; then the adapters are frozen (0: none, adapters learn with the audio)"
        },
    )
    text_blanks: float = dataclasses.field(
        default=6.0,
        metadata={
            "help": "stage 0: mean number of audio tokens (stage 1's CTC blank) after each word of the slot text"
            " (0: plain text)"
        },
    )
    text_lr: float = dataclasses.field(default=1e-3, metadata={"help": "stage 0: AdamW learning rate of the adapters"})
    tasks: tuple[str, ...] = dataclasses.field(
        default=TASKS,
        metadata={"help": "stage 2 tasks (transcript, said, cue, sound, noise, speaker); scored ones are evaluated"},
    )
    speaker_share: float = dataclasses.field(
        default=0.3,
        metadata={"help": "stage 2: share of example groups that ask the speaker question about a clip pair"},
    )
    heldout_voices: tuple[str, ...] = dataclasses.field(
        default=DEFAULT_HELDOUT_VOICES, metadata={"help": "voices only the held-out evaluation hears"}
    )
    heldout_per_task: int = dataclasses.field(
        default=40, metadata={"help": "held-out examples per scored task (said, speaker, cue, sound)"}
    )
    sound_rate: float = dataclasses.field(default=0.5, metadata={"help": "share of clips with a background sound"})
    snr_db: float = dataclasses.field(default=15.0, metadata={"help": "speech-to-sound SNR (VoxMem's default)"})
    checkpoint_every: int = dataclasses.field(default=20, metadata={"help": "optimiser steps between checkpoints"})
    threads: int = dataclasses.field(default=0, metadata={"help": "torch CPU threads (0: torch's default)"})

    def __post_init__(self) -> None:
        self._check_ranges()
        self._check_stages()

    def _check_ranges(self) -> None:
        """Rates, counts and shares in range, and known tasks."""
        for name in ("lr", "encoder_lr", "text_lr"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name} must be > 0, got {getattr(self, name)}")
        for name in ("align_clips", "align_tags", "align_cosine", "align_norm", "lm_rank", "text_blanks", "read_ramp"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name} must be >= 0, got {getattr(self, name)}")
        for name in ("batch_size", "align_batch", "checkpoint_every", "heldout_per_task"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be >= 1, got {getattr(self, name)}")
        unknown = sorted(set(self.tasks) - set(TASKS))
        if unknown or not self.tasks:
            raise ConfigError(f"tasks: {unknown or 'none given'}; expected some of {list(TASKS)}")
        if self.clip_pool < 4:
            raise ConfigError(f"clip_pool must be >= 4 (pairs of voices for speaker questions), got {self.clip_pool}")
        if not 0.0 <= self.speaker_share <= 1.0:
            raise ConfigError(f"speaker_share must be in [0, 1], got {self.speaker_share}")
        if not 0.0 <= self.read_history <= 1.0:
            raise ConfigError(f"read_history must be in [0, 1], got {self.read_history}")
        if self.read_turns < 2:
            raise ConfigError(f"read_turns must be >= 2, got {self.read_turns}")
        if not 0.0 <= self.sound_rate <= 1.0:
            raise ConfigError(f"sound_rate must be in [0, 1], got {self.sound_rate}")

    def _check_stages(self) -> None:
        """Each stage's step count, and what it needs from the others."""
        if self.steps < 0 or (self.steps == 0 and not self.read_steps):
            raise ConfigError(f"steps must be >= 1 (or 0 after read_steps > 0), got {self.steps}")
        if not 0 <= self.transcript_steps <= self.steps:
            raise ConfigError(f"transcript_steps must be in [0, steps={self.steps}], got {self.transcript_steps}")
        if self.embed_steps < 0 or (self.embed_steps and not self.align_clips):
            raise ConfigError(f"embed_steps must be >= 0 and needs align_clips > 0, got {self.embed_steps}")
        if self.text_steps < 0 or (self.text_steps and not self.lm_rank):
            raise ConfigError(f"text_steps must be >= 0 and needs lm_rank > 0, got {self.text_steps}")
        if self.read_history and not self.read_steps:
            raise ConfigError(f"read_history={self.read_history} needs read_steps > 0 (stage 1c asks the histories)")
        if self.read_steps < 0 or (self.read_steps and not (self.lm_rank and self.align_clips)):
            raise ConfigError(
                f"read_steps must be >= 0 and needs lm_rank > 0 and align_clips > 0, got {self.read_steps}"
            )
