"""Issue 8's H200 run in one process: fast SSSP configurations beside GAPBS, SciPy and dijkstra_cpu.

usage (on the device, repo root, after benchmarks/h200/run.sh's pip line):
    PYTHONPATH=src python3 benchmarks/h200/sssp_fast.py --data .devdata --out $OUT [--graphs NAME ...]

Every graph is loaded once; every configuration runs from the same seeded sources (``trials`` timed
runs per source after a warm-up, CUDA events), and every answer is validated against SciPy (exact
distances + the five tree checks; GAPBS by its own verifier). The ring (4096 vertices, one active vertex
per round) gives the cost of an almost empty round for each launch mode: median time / rounds.
Writes sssp-fast.csv (one row per configuration and source) after every configuration and prints a
summary line per configuration.

``--only-snap``: deltastep_gpu at its defaults against the behaviour before the 2026-11-25 changes (one block per SM,
direct launches, one queue atomic per push), lanes x hub splitting on p2p-Gnutella30 and email-Enron (issue 8's SNAP
targets); the calls s1-s5 of 2026-11-25 ran earlier versions of this list (benchmarks/sssp-fast-h200.md).

``--only-async``: deltastep_async (blocks take bucketed work without grid barriers) around its defaults beside
deltastep_gpu at its best known setting, GAPBS on 16 threads and SciPy.

``--only-fuse`` (issue 8, block-local fusion): deltastep_gpu at the best known delta and lanes per graph
with fuse=off against fuse=block over a few fuse_limit / fuse_lanes values, beside GAPBS on 16 threads
and SciPy, on ``--graphs USA-road-d.NY USA-road-d.BAY grid-4096`` (about 4 minutes on the H200 with the
JIT and the GAPBS build, which ``$GPUSP_MIRROR``, set to ``--data`` when unset, supplies offline).
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time
import traceback
from pathlib import Path

import numpy as np

import importlib.util

import gpusp
import gpusp.device
from gpusp.measure.harness import solve_many
from gpusp.data.generate import grid, ring
from gpusp.measure.sources import pick_sources
from gpusp.measure.validate import check_sssp, reference_distances
from gpusp.data.weights import add_weights

FIELDS = ["graph", "n", "m", "solver", "params", "source", "median_ms", "q1_ms", "q3_ms", "min_ms", "compile_s",
          "iterations", "buckets", "relaxations", "launches", "valid", "note", "grid_steps", "block_steps",
          "fused_steps", "pops", "stale", "idle_polls", "retries"]
NOTE = ("delta", "lanes", "chain", "grid", "threads", "fuse_limit", "fuse_lanes", "window", "capacity", "split", "push",
        "launch")  # in the note


GRAPHS = {
    "ring-4096": (lambda data: ring(4096, 1, 100, seed=1), 2),
    "USA-road-d.NY": (lambda data: gpusp.read_graph(data / "USA-road-d.NY.gr.gz"), 16),
    "USA-road-d.BAY": (lambda data: gpusp.read_graph(data / "USA-road-d.BAY.gr.gz"), 16),
    "p2p-Gnutella30": (lambda data: add_weights(gpusp.read_graph(data / "p2p-Gnutella30.txt.gz"), 1, 100, 1), 16),
    "email-Enron": (lambda data: add_weights(gpusp.read_graph(data / "email-Enron.txt.gz"), 1, 100, 1), 16),
    "grid-4096": (lambda data: grid(4096, 4096, 1, 1000, seed=1), 2),
}


def configs(label, graph, with_gapbs, gapbs_threads=(1, 16), deltas=3):
    """(solver, params) pairs for one graph: deltas are multiples of Davidson et al.'s rule (width 32)."""
    base = graph.default_delta()
    out = [("deltastep_gpu", {})]
    for mult in (1, 4, 16):
        for lanes in (4, 32):
            out.append(("deltastep_gpu", {"delta": max(1, int(base * mult)), "lanes": lanes}))
    out.append(("deltastep_gpu", {"chain": 16, "lanes": 4}))  # inline path-following (fewer rounds)
    for blocks in (33, 66, 264):
        out.append(("deltastep_gpu", {"grid": blocks}))
    out.append(("deltastep_gpu", {"delta": 2**30, "lanes": 4}))
    if not label.startswith("grid"):  # the paper variants take seconds per source on the 16.8 M grid
        for name in ("vertexbf_push", "edgebf_coo"):
            for launch in ("host", "graph", "persistent"):
                out.append((name, {"launch": launch}))
    out += [("scipy_dijkstra", {}), ("dijkstra_cpu", {})]
    if with_gapbs:  # one thread at GAPBS's own rule; every core at 1, 4 and 16 times it
        for threads in gapbs_threads:
            for mult in (1, 4, 16)[:1 if threads == 1 else deltas]:
                out.append(("gapbs_sssp", {"threads": threads, "delta": max(1, int(base * mult))}))
    return out


# best known (multiple of Davidson et al.'s delta, lanes) per graph, from benchmarks/sssp-fast-h200.md
FUSE_BEST = {"USA-road-d.NY": (4, 32), "USA-road-d.BAY": (4, 32), "grid-4096": (1, 4)}


