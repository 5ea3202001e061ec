"""The n x n state the APSP solvers share: distance and predecessor matrices and their set-up, the hop tie-break for
weights <= 0, the negative-cycle check, the add of two distances, device-memory checks, results kept on the device
or staged to pinned host memory, and parents derived on the host. Design: docs/solvers/common.md.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass

import numba
import numpy as np
from numba import cuda, njit

from ...data.graph import choose_dtype, inf_for
from ...device import free_device_memory
from ...errors import NegativeCycleError, SolverError
from .gate import DISTANCES, kernel
from .launch import TARGET, grid2, launch_grid

DTYPES = ("int32", "int64")
# None: keep an n x n result on the device when it fits; True / False force it (tests use this)
RESULT_ON_DEVICE: bool | None = None
MEMORY_MARGIN = 256 * 2**20  # bytes left free beside a device result


# --- memory -------------------------------------------------------------------------------------------------------
def require_device_memory(solver: str, n: int, nbytes: int, formula: str) -> None:
    """Raise SolverError when ``nbytes`` will not fit in the free device memory (no check in the simulator)."""
    free = free_device_memory()
    if free is not None and nbytes > free:
        raise SolverError(f"{solver} needs {nbytes / 2**30:.2f} GiB of device memory for n = {n} ({formula}), "
                          f"only {free / 2**30:.2f} GiB free")


def csr_bytes(graph) -> int:
    """Device bytes of the CSR upload (indptr, indices, weights)."""
    return graph.indptr.nbytes + graph.indices.nbytes + graph.weights.nbytes


def result_fits(graph, rows: int | None = None) -> bool:
    """Whether the ``rows`` x n (default n x n) distance and parent result fits in the free device memory beside what
    is already allocated (:data:`RESULT_ON_DEVICE` overrides; the simulator has room)."""
    if RESULT_ON_DEVICE is not None:
        return bool(RESULT_ON_DEVICE)
    free = free_device_memory()
    if free is None:
        return True
    n, w = graph.n, graph.dtype.itemsize
    return (w + 4) * (n if rows is None else rows) * n + MEMORY_MARGIN <= free


class Result:
    """The K x n distance and parent rows of a batched or all-sources solver: all of them on the device where they fit
    beside what is already allocated, else a device staging area of ``stage`` rows whose contents :meth:`keep` copies,
    inside the timed run, into the whole result in pinned host memory. ``staging`` lends the staging area's distance
    rows from a working array the solver no longer needs by then."""

    def __init__(self, graph, rows: int, stage: int, staging=None):
        n, dtype = graph.n, graph.dtype
        self.rows = int(rows)
        self.on_device = result_fits(graph, self.rows)  # asked after the solver's working arrays exist
        held = self.rows if self.on_device else min(int(stage), self.rows)
        self.dist = (staging if staging is not None and not self.on_device
                     else cuda.device_array((held, n), dtype=dtype))
        self.parent = cuda.device_array((held, n), dtype=np.int32)
        self.host = None if self.on_device else (cuda.pinned_array((self.rows, n), dtype=dtype),
                                                 cuda.pinned_array((self.rows, n), dtype=np.int32))
        self.copy_ms = 0.0

    def row0(self, base: int) -> int:
        """The device row where result row ``base`` is written: itself on the device, the staging area's first."""
        return base if self.on_device else 0

    def keep(self, base: int, count: int, at=None, parents: bool = True) -> None:
        """Staged: copy the staging area's first ``count`` rows to host rows ``base ..`` (or to the rows ``at``);
        on the device, nothing. The time it takes is added to :attr:`copy_ms`."""
        if self.on_device:
            return
        t0 = time.perf_counter()
        if at is None:
            self.dist[:count].copy_to_host(self.host[0][base:base + count])
            if parents:
                self.parent[:count].copy_to_host(self.host[1][base:base + count])
        else:
            self.host[0][at] = self.dist[:count].copy_to_host()
            if parents:
                self.host[1][at] = self.parent[:count].copy_to_host()
        self.copy_ms += (time.perf_counter() - t0) * 1e3

    def counters(self) -> dict:
        """``result_on_device``, and ``host_copy_ms`` where the rows went to the host."""
        out = {"result_on_device": int(self.on_device)}
        if not self.on_device:
            out["host_copy_ms"] = self.copy_ms
        return out

    def download(self) -> tuple[np.ndarray, np.ndarray]:
        """(distances, parents) on the host."""
        if self.on_device:
            return self.dist.copy_to_host(), self.parent.copy_to_host()
        return np.array(self.host[0]), np.array(self.host[1])


# --- host matrices and the hop tie-break ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Tiebreak:
    """The weights a dense solver runs on: ``scale`` = n + 1 when some weight is <= 0 (the hop tie-break is on),
    else 0; ``weights`` the arc weights after it (int64); ``dtype`` the distance type that holds every simple path of
    them."""

    scale: int
    weights: np.ndarray
    dtype: np.dtype

    @property
    def inf(self) -> int:
        return inf_for(self.dtype)


