"""Per-benchmark jobs (generate, train, eval, render, quickstart) that the CLI dispatches to."""
