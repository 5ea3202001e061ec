"""``harish_scattercheck``: Harish and Narayanan's SSSP as paper 001 (Okuyama, Ino & Hagihara, sec. 4) restates it:
per round a scatter kernel relaxes the masked vertices' out-arcs into an update array and a check kernel commits the
lowered costs, re-masks their vertices and stamps the flag the host reads. Design: docs/solvers/harish.md.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from ...errors import NegativeCycleError
from ..common.base import Solver
from ..common.csr import DeviceGraph, build_parents
from ..common.gate import DISTANCES, kernel
from ..common.launch import Launch, NativeRead, launch_grid


@kernel("void(uint8[::1], {w}[::1], {w}[::1], int32[::1], int64, {w})", cases=DISTANCES)
@cuda.jit(cache=True)
def reset(Ma, Ca, Ua, flag, source, inf):
    """Thread per vertex: cost INF (0 at the source) in Ca and Ua, only the source masked, flag cleared."""
    v = cuda.grid(1)
    if v >= Ca.size:
        return
    if v == source:
        Ca[v] = 0
        Ua[v] = 0
        Ma[v] = 1
    else:
        Ca[v] = inf
        Ua[v] = inf
        Ma[v] = 0
    if v == 0:
        flag[0] = 0


@kernel("void(int32[::1], int32[::1], {w}[::1], uint8[::1], {w}[::1], {w}[::1], {w})", cases=DISTANCES)
@cuda.jit(cache=True)
def scatter(indptr, indices, weights, Ma, Ca, Ua, inf):
    """Thread per vertex v: if masked, unmask it and atomic-min Ca[v] + w into Ua of each out-neighbour."""
    v = cuda.grid(1)
    if v >= Ca.size or Ma[v] == 0:
        return
    Ma[v] = 0
    cv = Ca[v]
    if cv == inf:
        return
    e = indptr[v]
    end = indptr[v + 1]
    while e < end:
        n = indices[e]
        cand = cv + weights[e]
        if cand < Ua[n]:  # plain read first: most candidates lose, and they then cost no atomic
            # atomic: several masked vertices may lower Ua[n] in the same launch
            cuda.atomic.min(Ua, n, cand)
        e += 1


@kernel("void(uint8[::1], {w}[::1], {w}[::1], int32[::1], int64)", cases=DISTANCES)
@cuda.jit(cache=True)
def check(Ma, Ca, Ua, flag, r):
    """Thread per vertex v: commit Ua[v] < Ca[v] into Ca, re-mask v and stamp the flag with round r."""
    v = cuda.grid(1)
    if v >= Ca.size:
        return
    uv = Ua[v]
    if uv < Ca[v]:
        Ca[v] = uv  # Ua[v] == Ca[v] again (the paper's Ua[v] := Ca[v])
        Ma[v] = 1
        flag[0] = r  # benign race: every writer stores r


class ScatterCheckSolver(Solver):
    """harish_scattercheck: scatter kernel + check kernel per round, host loop on a flag."""

    device = "gpu"

    def __init__(self, graph, *, block, launcher):
        super().__init__(graph, block=block, launcher=launcher)
        self.block = block
        self.n = graph.n
        self.inf = graph.dtype.type(graph.inf)

    def upload(self):
        n, dtype, block = self.n, self.graph.dtype, self.block
        self.dg = DeviceGraph(self.graph).upload()
        self.d_mask = cuda.device_array(n, dtype=np.uint8)
        self.d_cost = cuda.device_array(n, dtype=dtype)
        self.d_update = cuda.device_array(n, dtype=dtype)
        self.d_parent = cuda.device_array(n, dtype=np.int32)
        self.d_flag = cuda.device_array(1, dtype=np.int32)
        grid = launch_grid(n, block)
        self.l_reset, self.l_scatter, self.l_check = (Launch(k, grid, block, native=self.native)
                                                      for k in (reset, scatter, check))
        self.read_flag = NativeRead(self.d_flag, native=self.native)

    def run(self, source):
        dg = self.dg
        Ma, Ca, Ua, flag, inf = self.d_mask, self.d_cost, self.d_update, self.d_flag, self.inf
        scatter_, check_, read_flag = self.l_scatter, self.l_check, self.read_flag
        self.l_reset(Ma, Ca, Ua, flag, source, inf)
        r, launches = 0, 1
        while True:
            r += 1
            scatter_(dg.indptr, dg.indices, dg.weights, Ma, Ca, Ua, inf)
            check_(Ma, Ca, Ua, flag, r)
            launches += 2
            if read_flag()[0] != r:  # the round's only synchronisation
                break
            if r >= self.n:  # only reachable with negative weights, which the registry refuses
                raise NegativeCycleError(f"negative-weight cycle reachable from the source (change in round {r})")
        launches += build_parents(dg, Ca, self.d_parent, source, self.block, native=self.native)
        return {"iterations": r, "launches": launches}

    def download(self):
        return self.d_cost.copy_to_host(), self.d_parent.copy_to_host()
