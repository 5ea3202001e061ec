"""The CPU solvers against SciPy on the awkward cases, negative weights and negative cycles."""

import numpy as np
import pytest
from cases import _g, assert_apsp_ok, assert_sssp_ok, negative_cycle_graph, random_graph, sssp_cases

import gpusp
from gpusp.errors import NegativeCycleError, SolverError


@pytest.mark.parametrize("name", ["dijkstra_cpu", "bellmanford_cpu", "scipy_dijkstra"])
@pytest.mark.parametrize("label,graph,source", sssp_cases(), ids=[c[0] for c in sssp_cases()])
def test_cpu_sssp_matches_reference(name, label, graph, source):
    assert_sssp_ok(graph, source, gpusp.solve(graph, name, source))


@pytest.mark.parametrize("name", ["bellmanford_cpu", "scipy_dijkstra"])
def test_negative_weights_accepted(name):
    for label, graph, source in sssp_cases(negative=True)[-3:]:
        assert_sssp_ok(graph, source, gpusp.solve(graph, name, source))


def test_dijkstra_refuses_negative_weights():
    graph = sssp_cases(negative=True)[-3][1]
    with pytest.raises(SolverError, match="negative weights"):
        gpusp.solve(graph, "dijkstra_cpu", 0)


@pytest.mark.parametrize("name", ["bellmanford_cpu", "scipy_dijkstra", "floydwarshall_cpu", "scipy_apsp"])
def test_negative_cycle_detected(name):
    with pytest.raises(NegativeCycleError):
        gpusp.solve(negative_cycle_graph(), name, 0)


def test_fixed_rounds_runs_n_minus_1_rounds():
    graph = sssp_cases()[-1][1]
    res = gpusp.solve(graph, "bellmanford_cpu", 5, rounds="fixed")
    assert res.counters["iterations"] == graph.n
    assert_sssp_ok(graph, 5, res)


@pytest.mark.parametrize("name", ["floydwarshall_cpu", "scipy_apsp"])
@pytest.mark.parametrize("label,graph,source", sssp_cases(negative=True), ids=[c[0] for c in sssp_cases(True)])
def test_cpu_apsp_matches_reference(name, label, graph, source):
    assert_apsp_ok(graph, gpusp.solve(graph, name))


def test_path_and_timings():
    graph = sssp_cases()[3][1]
    res = gpusp.solve(graph, "dijkstra_cpu", 0, trials=3, warmup=1)
    assert gpusp.path(res, 4) == [0, 3, 4]
    assert len(res.timings.samples_ms) == 3 and res.timings.clock == "wall"
    assert res.timings.q1_ms <= res.timings.median_ms <= res.timings.q3_ms
    unreachable = sssp_cases()[2]
    res = gpusp.solve(unreachable[1], "dijkstra_cpu", 0)
    assert gpusp.path(res, 5) == [] and res.dist[5] == res.inf


@pytest.mark.parametrize("label,graph,source", sssp_cases(negative=True)[-5:], ids=[c[0] for c in sssp_cases(True)[-5:]])
def test_scipy_apsp_workers_split_the_sources(label, graph, source):
    """Three forked workers (more than one row each on n >= 13, fewer rows than workers on n = 4/5)."""
    res = gpusp.solve(graph, "scipy_apsp", workers=3)
    assert_apsp_ok(graph, res)
    assert res.counters["workers"] == min(3, graph.n)


def test_scipy_apsp_workers_negative_cycle():
    with pytest.raises(NegativeCycleError):
        gpusp.solve(negative_cycle_graph(), "scipy_apsp", workers=2)


@pytest.mark.parametrize("label,graph,source", sssp_cases() + [("random-60", random_graph(60, 400, seed=7, wmin=0,
                                                                                      wmax=5), 0)],
                         ids=[c[0] for c in sssp_cases()] + ["random-60"])
def test_dijkstra_cpumatrix_matches_scipy(label, graph, source):
    res = gpusp.solve(graph, "dijkstra_cpumatrix", trials=2)
    assert_apsp_ok(graph, res)
    ref = gpusp.solve(graph, "scipy_apsp")
    assert np.array_equal(res.dist, ref.dist)
    assert res.dist.shape == (graph.n, graph.n) and res.parent.dtype == np.int32
    assert (np.diagonal(res.parent) == -1).all()
    assert res.counters["relaxations"] == res.counters["iterations"] * graph.n  # a full row per pop


def test_dijkstra_cpumatrix_keeps_the_lightest_duplicate_and_ignores_self_loops():
    graph = _g(3, [(0, 1, 9), (0, 1, 2), (0, 1, 5), (1, 1, 0), (0, 0, 4), (1, 2, 1)], "dups")
    res = gpusp.solve(graph, "dijkstra_cpumatrix")
    assert res.dist[0].tolist() == [0, 2, 3] and res.parent[0].tolist() == [-1, 0, 1]
    assert res.dist[2, 0] == res.inf and res.parent[2, 0] == -1


def test_dijkstra_cpumatrix_refuses_negative_weights():
    with pytest.raises(SolverError, match="negative weights"):
        gpusp.solve(sssp_cases(negative=True)[-3][1], "dijkstra_cpumatrix")
