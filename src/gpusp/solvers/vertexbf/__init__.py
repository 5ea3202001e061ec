"""vertexbf: paper 004's vertex-parallel Bellman-Ford (pull over in-edges, push over out-edges).

Design: docs/solvers/vertexbf.md.
"""
