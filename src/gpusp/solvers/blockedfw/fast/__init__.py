"""``blockedfw_fast``: register-blocked Floyd-Warshall APSP, large tiles staged in shared memory and an R x R block of
cells per thread, paths through packed (distance, pivot) keys. Design: docs/solvers/blockedfw.md, section
blockedfw_fast.

Modules: :mod:`.variants` (choices, tables, rules; no Numba), :mod:`.consts` (compile-time constants),
:mod:`.phase12` and :mod:`.phase3` (device functions), :mod:`.kernels` (the kernels, cached per constant set),
:mod:`.solver` (:class:`~gpusp.solvers.blockedfw.fast.solver.FastSolver`).
"""
