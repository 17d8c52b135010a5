"""``memgym view PATH --out DIR``: the page, its data and every media file written to a folder
that opens from disk (``DIR/index.html``) with nothing else needed."""

from __future__ import annotations

from pathlib import Path

from tqdm import tqdm

from memgym.core.errors import MemgymError
from memgym.core.outputs import make_writable_folder
from memgym.viewer.pages import page_file, page_paths
from memgym.viewer.site import Site

MARKER = ".memgym-view"


def export(site: Site, out: Path, *, progress: bool = True) -> Path:
    """Write ``site``'s page to ``out`` (new, empty, or an earlier export, which is overwritten);
    returns ``out/index.html``.

    Raises:
        MemgymError: ``out`` is a file, or a non-empty folder that is not an earlier export.
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise MemgymError(f"--out {out} is a file; it must name a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise MemgymError(f"--out {out} is a non-empty folder not written by 'memgym view'; choose another")
    make_writable_folder(out, f"output folder {out}")
    (out / MARKER).write_text("written by memgym view\n", encoding="utf-8")
    for path in tqdm(page_paths(site), desc=f"write {out}", disable=not progress, unit="file"):
        data, _ = page_file(site, path)
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return out / "index.html"
