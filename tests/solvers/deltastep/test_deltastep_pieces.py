"""deltastep_pieces (clusterasync's phases over pieces of consecutive ids, global-memory inboxes between them) in the
simulator.

The simulator runs the grid's blocks as threads of one block (gpusp.solvers.deltastep.pieces), each piece polling its
bitmap and inbox while the others expand and push, so these tests exercise the pushes and their deduplication, the
grants and takes of the inboxes, the published states that end a phase, the splits, and pieces with no vertex or no
arc to another; the kernel compiles for sm_90 in the compile gate, and the device runs check the hardware.
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


_solve = solver("deltastep_pieces", grid=3, block=128)


@pytest.mark.parametrize("label,graph,source", CASES, ids=[c[0] for c in CASES])
def test_matches_reference(label, graph, source):
    res = _solve(graph, source)
    assert_sssp_ok(graph, source, res)
    c = res.counters
    assert c["expansions"] >= int((res.dist != res.inf).sum()) and c["grid"] == 3
    assert c["pushes"] <= c["cross_arcs"] <= c["relaxations"]


@pytest.mark.parametrize("grid,delta", [(1, 1), (2, 10**6), (5, 3), (4, 0), (7, 2)])
def test_grids_and_deltas(grid, delta):
    """One piece (no inbox used) or many; Dijkstra-like buckets with jumps over empty ones, one bucket for all
    (label-correcting throughout), the default width; 37 vertices are not a multiple of any grid but 1."""
    graph = random_graph(37, 160, seed=8, wmin=0, wmax=12)
    res = _solve(graph, 4, grid=grid, delta=delta)
    assert_sssp_ok(graph, 4, res)
    c = res.counters
    assert c["buckets"] == c["iterations"] - 1 and c["vertices_per_piece"] == -(-37 // grid)
    if grid == 1:
        assert c["cross_arcs"] == c["pushes"] == 0


def test_pieces_without_arcs_between():
    """Four pieces of ten vertices, each a cycle of its own: nothing crosses, the other pieces stay unreached and
    their quiet states end each phase."""
    edges = [(p * 10 + i, p * 10 + (i + 1) % 10, 1 + i % 4) for p in range(4) for i in range(10)]
    graph = _g(40, edges, "islands")
    res = _solve(graph, 13, grid=4, delta=2)
    assert_sssp_ok(graph, 13, res)
    assert res.counters["cross_arcs"] == res.counters["pushes"] == 0
    assert (res.dist[10:20] != res.inf).all() and (res.dist[:10] == res.inf).all() and (res.dist[20:] == res.inf).all()


def test_bitmap_of_more_words_than_polling_threads():
    """Pieces of 240 vertices: a bitmap of 8 words dealt over the piece's polling threads (all but the managing warp:
    three in the simulator), two pairs of words each; every word is polled, every distance exact."""
    graph = random_graph(480, 1440, seed=5, wmin=1, wmax=20)
    res = _solve(graph, 0, grid=2)
    assert_sssp_ok(graph, 0, res)
    assert res.counters["vertices_per_piece"] == 240 and res.counters["pushes"] > 0


def test_chain_crosses_every_piece():
    """A chain through five pieces in one bucket: each vertex expanded once, each of the four crossings one push,
    taken and expanded by the next piece before the phase may end."""
    chain = _g(40, [(i, i + 1, 1 + i % 3) for i in range(39)], "chain")
    res = _solve(chain, 0, grid=5, delta=10**6)
    assert_sssp_ok(chain, 0, res)
    c = res.counters
    assert c["expansions"] == 40 and c["iterations"] == 1 and c["cross_arcs"] == c["pushes"] == 4
    back = _g(40, [(i + 1, i, 2) for i in range(39)], "back")  # the other way, from the last piece
    assert_sssp_ok(back, 39, _solve(back, 39, grid=5, delta=3))


def test_hub_and_long_arcs():
    """A hub whose arcs land in every piece at once (a burst into each inbox), duplicate arcs that lower the same
    remote word twice (queued once), and a vertex of 300 out-arcs, past the packed range's byte."""
    hub = _g(31, [(0, i, i % 5) for i in range(1, 31)] + [(i, i + 1, 2) for i in range(1, 30)], "hub")
    assert_sssp_ok(hub, 0, _solve(hub, 0, grid=4))
    dup = _g(12, [(0, 11, 9), (0, 11, 5), (0, 11, 7), (0, 6, 3), (6, 11, 1), (11, 1, 1)], "dup")
    res = _solve(dup, 0, grid=3, delta=10**6)
    assert_sssp_ok(dup, 0, res)
    assert res.counters["pushes"] < res.counters["cross_arcs"]
    star = _g(301, [(0, i, 1 + i % 7) for i in range(1, 301)] + [(i, i % 300 + 1, 1) for i in range(1, 301)], "star")
    res = _solve(star, 0, grid=4)
    assert_sssp_ok(star, 0, res)
    assert res.counters["relaxations"] >= 600


