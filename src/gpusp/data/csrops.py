"""O(m) passes over a CSR graph that NumPy would do by sorting or SciPy by copying it: whether every row is simple and
sorted, the stable transpose (arcs ordered by target), symmetry (a multiset hash) and breadth-first hop counts. Used
where graphs have billions of arcs (GAPBS's serialized files, the solvers' automatic settings); Numba, on the CPU.
"""

from __future__ import annotations

import numpy as np
from numba import get_num_threads, njit, prange


@njit(parallel=True, cache=True)
def _unsorted_rows(indptr, indices):
    bad = 0
    for u in prange(indptr.size - 1):
        prev = -1
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            if v <= prev or v == u:
                bad += 1
                break
            prev = v
    return bad


def simple_and_sorted(graph) -> bool:
    """Whether every row's targets rise strictly and skip the row's own vertex: no parallel arcs, no self-loops, each
    vertex's arcs in target order (what :meth:`Graph.simple` returns for a graph without negative self-loops)."""
    return graph.m == 0 or _unsorted_rows(graph.indptr, graph.indices) == 0


@njit(cache=True)
def _counting_order(indices, in_indptr):
    cursor = in_indptr[:-1].copy()
    order = np.empty(indices.size, dtype=np.int64)
    for e in range(indices.size):  # arcs in CSR order: each target's in-arcs come out in source order (stable)
        v = indices[e]
        order[cursor[v]] = e
        cursor[v] += 1
    return order


def transpose_order(graph) -> tuple[np.ndarray, np.ndarray]:
    """(in_indptr, order): the transpose's int64 offsets and the arcs sorted stably by target (a counting sort, O(m)),
    so that ``sources[order]`` lists each target's in-neighbours in source order."""
    in_indptr = np.zeros(graph.n + 1, dtype=np.int64)
    np.cumsum(np.bincount(graph.indices, minlength=graph.n), out=in_indptr[1:])
    return in_indptr, _counting_order(graph.indices, in_indptr)


