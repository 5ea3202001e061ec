"""The serial Floyd-Warshall (floydwarshall_cpu, paper 000's CPU baseline) against SciPy on the awkward cases, with
negative weights, and its negative-cycle check."""

import pytest
from cases import assert_apsp_ok, negative_cycle_graph, sssp_cases

import gpusp
from gpusp.errors import NegativeCycleError

CASES = sssp_cases(negative=True)


@pytest.mark.parametrize("label,graph,source", CASES, ids=[c[0] for c in CASES])
def test_matches_reference(label, graph, source):
    assert_apsp_ok(graph, gpusp.solve(graph, "floydwarshall_cpu"))


def test_negative_cycle_detected():
    with pytest.raises(NegativeCycleError):
        gpusp.solve(negative_cycle_graph(), "floydwarshall_cpu", 0)


def test_without_row_skip_every_element_is_visited():
    """row_skip=false visits every j of every row as paper 000's loop does, so on a graph of one arc it takes n^3
    steps where skipping takes n^2 (a compiler that drops the rows of an INF d[i][k] would make both alike)."""
    import time

    from gpusp.data.graph import Graph

    n = 700
    graph = Graph.from_edges(n, [0], [1], [5])
    for row_skip in (True, False):  # compiled before timing
        gpusp.solve(Graph.from_edges(3, [0], [1], [5]), "floydwarshall_cpu", None, row_skip=row_skip)
    seconds = {}
    for row_skip in (True, False):
        t0 = time.perf_counter()
        assert_apsp_ok(graph, gpusp.solve(graph, "floydwarshall_cpu", None, row_skip=row_skip))
        seconds[row_skip] = time.perf_counter() - t0
    assert seconds[False] > 3 * seconds[True], seconds
