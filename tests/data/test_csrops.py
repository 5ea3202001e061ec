"""The O(m) CSR passes (gpusp.data.csrops) against NumPy's sorting answers, on the awkward graphs."""

import numpy as np
import pytest

from gpusp.data.csrops import bfs_hops, simple_and_sorted, symmetric, transpose_order
from gpusp.data.graph import Graph
from gpusp.data.weights import symmetrize


def graph(n, edges):
    src, dst, w = (np.array(c, dtype=np.int64) for c in zip(*edges)) if edges else ([], [], [])
    return Graph.from_edges(n, src, dst, w)


@pytest.mark.parametrize("seed", range(8))
def test_transpose_is_the_stable_sort_by_target(seed):
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(1, 40)), int(rng.integers(0, 200))
    g = graph(n, list(zip(rng.integers(0, n, m), rng.integers(0, n, m), rng.integers(0, 9, m))))
    in_indptr, order = transpose_order(g)
    assert np.array_equal(order, np.argsort(g.indices, kind="stable"))
    assert np.array_equal(in_indptr, np.concatenate([[0], np.cumsum(np.bincount(g.indices, minlength=n))]))


def test_simple_and_sorted_refuses_loops_duplicates_and_unsorted_rows():
    assert simple_and_sorted(graph(1, [])) and simple_and_sorted(graph(3, [(0, 1, 1), (0, 2, 1), (2, 0, 5)]))
    assert not simple_and_sorted(graph(3, [(0, 0, 1)]))  # self-loop
    assert not simple_and_sorted(graph(3, [(0, 1, 1), (0, 1, 2)]))  # parallel arcs
    unsorted = Graph(3, np.array([0, 2, 2, 2]), np.array([2, 1]), np.array([1, 1]))
    assert not simple_and_sorted(unsorted)


@pytest.mark.parametrize("seed", range(10))
def test_symmetry_agrees_with_sorting_on_multigraphs_and_without_weights(seed):
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(2, 30)), int(rng.integers(1, 120))
    g = graph(n, list(zip(rng.integers(0, n, m), rng.integers(0, n, m), rng.integers(1, 5, m))))
    for h in (g, symmetrize(g), g.simple(), symmetrize(g).simple()):
        src, dst, w = h.coo()
        assert symmetric(h) == (sorted(zip(src, dst, w)) == sorted(zip(dst, src, w)))
        assert symmetric(h, weighted=False) == (sorted(zip(src, dst)) == sorted(zip(dst, src)))
    assert symmetric(graph(4, [])) and symmetric(graph(1, [(0, 0, 3)])) and not symmetric(graph(2, [(0, 1, 1)]))
    assert not symmetric(graph(2, [(0, 1, 1), (1, 0, 2)]))  # the reverse arc weighs differently
    assert symmetric(graph(2, [(0, 1, 1), (1, 0, 2)]), weighted=False)
    assert not symmetric(graph(2, [(0, 1, 1), (0, 1, 1), (1, 0, 1)]))  # a multiset: twice one way, once back


def test_bfs_hops_are_scipys():
    from scipy.sparse import csr_array
    from scipy.sparse.csgraph import shortest_path

    for seed in range(4):
        rng = np.random.default_rng(seed)
        g = graph(30, list(zip(rng.integers(0, 30, 50), rng.integers(0, 30, 50), rng.integers(0, 5, 50))))
        unit = csr_array((np.ones(g.m), g.indices, g.indptr), shape=(g.n, g.n))
        for s in (0, 7):
            d = shortest_path(unit, indices=s, unweighted=True, directed=True)
            want = np.where(np.isfinite(d), d, -1).astype(np.int64)
            # serial levels, every level split between threads (a hub's arcs too), and the automatic mix
            for parallel_from in (2**62, 0, 1, 5, None):
                assert np.array_equal(bfs_hops(g, s, parallel_from), want), parallel_from


def test_bfs_hops_split_a_hub_between_threads():
    # a star with a tail: the hub's 5,000 arcs are one level, split across shares; the tail is five thin levels
    n = 5006
    edges = [(0, v, 1) for v in range(1, 5001)] + [(5000 + i, 5001 + i, 1) for i in range(5)]
    g = graph(n, edges)
    want = np.r_[0, np.ones(5000, np.int64), np.arange(2, 7)]
    for parallel_from in (0, 100, None):
        assert np.array_equal(bfs_hops(g, 0, parallel_from), want)
    assert np.array_equal(bfs_hops(g, 5003, 0), np.r_[np.full(5003, -1), 0, 1, 2])
