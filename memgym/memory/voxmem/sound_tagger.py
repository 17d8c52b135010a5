"""Background-sound tagger trained on the project's own sound-source library (no pretrained weights).

A user turn's background is the spectral shape of its quietest frames (the gaps between words,
where mostly the mixed-in sound is heard): :func:`~memgym.datasets.speech.turn_features.background_of`.
A linear discriminant (class means, one shared covariance shrunk towards its mean variance by
:data:`SHRINKAGE`, equal priors) over the standardised shapes names the class, or ``""`` (no
background sound). It is trained the way the turns were made: clean speech samples mixed with
recordings of the library's ``eval`` split at the dataset's SNR (the dataset mixes ``train``-split
recordings, so the tagger hears other recordings of each class), plus the clean speech alone as
the no-sound class. A turn whose quiet frames lie below :data:`SILENCE_DB` has no sound without
asking the model. Training is closed-form (``shape``) and deterministic (fixed data order and mixing seeds).

Whether there is a sound at all is decided first, by level, when the turn's speech loudness is
known (always in :meth:`SoundTagger.tag_audio`; in :meth:`SoundTagger.tag` when ``loudness_db``
is given): a sound mixed under the speech lifts the quiet
frames to within a few dB of the SNR below the speech, while clean speech's gaps stay far below
it. The quiet frames' level relative to the speech is measured on the training mixtures and on
the clean speech, and :attr:`SoundTagger.none_below` is the midpoint between the loudest clean
gap and the quietest mixture's, but at most :data:`LEVEL_MARGIN_DB` below the latter (clean
speech with digitally silent gaps would put the midpoint far below any sound); a turn below it
has no sound, and
any other is named among the sound classes only (the shape alone confused clean speech of some
voices with sounds: measured in docs/voxmem_eval.md).

Two feature sets (``features``): ``"shape"`` is the background shape above (40 values) named by the
linear discriminant; ``"rich"`` (issue 38, :func:`rich_features`, 324 values) adds the spread of the
quiet frames, the sound-only lead before the speech (its shape, spread, frame-to-frame change and
level), the quiet frames' and the lead's level relative to the speech, and per-band percentiles and
spread over every frame (intermittent sounds -- a horn, a knock, a tick -- are the ones the
quietest frames confuse; each addition's gain in cross-validation is in docs/voxmem_eval.md), named by an L2-regularised multinomial
logistic regression (:data:`RICH_C`, L-BFGS from zero weights: deterministic) over the sound
classes only; the clean speech then sets the level threshold alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
from scipy.optimize import minimize

from memgym.core.errors import MemgymError
from memgym.datasets.sources.library import SourceLibrary
from memgym.datasets.speech.mixing import mix_at_snr
from memgym.datasets.speech.turn_features import (
    QUIET_SHARE,
    SAMPLE_RATE,
    active_loudness,
    background_of,
    log_mel_frames,
    loudness_of,
)

SILENCE_DB = -90.0
"""Quiet-frame level (dB re full scale) below which a turn has no background sound."""
NONE = ""
SHRINKAGE = 0.2
LEVEL_MARGIN_DB = 6.0
"""The no-sound level threshold lies at most this far below the quietest training mixture."""
RICH_C = 0.1
"""Inverse L2 strength of the ``rich`` tagger's logistic regression (on standardised features)."""
LEAD_GUARD_S = 0.05
"""The ``rich`` features' lead ends this long before the speech (eSpeak starts within it)."""


