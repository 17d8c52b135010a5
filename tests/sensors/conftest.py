"""Scenes shared by the sensor tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def house_and_hm3d(tmp_path_factory):
    """A generated house and the same house exported to HM3D files and read back."""
    from memgym.scenes.hm3d import HM3DScene, export_hm3d
    from memgym.scenes.procedural import generate_house

    house = generate_house(2)
    return house, HM3DScene.load(export_hm3d(house, tmp_path_factory.mktemp("hm3d"), "HOUSE2"))
