"""scipy: SciPy's csgraph Dijkstra, the reference every GPU answer is checked against. Design: docs/solvers/scipy.md.
"""
