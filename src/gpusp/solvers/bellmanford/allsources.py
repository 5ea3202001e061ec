"""``bellmanford_allsources``: APSP as an SSSP solver (named by the ``sssp`` parameter, built through the registry) run
from every source on one uploaded graph, one source at a time or ``streams`` sources in flight on streams of their
own (paper 004 sec. V-B). Design: docs/solvers/bellmanford.md.
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
