"""The compile time a run reports (gpusp.measure.harness): a CPU solver's is what Numba compiled during its warm-ups,
on the solving thread, a nested compile once."""

from __future__ import annotations

import threading
import time

from numba import njit

from gpusp.data.generate import generate
from gpusp.measure.harness import numba_compile_clock, solve
from gpusp.solvers.dijkstra import cpu


def _fresh_pair():
    """Two functions never compiled before, the outer calling the inner."""

    @njit
    def inner(x):
        return x * 2 + 1

    @njit
    def outer(n):
        total = 0
        for i in range(n):
            total += inner(i)
        return total

    return outer


def test_a_nested_compile_counts_once_and_a_compiled_call_not_at_all():
    outer = _fresh_pair()
    with numba_compile_clock() as compiled_s:
        t0 = time.perf_counter()
        assert outer(4) == 16
        wall = time.perf_counter() - t0
    assert 0 < compiled_s() <= wall  # outer's compile holds inner's: counted twice it could pass the wall time
    with numba_compile_clock() as again_s:
        outer(5)
    assert again_s() == 0.0


def test_a_compile_on_another_thread_is_not_counted():
    outer = _fresh_pair()
    with numba_compile_clock() as compiled_s:
        worker = threading.Thread(target=outer, args=(3,))
        worker.start()
        worker.join()
    assert compiled_s() == 0.0


def test_a_cpu_solvers_compile_is_what_numba_compiled_in_its_warm_up(monkeypatch):
    """A fresh dispatcher compiles in the first run's warm-up; once compiled, a run reports no compile however its
    warm-up and trials compare (the warm-up's excess over the median trial would be noise on a host)."""
    monkeypatch.setattr(cpu, "_dijkstra", njit(cpu._dijkstra.py_func))
    graph = generate("grid", rows=4, cols=5, seed=1)
    first = solve(graph, "dijkstra_cpu", 0, trials=3, warmup=1).timings
    assert 0 < first.compile_s <= first.warmup_ms[0] / 1e3
    second = solve(graph, "dijkstra_cpu", 0, trials=3, warmup=1).timings
    assert second.compile_s == 0.0
