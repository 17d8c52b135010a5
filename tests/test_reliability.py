"""Bad input, interrupted runs and concurrent runs through the ``memgym`` command line.

Every bad input must end in exactly one ``memgym: error:`` line on stderr and exit status 2
(most cases run ``memgym.cli.main`` in-process for speed, a few run ``python -m memgym``). The
kill-and-resume tests SIGKILL a real ``memgym generate`` / ``memgym eval`` mid-run and check that
re-running the command completes with every item exactly once; the concurrent-writer test runs
two evals into one run folder.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from small_houses import SMALL_HOUSES

from memgym.cli import main
from memgym.core.benchmark import JOBS, JobArgs
from memgym.core.episode import Dataset
from memgym.core.results import RunStore
from memgym.pipelines.dialogmem.generation import generate

BAD_BYTES = b"\xff\xfe not utf-8 \xc3\x28\n"
EVAL_CAMERA = ("camera.width=32", "camera.height=24")
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    """A DialogMem dataset of two small generated houses."""
    out = tmp_path_factory.mktemp("reliability") / "episodes.jsonl"
    return generate(JobArgs(overrides=("scenes=2", *SMALL_HOUSES), out=out, progress=False))


def fails_with_one_line(capsys, argv: list[str], *fragments: str) -> str:
    """Run ``memgym ARGV`` in-process; assert exit 2 and one ``memgym: error:`` line holding ``fragments``."""
    if argv and argv[0] in JOBS and len(argv) > 1:
        argv = [*argv, "--no-progress"]  # progress bars share stderr
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse usage errors
        code = exc.code
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2, err
    assert len(err) == 1 and err[0].startswith("memgym: error: "), err
    for fragment in fragments:
        assert fragment in err[0], err[0]
    return err[0]


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "memgym", *args]


def subprocess_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


# ----- bad input: one line, exit 2 ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["generate", "dialogmem", "scenes=0"], "'scenes' = 0 is too small"),
        (["generate", "dialogmem", "scenes=-3"], "'scenes' = -3 is too small"),
        (["generate", "dialogmem", "scenes=100000000"], "'scenes' = 100000000 is too large"),
        (["generate", "dialogmem", "camera.width=0"], "'camera.width' = 0 is too small"),
        (["generate", "dialogmem", "house.max_rooms=5"], "got min_rooms=6, max_rooms=5 (set both"),
        (["generate", "dialogmem", "camera.height=-48"], "'camera.height' = -48 is too small"),
        (["render", "dialogmem", "camera.width=40000"], "'camera.width' = 40000 is too large"),
        (["eval", "dialogmem", "camera.width=0"], "'camera.width' = 0 is too small"),
        (["eval", "dialogmem", "max_episodes=-1"], "'max_episodes' = -1 is too small"),
        (["train", "amemops", "steps=-5"], "'steps' = -5 is too small"),
        (["train", "amemops", "checkpoint_steps=[10,-1]"], "'checkpoint_steps[1]' = -1 is too small"),
        (["generate", "amemops", "count=0"], "'count' = 0 is too small"),
        (["generate", "voxmem", "users=0"], "'users' = 0 is too small"),
        (["generate", "voxmem", "items=-1"], "'items' = -1 is too small"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
        (["eval"], "the following arguments are required"),
    ],
)
def test_out_of_range_settings_and_unknown_commands(capsys, tmp_path, argv, fragment):
    fails_with_one_line(capsys, [*argv, "--runs-dir", str(tmp_path)] if len(argv) > 1 else argv, fragment)


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["eval", "dialogmem", "dataset={dir}"], "dataset {dir} is a directory, expected a .jsonl file"),
        (["eval", "dialogmem", "dataset={missing}"], "{missing} does not exist; run 'memgym generate dialogmem'"),
        (["generate", "dialogmem", "source=hm3d", "hm3d_path={file}"], "{file} is a file, expected a folder of HM3D"),
        (["eval", "voxmem", "dataset={file}"], "dataset {file} is a file, expected a VoxMem dataset folder"),
        (["eval", "voxmem", "dataset={missing}"], "dataset {missing} does not exist; build one with"),
        (["render", "amemops", "manifest={missing}"], "stream set {missing} does not exist"),
        (["generate", "amemops", "--config", "{dir}"], "config file {dir} is a directory, expected a YAML"),
        (["generate", "voxmem", "filler_path={missing}"], "filler_path {missing} does not exist"),
    ],
)
def test_path_keys_say_what_is_wrong_with_the_path(capsys, tmp_path, argv, fragment):
    paths = {"dir": tmp_path / "a_dir", "file": tmp_path / "a_file.jsonl", "missing": tmp_path / "missing"}
    paths["dir"].mkdir()
    paths["file"].write_text("{}\n")
    argv = [arg.format(**paths) for arg in argv]
    fails_with_one_line(capsys, [*argv, "--runs-dir", str(tmp_path / "runs")], fragment.format(**paths))


def test_non_utf8_files_name_the_file(capsys, tmp_path):
    config = tmp_path / "bad.yaml"
    config.write_bytes(b"count: 2\n# " + BAD_BYTES)
    fails_with_one_line(capsys, ["generate", "amemops", "--config", str(config)], f"{config}: not UTF-8 text")
    data = tmp_path / "bad.jsonl"
    data.write_bytes(BAD_BYTES)
    fails_with_one_line(capsys, ["eval", "dialogmem", f"dataset={data}"], f"{data}:1: not UTF-8 text")
    esc50 = tmp_path / "esc50"
    (esc50 / "meta").mkdir(parents=True)
    (esc50 / "meta" / "esc50.csv").write_bytes(b"filename,fold,target,category\n" + BAD_BYTES)
    fails_with_one_line(
        capsys,
        ["generate", "amemops", "stream.library.kind=esc50", f"stream.library.root={esc50}", "--out", str(tmp_path)],
        "esc50.csv: not UTF-8 text",
    )
    filler = tmp_path / "filler"
    filler.mkdir()
    (filler / "dialogues.jsonl").write_bytes(BAD_BYTES)
    fails_with_one_line(
        capsys,
        ["generate", "voxmem", "items=1", f"filler_path={filler}", "--out", str(tmp_path / "vox")],
        "dialogues.jsonl: not UTF-8 text",
    )


def test_non_utf8_hm3d_semantic_table_names_the_file(capsys, tmp_path):
    from memgym.scenes.hm3d import export_hm3d
    from memgym.scenes.procedural import HouseConfig, generate_house

    export_hm3d(generate_house(7, HouseConfig(min_rooms=3, max_rooms=3)), tmp_path / "hm3d" / "00001-h", "h")
    (semantic,) = (tmp_path / "hm3d").rglob("*semantic.txt")
    semantic.write_bytes(semantic.read_bytes() + BAD_BYTES)
    argv = ["generate", "dialogmem", "source=hm3d", f"hm3d_path={tmp_path / 'hm3d'}", "scenes=1", *SMALL_HOUSES[3:]]
    fails_with_one_line(capsys, [*argv, "--out", str(tmp_path / "o.jsonl")], "semantic.txt: not UTF-8 text")


def test_nsynth_metadata_with_a_scalar_is_one_error(capsys, tmp_path):
    for split in ("train", "valid", "test"):
        (tmp_path / f"nsynth-{split}").mkdir()
        (tmp_path / f"nsynth-{split}" / "examples.json").write_text('{"guitar_acoustic_000-060-100": 3}')
    argv = ["generate", "amemops", "stream.library.kind=nsynth", f"stream.library.root={tmp_path}"]
    fails_with_one_line(capsys, [*argv, "--out", str(tmp_path / "set")], "is int 3, expected an object")


def test_output_paths_that_cannot_be_written_fail_before_any_work(capsys, dataset, tmp_path):
    a_file = tmp_path / "file"
    a_file.write_text("x")
    small = ["generate", "dialogmem", "scenes=1", *SMALL_HOUSES]
    fails_with_one_line(capsys, [*small, "--out", str(tmp_path)], "is a folder; --out must name a file")
    fails_with_one_line(capsys, [*small, "--out", str(a_file / "x.jsonl")], "a file is in the way")
    fails_with_one_line(capsys, [*small, "--out", "/proc/self/x.jsonl"], "/proc/self is not writable")
    fails_with_one_line(capsys, ["generate", "amemops", "count=1", "--out", str(a_file)], "is a file")
    fails_with_one_line(capsys, ["generate", "voxmem", "items=1", "--out", str(a_file)], "a file is in the way")
    fails_with_one_line(capsys, ["render", "dialogmem", "--out", str(tmp_path)], "is a folder; --out must name a file")
    fails_with_one_line(capsys, ["render", "amemops", "--out", str(a_file / "x.png")], "a file is in the way")
    argv = ["eval", "dialogmem", f"dataset={dataset}", *EVAL_CAMERA, "--runs-dir", str(a_file)]
    fails_with_one_line(capsys, argv, "cannot create run folder", "a file is in the way")


def test_empty_dataset_is_an_error(capsys, tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    fails_with_one_line(capsys, ["eval", "dialogmem", f"dataset={empty}", "--runs-dir", str(tmp_path)], "no episodes")
    fails_with_one_line(
        capsys, ["render", "dialogmem", f"episodes={empty}", "--runs-dir", str(tmp_path)], "no episodes"
    )
    (tmp_path / "set").mkdir()
    (tmp_path / "set" / "manifest.jsonl").write_text("")
    fails_with_one_line(capsys, ["render", "amemops", f"manifest={tmp_path / 'set'}"], "holds no streams")


def _run_folder(tmp_path: Path) -> Path:
    store = RunStore.open(tmp_path, "eval", {"m": 1}, name="r")
    store.append("a", {"task": "qa", "acc": 1.0})
    store.append("b", {"task": "nav", "acc": 0.0})
    return store.folder


def test_report_refuses_unknown_and_text_columns_and_bad_manifests(capsys, tmp_path):
    folder = _run_folder(tmp_path)
    fails_with_one_line(capsys, ["report", str(folder), "--metrics", "acc,acuracy"], "no column 'acuracy'")
    fails_with_one_line(capsys, ["report", str(folder), "--by", "tsk", "--metrics", "acc"], "no column 'tsk'")
    fails_with_one_line(capsys, ["report", str(folder), "--metrics", "task"], "metric 'task' is not numeric")
    assert main(["report", str(folder), "--by", "task", "--metrics", "acc"]) == 0
    capsys.readouterr()
    manifest = folder / "manifest.json"
    manifest.write_text("[1, 2]")
    fails_with_one_line(capsys, ["report", str(folder), "--metrics", "acc"], "expected a JSON object, got a list")
    manifest.write_bytes(b'{"memgym_results": 1, "job": "' + BAD_BYTES.strip() + b'"}')
    fails_with_one_line(capsys, ["report", str(folder), "--metrics", "acc"], "not valid UTF-8 JSON")


def test_eval_into_a_folder_with_a_list_manifest_is_one_error(capsys, dataset, tmp_path):
    args = ["eval", "dialogmem", f"dataset={dataset}", *EVAL_CAMERA, "name=r", "--runs-dir", str(tmp_path)]
    (tmp_path / "eval-dialogmem" / "r" / "dialogue").mkdir(parents=True)
    (tmp_path / "eval-dialogmem" / "r" / "dialogue" / "manifest.json").write_text("[]")
    fails_with_one_line(capsys, [*args, "--no-progress"], "expected a JSON object, got a list")


def test_bad_input_through_a_real_process_is_one_line():
    result = subprocess.run(cli("frobnicate"), capture_output=True, text=True, env=subprocess_env(), check=False)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1 and lines[0].startswith("memgym: error: "), result.stderr
    assert result.stdout == ""


# ----- generate: a changed config, a failed build, a killed build ---------------------------------


def test_stream_set_of_another_config_is_refused_and_a_failed_build_changes_nothing(capsys, tmp_path):
    out = tmp_path / "set"
    base = ["generate", "amemops", "count=1", "stream.library.kind=tones", "seed=3"]
    assert main([*base, "--out", str(out), "--no-progress"]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    changed = [arg.replace("seed=3", "seed=4") for arg in base]  # same stream ids, other streams
    fails_with_one_line(capsys, [*changed, "--out", str(out)], "holds a build of another config")
    corrupt = tmp_path / "esc50"
    (corrupt / "meta").mkdir(parents=True)
    (corrupt / "meta" / "esc50.csv").write_text("filename,fold\n")
    argv = [*base[:3], "stream.library.kind=esc50", f"stream.library.root={corrupt}", *base[4:], "--out", str(out)]
    fails_with_one_line(capsys, argv, "missing column")
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
    assert main([*base, "--out", str(out), "--no-progress"]) == 0  # the same config resumes


def _wait_for(condition, process: subprocess.Popen, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert process.poll() is None, "the run finished before it could be interrupted"
        assert time.monotonic() < deadline, "the run made no progress"
        time.sleep(0.02)


def _start(args: list[str]) -> subprocess.Popen:
    return subprocess.Popen(
        cli(*args), env=subprocess_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )


def _kill(process: subprocess.Popen) -> None:
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()


@pytest.mark.slow  # memgym subprocesses killed and rerun; in 'make test'
def test_generate_killed_mid_run_resumes_with_each_episode_once(tmp_path):
    out = tmp_path / "episodes.jsonl"
    args = ["generate", "dialogmem", "scenes=3", *SMALL_HOUSES, "--out", str(out), "--no-progress"]
    partial = out.with_name(out.name + ".partial")
    process = _start(args)
    _wait_for(lambda: partial.is_file() and len(partial.read_bytes().splitlines()) >= 2, process)  # header + 1
    _kill(process)
    assert not out.exists()
    assert main(args) == 0
    ids = [episode.episode_id for episode in Dataset.load(out)]
    assert ids == [f"dialogmem-{s:03d}-0" for s in range(3)] and not partial.exists()


# ----- eval: killed, concurrent, failed and retried -----------------------------------------------


def _keys(folder: Path) -> Counter:
    return Counter(json.loads(line)["key"] for line in (folder / "results.jsonl").read_text().splitlines())


def _items(dataset: Path) -> set[str]:
    return {f"{e.episode_id}|{i.item_id}" for e in Dataset.load(dataset) for i in e.items}


@pytest.mark.slow  # memgym subprocesses killed and rerun; in 'make test'
def test_eval_killed_mid_run_resumes_with_each_item_once(dataset, tmp_path):
    args = ["eval", "dialogmem", f"dataset={dataset}", *EVAL_CAMERA, "name=k", "--runs-dir", str(tmp_path)]
    results = tmp_path / "eval-dialogmem" / "k" / "dialogue" / "results.jsonl"
    process = _start([*args, "--no-progress"])
    _wait_for(lambda: results.is_file() and results.read_bytes().count(b"\n") >= 1, process)
    _kill(process)
    assert 0 < len(_keys(results.parent)) < len(_items(dataset))
    assert main([*args, "--no-progress"]) == 0
    keys = _keys(results.parent)
    assert set(keys) == _items(dataset) and set(keys.values()) == {1}


@pytest.mark.slow  # memgym subprocesses killed and rerun; in 'make test'
def test_a_second_writer_of_a_run_folder_is_refused(capsys, dataset, tmp_path):
    args = ["eval", "dialogmem", f"dataset={dataset}", *EVAL_CAMERA, "name=c", "--runs-dir", str(tmp_path)]
    first, second = _start([*args, "--no-progress"]), _start([*args, "--no-progress"])
    codes = [first.wait(timeout=240), second.wait(timeout=240)]
    errors = [p.stderr.read().decode() for p in (first, second)]
    assert sorted(codes) in ([0, 0], [0, 2]), errors  # the second waits for nothing: it is refused
    refused = [e for c, e in zip(codes, errors) if c == 2]
    assert all("is being written by another memgym process (pid " in e for e in refused), errors
    keys = _keys(tmp_path / "eval-dialogmem" / "c" / "dialogue")
    assert set(keys) == _items(dataset) and set(keys.values()) == {1}
    # Deterministic: while another process holds the folder's lock, an eval into it is refused.
    folder = tmp_path / "eval-dialogmem" / "c" / "dialogue"
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(folder / ".lock")], stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline().strip() == b"locked"
        fails_with_one_line(
            capsys,
            args,
            f"{folder} is being written by another memgym process (pid {holder.pid}); wait for it to finish",
        )
    finally:
        holder.kill()
        holder.wait()
    assert main([*args, "--no-progress"]) == 0  # the lock went with its holder
    assert set(_keys(folder).values()) == {1}


HOLD_LOCK = """
import fcntl, os, sys, time
handle = open(sys.argv[1], "a+")
fcntl.flock(handle, fcntl.LOCK_EX)
handle.seek(0); handle.truncate(); handle.write(f"{os.getpid()}\\n"); handle.flush()
print("locked", flush=True)
time.sleep(120)
"""


def test_duplicate_rows_from_an_older_concurrent_run_are_read_once(capsys, tmp_path):
    folder = _run_folder(tmp_path)
    text = (folder / "results.jsonl").read_text()
    (folder / "results.jsonl").write_text(text + text)  # what two unlocked writers used to leave
    assert main(["report", str(folder), "--by", "task", "--metrics", "acc"]) == 0
    assert "| nav | 0.000 [0.000, 0.000] (1) |" in capsys.readouterr().out  # one row per key: n = 1


class ChatServer:
    """A chat-completions endpoint on a fixed port that answers every question with "a lamp"."""

    def __init__(self, port: int) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers["Content-Length"]))
                body = json.dumps({"choices": [{"message": {"role": "assistant", "content": "a lamp"}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _free_port() -> int:
    with contextlib.closing(socket.socket()) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_outage_fails_loudly_and_a_rerun_retries_the_failed_items(capsys, dataset, tmp_path):
    port = _free_port()
    args = [
        "eval",
        "dialogmem",
        f"dataset={dataset}",
        *EVAL_CAMERA,
        "max_episodes=1",
        "reasoner.backend=openai",
        "reasoner.model=m",
        f"reasoner.base_url=http://127.0.0.1:{port}/v1",
        "--runs-dir",
        str(tmp_path),
        "--no-progress",
    ]
    start = time.monotonic()
    line = fails_with_one_line(capsys, args, "items of ", "failed (first error: ", "cannot connect")
    assert time.monotonic() - start < 30  # connection refused is not retried
    (run,) = (tmp_path / "eval-dialogmem").iterdir()
    folder = run / "dialogue"
    failed = RunStore(folder, "").rows()
    assert failed and all(r["error"] for r in failed) and str(len(failed)) in line
    server = ChatServer(port)
    try:
        assert main(args) == 0
    finally:
        server.close()
    rows = RunStore(folder, "").rows()
    assert sorted(r["key"] for r in rows) == sorted(r["key"] for r in failed)
    assert all(not r.get("error") and r["prediction"] == "a lamp" for r in rows)
    assert all(r["earlier_errors"] == [f["error"]] for r, f in zip(sorted_rows(rows), sorted_rows(failed)))
    assert main(args) == 0  # nothing left to retry: no new rows
    assert len((folder / "results.jsonl").read_text().splitlines()) == 2 * len(failed)


def sorted_rows(rows: list[dict]) -> list[dict]:
    return sorted(rows, key=lambda r: r["key"])
