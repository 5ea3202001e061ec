"""The shared floors under the solver families: what several families rely on is checked once here."""

import numpy as np
import pytest
from cases import _g, random_graph, sssp_cases

from gpusp.data.graph import dense_predecessors, inf_for
from gpusp.solvers.common import dense
from gpusp.solvers.common import launch
from gpusp.solvers.scipy.reference import scipy_matrix, scipy_paths


def reference_matrices(graph, n_pad, tie):
    """The padded matrices built the obvious way: the dense matrix, its predecessors, the hop scale applied."""
    wide = inf_for(np.int64)
    mat = graph.to_dense(np.int64)
    p = np.full((n_pad, n_pad), -1, dtype=np.int32)
    d = np.full((n_pad, n_pad), tie.inf, dtype=tie.dtype)
    np.fill_diagonal(d, 0)
    n = graph.n
    p[:n, :n] = dense_predecessors(mat, wide)
    if tie.scale:
        diag = np.diagonal(mat).copy()
        mat = np.where(mat != wide, mat * tie.scale + 1, wide)
        np.fill_diagonal(mat, np.where(diag < 0, diag * tie.scale + 1, 0))
    d[:n, :n] = np.where(mat == wide, tie.inf, mat)
    return d, p


CASES = sssp_cases(negative=True) + [
    ("parallel-and-loops", _g(4, [(0, 1, 5), (0, 1, 3), (1, 1, 0), (2, 2, -1), (2, 3, 0), (3, 0, 2), (3, 0, 2)],
                              "loops"), 0),
    ("positive", random_graph(23, 90, seed=4, wmin=1, wmax=50), 0),
]


@pytest.mark.parametrize("label,graph,source", CASES, ids=[c[0] for c in CASES])
def test_padded_matrices_match_the_dense_construction(label, graph, source):
    tie = dense.hop_tiebreak(graph)
    assert tie.scale == (graph.n + 1 if graph.m and graph.weights.min() <= 0 else 0)
    for n_pad in {graph.n, -(-graph.n // 8) * 8 or 8}:
        d, p = dense.padded_matrices(graph, n_pad, tie)
        d_ref, p_ref = reference_matrices(graph, n_pad, tie)
        assert d.dtype == tie.dtype and np.array_equal(d, d_ref) and np.array_equal(p, p_ref), label


def test_undo_tiebreak_recovers_distances():
    graph = _g(3, [(0, 1, 0), (1, 2, 4)], "zero")
    tie = dense.hop_tiebreak(graph)
    scaled = np.array([[0, 1, 4 * 4 + 2], [tie.inf, 0, 4 * 4 + 1], [tie.inf, tie.inf, 0]], dtype=tie.dtype)
    out = dense.undo_tiebreak(scaled, tie, graph)
    assert out.dtype == graph.dtype
    assert out.tolist() == [[0, 0, 4], [graph.inf, 0, 4], [graph.inf, graph.inf, 0]]
    plain = random_graph(5, 10, seed=1, wmin=1, wmax=9)
    tie = dense.hop_tiebreak(plain)
    m = np.arange(25, dtype=plain.dtype).reshape(5, 5)
    assert dense.undo_tiebreak(m, tie, plain) is m  # nothing to undo: no n x n copy in the timed download


@pytest.mark.skipif(not launch.TARGET.simulator, reason="a property of the simulator: this run uses a GPU")
def test_target_in_the_simulator():
    """The tests run in the simulator: what it lacks is switched off in one place."""
    t = launch.TARGET
    assert t.simulator and not t.warp_intrinsics and not t.gpu
    assert t.register_cap(40) == {} and t.launch_bounds(256, 2) == {} and t.alignment(16) is None
    assert t.threads(256, 32) == 32
    real = launch.Target(simulator=False)
    assert real.register_cap(40) == {"max_registers": 40} and real.register_cap(0) == {}
    assert real.launch_bounds(256, 2) == {"launch_bounds": (256, 2)} and real.alignment(16) == 16
    assert real.alignment(4) is None


def test_tight_parents_are_derived_per_row_on_demand():
    """The parents of an APSP answer without recorded paths: a row of the host-derived parents is what the whole
    matrix holds, every parent is a tight arc, and nothing is derived until a row is asked for (a download stays a
    copy)."""
    g = random_graph(13, 40, seed=5)
    d, _ = scipy_paths(g, scipy_matrix(g))
    lazy = dense.apsp_tight_parents(g, d, g.inf)
    assert lazy._full is None and lazy.shape == (g.n, g.n)
    rows = lazy[[0, 5, 12]]
    assert lazy._full is None
    whole = np.asarray(lazy)
    assert np.array_equal(rows, whole[[0, 5, 12]]) and np.array_equal(lazy[7], whole[7])
    tails, heads, weights = g.coo()
    for s in range(g.n):
        for v in range(g.n):
            p = whole[s, v]
            if v == s or d[s, v] == g.inf:
                assert p == -1
            else:
                assert d[s, p] + weights[(tails == p) & (heads == v)].min() == d[s, v]
