"""The shared-memory kernels of versions 2.0 to 4.1: the blocks a phase reads are staged in shared memory, one cell
per thread, phase 3's own cell in a register.

A :class:`Tile` fixes B, the distance dtype, the layout (``transpose``: arrays read only by column stored transposed;
``pad``: the phase-1 pivot at row stride B + 1; :func:`~gpusp.solvers.blockedfw.layout.conflict_plan` says when) and
``paths`` at compile time. Kernels: ``p1`` / ``p2`` / ``p3`` on the rationalised grids (2.x), and the pieces of 3.0 /
4.x, ``row`` / ``col`` (phase 2) and ``quad`` (a quadrant of phase 3). Design: docs/solvers/blockedfw.md.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from numba import cuda

from ..common.dense import DTYPES
from ..common.gate import kernel
from .cells import cell_fns
from .layout import BLOCK_SIZES, conflict_plan


@dataclass(frozen=True)
class Tile:
    """The compile-time constants of one set of shared-memory kernels."""

    B: int  # blocking factor: matrix block side = CUDA block side
    dtype_name: str  # distance type, "int32" or "int64"
    transpose: bool  # store arrays read by column transposed
    pad: bool  # give the phase-1 pivot row stride B + 1
    paths: bool = True  # record predecessors

    @property
    def stride(self) -> int:
        """Row stride of the phase-1 pivot array."""
        return self.B + (1 if self.pad else 0)

    @property
    def pside(self) -> int:
        """Side of the shared predecessor arrays: B with paths, else 1 (declared, never used)."""
        return self.B if self.paths else 1


@functools.cache
def _transposed(transpose: bool):
    """(get, put): cell (r, c) of a shared array read by column, stored at [c, r] when ``transpose``."""
    TR = bool(transpose)

    @cuda.jit(device=True)
    def get(A, r, c):
        """Cell (r, c) of a column-read array."""
        if TR:
            return A[c, r]
        return A[r, c]

    @cuda.jit(device=True)
    def put(A, r, c, v):
        """Set cell (r, c) of a column-read array."""
        if TR:
            A[c, r] = v
        else:
            A[r, c] = v

    return get, put


@functools.cache
def _pivot(tile: Tile):
    """Phase 1 on the pivot block (t, t), staged in shared memory with row stride ``tile.stride``."""
    B, W, PB = tile.B, tile.stride, tile.pside
    c = cell_fns(tile.dtype_name, tile.paths)
    NPDT, PATHS, relax = c.NPDT, c.PATHS, c.relax

    @cuda.jit(device=True)
    def phase1(d, p, t):
        """Pivot block (t, t) staged in shared memory (padded row stride W), B ordered steps."""
        ty = cuda.threadIdx.y
        tx = cuda.threadIdx.x
        i = t * B + ty
        j = t * B + tx
        A = cuda.shared.array((B, W), NPDT)
        P = cuda.shared.array((PB, PB), np.int32)
        dij = d[i, j]
        A[ty, tx] = dij
        if PATHS:
            P[ty, tx] = p[i, j]
        cuda.syncthreads()  # pivot block staged
        for k in range(B):
            better, dij = relax(A[ty, k], A[k, tx], dij)
            if better:
                A[ty, tx] = dij
                if PATHS:
                    P[ty, tx] = P[k, tx]
            cuda.syncthreads()  # step k done before row/column k+1 is read
        d[i, j] = dij
        if PATHS:
            p[i, j] = P[ty, tx]

    return phase1


@functools.cache
def _sides(tile: Tile):
    """(row, col): phase 2 on one block of the pivot row or column, pivot and own block staged."""
    B, PB = tile.B, tile.pside
    c = cell_fns(tile.dtype_name, tile.paths)
    NPDT, PATHS, relax = c.NPDT, c.PATHS, c.relax
    get, put = _transposed(tile.transpose)

    @cuda.jit(device=True)
    def row(d, p, t, J):
        """Block (t, J) of the pivot row: pivot (read by column: transposed if TR) and own block shared."""
        ty = cuda.threadIdx.y
        tx = cuda.threadIdx.x
        base = t * B
        i = base + ty
        j = J * B + tx
        PV = cuda.shared.array((B, B), NPDT)
        C = cuda.shared.array((B, B), NPDT)
        CP = cuda.shared.array((PB, PB), np.int32)
        put(PV, ty, tx, d[i, base + tx])
        dij = d[i, j]
        C[ty, tx] = dij
        if PATHS:
            CP[ty, tx] = p[i, j]
        cuda.syncthreads()  # pivot and own block staged
        for k in range(B):
            better, dij = relax(get(PV, ty, k), C[k, tx], dij)
            if better:
                C[ty, tx] = dij
                if PATHS:
                    CP[ty, tx] = CP[k, tx]
            cuda.syncthreads()  # step k done before own row k+1 is read
        d[i, j] = dij
        if PATHS:
            p[i, j] = CP[ty, tx]

    @cuda.jit(device=True)
    def col(d, p, t, I):
        """Block (I, t) of the pivot column: own block (read by column: transposed if TR) and pivot shared."""
        ty = cuda.threadIdx.y
        tx = cuda.threadIdx.x
        base = t * B
        i = I * B + ty
        j = base + tx
        C = cuda.shared.array((B, B), NPDT)
        PV = cuda.shared.array((B, B), NPDT)
        dij = d[i, j]
        put(C, ty, tx, dij)
        PV[ty, tx] = d[base + ty, j]
        cuda.syncthreads()  # own block and pivot staged
        kb = -1
        for k in range(B):
            better, dij = relax(get(C, ty, k), PV[k, tx], dij)
            if better:
                if PATHS:
                    kb = k
                put(C, ty, tx, dij)
            cuda.syncthreads()  # step k done before own column k+1 is read
        d[i, j] = dij
        if PATHS and kb >= 0:
            p[i, j] = p[base + kb, j]  # the pivot block's predecessors are final in phase 2

    return row, col


@functools.cache
def _cross(tile: Tile):
    """Phase 3 on one block off the pivot cross, its cell in a register."""
    B = tile.B
    c = cell_fns(tile.dtype_name, tile.paths)
    DT, NPDT, INF, settle = c.DT, c.NPDT, c.INF, c.settle
    get, put = _transposed(tile.transpose)

    @cuda.jit(device=True)
    def quad(d, p, t, I, J):
        """Block (I, J) off the pivot cross: (I, t) (transposed if TR) and (t, J) shared, cell in a register."""
        ty = cuda.threadIdx.y
        tx = cuda.threadIdx.x
        base = t * B
        i = I * B + ty
        j = J * B + tx
        R = cuda.shared.array((B, B), NPDT)
        Cb = cuda.shared.array((B, B), NPDT)
        put(R, ty, tx, d[i, base + tx])
        Cb[ty, tx] = d[base + ty, j]
        dij = d[i, j]
        kb = -1
        cuda.syncthreads()  # blocks (I, t) and (t, J) staged; they do not change in phase 3
        for k in range(B):
            dik = get(R, ty, k)
            dkj = Cb[k, tx]
            if dik != INF and dkj != INF:
                s = DT(dik + dkj)
                if s < dij:
                    dij = s
                    kb = k
        settle(d, p, i, j, dij, kb, base)

    return quad


def _layouts() -> list[dict]:
    """The compile gate's cases: every B, dtype and ``paths`` with v21's layout (``conflict_plan``), and the
    rationalised grids (p1, p2, p3) with v20's plain layout where that differs from v21's; the pieces (row, col, quad)
    run only in v21's layout (v30, v4x)."""
    out = []
    for w in DTYPES:
        for B in BLOCK_SIZES:
            plan = conflict_plan(B)
            for paths in (True, False):
                out.append(dict(B=B, dtype_name=w, transpose=plan["transpose"], pad=plan["pad"], paths=paths))
                if plan["transpose"] or plan["pad"]:
                    out.append(dict(B=B, dtype_name=w, transpose=False, pad=False, paths=paths,
                                    kernels=("p1", "p2", "p3")))
    return out


