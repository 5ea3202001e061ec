"""multisource: many sources of one job (or every source, for APSP) solved together in one cooperative kernel.
Design: docs/solvers/multisource.md.
"""