def rich_features(audio: np.ndarray, lead_s: float = 0.0) -> tuple[np.ndarray, float, float]:
    """``((324,) features, quiet-frame level dB, speech loudness dB)`` of a ``(N,)`` 16 kHz turn
    whose speech starts after ``lead_s`` seconds (module docstring). With 10 ms frames and 40 mel
    bands: quiet-frame (quietest 30 %) mean log-mel minus its band mean and std per band; over the
    lead's frames (at least two, so without a lead the first two frames) the same two, the mean
    absolute frame-to-frame change per band, and the std and range of the frame level; the quiet
    frames' and the lead's mean level minus the speech loudness; over all frames the 50th and 90th
    percentile per band minus the overall mean, and the std per band."""
    mel, level = log_mel_frames(audio)
    loudness = active_loudness(level)
    quiet = level <= np.quantile(level, QUIET_SHARE)
    shape = mel[quiet].mean(axis=0)
    n_lead = min(max(int((lead_s - LEAD_GUARD_S) * SAMPLE_RATE / 160), 2), len(mel))
    lead, lead_level = mel[:n_lead], level[:n_lead]
    lead_shape = lead.mean(axis=0)
    flux = np.abs(np.diff(lead, axis=0)).mean(axis=0) if n_lead > 1 else np.zeros(mel.shape[1])
    background_db = float(np.mean(level[quiet]))
    percentiles = np.percentile(mel, [50, 90], axis=0) - mel.mean()
    features = np.concatenate(
        [
            shape - shape.mean(),
            mel[quiet].std(axis=0),
            lead_shape - lead_shape.mean(),
            lead.std(axis=0),
            flux,
            [lead_level.std(), lead_level.max() - lead_level.min()],
            [background_db - loudness, float(lead_level.mean()) - loudness],
            percentiles[0],
            percentiles[1],
            mel.std(axis=0),
        ]
    )
    return features, background_db, loudness


