"""The ``edgebf`` family's solvers: paper 004's edge-parallel Bellman-Ford over COO arrays and over the dense
matrix."""

from __future__ import annotations

from ..common.spec import BLOCK, LAUNCH, LAUNCHER, M, N, W, Param, SolverSpec

EDGES_PER_THREAD = (1, 2, 4, 8, 16, 32, 64)

SPECS = (
    SolverSpec("edgebf_coo", "sssp", "gpu", "004", "thread per edge (k edges per thread, coalesced) on COO "
               "arrays with mask / next mask / flag and early termination", "gpusp.solvers.edgebf.coo:CooSolver",
               params=(BLOCK, Param("edges_per_thread", 1, "edges each thread relaxes (stride = grid size, "
                                    "coalesced)", choices=EDGES_PER_THREAD), LAUNCH, LAUNCHER),
               negative_weights=True, memory=(8 + W) * M + (2 * W + 12) * N),
    SolverSpec("edgebf_dense", "sssp", "gpu", "004", "edge-parallel Bellman-Ford on the dense adjacency "
               "matrix (for complete graphs); the matrix from pageable or pinned memory, or streamed in pieces "
               "overlapped with the first round", "gpusp.solvers.edgebf.dense:DenseSolver",
               params=(BLOCK, Param("transfer", "pageable", "'pageable', 'pinned', or 'streams' (the upload moves "
                                    "into every run, piece by piece, overlapped with round 1)",
                                    choices=("pageable", "pinned", "streams")),
                       Param("chunks", 2, "row pieces (and streams) with transfer='streams'", choices=(2, 4, 8)),
                       Param("layout", "coalesced", "'coalesced': the threads of a warp read neighbouring entries of "
                             "one matrix row; 'strided': the row index on x, so a warp's reads are a row apart "
                             "(paper 004's non-coalesced version)", choices=("coalesced", "strided")),
                       Param("edges_per_thread", 1, "matrix entries each thread relaxes in a 2-D grid-stride loop "
                             "(paper 004's Alg. 5)", choices=EDGES_PER_THREAD),
                       LAUNCHER),
               negative_weights=True, memory=W * (N * N) + (2 * W + 8) * N),
)
