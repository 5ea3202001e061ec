"""dijkstra: paper 000's serial Dijkstra baselines and its naive GPU APSP. Design: docs/solvers/dijkstra.md.
"""
