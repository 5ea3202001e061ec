"""Shortest-path trees from in-edges for vertexbf_pull (reverse CSR) and edgebf_dense (matrix columns): neither
uploads a forward CSR, so thread v picks its own parent among its in-neighbours instead of
:func:`gpusp.solvers.csr.build_parents`. With every weight positive one pass takes any tight in-edge (a tight
in-edge comes from a strictly closer vertex); with zero or negative weights the tree grows level by level from the
source, one launch per level, so that a tight zero cycle cannot close a loop.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from ..launch import launch_grid


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
    """Tree building by in-edge scans (thread v picks its own parent), mixed into the pull and dense solvers."""

    def _tree_kernels(self):
        """(one-pass kernel, level kernel, graph arguments)."""
        raise NotImplementedError

    def _tree(self, source):
        grid = launch_grid(self.n, self.block)
        tight, per_level, args = self._tree_kernels()
        if not self.nonpositive:
            # every weight > 0: a tight in-edge always comes from a strictly closer vertex, so any will do
            tight[grid, self.block](*args, self.d_dist, self.d_parent, self.inf)
            return 1
        # zero or negative weights: grow the tree level by level so a tight zero cycle cannot close a loop
        tree_init[grid, self.block](self.d_level, self.d_parent, self.d_grew, source)
        launches, depth = 1, 0
        while True:
            per_level[grid, self.block](*args, self.d_dist, self.d_level, self.d_parent, depth, self.d_grew,
                                        self.inf)
            launches += 1
            self.d_grew.copy_to_host(self.h_grew)
            if self.h_grew[0] != depth + 1:  # stamp: nobody joined level depth + 1
                return launches
            depth += 1

    def _tree_buffers(self):
        if not self.nonpositive:  # the one-pass tree needs no level array
            return
        self.d_level = cuda.device_array(self.n, dtype=np.int32)
        self.d_grew = cuda.device_array(1, dtype=np.int32)
        self.h_grew = cuda.pinned_array(1, dtype=np.int32)
