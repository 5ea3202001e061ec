"""bellmanford_allsources (paper 004: an SSSP solver from every source) in the CUDA simulator: one source at a time
and several in flight on streams of their own (the streams run one after another there; the answers must not
depend on it), the inner solver's launcher and block, and what it refuses."""

import inspect

import numpy as np
import pytest
from cases import assert_apsp_ok, negative_cycle_graph, sssp_cases

import gpusp
from gpusp.errors import NegativeCycleError, SolverError
from gpusp.solvers import registry

NAME = "bellmanford_allsources"
LANES = ["edgebf_coo", "vertexbf_pull", "vertexbf_push"]
CASES = [c for c in sssp_cases(negative=True)
         if c[0] in ("n1", "unreachable", "zero-cycle", "duplicates-selfloops", "random-13", "negative",
                     "negative-zero-cycle", "random-neg")]
ON_STREAMS = [c for c in CASES if c[0] != "random-13"]  # random-neg (n = 17) keeps several rounds of lane reuse


def _solve(graph, **kw):
    return gpusp.solve(graph, NAME, block=32, warmup=0, **kw)


@pytest.mark.parametrize("sssp", LANES)
@pytest.mark.parametrize("label,graph,source", ON_STREAMS, ids=[c[0] for c in ON_STREAMS])
def test_streams_match_one_by_one(sssp, label, graph, source):
    """Three sources in flight (one stream too many for n = 1) give every row of the one-by-one run, and the same
    summed counters (each source runs the same rounds, whichever lane it lands on)."""
    alone = _solve(graph, sssp=sssp)
    res = _solve(graph, sssp=sssp, streams=3, trials=2)
    assert_apsp_ok(graph, res)
    assert np.array_equal(res.dist, alone.dist)
    assert res.counters["sources"] == graph.n and res.counters["iterations"] >= graph.n
    for key in ("iterations", "launches", "relaxations"):
        assert res.counters.get(key) == alone.counters.get(key), key


@pytest.mark.parametrize("label,graph,source", CASES, ids=[c[0] for c in CASES])
def test_a_round_solver_one_source_at_a_time(label, graph, source):
    """bellmanford_naive (paper 000's rounds, on the default stream) from every source."""
    res = _solve(graph, sssp="bellmanford_naive")
    assert_apsp_ok(graph, res)
    assert res.counters["sources"] == graph.n and res.counters["iterations"] >= graph.n


def test_more_streams_than_sources_and_lane_reuse():
    """n = 6 sources on 4 lanes: two lanes take a second source after their first converged; 32 lanes for 6
    sources are capped at 6."""
    graph = CASES[1][1]
    spec = registry.get(NAME)
    for streams, lanes in ((4, 4), (32, 6)):
        solver = spec.build(graph, sssp="edgebf_coo", block=32, streams=streams)
        solver.upload()
        assert len(solver.lanes) == lanes
        solver.run()
        assert_apsp_ok(graph, solver)


@pytest.mark.parametrize("sssp,streams", [("bellmanford_naive", 1), ("edgebf_coo", 1)] + [(s, 2) for s in LANES])
def test_negative_cycle_detected(sssp, streams):
    with pytest.raises(NegativeCycleError):
        _solve(negative_cycle_graph(), sssp=sssp, streams=streams)


def test_streams_need_a_solver_with_lanes():
    """bellmanford_* launch on the default stream: several streams are refused by name, one is fine."""
    graph = CASES[1][1]
    with pytest.raises(SolverError, match="streams=2 needs .*bellmanford_naive"):
        registry.get(NAME).build(graph, sssp="bellmanford_naive", streams=2)
    assert_apsp_ok(graph, _solve(graph, sssp="bellmanford_naive", streams=1))


@pytest.mark.parametrize("sssp", ["edgebf_coo", "bellmanford_flag"])
def test_launcher_and_block_passed_to_the_inner_solver(sssp):
    graph = CASES[1][1]
    spec = registry.get(NAME)
    for launcher in ("native", "numba"):
        solver = spec.build(graph, sssp=sssp, block=64, launcher=launcher)
        assert solver.inner_params["launcher"] == launcher and solver.inner_params["block"] == 64
        assert solver.inner.params["launcher"] == launcher
    assert_apsp_ok(graph, _solve(graph, sssp=sssp, launcher="numba"))


def test_only_sssp_solvers_run_inside():
    with pytest.raises(SolverError, match="parameter sssp='nsssp_shared'"):  # an APSP solver
        registry.get(NAME).build(CASES[1][1], sssp="nsssp_shared")


def test_parameters_come_from_the_registry():
    """Every registry parameter is a keyword-only argument without a default (the registry holds the defaults)."""
    spec = registry.get(NAME)
    args = list(inspect.signature(spec.load().__init__).parameters.values())[2:]
    assert [a.name for a in args] == [p.name for p in spec.params]
    assert all(a.kind is a.KEYWORD_ONLY and a.default is a.empty for a in args)
