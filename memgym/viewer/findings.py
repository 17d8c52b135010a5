"""The findings page: every claim's verdict, the effects figure, and each finding's runs.

A findings folder (``memgym findings ... --out DIR``, or ``QUICKSTART/findings``) holds
``findings.json``. The page lists one entry per claim; each shows the whole table (the current
claim highlighted), ``findings.png``, and links to the run folders the finding was measured on
(recorded relative to the findings folder, so the page works from any working folder). Each
linked run opens its evaluation's page below ``runs/<n>/`` of this one (served and exported
alike; runs of one evaluation, such as a DialogMem eval's memories, share one page), so a finding
leads to the items behind it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memgym.core.errors import MemgymError, RecordError
from memgym.viewer.detect import Target, detect
from memgym.viewer.site import Site, finite, split_media_name

FIGURE = "findings.png"
FIELDS = ("id", "benchmark", "claim", "paper", "ours", "effect_pp", "low", "high", "n", "verdict", "detail")


class FindingsSite(Site):
    """A findings folder (module docstring).

    Args:
        open_run: opens the page of a linked run's folder (:func:`memgym.viewer.sites.open_site`,
            passed in by it, so this module does not import the module that imports it).
    """

    def __init__(self, target: Target, open_run: Callable[[Path], Site]) -> None:
        super().__init__(target)
        self._open_run = open_run
        path = target.path / "findings.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            self.rows: list[dict[str, Any]] = list(data["findings"])
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as exc:
            raise RecordError(f"{path}: not a findings file written by 'memgym findings' ({exc})") from None
        runs = [run for row in self.rows for run in str(row.get("runs") or "").split(";") if run]
        self.runs: list[str] = list(dict.fromkeys(runs))
        self.pages: list[Path] = []  # the viewable folder of each linked run, once each
        self._page_of: dict[str, int | None] = {}
        for run in self.runs:
            self._page_of[run] = self._page(run)
        self._children: dict[int, Site] = {}

    def resolve(self, run: str) -> Path:
        """A recorded run path as a path from here: relative to the findings folder (as
        ``memgym findings`` writes them), else absolute, else (findings written by an earlier
        memgym) relative to the working folder."""
        recorded = Path(run)
        if recorded.is_absolute():
            return recorded
        beside = self.target.path / recorded
        return beside if beside.exists() or not recorded.exists() else recorded

    def _page(self, run: str) -> int | None:
        """Index of the page that shows ``run`` (runs of one evaluation share their eval's page),
        None when the run is gone or has no viewer."""
        path = self.resolve(run)
        if not path.exists():
            return None
        try:
            page = detect(path).path.resolve()
        except MemgymError:
            return None
        if page not in self.pages:
            self.pages.append(page)
        return self.pages.index(page)

    def episodes(self) -> list[dict[str, Any]]:
        return [{"id": r["id"], "label": f"{r['verdict']}: {r['claim']}"} for r in self.rows]

    def episode(self, key: int) -> dict[str, Any]:
        row = self.rows[self.check_key(key)]
        links = []
        for run in str(row.get("runs") or "").split(";"):
            if run:
                page = self._page_of.get(run)
                href = None if page is None else f"runs/{page}/index.html"
                links.append({"path": run, "href": href, "exists": page is not None})
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
        """The page of linked evaluation ``index`` (``runs/<index>/``), opened on first use.

        Raises:
            KeyError: no such page.
            MemgymError: the run folder is gone or not viewable.
        """
        if not 0 <= index < len(self.pages):
            raise KeyError(f"no run {index}")
        if index not in self._children:
            if not self.pages[index].exists():
                raise MemgymError(f"run folder {self.pages[index]} of these findings no longer exists")
            self._children[index] = self._open_run(self.pages[index])
        return self._children[index]

    def children(self) -> list[int]:
        """Indices of the linked evaluations' pages (exported with the page)."""
        return [i for i, page in enumerate(self.pages) if page.exists()]
