"""The agent body that navigability is computed for (:class:`AgentSpec`).

It lives below :mod:`memgym.scenes.navigation`, :mod:`memgym.scenes.nav_raster` and
:mod:`memgym.scenes.clearance`, which all read it, so none of them imports another's caller.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class AgentSpec:
    """The agent body used for navigability.

    Attributes:
        radius: cylinder radius, metres.
        height: cylinder height, metres.
        max_climb: largest step the agent climbs, metres.
        max_slope: steepest walkable surface, degrees.
        cell_size: grid resolution, metres.
        snap_distance: how far (metres, horizontal) a query point may be from the navigable
            floor and still be snapped onto it.
    """

    radius: float = 0.17
    height: float = 1.41
    max_climb: float = 0.2
    max_slope: float = 30.0
    cell_size: float = 0.025
    snap_distance: float = 1.5
