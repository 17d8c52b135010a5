"""Pluggable memories: embodied/, recurrent/ (torch cores), voxmem/ (spoken histories)."""
