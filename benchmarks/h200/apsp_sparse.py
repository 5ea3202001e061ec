"""Issue 10's H200 run in one process: multisource_fast checked on awkward graphs, then swept on SNAP graphs.

usage (on the device, repo root, after benchmarks/h200/run.sh's pip line, i.e. with PYTHONPATH=/tmp/site:src):
    PYTHONPATH=src python3 benchmarks/h200/apsp_sparse.py --data .devdata --out $OUT [--graphs ...] [--quick]
        [--baseline] [--no-checks] [--peers] [--profile-run]

(a) checks (skipped with --no-checks): the tests' awkward graphs (tests/cases.py) and two random graphs of
    n = 2000 (weights 1..100 and 0..10) with a many-block cooperative grid, every row checked against SciPy
    (distances and the five tree checks per row).
(b) sweep: multisource_fast over batch x split (x block) on each graph (SNAP graphs with weights 1..100,
    seed 1, as paper 000 adds them); --quick: one knob at a time around the defaults (parents, unroll, regs,
    batch); --baseline: the defaults only, so that an earlier tree (PYTHONPATH=old/src) runs it too; one warm-up + TRIALS timed runs (CUDA events around the device work;
    d2h of the n x n result timed apart), 16 seeded rows validated against SciPy.
(c) --peers: the dense FW (blockedfw_fast, defaults, paths on), paper 001's nsssp_shared and SciPy's
    all-sources Dijkstra on every core (scipy_apsp workers=0), one timed run each, validated the same way.
Every configuration is a row of apsp-sparse-sweep.csv, rewritten after each one.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
import traceback
from pathlib import Path

import numpy as np

import gpusp
import gpusp.device
from gpusp.data.weights import add_weights
from gpusp.measure.validate import check_apsp, sample_rows

FIELDS = ["graph", "n", "m", "solver", "batch", "split", "block", "regs", "unroll", "parents", "median_ms", "q1_ms",
          "q3_ms", "min_ms", "d2h_ms", "compile_s", "iterations", "tree_levels", "tight_parents", "batches", "items",
          "relaxations", "grid", "result_on_device", "valid", "rows_checked", "note", "samples_ms"]
TRIALS = 3
SNAP = ("p2p-Gnutella04", "wiki-Vote", "p2p-Gnutella30", "email-Enron")


def snap(data: Path, name: str):
    return add_weights(gpusp.read_graph(data / f"{name}.txt.gz", name=name), 1, 100, 1)


def run_one(graph, solver, params, rows, trials, warmup=1):
    """One configuration: timings, counters and the verdict on ``rows`` (all rows when None)."""
    res = gpusp.solve(graph, solver, None, trials=trials, warmup=warmup, **params)
    verdict = check_apsp(graph, res.dist, res.parent, rows=rows)
    t = res.timings
    c = res.counters
    return {"graph": graph.name, "n": graph.n, "m": graph.m, "solver": solver, "batch": c.get("batch", ""),
            "split": params.get("split", ""), "block": params.get("block", ""), "regs": params.get("regs", ""),
            "unroll": params.get("unroll", ""), "parents": params.get("parents", ""),
            "median_ms": round(t.median_ms, 4), "q1_ms": round(t.q1_ms, 4), "q3_ms": round(t.q3_ms, 4),
            "min_ms": round(min(t.samples_ms), 4), "d2h_ms": round(t.d2h_ms, 2), "compile_s": round(t.compile_s, 2),
            **{k: c.get(k, "") for k in ("iterations", "tree_levels", "tight_parents", "batches", "items",
                                          "relaxations", "grid", "result_on_device")},
            "valid": verdict.ok, "rows_checked": verdict.checks.get("rows_checked", ""),
            "note": "" if verdict.ok else str(verdict.mismatches)[:200],
            "samples_ms": " ".join(f"{x:.4f}" for x in t.samples_ms)}


def checks():
    """Awkward graphs on the real GPU, every row against SciPy; yields one result row per case."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
    from cases import random_graph, sssp_cases

    cases = [(label, g) for label, g, _ in sssp_cases()]
    cases += [("random-2000-w1", random_graph(2000, 8000, seed=7, wmin=1, wmax=100)),
              ("random-2000-w0", random_graph(2000, 8000, seed=8, wmin=0, wmax=10))]
    for label, g in cases:
        for params in ({"batch": 32, "split": 2}, {"batch": 1024}, {"batch": 64, "parents": "levels", "unroll": 8}):
            try:
                row = run_one(g, "multisource_fast", params, None, trials=1)
            except Exception as exc:  # report and go on: one failure must not hide the others
                row = {"graph": label, "solver": "multisource_fast", "valid": False, "note": repr(exc)[:200]}
            row["graph"] = f"check:{label}"
            yield row


