"""One GPU's sweep of every tree of a list of sources (:class:`SliceSweep`), the machinery of
:func:`gpusp.measure.alltrees.sweep` and of each rank of :mod:`gpusp.measure.alltrees_ranks`: the solver's order, the
upload, the warm-up batches, the timed trials with their device reductions, the download in the order given.
Design: docs/solvers/multisource.md, "All trees".
"""

from __future__ import annotations

import time

import numpy as np

from ..device import DeviceTimer

QUANTITIES = ("eccentricity", "reach", "total", "histogram", "od")


class SliceSweep:
    """One GPU's sweep of ``sources`` with a built ``solver`` (not yet uploaded): :meth:`prepare` orders the sources,
    uploads and runs the warm-up batches; :meth:`measure` runs the timed trials and downloads the reductions."""

    def __init__(self, solver, sources, targets, width: int):
        self.solver, self.targets, self.width = solver, targets, width
        self.sources = np.asarray(sources, dtype=np.int64)
        self.timer = DeviceTimer(on_device=True)

    def prepare(self, warmup: int) -> None:
        """The solver's order of the sources and its preparation for them, the upload, and ``warmup`` untimed
        batches (the first holds the JIT: the kernels of both the sweep and the reductions)."""
        from numba import cuda

        from ..solvers.multisource.reduce import Reductions

        solver, graph = self.solver, self.solver.graph
        t0 = time.perf_counter()
        order = getattr(solver, "order", None)
        solved, self.rows = order(self.sources) if order else (self.sources, None)
        ready = getattr(solver, "prepare_sweep", None)
        if ready:  # preprocessing that depends on how many sources the sweep has (phast_gpu's upward spaces)
            ready(self.sources.size)
        self.order_s = time.perf_counter() - t0
        self.S = solver.sweep_batch(self.sources.size)
        self.stored = solver.dist_rows(self.targets)  # the rows of the solver's dist that hold the targets

        def upload():
            solver.upload()
            return cuda.to_device(solved.astype(np.int32))

        self.h2d_ms, self.d_srcs = self.timer.time(upload)
        self.warm = []
        first, S = self.d_srcs[:min(self.S, self.sources.size)], self.S
        for _ in range(warmup):  # one batch: the JIT of both kernels, and a batch's time to subtract from it
            scratch = Reductions(first.size, self.stored, graph.dtype, graph.inf, self.width)
            t1 = time.perf_counter()
            solver.sweep(first, lambda base, count, into=scratch: into.launch(solver.dist, graph.n, S, base, count))
            cuda.synchronize()
            self.warm.append(time.perf_counter() - t1)

    def measure(self, trials: int) -> dict:
        """``trials`` timed sweeps, then the reductions downloaded in the order the sources were given: values,
        order_s, h2d_ms, compile_s, warmup_s, sweep_ms, reduce_ms (a list each by trial), d2h_ms, counters, clock."""
        from ..solvers.multisource.reduce import Reductions

        solver, graph, timer, k = self.solver, self.solver.graph, self.timer, self.sources.size
        samples, reduce_ms, counters, red = [], [], {}, None
        for _ in range(trials):
            red = Reductions(k, self.stored, graph.dtype, graph.inf, self.width, timed=timer.events)
            ms, counters = timer.time(solver.sweep, self.d_srcs, lambda base, count, into=red:
                                      into.launch(solver.dist, graph.n, self.S, base, count))
            samples.append(ms)
            reduce_ms.append(red.elapsed_ms() if timer.events else float("nan"))
        d2h_ms, values = timer.time(red.download)
        if self.rows is not None:  # back to the order given: solved position p is sources[rows[p]]
            for key in QUANTITIES:
                given = np.empty_like(values[key])
                given[self.rows] = values[key]
                values[key] = given
        batches = counters.get("batches", 1)
        median_ms = float(np.median(samples))
        compile_s = max(0.0, self.warm[0] - median_ms / 1e3 / batches) if self.warm else 0.0
        return {"values": values, "order_s": self.order_s, "h2d_ms": self.h2d_ms, "compile_s": compile_s,
                "warmup_s": self.warm, "sweep_ms": samples, "reduce_ms": reduce_ms, "d2h_ms": d2h_ms,
                "counters": counters, "clock": timer.clock}
