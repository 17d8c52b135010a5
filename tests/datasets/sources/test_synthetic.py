import numpy as np
import pytest

from memgym.core.errors import MemgymError
from memgym.datasets.sources import SimilarityPools, SyntheticEnvironmentLibrary, SyntheticInstrumentLibrary
from memgym.datasets.sources.synthetic_environment import CLASSES
from memgym.datasets.sources.synthetic_instruments import FAMILY_LAYOUT
from memgym.sensors.log_mel import log_mel


def test_environment_library_layout():
    library = SyntheticEnvironmentLibrary()
    assert len(library.identities()) == 50 and set(library.identities()) == set(CLASSES)
    for identity in ("dog", "rain"):
        infos = library.recording_infos(identity, "train") + library.recording_infos(identity, "eval")
        assert len(infos) == 40
        assert sorted({i.fold for i in infos}) == [1, 2, 3, 4, 5]
        assert {i.fold for i in library.recording_infos(identity, "eval")} == {5}
    assert len({library.family(i) for i in library.identities()}) == 5


def test_environment_recordings_deterministic_and_varying(tmp_path):
    library = SyntheticEnvironmentLibrary(cache_dir=tmp_path)
    a, b = (library.load(r) for r in library.recording_ids("dog", "train")[:2])
    assert a.dtype == np.float32 and a.shape == (80_000,) and np.isfinite(a).all()
    assert not np.allclose(a, b)
    again = SyntheticEnvironmentLibrary(cache_dir=tmp_path)  # reads the disk cache
    np.testing.assert_array_equal(again.load(library.recording_ids("dog", "train")[0]), a)
    fresh = SyntheticEnvironmentLibrary()
    np.testing.assert_array_equal(fresh.load(library.recording_ids("dog", "train")[0]), a)


def _mean_logmel(audio: np.ndarray) -> np.ndarray:
    """Level-invariant spectral shape: mean log-mel minus its mean over bands."""
    spectrum = log_mel(audio).numpy().mean(axis=0)
    return spectrum - spectrum.mean()


def test_environment_classes_are_recognisable():
    """Nearest class-centroid on mean log-mel spectra: train clips -> eval clips, well above chance."""
    library = SyntheticEnvironmentLibrary()
    classes = library.identities()[::2]  # 25 classes keeps the test quick
    centroids = np.stack(
        [
            np.mean([_mean_logmel(library.load(r)) for r in library.recording_ids(c, "train")[:3]], axis=0)
            for c in classes
        ]
    )
    correct = 0
    for k, c in enumerate(classes):
        feature = _mean_logmel(library.load(library.recording_ids(c, "eval")[0]))
        correct += int(np.argmin(((centroids - feature) ** 2).sum(axis=1)) == k)
    assert correct / len(classes) > 0.6  # chance is 0.04


def test_instrument_sets_layout_and_splits():
    sets = [SyntheticInstrumentLibrary(s, pitch_step=3) for s in (1, 2, 3)]
    names = [set(lib.identities()) for lib in sets]
    assert all(len(n) == 53 for n in names) and not (names[0] & names[1] or names[1] & names[2] or names[0] & names[2])
    expected = sorted((f, s) for f, s, count in FAMILY_LAYOUT for _ in range(count))
    for lib in sets:
        assert sorted((lib.family(i), lib.source_type(i)) for i in lib.identities()) == expected
    assert sets[0].splits() == ["train", "eval"]
    identity = sets[1].identities()[0]
    calibration = {i.pitch for i in sets[1].recording_infos(identity, "calibration")}
    rest = {i.pitch for s in ("train", "eval") for i in sets[1].recording_infos(identity, s)}
    assert calibration and not calibration & rest
    infos = sets[0].all_infos()
    assert min(i.pitch for i in infos) == 36 and max(i.pitch for i in infos) == 84
    assert {i.velocity for i in infos} == {25, 50, 75, 100, 127}


def test_instrument_notes_pitch_velocity_and_variation():
    library = SyntheticInstrumentLibrary(1)
    identity = next(i for i in library.identities() if library.family(i) == "organ")
    infos = {
        (i.pitch, i.velocity): i.recording_id for s in ("train", "eval") for i in library.recording_infos(identity, s)
    }
    note = library.load(infos[(69, 100)])
    assert note.shape == (24_000,) and note.dtype == np.float32
    spectrum = np.abs(np.fft.rfft(note[4000:20000]))  # 16000 samples -> 1 Hz bins
    on_harmonics = sum(spectrum[440 * k - 5 : 440 * k + 6].max() for k in range(1, 10))
    between = sum(spectrum[440 * k + 215 : 440 * k + 226].max() for k in range(1, 10))
    assert on_harmonics > 10 * between  # a harmonic series on A4 = 440 Hz
    assert np.sqrt(np.mean(library.load(infos[(69, 127)]) ** 2)) > np.sqrt(np.mean(library.load(infos[(69, 25)]) ** 2))


def test_similarity_pools_quartiles():
    library = SyntheticEnvironmentLibrary(clips_per_fold=1)
    pools = SimilarityPools(library, recordings_per_identity=1)
    upper = pools.correlation[np.triu_indices(50, k=1)]
    assert abs(np.mean(upper >= pools.high) - 0.25) < 0.01 and abs(np.mean(upper <= pools.low) - 0.25) < 0.01
    for identity in ("dog", "siren"):
        similar, dissimilar = pools.similar(identity), pools.dissimilar(identity)
        assert identity not in similar and not set(similar) & set(dissimilar)
    row = pools.correlation[pools.identities.index("dog")]
    assert min(row[pools.identities.index(o)] for o in pools.similar("dog")) > max(
        row[pools.identities.index(o)] for o in pools.dissimilar("dog")
    )


def test_instrument_families_have_typical_envelopes_and_spectra():
    """Plucked/struck families decay, sustained ones hold; flutes are darker than brass."""
    library = SyntheticInstrumentLibrary(1)

    def note(family, pitch=60, velocity=100):
        identity = next(i for i in library.identities() if library.family(i) == family)
        rid = f"{identity}-{pitch:03d}-{velocity:03d}"
        return library.load(rid).astype(np.float64)

    def sustain_ratio(x):
        return np.sqrt(np.mean(x[16_000:20_000] ** 2) / np.mean(x[1_000:5_000] ** 2))

    def centroid(x):
        spectrum = np.abs(np.fft.rfft(x[2_000:18_000]))
        return float((spectrum * np.arange(len(spectrum))).sum() / spectrum.sum())

    assert sustain_ratio(note("organ")) > 0.6 and sustain_ratio(note("string")) > 0.5
    assert sustain_ratio(note("guitar")) < 0.4 and sustain_ratio(note("mallet")) < 0.2
    assert centroid(note("flute")) < centroid(note("brass"))


def test_pyroomacoustics_rooms_when_installed():
    pytest.importorskip("pyroomacoustics")
    library = SyntheticEnvironmentLibrary(room="pyroomacoustics", clips_per_fold=1)
    simple = SyntheticEnvironmentLibrary(clips_per_fold=1)
    rid = library.recording_ids("church_bells", "train")[0]
    clip = library.load(rid)
    assert clip.shape == (80_000,) and np.isfinite(clip).all() and not np.allclose(clip, simple.load(rid))
    assert library.fingerprint() != simple.fingerprint()
    with pytest.raises(MemgymError, match="room must be one of"):
        SyntheticInstrumentLibrary(room="cathedral")