def sweep(quick: bool, baseline: bool):
    """Parameter sets for the multisource sweep (each on the solver's defaults)."""
    if baseline:  # the solver's defaults only: runs on any earlier gpusp tree too
        return [{}]
    if quick:  # one knob at a time around the defaults
        return [{}, {"parents": "levels"}, {"unroll": 1}, {"regs": 32}, {"regs": 48}, {"regs": 64},
                {"batch": 1024}]
    out = [{"batch": b, "split": s} for b in (0, 128, 256, 512, 1024, 2048) for s in (32, 128)]
    return out + [{"batch": 1024, "block": 512}, {"batch": 1024, "block": 1024}]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path(".devdata"))
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--graphs", nargs="+", default=list(SNAP))
    ap.add_argument("--quick", action="store_true", help="one knob at a time around the defaults")
    ap.add_argument("--baseline", action="store_true", help="the defaults only (works on earlier gpusp trees)")
    ap.add_argument("--no-checks", action="store_true")
    ap.add_argument("--peers", action="store_true", help="also blockedfw_fast, nsssp_shared and scipy_apsp")
    ap.add_argument("--profile-run", action="store_true",
                    help="one untimed, unchecked solve with the defaults per graph (to run under ncu)")
    args = ap.parse_args()
    if args.profile_run:
        for name in args.graphs:
            res = gpusp.solve(snap(args.data, name), "multisource_fast", None, warmup=0, trials=1)
            print(name, res.counters, flush=True)
        return
    args.out.mkdir(parents=True, exist_ok=True)
    print(gpusp.device.device_info(), flush=True)
    rows = []

    def emit(row):
        rows.append(row)
        with open(args.out / "apsp-sparse-sweep.csv", "w", newline="") as fh:  # rewrite after every row
            w = csv.DictWriter(fh, fieldnames=FIELDS, extrasaction="ignore")
            w.writeheader()
            w.writerows(rows)
        print(" ".join(f"{k}={row.get(k, '')}" for k in FIELDS[:-1] if row.get(k, "") != ""), flush=True)

    if not args.no_checks:
        for row in checks():
            emit(row)
    for name in args.graphs:
        graph = snap(args.data, name)
        sample = sample_rows(graph.n, 16, seed=1)
        configs = [("multisource_fast", p) for p in sweep(args.quick, args.baseline)]
        if args.peers:
            configs += [("blockedfw_fast", {}), ("nsssp_shared", {}), ("scipy_apsp", {"workers": 0})]
        for solver, params in configs:
            t0 = time.perf_counter()
            try:
                trials = TRIALS if solver == "multisource_fast" else 1
                row = run_one(graph, solver, params, sample, trials, warmup=1 if solver == "multisource_fast" else 0)
            except Exception as exc:
                traceback.print_exc()
                row = {"graph": name, "n": graph.n, "m": graph.m, "solver": solver, **params, "valid": False,
                       "note": repr(exc)[:200]}
            row["note"] = (row.get("note") or "") + f" wall {time.perf_counter() - t0:.1f} s"
            emit(row)


if __name__ == "__main__":
    main()
