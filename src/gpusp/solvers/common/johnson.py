"""Johnson's reweighting, for the solvers that need w >= 0 yet take negative weights (registry
``negative_weights="johnson"``, parameter ``reweight``): potentials h from one Bellman-Ford from a virtual source
joined to every vertex by a zero-weight arc, the graph with reduced weights w + h(u) - h(v) >= 0 the solver runs on,
and its rows mapped back exactly, d(s, t) = d'(s, t) - h(s) + h(t), INF kept. A negative cycle anywhere in the graph
(the virtual source reaches every vertex) raises NegativeCycleError naming its vertices. Design:
docs/solvers/common.md, "johnson".
"""

from __future__ import annotations

import dataclasses
import functools
import time

import numpy as np
from numba import njit, prange

from ...data.graph import Graph
from ...errors import NegativeCycleError, SolverError

SHOWN = 12  # vertices of a negative cycle a message lists


@njit(cache=True)
def _parent_cycle(parent, mark):
    """A vertex on a cycle of parent pointers, or -1: each walk marks what it visits with its start."""
    mark[:] = -1
    for s in range(parent.size):
        v = s
        while v >= 0 and mark[v] < 0:
            mark[v] = s
            v = parent[v]
        if v >= 0 and mark[v] == s:
            return v
    return -1


@njit(cache=True)
def _virtual_source(indptr, indices, weights, floor, dist, parent, active, mark):
    """Bellman-Ford from the virtual source, in place: ``dist`` starts at 0 (its zero arcs, round 1) and each round
    relaxes the out-arcs of the vertices whose distance fell since their last scan. Returns (rounds, v): v = -1 once
    a round changes nothing, else a vertex whose parent chain runs into a negative cycle."""
    n = dist.size
    last = -1
    for r in range(1, n + 1):  # n + 1 vertices: shortest walks take at most n arcs, the first the virtual one
        changed = False
        for u in range(n):
            if not active[u]:
                continue
            active[u] = False
            du = dist[u]
            for e in range(indptr[u], indptr[u + 1]):
                v = indices[e]
                nd = du + weights[e]
                if nd < dist[v]:
                    dist[v] = nd
                    parent[v] = u
                    active[v] = True
                    changed = True
                    last = v
                    if nd < floor:  # shorter than any simple path: a cycle, found before a long walk can overflow
                        return r, v
        if not changed:
            return r, -1
        if r & (r - 1) == 0:  # rounds 1, 2, 4, 8, ...: a cycle of parents is a negative cycle, found early
            on = _parent_cycle(parent, mark)
            if on >= 0:
                return r, on
    return n, last  # a change in round n + 1 (counting the virtual source's): a negative cycle


@njit(cache=True, parallel=True)
def _restore(dist, h, hs, inf_in, inf_out, out, bad):
    """out[i, t] = dist[i, t] - hs[i] + h[t] in int64, INF for INF, a row at a time; bad[i] = 1 where a value falls
    outside out's range."""
    for i in prange(dist.shape[0]):
        for t in range(dist.shape[1]):
            d = dist[i, t]
            if d == inf_in:
                out[i, t] = inf_out
                continue
            v = np.int64(d) - hs[i] + h[t]
            if v <= -inf_out or v >= inf_out:
                bad[i] = 1
            out[i, t] = v


def negative_cycle(graph: Graph, parent: np.ndarray, start: int) -> list[int]:
    """The cycle of ``parent`` pointers that the chain from ``start`` runs into, in arc order, from its smallest
    vertex."""
    v = int(start)
    for _ in range(graph.n):  # n steps along the chain end on its cycle
        if parent[v] < 0:  # not a chain into a cycle (cannot happen): look at every vertex's chain
            v = int(_parent_cycle(parent, np.empty(graph.n, dtype=np.int64)))
            if v < 0:
                return []
            break
        v = int(parent[v])
    cycle = [v]
    u = int(parent[v])
    while u != v:
        cycle.append(u)
        u = int(parent[u])
    cycle.reverse()  # parent[b] = a is the arc a -> b
    first = cycle.index(min(cycle))
    return cycle[first:] + cycle[:first]


def cycle_weight(graph: Graph, cycle: list[int]) -> int:
    """The weight of ``cycle`` over the lightest arc between each pair of consecutive vertices."""
    total = 0
    for a, b in zip(cycle, cycle[1:] + cycle[:1]):
        arcs = slice(int(graph.indptr[a]), int(graph.indptr[a + 1]))
        total += int(graph.weights[arcs][graph.indices[arcs] == b].min())
    return total


