"""Paper 004's Bellman-Ford variants (edgebf_coo, edgebf_dense, vertexbf_pull, vertexbf_push) in the simulator."""

import os
import subprocess
import sys

import numpy as np
import pytest
from cases import _g, assert_sssp_ok, negative_cycle_graph, random_graph, sssp_cases

import gpusp
from gpusp.errors import NegativeCycleError
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
