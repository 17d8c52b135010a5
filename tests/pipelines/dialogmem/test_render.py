import numpy as np
import pytest
from PIL import Image

from memgym.core.benchmark import JobArgs
from memgym.core.episode import Dataset
from memgym.core.errors import MemgymError
from memgym.core.registry import BENCHMARKS
from memgym.datasets.embodied import build_embodied_episode
from memgym.datasets.traversal import TraversalConfig
from memgym.pipelines.dialogmem.benchmark import DialogMemBenchmark
from memgym.scenes.spec import SceneSpec
from memgym.sensors.camera import CameraConfig

SMALL = ("traversal.min_goals=2", "traversal.max_goals=2", "camera.width=48", "camera.height=48", "stride=3")


def test_registered_with_render():
    cls = BENCHMARKS.get("dialogmem")
    assert cls is DialogMemBenchmark
    assert {"generate", "eval", "render"} <= set(cls.implemented_jobs())
    assert "quickstart" not in cls.implemented_jobs()  # its section is memgym.pipelines.quickstart.dialogmem


def test_render_generated_traversal_to_gif(tmp_path):
    out = DialogMemBenchmark().render(JobArgs(overrides=SMALL, out=tmp_path / "t.gif", progress=False))
    frames = Image.open(out)
    assert frames.n_frames > 3
    first = np.asarray(frames.convert("RGB"))
    assert first.shape[0] == 48 and first.shape[1] > 48  # first-person view beside the map


def test_render_stored_episode_to_mp4(tmp_path):
    pytest.importorskip("imageio_ffmpeg")
    import imageio.v2 as imageio

    episode = build_embodied_episode(
        "ep-1",
        SceneSpec(seed=2),
        np.random.default_rng(0),
        traversal=TraversalConfig(min_goals=2, max_goals=2),
        camera=CameraConfig(width=32, height=32),
    )
    Dataset([episode]).save(tmp_path / "episodes.jsonl")
    args = JobArgs(overrides=(f"episodes={tmp_path / 'episodes.jsonl'}", "stride=5"), runs_dir=tmp_path, progress=False)
    out = DialogMemBenchmark().render(args)
    assert out == tmp_path / "dialogmem" / "render" / "ep-1.mp4"
    reader = imageio.get_reader(out)
    assert reader.count_frames() == len(episode.traversal.frames[::5])
    assert reader.get_data(0).shape[0] == 32  # the camera the episode was recorded with
    with pytest.raises(MemgymError, match="no episode with id 'nope'"):
        DialogMemBenchmark().render(JobArgs(overrides=(f"episodes={tmp_path / 'episodes.jsonl'}", "episode_id=nope")))
    with pytest.raises(MemgymError, match=r"must end in .mp4 or .gif"):
        DialogMemBenchmark().render(JobArgs(overrides=SMALL, out=tmp_path / "x.avi", progress=False))
