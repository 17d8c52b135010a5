"""Similarity pools: identity pairs ranked by the correlation of their mean log-mel spectra.

For every identity, the mean 64-band log-mel spectrum of up to ``recordings_per_identity``
recordings (pooled over ``splits``) is computed; pairs whose Pearson correlation lies in the
upper quartile of all distinct pairs are *similar*, those in the lower quartile *dissimilar*.
Results can be cached on disk, keyed by the library fingerprint and these settings.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from memgym.core.seeding import config_hash
from memgym.datasets.sources.library import SourceLibrary
from memgym.sensors.log_mel import log_mel


class SimilarityPools:
    """Upper / lower correlation-quartile partners of each identity.

    Args:
        library: the source library.
        splits: splits whose recordings are pooled (paper: train+eval; calibration for Sets 2/3).
        recordings_per_identity: recordings averaged per identity (evenly spread over its list).
        cache_dir: optional folder for a JSON cache of the correlation matrix.
    Attributes:
        identities: identities in matrix order.
        correlation: ``(I, I)`` float64 Pearson correlations of mean spectra.
    """

    _memo: dict[str, SimilarityPools] = {}

    @classmethod
    def for_library(
        cls,
        library: SourceLibrary,
        splits: tuple[str, ...] = ("train", "eval"),
        *,
        recordings_per_identity: int = 4,
        cache_dir: str | Path | None = None,
    ) -> SimilarityPools:
        """Pools for ``library``, computed once per process (and per ``cache_dir`` on disk)."""
        key = config_hash([library.fingerprint(), list(splits), recordings_per_identity])
        if key not in cls._memo:
            cls._memo[key] = cls(library, splits, recordings_per_identity=recordings_per_identity, cache_dir=cache_dir)
        return cls._memo[key]

    def __init__(
        self,
        library: SourceLibrary,
        splits: tuple[str, ...] = ("train", "eval"),
        *,
        recordings_per_identity: int = 4,
        cache_dir: str | Path | None = None,
    ) -> None:
        self.identities = sorted({i for s in splits for i in library.identities(s)})
        key = config_hash([library.fingerprint(), list(splits), recordings_per_identity, self.identities])
        cache = Path(cache_dir) / f"similarity-{key}.json" if cache_dir else None
        if cache is not None and cache.is_file():
            self.correlation = np.asarray(json.loads(cache.read_text())["correlation"])
        else:
            spectra = np.stack(
                [self._mean_spectrum(library, i, splits, recordings_per_identity) for i in self.identities]
            )
            self.correlation = np.corrcoef(spectra)
            if cache is not None:
                cache.parent.mkdir(parents=True, exist_ok=True)
                cache.write_text(json.dumps({"identities": self.identities, "correlation": self.correlation.tolist()}))
        upper = self.correlation[np.triu_indices(len(self.identities), k=1)]
        self.high, self.low = (
            (float(np.quantile(upper, 0.75)), float(np.quantile(upper, 0.25))) if len(upper) else (1, -1)
        )
        self._index = {ident: k for k, ident in enumerate(self.identities)}

    @staticmethod
    def _mean_spectrum(library: SourceLibrary, identity: str, splits: tuple[str, ...], count: int) -> np.ndarray:
        ids = [rid for s in splits for rid in library.recording_ids(identity, s)]
        picks = [ids[k] for k in np.linspace(0, len(ids) - 1, min(count, len(ids))).round().astype(int)]
        frames = [log_mel(library.load(rid)).numpy() for rid in picks]
        power = np.concatenate([np.exp(f) for f in frames]).mean(axis=0)
        return np.log(power + 1e-10)

    def similar(self, identity: str) -> list[str]:
        """Identities whose correlation with ``identity`` is in the upper quartile."""
        row = self.correlation[self._index[identity]]
        return [o for k, o in enumerate(self.identities) if o != identity and row[k] >= self.high]

    def dissimilar(self, identity: str) -> list[str]:
        """Identities whose correlation with ``identity`` is in the lower quartile."""
        row = self.correlation[self._index[identity]]
        return [o for k, o in enumerate(self.identities) if o != identity and row[k] <= self.low]
