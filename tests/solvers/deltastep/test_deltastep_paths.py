"""The delta-stepping family without its shortest-path tree (``paths=False``) in the simulator.

Every solver of the family builds the parents after the distances unless asked not to (GAPBS and Gunrock compute
distances alone): without the tree the distances must be the same, no parent array comes back, the certificate
checks the answer, and no tree launches follow the kernel (zero weights would otherwise grow the tree on the host).
"""

import numpy as np
import pytest
from cases import assert_sssp_ok, sssp_cases

import gpusp

# each solver at the small settings its own tests use in the simulator
SETTINGS = {"deltastep_gpu": dict(block=32), "deltastep_lean": dict(block=32, queue=2), "deltastep_async": dict(block=32),
            "deltastep_cluster": dict(cluster=4), "deltastep_clusterasync": dict(cluster=4),
            "deltastep_pieces": dict(grid=3, block=128),
            "deltastep_clusters": dict(clusters=2, cluster=2, stripe=2, order="ids", block=128)}
CASES = sssp_cases()

pytestmark = pytest.mark.timeout(300)  # polling kernels in the simulator: a stall fails in minutes


@pytest.mark.parametrize("name", sorted(SETTINGS))
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_without_paths_the_same_distances_and_no_tree(name, case):
    _, graph, source = case
    full = gpusp.solve(graph, name, source, warmup=0, **SETTINGS[name])
    bare = gpusp.solve(graph, name, source, warmup=0, paths=False, **SETTINGS[name])
    assert bare.parent is None and full.parent is not None
    np.testing.assert_array_equal(bare.dist, full.dist)
    assert_sssp_ok(graph, source, bare)
    assert bare.counters["launches"] == 1 + bare.counters.get("retries", 0)  # no tree launches after the kernel
    if graph.m and int(graph.weights.min()) <= 0:  # with the tree, zero weights grow it on the host
        assert full.counters["launches"] > bare.counters["launches"]
