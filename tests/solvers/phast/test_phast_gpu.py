"""phast_gpu (PHAST: contraction hierarchy, upward searches, batched downward sweeps) in the simulator.

The simulator runs a cooperative grid of one block, so the sweep's logic is checked here and its timing on a GPU. The
hierarchy itself is checked on the host in test_phast_contraction.py.
"""

import numpy as np
import pytest
from cases import _g, pairwise, random_graph, sssp_cases

import gpusp
from gpusp.data.generate import generate
from gpusp.data.graph import Graph
from gpusp.errors import SolverError
from gpusp.measure.harness import solve_many
from gpusp.measure.validate import check_rows
from gpusp.solvers import registry
from gpusp.solvers.common import dense
from gpusp.solvers.common.base import counters_of

CASES = sssp_cases()
NEGATIVE = sssp_cases(negative=True)
SPEC = registry.get("phast_gpu")


def _run(graph, sources, **params):
    """Build, upload, run once on ``sources``; (dist rows, parent rows, counters)."""
    solver = SPEC.build(graph, **{"block": 32, **params})
    solver.upload()
    counters = counters_of(solver.run(np.array(sources, dtype=np.int64)))
    dist, parent = solver.download()
    return dist, parent, counters


def _assert_rows_ok(graph, sources, dist, parent):
    assert dist.shape == parent.shape == (len(sources), graph.n)
    assert dist.dtype == graph.dtype and parent.dtype == np.int32
    for s, verdict in zip(sources, check_rows(graph, sources, dist, parent)):
        assert verdict.ok, f"{graph.name} from {s}: {verdict.checks} {verdict.mismatches}"


def _chain(n):
    return _g(n, [(i, i + 1, 1 + i % 3) for i in range(n - 1)], f"chain-{n}")


def _star(spokes):
    """A hub with arcs to and from every spoke, and a ring among the spokes."""
    edges = [(0, i, i % 5 + 1) for i in range(1, spokes + 1)] + [(i, 0, 2) for i in range(1, spokes + 1)]
    edges += [(i, i % spokes + 1, 7) for i in range(1, spokes + 1)]
    return _g(spokes + 1, edges, f"star-{spokes}")


@pytest.mark.parametrize("label,graph,source", CASES, ids=[c[0] for c in CASES])
def test_phast_single_source_cases(label, graph, source):
    dist, parent, c = _run(graph, [source])
    _assert_rows_ok(graph, [source], dist, parent)
    assert c["batch"] == 1 and c["batches"] == 1 and c["iterations"] == c["levels"] - 1
    assert c["zero_weight_parents"] == int(bool(graph.m) and int(graph.weights.min()) == 0)


SEVERAL = [pytest.param(30 + i, c["wmin"], c["parents"], id=f"w{c['wmin']}-{c['parents']}")
           for i, c in enumerate(pairwise(wmin=[1, 0], parents=["auto", "rounds"]))]


@pytest.mark.parametrize("seed,wmin,parents", SEVERAL)
def test_phast_random_graphs_several_batches(seed, wmin, parents):
    """Positive weights (auto: the tight pass) and zero weights (auto: rounds), each also with rounds asked for."""
    graph = random_graph(45, 160, seed=seed, wmin=wmin, wmax=12)
    sources = list(range(0, 45, 2))  # 23 sources: 3 batches of 8, the last partial
    dist, parent, c = _run(graph, sources, batch=8, parents=parents)
    _assert_rows_ok(graph, sources, dist, parent)
    assert (c["batches"], c["batch"]) == (3, 8) and c["iterations"] == 3 * (c["levels"] - 1)


def test_phast_zero_weight_cycles_need_rounds():
    graph = _g(7, [(0, 1, 0), (1, 2, 0), (2, 0, 0), (2, 3, 0), (3, 4, 0), (4, 2, 0), (4, 5, 3), (5, 6, 0),
                   (6, 5, 0)], "zero-cycles")
    dist, parent, c = _run(graph, [0, 3, 5, 6])
    _assert_rows_ok(graph, [0, 3, 5, 6], dist, parent)
    assert c["zero_weight_parents"] == 1 and c["zero_rounds"] >= 2
    with pytest.raises(SolverError, match="parents=tight needs every weight > 0"):
        SPEC.build(graph, parents="tight")


def test_phast_long_chain_and_hub():
    chain = _chain(70)
    dist, parent, c = _run(chain, [0, 35, 69], batch=4)
    _assert_rows_ok(chain, [0, 35, 69], dist, parent)
    assert c["levels"] >= 5  # a chain contracts into a deep hierarchy
    star = _star(40)
    dist, parent, _ = _run(star, [0, 1, 17, 40], batch=2)
    _assert_rows_ok(star, [0, 1, 17, 40], dist, parent)


def test_phast_wide_batch_through_tiles_and_duplicates():
    """S = 64 >= 32 writes rows through the shared-memory tiles; duplicated sources get identical rows."""
    graph = random_graph(37, 120, seed=5, wmin=0, wmax=6)
    sources = [3, 3, 0, 36, 3, 20]
    dist, parent, c = _run(graph, sources, batch=64)
    _assert_rows_ok(graph, sources, dist, parent)
    assert c["batch"] == 64 and np.array_equal(dist[0], dist[4]) and np.array_equal(parent[1], parent[4])


