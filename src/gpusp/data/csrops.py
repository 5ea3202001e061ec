"""O(m) passes over a CSR graph that NumPy would do by sorting: whether every row is simple and sorted, the stable
transpose (arcs ordered by target), and symmetry of a simple graph. Used where graphs have billions of arcs (writing
GAPBS's serialized files), compiled by Numba on the CPU on first use.
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


@njit(parallel=True, cache=True)
def _mismatches(indptr, indices, weights, order):
    bad = 0
    for v in prange(indptr.size - 1):
        for k in range(indptr[v], indptr[v + 1]):
            e = order[k]  # the k-th in-arc of v, u -> v; the out-arc at the same rank must be v -> u, same weight
            u = np.searchsorted(indptr, e, side="right") - 1
            if indices[k] != u or weights[k] != weights[e]:
                bad += 1
                break
    return bad


def symmetric_simple(graph) -> bool:
    """Whether a graph whose rows are simple and sorted (:func:`simple_and_sorted`) has every arc u -> v, w matched by
    v -> u, w: its out-rows equal its in-rows (same offsets), arc for arc. O(m log n)."""
    if graph.m == 0:
        return True
    in_indptr, order = transpose_order(graph)
    indptr = graph.indptr.astype(np.int64, copy=False)
    return bool(np.array_equal(indptr, in_indptr)) and _mismatches(indptr, graph.indices, graph.weights, order) == 0
