"""minplus: paper 004's APSP by repeated min-plus squaring. Design: docs/solvers/minplus.md.
"""
