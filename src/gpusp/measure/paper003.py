"""Paper 003's whole flow, end to end: product, two smallest cells, the shortest path between them.

1. Two seeded random n x n integer matrices A, B (entries 0 .. vmax-1) are multiplied on the GPU by the
   tiled kernel of :mod:`gpusp.solvers.packed.matprod` (CUDA events, a warm-up that also measures the JIT, then
   ``trials`` timed runs); the product is checked against NumPy.
2. The block min-reduction finds the smallest and the second-smallest cell of C with their positions
   (timed; checked against a NumPy sort that breaks ties by the first row-major index).
3. On the 4-neighbour grid of C where entering a cell costs its value
   (:func:`gpusp.data.generate.value_grid`), the SSSP from the smallest cell runs with ``solver``
   (paper 003's packed (cost, parent) 64-bit atomic, ``packed_atomic``, by default) through the timing
   harness, is validated against SciPy (exact distances and the five tree checks), and the path to the
   second-smallest cell is read from the parents.

:func:`run_flow` returns a :class:`FlowResult`; :func:`gpusp.report.paper003.draw_flow` draws the path
over the matrix, and ``gpusp paper003`` / the workflow's ``run_paper003`` rule write both.

Limits: the product must fit int32 (n * (vmax-1)^2 < 2^31) and ``packed_atomic`` needs int32 distances
(every simple path of the grid below 2^31 - 1: about 25 n^3 < 2^31 for vmax = 10, so n <= 400 there);
larger flows fail with that reason before any GPU work.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..data.generate import value_grid
from ..device import DeviceTimer, device_info, mode
from ..errors import SolverError
from ..solvers.packed import matprod
from .harness import path, solve
from .validate import check_sssp


@dataclass
class FlowResult:
    """What one run of the flow measured, found and checked (times in ms, ``compile_s`` in s)."""

    size: int
    seed: int
    vmax: int
    tile: int
    solver: str
    product: np.ndarray
    smallest: list  # [(value, row, col), (value, row, col)]
    path: list  # cell indices from the smallest to the second-smallest cell
    cost: int
    dist: np.ndarray
    timings: dict = field(default_factory=dict)
    checks: dict = field(default_factory=dict)
    machine: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(self.checks.values())

    def to_dict(self) -> dict:
        """A JSON-ready summary (without the matrices)."""
        return {"size": self.size, "seed": self.seed, "vmax": self.vmax, "tile": self.tile, "solver": self.solver,
                "smallest": [list(map(int, s)) for s in self.smallest], "path_cells": len(self.path),
                "cost": int(self.cost), "timings": self.timings, "checks": self.checks, "ok": self.ok,
                "mode": mode(), "machine": self.machine}


def _timed(timer, fn, trials: int):
    """(median ms, [samples], compile s, last value): one warm-up run (JIT included), then ``trials``."""
    t0 = time.perf_counter()
    warm_ms, out = timer.time(fn)
    first_s = time.perf_counter() - t0
    samples = []
    for _ in range(trials):
        ms, out = timer.time(fn)
        samples.append(ms)
    median = float(np.median(samples))
    return median, samples, max(0.0, first_s - median / 1e3), out


def run_flow(size: int = 64, seed: int = 1, vmax: int = 10, tile: int = 16, solver: str = "packed_atomic",
             trials: int = 3) -> FlowResult:
    """The flow on seeded matrices; raises SolverError on impossible settings, never on a failed check
    (the checks are in ``FlowResult.checks``)."""
    from numba import cuda

    n = int(size)
    if n < 1 or tile < 1 or trials < 1 or vmax < 1:
        raise SolverError("paper003: size, tile, trials and vmax must be positive")
    rng = np.random.default_rng(seed)
    a = rng.integers(0, vmax, size=(n, n), dtype=np.int32)
    b = rng.integers(0, vmax, size=(n, n), dtype=np.int32)
    matprod.check_matrices(a, b)
    timer = DeviceTimer(on_device=True)
    d_a, d_b = cuda.to_device(a), cuda.to_device(b)
    prod_ms, prod_samples, compile_s, d_c = _timed(timer, lambda: matprod.product(d_a, d_b, n, tile), trials)
    c = d_c.copy_to_host()
    min_ms, _, min_compile_s, found = _timed(timer, lambda: matprod.two_smallest(d_c, n), trials)
    keys = np.sort(c.ravel().astype(np.int64) << 32 | np.arange(n * n))[:2]  # value first, then index
    expected = [(int(k >> 32), int(k & 0xFFFFFFFF)) for k in keys] + [(None, None)] * (2 - keys.size)
    graph = value_grid(c, name=f"paper003-{n}x{n}-seed{seed}")
    source, target = found[0][1], found[1][1] if found[1][1] is not None else found[0][1]
    res = solve(graph, solver, source, trials=trials)
    verdict = check_sssp(graph, source, res.dist, res.parent)
    route = path(res, target)
    checks = {"product": bool(np.array_equal(c, a.astype(np.int64) @ b.astype(np.int64))),
              "smallest": found == expected, "sssp": bool(verdict.ok),
              "path": bool(route and route[0] == source and route[-1] == target
                           and int(c.ravel()[route[1:]].sum()) == int(res.dist[target]))}
    t = res.timings
    timings = {"product_ms": prod_ms, "product_samples_ms": prod_samples, "product_compile_s": compile_s,
               "minima_ms": min_ms, "minima_compile_s": min_compile_s, "sssp_ms": t.median_ms,
               "sssp_iqr_ms": t.iqr_ms, "sssp_compile_s": t.compile_s, "sssp_h2d_ms": t.h2d_ms, "clock": timer.clock}
    smallest = [(v, i // n, i % n) for v, i in found if v is not None]
    return FlowResult(n, seed, vmax, tile, solver, c, smallest, route, int(res.dist[target]), res.dist,
                      timings, checks, device_info())
