"""``amemops`` benchmark: stream sets, stream renders, model training and evaluation.

Jobs:

* ``memgym generate amemops [key=value ...] [--out DIR]`` — a stream set (manifest + features,
  :mod:`memgym.datasets.amemops.stream_set`); keys are those of
  :class:`~memgym.datasets.amemops.stream_set.StreamSetConfig` (``count=48 kind=history
  stream.library.kind=esc50 stream.library.root=/data/ESC-50 stream.split=eval ...``).
* ``memgym render amemops [manifest=DIR] [index=0] [--out file.png]`` — one stream's
  spectrogram with its events and queries (from a set, or generated from the config).
* ``memgym train amemops model=gdn2 seed=0 ...`` / ``memgym eval amemops ...`` — memory models
  (:mod:`memgym.pipelines.amemops.train`); ``memgym eval amemops intervention=true ...`` — state
  interventions (:mod:`memgym.pipelines.amemops.interventions`).
"""

from __future__ import annotations

from pathlib import Path

from memgym.core.benchmark import Benchmark, JobArgs, benchmark_info
from memgym.core.config import load_config
from memgym.core.figures import save_figure
from memgym.core.outputs import prepare_output_file
from memgym.core.registry import MEMORIES, register_benchmark
from memgym.core.scoring import task_scorer_names
from memgym.core.seeding import config_hash
from memgym.datasets.amemops.audio import StreamRenderer
from memgym.datasets.amemops.features import stream_features
from memgym.datasets.amemops.records import AMemOpsStream
from memgym.datasets.amemops.stream_set import StreamSetConfig, build_records, load_stream_set, write_stream_set
from memgym.datasets.sources.factory import open_library
from memgym.datasets.sources.library import SourceLibrary


@register_benchmark("amemops")
class AMemOpsBenchmark(Benchmark):
    """AMemOps: latest-attribute retrieval in long audio streams."""

    name = "amemops"
    description = "AMemOps audio streams: memory updates of source gain/pan"
    info = benchmark_info("amemops")

    def job_configs(self, job: str) -> dict[str, type]:
        if job in ("generate", "render"):
            return {"": StreamSetConfig}
        from memgym.pipelines.amemops.configs import AMemOpsEvalConfig, AMemOpsTrainConfig
        from memgym.pipelines.amemops.interventions import AMemOpsInterventionConfig

        if job == "train":
            return {"": AMemOpsTrainConfig}
        return {"": AMemOpsEvalConfig, "intervention=true": AMemOpsInterventionConfig}

    def accepted_names(self, job: str) -> dict[str, list[str]]:
        """Train and eval take memory cores (``model=``, ``models=[...]``), registered as memories;
        eval also the scorers of ``attribute_query`` items (``scorer=``)."""
        if job not in ("train", "eval"):
            return {}
        from memgym.memory.recurrent.mixers import CORES

        names = {"memory cores (model=, models=)": [name for name in MEMORIES.names() if name in CORES]}
        if job == "eval":
            names["scorers (scorer=)"] = task_scorer_names("attribute_query")
        return names

    def load_set_config(self, args: JobArgs) -> StreamSetConfig:
        """The :class:`StreamSetConfig` from the job's YAML file and overrides."""
        return load_config(StreamSetConfig, path=args.config_path, overrides=args.overrides)

    def generate(self, args: JobArgs) -> Path:
        config = self.load_set_config(args)
        library = open_library(config.stream.library)
        folder = args.out or Path(args.runs_dir) / "amemops" / f"{config.kind}-{config_hash(config)}"
        write_stream_set(config, library, folder, progress=args.progress)
        return Path(folder)

    def render(self, args: JobArgs) -> Path:
        config = self.load_set_config(args)
        if args.out is not None:
            prepare_output_file(args.out)  # before the stream is built and rendered
        library = open_library(config.stream.library)
        if config.manifest:
            streams = load_stream_set(config.manifest)
            if not 0 <= config.index < len(streams):
                from memgym.core.errors import ConfigError

                raise ConfigError(f"index={config.index} but {config.manifest} holds {len(streams)} streams")
            stream = streams[config.index]
        else:
            one = StreamSetConfig(stream=config.stream, kind=config.kind, count=config.index + 1, seed=config.seed)
            stream = build_records(one, library)[config.index]
        out = Path(args.out or Path(args.runs_dir) / "amemops" / f"render-{stream.episode_id}.png")
        save_spectrogram(stream, library, out)
        return out

    def train(self, args: JobArgs) -> Path:
        """``memgym train amemops model=gdn2 seed=0 ...`` (see :mod:`memgym.pipelines.amemops.train`)."""
        from memgym.pipelines.amemops.train import train_job

        return train_job(args)

    def eval(self, args: JobArgs) -> Path:
        """``memgym eval amemops models=[...] seeds=[...] ...``: Table 2 / 3 style tables and a plot;
        with ``intervention=true``, the state-intervention job (:mod:`memgym.pipelines.amemops.interventions`)."""
        from memgym.pipelines.amemops.evaluate import eval_job
        from memgym.pipelines.amemops.interventions import intervention_job, intervention_requested

        return intervention_job(args) if intervention_requested(args) else eval_job(args)


def save_spectrogram(stream: AMemOpsStream, library: SourceLibrary, out: Path) -> Path:
    """Write ``stream``'s spectrogram (events and queries marked) as a PNG."""
    from memgym.datasets.amemops.plots import spectrogram_figure

    features = stream_features(stream, StreamRenderer(library).render(stream))
    return save_figure(spectrogram_figure(stream, features), out, dpi=110)
