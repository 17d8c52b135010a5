"""Background-sound tagger trained on the project's own sound-source library (no pretrained weights).

A user turn's background is the spectral shape of its quietest frames (the gaps between words,
where mostly the mixed-in sound is heard): :func:`~memgym.datasets.speech.turn_features.background_of`.
A linear discriminant (class means, one shared covariance shrunk towards its mean variance by
:data:`SHRINKAGE`, equal priors) over the standardised shapes names the class, or ``""`` (no
background sound). It is trained the way the turns were made: clean speech samples mixed with
recordings of the library's ``eval`` split at the dataset's SNR (the dataset mixes ``train``-split
recordings, so the tagger hears other recordings of each class), plus the clean speech alone as
the no-sound class. A turn whose quiet frames lie below :data:`SILENCE_DB` has no sound without
asking the model. Training is closed-form and deterministic (fixed data order and mixing seeds).

Whether there is a sound at all is decided first, by level, when the turn's speech loudness is
given (:meth:`SoundTagger.tag`'s ``loudness_db``): a sound mixed under the speech lifts the quiet
frames to within a few dB of the SNR below the speech, while clean speech's gaps stay far below
it. The quiet frames' level relative to the speech is measured on the training mixtures and on
the clean speech, and :attr:`SoundTagger.none_below` is the midpoint between the loudest clean
gap and the quietest mixture's, but at most :data:`LEVEL_MARGIN_DB` below the latter (clean
speech with digitally silent gaps would put the midpoint far below any sound); a turn below it
has no sound, and
any other is named among the sound classes only (the shape alone confused clean speech of some
voices with sounds: measured in docs/voxmem_eval.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memgym.core.errors import MemgymError
from memgym.datasets.sources.library import SourceLibrary
from memgym.datasets.speech.mixing import mix_at_snr
from memgym.datasets.speech.turn_features import SAMPLE_RATE, background_of, loudness_of

SILENCE_DB = -90.0
"""Quiet-frame level (dB re full scale) below which a turn has no background sound."""
NONE = ""
SHRINKAGE = 0.2
LEVEL_MARGIN_DB = 6.0
"""The no-sound level threshold lies at most this far below the quietest training mixture."""


class SoundTagger:
    """Names the background sound class of a turn.

    Args:
        library: the sound-source library the dataset's sounds come from.
        classes: the class names to tell apart (the dataset's ``sound_classes``).
        speech: clean ``(N,) float32`` 16 kHz speech samples to mix the recordings under.
        snr_db: speech-to-sound SNR of the training mixtures (the dataset's).
        split: library split to train on.
        mixes: training mixtures per recording, each under the next speech sample (another voice and
            sentence, another excerpt of the recording).
    """

    def __init__(
        self,
        library: SourceLibrary,
        classes: Sequence[str],
        speech: Sequence[np.ndarray],
        *,
        snr_db: float = 10.0,
        split: str = "eval",
        mixes: int = 1,
    ) -> None:
        if not speech:
            raise MemgymError("SoundTagger needs clean speech samples to build its training mixtures")
        self.classes = list(classes)
        if mixes < 1:
            raise MemgymError(f"SoundTagger needs at least one mixture per recording, got {mixes}")
        self.fingerprint = (
            f"lda{SHRINKAGE:g}+level:{library.fingerprint()}:{split}:{snr_db:g}:{len(speech)}:{','.join(self.classes)}"
            + (f":x{mixes}" if mixes > 1 else "")
        )
        rng = np.random.default_rng(0)
        features, labels, relative = [], [], []
        for sample in speech:
            shape, level = background_of(sample)
            features.append(shape)
            labels.append(NONE)
            relative.append(level - loudness_of(sample))
        k = 0
        for name in self.classes:
            ids = library.recording_ids(name, split)
            if not ids:
                raise MemgymError(f"sound library {library.name} has no '{split}' recordings of '{name}'")
            for recording in ids:
                clip = library.load(recording)
                for _ in range(mixes):
                    mix = mix_at_snr(speech[k % len(speech)], clip, SAMPLE_RATE, snr_db, rng)
                    shape, level = background_of(mix.mixture)
                    features.append(shape)
                    labels.append(name)
                    relative.append(level - loudness_of(mix.mixture))
                    k += 1
        clean_top = max(relative[: len(speech)])
        mixed_bottom = min(relative[len(speech) :])
        self.none_below = max((clean_top + mixed_bottom) / 2.0, mixed_bottom - LEVEL_MARGIN_DB)
        """Quiet-frame level relative to the speech (dB) below which a turn has no sound."""
        x = np.asarray(features)
        self.mean, self.scale = x.mean(axis=0), x.std(axis=0) + 1e-6
        x = (x - self.mean) / self.scale
        self.labels = sorted(set(labels))
        y = np.asarray([self.labels.index(label) for label in labels])
        means = np.stack([x[y == k].mean(axis=0) for k in range(len(self.labels))])
        centred = x - means[y]
        covariance = centred.T @ centred / max(len(x) - len(self.labels), 1)
        shrunk = (1 - SHRINKAGE) * covariance + SHRINKAGE * np.trace(covariance) / len(covariance) * np.eye(
            len(covariance)
        )
        self.weights = np.linalg.solve(shrunk, means.T)  # (D, K)
        self.bias = -0.5 * np.sum(means.T * self.weights, axis=0)  # (K,)

    def identity(self) -> str:
        """Names the training data (part of cache keys)."""
        return f"sound-tagger:{self.fingerprint}"

    def tag(self, background: Sequence[float], background_db: float, loudness_db: float | None = None) -> str:
        """The class name, or ``""`` for no background sound, from a turn's :func:`background_of`
        and, when given, its speech loudness (``measure_turn``'s ``loudness_db``): then the level
        decides whether there is a sound and the shape which one (module docstring)."""
        if background_db < SILENCE_DB:
            return NONE
        x = (np.asarray(background) - self.mean) / self.scale
        scores = x @ self.weights + self.bias
        if loudness_db is not None:
            if background_db - loudness_db < self.none_below:
                return NONE
            scores[self.labels.index(NONE)] = -np.inf
        return self.labels[int(np.argmax(scores))]
