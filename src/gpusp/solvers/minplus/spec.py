"""The ``minplus`` family's solvers: paper 004's APSP by repeated min-plus squaring, naive and tiled."""

from __future__ import annotations

from ..common.spec import LAUNCHER, MATRIX_TILES, N, W, Param, SolverSpec, choose

TRANSPOSE = Param("transpose", False, "multiply by the transposed operand for coalescing", choices=(False, True))
MEMORY = choose("transpose", lambda p: p["transpose"], (3 * W + 8) * (N * N), (2 * W + 8) * (N * N))

SPECS = (
    SolverSpec("minplus_naive", "apsp", "gpu", "004", "ceil(log2 n) min-plus squarings, one thread per "
               "entry, early stop when nothing changes", "gpusp.solvers.minplus.squaring:NaiveSolver",
               params=(TRANSPOSE, LAUNCHER), negative_weights=True, memory=MEMORY),
    SolverSpec("minplus_tiled", "apsp", "gpu", "004", "min-plus squaring with 32 x 32 shared-memory tiles",
               "gpusp.solvers.minplus.squaring:TiledSolver",
               params=(Param("tile", 32, "tile side", choices=MATRIX_TILES), TRANSPOSE, LAUNCHER),
               negative_weights=True, memory=MEMORY),
)
