"""Solver implementations, one module per algorithm family (see gpusp.registry for the table)."""
