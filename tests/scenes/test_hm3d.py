import gzip
import json
import shutil
import struct
import warnings
from pathlib import Path

import numpy as np
import pytest

from memgym.core.errors import MemgymError
from memgym.scenes.hm3d import (
    HEADER,
    Z_UP_TO_Y_UP,
    HM3DScene,
    UndecodedTextureWarning,
    export_hm3d,
    instance_color,
    read_semantic_txt,
)
from memgym.scenes.mesh_scene import MeshScene, PerTriangleLookup
from memgym.scenes.navmesh_file import NavMeshFileError, write_grid_navmesh
from memgym.scenes.procedural import generate_house
from memgym.scenes.spec import SceneSpec, load_scene


@pytest.fixture(scope="module")
def house():
    return generate_house(2)


@pytest.fixture(scope="module")
def stem(house, tmp_path_factory):
    return export_hm3d(house, tmp_path_factory.mktemp("hm3d") / "00042-HOUSE2", "HOUSE2")


def test_export_writes_the_hm3d_layout(stem):
    for suffix in (".glb", ".semantic.glb", ".semantic.txt", ".objects.json.gz"):
        assert stem.parent.joinpath(stem.name + suffix).is_file()
    lines = stem.parent.joinpath(stem.name + ".semantic.txt").read_text().splitlines()
    assert lines[0] == HEADER
    assert lines[1].split(",")[2] == '"floor"'
    goals = json.loads(gzip.decompress(stem.parent.joinpath(stem.name + ".objects.json.gz").read_bytes()))["goals"]
    entry = next(iter(goals.values()))[0]
    assert {"object_id", "object_category", "position", "view_points", "lang_desc"} <= set(entry)
    assert set(entry["view_points"][0]["agent_state"]) == {"position", "rotation"}


def test_glb_is_stored_z_up(house, stem):
    import trimesh

    loaded = trimesh.load(str(stem) + ".glb", force="scene", process=False)
    vertices = np.concatenate([g.vertices for g in loaded.geometry.values()])
    # Habitat's Y (height, 0..2.7 m) is the file's Z
    assert vertices[:, 2].min() == pytest.approx(house.vertices[:, 1].min(), abs=1e-5)
    assert vertices[:, 2].max() == pytest.approx(house.vertices[:, 1].max(), abs=1e-5)
    np.testing.assert_allclose(Z_UP_TO_Y_UP @ [1.0, 2.0, 3.0], [1.0, 3.0, -2.0])


def test_round_trip_renders_the_same_images(house, stem):
    scene = HM3DScene.load(stem)
    loaded = {o.semantic_id: o for o in scene.objects}
    assert sorted(loaded) == sorted(o.semantic_id for o in house.objects)
    for a in house.objects:
        b = loaded[a.semantic_id]
        assert b.object_id == a.object_id  # "<category>_<instance id>", as in GOAT-Bench
        assert b.category == a.category and b.view_points == a.view_points and b.lang_desc == a.lang_desc
        np.testing.assert_allclose(b.size, a.size, atol=1e-3)
    for obj in house.objects[:4]:
        vp = obj.view_points[0]
        eye, rot = np.array(vp.position) + [0, 1.25, 0], np.array(vp.rotation)
        a, b = house.render(eye, rot), scene.render(eye, rot)
        np.testing.assert_allclose(b["depth"], a["depth"], atol=1e-4)
        np.testing.assert_array_equal(b["semantic"], a["semantic"])  # ids come from the semantic texture
        assert np.abs(b["rgb"].astype(int) - a["rgb"]).max() <= 2
    p, q = np.array(house.objects[0].view_points[0].position), np.array(house.objects[-1].view_points[0].position)
    assert scene.geodesic_distance(p, q) == pytest.approx(house.geodesic_distance(p, q), abs=1e-6)


def test_loads_through_scene_spec_and_without_annotations(stem, house):
    scene = load_scene(SceneSpec(backend="hm3d", path=str(stem)))
    assert len(scene.objects) == len(house.objects)
    stem.parent.joinpath(stem.name + ".objects.json.gz").rename(stem.parent / "moved.json.gz")
    try:
        bare = HM3DScene.load(stem)
        # every annotated instance except structure becomes an object with computed view points
        assert {o.semantic_id for o in bare.objects} == {o.semantic_id for o in house.objects}
        assert sum(bool(o.view_points) for o in bare.objects) >= 0.8 * len(bare.objects)
        explicit = HM3DScene.load(stem, annotations=stem.parent / "moved.json.gz")
        assert len(explicit.objects) == len(house.objects)
    finally:
        (stem.parent / "moved.json.gz").rename(stem.parent.joinpath(stem.name + ".objects.json.gz"))


