"""The files of a viewer page, by URL path: the same paths are served and exported.

    index.html, static/<file>     the page (package data in ``memgym/viewer/static``)
    data/index.js                 ``memgymData("index", {...})``: benchmark, source, episodes
    data/episode-<key>.js         ``memgymData("episode-<key>", {...})``: one episode
    media/<key>/<file>            images and audio of episode ``<key>``
    runs/<n>/<any of the above>   a nested page (the findings page's linked runs; its index.html
                                  loads the top page's static/ files, which are written once)

Data are JavaScript files that call ``memgymData`` rather than JSON, so a page exported with
``--out`` works when opened from disk (browsers refuse ``fetch`` of ``file://`` URLs but run
``<script>`` tags).
"""

from __future__ import annotations

import json
import re
from importlib import resources
from typing import Any

from memgym.viewer import media
from memgym.viewer.site import Site

EPISODE_SCRIPT = re.compile(r"data/episode-(\d+)\.js")
NESTED = re.compile(r"runs/(\d+)/(.*)")


def static_names() -> list[str]:
    """The files of the static page (``index.html`` and what it loads)."""
    folder = resources.files("memgym.viewer") / "static"
    return sorted(p.name for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))


def data_script(name: str, value: Any) -> bytes:
    """``memgymData(name, value);`` as UTF-8 bytes (``value`` as strict JSON)."""
    return f"memgymData({json.dumps(name)}, {json.dumps(value, allow_nan=False)});\n".encode()


def page_file(site: Site, path: str, depth: int = 0) -> tuple[bytes, str]:
    """``(bytes, content type)`` of the page file at URL ``path`` (module docstring); a nested
    page (``depth`` levels below the top one) loads the top page's static files.

    Raises:
        KeyError: no such file.
    """
    path = path.lstrip("/") or "index.html"
    nested = NESTED.fullmatch(path)
    if nested:
        return page_file(site.child(int(nested[1])), nested[2], depth + 1)
    if path == "index.html" or (path.startswith("static/") and path[7:] in static_names()):
        name = path.rpartition("/")[2]
        data = (resources.files("memgym.viewer") / "static" / name).read_bytes()
        if path == "index.html" and depth:
            up = ("../" * (2 * depth)).encode()
            data = data.replace(b'href="static/', b'href="' + up + b"static/").replace(
                b'src="static/', b'src="' + up + b"static/"
            )
        return data, media.content_type(name)
    if path == "data/index.js":
        return data_script("index", site.index()), media.content_type(path)
    match = EPISODE_SCRIPT.fullmatch(path)
    if match:
        key = int(match[1])
        return data_script(f"episode-{key}", site.episode(key)), media.content_type(path)
    if path.startswith("media/"):
        return site.media(path[6:]), media.content_type(path)
    raise KeyError(path)


def page_paths(site: Site, nested: bool = False) -> list[str]:
    """Every path of the page: static files (once, at the top: nested pages load those), data
    scripts and the media of every episode, then the nested pages'."""
    paths = ["index.html", *([] if nested else (f"static/{n}" for n in static_names() if n != "index.html"))]
    paths.append("data/index.js")
    for key in range(len(site.episodes())):
        paths += [f"data/episode-{key}.js", *(f"media/{n}" for n in site.media_names(key))]
    for index in site.children():
        paths += [f"runs/{index}/{p}" for p in page_paths(site.child(index), nested=True)]
    return paths
