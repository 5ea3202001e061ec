"""packed_atomic (paper 003) in the CUDA simulator: packed (dist, parent) word, 'min' and 'cas' methods."""

import numpy as np
import pytest
from cases import _g, assert_sssp_ok, pairwise, random_graph, sssp_cases

import gpusp
from gpusp.errors import SolverError
from gpusp.solvers import registry
from gpusp.solvers.packed.atomic import pack, unpack

METHODS = ["min", "cas"]
CASES = sssp_cases() + [
    # 1 -> 3 is a zero-weight tie for vertex 3 (already reached from 5 at distance 1): an unguarded
    # atomic min on the packed word would replace parent 5 by 1, the lower id, closing the loop 3 <-> 1
    ("zero-tie", _g(6, [(5, 3, 1), (3, 1, 0), (1, 3, 0)], "zero-tie"), 5),
    ("zero-tie-2", _g(7, [(6, 4, 2), (6, 5, 2), (4, 0, 0), (0, 1, 0), (1, 4, 0), (5, 1, 0), (1, 2, 3)],
                      "zero-tie-2"), 6),
    ("many-zeros", random_graph(37, 140, seed=5, wmin=0, wmax=2), 9),
]


GRAPHS = {label: (graph, source) for label, graph, source in CASES}
DESIGN = pairwise(graph=list(GRAPHS), method=METHODS, launcher=["native", "numba"])


@pytest.mark.parametrize("cell", DESIGN, ids=["-".join(c.values()) for c in DESIGN])
def test_matches_reference(cell):
    """Every pair of an awkward case (zero-weight ties among them), a method and a launcher meets in some cell."""
    graph, source = GRAPHS[cell["graph"]]
    res = gpusp.solve(graph, "packed_atomic", source, block=32, warmup=0, method=cell["method"],
                      launcher=cell["launcher"])
    assert_sssp_ok(graph, source, res)
    assert res.dist.dtype == np.int32 and res.parent.dtype == np.int32
    assert 1 <= res.counters["iterations"] <= graph.n


@pytest.mark.parametrize("launcher", ["native", "numba"])
def test_launchers_agree_over_sources_and_trials(launcher):
    """Both launchers give exact answers for several sources and trials on one upload (on a GPU 'native' reuses its
    prepared launches; in the simulator both go through Numba)."""
    from gpusp.measure.harness import solve_many

    graph = CASES[-1][1]
    sources = [0, 9, graph.n - 1]
    results = list(solve_many(graph, "packed_atomic", sources, warmup=1, trials=2, block=32, launcher=launcher))
    for source, res in zip(sources, results):
        assert_sssp_ok(graph, source, res)
        assert res.params["launcher"] == launcher


def test_zero_tie_keeps_first_parent():
    label, graph, source = CASES[-3]
    for method in METHODS:
        res = gpusp.solve(graph, "packed_atomic", source, block=32, warmup=0, method=method)
        assert res.parent[3] == 5 and res.parent[1] == 3


def test_refuses_negative_weights():
    graph = sssp_cases(negative=True)[-3][1]
    with pytest.raises(SolverError, match="negative weights"):
        gpusp.solve(graph, "packed_atomic", 0)
    with pytest.raises(SolverError, match="non-negative"):
        registry.get("packed_atomic").build(graph, block=32, method="min")


def test_refuses_int64_distances():
    graph = _g(3, [(0, 1, 2**29), (1, 2, 2**29)], "big")
    assert graph.dtype == np.int64
    with pytest.raises(SolverError, match="int32"):
        gpusp.solve(graph, "packed_atomic", 0, block=32)


def test_bad_method():
    with pytest.raises(SolverError, match="method"):
        gpusp.solve(CASES[2][1], "packed_atomic", 0, method="xor")


@pytest.mark.parametrize("method", METHODS)
def test_repeated_trials_identical(method):
    label, graph, source = CASES[7]  # random-37
    once = gpusp.solve(graph, "packed_atomic", source, block=32, warmup=0, method=method)
    again = gpusp.solve(graph, "packed_atomic", source, block=32, trials=2, warmup=1, method=method)
    np.testing.assert_array_equal(once.dist, again.dist)
    assert once.counters == again.counters
    assert_sssp_ok(graph, source, again)


def test_one_solver_several_sources():
    label, graph, _ = CASES[-1]
    solver = registry.get("packed_atomic").build(graph, block=32, method="cas")
    solver.upload()
    for source in (9, 0, 9):
        solver.run(source)
        dist, parent = solver.download()
        ref = gpusp.solve(graph, "scipy_dijkstra", source, warmup=0)
        np.testing.assert_array_equal(dist, ref.dist)
        assert parent[source] == -1


def test_pack_unpack():
    inf = 2**30 - 1
    words = np.array([pack(0, -1), pack(inf, -1), pack(17, 3), pack(2**31 - 1, 2**31 - 2)], dtype=np.uint64)
    dist, parent = unpack(words)
    assert dist.tolist() == [0, inf, 17, 2**31 - 1]
    assert parent.tolist() == [-1, -1, 3, 2**31 - 2]
    assert pack(5, 9) < pack(5, 10) < pack(6, 0)  # lexicographic (dist, parent) order
