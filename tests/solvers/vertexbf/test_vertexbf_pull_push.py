"""vertexbf_pull and vertexbf_push (paper 004's thread per vertex over in-arcs or out-arcs, masked rounds) in the CUDA
simulator."""

import numpy as np
import pytest
from cases import _g, assert_sssp_ok, negative_cycle_graph, random_graph, sssp_cases

import gpusp
from gpusp.errors import NegativeCycleError
from gpusp.measure.validate import check_sssp
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


@pytest.mark.parametrize("name", SOLVERS)
def test_launcher_numba_matches_native(name):
    """launcher='numba' (Numba's dispatcher every launch) gives the native launcher's answers and counters."""
    graph, source = CASES[-1][1], CASES[-1][2]
    native = _solve(graph, name, source, launcher="native", trials=2)
    numba = _solve(graph, name, source, launcher="numba", trials=2)
    assert_sssp_ok(graph, source, numba)
    assert np.array_equal(native.dist, numba.dist) and native.counters == numba.counters
    assert registry.get(name).build(graph, launcher="numba").native is False


@pytest.mark.parametrize("name", SOLVERS)
def test_lanes_on_streams_share_the_graph(name):
    """Lanes (one source's state each, on streams of their own) interleave rounds of different sources on one
    uploaded graph and end with each source's own answer; push's device-resident launch mode refuses them."""
    graph = CASES[-1][1]
    solver = registry.get(name).build(graph, block=32)
    solver.upload()
    lanes = solver.lanes(3)
    assert len({id(lane.stream) for lane in lanes}) == 3 and all(lane.stream for lane in lanes)
    sources = [0, 4, 9]
    for lane, s in zip(lanes, sources):
        lane.start(s)
        lane.issue()
    done = {}
    while len(done) < len(lanes):
        for lane, s in zip(lanes, sources):
            if s in done:
                continue
            if lane.settle():
                done[s] = lane.finish(s)
            else:
                lane.issue()
    for lane, s in zip(lanes, sources):
        dist, parent = np.empty(graph.n, dtype=graph.dtype), np.empty(graph.n, dtype=np.int32)
        lane.download_into(dist, parent)
        alone = _solve(graph, name, s)
        assert np.array_equal(dist, alone.dist) and done[s]["iterations"] == alone.counters["iterations"]
        assert check_sssp(graph, s, dist, parent).ok
    if name == "vertexbf_push":
        device_rounds = registry.get(name).build(graph, block=32, launch="persistent")
        device_rounds.upload()
        with pytest.raises(gpusp.SolverError, match="launch='host'"):
            device_rounds.lanes(2)


@pytest.mark.parametrize("name", SOLVERS)
def test_repeated_runs_identical(name):
    graph, source = CASES[-1][1], CASES[-1][2]  # negative weights: the level-by-level tree
    once = _solve(graph, name, source)
    again = _solve(graph, name, source, trials=2, warmup=1)
    assert np.array_equal(once.dist, again.dist)
    assert once.counters == again.counters
    assert_sssp_ok(graph, source, again)


@pytest.mark.parametrize("name", SOLVERS)
def test_int64_distances(name):
    graph = random_graph(9, 25, seed=5, wmin=2**27, wmax=2**28)
    assert graph.dtype == np.int64
    assert_sssp_ok(graph, 1, _solve(graph, name, 1))


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