@kernel({"p1": "void({dtype_name}[:, ::1], int32[:, ::1], int64)",
         "p2": "void({dtype_name}[:, ::1], int32[:, ::1], int64, int64)",
         "p3": "void({dtype_name}[:, ::1], int32[:, ::1], int64)",
         "row": "void({dtype_name}[:, ::1], int32[:, ::1], int64, int64)",
         "col": "void({dtype_name}[:, ::1], int32[:, ::1], int64, int64)",
         "quad": "void({dtype_name}[:, ::1], int32[:, ::1], int64, int64, int64)"},
        cases=_layouts)
@functools.cache
def shared_kernels(B: int, dtype_name: str, transpose: bool, pad: bool, paths: bool = True) -> dict:
    """The shared-memory kernels for B, dtype, a layout (transpose column-read arrays, pad phase 1) and ``paths``."""
    tile = Tile(int(B), dtype_name, bool(transpose), bool(pad), bool(paths))
    phase1 = _pivot(tile)
    row, col = _sides(tile)
    quad = _cross(tile)

    @cuda.jit(cache=True)
    def k_p1(d, p, t):
        """Phase 1: one block, the pivot."""
        if cuda.blockIdx.x != 0:
            return
        phase1(d, p, t)

    @cuda.jit(cache=True)
    def k_p2(d, p, t, r):
        """Phase 2 on 2(r-1) blocks: the first r-1 are row-t blocks, the rest column-t blocks."""
        b = cuda.blockIdx.x
        if b >= 2 * (r - 1):
            return
        if b < r - 1:
            row(d, p, t, b if b < t else b + 1)
        else:
            b -= r - 1
            col(d, p, t, b if b < t else b + 1)

    @cuda.jit(cache=True)
    def k_p3(d, p, t):
        """Phase 3 on (r-1)^2 blocks: grid index b maps to block b + (b >= t)."""
        by = cuda.blockIdx.y
        bx = cuda.blockIdx.x
        quad(d, p, t, by if by < t else by + 1, bx if bx < t else bx + 1)

    @cuda.jit(cache=True)
    def k_row(d, p, t, j0):
        """Phase 2 piece: pivot-row blocks (t, j0 + blockIdx.x)."""
        row(d, p, t, j0 + cuda.blockIdx.x)

    @cuda.jit(cache=True)
    def k_col(d, p, t, i0):
        """Phase 2 piece: pivot-column blocks (i0 + blockIdx.x, t)."""
        col(d, p, t, i0 + cuda.blockIdx.x)

    @cuda.jit(cache=True)
    def k_quad(d, p, t, i0, j0):
        """Phase 3 piece: blocks (i0 + blockIdx.y, j0 + blockIdx.x) of one quadrant."""
        quad(d, p, t, i0 + cuda.blockIdx.y, j0 + cuda.blockIdx.x)

    return dict(p1=k_p1, p2=k_p2, p3=k_p3, row=k_row, col=k_col, quad=k_quad)
