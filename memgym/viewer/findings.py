"""The findings page: every claim's verdict, the effects figure, and each finding's runs.

A findings folder (``memgym findings ... --out DIR``, or ``QUICKSTART/findings``) holds
``findings.json``. The page lists one entry per claim; each shows the whole table (the current
claim highlighted), ``findings.png``, and links to the run folders the finding was measured on.
A linked run opens as its own page below ``runs/<n>/`` of this one (served and exported alike),
so a finding leads to the items behind it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memgym.core.errors import MemgymError, RecordError
from memgym.viewer.detect import Target
from memgym.viewer.site import Site, finite, split_media_name

FIGURE = "findings.png"
FIELDS = ("id", "benchmark", "claim", "paper", "ours", "effect_pp", "low", "high", "n", "verdict", "detail")


class FindingsSite(Site):
    """A findings folder (module docstring)."""

    def __init__(self, target: Target) -> None:
        super().__init__(target)
        path = target.path / "findings.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            self.rows: list[dict[str, Any]] = list(data["findings"])
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as exc:
            raise RecordError(f"{path}: not a findings file written by 'memgym findings' ({exc})") from None
        runs = [run for row in self.rows for run in str(row.get("runs") or "").split(";") if run]
        self.runs: list[str] = list(dict.fromkeys(runs))
        self._children: dict[int, Site] = {}

    def episodes(self) -> list[dict[str, Any]]:
        return [{"id": r["id"], "label": f"{r['verdict']}: {r['claim']}"} for r in self.rows]

    def episode(self, key: int) -> dict[str, Any]:
        row = self.rows[self.check_key(key)]
        links = [
            {"path": run, "href": f"runs/{self.runs.index(run)}/index.html", "exists": Path(run).exists()}
            for run in str(row.get("runs") or "").split(";")
            if run
        ]
        table = [{k: r.get(k) for k in FIELDS} for r in self.rows]
        figure = f"media/0/{FIGURE}" if (self.target.path / FIGURE).is_file() else None
        return finite({"finding": {k: row.get(k) for k in FIELDS}, "runs": links, "table": table, "figure": figure})

    def media_names(self, key: int) -> list[str]:
        return [f"0/{FIGURE}"] if key == 0 and (self.target.path / FIGURE).is_file() else []

    def media(self, name: str) -> bytes:
        key, file = split_media_name(name)
        if key != 0 or file != FIGURE or not (self.target.path / FIGURE).is_file():
            raise KeyError(name)
        return (self.target.path / FIGURE).read_bytes()

    def child(self, index: int) -> Site:
        """The page of run ``index`` (``runs/<index>/``), opened on first use.

        Raises:
            KeyError: no such run.
            MemgymError: the run folder is gone or not viewable.
        """
        if not 0 <= index < len(self.runs):
            raise KeyError(f"no run {index}")
        if index not in self._children:
            from memgym.viewer.sites import open_site

            run = Path(self.runs[index])
            if not run.exists():
                raise MemgymError(f"run folder {run} of these findings no longer exists")
            self._children[index] = open_site(run)
        return self._children[index]

    def children(self) -> list[int]:
        """Indices of the linked runs that exist (exported with the page)."""
        return [i for i, run in enumerate(self.runs) if Path(run).exists()]
