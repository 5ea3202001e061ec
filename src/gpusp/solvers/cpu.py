"""CPU solvers: the serial baselines of paper 000 and SciPy's csgraph as the reference.

* ``dijkstra_cpu`` - Dijkstra with a binary heap and lazy deletion, O((n + m) log m); refuses
  negative weights.
* ``dijkstra_cpumatrix`` - paper 000's CPU APSP: the same heap Dijkstra from every source, but each popped
  vertex's neighbours are found by scanning its row of the n x n cost matrix, as the paper's ``dijkstra`` does,
  so a source costs O(n^2 + m log m) and the APSP O(n^3 + n m log m) whatever the degree. As in the paper every
  pop scans its row, stale heap entries included (they relax nothing: a vertex's current distance was popped,
  and its row scanned, before any larger key of it). The matrix is built outside the timed runs (the paper reads
  it from the file before its clock starts) and keeps the lightest of parallel arcs and 0 on the diagonal
  (:meth:`Graph.to_dense`; the paper's parser keeps the last arc read, which only matters for duplicates, and a
  self-loop never shortens a path with non-negative weights); refuses negative weights.
* ``bellmanford_cpu`` - serial Bellman-Ford over the CSR edge list, O(n m); stops after a round with no
  change (or runs the paper's fixed |V| - 1 rounds) and detects a reachable negative cycle in round |V|.
* ``floydwarshall_cpu`` - Floyd-Warshall on the dense matrix with a predecessor matrix, O(n^3).
* ``scipy_dijkstra`` / ``scipy_apsp`` - ``scipy.sparse.csgraph`` Dijkstra (Johnson with negative
  weights): compiled C, the baseline the GPU timings are compared with. ``scipy_apsp`` with
  ``workers`` > 1 (0: every core) splits the sources over forked processes writing into one shared
  anonymous mapping, so the GPU APSP solvers meet the whole host, not one core.

The serial loops are compiled with Numba's CPU JIT (``cache=True``) so they are fair serial baselines.
"""

from __future__ import annotations

import mmap
import multiprocessing
import os

import numpy as np
from numba import njit

from ..data.graph import Graph, dense_predecessors
from ..errors import NegativeCycleError, SolverError
from .base import Solver


def scipy_matrix(graph: Graph):
    """The simple graph as SciPy's float64 CSR array (explicit zero weights stay edges)."""
    from scipy.sparse import csr_array

    g = graph.simple()
    return csr_array((g.weights.astype(np.float64), g.indices, g.indptr), shape=(g.n, g.n))


def scipy_paths(graph: Graph, matrix, indices=None, predecessors: bool = False):
    """SciPy Dijkstra (Johnson with negative weights) as exact integer distances with INF, and parents.

    Returns ``(dist, parent)``; ``parent`` is None unless asked for. Raises NegativeCycleError.
    """
    from scipy.sparse.csgraph import NegativeCycleError as ScipyNegativeCycle
    from scipy.sparse.csgraph import dijkstra, johnson

    fn = johnson if graph.has_negative_weights else dijkstra
    try:
        out = fn(matrix, indices=indices, return_predecessors=predecessors)
    except ScipyNegativeCycle as exc:
        raise NegativeCycleError(f"reference: {exc}") from None
    d, p = out if predecessors else (out, None)
    dist = np.full(d.shape, graph.inf, dtype=graph.dtype)
    finite = np.isfinite(d)
    dist[finite] = np.rint(d[finite]).astype(graph.dtype)
    return dist, (np.where(p < 0, -1, p).astype(np.int32) if predecessors else None)


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
    return _dijkstra_matrix_rows(cost, inf, dist, parent, np.arange(n), keys, vals)


@njit(cache=True)
def _dijkstra_matrix_rows(cost, inf, dist, parent, sources, keys, vals):
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


@njit(cache=True)
def _bellman_ford(indptr, indices, weights, source, inf, fixed, dist, parent):
    n = dist.size
    dist[:] = inf
    parent[:] = -1
    dist[source] = 0
    rounds = 0
    for r in range(n):
        changed = False
        for u in range(n):
            du = dist[u]
            if du == inf:
                continue
            for e in range(indptr[u], indptr[u + 1]):
                v = indices[e]
                nd = du + weights[e]
                if nd < dist[v]:
                    dist[v] = nd
                    parent[v] = u
                    changed = True
        rounds = r + 1
        if r == n - 1:
            return rounds, changed  # a change in round n means a reachable negative cycle
        if not changed and not fixed:
            return rounds, False
    return rounds, False