def test_delta_one_expands_each_vertex_once():
    """Weights >= 1 and delta = 1: a phase holds one distance, so each reached vertex is expanded exactly once and
    every arc of it examined once; a lost push, a second expansion or a phase ended early changes a count."""
    graph = random_graph(60, 240, seed=11, wmin=1, wmax=9)
    res = _solve(graph, 0, grid=4, delta=1)
    assert_sssp_ok(graph, 0, res)
    reached = res.dist != res.inf
    assert res.counters["expansions"] == int(reached.sum())
    assert res.counters["relaxations"] == int(np.diff(graph.indptr)[reached].sum())


def test_grid_relabels_across_pieces():
    """A weighted 10 x 10 grid in one bucket over four pieces: vertices are lowered again after their first expansion,
    from their own piece and through the inboxes, so phases end only when every re-expansion is settled."""
    side = 10
    grid = weighted_grid(side)
    res = _solve(grid, 0, delta=10**6, grid=4)
    assert_sssp_ok(grid, 0, res)
    assert res.counters["expansions"] >= side * side and res.counters["pushes"] >= 3


def test_more_pieces_than_vertices():
    graph = _g(3, [(0, 2, 4), (2, 1, 1)], "tiny")
    res = _solve(graph, 2, grid=5)
    assert_sssp_ok(graph, 2, res)
    assert res.counters["vertices_per_piece"] == 1


def test_several_sources_reuse_the_solver():
    graph = random_graph(29, 90, seed=3)
    for r in solve_many(graph, "deltastep_pieces", [0, 7, 28], warmup=1, trials=2, grid=4, block=128):
        assert_sssp_ok(graph, r.source, r)


def test_refuses_int64_distances():
    graph = _g(3, [(0, 1, 2**29), (1, 2, 2**29)], "heavy")
    with pytest.raises(SolverError, match="int32 distances"):
        _solve(graph, 0)


def test_shared_memory_bound_names_the_limit():
    limit = rules.pieces_max_n(1)
    assert limit < 1 << rules.PIECE_SHIFT and 4 * rules.pieces_words(limit, 1)[2] <= rules.CLUSTER_SHARED_BYTES
    graph = gpusp.Graph.from_edges(limit + 1, np.array([0]), np.array([1]), np.array([1]), name="wide")
    with pytest.raises(SolverError, match=f"n <= {limit}"):
        _solve(graph, 0, grid=1)
    spec = registry.get("deltastep_pieces")
    assert spec.max_n == rules.pieces_max_n(rules.PIECES_REFERENCE_SMS) > 3_000_000
    assert spec.why_not(1_048_576, 4_190_208) is None  # the 1M grid fits the H200's multiprocessors
    assert spec.why_not(limit, 0, params={"grid": 1}) is None
    assert f"n <= {limit}" in spec.why_not(limit + 1, 0, params={"grid": 1})
    assert "int32 distances" in spec.why_not(100, 200, itemsize=8)


def test_striped_ids_deal_stripes_to_the_pieces_in_turn():
    """Stripes of 3 ids over 4 pieces of 37 vertices: every vertex a distinct id inside its piece's run (13 stripes:
    piece 0 gets stripes 0, 4, 8 and 12, so its run is 12 ids), in the order of the old ids within a piece."""
    from gpusp.solvers.deltastep.pieces import striped_ids

    chunk = rules.pieces_words(37, 4, 3)[0]
    new = striped_ids(37, 4, 3, chunk)
    assert chunk == 12 and np.unique(new).size == 37 and new.max() < 4 * chunk
    assert list(new[:7]) == [0, 1, 2, 12, 13, 14, 24] and list(new[12:16]) == [3, 4, 5, 15]
    assert list(new // chunk) == [(v // 3) % 4 for v in range(37)]
    assert all(np.all(np.diff(new[(np.arange(37) // 3) % 4 == p]) > 0) for p in range(4))


@pytest.mark.parametrize("stripe", [1, 3])
@pytest.mark.parametrize("label,graph,source", [c for c in CASES if c[0] in ("n1", "unreachable", "zero-cycle",
                                                                               "duplicates-selfloops", "random-37")],
                         ids=lambda c: c if isinstance(c, str) else "")
def test_stripes_answer_in_the_given_ids(label, graph, source, stripe):
    """Pieces in stripes renumber the graph on the host (padding ids past n): distances and parents come back in the
    given ids and pass the reference check, zero weights (the host's tree) included."""
    res = _solve(graph, source, stripe=stripe)
    assert_sssp_ok(graph, source, res)
    assert res.dist.shape == (graph.n,) and res.counters["stripe"] == stripe


def test_stripes_cross_more_arcs_on_a_chain():
    """A path through 30 vertices in 3 pieces: runs of ids cross twice, stripes of one id at every arc."""
    graph = _g(30, [(i, i + 1, 1) for i in range(29)], "chain30")
    runs, stripes = _solve(graph, 0, grid=3), _solve(graph, 0, grid=3, stripe=1)
    assert_sssp_ok(graph, 0, runs)
    assert_sssp_ok(graph, 0, stripes)
    assert runs.counters["cross_arcs"] == 2 and stripes.counters["cross_arcs"] == 29
