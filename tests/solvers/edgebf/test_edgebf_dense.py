"""edgebf_dense (paper 004's thread per matrix entry, masked rounds) in the CUDA simulator: the awkward cases, and a
pairwise design over the layout, Alg. 5's entries per thread, the matrix transfer and the block shape."""

import numpy as np
import pytest
from cases import _g, assert_sssp_ok, negative_cycle_graph, pairwise, sssp_cases

import gpusp
from gpusp.errors import NegativeCycleError
from gpusp.solvers import registry

NAME = "edgebf_dense"
CASES = sssp_cases(negative=True)


def _solve(graph, source=0, **kw):
    kw.setdefault("warmup", 0)
    kw.setdefault("block", 32)
    return gpusp.solve(graph, NAME, source, **kw)


def _complete(n, seed, wmin, wmax):
    rng = np.random.default_rng(seed)
    src, dst = (a.ravel() for a in np.meshgrid(np.arange(n), np.arange(n), indexing="ij"))
    keep = src != dst
    src, dst = src[keep], dst[keep]
    return gpusp.Graph.from_edges(n, src, dst, rng.integers(wmin, wmax + 1, src.size), name=f"complete-{n}")


def _hidden_path(n, seed, hops=8):
    """A random graph whose only cheap route is a path of ``hops`` weight-1 arcs through random vertices (every
    other arc is heavy): a matrix entry of the path that the dense kernel never visits changes the answer.
    Returns (graph, source, far end)."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)[:hops + 1]
    src, dst = rng.integers(0, n, 4 * n), rng.integers(0, n, 4 * n)
    w = rng.integers(10 * n, 20 * n, src.size)
    src, dst = np.concatenate([order[:-1], src]), np.concatenate([order[1:], dst])
    w = np.concatenate([np.ones(hops, dtype=np.int64), w])
    return gpusp.Graph.from_edges(n, src, dst, w, name=f"hidden-path-{n}-{seed}"), int(order[0]), int(order[-1])


@pytest.mark.parametrize("label,graph,source", CASES, ids=[c[0] for c in CASES])
def test_matches_reference(label, graph, source):
    res = _solve(graph, source)
    assert_sssp_ok(graph, source, res)
    assert res.counters["iterations"] >= 1
    assert res.counters["relaxations"] == res.counters["iterations"] * graph.n * graph.n


# The settings of the dense kernel and its upload, pairwise: every pair of a graph, a layout, an entries-per-thread
# k (k = ky x kx: 2 = 2 x 1, 8 = 4 x 2, 64 = 8 x 8), a transfer (the streamed pieces: rows offset per piece; 8 pieces
# of a graph with fewer rows leave empty ones) and a block shape (32 threads: one-row blocks; 128: four rows) meets.
# The hidden paths (n = 40, 37: more than a warp of rows and columns) fail if any entry of the path is never visited.
SHAPE_GRAPHS = {label: (graph, source, None) for label, graph, source in CASES
                if label in ("n1", "unreachable", "zero-weights", "duplicates-selfloops", "negative", "random-neg")}
SHAPE_GRAPHS.update({f"hidden-{n}": _hidden_path(n, seed) for n, seed in ((40, 1), (37, 2))})
SHAPES = pairwise(graph=list(SHAPE_GRAPHS), k=[1, 2, 8, 64], transfer=["pageable", "pinned", "streams-2", "streams-8"],
                  layout=["coalesced", "strided"], block=[32, 128])


@pytest.mark.parametrize("shape", SHAPES, ids=["-".join(map(str, s.values())) for s in SHAPES])
def test_settings_visit_every_entry(shape):
    """Paper 004's non-coalesced layout, Alg. 5 (k entries per thread, a 2-D grid-stride loop), pinned memory and
    streamed pieces all give the reference's answers; a streamed run uploads in every trial, so two trials run."""
    graph, source, end = SHAPE_GRAPHS[shape["graph"]]
    transfer, _, chunks = shape["transfer"].partition("-")
    extra = {"chunks": int(chunks), "trials": 2} if chunks else {}
    res = _solve(graph, source, block=shape["block"], layout=shape["layout"], edges_per_thread=shape["k"],
                 transfer=transfer, **extra)
    assert_sssp_ok(graph, source, res)
    assert res.params["layout"] == shape["layout"] and res.params["edges_per_thread"] == shape["k"]
    assert res.counters["transfer"] == transfer
    assert res.counters["chunks"] == (min(int(chunks), graph.n) if chunks else 0)
    if end is not None:
        assert res.dist[end] == 8  # the path's far end, reached over every arc of the path


def test_negative_cycle_detected_also_streamed():
    with pytest.raises(NegativeCycleError):
        _solve(negative_cycle_graph())
    with pytest.raises(NegativeCycleError):
        _solve(negative_cycle_graph(), transfer="streams", chunks=2)


def test_negative_self_loop_hits_the_floor():
    """A candidate below -(n-1) max|w| is a cycle at once (the overflow-proof test), here in round 1."""
    with pytest.raises(NegativeCycleError, match="found in round 1"):
        _solve(_g(1, [(0, 0, -2)], "neg-loop"))
    with pytest.raises(NegativeCycleError):
        _solve(_g(3, [(0, 1, 1), (1, 1, -1), (1, 2, 1)], "neg-loop-3"))


