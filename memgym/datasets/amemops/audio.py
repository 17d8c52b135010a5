"""Render a stream record to stereo audio (paper section 2).

Every recording is scaled to RMS ``stream.rms`` (0.05) over its whole length, then the excerpt
``[start_sample, start_sample + frames*640)`` is cut, faded in and out linearly over
``fade_ms`` (10 ms), scaled by ``10**(gain_db/20)`` and panned with equal power
(left ``cos(pan*pi/2)``, right ``sin(pan*pi/2)``, so left² + right² = 1 and panning preserves
event energy). Independent white Gaussian noise is added to each channel with standard deviation
``rms * 10**(-noise_db/20)`` (45 dB below the RMS reference). No final normalisation, no clipping.
Only streams with 4 attribute values (the physical gains and pans) can be rendered.
"""

from __future__ import annotations

import numpy as np
import torch

from memgym.core.errors import ConfigError, MemgymError
from memgym.datasets.amemops.config import HOP, PHYSICAL_VALUES, SAMPLE_RATE
from memgym.datasets.amemops.records import AMemOpsStream, StreamEvent
from memgym.datasets.sources.library import SourceLibrary


def pan_gains(pan: float) -> tuple[float, float]:
    """Equal-power (left, right) amplitude factors for ``pan`` in [0, 1]."""
    return float(np.cos(pan * np.pi / 2)), float(np.sin(pan * np.pi / 2))


def fade(n: int, fade_samples: int) -> np.ndarray:
    """``(n,)`` float32 envelope: linear ramps of ``fade_samples`` at both ends."""
    env = np.ones(n, dtype=np.float32)
    m = min(fade_samples, n // 2)
    if m > 0:
        ramp = np.arange(1, m + 1, dtype=np.float32) / (m + 1)
        env[:m] = ramp
        env[n - m :] = ramp[::-1]
    return env


class StreamRenderer:
    """Renders streams from one library, caching each recording's RMS scale.

    Args:
        library: the library the streams' recordings come from.
    """

    def __init__(self, library: SourceLibrary) -> None:
        self.library = library
        self._scale: dict[tuple[str, float], float] = {}

    def excerpt(self, event: StreamEvent, rms: float) -> np.ndarray:
        """``(frames*640,)`` float32 RMS-normalised excerpt of ``event`` (before fade, gain, pan)."""
        audio = self.library.load(event.recording_id)
        n = event.frames * HOP
        if event.start_sample + n > len(audio):
            raise MemgymError(
                f"{self.library.name}: recording '{event.recording_id}' has {len(audio)} samples; "
                f"the excerpt needs [{event.start_sample}, {event.start_sample + n})"
            )
        key = (event.recording_id, rms)
        scale = self._scale.get(key)
        if scale is None:
            level = float(np.sqrt(np.mean(np.square(audio, dtype=np.float64))))
            if level <= 0:
                raise MemgymError(f"{self.library.name}: recording '{event.recording_id}' is silent")
            scale = self._scale[key] = rms / level
        return audio[event.start_sample : event.start_sample + n] * np.float32(scale)

    def render(self, stream: AMemOpsStream, *, noise: bool = True) -> np.ndarray:
        """``(2, frames*640)`` float32 stereo audio at 16 kHz of ``stream``.

        Raises:
            ConfigError: the stream has symbolic attribute values (``attribute_values`` != 4).
        """
        if stream.attribute_values != PHYSICAL_VALUES:
            raise ConfigError(
                f"stream {stream.episode_id} was generated with attribute_values={stream.attribute_values}: "
                f"only attribute_values={PHYSICAL_VALUES} (the physical gains and pans) can be rendered as audio"
            )
        out = np.zeros((2, stream.frames * HOP), dtype=np.float32)
        fade_samples = int(round(stream.fade_ms * SAMPLE_RATE / 1000))
        for event in stream.events:
            if event.end_frame > stream.frames:
                raise MemgymError(f"stream {stream.episode_id}: event at frame {event.onset_frame} runs past the end")
            mono = self.excerpt(event, stream.rms) * fade(event.frames * HOP, fade_samples)
            mono *= np.float32(10 ** (event.gain_db / 20))
            left, right = pan_gains(event.pan)
            start = event.onset_frame * HOP
            out[0, start : start + len(mono)] += left * mono
            out[1, start : start + len(mono)] += right * mono
        if noise:
            out += noise_for(stream)
        return out


def noise_for(stream: AMemOpsStream) -> np.ndarray:
    """``(2, frames*640)`` float32 independent white Gaussian noise of ``stream``.

    Drawn with a ``torch.Generator`` seeded by ``stream.noise_seed``, so it is identical for
    every condition/control sharing the seed.
    """
    std = stream.rms * 10 ** (-stream.noise_db / 20)
    generator = torch.Generator().manual_seed(int(stream.noise_seed))  # torch: ~2x numpy's normal sampler
    return (torch.randn((2, stream.frames * HOP), generator=generator) * std).numpy()


def render_audio(stream: AMemOpsStream, library: SourceLibrary) -> np.ndarray:
    """``(2, frames*640)`` float32 stereo audio of ``stream`` (see the module docstring)."""
    return StreamRenderer(library).render(stream)
