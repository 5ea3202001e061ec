"""Paper 001's task-parallel APSP (Okuyama, Ino & Hagihara): N single-source scatter / check problems per launch on
interleaved per-source arrays, sources taken N at a time, each group's rows recorded with parents from the inverted
graph (or trees grown level by level when a weight is zero). ``nsssp_shared`` stages a vertex's arcs in shared
memory, ``nsssp_global`` reads them from global memory. Design: docs/solvers/nsssp.md.
"""

from __future__ import annotations

import functools

import numba
import numpy as np
from numba import cuda

from ...errors import SolverError
from ..common.base import Solver
from ..common.csr import DeviceGraph
from ..common.dense import Result, apsp_tight_parents
from ..common.gate import DISTANCES, kernel
from ..common.launch import Launch, NativeRead, launch_grid, put

MAX_BLOCK = 1024  # threads per block (B N) the hardware allows
# (N, B) pairs compiled by the offline gate: the paper's default and the ones the tests use
COMPILE_SHAPES = ((32, 4), (4, 2), (3, 1))
SHAPES = [{"N": N, "B": B, "w": w} for w in ("int32", "int64") for N, B in COMPILE_SHAPES]

_WTYPES = {"int32": numba.int32, "int64": numba.int64}


@kernel("void(int32[::1], {w}[::1], {w}[::1], int32[::1])", cases=DISTANCES)
@cuda.jit(cache=True)
def check_shared(ma, ca, ua, flag):
    """Thread per (v, j): commit a lowered cost and re-mask; one global flag write per block."""
    idx = cuda.grid(1)
    changed = cuda.shared.array(1, numba.int32)
    if cuda.threadIdx.x == 0:
        changed[0] = 0
    cuda.syncthreads()  # the block's flag is cleared before any thread raises it
    if idx < ma.size:
        u = ua[idx]
        if u < ca[idx]:
            ca[idx] = u
            ma[idx] = 1
            changed[0] = 1  # benign race: every writer stores 1
    cuda.syncthreads()  # every thread of the block has checked its entry
    if cuda.threadIdx.x == 0 and changed[0] != 0:
        flag[0] = 1


@kernel("void(int32[::1], {w}[::1], {w}[::1], int32[::1])", cases=DISTANCES)
@cuda.jit(cache=True)
def check_global(ma, ca, ua, flag):
    """Thread per (v, j): commit a lowered cost, re-mask and raise the global flag directly."""
    idx = cuda.grid(1)
    if idx >= ma.size:
        return
    u = ua[idx]
    if u < ca[idx]:
        ca[idx] = u
        ma[idx] = 1
        flag[0] = 1  # benign race: every writer stores 1


@kernel({"init": "void(int32[::1], {w}[::1], {w}[::1], int64, {w})",
         "scatter_global": "void(int32[::1], int32[::1], {w}[::1], int32[::1], {w}[::1], {w}[::1])",
         "record": "void(int32[::1], int32[::1], {w}[::1], {w}[::1], int32[::1], {w}[:, ::1], int32[:, ::1], int64, "
                   "int64, {w}, int64)",
         "tree_level": "void(int32[::1], int32[::1], {w}[::1], {w}[::1], int32[::1], int32[:, ::1], int64, int64, "
                       "int32[::1])"}, cases=SHAPES)
