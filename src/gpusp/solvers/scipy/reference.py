"""SciPy's ``scipy.sparse.csgraph`` Dijkstra (Johnson with negative weights) as a solver and as the reference every GPU
answer is checked against: ``scipy_dijkstra``, and ``scipy_apsp`` with its sources split over forked processes that
write into one shared anonymous mapping. Design: docs/solvers/scipy.md."""

from __future__ import annotations

import mmap
import multiprocessing
import os
import signal

import numpy as np

from ...data.graph import Graph
from ...errors import NegativeCycleError, SolverError
from ..common.base import Solver


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


_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def _default_signals():
    """A forked worker dies of the stop signals: the parent's handlers (a job's forwarding handler, say) would keep a
    worker blocked on the pool's queue alive through Pool.terminate(). They arrive blocked (see
    :func:`scipy_rows_parallel`), so one sent before this point is taken by the default action too."""
    for signum in _STOP_SIGNALS:
        signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)


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
    # the stop signals stay blocked from before the fork until a worker has taken the default handlers back: one that
    # came in between would run the parent's handler, and a worker that lived on would wait forever for the queue's
    # lock, which Pool.terminate() keeps (the pool's own threads, which fork replacements, keep the mask blocked)
    unblocked = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    try:
        pool = multiprocessing.get_context("fork").Pool(workers, initializer=_default_signals)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, unblocked)
    try:
        done = sum(pool.imap_unordered(_scipy_rows, [(lo, min(k, lo + step)) for lo in range(0, k, step)]))
        pool.close()  # the workers leave when the queue is drained: none is killed while it holds the queue's lock
    except BaseException:
        pool.terminate()
        raise
    finally:
        pool.join()
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
