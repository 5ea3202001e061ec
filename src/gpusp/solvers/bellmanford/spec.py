"""The ``bellmanford`` family's solvers: paper 000's vertex-parallel Bellman-Ford and its serial baseline, and
paper 004's Bellman-Ford from every source. The rules behind their automatic settings live here, without Numba."""

from __future__ import annotations

from ..common.spec import BLOCK, CSR, LAUNCHER, N, W, Param, SolverSpec, note, par

STRIDE_BLOCKS_PER_SM = 4  # bellmanford_stride / _flag with grid 0

ROUNDS = Param("rounds", "early", "'early': stop when a round changes nothing; 'fixed': always |V|-1 rounds "
               "as in paper 000", choices=("early", "fixed"))
GRID = Param("grid", 0, f"blocks in the grid-stride launch (0: {STRIDE_BLOCKS_PER_SM} per multiprocessor)",
             minimum=0)
SYNC = Param("sync", "none", "'launch': the host waits for the device after every launch of a round, as paper 000's "
             "host loop (cudaDeviceSynchronize after each kernel: its timing window); 'none': only the flag read waits",
             choices=("none", "launch"))
# the SSSP solvers bellmanford_allsources can run from every source (by name: families never import each other)
PER_SOURCE = ("bellmanford_naive", "bellmanford_stride", "bellmanford_flag", "edgebf_coo", "vertexbf_pull",
              "vertexbf_push")
ON_STREAMS = ("edgebf_coo", "vertexbf_pull", "vertexbf_push")  # their sources can run on streams of their own

SPECS = (
    SolverSpec("bellmanford_cpu", "sssp", "cpu", "000", "serial Bellman-Ford over the edge list",
               "gpusp.solvers.bellmanford.cpu:BellmanFordCpu", params=(ROUNDS,), negative_weights=True),
    SolverSpec("bellmanford_naive", "sssp", "gpu", "000", "thread per vertex relaxes its out-edges from "
               "prevDistance into distance with atomic min, then a copy kernel; parent kernel at the end",
               "gpusp.solvers.bellmanford.rounds:NaiveSolver", params=(BLOCK, ROUNDS, SYNC, LAUNCHER),
               negative_weights=True,
               memory=CSR),
    SolverSpec("bellmanford_stride", "sssp", "gpu", "000", "as naive, with grid-stride loops over vertices "
               "and a fixed grid size", "gpusp.solvers.bellmanford.rounds:StrideSolver",
               params=(BLOCK, GRID, ROUNDS, SYNC, LAUNCHER), negative_weights=True, memory=CSR),
    SolverSpec("bellmanford_flag", "sssp", "gpu", "000", "stride with a per-vertex changed flag: only "
               "vertices whose distance changed last round relax", "gpusp.solvers.bellmanford.rounds:FlagSolver",
               params=(BLOCK, GRID, ROUNDS, SYNC, LAUNCHER), negative_weights=True, memory=CSR),
    SolverSpec("bellmanford_allsources", "apsp", "gpu", "004", "an SSSP solver of the Bellman-Ford "
               "families run from every source", "gpusp.solvers.bellmanford.allsources:AllSourcesSolver",
               params=(Param("sssp", "edgebf_coo", "the SSSP solver run per source", choices=PER_SOURCE),
                       BLOCK,
                       Param("streams", 1, "sources in flight at once, each on a CUDA stream of its own (paper 004 "
                             "Section V.B; its dynamic-parallelism version launches from the device, which Numba "
                             f"cannot compile); streams > 1 takes {', '.join(ON_STREAMS)}: bellmanford_* launch on the "
                             "default stream", minimum=1, maximum=32),
                       LAUNCHER),
               negative_weights=True,
               memory=note(CSR + par("streams") * (2 * W + 16) * N,
                           "on the device; the (w + 4) n^2 result on the host")),
)