def refuse_cycle(graph: Graph, cycle: list[int], name: str):
    """NegativeCycleError naming ``cycle`` (its first SHOWN vertices, 0-based ids) and its weight."""
    if not cycle:
        raise NegativeCycleError(f"{name}: a negative-weight cycle in {graph.name}; Johnson's potentials are undefined")
    shown = " -> ".join(map(str, cycle[:SHOWN] + cycle[:1])) if len(cycle) <= SHOWN else \
        " -> ".join(map(str, cycle[:SHOWN])) + " -> ..."
    raise NegativeCycleError(f"{name}: negative-weight cycle {shown} ({len(cycle)} vertices, 0-based ids; weight "
                             f"{cycle_weight(graph, cycle)}) in {graph.name}: Johnson's potentials are undefined, "
                             "whether or not the sources reach it", cycle=cycle)


@dataclasses.dataclass(frozen=True)
class Reweighting:
    """A graph's potentials ``h`` (int64, <= 0), the ``reduced`` graph (w + h(u) - h(v) >= 0, its dtype chosen
    again: int64 where the reduced paths need it) and what computing them took."""

    graph: Graph
    potentials: np.ndarray
    reduced: Graph
    rounds: int
    seconds: float
    compile_seconds: float

    @property
    def nbytes(self) -> int:
        """Host bytes kept: the potentials and the reduced weights."""
        return self.potentials.nbytes + self.reduced.weights.nbytes

    def counters(self) -> dict:
        """The potentials' time, Bellman-Ford rounds and JIT compile or cache load (preparation, in no trial)."""
        return {"reweight_s": self.seconds, "reweight_rounds": self.rounds, "reweight_compile_s": self.compile_seconds}

    def restore(self, dist: np.ndarray, sources) -> np.ndarray:
        """Rows of reduced distances, row i from ``sources[i]``, as the graph's distances d' - h(s) + h(t) in its
        dtype; unreachable stays INF."""
        dist = np.asarray(dist)
        rows = dist.reshape(-1, self.graph.n) if dist.size else dist.reshape(0, self.graph.n)
        out = np.empty(rows.shape, dtype=self.graph.dtype)
        bad = np.zeros(rows.shape[0], dtype=np.uint8)
        hs = self.potentials[np.asarray(sources, dtype=np.int64).reshape(-1)]
        _restore(rows, self.potentials, hs, rows.dtype.type(self.reduced.inf), out.dtype.type(self.graph.inf), out,
                 bad)
        if bad.any():  # exact arithmetic cannot get here
            raise SolverError(f"distances of {self.graph.name} mapped back past its {self.graph.dtype} range")
        return out.reshape(dist.shape)


@functools.cache
def _compiled(offsets, reduced, distances) -> None:
    """Compile (or load from the cache) the potentials' function for arc offsets of dtype ``offsets`` and the
    mapping back from ``reduced`` to ``distances`` rows."""
    one = np.zeros(1, dtype=np.int64)
    _virtual_source(np.zeros(2, dtype=offsets), np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int64), 0, one,
                    one.copy(), np.ones(1, dtype=np.bool_), one.copy())
    _restore(np.zeros((1, 1), dtype=reduced), one, one, reduced.type(0), distances.type(1),
             np.zeros((1, 1), dtype=distances), np.zeros(1, dtype=np.uint8))


def reweighting(graph: Graph, reweight: str, name: str) -> Reweighting | None:
    """Johnson's reweighting of ``graph`` for solver ``name``: None where every weight is >= 0; SolverError where
    ``reweight`` is 'never'; NegativeCycleError naming a negative cycle; WeightOverflowError where the reduced paths
    would not fit int64."""
    if not graph.has_negative_weights:
        return None
    if reweight == "never":
        raise SolverError(f"{name} does not accept negative weights with reweight=never (it needs w >= 0); "
                          "reweight=auto runs it on Johnson's reduced weights")
    t0 = time.perf_counter()
    _compiled(graph.indptr.dtype, np.dtype(np.int32), graph.dtype)  # the JIT's compile or cache load, once a process
    t1 = time.perf_counter()
    n = graph.n
    dist = np.zeros(n, dtype=np.int64)
    parent = np.full(n, -1, dtype=np.int64)
    rounds, on = _virtual_source(graph.indptr, graph.indices, graph.weights.astype(np.int64), -graph.path_bound,
                                 dist, parent, np.ones(n, dtype=np.bool_), np.empty(n, dtype=np.int64))
    if on >= 0:
        refuse_cycle(graph, negative_cycle(graph, parent, on), name)
    tails = np.repeat(np.arange(n, dtype=np.int64), np.diff(graph.indptr))
    weights = graph.weights.astype(np.int64) + dist[tails] - dist[graph.indices]
    reduced = dataclasses.replace(graph, weights=weights)  # the dtype is chosen again, int64 where needed
    t2 = time.perf_counter()
    _compiled(graph.indptr.dtype, reduced.dtype, graph.dtype)  # where the reduced rows need int64
    t3 = time.perf_counter()
    return Reweighting(graph, dist, reduced, int(rounds), t2 - t1, (t1 - t0) + (t3 - t2))
