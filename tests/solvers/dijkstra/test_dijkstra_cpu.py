"""The CPU Dijkstra solvers (dijkstra_cpu: a heap over the CSR; dijkstra_cpumatrix: paper 000's heap with a matrix
row scan; dijkstra_cputhreads: every source on a few threads) against SciPy on the awkward cases; gpusp.path and the
wall-clock timings on a CPU solver."""

import numpy as np
import pytest
from cases import _g, assert_apsp_ok, assert_sssp_ok, random_graph, sssp_cases

import gpusp
from gpusp.errors import SolverError

CASES = sssp_cases()
NEGATIVE = sssp_cases(negative=True)[-3][1]


@pytest.mark.parametrize("label,graph,source", CASES, ids=[c[0] for c in CASES])
def test_matches_reference(label, graph, source):
    assert_sssp_ok(graph, source, gpusp.solve(graph, "dijkstra_cpu", source))


def test_refuses_negative_weights():
    with pytest.raises(SolverError, match="negative weights"):
        gpusp.solve(NEGATIVE, "dijkstra_cpu", 0)


def test_path_and_timings():
    graph = CASES[3][1]
    res = gpusp.solve(graph, "dijkstra_cpu", 0, trials=3, warmup=1)
    assert gpusp.path(res, 4) == [0, 3, 4]
    assert len(res.timings.samples_ms) == 3 and res.timings.clock == "wall"
    assert res.timings.q1_ms <= res.timings.median_ms <= res.timings.q3_ms
    unreachable = CASES[2]
    res = gpusp.solve(unreachable[1], "dijkstra_cpu", 0)
    assert gpusp.path(res, 5) == [] and res.dist[5] == res.inf


@pytest.mark.parametrize("label,graph,source", CASES + [("random-60", random_graph(60, 400, seed=7, wmin=0, wmax=5),
                                                          0)],
                         ids=[c[0] for c in CASES] + ["random-60"])
def test_cpumatrix_matches_scipy(label, graph, source):
    res = gpusp.solve(graph, "dijkstra_cpumatrix", trials=2)
    assert_apsp_ok(graph, res)
    ref = gpusp.solve(graph, "scipy_apsp")
    assert np.array_equal(res.dist, ref.dist)
    assert res.dist.shape == (graph.n, graph.n) and res.parent.dtype == np.int32
    assert (np.diagonal(res.parent) == -1).all()
    assert res.counters["relaxations"] == res.counters["iterations"] * graph.n  # a full row per pop


def test_cpumatrix_keeps_the_lightest_duplicate_and_ignores_self_loops():
    graph = _g(3, [(0, 1, 9), (0, 1, 2), (0, 1, 5), (1, 1, 0), (0, 0, 4), (1, 2, 1)], "dups")
    res = gpusp.solve(graph, "dijkstra_cpumatrix")
    assert res.dist[0].tolist() == [0, 2, 3] and res.parent[0].tolist() == [-1, 0, 1]
    assert res.dist[2, 0] == res.inf and res.parent[2, 0] == -1


@pytest.mark.parametrize("threads", [1, 3])
def test_cputhreads_every_source_like_scipy(threads):
    """Every source on 1 or 3 threads (sources dealt round-robin, so a thread may get none on n = 1): the rows and
    their parents equal SciPy's and pass the tree checks; the settled count is each source's reach summed."""
    for label, graph, _ in CASES + [("random-60", random_graph(60, 400, seed=7, wmin=0, wmax=5), 0)]:
        res = gpusp.solve(graph, "dijkstra_cputhreads", threads=threads)
        assert_apsp_ok(graph, res)
        assert np.array_equal(res.dist, gpusp.solve(graph, "scipy_apsp").dist), label
        assert res.counters["iterations"] == int((res.dist != res.inf).sum()), label
    with pytest.raises(SolverError, match="negative weights"):
        gpusp.solve(NEGATIVE, "dijkstra_cputhreads")


def test_cpumatrix_refuses_negative_weights():
    with pytest.raises(SolverError, match="negative weights"):
        gpusp.solve(NEGATIVE, "dijkstra_cpumatrix")
