"""Paper 001's N-SSSP APSP (nsssp_shared / nsssp_global) in the CUDA simulator: a pairwise design over the graphs, the
two kernels, the (N, B) shape, where the result is kept and the launcher; partial groups, paths off, launch counts.

Simulator budget: N=4, B=2 (8 threads per block) and N=3, B=1 on graphs with n <= 17.
"""

import numpy as np
import pytest
from cases import _g, assert_apsp_ok, pairwise, random_graph, sssp_cases

import gpusp
from gpusp.errors import SolverError
from gpusp.measure.validate import check_apsp
from gpusp.solvers import registry
from gpusp.solvers.common import dense
from gpusp.solvers.nsssp import solver as nsssp

SMALL = dict(sources_per_launch=4, groups_per_block=2)
POSITIVE_13 = random_graph(13, 40, seed=5)  # weights >= 1: parents from the inverted graph, 13 % 4 != 0


def _star():
    """Hub 0 with 11 out-edges (degree > 3N for N = 3: several staged chunks), a zero-weight 2-cycle."""
    edges = [(0, v, v) for v in range(1, 12)] + [(3, 4, 0), (4, 3, 0), (4, 12, 2), (12, 0, 1), (5, 12, 1)]
    return _g(13, edges, "star")


def _solve(graph, name, **params):
    return gpusp.solve(graph, name, None, warmup=0, **params)


GRAPHS = {label: graph for label, graph, _ in sssp_cases() if graph.n <= 17}  # random-37 costs ~20 s here
GRAPHS.update({"star": _star(), "positive-13": POSITIVE_13})
SHAPES = {"N4-B2": (4, 2), "N3-B1": (3, 1)}  # N = 3 is not a power of two; the star's hub takes four chunks of three
DESIGN = pairwise(graph=list(GRAPHS), name=["nsssp_shared", "nsssp_global"], shape=list(SHAPES),
                  result=["device", "host"], launcher=["native", "numba"])