def test_semantic_txt_errors_name_file_and_line(tmp_path):
    path = tmp_path / "X.semantic.txt"
    path.write_text(f'{HEADER}\n1,AABBCC,"chair",0\n2,nothex,"bed",1\n')
    with pytest.raises(MemgymError, match=r"X.semantic.txt:3: expected"):
        read_semantic_txt(path)
    path.write_text(f"{HEADER}\n")
    with pytest.raises(MemgymError, match="no annotation rows"):
        read_semantic_txt(path)
    with pytest.raises(MemgymError, match="missing.txt does not exist"):
        read_semantic_txt(tmp_path / "missing.txt")


def test_missing_and_mismatched_files_are_clear_errors(stem, tmp_path):
    with pytest.raises(MemgymError, match=r"neither .*nothere.glb nor .*nothere.basis.glb exists"):
        HM3DScene.load(tmp_path / "nothere")
    with pytest.raises(MemgymError, match=r"nothere.basis.glb does not exist"):
        HM3DScene.load(tmp_path / "nothere.basis.glb")
    lonely = tmp_path / "L"
    lonely.with_suffix(".glb").write_bytes(stem.with_suffix(".glb").read_bytes())
    (tmp_path / "L.semantic.glb").write_bytes(stem.parent.joinpath(stem.name + ".semantic.glb").read_bytes())
    with pytest.raises(MemgymError, match=r"L.semantic.txt is missing"):
        HM3DScene.load(lonely)
    bad = tmp_path / "goals.json"
    bad.write_text(json.dumps({"goals": {"L.basis.glb_chair": [{"object_id": "L_99999", "position": [0, 0, 0]}]}}))
    (tmp_path / "L.semantic.txt").write_text(stem.parent.joinpath(stem.name + ".semantic.txt").read_text())
    with pytest.raises(MemgymError, match=r"'L_99999' has instance id 99999"):
        HM3DScene.load(lonely, annotations=bad)
    bad.write_text(json.dumps({"goals_by_category": {"k": [{"position": [0, 0, 0]}]}}))
    with pytest.raises(MemgymError, match=r"goals\['k'\]\[0\]: missing or malformed field"):
        HM3DScene.load(lonely, annotations=bad)


def test_instance_colours_are_distinct():
    colors = {instance_color(i) for i in range(1, 5000)}
    assert len(colors) == 4999 and all(len(c) == 6 for c in colors)


def _copy_scene(stem, folder):
    folder.mkdir()
    for suffix in (".glb", ".semantic.glb", ".semantic.txt", ".objects.json.gz"):
        shutil.copy(f"{stem}{suffix}", folder / f"X{suffix}")
    return folder / "X"


def _cell_centres(nav):
    nz, nx = nav.navigable.shape
    xs = nav.origin[0] + (np.arange(nx) + 0.5) * nav.cell
    zs = nav.origin[1] + (np.arange(nz) + 0.5) * nav.cell
    return np.meshgrid(xs, zs)


def _point_in(nav, box, margin=0.6):
    """A navigable cell centre at least ``margin`` inside the region ``box`` (x0, z0, x1, z1)."""
    gx, gz = _cell_centres(nav)
    x0, z0, x1, z1 = box
    inside = nav.navigable & (gx > x0 + margin) & (gx < x1 - margin) & (gz > z0 + margin) & (gz < z1 - margin)
    row, col = np.argwhere(inside)[0]
    return nav.cell_center(int(row), int(col))


