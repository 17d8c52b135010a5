"""Agents (memory + policy/reasoner) and the loop that steps an env."""

from memgym.agents.agent import Agent, EpisodeResult, run_episode

__all__ = ["Agent", "EpisodeResult", "run_episode"]
