"""What one dependent hop costs in the cluster solvers: a broom of ``width`` chains of ``length`` vertices hanging off
the source, weights 1, one bucket (delta above every distance). Chain c's vertex at depth p has id 1 + p x width + c,
so a depth's vertices are neighbouring ids, as a road graph's wave is. Width 0 stands for the fixed cost: 400,000
vertices on a ring that the source does not reach. deltastep_cluster takes one round per depth,
deltastep_clusterasync one dependent expansion per depth: time / length is the cost of a hop with ``width``
vertices in flight. Every answer is checked against the known distances (the depth).

usage (device, repo root, after ``. benchmarks/h200/env.sh``):
  python3 benchmarks/h200/wave_micro.py [--widths 1 64 1024] [--length 4000] [--out $OUT/wave-micro.csv]
"""

from __future__ import annotations

import argparse
import csv
import json

import numpy as np

import gpusp


def broom(width: int, length: int) -> gpusp.Graph:
    n = 1 + width * length
    heads = np.arange(1, 1 + width, dtype=np.int64)
    src = [np.zeros(width, dtype=np.int64)]
    dst = [heads]
    for p in range(1, length):
        src.append(1 + (p - 1) * width + np.arange(width, dtype=np.int64))
        dst.append(1 + p * width + np.arange(width, dtype=np.int64))
    src, dst = np.concatenate(src), np.concatenate(dst)
    return gpusp.Graph.from_edges(n, src, dst, np.ones(src.size, dtype=np.int64), name=f"broom-{width}x{length}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--widths", type=int, nargs="+", default=[1, 64, 1024])
    ap.add_argument("--length", type=int, default=4000)
    ap.add_argument("--solvers", nargs="+", default=["deltastep_clusterasync", "deltastep_cluster"])
    ap.add_argument("--params", default="{}", help="JSON parameters for every solver")
    ap.add_argument("--out", default="wave-micro.csv")
    args = ap.parse_args()
    rows = []
    for width in args.widths:
        if width == 0:  # the fixed cost: 400,000 vertices on a ring the source does not reach
            length = 1
            ring = np.arange(1, 400_000, dtype=np.int64)
            graph = gpusp.Graph.from_edges(400_000, ring, np.roll(ring, 1), np.ones(ring.size, dtype=np.int64),
                                           name="idle-400000")
            want = np.concatenate([[0], np.full(ring.size, graph.inf)])
        else:
            length = max(50, min(args.length, 400_000 // width))
            graph = broom(width, length)
            want = np.concatenate([[0], np.repeat(np.arange(1, length + 1), width)])
        for name in args.solvers:
            res = gpusp.solve(graph, name, 0, warmup=1, trials=5, delta=10**8, **json.loads(args.params))
            ok = bool(np.array_equal(res.dist, want))
            t = res.timings
            rows.append({"solver": name, "width": width, "length": length, "median_ms": t.median_ms,
                         "us_per_hop": 1000 * t.median_ms / length, "iterations": res.counters["iterations"],
                         "expansions": res.counters.get("expansions", ""), "ok": ok})
            print(rows[-1], flush=True)
    with open(args.out, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
