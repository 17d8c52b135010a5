"""Which benchmark a dataset path belongs to, read from its first record, so that a job refuses a
dataset of another benchmark (or no dataset at all) before it makes a run folder.

A DialogMem dataset is a JSONL file of ``dialogmem.episode`` records; a VoxMem dataset a folder
whose ``manifest.jsonl`` holds ``voxmem.episode`` records; an AMemOps stream set a folder whose
``manifest.jsonl`` holds ``amemops.stream`` records (``memgym generate BENCH`` writes each).
"""

from __future__ import annotations

import json
from pathlib import Path

from memgym.core.errors import ConfigError
from memgym.core.results import read_manifest

RECORD_BENCHMARKS: dict[str, str] = {
    "dialogmem.episode": "dialogmem",
    "voxmem.episode": "voxmem",
    "amemops.stream": "amemops",
}
"""Record kind on a dataset's first line -> its benchmark."""
DATASET_FORMS: dict[str, str] = {
    "dialogmem": "a DialogMem dataset (a JSONL file of dialogmem.episode records, 'memgym generate dialogmem')",
    "voxmem": "a VoxMem dataset (a folder with manifest.jsonl of voxmem.episode records, 'memgym generate voxmem')",
    "amemops": "an AMemOps stream set (a folder with manifest.jsonl of amemops.stream records, "
    "'memgym generate amemops')",
}


def first_record_kind(path: Path) -> str | None:
    """The ``kind`` of the JSON record on the first non-empty line of ``path`` (None when that line
    is not a JSON object with a ``kind``)."""
    with path.open("rb") as handle:
        for raw in handle:
            line = raw.strip()
            if line:
                break
        else:
            return None
    try:
        record = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    kind = record.get("kind") if isinstance(record, dict) else None
    return kind if isinstance(kind, str) else None


def found_in(path: Path) -> tuple[str, str | None] | None:
    """What ``path`` holds, in words (``"a VoxMem dataset (voxmem.episode records)"``), with the
    benchmark of its records (None for no benchmark's); None for what holds no records at all (a
    folder that is neither a dataset nor a run folder, an empty or non-JSON file: left to the
    job's own checks, which say what is wrong with it)."""
    if path.is_dir():
        if (path / "manifest.json").is_file():
            return f"a run folder of job '{read_manifest(path / 'manifest.json').get('job')}'", None
        if not (path / "manifest.jsonl").is_file():
            return None
        path = path / "manifest.jsonl"
    kind = first_record_kind(path)
    if kind is None:
        return None
    benchmark = RECORD_BENCHMARKS.get(kind)
    if benchmark is None:
        return f"{kind} records", None
    return f"{DATASET_FORMS[benchmark].split(' (')[0]} ({kind} records)", benchmark


def require_dataset(path: str | Path, benchmark: str, job: str = "eval") -> None:
    """Refuse ``path`` unless it holds ``benchmark``'s dataset records (a path that does not exist,
    or a folder without records, is left to the job's own checks).

    Raises:
        ConfigError: one line naming the path, the kind found and the kind expected.
    """
    if not str(path):  # no dataset given: the job's defaults
        return
    path = Path(path)
    if not path.exists():
        return
    try:
        found = found_in(path)
    except OSError as exc:
        raise ConfigError(f"dataset {path}: cannot be read ({exc.strerror or exc})") from None
    if found is None or found[1] == benchmark:
        return
    raise ConfigError(f"dataset {path} holds {found[0]}; 'memgym {job} {benchmark}' expects {DATASET_FORMS[benchmark]}")
