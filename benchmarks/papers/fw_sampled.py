"""Paper 000's serial Floyd-Warshall loop (every j of every row, no row skip) estimated from a seeded sample of k.

Our ``floydwarshall_cpu`` passes over row i of step k when d[i][k] is infinite; the paper's C loop tests
d[i][k] != INF for every element. Compiled by LLVM, the paper's loop skips such a row all the same (nothing is
stored when the test fails, so the test is lifted out of the j loop): ``paper_step`` times it as compiled. A loop
that cannot skip, ``every_step`` (``floydwarshall_cpu``'s own loop with row_skip false), adds without the INF tests
(INF plus a weight never improves a distance with non-negative weights): n^3 visits, what the paper's loop costs where
its compiler keeps the test inside. All three leave the same matrix after every step k, so this script runs the
skipping step for every k, each timed, and at a uniform sample of k also times the other two on copies of the same
matrix. A whole loop is
estimated as n x the mean of its sampled steps, with a 95 % interval from their spread; the skipping loop's
measured total beside its own estimate from the same k shows how well the sample estimates. A test checks that
n steps of each give ``floydwarshall_cpu``'s distances and predecessors.

usage: python benchmarks/papers/fw_sampled.py GRAPH.npz --ks 64 --seed 1 --out FILE.csv
"""

from __future__ import annotations

import argparse
import csv
import platform
import statistics
import time
from pathlib import Path

import numpy as np
from numba import njit

import gpusp
from gpusp.data.graph import dense_predecessors
from gpusp.solvers.floydwarshall.cpu import fw_step as solver_step


def fw_step(d, p, inf, k):
    """Step k of ``floydwarshall_cpu``'s loop (row skip) on (d, p) in place; False when a diagonal entry turns
    negative."""
    return solver_step(d, p, inf, k, True, True)


@njit(cache=True)
def paper_step(d, p, inf, k):
    """Step k of paper 000's serial loop on (d, p) in place: every (i, j), d[i][k] read and tested for each."""
    n = d.shape[0]
    for i in range(n):
        for j in range(n):
            if d[i, k] != inf and d[k, j] != inf and d[i, k] + d[k, j] < d[i, j]:
                d[i, j] = d[i, k] + d[k, j]
                p[i, j] = p[k, j]
        if d[i, i] < 0:
            return False
    return True


def every_step(d, p, inf, k):
    """Step k visiting every (i, j): ``floydwarshall_cpu``'s loop with row_skip false on non-negative weights, whose
    sums carry no INF test to lift."""
    return solver_step(d, p, inf, k, False, True)


STEPS = {"paper_s": paper_step, "every_s": every_step}


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def interval(per_step: list[float], n: int) -> tuple[float, float, float]:
    """n x the mean step time and its 95 % interval (normal, from the steps' spread), in seconds."""
    mean = statistics.fmean(per_step)
    half = 1.96 * statistics.stdev(per_step) / len(per_step) ** 0.5 if len(per_step) > 1 else float("nan")
    return mean * n, (mean - half) * n, (mean + half) * n


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("graph")
    ap.add_argument("--ks", type=int, default=64, help="sampled steps k timed with the other two loops (default 64)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True, help="CSV of the sampled steps and the estimates")
    a = ap.parse_args(argv)
    g = gpusp.read_graph(a.graph)
    d = g.to_dense()
    p = dense_predecessors(d, g.inf)
    inf = g.dtype.type(g.inf)
    sampled = set(np.random.default_rng(a.seed).choice(g.n, size=min(a.ks, g.n), replace=False).tolist())
    if g.m and g.weights.min() < 0:
        raise SystemExit(f"{a.graph}: negative weights (every_step needs non-negative ones)")
    for step in (fw_step, *STEPS.values()):  # compile outside the clock
        step(d[:1, :1].copy(), p[:1, :1].copy(), inf, 0)
    skip_s, rows = [], []
    for k in range(g.n):
        row = {"k": k}
        if k in sampled:
            for column, step in STEPS.items():
                dc, pc = d.copy(), p.copy()
                t0 = time.perf_counter()
                step(dc, pc, inf, k)
                row[column] = time.perf_counter() - t0
                del dc, pc
        t0 = time.perf_counter()
        ok = fw_step(d, p, inf, k)
        skip_s.append(time.perf_counter() - t0)
        if not ok:
            raise SystemExit(f"{a.graph}: a negative cycle at step {k}")
        if k in sampled:
            rows.append({**row, "skip_s": skip_s[-1]})
    est = {"graph": Path(a.graph).name, "n": g.n, "sampled": len(rows), "seed": a.seed,
           "skip_measured_s": sum(skip_s)}
    for column in ("skip_s", *STEPS):
        name = column.removesuffix("_s")
        est.update(zip((f"{name}_estimate_s", f"{name}_ci95_low_s", f"{name}_ci95_high_s"),
                       interval([r[column] for r in rows], g.n)))
    est.update(cpu=cpu_model(), python=platform.python_version())
    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]) + list(est))
        w.writeheader()
        for r in rows:
            w.writerow({**r, **est})
    print(f"Floyd-Warshall on {est['graph']}, {len(rows)} sampled steps of {g.n} on {est['cpu']}: ours (row skip) "
          f"measured {est['skip_measured_s']:.1f} s, estimated {est['skip_estimate_s']:.1f} s; the paper's loop as "
          f"compiled {est['paper_estimate_s']:.1f} s (95 % {est['paper_ci95_low_s']:.1f}-"
          f"{est['paper_ci95_high_s']:.1f}); every element visited {est['every_estimate_s']:.1f} s (95 % "
          f"{est['every_ci95_low_s']:.1f}-{est['every_ci95_high_s']:.1f})")


if __name__ == "__main__":
    main()
