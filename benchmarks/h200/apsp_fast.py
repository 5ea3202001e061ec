"""Issue 9's H200 run in one process: the add-min ceiling and a blockedfw_fast sweep.

usage (on the device, repo root, after benchmarks/h200/run.sh's pip line, i.e. with PYTHONPATH=/tmp/site:src):
    PYTHONPATH=src python3 benchmarks/h200/apsp_fast.py --out $OUT [--sizes 1200 2048 4096 8192] [--quick | --focus | --launches]

(a) ceiling: a microbenchmark kernel per add-min flavour (int32 with add and min issued apart, int32 fused
    DPX, float32 add + min), CHAINS independent chains per thread, a full grid (8 blocks x 256 threads per
    SM), CUDA-event timed; rate = add-mins per second.
(b) sweep: blockedfw_fast over tile x regblock x arith x paths x launch at every size on random dense
    graphs (k = 64 arcs per vertex, weights 1..100, seed = n, as config/h200-apsp-random.yaml builds
    them), one warm-up + TRIALS timed runs (CUDA events, median), plus floydwarshall_tiledshared tile 32
    and blockedfw_v41 B = 24 as anchors. Each configuration is validated: every row against the first
    configuration's answer (itself checked in full against SciPy at n <= 2048, on 16 sampled rows with
    SciPy's Dijkstra above). A failing configuration is logged and skipped.
    With --phase2: phase 2 pivot by pivot ('serial') against as min-plus products with the closed pivot tile
    ('product'), paths on and off, the default kernels replayed as one CUDA graph (and T 32, R 2 at n <= 2048).
    With --focus: the kernel variants of FOCUS_VARIANTS (p12 / inner / unroll / stage) at T 64, R 4, dpx, host
    launches, paths on and off, the reference kernel (fastfw.DEFAULTS) first, the others checked against it; distances-only downloads
    for paths off (no host-derived parents). With --launches: the default kernels launched from the host and
    replayed as one CUDA graph, paths on and off (with paths also p12=shared as a graph).
(c) rewrites apsp-fast.csv (+ ceiling rows, per-trial samples_ms) after every configuration, so a run stopped
    at its time limit keeps what it measured, and prints a table: n^3/t and its fraction of the measured ceiling.
(d) registers / shared memory / local memory per kernel, when numba exposes them.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
import traceback
from pathlib import Path

import numpy as np

FIELDS = ["kind", "n", "solver", "tile", "regblock", "arith", "paths", "launch", "phase2", "p12", "inner", "unroll",
          "stage",
          "median_ms", "min_ms", "q1_ms",
          "q3_ms", "rate_per_s", "frac_dpx_ceiling", "frac_same_ceiling", "kernel_arith", "regs", "smem", "local",
          "valid", "note", "samples_ms"]
CHAINS = 8
ITERS = 4096
CEIL_SAMPLES = {}  # arith -> every timed ceiling run (ms), for the samples_ms column


def ceiling_kernels():
    import numba
    from numba import cuda

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

    return {"int32": (plain, np.int32), "dpx": (dpx, np.int32), "float32": (flt, np.float32)}


def measure_ceiling():
    from numba import cuda

    dev = cuda.get_current_device()
    sms = dev.MULTIPROCESSOR_COUNT
    blocks, threads = 8 * sms, 256
    out = cuda.device_array(blocks * threads, dtype=np.float64)
    res = {}
    for name, (k, dt) in ceiling_kernels().items():
        o = cuda.device_array(blocks * threads, dtype=dt)
        y, z = dt(1 << 29), dt(1)  # runtime operands: nothing folds
        k[blocks, threads](o, y, z, 16)
        cuda.synchronize()
        times = []
        for _ in range(5):
            e0, e1 = cuda.event(), cuda.event()
            e0.record()
            k[blocks, threads](o, y, z, ITERS)
            e1.record()
            e1.synchronize()
            times.append(cuda.event_elapsed_time(e0, e1))
        ms = float(np.median(times))
        CEIL_SAMPLES[name] = list(times)
        res[name] = blocks * threads * CHAINS * ITERS / (ms / 1e3)
        print(f"ceiling {name:8s}: {res[name] / 1e12:6.2f} e12 add-min/s ({ms:.3f} ms, {sms} SMs)", flush=True)
    del out
    return res


def kernel_resources(solver):
    """(regs, shared bytes, local bytes) of the solver's main kernel, when numba can say."""
    try:
        from gpusp.solvers.fastfw import kernel_sigs

        name = "persistent" if solver.use_persistent else "k3"
        k = solver.ks[name]
        ov = next(iter(k.overloads.values()))
        return ov.regs_per_thread if hasattr(ov, "regs_per_thread") else k.get_regs_per_thread(), \
            k.get_shared_mem_per_block(), k.get_local_mem_per_thread()
    except Exception:
        try:
            k = solver.ks["persistent" if solver.use_persistent else "k3"]
            return k.get_regs_per_thread(), k.get_shared_mem_per_block(), k.get_local_mem_per_thread()
        except Exception as exc:
            return None, None, f"? {type(exc).__name__}"


