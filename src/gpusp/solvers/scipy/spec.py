"""The ``scipy`` family's solvers: SciPy's csgraph Dijkstra, the reference every GPU answer is checked against."""

from __future__ import annotations

from ..common.spec import MATRIX, Param, SolverSpec, note

SPECS = (
    SolverSpec("scipy_dijkstra", "sssp", "cpu", "-", "SciPy csgraph Dijkstra (Johnson when weights are "
               "negative): the CPU reference every GPU result is checked against",
               "gpusp.solvers.scipy.reference:ScipySssp", negative_weights=True),
    SolverSpec("scipy_apsp", "apsp", "cpu", "-", "SciPy csgraph Dijkstra from every source (Johnson when "
               "weights are negative)", "gpusp.solvers.scipy.reference:ScipyApsp", negative_weights=True,
               params=(Param("workers", 1, "processes that split the sources (0: every core of the host)",
                             minimum=0),),
               memory=note(MATRIX, "on the host")),
)
