"""Solvers: the registry (``gpusp.solvers.registry``, the one table of solvers) and one module per
algorithm family, each with its paper, variants and complexity in the docstring."""
