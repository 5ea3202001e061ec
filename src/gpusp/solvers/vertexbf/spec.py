"""The ``vertexbf`` family's solvers: paper 004's vertex-parallel Bellman-Ford, pulling over in-edges or pushing
over out-edges."""

from __future__ import annotations

from ..common.spec import BLOCK, CSR, LAUNCH, LAUNCHER, N, SolverSpec, note

SPECS = (
    SolverSpec("vertexbf_pull", "sssp", "gpu", "004", "thread per vertex reads its incoming edges and "
               "takes the minimum (no atomics)", "gpusp.solvers.vertexbf.pull:PullSolver", params=(BLOCK, LAUNCHER),
               negative_weights=True, memory=CSR + note(8 * N, "the reverse CSR's second distance buffer")),
    SolverSpec("vertexbf_push", "sssp", "gpu", "004", "thread per vertex pushes along its outgoing edges "
               "with atomic min", "gpusp.solvers.vertexbf.push:PushSolver", params=(BLOCK, LAUNCH, LAUNCHER),
               negative_weights=True, memory=CSR),
)
