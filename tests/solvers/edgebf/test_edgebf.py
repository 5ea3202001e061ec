"""Paper 004's Bellman-Ford variants (edgebf_coo, edgebf_dense, vertexbf_pull, vertexbf_push) in the simulator."""

import os
import subprocess
import sys

import numpy as np
import pytest
from cases import _g, assert_sssp_ok, negative_cycle_graph, random_graph, sssp_cases

import gpusp
from gpusp.errors import NegativeCycleError
from gpusp.measure.validate import check_sssp
from gpusp.solvers import registry

SOLVERS = ["edgebf_coo", "edgebf_dense", "vertexbf_pull", "vertexbf_push"]
CASES = sssp_cases(negative=True)


def _solve(graph, name, source=0, **kw):
    kw.setdefault("warmup", 0)
    return gpusp.solve(graph, name, source, block=32, **kw)


def _complete(n, seed, wmin, wmax):
    rng = np.random.default_rng(seed)
    src, dst = (a.ravel() for a in np.meshgrid(np.arange(n), np.arange(n), indexing="ij"))
    keep = src != dst
    src, dst = src[keep], dst[keep]
    return gpusp.Graph.from_edges(n, src, dst, rng.integers(wmin, wmax + 1, src.size), name=f"complete-{n}")


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


@pytest.mark.parametrize("k", [1, 2, 4, 64])
def test_coo_edges_per_thread(k):
    for label, graph, source in (CASES[7], CASES[3], CASES[-1]):  # m = 110, m = 5 < 64, negative DAG
        res = _solve(graph, "edgebf_coo", source, edges_per_thread=k)
        assert_sssp_ok(graph, source, res)
        assert res.params["edges_per_thread"] == k
        assert res.counters["relaxations"] == res.counters["iterations"] * graph.m


@pytest.mark.parametrize("transfer,chunks", [("pinned", 2), ("streams", 2), ("streams", 8)])
@pytest.mark.parametrize("label,graph,source", [CASES[i] for i in (0, 3, -1)], ids=lambda c: str(c)[:20])
def test_dense_transfer_modes_match_reference(transfer, chunks, label, graph, source):
    """Paper 004's pinned memory and streamed pieces give the default's answers; 8 pieces of a graph with
    fewer rows leave empty pieces."""
    res = _solve(graph, "edgebf_dense", source, transfer=transfer, chunks=chunks, trials=2)
    assert_sssp_ok(graph, source, res)
    assert res.counters["transfer"] == transfer
    assert res.counters["chunks"] == (min(chunks, graph.n) if transfer == "streams" else 0)


def test_dense_streams_detect_negative_cycles_and_refuse_unknown_modes():
    with pytest.raises(NegativeCycleError):
        _solve(negative_cycle_graph(), "edgebf_dense", transfer="streams", chunks=2)
    with pytest.raises(gpusp.SolverError):
        _solve(CASES[0][1], "edgebf_dense", transfer="zero-copy")


@pytest.mark.parametrize("wmin,wmax", [(1, 20), (0, 3)], ids=["positive", "with-zeros"])
def test_dense_complete_graph(wmin, wmax):
    graph = _complete(9, seed=4, wmin=wmin, wmax=wmax)
    res = _solve(graph, "edgebf_dense", 2)
    assert_sssp_ok(graph, 2, res)
    assert res.counters["relaxations"] == res.counters["iterations"] * 81


