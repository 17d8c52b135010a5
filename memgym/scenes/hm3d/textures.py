"""Per-hit albedo and instance ids of HM3D meshes from their textures (:class:`TexturedLookup`)."""

from __future__ import annotations

import functools

import numpy as np

from memgym.scenes.mesh_scene import SurfaceLookup


class TexturedLookup(SurfaceLookup):
    """Per-hit albedo / instance id from textures (nearest texel at the interpolated UV).

    Args:
        tri_uv: ``(M, 3, 2)`` texture coordinates of each triangle's corners (origin bottom-left).
        tri_texture: ``(M,)`` index into ``textures`` (-1: use ``tri_color``).
        textures: ``(H, W, 3+) uint8`` images.
        tri_color: ``(M, 3) uint8`` fallback colour of triangles without a texture.
        color_to_id: packed 24-bit RGB -> instance id, for semantic textures (None for albedo).

    A triangle that reads one texel wherever it is hit (flat colour, or a UV footprint inside one
    texel, as in :func:`export_hm3d`'s atlases) has its colour, albedo and instance id looked up
    once at construction; hits on it then cost one ``np.take``, with the same values as the
    per-hit texture arithmetic.
    """

    def __init__(self, tri_uv, tri_texture, textures, tri_color, color_to_id: dict[int, int] | None = None) -> None:
        self.tri_uv = np.asarray(tri_uv, np.float32)
        self.tri_texture = np.asarray(tri_texture, np.int64)
        images = [np.asarray(t, np.uint8)[:, :, :3] for t in textures]
        tri_color = np.asarray(tri_color, np.uint8).reshape(-1, 3)
        # one colour table: the M flat triangle colours, then each texture's texels row by row, so
        # that a hit's colour is one np.take at its texel index (see texel_index)
        self._table = np.concatenate([tri_color, *(image.reshape(-1, 3) for image in images)])
        sizes = [image.shape[0] * image.shape[1] for image in images]
        self._start = len(tri_color) + np.cumsum([0, *sizes[:-1]]).astype(np.int64)
        self._shape = np.array([image.shape[:2] for image in images], np.int64).reshape(-1, 2)  # (height, width)
        self.tri_color = self._table[: len(tri_color)]
        self.textures = [
            self._table[start : start + size].reshape(image.shape[0], image.shape[1], 3)
            for start, size, image in zip(self._start, sizes, images)
        ]
        self.color_to_id = color_to_id
        if color_to_id:
            self._keys = np.array(sorted(color_to_id), np.int32)  # packed 24-bit colours
            self._values = np.array([color_to_id[int(k)] for k in self._keys], np.int32)
        # per triangle: the table row every hit reads (-1: it varies); its albedo and instance id
        # are tabled on first use (_tri_albedo, _tri_semantic)
        self._tri_row = self._constant_rows()
        self._all_constant = bool((self._tri_row >= 0).all())

    @functools.cached_property
    def _tri_albedo(self) -> np.ndarray:
        """``(M, 3) float32`` albedo of each single-texel triangle (rows of the others: unused)."""
        return self._albedo_of(np.take(self._table, np.maximum(self._tri_row, 0), axis=0))

    @functools.cached_property
    def _tri_semantic(self) -> np.ndarray:
        """``(M,) int32`` instance id of each single-texel triangle (-1 for the others)."""
        ids = self._semantic_of(np.take(self._table, np.maximum(self._tri_row, 0), axis=0))
        return np.where(self._tri_row >= 0, ids, -1).astype(np.int32)

    def _constant_rows(self) -> np.ndarray:
        """``(M,) int64`` colour-table row each triangle reads wherever it is hit, -1 where that varies:
        a flat triangle's own row; for a textured one, the texel of its UV bounding box when the box,
        widened by a margin far above the float32 rounding of the interpolated UV, neither crosses a
        wrap seam nor spans two texels (the texel arithmetic is monotone in the UV between seams)."""
        rows = np.arange(len(self.tri_texture), dtype=np.int64)
        textured = np.flatnonzero(self.tri_texture >= 0)
        if len(textured) == 0:
            return rows
        which = self.tri_texture[textured]
        corners = self.tri_uv[textured]
        margin = (1e-5 * np.maximum(1.0, np.abs(corners).max(1))).astype(np.float32)
        lo, hi = corners.min(1) - margin, corners.max(1) + margin
        constant = (np.floor(lo) == np.floor(hi)).all(1)
        texel = []
        for axis, extent in ((0, self._shape[which, 1]), (1, self._shape[which, 0])):
            first = _nearest_texel(lo[:, axis].copy(), axis, extent)
            constant &= first == _nearest_texel(hi[:, axis].copy(), axis, extent)
            texel.append(first)
        cols, texel_rows = texel
        rows[textured] = np.where(constant, texel_rows * self._shape[which, 1] + cols + self._start[which], -1)
        return rows

    def texel_index(self, primitive_ids: np.ndarray, uvs: np.ndarray) -> np.ndarray:
        """``(N,) int64`` row of the colour table seen by each hit: the triangle's own row when it
        has no texture, else its texture's texel at the interpolated UV (nearest, wrapping)."""
        ids = np.asarray(primitive_ids).astype(np.int64, copy=False)
        rows = np.take(self._tri_row, ids)
        if self._all_constant:
            return rows
        varies = rows < 0
        if varies.all():
            return self._interpolated_texels(ids, uvs)
        if varies.any():
            rows[varies] = self._interpolated_texels(ids[varies], uvs[varies])
        return rows

    def _interpolated_texels(self, ids: np.ndarray, uvs: np.ndarray) -> np.ndarray:
        """:meth:`texel_index` of hits ``ids`` ``(N,) int64`` on textured triangles, at ``uvs`` ``(N, 2)``."""
        which = np.take(self.tri_texture, ids)

        def per_hit(values: np.ndarray) -> np.ndarray:
            """A per-texture value at each hit (one texture: the scalar, same arithmetic)."""
            return values[0] if len(values) == 1 else np.take(values, which)

        corners = np.take(self.tri_uv, ids, axis=0)
        u, v = uvs[:, 0], uvs[:, 1]
        w0 = 1 - u - v
        texel = []
        for axis, size in ((0, self._shape[:, 1]), (1, self._shape[:, 0])):
            # per component on 1-D arrays (a (N, 2) broadcast is several times slower)
            coord = w0 * corners[:, 0, axis]
            coord += u * corners[:, 1, axis]
            coord += v * corners[:, 2, axis]
            texel.append(_nearest_texel(coord, axis, per_hit(size)))
        cols, rows = texel
        rows *= per_hit(self._shape[:, 1])
        rows += cols
        rows += per_hit(self._start)
        return rows

    def arrays(self) -> tuple[np.ndarray, ...]:
        ids = (self._keys, self._values) if self.color_to_id else ()
        return self.tri_uv, self.tri_texture, self._table, self._shape, *ids

    def colors(self, primitive_ids: np.ndarray, uvs: np.ndarray) -> np.ndarray:
        """``(N, 3) uint8`` texel colours at the hits."""
        return np.take(self._table, self.texel_index(primitive_ids, uvs), axis=0)

    def albedo(self, primitive_ids: np.ndarray, uvs: np.ndarray) -> np.ndarray:
        return self._per_hit(self._tri_albedo, primitive_ids, uvs, self._albedo_of)

    def semantic(self, primitive_ids: np.ndarray, uvs: np.ndarray) -> np.ndarray:
        if not self.color_to_id:
            return np.zeros(len(primitive_ids), np.int32)
        return self._per_hit(self._tri_semantic, primitive_ids, uvs, self._semantic_of)

    def _per_hit(self, per_triangle: np.ndarray, primitive_ids: np.ndarray, uvs: np.ndarray, of_colors) -> np.ndarray:
        """``per_triangle`` values at the hits, with ``of_colors`` of the texel colours of hits on
        triangles whose texel varies."""
        ids = np.asarray(primitive_ids).astype(np.int64, copy=False)
        values = np.take(per_triangle, ids, axis=0)
        if self._all_constant:
            return values
        varies = np.take(self._tri_row, ids) < 0
        if varies.any():
            values[varies] = of_colors(
                np.take(self._table, self._interpolated_texels(ids[varies], uvs[varies]), axis=0)
            )
        return values

    @staticmethod
    def _albedo_of(rgb: np.ndarray) -> np.ndarray:
        """``(N, 3) float32`` albedo in [0, 1] of ``(N, 3) uint8`` colours."""
        albedo = rgb.astype(np.float32)
        albedo /= 255.0
        return albedo

    def _semantic_of(self, rgb: np.ndarray) -> np.ndarray:
        """``(N,) int32`` instance ids of ``(N, 3) uint8`` semantic colours (0 without a row)."""
        if not self.color_to_id:
            return np.zeros(len(rgb), np.int32)
        packed = rgb[:, 0].astype(np.int32) << 16
        packed |= rgb[:, 1].astype(np.int32) << 8
        packed |= rgb[:, 2]
        idx = np.minimum(np.searchsorted(self._keys, packed), len(self._keys) - 1)
        return np.where(self._keys[idx] == packed, self._values[idx], 0).astype(np.int32)


def _nearest_texel(coord: np.ndarray, axis: int, extent: np.ndarray) -> np.ndarray:
    """``int64`` nearest texel along ``axis`` (0: column from u; 1: row from v, counted from the top)
    of float32 texture coordinates ``coord`` (overwritten) in textures ``extent`` texels long, wrapping."""
    # wrap into [0, 1) with x - floor(x): the same single rounding as np.mod(x, 1.0), faster
    coord -= np.floor(coord)
    if axis == 1:
        np.subtract(1.0, coord, out=coord)  # rows count from the top
    coord *= extent.astype(np.float32)  # float32 products, as with a Python int
    index = np.floor(coord, out=coord).astype(np.int64)
    return np.clip(index, 0, extent - 1, out=index)
