"""edgebf_coo (paper 004's thread per arc on COO arrays, masked rounds) in the CUDA simulator."""

import numpy as np
import pytest
from cases import _g, assert_sssp_ok, negative_cycle_graph, random_graph, sssp_cases

import gpusp
from gpusp.errors import NegativeCycleError
from gpusp.measure.validate import check_sssp
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


def test_launcher_numba_matches_native():
    """launcher='numba' (Numba's dispatcher every launch) gives the native launcher's answers and counters."""
    graph, source = CASES[-1][1], CASES[-1][2]
    native = _solve(graph, source, launcher="native", trials=2)
    numba = _solve(graph, source, launcher="numba", trials=2)
    assert_sssp_ok(graph, source, numba)
    assert np.array_equal(native.dist, numba.dist) and native.counters == numba.counters
    assert registry.get(NAME).build(graph, launcher="numba").native is False


def test_lanes_on_streams_share_the_graph():
    """Lanes (one source's state each, on streams of their own) interleave rounds of different sources on one
    uploaded graph and end with each source's own answer; a device-resident launch mode refuses them."""
    graph = CASES[-1][1]
    solver = registry.get(NAME).build(graph, block=32)
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
        alone = _solve(graph, s)
        assert np.array_equal(dist, alone.dist) and done[s]["iterations"] == alone.counters["iterations"]
        assert check_sssp(graph, s, dist, parent).ok
    device_rounds = registry.get(NAME).build(graph, block=32, launch="persistent")
    device_rounds.upload()
    with pytest.raises(gpusp.SolverError, match="launch='host'"):
        device_rounds.lanes(2)


def test_repeated_runs_identical():
    graph, source = CASES[-1][1], CASES[-1][2]  # negative weights: the level-by-level tree
    once = _solve(graph, source)
    again = _solve(graph, source, trials=2, warmup=1)
    assert np.array_equal(once.dist, again.dist)
    assert once.counters == again.counters
    assert_sssp_ok(graph, source, again)


def test_int64_distances():
    graph = random_graph(9, 25, seed=5, wmin=2**27, wmax=2**28)
    assert graph.dtype == np.int64
    assert_sssp_ok(graph, 1, _solve(graph, 1))


def test_parameters():
    """The class takes the registry's parameters, every one named and without a default of its own; launch is one."""
    graph = CASES[7][1]
    with pytest.raises(TypeError):
        registry.get(NAME).load()(graph)
    assert registry.get(NAME).build(graph).params == registry.get(NAME).defaults()
    assert registry.get(NAME).build(graph, launch="graph").launch == "graph"
    assert registry.get(NAME).build(graph).launch == registry.get(NAME).defaults()["launch"]