def test_navmesh_file_drives_navigation(house, stem, tmp_path):
    """A navmesh that cuts one room off makes it unreachable; the mesh path still reaches it."""
    copy = _copy_scene(stem, tmp_path / "scene")
    mesh_nav = HM3DScene.load(copy).navgrid  # no navmesh yet: computed from the mesh
    room, *others = house.regions
    x0, z0, x1, z1 = room.bounds
    gx, gz = _cell_centres(mesh_nav)
    near_border = (gx > x0 - 0.3) & (gx < x1 + 0.3) & (gz > z0 - 0.3) & (gz < z1 + 0.3)
    near_border &= ~((gx > x0 + 0.3) & (gx < x1 - 0.3) & (gz > z0 + 0.3) & (gz < z1 - 0.3))
    cells = mesh_nav.passable & ~near_border  # a navmesh eroded by the radius at cell centres, as Recast's
    write_grid_navmesh(
        f"{copy}.navmesh", cells, mesh_nav.heights, mesh_nav.origin, mesh_nav.cell, walkable_radius=house.agent.radius
    )

    scene = HM3DScene.load(copy)  # navigation="auto" picks the navmesh up
    assert scene.navmesh is not None and scene.navmesh_path == tmp_path / "scene" / "X.navmesh"
    np.testing.assert_array_equal(scene.navgrid.passable, cells)
    np.testing.assert_array_equal(scene.navgrid.navigable, mesh_nav.navigable & ~near_border)
    inside, outside, elsewhere = (_point_in(mesh_nav, r.bounds) for r in (room, others[-1], others[-2]))
    assert mesh_nav.geodesic(inside, outside).status == "ok"
    assert scene.geodesic(inside, outside).status == "unreachable"
    assert scene.navgrid.island_of(inside) != scene.navgrid.island_of(outside)
    # away from the cut, the navmesh gives the mesh's geodesics
    assert scene.geodesic_distance(outside, elsewhere) == pytest.approx(
        mesh_nav.geodesic_distance(outside, elsewhere), abs=1e-6
    )
    assert HM3DScene.load(copy, navigation="mesh").geodesic(inside, outside).status == "ok"
    assert HM3DScene.load(copy, navigation="navmesh").navmesh is not None


def test_hm3d_v02_basis_navmesh_is_read(house, stem, tmp_path):
    """HM3D v0.2 names the navmesh X.basis.navmesh: both 'auto' and 'navmesh' read it."""
    copy = _copy_scene(stem, tmp_path / "v02")
    mesh_nav = HM3DScene.load(copy).navgrid
    room = house.regions[0]
    x0, z0, x1, z1 = room.bounds
    gx, gz = _cell_centres(mesh_nav)
    cells = mesh_nav.navigable & ~((gx > x0 - 0.3) & (gx < x1 + 0.3) & (gz > z0 - 0.3) & (gz < z1 + 0.3))
    basis = Path(f"{copy}.basis.navmesh")
    write_grid_navmesh(
        basis, cells, mesh_nav.heights, mesh_nav.origin, mesh_nav.cell, walkable_radius=house.agent.radius
    )
    inside, outside = _point_in(mesh_nav, room.bounds), _point_in(mesh_nav, house.regions[-1].bounds)
    for navigation in ("auto", "navmesh"):
        scene = HM3DScene.load(copy, navigation=navigation)
        assert scene.navmesh_path == basis
        np.testing.assert_array_equal(scene.navgrid.navigable, cells)
        assert scene.geodesic(inside, outside).status != "ok"  # the closed-off room stays closed
    shutil.copy(basis, f"{copy}.navmesh")  # both names: X.navmesh is preferred, as X.glb is
    assert HM3DScene.load(copy).navmesh_path == Path(f"{copy}.navmesh")


def test_navigation_option_errors(stem, tmp_path):
    with pytest.raises(MemgymError, match=r"navigation must be one of \('auto', 'navmesh', 'mesh'\), got 'grid'"):
        HM3DScene.load(stem, navigation="grid")
    with pytest.raises(
        MemgymError, match=r"navigation='navmesh' but neither .*HOUSE2.navmesh nor .*HOUSE2.basis.navmesh exists"
    ):
        HM3DScene.load(stem, navigation="navmesh")
    copy = _copy_scene(stem, tmp_path / "corrupt")
    Path(f"{copy}.navmesh").write_bytes(b"MSET" + bytes(60))
    with pytest.raises(NavMeshFileError, match=r"X.navmesh: not a navmesh"):
        HM3DScene.load(copy)
    assert HM3DScene.load(copy, navigation="mesh").navmesh is None


# ----- X.basis.glb (HM3D v0.2): Basis Universal textures this reader cannot decode -------------------
KTX2_PAYLOAD = b"\xabKTX 20\xbb\r\n\x1a\n" + bytes(68)  # a KTX2 identifier, then an empty header


