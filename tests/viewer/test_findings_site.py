"""The findings page: what ``memgym view`` serves for a findings folder (or a quickstart folder
holding one), its nested run pages, the export, and the page in headless Chromium."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image
from selenium.webdriver.common.by import By
from viewer_browser import open_page, serving, wait_for

from memgym.core.errors import MemgymError
from memgym.viewer.export import export
from memgym.viewer.pages import page_file
from memgym.viewer.sites import open_site


def finding(claim_id: str, verdict: str, runs: list[str], effect: float | None = 10.0) -> dict:
    interval = {} if effect is None else {"effect_pp": effect, "low": effect - 5, "high": effect + 5, "n": 40}
    return {
        "id": claim_id,
        "benchmark": "dialogmem",
        "claim": f"claim {claim_id}",
        "paper": "+1",
        "ours": "a -> b",
        "effect_pp": None,
        "low": None,
        "high": None,
        "n": 0,
        **interval,
        "verdict": verdict,
        "detail": "",
        "runs": ";".join(runs),
    }


@pytest.fixture
def findings_folder(tmp_path: Path, dialogmem_run: Path) -> Path:
    """A quickstart-like folder whose ``findings/`` links one real DialogMem run (memory folder)."""
    memory_folder = str(dialogmem_run / "oracle")
    folder = tmp_path / "quickstart" / "findings"
    folder.mkdir(parents=True)
    rows = [
        finding("a", "reproduced", [memory_folder]),
        finding("b", "not measured", [], effect=None),
        finding("c", "undecided", [memory_folder, str(tmp_path / "gone")]),
    ]
    (folder / "findings.json").write_text(json.dumps({"findings": rows, "runs": [memory_folder]}))
    Image.new("RGB", (8, 4), "white").save(folder / "findings.png")
    return tmp_path / "quickstart"


def test_a_quickstart_folder_opens_its_findings(findings_folder: Path) -> None:
    site = open_site(findings_folder)
    assert [e["id"] for e in site.episodes()] == ["a", "b", "c"]
    page = site.episode(2)
    assert page["finding"]["verdict"] == "undecided"
    assert [r["exists"] for r in page["runs"]] == [True, False]
    assert page["runs"][0]["href"] == "runs/0/index.html"
    assert page["figure"] == "media/0/findings.png"
    assert site.media("0/findings.png") == (findings_folder / "findings" / "findings.png").read_bytes()


def test_linked_runs_are_nested_pages(findings_folder: Path, dialogmem_run: Path, tmp_path: Path) -> None:
    site = open_site(findings_folder)
    data, _ = page_file(site, "runs/0/data/index.js")
    assert b'"dialogmem"' in data and str(dialogmem_run).encode() in data
    with pytest.raises(KeyError):
        page_file(site, "runs/7/data/index.js")
    index = export(site, tmp_path / "out", progress=False)
    assert (index.parent / "runs" / "0" / "data" / "episode-0.js").is_file()


def test_a_bad_findings_file_is_one_error(tmp_path: Path) -> None:
    (tmp_path / "findings.json").write_text("[1, 2")
    with pytest.raises(MemgymError, match="findings.json: not a findings file"):
        open_site(tmp_path)


def test_findings_page_in_chromium(browser, findings_folder: Path) -> None:
    site = open_site(findings_folder)
    with serving(site) as url:
        open_page(browser, url)
        assert browser.find_element(By.ID, "verdict").text == "reproduced"
        rows = browser.find_elements(By.CSS_SELECTOR, "#findings-table tr.verdict-row")
        assert [r.get_attribute("data-verdict") for r in rows] == ["reproduced", "not measured", "undecided"]
        rows[2].click()  # a row shows that claim
        assert wait_for(browser, "return document.body.dataset.ready === '2'")
        assert browser.find_element(By.ID, "verdict").text == "undecided"
        assert "(not found)" in browser.find_element(By.ID, "runs").text
        # the run link opens the run's own page, below this one
        browser.find_element(By.CSS_SELECTOR, "a.run-link").click()
        assert wait_for(
            browser, "return document.body.dataset.ready !== undefined && location.pathname.startsWith('/runs/0/')"
        )
        assert "dialogmem run" in browser.find_element(By.ID, "source").text


def test_runs_are_found_from_any_working_folder_and_share_one_page(
    tmp_path: Path, dialogmem_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Paths relative to the findings folder (as 'memgym findings' writes them) resolve from
    anywhere; the memories of one eval link to one page; the export writes the static files once."""
    import os

    folder = tmp_path / "study" / "findings"
    folder.mkdir(parents=True)
    memories = [os.path.relpath(dialogmem_run / m, folder) for m in ("oracle", "dialogue")]
    rows = [finding("a", "reproduced", memories), finding("b", "undecided", [memories[1]])]
    (folder / "findings.json").write_text(json.dumps({"findings": rows, "runs": memories}))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    site = open_site(folder)
    links = site.episode(0)["runs"]
    assert [link["exists"] for link in links] == [True, True]
    assert {link["href"] for link in links} == {"runs/0/index.html"} == {site.episode(1)["runs"][0]["href"]}
    index = export(site, tmp_path / "out", progress=False)
    written = {str(p.relative_to(index.parent)) for p in index.parent.rglob("*") if p.is_file()}
    assert "static/app.js" in written and not any(p.startswith("runs/0/static/") for p in written)
    nested = (index.parent / "runs" / "0" / "index.html").read_text()
    assert 'src="../../static/app.js"' in nested and 'href="../../static/style.css"' in nested
    assert not any(p.startswith("runs/1/") for p in written)


def test_findings_of_an_earlier_memgym_resolve_from_the_working_folder(
    tmp_path: Path, dialogmem_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "findings"
    folder.mkdir()
    run = os.path.relpath(dialogmem_run / "oracle", tmp_path)  # relative to the working folder
    (folder / "findings.json").write_text(json.dumps({"findings": [finding("a", "reproduced", [run])]}))
    assert open_site(folder).episode(0)["runs"][0]["exists"]
