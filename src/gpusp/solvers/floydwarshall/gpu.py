"""The five GPU Floyd-Warshall variants of paper 000 (Bodra): one launch per k (``floydwarshall_supernaive``,
``_supernaiveshared``, ``_naive``) and the three-phase tiled order in global or shared memory
(``floydwarshall_tiledglobal``, ``_tiledshared``), with the predecessor matrix, the negative-cycle check and, for the
tiled order with weights <= 0, a repair pass that re-hangs the predecessors as trees. Design:
docs/solvers/floydwarshall.md.
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
from ..common.launch import Launch, NativeRead, grid2, launch_grid, put
from ..common.spec import MATRIX_TILES


@kernel("void(int32[:, ::1])")
@cuda.jit(cache=True)
def park_parents(p):
    """Thread per (s, v), v along x: park every predecessor p as -(p + 2), i.e. 'not yet in s's tree'."""
    v, s = cuda.grid(2)
    n = p.shape[0]
    if s < n and v < n and p[s, v] >= 0:
        p[s, v] = -p[s, v] - 2


@kernel("void(int32[::1], int32[::1], {dt}[::1], {dt}[:, ::1], int32[:, ::1], {dt}, int32[::1])",
        cases=[dict(dt=w) for w in DTYPES])
@cuda.jit(cache=True)
def attach_round(in_indptr, in_src, in_w, d, p, inf, changed):
    """Thread per parked (s, v): attach v under its old predecessor or a tight in-neighbour in s's tree."""
    v, s = cuda.grid(2)
    n = d.shape[0]
    if s >= n or v >= n:
        return
    q = p[s, v]
    if q > -2:  # already attached, the source, or unreachable
        return
    u = -q - 2
    if u == s or p[s, u] >= 0:  # another thread may attach u in this very round: either value is safe
        p[s, v] = u
        changed[0] = 1  # benign race: every writer stores 1
        return
    dv = d[s, v]
    for e in range(in_indptr[v], in_indptr[v + 1]):
        u = in_src[e]
        du = d[s, u]
        if du != inf and (u == s or p[s, u] >= 0) and du + in_w[e] == dv:
            p[s, v] = u
            changed[0] = 1  # benign race: every writer stores 1
            return


# --- compile-time specialisations ---------------------------------------------------------------------
@functools.cache
def relax_fn(dt: str, negative: bool):
    """Device function ``relax(d, p, i, j, k, dik, inf)``: d[i][j] = d[i][k] + d[k][j] when shorter (``dik`` is
    d[i][k], already loaded), the path then ending like the k -> j path."""
    plus = plus_fn(dt, negative)

    @cuda.jit(device=True)
    def relax(d, p, i, j, k, dik, inf):
        """Relax i -> j through k."""
        dij = d[i, j]
        nd = min(plus(dik, d[k, j], inf), dij)
        if nd < dij:
            d[i, j] = nd
            p[i, j] = p[k, j]

    return relax


@kernel(dict.fromkeys(("supernaive", "supernaiveshared", "naive"), "void({dt}[:, ::1], int32[:, ::1], int64, {dt})"),
        cases=[dict(dt=w, negative=g, row_skip=r) for w in DTYPES for g in (False, True) for r in (True, False)])
