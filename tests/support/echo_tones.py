"""A tone library with planted waveform duplicates, for the AMemOps exclusion analyses."""

from __future__ import annotations

from memgym.datasets.sources.tones import ToneLibrary


class EchoTones(ToneLibrary):
    """Tones whose ``-eval-0`` recordings are the ``-train-0`` audio at half level (a training
    match) and whose ``-eval-2`` recordings repeat ``-eval-1`` (duplicate notes)."""

    name = "echo-tones"

    def _load_uncached(self, info):
        for suffix, source in (("-eval-0", "-train-0"), ("-eval-2", "-eval-1")):
            if info.recording_id.endswith(suffix):
                original = self.info(info.recording_id.replace(suffix, source))
                return 0.5 * super()._load_uncached(original)
        return super()._load_uncached(info)