def _hidden_path(n, seed, hops=8):
    """A random graph whose only cheap route is a path of ``hops`` weight-1 arcs through random vertices (every
    other arc is heavy): a matrix entry of the path that the dense kernel never visits changes the answer.
    Returns (graph, source, far end)."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)[:hops + 1]
    src, dst = rng.integers(0, n, 4 * n), rng.integers(0, n, 4 * n)
    w = rng.integers(10 * n, 20 * n, src.size)
    src, dst = np.concatenate([order[:-1], src]), np.concatenate([order[1:], dst])
    w = np.concatenate([np.ones(hops, dtype=np.int64), w])
    return gpusp.Graph.from_edges(n, src, dst, w, name=f"hidden-path-{n}-{seed}"), int(order[0]), int(order[-1])


DENSE_SHAPES = [("coalesced", 1), ("strided", 1), ("coalesced", 2), ("strided", 8), ("coalesced", 64),
                ("strided", 64)]


@pytest.mark.parametrize("layout,k", DENSE_SHAPES, ids=[f"{a}-k{b}" for a, b in DENSE_SHAPES])
def test_dense_layout_and_edges_per_thread(layout, k):
    """Paper 004's non-coalesced layout and Alg. 5 (k entries per thread, 2-D grid stride) visit every entry:
    awkward cases, and hidden paths whose every arc is needed, with 1-row and 4-row blocks."""
    for label, graph, source in [CASES[i] for i in (0, 2, 5, -3, -1)]:
        res = _solve(graph, "edgebf_dense", source, layout=layout, edges_per_thread=k)
        assert_sssp_ok(graph, source, res)
        assert res.params["layout"] == layout and res.params["edges_per_thread"] == k
    for n, seed, block in ((40, 1, 32), (37, 2, 128)):  # more than a warp of rows and columns
        graph, source, end = _hidden_path(n, seed)
        res = gpusp.solve(graph, "edgebf_dense", source, block=block, warmup=0, layout=layout, edges_per_thread=k)
        assert_sssp_ok(graph, source, res)
        assert res.dist[end] == 8  # the path's far end, reached over every arc of the path


@pytest.mark.parametrize("k,block,grid", [(1, 64, (2, 32)), (2, 64, (2, 16)), (8, 64, (1, 8)), (64, 256, (1, 1))])
def test_dense_grid_shrinks_by_edges_per_thread(k, block, grid):
    """Alg. 5's grid: n^2 / k threads for a 64 x 64 matrix (k split into rows ky >= columns kx)."""
    graph = _complete(64, seed=1, wmin=1, wmax=9)
    for layout in ("coalesced", "strided"):
        solver = registry.get("edgebf_dense").build(graph, block=block, edges_per_thread=k, layout=layout)
        gx, gy = solver.grid_for(64)
        assert (gx, gy) == grid
        assert gx * gy * block * k >= 64 * 64


@pytest.mark.parametrize("layout,k,chunks", [("strided", 1, 2), ("coalesced", 4, 4), ("strided", 16, 8)])
def test_dense_streams_with_layout_and_edges_per_thread(layout, k, chunks):
    """The streamed upload relaxes each row piece on its stream with the chosen kernel (rows offset per piece)."""
    for graph, source, _ in (_hidden_path(36, 5, hops=4), (CASES[-1][1], CASES[-1][2], None)):
        res = _solve(graph, "edgebf_dense", source, transfer="streams", chunks=chunks, layout=layout,
                     edges_per_thread=k, trials=2)
        assert_sssp_ok(graph, source, res)
        assert res.counters["chunks"] == chunks


@pytest.mark.parametrize("name", SOLVERS)
def test_launcher_numba_matches_native(name):
    """launcher='numba' (Numba's dispatcher every launch) gives the native launcher's answers and counters."""
    graph, source = CASES[-1][1], CASES[-1][2]
    native = _solve(graph, name, source, launcher="native", trials=2)
    numba = _solve(graph, name, source, launcher="numba", trials=2)
    assert_sssp_ok(graph, source, numba)
    assert np.array_equal(native.dist, numba.dist) and native.counters == numba.counters
    assert registry.get(name).build(graph, launcher="numba").native is False


@pytest.mark.parametrize("name", ["edgebf_coo", "vertexbf_pull", "vertexbf_push"])
def test_lanes_on_streams_share_the_graph(name):
    """Lanes (one source's state each, on streams of their own) interleave rounds of different sources on one
    uploaded graph and end with each source's own answer; a device-resident launch mode refuses them."""
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
    if name != "vertexbf_pull":
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


def test_launch_parameter():
    """edgebf_coo and vertexbf_push take launch; pull and dense have none and always launch rounds from the host."""
    graph = CASES[7][1]
    for name in ("edgebf_coo", "vertexbf_push"):
        assert registry.get(name).build(graph, launch="graph").launch == "graph"
        assert registry.get(name).build(graph).launch == registry.get(name).defaults()["launch"]
    for name in ("vertexbf_pull", "edgebf_dense"):
        with pytest.raises(gpusp.SolverError, match="no parameter 'launch'"):
            registry.get(name).build(graph, launch="graph")
        assert registry.get(name).build(graph).launch == "host"


@pytest.mark.parametrize("name", SOLVERS)
def test_parameters_are_required(name):
    """The classes take the registry's parameters, every one named and without defaults of their own."""
    graph = CASES[2][1]
    with pytest.raises(TypeError):
        registry.get(name).load()(graph)
    assert registry.get(name).build(graph).params == registry.get(name).defaults()


def test_compilecheck_sm90():
    """The kernels compile for sm_90 (outside the simulator, which does no typing)."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    modules = sorted({registry.get(name).impl.split(":")[0] for name in SOLVERS})
    out = subprocess.run([sys.executable, "-m", "gpusp.solvers.compilecheck", *modules], env=env,
                         capture_output=True, text=True, timeout=300)
    if out.returncode != 0 and "nvrtc" in (out.stdout + out.stderr).lower() and " ok " not in out.stdout:
        pytest.skip("no NVVM/NVRTC here for the offline compile")
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