@functools.cache
def _row_kernels(dt: str, negative: bool, row_skip: bool = True):
    """The one-launch-per-k kernels (super naive, super naive shared, naive) for one dtype; ``row_skip`` (a
    compile-time constant): a thread whose d[i][k] is INF returns at once, else it relaxes every j as paper 000's loop
    does (the sums with INF stay INF: no cell changes)."""
    relax = relax_fn(dt, negative)
    DT = getattr(numba, dt)
    SKIP = bool(row_skip)

    @cuda.jit(cache=True)
    def supernaive(d, p, k, inf):
        """Thread per (i, j), j along x: relax i -> j through k."""
        j, i = cuda.grid(2)
        n = d.shape[0]
        if i >= n or j >= n:
            return
        dik = d[i, k]
        if SKIP and dik == inf:
            return
        relax(d, p, i, j, k, dik, inf)

    @cuda.jit(cache=True)
    def supernaiveshared(d, p, k, inf):
        """Block along row i = blockIdx.x, thread per j: d[i][k] staged once per block in shared memory."""
        dik_s = cuda.shared.array(1, DT)
        i = cuda.blockIdx.x
        j = cuda.blockIdx.y * cuda.blockDim.x + cuda.threadIdx.x
        n = d.shape[0]
        if cuda.threadIdx.x == 0:
            dik_s[0] = d[i, k]
        cuda.syncthreads()  # d[i][k] staged for the whole block (every thread reaches this barrier)
        dik = dik_s[0]
        if j >= n or (SKIP and dik == inf):
            return
        relax(d, p, i, j, k, dik, inf)

    @cuda.jit(cache=True)
    def naive(d, p, k, inf):
        """Thread per row i: relax i -> j through k for every j."""
        i = cuda.grid(1)
        n = d.shape[0]
        if i >= n:
            return
        dik = d[i, k]
        if SKIP and dik == inf:
            return
        for j in range(n):
            relax(d, p, i, j, k, dik, inf)

    return dict(supernaive=supernaive, supernaiveshared=supernaiveshared, naive=naive)


# the tiled variants' three phases, in global or in shared memory: one signature, every tile, type and sign
_TILED = kernel(dict.fromkeys(("phase1", "phase2", "phase3"), "void({dt}[:, ::1], int32[:, ::1], int64, {dt})"),
                cases=[dict(tile=T, dt=w, negative=g) for w in DTYPES for g in (False, True) for T in MATRIX_TILES])


@_TILED
@functools.cache
def _tiled_global_kernels(tile: int, dt: str, negative: bool):
    """Three-phase blocked FW in global memory with TILE x TILE blocks."""
    T = tile
    plus = plus_fn(dt, negative)
    relax = relax_fn(dt, negative)

    @cuda.jit(device=True)
    def dependent_tile(d, p, i, j, base, inf):
        """Relax (i, j) through k = base .. base + T - 1 in order, one barrier per k (phases 1 and 2)."""
        n = d.shape[0]
        valid = i < n and j < n
        for kk in range(T):
            k = base + kk
            if valid and k < n:
                relax(d, p, i, j, k, d[i, k], inf)
            cuda.syncthreads()  # step k's writes (row and column k + 1 among them) seen by the whole tile

    @cuda.jit(cache=True)
    def phase1(d, p, r, inf):
        """One block: the primary (diagonal) tile r through its own k."""
        base = r * T
        dependent_tile(d, p, base + cuda.threadIdx.y, base + cuda.threadIdx.x, base, inf)

    @cuda.jit(cache=True)
    def phase2(d, p, r, inf):
        """Block (b, 0): row tile (r, c); block (b, 1): column tile (c, r); c skips the primary tile."""
        b = cuda.blockIdx.x
        c = b + 1 if b >= r else b
        base = r * T
        if cuda.blockIdx.y == 0:
            i = base + cuda.threadIdx.y
            j = c * T + cuda.threadIdx.x
        else:
            i = c * T + cuda.threadIdx.y
            j = base + cuda.threadIdx.x
        dependent_tile(d, p, i, j, base, inf)

    @cuda.jit(cache=True)
    def phase3(d, p, r, inf):
        """Tile (a, c): d[i][k] from tile (a, r), d[k][j] from tile (r, c), both final, so no barrier."""
        bx = cuda.blockIdx.x
        by = cuda.blockIdx.y
        c = bx + 1 if bx >= r else bx
        a = by + 1 if by >= r else by
        i = a * T + cuda.threadIdx.y
        j = c * T + cuda.threadIdx.x
        n = d.shape[0]
        if i >= n or j >= n:
            return
        base = r * T
        best = d[i, j]
        kbest = -1
        for kk in range(T):
            k = base + kk
            if k < n:
                nd = min(plus(d[i, k], d[k, j], inf), best)
                if nd < best:
                    best = nd
                    kbest = k
        if kbest >= 0:  # the last strict improvement decides the predecessor, as in the serial order
            d[i, j] = best
            p[i, j] = p[kbest, j]

    return dict(phase1=phase1, phase2=phase2, phase3=phase3)


