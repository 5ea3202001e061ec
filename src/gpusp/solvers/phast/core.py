"""``phast_gpu core_search=device``: the hierarchy's core searched on the device by ``deltastep_gpu`` instead of by the
upward Dijkstra on the host (CH-core routing with the core's search on the GPU).

The core graph (the core's vertices with the arcs and shortcuts among them) gets one more vertex, a virtual source
whose arcs are rewritten for each query to the core vertices its upward search reached (the entries), weighted by
their upward distances; ``deltastep_gpu`` from that vertex gives every core vertex its distance, and :func:`_place`
writes them into the sweep's search-space arrays beside the upward search's vertices outside the core. A run's
entries and outside vertices go to the device at once; per query, :func:`_prepare` copies the query's own into place,
so that a query is four launches and nothing else (no copies, no read-back). Design and floor:
docs/solvers/phast.md ("Core on the device").
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda

from ...data.graph import INF32, Graph
from .. import registry
from ..common.gate import DISTANCES, kernel
from ..common.launch import Launch

PLACE_BLOCK = 256
CORE_CASES = tuple({**d, "c": c} for d in DISTANCES for c in ("int32", "int64"))


@kernel("void(Tuple((int32[::1], {w}[::1])), Tuple((int32[::1], {c}[::1])), int64, int64, int64, int64, int32, "
        "Tuple((int32[::1], {w}[::1], int32[::1], int64[::1])), Tuple((int64[::1], int32[::1], {c}[::1])), int64, "
        "int64)", cases=CORE_CASES)
@functools.cache
def _prepare(w: str, c: str):
    """The kernel that sets up query ``row``: its outside vertices as the sweep's space, its entries as the virtual
    source's arcs (distances of type ``w`` and ``c``)."""

    @cuda.jit
    def prepare(outside, entries, o, e, p, k, row, space, core, arcs, size):
        """Outside vertices o .. o + e - 1 to space entries 0 .., entries p .. p + k - 1 to the virtual source's arc
        slots; the virtual source's range ends after k arcs and the query's space after e + size entries."""
        out_v, out_d = outside
        entry_v, entry_d = entries
        space_v, space_d, space_row, space_ptr = space
        indptr, indices, weights = core
        for i in range(cuda.grid(1), max(e, k), cuda.gridsize(1)):
            if i < e:
                space_v[i] = out_v[o + i]
                space_d[i] = out_d[o + i]
                space_row[i] = row
            if i < k:
                indices[arcs + i] = entry_v[p + i]
                weights[arcs + i] = entry_d[p + i]
        if cuda.grid(1) == 0:
            indptr[indptr.size - 1] = arcs + k  # the virtual source is the last vertex
            space_ptr[row] = 0
            space_ptr[row + 1] = e + size

    return prepare


@kernel("void(int32[::1], {c}[::1], {c}, {w}, int64, int32, int32[::1], {w}[::1], int32[::1], int64[::1], int64, "
        "int64[::1])", cases=CORE_CASES)
@functools.cache
def _place(w: str, c: str):
    """The kernel that writes the core's distances (type ``c``) as search-space entries of type ``w``."""

    @cuda.jit
    def place(core_new, core_dist, core_inf, inf, offset, row, space_v, space_d, space_row, core_ctl, rounds_at,
              rounds):
        """Entry offset + i: core vertex i (its sweep id), its distance (the core's INF as the sweep's), the row; the
        core search's rounds added to ``rounds[0]``."""
        for i in range(cuda.grid(1), core_new.size, cuda.gridsize(1)):
            d = core_dist[i]
            space_v[offset + i] = core_new[i]
            space_d[offset + i] = inf if d >= core_inf else d
            space_row[offset + i] = row
        if cuda.grid(1) == 0:
            rounds[0] += core_ctl[rounds_at]

    return place


