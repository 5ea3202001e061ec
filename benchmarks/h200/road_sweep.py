"""Sweeps for issue 26 on the lent GPU, in one process per call (each graph built and read once).

* ``grid``: deltastep_gpu over a delta x lanes matrix on the grid stand-in (4096 x 4096, weights 1..1000) for
  several weight seeds and 8 seeded sources each: which setting is best, and how far the defaults are from it.
* ``many``: SSSP solvers (a batched one such as multisource_sssp or phast_gpu, or several one-source solvers side by
  side) from K seeded sources of the real graphs or of the generated stand-ins ``gridK`` and ``delaunay-K`` (as
  benchmarks/road_pieces_floor.py makes them) or the unit-weight cycle ``ringK``, with several parameter sets.

Every answer is checked: the first configuration of a graph with the five tree checks against SciPy (the reference
computed once per graph, over every core), the others' distances against the same reference. One CSV row per
configuration and source: median ms of the trials, its spread, counters, verdict.

usage (device, repo root, after ``. benchmarks/h200/env.sh``):
  python3 benchmarks/h200/road_sweep.py grid --seeds 1 2 3 4 --out $OUT/grid.csv
  python3 benchmarks/h200/road_sweep.py many --graphs USA-road-d.NY ... --sources 1024 --configs - batch=512
      --out $OUT/many.csv
  python3 benchmarks/h200/road_sweep.py many --graphs USA-road-d.NY USA-road-d.BAY grid1024 delaunay-20
      --solver deltastep_gpu deltastep_clusterasync deltastep_pieces --sources 16 --out $OUT/pieces.csv
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import sys
import time
from pathlib import Path

import numpy as np

import gpusp
from gpusp.data import generate
from gpusp.data.weights import add_weights
from gpusp.measure.harness import solve_many
from gpusp.measure.sources import pick_sources
from gpusp.measure.validate import check_sssp, reference_rows

FIELDS = ["graph", "n", "m", "solver", "params", "source", "k", "median_ms", "q1_ms", "q3_ms", "batch_median_ms",
          "iterations", "counters", "valid"]
SNAP = ("p2p-Gnutella30", "email-Enron", "p2p-Gnutella04", "p2p-Gnutella25")


def load(name: str, mirror: Path):
    """A real graph from the mirror, SNAP graphs with seeded weights 1..100 (seed 1) as every issue-8 run; ``gridK``
    (K x K, weights 1..100, seed 0) and ``delaunay-K`` (seed 1) generated as benchmarks/road_pieces_floor.py does;
    ``ringK``, the directed cycle of K vertices with unit weights, whose K - 1 hops from any source price a hop (and,
    with pieces in stripes, a crossing) alone."""
    if name.startswith("ring"):
        return generate.generate("ring", n=int(name[4:]), wmin=1, wmax=1, seed=0)
    if name.startswith("grid"):
        return generate.generate("grid", rows=int(name[4:]), cols=int(name[4:]), wmin=1, wmax=100, seed=0)
    if name.startswith("delaunay-"):
        return generate.generate("delaunay", scale=int(name.split("-")[1]), seed=1)
    path = next(mirror.glob(f"{name}.*gz"))
    graph = gpusp.read_graph(path)
    return add_weights(graph, 1, 100, seed=1) if name in SNAP else graph


def run_configs(writer, graph, label, solver, configs, sources, trials, warmup, ref=None):
    """Every configuration from the same sources; the first one fully checked, the rest by distances (``ref``: the
    sources' reference distances, computed here where not given)."""
    ref = reference_rows(graph, sources).dist if ref is None else ref
    for i, params in enumerate(configs):
        t0 = time.perf_counter()
        try:
            results = list(solve_many(graph, solver, sources, trials=trials, warmup=warmup, **params))
        except Exception as exc:  # a configuration that cannot run is a row, not the end of the sweep
            print(f"{label} {solver} {params}: {type(exc).__name__}: {exc}", flush=True)
            continue
        for j, r in enumerate(results):
            if i == 0:
                ok = check_sssp(graph, r.source, r.dist, r.parent, ref[j]).ok
            else:
                ok = bool(np.array_equal(r.dist, ref[j]))
            t = r.timings
            writer.writerow({"graph": label, "n": graph.n, "m": graph.m, "solver": solver,
                             "params": json.dumps(params, sort_keys=True), "source": r.source,
                             "k": t.batch_sources, "median_ms": t.median_ms, "q1_ms": t.q1_ms, "q3_ms": t.q3_ms,
                             "batch_median_ms": float(np.median(t.batch_ms)) if t.batch_ms else "",
                             "iterations": r.counters.get("iterations"), "valid": ok,
                             "counters": json.dumps({k: v for k, v in r.counters.items()
                                                     if isinstance(v, (int, float))})})
        med = np.median([r.timings.median_ms for r in results])
        bad = sum(1 for r, row in zip(results, ref) if not np.array_equal(r.dist, row))
        print(f"{label} {solver} {params}: median {med:.4f} ms/source, {len(results)} sources, "
              f"{bad} wrong, {time.perf_counter() - t0:.1f} s", flush=True)


def parse_config(text: str) -> dict:
    """'k=v,k=v' as parameters (integers where they parse), '-' as none; delta=xF is F x Davidson's rule of the
    graph."""
    out = {}
    for item in filter(None, text.strip("-").split(",")):
        key, _, value = item.partition("=")
        out[key] = int(value) if value.lstrip("-").isdigit() else value
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=("grid", "many"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4])
    ap.add_argument("--side", type=int, default=4096)
    ap.add_argument("--graphs", nargs="+", default=["USA-road-d.NY", "USA-road-d.BAY", "p2p-Gnutella30",
                                                    "email-Enron"])
    ap.add_argument("--solver", nargs="+", default=["multisource_sssp"], help="each run with every --configs set")
    ap.add_argument("--configs", nargs="+", default=["-"], help="parameter sets, each k=v,k=v ('-': the defaults)")
    ap.add_argument("--sources", type=int, default=8)
    ap.add_argument("--deltas", type=float, nargs="+", default=[1, 2, 4], help="x Davidson et al.'s rule")
    ap.add_argument("--lanes", type=int, nargs="+", default=[4, 8, 32])
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--mirror", default=".devdata")
    args = ap.parse_args(argv)
    with open(args.out, "w", newline="") as fh:
        writer = csv.DictWriter(fh, FIELDS)
        writer.writeheader()
        if args.mode == "grid":
            for seed in args.seeds:
                t0 = time.perf_counter()
                graph = generate.grid(args.side, args.side, 1, 1000, seed=seed)
                sources = pick_sources(graph, args.sources, 1, option="--sources")
                rule = graph.default_delta()
                configs = [{}] + [{"delta": int(round(d * rule)), "lanes": lanes}
                                  for d, lanes in itertools.product(args.deltas, args.lanes)]
                print(f"grid seed {seed}: built in {time.perf_counter() - t0:.1f} s, rule delta {rule}", flush=True)
                run_configs(writer, graph, f"grid-{args.side}-s{seed}", "deltastep_gpu", configs, sources,
                            args.trials, 1)
                fh.flush()
        else:
            for name in args.graphs:
                graph = load(name, Path(args.mirror))
                sources = pick_sources(graph, args.sources, 1, option="--sources")
                configs = [{k: (int(round(float(v[1:]) * graph.default_delta())) if k == "delta" and str(v)[:1] == "x"
                                else v) for k, v in parse_config(c).items()} for c in args.configs]
                ref = reference_rows(graph, sources).dist
                for solver in args.solver:
                    run_configs(writer, graph, name, solver, configs, sources, args.trials, 1, ref)
                    fh.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