@_TILED
@functools.cache
def _tiled_shared_kernels(tile: int, dt: str, negative: bool):
    """Three-phase blocked FW with the tiles staged in shared memory (INF-padded past the matrix)."""
    T = tile
    plus = plus_fn(dt, negative)
    DT = getattr(numba, dt)

    @cuda.jit(cache=True)
    def phase1(d, p, r, inf):
        """One block: the primary tile, staged in shared memory, through its own k."""
        sd = cuda.shared.array((T, T), DT)
        sp = cuda.shared.array((T, T), numba.int32)
        ty = cuda.threadIdx.y
        tx = cuda.threadIdx.x
        base = r * T
        i = base + ty
        j = base + tx
        n = d.shape[0]
        valid = i < n and j < n
        sd[ty, tx] = d[i, j] if valid else inf
        sp[ty, tx] = p[i, j] if valid else -1
        cuda.syncthreads()  # tile staged
        for kk in range(T):
            dij = sd[ty, tx]
            nd = min(plus(sd[ty, kk], sd[kk, tx], inf), dij)
            if nd < dij:
                sd[ty, tx] = nd
                sp[ty, tx] = sp[kk, tx]
            cuda.syncthreads()  # step kk's writes seen before step kk + 1
        if valid:
            d[i, j] = sd[ty, tx]
            p[i, j] = sp[ty, tx]

    @cuda.jit(cache=True)
    def phase2(d, p, r, inf):
        """Row tile (r, c) (blockIdx.y == 0) or column tile (c, r), staged with the primary tile."""
        cd = cuda.shared.array((T, T), DT)
        cp = cuda.shared.array((T, T), numba.int32)
        pd = cuda.shared.array((T, T), DT)
        pp = cuda.shared.array((T, T), numba.int32)
        ty = cuda.threadIdx.y
        tx = cuda.threadIdx.x
        b = cuda.blockIdx.x
        c = b + 1 if b >= r else b
        row = cuda.blockIdx.y == 0
        base = r * T
        if row:
            i = base + ty
            j = c * T + tx
        else:
            i = c * T + ty
            j = base + tx
        n = d.shape[0]
        valid = i < n and j < n
        pvalid = base + ty < n and base + tx < n
        cd[ty, tx] = d[i, j] if valid else inf
        cp[ty, tx] = p[i, j] if valid else -1
        pd[ty, tx] = d[base + ty, base + tx] if pvalid else inf
        pp[ty, tx] = p[base + ty, base + tx] if pvalid else -1
        cuda.syncthreads()  # current and primary tiles staged
        for kk in range(T):
            dij = cd[ty, tx]
            if row:  # d[i][k] from the primary tile, d[k][j] and p[k][j] from this tile
                nd = min(plus(pd[ty, kk], cd[kk, tx], inf), dij)
                if nd < dij:
                    cd[ty, tx] = nd
                    cp[ty, tx] = cp[kk, tx]
            else:  # d[i][k] from this tile, d[k][j] and p[k][j] from the primary tile
                nd = min(plus(cd[ty, kk], pd[kk, tx], inf), dij)
                if nd < dij:
                    cd[ty, tx] = nd
                    cp[ty, tx] = pp[kk, tx]
            cuda.syncthreads()  # step kk's writes seen before step kk + 1
        if valid:
            d[i, j] = cd[ty, tx]
            p[i, j] = cp[ty, tx]

    @cuda.jit(cache=True)
    def phase3(d, p, r, inf):
        """Tile (a, c): stage column tile (a, r) and row tile (r, c) once; d[i][j] in a register."""
        kd = cuda.shared.array((T, T), DT)  # tile (a, r): d[i][k]
        rd = cuda.shared.array((T, T), DT)  # tile (r, c): d[k][j]
        rp = cuda.shared.array((T, T), numba.int32)  # tile (r, c): p[k][j]
        ty = cuda.threadIdx.y
        tx = cuda.threadIdx.x
        bx = cuda.blockIdx.x
        by = cuda.blockIdx.y
        c = bx + 1 if bx >= r else bx
        a = by + 1 if by >= r else by
        base = r * T
        i = a * T + ty
        j = c * T + tx
        n = d.shape[0]
        kd[ty, tx] = d[i, base + tx] if i < n and base + tx < n else inf
        rvalid = base + ty < n and j < n
        rd[ty, tx] = d[base + ty, j] if rvalid else inf
        rp[ty, tx] = p[base + ty, j] if rvalid else -1
        cuda.syncthreads()  # both tiles staged; no barrier after this one
        if i >= n or j >= n:
            return
        best = d[i, j]
        kbest = -1
        for kk in range(T):
            nd = min(plus(kd[ty, kk], rd[kk, tx], inf), best)
            if nd < best:
                best = nd
                kbest = kk
        if kbest >= 0:
            d[i, j] = best
            p[i, j] = rp[kbest, tx]

    return dict(phase1=phase1, phase2=phase2, phase3=phase3)


