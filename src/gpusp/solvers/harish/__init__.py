"""harish: Harish and Narayanan's scatter / check SSSP (paper 001). Design: docs/solvers/harish.md.
"""
