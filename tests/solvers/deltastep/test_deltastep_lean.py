"""deltastep_lean (deltastep_gpu's rounds and splits over bitmaps and queues of a fraction of n) in the simulator.

Small queues force what the default leaves to large graphs: rounds read from the near bitmap, splits from the far
bitmap, hubs cut into chunks of the round's idle queue. Every setting is checked against SciPy on the awkward graphs;
the memory formula against what the solver allocates and against issue 38's bound of 16 bytes a vertex.
"""

import numpy as np
import pytest
from cases import _g, assert_sssp_ok, pairwise, random_graph, sssp_cases

import gpusp
from gpusp.solvers.deltastep.spec import LEAN_FIXED

CASES = sssp_cases()
QUEUES = [0, 1, 2, 1000]  # 0: n / 8; 1 and 2 overflow at once; 1000 never on these graphs


def _solve(graph, source=0, **kw):
    kw.setdefault("warmup", 0)
    kw.setdefault("block", 32)
    return gpusp.solve(graph, "deltastep_lean", source, **kw)


CELLS = pairwise(case=CASES, queue=QUEUES, delta=[0, 1, 3, 10**9], split=[-1, 0, 2], lanes=[1, 4],
                 mode=[("thread", "direct", True), ("warp", "auto", False)])


def _id(c):
    return f"{c['case'][0]}-q{c['queue']}-d{c['delta']}-s{c['split']}-l{c['lanes']}-{'-'.join(map(str, c['mode']))}"


