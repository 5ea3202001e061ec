"""deltastep_cluster (near-far delta-stepping in one thread-block cluster) in the simulator, and its PTX.

The simulator has no clusters: one block of ``cluster x per`` threads stands for the cluster's ranks, each rank's
shared memory a row of a global array (gpusp.solvers.deltastep.dsmem), so these tests check the ownership of vertices by
ranks, the queues (shared and overflowing to global memory), the marks, the splits and termination; the inline PTX
is assembled by ptxas for sm_90 below, and the H200 run checks the hardware (benchmarks/sssp-cluster-h200.md).
"""

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from cases import _g, assert_sssp_ok, random_graph, sssp_cases

import gpusp
from gpusp.errors import SolverError
from gpusp.measure.harness import solve_many
from gpusp.solvers import registry
from gpusp.solvers.deltastep import spec as rules

CASES = sssp_cases()


def _solve(graph, source=0, **kw):
    kw.setdefault("warmup", 0)
    kw.setdefault("cluster", 4)
    return gpusp.solve(graph, "deltastep_cluster", source, **kw)


@pytest.mark.parametrize("label,graph,source", CASES, ids=[c[0] for c in CASES])
def test_matches_reference(label, graph, source):
    res = _solve(graph, source)
    assert_sssp_ok(graph, source, res)
    assert res.counters["iterations"] >= 1 and res.counters["cluster"] == 4


@pytest.mark.parametrize("cluster,delta,lanes,queue,owner", [(1, 1, 1, 1024, "cyclic"), (2, 10**6, 2, 1, "range"),
                                                             (16, 3, 4, 2, "cyclic"), (8, 0, 8, 1024, "range")])
