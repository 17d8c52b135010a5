"""Agents (memory + policy/reasoner) and the loop that steps an env."""