def fuse_configs(label, graph, with_gapbs):
    """fuse=off against fuse=block at the graph's best delta and lanes, then SciPy and GAPBS 16 threads
    (last: on the 16.8 M grid its graph conversion takes a minute)."""
    mult, lanes = FUSE_BEST.get(label, (4, 32))
    base = graph.default_delta()
    best = {"delta": max(1, int(base * mult)), "lanes": lanes}
    block = dict(best, fuse="block")
    out = [("deltastep_gpu", best)]
    for limit in (64, 256, 1024):  # one, four and sixteen passes of a 256-thread block at 4 lanes
        out.append(("deltastep_gpu", dict(block, fuse_lanes=4, fuse_limit=limit)))
    if not label.startswith("grid"):  # rounds of thousands of vertices: fusion rarely applies on the grid
        out.append(("deltastep_gpu", dict(block, fuse_lanes=1, fuse_limit=256)))
        # a 512-thread block (the largest that fits: 112 registers a thread) holds more vertices per fused pass
        out.append(("deltastep_gpu", dict(best, block=512)))
        out.append(("deltastep_gpu", dict(block, block=512, fuse_lanes=2, fuse_limit=512)))
        out.append(("deltastep_gpu", dict(block, block=512, fuse_lanes=4, fuse_limit=256)))
        small = {"delta": max(1, int(base)), "lanes": lanes}  # smaller buckets: more, smaller rounds
        out.append(("deltastep_gpu", small))
        out.append(("deltastep_gpu", dict(small, fuse="block", fuse_lanes=4, fuse_limit=256)))
    out.append(("scipy_dijkstra", {}))
    if with_gapbs:
        out.append(("gapbs_sssp", {"threads": 16, "delta": max(1, int(base))}))
    return out


def async_configs(label, graph, with_gapbs):
    """deltastep_async (barrier-free buckets) around its defaults beside the synchronous deltastep_gpu at its best
    known setting, with and without hub splitting, SciPy and GAPBS on 16 threads (the grid: GAPBS left out, 309.6 ms
    on 2026-11-22)."""
    mult, lanes = FUSE_BEST.get(label, (4, 32))
    base = graph.default_delta()
    best = {"delta": max(1, int(base * mult)), "lanes": lanes}
    out = [("deltastep_gpu", best)] + [("deltastep_gpu", dict(best, split=k)) for k in (32, 128)]
    out.append(("deltastep_async", {}))
    for extra in ({"window": 2}, {"claim": 16}, {"grid": 528}, {"lanes": 32}):
        out.append(("deltastep_async", extra))
    out.append(("scipy_dijkstra", {}))
    if with_gapbs and not label.startswith("grid"):
        out.append(("gapbs_sssp", {"threads": 16, "delta": max(1, int(base))}))
    return out


def snap_configs(label, graph, with_gapbs):
    """deltastep_gpu at its defaults against the behaviour before calls s1-s6 (one block per SM, direct launches,
    a queue-counter atomic per push) and one block per SM alone; on the SNAP graphs also lanes 16 with and without
    hub splitting and a wider delta; beside edgebf_coo graph (not on the grid), SciPy, dijkstra_cpu (not on the grid)
    and GAPBS on 1 and 16 threads."""
    out = [("deltastep_gpu", {"push": "thread", "launch": "direct", "grid": 132}), ("deltastep_gpu", {"grid": 132}),
           ("deltastep_gpu", {}), ("deltastep_gpu", {"block": 512})]
    if label in ("p2p-Gnutella30", "email-Enron"):
        out += [("deltastep_gpu", {"lanes": 16, "split": 0}), ("deltastep_gpu", {"lanes": 16, "split": 32}),
                ("deltastep_gpu", {"lanes": 16, "split": 32, "delta": max(1, int(graph.default_delta() * 16))}),
                ("edgebf_coo", {"launch": "graph"})]
    if label == "grid-4096":
        out.append(("deltastep_gpu", {"delta": max(1, int(graph.default_delta())), "lanes": 4}))
    out.append(("scipy_dijkstra", {}))
    if not label.startswith("grid"):
        out.append(("dijkstra_cpu", {}))
    if with_gapbs:
        for threads in (1, 16):
            out.append(("gapbs_sssp", {"threads": threads, "delta": max(1, int(graph.default_delta()))}))
    return out


