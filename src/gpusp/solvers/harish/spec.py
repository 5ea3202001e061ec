"""The ``harish`` family's solver: Harish and Narayanan's scatter / check SSSP (paper 001)."""

from __future__ import annotations

from ..common.spec import BLOCK, CSR, LAUNCHER, N, W, SolverSpec

SPECS = (
    SolverSpec("harish_scattercheck", "sssp", "gpu", "001", "Harish-Narayanan: scatter kernel relaxes "
               "masked vertices into an update array, check kernel commits, re-masks and sets the flag",
               "gpusp.solvers.harish.scattercheck:ScatterCheckSolver", params=(BLOCK, LAUNCHER),
               memory=CSR + W * N),
)
