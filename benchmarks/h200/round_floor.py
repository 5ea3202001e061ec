"""Where a host-driven round of paper 000's Bellman-Ford goes: kernel time per round (CUDA events around every
launch of one run) beside the run's wall time with each launcher, and the floor the issue sets, rounds x (C launch +
C launch with 4-byte read-back) + kernel time, from the C reference measured in the same call.

usage (device): python3 benchmarks/h200/round_floor.py GRAPH C_CSV > OUT.csv
GRAPH is a DIMACS .gr(.gz); C_CSV is launch_micro.cu's output. Early-stop rounds with both launchers (5 timed runs
after a warm-up), then the paper's |V| - 1 fixed rounds with the native launcher (one run, and one with events).
"""

import sys
import time

import numpy as np
from numba import cuda

import gpusp
from gpusp.solvers.registry import get

VARIANTS = ("bellmanford_naive", "bellmanford_stride", "bellmanford_flag")


class Timed:
    """A launch wrapped in two events; the events' elapsed time is the kernel's time on the device."""

    def __init__(self, launch, log):
        self.launch, self.log = launch, log

    def __call__(self, *args):
        start, end = cuda.event(), cuda.event()
        start.record()
        self.launch(*args)
        end.record()
        self.log.append((start, end))


def wall_ms(solver, source, runs):
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        counters = solver.run(source)
        cuda.synchronize()
        out.append((time.perf_counter() - t0) * 1e3)
    return out, counters


def kernel_ms(solver, source):
    log = []
    solver.l_init, solver.l_relax, solver.l_copy = (Timed(k, log) for k in (solver.l_init, solver.l_relax,
                                                                            solver.l_copy))
    solver.run(source)
    cuda.synchronize()
    return sum(a.elapsed_time(b) for a, b in log)


def main():
    graph = gpusp.read_graph(sys.argv[1])
    c = {row[1]: float(row[2]) for row in (line.split(",") for line in open(sys.argv[2]).read().split())}
    c_round_us = c["launch"] + c["launch+readback"]
    source = int(np.random.default_rng(1).integers(graph.n))
    print("solver,rounds,launcher,iterations,wall_median_ms,wall_min_ms,kernel_ms,c_round_us,c_floor_ms,"
          "wall_over_floor", flush=True)
    for rounds, launchers, runs in (("early", ("native", "numba"), 5), ("fixed", ("native",), 1)):
        for name in VARIANTS:
            for launcher in launchers:
                solver = get(name).build(graph, launcher=launcher, rounds=rounds)
                solver.upload()
                if rounds == "early":
                    solver.run(source)  # warm-up: compiles, and prepares the native launches
                walls, counters = wall_ms(solver, source, runs)
                kernels = kernel_ms(solver, source) if launcher == "native" else float("nan")
                it = counters["iterations"]
                floor = it * c_round_us / 1e3 + kernels
                print(f"{name},{rounds},{launcher},{it},{np.median(walls):.3f},{min(walls):.3f},{kernels:.3f},"
                      f"{c_round_us:.2f},{floor:.3f},{np.median(walls) / floor:.3f}", flush=True)


if __name__ == "__main__":
    main()
