"""packed: paper 003's packed (distance, parent) atomic SSSP and its matrix-product flow.
Design: docs/solvers/packed.md.
"""