def time_solver(solver, trials):
    from numba import cuda

    solver.run(None)  # warm-up (compiles)
    cuda.synchronize()
    times = []
    for _ in range(trials):
        e0, e1 = cuda.event(), cuda.event()
        e0.record()
        solver.run(None)
        e1.record()
        e1.synchronize()
        times.append(cuda.event_elapsed_time(e0, e1))
    return np.array(times)


# issue 9's kernel variants around the best measured point (T 64, R 4, dpx, host launches), most telling first
FOCUS_VARIANTS = (dict(p12="global", inner="scalar", unroll=1, stage="single"),  # fastfw.DEFAULTS: the reference
                  dict(p12="shared", inner="vec4", unroll=8, stage="double"),  # every new piece at once
                  dict(p12="global", inner="vec4", unroll=8, stage="single"),
                  dict(p12="global", inner="vec4", unroll=8, stage="double"),
                  dict(p12="shared", inner="vec4", unroll=8, stage="single"),
                  dict(p12="global", inner="vec2", unroll=8, stage="single"),
                  dict(p12="global", inner="scalar", unroll=8, stage="single"),
                  dict(p12="global", inner="vec4", unroll=4, stage="single"))


def configs(n, quick, focus=False, launches=False, small=False, phase2=False):
    if phase2:  # phase 2 pivot by pivot against as min-plus products, the default kernels as a graph; small n also T 32
        shapes = [(0, 0)] + ([(32, 2)] if n <= 2048 else [])
        return [dict(tile=T, regblock=R, arith="auto", paths=paths, launch="graph", phase2=p2)
                for paths in (True, False) for T, R in shapes for p2 in ("product", "serial")]
    if small:  # tile and register block at small n, graph launches, the auto kernel variant
        return [dict(tile=T, regblock=R, arith="auto", paths=paths, launch="graph")
                for paths in (True, False) for T, R in ((64, 4), (32, 2), (32, 4), (64, 8))]
    if launches:  # the default kernels from the host and replayed as one CUDA graph, paths on and off; with paths
        # also phases 1-2 in shared memory (their T serial pivot steps a round bound small n)
        return [dict(tile=0, regblock=0, arith="auto", paths=paths, launch=launch, **var)
                for paths in (True, False) for launch in ("host", "graph")
                for var in ([{}, {"p12": "shared"}] if paths and launch == "graph" else [{}])]
    if focus:  # the variants (p12 / inner / unroll / stage) at the winning shape, paths on and off
        return [dict(tile=64, regblock=4, arith="dpx", paths=paths, launch="host", **var)
                for paths in (True, False) for var in FOCUS_VARIANTS]
    out = []
    tiles = [(64, 4), (128, 8)] if quick else [(32, 2), (64, 4), (64, 8), (128, 4), (128, 8)]
    for T, R in tiles:
        for arith in ("dpx", "int32", "float32"):
            for paths in (True, False):
                if quick and arith == "int32":
                    continue
                out.append(dict(tile=T, regblock=R, arith=arith, paths=paths, launch="auto"))
    best_guess = dict(tile=64 if n <= 2048 else 128, regblock=4 if n <= 2048 else 8, arith="dpx", paths=True)
    out.append(dict(best_guess, launch="host"))
    return out


