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
