"""phast's contraction hierarchy on the host: the CPU query (upward search + sweep) against SciPy on random and real
graphs, determinism, and where contraction stops (core_degree). No device and no simulator: the hierarchy is NumPy and
Numba on the host.
"""

import time

import numba
import numpy as np
import pytest
from cases import _g, pairwise, random_graph

from gpusp.data.formats import read_graph
from gpusp.data.generate import generate
from gpusp.data.graph import Graph
from gpusp.data.weights import add_weights
from gpusp.measure.validate import reference_distances
from gpusp.solvers import registry
from gpusp.solvers.phast import contraction
from gpusp.solvers.phast import solver as phast

SPEC = registry.get("phast_gpu")


def _cpu_matches_scipy(graph, hierarchy, sources):
    ref = reference_distances(graph, sources)
    for i, s in enumerate(sources):
        got = contraction.cpu_query(hierarchy, int(s))
        want = ref[i].astype(np.int64)
        want[want == graph.inf] = contraction.INF
        assert np.array_equal(got, want), f"{graph.name} from {s}: {np.flatnonzero(got != want)[:5]}"


HIERARCHIES = pairwise(core_degree=[0, 2, 16], wmin=[0, 1], seed=[0, 1])


@pytest.mark.parametrize("cell", HIERARCHIES, ids=lambda c: "core{core_degree}-w{wmin}-seed{seed}".format(**c))
def test_hierarchy_cpu_query_matches_scipy(cell):
    """Every core bound with and without zero weights (a pairwise design over the bound, the weights and the graph);
    random graphs of 150 vertices and 600 arcs carry self-loops and duplicate arcs."""
    core_degree = cell["core_degree"]
    graph = random_graph(150, 600, seed=cell["seed"], wmin=cell["wmin"], wmax=30)
    h = contraction.build(graph, settle=8, hops=3, core_degree=core_degree)
    assert h.level_ptr[-1] == graph.n and sorted(h.order.tolist()) == list(range(graph.n))
    rank_of_new = h.rank
    heads = np.repeat(np.arange(graph.n), np.diff(h.down_ptr))
    assert (rank_of_new[h.down_tail] > rank_of_new[heads]).all()  # downward arcs come from higher ranks
    level = np.repeat(np.arange(h.levels), np.diff(h.level_ptr))
    assert (level[h.down_tail] < level[heads]).all()  # ... and from earlier sweep levels
    if core_degree == 2:
        assert h.core > 0
    _cpu_matches_scipy(graph, h, range(0, graph.n, 11))


def test_cored_triangulation_answers_exactly():
    """A Delaunay triangulation with a core: its priorities go stale and are recomputed only for a vertex that could
    be contracted (lazy updates); the hierarchy still answers like SciPy."""
    graph = generate("delaunay", scale=11, seed=1)
    h = contraction.build(graph, core_degree=8)
    assert 0 < h.core < graph.n // 2 and h.rounds > 2
    _cpu_matches_scipy(graph, h, range(0, graph.n, 97))


