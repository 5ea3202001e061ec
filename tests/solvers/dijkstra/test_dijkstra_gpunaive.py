"""dijkstra_gpunaive (paper 000: a thread per source runs Dijkstra on the adjacency matrix) in the CUDA simulator."""

import pytest
from cases import assert_apsp_ok, random_graph, sssp_cases

import gpusp
from gpusp.errors import SolverError
from gpusp.solvers import registry
from gpusp.solvers.common import dense

# the awkward cases (n <= 13), an odd-sized random graph and zero-weight cycles
CASES = [c for c in sssp_cases() if c[1].n <= 13] + [
    ("random-13-positive", random_graph(13, 45, seed=11, wmin=1, wmax=30), 0),
    ("zero-cycles-12", random_graph(12, 24, seed=1132, wmin=0, wmax=0, name="zero-cycles-12"), 0),
]


@pytest.mark.parametrize("label,graph,source", CASES, ids=[c[0] for c in CASES])
def test_dijkstra_matches_reference(label, graph, source):
    res = gpusp.solve(graph, "dijkstra_gpunaive", warmup=0, block=32)
    assert_apsp_ok(graph, res)
    assert res.counters["iterations"] == res.counters["launches"] == 1


def test_dijkstra_more_blocks_and_repeats():
    graph = sssp_cases()[-1][1]  # random-37: two blocks of 32 threads
    res = gpusp.solve(graph, "dijkstra_gpunaive", warmup=1, trials=2, block=32)
    assert_apsp_ok(graph, res)


def test_dijkstra_refuses_negative_weights():
    graph = sssp_cases(negative=True)[-3][1]
    with pytest.raises(SolverError, match="negative weights"):
        gpusp.solve(graph, "dijkstra_gpunaive", warmup=0, block=32)
    with pytest.raises(SolverError, match="negative weights"):
        registry.get("dijkstra_gpunaive").build(graph, block=32)


def test_dijkstra_memory_check(monkeypatch):
    monkeypatch.setattr(dense, "free_device_memory", lambda: 1000)
    with pytest.raises(SolverError, match="device memory"):
        gpusp.solve(random_graph(13, 40, seed=1), "dijkstra_gpunaive", warmup=0, block=32)
