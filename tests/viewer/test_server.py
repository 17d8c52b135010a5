"""The viewer's HTTP server and ``--out`` export."""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.error
import urllib.request

import pytest
from viewer_browser import serving

from memgym.cli import main
from memgym.core.errors import MemgymError
from memgym.viewer.export import export
from memgym.viewer.pages import page_paths
from memgym.viewer.server import make_server
from memgym.viewer.sites import open_site


def get(url, headers=None):
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=30) as response:
        return response.status, dict(response.headers), response.read()


def test_serves_page_data_media_and_byte_ranges(dialogmem_dataset):
    site = open_site(dialogmem_dataset)
    with serving(site) as url:
        assert url.startswith("http://127.0.0.1:")
        status, headers, body = get(url)
        assert status == 200 and headers["Content-Type"].startswith("text/html") and b"static/app.js" in body
        assert get(url + "data/index.js")[2].startswith(b'memgymData("index", {"benchmark": "dialogmem"')
        assert get(url + "data/episode-0.js")[2].startswith(b'memgymData("episode-0", ')
        _, headers, png = get(url + "media/0/map.png")
        assert headers["Content-Type"] == "image/png" and png[:4] == b"\x89PNG"
        status, headers, part = get(url + "media/0/map.png", {"Range": "bytes=4-11"})
        assert status == 206 and part == png[4:12] and headers["Content-Range"] == f"bytes 4-11/{len(png)}"
        for missing in ("nope", "data/episode-9.js", "media/0/rgb_99999.jpg", "static/../detect.py"):
            with pytest.raises(urllib.error.HTTPError) as error:
                get(url + missing)
            assert error.value.code == 404


def test_a_busy_port_is_one_error(dialogmem_dataset):
    site = open_site(dialogmem_dataset)
    server = make_server(site, port=0)
    try:
        with pytest.raises(MemgymError, match="choose another --port"):
            make_server(site, port=server.server_address[1])
    finally:
        server.server_close()


def test_export_writes_every_page_file_and_refuses_foreign_folders(dialogmem_dataset, tmp_path):
    site = open_site(dialogmem_dataset)
    out = tmp_path / "page"
    assert main(["view", str(dialogmem_dataset), "--out", str(out), "--no-progress"]) == 0
    written = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert written == {*page_paths(site), ".memgym-view"}
    export(site, out, progress=False)  # an earlier export is overwritten
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "keep.txt").write_text("mine")
    with pytest.raises(MemgymError, match="not written by 'memgym view'"):
        export(site, tmp_path / "other", progress=False)


def test_the_command_prints_the_url_it_serves(dialogmem_dataset):
    command = [sys.executable, "-m", "memgym.cli", "view", str(dialogmem_dataset), "--port", "0"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = process.stdout.readline()
        assert line.startswith(f"memgym view: serving {dialogmem_dataset} at http://127.0.0.1:"), line
        url = line.split(" at ")[1].split()[0]
        assert get(url + "data/index.js")[2].startswith(b'memgymData("index"')
    finally:
        process.terminate()
        process.wait(timeout=30)
