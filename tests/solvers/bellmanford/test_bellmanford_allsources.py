"""bellmanford_allsources (paper 004: Bellman-Ford from every source) with several sources in flight on streams of
their own, and the launcher it passes to its SSSP solver, in the CUDA simulator (streams run one after another
there; the answers must not depend on it)."""

import numpy as np
import pytest
from cases import assert_apsp_ok, negative_cycle_graph, sssp_cases

import gpusp
from gpusp.errors import NegativeCycleError, SolverError
from gpusp.solvers import registry

LANES = ["edgebf_coo", "vertexbf_pull", "vertexbf_push"]
CASES = [c for c in sssp_cases(negative=True)
         if c[0] in ("n1", "unreachable", "zero-cycle", "duplicates-selfloops", "negative-zero-cycle", "random-neg")]


def _solve(graph, **kw):
    return gpusp.solve(graph, "bellmanford_allsources", block=32, warmup=0, **kw)


@pytest.mark.parametrize("sssp", LANES)
@pytest.mark.parametrize("label,graph,source", CASES, ids=[c[0] for c in CASES])
def test_streams_match_one_by_one(sssp, label, graph, source):
    """Three sources in flight (one stream too many for n = 1) give every row of the one-by-one run, and the same
    summed counters (each source runs the same rounds, whichever lane it lands on)."""
    alone = _solve(graph, sssp=sssp)
    res = _solve(graph, sssp=sssp, streams=3, trials=2)
    assert_apsp_ok(graph, res)
    assert np.array_equal(res.dist, alone.dist)
    assert res.counters["sources"] == graph.n
    for key in ("iterations", "launches", "relaxations"):
        assert res.counters.get(key) == alone.counters.get(key), key


def test_more_streams_than_sources_and_lane_reuse():
    """n = 6 sources on 4 lanes: two lanes take a second source after their first converged; 32 lanes for 6
    sources are capped at 6."""
    graph = CASES[1][1]
    spec = registry.get("bellmanford_allsources")
    for streams, lanes in ((4, 4), (32, 6)):
        solver = spec.build(graph, sssp="edgebf_coo", block=32, streams=streams)
        solver.upload()
        assert len(solver.lanes) == lanes
        solver.run()
        assert_apsp_ok(graph, solver)


@pytest.mark.parametrize("sssp", LANES)
def test_streams_negative_cycle_detected(sssp):
    with pytest.raises(NegativeCycleError):
        _solve(negative_cycle_graph(), sssp=sssp, streams=2)


def test_streams_need_a_solver_with_lanes():
    """bellmanford_* launch on the default stream: several streams are refused by name, one is fine."""
    graph = CASES[1][1]
    with pytest.raises(SolverError, match="streams=2 needs .*bellmanford_naive"):
        registry.get("bellmanford_allsources").build(graph, sssp="bellmanford_naive", streams=2)
    assert_apsp_ok(graph, _solve(graph, sssp="bellmanford_naive", streams=1))


@pytest.mark.parametrize("sssp", ["edgebf_coo", "bellmanford_flag"])
def test_launcher_passed_to_the_inner_solver(sssp):
    graph = CASES[1][1]
    spec = registry.get("bellmanford_allsources")
    for launcher in ("native", "numba"):
        solver = spec.build(graph, sssp=sssp, block=64, launcher=launcher)
        assert solver.inner_params["launcher"] == launcher and solver.inner_params["block"] == 64
        assert solver.inner.params["launcher"] == launcher
    assert_apsp_ok(graph, _solve(graph, sssp=sssp, launcher="numba"))
