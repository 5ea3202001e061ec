"""Paper 004's masked rounds (gpusp.solvers.common.maskedbf), as every solver on them has them: the device-resident
launch modes that vertexbf_push and edgebf_coo share (rounds replayed from CUDA graphs, ``launch='graph'``, or run in
one persistent kernel, ``'persistent'``), sources on streams of their own (lanes), repeated runs and int64 distances,
in the simulator.

The simulator runs a cooperative grid of one block (its grid sync is a block barrier), so these tests check the
logic; the H200 runs check the timing.
"""

import numpy as np
import pytest
from cases import _g, assert_sssp_ok, negative_cycle_graph, pairwise, random_graph, sssp_cases

import gpusp
from gpusp.errors import NegativeCycleError
from gpusp.measure.validate import check_sssp
from gpusp.solvers import registry

NEGATIVE = sssp_cases(negative=True)
NAMES = ["vertexbf_push", "edgebf_coo"]


def _solve(graph, name, source=0, **kw):
    kw.setdefault("warmup", 0)
    kw.setdefault("block", 32)
    return gpusp.solve(graph, name, source, **kw)


def _chain(n):
    return _g(n, [(i, i + 1, 1 + i % 3) for i in range(n - 1)], f"chain-{n}")


# every awkward graph (negative weights included) with each solver and each device-resident mode, pairwise
LAUNCH_CELLS = pairwise(case=NEGATIVE, name=NAMES, launch=["graph", "persistent"])


@pytest.mark.parametrize("cell", LAUNCH_CELLS, ids=[f"{c['case'][0]}-{c['name']}-{c['launch']}" for c in LAUNCH_CELLS])
def test_launch_modes_match_reference(cell):
    (_, graph, source), name, launch = cell["case"], cell["name"], cell["launch"]
    res = _solve(graph, name, source, launch=launch)
    assert_sssp_ok(graph, source, res)
    if launch == "graph":  # the same kernels in the same order as host launches: the same rounds
        assert res.counters["iterations"] == _solve(graph, name, source).counters["iterations"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("launch", ["host", "graph", "persistent"])
def test_launch_modes_detect_negative_cycles(name, launch):
    with pytest.raises(NegativeCycleError, match="change in round 4"):
        _solve(negative_cycle_graph(), name, launch=launch)
    with pytest.raises(NegativeCycleError, match="found in round 1"):
        _solve(_g(1, [(0, 0, -2)], "neg-loop"), name, launch=launch)


@pytest.mark.parametrize("name", NAMES)
def test_graph_mode_spans_several_batches(name):
    """A chain longer than a batch of rounds: replays continue until a batch holds the quiet round."""
    graph = _chain(70)
    res = _solve(graph, name, launch="graph")
    assert_sssp_ok(graph, 0, res)
    assert res.counters["iterations"] == 70
    assert _solve(graph, name, launch="persistent").counters["iterations"] <= 70


# --- what every solver on the masked rounds does alike -------------------------------------------------------------
MASKED = ["edgebf_coo", "edgebf_dense", "vertexbf_pull", "vertexbf_push"]
LANES = ["edgebf_coo", "vertexbf_pull", "vertexbf_push"]  # the solvers whose sources can run on streams of their own


@pytest.mark.parametrize("name", LANES)
def test_lanes_on_streams_share_the_graph(name):
    """Lanes (one source's state each, on streams of their own) interleave rounds of different sources on one
    uploaded graph and end with each source's own answer; a device-resident launch mode refuses them."""
    graph = NEGATIVE[-1][1]
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
    if name in NAMES:  # the solvers with device-resident rounds
        device_rounds = registry.get(name).build(graph, block=32, launch="persistent")
        device_rounds.upload()
        with pytest.raises(gpusp.SolverError, match="launch='host'"):
            device_rounds.lanes(2)


@pytest.mark.parametrize("name", MASKED)
def test_repeated_runs_identical(name):
    graph, source = NEGATIVE[-1][1], NEGATIVE[-1][2]  # negative weights: the level-by-level tree
    once = _solve(graph, name, source)
    again = _solve(graph, name, source, trials=2, warmup=1)
    assert np.array_equal(once.dist, again.dist)
    assert once.counters == again.counters
    assert_sssp_ok(graph, source, again)


@pytest.mark.parametrize("name", MASKED)
def test_int64_distances(name):
    graph = random_graph(9, 25, seed=5, wmin=2**27, wmax=2**28)
    assert graph.dtype == np.int64
    assert_sssp_ok(graph, 1, _solve(graph, name, 1))


@pytest.mark.parametrize("name", MASKED)
def test_launcher_numba_matches_native(name):
    """launcher='numba' (Numba's dispatcher every launch) gives the native launcher's answers and counters."""
    graph, source = NEGATIVE[-1][1], NEGATIVE[-1][2]
    native = _solve(graph, name, source, launcher="native", trials=2)
    numba = _solve(graph, name, source, launcher="numba", trials=2)
    assert_sssp_ok(graph, source, numba)
    assert np.array_equal(native.dist, numba.dist) and native.counters == numba.counters
    assert registry.get(name).build(graph, launcher="numba").native is False