def _logistic_regression(x: np.ndarray, y: np.ndarray, classes: int, c: float) -> tuple[np.ndarray, np.ndarray]:
    """``(weights (D, K), bias (K,))`` of a multinomial logistic regression on ``x`` ``(N, D)``,
    labels ``y`` ``(N,)``: minimises the summed cross-entropy plus ``|W|^2 / (2 c)`` (bias free)
    by L-BFGS from zero weights."""
    n, d = x.shape
    onehot = np.eye(classes)[y]
    xb = np.hstack([x, np.ones((n, 1))])

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w = theta.reshape(d + 1, classes)
        z = xb @ w
        z -= z.max(axis=1, keepdims=True)
        log_p = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        grad = xb.T @ (np.exp(log_p) - onehot)
        grad[:-1] += w[:-1] / c
        return float(-(onehot * log_p).sum() + 0.5 / c * (w[:-1] ** 2).sum()), grad.ravel()

    result = minimize(loss, np.zeros((d + 1) * classes), jac=True, method="L-BFGS-B", options={"maxiter": 1000})
    w = result.x.reshape(d + 1, classes)
    return w[:-1], w[-1]


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
        features: ``"shape"`` (linear discriminant on the background shape) or ``"rich"``
            (logistic regression on :func:`rich_features`); module docstring.
        lead_s: silence before the speech of the turns and of ``speech`` (``rich`` only).
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
        features: Literal["shape", "rich"] = "shape",
        lead_s: float = 0.0,
    ) -> None:
        if not speech:
            raise MemgymError("SoundTagger needs clean speech samples to build its training mixtures")
        self.classes = list(classes)
        if mixes < 1:
            raise MemgymError(f"SoundTagger needs at least one mixture per recording, got {mixes}")
        if features not in ("shape", "rich"):
            raise MemgymError(f"SoundTagger features must be 'shape' or 'rich', got {features!r}")
        self.features, self.lead_s = features, float(lead_s)
        kind = f"lda{SHRINKAGE:g}" if features == "shape" else f"rich-lr{RICH_C:g}-lead{self.lead_s:g}"
        self.fingerprint = (
            f"{kind}+level:{library.fingerprint()}:{split}:{snr_db:g}:{len(speech)}:{','.join(self.classes)}"
            + (f":x{mixes}" if mixes > 1 else "")
        )
        rows, labels, relative = self._training_set(library, speech, snr_db, split, mixes)
        clean_top = max(relative[: len(speech)])
        mixed_bottom = min(relative[len(speech) :])
        self.none_below = max((clean_top + mixed_bottom) / 2.0, mixed_bottom - LEVEL_MARGIN_DB)
        """Quiet-frame level relative to the speech (dB) below which a turn has no sound."""
        if features == "rich":  # the level alone decides "no sound": classes only
            rows, labels = rows[len(speech) :], labels[len(speech) :]
        x = np.asarray(rows)
        self.mean, self.scale = x.mean(axis=0), x.std(axis=0) + 1e-6
        x = (x - self.mean) / self.scale
        self.labels = sorted(set(labels))
        y = np.asarray([self.labels.index(label) for label in labels])
        if features == "rich":
            self.weights, self.bias = _logistic_regression(x, y, len(self.labels), RICH_C)
        else:
            self.weights, self.bias = _discriminant(x, y, len(self.labels))

    def _training_set(
        self, library: SourceLibrary, speech: Sequence[np.ndarray], snr_db: float, split: str, mixes: int
    ) -> tuple[list[np.ndarray], list[str], list[float]]:
        """``(features, labels, quiet level relative to the speech dB)`` of the clean speech (label
        ``""``) and then of ``mixes`` mixtures per ``split`` recording of each class, in that order."""
        rng = np.random.default_rng(0)
        rows, labels, relative = [], [], []
        for sample in speech:
            row, level, loudness = self._measure(sample)
            rows.append(row)
            labels.append(NONE)
            relative.append(level - loudness)
        k = 0
        for name in self.classes:
            ids = library.recording_ids(name, split)
            if not ids:
                raise MemgymError(f"sound library {library.name} has no '{split}' recordings of '{name}'")
            for recording in ids:
                clip = library.load(recording)
                for _ in range(mixes):
                    mix = mix_at_snr(speech[k % len(speech)], clip, SAMPLE_RATE, snr_db, rng)
                    row, level, loudness = self._measure(mix.mixture)
                    rows.append(row)
                    labels.append(name)
                    relative.append(level - loudness)
                    k += 1
        return rows, labels, relative

    def _measure(self, audio: np.ndarray) -> tuple[np.ndarray, float, float]:
        """``(features, quiet-frame level dB, speech loudness dB)`` of one clip."""
        if self.features == "rich":
            return rich_features(audio, self.lead_s)
        shape, level = background_of(audio)
        return np.asarray(shape), level, loudness_of(audio)

    def identity(self) -> str:
        """Names the training data (part of cache keys)."""
        return f"sound-tagger:{self.fingerprint}"

    def tag_audio(self, audio: np.ndarray) -> str:
        """The class name, or ``""`` for no background sound, of one ``(N,)`` 16 kHz turn: its
        level decides whether there is a sound, its features which one (module docstring)."""
        row, level, loudness = self._measure(audio)
        if level < SILENCE_DB or level - loudness < self.none_below:
            return NONE
        return self._name(row, exclude_none=True)

    def name_sound(self, audio: np.ndarray) -> str:
        """The sound class of one ``(N,)`` 16 kHz turn, whatever its level (naming only)."""
        return self._name(self._measure(audio)[0], exclude_none=True)

    def tag(self, background: Sequence[float], background_db: float, loudness_db: float | None = None) -> str:
        """The ``shape`` tagger's class name, or ``""`` for no background sound, from a turn's
        :func:`background_of` and, when given, its speech loudness (``measure_turn``'s
        ``loudness_db``): then the level decides whether there is a sound and the shape which one
        (module docstring); without it the shape decides both."""
        if self.features != "shape":
            raise MemgymError("SoundTagger.tag reads the background shape only; a 'rich' tagger needs tag_audio")
        if background_db < SILENCE_DB:
            return NONE
        if loudness_db is not None and background_db - loudness_db < self.none_below:
            return NONE
        return self._name(np.asarray(background), exclude_none=loudness_db is not None)

    def _name(self, row: np.ndarray, exclude_none: bool) -> str:
        scores = ((row - self.mean) / self.scale) @ self.weights + self.bias
        if exclude_none and NONE in self.labels:
            scores[self.labels.index(NONE)] = -np.inf
        return self.labels[int(np.argmax(scores))]


def _discriminant(x: np.ndarray, y: np.ndarray, classes: int) -> tuple[np.ndarray, np.ndarray]:
    """``(weights (D, K), bias (K,))`` of the shrunk linear discriminant (module docstring) on
    standardised ``x`` ``(N, D)`` with labels ``y`` ``(N,)``."""
    means = np.stack([x[y == k].mean(axis=0) for k in range(classes)])
    centred = x - means[y]
    covariance = centred.T @ centred / max(len(x) - classes, 1)
    shrunk = (1 - SHRINKAGE) * covariance + SHRINKAGE * np.trace(covariance) / len(covariance) * np.eye(len(covariance))
    weights = np.linalg.solve(shrunk, means.T)
    return weights, -0.5 * np.sum(means.T * weights, axis=0)
