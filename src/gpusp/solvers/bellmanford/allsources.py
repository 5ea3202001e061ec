"""APSP as a Bellman-Ford SSSP solver run from every source (paper 004's first APSP idea).

Algorithm
---------
``bellmanford_allsources`` looks up the SSSP solver named by its ``sssp`` parameter in the registry
(``bellmanford_naive`` / ``_stride`` / ``_flag``, ``edgebf_coo``, ``vertexbf_pull`` / ``_push``),
builds one instance of it (the registry is this composite solver's floor: it names, resolves and
builds the inner solver, so no other family is imported), uploads the graph once, then runs every
source and stores its two rows in the host n x n result. ``block`` and ``launcher`` are passed to the
inner solver when it takes them (resolved and checked by the inner spec); its other parameters keep
their defaults (edgebf_coo and vertexbf_push: rounds launched from the host).

Variants (``streams``, paper 004 Section V.B):

* ``streams`` = 1 - one source after another: the inner ``run(s)`` and ``download()`` per source.
* ``streams`` = k > 1 - k sources in flight at once (the report's streams version). The inner solver
  gives k *lanes* (its per-source state - distances, masks, flags, parents, tree buffers - with the
  launches of a round, each on a CUDA stream of its own, sharing the one uploaded graph). The host
  queues a round on every lane, then goes round the lanes: it waits for a lane's flag (a read on that
  stream alone), queues its next round, or, once its source converged, queues its tree, copies its
  rows out and starts the next source on it; so one source's round runs on the device while the host
  handles another. Only the edgebf family's solvers have lanes (edgebf_coo, vertexbf_pull,
  vertexbf_push); the bellmanford_* solvers launch on the default stream and are refused with
  streams > 1. The report's dynamic-parallelism version (a parent kernel launching a child kernel per
  source) cannot be built: Numba compiles no device-side launches. In the CUDA simulator the streams
  run one after another; the answers are the same.

Negative weights are accepted when the inner solver accepts them; the inner solver's
NegativeCycleError propagates (every vertex on a negative cycle is itself a source, so a negative
cycle anywhere is found by the time all sources are done).

Timing: ``run`` covers all n inner runs *and* the n row downloads (the inner solver keeps one row on
the device per lane; the rows have to leave it before the next source overwrites them), so per-row
transfer time is part of the run time; it is also reported as the counter ``row_download_ms`` (wall
clock; with streams it includes waiting for the lane's tree, which precedes the copy on its stream).
``download`` only returns the host matrices.

Complexity: n times the inner solver's, e.g. O(n * n * m) for Bellman-Ford; the device holds one
graph and one row per lane (``streams`` rows, each with its masks and tree buffers), the host the n x n
result.

Counters: the inner counters summed over all sources (``iterations``, ``relaxations``,
``launches``... whichever the inner solver reports; the same with any ``streams``), ``sources`` and
``row_download_ms``.

This module has no kernels of its own (``compile_targets()`` is empty); the inner modules list theirs.

Paper: seed 004 (An), Section V.B: Bellman-Ford from every source as the first APSP approach, its
sources overlapped on streams.
"""

from __future__ import annotations

import time

import numpy as np

from .. import registry
from ...errors import SolverError
from ..common.base import Solver, counters_of


class AllSourcesSolver(Solver):
    """bellmanford_allsources: an SSSP solver run from every source on one uploaded graph, one source at a time or
    ``streams`` sources in flight on streams of their own."""

    device = "gpu"

    def __init__(self, graph, *, sssp, block, streams, launcher):
        super().__init__(graph, sssp=sssp, block=block, streams=streams, launcher=launcher)
        spec = registry.get(sssp)  # an SSSP solver: the parameter's choices name only those
        if graph.has_negative_weights and not spec.negative_weights:
            raise SolverError(f"{sssp} does not accept negative weights")
        names = {p.name for p in spec.params}
        passed = {"block": block, "launcher": launcher}
        self.inner_params = spec.resolve({k: v for k, v in passed.items() if k in names})
        self.inner = spec.build(graph, **self.inner_params)
        self.inner_name = sssp
        self.streams = streams
        if streams > 1 and not hasattr(self.inner, "lanes"):
            raise SolverError(f"streams={streams} needs an SSSP solver whose per-source state can live on a stream "
                              f"of its own (edgebf_coo, vertexbf_pull, vertexbf_push); {sssp} launches on the "
                              "default stream: use streams=1")
        self.lanes = []

    def upload(self):
        self.inner.upload()
        if self.streams > 1:
            self.lanes = self.inner.lanes(min(self.streams, max(1, self.graph.n)))

    def run(self, source=None):
        n = self.graph.n
        self.dist = np.empty((n, n), dtype=self.graph.dtype)  # fresh per run: a kept result stays intact
        self.parent = np.empty((n, n), dtype=np.int32)
        totals: dict = {}
        fetch = self._run_lanes(totals) if self.lanes else self._run_one_by_one(totals)
        totals["sources"] = self.graph.n
        totals["row_download_ms"] = fetch * 1e3
        return totals

    def _run_one_by_one(self, totals: dict) -> float:
        """Every source through the inner solver's run and download; returns the seconds spent downloading."""
        fetch = 0.0
        for s in range(self.graph.n):
            counters = counters_of(self.inner.run(s))
            t0 = time.perf_counter()
            dist, parent = self.inner.download()
            fetch += time.perf_counter() - t0
            self.dist[s] = dist
            self.parent[s] = parent
            _add(totals, counters)
        return fetch

    def _run_lanes(self, totals: dict) -> float:
        """``streams`` sources in flight, each on its lane (a stream with its own state): the host queues a round
        on every lane before it waits for the first lane's flag, so rounds of different sources overlap on the
        device. A lane whose source converged queues its tree and rows, then takes the next source."""
        sources = iter(range(self.graph.n))
        active = []
        for lane in self.lanes:
            s = next(sources, None)
            if s is None:
                break
            lane.start(s)
            lane.issue()
            active.append((lane, s))
        fetch = 0.0
        while active:
            still = []
            for lane, s in active:
                if not lane.settle():
                    lane.issue()
                    still.append((lane, s))
                    continue
                _add(totals, lane.finish(s))
                t0 = time.perf_counter()
                lane.download_into(self.dist[s], self.parent[s])
                fetch += time.perf_counter() - t0
                s = next(sources, None)
                if s is not None:
                    lane.start(s)
                    lane.issue()
                    still.append((lane, s))
            active = still
        return fetch

    def download(self):
        return self.dist, self.parent


def _add(totals: dict, counters: dict) -> None:
    """Sum a source's numeric counters into ``totals``."""
    for key, value in counters.items():
        if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
            totals[key] = totals.get(key, 0) + value