# --- solvers --------------------------------------------------------------------------------------------
class _DenseApsp(Solver):
    """Shared set-up of the dense APSP solvers: CSR upload, matrix build, negative-cycle check."""

    device = "gpu"
    registry_name = "?"
    repairs_parents = False  # the tiled orders need the tree repair pass when a weight is <= 0

    def __init__(self, graph, **params):
        super().__init__(graph, **params)
        self.n = graph.n
        self.dt = graph.dtype.name
        self.itemsize = graph.dtype.itemsize
        self.negative = graph.has_negative_weights
        self.inf = graph.dtype.type(graph.inf)
        self.dg = DeviceGraph(graph)
        self.rev = DeviceGraph(graph.reverse()) if self.repairs_parents and self.dg.nonpositive else None
        self.d = self.p = None

    def device_bytes(self) -> int:
        n, w = self.n, self.itemsize
        extra = csr_bytes(self.rev.graph) if self.rev is not None else 0
        return (w + 4) * n * n + csr_bytes(self.graph) + extra + 8

    def upload(self):
        require_device_memory(self.registry_name, self.n, self.device_bytes(), "(w+4) n^2 bytes + CSR")
        self.dg.upload()
        if self.rev is not None:
            self.rev.upload()
        n = self.n
        self.d = cuda.device_array((n, n), dtype=self.graph.dtype)
        self.p = cuda.device_array((n, n), dtype=np.int32)
        self.flag = cuda.device_array(1, dtype=np.int32)
        self.prepare()
        if self.rev is not None:
            grid = grid2(n, 16)
            self.l_park = self.launch(park_parents, grid, (16, 16))
            self.l_clear = self.launch(put, 1, 1)
            self.l_attach = self.launch(attach_round, grid, (16, 16))
            self.read_flag = NativeRead(self.flag, native=self.native)

    def launch(self, kernel, griddim, blockdim) -> Launch:
        """``kernel`` configured once, launched as ``launcher`` says (the driver's cost, or Numba's dispatcher)."""
        return Launch(kernel, griddim, blockdim, native=self.native)

    def prepare(self):
        """Configure the launches of the k loop (the arrays exist)."""
        raise NotImplementedError

    def repair_parents(self) -> tuple[int, int]:
        """Re-hang the predecessors as trees over tight edges (docs/solvers/floydwarshall.md); (launches, rounds)."""
        rev, d, p, flag = self.rev, self.d, self.p, self.flag
        self.l_park(p)
        launches, rounds = 1, 0
        while rounds <= self.n:
            self.l_clear(flag, 0, np.int32(0))
            self.l_attach(rev.indptr, rev.indices, rev.weights, d, p, self.inf, flag)
            launches += 2
            rounds += 1
            if int(self.read_flag()[0]) == 0:
                break
        return launches, rounds

    def iterate(self) -> tuple[int, int]:
        """The algorithm proper; returns (iterations, launches)."""
        raise NotImplementedError

    def run(self, source=None):
        n = self.n
        if n == 0:
            return {"iterations": 0, "relaxations": 0, "launches": 0}
        launches = build_matrix(self.dg, self.d, self.p, self.inf)
        iterations, more = self.iterate()
        launches += more + check_diagonal(self.d, n, self.flag)
        raise_on_negative_cycle(self.flag, n)
        counters = {"iterations": iterations, "relaxations": n ** 3}
        if self.rev is not None:
            more, rounds = self.repair_parents()
            launches += more
            counters["tree_rounds"] = rounds
        counters["launches"] = launches
        return counters

    def download(self):
        return self.d.copy_to_host(), self.p.copy_to_host()


