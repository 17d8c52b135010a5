"""``python -m speed [NAME]``: run one speed benchmark, or list them."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path

NOT_BENCHMARKS = {"harness", "__main__"}


def available() -> list[str]:
    """Names of the benchmark modules in this folder."""
    folder = Path(__file__).parent
    return sorted(m.name for m in pkgutil.iter_modules([str(folder)]) if m.name not in NOT_BENCHMARKS)


def main(argv: list[str]) -> int:
    names = available()
    if not argv or argv[0] in {"-h", "--help"}:
        print("usage: python -m speed NAME [args]\navailable: " + ", ".join(names))
        return 0
    if argv[0] not in names:
        print(f"speed: unknown speed benchmark '{argv[0]}'; available: {', '.join(names)}", file=sys.stderr)
        return 2
    module = importlib.import_module(f"speed.{argv[0]}")
    module.main(argv[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
