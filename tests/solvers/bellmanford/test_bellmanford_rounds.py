"""bellmanford_naive / _stride / _flag (paper 000) in the CUDA simulator against SciPy: a pairwise design over the
awkward cases, the variant, early or fixed rounds and the launcher; negative cycles, grids, repeated runs."""

import numpy as np
import pytest
from cases import _g, assert_sssp_ok, negative_cycle_graph, pairwise, random_graph, sssp_cases

import gpusp
from gpusp.errors import NegativeCycleError, SolverError
from gpusp.solvers import registry
from gpusp.solvers.common.launch import blocks_per_sm
from gpusp.solvers.bellmanford.spec import STRIDE_BLOCKS_PER_SM

VARIANTS = ["bellmanford_naive", "bellmanford_stride", "bellmanford_flag"]
CASES = sssp_cases(negative=True)


def small(name, **params):
    """block=32 and, for the grid-stride variants, one block (the simulator's cost is threads x launches)."""
    return {"block": 32, **({"grid": 1} if name != "bellmanford_naive" else {}), **params}


GRAPHS = {label: (graph, source) for label, graph, source in CASES}
DESIGN = pairwise(graph=list(GRAPHS), name=VARIANTS, rounds=["early", "fixed"], launcher=["native", "numba"],
                  sync=["none", "launch"])


@pytest.mark.parametrize("cell", DESIGN, ids=["-".join(c.values()) for c in DESIGN])
def test_answers(cell):
    """Every pair of an awkward case (negative weights included), a variant, the rounds ('fixed': the paper's |V| - 1
    and the check round, so iterations == |V|), a launcher and the host's wait after each launch meets in some cell."""
    graph, source = GRAPHS[cell["graph"]]
    res = gpusp.solve(graph, cell["name"], source, block=32, warmup=0, rounds=cell["rounds"],
                      launcher=cell["launcher"], sync=cell["sync"])
    assert_sssp_ok(graph, source, res)
    # sync 'launch': the host waits after both launches of every round (paper 000's window), else never
    assert res.counters["syncs"] == (2 * res.counters["iterations"] if cell["sync"] == "launch" else 0)
    if cell["rounds"] == "fixed":
        assert res.counters["iterations"] == graph.n
    else:
        assert 1 <= res.counters["iterations"] <= graph.n


@pytest.mark.parametrize("name", VARIANTS)
@pytest.mark.parametrize("rounds", ["early", "fixed"])
def test_negative_cycle_detected(name, rounds):
    with pytest.raises(NegativeCycleError):
        gpusp.solve(negative_cycle_graph(), name, 0, block=32, warmup=0, rounds=rounds)


def test_unreachable_negative_cycle_is_ignored():
    # the cycle 3 -> 4 -> 3 (weight -2) cannot be reached from 0
    # (SciPy's Johnson refuses any negative cycle, so the serial Bellman-Ford is the reference here)
    graph = _g(5, [(0, 1, 2), (1, 2, -1), (3, 4, -1), (4, 3, -1)], "far-negcycle")
    ref = gpusp.solve(graph, "bellmanford_cpu", 0, warmup=0)
    for name in VARIANTS:
        res = gpusp.solve(graph, name, 0, block=32, warmup=0)
        np.testing.assert_array_equal(res.dist, ref.dist)
        np.testing.assert_array_equal(res.parent, [-1, 0, 1, -1, -1])