class _RowSolver(_DenseApsp):
    """One launch per k of a row kernel (super naive, super naive shared, naive)."""

    kernel = "supernaive"  # the key of _row_kernels

    def config(self) -> tuple:
        """(grid, block) of this variant's launch."""
        raise NotImplementedError

    def prepare(self):
        kernels = _row_kernels(self.dt, self.negative, self.params["row_skip"])
        self.l_step = self.launch(kernels[self.kernel], *self.config())

    def iterate(self):
        step, d, p, inf = self.l_step, self.d, self.p, self.inf
        for k in range(self.n):
            step(d, p, k, inf)
        return self.n, self.n


class SuperNaiveSolver(_RowSolver):
    registry_name = "floydwarshall_supernaive"

    def __init__(self, graph, *, tile, launcher, row_skip=True):
        super().__init__(graph, tile=tile, launcher=launcher, row_skip=row_skip)
        self.side = tile

    def config(self):
        return grid2(self.n, self.side), (self.side, self.side)


class SuperNaiveSharedSolver(_RowSolver):
    registry_name = "floydwarshall_supernaiveshared"
    kernel = "supernaiveshared"

    def __init__(self, graph, *, block, launcher, row_skip=True):
        super().__init__(graph, block=block, launcher=launcher, row_skip=row_skip)
        self.block = block

    def config(self):
        return (max(1, self.n), launch_grid(self.n, self.block)), self.block


class NaiveSolver(_RowSolver):
    registry_name = "floydwarshall_naive"
    kernel = "naive"

    def __init__(self, graph, *, block, launcher, row_skip=True):
        super().__init__(graph, block=block, launcher=launcher, row_skip=row_skip)
        self.block = block

    def config(self):
        return launch_grid(self.n, self.block), self.block


class _TiledSolver(_DenseApsp):
    repairs_parents = True
    factory = None

    def __init__(self, graph, *, tile, launcher):
        super().__init__(graph, tile=tile, launcher=launcher)
        self.tile = tile

    def prepare(self):
        T = self.tile
        ks = type(self).factory(T, self.dt, self.negative)
        self.nt = nt = launch_grid(self.n, T)
        rest = max(1, nt - 1)  # a single tile launches phase 1 only
        self.l1 = self.launch(ks["phase1"], (1, 1), (T, T))
        self.l2 = self.launch(ks["phase2"], (rest, 2), (T, T))
        self.l3 = self.launch(ks["phase3"], (rest, rest), (T, T))

    def iterate(self):
        nt, d, p, inf = self.nt, self.d, self.p, self.inf
        one, two, three = self.l1, self.l2, self.l3
        if nt == 1:  # a single tile: phase 1 is the whole algorithm
            one(d, p, 0, inf)
            return 1, 1
        for r in range(nt):
            one(d, p, r, inf)
            two(d, p, r, inf)
            three(d, p, r, inf)
        return nt, 3 * nt


class TiledGlobalSolver(_TiledSolver):
    registry_name = "floydwarshall_tiledglobal"
    factory = staticmethod(_tiled_global_kernels)


class TiledSharedSolver(_TiledSolver):
    registry_name = "floydwarshall_tiledshared"
    factory = staticmethod(_tiled_shared_kernels)