def run(args):
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    with_gapbs = importlib.util.find_spec("gpusp.solvers.gapbs") is not None
    for label in args.graphs:
        load, count = GRAPHS[label]
        graph = load(Path(args.data))
        sources = pick_sources(graph, count, 1)
        t0 = time.perf_counter()
        refs = reference_distances(graph, sources)
        print(f"== {label}: n={graph.n:,} m={graph.m:,} delta0={graph.default_delta()} sources={sources} "
              f"(reference {time.perf_counter() - t0:.1f} s)", flush=True)
        if args.only_async:
            todo = async_configs(label, graph, with_gapbs)
        elif args.only_snap:
            todo = snap_configs(label, graph, with_gapbs)
        elif args.only_fuse:
            todo = fuse_configs(label, graph, with_gapbs)
        else:
            todo = configs(label, graph, with_gapbs, args.gapbs_threads, args.gapbs_deltas)
        for name, params in todo:
            if args.solvers and name not in args.solvers:
                continue
            slow = name in ("dijkstra_cpu", "scipy_dijkstra", "gapbs_sssp")  # seconds per source at 16.8 M
            trials = 1 if slow and graph.n > 10**6 else args.trials
            warmup = 0 if slow and graph.n > 10**6 and args.only_fuse else 1  # CPU runs need no JIT warm-up
            t1 = time.perf_counter()
            try:
                results = list(solve_many(graph, name, sources, trials=trials, warmup=warmup, **params))
            except Exception as exc:  # record and go on: one bad configuration must not stop the sweep
                rows.append({"graph": label, "n": graph.n, "m": graph.m, "solver": name, "params": str(params),
                             "note": f"{type(exc).__name__}: {exc}"[:300]})
                print(f"   {name} {params}: FAILED {type(exc).__name__}: {exc}", flush=True)
                traceback.print_exc(limit=2)
                continue
            for i, res in enumerate(results):
                if res.dist is None:  # a peer (GAPBS), validated by its own verifier
                    ok = bool(res.counters["peer_verified"])
                else:
                    ok = check_sssp(graph, res.source, res.dist, res.parent, reference=refs[i]).ok
                t = res.timings
                c = res.counters
                rows.append({"graph": label, "n": graph.n, "m": graph.m, "solver": name, "params": str(params),
                             "source": res.source, "median_ms": t.median_ms, "q1_ms": t.q1_ms, "q3_ms": t.q3_ms,
                             "min_ms": t.min_ms, "compile_s": t.compile_s, "iterations": c.get("iterations"),
                             "buckets": c.get("buckets"), "relaxations": c.get("relaxations"),
                             "launches": c.get("launches"), "valid": ok, "grid_steps": c.get("grid_steps"),
                             "block_steps": c.get("block_steps"), "fused_steps": c.get("fused_steps"),
                             "pops": c.get("pops"), "stale": c.get("stale"), "idle_polls": c.get("idle_polls"),
                             "retries": c.get("retries"),
                             "note": " ".join(f"{k}={c[k]}" for k in NOTE if k in c)})
            mine = [r for r in rows[-len(results):]]
            med = float(np.median([r["median_ms"] for r in mine]))
            its = float(np.median([r["iterations"] or 0 for r in mine]))
            valid = all(r["valid"] for r in mine)
            steps = float(np.median([r["grid_steps"] or 0 for r in mine]))
            fused = float(np.median([r["fused_steps"] or 0 for r in mine]))
            print(f"   {name:<16} {str(params):<40} median {med:9.3f} ms  rounds {its:7.0f}  "
                  f"{med * 1e3 / max(its, 1):7.2f} us/round  grid steps {steps:6.0f}  fused rounds {fused:6.0f}  "
                  f"valid={valid}  ({time.perf_counter() - t1:.1f} s)", flush=True)
            with open(out / f"sssp-fast{args.tag}.csv", "w", newline="") as fh:
                w = csv.DictWriter(fh, fieldnames=FIELDS)
                w.writeheader()
                w.writerows(rows)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--data", default=".devdata")
    p.add_argument("--out", default="/tmp/out")
    p.add_argument("--trials", type=int, default=3)
    p.add_argument("--tag", default="", help="suffix of the CSV's name")
    p.add_argument("--graphs", nargs="+", default=list(GRAPHS), choices=list(GRAPHS))
    p.add_argument("--solvers", nargs="+", default=[], help="only these solvers (default: every one)")
    p.add_argument("--gapbs-threads", type=int, nargs="+", default=[1, 16], help="GAPBS thread counts")
    p.add_argument("--gapbs-deltas", type=int, default=3, help="GAPBS deltas (1, 4, 16 x the rule) at 16 threads")
    p.add_argument("--only-fuse", action="store_true", help="deltastep_gpu fuse=off vs fuse=block, GAPBS 16 "
                   "threads and SciPy only (issue 8's block-local fusion run)")
    p.add_argument("--only-async", action="store_true", help="deltastep_async around its defaults beside "
                   "deltastep_gpu's best, GAPBS 16 threads and SciPy (barrier-free buckets)")
    p.add_argument("--only-snap", action="store_true", help="deltastep_gpu's launch and push modes, then lanes x "
                   "hub splitting on the SNAP graphs, beside edgebf_coo graph, GAPBS 16 threads and SciPy")
    args = p.parse_args()
    if args.only_fuse or args.only_async or args.only_snap:
        os.environ.setdefault("GPUSP_MIRROR", str(Path(args.data).resolve()))  # the GAPBS archive, offline
    print(f"GPU and host: {gpusp.device.device_info()}", flush=True)
    run(args)


if __name__ == "__main__":
    main()
