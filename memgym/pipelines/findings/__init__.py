"""``memgym findings``: the three papers' claims decided on a set of run folders (docs/findings.md)."""
