import struct
from pathlib import Path

import numpy as np
import pytest

from memgym.core.errors import MemgymError
from memgym.scenes.navigation import AgentSpec, NavGrid
from memgym.scenes.navmesh_file import (
    DT_NAVMESH_MAGIC,
    NAVMESHSET_MAGIC,
    NavMeshFileError,
    NavMeshSettings,
    read_navmesh,
    write_grid_navmesh,
    write_navmesh,
)

RECAST_WALL = Path(__file__).parents[1] / "support" / "data" / "recast_wall.navmesh"
"""Built by recastnavigation itself (``make_recast_wall.mjs`` beside it): a floor split by a wall
with a 1 m gap; Detour's own path from (2, 0, 1) to (8, 0, 1) is 7.5622 m long."""
# Detour winding (negative sum of x_i z_{i+1} - x_{i+1} z_i); the two squares share the edge x = 1
SQUARE_A = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
SQUARE_B = SQUARE_A + [1.0, 0.0, 0.0]
TRIANGLE = np.array([[0.0, 0.5, 2.0], [1.0, 0.5, 3.0], [2.0, 0.5, 2.0]])
HEXAGON = np.array([[np.cos(a) * 2 + 5, 1.25, -np.sin(a) * 2] for a in np.linspace(0, 2 * np.pi, 7)[:-1]])


@pytest.fixture
def written(tmp_path):
    return write_navmesh(
        tmp_path / "X.navmesh",
        [SQUARE_A, SQUARE_B, TRIANGLE, HEXAGON],
        flags=[1, 3, 0, 1],
        areas=[0, 1, 0, 5],
        walkable_radius=0.17,
    )


def test_round_trip_gives_the_same_polygons(written):
    navmesh = read_navmesh(written)
    assert navmesh.version == 1 and navmesh.settings is None and len(navmesh.tiles) == 1
    tile = navmesh.tiles[0]
    for got, expected in zip([tile.vertices[p] for p in tile.polygons], [SQUARE_A, SQUARE_B, TRIANGLE, HEXAGON]):
        np.testing.assert_allclose(got, expected, atol=1e-6)
    assert tile.flags.tolist() == [1, 3, 0, 1] and tile.areas.tolist() == [0, 1, 0, 5]
    assert tile.types.tolist() == [0, 0, 0, 0]
    assert tile.walkable().tolist() == [True, True, False, True]  # polygon 2 lacks the walk flag
    assert len(navmesh.walkable_polygons()) == 3
    # the shared edge links the squares both ways (Detour neis: neighbour index + 1)
    assert 2 in tile.neighbours[0] and 1 in tile.neighbours[1] and not tile.neighbours[2].any()
    # fan detail triangles cover each walkable polygon: 2 + 2 + 4
    triangles = navmesh.walkable_triangles()
    assert triangles.shape == (8, 3, 3)
    areas = 0.5 * np.abs(np.cross(triangles[:, 1] - triangles[:, 0], triangles[:, 2] - triangles[:, 0])[:, 1])
    assert areas.sum() == pytest.approx(2.0 + 6 * np.sqrt(3), rel=1e-5)
    assert navmesh.agent_radius == pytest.approx(0.17)
    np.testing.assert_allclose(navmesh.bounds(), [[0.0, 0.0, -np.sqrt(3)], [7.0, 1.25, 3.0]], atol=1e-5)


def test_file_layout_matches_habitat_sim(written):
    data = written.read_bytes()
    magic, version, tiles = struct.unpack_from("<3i", data)
    assert (magic, version, tiles) == (NAVMESHSET_MAGIC, 1, 1) and data[:4] == b"TESM"
    *origin, width, depth, max_tiles, max_polys = struct.unpack_from("<5f2i", data, 12)
    assert (max_tiles, max_polys) == (1, 4) and width == pytest.approx(7.0)
    tile_ref, size = struct.unpack_from("<Ii", data, 40)
    assert tile_ref == 1 << 2 and size == len(data) - 48  # salt 1 above 2 poly bits (4 polygons)
    assert struct.unpack_from("<2i", data, 48) == (DT_NAVMESH_MAGIC, 7)


