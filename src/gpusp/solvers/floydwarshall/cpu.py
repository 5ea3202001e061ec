"""``floydwarshall_cpu``: serial Floyd-Warshall on the n x n matrix with a predecessor matrix (paper 000's CPU
baseline), compiled with Numba's CPU JIT."""

from __future__ import annotations

import numpy as np
from numba import njit

from ...data.graph import dense_predecessors
from ...errors import NegativeCycleError
from ..common.base import Solver


@njit(cache=True)
def fw_step(d, p, inf, k, row_skip, nonnegative):
    """Round k on (d, p) in place; False as soon as a diagonal entry turns negative (a negative cycle: stop before
    repeated negative sums can wrap around). ``row_skip``: a row whose d[i][k] is INF is passed over. Else every j is
    visited, as paper 000's loop does: with ``nonnegative`` weights the sum is taken without an INF test (two distances
    of at most INF fit the dtype, and a sum with INF never beats a distance), because a test of the loop-invariant
    d[i][k] lets the compiler drop the row all the same; with negative weights the tests stay (INF plus a negative
    weight would pass for a path), and so may the compiler's skip."""
    n = d.shape[0]
    for i in range(n):
        dik = d[i, k]
        if row_skip and dik == inf:
            continue
        if nonnegative and not row_skip:
            for j in range(n):
                through = dik + d[k, j]
                if through < d[i, j]:
                    d[i, j] = through
                    p[i, j] = p[k, j]
        else:
            for j in range(n):
                dkj = d[k, j]
                if dik != inf and dkj != inf and dik + dkj < d[i, j]:
                    d[i, j] = dik + dkj
                    p[i, j] = p[k, j]
        if d[i, i] < 0:
            return False
    return True


@njit(cache=True)
def _floyd_warshall(d, p, inf, row_skip, nonnegative):
    """Every round k (:func:`fw_step`); False at a negative cycle."""
    for k in range(d.shape[0]):
        if not fw_step(d, p, inf, k, row_skip, nonnegative):
            return False
    return True


class FloydWarshallCpu(Solver):
    def __init__(self, graph, *, row_skip=True):
        super().__init__(graph, row_skip=row_skip)

    def run(self, source=None):
        g = self.graph
        self.dist = g.to_dense()
        self.parent = dense_predecessors(self.dist, g.inf)
        if not _floyd_warshall(self.dist, self.parent, g.dtype.type(g.inf), bool(self.params["row_skip"]),
                               not g.has_negative_weights) or (
                np.diagonal(self.dist) < 0).any():
            raise NegativeCycleError(vertex=int(np.flatnonzero(np.diagonal(self.dist) < 0)[0]))
        return {"iterations": g.n, "relaxations": g.n ** 3}
