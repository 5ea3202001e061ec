"""APSP as a Bellman-Ford SSSP solver run from every source (paper 004's first APSP idea).

Algorithm
---------
``bellmanford_allsources`` looks up the SSSP solver named by its ``sssp`` parameter in the registry
(``bellmanford_naive`` / ``_stride`` / ``_flag``, ``edgebf_coo``, ``vertexbf_pull`` / ``_push``),
builds one instance of it (the registry is this composite solver's floor: it names, resolves and
builds the inner solver, so no other family is imported), uploads the graph once, then for every
source ``s`` calls the inner ``run(s)`` and ``download()`` and stores the two rows in the host n x n
result. The ``block`` parameter is passed to the inner solver when it takes one (resolved and
checked by the inner spec); the inner solver's other parameters keep their defaults.

Negative weights are accepted when the inner solver accepts them; the inner solver's
NegativeCycleError propagates (every vertex on a negative cycle is itself a source, so a negative
cycle anywhere is found by the time all sources are done).

Timing: ``run`` covers all n inner runs *and* the n row downloads (the inner solver keeps one row on
the device; the rows have to leave it before the next source overwrites them), so per-row transfer
time is part of the run time; it is also reported as the counter ``row_download_ms`` (wall clock).
``download`` only returns the host matrices.

Complexity: n times the inner solver's, e.g. O(n * n * m) for Bellman-Ford; the device holds one
graph and one row, the host the n x n result.

Counters: the inner counters summed over all sources (``iterations``, ``relaxations``,
``launches``... whichever the inner solver reports), ``sources`` and ``row_download_ms``.

This module has no kernels of its own (``compile_targets()`` is empty); the inner modules list theirs.

Paper: seed 004 (An), Bellman-Ford from every source as the first APSP approach.
"""

from __future__ import annotations

import time

import numpy as np

from . import registry
from ..errors import SolverError
from .base import Solver, counters_of


class AllSourcesSolver(Solver):
    """bellmanford_allsources: an SSSP solver run from every source on one uploaded graph."""

    device = "gpu"

    def __init__(self, graph, *, sssp, block):
        super().__init__(graph, sssp=sssp, block=block)
        spec = registry.get(sssp)  # an SSSP solver: the parameter's choices name only those
        if graph.has_negative_weights and not spec.negative_weights:
            raise SolverError(f"{sssp} does not accept negative weights")
        takes_block = any(p.name == "block" for p in spec.params)
        self.inner_params = spec.resolve({"block": block} if takes_block else {})
        self.inner = spec.build(graph, **self.inner_params)
        self.inner_name = sssp

    def upload(self):
        self.inner.upload()

    def run(self, source=None):
        n = self.graph.n
        self.dist = np.empty((n, n), dtype=self.graph.dtype)  # fresh per run: a kept result stays intact
        self.parent = np.empty((n, n), dtype=np.int32)
        totals: dict = {}
        fetch = 0.0
        for s in range(n):
            counters = counters_of(self.inner.run(s))
            t0 = time.perf_counter()
            dist, parent = self.inner.download()
            fetch += time.perf_counter() - t0
            self.dist[s] = dist
            self.parent[s] = parent
            for key, value in counters.items():
                if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
                    totals[key] = totals.get(key, 0) + value
        totals["sources"] = self.graph.n
        totals["row_download_ms"] = fetch * 1e3
        return totals

    def download(self):
        return self.dist, self.parent


def compile_targets():
    """No kernels of its own: the inner SSSP modules list theirs."""
    return []
