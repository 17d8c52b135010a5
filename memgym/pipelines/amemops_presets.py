"""Named presets of ``memgym train amemops`` / ``memgym eval amemops`` (``preset=cpu-small``).

A preset is a list of ``key=value`` overrides per job, applied after the ``--config`` file and
before the command line's other keys (which win). A trained preset model runs under the variant
name ``<model>@<preset>`` (folder ``<model>@<preset>-seed<seed>``, unless ``name=`` is given), so
it never collides with a paper-sized run; the eval preset names those variants.

``cpu-small``: the symbolic controls (16-value attributes) on short streams (384 frames, two
initial, four post-update and one absent query proposal, one distractor), width 64 with two heads
of 32, 400 steps of 16 fresh streams; evaluated on 192 held-out streams with the erasing cores
(GDN2, KDA, GDN) contrasted with no-erase on post-update queries, each and averaged.
"""

from __future__ import annotations

from typing import Literal

from memgym.core.errors import ConfigError

CPU_SMALL_STEPS = 400
CPU_SMALL_STREAM = (
    "data.stream.frames=384",
    "data.stream.n_initial=2",
    "data.stream.n_update=4",
    "data.stream.n_interference=0",
    "data.stream.n_absent=1",
    "data.stream.distractors=[1]",
    "data.stream.offset_seconds=[2,4]",
)
"""The short streams of ``cpu-small`` (also used on audio by the slow learning test)."""
CPU_SMALL_TRAIN = (
    f"steps={CPU_SMALL_STEPS}",
    "batch_size=16",
    "lr=0.003",
    "warmup_steps=20",
    f"checkpoint_steps=[{CPU_SMALL_STEPS}]",
    "save_every=100",
    "arch.width=64",
    "arch.head_dim=32",
    "arch.mlp_hidden=128",
    "threads=1",
)
"""Optimisation and model sizes of ``cpu-small``."""
_SYMBOLIC = ("data.inputs=symbolic", "data.stream.attribute_values=16", *CPU_SMALL_STREAM)
_CPU_SMALL_MODELS = ("gdn2", "kda", "gdn", "no_erase")

PRESETS: dict[str, dict[str, tuple[str, ...]]] = {
    "cpu-small": {
        "train": (*_SYMBOLIC, *CPU_SMALL_TRAIN),
        "eval": (
            *_SYMBOLIC,
            "data.stream.split=eval",
            f"models=[{','.join(f'{m}@cpu-small' for m in _CPU_SMALL_MODELS)}]",
            "seeds=[0]",
            f"checkpoints=[{CPU_SMALL_STEPS}]",
            "streams=192",
            "threads=1",
            "contrasts=[gdn2@cpu-small:no_erase@cpu-small,kda@cpu-small:no_erase@cpu-small,"
            "gdn@cpu-small:no_erase@cpu-small,gdn2@cpu-small+kda@cpu-small+gdn@cpu-small:no_erase@cpu-small]",
        ),
    }
}
"""Preset name -> job (``train``/``eval``) -> overrides."""


def apply_preset(overrides: tuple[str, ...], job: Literal["train", "eval"]) -> tuple[tuple[str, ...], str]:
    """``overrides`` with a ``preset=NAME`` key replaced by that preset's overrides for ``job``
    (placed first, so the other keys win); returns them and the preset name ("" when none).

    Raises:
        ConfigError: an unknown preset, or more than one ``preset=`` key.
    """
    named = [o for o in overrides if o.split("=", 1)[0].strip() == "preset"]
    if not named:
        return overrides, ""
    if len(named) > 1:
        raise ConfigError(f"preset is given {len(named)} times: {', '.join(named)}")
    name = named[0].split("=", 1)[1].strip()
    if name not in PRESETS:
        raise ConfigError(f"preset='{name}' is unknown; choose from {', '.join(PRESETS)}")
    rest = tuple(o for o in overrides if o not in named)
    return (*PRESETS[name][job], *rest), name
