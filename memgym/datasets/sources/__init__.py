"""Sound sources shared by the audio benchmarks (AMemOps, VoxMem).

A :class:`~memgym.datasets.sources.library.SourceLibrary` holds *identities* (a sound class or an
instrument), each with several *recordings*, split into ``"train"`` / ``"eval"`` (and
``"calibration"`` for the unseen NSynth sets). Every recording loads as a 16 kHz float32 mono
array::

    from memgym.datasets.sources import open_library

    library = open_library("synthetic_env")            # embedded, no downloads
    dog = library.recordings("dog", "train")           # list of (n,) float32 arrays, 16 kHz
    infos = library.recording_infos("dog", "train")    # metadata: family, fold, pitch, ...

Libraries:

* ``synthetic_env`` — :class:`SyntheticEnvironmentLibrary`: 50 ESC-50-like classes x 40 clips
  (5 s) in 5 folds; folds 1-4 train, fold 5 eval.
* ``synthetic_instruments`` — :class:`SyntheticInstrumentLibrary`: three disjoint sets of 53
  instruments (NSynth-like families), MIDI 36-84, several velocities.
* ``esc50`` — :class:`ESC50Library` reading a local ESC-50 folder.
* ``nsynth`` — :class:`NSynthLibrary` reading a local NSynth folder (Sets 1/2/3).

:class:`SimilarityPools` pairs identities by the correlation of their mean spectra.
"""

from memgym.datasets.sources.esc50 import ESC50Library
from memgym.datasets.sources.factory import LibraryConfig, open_library
from memgym.datasets.sources.library import SAMPLE_RATE, RecordingInfo, SourceLibrary
from memgym.datasets.sources.nsynth import NSynthLibrary
from memgym.datasets.sources.similarity import SimilarityPools
from memgym.datasets.sources.synthetic_environment import SyntheticEnvironmentLibrary
from memgym.datasets.sources.synthetic_instruments import SyntheticInstrumentLibrary

__all__ = [
    "SAMPLE_RATE",
    "ESC50Library",
    "LibraryConfig",
    "NSynthLibrary",
    "RecordingInfo",
    "SimilarityPools",
    "SourceLibrary",
    "SyntheticEnvironmentLibrary",
    "SyntheticInstrumentLibrary",
    "open_library",
]
