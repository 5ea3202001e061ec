"""The cost of a grid-wide barrier on the device, apart from any work (issue 8's floor for synchronous rounds).

usage (on the device, repo root, after benchmarks/h200/run.sh's pip line):
    PYTHONPATH=/tmp/site:src python3 benchmarks/h200/barrier.py [--syncs 20000]

Kernels, each a cooperative launch doing SYNCS barriers and nothing else, CUDA-event timed (median of 5 after a
warm-up), per grid of 1, 2 and 4 blocks of 256 threads per multiprocessor:
* ``cg``: ``cuda.cg.this_grid().sync()`` (what deltastep_gpu and the persistent modes use);
* ``cg+chain``: the same plus, before each barrier, one thread doing four dependent global loads and an atomic
  (the shape of an almost empty near round: queue entry, offsets, arc, distance, atomic min).
Prints microseconds per barrier.
"""

from __future__ import annotations

import argparse

import numpy as np
from numba import cuda


@cuda.jit
def only_sync(syncs):
    """Barriers only."""
    g = cuda.cg.this_grid()
    for _ in range(syncs):
        g.sync()  # barrier: the thing measured


@cuda.jit
def chain_sync(syncs, a, out):
    """Per barrier, thread 0 follows a dependent chain of four loads and one atomic."""
    g = cuda.cg.this_grid()
    tid = cuda.grid(1)
    x = 0
    for i in range(syncs):
        if tid == 0:
            x = a[(x + i) % a.size]
            x = a[x]
            x = a[x]
            x = a[x]
            cuda.atomic.min(out, 0, x)  # atomic: the round's one relaxation
        g.sync()  # barrier: as at the end of a round


def timed(fn, reps=5):
    start, stop = cuda.event(), cuda.event()
    fn()
    cuda.synchronize()
    out = []
    for _ in range(reps):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        out.append(cuda.event_elapsed_time(start, stop))
    return float(np.median(out))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--syncs", type=int, default=20000)
    args = ap.parse_args()
    sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    rng = np.random.default_rng(1)
    a = cuda.to_device(rng.integers(0, 1 << 20, size=1 << 20).astype(np.int64))
    out = cuda.to_device(np.zeros(1, dtype=np.int64))
    print("| kernel | blocks x threads | us per barrier |\n|---|---|---:|")
    for per_sm in (1, 2, 4):
        grid = per_sm * sms
        ms = timed(lambda: only_sync[grid, 256](args.syncs))
        print(f"| cg | {grid} x 256 | {ms * 1e3 / args.syncs:.3f} |", flush=True)
        ms = timed(lambda: chain_sync[grid, 256](args.syncs, a, out))
        print(f"| cg+chain | {grid} x 256 | {ms * 1e3 / args.syncs:.3f} |", flush=True)


if __name__ == "__main__":
    main()