def _as_basis_glb(source: Path, target: Path, base_color: list[float] | None) -> None:
    """Rewrite GLB ``source`` as HM3D v0.2 does: every image becomes a ``image/ktx2`` payload declared
    through ``KHR_texture_basisu``; materials get ``base_color`` as their ``baseColorFactor`` (none: no factor)."""
    data = source.read_bytes()
    json_length = struct.unpack_from("<I", data, 12)[0]
    header = json.loads(data[20 : 20 + json_length])
    binary = data[28 + json_length :]
    images = {image["bufferView"] for image in header["images"]}
    packed = bytearray()
    for index, view in enumerate(header["bufferViews"]):
        start = view.get("byteOffset", 0)
        chunk = KTX2_PAYLOAD if index in images else binary[start : start + view["byteLength"]]
        packed += bytes(-len(packed) % 4)
        view.update(byteOffset=len(packed), byteLength=len(chunk))
        packed += chunk
    packed += bytes(-len(packed) % 4)
    header["buffers"] = [{"byteLength": len(packed)}]
    for image in header["images"]:
        image["mimeType"] = "image/ktx2"
    header["textures"] = [{"extensions": {"KHR_texture_basisu": {"source": t["source"]}}} for t in header["textures"]]
    header["extensionsUsed"] = header["extensionsRequired"] = ["KHR_texture_basisu"]
    for material in header["materials"]:
        material["pbrMetallicRoughness"].pop("baseColorFactor", None)
        if base_color is not None:
            material["pbrMetallicRoughness"]["baseColorFactor"] = base_color
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 4)
    chunks = struct.pack("<I4s", len(text), b"JSON") + text + struct.pack("<I4s", len(packed), b"BIN\x00") + packed
    target.write_bytes(struct.pack("<4sII", b"glTF", 2, 12 + len(chunks)) + chunks)


@pytest.fixture(scope="module")
def basis_stem(stem, tmp_path_factory):
    """The exported scene with ``X.basis.glb`` (and no ``X.glb``) as HM3D v0.2 ships it."""
    folder = tmp_path_factory.mktemp("hm3d_basis")
    for suffix in (".semantic.glb", ".semantic.txt", ".objects.json.gz"):
        shutil.copy(f"{stem}{suffix}", folder / f"{stem.name}{suffix}")
    _as_basis_glb(Path(f"{stem}.glb"), folder / f"{stem.name}.basis.glb", [0.5, 0.25, 1.0, 1.0])
    return folder / stem.name


def test_basis_glb_loads_with_exact_geometry_and_flat_colours(house, stem, basis_stem):
    with pytest.warns(
        UndecodedTextureWarning,
        match=r"HOUSE2\.basis\.glb: textures\[0\] \(KHR_texture_basisu, images\[0\] image/ktx2\)",
    ):
        scene = HM3DScene.load(basis_stem)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one warning per file: loading it again is silent
        again = HM3DScene.load(f"{basis_stem}.basis.glb")  # the mesh file named directly
    assert scene.scene_id == again.scene_id == "hm3d:HOUSE2"
    textured = HM3DScene.load(stem)
    assert sorted(o.object_id for o in scene.objects) == sorted(o.object_id for o in textured.objects)
    # the same geometry under one flat albedo: the material's baseColorFactor
    flat = MeshScene(
        textured.vertices,
        textured.triangles,
        PerTriangleLookup(
            np.tile([128 / 255, 64 / 255, 1.0], (len(textured.triangles), 1)), np.zeros(len(textured.triangles))
        ),
    )
    for obj in house.objects[:3]:
        vp = obj.view_points[0]
        eye, rot = np.array(vp.position) + [0, 1.25, 0], np.array(vp.rotation)
        a, b = textured.render(eye, rot), scene.render(eye, rot)
        np.testing.assert_array_equal(b["depth"], a["depth"])
        np.testing.assert_array_equal(b["semantic"], a["semantic"])  # ids come from X.semantic.glb
        np.testing.assert_array_equal(b["rgb"], flat.render(eye, rot)["rgb"])
        assert not np.array_equal(b["rgb"], a["rgb"])


