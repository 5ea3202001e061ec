"""The ``gapbs`` family's solver: the GAP Benchmark Suite's CPU delta-stepping, built from its pinned archive."""

from __future__ import annotations

from ....data.graph import DAVIDSON_WIDTH
from ...common.spec import Param, SolverSpec

SPECS = (
    SolverSpec("gapbs_sssp", "sssp", "cpu", "-", "external peer: the GAP Benchmark Suite's delta-stepping "
               "(reference CPU code, OpenMP; its sssp.cc compiled into gpusp's driver, which loads the graph once "
               "and runs every source of a job), built from its pinned source archive, run on the same graph and "
               "sources; its own trial times, its distances checked by gpusp or by its own verifier",
               "gpusp.solvers.peers.gapbs.solver:GapbsSolver",
               params=(Param("threads", 0, "OpenMP threads (0: every core of the host)", minimum=0),
                       Param("delta", 0, f"GAPBS -d bucket width (0: Graph.default_delta(), {DAVIDSON_WIDTH} x mean "
                             "arc weight / mean out-degree)", minimum=0),
                       Param("check", "distances", "distances: each source's distances go back to gpusp's checks; "
                             "verifier: GAPBS's own verifier (a serial Dijkstra) after every trial, timed apart, and "
                             "no distances", choices=("distances", "verifier"))),
               peer=True, offsets64=True),
)
