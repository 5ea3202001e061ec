"""phast_gpu's sweep of every tree (PhastSolver.sweep through gpusp.measure.alltrees) in the simulator: the device
reductions and target rows against NumPy over SciPy's rows on the awkward graphs, batches that reuse the working
arrays without a reset, targets through the hierarchy's renumbering, the job and the sampled check."""

import numpy as np
import pytest
from cases import _g, random_graph, sssp_cases
from numba import cuda

from gpusp.errors import SolverError
from gpusp.measure.alltrees import check_sample, sweep
from gpusp.measure.alltrees_slice import SliceSweep
from gpusp.measure.job import SolveJob, run_job
from gpusp.measure.validate import reference_rows
from gpusp.solvers import registry
from gpusp.solvers.multisource.reduce import reduce_rows
from gpusp.solvers.phast.sweep import in_min_fn

SPEC = registry.get("phast_gpu")
SMALL = {"block": 32, "threads": 2}


def _sweep(graph, sources, targets=(), trials=1, **params):
    return sweep(graph, SPEC, SPEC.resolve({**SMALL, **params}), sources, targets, trials=trials, warmup=0)


def _assert_like_scipy(graph, out, sources, targets):
    want = reduce_rows(reference_rows(graph, sources).dist, graph.inf, out.width, targets)
    for key, value in want.items():
        assert np.array_equal(out.values[key], value), (key, out.values[key], value)


CASES = [c for c in sssp_cases() if c[0] != "random-37"]


@pytest.mark.parametrize("label,graph,source", CASES, ids=[c[0] for c in CASES])
def test_every_tree_of_the_awkward_graphs(label, graph, source):
    """n = 1, a self-loop, unreachable parts, zero weights, a zero-weight cycle, duplicates: every source's
    reductions and the target rows (original ids, through the hierarchy's order) equal NumPy over SciPy's rows."""
    targets = [graph.n - 1, source, 0]
    out = _sweep(graph, np.arange(graph.n), targets)
    _assert_like_scipy(graph, out, np.arange(graph.n), targets)
    assert out.counters["launches"] == out.counters["batches"] and out.counters["settled"] >= graph.n


@pytest.mark.parametrize("upward", ["search", "closures"])
def test_upward_spaces_searched_or_composed_sweep_alike(upward):
    """The same reductions whether each source's upward space is searched or composed once for every vertex
    (upward_closures, gathered per batch), on a zero-weight random graph contracted without a core, in batches of 8;
    'auto' composes them for every tree of a core-free hierarchy, searches for a handful of sources."""
    graph = random_graph(25, 80, seed=6, wmin=0, wmax=9)  # 3 x 8 < n <= 25 x 8: auto searches for 3 sources
    sources, targets = np.arange(graph.n), [0, 24, 7]
    out = _sweep(graph, sources, targets, batch=8, core_degree=0, upward=upward)
    _assert_like_scipy(graph, out, sources, targets)
    assert out.counters["upward"] == upward and (out.counters["closures_ms"] > 0) == (upward == "closures")
    assert _sweep(graph, sources, core_degree=0).counters["upward"] == "closures"
    assert _sweep(graph, sources[:3], core_degree=0).counters["upward"] == "search"
    solver = SPEC.build(graph, **{**SMALL, "core_degree": 0, "upward": upward})
    SliceSweep(solver, sources, [], 1).prepare(0)  # no batch yet: composing is set-up, not the first batch's JIT
    assert (solver.closures is not None) == (upward == "closures")


def test_closures_need_a_hierarchy_without_a_core():
    graph = random_graph(150, 600, seed=0, wmin=1, wmax=30)
    params = dict(core_degree=2, settle=8, hops=3)
    assert SPEC.build(graph, **params).h.core > 0
    with pytest.raises(SolverError, match="upward=closures needs a hierarchy without a core"):
        SPEC.build(graph, upward="closures", **params)
    out = _sweep(graph, np.arange(20), **params)  # 20 x 8 >= n: auto would compose them, but not past a core
    assert out.counters["upward"] == "search"
    _assert_like_scipy(graph, out, np.arange(20), [])


