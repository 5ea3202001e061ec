"""deltastep_gpu (near-far delta-stepping in one persistent cooperative kernel) in the simulator.

The simulator runs a cooperative grid of one block (its grid sync is a block barrier), so the
persistent kernel is checked for its logic here and for its timing on the H200. The settings that
change no answer are crossed pairwise (every pair of values meets in some cell, every awkward graph
is in several), the settings that change the counters in a known way have tests of their own.
"""

import numpy as np
import pytest
from cases import _g, assert_sssp_ok, pairwise, random_graph, sssp_cases

import gpusp
from gpusp.errors import SolverError

CASES = sssp_cases()


def _chain(n):
    return _g(n, [(i, i + 1, 1 + i % 3) for i in range(n - 1)], f"chain-{n}")


def _solve(graph, name, source=0, **kw):
    kw.setdefault("warmup", 0)
    kw.setdefault("block", 32)
    return gpusp.solve(graph, name, source, **kw)


# the grid-round settings: bucket widths, path following, lanes, hub splitting, and queue
# claims with launch modes and register caps (warp-shared claims, graph replays and caps change no answer; on the
# GPU: the device run of this file; in the simulator every push claims alone and 'graph' launches directly)
GRID_CELLS = pairwise(case=CASES, delta=[0, 1, 3, 10**9], chain=[0, 3], lanes=[2, 4], split=[-1, 1, 2, 5],
                      mode=[("thread", "direct", 0), ("warp", "auto", 64), ("warp", "graph", 80)])


def _grid_id(c):
    push, launch, registers = c["mode"]
    return (f"{c['case'][0]}-d{c['delta']}-c{c['chain']}-l{c['lanes']}-s{c['split']}-{push}-{launch}"
            f"-r{registers}")


@pytest.mark.parametrize("cell", GRID_CELLS, ids=[_grid_id(c) for c in GRID_CELLS])
def test_deltastep_matches_reference(cell):
    (_, graph, source), (push, launch, registers) = cell["case"], cell["mode"]
    repeat = dict(trials=2, warmup=1) if launch != "direct" else {}  # a replay after the first, direct launch
    res = _solve(graph, "deltastep_gpu", source, delta=cell["delta"], lanes=cell["lanes"], chain=cell["chain"],
                 split=cell["split"], push=push, launch=launch, registers=registers, **repeat)
    assert_sssp_ok(graph, source, res)
    c = res.counters
    assert c["iterations"] >= 1 and c["chain"] == cell["chain"]
    assert (c["push"], c["registers"]) == (push, registers)
    assert c["launch"] in (("direct",) if launch == "direct" else ("graph", "direct"))
    if cell["split"] > 0:  # raised only where a vertex would need more than MAX_CHUNKS entries
        assert c["split"] >= cell["split"]


@pytest.mark.parametrize("lanes", [1, 2, 32])
def test_deltastep_lanes_and_buckets(lanes):
    graph = random_graph(120, 600, seed=7, wmin=0, wmax=40)
    small = _solve(graph, "deltastep_gpu", 5, delta=2, lanes=lanes)
    big = _solve(graph, "deltastep_gpu", 5, delta=10**6, lanes=lanes)
    assert_sssp_ok(graph, 5, small)
    assert_sssp_ok(graph, 5, big)
    assert small.counters["buckets"] > 5 and big.counters["buckets"] == 0
    # small buckets settle in near-Dijkstra order: no arc examined more often than with one big bucket
    assert small.counters["relaxations"] <= big.counters["relaxations"]


def test_deltastep_far_pile_reads_are_counted():
    """A chain of weight-5 arcs at delta 1: every arc is heavy, so each vertex waits alone in the far pile and the
    next split moves it: n - 1 splits, each reading one entry. One bucket as wide as the chain reads none."""
    graph = _g(12, [(i, i + 1, 5) for i in range(11)], "heavy-chain")
    narrow = _solve(graph, "deltastep_gpu", 0, delta=1)
    assert_sssp_ok(graph, 0, narrow)
    assert narrow.counters["buckets"] == narrow.counters["far_scanned"] == 11
    wide = _solve(graph, "deltastep_gpu", 0, delta=10**6)
    assert (wide.counters["buckets"], wide.counters["far_scanned"]) == (0, 0)
    # a star whose leaves all wait in the pile: the first split reads them all, later splits what is left
    star = _g(9, [(0, v, 2 * v) for v in range(1, 9)], "heavy-star")
    res = _solve(star, "deltastep_gpu", 0, delta=1)
    assert_sssp_ok(star, 0, res)
    assert res.counters["far_scanned"] == sum(range(1, 9))  # 8 + 7 + ... + 1: one leaf leaves per split


