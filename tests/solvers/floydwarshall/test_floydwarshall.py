"""floydwarshall_* (paper 000) in the CUDA simulator against SciPy: tiny graphs, tile 4 on odd sizes.

Every variant runs with its default launcher ('native': configured launches at the driver's cost on a GPU) and
with launcher='numba' (Numba's dispatcher per launch); in the simulator both are Numba's launch, on a GPU
(NUMBA_ENABLE_CUDASIM=0) the native path runs.
"""

import numpy as np
import pytest
from cases import (_g, _random_dag_negative, assert_apsp_ok, negative_cycle_graph, pairwise, random_graph,
                   sssp_cases)

import gpusp
from gpusp.errors import NegativeCycleError, SolverError
from gpusp.solvers import registry
from gpusp.solvers.common import dense
from gpusp.solvers.common.csr import DeviceGraph
from gpusp.data.graph import dense_predecessors
from gpusp.solvers.common.dense import build_matrix

# the cheapest simulator settings per variant: tile 4 (16 threads per block), 1-D blocks of 32
VARIANTS = {
    "floydwarshall_supernaive": {"tile": 4},
    "floydwarshall_supernaiveshared": {"block": 32},
    "floydwarshall_naive": {"block": 32},
    "floydwarshall_tiledglobal": {"tile": 4},
    "floydwarshall_tiledshared": {"tile": 4},
}
TILED = ["floydwarshall_tiledglobal", "floydwarshall_tiledshared"]


def zero_cycle_graph():
    """All weights 0 with cycles: the tiled order leaves predecessor loops here without the repair pass."""
    return random_graph(12, 24, seed=1132, wmin=0, wmax=0, name="zero-cycles-12")


def ring(n, total):
    """The cycle 0 -> 1 -> ... -> n-1 -> 0 of n edges and weight ``total`` (1 per edge, the rest on the last)."""
    return _g(n, [(i, i + 1, 1) for i in range(n - 1)] + [(n - 1, 0, total - (n - 1))], f"ring-{n}")


# negative cycles: reachable from 0, through all 6 vertices across tiles, a negative self-loop
CYCLES = {"negative-cycle": negative_cycle_graph(), "negative-ring-6": ring(6, -1),
          "negative-loop": _g(3, [(0, 1, 2), (1, 1, -1)], "neg-loop")}
# the awkward cases (random-37 is left out: n^2 simulated threads per launch), odd-sized randoms, negative weights
# and the negative cycles (NegativeCycleError)
CASES = dict([(label, g) for label, g, _ in sssp_cases() if g.n <= 13]
             + [("random-9-positive", random_graph(9, 30, seed=11, wmin=1, wmax=30)),
                ("zero-cycles-12", zero_cycle_graph())]
             + [(label, g) for label, g, _ in sssp_cases(negative=True)[-3:-1]]
             + [("random-neg-9", _random_dag_negative(9, 30, seed=3))], **CYCLES)  # cases.py's has 17 vertices
# every pair of variant, case and launcher meets at least once
DESIGN = pairwise(variant=list(VARIANTS), case=list(CASES), launcher=["native", "numba"])


