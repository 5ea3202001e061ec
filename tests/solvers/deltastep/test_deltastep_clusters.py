"""deltastep_clusters (clusterasync's clusters over parts of the graph, global-memory inboxes between clusters) in
the simulator.

The simulator runs every block of every cluster as threads of one block (gpusp.solvers.deltastep.clusters), so these
tests exercise the three kinds of arc (inside a block, to another block of the cluster, to another cluster), the
managers' grants and published states that end a phase, the kernel's own grid barrier, the splits, and the host's
layout (parts, stripes, reverse Cuthill-McKee); the kernel compiles for sm_90 in the compile gate, and the device runs
check the hardware.
"""

import numpy as np
import pytest
from cases import _g, assert_sssp_ok, random_graph, solver, sssp_cases, weighted_grid

import gpusp
from gpusp.errors import SolverError
from gpusp.measure.harness import solve_many
from gpusp.solvers import registry
from gpusp.solvers.deltastep import spec as rules
from gpusp.solvers.deltastep.clusters import cluster_ids

# polling kernels in the simulator: a launch that stops making progress fails in minutes, not at the suite's 900 s
pytestmark = pytest.mark.timeout(300)

CASES = sssp_cases()


_solve = solver("deltastep_clusters", clusters=2, cluster=2, stripe=2, order="ids", block=128)


@pytest.mark.parametrize("label,graph,source", CASES, ids=[c[0] for c in CASES])
def test_matches_reference(label, graph, source):
    res = _solve(graph, source)
    assert_sssp_ok(graph, source, res)
    c = res.counters
    assert c["expansions"] >= int((res.dist != res.inf).sum()) and c["clusters"] == 2 and c["cluster"] == 2
    assert c["pushes"] <= c["cross_arcs"] <= c["relaxations"]


def test_bitmap_of_more_words_than_polling_threads():
    """Blocks of 100 vertices: a bitmap of 4 words dealt over a block's polling threads (all but its last warp: one
    in the simulator), two pairs of words; every word is polled, every distance exact."""
    graph = random_graph(400, 1200, seed=6, wmin=1, wmax=20)
    res = _solve(graph, 0)
    assert_sssp_ok(graph, 0, res)
    assert res.counters["vertices_per_block"] == 100 and res.counters["pushes"] > 0


def test_chain_crosses_every_cluster():
    """A chain of 37 ids (not a multiple of the part) through three clusters of two blocks in one bucket: each vertex
    expanded once, the arcs between blocks of a cluster shared-memory hops, and exactly the two arcs between parts
    pushes, each taken and expanded by the next cluster before the phase may end; then back, from the last part."""
    chain = _g(37, [(i, i + 1, 1 + i % 3) for i in range(36)], "chain")
    res = _solve(chain, 0, clusters=3, delta=10**6)
    assert_sssp_ok(chain, 0, res)
    c = res.counters
    assert c["expansions"] == 37 and c["iterations"] == 1 and c["cross_arcs"] == c["pushes"] == 2
    back = _g(37, [(i + 1, i, 2) for i in range(36)], "back")
    assert_sssp_ok(back, 36, _solve(back, 36, clusters=3, delta=3))


@pytest.mark.parametrize("clusters,cluster,stripe,delta", [(1, 4, 1, 2), (4, 1, 1, 0), (3, 2, 4, 1)])
def test_shapes_and_deltas(clusters, cluster, stripe, delta):
    """One cluster (no inbox used), clusters of one block (pieces' case), stripes; Dijkstra-like buckets with jumps
    over empty ones and the default width."""
    graph = random_graph(37, 160, seed=8, wmin=0, wmax=12)
    res = _solve(graph, 4, clusters=clusters, cluster=cluster, stripe=stripe, delta=delta)
    assert_sssp_ok(graph, 4, res)
    c = res.counters
    assert c["buckets"] == c["iterations"] - 1
    if clusters == 1:
        assert c["cross_arcs"] == c["pushes"] == 0


def test_parts_without_arcs_between():
    """Two parts of 20, each two cycles of its own: nothing crosses a cluster, the other part stays unreached and its
    quiet state ends each phase."""
    edges = [(p * 10 + i, p * 10 + (i + 1) % 10, 1 + i % 4) for p in range(4) for i in range(10)]
    graph = _g(40, edges, "islands")
    res = _solve(graph, 13, delta=2)
    assert_sssp_ok(graph, 13, res)
    assert res.counters["cross_arcs"] == res.counters["pushes"] == 0
    assert (res.dist[10:20] != res.inf).all() and (res.dist[20:] == res.inf).all()


