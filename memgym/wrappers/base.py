"""The two bases of memgym's wrappers: ``formation_action()`` stays callable through them.

An observation wrapper keeps the action space, so it forwards ``formation_action()`` to the env
it wraps (found with Gymnasium's ``get_wrapper_attr`` through any wrappers in between); an
action wrapper has its own action space, so it returns a canonical element of it (the env
ignores formation actions, and the wrapper maps any element to a valid inner action).
"""

from __future__ import annotations

from typing import Any

import gymnasium

from memgym.envs.two_phase import zero_action


class ForwardsFormationAction:
    """Mixin for observation wrappers: ``formation_action()`` is the wrapped env's."""

    env: gymnasium.Env

    def formation_action(self) -> Any:
        """The wrapped env's canonical formation action (the action space is unchanged)."""
        return self.env.get_wrapper_attr("formation_action")()


class ObservationWrapper(ForwardsFormationAction, gymnasium.ObservationWrapper):
    """A ``gymnasium.ObservationWrapper`` through which ``formation_action()`` is reachable."""


class ActionWrapper(gymnasium.ActionWrapper):
    """A ``gymnasium.ActionWrapper`` whose ``formation_action()`` is an element of its own space."""

    def formation_action(self) -> Any:
        """A canonical element of this wrapper's action space (zeros, the first choice)."""
        return zero_action(self.action_space)
