"""``vertexbf_pull`` (paper 004 sec. IV-D, "incoming"): masked Bellman-Ford with a thread per vertex that takes the
minimum over its in-edges (reverse CSR) into a second distance buffer, without atomics; trees from in-edge scans.
Design: docs/solvers/vertexbf.md.
"""

from __future__ import annotations

from numba import cuda

from ..common.csr import DeviceGraph
from ..common.gate import DISTANCES, kernel
from ..common.launch import Launch, launch_grid
from ..common.maskedbf import InEdgeTree, MaskedBellmanFord


@kernel("void(int32[::1], int32[::1], {w}[::1], {w}[::1], {w}[::1], int32[::1], int32[::1], int32[::1], int64, {w}, "
        "{w})", cases=DISTANCES)
@cuda.jit(cache=True)
def pull_relax(rindptr, rindices, rweights, dist, dist_next, mask, nxt, flag, r, inf, floor):
    """Thread per vertex v: dist_next[v] = min(dist[v], dist[u] + w over in-edges from masked u); no atomics."""
    v = cuda.grid(1)
    if v >= dist.size:
        return
    dv = dist[v]
    best = dv
    prev = r - 1
    e = rindptr[v]
    end = rindptr[v + 1]
    while e < end:
        u = rindices[e]
        if mask[u] == prev:
            du = dist[u]
            if du != inf:
                cand = du + rweights[e]
                if cand < floor:
                    flag[1] = r  # shorter than any simple path: a negative cycle (stamped with the round)
                elif cand < best:
                    best = cand
        e += 1
    dist_next[v] = best  # only thread v writes v; dist (read) and dist_next (written) are distinct buffers
    if best < dv:
        nxt[v] = r
        flag[0] = r  # benign race: every writer stores r


@kernel("void(int32[::1], int32[::1], {w}[::1], {w}[::1], int32[::1], {w})", cases=DISTANCES)
@cuda.jit(cache=True)
def pull_tight_parents(rindptr, rindices, rweights, dist, parent, inf):
    """Thread per vertex v (all weights > 0): parent = first in-neighbour u != v with dist[u] + w == dist[v]."""
    v = cuda.grid(1)
    if v >= dist.size:
        return
    found = -1
    dv = dist[v]
    if dv != inf:
        e = rindptr[v]
        end = rindptr[v + 1]
        while e < end:
            u = rindices[e]
            du = dist[u]
            if u != v and du != inf and du + rweights[e] == dv:
                found = u
                break
            e += 1
    parent[v] = found  # the source has no tight in-edge when every weight is positive


@kernel("void(int32[::1], int32[::1], {w}[::1], {w}[::1], int32[::1], int32[::1], int64, int32[::1], {w})",
        cases=DISTANCES)
@cuda.jit(cache=True)
def pull_tree_level(rindptr, rindices, rweights, dist, level, parent, depth, grew, inf):
    """Thread per vertex v not yet in the tree: join under an in-neighbour on level depth over a tight edge."""
    v = cuda.grid(1)
    if v >= dist.size or level[v] != -1:
        return
    dv = dist[v]
    if dv == inf:
        return
    e = rindptr[v]
    end = rindptr[v + 1]
    while e < end:
        u = rindices[e]
        # level[u] can only move from -1 to depth + 1 in this launch, never to or from depth: no race
        if level[u] == depth and dist[u] + rweights[e] == dv:
            level[v] = depth + 1  # only thread v writes v's entries: no atomic needed
            parent[v] = u
            grew[0] = depth + 1
            return
        e += 1


class PullSolver(MaskedBellmanFord):
    """vertexbf_pull: thread per vertex takes the minimum over its in-edges into a second buffer."""

    double_buffered = True

    def __init__(self, graph, *, block, launcher):
        super().__init__(graph, block=block, launcher=launcher)
        self.rev = graph.reverse()

    def _upload_graph(self):
        self.rg = DeviceGraph(self.rev).upload()

    def _relax_launch(self, stream):
        return Launch(pull_relax, launch_grid(self.n, self.block), self.block, stream, native=self.native)

    def _tree_of(self, stream):
        rg = self.rg
        return InEdgeTree(pull_tight_parents, pull_tree_level, (rg.indptr, rg.indices, rg.weights), n=self.n,
                          block=self.block, stream=stream, native=self.native, nonpositive=self.nonpositive,
                          inf=self.inf)

    def _relax(self, lane, r, mask, nxt):
        rg = self.rg
        read, write = lane.d_dist, lane.d_other
        lane.relax(rg.indptr, rg.indices, rg.weights, read, write, mask, nxt, lane.d_flag, r, self.inf, self.floor)
        # the buffer just written holds the newest distances (also after the final quiet round)
        lane.d_dist, lane.d_other = write, read
        return 1

    def _counters(self, rounds, launches):
        return {"iterations": rounds, "relaxations": rounds * self.graph.m, "launches": launches}