def _same_hierarchy(a, b):
    for name in ("order", "position", "rank", "up_ptr", "up_head", "up_w", "down_ptr", "down_tail", "down_w",
                 "level_ptr"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert (a.core, a.shortcuts, a.searches, a.rounds) == (b.core, b.shortcuts, b.searches, b.rounds)


def test_simple_and_grouped_arcs_match_numpy_sorts():
    """The counting sorts against NumPy's lexsort: rows short (insertion sort) and a hub's long one (merge sort), with
    self-loops, duplicates of equal and different weights, and zero weights."""
    rng = np.random.default_rng(3)
    src = np.concatenate([np.zeros(400, np.int64), rng.integers(0, 60, 500)])
    dst, w = rng.integers(0, 60, src.size), rng.integers(0, 4, src.size)
    graph = Graph.from_edges(60, src, dst, w, name="hub-duplicates")
    s, d, ww = (a.astype(np.int64) for a in graph.coo())
    keep = s != d
    s, d, ww = s[keep], d[keep], ww[keep]
    order = np.lexsort((ww, d, s))
    s, d, ww = s[order], d[order], ww[order]
    first = np.ones(s.size, dtype=bool)
    first[1:] = (s[1:] != s[:-1]) | (d[1:] != d[:-1])
    got = contraction.simple_arcs(graph)
    for want, have in zip((s[first], d[first], ww[first]), got):
        assert have.dtype == np.int64 and np.array_equal(want, have)
    for key, other in ((got[0], got[1]), (got[1], got[0])):  # by tail (the hub's group is long), by head
        twice = rng.permutation(2 * key.size)  # each arc twice, of different weights: the sort must be stable
        key, other = np.tile(key, 2)[twice], np.tile(other, 2)[twice]
        weight = np.concatenate([got[2], got[2] + 10])[twice]
        ptr, grouped, gw = contraction.group_arcs(graph.n, key, other, weight)
        order = np.lexsort((other, key))
        assert np.array_equal(ptr, np.concatenate([[0], np.cumsum(np.bincount(key, minlength=graph.n))]))
        assert grouped.dtype == np.int32 and np.array_equal(grouped, other[order]) and np.array_equal(gw, weight[order])


def test_hierarchy_is_deterministic():
    graph = random_graph(120, 500, seed=9, wmin=0, wmax=9)
    _same_hierarchy(contraction.build(graph), contraction.build(graph))


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="one Numba thread only")
@pytest.mark.parametrize("core_degree", [0, 6])
def test_hierarchy_does_not_depend_on_the_thread_count(core_degree):
    """Every round's set, shortcuts and priorities are a function of the graph: one thread and two give the same
    arrays (a grid with zero weights, where many priorities tie, and a random graph with a core)."""
    graphs = [generate("grid", rows=12, cols=15, wmin=0, wmax=4, seed=2), random_graph(300, 1500, seed=5, wmax=50)]
    before = numba.get_num_threads()
    try:
        for graph in graphs:
            numba.set_num_threads(1)
            one = contraction.build(graph, core_degree=core_degree)
            numba.set_num_threads(2)
            two = contraction.build(graph, core_degree=core_degree)
            _same_hierarchy(one, two)
            assert one.rounds > (1 if core_degree == 0 else 0)
    finally:
        numba.set_num_threads(before)


def test_build_sets_its_chunk_size_and_restores_the_callers():
    """A round's loops run one iteration a thread, so a caller's larger chunk size (which would hand every thread's
    iteration to one thread) is replaced for the build and given back after it, also when the build fails."""
    graph = random_graph(200, 900, seed=3, wmax=20)
    plain = contraction.build(graph)
    before = numba.get_parallel_chunksize()
    try:
        numba.set_parallel_chunksize(64)
        _same_hierarchy(plain, contraction.build(graph))
        assert numba.get_parallel_chunksize() == 64
        with pytest.raises(ValueError):
            contraction.build(graph, settle="many")
        assert numba.get_parallel_chunksize() == 64
    finally:
        numba.set_parallel_chunksize(before)


def _hub_and_rim(n):
    """A hub joined both ways to every vertex of a ring (weights 5 to the hub, 1 along the ring)."""
    arcs = [(0, v, 5) for v in range(1, n)] + [(v, 0, 5) for v in range(1, n)]
    return arcs + [(v, v % (n - 1) + 1, 1) for v in range(1, n)]


AWKWARD = [
    ("one vertex", _g(1, [], "one")),
    ("one vertex, self-loop", _g(1, [(0, 0, 3)], "loop")),
    ("no arcs", _g(5, [], "empty")),
    ("zero-weight cycles", _g(6, [(0, 1, 0), (1, 2, 0), (2, 0, 0), (2, 3, 4), (3, 4, 0), (4, 3, 0), (4, 5, 0),
                                  (5, 3, 0), (1, 5, 7)], "zero-cycles")),
    ("duplicates and self-loops", _g(4, [(0, 1, 9), (0, 1, 2), (0, 1, 5), (1, 2, 1), (1, 2, 1), (2, 2, 0),
                                         (2, 3, 0), (3, 0, 4), (3, 0, 1)], "duplicates")),
    ("unreachable parts", _g(9, [(0, 1, 2), (1, 2, 2), (2, 0, 2), (3, 4, 1), (4, 5, 1), (6, 7, 0), (8, 6, 3)],
                             "parts")),
    ("hub", _g(40, _hub_and_rim(40), "hub")),
    ("zero-weight grid", generate("grid", rows=9, cols=11, wmin=0, wmax=1, seed=3)),
]


