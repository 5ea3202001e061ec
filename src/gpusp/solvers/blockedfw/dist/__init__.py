"""blockedfw_dist: blocked Floyd-Warshall over the GPUs of one host (docs/solvers/blockedfw.md, "blockedfw_dist")."""
