"""Check an SSSP answer exactly without a reference solve: an O(m) optimality certificate in parallel Numba (CPU).

Three rules prove the distances exact, the unreachable set included, with or without negative weights (and that
no negative cycle is reachable from the source): ``dist[s] == 0``; no arc relaxes (for every arc u -> v with
``dist[u]`` finite, ``dist[v]`` is finite and ``dist[v] <= dist[u] + w``); and the vertices that tight arcs
(``dist[u] + w == dist[v]``) reach from ``s`` are exactly those with a finite distance. With parents, the tree
checks of :mod:`gpusp.measure.validate` come on top: ``parent[s] == -1``, a parent exactly for the reachable
vertices other than ``s``, every parent arc tight, and the parent pointers forming a tree that reaches ``s``.
The proof and the rule that picks this check or the SciPy reference: docs/timing.md ("Validation").

:func:`certify` returns the checks and the first mismatches; :func:`gpusp.measure.validate.check_certificate` makes
them a verdict (method ``"certificate"``).
"""

from __future__ import annotations

import time

import numba
import numpy as np
from numba import njit, prange

from ..data.graph import Graph

MAX_REPORTED = 10
# a frontier with fewer out-arcs than this is expanded on one thread: starting the worker threads costs more
SERIAL_ARCS = 1 << 16


@njit(cache=True, inline="always")
def _tight(du, w, dv, inf):
    """Whether the arc u -> v (``dist[u]`` finite, ``du`` and ``w`` int64) is tight: ``dist[u] + w == dist[v]``,
    ``dist[v]`` finite."""
    return dv != inf and du + w == dv


@njit(cache=True, inline="always")
def _take_heads(u, indptr, indices, weights, dist, inf, seen, heads, k):
    """Mark the unseen heads of u's tight arcs and write them at ``heads[k:]``; returns the next free place."""
    for e in range(indptr[u], indptr[u + 1]):
        v = indices[e]
        if seen[v] == 0 and _tight(np.int64(dist[u]), np.int64(weights[e]), dist[v], inf):
            seen[v] = 1
            heads[k] = v
            k += 1
    return k


