"""Discrete agent motion on a :class:`NavGrid`: actions, collision sliding, a greedy follower.

Actions follow Habitat's discrete action space: ``stop``, ``move_forward`` (``forward_step``
metres, default 0.25), ``turn_left`` and ``turn_right`` (``turn_angle`` degrees, default 30).
A forward move that would leave the navigable floor advances as far as it can and then slides
the remaining displacement along the wall (whichever axis-aligned component is free for
longer), and reports a collision.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from memgym.scenes.navigation import NavGrid
from memgym.scenes.poses import forward_vector, heading_to, wrap_angle

ACTIONS = ("stop", "move_forward", "turn_left", "turn_right")
"""Discrete actions; their index is the action id used by environments."""


@dataclasses.dataclass(frozen=True)
class ActionSpec:
    """Step sizes of the discrete actions."""

    forward_step: float = 0.25
    turn_angle: float = 30.0


@dataclasses.dataclass(frozen=True)
class AgentState:
    """Agent base position ``(3,)`` metres (on the floor) and heading ``yaw`` radians."""

    position: np.ndarray
    yaw: float


def apply_action(
    nav: NavGrid, state: AgentState, action: str, spec: ActionSpec = ActionSpec()
) -> tuple[AgentState, bool]:
    """The state after ``action`` and whether the agent collided."""
    if action == "stop":
        return state, False
    if action in ("turn_left", "turn_right"):
        delta = math.radians(spec.turn_angle) * (1 if action == "turn_left" else -1)
        return AgentState(state.position, wrap_angle(state.yaw + delta)), False
    if action != "move_forward":
        raise ValueError(f"unknown action {action!r}; expected one of {ACTIONS}")
    start = np.asarray(state.position, float)
    target = start + forward_vector(state.yaw) * spec.forward_step
    frac = nav.free_fraction(start, target)
    if frac >= 1.0:
        return AgentState(_on_floor(nav, target), state.yaw), False
    partial = start + (target - start) * frac
    rest = (target - start) * (1.0 - frac)
    best, best_len = partial, 0.0
    for slide in (np.array([rest[0], 0.0, 0.0]), np.array([0.0, 0.0, rest[2]])):
        length = float(np.linalg.norm(slide))
        if length < 1e-6:
            continue
        f = nav.free_fraction(partial, partial + slide)
        if f * length > best_len:
            best, best_len = partial + slide * f, f * length
    return AgentState(_on_floor(nav, best), state.yaw), True


def _on_floor(nav: NavGrid, point: np.ndarray) -> np.ndarray:
    row, col = nav.cell_of(point)
    return np.array([point[0], float(nav.heights[row, col]), point[2]])


class GreedyFollower:
    """Chooses the next discrete action along the shortest path to the nearest goal.

    Args:
        nav: the navigation grid.
        spec: action step sizes.
        goal_radius: distance (metres, geodesic) at which the goal counts as reached (``stop``).
    """

    def __init__(self, nav: NavGrid, spec: ActionSpec = ActionSpec(), goal_radius: float = 0.3) -> None:
        self.nav = nav
        self.spec = spec
        self.goal_radius = goal_radius
        self._last: tuple[bytes, bytes, tuple[np.ndarray, float] | None] | None = None

    def next_action(self, state: AgentState, goals: np.ndarray) -> str:
        """``stop`` when a goal is within ``goal_radius`` or unreachable, else a move or turn."""
        step = self._waypoint(np.asarray(state.position, float), np.asarray(goals, float))
        if step is None or step[1] <= self.goal_radius:
            return "stop"
        diff = wrap_angle(heading_to(state.position, step[0]) - state.yaw)
        if abs(diff) > math.radians(self.spec.turn_angle) / 2 + 1e-6:
            return "turn_left" if diff > 0 else "turn_right"
        return "move_forward"

    def _waypoint(self, position: np.ndarray, goals: np.ndarray) -> tuple[np.ndarray, float] | None:
        """:meth:`NavGrid.next_waypoint`, reused while the agent only turns (same position and goals)."""
        key = (position.tobytes(), goals.tobytes() + repr(goals.shape).encode())
        if self._last is None or self._last[:2] != key:
            self._last = (*key, self.nav.next_waypoint(position, goals))
        return self._last[2]

    def face(self, state: AgentState, target: np.ndarray) -> str:
        """A turn toward ``target``, or ``stop`` once facing it within half a turn step."""
        diff = wrap_angle(heading_to(state.position, target) - state.yaw)
        if abs(diff) > math.radians(self.spec.turn_angle) / 2 + 1e-6:
            return "turn_left" if diff > 0 else "turn_right"
        return "stop"