@njit(inline="always")
def mix64(z):
    """SplitMix64's finaliser: a bijection of 64-bit words whose every output bit depends on every input bit."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(inline="always")
def _arc_key(seed, a, b, w):
    return mix64(mix64(mix64(seed ^ np.uint64(a)) ^ np.uint64(b)) ^ np.uint64(w))


@njit(parallel=True, cache=True)
def _multiset_hashes(indptr, indices, weights, weighted):
    """Sums (mod 2^64) of two independent hashes of every arc (u, v, w) and of its reverse (v, u, w) (w = 0 when not
    ``weighted``)."""
    s1, s2 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xD1B54A32D192ED03)
    f1 = r1 = f2 = r2 = np.uint64(0)
    for u in prange(indptr.size - 1):
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            w = np.int64(weights[e]) if weighted else np.int64(0)
            f1 += _arc_key(s1, u, v, w)
            r1 += _arc_key(s1, v, u, w)
            f2 += _arc_key(s2, u, v, w)
            r2 += _arc_key(s2, v, u, w)
    return f1, r1, f2, r2


def symmetric(graph, weighted: bool = True) -> bool:
    """Whether the arcs (u, v, w), as a multiset, are their own reverses (v, u, w) (w ignored when not ``weighted``):
    two independent 64-bit multiset hashes of the arcs and of their reverses compared, one streaming parallel pass, no
    copy, no sort. Exact where it says no; where it says yes, two different multisets would have to collide in both
    hashes (about 2^-128)."""
    if graph.m == 0:
        return True
    f1, r1, f2, r2 = _multiset_hashes(graph.indptr, graph.indices, graph.weights, weighted)
    return f1 == r1 and f2 == r2


@njit(parallel=True, cache=True)
def _expand_level(indptr, indices, hops, frontier, size, level, shares):
    """Mark every unvisited out-neighbour of frontier[:size] with hop level + 1, in parallel over equal shares of the
    frontier's arcs (a hub's arcs are split between threads). Two threads may mark the same vertex: both write the
    same value."""
    prefix = np.empty(size + 1, dtype=np.int64)
    prefix[0] = 0
    for i in range(size):
        u = frontier[i]
        prefix[i + 1] = prefix[i] + indptr[u + 1] - indptr[u]
    per = max(1, -(-prefix[size] // shares))
    for c in prange(shares):
        lo = c * per
        hi = min(prefix[size], lo + per)
        i = np.searchsorted(prefix, lo, side="right") - 1
        while lo < hi:
            u = frontier[i]
            first = indptr[u] + lo - prefix[i]
            last = indptr[u] + min(hi, prefix[i + 1]) - prefix[i]
            for e in range(first, last):
                v = indices[e]
                if hops[v] < 0:
                    hops[v] = level + 1
            lo = prefix[i + 1]
            i += 1


@njit(parallel=True, cache=True)
def _gather_level(hops, level, out, shares):
    """The vertices at hop ``level``, in id order, into ``out``; how many. Two parallel passes over hops (counts per
    share, then the writes at their prefix)."""
    n = hops.size
    per = -(-n // shares)
    counts = np.zeros(shares + 1, dtype=np.int64)
    for c in prange(shares):
        k = 0
        for v in range(c * per, min(n, (c + 1) * per)):
            k += hops[v] == level
        counts[c + 1] = k
    for c in range(shares):
        counts[c + 1] += counts[c]
    for c in prange(shares):
        k = counts[c]
        for v in range(c * per, min(n, (c + 1) * per)):
            if hops[v] == level:
                out[k] = v
                k += 1
    return counts[shares]


@njit(cache=True)
def _thin_levels(indptr, indices, hops, frontier, following, size, level, parallel_from):
    """Serial levels from frontier[:size] (at hop ``level``) while a level has fewer than ``parallel_from`` arcs (a
    road network's thousands of levels), each next frontier in discovery order; (frontier, following, size, level)
    at the first wide level, or with size 0 at the end."""
    while size > 0:
        arcs = 0
        for i in range(size):
            arcs += indptr[frontier[i] + 1] - indptr[frontier[i]]
        if arcs >= parallel_from:
            break
        tail = 0
        for i in range(size):
            u = frontier[i]
            for e in range(indptr[u], indptr[u + 1]):
                v = indices[e]
                if hops[v] < 0:
                    hops[v] = level + 1
                    following[tail] = v
                    tail += 1
        frontier, following = following, frontier
        size = tail
        level += 1
    return frontier, following, size, level


def bfs_hops(graph, source: int, parallel_from: int | None = None) -> np.ndarray:
    """Hops from ``source`` to every vertex along arcs (int64, -1 where it does not reach): one breadth-first search,
    O(n + m), with no copy of the graph. A level whose frontier has ``parallel_from`` arcs or more (n / 16 and at
    least 2^16 unless given) is expanded by every Numba thread; the hop counts do not depend on the thread count."""
    if parallel_from is None:
        parallel_from = max(1 << 16, graph.n >> 4)
    hops = np.full(graph.n, -1, dtype=np.int64)
    frontier = np.empty(graph.n, dtype=np.int32)
    following = np.empty(graph.n, dtype=np.int32)
    hops[source] = 0
    frontier[0] = source
    size, level = 1, 0
    while True:
        frontier, following, size, level = _thin_levels(graph.indptr, graph.indices, hops, frontier, following, size,
                                                        level, parallel_from)
        if size == 0:
            return hops
        # a wide level (a power-law graph's few): its arcs split between threads, then the vertices it reached
        # gathered by a parallel pass over hops, which costs O(n) and pays only past about n / 16 arcs
        _expand_level(graph.indptr, graph.indices, hops, frontier, size, level, 64 * get_num_threads())
        size = _gather_level(hops, level + 1, following, 16 * get_num_threads())
        frontier, following = following, frontier
        level += 1


@njit(parallel=True, cache=True)
def _split_pairs(flat, n, ids, weights, shares):
    m = ids.size
    per = -(-m // shares)
    first_bad = np.full(shares, m, dtype=np.int64)
    for c in prange(shares):
        for j in range(c * per, min(m, (c + 1) * per)):
            v = flat[2 * j]
            ids[j] = v
            weights[j] = flat[2 * j + 1]
            if (v < 0 or v >= n) and first_bad[c] == m:
                first_bad[c] = j
    return first_bad.min()


def split_pairs(flat: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, int]:
    """(ids, weights, first bad) of interleaved int32 (id, weight) pairs, as GAPBS's .wsg stores each neighbour: one
    parallel pass that copies both halves out (from a mapped file: every page read once) and finds the first id
    outside 0..n-1 (the arc count when there is none)."""
    m = flat.size // 2
    ids = np.empty(m, dtype=np.int32)
    weights = np.empty(m, dtype=np.int32)
    bad = _split_pairs(flat, n, ids, weights, 16 * get_num_threads()) if m else 0
    return ids, weights, int(bad)
