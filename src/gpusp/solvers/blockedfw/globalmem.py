"""The global-memory kernels of versions 1.0, 1.1 and 1.2: every cell is read and written in device memory.

One CUDA block of B x B threads computes one matrix block, one cell per thread (``threadIdx.x`` is the column, so
a warp reads consecutive addresses). Phases 1 and 2 take B ordered steps with a barrier each; phase 3 keeps its cell
in a register, since the blocks it reads are final. Each factory takes ``paths``: without it the kernels never touch
the predecessor argument (a placeholder array) and the branches that would are compiled out.
"""

from __future__ import annotations

import functools

from numba import cuda

from ..common.dense import DTYPES
from ..common.gate import kernel
from .cells import cell_fns
from .layout import BLOCK_SIZES


@functools.cache
def _steps(B: int, dtype_name: str, paths: bool):
    """(update, rest): round t on one block (I, J) in global memory, ordered (phases 1 and 2) and in a register
    (phase 3)."""
    c = cell_fns(dtype_name, paths)
    DT, INF, NEG, PATHS, settle = c.DT, c.INF, c.NEG, c.PATHS, c.settle

    @cuda.jit(device=True)
    def update(d, p, t, I, J):
        """Round t on block (I, J) in global memory, any phase: B ordered steps with a barrier each."""
        i = I * B + cuda.threadIdx.y
        j = J * B + cuda.threadIdx.x
        base = t * B
        for kk in range(B):
            k = base + kk
            dik = d[i, k]
            dkj = d[k, j]
            if dik != INF and dkj != INF:
                s = DT(dik + dkj)
                if s < d[i, j]:
                    if s < NEG:
                        s = NEG
                    d[i, j] = s
                    if PATHS:
                        p[i, j] = p[k, j]
            cuda.syncthreads()  # step kk's writes visible before row/column kk+1 is read

    @cuda.jit(device=True)
    def rest(d, p, t, I, J):
        """Phase 3 on block (I, J) in global memory: the cell in a register, no barrier needed."""
        i = I * B + cuda.threadIdx.y
        j = J * B + cuda.threadIdx.x
        base = t * B
        dij = d[i, j]
        kb = -1
        for kk in range(B):
            dik = d[i, base + kk]
            dkj = d[base + kk, j]
            if dik != INF and dkj != INF:
                s = DT(dik + dkj)
                if s < dij:
                    dij = s
                    kb = kk
        settle(d, p, i, j, dij, kb, base)

    return update, rest


@kernel({"block": "void({dtype_name}[:, ::1], int32[:, ::1], int64, int64, int64)",
         "full1": "void({dtype_name}[:, ::1], int32[:, ::1], int64)",
         "full2": "void({dtype_name}[:, ::1], int32[:, ::1], int64)",
         "full3": "void({dtype_name}[:, ::1], int32[:, ::1], int64)",
         "rat1": "void({dtype_name}[:, ::1], int32[:, ::1], int64)",
         "rat2": "void({dtype_name}[:, ::1], int32[:, ::1], int64, int64)",
         "rat3": "void({dtype_name}[:, ::1], int32[:, ::1], int64)"},
        cases=[dict(B=B, dtype_name=w, paths=paths) for w in DTYPES for B in BLOCK_SIZES for paths in (True, False)])
@functools.cache
def global_kernels(B: int, dtype_name: str, paths: bool = True) -> dict:
    """The v10 / v11 / v12 kernels for blocking factor B, distance dtype and ``paths`` (cells stay in global
    memory)."""
    update, rest = _steps(B, dtype_name, bool(paths))

    @cuda.jit(cache=True)
    def block(d, p, t, I, J):
        """v10: round t on the one block (I, J) of this single-block launch."""
        if cuda.blockIdx.x != 0:
            return
        update(d, p, t, I, J)

    @cuda.jit(cache=True)
    def full1(d, p, t):
        """v11 phase 1 over the full r x r grid: only block (t, t) works."""
        if cuda.blockIdx.x != t or cuda.blockIdx.y != t:
            return
        update(d, p, t, t, t)

    @cuda.jit(cache=True)
    def full2(d, p, t):
        """v11 phase 2 over the full r x r grid: only blocks of row t or column t, not the pivot, work."""
        I = cuda.blockIdx.y
        J = cuda.blockIdx.x
        if (I == t) == (J == t):
            return
        update(d, p, t, I, J)

    @cuda.jit(cache=True)
    def full3(d, p, t):
        """v11 phase 3 over the full r x r grid: only blocks outside row t and column t work."""
        I = cuda.blockIdx.y
        J = cuda.blockIdx.x
        if I == t or J == t:
            return
        rest(d, p, t, I, J)

    @cuda.jit(cache=True)
    def rat1(d, p, t):
        """v12 phase 1: one block, the pivot."""
        if cuda.blockIdx.x != 0:
            return
        update(d, p, t, t, t)

    @cuda.jit(cache=True)
    def rat2(d, p, t, r):
        """v12 phase 2 on 2(r-1) blocks: the first r-1 are row-t blocks, the rest column-t blocks."""
        b = cuda.blockIdx.x
        if b >= 2 * (r - 1):
            return
        if b < r - 1:
            update(d, p, t, t, b if b < t else b + 1)
        else:
            b -= r - 1
            update(d, p, t, b if b < t else b + 1, t)

    @cuda.jit(cache=True)
    def rat3(d, p, t):
        """v12 phase 3 on (r-1)^2 blocks: grid index b maps to block b + (b >= t)."""
        by = cuda.blockIdx.y
        bx = cuda.blockIdx.x
        rest(d, p, t, by if by < t else by + 1, bx if bx < t else bx + 1)

    return dict(block=block, full1=full1, full2=full2, full3=full3, rat1=rat1, rat2=rat2, rat3=rat3)