def test_deltastep_delta_one_is_work_optimal():
    """With integer weights >= 1 and delta = 1 every vertex is expanded once: relaxations == arcs reached."""
    graph = random_graph(60, 240, seed=11, wmin=1, wmax=9)
    res = _solve(graph, "deltastep_gpu", 0, delta=1)
    assert_sssp_ok(graph, 0, res)
    reached = res.dist != res.inf
    assert res.counters["relaxations"] == int(np.diff(graph.indptr)[reached].sum())


@pytest.mark.parametrize("lanes,split", [(1, 0), (2, 0), (1, 3), (4, 5)])
def test_deltastep_lanes_and_chunks_examine_every_arc_once(lanes, split):
    """Lane groups and hub chunks over degrees that are no multiple of lanes or of the chunk,
    duplicate arcs, self-loops and zero weights: at delta 1 every reached vertex is still expanded once, so each of
    its arcs is examined exactly once, none skipped at a group's end and none twice."""
    rng = np.random.default_rng(5)
    arcs = [(0, v, int(rng.integers(1, 4))) for v in range(1, 38)]  # a hub of degree 37 (+ duplicates below)
    arcs += [(int(u), int(v), int(rng.integers(0, 6))) for u, v in rng.integers(0, 60, size=(300, 2))]
    arcs += [(0, 5, 1), (0, 5, 2), (7, 7, 0), (9, 9, 3)]
    graph = _g(60, arcs, "hub-mix")
    res = _solve(graph, "deltastep_gpu", 0, delta=1, lanes=lanes, split=split)
    assert_sssp_ok(graph, 0, res)
    reached = res.dist != res.inf
    assert res.counters["relaxations"] == int(np.diff(graph.indptr)[reached].sum())


@pytest.mark.parametrize("fuse,chain", [("off", 0), ("block", 0), ("off", 3)])
def test_deltastep_splits_jump_over_empty_buckets(fuse, chain):
    """Heavy arcs (1,000) at delta 1: each split raises the threshold to the far pile's lowest bucket, whose bound
    the blocks fold in at the end of every step, so there is one split per distance reached, not one per empty
    bucket (5,000 of them here); grid rounds, fused rounds and followed paths push to the pile alike."""
    graph = _g(7, [(0, 1, 1000), (1, 2, 1000), (2, 3, 1000), (0, 4, 1000), (4, 5, 1000), (3, 6, 2000)], "heavy")
    res = _solve(graph, "deltastep_gpu", 0, delta=1, fuse=fuse, chain=chain)
    assert_sssp_ok(graph, 0, res)
    assert res.counters["buckets"] <= 6


def test_deltastep_long_chain_one_round_per_hop():
    graph = _chain(150)
    res = _solve(graph, "deltastep_gpu", 0, delta=10**6)
    assert_sssp_ok(graph, 0, res)
    assert res.counters["iterations"] == 150  # one vertex per round, the last round finds nothing new


