"""blockedfw_fast's solver class (:class:`FastSolver`) and its offline compile-gate targets."""

from __future__ import annotations

import numpy as np
from numba import cuda

from ....data.graph import path_bound
from ....errors import SolverError
from ...common.base import Solver
from ...common.dense import (apsp_tight_parents, check_diagonal, hop_tiebreak, padded_matrices, raise_on_negative_cycle,
                     require_device_memory, undo_tiebreak)
from ...common.launch import TARGET, capture_graph, cooperative_grid
from .kernels import kernels
from .variants import (AUTO_LAUNCH, MEMORY, check_persistent, check_variant, kernel_kind, phase2_mode,
                       resolve_variant, tile_shape, useful_first)


class FastSolver(Solver):
    """blockedfw_fast: tile / regblock / arith / paths / kernel variant / launch / pivots / phase2 as in the registry
    (docs/solvers/blockedfw.md). Tiles below 16 are accepted here for the simulator tests (the registry offers 16 ..
    128)."""

    device = "gpu"

    def __init__(self, graph, *, tile, regblock, arith, paths, p12, inner, unroll, stage, launch, pivots, phase2):
        super().__init__(graph, tile=tile, regblock=regblock, arith=arith, paths=paths, p12=p12, inner=inner,
                         unroll=unroll, stage=stage, launch=launch, pivots=pivots, phase2=phase2)
        self.n = n = graph.n
        self.paths = bool(paths)
        self.T, self.R = tile_shape(n, self.paths, tile, regblock)
        self.launch = AUTO_LAUNCH if launch == "auto" else launch
        self.r = max(1, -(-n // self.T))
        self.n_pad = self.r * self.T
        self.order, self.useful = useful_first(graph)
        self.rounds = -(-self.useful // self.T)  # rounds of pivots over the tiles holding every useful vertex
        if pivots == "all" or (pivots == "auto" and self.rounds == self.r):
            self.order, self.rounds = None, self.r  # every vertex a pivot, in the graph's own order
        self.rank = None if self.order is None else np.argsort(self.order)  # vertex v -> its renumbered id
        # the hop tie-break (zero-weight cycles) on the graph's own ids: the same weights and dtype after renumbering
        self.tie = hop_tiebreak(graph)
        self.scale, self.dtype, self.inf = self.tie.scale, self.tie.dtype, self.tie.inf
        w = self.tie.weights
        self.negative = bool(w.size and int(w.min()) < 0)
        bound = path_bound(n, w, graph.indptr) if w.size else 0
        self.kind = kernel_kind(arith, self.negative, self.dtype == np.int32, bound, self.T, self.paths)
        self.variant = resolve_variant(self.T, self.R, self.kind, self.paths, launch, p12, inner, unroll, stage)
        itemsize = 8 if self.kind == "gen64" else 4
        check_variant(self.T, self.R, itemsize, **self.variant)
        self.phase2 = phase2_mode(self.kind, launch, phase2)
        if launch == "persistent" and self.variant["p12"] == "shared":
            raise SolverError("p12=shared runs with host launches only (the persistent kernel would hold both "
                              "phases' shared memory)")
        if self.launch == "persistent":
            check_persistent(self.T, itemsize, self.variant)
        self.d = self.p = self.d0 = self.p0 = self.flag = None
        self.launches = 0
        self.grid = 0
        self.graph_exec = self.core_stream = None

    def host_matrices(self):
        """The padded initial matrices; with pruned pivots of the graph renumbered useful vertices first."""
        graph = self.graph if self.order is None else self.graph.relabel(self.rank)
        return padded_matrices(graph, self.n_pad, self.tie)

    def graph_ids(self, matrix, values: bool = False):
        """An n x n matrix in the graph's vertex ids (rows and columns; with ``values`` also its entries, vertex ids
        or -1) from the renumbered one the device holds when pivots are pruned."""
        if self.order is None:
            return matrix
        matrix = matrix[np.ix_(self.rank, self.rank)]
        if values:  # -1 indexes the appended -1
            matrix = np.append(self.order, -1).astype(np.int32)[matrix]
        return matrix

    def device_dtype(self):
        return np.float32 if self.kind == "float32" else self.dtype

    def upload(self):
        if self.n == 0:
            return
        w = np.dtype(self.device_dtype()).itemsize
        shape = dict(tile=self.T, regblock=self.R, paths=self.paths)
        require_device_memory("blockedfw_fast", self.n, MEMORY(self.n, self.graph.m, shape, w),
                              MEMORY.formula())
        d0, p0 = self.host_matrices()
        if self.kind == "float32":
            d0 = np.where(d0 == self.inf, np.float32(np.inf), d0).astype(np.float32)
        if not self.paths:
            p0 = np.full((1, 1), -1, dtype=np.int32)
        self.d0 = cuda.to_device(d0)
        self.p0 = cuda.to_device(p0)
        self.d = cuda.device_array_like(d0)
        self.p = cuda.device_array_like(p0)
        self.flag = cuda.device_array(1, dtype=np.int32)
        self.ks = ks = kernels(self.T, self.R, self.kind, self.paths, **self.variant)
        TR = self.T // self.R
        self.block = (TR, TR)
        r = self.r
        self.use_persistent = self.launch == "persistent"
        if self.use_persistent:  # as many blocks as a phase has tiles, capped at the co-resident maximum
            self.grid = cooperative_grid(ks["persistent"], (self.d, self.p, r, self.rounds), self.block,
                                         max(1, (r - 1) ** 2, 2 * (r - 1)))
            self.k_persistent = ks["persistent"][self.grid, self.block]

    def reset(self):
        self.d.copy_to_device(self.d0)
        self.p.copy_to_device(self.p0)

    def run(self, source=None):
        counters = {"iterations": self.rounds, "relaxations": self.n_pad ** 2 * self.rounds * self.T,
                    "pivots": self.useful if self.order is not None else self.n, "hop_tiebreak": bool(self.scale),
                    "matrix_dtype": str(np.dtype(self.device_dtype())), "arith": self.kind, "tile": self.T,
                    "regblock": self.R, "paths": self.paths, "phase2": self.phase2, **self.variant}
        if self.n == 0:
            return dict(counters, launches=0)
        self.reset()
        d, p, r = self.d, self.p, self.r
        if self.rounds == 0:  # no vertex can be on a path's inside: the arcs are the answer
            launches = 0
        elif self.use_persistent:
            self.k_persistent(d, p, r, self.rounds)
            launches = 1
        elif self.graph_exec is not None:
            self.graph_exec.launch(self.core_stream)
            launches = 1
        else:
            self.issue_rounds()
            launches = 3 * self.rounds - 2 * (r == 1)
            if self.launch == "graph" and TARGET.gpu:  # kernels compiled by the run above
                self.graph_exec, self.core_stream = capture_graph(self.issue_rounds)
        if self.negative:
            launches += check_diagonal(d, self.n, self.flag)
            raise_on_negative_cycle(self.flag, self.n, ids=self.order)
        else:
            cuda.synchronize()
        counters.update(launches=launches, persistent=self.use_persistent, grid=self.grid,
                        graph=launches == 1 and not self.use_persistent)
        return counters

    def issue_rounds(self, stream=0):
        """Launch phases 1, 2 and 3 of every round of pivots on ``stream`` (the host loop, or the graph's body)."""
        d, p, r, ks, block = self.d, self.p, self.r, self.ks, self.block
        k1 = ks["k12"][1, block, stream]
        k2 = ks["k2" if self.phase2 == "product" else "k12"][max(1, 2 * (r - 1)), block, stream]
        k3 = ks["k3"][max(1, (r - 1) ** 2), block, stream]
        for t in range(self.rounds):
            k1(d, p, t, r, 1)
            if r > 1:
                if self.phase2 == "product":
                    k2(d, p, t, r)
                else:
                    k2(d, p, t, r, 2)
                k3(d, p, t, r)

    def download(self):
        if self.n == 0:
            return np.zeros((0, 0), dtype=self.graph.dtype), np.zeros((0, 0), dtype=np.int32)
        dist, undivided = self.download_distances(undivided_too=True)
        if self.paths:
            parent = np.ascontiguousarray(self.graph_ids(self.p.copy_to_host()[:self.n, :self.n], values=True))
        else:  # nothing recorded on the device: derive parents on the host (untimed) for validation
            parent = apsp_tight_parents(self.graph, undivided, self.inf, self.scale)
        return dist, parent

    def download_distances(self, undivided_too: bool = False):
        """The distance matrix alone (no O(n m) host-derived parents when paths are off); with ``undivided_too``
        also the device values before the hop tie-break is divided out."""
        raw = self.graph_ids(self.d.copy_to_host()[:self.n, :self.n])
        if self.kind == "float32":  # exact integers below 2^24, infinity for unreachable
            undivided = np.where(np.isinf(raw), self.inf, np.where(np.isinf(raw), 0, raw).astype(np.int64))
        else:
            undivided = raw.astype(np.int64)
        dist = undo_tiebreak(undivided, self.tie, self.graph)
        return (dist, undivided) if undivided_too else dist

