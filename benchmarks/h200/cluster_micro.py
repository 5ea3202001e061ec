"""What a round of deltastep_cluster costs before its work: the cluster barrier alone, with the per-warp counter
total of every round, with a per-block total, and with one remote atomic before the barrier.

usage (device, repo root, after ``. benchmarks/h200/env.sh``):
  python3 benchmarks/h200/cluster_micro.py [--rounds 20000] [--out $OUT/cluster-micro.csv]
One cluster of 16 blocks (the solver's shape) at 1,024 / 512 / 256 threads; CUDA events around each launch, the
median of 5 launches after a warm-up, reported as microseconds per round.
"""

from __future__ import annotations

import argparse
import csv
import statistics

import numba
import numpy as np
from numba import cuda

from gpusp.solvers.cluster import atomic_add, cluster_sync, load, place, store_of, store_word, total_begin, total_end
from gpusp.solvers.launch import ClusterLaunch


def make(mode: int):
    def kernel(out, sim_store, rounds, ranks):
        store = store_of(sim_store)
        rank, lt, per = place(store)
        if lt < 4:
            store_word(store, rank, lt, 0)
        cluster_sync()
        acc = 0
        r = 0
        while r < rounds:
            if mode == 1:  # every warp sums the ranks' counters (the solver's round)
                acc += total_end(total_begin(store, r % 3, ranks))
            elif mode == 2:  # warp 0 sums them, a block barrier hands the total to the other warps
                if lt < 32:
                    t = total_end(total_begin(store, r % 3, ranks))
                    if lt == 0:
                        store_word(store, rank, 3, t)
                cuda.syncthreads()  # barrier: the block's total is written
                acc += load(store, rank, 3)
            elif mode == 3:  # one remote atomic per warp before the barrier (a push), then the per-warp total
                if lt % 32 == 0:
                    atomic_add(store, (rank + 1) % ranks, (r + 1) % 3, 1)
                acc += total_end(total_begin(store, r % 3, ranks))
            cluster_sync()  # barrier: the round ends
            r += 1
        if lt == 0:
            out[rank] = acc

    return cuda.jit(launch_bounds=(1024, 1))(kernel)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=20000)
    ap.add_argument("--out", default="cluster-micro.csv")
    args = ap.parse_args()
    names = {0: "barrier", 1: "barrier + per-warp total", 2: "barrier + block total", 3: "barrier + atomic + total"}
    out = cuda.device_array(16, dtype=np.int64)
    dummy = cuda.device_array((1, 1), dtype=np.int32)
    rows = []
    for mode in names:
        kernel = make(mode)
        for block in (1024, 512, 256):
            launch = ClusterLaunch(kernel, clusters=1, cluster=16, block=block, sharedmem=64)
            launch.prepare(out, dummy, np.int64(args.rounds), np.int64(16))
            launch()
            cuda.synchronize()
            times = []
            for _ in range(5):
                a, b = cuda.event(), cuda.event()
                a.record()
                launch()
                b.record()
                b.synchronize()
                times.append(cuda.event_elapsed_time(a, b) * 1000 / args.rounds)
            us = statistics.median(times)
            rows.append({"mode": names[mode], "block": block, "us_per_round": round(us, 4)})
            print(f"{names[mode]:28s} block {block:5d}: {us:.3f} us/round", flush=True)
    with open(args.out, "w", newline="") as fh:
        w = csv.DictWriter(fh, ["mode", "block", "us_per_round"])
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    numba.config.CUDA_LOW_OCCUPANCY_WARNINGS = 0
    main()