@functools.cache
def group_kernels(N: int, B: int):
    """Kernels for N problems per launch, by name (B only fixes the block shape; these index by cuda.grid)."""

    @cuda.jit(cache=True)
    def init(ma, ca, ua, base, inf):
        """Thread (v, j): cost INF and mask 0, except cost 0 and mask 1 at v == source base + j."""
        idx = cuda.grid(1)
        if idx >= ma.size:
            return
        v = idx // N
        j = idx - v * N
        if v == base + j:  # never true in the unused columns of a partial group (base + j >= n)
            ca[idx] = 0
            ua[idx] = 0
            ma[idx] = 1
        else:
            ca[idx] = inf
            ua[idx] = inf
            ma[idx] = 0

    @cuda.jit(cache=True)
    def scatter_global(indptr, indices, weights, ma, ca, ua):
        """Thread (v, j): if masked, relax v's out-edges in problem j from global memory."""
        idx = cuda.grid(1)
        if idx >= ma.size or ma[idx] == 0:
            return
        ma[idx] = 0
        v = idx // N
        j = idx - v * N
        cv = ca[idx]  # finite: only a lowered (finite) cost enters the mask
        for e in range(indptr[v], indptr[v + 1]):
            # atomic: other vertices relax the same target in problem j concurrently
            cuda.atomic.min(ua, indices[e] * N + j, cv + weights[e])

    @cuda.jit(cache=True)
    def record(rindptr, rindices, rweights, ca, ma, out_dist, out_parent, row0, base, inf, parents):
        """Thread (v, j): copy the cost into result row row0 + j; parent from a tight in-edge (parents 1), -1 and a
        tree-level seed (2), or nothing (0: no path recording)."""
        idx = cuda.grid(1)
        if idx >= ca.size:
            return
        v = idx // N
        j = idx - v * N
        s = base + j
        n = out_dist.shape[1]
        if s >= n:  # unused column of the last, partial group: never enters the level frontier
            ma[idx] = -1
            return
        cv = ca[idx]
        r = row0 + j
        out_dist[r, v] = cv
        if parents == 0:
            return
        p = -1
        if parents == 1:
            if v != s and cv != inf:
                for e in range(rindptr[v], rindptr[v + 1]):
                    u = rindices[e]
                    cu = ca[u * N + j]
                    if u != v and cu != inf and cu + rweights[e] == cv:
                        p = u
                        break
        else:
            ma[idx] = 0 if v == s else -1  # tree level: the source is the depth-0 frontier
        out_parent[r, v] = p

    @cuda.jit(cache=True)
    def tree_level(indptr, indices, weights, ca, level, out_parent, row0, depth, grew):
        """Thread (u, j) on the frontier (level == depth): claim untreed tight out-neighbours."""
        idx = cuda.grid(1)
        if idx >= ca.size or level[idx] != depth:
            return
        u = idx // N
        j = idx - u * N
        cu = ca[idx]  # finite: only reached vertices get a level
        for e in range(indptr[u], indptr[u + 1]):
            t = indices[e] * N + j
            if cu + weights[e] == ca[t] and level[t] == -1:
                # atomic: only the first frontier vertex to reach the neighbour becomes its parent
                if cuda.atomic.cas(level, t, -1, depth + 1) == -1:
                    out_parent[row0 + j, indices[e]] = u
                    grew[0] = 1

    return {"init": init, "scatter_global": scatter_global, "record": record, "tree_level": tree_level}


