"""blockedfw_dist's kernels on one rank's band (its tile rows and the broadcast slot): phases 1 and 2 pivot by pivot
(``relax``) and phases 2 and 3 as min-plus updates (``update``) over the tiles a :class:`~.layout.Step` names, built
from blockedfw_fast's device functions for the same compile-time constants; the band's initial values from the CSR
arcs (``fill``, ``arcs``) and the negative-cycle check of its diagonal (``diagonal``).
"""

from __future__ import annotations

import functools

from numba import cuda

from ...common.gate import kernel
from ..fast import consts
from ..fast.phase12 import relax_tile_fn
from ..fast.phase3 import update_tile_fn
from ..fast.variants import resolve_variant

KINDS = {"pivot": 1, "row": 2, "column": 3, "rest": 4}  # a Step's kind as the kernels' int


def gate_cases() -> list[dict]:
    """The band kernels the compile gate builds: the 'auto' variant of the packed-key kinds without paths at the
    shipped T 64, R 4, and the general kernels at the reference variant."""
    cases = []
    for kind in ("dpx", "float32", "gen32", "gen64"):
        w = {"float32": "float32", "gen64": "int64"}.get(kind, "int32")
        cases.append(dict(T=64, R=4, kind=kind, paths=False, **resolve_variant(64, 4, kind, False), w=w))
    return cases


@kernel(dict.fromkeys(("relax", "update"), "void({w}[:, ::1], int32[:, ::1], int64, int64, int64, int64, int64, int64, "
                                           "int64)"), cases=gate_cases)
@functools.cache
def band_kernels(T: int, R: int, kind: str, paths: bool, p12: str = "global", inner: str = "scalar", unroll: int = 1,
                 stage: str = "single") -> dict:
    """``relax(d, p, kind, t, tp, r, lo, hi, skip)`` (phases 1-2 pivot by pivot) and ``update(...)`` (phase 3, or
    phase 2 as a product) over the tiles of a step of that kind (:func:`~.layout.tiles_of`), one block per tile in a
    stride loop, for blockedfw_fast's constants (docs/solvers/blockedfw.md)."""
    cs = consts.build(T, R, kind, paths, p12, inner, unroll, stage)
    relax_tile = relax_tile_fn(cs)
    update_tile = update_tile_fn(cs)

    @cuda.jit(device=True)
    def count(kind, r, lo, hi, skip):
        """Tiles of a step: 1 pivot, r - 1 row tiles, its rows' column tiles, or its rows x (r - 1) others."""
        if kind == 1:
            return 1
        if kind == 2:
            return r - 1
        rows = hi - lo - (1 if lo <= skip < hi else 0)
        return rows if kind == 3 else rows * (r - 1)

    @cuda.jit(device=True)
    def tile(q, kind, t, tp, r, lo, hi, skip):
        """(I, J) of the step's q-th tile, in :func:`~.layout.tiles_of`'s order."""
        if kind == 1:
            return tp, t
        if kind == 2:
            return tp, q + (q >= t)
        if kind == 3:
            I = lo + q
            J = t
        else:
            I = lo + q // (r - 1)
            J = q % (r - 1)
            J += J >= t
        if 0 <= skip <= I:
            I += 1
        return I, J

    @cuda.jit(cache=True)
    def relax(d, p, kind, t, tp, r, lo, hi, skip):
        """Phases 1-2 pivot by pivot on the step's tiles, one block a tile (stride loop)."""
        q = cuda.blockIdx.x
        last = count(kind, r, lo, hi, skip)
        while q < last:
            I, J = tile(q, kind, t, tp, r, lo, hi, skip)
            relax_tile(d, p, t, tp, I, J)
            q += cuda.gridDim.x

    @cuda.jit(cache=True, **cs.k3_options)
    def update(d, p, kind, t, tp, r, lo, hi, skip):
        """Phase 3 (or phase 2 as a product with the closed pivot tile) on the step's tiles (stride loop)."""
        q = cuda.blockIdx.x
        last = count(kind, r, lo, hi, skip)
        while q < last:
            I, J = tile(q, kind, t, tp, r, lo, hi, skip)
            update_tile(d, p, t, tp, I, J)
            q += cuda.gridDim.x

    return dict(relax=relax, update=update)


@cuda.jit(device=True)
def row_vertex(row, T, size, rank):
    """The global vertex of a band's local row (:func:`.layout.global_vertex` on the device)."""
    return ((row // T) * size + rank) * T + row % T


@kernel("void({w}[:, ::1], {w}, int64, int64, int64, int64)", cases=({"w": "int32"}, {"w": "int64"},
                                                                       {"w": "float32"}))
@cuda.jit(cache=True)
def fill(d, inf, T, size, rank, n):
    """Every cell of the band INF, its own diagonal cells 0 (grid-stride over cells; the slot rows too)."""
    cols = d.shape[1]
    cells = d.shape[0] * cols
    x = cuda.grid(1)
    while x < cells:
        row = x // cols
        col = x - row * cols
        i = row_vertex(row, T, size, rank)
        d[row, col] = 0 if col == i else inf
        x += cuda.gridsize(1)


@kernel("void({w}[:, ::1], {o}[::1], int32[::1], {w}[::1], int64, int64, int64, int64)",
        cases=tuple({"w": w, "o": o} for w in ("int32", "int64", "float32") for o in ("int32", "int64")))
@cuda.jit(cache=True)
def arcs(d, indptr, indices, weights, T, size, rank, rows):
    """The arcs out of the band's vertices, the lightest of duplicates (one thread a row: no races); a self-loop
    lowers the diagonal only when negative, since the diagonal starts at 0."""
    row = cuda.grid(1)
    if row >= rows:
        return
    i = row_vertex(row, T, size, rank)
    if i + 1 >= indptr.shape[0]:
        return  # a padded vertex: no arcs
    for e in range(indptr[i], indptr[i + 1]):
        j = indices[e]
        if weights[e] < d[row, j]:
            d[row, j] = weights[e]


@kernel("void({w}[:, ::1], int32[::1], int64, int64, int64, int64)", cases=({"w": "int32"}, {"w": "int64"},
                                                                          {"w": "float32"}))
@cuda.jit(cache=True)
def diagonal(d, flag, T, size, rank, n):
    """flag[0] = 1 when a diagonal cell of the band is negative (a vertex on a negative cycle)."""
    row = cuda.grid(1)
    if row >= d.shape[0] - T:  # the slot is no vertex's row
        return
    i = row_vertex(row, T, size, rank)
    if i < n and d[row, i] < 0:
        flag[0] = 1
