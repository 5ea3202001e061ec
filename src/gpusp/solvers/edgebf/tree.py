"""Shortest-path trees from in-edges for vertexbf_pull (reverse CSR) and edgebf_dense (matrix columns): neither
uploads a forward CSR, so thread v picks its own parent among its in-neighbours instead of
:func:`gpusp.solvers.csr.build_parents`. With every weight positive one pass takes any tight in-edge (a tight
in-edge comes from a strictly closer vertex); with zero or negative weights the tree grows level by level from the
source, one launch per level, so that a tight zero cycle cannot close a loop. edgebf_coo and vertexbf_push build theirs
from out-edges with :class:`gpusp.solvers.csr.TreeLaunches` (what build_parents runs). Each source's state owns its
tree buffers and launches them on its own stream (bellmanford_allsources with several sources in flight).
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from ..launch import Launch, NativeRead, launch_grid


@cuda.jit(cache=True)
def tree_init(level, parent, grew, source):
    """Thread per vertex: no parent; level 0 at the source, -1 (not in the tree) elsewhere; grew cleared."""
    v = cuda.grid(1)
    if v >= parent.size:
        return
    parent[v] = -1
    level[v] = 0 if v == source else -1
    if v == 0:
        grew[0] = 0


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


@cuda.jit(cache=True)
def dense_tight_parents(mat, dist, parent, inf):
    """Thread per vertex j (all weights > 0): parent = first row i != j with dist[i] + mat[i, j] == dist[j]."""
    j = cuda.grid(1)
    n = dist.size
    if j >= n:
        return
    found = -1
    dj = dist[j]
    if dj != inf:
        i = 0
        while i < n:  # column scan: neighbouring threads read neighbouring words of row i
            a = mat[i, j]
            di = dist[i]
            if i != j and a != inf and di != inf and di + a == dj:
                found = i
                break
            i += 1
    parent[j] = found


@cuda.jit(cache=True)
def dense_tree_level(mat, dist, level, parent, depth, grew, inf):
    """Thread per vertex j not yet in the tree: join under a row i on level depth over a tight entry."""
    j = cuda.grid(1)
    n = dist.size
    if j >= n or level[j] != -1:
        return
    dj = dist[j]
    if dj == inf:
        return
    i = 0
    while i < n:
        # level[i] can only move from -1 to depth + 1 in this launch, never to or from depth: no race
        if level[i] == depth:
            a = mat[i, j]
            if a != inf and dist[i] + a == dj:
                level[j] = depth + 1  # only thread j writes j's entries: no atomic needed
                parent[j] = i
                grew[0] = depth + 1
                return
        i += 1


class InEdgeTree:
    """Tree building by in-edge scans for one source's state (thread v picks its own parent): ``tight`` (one pass)
    and ``per_level`` kernels of :mod:`.tree` over ``graph_args`` (the reverse CSR, or the matrix), launched on
    ``stream``; the level buffers are its own, so trees of several sources can grow at once."""

    def __init__(self, tight, per_level, graph_args, *, n, block, stream, native, nonpositive, inf):
        grid = launch_grid(n, block)
        self.graph_args, self.nonpositive, self.inf = graph_args, nonpositive, inf
        self.tight = Launch(tight, grid, block, stream, native=native)
        if nonpositive:  # the one-pass tree needs no level array
            self.init = Launch(tree_init, grid, block, stream, native=native)
            self.per_level = Launch(per_level, grid, block, stream, native=native)
            self.level = cuda.device_array(n, dtype=np.int32)
            self.grew = cuda.device_array(1, dtype=np.int32)
            self.read_grew = NativeRead(self.grew, native=native, stream=stream)

    def build(self, dist, parent, source) -> int:
        """Fill ``parent`` from the converged ``dist``; returns launches."""
        if not self.nonpositive:
            # every weight > 0: a tight in-edge always comes from a strictly closer vertex, so any will do
            self.tight(*self.graph_args, dist, parent, self.inf)
            return 1
        # zero or negative weights: grow the tree level by level so a tight zero cycle cannot close a loop
        self.init(self.level, parent, self.grew, source)
        launches, depth = 1, 0
        while True:
            self.per_level(*self.graph_args, dist, self.level, parent, depth, self.grew, self.inf)
            launches += 1
            if self.read_grew()[0] != depth + 1:  # stamp: nobody joined level depth + 1
                return launches
            depth += 1
