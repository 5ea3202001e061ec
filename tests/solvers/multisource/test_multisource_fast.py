"""multisource_fast: batched multi-source APSP (one cooperative kernel for every round of every batch).

Simulator budget: one block of 32 threads (one warp) or 64 (two warps), batches of 32 or 64 sources,
graphs with n <= 70; a batch costs (rounds + tree levels + 4) grid barriers of the simulated threads.
"""

import numpy as np
import pytest
from numba import cuda
from cases import _g, assert_apsp_ok, random_graph, sssp_cases

import gpusp
from gpusp.errors import SolverError
from gpusp.solvers import registry
from gpusp.solvers.common import dense, gate
from gpusp.solvers.multisource import solver as multisource
from gpusp.solvers.multisource.solver import arc_chunks
from gpusp.solvers.multisource.spec import auto_batch
from gpusp.solvers.multisource.warp import warp_or

CASES = [c for c in sssp_cases() if c[0] != "random-37"]
SMALL = dict(batch=32, block=32, split=2, regs=0)


def _solve(graph, **params):
    return gpusp.solve(graph, "multisource_fast", None, warmup=0, **{**SMALL, **params})


def _hub_with_zero_cycle():
    """Hub 0 with 20 out-arcs (10 chunks of 2), a zero-weight 3-cycle, duplicates and a vertex nobody reaches."""
    edges = [(0, v, v % 7 + 1) for v in range(1, 21)] + [(3, 4, 0), (4, 5, 0), (5, 3, 0), (5, 21, 0),
                                                           (21, 0, 2), (2, 6, 1), (2, 6, 1), (6, 6, 0)]
    return _g(23, edges, "hub-zero-cycle")


@pytest.mark.parametrize("label,graph,source", CASES, ids=[c[0] for c in CASES])
def test_awkward_cases(label, graph, source):
    res = _solve(graph)
    assert_apsp_ok(graph, res)
    assert res.counters["batches"] == 1 and res.counters["batch"] == 32
    rounds = 1 if graph.m else 0  # a source without out-arcs is never listed
    assert res.counters["iterations"] >= rounds
    assert res.counters["tree_levels"] >= rounds or res.counters["tight_parents"] == 1  # one pass, no tree rounds


def test_hub_chunks_zero_cycle_unreachable():
    graph = _hub_with_zero_cycle()
    res = _solve(graph)
    assert_apsp_ok(graph, res)
    assert res.dist[1, 22] == graph.inf and res.parent[1, 22] == -1  # vertex 22 has no in-arcs
    assert res.dist[3, 5] == 0 and res.parent[3, 5] == 4  # along the zero cycle, not around it


def test_several_batches_and_words():
    """n = 66 with S = 64: two batches (the second partial, 2 sources), two 32-source words per vertex, two warps.
    Sparse (40 arcs, zero weights: tree rounds) so that the simulator runs few items and rounds."""
    graph = random_graph(66, 40, seed=11, wmin=0, wmax=30)
    res = _solve(graph, batch=64, block=64)
    assert_apsp_ok(graph, res)
    assert res.counters["batches"] == 2 and res.counters["launches"] == 1
    assert res.counters["iterations"] > 1 and res.counters["tree_levels"] > 1
    # every source-arc pair examined at least once per source that reaches its tail
    reached = (res.dist != graph.inf).sum(axis=0)
    assert res.counters["relaxations"] >= int((reached * np.diff(graph.indptr)).sum())


def test_host_result_and_repeated_runs(monkeypatch):
    """Rows staged per batch and copied to pinned host memory; run() twice resets its state."""
    monkeypatch.setattr(dense, "RESULT_ON_DEVICE", False)
    graph = random_graph(34, 40, seed=13, wmin=1, wmax=9)  # n > S = 32: two batches
    res = gpusp.solve(graph, "multisource_fast", None, warmup=1, trials=1, **SMALL)
    assert_apsp_ok(graph, res)
    assert res.counters["result_on_device"] == 0 and "host_copy_ms" in res.counters
    assert res.counters["launches"] == res.counters["batches"] == 2


def test_block_buffer_overflow_goes_to_the_global_list(monkeypatch):
    """A 3-entry block buffer: most claims of a round spill straight into the global list."""
    monkeypatch.setattr(multisource, "SBUF", 3)
    graph = _hub_with_zero_cycle()
    res = _solve(graph)
    assert_apsp_ok(graph, res)
    np.testing.assert_array_equal(res.dist, _solve(graph, split=128).dist)


def test_split_does_not_change_the_answer():
    graph = _hub_with_zero_cycle()
    a, b = _solve(graph, split=2), _solve(graph, split=128)
    np.testing.assert_array_equal(a.dist, b.dist)
    assert a.counters["items"] > b.counters["items"]  # the hub's row is 10 entries with split 2


