"""phast's contraction hierarchy on the host: the CPU query (upward search + sweep) against SciPy on random and real
graphs, determinism, and where contraction stops (core_degree). No device and no simulator: the hierarchy is NumPy and
Numba on the host.
"""

import time

import numpy as np
import pytest
from cases import _g, pairwise, random_graph

from gpusp.data.formats import read_graph
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


def test_hierarchy_is_deterministic():
    graph = random_graph(120, 500, seed=9, wmin=0, wmax=9)
    a, b = contraction.build(graph), contraction.build(graph)
    assert np.array_equal(a.order, b.order) and np.array_equal(a.down_tail, b.down_tail)
    assert (a.shortcuts, a.levels) == (b.shortcuts, b.levels)


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