def test_hub_and_duplicates():
    """A hub whose arcs land in every block of both clusters at once, and duplicate arcs that lower the same remote
    word twice (queued once)."""
    hub = _g(31, [(0, i, i % 5) for i in range(1, 31)] + [(i, i + 1, 2) for i in range(1, 30)], "hub")
    assert_sssp_ok(hub, 0, _solve(hub, 0))
    dup = _g(12, [(0, 11, 9), (0, 11, 5), (0, 11, 7), (0, 6, 3), (6, 11, 1), (11, 1, 1)], "dup")
    res = _solve(dup, 0, delta=10**6)
    assert_sssp_ok(dup, 0, res)
    assert res.counters["pushes"] < res.counters["cross_arcs"]


def test_delta_one_expands_each_vertex_once():
    """Weights >= 1 and delta = 1: each reached vertex expanded exactly once and each of its arcs examined once; a
    lost push or grant, a second expansion or a phase ended early changes a count."""
    graph = random_graph(40, 160, seed=11, wmin=1, wmax=9)
    res = _solve(graph, 0, delta=1)
    assert_sssp_ok(graph, 0, res)
    reached = res.dist != res.inf
    assert res.counters["expansions"] == int(reached.sum())
    assert res.counters["relaxations"] == int(np.diff(graph.indptr)[reached].sum())


def test_grid_relabels_across_clusters():
    """A weighted 10 x 10 grid in one bucket over three clusters of two blocks: vertices are lowered again after their
    first expansion, from their block, their cluster and through the inboxes, so phases end only when every
    re-expansion is settled; 100 ids over 3 parts leave padding."""
    side = 10
    grid = weighted_grid(side)
    res = _solve(grid, 0, clusters=3, delta=10**6)
    assert_sssp_ok(grid, 0, res)
    assert res.counters["expansions"] >= side * side and res.counters["pushes"] >= 2


def test_more_clusters_than_vertices():
    graph = _g(3, [(0, 2, 4), (2, 1, 1)], "tiny")
    res = _solve(graph, 2, clusters=4)
    assert_sssp_ok(graph, 2, res)
    assert res.counters["clusters"] == 4 and res.counters["pushes"] == res.counters["cross_arcs"] == 1  # 2 -> 1


@pytest.mark.parametrize("label,graph,source", [c for c in CASES if c[0] in ("zero-cycle", "random-37")],
                         ids=lambda c: c if isinstance(c, str) else "")
def test_rcm_answers_in_the_given_ids(label, graph, source):
    res = _solve(graph, source, order="rcm")
    assert_sssp_ok(graph, source, res)
    assert res.dist.shape == (graph.n,) and res.counters["order"] == "rcm"


def test_rcm_order_and_several_sources():
    """order auto on a random graph (its id runs cut most arcs) takes reverse Cuthill-McKee; answers come back in the
    given ids, from several sources through one solver."""
    graph = random_graph(29, 90, seed=3)
    for r in solve_many(graph, "deltastep_clusters", [0, 7, 28], warmup=1, trials=1, clusters=2, cluster=2,
                        stripe=1, order="auto", block=128):
        assert_sssp_ok(graph, r.source, r)
        assert r.counters["order"] == "rcm"


def test_layout_deals_parts_then_stripes():
    """37 positions in 3 parts of 13, each over 2 blocks in stripes of 2: every vertex a distinct id in its block's
    run, part p in blocks 2p and 2p + 1."""
    chunk = rules.clusters_words(37, 3, 2, 2)[0]
    new = cluster_ids(np.arange(37), 3, 2, 2, chunk)
    assert chunk == 8 and np.unique(new).size == 37 and new.max() < 6 * chunk
    assert list(new[:6]) == [0, 1, 8, 9, 2, 3] and list(new[13:15]) == [16, 17]
    assert list(new // chunk // 2) == [v // 13 for v in range(37)]


def test_refusals_name_the_limit():
    graph = _g(3, [(0, 1, 2**29), (1, 2, 2**29)], "heavy")
    with pytest.raises(SolverError, match="int32 distances"):
        _solve(graph, 0)
    limit = rules.clusters_max_n(1, 1, 1)
    assert 4 * rules.clusters_words(limit, 1, 1, 1)[2] <= rules.CLUSTER_SHARED_BYTES
    wide = gpusp.Graph.from_edges(limit + 1, np.array([0]), np.array([1]), np.array([1]), name="wide")
    with pytest.raises(SolverError, match=f"n <= {limit}"):
        _solve(wide, 0, clusters=1, cluster=1, stripe=1)
    spec = registry.get("deltastep_clusters")
    assert spec.max_n == rules.clusters_max_n() > 3_100_000
    assert spec.why_not(1_048_576, 4_190_208) is None  # the 1M grid: 4 clusters of 16 (3 would hold it)
    assert rules.clusters_count(1_048_576, 0, 16, 256) == 4 and rules.clusters_count(264_346, 0, 16, 256) == 2
    assert rules.clusters_count(3_000_000, 0, 16, 256) == 7 and rules.clusters_count(10, 0, 2, 1) == 1
    assert f"n <= {rules.clusters_max_n()}" in spec.why_not(rules.clusters_max_n() + 1, 0)
    assert "int32 distances" in spec.why_not(100, 200, itemsize=8)