def test_basis_glb_falls_back_to_grey_and_is_second_choice(stem, basis_stem, tmp_path):
    both = tmp_path / "B"
    shutil.copy(f"{stem}.glb", f"{both}.glb")
    shutil.copy(f"{basis_stem}.basis.glb", f"{both}.basis.glb")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        preferred = HM3DScene.load(both)  # X.glb is read when both exist: no warning
    assert preferred.lookup.textures
    grey = tmp_path / "G.basis.glb"
    _as_basis_glb(Path(f"{stem}.glb"), grey, None)
    with pytest.warns(UndecodedTextureWarning, match="G.basis.glb"):
        scene = HM3DScene.load(grey)
    assert not scene.lookup.textures and (scene.lookup.tri_color == 180).all()


def test_semantic_glb_with_basis_textures_is_an_error(stem, tmp_path):
    for suffix in (".glb", ".semantic.txt"):
        shutil.copy(f"{stem}{suffix}", tmp_path / f"S{suffix}")
    _as_basis_glb(Path(f"{stem}.semantic.glb"), tmp_path / "S.semantic.glb", [1.0, 1.0, 1.0, 1.0])
    with pytest.raises(MemgymError, match=r"S.semantic.glb: textures\[0\] .*instance ids need"):
        HM3DScene.load(tmp_path / "S")


def test_untextured_surfaces_take_vertex_colours_times_base_colour():
    import trimesh

    from memgym.scenes.hm3d.glb import _flat_colors

    faces = np.array([[0, 1, 2], [2, 1, 3]])
    material = trimesh.visual.material.PBRMaterial(baseColorFactor=[1.0, 0.5, 1.0, 1.0])
    visual = trimesh.visual.TextureVisuals(uv=np.zeros((4, 2)), material=material)
    visual.vertex_attributes["color"] = np.array(
        [[1.0, 1.0, 0.0, 1.0], [0, 0, 0, 1], [0, 0, 0, 1], [0.2, 0.6, 1.0, 1.0]]
    )
    mesh = trimesh.Trimesh(np.eye(4, 3), faces, visual=visual, process=False)
    np.testing.assert_array_equal(_flat_colors(mesh, faces), [[255, 128, 0], [0, 0, 0]])
    mesh.visual.vertex_attributes.pop("color")
    np.testing.assert_array_equal(_flat_colors(mesh, faces), [[255, 128, 255]] * 2)


def test_textured_lookup_matches_per_texture_nearest_texel():
    """Two textures of different sizes, untextured triangles and wrapping UVs, against the direct
    per-texture computation (float32, nearest texel, origin bottom-left)."""
    from memgym.scenes.hm3d import TexturedLookup

    rng = np.random.default_rng(3)
    textures = [rng.integers(0, 256, (5, 7, 3), np.uint8), rng.integers(0, 256, (4, 3, 4), np.uint8)]
    tri_uv = rng.uniform(-1.5, 2.5, (6, 3, 2)).astype(np.float32)
    tri_texture = np.array([0, 1, -1, 1, 0, -1])
    tri_color = rng.integers(0, 256, (6, 3), np.uint8)
    ids = rng.integers(0, 6, 500)
    uvs = rng.dirichlet([1, 1, 1], 500)[:, 1:].astype(np.float32)
    expected = tri_color[ids].copy()
    corners = tri_uv[ids]
    u, v = uvs[:, 0:1], uvs[:, 1:2]
    tex_uv = (1 - u - v) * corners[:, 0] + u * corners[:, 1] + v * corners[:, 2]
    for k, image in enumerate(textures):
        sel = tri_texture[ids] == k
        h, w = image.shape[:2]
        cols = np.clip(np.floor(np.mod(tex_uv[sel, 0], 1.0) * w).astype(int), 0, w - 1)
        rows = np.clip(np.floor((1.0 - np.mod(tex_uv[sel, 1], 1.0)) * h).astype(int), 0, h - 1)
        expected[sel] = image[rows, cols, :3]
    packed = (expected[:, 0].astype(int) << 16) | (expected[:, 1].astype(int) << 8) | expected[:, 2]
    known = {int(c): i + 1 for i, c in enumerate(np.unique(packed)[::2])}  # every other colour has an id
    lookup = TexturedLookup(tri_uv, tri_texture, textures, tri_color, known)
    np.testing.assert_array_equal(lookup.colors(ids, uvs), expected)
    np.testing.assert_array_equal(lookup.colors(ids.astype(np.uint32), uvs), expected)
    semantic = lookup.semantic(ids, uvs)
    np.testing.assert_array_equal(semantic, [known.get(int(c), 0) for c in packed])
    assert 0 < (semantic > 0).mean() < 1