def hop_tiebreak(graph) -> Tiebreak:
    """The hop tie-break (docs/solvers/common.md) when a zero-weight cycle can exist, else the graph's own weights."""
    scale = graph.n + 1 if graph.m and int(graph.weights.min()) <= 0 else 0
    w = graph.weights.astype(np.int64)
    if scale:
        w = w * scale + 1
    return Tiebreak(scale, w, choose_dtype(graph.n, w, graph.indptr))


def padded_matrices(graph, n_pad: int, tie: Tiebreak) -> tuple[np.ndarray, np.ndarray]:
    """Initial distance and predecessor matrices of ``graph`` padded to n_pad (padded vertices isolated: INF off
    the diagonal, 0 on it), in ``tie``'s dtype with its scale applied to the arcs: per pair the lightest arc, a
    self-loop only when negative. Built from the arcs, O(n_pad^2 + m log m), no n x n temporaries."""
    d0 = np.full((n_pad, n_pad), tie.inf, dtype=tie.dtype)
    np.fill_diagonal(d0, 0)
    p0 = np.full((n_pad, n_pad), -1, dtype=np.int32)
    if graph.m:
        src, dst, w = graph.coo()
        w = w.astype(np.int64)
        if tie.scale:
            w = w * tie.scale + 1
        order = np.lexsort((w, dst, src))  # per (src, dst) pair, the lightest arc first
        src, dst, w = src[order], dst[order], w[order]
        first = np.ones(src.size, dtype=bool)
        first[1:] = (src[1:] != src[:-1]) | (dst[1:] != dst[:-1])
        src, dst, w = src[first], dst[first], w[first]
        arc = src != dst
        d0[src[arc], dst[arc]] = w[arc]
        p0[src[arc], dst[arc]] = src[arc]
        loop = ~arc & (w < 0)  # the diagonal starts at 0: a self-loop lowers it only when negative
        d0[src[loop], src[loop]] = w[loop]
    return d0, p0


def undo_tiebreak(dist: np.ndarray, tie: Tiebreak, graph) -> np.ndarray:
    """Distances of the graph from the solver's (d' = d (n + 1) + hops, 0 <= hops <= n), INF as the graph's INF."""
    if not tie.scale and tie.dtype == graph.dtype:  # nothing to undo: the same values, the same INF
        return np.ascontiguousarray(dist)
    dist = np.asarray(dist, dtype=np.int64)
    unreachable = dist == tie.inf
    if tie.scale:
        dist = dist // tie.scale
    return np.ascontiguousarray(np.where(unreachable, graph.inf, dist).astype(graph.dtype))


@njit(cache=True)
def _tight_parent_rows(indptr, indices, weights, d, rows, sources, inf, parent):
    """For each row r = rows[i] of d, from source s = sources[i], every u with d[r][u] + w(u, v) == d[r][v] claims
    parent[i][v] (the last such arc wins)."""
    n = d.shape[1]
    for i in range(rows.size):
        r = rows[i]
        for u in range(n):
            du = d[r, u]
            if du == inf:
                continue
            for e in range(indptr[u], indptr[u + 1]):
                v = indices[e]
                if v != u and du + weights[e] == d[r, v]:
                    parent[i, v] = u
        parent[i, sources[i]] = -1


class TightParents:
    """The parent matrix of an APSP answer whose solver records no predecessors (paths off), derived row by row
    when a row is asked for: parent[s][v] is some u with d[s][u] + w(u, v) == d[s][v] (w -> w scale + 1 when
    ``scale``), -1 on the diagonal and for unreachable v; with every (scaled) weight > 0 these tight arcs form
    shortest-path trees. A row costs Theta(m) in a compiled CPU loop, the whole matrix Theta(n m), so validation,
    which samples rows, pays only for its rows and the solver's download only for its copy. Indexing takes a row, a
    list or array of rows, or anything else after ``np.asarray`` (the whole matrix, kept once made). ``sources``: the
    source of each row of ``d`` where the rows are a sample of them (None: row s is from source s)."""

    dtype = np.dtype(np.int32)
    ndim = 2

    def __init__(self, graph, d, inf, scale: int = 0, sources=None):
        self._graph, self._d, self._inf = graph, np.ascontiguousarray(d), inf
        self._w = graph.weights.astype(np.int64) * scale + 1 if scale else graph.weights.astype(np.int64)
        self._sources = None if sources is None else np.asarray(sources, dtype=np.int64)
        self.shape = (self._d.shape[0], graph.n)
        self._full = None

    def __len__(self):
        return self.shape[0]

    def rows(self, rows) -> np.ndarray:
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        out = np.full((rows.size, self.shape[1]), -1, dtype=np.int32)
        if rows.size:
            g = self._graph
            sources = rows if self._sources is None else self._sources[rows]
            _tight_parent_rows(g.indptr, g.indices, self._w, self._d, rows, sources, self._d.dtype.type(self._inf), out)
        return out

    def __array__(self, dtype=None, copy=None):
        if self._full is None:
            self._full = self.rows(np.arange(self.shape[0]))
        return self._full if dtype is None else self._full.astype(dtype)

    def __getitem__(self, key):
        if isinstance(key, (int, np.integer)):
            return self.rows([key])[0]
        rows = np.asarray(key) if isinstance(key, (list, np.ndarray)) else None
        if rows is not None and rows.ndim == 1 and rows.dtype.kind in "iu":
            return self.rows(rows)
        return np.asarray(self)[key]