@pytest.mark.parametrize("name", list(VARIANTS))
def test_matches_reference(name):
    """The variant's rows of the pairwise design: exact distances and valid trees, one launch per k (one round per
    diagonal tile when tiled), negative cycles reported."""
    for row in (row for row in DESIGN if row["variant"] == name):
        graph = CASES[row["case"]]
        if row["case"] in CYCLES:
            with pytest.raises(NegativeCycleError):
                gpusp.solve(graph, name, warmup=0, launcher=row["launcher"], **VARIANTS[name])
            continue
        res = gpusp.solve(graph, name, warmup=0, launcher=row["launcher"], **VARIANTS[name])
        assert_apsp_ok(graph, res)
        assert res.counters["relaxations"] == graph.n ** 3
        if name in TILED:
            assert res.counters["iterations"] == -(-graph.n // 4), row  # one round per diagonal tile
        else:
            assert res.counters["iterations"] == graph.n, row  # one launch per k


@pytest.mark.parametrize("name", list(VARIANTS))
def test_numba_launcher_same_launches(name):
    """launcher='numba' issues the launches of the native default, the tiled repair rounds (zero-weight cycles) with
    their flag read every round."""
    graph = CASES["zero-cycles-12"]
    res = gpusp.solve(graph, name, warmup=0, launcher="numba", **VARIANTS[name])
    native = gpusp.solve(graph, name, warmup=0, launcher="native", **VARIANTS[name])
    assert_apsp_ok(graph, res)
    np.testing.assert_array_equal(res.dist, native.dist)
    assert res.counters == native.counters


def test_zero_weight_ring_is_not_a_negative_cycle():
    graph = ring(6, 0)
    for name in TILED:
        assert_apsp_ok(graph, gpusp.solve(graph, name, warmup=0, tile=4))


@pytest.mark.parametrize("name,params", [("floydwarshall_tiledglobal", {"tile": 8}),
                                         ("floydwarshall_tiledshared", {"tile": 8}),
                                         ("floydwarshall_supernaive", {"tile": 8})])
def test_tile_8(name, params):
    graph = random_graph(10, 30, seed=5, wmin=0, wmax=9)
    res = gpusp.solve(graph, name, warmup=0, **params)
    assert_apsp_ok(graph, res)


@pytest.mark.slow
def test_tiledshared_tile_16():
    graph = random_graph(17, 60, seed=8, wmin=1, wmax=25)
    res = gpusp.solve(graph, "floydwarshall_tiledshared", warmup=0, tile=16)
    assert_apsp_ok(graph, res)
    assert res.counters["iterations"] == 2


def test_repeated_runs_reset_state():
    """Warm-ups and trials rerun the solver on the same buffers: every run must start from the graph."""
    graph = CASES["random-9-positive"]
    res = gpusp.solve(graph, "floydwarshall_tiledshared", warmup=1, trials=2, tile=4)
    assert_apsp_ok(graph, res)
    assert len(res.timings.samples_ms) == 2


@pytest.mark.parametrize("label,graph,source", sssp_cases(negative=True)[:6] + sssp_cases(negative=True)[-2:],
                         ids=[c[0] for c in sssp_cases(negative=True)[:6] + sssp_cases(negative=True)[-2:]])
def test_device_matrix_is_to_dense(label, graph, source):
    """The on-device set-up equals Graph.to_dense() and dense_predecessors()."""
    solver = registry.get("floydwarshall_naive").build(graph, block=32)
    solver.upload()
    build_matrix(DeviceGraph(graph).upload(), solver.d, solver.p, solver.inf)
    d, p = solver.download()
    dense = graph.to_dense()
    np.testing.assert_array_equal(d, dense)
    np.testing.assert_array_equal(p, dense_predecessors(dense, graph.inf))


def test_int64_distances():
    graph = _g(5, [(0, 1, 2**40), (1, 2, 2**40), (0, 2, 2**41 + 1), (2, 3, -5), (3, 4, 1)], "big")
    assert graph.dtype == np.int64
    for name in ("floydwarshall_supernaive", "floydwarshall_tiledshared"):
        assert_apsp_ok(graph, gpusp.solve(graph, name, warmup=0, tile=4))


def test_memory_check(monkeypatch):
    monkeypatch.setattr(dense, "free_device_memory", lambda: 1000)
    with pytest.raises(SolverError, match="device memory"):
        gpusp.solve(random_graph(13, 40, seed=1), "floydwarshall_naive", warmup=0, block=32)


@pytest.mark.parametrize("name", ["floydwarshall_supernaive", "floydwarshall_supernaiveshared", "floydwarshall_naive",
                                  "floydwarshall_cpu"])
def test_paper_loop_without_row_skip_answers_alike(name):
    """row_skip=false (paper 000's loop: every j of a row whose d[i][k] is INF) gives the same answer as skipping
    it, on graphs with unreachable pairs, zero weights, negative arcs and a negative cycle."""
    params = VARIANTS.get(name, {})
    for label, graph, _ in [c for c in sssp_cases(negative=True) if c[0] in ("unreachable", "zero-cycle", "negative",
                                                                            "random-13")]:
        assert_apsp_ok(graph, gpusp.solve(graph, name, None, row_skip=False, **params))
    with pytest.raises(NegativeCycleError):
        gpusp.solve(negative_cycle_graph(), name, None, row_skip=False, **params)