@pytest.mark.parametrize("cell", CELLS, ids=[_id(c) for c in CELLS])
def test_lean_matches_reference(cell):
    (_, graph, source), (push, launch, paths) = cell["case"], cell["mode"]
    res = _solve(graph, source, queue=cell["queue"], delta=cell["delta"], split=cell["split"], lanes=cell["lanes"],
                 push=push, launch=launch, paths=paths)
    assert_sssp_ok(graph, source, res)
    assert (res.parent is None) == (not paths)
    c = res.counters
    assert c["queue"] == (cell["queue"] or -(-graph.n // 8))
    assert 0 <= c["bitmap_rounds"] <= c["iterations"] and 0 <= c["bitmap_splits"] <= c["buckets"]


@pytest.mark.parametrize("seed", [0, 1])
def test_overflowed_queues_give_the_same_distances(seed):
    """A queue of one entry sends every round of two or more vertices to the near bitmap and every split of a pile of
    two or more to the far bitmap; the distances are those of queues that never overflow."""
    graph = random_graph(150, 900, seed=seed, wmin=0, wmax=30)
    small = _solve(graph, 4, queue=1, delta=4)
    large = _solve(graph, 4, queue=10**4, delta=4)
    assert_sssp_ok(graph, 4, small)
    np.testing.assert_array_equal(small.dist, large.dist)
    assert small.counters["bitmap_rounds"] > 0 and small.counters["bitmap_splits"] > 0
    assert large.counters["bitmap_rounds"] == large.counters["bitmap_splits"] == 0


@pytest.mark.parametrize("queue", [1000, 1])
def test_a_vertex_lowered_rounds_later_is_queued_again(queue):
    """x is reached in round 1 over one heavy arc and lowered again in round 4 over a chain of three light ones: round
    4 marks x in the bitmap row round 1 used, which round 1 must have left clear (each entry clears its bit as it is
    expanded from the queue; a round read from the bitmap clears its row whole in the next step)."""
    graph = _g(7, [(0, 1, 10), (0, 2, 1), (2, 3, 1), (3, 4, 1), (4, 1, 1), (1, 5, 1), (5, 6, 1)], "lowered-again")
    res = _solve(graph, 0, queue=queue, delta=10**6)
    assert_sssp_ok(graph, 0, res)
    assert res.dist[6] == 6
    assert (res.counters["bitmap_rounds"] > 0) == (queue == 1)


def test_hub_in_a_bitmap_round_is_expanded_in_chunks():
    """The source reaches 20 vertices at once (past a queue of 16, so round 1 reads the bitmap); one of them has 100
    arcs, more than the hub chunk (max(32, 2 m / 16) = 32 arcs): its arcs go out as four chunks, each expanded by a
    warp. At delta 1 with weights >= 1 every reached vertex is expanded once, so every arc is examined exactly once:
    none lost at a chunk's end, none twice."""
    arcs = [(0, v, 1) for v in range(1, 21)] + [(5, 21 + k, 1 + k % 3) for k in range(100)]
    arcs += [(21 + k, 121 + k % 7, 2) for k in range(0, 100, 9)]
    graph = _g(128, arcs, "hub-in-bitmap-round")
    res = _solve(graph, 0, queue=16, delta=1, lanes=4, split=0)
    assert_sssp_ok(graph, 0, res)
    c = res.counters
    assert c["hub"] == 32 and c["bitmap_rounds"] >= 1
    reached = res.dist != res.inf
    assert c["relaxations"] == int(np.diff(graph.indptr)[reached].sum())


def test_sources_in_turn_start_from_clean_bitmaps():
    """One solver, several sources: the reset clears the bitmaps a previous source left (rounds cut short by the end
    of a search leave marks only in rows it never read)."""
    from gpusp.solvers import registry

    graph = random_graph(90, 500, seed=6, wmin=1, wmax=20)
    s = registry.get("deltastep_lean").build(graph, block=32, delta=3, queue=2)
    s.upload()
    for source in (0, 44, 89, 0):
        s.run(source)
        dist, parent = s.download()
        assert_sssp_ok(graph, source, type("R", (), {"dist": dist, "parent": parent})())
        np.testing.assert_array_equal(dist, _solve(graph, source, delta=3, queue=2).dist)


@pytest.mark.parametrize("case", CASES[2:6], ids=[c[0] for c in CASES[2:6]])
def test_int64_offsets_give_the_int32_graphs_answers(case):
    _, graph, source = case
    wide = gpusp.Graph(graph.n, graph.indptr, graph.indices, graph.weights, name=graph.name, offsets_dtype="int64")
    result = _solve(wide, source, queue=1, split=2)
    assert_sssp_ok(wide, source, result)
    np.testing.assert_array_equal(result.dist, _solve(graph, source, queue=1, split=2).dist)


@pytest.mark.parametrize("paths", [True, False])
@pytest.mark.parametrize("queue,split", [(0, 0), (0, 3), (5, -1)])
def test_memory_formula_bounds_what_upload_allocates(queue, split, paths):
    """The spec's memory covers the arrays the solver allocates (exactly, but for the control words and, without
    chunks, the two placeholder words of the chunk queue), and at the default queue it is within issue 38's bound:
    the graph's arrays + 16 bytes a vertex with int64 distances and parents, 12 without parents."""
    from gpusp.solvers import registry

    spec = registry.get("deltastep_lean")
    graph = random_graph(301, 2400, seed=3, wmin=1, wmax=50)
    params = spec.resolve({"block": 32, "queue": queue, "split": split, "paths": paths})
    solver = spec.build(graph, **params)
    solver.upload()
    arrays = {k: v for k, v in vars(solver).items() if k.startswith("d_") and k != "d_source"}
    graph_bytes = sum(a.nbytes for a in (solver.dg.indptr, solver.dg.indices, solver.dg.weights))
    allocated = sum(a.nbytes for a in arrays.values()) + graph_bytes
    need = spec.memory(graph.n, graph.m, params, graph.weights.itemsize)
    chunked = solver.split > 0 or solver.hubs
    unchunked = 0 if chunked else 8 * solver.queue - arrays["d_chunk"].nbytes  # a placeholder stands for the queue
    fixed = arrays["d_ctl"].nbytes + (0 if paths else arrays["d_parent"].nbytes)  # control words, parent placeholder
    assert need - allocated == unchunked + LEAN_FIXED - fixed >= 0
    n, m = 2**27, 2**32
    big = spec.memory(n, m, spec.resolve({"paths": paths}), 8) - (8 * (n + 1) + 12 * m)
    assert big / n <= (16 if paths else 12)