def test_basis_textures_with_a_png_fallback_are_decodable(tmp_path):
    from memgym.scenes.hm3d import undecodable_textures

    def glb(header: dict) -> Path:
        text = json.dumps(header).encode()
        text += b" " * (-len(text) % 4)
        path = tmp_path / "t.glb"
        path.write_bytes(
            struct.pack("<4sII", b"glTF", 2, 20 + len(text)) + struct.pack("<I4s", len(text), b"JSON") + text
        )
        return path

    images = [{"bufferView": 0, "mimeType": "image/png"}, {"bufferView": 1, "mimeType": "image/ktx2"}]
    basisu = {"extensions": {"KHR_texture_basisu": {"source": 1}}}
    assert undecodable_textures(glb({"images": images, "textures": [{"source": 0, **basisu}]})) == []
    assert undecodable_textures(glb({"images": images, "textures": [{"source": 0}, basisu, {"source": 1}]})) == [
        "textures[1] (KHR_texture_basisu, images[1] image/ktx2)",
        "textures[2] (images[1] image/ktx2)",
    ]


def test_single_texel_triangles_read_what_the_per_hit_texture_arithmetic_reads():
    """Triangles with tiny UV footprints (many inside one texel, many straddling a texel edge or a
    wrap seam by a hair) give the same colours and ids through the per-triangle tables as through
    the per-hit interpolation, at corners, edges and random interior points."""
    from memgym.scenes.hm3d import TexturedLookup

    rng = np.random.default_rng(5)
    texture = rng.integers(0, 256, (6, 9, 3), np.uint8)
    h, w = texture.shape[:2]
    m = 400
    # corners clustered around texel edges (k / w), wrap seams (integers) or texel centres
    anchor = np.stack([rng.integers(-2, 3 * w, m) / w, rng.integers(-2, 3 * h, m) / h], axis=1)
    anchor[: m // 4] += 0.5 / np.array([w, h])  # well inside a texel
    spread = np.array([0.0, 1e-7, 1e-4, 0.02])[rng.integers(0, 4, m)]
    tri_uv = (anchor[:, None, :] + rng.uniform(-1, 1, (m, 3, 2)) * spread[:, None, None]).astype(np.float32)
    tri_uv[::7] = tri_uv[::7, :1]  # degenerate: one UV point
    tri_uv[3::13] = anchor[3::13, None, :] + np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])  # a whole period
    tri_texture = np.where(np.arange(m) % 11 == 0, -1, 0)
    tri_color = rng.integers(0, 256, (m, 3), np.uint8)
    packed = (texture[..., 0].astype(int) << 16) | (texture[..., 1].astype(int) << 8) | texture[..., 2]
    known = {int(c): i + 1 for i, c in enumerate(np.unique(packed)[::2])}
    lookup = TexturedLookup(tri_uv, tri_texture, [texture], tri_color, known)
    assert 0.2 < (lookup._tri_row >= 0).mean() < 0.95  # both kinds of triangle are present
    bary = np.concatenate([np.eye(3)[:, 1:], [[0.5, 0.0], [0.0, 0.5], [0.5, 0.5]], rng.dirichlet([1, 1, 1], 8)[:, 1:]])
    ids = np.repeat(np.arange(m), len(bary))
    uvs = np.tile(bary, (m, 1)).astype(np.float32)
    textured = tri_texture[ids] >= 0
    expected_rows = ids.copy()
    expected_rows[textured] = lookup._interpolated_texels(ids[textured], uvs[textured])
    expected = lookup._table[expected_rows]
    np.testing.assert_array_equal(lookup.colors(ids, uvs), expected)
    np.testing.assert_array_equal(lookup.albedo(ids, uvs), expected.astype(np.float32) / np.float32(255.0))
    exp_packed = (expected[:, 0].astype(int) << 16) | (expected[:, 1].astype(int) << 8) | expected[:, 2]
    np.testing.assert_array_equal(lookup.semantic(ids, uvs), [known.get(int(c), 0) for c in exp_packed])
    # a triangle's corners on two texels is never taken as constant
    rows_at_corners = expected_rows.reshape(m, -1)
    assert ((rows_at_corners != rows_at_corners[:, :1]).any(1) <= (lookup._tri_row < 0)).all()
