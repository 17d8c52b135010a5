import pytest

habitat_sim = pytest.importorskip("habitat_sim")


def test_adapter_renders_and_navigates(tmp_path):
    import numpy as np

    from memgym.scenes.habitat_sim_adapter import HabitatSimScene
    from memgym.scenes.hm3d import export_hm3d
    from memgym.scenes.procedural import generate_house

    house = generate_house(0)
    stem = export_hm3d(house, tmp_path, "H")
    scene = HabitatSimScene(str(stem) + ".glb")
    out = scene.render(np.array([1.0, 1.25, 1.0]), np.array([0.0, 0.0, 0.0, 1.0]))
    assert out["rgb"].shape[-1] == 3 and out["depth"].ndim == 2