@pytest.mark.parametrize("chain", [1, 7, 200])
def test_deltastep_chain_follows_paths_within_a_round(chain):
    """Following each lowered vertex at once covers `chain` more hops of the path per round."""
    graph = _chain(150)
    res = _solve(graph, "deltastep_gpu", 0, delta=10**6, chain=chain)
    assert_sssp_ok(graph, 0, res)
    assert res.counters["iterations"] == -(-150 // (chain + 1))  # each round expands chain + 1 vertices
    assert res.counters["relaxations"] == 149


@pytest.mark.parametrize("cell", pairwise(chain=[2, 16], seed=[0, 1, 2], delta=[1, 8, 10**6]),
                         ids=lambda c: f"c{c['chain']}-s{c['seed']}-d{c['delta']}")
def test_deltastep_chain_random_graphs(cell):
    seed = cell["seed"]
    graph = random_graph(90, 400, seed=20 + seed, wmin=0, wmax=30)
    res = _solve(graph, "deltastep_gpu", seed, delta=cell["delta"], lanes=2, chain=cell["chain"])
    assert_sssp_ok(graph, seed, res)


def test_deltastep_refuses_negative_weights():
    with pytest.raises(SolverError, match="negative"):
        _solve(sssp_cases(negative=True)[-1][1], "deltastep_gpu", 0)


def test_deltastep_repeated_runs_identical():
    graph, source = CASES[5][1], CASES[5][2]  # zero-weight cycle: the level-by-level tree after the kernel
    once = _solve(graph, "deltastep_gpu", source)
    again = _solve(graph, "deltastep_gpu", source, trials=2, warmup=1)
    assert np.array_equal(once.dist, again.dist)
    assert once.counters == again.counters
    assert_sssp_ok(graph, source, again)


def _steps_add_up(c):
    """Grid steps are near rounds on the grid, far splits and fused steps; fused steps hold fused rounds."""
    assert c["grid_steps"] == (c["iterations"] - c["fused_steps"]) + c["block_steps"] + c["buckets"]
    assert c["fused_steps"] >= c["block_steps"]


def _tree(depth, fan):
    """A complete tree with `fan` children per vertex and unique paths: the same rounds in any mode."""
    edges, level, nxt = [], [0], 1
    for d in range(depth):
        new = []
        for u in level:
            for _ in range(fan):
                edges.append((u, nxt, 1 + (nxt * 7) % 5))
                new.append(nxt)
                nxt += 1
        level = new
    return _g(nxt, edges, f"tree-{depth}x{fan}")


# block-local fusion: hand-back limits and local queues that spill at once, sometimes or never, beside the bucket
# widths and path following on the grid rounds between the fused steps
FUSED_CELLS = pairwise(case=CASES, delta=[0, 1, 10**9], fuse=[(1, 1), (4, 2), (0, 4096)], chain=[0, 3])


@pytest.mark.parametrize("cell", FUSED_CELLS,
                         ids=[f"{c['case'][0]}-d{c['delta']}-l{c['fuse'][0]}q{c['fuse'][1]}-c{c['chain']}"
                              for c in FUSED_CELLS])
def test_deltastep_fused_matches_reference(cell):
    (_, graph, source), (limit, queue) = cell["case"], cell["fuse"]
    res = _solve(graph, "deltastep_gpu", source, delta=cell["delta"], lanes=4, chain=cell["chain"], fuse="block",
                 fuse_limit=limit, fuse_queue=queue)
    assert_sssp_ok(graph, source, res)
    _steps_add_up(res.counters)
    assert res.counters["block_steps"] >= 1  # the source's round is always small enough


def test_deltastep_fuse_off_has_no_fused_steps():
    graph = random_graph(60, 240, seed=11, wmin=1, wmax=9)
    res = _solve(graph, "deltastep_gpu", 0, delta=4)
    assert res.counters["block_steps"] == res.counters["fused_steps"] == res.counters["fuse_limit"] == 0
    _steps_add_up(res.counters)


def test_deltastep_fused_long_chain_one_grid_step():
    """A chain keeps one vertex queued: every round is fused, in one block step and no grid round."""
    graph = _chain(150)
    res = _solve(graph, "deltastep_gpu", 0, delta=10**6, lanes=1, fuse="block", fuse_limit=2)
    assert_sssp_ok(graph, 0, res)
    c = res.counters
    assert (c["iterations"], c["fused_steps"], c["block_steps"], c["grid_steps"]) == (150, 150, 1, 1)
    assert c["relaxations"] == 149


def test_deltastep_fused_chain_across_buckets():
    """Small buckets: each far split hands a one-vertex queue to the block, which settles the bucket."""
    graph = _chain(90)
    res = _solve(graph, "deltastep_gpu", 0, delta=5, lanes=1, fuse="block", fuse_limit=1)
    assert_sssp_ok(graph, 0, res)
    c = res.counters
    assert c["buckets"] > 10 and c["block_steps"] == c["buckets"] + 1
    assert c["iterations"] == _solve(graph, "deltastep_gpu", 0, delta=5, lanes=1).counters["iterations"]
    _steps_add_up(c)


@pytest.mark.parametrize("limit,queue", [(3, 4096), (100, 4096), (100, 2), (100, 1)])
def test_deltastep_fused_tree_hands_back(limit, queue):
    """A tree's frontier triples per level: the block hands back once it passes fuse_limit, or when
    the local queue overflows and spills; the rounds are the tree's levels in every mode."""
    graph = _tree(4, 3)
    res = _solve(graph, "deltastep_gpu", 0, delta=10**6, lanes=1, fuse="block", fuse_limit=limit,
                 fuse_queue=queue)
    assert_sssp_ok(graph, 0, res)
    c = res.counters
    assert c["iterations"] == 5
    _steps_add_up(c)
    if queue >= 27 and limit >= 27:
        assert (c["fused_steps"], c["grid_steps"]) == (5, 1)
    elif limit == 3:  # levels of 1 and 3 vertices fused, then 9 and 27 on the grid: 2 + 1 + 1 + 1 steps
        assert (c["fused_steps"], c["block_steps"], c["grid_steps"]) == (2, 1, 4)
    else:  # every round queues more than `queue`: it spills and ends its block step, one round per step
        assert (c["fused_steps"], c["block_steps"], c["grid_steps"]) == (5, 5, 5)


@pytest.mark.parametrize("cell", pairwise(fuse_lanes=[1, 2, 32], seed=[0, 1, 2],
                                          fuse=[(1, 4, 8), (8, 16, 3), (10**6, 40, 4096)]),
                         ids=lambda c: f"fl{c['fuse_lanes']}-s{c['seed']}-d{c['fuse'][0]}")
def test_deltastep_fused_random_graphs(cell):
    seed, (delta, limit, queue) = cell["seed"], cell["fuse"]
    graph = random_graph(90, 400, seed=20 + seed, wmin=0, wmax=30)
    res = _solve(graph, "deltastep_gpu", seed, delta=delta, lanes=4, fuse="block", fuse_limit=limit,
                 fuse_queue=queue, fuse_lanes=cell["fuse_lanes"])
    assert_sssp_ok(graph, seed, res)
    _steps_add_up(res.counters)


def test_deltastep_fused_repeated_runs_identical():
    graph, source = CASES[4][1], CASES[4][2]  # zero-weight cycle
    kw = dict(fuse="block", fuse_limit=2, fuse_queue=2)
    once = _solve(graph, "deltastep_gpu", source, **kw)
    again = _solve(graph, "deltastep_gpu", source, trials=2, warmup=1, **kw)
    assert np.array_equal(once.dist, again.dist)
    assert_sssp_ok(graph, source, again)


def test_deltastep_fuse_params_checked():
    graph = _chain(5)
    with pytest.raises(SolverError, match="fuse"):
        _solve(graph, "deltastep_gpu", fuse="warp")
    with pytest.raises(SolverError, match="fuse_queue"):
        _solve(graph, "deltastep_gpu", fuse="block", fuse_queue=0)
    assert _solve(graph, "deltastep_gpu", fuse="block", lanes=4).counters["fuse_limit"] == 2 * 32 // 4


def test_deltastep_split_hub_and_chain():
    """A hub of 150 arcs: split 1 queues it as 150 entries, each one arc; chain follows across entries."""
    edges = [(0, v, 1 + v % 7) for v in range(1, 151)] + [(v, v + 1, 2) for v in range(1, 150)]
    graph = _g(151, edges, "hub")
    for chain in (0, 4):
        res = _solve(graph, "deltastep_gpu", 0, delta=5, lanes=4, split=1, chain=chain)
        assert_sssp_ok(graph, 0, res)
        assert res.counters["split"] == 1
    auto = _solve(graph, "deltastep_gpu", 0, delta=5, lanes=4)  # split -1: the 150-arc hub is over 8 x 4 lanes
    assert auto.counters["split"] == 8
    assert_sssp_ok(graph, 0, auto)
    assert _solve(graph, "deltastep_gpu", 0, delta=5, lanes=4, split=0).counters["split"] == 0
    assert _solve(graph, "deltastep_gpu", 0, delta=5, lanes=32).counters["split"] == 0  # 150 <= 8 x 32
    assert _solve(_chain(9), "deltastep_gpu", 0, lanes=1).counters["split"] == 0  # out-degree 1 is no hub


def test_deltastep_split_caps_a_hubs_entries():
    """A hub of 1,030 arcs reached late, by a heavy arc through the far pile: split 1 is raised to 2 (at most
    MAX_CHUNKS entries a vertex), and each of its 515 entries is expanded once."""
    from gpusp.solvers.deltastep.spec import MAX_CHUNKS

    hub = 1030
    edges = [(0, 1, 50)] + [(1, v, 1 + v % 5) for v in range(2, hub + 2)]
    graph = _g(hub + 2, edges, "late-hub")
    res = _solve(graph, "deltastep_gpu", 0, delta=4, lanes=32, split=1, block=64)
    assert_sssp_ok(graph, 0, res)
    assert res.counters["split"] == -(-hub // MAX_CHUNKS) == 2
    assert res.counters["relaxations"] == 1 + hub  # every arc examined once: no entry lost or repeated


def test_deltastep_split_refuses_fusion():
    with pytest.raises(SolverError, match="split and fuse"):
        _solve(CASES[0][1], "deltastep_gpu", CASES[0][2], split=4, fuse="block")


def test_deltastep_trials_change_sources_and_read_counters_after_the_clock():
    """One solver, several sources in turn (the source travels through mapped host memory, also into a replayed
    graph): every answer is the one for its own source; run() hands back a deferred counter read-back."""
    from gpusp.solvers import registry

    spec = registry.get("deltastep_gpu")
    graph = random_graph(40, 160, seed=8, wmin=0, wmax=9)
    s = spec.build(graph, block=32, delta=4)
    s.upload()
    for source in (0, 17, 39, 0):
        ran = s.run(source)
        assert callable(ran) and ran()["iterations"] >= 1
        dist, parent = s.download()
        assert_sssp_ok(graph, source, type("R", (), {"dist": dist, "parent": parent})())
    with pytest.raises(SolverError, match="registers=48: allowed values are"):
        spec.build(graph, registers=48)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_int64_offsets_give_the_int32_graphs_answers(case):
    """A graph past 2^31 - 1 arcs has int64 offsets: the kernels compiled for them (and the tree of the zero-weight
    graphs) give the answers of the same graph with int32 offsets, with and without split hubs."""
    label, graph, source = case
    wide = gpusp.Graph(graph.n, graph.indptr, graph.indices, graph.weights, name=graph.name, offsets_dtype="int64")
    assert wide.indptr.dtype == np.int64
    for split in (0, 2):
        result = _solve(wide, "deltastep_gpu", source, split=split)
        assert_sssp_ok(wide, source, result)
        assert np.array_equal(result.dist, _solve(graph, "deltastep_gpu", source, split=split).dist)


@pytest.mark.parametrize("split", [0, -1, 3])
@pytest.mark.parametrize("paths", [True, False])
def test_memory_formula_bounds_what_upload_allocates(split, paths):
    """The spec's memory (what `fits` and the workflow's refusals read) covers the device arrays one solver
    allocates. With a given split it is exact but for the family's generic share (a second distance-sized word and a
    stamp a vertex: W + 4 bytes) and the few fixed words it leaves out; the automatic split it bounds from the lanes
    alone. Beyond the graph a vertex costs its distance, its parent and 24 bytes of queues, stamps and flags."""
    from gpusp.solvers import registry

    spec = registry.get("deltastep_gpu")
    graph = random_graph(300, 2400, seed=3, wmin=1, wmax=50)
    params = spec.resolve({"block": 32, "split": split, "paths": paths})
    solver = spec.build(graph, **params)
    solver.upload()
    arrays = {k: v for k, v in vars(solver).items() if k.startswith("d_") and k != "d_source"}
    allocated = sum(a.nbytes for a in arrays.values()) + sum(
        a.nbytes for a in (solver.dg.indptr, solver.dg.indices, solver.dg.weights))
    w, fixed = graph.weights.itemsize, arrays["d_ctl"].nbytes + arrays["d_local"].nbytes
    need = spec.memory(graph.n, graph.m, params, w)
    assert allocated <= need
    if split == 0:
        fixed += arrays["d_chunk"].nbytes  # two placeholder words without split
        graph_bytes = graph.indptr.nbytes + graph.indices.nbytes + graph.weights.nbytes
        assert allocated - graph_bytes - fixed == (w + 4 + 24) * graph.n
    if split >= 0:
        assert need - allocated == (w + 4) * graph.n - fixed
