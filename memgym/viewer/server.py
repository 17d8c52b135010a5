"""Serving a viewer page on 127.0.0.1 with the standard library's threading HTTP server.

Files are made on request (:func:`~memgym.viewer.pages.page_file`); byte ranges are answered
(``206``) so that the browser can seek in audio. Unknown paths are ``404``; a failure while
making a file is ``500`` with the reason, also printed to stderr.
"""

from __future__ import annotations

import re
import sys
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from memgym.core.errors import MemgymError
from memgym.viewer.pages import page_file
from memgym.viewer.site import Site

RANGE = re.compile(r"bytes=(\d*)-(\d*)")


def make_server(site: Site, port: int = 8000, host: str = "127.0.0.1") -> ThreadingHTTPServer:
    """A server for ``site`` bound to ``host:port`` (port 0: any free port; see ``server_address``).

    Raises:
        MemgymError: the port cannot be bound (in use, or not allowed).
    """

    class Handler(ViewerHandler):
        pass

    Handler.site = site
    try:
        server = ThreadingHTTPServer((host, port), Handler)
    except OSError as exc:
        raise MemgymError(f"cannot serve on {host}:{port}: {exc.strerror or exc}; choose another --port") from None
    server.daemon_threads = True
    return server


def url_of(server: ThreadingHTTPServer) -> str:
    """``http://host:port/`` of a started server."""
    host, port = server.server_address[:2]
    return f"http://{host}:{port}/"


class ViewerHandler(BaseHTTPRequestHandler):
    """GET (and HEAD) of the page's files; ``site`` is set on a subclass per server."""

    site: Site

    def do_GET(self) -> None:
        self._answer(body=True)

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def _answer(self, *, body: bool) -> None:
        path = urllib.parse.unquote(urllib.parse.urlparse(self.path).path)
        try:
            data, kind = page_file(self.site, path)
        except KeyError:
            self.send_error(404, f"no such page file: {path}")
            return
        except Exception as exc:  # shown to the page and the terminal; the server goes on
            print(f"memgym view: {path}: {type(exc).__name__}: {exc}", file=sys.stderr)
            self.send_error(500, f"{type(exc).__name__}: {exc}"[:300])
            return
        start, end = 0, len(data)
        match = RANGE.fullmatch(self.headers.get("Range", "").strip())
        if match and (match[1] or match[2]):
            if match[1]:
                start, end = int(match[1]), min(len(data), int(match[2]) + 1 if match[2] else len(data))
            else:
                start = max(0, len(data) - int(match[2]))
            if start >= len(data) or start >= end:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(data)}")
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{end - 1}/{len(data)}")
        else:
            self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(end - start))
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        if body:
            self.wfile.write(data[start:end])

    def log_message(self, format: str, *args) -> None:
        """Quiet: only failures are printed (by :meth:`_answer`)."""
