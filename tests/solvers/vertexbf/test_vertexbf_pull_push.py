"""vertexbf_pull and vertexbf_push (paper 004's thread per vertex over in-arcs or out-arcs, masked rounds) in the CUDA
simulator."""

import pytest
from cases import _g, assert_sssp_ok, negative_cycle_graph, sssp_cases

import gpusp
from gpusp.errors import NegativeCycleError
from gpusp.solvers import registry

SOLVERS = ["vertexbf_pull", "vertexbf_push"]
CASES = sssp_cases(negative=True)


def _solve(graph, name, source=0, **kw):
    kw.setdefault("warmup", 0)
    return gpusp.solve(graph, name, source, block=32, **kw)


@pytest.mark.parametrize("name", SOLVERS)
@pytest.mark.parametrize("label,graph,source", CASES, ids=[c[0] for c in CASES])
def test_matches_reference(name, label, graph, source):
    res = _solve(graph, name, source)
    assert_sssp_ok(graph, source, res)
    assert res.counters["iterations"] >= 1


@pytest.mark.parametrize("name", SOLVERS)
def test_negative_cycle_detected(name):
    with pytest.raises(NegativeCycleError):
        _solve(negative_cycle_graph(), name)


@pytest.mark.parametrize("name", SOLVERS)
def test_negative_self_loop_hits_the_floor(name):
    """A candidate below -(n-1) max|w| is a cycle at once (the overflow-proof test), here in round 1."""
    with pytest.raises(NegativeCycleError, match="found in round 1"):
        _solve(_g(1, [(0, 0, -2)], "neg-loop"), name)
    with pytest.raises(NegativeCycleError):
        _solve(_g(3, [(0, 1, 1), (1, 1, -1), (1, 2, 1)], "neg-loop-3"), name)


def test_counters():
    graph, source = CASES[7][1], CASES[7][2]
    assert "relaxations" not in _solve(graph, "vertexbf_push", source).counters  # mask-dependent: not counted
    pull = _solve(graph, "vertexbf_pull", source).counters
    assert pull["relaxations"] == pull["iterations"] * graph.m and pull["launches"] >= pull["iterations"] + 1


@pytest.mark.parametrize("name", SOLVERS)
def test_parameters(name):
    """The classes take the registry's parameters, every one named and without defaults of their own; push takes
    launch, pull has none and always launches its rounds from the host."""
    graph = CASES[7][1]
    with pytest.raises(TypeError):
        registry.get(name).load()(graph)
    assert registry.get(name).build(graph).params == registry.get(name).defaults()
    if name == "vertexbf_push":
        assert registry.get(name).build(graph, launch="graph").launch == "graph"
        assert registry.get(name).build(graph).launch == registry.get(name).defaults()["launch"]
    else:
        with pytest.raises(gpusp.SolverError, match="no parameter 'launch'"):
            registry.get(name).build(graph, launch="graph")
        assert registry.get(name).build(graph).launch == "host"