@pytest.mark.parametrize("fuse", [0, 8, 10**6])
def test_phast_fused_top_levels(fuse):
    graph = random_graph(40, 150, seed=12, wmin=1, wmax=9)
    dist, parent, c = _run(graph, [1, 2, 3], batch=4, fuse=fuse)
    _assert_rows_ok(graph, [1, 2, 3], dist, parent)
    assert c["block_levels"] + c["grid_levels"] == c["levels"] - 1
    if fuse == 0:
        assert c["block_levels"] == 0
    if fuse == 10**6:
        assert c["grid_levels"] == 0 and c["block_levels"] == c["levels"] - 1


def test_phast_int64_weights_and_repeated_runs():
    graph = random_graph(30, 100, seed=8, wmin=2**28, wmax=2**29)
    assert graph.dtype == np.int64
    solver = SPEC.build(graph, block=32, batch=4)
    solver.upload()
    sources = np.array([0, 29, 7, 7, 15], dtype=np.int64)
    first = counters_of(solver.run(sources))
    d1, p1 = solver.download()
    second = counters_of(solver.run(sources))
    d2, p2 = solver.download()
    _assert_rows_ok(graph, sources.tolist(), d2, p2)
    assert np.array_equal(d1, d2) and np.array_equal(p1, p2) and first == {**second, "upward_ms": first["upward_ms"]}


def test_phast_result_staged_on_the_host(monkeypatch):
    monkeypatch.setattr(dense, "RESULT_ON_DEVICE", False)
    graph = random_graph(33, 120, seed=6, wmin=0, wmax=9)
    sources = list(range(0, 33, 3))
    dist, parent, c = _run(graph, sources, batch=4)
    _assert_rows_ok(graph, sources, dist, parent)
    assert c["result_on_device"] == 0 and c["launches"] == c["batches"] == 3


def test_phast_core_left_to_the_upward_search():
    graph = random_graph(40, 300, seed=14, wmin=1, wmax=20)
    dist, parent, c = _run(graph, [0, 5, 39], core_degree=3)
    assert c["core"] > 0
    _assert_rows_ok(graph, [0, 5, 39], dist, parent)


# --- core_search=device: the core searched by deltastep_gpu from each query's entries ---------------------------------
def _awkward_grid(side: int, seed: int, negative: bool = False):
    """A side x side grid with weights 0..5 (zero-weight arcs and cycles; with ``negative`` the rightward arcs -1..5
    and the others 1..5, so no cycle is negative), duplicated arcs, self-loops, and a ring of 5 vertices with arcs
    into the grid that no arc enters (unreachable from the grid)."""
    rng = np.random.default_rng(seed)
    n, edges = side * side, []
    for v in range(n):
        r, c = divmod(v, side)
        for dr, dc in ((0, 1), (1, 0), (0, -1), (-1, 0)):
            if 0 <= r + dr < side and 0 <= c + dc < side:
                low = (-1 if dc == 1 else 1) if negative else 0
                edges.append((v, (r + dr) * side + c + dc, int(rng.integers(low, 6))))
    for i in range(8):
        a, b, w = edges[int(rng.integers(len(edges)))]
        edges += [(a, b, w + i % 3), (int(rng.integers(n)),) * 2 + (i % 4,)]  # a duplicate, a self-loop
    edges += [(n + i, n + (i + 1) % 5, 1 + i) for i in range(5)] + [(n + i, i, 2) for i in range(5)]
    return _g(n + 5, edges, f"awkward-grid-{side}{'-negative' if negative else ''}")


CORE_CASES = [("grid-9x7", generate("grid", rows=9, cols=7, wmin=1, wmax=20, seed=3), 5),
              ("awkward", _awkward_grid(9, 4), 4), ("awkward-negative", _awkward_grid(9, 4, negative=True), 4),
              ("random-120", random_graph(120, 600, seed=5, wmin=1, wmax=20), 7)]


