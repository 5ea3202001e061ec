"""Contraction hierarchies built on the host with Numba (:func:`build`: a :class:`Hierarchy` in sweep order, contracted
in parallel rounds by :mod:`.rounds`), the upward searches of PHAST's queries (:func:`upward_spaces`) and a query on
the host that checks a hierarchy without a device (:func:`cpu_query`). Witness searches, the contraction order, the
core and the sweep levels: docs/solvers/phast.md ("Preprocessing").
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from numba import get_num_threads, njit, prange, set_parallel_chunksize

from .rounds import _bigger, _pop, _push, contract

INF = np.int64(2**62)
# Numba's default chunk (one equal part a thread): a round's loops run one iteration a thread, each dealing itself
# its runs of vertices (rounds._run); a larger chunk would hand several threads' iterations to one
PARALLEL_CHUNK = 0
SHORT_GROUP = 32  # arcs of one vertex sorted by insertion up to this many, else by a merge sort


@njit(cache=True)
def _levels(n, rank, dptr, dtail):
    """Sweep level per vertex: 0 without downward in-arcs, else 1 + the highest level among their tails (vertices
    visited by decreasing rank, a topological order of the downward graph)."""
    by_rank = np.empty(n, np.int64)
    for v in range(n):
        by_rank[rank[v]] = v
    level = np.zeros(n, np.int32)
    for r in range(n - 1, -1, -1):
        v = by_rank[r]
        lv = 0
        for a in range(dptr[v], dptr[v + 1]):
            lv = max(lv, level[dtail[a]] + 1)
        level[v] = lv
    return level


@njit(cache=True)
def _sort_group(idx, lo, hi, other, w, by_w):
    """``idx[lo:hi]`` (arc indices) sorted by ``other`` (then by ``w`` when ``by_w``), stable: insertion sort for a
    short group, Numba's stable merge sort for a long one (a hub's)."""
    if hi - lo > SHORT_GROUP:
        part = idx[lo:hi].copy()
        if by_w:
            part = part[np.argsort(w[part], kind="mergesort")]
        idx[lo:hi] = part[np.argsort(other[part], kind="mergesort")]
        return
    for i in range(lo + 1, hi):
        a = idx[i]
        j = i
        while j > lo and (other[idx[j - 1]] > other[a] or (by_w and other[idx[j - 1]] == other[a]
                                                           and w[idx[j - 1]] > w[a])):
            idx[j] = idx[j - 1]
            j -= 1
        idx[j] = a


@njit(cache=True)
def _counting_sort(key, buckets):
    """Indices 0 .. key.size - 1 sorted stably by ``key`` (values 0 .. buckets - 1): (ptr [buckets + 1], indices)."""
    ptr = np.zeros(buckets + 1, np.int64)
    for e in range(key.size):
        ptr[key[e] + 1] += 1
    for v in range(buckets):
        ptr[v + 1] += ptr[v]
    fill = ptr[:-1].copy()
    idx = np.empty(key.size, np.int64)
    for e in range(key.size):
        idx[fill[key[e]]] = e
        fill[key[e]] += 1
    return ptr, idx


@njit(cache=True, parallel=True)
def _grouped(n, key, other):
    """A counting sort of the arcs by ``key``, each group then by ``other`` (stable): (ptr [n + 1], arc indices)."""
    ptr, idx = _counting_sort(key, n)
    for v in prange(n):
        _sort_group(idx, ptr[v], ptr[v + 1], other, other, False)
    return ptr, idx


def group_arcs(n, key, other, w, key_dtype=np.int32):
    """Arcs grouped by ``key`` (stable, then by ``other``): (ptr int64, other, w)."""
    ptr, idx = _grouped(n, key, other)
    return ptr, other[idx].astype(key_dtype), w[idx]


@njit(cache=True, parallel=True)
def _simple(indptr, indices, weights):
    """Per CSR row the arcs sorted by (head, weight), then the first of each head but the row's own vertex."""
    n = indptr.size - 1
    idx = np.arange(indices.size)
    kept = np.zeros(n + 1, np.int64)
    for v in prange(n):
        _sort_group(idx, indptr[v], indptr[v + 1], indices, weights, True)
        k, prev = 0, -1
        for i in range(indptr[v], indptr[v + 1]):
            x = indices[idx[i]]
            k += x != v and x != prev
            prev = x
        kept[v + 1] = k
    for v in range(n):
        kept[v + 1] += kept[v]
    tail, head, w = np.empty(kept[n], np.int64), np.empty(kept[n], np.int64), np.empty(kept[n], np.int64)
    for v in prange(n):
        k, prev = kept[v], -1
        for i in range(indptr[v], indptr[v + 1]):
            x = indices[idx[i]]
            if x != v and x != prev:
                tail[k], head[k], w[k] = v, x, weights[idx[i]]
                k += 1
            prev = x
    return tail, head, w