def test_refuses_negative_weights_with_reweight_never():
    """Negative weights run on Johnson's reduced weights (test_common_johnson.py) unless reweight=never."""
    graph = sssp_cases(negative=True)[-3][1]
    with pytest.raises(SolverError, match="multisource_fast does not accept negative weights with reweight=never"):
        _solve(graph, reweight="never")


def test_auto_batch_and_chunks():
    assert auto_batch(1) == 32 and auto_batch(100) == 128 and auto_batch(1500) == 2048
    assert auto_batch(36_682) == 2048 and auto_batch(50_000) == 1024  # (4 + 8) x n x S <= 1 GiB
    assert auto_batch(50_000, itemsize=8) == 1024 and auto_batch(100_000, itemsize=8) == 512
    indptr = np.array([0, 0, 5, 6, 6 + 128 * 2 + 1], dtype=np.int32)
    ptr, vert, start = arc_chunks(indptr, 128)
    assert ptr.tolist() == [0, 0, 1, 2, 5] and vert.tolist() == [1, 2, 3, 3, 3]
    assert start.tolist() == [0, 5, 6, 6 + 128, 6 + 256, 6 + 257]
    assert registry.get("multisource_fast").resolve({})["batch"] == 0


def test_the_gate_compiles_every_unroll():
    """The kernel's record: both distance types, each at two unrolls, and every unroll the solver takes at least once
    (the gate leaves out the pairs that repeat a code path: multisource.GATE_UNROLLS)."""
    targets = gate.targets(multisource.__name__)
    assert {label for label, _, _ in targets} == {
        "_kernel[int32,unroll=1]", "_kernel[int32,unroll=2]", "_kernel[int64,unroll=4]", "_kernel[int64,unroll=8]"}
    choices = next(p.choices for p in registry.get("multisource_fast").params if p.name == "unroll")
    gated = sorted(u for unrolls in multisource.GATE_UNROLLS.values() for u in unrolls)
    assert gated == sorted(choices) == [1, 2, 4, 8]
    assert registry.get("multisource_fast").defaults()["unroll"] in multisource.GATE_UNROLLS["int32"]


def test_parents_tight_pass_and_levels_agree():
    """Weights >= 1: auto takes the one-pass tight parents (no tree rounds); levels grows the trees round by round."""
    graph = random_graph(20, 50, seed=5, wmin=1, wmax=20)
    auto, levels = _solve(graph), _solve(graph, parents="levels")
    assert_apsp_ok(graph, auto)
    assert_apsp_ok(graph, levels)
    np.testing.assert_array_equal(auto.dist, levels.dist)
    assert auto.counters["tight_parents"] == 1 and auto.counters["tree_levels"] == 0
    assert levels.counters["tight_parents"] == 0 and levels.counters["tree_levels"] > 0


def test_parents_tight_refuses_zero_weights():
    with pytest.raises(SolverError, match="needs every weight > 0"):
        _solve(_hub_with_zero_cycle(), parents="tight")
    assert _solve(_hub_with_zero_cycle()).counters["tight_parents"] == 0  # auto falls back to levels


@pytest.mark.parametrize("unroll", [1, 8])
def test_unroll_does_not_change_the_answer(unroll):
    graph = _hub_with_zero_cycle()
    res = _solve(graph, unroll=unroll, split=8)
    assert_apsp_ok(graph, res)
    np.testing.assert_array_equal(res.dist, _solve(graph).dist)


def test_warp_or_combines_every_lane():
    """The simulator's warp OR: lane i posts bit i for odd i < 31, each warp of a 64-thread block sees the same OR."""
    @cuda.jit
    def kernel(out):
        # every thread started before the first warp_or: the test suite's simulator starts a block's threads one at a
        # time until each pauses at a barrier, and warp_or's simulated barrier is not one it sees (each start would
        # wait its 0.2 s limit)
        cuda.syncthreads()
        lane = cuda.threadIdx.x % 32
        v = warp_or(np.int32(1 << lane) if lane % 2 and lane < 31 else np.int32(0))
        out[cuda.threadIdx.x] = warp_or(v | (cuda.threadIdx.x // 32))  # a second call reuses the other slots

    out = np.zeros(64, dtype=np.int64)
    kernel[1, 64](out)
    odd = sum(1 << i for i in range(1, 31, 2))
    assert out[:32].tolist() == [odd] * 32 and out[32:].tolist() == [odd | 1] * 32


def test_parameters_come_from_the_registry():
    """Every registry parameter is a keyword-only argument without a default (the registry holds the defaults)."""
    import inspect

    spec = registry.get("multisource_fast")
    args = list(inspect.signature(spec.load().__init__).parameters.values())[2:]
    assert [a.name for a in args] == [p.name for p in spec.params]
    assert all(a.kind is a.KEYWORD_ONLY and a.default is a.empty for a in args)
