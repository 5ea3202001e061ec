"""The ``packed`` family's solver: paper 003's packed (distance, parent) 64-bit atomic."""

from __future__ import annotations

from ..common.spec import BLOCK, LAUNCHER, M, N, Param, SolverSpec

SPECS = (
    SolverSpec("packed_atomic", "sssp", "gpu", "003", "one 64-bit atomic updates (distance, parent) "
               "together: dist in the high 32 bits, parent in the low 32",
               "gpusp.solvers.packed.atomic:PackedSolver",
               params=(BLOCK, Param("method", "min", "'min': 64-bit atomic min; 'cas': compare-and-swap loop",
                                    choices=("min", "cas")), LAUNCHER),
               memory=4 * (N + 1) + 8 * M + 16 * N),
)
