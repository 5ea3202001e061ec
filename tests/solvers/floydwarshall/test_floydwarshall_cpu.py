"""The serial Floyd-Warshall (floydwarshall_cpu, paper 000's CPU baseline) against SciPy on the awkward cases, with
negative weights, and its negative-cycle check."""

import numpy as np
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
    steps where skipping takes n^2 (a compiler that drops the rows of an INF d[i][k] would make both alike). The
    loop alone is timed, the best of three, so that a loaded host's solve overheads cannot blur the gap."""
    import time

    from gpusp.data.graph import Graph
    from gpusp.solvers.floydwarshall.cpu import _floyd_warshall

    n = 700
    graph = Graph.from_edges(n, [0], [1], [5])
    inf = graph.dtype.type(graph.inf)
    seconds = {}
    for row_skip in (True, False):
        assert_apsp_ok(graph, gpusp.solve(graph, "floydwarshall_cpu", None, row_skip=row_skip))  # compiles too
        best = float("inf")
        for _ in range(3):
            d = graph.to_dense()
            p = np.zeros(d.shape, np.int32)
            t0 = time.perf_counter()
            assert _floyd_warshall(d, p, inf, row_skip, True)
            best = min(best, time.perf_counter() - t0)
        seconds[row_skip] = best
    assert seconds[False] > 3 * seconds[True], seconds
