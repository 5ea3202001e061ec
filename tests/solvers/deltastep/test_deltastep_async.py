"""deltastep_async (barrier-free bucketed delta-stepping) in the simulator.

The simulator runs a cooperative grid of one block, so these tests check the queue logic (claims, pushes,
lazy deletion, the bucket ring, overflow and retry, termination); the H200 run checks the asynchrony between
blocks and the timing (benchmarks/sssp-fast-h200.md).
"""

import numpy as np
import pytest
from cases import _g, assert_sssp_ok, random_graph, sssp_cases

import gpusp
from gpusp.errors import SolverError
from gpusp.solvers import registry
from gpusp.solvers.deltastep import asyncbuckets as deltaasync
from gpusp.solvers.deltastep.spec import ring_delta

CASES = sssp_cases()


def _solve(graph, source=0, **kw):
    kw.setdefault("warmup", 0)
    kw.setdefault("block", 32)
    return gpusp.solve(graph, "deltastep_async", source, **kw)


@pytest.mark.parametrize("delta", [0, 1, 10**6], ids=["auto", "d1", "huge"])
@pytest.mark.parametrize("label,graph,source", CASES, ids=[c[0] for c in CASES])
def test_matches_reference(label, graph, source, delta):
    res = _solve(graph, source, delta=delta)
    assert_sssp_ok(graph, source, res)
    assert res.counters["pops"] >= 1 and res.counters["retries"] == 0


@pytest.mark.parametrize("lanes,claim,window", [(1, 256, 1), (4, 3, 2), (32, 256, 3)])
def test_lanes_claims_and_windows(lanes, claim, window):
    graph = random_graph(90, 450, seed=5, wmin=0, wmax=30)
    res = _solve(graph, 7, lanes=lanes, claim=claim, window=window, delta=4, buckets=16)
    assert_sssp_ok(graph, 7, res)
    c = res.counters
    assert 0 <= c["stale"] < c["pops"] and c["batches"] >= -(-c["pops"] // min(claim, 32 // lanes))


def test_delta_one_is_work_optimal():
    """One block, weights >= 1, delta = 1 and a window of one bucket: Dijkstra's order, each reached vertex's
    arcs examined exactly once."""
    graph = random_graph(60, 240, seed=11, wmin=1, wmax=9)
    res = _solve(graph, 0, delta=1, window=1, buckets=16)
    assert_sssp_ok(graph, 0, res)
    reached = res.dist != res.inf
    assert res.counters["relaxations"] == int(np.diff(graph.indptr)[reached].sum())


def test_ring_raises_delta_to_fit_the_heaviest_arc():
    graph = _g(4, [(0, 1, 1), (1, 2, 1000), (2, 3, 1)], "heavy")
    res = _solve(graph, 0, delta=1, buckets=8, window=2)  # 1000 / (8 - 2) -> delta 167
    assert_sssp_ok(graph, 0, res)
    assert res.counters["delta"] == 167 == ring_delta(1, 1000, 8, 2)
    assert res.counters["buckets"] >= 1000 // 167


def test_long_chain_and_wrapping_ring():
    n = 150
    graph = _g(n, [(i, i + 1, 1 + i % 3) for i in range(n - 1)], "chain")
    res = _solve(graph, 0, delta=1, buckets=4, window=1)  # 300 buckets through a ring of 4 slots
    assert_sssp_ok(graph, 0, res)
    assert res.counters["buckets"] > 4 * 4 and res.counters["stale"] == 0


def test_overflow_doubles_the_capacity_and_repeats():
    graph = random_graph(60, 400, seed=3, wmin=1, wmax=5)
    res = _solve(graph, 0, delta=10**6, capacity=4, buckets=2, window=1)  # one bucket holds everything
    assert_sssp_ok(graph, 0, res)
    assert res.counters["retries"] >= 1 and res.counters["capacity"] == 4 * 2 ** res.counters["retries"]


def test_repeated_runs_identical_and_queue_left_empty():
    graph = random_graph(80, 400, seed=9, wmin=0, wmax=20)
    s = registry.get("deltastep_async").build(graph, block=32)
    s.upload()
    first = [s.run(src) and s.download()[0] for src in (3, 3, 11)]
    assert np.array_equal(first[0], first[1])
    assert np.all(s.d_q.copy_to_host() == deltaasync.EMPTY)  # every entry was taken back out


def test_refuses_negative_weights_int64_and_bad_shapes():
    with pytest.raises(SolverError, match="negative weights"):
        _solve(sssp_cases(negative=True)[-3][1])
    big = _g(3, [(0, 1, 2**29), (1, 2, 2**29)], "big")
    if big.dtype != np.int32:
        with pytest.raises(SolverError, match="int64"):
            _solve(big)
    with pytest.raises(SolverError, match="window"):
        registry.get("deltastep_async").build(random_graph(5, 10, seed=1), buckets=4, window=4)
    with pytest.raises(SolverError, match="power of two"):
        registry.get("deltastep_async").build(random_graph(5, 10, seed=1), capacity=1000)

