"""The GPU's add-min ceiling: how many min(a + b, c) a full grid can issue per second (issue 9's yardstick).

usage (on the device, repo root, after benchmarks/h200/run.sh's pip line):
    PYTHONPATH=/tmp/site:src python3 benchmarks/h200/addmin_ceiling.py [--out DIR] [--iters 4096] [--reps 5]

One kernel per add-min flavour, each thread running CHAINS independent chains ITERS times, a full grid (8 blocks x
256 threads per multiprocessor), operands passed at run time so that nothing folds, CUDA-event timed (median of REPS
after a warm-up launch):
* ``int32``: min then add, issued apart (IMNMX + IADD3);
* ``dpx``: min(a + z, y), one Hopper DPX VIADDMNMX per add-min on sm_90;
* ``float32``: min(a + z, y) in float32 (FADD + FMNMX).
Prints the rates and writes DIR/ceiling.csv (kind=ceiling, arith, rate_per_s, frac_dpx_ceiling, samples_ms: the rows
that benchmarks/apsp_fast_table.py --ceiling reads). The DPX rate is what the apsp-fast configs take as
gpu_peak_relaxations_per_s (GPUSP_SET=gpu_peak_relaxations_per_s=RATE for run.sh).
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import numba
import numpy as np
from numba import cuda

CHAINS = 8  # independent chains per thread: enough to hide the add-min's latency
FIELDS = ["kind", "arith", "rate_per_s", "frac_dpx_ceiling", "samples_ms"]
I32, F32 = numba.int32, numba.float32


@cuda.jit
def plain(out, y, z, iters):
    """CHAINS chains of min-then-add (IMNMX + IADD3: add and min issued apart)."""
    t = cuda.grid(1)
    a0 = I32(t); a1 = I32(t + 1); a2 = I32(t + 2); a3 = I32(t + 3)
    a4 = I32(t + 4); a5 = I32(t + 5); a6 = I32(t + 6); a7 = I32(t + 7)
    for _ in range(iters):
        a0 = I32(min(a0, y) + z); a1 = I32(min(a1, y) + z); a2 = I32(min(a2, y) + z); a3 = I32(min(a3, y) + z)
        a4 = I32(min(a4, y) + z); a5 = I32(min(a5, y) + z); a6 = I32(min(a6, y) + z); a7 = I32(min(a7, y) + z)
    out[t] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7


@cuda.jit
def dpx(out, y, z, iters):
    """CHAINS chains of min(a + z, y): one VIADDMNMX each on sm_90."""
    t = cuda.grid(1)
    a0 = I32(t); a1 = I32(t + 1); a2 = I32(t + 2); a3 = I32(t + 3)
    a4 = I32(t + 4); a5 = I32(t + 5); a6 = I32(t + 6); a7 = I32(t + 7)
    for _ in range(iters):
        a0 = min(I32(a0 + z), y); a1 = min(I32(a1 + z), y); a2 = min(I32(a2 + z), y); a3 = min(I32(a3 + z), y)
        a4 = min(I32(a4 + z), y); a5 = min(I32(a5 + z), y); a6 = min(I32(a6 + z), y); a7 = min(I32(a7 + z), y)
    out[t] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7


@cuda.jit
def flt(out, y, z, iters):
    """CHAINS chains of min(a + z, y) in float32: FADD + FMNMX."""
    t = cuda.grid(1)
    a0 = F32(t); a1 = F32(t + 1); a2 = F32(t + 2); a3 = F32(t + 3)
    a4 = F32(t + 4); a5 = F32(t + 5); a6 = F32(t + 6); a7 = F32(t + 7)
    for _ in range(iters):
        a0 = min(F32(a0 + z), y); a1 = min(F32(a1 + z), y); a2 = min(F32(a2 + z), y); a3 = min(F32(a3 + z), y)
        a4 = min(F32(a4 + z), y); a5 = min(F32(a5 + z), y); a6 = min(F32(a6 + z), y); a7 = min(F32(a7 + z), y)
    out[t] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7


KERNELS = {"int32": (plain, np.int32), "dpx": (dpx, np.int32), "float32": (flt, np.float32)}


def measure(iters: int, reps: int) -> dict:
    """arith -> (add-mins per second, every timed run in ms)."""
    sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    blocks, threads = 8 * sms, 256
    out = {}
    for name, (kernel, dtype) in KERNELS.items():
        o = cuda.device_array(blocks * threads, dtype=dtype)
        y, z = dtype(1 << 29), dtype(1)
        kernel[blocks, threads](o, y, z, 16)  # compiles
        cuda.synchronize()
        times = []
        for _ in range(reps):
            start, stop = cuda.event(), cuda.event()
            start.record()
            kernel[blocks, threads](o, y, z, iters)
            stop.record()
            stop.synchronize()
            times.append(cuda.event_elapsed_time(start, stop))
        ms = float(np.median(times))
        out[name] = (blocks * threads * CHAINS * iters / (ms / 1e3), times)
        print(f"ceiling {name:8s}: {out[name][0] / 1e12:6.2f} e12 add-min/s ({ms:.3f} ms, {sms} SMs)", flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, help="folder for ceiling.csv (default: print only)")
    ap.add_argument("--iters", type=int, default=4096, help="add-mins per chain")
    ap.add_argument("--reps", type=int, default=5, help="timed launches per flavour")
    args = ap.parse_args()
    rates = measure(args.iters, args.reps)
    dpx_rate = rates["dpx"][0]
    print(f"GPUSP_SET=gpu_peak_relaxations_per_s={dpx_rate:.4g}")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        with open(args.out / "ceiling.csv", "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=FIELDS)
            w.writeheader()
            for name, (rate, times) in rates.items():
                w.writerow({"kind": "ceiling", "arith": name, "rate_per_s": rate, "frac_dpx_ceiling": rate / dpx_rate,
                            "samples_ms": ";".join(f"{x:.6g}" for x in times)})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
