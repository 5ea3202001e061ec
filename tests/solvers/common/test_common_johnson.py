"""Johnson's reweighting (gpusp.solvers.common.johnson) and the batched solvers that take negative weights by it
(registry negative_weights="johnson": multisource_sssp, multisource_fast, phast_gpu).

The potentials, reduced weights and the mapping back are checked on the host against SciPy over many random graphs;
the solvers run in the simulator on tiny graphs only.
"""

import dataclasses

import numpy as np
import pytest
from cases import _g, negative_cycle_graph, sssp_cases
from scipy.sparse.csgraph import bellman_ford

import gpusp
from gpusp.errors import NegativeCycleError, SolverError, WeightOverflowError
from gpusp.measure.harness import solve_many
from gpusp.measure.validate import check_rows
from gpusp.solvers import registry
from gpusp.solvers.common import johnson
from gpusp.solvers.common.spec import JOHNSON
from gpusp.solvers.scipy.reference import scipy_matrix, scipy_paths

BATCHED = {"multisource_sssp": dict(batch=32, block=32, split=2, regs=0), "phast_gpu": dict(block=32)}


def shifted_graph(n, m, seed, wmax=9, unreachable=0):
    """Random arcs (duplicates and self-loops among them) of weight base + p(u) - p(v) with base in 0..wmax and p in
    0..8: negative arcs, zero-weight cycles where base is 0 all round, never a negative cycle; the last
    ``unreachable`` vertices have no in-arcs from the others."""
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    keep = (dst < n - unreachable) | (src == dst)
    src, dst = src[keep], dst[keep]
    p = rng.integers(0, 9, n)
    w = rng.integers(0, wmax + 1, src.size) + p[src] - p[dst]
    return gpusp.Graph.from_edges(n, src, dst, w, name=f"shifted-{n}-{m}-{seed}")


def _reduced_rows(graph, r, sources):
    """SciPy Dijkstra on the reduced graph, mapped back by ``r``."""
    d, _ = scipy_paths(r.reduced, scipy_matrix(r.reduced), indices=sources)
    return r.restore(d, sources)


@pytest.mark.parametrize("seed", range(12))
def test_reduced_weights_are_nonnegative_and_map_back_to_scipy(seed):
    graph = shifted_graph(30, 120, seed, unreachable=3)
    assert graph.has_negative_weights
    r = johnson.reweighting(graph, "auto", "test")
    assert r.potentials.max() <= 0 and int(r.reduced.weights.min()) >= 0 and not r.reduced.has_negative_weights
    sources = np.arange(graph.n)
    want = bellman_ford(scipy_matrix(graph), indices=sources)
    got = _reduced_rows(graph, r, sources)
    assert got.dtype == graph.dtype
    np.testing.assert_array_equal(got == graph.inf, np.isinf(want))  # unreachable stays unreachable
    np.testing.assert_array_equal(got[np.isfinite(want)], want[np.isfinite(want)].astype(np.int64))


def test_nonnegative_graphs_are_left_alone_and_never_refuses():
    for _, graph, _ in sssp_cases():
        assert johnson.reweighting(graph, "auto", "test") is None
    with pytest.raises(SolverError, match="x does not accept negative weights with reweight=never"):
        johnson.reweighting(shifted_graph(8, 20, 1), "never", "x")


def test_awkward_negative_cases_one_vertex_and_self_loops():
    for _, graph, _ in sssp_cases(negative=True)[-3:]:
        r = johnson.reweighting(graph, "auto", "test")
        np.testing.assert_array_equal(_reduced_rows(graph, r, np.arange(graph.n)),
                                      scipy_paths(graph, scipy_matrix(graph))[0])
    # a positive self-loop and a negative arc: the loop keeps its weight (h(u) - h(u) = 0)
    r = johnson.reweighting(_g(2, [(0, 0, 4), (0, 1, -2), (1, 1, 0)], "loops"), "auto", "test")
    assert r.potentials.tolist() == [0, -2] and r.reduced.weights.tolist() == [4, 0, 0]


@pytest.mark.parametrize("edges,cycle", [
    ([(0, 0, -1)], (0,)),  # n = 1: a negative self-loop is a negative cycle
    ([(0, 1, 1), (1, 1, -2), (1, 2, 1)], (1,)),
    ([(0, 1, 1), (1, 2, 2), (2, 1, -3), (2, 3, 1)], (1, 2)),
    ([(0, 1, 5), (2, 3, 1), (3, 4, 0), (4, 2, -2), (4, 2, 7)], (2, 3, 4)),  # no source but 2..4 reaches it
])
def test_a_negative_cycle_is_named(edges, cycle):
    graph = _g(max(max(a, b) for a, b, _ in edges) + 1, edges, "cyc")
    with pytest.raises(NegativeCycleError) as info:
        johnson.reweighting(graph, "auto", "solver_x")
    assert info.value.cycle == cycle
    shown = " -> ".join(map(str, cycle + cycle[:1]))
    weight = sum(min(w for a, b, w in edges if (a, b) == arc) for arc in zip(cycle, cycle[1:] + cycle[:1]))
    assert f"solver_x: negative-weight cycle {shown} ({len(cycle)} vertices" in str(info.value)
    assert f"weight {weight})" in str(info.value)


