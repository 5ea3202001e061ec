"""bellmanford: paper 000's vertex-parallel Bellman-Ford, its serial baseline, and paper 004's Bellman-Ford from
every source. Design: docs/solvers/bellmanford.md.
"""
