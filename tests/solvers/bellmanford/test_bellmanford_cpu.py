"""The serial Bellman-Ford (bellmanford_cpu, paper 000's CPU baseline) against SciPy on the awkward cases, with
negative weights, its negative-cycle check and its fixed-round mode."""

import pytest
from cases import assert_sssp_ok, negative_cycle_graph, sssp_cases

import gpusp
from gpusp.errors import NegativeCycleError

CASES = sssp_cases(negative=True)


@pytest.mark.parametrize("label,graph,source", CASES, ids=[c[0] for c in CASES])
def test_matches_reference(label, graph, source):
    """The awkward cases, and the three graphs with negative weights (no cycle)."""
    assert_sssp_ok(graph, source, gpusp.solve(graph, "bellmanford_cpu", source))


def test_negative_cycle_detected():
    with pytest.raises(NegativeCycleError):
        gpusp.solve(negative_cycle_graph(), "bellmanford_cpu", 0)


def test_fixed_rounds_runs_n_rounds():
    """'fixed': the paper's |V| - 1 rounds and the check round, so iterations == |V|, with the same answer."""
    label, graph, source = CASES[7]  # random-37
    res = gpusp.solve(graph, "bellmanford_cpu", source, rounds="fixed")
    assert res.counters["iterations"] == graph.n
    assert_sssp_ok(graph, source, res)
    early = gpusp.solve(graph, "bellmanford_cpu", source)
    assert early.counters["iterations"] < graph.n and (early.dist == res.dist).all()
