"""The results store: one folder per run, per-item results appended as they finish.

Layout of a run folder ``RUNS/JOB/NAME/``::

    manifest.json     {"memgym_results": 1, "job": ..., "config_hash": ..., "created": ...}
    config.yaml       the full config snapshot
    environment.json  python, platform, package versions, git commit, seeds; evaluations add the
                      token counts and seconds of their local models (memgym.backends.throughput)
    results.jsonl     one JSON object per finished item, each with a "key"
    .lock             held (``flock``) by the process writing the folder; holds its pid

Re-running the same command opens the same folder and :meth:`RunStore.done_keys` tells the job
which items to skip; items whose row recorded an ``error`` are not done, so a re-run retries them
(the new row keeps the earlier messages in ``earlier_errors``; the CLI says how many failed when
the job ends, :mod:`memgym.core.outcome`). Each row is flushed and fsynced
when appended, so an interrupted run loses at most the item in flight; a half-written last line is
dropped on reopen. Only one process at a time may write a run folder: a second one is refused with
a one-line error naming the folder and the pid holding it. Readers keep one row per key (the first,
or the retry of an errored row). A folder written by an incompatible version, or by a different
config, is refused with a one-line error and left as it is.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime
import errno
import fcntl
import io
import json
import os
import platform
import re
import subprocess
import sys
import weakref
from collections.abc import Iterable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from memgym.core.config import config_to_dict, dump_config
from memgym.core.errors import MemgymError, RecordError
from memgym.core.outcome import track_store
from memgym.core.outputs import make_writable_folder
from memgym.core.seeding import config_hash
from memgym.core.textfiles import complete_jsonl_lines, read_text

RESULTS_VERSION = 1
"""Layout version of run folders; a folder with another version is refused."""

TRACKED_PACKAGES = ("memgym", "numpy", "torch", "gymnasium", "open3d-cpu", "transformers", "librosa")


class FolderLock:
    """An exclusive ``flock`` on ``folder/.lock`` for this process's lifetime of the object.

    Opening the same folder again in the same process shares the lock (:meth:`acquire`); another
    process is refused. The OS releases the lock when the process dies, however it dies.
    """

    _held: weakref.WeakValueDictionary[Path, FolderLock] = weakref.WeakValueDictionary()

    def __init__(self, folder: Path) -> None:
        self.path = folder / ".lock"
        self._handle = self.path.open("a+", encoding="utf-8")
        try:
            fcntl.flock(self._handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise
            self._handle.seek(0)
            holder = self._handle.read().strip() or "unknown"
            self._handle.close()
            raise MemgymError(
                f"{folder} is being written by another memgym process (pid {holder}); "
                "wait for it to finish or choose another run name"
            ) from None
        self._handle.seek(0)
        self._handle.truncate()
        self._handle.write(f"{os.getpid()}\n")
        self._handle.flush()

    @classmethod
    def acquire(cls, folder: Path) -> FolderLock:
        """The lock of ``folder`` (shared within this process).

        Raises:
            MemgymError: another process holds it (the message names the folder and its pid).
        """
        key = folder.resolve()
        lock = cls._held.get(key)
        if lock is None:
            lock = cls(folder)
            cls._held[key] = lock
        return lock

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle is not None and not handle.closed:
            handle.close()  # closing the file releases the flock


class RunStore:
    """Append-only, resumable per-item results of one run.

    Use :meth:`open` to write (it takes the folder's lock); ``RunStore(folder, "")`` only reads.
    """

    def __init__(self, folder: Path, config_digest: str, *, lock: FolderLock | None = None) -> None:
        self.folder = folder
        self.config_hash = config_digest
        self.results_path = folder / "results.jsonl"
        self._lock = lock
        self._rows = self._read_rows(repair=lock is not None)
        self._keys = {row["key"] for row in self._rows}

    @classmethod
    def open(
        cls,
        runs_dir: str | Path,
        job: str,
        config: Any,
        *,
        name: str | None = None,
        seeds: Sequence[int] = (),
    ) -> RunStore:
        """Open (resume) or create the run folder ``runs_dir/job/name``.

        Args:
            config: a config dataclass; its hash names the folder when ``name`` is None.
            seeds: recorded in ``environment.json``.
        Raises:
            RecordError: the folder holds another layout version or a different config.
            MemgymError: another process is writing the folder.
        """
        digest = config_hash(config)
        folder = Path(runs_dir) / job / (name or digest)
        manifest_path = folder / "manifest.json"
        make_writable_folder(folder, f"run folder {folder}")
        lock = FolderLock.acquire(folder)
        if manifest_path.exists():
            manifest = read_manifest(manifest_path)
            version = manifest.get("memgym_results")
            if version != RESULTS_VERSION:
                raise RecordError(
                    f"{folder}: results folder version {version!r} is not {RESULTS_VERSION}; "
                    "use a new --runs-dir or move the folder away"
                )
            if manifest.get("config_hash") != digest:
                raise RecordError(
                    f"{folder}: holds results of a different config (hash {manifest.get('config_hash')}, "
                    f"now {digest}); choose another run name"
                )
            dump_config(config, folder / "config.yaml")  # may differ in settings that are not hashed
            return cls._tracked(folder, digest, lock)
        dump_config(config, folder / "config.yaml")
        environment = environment_info()
        environment["seeds"] = list(seeds)
        (folder / "environment.json").write_text(json.dumps(environment, indent=2), encoding="utf-8")
        manifest = {
            "memgym_results": RESULTS_VERSION,
            "job": job,
            "config_hash": digest,
            "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        }
        manifest_path.write_text(json.dumps(manifest, indent=2), encoding="utf-8")
        return cls._tracked(folder, digest, lock)

    @classmethod
    def _tracked(cls, folder: Path, digest: str, lock: FolderLock) -> RunStore:
        """A writer of ``folder``, whose failed rows the CLI reports when the job ends
        (:mod:`memgym.core.outcome`)."""
        store = cls(folder, digest, lock=lock)
        track_store(store)
        return store

    def done_keys(self) -> set[str]:
        """Keys of the items finished without an error (errored items are retried by a re-run)."""
        return {row["key"] for row in self._rows if not row.get("error")}

    def recorded_keys(self) -> set[str]:
        """Keys of every recorded item, errored or not."""
        return set(self._keys)

    def rows(self) -> list[dict[str, Any]]:
        """All finished rows, in completion order."""
        return list(self._rows)

    def append(self, key: str, row: dict[str, Any]) -> None:
        """Record one finished item durably. A key may be written only once."""
        self.append_many([(key, row)])

    def append_many(self, items: Sequence[tuple[str, dict[str, Any]]]) -> None:
        """Record several finished items with one write and one fsync.

        Keys must be unique in the call and not yet recorded, except keys whose recorded row
        holds an ``error``: their new row replaces it and lists the earlier messages in
        ``earlier_errors``. An interruption mid-write loses at most the items of this call (a
        partial last line is dropped on reopen); items fully written before it are kept.
        """
        if self._lock is None:
            raise RecordError(f"{self.folder}: opened for reading only; use RunStore.open to write")
        keys: set[str] = set()
        earlier = {row["key"]: row for row in self._rows if row.get("error")}
        for key, _ in items:
            if (key in self._keys and key not in earlier) or key in keys:
                raise RecordError(f"{self.results_path}: item '{key}' is already recorded")
            keys.add(key)
        records = []
        for key, row in items:
            record = {"key": key, **row}
            if key in earlier:
                record["earlier_errors"] = [*earlier[key].get("earlier_errors", []), earlier[key]["error"]]
            records.append(json.loads(json.dumps(record, default=_json_default)))
        with self.results_path.open("a", encoding="utf-8") as handle:
            handle.write("".join(json.dumps(record) + "\n" for record in records))
            handle.flush()
            os.fsync(handle.fileno())
        retried = keys & earlier.keys()
        self._rows = [row for row in self._rows if row["key"] not in retried] + records
        self._keys.update(keys)

    def environment(self) -> dict[str, Any]:
        """The run's ``environment.json`` ({} when the folder has none)."""
        path = self.folder / "environment.json"
        if not path.exists():
            return {}
        try:
            return json.loads(read_text(path))
        except json.JSONDecodeError as exc:
            raise RecordError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None

    def record_environment(self, key: str, value: Any) -> None:
        """Set ``key`` of the run's ``environment.json`` to ``value`` (JSON-serialisable), atomically."""
        if self._lock is None:
            raise RecordError(f"{self.folder}: opened for reading only; use RunStore.open to write")
        environment = self.environment()
        environment[key] = value
        self.write_text("environment.json", json.dumps(environment, indent=2))

    def write_text(self, name: str, text: str) -> Path:
        """Write an artefact (a table, a report) into the run folder atomically."""
        path = self.folder / name
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
        return path

    def _read_rows(self, *, repair: bool) -> list[dict[str, Any]]:
        """Rows of results.jsonl, one per key: the first row of a key, or the row retrying an
        errored one. ``repair`` (writers only) cuts a half-written last line off the file."""
        if not self.results_path.exists():
            return []
        rows: dict[str, dict[str, Any]] = {}
        # an item interrupted mid-write is a partial last line: left out (cut off for writers), redone
        for number, line in complete_jsonl_lines(self.results_path, repair=repair):
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                raise RecordError(f"{self.results_path}:{number}: corrupt result line; fix or remove it") from None
            if not isinstance(row, dict) or "key" not in row:
                raise RecordError(f"{self.results_path}:{number}: result rows must be objects with a 'key'")
            earlier = rows.get(row["key"])
            if earlier is None or earlier.get("error"):
                rows.pop(row["key"], None)  # a retry moves to its place in completion order
                rows[row["key"]] = row
        return list(rows.values())


def run_name(runs_dir: str | Path, job: str, label: Sequence[str], digest: str) -> str:
    """The folder name of a run given no ``name=``: a human label with the config hash inside,
    ``"<part>-<part>-<digest>"``, each part of ``label`` cut to ``[A-Za-z0-9+._]`` (others become
    ``_``) and the label to 48 characters. A folder named by the hash alone (written before labels)
    keeps its name, so that run resumes where it is.

    >>> run_name("/nonexistent", "eval-voxmem", ["cascaded,transcript", "hf:/m/Qwen2"], "ed3df066513e5a15")
    'cascaded_transcript-hf_m_Qwen2-ed3df066513e5a15'
    """
    if (Path(runs_dir) / job / digest).is_dir():
        return digest
    parts = [re.sub(r"[^A-Za-z0-9+._]+", "_", part).strip("_.") for part in label]
    slug = "-".join(part for part in parts if part)[:48].strip("_.-")
    return f"{slug}-{digest}" if slug else digest


def read_manifest(path: Path) -> dict[str, Any]:
    """A run folder's ``manifest.json`` as a dict.

    Raises:
        RecordError: not UTF-8, not JSON, or not a JSON object.
    """
    try:
        manifest = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise RecordError(f"{path}: not valid UTF-8 JSON; move the folder away to start over") from None
    if not isinstance(manifest, dict):
        raise RecordError(f"{path}: expected a JSON object, got a {type(manifest).__name__}")
    return manifest


def environment_info() -> dict[str, Any]:
    """Python, platform, tracked package versions and the git commit of the working directory."""
    packages = {}
    for name in TRACKED_PACKAGES:
        try:
            packages[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=False
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": packages,
        "git_commit": commit or None,
    }


def aggregate(
    rows: Iterable[dict[str, Any]],
    by: Sequence[str],
    metrics: Sequence[str],
) -> list[dict[str, Any]]:
    """Mean of each metric per group of the ``by`` columns, with the group size ``n``.

    Rows missing a metric (or holding ``None``, e.g. a failed item) do not count for it; the
    ``n`` column counts rows in the group. Groups are sorted by their ``by`` values.
    """
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(tuple(row.get(col) for col in by), []).append(row)
    table = []
    for values in sorted(groups, key=lambda v: tuple(str(x) for x in v)):
        members = groups[values]
        out: dict[str, Any] = dict(zip(by, values))
        out["n"] = len(members)
        for metric in metrics:
            numbers = [float(r[metric]) for r in members if r.get(metric) is not None]
            out[metric] = sum(numbers) / len(numbers) if numbers else None
        table.append(out)
    return table


def to_markdown(table: Sequence[dict[str, Any]], digits: int = 3) -> str:
    """GitHub Markdown table of rows with identical keys."""
    if not table:
        return "_no results_\n"
    columns = list(table[0])
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join(" --- " for _ in columns) + "|"]
    for row in table:
        lines.append("| " + " | ".join(_cell(row.get(c), digits) for c in columns) + " |")
    return "\n".join(lines) + "\n"


def to_csv(table: Sequence[dict[str, Any]]) -> str:
    """CSV text of rows with identical keys."""
    buffer = io.StringIO()
    if table:
        writer = csv.DictWriter(buffer, fieldnames=list(table[0]))
        writer.writeheader()
        writer.writerows(table)
    return buffer.getvalue()


def _cell(value: Any, digits: int) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    if hasattr(value, "tolist"):
        return value.tolist()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return config_to_dict(value)
    return str(value)
