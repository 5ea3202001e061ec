"""Where a host-driven round of paper 000's Bellman-Ford goes: the rounds' device time alone beside the run's wall
time with each launcher, and the floor the issue sets, rounds x C's host cost per round + device time, from the C
reference measured in the same call (a round with a read-back: C launch + C launch with 4-byte read-back; a fixed
round: two C launches).

Device time: the same launches captured into a CUDA graph and replayed, so no host work sits between kernels (an
upper bound: a graph adds well under a microsecond per node). Early stop: the run's rounds replayed once after the
init kernel. Fixed rounds: the early rounds, then rounds after convergence from a replayed graph of 1,000 of them,
scaled to |V| - 1.

usage (device): python3 benchmarks/h200/round_floor.py GRAPH C_CSV > OUT.csv
GRAPH is a DIMACS .gr(.gz); C_CSV is launch_micro.cu's output. Early-stop rounds with both launchers (5 timed runs
after a warm-up), then the paper's |V| - 1 fixed rounds with the native launcher (one run).
       python3 benchmarks/h200/round_floor.py GRAPH --device-repeats N > OUT.csv
the fixed rounds' device time alone, N times a variant (one row each, the wall and floor columns empty): the
samples a verdict on device time needs (benchmarks/papers/findings.yaml, "device time" cells).
"""

import sys
import time

import numpy as np
from numba import cuda

import gpusp
from gpusp.solvers.common.launch import capture_graph
from gpusp.solvers.registry import get

VARIANTS = ("bellmanford_naive", "bellmanford_stride", "bellmanford_flag")


def wall_ms(solver, source, runs):
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        counters = solver.run(source)
        cuda.synchronize()
        out.append((time.perf_counter() - t0) * 1e3)
    return out, counters


def replay_ms(solver, first, count, times=1):
    """Device time of ``count`` rounds (stamps from ``first``) replayed ``times`` times from one captured graph."""
    _, (relax, relax_args), (copy, copy_args) = solver.round_kernels()
    grid, block = solver.grid(), solver.block

    def issue(stream):
        for r in range(first, first + count):
            relax[grid, block, stream](*relax_args)
            copy[grid, block, stream](*copy_args, r)

    graph, replay = capture_graph(issue)
    start, end = cuda.event(), cuda.event()
    start.record()
    for _ in range(times):
        graph.launch(replay)
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def device_ms(solver, source, rounds, fixed):
    """The rounds' device time: the early rounds from the init state, and for fixed rounds the rest after convergence."""
    (init, init_args), _, _ = solver.round_kernels()
    init[solver.grid(), solver.block](*init_args, source, solver.dg.inf)
    early = replay_ms(solver, 1, rounds)
    if not fixed:
        return early
    per_round = replay_ms(solver, rounds + 1, 1000, times=3) / 3000
    return early + (solver.graph.n - rounds) * per_round


def device_repeats(graph, source, repeats: int):
    """The fixed rounds' device time, ``repeats`` times a variant, after a warm-up run that compiles the kernels."""
    print("solver,rounds,launcher,iterations,wall_median_ms,wall_min_ms,device_ms,c_host_us_per_round,c_floor_ms,"
          "wall_over_floor", flush=True)
    for name in VARIANTS:
        early = get(name).build(graph, launcher="native", rounds="early")
        early.upload()
        rounds = early.run(source)["iterations"]
        solver = get(name).build(graph, launcher="native", rounds="fixed")
        solver.upload()
        iterations = solver.run(source)["iterations"]  # the native launches prepared before a capture
        for _ in range(repeats):
            device = device_ms(solver, source, rounds, True)
            print(f"{name},fixed,native,{iterations},,,{device:.3f},,,", flush=True)


def main():
    graph = gpusp.read_graph(sys.argv[1])
    if sys.argv[2] == "--device-repeats":
        device_repeats(graph, int(np.random.default_rng(1).integers(graph.n)), int(sys.argv[3]))
        return
    c = {row[1]: float(row[2]) for row in (line.split(",") for line in open(sys.argv[2]).read().split())}
    host_us = {"early": c["launch"] + c["launch+readback"], "fixed": 2 * c["launch"]}
    source = int(np.random.default_rng(1).integers(graph.n))
    print("solver,rounds,launcher,iterations,wall_median_ms,wall_min_ms,device_ms,c_host_us_per_round,c_floor_ms,"
          "wall_over_floor", flush=True)
    early_rounds = {}
    for rounds, launchers, runs in (("early", ("native", "numba"), 5), ("fixed", ("native",), 1)):
        for name in VARIANTS:
            for launcher in launchers:
                solver = get(name).build(graph, launcher=launcher, rounds=rounds)
                solver.upload()
                if rounds == "early":
                    solver.run(source)  # warm-up: compiles, and prepares the native launches
                walls, counters = wall_ms(solver, source, runs)
                it = counters["iterations"]
                early_rounds.setdefault(name, it)
                device = device_ms(solver, source, early_rounds[name], rounds == "fixed")
                floor = it * host_us[rounds] / 1e3 + device
                print(f"{name},{rounds},{launcher},{it},{np.median(walls):.3f},{min(walls):.3f},{device:.3f},"
                      f"{host_us[rounds]:.2f},{floor:.3f},{np.median(walls) / floor:.3f}", flush=True)


if __name__ == "__main__":
    main()
