"""``vertexbf_push`` (paper 004 sec. IV-D, "outgoing"): masked Bellman-Ford with a thread per vertex that pushes
``dist[u] + w`` along its out-edges with an atomic min when ``u`` changed last round; rounds launched from the host,
replayed as CUDA graphs or run in one cooperative kernel. Design: docs/solvers/vertexbf.md.
"""

from __future__ import annotations

from numba import cuda

from ..common.csr import DeviceGraph, TreeLaunches
from ..common.gate import DISTANCES, kernel
from ..common.launch import Launch, launch_grid
from ..common.maskedbf import MaskedBellmanFord, batch_idle, persistent_rounds


@cuda.jit(device=True)
def _push_vertex(indptr, indices, weights, dist, mask, nxt, flag, r, inf, floor, u):
    """If u changed in round r - 1, atomic-min dist[u] + w into its out-neighbours (push_relax's body)."""
    if mask[u] != r - 1:
        return
    du = dist[u]
    if du == inf:
        return
    e = indptr[u]
    end = indptr[u + 1]
    while e < end:
        v = indices[e]
        cand = du + weights[e]
        if cand < floor:
            flag[1] = r  # shorter than any simple path: a negative cycle
        elif cand < dist[v]:
            # atomic: several tails may push into v in the same round
            old = cuda.atomic.min(dist, v, cand)
            if cand < old:
                nxt[v] = r
                flag[0] = r
        e += 1


@kernel("void(int32[::1], int32[::1], {w}[::1], {w}[::1], int32[::1], int32[::1], int32[::1], int64, {w}, {w})",
        cases=DISTANCES)
@cuda.jit(cache=True)
def push_relax(indptr, indices, weights, dist, mask, nxt, flag, r, inf, floor):
    """Thread per vertex u that changed in round r - 1: atomic-min dist[u] + w into every out-neighbour."""
    u = cuda.grid(1)
    if u < dist.size:
        _push_vertex(indptr, indices, weights, dist, mask, nxt, flag, r, inf, floor, u)


@cuda.jit(device=True)
def _push_round(indptr, indices, weights, dist, mask_a, mask_b, flag, r, inf, floor, start, stride):
    """Round r of push_persistent, grid-stride over the vertices: odd rounds read mask_a and stamp mask_b, even
    rounds the other way round."""
    u = start
    while u < dist.size:
        if r % 2 == 1:
            _push_vertex(indptr, indices, weights, dist, mask_a, mask_b, flag, r, inf, floor, u)
        else:
            _push_vertex(indptr, indices, weights, dist, mask_b, mask_a, flag, r, inf, floor, u)
        u += stride


push_persistent = kernel("void(int32[::1], int32[::1], {w}[::1], {w}[::1], int32[::1], int32[::1], int32[::1], "
                         "{w}, {w}, int64, int64[::1])", cases=DISTANCES)(
    persistent_rounds("push_persistent", _push_round, "Every round of push_relax in one cooperative "
                      "launch (grid-stride over vertices); out[0] = rounds."))


@kernel("void(int32[::1], int32[::1], {w}[::1], {w}[::1], int32[::1], int32[::1], int32[::1], int64[::1], int64, "
        "{w}, {w})", cases=DISTANCES)
@cuda.jit(cache=True)
def push_batched(indptr, indices, weights, dist, mask, nxt, flag, base, offset, inf, floor):
    """push_relax for round base[0] + offset, exiting at once after convergence (a CUDA-graph node)."""
    r = base[0] + offset
    u = cuda.grid(1)
    if u < dist.size and not batch_idle(flag, r, dist.size):
        _push_vertex(indptr, indices, weights, dist, mask, nxt, flag, r, inf, floor, u)


class PushSolver(MaskedBellmanFord):
    """vertexbf_push: thread per changed vertex pushes along its out-edges with atomic min."""

    def __init__(self, graph, *, block, launch, launcher):
        super().__init__(graph, block=block, launch=launch, launcher=launcher)
        self.launch = launch

    def _upload_graph(self):
        self.dg = DeviceGraph(self.graph).upload()

    def _relax_launch(self, stream):
        return Launch(push_relax, launch_grid(self.n, self.block), self.block, stream, native=self.native)

    def _tree_of(self, stream):
        return TreeLaunches(self.dg, block=self.block, stream=stream, native=self.native)

    def _relax(self, lane, r, mask, nxt):
        dg = self.dg
        lane.relax(dg.indptr, dg.indices, dg.weights, lane.d_dist, mask, nxt, lane.d_flag, r, self.inf, self.floor)
        return 1

    def _device_rounds(self):
        dg = self.dg
        return push_persistent, push_batched, launch_grid(self.n, self.block), (dg.indptr, dg.indices, dg.weights)