def test_clusters_deltas_and_queue_overflow(cluster, delta, lanes, queue, owner):
    """Ranks that own one vertex or many, cyclic or by ranges, Dijkstra-like and Bellman-Ford-like buckets, queues
    that spill to global memory at once (queue 1) or never; 37 vertices are not a multiple of any cluster size but 1."""
    graph = random_graph(37, 160, seed=8, wmin=0, wmax=12)
    res = _solve(graph, 4, cluster=cluster, delta=delta, lanes=lanes, queue=queue, owner=owner)
    assert_sssp_ok(graph, 4, res)
    assert res.counters["queue"] == min(queue, -(-37 // cluster))


def test_delta_one_expands_each_vertex_once():
    """Weights >= 1 and delta = 1: every bucket holds one distance, so every reached vertex is expanded exactly once
    (Dijkstra's order); a second expansion or a lost one changes the count."""
    graph = random_graph(60, 240, seed=11, wmin=1, wmax=9)
    res = _solve(graph, 0, delta=1)
    assert_sssp_ok(graph, 0, res)
    reached = res.dist != res.inf
    assert res.counters["relaxations"] == int(np.diff(graph.indptr)[reached].sum())
    assert res.counters["buckets"] >= 1


def test_chain_and_hub():
    """A chain of 40 vertices crossing every rank (a round per hop, the queue handed from rank to rank) and a hub
    whose 30 arcs land on every rank in one round."""
    chain = _g(40, [(i, i + 1, 1 + i % 3) for i in range(39)], "chain")
    res = _solve(chain, 0, delta=10**6)
    assert_sssp_ok(chain, 0, res)
    assert res.counters["iterations"] == 40  # Bellman-Ford rounds: one per hop, and the last finds nothing
    hub = _g(31, [(0, i, i % 5) for i in range(1, 31)] + [(i, i + 1, 2) for i in range(1, 30)], "hub")
    assert_sssp_ok(hub, 0, _solve(hub, 0, queue=2))


def test_several_sources_reuse_the_solver():
    graph = random_graph(29, 90, seed=3)
    for r in solve_many(graph, "deltastep_cluster", [0, 7, 28], warmup=1, trials=2, cluster=4):
        assert_sssp_ok(graph, r.source, r)


def test_refuses_int64_distances():
    graph = _g(3, [(0, 1, 2**29), (1, 2, 2**29)], "heavy")
    assert graph.dtype == np.int64
    with pytest.raises(SolverError, match="int32 distances"):
        _solve(graph, 0)


def test_shared_memory_bound_names_the_limit():
    limit = rules.cluster_max_n(1, 1)
    graph = gpusp.Graph.from_edges(limit + 1, np.array([0]), np.array([1]), np.array([1]), name="wide")
    with pytest.raises(SolverError, match=f"n <= {limit}"):
        _solve(graph, 0, cluster=1, queue=1)
    spec = registry.get("deltastep_cluster")
    assert spec.max_n == rules.cluster_max_n(16, 1) and "n <=" in spec.why_not(spec.max_n + 1, 0)
    assert spec.why_not(264_346, 733_846) is None  # USA-road-d.NY fits a cluster of 16
    # the planner's view, under the parameters a config gives: the same reasons before any job runs
    assert spec.why_not(limit, 0, params={"cluster": 1, "queue": 1}) is None
    assert f"n <= {limit}" in spec.why_not(limit + 1, 0, params={"cluster": 1, "queue": 1})
    assert "int32 distances" in spec.why_not(100, 200, itemsize=8)


_PTXAS = r"""
import importlib, re, subprocess, sys, tempfile
from gpusp.solvers.common import gate
from gpusp.solvers.compilecheck import patch_current_device
patch_current_device()
from numba import cuda
for module in sys.argv[1:]:
    importlib.import_module(module)
    for label, kernel, sig in gate.targets(module):
        block = int(label.split("block=")[1].rstrip("]"))
        ptx, _ = cuda.compile_ptx(kernel.py_func, sig, cc=(9, 0), launch_bounds=(block, 1))
        ptx = re.sub(r"^\.version \d+\.\d+", ".version 8.0", ptx, flags=re.M)  # any ptxas of CUDA >= 12.0 takes it
        with tempfile.NamedTemporaryFile("w", suffix=".ptx") as fh:
            fh.write(ptx)
            fh.flush()
            out = subprocess.run(["ptxas", "-arch=sm_90", "-v", "-o", "/dev/null", fh.name], text=True,
                                 capture_output=True)
        print(module, label, out.returncode, out.stderr.replace("\n", " "))
"""
# module -> the block sizes that must assemble without spills
SPILL_FREE = {"gpusp.solvers.deltastep.cluster": (512, 1024), "gpusp.solvers.deltastep.clusterasync": (512, 1024),
              "gpusp.solvers.deltastep.clusters": (512,)}


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="no ptxas on PATH (the CUDA toolkit's assembler)")
def test_inline_ptx_assembles_for_sm90():
    """The cluster instructions are inline PTX that NVVM passes through unchecked: ptxas must take them, and a block
    of each ``SPILL_FREE`` size must fit its registers without spills (deltastep_cluster and deltastep_clusterasync
    at 1,024 threads, 64 registers a thread; deltastep_clusters at its default 512, 128 a thread: at 1,024 it spills
    a little, as deltastep_pieces does). All three modules in one helper process: Numba's CUDA target and NVVM are
    loaded once."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    out = subprocess.run([sys.executable, "-c", _PTXAS, *SPILL_FREE], env=env, capture_output=True, text=True,
                         timeout=850)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.strip().splitlines()
    assert sorted(line.split(" ", 1)[0] for line in lines) == sorted(list(SPILL_FREE) * 2)  # two blocks a module
    for line in lines:
        module, label, code, log = line.split(" ", 3)
        assert code == "0", line
        block = int(label.split("block=")[1].rstrip("]"))
        regs = int(log.split("Used ")[1].split(" registers")[0])
        assert regs <= 65536 // block, line
        assert "0 bytes spill stores" in log or block not in SPILL_FREE[module], line


def test_the_planner_skips_what_the_cluster_cannot_hold_with_the_reason():
    from gpusp.plan import expand_jobs, validate_config

    small = rules.cluster_max_n(1, 1)
    config = validate_config({"graphs": {"wide": {"generate": "ring", "params": {"n": small + 1}},
                                         "narrow": {"generate": "ring", "params": {"n": 64}}},
                              "solvers": [{"name": "deltastep_cluster", "params": {"cluster": [1], "queue": [1]}}]})
    jobs, skipped = expand_jobs(config)[:2]
    assert [j.graph for j in jobs] == ["narrow"]
    assert [s["graph"] for s in skipped] == ["wide"] and f"n <= {small}" in skipped[0]["reason"]