def write_csv(out, rows):
    """Rewrite apsp-fast.csv with every row so far (called after each configuration: a killed run keeps them)."""
    with open(out / "apsp-fast.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=FIELDS, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--sizes", type=int, nargs="*", default=[1200, 2048, 4096, 8192])
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="fewer tiles and no int32 (if short of time)")
    ap.add_argument("--focus", action="store_true", help="the kernel variants (p12, inner, unroll, stage) at T 64, "
                    "R 4, dpx, host launches, paths on and off")
    ap.add_argument("--launches", action="store_true", help="the default kernels with host launches and as one "
                    "CUDA graph, paths on and off (small n pay the host launch path)")
    ap.add_argument("--small", action="store_true", help="tile x register block at small n, graph launches")
    ap.add_argument("--phase2", action="store_true", help="phase 2 serial against as min-plus products, paths on "
                    "and off, graph launches (T 32, R 2 too at n <= 2048)")
    ap.add_argument("--budget-s", type=float, default=330, help="stop starting new configurations after this")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t_start = time.perf_counter()
    from gpusp.device import device_info

    print("GPU:", device_info(), flush=True)

    import gpusp
    from gpusp.measure.harness import solve_many
    from gpusp.data.generate import random_sparse
    from gpusp.solvers.fastfw import FastSolver

    class Solver(FastSolver):
        """FastSolver whose padded host matrices are built once per graph and tile (about 10-16 s at n = 8192
        on a CPU core; upload copies them to the device and does not change them)."""

        memo = {}

        def host_matrices(self):
            key = (id(self.graph), self.n_pad, self.scale, str(self.dtype))
            if key not in self.memo:
                self.memo.clear()  # one graph's matrices at a time
                self.memo[key] = super().host_matrices()
            return self.memo[key]
    from gpusp.measure.validate import check_apsp, sample_rows

    rows = []
    try:
        ceil = measure_ceiling()
    except Exception as exc:
        traceback.print_exc()
        ceil = {}
    for name, rate in ceil.items():
        rows.append({"kind": "ceiling", "arith": name, "rate_per_s": rate,
                     "frac_dpx_ceiling": rate / ceil["dpx"] if ceil.get("dpx") else None,
                     "samples_ms": ";".join(f"{x:.6g}" for x in CEIL_SAMPLES.get(name, []))})
    write_csv(out, rows)

    for n in args.sizes:
        g = random_sparse(n, 64, wmax=100, seed=n)
        rows_chk = np.arange(n) if n <= 2048 else sample_rows(n, 16, 1)
        reference = None
        print(f"== n={n} m={g.m:,}", flush=True)
        for params in configs(n, args.quick, args.focus, args.launches, args.small, args.phase2):
            if time.perf_counter() - t_start > args.budget_s:
                print("   budget spent: skipping the remaining configurations", flush=True)
                break
            row = {"kind": "fast", "n": n, "solver": "blockedfw_fast", **params}
            try:
                t0 = time.perf_counter()
                s = Solver(g, **params)
                s.upload()
                t = time_solver(s, args.trials)
                if params["paths"] or reference is None:
                    dist, parent = s.download()
                else:  # distances only: the host-derived parents of paths=False cost O(n m) Python work
                    dist = s.download_distances()
                if reference is None:
                    v = check_apsp(g, dist, parent, rows_chk)
                    ok = bool(v.ok)
                    if ok:
                        reference = dist
                    row["note"] = "" if ok else str(v.mismatches[:2])[:200]
                else:
                    ok = bool(np.array_equal(dist, reference)) and (
                        not params["paths"] or check_apsp(g, dist, parent, rows_chk[:4]).ok)
                med = float(np.median(t))
                rate = n ** 3 / (med / 1e3)
                regs, smem, local = kernel_resources(s)
                same = {"dpx": "dpx", "int32": "int32", "float32": "float32"}.get(s.kind)
                row.update(median_ms=med, min_ms=float(t.min()), q1_ms=float(np.quantile(t, .25)),
                           q3_ms=float(np.quantile(t, .75)), rate_per_s=rate,
                           frac_dpx_ceiling=rate / ceil["dpx"] if ceil.get("dpx") else None,
                           frac_same_ceiling=rate / ceil[same] if same and ceil.get(same) else None,
                           kernel_arith=s.kind, regs=regs, smem=smem, local=local, valid=ok,
                           samples_ms=";".join(f"{x:.6g}" for x in t))
                var = dict(s.variant)
                row.update(var)
                row.update(tile=s.T, regblock=s.R, phase2=s.phase2)
                print(f"   T={s.T:3d} R={s.R} {s.kind:7s} paths={int(params['paths'])} phase2={s.phase2:7s} "
                      f"{params['launch']:10s} p12={var['p12']:6s} {var['inner']:6s} u{var['unroll']} {var['stage']:6s} "
                      f"{med:9.3f} ms {rate / 1e12:6.2f} e12/s "
                      f"({(row['frac_dpx_ceiling'] or 0) * 100:5.1f}% of DPX ceiling) regs={regs} valid={ok} "
                      f"[{time.perf_counter() - t0:.1f} s wall]", flush=True)
                del s
            except Exception as exc:  # log and go on
                row["note"] = f"{type(exc).__name__}: {exc}"[:300]
                print(f"   {params}: FAILED {row['note']}", flush=True)
                traceback.print_exc(limit=3)
            rows.append(row)
            write_csv(out, rows)
        for name, params in (("floydwarshall_tiledshared", {"tile": 32}), ("blockedfw_v41", {"block_size": 24})):
            if time.perf_counter() - t_start > args.budget_s or (name == "blockedfw_v41" and n > 4096):
                continue
            row = {"kind": "anchor", "n": n, "solver": name, "tile": params.get("tile", params.get("block_size"))}
            try:
                res = next(iter(solve_many(g, name, [None], trials=3, warmup=1, **params)))
                med = res.timings.median_ms
                rate = n ** 3 / (med / 1e3)
                row.update(median_ms=med, rate_per_s=rate,
                           samples_ms=";".join(f"{x:.6g}" for x in res.timings.samples_ms), valid=bool(np.array_equal(res.dist, reference))
                           if reference is not None else None,
                           frac_dpx_ceiling=rate / ceil["dpx"] if ceil.get("dpx") else None)
                print(f"   {name} {params}: {med:9.3f} ms {rate / 1e12:6.2f} e12/s", flush=True)
            except Exception as exc:
                row["note"] = f"{type(exc).__name__}: {exc}"[:300]
                print(f"   {name}: FAILED {row['note']}", flush=True)
            rows.append(row)
            write_csv(out, rows)

    print("\n| n | solver | tile | R | arith | paths | launch | p12 | inner | unroll | stage | median ms | e12 relax/s | "
          "% DPX ceiling | valid |")
    print("|---:|---|---:|---:|---|---|---|---|---|---:|---|---:|---:|---:|---|")
    for r in rows:
        if r.get("kind") == "ceiling" or r.get("median_ms") is None:
            continue
        print(f"| {r['n']} | {r['solver']} | {r.get('tile')} | {r.get('regblock', '')} | {r.get('kernel_arith', r.get('arith', ''))} | "
              f"{r.get('paths', '')} | {r.get('launch', '')} | {r.get('p12', '')} | {r.get('inner', '')} | "
              f"{r.get('unroll', '')} | {r.get('stage', '')} | {r['median_ms']:.3f} | {r['rate_per_s'] / 1e12:.2f} | "
              f"{(r.get('frac_dpx_ceiling') or 0) * 100:.1f} | {r.get('valid')} |")
    print(f"total {time.perf_counter() - t_start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