@pytest.mark.parametrize("cell", DESIGN, ids=["-".join(c.values()) for c in DESIGN])
def test_answers(monkeypatch, cell):
    """Every pair of a graph (the awkward cases, a hub of high degree, a positive graph with a partial group), a
    kernel, a shape, the result on the device or staged to pinned host memory, and a launcher meets in some cell.
    Host cells run twice (a warm-up): run() must reset its state."""
    graph, (N, B) = GRAPHS[cell["graph"]], SHAPES[cell["shape"]]
    on_device = cell["result"] == "device"
    monkeypatch.setattr(dense, "RESULT_ON_DEVICE", on_device)
    res = gpusp.solve(graph, cell["name"], None, warmup=0 if on_device else 1, sources_per_launch=N,
                      groups_per_block=B, launcher=cell["launcher"])
    assert_apsp_ok(graph, res)
    counters = res.counters
    assert counters["groups"] == -(-graph.n // N) and counters["iterations"] >= counters["groups"]
    assert counters["result_on_device"] == int(on_device) and ("host_copy_ms" in counters) != on_device
    nonpositive = bool(graph.m and graph.weights.min() <= 0)
    assert (counters["tree_levels"] > 0) == nonpositive  # zero weights: trees grown level by level


def test_shared_and_global_agree_on_partial_group():
    shared = _solve(POSITIVE_13, "nsssp_shared", **SMALL)
    glob = _solve(POSITIVE_13, "nsssp_global", **SMALL)
    for res in (shared, glob):
        assert_apsp_ok(POSITIVE_13, res)
        assert res.counters["tree_levels"] == 0  # positive weights: one recording launch per group
    np.testing.assert_array_equal(shared.dist, glob.dist)
    assert shared.counters["iterations"] == glob.counters["iterations"]
    assert shared.counters["groups"] == glob.counters["groups"] == 4


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
        _solve(GRAPHS["zero-cycle"], name, paths=False, **SMALL)


def test_paths_off_result_keeps_its_parents_lazy():
    res = _solve(POSITIVE_13, "nsssp_global", paths=False, **SMALL)
    assert isinstance(res.parent, dense.TightParents) and res.parent._full is None
    assert_apsp_ok(POSITIVE_13, res)


@pytest.mark.parametrize("name", ["nsssp_shared", "nsssp_global"])
def test_refuses_negative_weights(name):
    with pytest.raises(SolverError, match="negative weights"):
        _solve(sssp_cases(negative=True)[-3][1], name, **SMALL)


def test_block_too_large():
    with pytest.raises(SolverError, match="threads per block"):
        _solve(GRAPHS["n1"], "nsssp_shared", sources_per_launch=512, groups_per_block=4)


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


@pytest.mark.parametrize("name", ["nsssp_shared", "nsssp_global"])
def test_parameters_come_from_the_registry(name):
    """Every registry parameter is a keyword-only argument without a default (the registry holds the defaults)."""
    import inspect

    spec = registry.get(name)
    args = list(inspect.signature(spec.load().__init__).parameters.values())[2:]
    assert [a.name for a in args] == [p.name for p in spec.params]
    assert all(a.kind is a.KEYWORD_ONLY and a.default is a.empty for a in args)


@pytest.mark.parametrize("name", ["nsssp_shared", "nsssp_global"])
@pytest.mark.parametrize("graph", [GRAPHS["zero-cycle"], POSITIVE_13], ids=["zero-cycle", "positive-13"])
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


@pytest.mark.parametrize("graph,paths,on_device", [(POSITIVE_13, False, True), (POSITIVE_13, False, False),
                                                   (POSITIVE_13, True, False), (GRAPHS["zero-cycle"], True, True)],
                         ids=["paths-off-device", "paths-off-host", "paths-on-host", "zero-cycle-device"])
def test_sampled_groups_are_rows_of_the_whole(monkeypatch, graph, paths, on_device):
    """sample_groups: only a seeded sample of the source groups runs (the partial last group among them when
    picked); each row equals the whole run's row of its source and validates as an SSSP answer from it."""
    monkeypatch.setattr(dense, "RESULT_ON_DEVICE", on_device)
    whole = _solve(graph, "nsssp_global", paths=paths, **SMALL)
    groups = -(-graph.n // 4)
    for count, seed in ((1, 1), (2, 3), (groups, 1)):
        res = _solve(graph, "nsssp_shared", paths=paths, sample_groups=count, sample_seed=seed, **SMALL)
        sources = np.asarray(res.counters["row_sources"])
        picked = nsssp.sampled_groups(graph.n, 4, count, seed)
        assert res.counters["groups"] == count == picked.size
        assert sources.tolist() == [s for k in picked for s in range(4 * k, min(4 * k + 4, graph.n))]
        assert res.dist.shape == (sources.size, graph.n)
        np.testing.assert_array_equal(res.dist, whole.dist[sources])
        assert check_apsp(graph, res.dist, res.parent, sources=sources).ok
    with pytest.raises(SolverError, match=f"only {groups} groups"):
        _solve(graph, "nsssp_global", sample_groups=groups + 1, **SMALL)


def test_sampled_groups_answer_validates_its_own_rows(tmp_path):
    """A job of sampled groups checks and keeps rows of its sample, named by their sources in the answer file."""
    from gpusp.measure.job import SolveJob, run_job

    graph = POSITIVE_13
    job = SolveJob(graph=graph, solver="nsssp_global", params={**SMALL, "paths": False, "sample_groups": 2},
                   trials=1, warmup=0, validate=True, validate_rows=3, seed=2, answer=tmp_path / "a.npz")
    outcome = run_job(job)
    assert outcome.status == "ok", outcome.reason
    saved = np.load(tmp_path / "a.npz")
    whole = _solve(graph, "nsssp_global", **SMALL)
    assert len(saved["sources"]) == 3 and set(saved["sources"]) <= set(outcome.results[0].counters["row_sources"])
    np.testing.assert_array_equal(saved["dist"], whole.dist[saved["sources"]])