@pytest.mark.parametrize("label,graph,core_degree", CORE_CASES, ids=[c[0] for c in CORE_CASES])
def test_phast_core_searched_on_the_device_gives_the_host_search_rows(label, graph, core_degree):
    """Graphs that keep a core beside contracted vertices (the awkward grid's zero weights and zero-weight cycles,
    duplicates, self-loops, unreachable vertices, negative weights through Johnson's reweighting) give the rows of the
    upward Dijkstra crossing the core on the host, from a source outside the grid's reach too."""
    sources = [0, graph.n // 2, graph.n - 1, graph.n - 3]
    dist, parent, c = _run(graph, sources, core_degree=core_degree, core_search="device")
    assert 0 < c["core"] < graph.n and c["core_search"] == "device"
    _assert_rows_ok(graph, sources, dist, parent)
    host, host_parent, h = _run(graph, sources, core_degree=core_degree)
    assert np.array_equal(dist, host) and c["core"] == h["core"] and "core_search" not in h
    assert c["batch"] == 1 and c["launches"] == 4 * len(sources) and c["core_entries"] >= 1
    assert c["core_rounds"] >= len(sources)  # counted on the device, query after query
    assert c["settled"] < h["settled"]  # the upward searches stop at the core


def test_phast_core_search_without_a_core_is_the_host_path():
    """n = 1, a few vertices, a fully contracted graph: no core is left, nothing is searched on the device."""
    for label, graph, source in sssp_cases()[:6]:
        dist, parent, c = _run(graph, [source], core_degree=0, core_search="device")
        _assert_rows_ok(graph, [source], dist, parent)
        assert c["core"] == 0 and "core_search" not in c, label


def test_phast_core_on_the_device_rewrites_its_entries_each_query():
    """Repeated runs over sources whose upward searches reach the core at different numbers of vertices (the virtual
    source's range shrinks and grows), through the harness as the workflow runs it, staged rows included."""
    graph = generate("grid", rows=12, cols=12, wmin=1, wmax=20, seed=0)
    solver = SPEC.build(graph, block=32, core_degree=5, core_search="device")
    solver.upload()
    assert solver.h.core > 0
    core = solver.core.graph  # its landmarks are the core's own, not the virtual source's self-loops
    alone = Graph(core.n - 1, core.indptr[:-1], core.indices[:solver.core.arcs], core.weights[:solver.core.arcs])
    assert core.hop_landmarks()[0] == alone.hop_landmarks()[0] > 0
    entries = []
    for sources in ([0, 143, 70], [12], [5, 5, 100, 131]):
        c = counters_of(solver.run(np.array(sources, dtype=np.int64)))
        dist, parent = solver.download()
        _assert_rows_ok(graph, sources, dist, parent)
        entries.append(c["core_entries"] / len(sources))
    assert len(set(entries)) > 1
    results = list(solve_many(graph, "phast_gpu", [3, 44], trials=2, warmup=1, block=32, core_degree=5,
                              core_search="device"))
    _assert_rows_ok(graph, [3, 44], np.array([r.dist for r in results]), np.array([r.parent for r in results]))


def test_phast_core_on_the_device_staged_rows_and_int64(monkeypatch):
    monkeypatch.setattr(dense, "RESULT_ON_DEVICE", False)
    graph = random_graph(40, 260, seed=8, wmin=2**28, wmax=2**29)
    assert graph.dtype == np.int64
    dist, parent, c = _run(graph, [0, 17, 39], core_degree=3, core_search="device")
    _assert_rows_ok(graph, [0, 17, 39], dist, parent)
    assert c["core"] > 0 and c["result_on_device"] == 0


def test_phast_core_on_the_device_refuses_batches_and_sweeps():
    graph = random_graph(40, 300, seed=14, wmin=1, wmax=20)
    with pytest.raises(SolverError, match="batch must be 0 or 1"):
        SPEC.build(graph, core_search="device", batch=4, core_degree=3)
    solver = SPEC.build(graph, core_search="device", core_degree=3)
    with pytest.raises(SolverError, match="every-tree sweep searches the core on the host"):
        solver.sweep_batch(8)


def test_phast_refuses_negative_weights_with_reweight_never():
    """Negative weights run on Johnson's reduced weights (test_common_johnson.py) unless reweight=never."""
    with pytest.raises(SolverError, match="phast_gpu does not accept negative weights with reweight=never"):
        SPEC.build(NEGATIVE[-1][1], reweight="never")


def test_phast_counters_report_the_hierarchy():
    graph = random_graph(30, 90, seed=2, wmin=1, wmax=9)
    _, _, c = _run(graph, [4])
    for key in ("iterations", "preprocess_s", "preprocess_bytes", "shortcuts", "levels", "batches", "batch",
                "settled", "barriers"):
        assert key in c
    assert c["preprocess_bytes"] > 0 and c["settled"] >= 1 and c["preprocess_s"] >= 0


def test_phast_through_the_harness():
    graph = random_graph(35, 130, seed=21, wmin=0, wmax=9)
    sources = [2, 9, 9, 34]
    results = list(solve_many(graph, "phast_gpu", sources, trials=2, warmup=1, block=32, batch=2))
    assert [r.source for r in results] == sources
    _assert_rows_ok(graph, sources, np.array([r.dist for r in results]), np.array([r.parent for r in results]))
    assert results[0].counters["batches"] == 2
    single = gpusp.solve(graph, "phast_gpu", 9, warmup=0, block=32)
    assert np.array_equal(single.dist, results[1].dist)


def test_upward_searches_split_over_threads_give_the_same_rows():
    graph = random_graph(45, 160, seed=21, wmin=0, wmax=12)
    sources = [0, 7, 7, 44, 13, 2, 30]
    one = _run(graph, sources, threads=1)
    three = _run(graph, sources, threads=3)
    assert np.array_equal(one[0], three[0]) and np.array_equal(one[1], three[1])
    assert one[2]["settled"] == three[2]["settled"]
    _assert_rows_ok(graph, sources, *three[:2])