@kernel("void(int32[::1], int32[::1], {w}[::1], int32[::1], {w}[::1], {w}[::1])", cases=SHAPES)
@functools.cache
def scatter_shared_kernel(N: int, B: int, w: str):
    """The paper's scatter kernel with edges staged in shared memory (weights of type ``w``)."""
    WTYPE = _WTYPES[w]
    SLOTS = B * N

    @cuda.jit(cache=True)
    def scatter_shared(indptr, indices, weights, ma, ca, ua):
        """Block of B groups x N threads: stage each active vertex's edges N at a time, then relax."""
        t = cuda.threadIdx.x
        g = t // N
        j = t - g * N
        v = cuda.blockIdx.x * B + g
        idx = v * N + j
        active = cuda.shared.array(B, numba.int32)
        deg = cuda.shared.array(B, numba.int32)
        beg = cuda.shared.array(B, numba.int32)
        es = cuda.shared.array(SLOTS, numba.int32)
        ws = cuda.shared.array(SLOTS, WTYPE)
        if j == 0:
            active[g] = 0
        cuda.syncthreads()  # the group flags are cleared before any thread raises one
        mine = False
        cv = 0
        if idx < ma.size and ma[idx] != 0:
            mine = True
            ma[idx] = 0
            cv = ca[idx]  # finite: only a lowered (finite) cost enters the mask
            active[g] = 1  # benign race: the mask reduction of the group, every writer stores 1
        cuda.syncthreads()  # the group's mask reduction is complete
        if j == 0:
            if active[g] != 0:
                beg[g] = indptr[v]
                deg[g] = indptr[v + 1] - indptr[v]
            else:
                deg[g] = 0  # an idle group stages nothing
        cuda.syncthreads()  # every group's edge range is published
        most = 0
        for h in range(B):  # block-uniform chunk count: the barriers below are reached by all threads
            most = max(most, deg[h])
        my_deg = deg[g]
        my_beg = beg[g]
        for c0 in range(0, most, N):
            k = c0 + j
            if k < my_deg:
                es[t] = indices[my_beg + k]
                ws[t] = weights[my_beg + k]
            cuda.syncthreads()  # the chunk of N edges is staged
            if mine:
                for i in range(min(N, my_deg - c0)):
                    # atomic: other vertices relax the same target in problem j concurrently
                    cuda.atomic.min(ua, es[g * N + i] * N + j, cv + ws[g * N + i])
            cuda.syncthreads()  # the chunk is consumed before the next one overwrites it

    return scatter_shared


def sampled_groups(n: int, N: int, count: int, seed: int) -> np.ndarray | None:
    """The sorted indices of ``count`` source groups of N picked with ``seed`` from the ceil(n / N); None for all
    (count 0). Raises SolverError when there are fewer groups than ``count``."""
    if count == 0:
        return None
    total = (n + N - 1) // N
    if count > total:
        raise SolverError(f"sample_groups={count}: only {total} groups of {N} sources in {n} vertices")
    return np.sort(np.random.default_rng(seed).choice(total, size=count, replace=False))


