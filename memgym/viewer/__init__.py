"""``memgym view PATH``: a browser page for a dataset or an eval run of any benchmark.

:mod:`~memgym.viewer.detect` tells what the path holds; a :class:`~memgym.viewer.site.Site` per
benchmark (:mod:`~memgym.viewer.dialogmem`, :mod:`~memgym.viewer.voxmem`,
:mod:`~memgym.viewer.amemops`) turns it into JSON and media; :mod:`~memgym.viewer.server` serves
the static page in ``static/`` with them, or :mod:`~memgym.viewer.export` writes it all to a folder.
"""
