"""All-pairs Dijkstra on the GPU, one thread per source (paper 000, Bodra, ``dijkstraNaive``).

Algorithm. The graph is an n x n adjacency matrix ``adj`` (``Graph.to_dense()``: lightest parallel
edge, INF for no edge), uploaded once and only read. Thread ``s`` runs Dijkstra from source ``s`` on its
own row of three n x n work matrices: ``dist[s, :]``, ``parent[s, :]`` and ``visited[s, :]`` (one byte
per vertex). A heap per thread would not fit in shared memory, so the next vertex is found by a linear
scan for the unvisited vertex of smallest finite distance (O(n) per step); it is marked visited and its
matrix row is scanned to relax every unvisited out-neighbour, recording ``parent[s, v] = u`` on a strict
improvement. The thread stops when no unvisited vertex is reachable. A vertex's parent is always visited
before it, so the parent rows are trees even with zero-weight cycles. Each thread resets its own rows, so
``run`` can be repeated without host work.

Variant: ``dijkstra_gpunaive`` (``block`` threads per block, ``ceil(n / block)`` blocks, one launch).
Non-negative weights only (the registry refuses negative ones; the solver checks again).

Layout. As in the paper the work matrices are source-major (``dist[s, v]``): thread s walks its own row,
so neighbouring threads of a warp touch addresses n elements apart (no coalescing). A vertex-major layout
(``dist[v, s]``) would coalesce them; it is not what the paper measured and is left out.

Counters: ``iterations`` = ``launches`` = 1 (the whole APSP is one launch); relaxations are not counted
(they depend on how many vertices each source reaches and would need a device counter).

Complexity: O(n^3) work (n sources x n extract-min steps x O(n) scans), O(n^2) time per thread, n
threads; memory ``(2w + 5) n^2`` bytes (adjacency, distances, parents, visited flags).

Paper: P. Bodra, GPU implementations of Bellman-Ford, Dijkstra and Floyd-Warshall (seed 000), section 2.2.1.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from ...errors import SolverError
from ..common.base import Solver
from ..common.dense import DTYPES, require_device_memory
from ..common.launch import launch_grid


@cuda.jit(cache=True)
def dijkstra_rows(adj, dist, parent, visited, inf):
    """Thread per source s: Dijkstra over the adjacency matrix with a linear extract-min, on row s."""
    s = cuda.grid(1)
    n = adj.shape[0]
    if s >= n:
        return
    for v in range(n):
        dist[s, v] = inf
        parent[s, v] = -1
        visited[s, v] = 0
    dist[s, s] = 0
    for _ in range(n):
        u = -1
        best = inf
        for v in range(n):  # extract-min: the unvisited vertex of smallest finite distance
            dv = dist[s, v]
            if visited[s, v] == 0 and dv < best:
                best = dv
                u = v
        if u < 0:  # every vertex still unvisited is unreachable
            return
        visited[s, u] = 1
        for v in range(n):
            w = adj[u, v]
            if w != inf and visited[s, v] == 0:
                nd = best + w
                if nd < dist[s, v]:
                    dist[s, v] = nd
                    parent[s, v] = u


class NaiveApspSolver(Solver):
    """dijkstra_gpunaive: a thread per source runs Dijkstra with a linear extract-min on the adjacency matrix."""

    device = "gpu"

    def __init__(self, graph, *, block):
        super().__init__(graph, block=block)
        self.block = block
        if graph.has_negative_weights:
            raise SolverError("dijkstra_gpunaive does not accept negative weights")
        self.n = graph.n
        self.inf = graph.dtype.type(graph.inf)
        self.adj = self.dist_d = self.parent_d = self.visited = None

    def upload(self):
        n, w = self.n, self.graph.dtype.itemsize
        require_device_memory("dijkstra_gpunaive", n, (2 * w + 5) * n * n, "(2w+5) n^2 bytes")
        self.adj = cuda.to_device(self.graph.to_dense())
        self.dist_d = cuda.device_array((n, n), dtype=self.graph.dtype)
        self.parent_d = cuda.device_array((n, n), dtype=np.int32)
        self.visited = cuda.device_array((n, n), dtype=np.uint8)

    def run(self, source=None):
        if self.n == 0:
            return {"iterations": 0, "launches": 0}
        dijkstra_rows[launch_grid(self.n, self.block), self.block](self.adj, self.dist_d, self.parent_d, self.visited,
                                                         self.inf)
        return {"iterations": 1, "launches": 1}

    def download(self):
        return self.dist_d.copy_to_host(), self.parent_d.copy_to_host()


def compile_targets():
    """(label, kernel, signature) for int32 and int64 distances."""
    return [(f"dijkstra_rows[{w}]", dijkstra_rows,
             f"void({w}[:, ::1], {w}[:, ::1], int32[:, ::1], uint8[:, ::1], {w})") for w in DTYPES]
