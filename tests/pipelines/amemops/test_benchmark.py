import numpy as np
import pytest

from memgym.core.benchmark import JobArgs
from memgym.core.errors import ConfigError
from memgym.core.registry import BENCHMARKS
from memgym.datasets.amemops.records import AMemOpsStream
from memgym.datasets.amemops.stream_set import load_stream_features, load_stream_set
from memgym.pipelines.amemops.benchmark import AMemOpsBenchmark


def _args(tmp_path, *overrides, out=None):
    return JobArgs(overrides=("stream.library.kind=tones", *overrides), runs_dir=tmp_path, out=out, progress=False)


def test_registered_with_jobs():
    assert BENCHMARKS.get("amemops") is AMemOpsBenchmark
    assert {"generate", "render", "train", "eval"} <= set(AMemOpsBenchmark.implemented_jobs())


def test_generate_writes_manifest_and_features_resumably(tmp_path):
    folder = AMemOpsBenchmark().generate(_args(tmp_path, "count=2", "stream.distractors=[4]"))
    streams = load_stream_set(folder)
    assert len(streams) == 2 and all(isinstance(s, AMemOpsStream) for s in streams)
    saved = load_stream_features(folder, streams[1].episode_id)
    assert saved["features"].shape == (2048, 131) and saved["gain"].shape == (2048,)
    target = folder / "features" / f"{streams[1].episode_id}.npz"
    before = target.stat().st_mtime_ns
    (folder / "features" / f"{streams[0].episode_id}.npz").unlink()
    again = AMemOpsBenchmark().generate(_args(tmp_path, "count=2", "stream.distractors=[4]"))
    assert again == folder and target.stat().st_mtime_ns == before  # existing files are kept
    np.testing.assert_array_equal(load_stream_features(folder, streams[1].episode_id)["features"], saved["features"])
    assert (folder / "features" / f"{streams[0].episode_id}.npz").is_file()


def test_history_set_and_render(tmp_path):
    overrides = ("kind=history", "history.templates=2", "history.loads=[low]", "history.delays=[20]", "features=false")
    folder = AMemOpsBenchmark().generate(_args(tmp_path, *overrides, "stream.split=eval"))
    streams = load_stream_set(folder)
    assert len(streams) == 2 * 3 and {s.frames for s in streams} == {4096}
    png = AMemOpsBenchmark().render(_args(tmp_path, f"manifest={folder}", "index=4", out=tmp_path / "one.png"))
    assert png.is_file() and png.read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(ConfigError, match="index=9 but"):
        AMemOpsBenchmark().render(_args(tmp_path, f"manifest={folder}", "index=9"))


def test_bad_settings_are_config_errors(tmp_path):
    with pytest.raises(ConfigError, match="impossible stream settings"):
        AMemOpsBenchmark().generate(_args(tmp_path, "stream.frames=300"))
    with pytest.raises(ConfigError, match="unknown key"):
        AMemOpsBenchmark().generate(_args(tmp_path, "stream.nope=1"))
    with pytest.raises(ConfigError, match=r"stream.attribute_values=16: audio streams need 4 values"):
        AMemOpsBenchmark().generate(_args(tmp_path, "stream.attribute_values=16"))  # features are audio


def test_packaged_configs_load():
    from memgym.core.config import CONFIG_DIR, load_config
    from memgym.datasets.amemops.stream_set import StreamSetConfig

    assert load_config(StreamSetConfig, path=CONFIG_DIR / "amemops_streams.yaml") == StreamSetConfig()
    history = load_config(StreamSetConfig, path=CONFIG_DIR / "amemops_history.yaml")
    assert history.kind == "history" and history.stream.split == "eval" and len(history.history.earlier) == 3