def simple_arcs(graph):
    """The graph's arcs without self-loops, the lightest of duplicates kept: (tail, head, w) as int64, by (tail,
    head)."""
    return _simple(graph.indptr.astype(np.int64), graph.indices.astype(np.int64), graph.weights.astype(np.int64))


@njit(cache=True)
def _by_level(level, levels):
    """Vertices ordered by level, then by id (a counting sort): (order int32, level_ptr int64 [levels + 1])."""
    ptr, order = _counting_sort(level, levels)
    return order.astype(np.int32), ptr


@dataclass
class Hierarchy:
    """A contraction hierarchy in sweep order (vertex ids ``new``; ``order[new]`` is the original id)."""

    n: int
    order: np.ndarray  # int32 [n]: new id -> original id (by level, then original id)
    position: np.ndarray  # int32 [n]: original id -> new id
    rank: np.ndarray  # int64 [n]: contraction rank per new id (core vertices last)
    up_ptr: np.ndarray  # int64 [n + 1]: upward arcs by tail (new ids), the core's arcs among them
    up_head: np.ndarray  # int32
    up_w: np.ndarray  # int64
    down_ptr: np.ndarray  # int64 [n + 1]: downward arcs by head (new ids)
    down_tail: np.ndarray  # int32
    down_w: np.ndarray  # int64
    level_ptr: np.ndarray  # int64 [levels + 1]: level l holds new ids level_ptr[l] .. level_ptr[l + 1] - 1
    core: int  # vertices left uncontracted
    shortcuts: int  # arcs added by contraction (not counting lowered existing arcs)
    searches: int  # witness searches run
    rounds: int  # contraction rounds (an independent set of vertices each)
    seconds: float  # wall time of the build

    @property
    def levels(self) -> int:
        return len(self.level_ptr) - 1

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.order, self.position, self.rank, self.up_ptr, self.up_head, self.up_w,
                                      self.down_ptr, self.down_tail, self.down_w, self.level_ptr))


def build(graph, *, settle: int = 64, hops: int = 8, core_degree: int = 0) -> Hierarchy:
    """The contraction hierarchy of ``graph`` (non-negative weights) with bounded witness searches, built on Numba's
    threads (the same hierarchy on any number of them)."""
    t0 = time.perf_counter()
    n = graph.n
    tail, head, w = simple_arcs(graph)
    chunk = set_parallel_chunksize(PARALLEL_CHUNK)  # set here, not inside contract: that would stop Numba caching it
    try:
        rank, ut, uh, uw, dt, dh, dw, core, shortcuts, searches, rounds = contract(
            n, tail.astype(np.int32), head.astype(np.int32), w, int(settle), int(hops), int(core_degree),
            get_num_threads())
    finally:
        set_parallel_chunksize(chunk)
    dptr, by_head = _grouped(n, dh, dt)
    level = _levels(n, rank, dptr, dt[by_head])
    order, level_ptr = _by_level(level, int(level.max(initial=0)) + 1)
    position = np.empty(n, dtype=np.int32)
    position[order] = np.arange(n, dtype=np.int32)
    up_ptr, up_head, up_w = group_arcs(n, position[ut], position[uh], uw)
    down_ptr, down_tail, down_w = group_arcs(n, position[dh], position[dt], dw)
    return Hierarchy(n, order, position, rank[order], up_ptr, up_head.astype(np.int32), up_w, down_ptr,
                     down_tail.astype(np.int32), down_w, level_ptr, int(core), int(shortcuts), int(searches), int(rounds),
                     time.perf_counter() - t0)


