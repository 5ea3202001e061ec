"""``phast_gpu core_search=device``: the hierarchy's core searched on the device by ``deltastep_gpu`` instead of by the
upward Dijkstra on the host (CH-core routing with the core's search on the GPU).

The core graph (the core's vertices with the arcs and shortcuts among them) gets one more vertex, a virtual source
whose arcs are rewritten for each query to the core vertices its upward search reached (the entries), weighted by
their upward distances; ``deltastep_gpu`` from that vertex gives every core vertex its distance, and :func:`_place`
writes them into the sweep's search-space arrays beside the upward search's vertices outside the core. Design and
floor: docs/solvers/phast.md ("Core on the device").
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda

from ...data.graph import INF32, Graph
from .. import registry
from ..common.gate import DISTANCES, kernel

PLACE_BLOCK = 256


@kernel("void(int32[::1], {c}[::1], {c}, {w}, int64, int32, int32[::1], {w}[::1], int32[::1])",
        cases=tuple({**d, "c": c} for d in DISTANCES for c in ("int32", "int64")))
@functools.cache
def _place(w: str, c: str):
    """The kernel that writes the core's distances (type ``c``) as search-space entries of type ``w``."""

    @cuda.jit
    def place(core_new, core_dist, core_inf, inf, offset, row, space_v, space_d, space_row):
        """Entry offset + i: core vertex i (its sweep id), its distance (the core's INF as the sweep's), the row."""
        for i in range(cuda.grid(1), core_new.size, cuda.gridsize(1)):
            d = core_dist[i]
            space_v[offset + i] = core_new[i]
            space_d[offset + i] = inf if d >= core_inf else d
            space_row[offset + i] = row

    return place


class CoreSearch:
    """The core of hierarchy ``h`` of ``graph`` (distance type ``graph.dtype``) as a graph of its own on the device,
    searched from a query's entries by ``deltastep_gpu`` (``block`` threads a block, distances alone)."""

    def __init__(self, h, graph, block: int):
        n, c = h.n, h.core
        self.in_core = h.rank >= n - c  # the core holds the top ranks
        self.core_new = np.flatnonzero(self.in_core).astype(np.int32)  # core index -> sweep id
        index = np.cumsum(self.in_core) - 1  # sweep id -> core index
        tails = np.repeat(np.arange(n), np.diff(h.up_ptr))
        both = self.in_core[tails] & self.in_core[h.up_head]  # the core's arcs run both ways among the up arcs
        order = np.argsort(index[tails[both]], kind="stable")
        heads, weights = index[h.up_head[both]][order], h.up_w[both][order]
        self.arcs = int(both.sum())
        # the virtual source c has room for an arc to every core vertex; its range ends at the query's entries (the
        # last vertex's end offset is rewritten), unused slots are self-loops; a weight of INF32 there makes the
        # core's distances int64 wherever the graph's are
        self.slots = c
        pad = np.zeros(c, dtype=np.int64)
        if graph.dtype == np.int64 and c:
            pad[0] = INF32
        indptr = np.concatenate([np.searchsorted(index[tails[both]][order], np.arange(c + 1)), [self.arcs + c]])
        self.graph = Graph(c + 1, indptr, np.concatenate([heads, np.full(c, c)]),
                           np.concatenate([weights, pad]), name=f"{graph.name}-core")
        # the hop landmarks that set deltastep_gpu's lanes and delta are the core's own: from the virtual source, the
        # vertex of largest out-degree, a breadth-first search sees its self-loops alone (a depth of 0)
        depth, hops_a, hops_b = Graph(c, indptr[:c + 1], heads, weights).hop_landmarks()
        self.graph._landmarks = (depth, np.append(hops_a, -1), np.append(hops_b, -1))
        self.solver = registry.get("deltastep_gpu").build(self.graph, block=block, launch="direct", paths=False)
        self.place = _place(graph.dtype.name, self.graph.dtype.name)
        self.inf, self.core_inf = graph.dtype.type(graph.inf), self.graph.dtype.type(self.graph.inf)

    def upload(self):
        self.solver.upload()
        self.d_core_new = cuda.to_device(self.core_new)

    def search(self, entries: np.ndarray, dists: np.ndarray) -> dict:
        """Distances from the virtual source whose arcs go to core vertices ``entries`` (sweep ids) with ``dists``;
        the counters of the core search (read back at once: the next query rewrites the arcs)."""
        c, dg = self.graph.n - 1, self.solver.dg
        index = np.searchsorted(self.core_new, entries).astype(np.int32)
        end = self.arcs + index.size
        dg.indices[self.arcs:end].copy_to_device(index)
        dg.weights[self.arcs:end].copy_to_device(dists.astype(self.graph.dtype))
        dg.indptr[c + 1:c + 2].copy_to_device(np.array([end], dtype=self.graph.indptr.dtype))
        ran = self.solver.run(c)
        return dict(ran() if callable(ran) else ran)

    def place_into(self, space_v, space_d, space_row, offset: int, row: int) -> None:
        """The core's distances of the last search as entries ``offset`` .. of the search-space arrays."""
        blocks = max(1, min(1024, -(-self.core_new.size // PLACE_BLOCK)))
        self.place[blocks, PLACE_BLOCK](self.d_core_new, self.solver.d_dist, self.core_inf, self.inf,
                                        np.int64(offset), np.int32(row), space_v, space_d, space_row)
