"""Paper 001's N-SSSP APSP (nsssp_shared / nsssp_global) and BF from every source (bellmanford_allsources).

Simulator budget: N=4, B=2 (8 threads per block) and N=3, B=1 on graphs with n <= 17.
"""

import numpy as np
import pytest
from cases import _g, assert_apsp_ok, negative_cycle_graph, random_graph, sssp_cases

import gpusp
from gpusp.errors import NegativeCycleError, SolverError
from gpusp.solvers import registry
from gpusp.solvers.common import dense
from gpusp.solvers.nsssp import solver as nsssp
from gpusp.solvers.bellmanford.cpu import BellmanFordCpu

SMALL = dict(sources_per_launch=4, groups_per_block=2)
CASES = [c for c in sssp_cases() if c[1].n <= 17]  # random-37 costs ~20 s in the simulator
POSITIVE_13 = random_graph(13, 40, seed=5)  # weights >= 1: parents from the inverted graph, 13 % 4 != 0


def _star():
    """Hub 0 with 11 out-edges (degree > 3N for N = 3: several staged chunks), a zero-weight 2-cycle."""
    edges = [(0, v, v) for v in range(1, 12)] + [(3, 4, 0), (4, 3, 0), (4, 12, 2), (12, 0, 1), (5, 12, 1)]
    return _g(13, edges, "star")


def _solve(graph, name, **params):
    return gpusp.solve(graph, name, None, warmup=0, **params)


