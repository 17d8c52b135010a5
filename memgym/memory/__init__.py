"""Pluggable memories: embodied/, recurrent/ (torch cores), spoken/."""
