"""The ``floydwarshall`` family's solvers: paper 000's Floyd-Warshall from naive to tiled, and its serial baseline."""

from __future__ import annotations

from ..common.spec import BLOCK, LAUNCHER, MATRIX, MATRIX_TILES, Param, SolverSpec

TILE = Param("tile", 32, "tile width (paper 000 tiled FW: threads per tile side)", choices=MATRIX_TILES)
ROW_SKIP = Param("row_skip", True, "skip row i of round k when d[i][k] is INF (nothing there can improve); false: "
                 "every j of every row, as paper 000's loops run", choices=(True, False))


def _gpu(variant: str, cls: str, summary: str, params: tuple) -> SolverSpec:
    return SolverSpec(f"floydwarshall_{variant}", "apsp", "gpu", "000", summary,
                      f"gpusp.solvers.floydwarshall.gpu:{cls}", params=params + (LAUNCHER,), negative_weights=True,
                      memory=MATRIX)


SPECS = (
    SolverSpec("floydwarshall_cpu", "apsp", "cpu", "000", "serial Floyd-Warshall on the n x n matrix",
               "gpusp.solvers.floydwarshall.cpu:FloydWarshallCpu", params=(ROW_SKIP,), negative_weights=True),
    _gpu("supernaive", "SuperNaiveSolver", "2-D grid, one thread per (i, j), one launch per k",
         (Param("tile", 16, "block side of the 2-D launch", choices=MATRIX_TILES), ROW_SKIP)),
    _gpu("supernaiveshared", "SuperNaiveSharedSolver", "1-D blocks along a row share d[i][k] through shared memory, "
         "one launch per k", (BLOCK, ROW_SKIP)),
    _gpu("naive", "NaiveSolver", "one thread per row i loops over j, one launch per k", (BLOCK, ROW_SKIP)),
    _gpu("tiledglobal", "TiledGlobalSolver", "three-phase tiled FW in global memory", (TILE,)),
    _gpu("tiledshared", "TiledSharedSolver", "three-phase tiled FW with tiles staged in shared memory", (TILE,)),
)
