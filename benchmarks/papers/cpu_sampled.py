"""Paper 000's CPU all-pairs Dijkstra (``dijkstra_cpumatrix``) estimated from a seeded sample of its sources.

The whole run is n independent single-source searches over the same n x n matrix, so its time is the sum of
the per-source times; a uniform random sample of sources, timed in equal batches, estimates that sum as n x the
mean per-source time, with a 95 % interval from the spread between batches. It runs the solver's own compiled
loop (``gpusp.solvers.dijkstra.cpu.dijkstra_matrix_rows``) on the solver's own matrix; only the source list differs.

usage: python benchmarks/papers/cpu_sampled.py GRAPH.npz --sources 1024 --batches 16 --seed 1 --out FILE.csv
"""

from __future__ import annotations

import argparse
import csv
import platform
import statistics
import time
from pathlib import Path

import numpy as np

import gpusp
from gpusp.solvers.dijkstra.cpu import dijkstra_matrix_rows


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("graph")
    ap.add_argument("--sources", type=int, default=1024, help="sampled sources (default 1024)")
    ap.add_argument("--batches", type=int, default=16, help="equal batches the sample is timed in (default 16)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True, help="CSV of the batches and the estimate")
    a = ap.parse_args(argv)
    g = gpusp.read_graph(a.graph)
    cost = g.to_dense()
    inf = g.dtype.type(g.inf)
    dist = np.empty_like(cost)
    parent = np.empty(cost.shape, dtype=np.int32)
    keys = np.empty(g.m + 1, dtype=g.dtype)  # one push per decrease: at most one per arc, plus the source
    vals = np.empty(g.m + 1, dtype=np.int32)
    sample = np.random.default_rng(a.seed).choice(g.n, size=min(a.sources, g.n), replace=False)
    dijkstra_matrix_rows(cost, inf, dist, parent, sample[:1], keys, vals)  # compile outside the clock
    rows = []
    for b, chunk in enumerate(np.array_split(sample, a.batches)):
        t0 = time.perf_counter()
        pops, _ = dijkstra_matrix_rows(cost, inf, dist, parent, chunk, keys, vals)
        s = time.perf_counter() - t0
        rows.append({"batch": b, "sources": chunk.size, "seconds": s, "pops": int(pops),
                     "s_per_source": s / chunk.size})
    per = [r["s_per_source"] for r in rows]
    mean = statistics.fmean(per)
    half = 1.96 * statistics.stdev(per) / len(per) ** 0.5 if len(per) > 1 else float("nan")
    est = {"graph": Path(a.graph).name, "n": g.n, "sampled": int(sample.size), "seed": a.seed,
           "estimate_s": mean * g.n, "ci95_low_s": (mean - half) * g.n, "ci95_high_s": (mean + half) * g.n,
           "cpu": cpu_model(), "python": platform.python_version()}
    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]) + list(est))
        w.writeheader()
        for r in rows:
            w.writerow({**r, **est})
    print(f"dijkstra_cpumatrix on {est['graph']}: {a.sources} sampled sources -> all {g.n} sources "
          f"{est['estimate_s']:.0f} s (95 % {est['ci95_low_s']:.0f}-{est['ci95_high_s']:.0f} s) on {est['cpu']}")


if __name__ == "__main__":
    main()
