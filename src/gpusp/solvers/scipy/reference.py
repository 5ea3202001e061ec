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


_ROWS: dict = {}  # what the forked workers of scipy_rows_parallel read: graph, matrix, chunks and the shared result


def _scipy_rows(bounds):
    """SciPy rows lo .. hi - 1 (of the sources asked for) straight into the shared result."""
    lo, hi = bounds
    dist, parent = scipy_paths(_ROWS["graph"], _ROWS["matrix"], _ROWS["sources"][lo:hi],
                               predecessors=_ROWS["parent"] is not None)
    _ROWS["dist"][lo:hi] = dist
    if parent is not None:
        _ROWS["parent"][lo:hi] = parent
    return hi - lo


_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def _default_signals():
    """A forked worker dies of the stop signals: the parent's handlers (a job's forwarding handler, say) would keep it
    alive. They arrive blocked (see :func:`scipy_rows_parallel`), so one sent before this point is taken by the default
    action too."""
    for signum in _STOP_SIGNALS:
        signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)


def _rows_worker(first, stride, conn):
    """Worker: chunks first, first + stride, ... until they run out or a worker has failed; sends ``("rows", count)``
    or ``("error", exception)`` through its own pipe, the one thing it shares with the parent besides the mapping."""
    _default_signals()
    chunks, failed = _ROWS["chunks"], _ROWS["failed"]
    try:
        done = 0
        for bounds in chunks[first::stride]:
            if failed[0]:
                break
            done += _scipy_rows(bounds)
        conn.send(("rows", done))
    except BaseException as exc:  # noqa: BLE001 - the parent re-raises it
        failed[0] = 1
        conn.send(("error", exc))
    finally:
        conn.close()


def scipy_rows_parallel(graph: Graph, matrix, workers: int, sources=None, predecessors: bool = True):
    """SciPy's rows from ``sources`` (None: every vertex, APSP), split into chunks over ``workers`` forked processes;
    ``(dist, parent)``, parent None unless ``predecessors``.

    The workers share no lock with the parent (each reports through its own pipe, rows go to one anonymous mapping,
    a failure sets a flag byte in it), so killing them never leaves the parent waiting on a lock a dead worker held, as
    ``multiprocessing.Pool.terminate()`` can."""
    n, w = graph.n, graph.dtype.itemsize
    sources = np.arange(n) if sources is None else np.asarray(sources, dtype=np.int64)
    k = sources.size
    rows = k * n * (w + 4 * predecessors)
    shared = mmap.mmap(-1, rows + 1)  # anonymous, shared with the forked workers; the last byte is the failure flag
    dist = np.frombuffer(shared, dtype=graph.dtype, count=k * n).reshape(k, n)
    parent = (np.frombuffer(shared, dtype=np.int32, count=k * n, offset=k * n * w).reshape(k, n)
              if predecessors else None)
    step = max(1, -(-k // (8 * workers)))  # 8 chunks per worker even out the rows' costs
    chunks = [(lo, min(k, lo + step)) for lo in range(0, k, step)]
    workers = min(workers, len(chunks))
    _ROWS.update(graph=graph, matrix=matrix, sources=sources, dist=dist, parent=parent, chunks=chunks,
                 failed=np.frombuffer(shared, dtype=np.uint8, count=1, offset=rows))
    ctx = multiprocessing.get_context("fork")
    procs, conns = [], []
    try:
        # the stop signals stay blocked from before the forks until each worker has taken the default handlers back:
        # one that came in between would run the parent's handler in the worker
        unblocked = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
        try:
            for first in range(workers):
                recv, send = ctx.Pipe(duplex=False)
                try:
                    proc = ctx.Process(target=_rows_worker, args=(first, workers, send), daemon=True)
                    proc.start()  # interrupted here, a forked worker is not tracked: it ends with its chunks
                finally:
                    send.close()
                procs.append(proc)
                conns.append(recv)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, unblocked)
        done, error = 0, None
        for proc, conn in zip(procs, conns):
            try:
                kind, value = conn.recv()
            except EOFError:
                proc.join()
                kind, value = "error", SolverError(f"SciPy rows: worker {proc.pid} died (exit code {proc.exitcode})")
            if kind == "rows":
                done += value
            elif error is None:
                error = value
        if error is not None:
            raise error
    except BaseException:
        for proc in procs:  # they die of SIGTERM (default handlers); none holds anything the parent waits for
            proc.terminate()
        raise
    finally:
        for proc in procs:
            proc.join()
        for conn in conns:
            conn.close()
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
