"""``minplus_naive`` and ``minplus_tiled`` (paper 004): all-pairs shortest paths by repeated min-plus squaring of the
distance matrix, with predecessors, double buffering and an early stop once a squaring changes nothing; optionally
against the transposed operand. Design: docs/solvers/minplus.md.
"""

from __future__ import annotations

import functools

import numba
import numpy as np
from numba import cuda

from ..common.base import Solver
from ..common.csr import DeviceGraph
from ..common.dense import (DTYPES, build_matrix, check_diagonal, csr_bytes, plus_fn, raise_on_negative_cycle,
                    require_device_memory)
from ..common.gate import kernel
from ..common.launch import Launch, NativeRead, grid2, put
from ..common.spec import MATRIX_TILES

NAIVE_SIDE = 16  # block side of the naive product and of its transpose


@cuda.jit(device=True)
def store(out_d, out_p, p, changed, i, j, best, kbest):
    """Write entry (i, j) of the square: its distance, and its predecessor from the k -> j walk when some k
    improved it (raising the changed flag), else the old one."""
    out_d[i, j] = best
    if kbest >= 0:
        out_p[i, j] = p[kbest, j]  # the walk now ends like the k -> j walk
        changed[0] = 1  # benign race: every writer stores 1
    else:
        out_p[i, j] = p[i, j]


@kernel("void({dt}[:, ::1], {dt}[:, ::1], int32[:, ::1], {dt}[:, ::1], int32[:, ::1], int32[::1], {dt})",
        cases=[dict(dt=w, negative=g, transpose=t) for w in DTYPES for g in (False, True) for t in (False, True)])
@functools.cache
def _naive_kernel(dt: str, negative: bool, transpose: bool):
    """One thread per output entry, k loop in global memory."""
    plus = plus_fn(dt, negative)
    TRANSPOSE = transpose

    @cuda.jit(cache=True)
    def square(a, b, p, out_d, out_p, changed, inf):
        """Thread per (i, j), j along x: out = min_k a[i, k] + B[k, j] with B = b (or b[j, k] transposed)."""
        j, i = cuda.grid(2)
        n = a.shape[0]
        if i >= n or j >= n:
            return
        best = a[i, j]
        kbest = -1
        for k in range(n):
            aik = a[i, k]
            if aik != inf:
                bkj = b[j, k] if TRANSPOSE else b[k, j]
                nd = min(plus(aik, bkj, inf), best)
                if nd < best:
                    best = nd
                    kbest = k
        store(out_d, out_p, p, changed, i, j, best, kbest)

    return square


@kernel("void({dt}[:, ::1], {dt}[:, ::1], int32[:, ::1], {dt}[:, ::1], int32[:, ::1], int32[::1], {dt})",
        cases=[dict(tile=T, dt=w, negative=g, transpose=t) for w in DTYPES for g in (False, True)
               for t in (False, True) for T in MATRIX_TILES])
@functools.cache
def _tiled_kernel(tile: int, dt: str, negative: bool, transpose: bool):
    """One block per TILE x TILE output tile, input tiles staged in shared memory."""
    T = tile
    T1 = tile + 1  # padded row length (a shape must be a closure constant, not an expression)
    plus = plus_fn(dt, negative)
    DT = getattr(numba, dt)
    TRANSPOSE = transpose

    @cuda.jit(cache=True)
    def square(a, b, p, out_d, out_p, changed, inf):
        """Block (bx, by): output tile; steps over k tiles, staging a[i-tile, k-tile] and B[k-tile, j-tile]."""
        sa = cuda.shared.array((T, T), DT)
        sb = cuda.shared.array((T, T1), DT)  # padded: the transposed store below hits distinct banks
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        i = cuda.blockIdx.y * T + ty
        j = cuda.blockIdx.x * T + tx
        n = a.shape[0]
        valid = i < n and j < n
        best = a[i, j] if valid else inf
        kbest = -1
        for base in range(0, n, T):
            kc = base + tx
            sa[ty, tx] = a[i, kc] if i < n and kc < n else inf
            if TRANSPOSE:
                jr = cuda.blockIdx.x * T + ty
                sb[tx, ty] = b[jr, kc] if jr < n and kc < n else inf  # b[jr, kc] = B[kc, jr]
            else:
                kr = base + ty
                sb[ty, tx] = b[kr, j] if kr < n and j < n else inf
            cuda.syncthreads()  # both tiles staged
            for kk in range(T):
                nd = min(plus(sa[ty, kk], sb[kk, tx], inf), best)
                if nd < best:
                    best = nd
                    kbest = base + kk
            cuda.syncthreads()  # tiles consumed before the next pair overwrites them
        if valid:
            store(out_d, out_p, p, changed, i, j, best, kbest)

    return square


@kernel("void({dt}[:, ::1], {dt}[:, ::1])",
        cases=[dict(tile=T, dt=w) for w in DTYPES for T in sorted(set(MATRIX_TILES) | {NAIVE_SIDE})])
