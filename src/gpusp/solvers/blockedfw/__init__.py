"""blockedfw: blocked Floyd-Warshall APSP on the GPU, paper 002's versions 1.0 to 4.1 (``blockedfw_v10`` ...
``blockedfw_v41``) and the register-blocked ``blockedfw_fast`` (:mod:`.fast`). Design: docs/solvers/blockedfw.md.

Modules: :mod:`.spec` and :mod:`.layout` (no Numba: parameters, block sizes, the bank-conflict rule, the pieces and
their DAGs), :mod:`.cells` (one cell's device functions), :mod:`.globalmem` (1.x kernels), :mod:`.sharedmem` (2.x -
4.x kernels), :mod:`.versions` (the solver classes).
"""
