import json

import numpy as np
import pytest
import soundfile

from memgym.core.errors import MemgymError
from memgym.datasets.sources import ESC50Library, NSynthLibrary


def test_esc50_folds_split_resample_and_metadata(layouts, tmp_path):
    library = ESC50Library(layouts.write_esc50(tmp_path, clips_per_fold=2))
    assert library.identities() == ["dog", "rain", "siren"]
    assert len(library.recording_ids("dog", "train")) == 8 and len(library.recording_ids("dog", "eval")) == 2
    assert {library.info(r).fold for r in library.recording_ids("dog", "eval")} == {5}
    assert library.family("rain") == "natural" and library.family("siren") == "exterior"
    audio = library.recordings("siren", "eval")[0]
    assert audio.dtype == np.float32 and audio.shape == (32_000,)  # 2 s at 16 kHz
    spectrum = np.abs(np.fft.rfft(audio))
    assert abs(np.argmax(spectrum) * 16_000 / len(audio) - (200 + 40 * 42)) < 2


@pytest.mark.parametrize("drop", ["category", "fold", "filename", "target"])
def test_esc50_missing_column_is_named(layouts, tmp_path, drop):
    layouts.write_esc50(tmp_path, columns=[c for c in layouts.ESC_COLUMNS if c != drop])
    with pytest.raises(MemgymError, match=f"missing column.*{drop}"):
        ESC50Library(tmp_path)


def test_esc50_wrong_rate_and_missing_files(layouts, tmp_path):
    with pytest.raises(MemgymError, match="no meta/esc50.csv"):
        ESC50Library(tmp_path)
    library = ESC50Library(layouts.write_esc50(tmp_path, rate=22_050))
    with pytest.raises(MemgymError, match="22050 Hz, expected 44100"):
        library.load(library.recording_ids("dog", "train")[0])
    next((tmp_path / "audio").glob("*.wav")).unlink()
    with pytest.raises(MemgymError, match="does not exist"):
        ESC50Library(tmp_path)


def test_nsynth_set1_shared_instruments_pitch_range_disjoint_notes(layouts, tmp_path):
    library = NSynthLibrary(layouts.write_nsynth(tmp_path), instrument_set=1)
    assert library.identities() == ["keyboard_acoustic_001", "string_acoustic_002"]
    train = library.recording_infos("keyboard_acoustic_001", "train")
    evaluation = library.recording_infos("keyboard_acoustic_001", "eval")
    assert {i.pitch for i in train} == {36, 43, 51, 60, 72, 84}
    assert not {i.recording_id for i in train} & {i.recording_id for i in evaluation}
    assert len(evaluation) == 6  # the duplicated note id was dropped
    assert library.splits() == ["train", "eval"]
    audio = library.load(train[0].recording_id)
    assert audio.dtype == np.float32 and audio.shape == (24_000,)


def test_nsynth_sets_2_and_3_are_disjoint_matched_with_calibration_pitches(layouts, tmp_path):
    layouts.write_nsynth(tmp_path)
    set2 = NSynthLibrary(tmp_path, instrument_set=2)
    set3 = NSynthLibrary(tmp_path, instrument_set=3)
    assert len(set2.identities()) == len(set3.identities()) == 2
    assert not set(set2.identities()) & set(set3.identities())
    assert sorted(set2.family(i) for i in set2.identities()) == ["keyboard", "string"]
    # set 2 gets the same-source best match first
    assert all(set2.source_type(i) == "acoustic" for i in set2.identities())
    for library in (set2, set3):
        for identity in library.identities():
            calibration = {i.pitch for i in library.recording_infos(identity, "calibration")}
            used = {i.pitch for s in ("train", "eval") for i in library.recording_infos(identity, s)}
            assert calibration and all(p % 8 == 3 for p in calibration) and not calibration & used


def test_nsynth_bad_metadata(layouts, tmp_path):
    layouts.write_nsynth(tmp_path)
    path = tmp_path / "nsynth-test" / "examples.json"
    examples = json.loads(path.read_text())
    first = next(iter(examples))
    broken = dict(examples)
    broken[first] = {k: v for k, v in examples[first].items() if k != "instrument_family_str"}
    path.write_text(json.dumps(broken))
    with pytest.raises(MemgymError, match="lacks field.*instrument_family_str"):
        NSynthLibrary(tmp_path)
    broken[first] = dict(examples[first], sample_rate=44_100)
    path.write_text(json.dumps(broken))
    with pytest.raises(MemgymError, match="sample_rate 44100, expected 16000"):
        NSynthLibrary(tmp_path)
    path.write_text(json.dumps(examples))
    wav = tmp_path / "nsynth-valid" / "audio" / "keyboard_acoustic_001-036-075.wav"
    soundfile.write(wav, np.zeros(8000, np.float32), 8000)
    library = NSynthLibrary(tmp_path)
    with pytest.raises(MemgymError, match="8000 Hz, expected 16000"):
        library.load(wav.stem)


def test_nsynth_missing_split(layouts, tmp_path):
    layouts.write_nsynth_split(tmp_path, "valid", [])
    with pytest.raises(MemgymError, match="no nsynth-test/examples.json"):
        NSynthLibrary(tmp_path)


@pytest.mark.parametrize("kind", ["esc50", "nsynth"])
def test_streams_from_real_layouts(layouts, tmp_path, kind):
    from memgym.datasets.amemops.audio import render_audio
    from memgym.datasets.amemops.config import StreamConfig
    from memgym.datasets.amemops.generator import StreamGenerator

    if kind == "esc50":
        library = ESC50Library(layouts.write_esc50(tmp_path, seconds=2.0))
    else:
        library = NSynthLibrary(layouts.write_nsynth(tmp_path))
    config = StreamConfig(frames=400, n_initial=1, n_update=0, n_interference=0, n_absent=1, distractors=(0,))
    stream = StreamGenerator(config, library).generate(seed=0, index=0)
    assert len(stream.items) == 2
    audio = render_audio(stream, library)
    assert audio.shape == (2, 400 * 640) and np.isfinite(audio).all()
    if kind == "nsynth":  # notes are excerpted from their onset; ESC-50 clips anywhere
        assert {e.start_sample for e in stream.events} == {0}


def test_esc50_clip_shorter_than_excerpt(layouts, tmp_path):
    from memgym.datasets.amemops.config import StreamConfig
    from memgym.datasets.amemops.generator import StreamGenerator

    library = ESC50Library(layouts.write_esc50(tmp_path, seconds=0.5))
    config = StreamConfig(frames=400, n_initial=1, n_update=0, n_interference=0, n_absent=1, distractors=(0,))
    with pytest.raises(MemgymError, match="has 8000 samples .* shorter than a"):
        StreamGenerator(config, library).generate(seed=0, index=0)


def test_nsynth_exclude_waveform_duplicates(layouts, tmp_path):
    root = layouts.write_nsynth(tmp_path)
    plain = NSynthLibrary(root)
    train_id = "keyboard_acoustic_001-060-075"
    eval_id = "keyboard_acoustic_001-072-100"
    # make one test note an exact copy of a valid note's waveform
    source = tmp_path / "nsynth-valid" / "audio" / f"{train_id}.wav"
    (tmp_path / "nsynth-test" / "audio" / f"{eval_id}.wav").write_bytes(source.read_bytes())
    deduped = NSynthLibrary(root, exclude_duplicates=True)
    assert eval_id in plain.recording_ids("keyboard_acoustic_001", "eval")
    assert eval_id not in deduped.recording_ids("keyboard_acoustic_001", "eval")
    assert len(deduped.all_infos()) == len(plain.all_infos()) - 1