@njit(cache=True)
def _floyd_warshall(d, p, inf):
    """Returns False as soon as a diagonal entry turns negative (a negative cycle: stop before
    repeated negative sums can wrap around), True otherwise."""
    n = d.shape[0]
    for k in range(n):
        for i in range(n):
            dik = d[i, k]
            if dik == inf:
                continue
            for j in range(n):
                dkj = d[k, j]
                if dkj != inf and dik + dkj < d[i, j]:
                    d[i, j] = dik + dkj
                    p[i, j] = p[k, j]
            if d[i, i] < 0:
                return False
    return True


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


class BellmanFordCpu(Solver):
    def __init__(self, graph, *, rounds):
        super().__init__(graph, rounds=rounds)
        self.fixed = rounds == "fixed"

    def run(self, source):
        g = self.graph
        self.dist = np.empty(g.n, dtype=g.dtype)
        self.parent = np.empty(g.n, dtype=np.int32)
        rounds, cycle = _bellman_ford(g.indptr, g.indices, g.weights, source, g.dtype.type(g.inf),
                                      self.fixed, self.dist, self.parent)
        if cycle:
            raise NegativeCycleError()
        return {"iterations": int(rounds), "relaxations": int(rounds) * g.m}


class FloydWarshallCpu(Solver):
    def run(self, source=None):
        g = self.graph
        self.dist = g.to_dense()
        self.parent = dense_predecessors(self.dist, g.inf)
        if not _floyd_warshall(self.dist, self.parent, g.dtype.type(g.inf)) or (np.diagonal(self.dist) < 0).any():
            raise NegativeCycleError(vertex=int(np.flatnonzero(np.diagonal(self.dist) < 0)[0]))
        return {"iterations": g.n, "relaxations": g.n ** 3}


class _Scipy(Solver):
    """Shared SciPy setup: the simple graph as a float64 CSR array, built once outside the timed runs."""

    def __init__(self, graph, **params):
        super().__init__(graph, **params)
        self.matrix = scipy_matrix(graph)

    def _solve(self, indices):
        self.dist, self.parent = scipy_paths(self.graph, self.matrix, indices, predecessors=True)


class ScipySssp(_Scipy):
    def run(self, source):
        if self.graph.n == 0:
            raise SolverError("empty graph")
        self._solve(source)
        return {"iterations": 1}


_ROWS: dict = {}  # what the forked workers of scipy_apsp read: graph, matrix and the shared result


def _scipy_rows(bounds):
    """Worker: SciPy rows lo .. hi - 1 (of the sources asked for) straight into the shared result."""
    lo, hi = bounds
    dist, parent = scipy_paths(_ROWS["graph"], _ROWS["matrix"], _ROWS["sources"][lo:hi],
                               predecessors=_ROWS["parent"] is not None)
    _ROWS["dist"][lo:hi] = dist
    if parent is not None:
        _ROWS["parent"][lo:hi] = parent
    return hi - lo


def scipy_rows_parallel(graph: Graph, matrix, workers: int, sources=None, predecessors: bool = True):
    """SciPy's rows from ``sources`` (None: every vertex, APSP), split into chunks over ``workers`` forked processes;
    ``(dist, parent)``, parent None unless ``predecessors``."""
    n, w = graph.n, graph.dtype.itemsize
    sources = np.arange(n) if sources is None else np.asarray(sources, dtype=np.int64)
    k = sources.size
    shared = mmap.mmap(-1, max(k * n * (w + 4 * predecessors), 1))  # anonymous, shared with the forked workers
    dist = np.frombuffer(shared, dtype=graph.dtype, count=k * n).reshape(k, n)
    parent = (np.frombuffer(shared, dtype=np.int32, count=k * n, offset=k * n * w).reshape(k, n)
              if predecessors else None)
    step = max(1, -(-k // (8 * workers)))  # 8 chunks per worker even out the rows' costs
    _ROWS.update(graph=graph, matrix=matrix, sources=sources, dist=dist, parent=parent)
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            done = sum(pool.imap_unordered(_scipy_rows, [(lo, min(k, lo + step)) for lo in range(0, k, step)]))
    finally:
        _ROWS.clear()
    if done != k:
        raise SolverError(f"SciPy rows: the workers returned {done} of {k} rows")
    return dist, parent


class ScipyApsp(_Scipy):
    """All sources with SciPy; ``workers`` > 1 splits them over forked processes."""

    def __init__(self, graph, *, workers):
        super().__init__(graph, workers=workers)
        self.workers = workers

    def run(self, source=None):
        n = self.graph.n
        workers = min(self.workers or os.cpu_count() or 1, max(n, 1))
        if workers > 1:
            self.dist, self.parent = scipy_rows_parallel(self.graph, self.matrix, workers)
        else:
            self._solve(None)
        return {"iterations": n, "workers": workers}
