"""edgebf_coo (paper 004's thread per arc on COO arrays, masked rounds) in the CUDA simulator."""

import pytest
from cases import _g, assert_sssp_ok, negative_cycle_graph, sssp_cases

import gpusp
from gpusp.errors import NegativeCycleError
from gpusp.solvers import registry

NAME = "edgebf_coo"
CASES = sssp_cases(negative=True)


def _solve(graph, source=0, **kw):
    kw.setdefault("warmup", 0)
    return gpusp.solve(graph, NAME, source, block=32, **kw)


@pytest.mark.parametrize("label,graph,source", CASES, ids=[c[0] for c in CASES])
def test_matches_reference(label, graph, source):
    res = _solve(graph, source)
    assert_sssp_ok(graph, source, res)
    assert res.counters["iterations"] >= 1
    assert res.counters["relaxations"] == res.counters["iterations"] * graph.m


def test_negative_cycle_detected():
    with pytest.raises(NegativeCycleError):
        _solve(negative_cycle_graph())


def test_negative_self_loop_hits_the_floor():
    """A candidate below -(n-1) max|w| is a cycle at once (the overflow-proof test), here in round 1."""
    with pytest.raises(NegativeCycleError, match="found in round 1"):
        _solve(_g(1, [(0, 0, -2)], "neg-loop"))
    with pytest.raises(NegativeCycleError):
        _solve(_g(3, [(0, 1, 1), (1, 1, -1), (1, 2, 1)], "neg-loop-3"))


@pytest.mark.parametrize("k", [1, 2, 4, 64])
def test_edges_per_thread(k):
    for label, graph, source in (CASES[7], CASES[3], CASES[-1]):  # m = 110, m = 5 < 64, negative DAG
        res = _solve(graph, source, edges_per_thread=k)
        assert_sssp_ok(graph, source, res)
        assert res.params["edges_per_thread"] == k
        assert res.counters["relaxations"] == res.counters["iterations"] * graph.m


def test_parameters():
    """The class takes the registry's parameters, every one named and without a default of its own; launch is one."""
    graph = CASES[7][1]
    with pytest.raises(TypeError):
        registry.get(NAME).load()(graph)
    assert registry.get(NAME).build(graph).params == registry.get(NAME).defaults()
    assert registry.get(NAME).build(graph, launch="graph").launch == "graph"
    assert registry.get(NAME).build(graph).launch == registry.get(NAME).defaults()["launch"]
