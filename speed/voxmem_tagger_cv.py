"""Cross-validation of the VoxMem sound tagger over its own training recordings (a measurement).

The tagger trains on mixtures of the sound library's ``eval`` recordings (the datasets mix ``train``
recordings, which this never touches). Each of ``--folds`` folds holds out recordings ``k``,
``k + folds``, ... of every class, trains the dataset's tagger (:func:`sound_tagger_setup`) and the
same data with other ``--features`` on the rest, and names ``mixes`` mixtures of each held-out
recording under the tagger's speech samples, each pairing shifted by one sample from training's.
Prints per tagger how many held-out mixtures were named right (naming only: the turns all carry a
sound, as the level detector finds on the builds) and the worst-confused class pairs.

``python -m speed voxmem_tagger_cv DATASET [--folds 4] [--features rich,shape]``
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

import numpy as np

from memgym.datasets.speech.mixing import mix_at_snr
from memgym.datasets.speech.turn_features import SAMPLE_RATE


class HeldOut:
    """A view of ``library`` without the recordings ``dropped`` (the rest delegated)."""

    def __init__(self, library, dropped: set[str]) -> None:
        self.library, self.dropped, self.name = library, dropped, library.name

    def recording_ids(self, identity: str, split: str) -> list[str]:
        return [r for r in self.library.recording_ids(identity, split) if r not in self.dropped]

    def load(self, recording_id: str) -> np.ndarray:
        return self.library.load(recording_id)

    def fingerprint(self) -> str:
        return f"{self.library.fingerprint()}-minus{len(self.dropped)}"


def main(argv: list[str]) -> None:
    from memgym.memory.voxmem.sound_tagger import SoundTagger
    from memgym.pipelines.voxmem.evaluation import sound_tagger_setup

    parser = argparse.ArgumentParser(prog="python -m speed voxmem_tagger_cv")
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--folds", type=int, default=4)
    parser.add_argument("--features", default="rich,shape", help="comma-separated SoundTagger features")
    args = parser.parse_args(argv)
    library, classes, speech, settings = sound_tagger_setup(args.dataset)
    mixes, snr_db = settings.get("mixes", 1), settings["snr_db"]
    right: Counter = Counter()
    confused: dict[str, Counter] = {f: Counter() for f in args.features.split(",")}
    total = 0
    for fold in range(args.folds):
        held = {
            name: library.recording_ids(name, "eval")[fold :: args.folds] for name in classes
        }  # fmt: skip
        view = HeldOut(library, {r for ids in held.values() for r in ids})
        taggers = {f: SoundTagger(view, classes, speech, **{**settings, "features": f}) for f in confused}
        rng, k = np.random.default_rng(1000 + fold), 0
        for name, ids in held.items():
            for recording in ids:
                clip = library.load(recording)
                for _ in range(mixes):
                    mixture = mix_at_snr(speech[(k + 1) % len(speech)], clip, SAMPLE_RATE, snr_db, rng).mixture
                    k, total = k + 1, total + 1
                    for feature, tagger in taggers.items():
                        named = tagger.name_sound(mixture)
                        right[feature] += named == name
                        if named != name:
                            confused[feature][f"{name}->{named}"] += 1
    print(f"== voxmem_tagger_cv {args.dataset}: {args.folds} folds over the eval recordings, {total} mixtures ==")
    for feature, counts in confused.items():
        print(f"{feature}: named {right[feature]}/{total} = {right[feature] / total:.1%}; most confused: "
              + ", ".join(f"{pair} {n}" for pair, n in counts.most_common(6)))  # fmt: skip