def test_a_hub_and_batches_that_reuse_the_arrays():
    """37 vertices in batches of 8 (five launches, the last of 5 sources) and two trials over the same arrays: a hub
    of out-degree 30, a zero-weight 2-cycle, an unreachable tail. No launch resets the distances, so a slot an
    earlier batch left behind would show in a later batch's reductions."""
    n = 37
    edges = [(0, v, v % 5) for v in range(1, 31)] + [(v, v + 1, 2) for v in range(1, 30)]
    edges += [(30, 0, 1), (31, 32, 0), (32, 31, 0), (33, 34, 4), (5, 31, 3)]
    graph = _g(n, edges, "hub")
    sources = np.arange(n)[::-1]
    out = _sweep(graph, sources, [0, 36, 32], trials=2, batch=8)
    _assert_like_scipy(graph, out, sources, [0, 36, 32])
    assert (out.counters["batches"], out.counters["batch"]) == (5, 8)


@pytest.mark.parametrize("wmin", [0, 1])
def test_random_graphs_two_batches_duplicate_sources(wmin):
    """Random graphs (zero weights or not), n not a multiple of the batch, a source twice in one batch."""
    graph = random_graph(13, 40, seed=3 + wmin, wmin=wmin, wmax=9)
    sources = np.r_[np.arange(13), [4, 4]]  # 15 sources in batches of 8: the second holds 4 twice
    out = _sweep(graph, sources, [3, 12, 11], batch=8)
    _assert_like_scipy(graph, out, sources, [3, 12, 11])
    assert out.counters["batches"] == 2


def test_the_table_through_the_job_and_the_sampled_check(tmp_path):
    """--sources A --targets B with phast_gpu: the table is SciPy's rows at B (targets mapped through the
    hierarchy's renumbering, which is not the identity here); a planted wrong total fails the sampled check."""
    graph = random_graph(23, 70, seed=5, wmin=0, wmax=7)
    solver = SPEC.build(graph, **SMALL)
    assert not np.array_equal(solver.dist_rows(np.arange(23)), np.arange(23))
    sources, targets = [3, 7, 3, 22], [0, 5, 9, 21]
    out = run_job(SolveJob(graph, "phast_gpu", params=SMALL, sources=sources, targets=targets, trials=1, warmup=1,
                           validate=True, validate_rows=4, summary=tmp_path / "od.npz"))
    assert out.status == "ok", out.reason
    with np.load(tmp_path / "od.npz") as z:
        assert np.array_equal(z["od"], reference_rows(graph, sources).dist[:, targets])
    result = _sweep(graph, np.arange(23), targets)
    result.values["total"][9] -= 1
    verdict = check_sample(graph, result, 23, seed=0)
    assert verdict["ok"] is False and verdict["checks"]["total"] is False and verdict["checks"]["od"]
    assert verdict["mismatches"][0].startswith("source 9: total")


@pytest.mark.parametrize("w", ["int32", "int64"])
def test_in_min_takes_every_in_arc_four_at_a_time(w):
    """The sweep's min over a vertex's downward in-arcs, loads four arcs at a time: in-degrees 0 .. 9 (whole steps
    of four and every remainder), unreached tails (INF) skipped, against NumPy, for several source slots."""
    in_min, dtype, sshift = in_min_fn(w), np.dtype(w), 2
    inf = dtype.type(np.iinfo(dtype).max // 2)
    rng = np.random.default_rng(3)
    degrees = np.arange(10)
    ptr = np.concatenate([[0], np.cumsum(degrees)]).astype(np.int32)
    tails = rng.integers(0, 10, ptr[-1]).astype(np.int32)
    weights = rng.integers(0, 50, ptr[-1]).astype(dtype)
    dist = rng.integers(0, 1000, 10 << sshift).astype(dtype)
    dist[rng.random(dist.size) < 0.3] = inf
    start = np.full(10 << sshift, inf, dtype)
    start[::3] = 5  # a slot that already holds a distance keeps it when no arc beats it

    @cuda.jit
    def run(ptr, tails, weights, dist, start, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = in_min(ptr, tails, weights, dist, i >> sshift, i & 3, sshift, start[i], inf)

    out = np.empty_like(start)
    run[1, out.size](ptr, tails, weights, dist, start, out)
    for i in range(out.size):
        v, s = i >> sshift, i & 3
        arcs = range(ptr[v], ptr[v + 1])
        best = min([start[i]] + [dist[(tails[a] << sshift) + s] + weights[a] for a in arcs
                                 if dist[(tails[a] << sshift) + s] != inf])
        assert out[i] == best, (v, s, out[i], best)