class CoreSearch:
    """The core of hierarchy ``h`` of ``graph`` (distance type ``graph.dtype``) as a graph of its own on the device,
    searched from a query's entries by ``deltastep_gpu`` (``block`` threads a block, distances alone)."""

    def __init__(self, h, graph, block: int):
        n, c = h.n, h.core
        self.in_core = h.rank >= n - c  # the core holds the top ranks
        self.core_new = np.flatnonzero(self.in_core).astype(np.int32)  # core index -> sweep id
        self.index = (np.cumsum(self.in_core) - 1).astype(np.int32)  # sweep id -> core index
        tails = np.repeat(np.arange(n), np.diff(h.up_ptr))
        both = self.in_core[tails] & self.in_core[h.up_head]  # the core's arcs run both ways among the up arcs
        order = np.argsort(self.index[tails[both]], kind="stable")
        heads, weights = self.index[h.up_head[both]][order], h.up_w[both][order]
        self.arcs = int(both.sum())
        # the virtual source c has room for an arc to every core vertex; its range ends at the query's entries (the
        # last vertex's end offset is rewritten), unused slots are self-loops; a weight of INF32 there makes the
        # core's distances int64 wherever the graph's are
        pad = np.zeros(c, dtype=np.int64)
        if graph.dtype == np.int64 and c:
            pad[0] = INF32
        indptr = np.concatenate([np.searchsorted(self.index[tails[both]][order], np.arange(c + 1)),
                                 [self.arcs + c]])
        self.graph = Graph(c + 1, indptr, np.concatenate([heads, np.full(c, c)]), np.concatenate([weights, pad]),
                           name=f"{graph.name}-core", offsets_dtype="int64")
        # the hop landmarks that set deltastep_gpu's lanes and delta are the core's own: from the virtual source, the
        # vertex of largest out-degree, a breadth-first search sees its self-loops alone (a depth of 0)
        depth, hops_a, hops_b = Graph(c, indptr[:c + 1], heads, weights).hop_landmarks()
        self.graph._landmarks = (depth, np.append(hops_a, -1), np.append(hops_b, -1))
        self.solver = registry.get("deltastep_gpu").build(self.graph, block=block, paths=False)
        w, cw = graph.dtype.name, self.graph.dtype.name
        self.prepare, self.place = _prepare(w, cw), _place(w, cw)
        self.dtype = graph.dtype
        self.inf, self.core_inf = graph.dtype.type(graph.inf), self.graph.dtype.type(self.graph.inf)
        self.staged = None

    def upload(self):
        self.solver.upload()
        self.d_core_new = cuda.to_device(self.core_new)
        self.d_rounds = cuda.device_array(1, dtype=np.int64)
        blocks = max(1, min(1024, -(-self.core_new.size // PLACE_BLOCK)))
        self.launch_place = Launch(self.place, blocks, PLACE_BLOCK)
        self.launch_prepare = Launch(self.prepare, 64, PLACE_BLOCK)

    def stage(self, outside_v, outside_d, entry_v, entry_d) -> None:
        """A run's vertices outside the core and entries (sweep ids, distances) on the device, query after query, and
        the rounds' count set to zero."""
        def up(a, dtype):  # one spare word: a run whose queries have no outside vertex still has an array
            return cuda.to_device(np.append(a.astype(dtype), dtype.type(0)))

        self.staged = ((up(outside_v, np.dtype(np.int32)), up(outside_d, self.dtype)),
                       (up(self.index[entry_v], np.dtype(np.int32)), up(entry_d, self.graph.dtype)))
        self.d_rounds.copy_to_device(np.zeros(1, dtype=np.int64))

    def query(self, row: int, outside: tuple[int, int], entries: tuple[int, int], space) -> None:
        """Query ``row``: its ``outside`` (first, count) vertices staged as the sweep's space, the core searched from
        its ``entries`` (first, count), the core's distances placed after them. Launches alone, in stream order."""
        (o, e), (p, k) = outside, entries
        dg, size = self.solver.dg, self.core_new.size
        self.launch_prepare(*self.staged, np.int64(o), np.int64(e), np.int64(p), np.int64(k), np.int32(row), space,
                            (dg.indptr, dg.indices, dg.weights), np.int64(self.arcs), np.int64(size))
        self.solver.run(self.graph.n - 1)  # the counters stay on the device: _place adds the rounds up
        space_v, space_d, space_row, _ = space
        self.launch_place(self.d_core_new, self.solver.d_dist, self.core_inf, self.inf, np.int64(e), np.int32(row),
                          space_v, space_d, space_row, self.solver.d_ctl, np.int64(self.solver.ROUNDS_AT),
                          self.d_rounds)

    def rounds(self) -> int:
        """The core searches' rounds since :meth:`stage` (a read-back: after the run's clock)."""
        return int(self.d_rounds.copy_to_host()[0])
