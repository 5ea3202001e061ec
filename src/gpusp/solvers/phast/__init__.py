"""phast: PHAST, downward sweeps over a contraction hierarchy, many sources at once. Design: docs/solvers/phast.md.
"""
