"""The ``dijkstra`` family's solvers: paper 000's serial Dijkstra baselines and its naive GPU APSP."""

from __future__ import annotations

from ..common.spec import BLOCK, MATRIX, N, W, Param, SolverSpec, note

SPECS = (
    SolverSpec("dijkstra_cpu", "sssp", "cpu", "000", "serial Dijkstra with a binary heap (lazy deletion)",
               "gpusp.solvers.dijkstra.cpu:DijkstraCpu"),
    SolverSpec("dijkstra_cpumatrix", "apsp", "cpu", "000", "paper 000's CPU APSP: serial Dijkstra from every "
               "source with a binary heap, each popped vertex's arcs found by scanning its row of the n x n matrix",
               "gpusp.solvers.dijkstra.cpu:DijkstraMatrixApsp", memory=note(MATRIX, "on the host")),
    SolverSpec("dijkstra_cputhreads", "apsp", "cpu", "001", "paper 001's CPU column: the binary-heap Dijkstra over the "
               "arcs from every source, the sources spread over a few compiled threads (the paper's host ran four)",
               "gpusp.solvers.dijkstra.cpu:DijkstraThreadsApsp",
               params=(Param("threads", 4, "Numba threads the sources are dealt to (capped at NUMBA_NUM_THREADS)",
                             minimum=1),),
               memory=note(MATRIX, "on the host")),
    SolverSpec("dijkstra_gpunaive", "apsp", "gpu", "000", "one thread per source runs Dijkstra on the "
               "adjacency matrix with an O(V^2) linear extract-min", "gpusp.solvers.dijkstra.gpunaive:NaiveApspSolver",
               params=(BLOCK,), memory=(2 * W + 5) * (N * N)),
)