def test_version_2_carries_habitat_settings(tmp_path):
    settings = NavMeshSettings(agent_radius=0.25, cell_size=0.04, filter_ledge_spans=False)
    navmesh = read_navmesh(write_navmesh(tmp_path / "v2.navmesh", [SQUARE_A], settings=settings))
    assert navmesh.version == 2
    assert navmesh.settings.agent_radius == pytest.approx(0.25) and navmesh.settings.cell_size == pytest.approx(0.04)
    assert navmesh.settings.filter_ledge_spans is False and navmesh.settings.filter_low_hanging_obstacles is True
    np.testing.assert_allclose(navmesh.walkable_polygons()[0], SQUARE_A)


def test_reads_64_bit_ref_tiles(written, tmp_path):
    """DT_POLYREF64 builds: 16-byte tile headers (uint64 ref, int size, padding), 16-byte links."""
    data = written.read_bytes()
    tile_ref, size = struct.unpack_from("<Ii", data, 40)
    tile = data[48:]
    polys, verts, links = struct.unpack_from("<3i", tile, 24)
    links_end = 100 + 12 * verts + 32 * polys + 12 * links  # (all sizes already multiples of 4)
    tile = tile[:links_end] + bytes(4 * links) + tile[links_end:]
    wide = tmp_path / "wide.navmesh"
    wide.write_bytes(data[:40] + struct.pack("<Qi4x", tile_ref, len(tile)) + tile)
    a, b = read_navmesh(written), read_navmesh(wide)
    for got, expected in zip(b.walkable_polygons(), a.walkable_polygons()):
        np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(b.walkable_triangles(), a.walkable_triangles())


def test_writer_stores_detour_winding_and_rejects_bad_polygons(tmp_path):
    navmesh = read_navmesh(write_navmesh(tmp_path / "w.navmesh", [SQUARE_A[::-1]]))
    np.testing.assert_allclose(navmesh.walkable_polygons()[0], SQUARE_A)
    with pytest.raises(MemgymError, match="polygon 0 is not strictly convex"):
        write_navmesh(tmp_path / "bad.navmesh", [SQUARE_A[[0, 2, 1, 3]]])
    with pytest.raises(MemgymError, match=r"polygon 1 must be \(k, 3\) with 3 <= k <= 6"):
        write_navmesh(tmp_path / "bad.navmesh", [SQUARE_A, SQUARE_A[:2]])


def test_errors_name_the_file(written, tmp_path):
    data = written.read_bytes()
    bad = tmp_path / "bad.navmesh"
    bad.write_bytes(b"NOPE" + data[4:])
    with pytest.raises(NavMeshFileError, match=r"bad.navmesh: not a navmesh: magic .* expected 'MSET'"):
        read_navmesh(bad)
    bad.write_bytes(data[:4] + struct.pack("<i", 3) + data[8:])
    with pytest.raises(NavMeshFileError, match=r"bad.navmesh: unsupported navmesh set version 3"):
        read_navmesh(bad)
    bad.write_bytes(data[: len(data) - 10])
    with pytest.raises(NavMeshFileError, match=r"bad.navmesh: truncated: tile 0 declares \d+ bytes"):
        read_navmesh(bad)
    bad.write_bytes(data[:20])
    with pytest.raises(NavMeshFileError, match=r"bad.navmesh: truncated: 20 bytes"):
        read_navmesh(bad)
    tile_size = struct.unpack_from("<i", data, 44)[0]
    bad.write_bytes(data[:44] + struct.pack("<i", tile_size + 4) + data[48:] + bytes(4))
    with pytest.raises(NavMeshFileError, match=r"tile 0: tile data size mismatch: .* need \d+ bytes, the tile holds"):
        read_navmesh(bad)
    bad.write_bytes(data[:52] + struct.pack("<i", 6) + data[56:])
    with pytest.raises(NavMeshFileError, match=r"tile 0: unsupported Detour tile version 6, expected 7"):
        read_navmesh(bad)
    with pytest.raises(NavMeshFileError, match="missing.navmesh does not exist"):
        read_navmesh(tmp_path / "missing.navmesh")


