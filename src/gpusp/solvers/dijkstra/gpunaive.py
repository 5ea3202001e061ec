"""``dijkstra_gpunaive`` (paper 000): all-pairs Dijkstra with one GPU thread per source, each on its own rows of
n x n work matrices, the next vertex found by a linear scan of its row (no heap). Design: docs/solvers/dijkstra.md.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from ...errors import SolverError
from ..common.base import Solver
from ..common.dense import require_device_memory
from ..common.gate import DISTANCES, kernel
from ..common.launch import launch_grid


@kernel("void({w}[:, ::1], {w}[:, ::1], int32[:, ::1], uint8[:, ::1], {w})", cases=DISTANCES)
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

