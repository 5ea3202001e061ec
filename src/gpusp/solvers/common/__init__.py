"""What several solver families share: the spec machinery (Param, SolverSpec, memory bounds), kernel signatures
for the compile gate, the Solver protocol, launches, device graphs, dense matrices and paper 004's masked rounds.
Design: docs/solvers/common.md.
"""