class _NssspSolver(Solver):
    device = "gpu"
    shared = True

    def __init__(self, graph, *, sources_per_launch, groups_per_block, paths, sample_groups, sample_seed, launcher):
        super().__init__(graph, sources_per_launch=sources_per_launch, groups_per_block=groups_per_block,
                         paths=paths, sample_groups=sample_groups, sample_seed=sample_seed, launcher=launcher)
        self.paths = paths
        self.N = sources_per_launch
        self.B = groups_per_block
        self.groups = sampled_groups(graph.n, self.N, sample_groups, sample_seed)
        # the result's rows: every source in order, or the sampled groups' sources (None: row s is source s)
        self.row_sources = None if self.groups is None else np.concatenate(
            [np.arange(k * self.N, min(k * self.N + self.N, graph.n)) for k in self.groups]).astype(np.int64)
        if self.N * self.B > MAX_BLOCK:
            raise SolverError(f"sources_per_launch * groups_per_block = {self.N * self.B} threads per block; "
                              f"the limit is {MAX_BLOCK}")
        if graph.has_negative_weights:
            raise SolverError(f"{type(self).__name__} does not accept negative weights")
        if not self.paths and graph.m and int(graph.weights.min()) <= 0:
            raise SolverError(f"{type(self).__name__} paths=False needs positive weights: its parents for "
                              "validation are derived on the host from tight in-edges, which zero-weight cycles "
                              "can close into loops")
        self.wname = str(graph.dtype)
        kernels = group_kernels(self.N, self.B)
        self.init, self.scatter_g, self.record, self.tree_level = (
            kernels[k] for k in ("init", "scatter_global", "record", "tree_level"))
        self.scatter = scatter_shared_kernel(self.N, self.B, self.wname) if self.shared else self.scatter_g
        self.check = check_shared if self.shared else check_global

    def upload(self):
        g, N, n = self.graph, self.N, self.graph.n
        self.dg = DeviceGraph(g).upload()
        self.tree = self.dg.nonpositive  # zero weights: grow the parent tree level by level
        if not self.tree:
            rev = g.reverse()
            self.rindptr = cuda.to_device(rev.indptr)
            self.rindices = cuda.to_device(rev.indices)
            self.rweights = cuda.to_device(rev.weights)
        else:  # unused by the record kernel in tree mode; any arrays of the right types will do
            self.rindptr, self.rindices, self.rweights = self.dg.indptr, self.dg.indices, self.dg.weights
        size = max(n * N, 1)
        self.ma = cuda.device_array(size, dtype=np.int32)
        self.ca = cuda.device_array(size, dtype=g.dtype)
        self.ua = cuda.device_array(size, dtype=g.dtype)
        self.flag = cuda.device_array(1, dtype=np.int32)
        # the staged rows' distances borrow Ua, free once a group's costs are final
        rows = n if self.row_sources is None else self.row_sources.size
        self.out = Result(g, rows, N, staging=self.ua.reshape(N, n) if n else None)
        grid, block, native = launch_grid(n, self.B), self.B * N, self.native  # ceil(n / B) blocks of B groups
        self.l_init, self.l_scatter, self.l_check, self.l_record, self.l_level = (
            Launch(k, grid, block, native=native)
            for k in (self.init, self.scatter, self.check, self.record, self.tree_level))
        self.l_put = Launch(put, 1, 1, native=native)
        self.read_flag = NativeRead(self.flag, native=native)

    def _flag_set(self) -> bool:
        return int(self.read_flag()[0]) != 0  # one sync per round

    def run(self, source=None):
        N, n = self.N, self.graph.n
        dg = self.dg
        inf = dg.inf
        ma, ca, ua, flag = self.ma, self.ca, self.ua, self.flag
        put_, scatter, check = self.l_put, self.l_scatter, self.l_check
        mode = 0 if not self.paths else 2 if self.tree else 1
        groups = range((n + N - 1) // N) if self.groups is None else self.groups
        rounds = launches = levels = 0
        first_row = 0
        for k in groups:
            base = k * N
            count = min(N, n - base)
            self.l_init(ma, ca, ua, base, inf)
            launches += 1
            while True:
                put_(flag, 0, 0)
                scatter(dg.indptr, dg.indices, dg.weights, ma, ca, ua)
                check(ma, ca, ua, flag)
                launches += 3
                rounds += 1
                if not self._flag_set():
                    break
            row0 = self.out.row0(first_row)
            self.l_record(self.rindptr, self.rindices, self.rweights, ca, ma, self.out.dist, self.out.parent, row0,
                          base, inf, mode)
            launches += 1
            if mode == 2:
                depth = 0
                while True:
                    put_(flag, 0, 0)
                    self.l_level(dg.indptr, dg.indices, dg.weights, ca, ma, self.out.parent, row0, depth, flag)
                    launches += 2
                    levels += 1
                    if not self._flag_set():
                        break
                    depth += 1
            self.out.keep(first_row, count, parents=self.paths)
            first_row += count
        sampled = {} if self.row_sources is None else {"row_sources": self.row_sources.tolist()}
        return {"iterations": rounds, "launches": launches, "groups": len(groups), "tree_levels": levels,
                "paths": self.paths, **sampled, **self.out.counters()}

    def download(self):
        dist, parent = self.out.download()
        if not self.paths:  # nothing recorded on the device: parents from tight in-edges on the host (untimed)
            return dist, apsp_tight_parents(self.graph, dist, self.graph.inf, sources=self.row_sources)
        return dist, parent


class SharedSolver(_NssspSolver):
    """nsssp_shared: the paper's scatter kernel with the vertex's edges staged in shared memory."""

    shared = True


class GlobalSolver(_NssspSolver):
    """nsssp_global: the same N-problem scheme, edges and flag in global memory only."""

    shared = False
