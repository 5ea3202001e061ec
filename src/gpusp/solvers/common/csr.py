"""The graph on the device as CSR arrays (:class:`DeviceGraph`), and the shortest-path tree of converged distances
grown over its tight arcs (:func:`build_parents`: one pass when every weight is positive, level by level otherwise).
Design: docs/solvers/common.md.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from ...data.graph import Graph
from .gate import OFFSETS, kernel
from .launch import Launch, NativeRead, fill, launch_grid, put


@kernel("void({o}[::1], int32[::1], {w}[::1], {w}[::1], int32[::1], {w})", cases=OFFSETS)
@cuda.jit(cache=True)
def tight_parents(indptr, indices, weights, dist, parent, inf):
    """Thread per vertex u: become the parent of each out-neighbour reached over a tight edge."""
    u = cuda.grid(1)
    if u >= dist.size:
        return
    du = dist[u]
    if du == inf:
        return
    for e in range(indptr[u], indptr[u + 1]):
        v = indices[e]
        if v != u and du + weights[e] == dist[v]:
            parent[v] = u  # benign race: every writer holds a tight edge, any one is a valid parent


@kernel("void({o}[::1], int32[::1], {w}[::1], {w}[::1], int32[::1], int32[::1], int64, int32[::1])",
        cases=OFFSETS)
@cuda.jit(cache=True)
def tight_tree_level(indptr, indices, weights, dist, level, parent, depth, grew):
    """Thread per vertex u on the frontier (level == depth): claim untreed tight out-neighbours."""
    u = cuda.grid(1)
    if u >= dist.size or level[u] != depth:
        return
    du = dist[u]
    for e in range(indptr[u], indptr[u + 1]):
        v = indices[e]
        if du + weights[e] == dist[v] and level[v] == -1:
            # atomic: only the first frontier vertex to reach v becomes its parent
            if cuda.atomic.cas(level, v, -1, depth + 1) == -1:
                parent[v] = u
                grew[0] = 1


class DeviceGraph:
    """The CSR arrays of a graph on the device, uploaded once."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self.n = graph.n
        self.m = graph.m
        self.inf = graph.dtype.type(graph.inf)
        self.nonpositive = bool(graph.m and int(graph.weights.min()) <= 0)
        self.indptr = self.indices = self.weights = None
        self.trees = {}  # build_parents' prepared launches per (block, native)

    def upload(self):
        self.indptr = cuda.to_device(self.graph.indptr)
        self.indices = cuda.to_device(self.graph.indices)
        self.weights = cuda.to_device(self.graph.weights)
        return self


def build_parents(dg: DeviceGraph, dist, parent, source: int, block: int = 256, *, native: bool = True) -> int:
    """Fill ``parent`` (device, int32) with a shortest-path tree of ``dist``; returns launches used. The launches (and
    the level arrays of the zero-weight case) are built once per graph, block and launcher."""
    key = (block, native)
    tree = dg.trees.get(key)
    if tree is None:
        tree = dg.trees[key] = TreeLaunches(dg, block=block, native=native)
    return tree.build(dist, parent, source)


class TreeLaunches:
    """build_parents' launches for one device graph, prepared once (a per-level loop then costs the driver's launch),
    on ``stream`` with level buffers of their own: several sources on streams of their own can grow trees at once."""

    def __init__(self, dg: DeviceGraph, *, block: int, native: bool, stream=0):
        self.dg = dg
        grid = launch_grid(dg.n, block)
        self.fill = Launch(fill, grid, block, stream, native=native)
        self.put = Launch(put, 1, 1, stream, native=native)
        self.tight = Launch(tight_parents, grid, block, stream, native=native)
        self.level_step = Launch(tight_tree_level, grid, block, stream, native=native)
        if dg.nonpositive:
            self.level = cuda.device_array(dg.n, dtype=np.int32)
            self.grew = cuda.device_array(1, dtype=np.int32)
            self.read_grew = NativeRead(self.grew, native=native, stream=stream)

    def build(self, dist, parent, source: int) -> int:
        """Fill ``parent`` from the converged ``dist``; returns launches."""
        dg = self.dg
        self.fill(parent, -1)
        if not dg.nonpositive:
            self.tight(dg.indptr, dg.indices, dg.weights, dist, parent, dg.inf)
            self.put(parent, source, -1)
            return 3
        self.fill(self.level, -1)
        self.put(self.level, source, 0)
        depth, launches = 0, 3
        while True:
            self.put(self.grew, 0, 0)
            self.level_step(dg.indptr, dg.indices, dg.weights, dist, self.level, parent, depth, self.grew)
            launches += 2
            if int(self.read_grew()[0]) == 0:
                return launches
            depth += 1

