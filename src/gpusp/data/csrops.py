"""O(m) passes over a CSR graph that NumPy would do by sorting or SciPy by copying it: whether every row is simple and
sorted, the stable transpose (arcs ordered by target), symmetry (a multiset hash) and breadth-first hop counts. Used
where graphs have billions of arcs (GAPBS's serialized files, the solvers' automatic settings); Numba, on the CPU.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


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


@njit(cache=True)
def _bfs_hops(indptr, indices, source):
    hops = np.full(indptr.size - 1, -1, dtype=np.int64)
    queue = np.empty(indptr.size - 1, dtype=np.int32)
    hops[source] = 0
    queue[0] = source
    head, tail = 0, 1
    while head < tail:
        u = queue[head]
        head += 1
        next_hop = hops[u] + 1
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            if hops[v] < 0:
                hops[v] = next_hop
                queue[tail] = v
                tail += 1
    return hops


def bfs_hops(graph, source: int) -> np.ndarray:
    """Hops from ``source`` to every vertex along arcs (int64, -1 where it does not reach): one breadth-first search,
    O(n + m), with no copy of the graph."""
    return _bfs_hops(graph.indptr, graph.indices, int(source))
