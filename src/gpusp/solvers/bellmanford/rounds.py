"""Vertex-parallel Bellman-Ford on the GPU (paper 000, Bodra): ``bellmanford_naive``, ``bellmanford_stride`` and
``bellmanford_flag``. A round is a relax kernel (``prev`` into ``dist`` with an atomic minimum) and a copy kernel that
stamps a changed flag, read by the host once per round; trees from ``csr.build_parents``. Design:
docs/solvers/bellmanford.md.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from ...errors import NegativeCycleError
from ..common.base import Solver
from ..common.csr import DeviceGraph, build_parents
from ..common.gate import DISTANCES, kernel
from ..common.launch import Launch, NativeRead, blocks_per_sm, launch_grid, synchronize
from .spec import STRIDE_BLOCKS_PER_SM


# --- kernels shared by every variant -------------------------------------------------------------------
@cuda.jit(device=True)
def _start(prev, dist, i, source, inf):
    """Vertex i before round 1: prev and dist 0 at the source, INF elsewhere; returns its flag (1 at the source,
    the only vertex that relaxes in round 1, else 0)."""
    d = inf
    f = 0
    if i == source:
        d = 0
        f = 1
    prev[i] = d
    dist[i] = d
    return f


@kernel("void({w}[::1], {w}[::1], int32[::1], int64, {w})", cases=DISTANCES)
@cuda.jit(cache=True)
def init_rounds(prev, dist, changed, source, inf):
    """Grid-stride: every distance INF except the source's 0; clear the round stamp."""
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    if i == 0:
        changed[0] = 0
    while i < dist.size:
        _start(prev, dist, i, source, inf)
        i += stride


@kernel("void({w}[::1], {w}[::1], uint8[::1], int32[::1], int64, {w})", cases=DISTANCES)
@cuda.jit(cache=True)
def init_rounds_flag(prev, dist, flag, changed, source, inf):
    """Grid-stride: as init_rounds, and only the source's flag set."""
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    if i == 0:
        changed[0] = 0
    while i < dist.size:
        flag[i] = _start(prev, dist, i, source, inf)
        i += stride


@cuda.jit(device=True)
def _relax_out(indptr, indices, weights, dist, u, du):
    """Lower dist[v] to du + w for every out-edge u -> v (du = prev[u], finite)."""
    for e in range(indptr[u], indptr[u + 1]):
        v = indices[e]
        nd = du + weights[e]
        if nd < dist[v]:
            cuda.atomic.min(dist, v, nd)  # atomic: other vertices may lower dist[v] in the same round


# --- naive: one thread per vertex -------------------------------------------------------------------------
@kernel("void(int32[::1], int32[::1], {w}[::1], {w}[::1], {w}[::1], {w})", cases=DISTANCES)
@cuda.jit(cache=True)
def relax_naive(indptr, indices, weights, prev, dist, inf):
    """Thread per vertex u: lower dist[v] to prev[u] + w for every out-edge u -> v."""
    u = cuda.grid(1)
    if u >= prev.size:
        return
    du = prev[u]
    if du == inf:
        return  # never relax from INF (INF + negative would look finite)
    _relax_out(indptr, indices, weights, dist, u, du)


@cuda.jit(device=True)
def _improved(prev, dist, i):
    """prev[i] <- dist[i] when the round lowered it; returns 1 when it did, else 0."""
    d = dist[i]
    if d < prev[i]:
        prev[i] = d
        return 1
    return 0


@kernel("void({w}[::1], {w}[::1], int32[::1], int64)", cases=DISTANCES)
@cuda.jit(cache=True)
def copy_naive(prev, dist, changed, stamp):
    """Thread per vertex: prev <- dist, stamping changed[0] with this round's number on an improvement."""
    i = cuda.grid(1)
    if i >= prev.size:
        return
    if _improved(prev, dist, i):
        changed[0] = stamp  # benign race: every writer stores the same stamp


# --- stride: grid-stride loops over vertices ---------------------------------------------------------------
@kernel("void(int32[::1], int32[::1], {w}[::1], {w}[::1], {w}[::1], {w})", cases=DISTANCES)
@cuda.jit(cache=True)
def relax_stride(indptr, indices, weights, prev, dist, inf):
    """Grid-stride over vertices u: lower dist[v] to prev[u] + w for every out-edge u -> v."""
    u = cuda.grid(1)
    stride = cuda.gridsize(1)
    n = prev.size
    while u < n:
        du = prev[u]
        if du != inf:  # never relax from INF
            _relax_out(indptr, indices, weights, dist, u, du)
        u += stride


@kernel("void({w}[::1], {w}[::1], int32[::1], int64)", cases=DISTANCES)
@cuda.jit(cache=True)
def copy_stride(prev, dist, changed, stamp):
    """Grid-stride: prev <- dist, stamping changed[0] with this round's number on an improvement."""
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    n = prev.size
    while i < n:
        if _improved(prev, dist, i):
            changed[0] = stamp  # benign race: every writer stores the same stamp
        i += stride


# --- stride with flag --------------------------------------------------------------------------------------
@kernel("void(int32[::1], int32[::1], {w}[::1], {w}[::1], {w}[::1], uint8[::1], {w})", cases=DISTANCES)
@cuda.jit(cache=True)
def relax_flag(indptr, indices, weights, prev, dist, flag, inf):
    """Grid-stride over vertices u whose distance changed last round: relax their out-edges."""
    u = cuda.grid(1)
    stride = cuda.gridsize(1)
    n = prev.size
    while u < n:
        if flag[u] != 0:
            du = prev[u]
            if du != inf:  # a flagged vertex is finite; the guard is defensive
                _relax_out(indptr, indices, weights, dist, u, du)
        u += stride