@pytest.mark.parametrize("wmin,wmax", [(1, 20), (0, 3)], ids=["positive", "with-zeros"])
def test_complete_graph(wmin, wmax):
    graph = _complete(9, seed=4, wmin=wmin, wmax=wmax)
    res = _solve(graph, 2)
    assert_sssp_ok(graph, 2, res)
    assert res.counters["relaxations"] == res.counters["iterations"] * 81


@pytest.mark.parametrize("k,block,grid", [(1, 64, (2, 32)), (2, 64, (2, 16)), (8, 64, (1, 8)), (64, 256, (1, 1))])
def test_grid_shrinks_by_edges_per_thread(k, block, grid):
    """Alg. 5's grid: n^2 / k threads for a 64 x 64 matrix (k split into rows ky >= columns kx)."""
    graph = _complete(64, seed=1, wmin=1, wmax=9)
    for layout in ("coalesced", "strided"):
        solver = registry.get(NAME).build(graph, block=block, edges_per_thread=k, layout=layout)
        gx, gy = solver.grid_for(64)
        assert (gx, gy) == grid
        assert gx * gy * block * k >= 64 * 64


def test_parameters():
    """The class takes the registry's parameters, every one named and without a default of its own; it has no launch
    parameter (rounds always from the host) and refuses an unknown transfer."""
    graph = CASES[7][1]
    with pytest.raises(TypeError):
        registry.get(NAME).load()(graph)
    assert registry.get(NAME).build(graph).params == registry.get(NAME).defaults()
    with pytest.raises(gpusp.SolverError, match="no parameter 'launch'"):
        registry.get(NAME).build(graph, launch="graph")
    assert registry.get(NAME).build(graph).launch == "host"
    with pytest.raises(gpusp.SolverError):
        _solve(CASES[0][1], transfer="zero-copy")


def _recount_pieces(graph, source, chunks):
    """Round 1 of a streamed run recounted with NumPy, piece after piece in upload order: (relaxations, improving
    relaxations) of each piece's rows, a relaxation being a candidate from a row that changed in round 0 (the
    source's) over a finite entry."""
    mat = graph.to_dense()
    inf = graph.dtype.type(graph.inf)
    dist = np.full(graph.n, inf, dtype=mat.dtype)
    dist[source] = 0
    active = np.zeros(graph.n, dtype=bool)
    active[source] = True
    bounds = np.linspace(0, graph.n, min(chunks, graph.n) + 1).astype(np.int64)  # a piece holds a row at least
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        if hi == lo:
            continue
        relaxed = improved = 0
        for i in np.flatnonzero(active[lo:hi]) + lo:
            for j in np.flatnonzero((mat[i] != inf) & (dist[i] != inf)):
                relaxed += 1
                if dist[i] + mat[i, j] < dist[j]:
                    dist[j] = dist[i] + mat[i, j]
                    improved += 1
        out.append((relaxed, improved))
    return [r for r, _ in out], [i for _, i in out]


@pytest.mark.parametrize("chunks", [2, 4])
@pytest.mark.parametrize("label,graph", [("complete", _complete(10, seed=3, wmin=1, wmax=9)),
                                         ("hidden", _hidden_path(11, seed=5)[0]),
                                         ("unreachable", dict((c[0], c[1]) for c in CASES)["unreachable"])])
def test_piece_counters_are_round_one_per_piece(label, graph, chunks):
    """A streamed run's piece counters are exact (the NumPy recount of round 1 in upload order), for a source in the
    first piece and one in the last; round 1 relaxes only the source's row, so its work lies in the source's piece
    and every other piece has none, whatever distances the pieces before it found."""
    for source in (0, graph.n - 1):
        res = _solve(graph, source, transfer="streams", chunks=chunks, trials=2)
        assert_sssp_ok(graph, source, res)
        relaxed, improved = _recount_pieces(graph, source, chunks)
        assert res.counters["piece_relaxations"] == relaxed and res.counters["piece_improvements"] == improved
        assert len(relaxed) == min(chunks, graph.n)
        mine = int(np.argmax(relaxed))
        row = graph.to_dense()[source]
        assert relaxed[mine] == int(np.sum(row != graph.inf))
        assert sum(relaxed) == relaxed[mine] and sum(improved) == improved[mine]


def test_second_piece_improves_less_when_the_source_lies_in_the_first():
    """On a complete graph with the source in the first half, the first piece lowers every other vertex (n - 1
    improvements) and the second improves nothing; with the source in the second half the order turns. Unstreamed
    runs carry no piece counters."""
    graph = _complete(12, seed=7, wmin=1, wmax=20)
    first = _solve(graph, 2, transfer="streams", chunks=2).counters
    assert first["piece_improvements"] == [11, 0] and first["piece_relaxations"] == [12, 0]
    last = _solve(graph, 9, transfer="streams", chunks=2).counters
    assert last["piece_improvements"] == [0, 11]
    assert "piece_improvements" not in _solve(graph, 2, transfer="pinned").counters
