"""Phases 1 and 2 of blockedfw_fast, pivot by pivot: a tile's cells in registers, one barrier per pivot, the pivot's
column and row read from global memory (``p12=global``) or from shared-memory copies of the tile and the pivot tile
(``p12=shared``); with paths a cell's last improving pivot is kept in a byte of shared memory and its predecessor is
resolved once after the last pivot (:func:`resolve_paths_fn`). Device functions only: :mod:`.kernels` launches them.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from .consts import Consts

NOKB = 255  # no improving pivot yet (tiles are at most 128 wide, pivots 0 .. 127)


def resolve_paths_fn(cs: Consts):
    """Device function ``resolve_paths(p, kb, tp, I, i0, j0)`` of tile T, register block R (tp: the tile row of the
    array holding the round's pivot row)."""
    T, R, TR = cs.T, cs.R, cs.TR

    @cuda.jit(device=True)
    def resolve_paths(p, kb, tp, I, i0, j0):
        """After phase 1 or 2 of tile (I, J) at (i0, j0): p[i][j] = p[K][j] for every cell whose last improvement
        came through pivot k = kb[i][j] (NOKB: none), whose row is K = tp T + k. (K, j) cannot improve after pivot k
        (else (i, j) would have improved again), so its p then is its p at the phase's end: off the pivot rows
        (I != tp) the untouched p of the finished pivot tile; on them (I == tp), (K, j) is a cell of this tile with a
        smaller last pivot, so follow those pivots to a cell the phase left alone and take its p from before the
        phase."""
        ty = cuda.threadIdx.y
        tx = cuda.threadIdx.x
        base = tp * T
        pv = cuda.local.array((R, R), np.int32)
        for a in range(R):
            for b in range(R):
                y = ty + a * TR
                x = tx + b * TR
                r = kb[y, x]
                if r != NOKB:
                    if I == tp:
                        for _ in range(T):  # at most T steps (a negative cycle could loop; it is reported anyway)
                            if kb[r, x] == NOKB:
                                break
                            r = kb[r, x]
                    pv[a, b] = p[base + r, j0 + x]
        cuda.syncthreads()  # every pre-phase predecessor is read before any is overwritten
        for a in range(R):
            for b in range(R):
                if kb[ty + a * TR, tx + b * TR] != NOKB:
                    p[i0 + ty + a * TR, j0 + tx + b * TR] = pv[a, b]

    return resolve_paths


def pivot_step_fn(cs: Consts, store):
    """Device function ``pivot_step(c, lv, rv, out, y0, x0, kb, ty, tx, k)``: a thread's R x R cells ``c`` relaxed
    through pivot k (column values ``lv``, row values ``rv``), an improved cell written through to ``out`` by
    ``store(out, y0 + a T/R, x0 + b T/R, value)`` and its pivot kept in ``kb``."""
    R, TR, DT, INF, NEG, GUARD, PATHS = cs.R, cs.TR, cs.DT, cs.INF, cs.NEG, cs.GEN, cs.PATHS

    @cuda.jit(device=True)
    def pivot_step(c, lv, rv, out, y0, x0, kb, ty, tx, k):
        """Cells (ty + a T/R, tx + b T/R) of the tile through pivot k."""
        for a in range(R):
            for b in range(R):
                x = lv[a]
                y = rv[b]
                if not GUARD or (x != INF and y != INF):
                    s = DT(x + y)
                    if s < c[a, b]:
                        if GUARD and s < NEG:
                            s = NEG
                        c[a, b] = s
                        store(out, y0 + a * TR, x0 + b * TR, s)
                        if PATHS:
                            kb[ty + a * TR, tx + b * TR] = k

    return pivot_step


@cuda.jit(device=True)
def store_global(d, i, j, value):
    """Write-through of a phase-1/2 cell to the matrix."""
    d[i, j] = value


@cuda.jit(device=True)
def store_shared(S, y, x, value):
    """Write-through of a phase-1/2 cell to the tile's shared copy S[0]."""
    S[0, y, x] = value


def phase12_fn(cs: Consts, resolve_paths):
    """Device function ``phase12(d, p, t, tp, I, J)``: operands from global memory."""
    T, R, TR, NPDT, PATHS = cs.T, cs.R, cs.TR, cs.NPDT, cs.PATHS
    pivot_step = pivot_step_fn(cs, store_global)

    @cuda.jit(device=True)
    def phase12(d, p, t, tp, I, J):
        """Tile (I, J) through the pivots of column tile t (their row: tile row tp of the array), cells in registers,
        one barrier per pivot."""
        ty = cuda.threadIdx.y
        tx = cuda.threadIdx.x
        base = t * T
        rbase = tp * T
        i0 = I * T + ty
        j0 = J * T + tx
        c = cuda.local.array((R, R), NPDT)
        lv = cuda.local.array(R, NPDT)
        rv = cuda.local.array(R, NPDT)
        kb = cuda.shared.array((T, T), numba.uint8)  # the last improving pivot of each cell, NOKB: none
        for a in range(R):
            for b in range(R):
                c[a, b] = d[i0 + a * TR, j0 + b * TR]
                kb[ty + a * TR, tx + b * TR] = NOKB
        for k in range(T):
            for a in range(R):
                lv[a] = d[i0 + a * TR, base + k]
            for b in range(R):
                rv[b] = d[rbase + k, j0 + b * TR]
            pivot_step(c, lv, rv, d, i0, j0, kb, ty, tx, k)
            cuda.syncthreads()  # pivot k's writes visible to the block before column/row k+1 is read
        if PATHS:
            resolve_paths(p, kb, tp, I, I * T, J * T)

    return phase12


def phase12s_fn(cs: Consts, resolve_paths):
    """Device function ``phase12s(d, p, t, tp, I, J)``: operands from shared-memory copies."""
    T, R, TR, NPDT, PATHS = cs.T, cs.R, cs.TR, cs.NPDT, cs.PATHS
    pivot_step = pivot_step_fn(cs, store_shared)
    TP = T + 1  # row stride: column reads of a tile hit other banks

    @cuda.jit(device=True)
    def phase12s(d, p, t, tp, I, J):
        """phase12 on shared-memory copies of tile (I, J) and the pivot tile (tp, t), one barrier per pivot."""
        ty = cuda.threadIdx.y
        tx = cuda.threadIdx.x
        base = t * T
        rbase = tp * T
        i0 = I * T
        j0 = J * T
        pivot = I == tp and J == t  # phase 1: the pivot tile itself
        S = cuda.shared.array((2, T, TP), NPDT)  # S[0]: tile (I, J); S[1]: pivot tile (tp, t) unless pivot
        kb = cuda.shared.array((T, T), numba.uint8)  # the last improving pivot of each cell, NOKB: none
        ca = 1 if I == tp and J != t else 0  # column k of the round lies in the pivot tile (pivot-row tiles)
        rb = 1 if J == t and I != tp else 0  # row k of the round lies in the pivot tile (pivot-column tiles)
        c = cuda.local.array((R, R), NPDT)
        lv = cuda.local.array(R, NPDT)
        rv = cuda.local.array(R, NPDT)
        for a in range(R):
            for b in range(R):
                y = ty + a * TR
                x = tx + b * TR
                c[a, b] = d[i0 + y, j0 + x]
                S[0, y, x] = c[a, b]
                kb[y, x] = NOKB
                if not pivot:
                    S[1, y, x] = d[rbase + y, base + x]
        cuda.syncthreads()  # both tiles staged
        for k in range(T):
            for a in range(R):
                lv[a] = S[ca, ty + a * TR, k]
            for b in range(R):
                rv[b] = S[rb, k, tx + b * TR]
            pivot_step(c, lv, rv, S, ty, tx, kb, ty, tx, k)
            cuda.syncthreads()  # pivot k's writes visible before pivot k+1 is read
        for a in range(R):
            for b in range(R):
                d[i0 + ty + a * TR, j0 + tx + b * TR] = c[a, b]
        if PATHS:
            resolve_paths(p, kb, tp, I, i0, j0)

    return phase12s


def relax_tile_fn(cs: Consts):
    """Device function ``relax_tile(d, p, t, tp, I, J)``: phase 1 or 2 on tile (I, J) through the pivots of column
    tile t, whose row is tile row tp of the array, global or shared operands as ``p12`` says."""
    SHARED12 = cs.SHARED12
    resolve_paths = resolve_paths_fn(cs)
    phase12 = phase12_fn(cs, resolve_paths)
    phase12s = phase12s_fn(cs, resolve_paths)

    @cuda.jit(device=True)
    def relax_tile(d, p, t, tp, I, J):
        """Phase 1 or 2 on tile (I, J): global or shared operands as ``p12`` says."""
        if SHARED12:
            phase12s(d, p, t, tp, I, J)
        else:
            phase12(d, p, t, tp, I, J)

    return relax_tile
