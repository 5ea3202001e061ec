"""minplus_naive / minplus_tiled (paper 004) in the CUDA simulator."""

import numpy as np
import pytest
from cases import (_g, _random_dag_negative, assert_apsp_ok, negative_cycle_graph, pairwise, random_graph,
                   sssp_cases)

import gpusp
from gpusp.errors import NegativeCycleError, SolverError
from gpusp.solvers import registry
from gpusp.solvers.common import dense

MINPLUS = {"minplus_naive": {}, "minplus_tiled": {"tile": 4}}


def ring(n, total):
    """The cycle 0 -> 1 -> ... -> n-1 -> 0 of n edges and weight ``total``."""
    return _g(n, [(i, i + 1, 1) for i in range(n - 1)] + [(n - 1, 0, total - (n - 1))], f"ring-{n}")


# negative cycles: reachable from 0, and one of 9 edges, which shows on the diagonal only once walks of 9 edges are
# covered (2^4 >= 9: 4 squarings)
CYCLES = {"negative-cycle": negative_cycle_graph(), "negative-ring-9": ring(9, -1)}
# the awkward cases (n <= 13), odd-sized randoms, zero-weight cycles, negative weights and the negative cycles
CASES = dict([(label, g) for label, g, _ in sssp_cases() if g.n <= 13]
             + [("random-9-positive", random_graph(9, 30, seed=11, wmin=1, wmax=30)),
                ("zero-cycles-12", random_graph(12, 24, seed=1132, wmin=0, wmax=0, name="zero-cycles-12"))]
             + [(label, g) for label, g, _ in sssp_cases(negative=True)[-3:-1]]
             + [("random-neg-9", _random_dag_negative(9, 30, seed=3))], **CYCLES)  # cases.py's has 17 vertices
# 13 vertices, three negative arcs, no negative cycle, several squarings
MIXED = random_graph(13, 40, seed=2, wmin=-1, wmax=9)
# every pair of variant, case, transpose and launcher meets at least once
DESIGN = pairwise(name=list(MINPLUS), case=list(CASES), transpose=[False, True], launcher=["native", "numba"])


# --- min-plus squaring ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(MINPLUS))
def test_minplus_matches_reference(name):
    """The variant's rows of the pairwise design: exact distances and valid trees in at most ceil(log2 n)
    squarings, negative cycles reported."""
    for row in (row for row in DESIGN if row["name"] == name):
        graph, params = CASES[row["case"]], dict(transpose=row["transpose"], launcher=row["launcher"], **MINPLUS[name])
        if row["case"] in CYCLES:
            with pytest.raises(NegativeCycleError):
                gpusp.solve(graph, name, warmup=0, **params)
            continue
        res = gpusp.solve(graph, name, warmup=0, **params)
        assert_apsp_ok(graph, res)
        squarings = res.counters["iterations"]
        assert squarings <= (graph.n - 1).bit_length(), row  # at most ceil(log2 n)
        assert res.counters["relaxations"] == squarings * graph.n ** 3


def test_minplus_early_stop():
    """Squaring stops after the first squaring that changes nothing, or after ceil(log2 n)."""
    path = _g(6, [(i, i + 1, 2) for i in range(5)], "path-6")  # 5-edge paths: all 3 squarings change
    res = gpusp.solve(path, "minplus_naive", warmup=0)
    assert_apsp_ok(path, res)
    assert res.counters["iterations"] == 3
    broom = _g(13, [(0, 1, 1)] + [(1, v, v) for v in range(2, 13)], "broom-13")  # paths of <= 2 edges
    res = gpusp.solve(broom, "minplus_tiled", warmup=0, tile=4)
    assert_apsp_ok(broom, res)
    assert res.counters["iterations"] == 2  # the 2nd squaring changes nothing; the limit is 4
    empty = _g(13, [], "empty-13")
    res = gpusp.solve(empty, "minplus_naive", warmup=0)
    assert_apsp_ok(empty, res)
    assert res.counters["iterations"] == 1


@pytest.mark.parametrize("name", list(MINPLUS))
def test_transpose_agrees(name):
    """The transposed operand gives the same distances, predecessors and squarings (the answers on every case: the
    design above)."""
    graph = MIXED
    plain = gpusp.solve(graph, name, warmup=0, transpose=False, **MINPLUS[name])
    trans = gpusp.solve(graph, name, warmup=0, transpose=True, **MINPLUS[name])
    assert_apsp_ok(graph, trans)
    np.testing.assert_array_equal(plain.dist, trans.dist)
    np.testing.assert_array_equal(plain.parent, trans.parent)
    assert plain.counters["iterations"] == trans.counters["iterations"] > 1


def test_minplus_tile_8():
    graph = random_graph(10, 30, seed=5, wmin=0, wmax=9)
    assert_apsp_ok(graph, gpusp.solve(graph, "minplus_tiled", warmup=0, tile=8))
    assert_apsp_ok(graph, gpusp.solve(graph, "minplus_tiled", warmup=0, tile=8, transpose=True))


def test_minplus_repeated_runs_and_int64():
    graph = _g(5, [(0, 1, 2**40), (1, 2, 2**40), (0, 2, 2**41 + 1), (2, 3, -5), (3, 4, 1)], "big")
    assert graph.dtype == np.int64
    res = gpusp.solve(graph, "minplus_tiled", warmup=1, trials=2, tile=4)
    assert_apsp_ok(graph, res)


def test_minplus_memory_check(monkeypatch):
    monkeypatch.setattr(dense, "free_device_memory", lambda: 1000)
    with pytest.raises(SolverError, match="device memory"):
        gpusp.solve(random_graph(13, 40, seed=1), "minplus_tiled", warmup=0, tile=4)


@pytest.mark.parametrize("name", list(MINPLUS))
def test_minplus_launcher_numba_matches_native(name):
    """launcher='numba' (Numba's dispatcher and copy_to_host every squaring) gives the native launcher's answers,
    also on repeated runs of one solver (the prepared launches keep their ping-pong buffers apart)."""
    graph = MIXED
    native = gpusp.solve(graph, name, warmup=1, trials=2, launcher="native", **MINPLUS[name])
    numba = gpusp.solve(graph, name, warmup=0, launcher="numba", transpose=True, **MINPLUS[name])
    assert_apsp_ok(graph, native)
    assert_apsp_ok(graph, numba)
    np.testing.assert_array_equal(native.dist, numba.dist)
    assert native.counters["iterations"] == numba.counters["iterations"]
    assert registry.get(name).build(graph, launcher="numba", **MINPLUS[name]).native is False
