"""``edgebf_coo`` (paper 004 sec. IV-B/C): masked Bellman-Ford with a thread per edge (``edges_per_thread``
edges each, grid-strided so a warp reads consecutive edges) on COO arrays, rounds launched from the host, replayed as
CUDA graphs or run in one cooperative kernel. Design: docs/solvers/edgebf.md.
"""

from __future__ import annotations

from numba import cuda

from ..common.csr import DeviceGraph, TreeLaunches
from ..common.gate import DISTANCES, kernel
from ..common.launch import Launch, launch_grid
from ..common.maskedbf import MaskedBellmanFord, batch_idle, persistent_rounds


@cuda.jit(device=True)
def _coo_edges(src, dst, weights, dist, mask, nxt, flag, r, inf, floor, e, stride):
    """Relax edges e, e + stride, ... whose source changed in round r - 1 (the body of coo_relax)."""
    m = src.size
    prev = r - 1
    while e < m:
        u = src[e]
        if mask[u] == prev:
            du = dist[u]
            if du != inf:
                cand = du + weights[e]
                v = dst[e]
                if cand < floor:
                    flag[1] = r  # shorter than any simple path: a negative cycle (benign race, all write r)
                elif cand < dist[v]:
                    # atomic: concurrent tails may lower v; the old value says whether this one won
                    old = cuda.atomic.min(dist, v, cand)
                    if cand < old:
                        nxt[v] = r  # benign races: every writer stores the same round stamp
                        flag[0] = r
        e += stride


@kernel("void(int32[::1], int32[::1], {w}[::1], {w}[::1], int32[::1], int32[::1], int32[::1], int64, {w}, {w})",
        cases=DISTANCES)
@cuda.jit(cache=True)
def coo_relax(src, dst, weights, dist, mask, nxt, flag, r, inf, floor):
    """Thread t relaxes edges t, t + T, ... (T threads in all) whose source changed in round r - 1."""
    _coo_edges(src, dst, weights, dist, mask, nxt, flag, r, inf, floor, cuda.grid(1), cuda.gridsize(1))


@cuda.jit(device=True)
def _coo_round(src, dst, weights, dist, mask_a, mask_b, flag, r, inf, floor, start, stride):
    """Round r of coo_persistent: edges start, start + stride, ...; the masks swap roles between odd and even
    rounds."""
    if r % 2 == 1:
        _coo_edges(src, dst, weights, dist, mask_a, mask_b, flag, r, inf, floor, start, stride)
    else:
        _coo_edges(src, dst, weights, dist, mask_b, mask_a, flag, r, inf, floor, start, stride)


coo_persistent = kernel("void(int32[::1], int32[::1], {w}[::1], {w}[::1], int32[::1], int32[::1], int32[::1], "
                        "{w}, {w}, int64, int64[::1])", cases=DISTANCES)(
    persistent_rounds("coo_persistent", _coo_round, "Every round of coo_relax in one cooperative launch; "
                      "out[0] = rounds."))


@kernel("void(int32[::1], int32[::1], {w}[::1], {w}[::1], int32[::1], int32[::1], int32[::1], int64[::1], int64, "
        "{w}, {w})", cases=DISTANCES)
@cuda.jit(cache=True)
def coo_batched(src, dst, weights, dist, mask, nxt, flag, base, offset, inf, floor):
    """coo_relax for round base[0] + offset, exiting at once after convergence (a CUDA-graph node)."""
    r = base[0] + offset
    if not batch_idle(flag, r, dist.size):
        _coo_edges(src, dst, weights, dist, mask, nxt, flag, r, inf, floor, cuda.grid(1), cuda.gridsize(1))


class CooSolver(MaskedBellmanFord):
    """edgebf_coo: thread per edge (k edges per thread, grid-strided) on COO arrays, atomic min."""

    def __init__(self, graph, *, block, edges_per_thread, launch, launcher):
        super().__init__(graph, block=block, edges_per_thread=edges_per_thread, launch=launch, launcher=launcher)
        self.launch = launch
        self.k = edges_per_thread
        self.src = graph.coo()[0]
        # enough blocks that the grid-stride loop gives each thread about k edges
        self.grid = launch_grid(-(-graph.m // self.k), self.block)

    def _upload_graph(self):
        self.dg = DeviceGraph(self.graph).upload()
        self.d_src = cuda.to_device(self.src)

    def _relax_launch(self, stream):
        return Launch(coo_relax, self.grid, self.block, stream, native=self.native)

    def _tree_of(self, stream):
        return TreeLaunches(self.dg, block=self.block, stream=stream, native=self.native)

    def _relax(self, lane, r, mask, nxt):
        dg = self.dg
        lane.relax(self.d_src, dg.indices, dg.weights, lane.d_dist, mask, nxt, lane.d_flag, r, self.inf, self.floor)
        return 1

    def _device_rounds(self):
        dg = self.dg
        return coo_persistent, coo_batched, self.grid, (self.d_src, dg.indices, dg.weights)

    def _counters(self, rounds, launches):
        return {"iterations": rounds, "relaxations": rounds * self.graph.m, "launches": launches}
