"""Dense APSP over the GPUs of one host (issue 42, item 1): blockedfw_dist at gpus = 1 .. G beside blockedfw_fast
(one GPU, paths off) on seeded random graphs, each configuration one JSON line on stdout (times, relaxations a
second, each rank's device ms and GPU), every answer checked: seeded rows against SciPy's, and where
``--compare N`` asks, the whole matrix of every configuration at n = N against blockedfw_fast's, tile row by tile row.

usage (device, repo root, after ``. benchmarks/h200/env.sh``):
  python3 benchmarks/h200/multi_gpu_fw.py --runs fast:32768 dist1:32768 dist2:32768 dist2:131072 [--trials 3]
    [--warmup 1] [--degree 8] [--rows 4] [--compare 16384]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np
from gpusp import Graph
from gpusp.measure.validate import reference_rows
from gpusp.solvers import registry


def random_graph(n: int, degree: int, seed: int = 1) -> Graph:
    """n vertices, degree x n arcs between uniform endpoints, weights 1..100 (seeded)."""
    rng = np.random.default_rng(seed)
    m = degree * n
    return Graph.from_edges(n, rng.integers(0, n, m), rng.integers(0, n, m), rng.integers(1, 101, m),
                            name=f"random-n{n}-d{degree}")


def build(kind: str, graph: Graph):
    if kind == "fast":
        spec = registry.get("blockedfw_fast")
        return spec, spec.build(graph, paths=False)
    spec = registry.get("blockedfw_dist")
    return spec, spec.build(graph, gpus=int(kind[4:]))


def one(kind: str, n: int, args, compare_to=None) -> dict:
    graph = random_graph(n, args.degree)
    spec, solver = build(kind, graph)
    t0 = time.perf_counter()
    solver.upload()
    upload_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    for _ in range(args.warmup):  # blockedfw_fast compiles in its first run, blockedfw_dist in its upload
        solver.run(None)
    warmup_s = time.perf_counter() - t0
    walls, device_s, counters = [], [], {}
    for _ in range(args.trials):
        t0 = time.perf_counter()
        counters = solver.run(None)
        walls.append(time.perf_counter() - t0)
        if "rank_ms" in counters:  # the slowest rank's CUDA-event time of the trial
            device_s.append(max(counters["rank_ms"]) / 1e3)
    rows = np.random.default_rng(2).choice(n, size=min(n, args.rows), replace=False)
    whole = solver.download_distances() if kind == "fast" else None  # one copy: the checked rows and the reference
    mine = solver.rows(rows) if whole is None else whole[rows]
    ref = reference_rows(graph, rows).dist.astype(np.int64)
    ok_rows = bool(np.array_equal(np.asarray(mine, dtype=np.int64), ref))
    record = {"kind": kind, "n": n, "m": graph.m, "trials": args.trials, "upload_s": upload_s, "warmup_s": warmup_s,
              "wall_s": walls, "median_wall_s": statistics.median(walls), "device_s": device_s,
              "relaxations": counters.get("relaxations"), "rows_checked": len(rows), "rows_exact": ok_rows,
              "counters": {k: v for k, v in counters.items() if k != "relaxations"}}
    record["relax_per_s"] = record["relaxations"] / record["median_wall_s"]
    if compare_to is not None:
        whole = solver.rows(np.arange(n)) if whole is None else whole
        T = counters.get("tile", 64)
        bad = [int(I) for I in range(-(-n // T)) if not np.array_equal(whole[I * T:(I + 1) * T],
                                                                         compare_to[I * T:(I + 1) * T])]
        record["tile_rows_compared"] = -(-n // T)
        record["tile_rows_differing"] = bad[:10]
    if hasattr(solver, "close"):
        solver.close()
    return record, (whole if kind == "fast" and args.compare == n else None)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", nargs="+", required=True, help="KIND:N, KIND fast or distG (G GPUs)")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1, help="untimed runs before the trials")
    ap.add_argument("--degree", type=int, default=8)
    ap.add_argument("--rows", type=int, default=4, help="seeded rows checked against SciPy per configuration")
    ap.add_argument("--compare", type=int, default=0, help="n at which every configuration's whole matrix is "
                    "compared with blockedfw_fast's, tile row by tile row (its fast run must come first)")
    args = ap.parse_args()
    reference = None
    for run in args.runs:
        kind, n = run.split(":")
        n = int(n)
        try:
            record, full = one(kind, n, args, reference if n == args.compare else None)
        except Exception as exc:  # noqa: BLE001 - one failed configuration must not hide the others
            record, full = {"kind": kind, "n": n, "error": f"{type(exc).__name__}: {exc}"}, None
        if full is not None:
            reference = full
        print(json.dumps(record), flush=True)


if __name__ == "__main__":
    main()
