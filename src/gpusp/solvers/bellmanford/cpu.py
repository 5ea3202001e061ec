"""``bellmanford_cpu``: serial Bellman-Ford over the CSR arcs (paper 000's CPU baseline), compiled with Numba's CPU
JIT; stops after a quiet round or runs the paper's fixed |V| - 1 rounds, and finds a reachable negative cycle in round
|V|. Design: docs/solvers/bellmanford.md.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ...errors import NegativeCycleError
from ..common.base import Solver


@njit(cache=True)
def _bellman_ford(indptr, indices, weights, source, inf, fixed, dist, parent):
    n = dist.size
    dist[:] = inf
    parent[:] = -1
    dist[source] = 0
    rounds = 0
    for r in range(n):
        changed = False
        for u in range(n):
            du = dist[u]
            if du == inf:
                continue
            for e in range(indptr[u], indptr[u + 1]):
                v = indices[e]
                nd = du + weights[e]
                if nd < dist[v]:
                    dist[v] = nd
                    parent[v] = u
                    changed = True
        rounds = r + 1
        if r == n - 1:
            return rounds, changed  # a change in round n means a reachable negative cycle
        if not changed and not fixed:
            return rounds, False
    return rounds, False


class BellmanFordCpu(Solver):
    def __init__(self, graph, *, rounds):
        super().__init__(graph, rounds=rounds)
        self.fixed = rounds == "fixed"

    def run(self, source):
        g = self.graph
        self.dist = np.empty(g.n, dtype=g.dtype)
        self.parent = np.empty(g.n, dtype=np.int32)
        rounds, cycle = _bellman_ford(g.indptr, g.indices, g.weights, source, g.dtype.type(g.inf),
                                      self.fixed, self.dist, self.parent)
        if cycle:
            raise NegativeCycleError()
        return {"iterations": int(rounds), "relaxations": int(rounds) * g.m}