@njit(cache=True, nogil=True)
def _stalled(x, key, i, seen, dist, down_ptr, down_tail, down_w):
    for a in range(down_ptr[x], down_ptr[x + 1]):
        y = down_tail[a]
        if seen[y] >= 2 * i and dist[y] + down_w[a] < key:
            return True
    return False


def search_scratch(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A thread's scratch for :func:`upward_spaces` on n vertices: distances, marks (none yet) and the clock."""
    return np.zeros(n, np.int64), np.full(n, -1, np.int64), np.zeros(1, np.int64)


@njit(cache=True, nogil=True)
def upward_spaces(up_ptr, up_head, up_w, sources, down_ptr=None, down_tail=None, down_w=None, stop=None,
                  scratch=None):
    """Dijkstra from each source (new ids) over the upward graph: (ptr [K + 1], vertex, distance) of the vertices
    each search settles (its search space), in settling order. Given the downward arcs, with stall-on-demand: a popped
    vertex x that a settled vertex y above it reaches shorter (dist[y] + w(y, x) < dist[x] over the downward arcs into
    x) is neither expanded nor kept, since its shortest path runs down from y and the sweep finds it. Given ``stop``
    (a flag per vertex: the core searched elsewhere), a flagged vertex is kept with the distance it is reached at but
    not expanded. Given ``scratch`` (distances and marks of n words each, and a one-word clock, kept between calls by
    one thread), nothing of size n is allocated or cleared: a search marks with the clock's next stamp, so a call of
    a few sources on a graph of millions costs what its searches touch."""
    n = up_ptr.size - 1
    if scratch is None:
        dist, seen, base = np.zeros(n, np.int64), np.full(n, -1, np.int64), 0
    else:
        dist, seen, clock = scratch
        base = clock[0]
        clock[0] += sources.size
    hk, hv, hh = np.empty(16, np.int64), np.empty(16, np.int32), np.empty(16, np.int32)
    ptr = np.zeros(sources.size + 1, np.int64)
    out_v, out_d = np.empty(64, np.int32), np.empty(64, np.int64)
    k = 0
    for i in range(sources.size):
        s, t = sources[i], base + i  # t: the search's stamp
        seen[s] = 2 * t
        dist[s] = 0
        size = _push(hk, hv, hh, 0, 0, s, 0)
        while size > 0:
            key, x, _, size = _pop(hk, hv, hh, size)
            if seen[x] == 2 * t + 1 or key > dist[x]:
                continue
            seen[x] = 2 * t + 1  # settled (or stalled)
            if down_ptr is not None and _stalled(x, key, t, seen, dist, down_ptr, down_tail, down_w):
                continue
            if k == out_v.size:
                out_v, out_d = _bigger(out_v, 2 * k), _bigger(out_d, 2 * k)
            out_v[k], out_d[k] = x, key
            k += 1
            if stop is not None and stop[x]:
                continue
            for a in range(up_ptr[x], up_ptr[x + 1]):
                y = up_head[a]
                nd = key + up_w[a]
                if seen[y] < 2 * t or (seen[y] == 2 * t and nd < dist[y]):
                    seen[y] = 2 * t
                    dist[y] = nd
                    if size == hk.size:
                        hk, hv, hh = _bigger(hk, 2 * size), _bigger(hv, 2 * size), _bigger(hh, 2 * size)
                    size = _push(hk, hv, hh, size, nd, y, 0)
        ptr[i + 1] = k
    return ptr, out_v[:k], out_d[:k]


@njit(cache=True, nogil=True)
def _closure(v, token, up_ptr, up_head, up_w, down_ptr, down_tail, down_w, start, size, verts, dists, best, stamp,
             touched, out_v, out_d):
    """Vertex v's pruned upward space from its upward neighbours' (:func:`upward_closures`), the scratch entries of
    this pass marked ``token``; its entries written when ``out_v`` has room for them (the second pass), else only
    counted. Returns the count."""
    stamp[v], best[v], t = token, 0, 1
    touched[0] = v
    for a in range(up_ptr[v], up_ptr[v + 1]):
        u, w = up_head[a], up_w[a]
        for e in range(start[u], start[u] + size[u]):
            x, nd = verts[e], w + dists[e]
            if stamp[x] != token:
                stamp[x], best[x] = token, nd
                touched[t] = x
                t += 1
            elif nd < best[x]:
                best[x] = nd
    k = 0
    for i in range(t):
        x = touched[i]
        stalled = False
        for a in range(down_ptr[x], down_ptr[x + 1]):
            y = down_tail[a]
            if stamp[y] == token and best[y] + down_w[a] < best[x]:
                stalled = True
                break
        if not stalled:
            if k < out_v.size:
                out_v[k], out_d[k] = x, best[x]
            k += 1
    return k


@njit(cache=True, parallel=True)
def upward_closures(up_ptr, up_head, up_w, down_ptr, down_tail, down_w, rank, threads):
    """Every vertex's upward search space at once, by dynamic programming instead of a Dijkstra a source: a vertex's
    space is itself at 0 and, through each upward arc (v, u, w), u's space shifted by w, the least distance per vertex
    kept; then an entry x is dropped when some entry y of the same space reaches it shorter over a downward arc
    (d(y) + w(y, x) < d(x): stall-on-demand on final distances). Every vertex on the upward part of a shortest path
    keeps its exact distance (a strict improvement would contradict it), so spaces composed from pruned spaces still
    hold each shortest path's peak at its distance; the sweep takes minima, so the other entries' larger values do no
    harm. Vertices go in waves (wave 0: no upward arc; then 1 + the highest wave among their upward neighbours), each
    wave's vertices independent and spread over ``threads`` scratch rows, twice (count, then write at prefix sums).
    Returns (ptr [n + 1], vertex, distance) by vertex id."""
    n = up_ptr.size - 1
    by_rank = np.empty(n, np.int64)
    for v in range(n):
        by_rank[rank[v]] = v
    wave = np.zeros(n, np.int64)
    waves = 0
    for r in range(n - 1, -1, -1):
        v = by_rank[r]
        for a in range(up_ptr[v], up_ptr[v + 1]):
            wave[v] = max(wave[v], wave[up_head[a]] + 1)
        waves = max(waves, wave[v] + 1)
    wptr, members = _counting_sort(wave, waves)
    start = np.zeros(n, np.int64)
    size = np.zeros(n, np.int64)
    room = np.zeros(n + 1, np.int64)
    verts, dists = np.empty(max(16, 4 * n), np.int32), np.empty(max(16, 4 * n), np.int64)
    best = np.zeros((threads, n), np.int64)
    stamp = np.full((threads, n), -1, np.int64)
    touched = np.empty((threads, n), np.int64)
    k = 0
    for wv in range(waves):
        lo, hi = wptr[wv], wptr[wv + 1]
        room[lo] = k  # each vertex of the wave gets room for 1 + its upward neighbours' entries, past the kept ones
        for i in range(lo, hi):
            v = members[i]
            bound = 1
            for a in range(up_ptr[v], up_ptr[v + 1]):
                bound += size[up_head[a]]
            room[i + 1] = room[i] + bound
        if room[hi] > verts.size:
            verts, dists = _bigger(verts, 2 * room[hi]), _bigger(dists, 2 * room[hi])
        for c in prange(threads):
            for i in range(lo + c, hi, threads):
                v = members[i]
                size[v] = _closure(v, v, up_ptr, up_head, up_w, down_ptr, down_tail, down_w, start, size, verts, dists,
                                   best[c], stamp[c], touched[c], verts[room[i]:room[i + 1]],
                                   dists[room[i]:room[i + 1]])
        for i in range(lo, hi):  # packed behind the kept entries (moving left, in order: nothing is overwritten early)
            v = members[i]
            start[v] = k
            for e in range(size[v]):
                verts[k + e], dists[k + e] = verts[room[i] + e], dists[room[i] + e]
            k += size[v]
    ptr = np.zeros(n + 1, np.int64)
    for v in range(n):
        ptr[v + 1] = ptr[v] + size[v]
    out_v, out_d = np.empty(ptr[n], np.int32), np.empty(ptr[n], np.int64)
    for v in prange(n):
        for i in range(size[v]):
            out_v[ptr[v] + i], out_d[ptr[v] + i] = verts[start[v] + i], dists[start[v] + i]
    return ptr, out_v, out_d


@njit(cache=True)
def gather_spaces(ptr, verts, dists, sources):
    """The spaces of ``sources`` (new ids) from :func:`upward_closures`' arrays, as :func:`upward_spaces` returns
    them."""
    out_ptr = np.zeros(sources.size + 1, np.int64)
    for i in range(sources.size):
        out_ptr[i + 1] = out_ptr[i] + ptr[sources[i] + 1] - ptr[sources[i]]
    out_v, out_d = np.empty(out_ptr[-1], np.int32), np.empty(out_ptr[-1], np.int64)
    for i in range(sources.size):
        s = sources[i]
        out_v[out_ptr[i]:out_ptr[i + 1]] = verts[ptr[s]:ptr[s + 1]]
        out_d[out_ptr[i]:out_ptr[i + 1]] = dists[ptr[s]:ptr[s + 1]]
    return out_ptr, out_v, out_d


@njit(cache=True)
def _sweep(down_ptr, down_tail, down_w, level_ptr, dist):
    """The downward sweep on the host: level by level, every vertex pulls over its downward in-arcs."""
    for v in range(level_ptr[1], level_ptr[-1]):
        d = dist[v]
        for a in range(down_ptr[v], down_ptr[v + 1]):
            du = dist[down_tail[a]]
            if du != INF and du + down_w[a] < d:
                d = du + down_w[a]
        dist[v] = d


def cpu_query(h: Hierarchy, source: int) -> np.ndarray:
    """Distances (int64, original ids, ``INF`` unreachable) from ``source`` by an upward search and a downward
    sweep, both on the host: the hierarchy checked without a device."""
    _, verts, dists = upward_spaces(h.up_ptr, h.up_head, h.up_w, np.array([h.position[source]], dtype=np.int64))
    dist = np.full(h.n, INF, dtype=np.int64)
    dist[verts] = dists
    _sweep(h.down_ptr, h.down_tail, h.down_w, h.level_ptr, dist)
    return dist[h.position]


_WARM = [False]


def warm() -> float:
    """Compile (or load from Numba's cache) every host function a build and a sweep call, on a 4-vertex graph, once
    a process: the seconds it took (0 once warm), so that a build's own time holds no JIT."""
    if _WARM[0]:
        return 0.0
    from ...data.graph import Graph

    t0 = time.perf_counter()
    tiny = Graph.from_edges(4, np.array([0, 1, 2, 1]), np.array([1, 2, 3, 3]), np.array([1, 2, 1, 4]), name="warm")
    h = build(tiny)
    closures = upward_closures(h.up_ptr, h.up_head, h.up_w, h.down_ptr, h.down_tail, h.down_w, h.rank, 1)
    gather_spaces(*closures, np.arange(2, dtype=np.int64))
    cpu_query(h, 0)  # the stalled upward search and the host sweep
    sources, down, scratch = np.arange(2, dtype=np.int64), (h.down_ptr, h.down_tail, h.down_w), search_scratch(h.n)
    for stop in (None, np.zeros(h.n, np.bool_)):  # phast_gpu's searches, with and without a core on the device
        upward_spaces(h.up_ptr, h.up_head, h.up_w, sources, *down, stop, scratch)
    _WARM[0] = True
    return time.perf_counter() - t0
