"""floydwarshall: paper 000's Floyd-Warshall from naive to tiled, and its serial baseline.
Design: docs/solvers/floydwarshall.md.
"""
