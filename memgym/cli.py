"""The ``memgym`` command line.

    memgym list [--describe]                 what is registered (benchmarks, envs, memories, ...)
    memgym generate BENCH [key=value ...]    build a dataset
    memgym train BENCH [key=value ...]       train a model (AMemOps memory cores; VoxMem: the small audio LM)
    memgym eval BENCH [key=value ...]        evaluate, results resumable in the run folder
    memgym render BENCH [key=value ...]      draw an episode (image or video)
    memgym run quickstart [workers=N]        the papers' comparisons at a small size + findings, one report
    memgym report PATH [--metrics M --by COL] systems x metrics with 95% intervals of the runs under PATH
    memgym view PATH [--port N | --out DIR]  browse a dataset or run folder in a web page
    memgym findings PATH... [--out DIR]      every paper claim checked against the runs under PATHs

Exit status (:data:`EXIT_STATUS`, shown by every ``--help``): 0 when the job finished, also when
some of its items failed or a build dropped some (one ``memgym: warning:`` line on stderr says how
many and why; re-running an eval retries its failed items); 2 for bad input (unknown names or
subcommands, malformed configs, corrupt or non-UTF-8 files, output paths that cannot be written)
and for an eval in which every item of a run folder failed, each with one ``memgym: error:`` line;
130 when interrupted (re-run to resume).
"""

from __future__ import annotations

import argparse
import json
import sys
import typing
from collections.abc import Sequence
from pathlib import Path

from memgym.core.benchmark import JOBS, JobArgs
from memgym.core.docstrings import plain_summary
from memgym.core.errors import MemgymError, PluginImportError
from memgym.core.outcome import JobOutcome, watch_job
from memgym.core.registry import ALL_REGISTRIES, BENCHMARKS, BUILTIN, MEMORIES, Registry
from memgym.core.suggest import did_you_mean

EXIT_STATUS = (
    "exit status: 0 done, also when some items failed or were dropped (one 'memgym: warning:' line on "
    "stderr says how many and why; re-running an eval retries its failed items); 2 bad input, or every "
    "item of a run failed (one 'memgym: error:' line); 130 interrupted (re-run to resume)"
)

