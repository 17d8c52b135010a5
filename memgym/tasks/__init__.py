"""Scorers and statistics for the use phase."""
