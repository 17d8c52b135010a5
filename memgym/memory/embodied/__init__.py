"""Memories for embodied episodes (dialogue log, frame store, object graph, snapshots, linkers)."""