JOB_HELP = {
    "generate": "build a dataset for a benchmark",
    "train": "train a model (AMemOps memory cores, data.source=env inside env rollouts; VoxMem: the small audio LM)",
    "eval": "evaluate a memory/model on a benchmark; resumes an interrupted run",
    "render": "render an episode of a benchmark to an image or video",
}


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one ``memgym: error:`` line (status 2)."""

    def error(self, message: str) -> typing.NoReturn:
        self.exit(2, f"memgym: error: {message} (see '{self.prog} --help')\n")


class IntermixedParser(OneLineParser):
    """A subcommand parser whose options may come anywhere on the line: ``memgym eval dialogmem
    --config c.yaml dataset=d.jsonl --no-progress`` (:meth:`~argparse.ArgumentParser.parse_known_intermixed_args`).

    A line asking for ``--help`` is parsed in order, so that :class:`JobHelp` sees the benchmark
    named before it.
    """

    _nested = False

    def parse_known_args(self, args=None, namespace=None):
        args = list(sys.argv[1:] if args is None else args)
        if self._nested or "-h" in args or "--help" in args:
            return super().parse_known_args(args, namespace)
        self._nested = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._nested = False


class JobHelp(argparse.Action):
    """``memgym JOB BENCH --help``: the job's usage, then BENCH's config keys (types, defaults)
    and the registered names it takes (:meth:`~memgym.core.benchmark.Benchmark.job_help`)."""

    def __init__(self, option_strings: list[str], dest: str, job: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, nargs=0, help=help)
        self.job = job

    def __call__(self, parser, namespace, values, option_string=None) -> typing.NoReturn:
        name = getattr(namespace, "benchmark", None)
        try:
            extra = f"\n{BENCHMARKS.get(name)().job_help(self.job)}" if name else ""
        except MemgymError as exc:
            parser.exit(2, f"memgym: error: {exc}\n")
        print(parser.format_help() + extra, end="")
        parser.exit(0)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``memgym`` (every subcommand has ``--help``)."""
    from memgym import __version__

    parser = OneLineParser(prog="memgym", description="Two-phase agent-memory benchmarks.", epilog=EXIT_STATUS)
    parser.add_argument("--version", action="version", version=f"memgym {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=IntermixedParser)

    listing = sub.add_parser(
        "list",
        help="show registered benchmarks, envs, memories (with what each reads), scorers, ...",
        description="Show what is registered; name kinds (singular or plural: memory, memories, envs) "
        "to show only those.",
    )
    listing.add_argument("kinds", nargs="*", metavar="KIND", help=f"only these kinds ({', '.join(LIST_KINDS)})")
    listing.add_argument("--json", action="store_true", help="print JSON instead of text")
    listing.add_argument(
        "--describe", action="store_true", help="import each name and show its description instead of its module:attr"
    )

    for job in JOBS:
        job_parser = sub.add_parser(
            job, help=JOB_HELP[job], description=JOB_HELP[job], epilog=EXIT_STATUS, add_help=False
        )
        job_parser.add_argument("-h", "--help", action=JobHelp, job=job, help="show this help (and BENCH's keys)")
        job_parser.add_argument("benchmark", help="registered benchmark name (see 'memgym list')")
        _add_job_options(job_parser)

    run = sub.add_parser(
        "run",
        help="run a named job; 'quickstart' runs the papers' comparisons small, then memgym findings",
        description="quickstart keys: workers=N (processes running its jobs side by side; 0: one per CPU, "
        "at most 4; 1: one after another in this process). See docs/quickstart.md.",
        epilog=EXIT_STATUS,
    )
    run.add_argument("name", choices=["quickstart"], help="the job to run")
    _add_job_options(run)

    _add_reading_commands(sub)
    return parser


def _add_reading_commands(sub: argparse._SubParsersAction) -> None:
    """``memgym report``, ``findings`` and ``view``: the commands that read runs back."""
    report = sub.add_parser(
        "report",
        help="tabulate a run folder (or a folder of runs): systems x metrics with 95%% intervals",
        description="Find the run folders at or below RUN_DIR (an eval's folder, a quickstart folder, runs/) "
        "and print one table per evaluation: its systems x metrics, each the mean with a 95%% bootstrap "
        "interval over items and the item count. Defaults: DialogMem navigation success, SPL and QA score; "
        "VoxMem accuracy per budget; AMemOps accuracy per query type; other runs their numeric columns.",
    )
    report.add_argument("run_dir", type=Path, help="run folder, eval folder or folder of runs")
    report.add_argument("--by", default="", help="comma-separated columns to group by besides the system")
    report.add_argument("--metrics", default="", help="comma-separated metric columns (default: the kind's)")
    report.add_argument("--format", choices=["markdown", "csv"], default="markdown")

    findings = sub.add_parser(
        "findings",
        help="check every paper claim against the eval runs under the given folders",
        description="Read DialogMem, VoxMem and AMemOps eval run folders (any mix; folders are searched "
        "recursively) and decide, for every paper finding they can measure, reproduced / not reproduced / "
        "reversed / undecided / not measured (rules: docs/findings.md). Writes findings.md, findings.csv, "
        "findings.json and findings.png.",
    )
    findings.add_argument("paths", type=Path, nargs="+", metavar="RUN_OR_FOLDER", help="run folders or folders of runs")
    findings.add_argument(
        "--out",
        type=Path,
        default=None,
        help="output folder (default: findings/ beside the runs, in the folder they share)",
    )

    view = sub.add_parser(
        "view",
        help="browse a dataset, episode file or run folder in a local web page",
        description="Serve a page on 127.0.0.1 showing a DialogMem, AMemOps or VoxMem dataset or eval run "
        "(or write it to a folder with --out).",
    )
    view.add_argument("path", type=Path, help="dataset (episodes JSONL / dataset folder) or eval run folder")
    view.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (default 8000; 0: any free port)")
    view.add_argument("--out", type=Path, default=None, help="write a self-contained page folder instead of serving")
    view.add_argument("--dataset", type=Path, default=None, help="a run's dataset, when its recorded path is not found")
    view.add_argument("--no-progress", action="store_true", help="hide the progress bar of --out")


def _add_job_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("overrides", nargs="*", metavar="key=value", help="config overrides")
    parser.add_argument("--config", type=Path, default=None, help="YAML config applied before overrides")
    parser.add_argument("--runs-dir", type=Path, default=Path("runs"), help="root of run folders (default: runs)")
    parser.add_argument("--out", type=Path, default=None, help="output path for jobs that write one artefact")
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")


def _job_args(ns: argparse.Namespace) -> JobArgs:
    for override in ns.overrides:
        if "=" not in override:
            raise MemgymError(f"argument '{override}' is not a key=value override")
    return JobArgs(
        overrides=tuple(ns.overrides),
        config_path=ns.config,
        runs_dir=ns.runs_dir,
        out=ns.out,
        progress=not ns.no_progress,
    )


GYM_IDS = "gymnasium id"
LIST_KINDS = (*(registry.kind for registry in ALL_REGISTRIES), GYM_IDS)
"""The sections of ``memgym list``, in order."""


def list_kinds(words: Sequence[str]) -> list[str]:
    """The sections of ``memgym list`` that ``words`` name (singular or plural: ``memory``,
    ``memories``, ``envs``; ``id``/``ids`` for the Gymnasium ids); all of them for no words.

    Raises:
        MemgymError: a word that names no section (with the close ones and the accepted ones).
    """
    forms = {}
    for kind in LIST_KINDS:
        stem = kind.split()[-1]
        plural = f"{stem[:-1]}ies" if stem.endswith("y") else f"{stem}s"
        forms.update({kind: kind, stem: kind, plural: kind})
    chosen = []
    for word in words:
        kind = forms.get(word.lower())
        if kind is None:
            raise MemgymError(
                f"list: unknown kind '{word}'{did_you_mean(word.lower(), forms)}; kinds: "
                f"{', '.join(k.split()[-1] for k in LIST_KINDS)} (singular or plural)"
            )
        if kind not in chosen:
            chosen.append(kind)
    return [kind for kind in LIST_KINDS if kind in chosen] if chosen else list(LIST_KINDS)


def cmd_list(as_json: bool, describe: bool = False, kinds: Sequence[str] = ()) -> int:
    """Print every registry (or those ``kinds`` names, :func:`list_kinds`): each name and where it
    lives, without importing it; each memory also with what it reads (words of
    :data:`memgym.core.protocols.READS`, from the plugin table; a plugin's memory only with
    ``describe``, which imports it). ``as_json`` puts those in a ``"memory reads"`` entry (name ->
    sorted words) when memories are listed.

    With ``describe``, each name's module is imported and its description shown instead, as plain
    text (a name whose optional extra is missing says which one to install).
    """
    chosen = list_kinds(kinds)
    listing = {}
    for registry in ALL_REGISTRIES:
        if registry.kind in chosen:
            listing[registry.kind] = {name: _list_entry(registry, name, describe) for name in registry.names()}
    if GYM_IDS in chosen:
        import gymnasium

        listing[GYM_IDS] = {k: v.entry_point for k, v in gymnasium.registry.items() if k.startswith("memgym/")}
    reads = {name: _memory_reads(name, describe) for name in listing.get(MEMORIES.kind, {})}
    reads = {name: words for name, words in reads.items() if words is not None}
    if as_json:
        extra = {"memory reads": reads} if MEMORIES.kind in listing else {}
        print(json.dumps({**listing, **extra}, indent=2))
        return 0
    for kind, entries in listing.items():
        print(f"{kind}:")
        if not entries:
            print("  (none yet)")
        width = max(map(len, entries.values()), default=0)
        for name, text in entries.items():
            if kind == MEMORIES.kind and name in reads:
                text = f"{text:<{width}}  reads: {' '.join(reads[name]) or '-'}"
            print(f"  {name:<28} {text}")
    return 0


def _memory_reads(name: str, describe: bool) -> list[str] | None:
    """Sorted words of what memory ``name`` reads: memgym's from the plugin table (no import); a
    plugin's from its class with ``describe`` (None without, or when it cannot be imported)."""
    from memgym.plugin_table import MEMORY_READS

    if name in MEMORY_READS:
        return sorted(MEMORY_READS[name])
    if not describe:
        return None
    try:
        return sorted(MEMORIES.get(name).reads)
    except PluginImportError:
        return None


def _list_entry(registry: Registry, name: str, describe: bool) -> str:
    target, provider = registry.locate(name)
    if describe:
        try:
            return _describe(registry.get(name))
        except PluginImportError as exc:
            return f"unavailable: {exc}"
    return target if provider == BUILTIN else f"{target}  [{provider}]"


def _describe(cls: type) -> str:
    if hasattr(cls, "implemented_jobs"):
        return f"{cls.description}  [jobs: {', '.join(cls.implemented_jobs()) or 'none'}]"
    return plain_summary(cls)


def cmd_job(job: str, benchmark: str, args: JobArgs) -> int:
    """Dispatch ``memgym JOB BENCH`` to the benchmark's method; say what it left undone. An eval
    ends with its main table (:func:`~memgym.pipelines.reporting.main_tables`) and its report's path."""
    bench = BENCHMARKS.get(benchmark)()
    with watch_job() as outcome:
        result = getattr(bench, job)(args)
    print(f"{job} {benchmark}: wrote {result}")
    if job == "eval":
        _print_main_table(Path(result))
    return _finish(outcome)


def _print_main_table(folder: Path) -> None:
    """The main table of the eval in ``folder`` and the path of its report (nothing for a folder
    without rows of a known kind, e.g. a run whose every item failed)."""
    from memgym.pipelines.reporting import main_tables, render_tables, report_file, run_kind

    try:
        tables = [t for t in main_tables(folder) if run_kind(t.job) is not None]
    except MemgymError:
        tables = []
    if tables:
        print(f"\n{render_tables(tables, relative_to=folder)}", end="")
    report = report_file(folder)
    if report is not None:
        print(f"report: {report}")


def cmd_quickstart(args: JobArgs) -> int:
    """Run every registered benchmark's quickstart and write one report."""
    from memgym.pipelines.quickstart import run_quickstart

    with watch_job() as outcome:
        report = run_quickstart(args)
    print(f"quickstart report: {report}")
    return _finish(outcome)


def _finish(outcome: JobOutcome) -> int:
    """Print the job's warning lines (failed or dropped items) on stderr; 0, or raise when all failed."""
    for line in outcome.finish():
        print(line, file=sys.stderr)
    return 0


def cmd_report(run_dir: Path, by: str, metrics: str, fmt: str) -> int:
    """Tabulate the runs at or below ``run_dir`` (:func:`~memgym.pipelines.reporting.main_tables`) on stdout."""
    from memgym.pipelines.reporting import main_tables, render_tables

    groups, columns = [c for c in by.split(",") if c], [m for m in metrics.split(",") if m]
    print(render_tables(main_tables(run_dir, groups, columns), fmt, relative_to=run_dir), end="")
    return 0


def cmd_findings(paths: Sequence[Path], out: Path | None) -> int:
    """Decide every paper claim on the runs under ``paths``; print the table and write the files."""
    from memgym.pipelines.findings.report import write_findings

    report = write_findings(paths, out)
    print(report.read_text(encoding="utf-8"), end="")
    print(f"findings: wrote {report}")
    return 0


def cmd_view(path: Path, port: int, out: Path | None, dataset: Path | None, progress: bool) -> int:
    """Serve the viewer page of ``path`` until interrupted, or write it to ``out``."""
    from memgym.viewer.sites import open_site

    site = open_site(path, dataset)
    if out is not None:
        from memgym.viewer.export import export

        print(f"view: wrote {export(site, out, progress=progress)}")
        return 0
    from memgym.viewer.server import make_server, url_of

    server = make_server(site, port)
    print(f"memgym view: serving {path} at {url_of(server)} (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("memgym view: stopped")
    finally:
        server.server_close()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    ns = build_parser().parse_args(argv)
    try:
        if ns.command == "list":
            return cmd_list(ns.json, ns.describe, ns.kinds)
        if ns.command in JOBS:
            return cmd_job(ns.command, ns.benchmark, _job_args(ns))
        if ns.command == "run":
            return cmd_quickstart(_job_args(ns))
        if ns.command == "report":
            return cmd_report(ns.run_dir, ns.by, ns.metrics, ns.format)
        if ns.command == "findings":
            return cmd_findings(ns.paths, ns.out)
        if ns.command == "view":
            return cmd_view(ns.path, ns.port, ns.out, ns.dataset, not ns.no_progress)
    except MemgymError as exc:
        return _fail(str(exc))
    except UnicodeDecodeError as exc:  # a reader that does not name its file yet
        return _fail(f"a file is not UTF-8 text ({exc.reason} at byte {exc.start})")
    except OSError as exc:
        if exc.filename is None:
            raise
        return _fail(f"{exc.filename}: {exc.strerror or exc}")
    except KeyboardInterrupt:
        print("memgym: interrupted; re-run the same command to resume", file=sys.stderr)
        return 130
    return 2


def _fail(message: str) -> int:
    print(f"memgym: error: {message}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