@kernel("void({w}[::1], {w}[::1], uint8[::1], int32[::1], int64)", cases=DISTANCES)
@cuda.jit(cache=True)
def copy_flag(prev, dist, flag, changed, stamp):
    """Grid-stride: prev <- dist; flag[i] = whether i improved this round; stamp changed[0] if any did."""
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    n = prev.size
    while i < n:
        d = dist[i]
        if d < prev[i]:
            prev[i] = d
            flag[i] = 1
            changed[0] = stamp  # benign race: every writer stores the same stamp
        else:
            flag[i] = 0
        i += stride


# --- solvers -----------------------------------------------------------------------------------------------
class _RoundsSolver(Solver):
    """Host loop shared by the three variants: init, rounds of (relax, copy), flag check, parent tree."""

    device = "gpu"
    uses_flag = False
    counts_relaxations = True

    def __init__(self, graph, **params):
        """``params``: the variant's registry parameters, each named by its ``__init__``."""
        super().__init__(graph, **params)
        self.block = params["block"]
        self.fixed = params["rounds"] == "fixed"
        self.sync_each_launch = params["sync"] == "launch"
        self.dg = DeviceGraph(graph)

    def grid(self) -> int:
        """Blocks per launch of the round kernels."""
        raise NotImplementedError

    def round_kernels(self):
        """(init kernel, its arguments up to the source and inf), (relax kernel, its arguments), (copy kernel,
        its arguments up to the round stamp)."""
        raise NotImplementedError

    def upload(self):
        n, dtype = self.graph.n, self.graph.dtype
        self.dg.upload()
        self.d_prev = cuda.device_array(n, dtype=dtype)
        self.d_dist = cuda.device_array(n, dtype=dtype)
        self.d_parent = cuda.device_array(n, dtype=np.int32)
        self.d_changed = cuda.device_array(1, dtype=np.int32)
        self.d_flag = cuda.device_array(n, dtype=np.uint8) if self.uses_flag else None
        (init, self.init_args), (relax, self.relax_args), (copy, self.copy_args) = self.round_kernels()
        grid = self.grid()
        self.l_init, self.l_relax, self.l_copy = (Launch(k, grid, self.block, native=self.native)
                                                  for k in (init, relax, copy))
        self.read_changed = NativeRead(self.d_changed, native=self.native)

    def _changed_in(self, stamp) -> bool:
        """Read the round stamp (one small device-to-host copy: a synchronisation)."""
        return int(self.read_changed()[0]) == stamp

    def run(self, source):
        n, block, dg = self.graph.n, self.block, self.dg
        relax, copy, copy_args, relax_args = self.l_relax, self.l_copy, self.copy_args, self.relax_args
        self.l_init(*self.init_args, source, dg.inf)
        launches, rounds = 1, 0
        wait = self.sync_each_launch
        for r in range(1, n + 1):
            relax(*relax_args)
            if wait:
                synchronize(self.native)
            copy(*copy_args, r)  # stamps d_changed with r when a distance improved in round r
            if wait:
                synchronize(self.native)
            launches += 2
            rounds = r
            if r == n:  # the check round: any change now means a reachable negative cycle
                if self._changed_in(r):
                    raise NegativeCycleError()
                break
            if not self.fixed and not self._changed_in(r):
                break
        launches += build_parents(dg, self.d_dist, self.d_parent, source, block, native=self.native)
        counters = {"iterations": rounds, "launches": launches, "syncs": 2 * rounds if wait else 0}
        if self.counts_relaxations:
            counters["relaxations"] = rounds * self.graph.m
        return counters

    def download(self):
        return self.d_dist.copy_to_host(), self.d_parent.copy_to_host()


class NaiveSolver(_RoundsSolver):
    """bellmanford_naive: one thread per vertex, ceil(n / block) blocks."""

    def __init__(self, graph, *, block, rounds, sync, launcher):
        super().__init__(graph, block=block, rounds=rounds, sync=sync, launcher=launcher)

    def grid(self):
        return launch_grid(self.graph.n, self.block)

    def round_kernels(self):
        dg = self.dg
        return ((init_rounds, (self.d_prev, self.d_dist, self.d_changed)),
                (relax_naive, (dg.indptr, dg.indices, dg.weights, self.d_prev, self.d_dist, dg.inf)),
                (copy_naive, (self.d_prev, self.d_dist, self.d_changed)))


class StrideSolver(_RoundsSolver):
    """bellmanford_stride: grid-stride loops over a fixed grid (``grid`` blocks, 0: STRIDE_BLOCKS_PER_SM per
    multiprocessor)."""

    def __init__(self, graph, *, block, grid, rounds, sync, launcher):
        super().__init__(graph, block=block, grid=grid, rounds=rounds, sync=sync, launcher=launcher)
        self.grid_blocks = grid

    def grid(self):
        return self.grid_blocks or blocks_per_sm(STRIDE_BLOCKS_PER_SM)

    def round_kernels(self):
        dg = self.dg
        return ((init_rounds, (self.d_prev, self.d_dist, self.d_changed)),
                (relax_stride, (dg.indptr, dg.indices, dg.weights, self.d_prev, self.d_dist, dg.inf)),
                (copy_stride, (self.d_prev, self.d_dist, self.d_changed)))


class FlagSolver(StrideSolver):
    """bellmanford_flag: stride, relaxing only vertices whose distance changed in the previous round."""

    uses_flag = True
    counts_relaxations = False

    def round_kernels(self):
        dg = self.dg
        return ((init_rounds_flag, (self.d_prev, self.d_dist, self.d_flag, self.d_changed)),
                (relax_flag, (dg.indptr, dg.indices, dg.weights, self.d_prev, self.d_dist, self.d_flag, dg.inf)),
                (copy_flag, (self.d_prev, self.d_dist, self.d_flag, self.d_changed)))
