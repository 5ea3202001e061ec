"""nsssp: paper 001's task-parallel APSP, N single-source problems per launch. Design: docs/solvers/nsssp.md.
"""
