"""DialogMem's jobs: ``benchmark`` (the registered plug-in, ``render``), ``generation``
(``generate``), ``eval_config`` and ``evaluation`` (``eval``: every memory through
``memgym/DialogMem-v0``), ``memory_measures`` (link counts, map errors, localisation),
``comparison`` (memories side by side), ``link_sweep`` (``sweep=link_quality``) and
``quickstart``."""
