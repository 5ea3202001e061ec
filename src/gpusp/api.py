"""Run a registered solver with honest timing and return its answer (:func:`solve`, :func:`path`).

Timing follows GAPBS/gunrock practice: the graph is uploaded once (``h2d_ms``); ``warmup`` untimed
trials run first, the first of which includes JIT compilation; then ``trials`` timed trials each
bracket only device work with CUDA events; the answer is downloaded once (``d2h_ms``). JIT time is
reported apart as the first warm-up's excess over the median trial (``compile_s``); Numba's on-disk
cache makes it near zero in a second process. Every sample is kept.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

import numpy as np

from . import registry
from .device import DeviceTimer, require_cuda
from .errors import SolverError
from .graph import Graph


@dataclass
class Timings:
    """Every sample in milliseconds, with median, quartiles and the separately measured costs."""

    samples_ms: list
    warmup_ms: list
    compile_s: float
    h2d_ms: float
    d2h_ms: float
    clock: str
    median_ms: float = field(init=False)
    q1_ms: float = field(init=False)
    q3_ms: float = field(init=False)
    iqr_ms: float = field(init=False)
    min_ms: float = field(init=False)

    def __post_init__(self):
        s = np.asarray(self.samples_ms, dtype=float)
        self.q1_ms, self.median_ms, self.q3_ms = (float(x) for x in np.percentile(s, [25, 50, 75]))
        self.iqr_ms = self.q3_ms - self.q1_ms
        self.min_ms = float(s.min())

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Result:
    """A solver's answer: distances, parents, INF marker, timings and counters."""

    solver: str
    problem: str
    params: dict
    source: int | None
    dist: np.ndarray
    parent: np.ndarray
    inf: int
    timings: Timings
    counters: dict

    @property
    def reachable(self) -> np.ndarray:
        return self.dist != self.inf


def solve(graph: Graph, name: str, source: int | None = 0, *, trials: int = 1, warmup: int = 1,
          **params) -> Result:
    """Run solver ``name`` on ``graph`` (from ``source`` for SSSP) and return a :class:`Result`.

    Raises SolverError for an unknown solver, a bad parameter, a source out of range or a graph the
    solver cannot take (negative weights where they are not allowed), and NegativeCycleError when a
    negative cycle is reachable.
    """
    return next(iter(solve_many(graph, name, [source], trials=trials, warmup=warmup, **params)))


def solve_many(graph: Graph, name: str, sources, *, trials: int = 1, warmup: int = 1, **params):
    """Yield one :class:`Result` per source, uploading the graph and compiling once.

    Warm-up runs happen before the first source only (they include JIT compilation); each source then
    gets ``trials`` timed runs. APSP solvers take ``sources=[None]``.
    """
    spec = registry.get(name)
    resolved = spec.resolve(params)
    reason = spec.why_not(graph.n, graph.m, negative=graph.has_negative_weights, itemsize=graph.dtype.itemsize,
                          params=resolved)
    if reason:
        raise SolverError(reason)
    sources = list(sources)
    if not sources:
        raise SolverError("no sources given")
    if spec.problem == "sssp":
        for s in sources:
            if s is None or not 0 <= int(s) < graph.n:
                raise SolverError(f"source {s} out of range 0..{graph.n - 1}")
        sources = [int(s) for s in sources]
    else:
        sources = [None]
    if trials < 1 or warmup < 0:
        raise SolverError("trials must be >= 1 and warmup >= 0")
    if spec.device == "gpu":
        require_cuda(name)
    solver = spec.load()(graph, **resolved)
    timer = DeviceTimer(on_device=spec.device == "gpu")
    h2d_ms, _ = timer.time(solver.upload)
    warm_wall = []
    for _ in range(warmup):
        t0 = time.perf_counter()
        timer.time(solver.run, sources[0])
        warm_wall.append(time.perf_counter() - t0)
    for i, source in enumerate(sources):
        samples, counters = [], {}
        for _ in range(trials):
            ms, counters = timer.time(solver.run, source)
            samples.append(ms)
        d2h_ms, (dist, parent) = timer.time(solver.download)
        median_s = float(np.median(samples)) / 1e3
        compile_s = max(0.0, warm_wall[0] - median_s) if warm_wall and i == 0 else 0.0
        timings = Timings(samples_ms=samples, warmup_ms=[w * 1e3 for w in warm_wall] if i == 0 else [],
                          compile_s=compile_s, h2d_ms=h2d_ms if i == 0 else 0.0, d2h_ms=d2h_ms,
                          clock=timer.clock)
        yield Result(name, spec.problem, resolved, source, np.asarray(dist), np.asarray(parent), graph.inf,
                     timings, dict(counters or {}))


def path(result: Result, target: int, source: int | None = None) -> list[int]:
    """Vertices of the shortest path to ``target`` (from ``source`` for APSP), [] when unreachable."""
    if result.problem == "apsp":
        if source is None:
            raise SolverError("APSP results need a source for path()")
        dist, parent = result.dist[source], result.parent[source]
        start = int(source)
    else:
        dist, parent, start = result.dist, result.parent, result.source
    target = int(target)
    if not 0 <= target < dist.size:
        raise SolverError(f"target {target} out of range 0..{dist.size - 1}")
    if dist[target] == result.inf:
        return []
    out = [target]
    while out[-1] != start:
        p = int(parent[out[-1]])
        if p < 0 or len(out) > dist.size:
            raise SolverError(f"parent chain from {target} does not reach the source {start}")
        out.append(p)
    return out[::-1]