@pytest.mark.parametrize("name", ["nsssp_shared", "nsssp_global"])
@pytest.mark.parametrize("label,graph,source", CASES, ids=[c[0] for c in CASES])
def test_nsssp_cases(name, label, graph, source):
    res = _solve(graph, name, **SMALL)
    assert_apsp_ok(graph, res)
    assert res.counters["groups"] == -(-graph.n // 4)
    assert res.counters["iterations"] >= res.counters["groups"]


def test_shared_and_global_agree_on_partial_group():
    shared = _solve(POSITIVE_13, "nsssp_shared", **SMALL)
    glob = _solve(POSITIVE_13, "nsssp_global", **SMALL)
    for res in (shared, glob):
        assert_apsp_ok(POSITIVE_13, res)
        assert res.counters["tree_levels"] == 0  # positive weights: one recording launch per group
    np.testing.assert_array_equal(shared.dist, glob.dist)
    assert shared.counters["iterations"] == glob.counters["iterations"]
    assert shared.counters["groups"] == glob.counters["groups"] == 4


@pytest.mark.parametrize("graph", [_star(), POSITIVE_13], ids=["star", "positive-13"])
def test_shared_n3_b1(graph):
    """N = 3 is not a power of two; the hub's 11 edges are staged in four chunks of three."""
    res = _solve(graph, "nsssp_shared", sources_per_launch=3, groups_per_block=1)
    assert_apsp_ok(graph, res)
    assert res.counters["groups"] == 5


def test_global_n3_b1_star():
    assert_apsp_ok(_star(), _solve(_star(), "nsssp_global", sources_per_launch=3, groups_per_block=1))


@pytest.mark.parametrize("graph", [sssp_cases()[4][1], POSITIVE_13], ids=["zero-cycle", "positive-13"])
def test_host_result_path_and_repeated_runs(monkeypatch, graph):
    """Rows staged on the device and copied to pinned host memory; run() twice resets its state."""
    monkeypatch.setattr(dense, "RESULT_ON_DEVICE", False)
    res = gpusp.solve(graph, "nsssp_shared", None, warmup=1, trials=1, **SMALL)
    assert_apsp_ok(graph, res)
    assert res.counters["result_on_device"] == 0 and "host_copy_ms" in res.counters


@pytest.mark.parametrize("on_device", [True, False])
@pytest.mark.parametrize("name", ["nsssp_shared", "nsssp_global"])
def test_paths_off_times_costs_only(monkeypatch, name, on_device):
    """paths=False: the same distances, no parents written on the device (host-derived ones validate)."""
    monkeypatch.setattr(dense, "RESULT_ON_DEVICE", on_device)
    s = registry.get(name).build(POSITIVE_13, paths=False, **SMALL)
    assert isinstance(s, nsssp.SharedSolver if name == "nsssp_shared" else nsssp.GlobalSolver)
    s.upload()
    if on_device:
        s.out.parent.copy_to_device(np.full((13, 13), -7, dtype=np.int32))
    else:
        s.out.host[1][:] = -7
    counters = s.run()
    untouched = np.all((s.out.parent.copy_to_host() if on_device else np.array(s.out.host[1])) == -7)
    dist, parent = s.download()
    assert counters["paths"] is False and untouched  # no parent written on the device
    assert np.array_equal(dist, _solve(POSITIVE_13, name, **SMALL).dist)
    assert_apsp_ok(POSITIVE_13, _solve(POSITIVE_13, name, paths=False, **SMALL))
    with pytest.raises(SolverError, match="paths=False needs positive weights"):
        _solve(sssp_cases()[4][1], name, paths=False, **SMALL)


@pytest.mark.parametrize("name", ["nsssp_shared", "nsssp_global"])
def test_nsssp_refuses_negative_weights(name):
    with pytest.raises(SolverError, match="negative weights"):
        _solve(sssp_cases(negative=True)[-3][1], name, **SMALL)


def test_nsssp_block_too_large():
    with pytest.raises(SolverError, match="threads per block"):
        _solve(sssp_cases()[0][1], "nsssp_shared", sources_per_launch=512, groups_per_block=4)


def test_the_gate_compiles_the_test_shapes():
    """The offline gate compiles every kernel for the (N, B) shapes the tests and the paper use."""
    from gpusp.solvers.common import gate

    labels = {label for label, _, _ in gate.targets(nsssp.__name__)}
    kernels = ("group_kernels.init", "group_kernels.scatter_global", "scatter_shared_kernel", "group_kernels.record",
               "group_kernels.tree_level")
    for shape in ("N=32,B=4", "N=4,B=2", "N=3,B=1"):
        for w in ("int32", "int64"):
            for k in kernels:
                assert f"{k}[{shape},{w}]" in labels


# --- bellmanford_allsources -------------------------------------------------------------------------
class StubSssp(BellmanFordCpu):
    """Stands in for an SSSP solver module that does not exist yet (serial BF, takes ``block``)."""

    def __init__(self, graph, block=256):
        super().__init__(graph, rounds="early")
        self.block = block


def _inner(monkeypatch, name):
    """The real registered solver when its module imports, else the stub under the same name."""
    try:
        registry.get(name).load()
    except (ImportError, AttributeError):
        stub = registry.SolverSpec(name, "sssp", "gpu", "004", "test stub", f"{__name__}:StubSssp",
                                   params=(registry.BLOCK,), negative_weights=True)
        monkeypatch.setitem(registry.REGISTRY, name, stub)
    return name


INNER = ["edgebf_coo", "bellmanford_naive"]
ALL_CASES = [c for c in sssp_cases(negative=True)
             if c[0] in ("unreachable", "zero-cycle", "duplicates-selfloops", "random-13", "negative",
                         "negative-zero-cycle", "random-neg")]


@pytest.mark.parametrize("sssp", INNER)
@pytest.mark.parametrize("label,graph,source", ALL_CASES, ids=[c[0] for c in ALL_CASES])
def test_allsources_cases(monkeypatch, sssp, label, graph, source):
    res = _solve(graph, "bellmanford_allsources", sssp=_inner(monkeypatch, sssp), block=32)
    assert_apsp_ok(graph, res)
    assert res.counters["sources"] == graph.n and res.counters["iterations"] >= graph.n


@pytest.mark.parametrize("sssp", INNER)
def test_allsources_negative_cycle(monkeypatch, sssp):
    with pytest.raises(NegativeCycleError):
        _solve(negative_cycle_graph(), "bellmanford_allsources", sssp=_inner(monkeypatch, sssp), block=32)


def test_allsources_passes_block(monkeypatch):
    spec = registry.get("bellmanford_allsources")
    solver = spec.build(sssp_cases()[2][1], sssp=_inner(monkeypatch, "edgebf_coo"), block=64)
    assert solver.inner_params["block"] == 64
    with pytest.raises(SolverError, match="parameter sssp='nsssp_shared'"):  # not an SSSP solver
        spec.build(sssp_cases()[2][1], sssp="nsssp_shared")


@pytest.mark.parametrize("name", ["nsssp_shared", "nsssp_global", "bellmanford_allsources"])
def test_parameters_come_from_the_registry(name):
    """Every registry parameter is a keyword-only argument without a default (the registry holds the defaults)."""
    import inspect

    spec = registry.get(name)
    args = list(inspect.signature(spec.load().__init__).parameters.values())[2:]
    assert [a.name for a in args] == [p.name for p in spec.params]
    assert all(a.kind is a.KEYWORD_ONLY and a.default is a.empty for a in args)


@pytest.mark.parametrize("name", ["nsssp_shared", "nsssp_global"])
@pytest.mark.parametrize("graph", [sssp_cases()[4][1], POSITIVE_13], ids=["zero-cycle", "positive-13"])
def test_launcher_native_and_numba_agree(monkeypatch, name, graph):
    """Every launch (init, the put flag resets, scatter, check, record, the tree levels) and every flag read goes
    through a Launch / NativeRead built once with the launcher's choice; both launchers give the same answer."""
    from cases import CountedLaunches

    out = {}
    for launcher in ("native", "numba"):
        counted = CountedLaunches(monkeypatch, nsssp)
        res = _solve(graph, name, launcher=launcher, **SMALL)
        assert_apsp_ok(graph, res)
        assert {x.asked for x in counted.launches + counted.reads} == {launcher == "native"}
        assert len(counted.launches) == 6 and len(counted.reads) == 1  # built once, at upload
        launches, reads = counted.calls()
        assert launches == res.counters["launches"]
        assert reads == res.counters["iterations"] + res.counters["tree_levels"]
        out[launcher] = res
    assert (out["native"].counters["tree_levels"] > 0) == (graph is not POSITIVE_13)  # zero weights: level loop
    for key in ("dist", "parent"):
        assert np.array_equal(getattr(out["native"], key), getattr(out["numba"], key))
    assert out["native"].counters == out["numba"].counters


def test_tight_parents_are_derived_per_row_on_demand():
    """paths off: a row of the host-derived parents is what the whole matrix holds, every parent is a tight arc,
    and nothing is derived until a row is asked for (the download stays a copy)."""
    from gpusp.solvers.scipy.reference import scipy_matrix, scipy_paths

    g = POSITIVE_13
    d, _ = scipy_paths(g, scipy_matrix(g))
    lazy = dense.apsp_tight_parents(g, d, g.inf)
    assert lazy._full is None and lazy.shape == (g.n, g.n)
    rows = lazy[[0, 5, 12]]
    assert lazy._full is None
    whole = np.asarray(lazy)
    assert np.array_equal(rows, whole[[0, 5, 12]]) and np.array_equal(lazy[7], whole[7])
    tails, heads, weights = g.coo()
    for s in range(g.n):
        for v in range(g.n):
            p = whole[s, v]
            if v == s or d[s, v] == g.inf:
                assert p == -1
            else:
                assert d[s, p] + weights[(tails == p) & (heads == v)].min() == d[s, v]


def test_paths_off_result_keeps_its_parents_lazy():
    res = _solve(POSITIVE_13, "nsssp_global", paths=False, **SMALL)
    assert isinstance(res.parent, dense.TightParents) and res.parent._full is None
    assert_apsp_ok(POSITIVE_13, res)
