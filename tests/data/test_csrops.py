"""The O(m) CSR passes (gpusp.data.csrops) against NumPy's sorting answers, on the awkward graphs."""

import numpy as np
import pytest

from gpusp.data.csrops import simple_and_sorted, symmetric_simple, transpose_order
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


@pytest.mark.parametrize("seed", range(8))
def test_symmetry_of_simple_graphs_agrees_with_sorting(seed):
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(2, 30)), int(rng.integers(1, 120))
    g = graph(n, list(zip(rng.integers(0, n, m), rng.integers(0, n, m), rng.integers(1, 5, m)))).simple()
    sym = symmetrize(g).simple()
    for h in (g, sym):
        src, dst, w = h.coo()
        expect = sorted(zip(src, dst, w)) == sorted(zip(dst, src, w))
        assert symmetric_simple(h) == expect
    assert symmetric_simple(graph(4, [])) and not symmetric_simple(graph(2, [(0, 1, 1)]))
    assert not symmetric_simple(graph(2, [(0, 1, 1), (1, 0, 2)]))  # the reverse arc weighs differently