def apsp_tight_parents(graph, d, inf, scale: int = 0, sources=None) -> TightParents:
    """The parents of distance matrix ``d`` (rows from ``sources``, None: from every vertex in order) from its tight
    arcs, derived when asked for (:class:`TightParents`), for solvers run with paths off, whose parents exist only for
    validation."""
    return TightParents(graph, d, inf, scale, sources)


# --- device kernels -------------------------------------------------------------------------------------------------
@kernel("void({w}[:, ::1], int32[:, ::1], {w})", cases=DISTANCES)
@cuda.jit(cache=True)
def init_matrix(d, p, inf):
    """Thread per (i, j), j along x: d = 0 on the diagonal and INF elsewhere, p = -1."""
    j, i = cuda.grid(2)
    n = d.shape[0]
    if i < n and j < n:
        d[i, j] = 0 if i == j else inf
        p[i, j] = -1


@kernel("void(int32[::1], int32[::1], {w}[::1], {w}[:, ::1], int32[:, ::1])", cases=DISTANCES)
@cuda.jit(cache=True)
def scatter_edges(indptr, indices, weights, d, p):
    """Thread per vertex u: lay u's out-edges into row u (lightest parallel edge) and parent their heads."""
    u = cuda.grid(1)
    if u >= d.shape[0]:
        return
    for e in range(indptr[u], indptr[u + 1]):
        v = indices[e]
        w = weights[e]
        if w < d[u, v]:  # the diagonal starts at 0: a self-loop counts only when negative
            d[u, v] = w
            if v != u:
                p[u, v] = u


def build_matrix(dg, d, p, inf) -> int:
    """Fill d and p from the uploaded CSR graph ``dg`` on the device; returns the launches."""
    n = d.shape[0]
    init_matrix[grid2(n, 16), (16, 16)](d, p, inf)
    scatter_edges[launch_grid(n, 128), 128](dg.indptr, dg.indices, dg.weights, d, p)
    return 2


@kernel("void({w}[:, ::1], int64, int32[::1])", cases=DISTANCES)
@cuda.jit(cache=True)
def negative_diagonal(d, n, flag):
    """One block: flag[0] = the smallest i < n with d[i, i] < 0, else n."""
    if cuda.blockIdx.x != 0:
        return
    best = cuda.shared.array(1, np.int32)
    if cuda.threadIdx.x == 0:
        best[0] = n
    cuda.syncthreads()  # best initialised before anyone lowers it
    i = cuda.threadIdx.x
    while i < n:
        if d[i, i] < 0:
            cuda.atomic.min(best, 0, i)  # atomic: several threads may find negative entries
        i += cuda.blockDim.x
    cuda.syncthreads()  # every thread's minimum folded in
    if cuda.threadIdx.x == 0:
        flag[0] = best[0]


def check_diagonal(d, n: int, flag, stream=0) -> int:
    """Launch the negative-diagonal check of the first n rows of d on ``stream``; returns the launches (1)."""
    negative_diagonal[1, TARGET.threads(256, 32), stream](d, n, flag)
    return 1


def raise_on_negative_cycle(flag, n: int, stream=0, ids=None) -> None:
    """Read the check's flag (a synchronisation) and raise NegativeCycleError naming the vertex (through ``ids`` when
    the matrix is renumbered)."""
    v = int(flag.copy_to_host(stream=stream)[0])
    if stream:
        stream.synchronize()
    if v < n:
        raise NegativeCycleError("negative-weight cycle: a diagonal entry of the distance matrix is negative",
                                 vertex=v if ids is None else int(ids[v]))


@functools.cache
def plus_fn(dt: str, negative: bool):
    """Device function ``plus(a, b, inf)``: the candidate a + b in the distance type, clamped and INF-preserving
    when ``negative`` (docs/solvers/common.md)."""
    cast = getattr(numba, dt)

    if negative:
        @cuda.jit(device=True)
        def plus(a, b, inf):
            """a + b, INF if either is INF, never below -INF (so negative cycles cannot wrap)."""
            if a == inf or b == inf:
                return cast(inf)
            s = a + b
            if s < -inf:
                return cast(-inf)
            return cast(s)
    else:
        @cuda.jit(device=True)
        def plus(a, b, inf):
            """a + b in the distance type (INF + INF does not overflow, INF + w >= INF never wins)."""
            return cast(a + b)
    return plus