@njit(parallel=True, cache=True)
def _tight_reach(indptr, indices, weights, dist, inf, source, seen, pieces):
    """Set ``seen[v] = 1`` for every v that ``source`` reaches through tight arcs (``dist`` finite at ``source``).
    Level by level; a large level is cut into ``pieces`` of about equal arc counts, each writing the unseen heads it
    marks into its own stretch of a buffer. Two pieces that race on one head may both take it: a vertex then sits in
    the next level twice, at most once per piece, which costs work, not answers."""
    seen[source] = 1
    frontier = np.full(1, source, dtype=np.int32)
    while frontier.size:
        size = frontier.size
        starts = np.empty(size + 1, dtype=np.int64)
        starts[0] = 0
        for i in range(size):
            starts[i + 1] = starts[i] + indptr[frontier[i] + 1] - indptr[frontier[i]]
        arcs = starts[size]
        heads = np.empty(arcs, dtype=np.int32)
        if arcs < SERIAL_ARCS:
            k = 0
            for i in range(size):
                k = _take_heads(frontier[i], indptr, indices, weights, dist, inf, seen, heads, k)
            frontier = heads[:k]
            continue
        parts = min(size, pieces)
        cuts = np.searchsorted(starts, np.arange(parts + 1) * (arcs // parts))
        cuts[parts] = size
        taken = np.zeros(parts + 1, dtype=np.int64)
        for c in prange(parts):
            k = starts[cuts[c]]
            for i in range(cuts[c], cuts[c + 1]):
                k = _take_heads(frontier[i], indptr, indices, weights, dist, inf, seen, heads, k)
            taken[c + 1] = k - starts[cuts[c]]
        place = np.cumsum(taken)
        frontier = np.empty(place[parts], dtype=np.int32)
        for c in prange(parts):
            first = starts[cuts[c]]
            frontier[place[c]:place[c + 1]] = heads[first:first + taken[c + 1]]


@njit(cache=True)
def _scan_vertex(u, indptr, indices, weights, dist, inf, parent, tight):
    """1 where an out-arc of u (``dist[u]`` finite) still relaxes, else 0; marks ``tight`` as :func:`_scan_arcs`
    says."""
    du = np.int64(dist[u])
    flag = 0
    for e in range(indptr[u], indptr[u + 1]):
        v = indices[e]
        dv = np.int64(dist[v])
        w = np.int64(weights[e])
        if dv == inf or dv > du + w:
            flag = 1
        elif du + w == dv:
            if parent.size == 0:
                if v != u:  # a zero-weight self-loop is tight, yet leads nowhere
                    tight[v] = u
            elif parent[v] == u:
                tight[v] = 1
    return flag


@njit(parallel=True, cache=True)
def _scan_arcs(indptr, indices, weights, dist, inf, parent, loose, tight):
    """One pass over the arcs of the vertices with a finite distance: ``loose[u] = 1`` where an out-arc of u still
    relaxes (its head's distance is larger than ``dist[u] + w``, or unreachable). With ``parent`` (not empty),
    ``tight[v] = 1`` where an arc ``parent[v] -> v`` is tight (written by the parent's iteration alone); without,
    ``tight[v]`` becomes the tail of some tight arc into v (concurrent aligned stores: one of them remains). Returns
    how many u are loose. The loop body is one call: Numba 0.68.0 on Python 3.12 fails to compile this loop with the
    arc walk written inline ("unexpected cycle in lookup()")."""
    count = 0
    for u in prange(indptr.size - 1):
        flag = 0
        if dist[u] != inf:
            flag = _scan_vertex(u, indptr, indices, weights, dist, inf, parent, tight)
        loose[u] = flag
        count += flag
    return count


@njit(cache=True)
def _chains(parent, source, reaches):
    """``reaches[v] = 1`` where following parents from v ends at ``source`` (parents in range); a walk that meets
    itself (a cycle) or a vertex without a parent ends elsewhere. Each vertex is walked once: a walk stops at the
    first vertex already decided and hands its answer down the path it took."""
    n = parent.size
    state = np.zeros(n, dtype=np.uint8)  # 0 not yet walked, 1 on the walk in progress, 2 reaches source, 3 does not
    state[source] = 2
    path = np.empty(n, dtype=np.int32)
    for v in range(n):
        steps, u = 0, v
        while u >= 0 and state[u] == 0:
            state[u] = 1
            path[steps] = u
            steps += 1
            u = parent[u]
        found = 2 if u >= 0 and state[u] == 2 else 3
        for i in range(steps):
            state[path[i]] = found
    for v in range(n):
        reaches[v] = state[v] == 2


_WARM: set = set()


def warm(graph: Graph, dist, parent=None) -> float:
    """Compile (or load from Numba's cache) the kernels for the dtypes of ``graph`` and of an answer's ``dist`` and
    ``parent`` (None: none), once per process, on a two-vertex graph, so that a certificate's own time holds no JIT;
    returns the seconds that took (0 when done before)."""
    parent_dtype = np.asarray(parent).dtype if parent is not None else np.dtype(np.int32)
    dtypes = [graph.indptr.dtype, graph.weights.dtype, np.asarray(dist).dtype,
              parent_dtype if np.issubdtype(parent_dtype, np.integer) else np.dtype(np.int32)]
    key = tuple(_kernel_dtype(t).str for t in dtypes)
    if key in _WARM:
        return 0.0
    t0 = time.perf_counter()
    indptr, indices = np.array([0, 1, 1], dtype=graph.indptr.dtype), np.array([1], dtype=np.int32)
    weights, dist = np.array([0], dtype=graph.weights.dtype), np.zeros(2, dtype=_kernel_dtype(dtypes[2]))
    parent, flags = np.array([-1, 0], dtype=_kernel_dtype(dtypes[3])), np.zeros(2, dtype=np.uint8)
    _scan_arcs(indptr, indices, weights, dist, 1, parent, flags, flags.copy())
    _scan_arcs(indptr, indices, weights, dist, 1, parent[:0], flags, np.full(2, -1, dtype=np.int32))
    _tight_reach(indptr, indices, weights, dist, 1, 0, flags, 1)
    _chains(parent, 0, flags)
    _chains(np.full(2, -1, dtype=np.int32), 0, flags)
    _WARM.add(key)
    return time.perf_counter() - t0


def _kernel_dtype(dtype) -> np.dtype:
    """The dtype the kernels see an integer array in: int32 and int64 as they are, any other as int64."""
    dtype = np.dtype(dtype)
    return dtype if dtype in (np.int32, np.int64) else np.dtype(np.int64)


def _pieces() -> int:
    """Pieces a large search level is cut into: a few per thread, so that one piece with a hub does not hold the
    others up."""
    return 4 * numba.get_num_threads()


def _loose_arcs(graph: Graph, dist: np.ndarray, tails: np.ndarray) -> list[str]:
    """The relaxing arcs out of ``tails`` (the first few), as mismatch lines."""
    inf, bad = graph.inf, []
    for u in tails:
        du = int(dist[u])
        for e in range(int(graph.indptr[u]), int(graph.indptr[u + 1])):
            v, w = int(graph.indices[e]), int(graph.weights[e])
            dv = int(dist[v])
            if dv == inf:
                bad.append(f"edge {u}->{v} (w={w}) reaches {v} from dist[{u}] = {du}, yet dist[{v}] is unreachable")
            elif dv > du + w:
                bad.append(f"edge {u}->{v} (w={w}) still relaxes {v}: dist[{u}] + w = {du + w} < dist[{v}] = {dv}")
            if len(bad) >= MAX_REPORTED:
                return bad
    return bad


def certify(graph: Graph, source: int, dist, parent=None) -> tuple[dict, list[str]]:
    """The certificate's checks on one SSSP answer (``parent`` None: the distances alone): a dict of check -> passed
    and the first mismatches, each naming a vertex or an arc."""
    n, inf, source = graph.n, graph.inf, int(source)
    dist = np.asarray(dist)
    parent = None if parent is None else np.asarray(parent)
    if dist.shape != (n,) or (parent is not None and parent.shape != (n,)) or not 0 <= source < n:
        shapes = [f"dist {dist.shape}"] + ([] if parent is None else [f"parent {parent.shape}"])
        expected = f"expected ({n},) from a source in 0..{n - 1}"
        return {"shape": False}, [f"{' / '.join(shapes)} from source {source}, {expected}"]
    if not np.issubdtype(dist.dtype, np.integer):
        return {"dist_range": False}, [f"dist holds {dist.dtype}, not integers"]
    # distances as int64 below +-INF (the graph's dtype keeps |w| below that too): int64 sums never wrap
    finite = dist != inf
    outside = np.flatnonzero(finite & ((dist <= -inf) | (dist > inf)))
    if outside.size:
        return {"dist_range": False}, [f"dist[{v}] = {int(dist[v])} is neither {inf} (unreachable) nor a distance "
                                       f"of magnitude below {inf}" for v in outside[:MAX_REPORTED]]
    # int32 and int64 stay as they are (half the memory traffic for int32); the kernels add in int64
    dint = dist.astype(_kernel_dtype(dist.dtype), copy=False)
    checks, bad = {"dist_range": True}, []

    checks["source_zero"] = bool(dint[source] == 0)
    if not checks["source_zero"]:
        bad.append(f"dist[{source}] = {int(dint[source])}, the source's distance is 0")

    with_parents = parent is not None and np.issubdtype(parent.dtype, np.integer)
    pint = parent.astype(_kernel_dtype(parent.dtype), copy=False) if with_parents else np.zeros(0, dtype=np.int32)
    # with parents: which parent arcs are tight; without: a tail of a tight arc into each vertex (-1: none)
    tight = np.zeros(n, dtype=np.uint8) if with_parents else np.full(n, -1, dtype=np.int32)
    loose = np.zeros(n, dtype=np.uint8)
    checks["no_relaxable_edge"] = _scan_arcs(graph.indptr, graph.indices, graph.weights, dint, inf, pint, loose,
                                             tight) == 0
    bad += _loose_arcs(graph, dint, np.flatnonzero(loose)[:MAX_REPORTED])

    tree_checks, tree_bad = {}, []
    if parent is not None:
        _check_tree(source, finite, parent, pint, tight, tree_checks, tree_bad)
    if (tree_checks and all(tree_checks.values())) or (parent is None and _tight_tree(source, finite, tight)):
        # a tree of tight arcs (the parents, else one tight in-arc per vertex) reaches every finite vertex
        checks["finite_exactly_tight_reachable"] = True
    else:
        seen = np.zeros(n, dtype=np.uint8)
        if finite[source]:
            _tight_reach(graph.indptr, graph.indices, graph.weights, dint, inf, source, seen, _pieces())
        unproven = np.flatnonzero(finite & (seen == 0))
        checks["finite_exactly_tight_reachable"] = unproven.size == 0
        bad += [f"dist[{v}] = {int(dint[v])}, yet no path of tight edges from {source} reaches {v}: no path that long"
                for v in unproven[:MAX_REPORTED]]
    return {**checks, **tree_checks}, (bad + tree_bad)[:MAX_REPORTED]


def _tight_tree(source: int, finite, via) -> bool:
    """Whether ``via`` (one tight in-arc's tail per vertex, -1 for none) is a tree from ``source`` spanning the finite
    vertices: then tight paths reach each of them. A zero-weight cycle may make it miss where a search would not."""
    via[source] = -1
    expect = finite.copy()
    expect[source] = False
    if not np.array_equal(via >= 0, expect):
        return False
    reaches = np.zeros(via.size, dtype=np.uint8)
    _chains(via, source, reaches)
    return bool((reaches[finite] == 1).all())


def parent_spans(parent, as_int, finite, source: int, checks: dict, bad: list):
    """The first two tree checks, into ``checks`` and ``bad``: parents in range with -1 at the source, and a parent
    exactly at the reachable (``finite``) vertices other than the source. ``as_int``: ``parent`` as integers (empty
    when it holds none). Returns which vertices have a parent, or None when the parents are out of range (no other
    tree check can run then)."""
    n = finite.size
    in_range = as_int.size == n and bool(((parent == -1) | ((parent >= 0) & (parent < n))).all())
    checks["parent_range"] = in_range and bool(as_int[source] == -1)
    if not checks["parent_range"]:
        bad.append(f"parent[{source}] = {parent[source]} (source) or parents out of range")
        return None
    has_parent = as_int != -1
    expect = finite.copy()
    expect[source] = False
    spans = np.flatnonzero(has_parent != expect)
    checks["tree_spans_reachable"] = spans.size == 0
    bad += [f"vertex {v}: parent {int(as_int[v])} but {'reachable' if finite[v] else 'unreachable'}"
            for v in spans[:MAX_REPORTED]]
    return has_parent


def _check_tree(source: int, finite, parent, pint, tight, checks: dict, bad: list) -> None:
    """The tree checks on ``parent`` (-1 at the source and at unreachable vertices; ``pint``: the same as int32 or
    int64, empty when it holds no integers; ``tight``: which vertices have a tight arc from their parent), into
    ``checks`` and ``bad``."""
    n = parent.size
    has_parent = parent_spans(parent, pint, finite, source, checks, bad)
    if has_parent is None:
        return
    not_tight = np.flatnonzero(has_parent & (tight == 0))
    checks["tree_edges_tight"] = not_tight.size == 0
    bad += [f"vertex {v}: no edge {int(pint[v])}->{v} with dist[{v}] = dist[{int(pint[v])}] + w"
            for v in not_tight[:MAX_REPORTED]]

    reaches = np.zeros(n, dtype=np.uint8)
    _chains(pint, source, reaches)
    stuck = np.flatnonzero(has_parent & (reaches == 0))
    checks["chains_reach_source"] = stuck.size == 0
    bad += [f"parent chain from {v} does not reach {source} (cycle or dead end)" for v in stuck[:MAX_REPORTED]]