@pytest.mark.parametrize("graph", [g for _, g in AWKWARD], ids=[name for name, _ in AWKWARD])
@pytest.mark.parametrize("core_degree", [0, 2])
def test_awkward_hierarchies_answer_exactly(graph, core_degree):
    """From every source, with the defaults' searches and with searches of one settled vertex (every witness
    missed: the shortcuts alone keep the distances)."""
    for settle, hops in ((64, 8), (1, 1)):
        h = contraction.build(graph, settle=settle, hops=hops, core_degree=core_degree)
        assert h.level_ptr[-1] == graph.n
        _cpu_matches_scipy(graph, h, range(graph.n))


def _closure_query(h, ptr, verts, dists, source):
    """A query whose upward part is the source's space from upward_closures (original ids, INF unreachable)."""
    new = int(h.position[source])
    dist = np.full(h.n, contraction.INF, dtype=np.int64)
    dist[verts[ptr[new]:ptr[new + 1]]] = dists[ptr[new]:ptr[new + 1]]
    contraction._sweep(h.down_ptr, h.down_tail, h.down_w, h.level_ptr, dist)
    return dist[h.position]


CLOSURE_GRAPHS = [(name, g) for name, g in AWKWARD] + [
    ("random, zero weights", random_graph(150, 600, seed=5, wmin=0, wmax=30)),
    ("grid", generate("grid", rows=12, cols=13, wmin=1, wmax=100, seed=2))]


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("graph", [g for _, g in CLOSURE_GRAPHS], ids=[name for name, _ in CLOSURE_GRAPHS])
def test_upward_closures_answer_like_searches(graph, threads):
    """Every vertex's space composed from its upward neighbours' (stall-on-demand on final distances) answers every
    source like SciPy; each space holds its source at 0 and no vertex twice, and the spaces do not depend on the
    thread count; gather_spaces returns them as upward_spaces would."""
    h = contraction.build(graph, settle=8, hops=3, core_degree=0)
    ptr, verts, dists = contraction.upward_closures(h.up_ptr, h.up_head, h.up_w, h.down_ptr, h.down_tail, h.down_w,
                                                    h.rank, threads)
    ref = reference_distances(graph, range(graph.n)).astype(np.int64)
    ref[ref == graph.inf] = contraction.INF
    for s in range(graph.n):
        assert np.array_equal(_closure_query(h, ptr, verts, dists, s), ref[s]), f"{graph.name} from {s}"
        new = int(h.position[s])
        space = verts[ptr[new]:ptr[new + 1]]
        assert space[0] == new and dists[ptr[new]] == 0 and np.unique(space).size == space.size
    one = contraction.upward_closures(h.up_ptr, h.up_head, h.up_w, h.down_ptr, h.down_tail, h.down_w, h.rank, 1)
    assert all(np.array_equal(a, b) for a, b in zip(one, (ptr, verts, dists)))
    picks = np.array([graph.n - 1, 0, graph.n // 2], dtype=np.int64)
    gp, gv, gd = contraction.gather_spaces(ptr, verts, dists, picks)
    assert np.array_equal(np.diff(gp), np.diff(ptr)[picks])
    assert np.array_equal(gv, np.concatenate([verts[ptr[p]:ptr[p + 1]] for p in picks]))
    assert np.array_equal(gd, np.concatenate([dists[ptr[p]:ptr[p + 1]] for p in picks]))


def test_upward_searches_with_kept_scratch_answer_like_fresh_ones():
    """Searches that keep their scratch between calls (a thread's, stamped by its clock) give what searches with
    fresh arrays give, call after call, with the core kept and not expanded too."""
    graph = generate("grid", rows=30, cols=30, wmin=0, wmax=9, seed=2)
    h = contraction.build(graph, core_degree=8)
    assert h.core > 0
    down = (h.down_ptr, h.down_tail, h.down_w)
    stop = h.rank >= h.n - h.core
    scratch = contraction.search_scratch(h.n)
    for part in (np.arange(0, 900, 37), np.array([5]), np.arange(899, 0, -101)):
        part = part.astype(np.int64)
        for flags in (None, stop):
            fresh = contraction.upward_spaces(h.up_ptr, h.up_head, h.up_w, part, *down, flags)
            kept = contraction.upward_spaces(h.up_ptr, h.up_head, h.up_w, part, *down, flags, scratch)
            assert all(np.array_equal(a, b) for a, b in zip(fresh, kept))
    assert scratch[2][0] == 2 * (25 + 1 + 9)  # one stamp a search


@pytest.mark.needs_mirror("p2p-Gnutella04")
def test_hierarchy_of_gnutella04(mirror):
    graph = add_weights(read_graph(mirror / "p2p-Gnutella04.txt.gz"), 1, 100, 1)
    core = phast.auto_core_degree(graph, SPEC.defaults()["core_degree"])
    assert core == phast.CORE_DEGREE  # hubs of 100 arcs: not road-like
    h = contraction.build(graph, core_degree=core)
    _cpu_matches_scipy(graph, h, np.random.default_rng(4).integers(0, graph.n, 3))


@pytest.mark.slow
@pytest.mark.needs_mirror("USA-road-d.NY")
def test_hierarchy_of_ny_in_bounded_time(mirror):
    graph = read_graph(mirror / "USA-road-d.NY.gr.gz")
    t0 = time.perf_counter()
    core = phast.auto_core_degree(graph, SPEC.defaults()["core_degree"])
    assert core == 0  # road-like: contracted completely
    h = contraction.build(graph, core_degree=core, **{k: SPEC.defaults()[k] for k in ("settle", "hops")})
    assert time.perf_counter() - t0 < 180
    assert h.core == 0
    assert h.shortcuts < 2 * graph.m and h.levels < 400
    _cpu_matches_scipy(graph, h, [0, 123456])


def test_core_degree_auto_tells_road_from_social():
    road = _g(6, [(i, i + 1, 2) for i in range(5)] + [(i + 1, i, 2) for i in range(5)], "path")
    hub = _g(20, [(0, v, 1) for v in range(1, 20)], "star")
    assert phast.auto_core_degree(road, -1) == 0 and phast.auto_core_degree(hub, -1) == phast.CORE_DEGREE
    assert phast.auto_core_degree(hub, 5) == 5


def test_the_host_jit_is_timed_apart_from_the_build():
    """A process's first phast_gpu compiles (or loads) the contraction's host functions on a 4-vertex graph before
    its build, and reports the seconds as host_compile_s, which a solve adds to its compile time, not to the
    preprocessing; later builds find them warm."""
    import gpusp
    from gpusp.solvers import registry

    contraction._WARM[0] = False
    graph = random_graph(20, 60, seed=4)
    first, second = (registry.get("phast_gpu").build(graph, threads=1) for _ in range(2))
    assert first.host_compile_s > 0 and second.host_compile_s == 0.0
    contraction._WARM[0] = False
    res = gpusp.solve(graph, "phast_gpu", 0, warmup=1, trials=1, threads=1)
    assert res.counters["host_compile_s"] > 0 and res.timings.compile_s >= res.counters["host_compile_s"]


@pytest.mark.parametrize("scale, dtype", [(1, np.int32), (10**8, np.int64)])
def test_after_the_warm_up_a_solver_compiles_no_host_function(scale, dtype):
    """The warm-up covers every type a build and the solver's set-up call the host functions with: a first real graph
    (int32 or int64 distances) adds no compiled signature, so no JIT lands in the preprocessing time."""
    from numba.core.registry import CPUDispatcher

    from gpusp.solvers.phast import rounds

    contraction.warm()
    host = [f for mod in (contraction, rounds) for f in vars(mod).values() if isinstance(f, CPUDispatcher)]
    before = {f: len(f.signatures) for f in host}
    graph = random_graph(30, 90, seed=5)
    graph = graph.with_weights(graph.coo()[2].astype(np.int64) * scale)
    assert graph.dtype == dtype
    solver = registry.get("phast_gpu").build(graph, threads=1)
    solver.prepare_sweep(graph.n)
    for core_search in ("host", "device"):  # a query's upward searches, the core kept for the device or crossed
        query = registry.get("phast_gpu").build(graph, threads=1, core_degree=3, core_search=core_search)
        query.upload()
        query.run(np.array([0, 7]))
    assert {f.py_func.__name__: len(f.signatures) - before[f] for f in host if len(f.signatures) > before[f]} == {}