def test_grid_export_has_one_tile_per_row_with_portals(tmp_path):
    rng = np.random.default_rng(0)
    cells = rng.random((12, 17)) > 0.4
    cells[5] = False  # an empty row writes no tile
    heights = np.where(np.arange(17) < 8, 0.0, 0.1)[None, :].repeat(12, 0)
    path = write_grid_navmesh(tmp_path / "g.navmesh", cells, heights, (1.0, -2.0), 0.5, walkable_radius=0.2)
    navmesh = read_navmesh(path)
    assert len(navmesh.tiles) == 11 and navmesh.tile_height == 0.5 and navmesh.tile_width == 8.5
    assert [t.y for t in navmesh.tiles] == [r for r in range(12) if r != 5]
    assert navmesh.max_polys == max(len(t.polygons) for t in navmesh.tiles)
    for tile in navmesh.tiles:
        z = tile.vertices[:, 2]
        assert set(np.round(z, 6)) <= {-2.0 + 0.5 * tile.y, -1.5 + 0.5 * tile.y}
        # every quad: its +z edge is a portal to the next row's tile (side 2), its -z edge to the
        # previous one (6); x edges are portals (0, 4) only on the grid's border, as Recast marks them
        for poly, neis in zip(tile.polygons, tile.neighbours):
            edges = neis[: len(poly)].tolist()
            assert edges.count(0x8002) == 1 and edges.count(0x8006) == 1
            assert set(edges) - {0x8002, 0x8006} <= {0, 0x8000, 0x8004}
    # the quads cover exactly the cells: rasterised back they give the same grid
    grid = NavGrid.from_surface_triangles(
        navmesh.walkable_triangles(), np.array([[1.0, 0, -2.0], [9.5, 0, 4.0]]), AgentSpec(cell_size=0.5), 0.0
    )
    np.testing.assert_array_equal(grid.navigable, cells)
    assert grid.heights[cells].max() == pytest.approx(0.1, abs=1e-6)


def _signed_area(polygon):
    x, z = polygon[:, 0], polygon[:, 2]
    return 0.5 * float(np.sum(x * np.roll(z, -1) - np.roll(x, -1) * z))


def test_reads_a_navmesh_built_by_detour():
    navmesh = read_navmesh(RECAST_WALL)
    assert navmesh.version == 1 and navmesh.max_tiles == 1 and len(navmesh.tiles) == 1
    tile = navmesh.tiles[0]
    assert len(tile.polygons) == navmesh.max_polys == 42 and tile.walkable().all()
    assert tile.walkable_radius == pytest.approx(0.2)
    polygons = navmesh.walkable_polygons()
    assert all(_signed_area(p) < 0 for p in polygons)  # Detour's winding, as the writer stores it
    assert all((p[:, 1] < 0.1).all() for p in polygons)  # all on the floor
    # the detail triangles cover the eroded floor minus the wall: about 9.6 x 3.6 - 0.6 x 3.45 m^2
    tris = navmesh.walkable_triangles()
    area = 0.5 * np.abs(np.cross(tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 0])[:, 1]).sum()
    assert area == pytest.approx(9.6 * 3.6 - 0.6 * 3.45, rel=0.05)
    grid = NavGrid.from_surface_triangles(tris, navmesh.bounds(), AgentSpec(radius=0.2, cell_size=0.05), 0.0)
    result = grid.geodesic((2.0, 0.0, 1.0), (8.0, 0.0, 1.0))
    assert result.status == "ok" and result.path[:, 2].max() > 3.0  # through the gap
    assert result.distance == pytest.approx(7.5622, rel=0.015)  # Detour's findPath + straight path
