"""edgebf: paper 004's edge-parallel Bellman-Ford with an active-vertex mask and early termination, over COO arrays
(``edgebf_coo``) and over the dense matrix (``edgebf_dense``). Design: docs/solvers/edgebf.md; the round protocol
shared with vertexbf: docs/solvers/common.md.
"""