def test_a_long_cycle_is_found_early_and_shown_in_part():
    """A 300-vertex cycle of weight -1 behind a chain: the parents close it long before round n, and the message
    lists its first vertices."""
    n = 400
    edges = [(i, i + 1, 1) for i in range(99)] + [(99 + i, 100 + i, 0) for i in range(299)] + [(398, 99, -1)]
    graph = _g(n, edges, "long")
    dist, parent = np.zeros(n, dtype=np.int64), np.full(n, -1, dtype=np.int64)
    rounds, on = johnson._virtual_source(graph.indptr, graph.indices, graph.weights.astype(np.int64),
                                         -graph.path_bound, dist, parent, np.ones(n, dtype=np.bool_),
                                         np.empty(n, dtype=np.int64))
    assert on >= 0 and rounds < n
    assert johnson.negative_cycle(graph, parent, on) == list(range(99, 399))
    with pytest.raises(NegativeCycleError, match=r"cycle 99 -> 100 -> .* -> 110 -> \.\.\. \(300 vertices"):
        johnson.reweighting(graph, "auto", "test")


def test_reduced_weights_widen_to_int64_or_are_refused():
    """Four arcs of weight 0 into a vertex of potential -A each become A: the reduced paths need int64 where the
    graph's fit int32; past int64 the reweighting is refused."""
    a = 2**28
    edges = [(0, 1, -a)] + [(x, 1, 0) for x in range(2, 6)]
    graph = _g(6, edges, "wide")
    r = johnson.reweighting(graph, "auto", "test")
    assert graph.dtype == np.int32 and r.reduced.dtype == np.int64
    assert r.reduced.weights.tolist() == [0, a, a, a, a]
    got = _reduced_rows(graph, r, np.arange(6))
    assert got.dtype == np.int32 and got[2].tolist() == [graph.inf, 0, 0, graph.inf, graph.inf, graph.inf]
    with pytest.raises(WeightOverflowError):
        johnson.reweighting(_g(6, [(0, 1, -2**59)] + edges[1:], "too-wide"), "auto", "test")


# --- the solvers that take negative weights by it ---------------------------------------------------------------------
def test_the_registry_and_the_listing_show_the_capability():
    names = {s.name for s in registry.SPECS if s.negative_weights == JOHNSON}
    assert names == {"multisource_sssp", "multisource_fast", "phast_gpu"}
    for name in names:
        spec = registry.get(name)
        assert spec.info()["negative_weights"] == JOHNSON and "reweight" in spec.info()["params"]
        assert " johnson " in spec.describe() and spec.takes_negative()
        assert not spec.takes_negative({"reweight": "never"})
        assert spec.why_not(10, 20, negative=True) is None
        assert spec.why_not(10, 20, negative=True, params={"reweight": "never"}) == \
            f"{name} does not accept negative weights with reweight=never"
    assert registry.get("dijkstra_cpu").why_not(10, 20, negative=True) == \
        "dijkstra_cpu does not accept negative weights"
    assert " negative " in registry.get("bellmanford_cpu").describe()


@pytest.mark.parametrize("name", BATCHED)
def test_batched_solvers_on_negative_weights_equal_scipy(name):
    graph = shifted_graph(14, 40, seed=7, unreachable=2)
    sources = [0, 5, 5, 13, 2]  # a duplicate, and an unreachable vertex as a source
    results = list(solve_many(graph, name, sources, trials=1, warmup=0, **BATCHED[name]))
    verdicts = check_rows(graph, sources, [r.dist for r in results], [r.parent for r in results], method="reference")
    assert all(v.ok for v in verdicts), [v.mismatches[:3] for v in verdicts if not v.ok]
    assert results[0].dist.dtype == graph.dtype and (results[0].dist == graph.inf).any()
    c = results[0].counters
    assert c["reweight_rounds"] >= 2 and 0 <= c["reweight_s"] <= c["preprocess_s"] and c["reweight_compile_s"] >= 0


def test_multisource_fast_apsp_on_negative_weights_and_reduced_int64():
    for graph in (sssp_cases(negative=True)[-2][1], _g(6, [(0, 1, -2**28)] + [(x, 1, 0) for x in range(2, 6)], "w")):
        (result,) = solve_many(graph, "multisource_fast", [None], trials=1, warmup=0, batch=32, block=32, split=2,
                               regs=0)
        want, _ = scipy_paths(graph, scipy_matrix(graph))
        np.testing.assert_array_equal(result.dist, want)


def test_a_negative_cycle_and_reweight_never_are_refused_before_the_trees():
    with pytest.raises(NegativeCycleError, match="multisource_sssp: negative-weight cycle 1 -> 2 -> 1"):
        list(solve_many(negative_cycle_graph(), "multisource_sssp", [0], **BATCHED["multisource_sssp"]))
    # 0 -> 1 reaches no cycle: Johnson refuses the one among 2 and 3 all the same (its virtual source reaches it)
    apart = _g(4, [(0, 1, -1), (2, 3, -1), (3, 2, 0)], "apart")
    with pytest.raises(NegativeCycleError, match="phast_gpu: negative-weight cycle 2 -> 3 -> 2"):
        list(solve_many(apart, "phast_gpu", [0], block=32))
    with pytest.raises(SolverError, match="phast_gpu does not accept negative weights with reweight=never"):
        list(solve_many(sssp_cases(negative=True)[-1][1], "phast_gpu", [0], reweight="never"))


def test_mapping_back_refuses_what_the_dtype_cannot_hold():
    """Distances are mapped back in int64 and stored in the graph's dtype only where they fit (a wrong potential
    cannot make them wrap)."""
    graph = shifted_graph(8, 20, 3)
    r = johnson.reweighting(graph, "auto", "test")
    rows = _reduced_rows(graph, r, [0, 1])
    assert rows.dtype == np.int32
    broken = dataclasses.replace(r, potentials=r.potentials + np.arange(8) * 2**40)
    with pytest.raises(SolverError, match="mapped back past its int32 range"):
        broken.restore(scipy_paths(r.reduced, scipy_matrix(r.reduced), indices=[0, 1])[0], [0, 1])
