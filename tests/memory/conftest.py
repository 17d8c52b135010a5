import pytest

from memgym.sensors.camera import CameraConfig
from tests.support.box_scene import TABLE_SCENE, box_scene, views_around


@pytest.fixture(scope="session")
def box_views():
    """Eight formation observations walking a 90-degree arc around two crates and a mug on a
    table (:data:`TABLE_SCENE`); the third carries a line of dialogue."""
    camera = CameraConfig(width=128, height=96, hfov=80.0)
    views = views_around(box_scene(TABLE_SCENE), (0.6, 0.5, -0.6), 3.0, 8, camera, arc=90.0)
    views[2] = {**views[2], "text": "Amelia: The mug on the table is mine."}
    return views
