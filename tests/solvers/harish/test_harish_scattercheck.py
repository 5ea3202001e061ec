"""Paper 001's Harish-Narayanan scatter/check SSSP (harish_scattercheck) in the simulator."""

import numpy as np
import pytest
from cases import CountedLaunches, assert_sssp_ok, negative_cycle_graph, random_graph, sssp_cases

import gpusp
from gpusp.errors import NegativeCycleError, SolverError
from gpusp.solvers import registry

NAME = "harish_scattercheck"
CASES = sssp_cases()


def _solve(graph, source=0, **kw):
    kw.setdefault("warmup", 0)
    return gpusp.solve(graph, NAME, source, block=32, **kw)


@pytest.mark.parametrize("label,graph,source", CASES, ids=[c[0] for c in CASES])
def test_matches_reference(label, graph, source):
    res = _solve(graph, source)
    assert_sssp_ok(graph, source, res)
    assert res.counters["iterations"] >= 1
    assert res.counters["launches"] >= 2 * res.counters["iterations"] + 1


def test_refuses_negative_weights():
    graph = sssp_cases(negative=True)[-3][1]
    with pytest.raises(SolverError, match="negative weights"):
        gpusp.solve(graph, NAME, 0, block=32)


def test_direct_use_on_negative_cycle_stops():
    """Bypassing the registry's refusal must not loop forever: a change in round |V| raises."""
    solver = registry.get(NAME).build(negative_cycle_graph(), block=32)
    solver.upload()
    with pytest.raises(NegativeCycleError):
        solver.run(0)


def test_repeated_runs_identical():
    graph, source = CASES[4][1], CASES[4][2]  # zero-weight cycle: the level-by-level tree
    once = _solve(graph, source)
    again = _solve(graph, source, trials=2, warmup=1)
    assert np.array_equal(once.dist, again.dist) and once.counters == again.counters
    assert_sssp_ok(graph, source, again)
    graph, source = CASES[-1][1], CASES[-1][2]
    a, b = _solve(graph, source, trials=2, warmup=1), _solve(graph, source)
    assert np.array_equal(a.dist, b.dist)
    assert_sssp_ok(graph, source, a)


def test_int64_distances():
    graph = random_graph(9, 25, seed=5, wmin=2**27, wmax=2**28)
    assert graph.dtype == np.int64
    assert_sssp_ok(graph, 1, _solve(graph, 1))


@pytest.mark.parametrize("label,graph,source", [CASES[4], CASES[6]], ids=[CASES[4][0], CASES[6][0]])
def test_launcher_native_and_numba_agree(monkeypatch, label, graph, source):
    """Every launch and flag read goes through a Launch / NativeRead built with the launcher's choice (the
    zero-weight cycle also takes build_parents' level loop), and both launchers give the same answer."""
    from gpusp.solvers.common import csr
    from gpusp.solvers.harish import scattercheck as harish

    out = {}
    for launcher in ("native", "numba"):
        counted = CountedLaunches(monkeypatch, harish, csr)
        res = _solve(graph, source, launcher=launcher, trials=2)
        assert_sssp_ok(graph, source, res)
        assert {x.asked for x in counted.launches + counted.reads} == {launcher == "native"}
        launches, reads = counted.calls()
        assert launches == 2 * res.counters["launches"]  # two trials, nothing launched outside the Launch objects
        assert reads >= 2 * res.counters["iterations"]
        out[launcher] = res
    assert np.array_equal(out["native"].dist, out["numba"].dist)
    assert np.array_equal(out["native"].parent, out["numba"].parent)
    assert out["native"].counters == out["numba"].counters