@pytest.mark.parametrize("name", VARIANTS)
@pytest.mark.parametrize("launcher", ["native", "numba"])
def test_prepared_launches_serve_every_source_and_trial(name, launcher):
    """The round kernels' launches are built once per upload (Launch): the source and the round stamp are written per
    call, so later sources and trials reuse the same launches, with exact answers (on a GPU 'native' bypasses Numba's
    dispatcher after the first launch; in the simulator both launchers go through it)."""
    from gpusp.measure.harness import solve_many

    _, graph, _ = CASES[-1]  # random-neg: negative weights, unreachable vertices
    sources = [0, graph.n // 2, graph.n - 1]
    results = list(solve_many(graph, name, sources, warmup=1, trials=2, **small(name, launcher=launcher)))
    assert [r.source for r in results] == sources
    for source, res in zip(sources, results):
        assert_sssp_ok(graph, source, res)
        assert res.params["launcher"] == launcher


@pytest.mark.parametrize("name", ["bellmanford_stride", "bellmanford_flag"])
@pytest.mark.parametrize("grid", [1, 2, 3])
def test_grid_sizes(name, grid):
    """A grid of 1-3 blocks of 32 covers n = 101 (not a multiple of 32) with several vertices per thread."""
    graph = random_graph(101, 320, seed=7, wmin=0, wmax=12)
    assert grid * 32 < graph.n
    assert_sssp_ok(graph, 4, gpusp.solve(graph, name, 4, block=32, grid=grid, warmup=0))


def test_naive_n_not_multiple_of_block():
    graph = random_graph(33, 90, seed=11)
    assert_sssp_ok(graph, 32, gpusp.solve(graph, "bellmanford_naive", 32, block=32, warmup=0))


@pytest.mark.parametrize("name", VARIANTS)
def test_repeated_trials_identical(name):
    """Warm-up and trials reuse the device arrays: run() must reset them (and the round stamp)."""
    label, graph, source = CASES[-4]
    once = gpusp.solve(graph, name, source, warmup=0, **small(name))
    again = gpusp.solve(graph, name, source, trials=2, warmup=1, **small(name))
    assert len(again.timings.samples_ms) == 2
    np.testing.assert_array_equal(once.dist, again.dist)
    np.testing.assert_array_equal(once.parent, again.parent)
    assert once.counters == again.counters
    assert_sssp_ok(graph, source, again)


@pytest.mark.parametrize("name", VARIANTS)
def test_one_solver_several_sources(name):
    """The same solver object from different sources gives each source's own answer."""
    label, graph, _ = CASES[-4]
    solver = registry.get(name).build(graph, **small(name))
    solver.upload()
    for source in (5, 0, 5):
        solver.run(source)
        dist, parent = solver.download()
        res = gpusp.solve(graph, "bellmanford_cpu", source, warmup=0)
        np.testing.assert_array_equal(dist, res.dist)


def test_counters():
    label, graph, source = CASES[-4]
    for name in VARIANTS[:2]:
        res = gpusp.solve(graph, name, source, warmup=0, **small(name))
        assert res.counters["relaxations"] == res.counters["iterations"] * graph.m
    res = gpusp.solve(graph, "bellmanford_flag", source, warmup=0, **small("bellmanford_flag"))
    assert "relaxations" not in res.counters and res.counters["launches"] > 2


def test_int64_distances():
    graph = _g(4, [(0, 1, 2**28), (1, 2, 2**28), (0, 2, 2**29 + 7), (2, 3, -5)], "big")
    assert graph.dtype == np.int64
    for name in VARIANTS:
        assert_sssp_ok(graph, 0, gpusp.solve(graph, name, 0, block=32, warmup=0))


def test_bad_parameters():
    graph = CASES[2][1]
    with pytest.raises(SolverError, match="rounds"):
        gpusp.solve(graph, "bellmanford_naive", 0, rounds="sometimes")
    with pytest.raises(SolverError, match="grid"):
        gpusp.solve(graph, "bellmanford_stride", 0, grid=-1)
    with pytest.raises(SolverError, match="no parameter"):
        gpusp.solve(graph, "bellmanford_naive", 0, grid=2)


@pytest.mark.parametrize("name", ["bellmanford_stride", "bellmanford_flag"])
def test_grid_zero_is_the_rule(name):
    """grid=0 (the default) launches spec.STRIDE_BLOCKS_PER_SM blocks per multiprocessor; a grid given is kept."""
    graph = CASES[-4][1]
    assert registry.get(name).build(graph).grid() == blocks_per_sm(STRIDE_BLOCKS_PER_SM)
    assert registry.get(name).build(graph, grid=3).grid() == 3


@pytest.mark.parametrize("name", VARIANTS)
def test_parameters_are_required(name):
    """The classes take the registry's parameters, every one named and without defaults of their own."""
    graph = CASES[2][1]
    with pytest.raises(TypeError):
        registry.get(name).load()(graph)
    assert registry.get(name).build(graph).params == registry.get(name).defaults()
