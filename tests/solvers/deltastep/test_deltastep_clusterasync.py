"""deltastep_clusterasync (near-far phases without rounds in one thread-block cluster) in the simulator.

The simulator runs the cluster's ranks as threads of one block (gpusp.solvers.deltastep.dsmem), each polling its share of its
rank's bitmap while the others expand, so these tests exercise the marks, the attempt / settled counts that end a
phase, the splits and jumps over empty buckets, and ranks of one vertex or many; the inline PTX is assembled for
sm_90 in test_deltastep_cluster.py, and the device runs check the hardware (benchmarks/sssp-clusterasync-h200.md).
"""

import numpy as np
import pytest
from cases import _g, assert_sssp_ok, random_graph, solver, sssp_cases, weighted_grid

import gpusp
from gpusp.errors import SolverError
from gpusp.measure.harness import solve_many
from gpusp.solvers import registry
from gpusp.solvers.deltastep import spec as rules

# polling kernels in the simulator: a launch that stops making progress fails in minutes, not at the suite's 900 s
pytestmark = pytest.mark.timeout(300)

CASES = sssp_cases()


_solve = solver("deltastep_clusterasync", cluster=4)


@pytest.mark.parametrize("label,graph,source", CASES, ids=[c[0] for c in CASES])
def test_matches_reference(label, graph, source):
    res = _solve(graph, source)
    assert_sssp_ok(graph, source, res)
    reached = int((res.dist != res.inf).sum())
    assert res.counters["expansions"] >= reached and res.counters["cluster"] == 4


@pytest.mark.parametrize("cluster,delta,stripe", [(1, 1, 64), (2, 10**6, 1), (16, 3, 2), (8, 0, 4), (4, 2, 8)])
def test_clusters_deltas_and_stripes(cluster, delta, stripe):
    """Ranks that own one vertex or many; Dijkstra-like buckets with jumps over empty ones, one bucket for all
    (label-correcting throughout), the default width; 37 vertices are not a multiple of any cluster size but 1."""
    graph = random_graph(37, 160, seed=8, wmin=0, wmax=12)
    res = _solve(graph, 4, cluster=cluster, delta=delta, stripe=stripe)
    assert_sssp_ok(graph, 4, res)
    assert res.counters["buckets"] == res.counters["iterations"] - 1


def test_threads_poll_several_word_pairs():
    """600 vertices in one rank: a bitmap of 32 words over the simulator's few threads, so each thread takes two words
    at a time, several pairs in turn, and expands the finds of both words in one loop."""
    graph = random_graph(600, 2400, seed=6, wmin=0, wmax=40)
    for delta in (0, 7):
        res = _solve(graph, 11, cluster=1, delta=delta)
        assert_sssp_ok(graph, 11, res)


def test_delta_one_expands_each_vertex_once():
    """Weights >= 1 and delta = 1: a phase holds one distance and every arc leaves it, so each reached vertex is
    expanded exactly once and every arc of it examined once; a lost mark, a second expansion or a phase ended
    early changes a count."""
    graph = random_graph(60, 240, seed=11, wmin=1, wmax=9)
    res = _solve(graph, 0, delta=1)
    assert_sssp_ok(graph, 0, res)
    reached = res.dist != res.inf
    assert res.counters["expansions"] == int(reached.sum())
    assert res.counters["relaxations"] == int(np.diff(graph.indptr)[reached].sum())
    assert res.counters["buckets"] >= 1


def test_chain_hub_and_long_arcs():
    """A chain crossing every rank (each vertex expanded once, in one phase), a hub whose 30 arcs land on every rank
    at once, a vertex of more out-arcs than one step takes (four) with duplicates among them, and one of 300."""
    chain = _g(40, [(i, i + 1, 1 + i % 3) for i in range(39)], "chain")
    res = _solve(chain, 0, delta=10**6)
    assert_sssp_ok(chain, 0, res)
    assert res.counters["expansions"] == 40 and res.counters["iterations"] == 1
    hub = _g(31, [(0, i, i % 5) for i in range(1, 31)] + [(i, i + 1, 2) for i in range(1, 30)], "hub")
    assert_sssp_ok(hub, 0, _solve(hub, 0))
    fan = _g(9, [(0, i % 8 + 1, 10 - i % 8) for i in range(11)] + [(i, i + 1, 1) for i in range(1, 8)], "fan")
    assert_sssp_ok(fan, 0, _solve(fan, 0, cluster=2))
    # out-degree 300 does not fit the packed arc range's byte: the escape reads the offsets
    star = _g(301, [(0, i, 1 + i % 7) for i in range(1, 301)] + [(i, i % 300 + 1, 1) for i in range(1, 301)], "star")
    res = _solve(star, 0, stripe=16)
    assert_sssp_ok(star, 0, res)
    assert res.counters["relaxations"] >= 600


def test_grid_relabels_inside_a_phase():
    """A weighted 12 x 12 grid in one bucket: many vertices are lowered again after their first expansion, so
    phases end only when the counts balance after every re-expansion."""
    side = 12
    grid = weighted_grid(side)
    res = _solve(grid, 0, delta=10**6, cluster=8)
    assert_sssp_ok(grid, 0, res)
    assert res.counters["expansions"] >= side * side


def test_several_sources_reuse_the_solver():
    graph = random_graph(29, 90, seed=3)
    for r in solve_many(graph, "deltastep_clusterasync", [0, 7, 28], warmup=1, trials=2, cluster=4):
        assert_sssp_ok(graph, r.source, r)


def test_refuses_int64_distances():
    graph = _g(3, [(0, 1, 2**29), (1, 2, 2**29)], "heavy")
    with pytest.raises(SolverError, match="int32 distances"):
        _solve(graph, 0)


def test_shared_memory_bound_names_the_limit():
    limit = rules.clusterasync_max_n(1)
    graph = gpusp.Graph.from_edges(limit + 1, np.array([0]), np.array([1]), np.array([1]), name="wide")
    with pytest.raises(SolverError, match=f"n <= {limit}"):
        _solve(graph, 0, cluster=1)
    spec = registry.get("deltastep_clusterasync")
    assert spec.max_n == rules.clusterasync_max_n(16) and "n <=" in spec.why_not(spec.max_n + 1, 0)
    assert spec.why_not(321_270, 800_172) is None  # USA-road-d.BAY fits a cluster of 16
    # the planner's view, under the parameters a config gives: the same reasons before any job runs
    assert spec.why_not(limit, 0, params={"cluster": 1}) is None
    assert f"n <= {limit}" in spec.why_not(limit + 1, 0, params={"cluster": 1})
    assert "int32 distances" in spec.why_not(100, 200, itemsize=8)