@functools.cache
def _transpose_kernel(tile: int, dt: str):
    """Tiled transpose through shared memory (Ruetsch & Micikevicius): both sides coalesced."""
    T = tile
    T1 = tile + 1  # padded row length
    DT = getattr(numba, dt)

    @cuda.jit(cache=True)
    def transpose(src, dst):
        """Block (bx, by): dst[x-tile, y-tile] = src[y-tile, x-tile] transposed."""
        buf = cuda.shared.array((T, T1), DT)  # padded against bank conflicts on the transposed read
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        n = src.shape[0]
        row = cuda.blockIdx.y * T + ty
        col = cuda.blockIdx.x * T + tx
        if row < n and col < n:
            buf[ty, tx] = src[row, col]
        cuda.syncthreads()  # tile staged
        row = cuda.blockIdx.x * T + ty
        col = cuda.blockIdx.y * T + tx
        if row < n and col < n:
            dst[row, col] = buf[tx, ty]

    return transpose


class _MinPlus(Solver):
    device = "gpu"
    registry_name = "?"

    def __init__(self, graph, **params):
        super().__init__(graph, **params)
        self.n = graph.n
        self.dt = graph.dtype.name
        self.negative = graph.has_negative_weights
        self.inf = graph.dtype.type(graph.inf)
        self.transpose = params["transpose"]
        self.dg = DeviceGraph(graph)
        self.cur = 0

    def kernels(self):
        """(square kernel, its grid, its block, transpose kernel or None, transpose side)."""
        raise NotImplementedError

    def upload(self):
        n, w = self.n, self.graph.dtype.itemsize
        buffers = (3 if self.transpose else 2) * w + 8
        require_device_memory(self.registry_name, n, buffers * n * n + csr_bytes(self.graph) + 8,
                              "(2w+8) n^2 bytes, (3w+8) n^2 with transpose, + CSR")
        self.dg.upload()
        self.D = [cuda.device_array((n, n), dtype=self.graph.dtype) for _ in range(2)]
        self.P = [cuda.device_array((n, n), dtype=np.int32) for _ in range(2)]
        self.DT = cuda.device_array((n, n), dtype=self.graph.dtype) if self.transpose else None
        self.flag = cuda.device_array(1, dtype=np.int32)
        self.read_flag = NativeRead(self.flag, native=self.native)
        square, sq_grid, sq_block, transpose, side = self.kernels()
        self.l_reset = Launch(put, 1, 1, native=self.native)
        self.l_square = Launch(square, sq_grid, sq_block, native=self.native)
        self.l_transpose = (Launch(transpose, grid2(n, side), (side, side), native=self.native)
                            if transpose is not None else None)

    def run(self, source=None):
        n = self.n
        self.cur = 0
        if n == 0:
            return {"iterations": 0, "relaxations": 0, "launches": 0}
        D, P = self.D, self.P
        launches = build_matrix(self.dg, D[0], P[0], self.inf)
        square, tr = self.l_square, self.l_transpose
        if tr is not None:
            tr(D[0], self.DT)
            launches += 1
        limit = (n - 1).bit_length()  # ceil(log2 n): walks of up to 2^limit >= n edges
        squarings = 0
        while squarings < limit:
            cur = self.cur
            self.l_reset(self.flag, 0, np.int32(0))
            square(D[cur], self.DT if tr is not None else D[cur], P[cur], D[1 - cur], P[1 - cur], self.flag,
                   self.inf)
            launches += 2
            squarings += 1
            if int(self.read_flag()[0]) == 0:
                break  # D_2l == D_l: converged (the unchanged copy in D[cur] is the answer)
            self.cur = 1 - cur
            if tr is not None and squarings < limit:
                tr(D[self.cur], self.DT)
                launches += 1
        launches += check_diagonal(D[self.cur], n, self.flag)
        raise_on_negative_cycle(self.flag, n)
        return {"iterations": squarings, "relaxations": squarings * n ** 3, "launches": launches}

    def download(self):
        return self.D[self.cur].copy_to_host(), self.P[self.cur].copy_to_host()


class NaiveSolver(_MinPlus):
    registry_name = "minplus_naive"

    def __init__(self, graph, *, transpose, launcher):
        super().__init__(graph, transpose=transpose, launcher=launcher)

    def kernels(self):
        n, s = self.n, NAIVE_SIDE
        kern = _naive_kernel(self.dt, self.negative, self.transpose)
        tr = _transpose_kernel(s, self.dt) if self.transpose else None
        return kern, grid2(n, s), (s, s), tr, s


class TiledSolver(_MinPlus):
    registry_name = "minplus_tiled"

    def __init__(self, graph, *, tile, transpose, launcher):
        super().__init__(graph, tile=tile, transpose=transpose, launcher=launcher)
        self.tile = tile

    def kernels(self):
        T = self.tile
        kern = _tiled_kernel(T, self.dt, self.negative, self.transpose)
        tr = _transpose_kernel(T, self.dt) if self.transpose else None
        return kern, grid2(self.n, T), (T, T), tr, T

