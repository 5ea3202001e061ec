"""CPU Dijkstra baselines compiled with Numba's CPU JIT: ``dijkstra_cpu`` (paper 000's: a binary heap with lazy
deletion over the CSR arcs), ``dijkstra_cpumatrix`` (paper 000's CPU APSP: each popped vertex's row of the n x n
matrix scanned) and ``dijkstra_cputhreads`` (paper 001's CPU column: the heap Dijkstra from every source on a few
threads). Design: docs/solvers/dijkstra.md."""

from __future__ import annotations

import numpy as np
from numba import config, get_num_threads, njit, prange, set_num_threads

from ..common.base import Solver


@njit(cache=True)
def _heap_push(keys, vals, size, key, val):
    i = size
    keys[i] = key
    vals[i] = val
    while i > 0:
        p = (i - 1) >> 1
        if keys[p] <= keys[i]:
            break
        keys[p], keys[i] = keys[i], keys[p]
        vals[p], vals[i] = vals[i], vals[p]
        i = p
    return size + 1


@njit(cache=True)
def _heap_pop(keys, vals, size):
    key, val = keys[0], vals[0]
    size -= 1
    keys[0], vals[0] = keys[size], vals[size]
    i = 0
    while True:
        lo, r, best = 2 * i + 1, 2 * i + 2, i
        if lo < size and keys[lo] < keys[best]:
            best = lo
        if r < size and keys[r] < keys[best]:
            best = r
        if best == i:
            break
        keys[best], keys[i] = keys[i], keys[best]
        vals[best], vals[i] = vals[i], vals[best]
        i = best
    return key, val, size


@njit(cache=True)
def _dijkstra(indptr, indices, weights, source, inf, dist, parent):
    dist[:] = inf
    parent[:] = -1
    dist[source] = 0
    keys = np.empty(indices.size + 1, dtype=dist.dtype)
    vals = np.empty(indices.size + 1, dtype=np.int32)
    size = _heap_push(keys, vals, 0, dist.dtype.type(0), np.int32(source))
    settled = 0
    relaxed = 0
    while size > 0:
        d, u, size = _heap_pop(keys, vals, size)
        if d > dist[u]:
            continue
        settled += 1
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            nd = d + weights[e]
            relaxed += 1
            if nd < dist[v]:
                dist[v] = nd
                parent[v] = u
                size = _heap_push(keys, vals, size, nd, np.int32(v))
    return settled, relaxed


@njit(cache=True)
def _dijkstra_matrix(cost, inf, dist, parent):
    """Dijkstra from every source over the rows of ``cost``; returns (heap pops, row entries scanned)."""
    n = cost.shape[0]
    arcs = 0
    for u in range(n):
        for v in range(n):
            if u != v and cost[u, v] != inf:
                arcs += 1
    keys = np.empty(arcs + 1, dtype=dist.dtype)  # one push per decrease: at most one per arc, plus the source
    vals = np.empty(arcs + 1, dtype=np.int32)
    return dijkstra_matrix_rows(cost, inf, dist, parent, np.arange(n), keys, vals)


@njit(cache=True)
def dijkstra_matrix_rows(cost, inf, dist, parent, sources, keys, vals):
    """The rows ``sources`` of :func:`_dijkstra_matrix` with its heap arrays given (a sample of the sources
    costs exactly its share of the whole run: benchmarks/papers/cpu_sampled.py)."""
    n = cost.shape[0]
    pops = 0
    for s in sources:
        d_s = dist[s]
        p_s = parent[s]
        d_s[:] = inf
        p_s[:] = -1
        d_s[s] = 0
        size = _heap_push(keys, vals, 0, dist.dtype.type(0), np.int32(s))
        while size > 0:
            _, u, size = _heap_pop(keys, vals, size)
            pops += 1
            du = d_s[u]
            row = cost[u]
            for v in range(n):
                w = row[v]
                if w != inf and du + w < d_s[v]:
                    d_s[v] = du + w
                    p_s[v] = u
                    size = _heap_push(keys, vals, size, du + w, np.int32(v))
    return pops, pops * n


@njit(cache=True, parallel=True)
def _dijkstra_every_source(indptr, indices, weights, inf, dist, parent, chunks):
    """Rows s of ``dist`` / ``parent`` for every source s, the sources dealt round-robin to ``chunks`` threads;
    returns (vertices settled, arcs relaxed) over all sources."""
    n = dist.shape[0]
    settled = np.zeros(chunks, np.int64)
    relaxed = np.zeros(chunks, np.int64)
    for c in prange(chunks):
        for s in range(c, n, chunks):
            a, b = _dijkstra(indptr, indices, weights, s, inf, dist[s], parent[s])
            settled[c] += a
            relaxed[c] += b
    return settled.sum(), relaxed.sum()


class DijkstraCpu(Solver):
    def run(self, source):
        g = self.graph
        self.dist = np.empty(g.n, dtype=g.dtype)
        self.parent = np.empty(g.n, dtype=np.int32)
        settled, relaxed = _dijkstra(g.indptr, g.indices, g.weights, source, g.dtype.type(g.inf), self.dist,
                                     self.parent)
        return {"iterations": int(settled), "relaxations": int(relaxed)}


class DijkstraMatrixApsp(Solver):
    """Paper 000's CPU APSP: heap Dijkstra from every source, neighbours by scanning the popped vertex's row."""

    def __init__(self, graph, **params):
        super().__init__(graph, **params)
        self.cost = graph.to_dense()
        self.dist = np.empty_like(self.cost)
        self.parent = np.empty(self.cost.shape, dtype=np.int32)

    def run(self, source=None):
        g = self.graph
        pops, scanned = _dijkstra_matrix(self.cost, g.dtype.type(g.inf), self.dist, self.parent)
        return {"iterations": int(pops), "relaxations": int(scanned)}


class DijkstraThreadsApsp(Solver):
    """Paper 001's CPU APSP column: the binary-heap Dijkstra over the CSR arcs from every source, the sources dealt to
    ``threads`` Numba threads (the paper's host ran four), the n x n result on the host."""

    def __init__(self, graph, *, threads):
        super().__init__(graph, threads=threads)
        self.threads = max(1, min(int(threads), config.NUMBA_NUM_THREADS))

    def run(self, source=None):
        g = self.graph
        self.dist = np.empty((g.n, g.n), dtype=g.dtype)
        self.parent = np.empty((g.n, g.n), dtype=np.int32)
        before = get_num_threads()
        set_num_threads(self.threads)
        try:
            settled, relaxed = _dijkstra_every_source(g.indptr, g.indices, g.weights, g.dtype.type(g.inf), self.dist,
                                                      self.parent, self.threads)
        finally:
            set_num_threads(before)
        return {"iterations": int(settled), "relaxations": int(relaxed), "threads": self.threads}
