"""The blockedfw_fast table from `gpusp bench` records: configuration as run, timings, n^3/t and the ceiling fractions.

usage: python benchmarks/apsp_fast_table.py RUN [RUN ...] [--ceiling CEILING] [--resources RESOURCES.csv]
           [--csv OUT.csv] > table.md

RUN is a folder holding gpusp bench records (a `gpusp bench --out` folder, or an unpacked NAME-records.tar.gz) or
run.sh's NAME-records.tar.gz itself; the configs are config/sweeps/apsp-fast-*.yaml. CEILING is the ceiling.csv of
benchmarks/h200/addmin_ceiling.py (rates per add-min flavour, its rows lead the CSV) or one number, the DPX rate per
second. RESOURCES is the CSV of benchmarks/h200/fastfw_resources.py (registers, shared and local memory per kernel).

One row per record, in the order the runs were made, with the columns of benchmarks/apsp-fast-h200.csv: kind (fast:
blockedfw_fast; anchor: the other solvers; ceiling), n, solver, the requested arith / paths / launch and the tile,
register block, phase 2 and kernel variant the solver chose (its counters), median / min / quartiles of the timed
runs (ms), rate_per_s = n^3 / median, its fraction of the DPX ceiling and of the ceiling of the add-min the kernel
used (kernel_arith), the kernel's resources, whether the answer validated, the reason of a run that did not complete,
and every sample. Prints the markdown table; --csv writes the CSV.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import tarfile
from pathlib import Path

import numpy as np

FIELDS = ["kind", "n", "solver", "tile", "regblock", "arith", "paths", "launch", "phase2", "p12", "inner", "unroll",
          "stage", "median_ms", "min_ms", "q1_ms", "q3_ms", "rate_per_s", "frac_dpx_ceiling", "frac_same_ceiling",
          "kernel_arith", "regs", "smem", "local", "valid", "note", "samples_ms"]
RESOURCE_KEY = ("tile", "regblock", "kernel_arith", "paths", "p12", "inner", "unroll", "stage")
VARIANT = ("p12", "inner", "unroll", "stage")


def records(runs) -> list[dict]:
    """Every record (a JSON object naming a solver) under the folders or in the tarballs, oldest first, each with the
    verdict of ``gpusp validate`` written beside it (``NAME.verdict.json``, as the workflow writes them) as
    ``_verdict`` where there is one."""
    out = []
    for run in runs:
        path = Path(run)
        if path.is_dir():
            texts = {str(p): p.read_text() for p in sorted(path.rglob("*.json"))}
        else:
            with tarfile.open(path) as tar:
                texts = {m.name: tar.extractfile(m).read() for m in tar.getmembers()
                         if m.isfile() and m.name.endswith(".json")}
        for name, text in texts.items():
            if name.endswith(".verdict.json"):
                continue
            record = json.loads(text)
            if isinstance(record, dict) and "solver" in record:
                verdict = texts.get(name.removesuffix(".json") + ".verdict.json")
                record["_verdict"] = json.loads(verdict) if verdict else None
                out.append(record)
    return sorted(out, key=lambda r: r["created"])


def read_ceiling(value: str | None) -> dict:
    """arith -> add-mins per second: addmin_ceiling.py's CSV, or one number (the DPX rate)."""
    if not value:
        return {}
    try:
        return {"dpx": float(value)}
    except ValueError:
        with open(value) as fh:
            return {r["arith"]: float(r["rate_per_s"]) for r in csv.DictReader(fh)}


def ceiling_rows(value: str | None) -> list[dict]:
    if not value or not Path(value).is_file():
        return []
    with open(value) as fh:
        return [{k: r.get(k) for k in FIELDS} for r in csv.DictReader(fh)]


def read_resources(path: str | None) -> dict:
    if not path:
        return {}
    with open(path) as fh:
        return {tuple(str(r[k]) for k in RESOURCE_KEY): r for r in csv.DictReader(fh)}


def row_of(record: dict, ceiling: dict, resources: dict) -> dict:
    params, n = record["params"], record["graph"]["n"]
    fast = record["solver"] == "blockedfw_fast"
    row = {"kind": "fast" if fast else "anchor", "n": n, "solver": record["solver"],
           "note": record.get("reason") or ""}
    if not fast:
        row["tile"] = params.get("tile", params.get("block_size"))
    if not record["runs"]:
        return {**row, **({k: params.get(k) for k in ("arith", "paths", "launch")} if fast else {}), "valid": None}
    run = record["runs"][0]
    counters, samples = run["counters"], np.asarray(run["timings"]["samples_ms"], dtype=float)
    med = float(np.median(samples))
    rate = n ** 3 / (med / 1e3)
    row.update(median_ms=med, min_ms=float(samples.min()), q1_ms=float(np.quantile(samples, 0.25)),
               q3_ms=float(np.quantile(samples, 0.75)), rate_per_s=rate,
               frac_dpx_ceiling=rate / ceiling["dpx"] if ceiling.get("dpx") else None,
               valid=bool(record["_verdict"]["ok"] if record["_verdict"] else record["summary"]["validated"])
               and record["status"] == "ok",
               samples_ms=";".join(f"{x:.6g}" for x in samples))
    if fast:
        kind = counters["arith"]
        row.update(tile=counters["tile"], regblock=counters["regblock"], arith=params["arith"],
                   paths=params["paths"], launch=params["launch"], phase2=counters["phase2"], kernel_arith=kind,
                   frac_same_ceiling=rate / ceiling[kind] if ceiling.get(kind) else None,
                   **{k: counters[k] for k in VARIANT})
        found = resources.get(tuple(str(row[k]) for k in RESOURCE_KEY))
        if found:
            row.update(regs=found["regs"], smem=found["smem"], local=found["local"])
    return row


def markdown(rows: list[dict]) -> str:
    def cell(value, fmt="{}"):
        return "" if value is None or value == "" else fmt.format(value)

    out = ["| n | solver | tile | R | arith | paths | launch | p12 | inner | unroll | stage | median ms | e12 relax/s | "
           "% DPX ceiling | valid |",
           "|---:|---|---:|---:|---|---|---|---|---|---:|---|---:|---:|---:|---|"]
    for r in rows:
        if r.get("kind") == "ceiling" or r.get("median_ms") is None:
            continue
        frac = r.get("frac_dpx_ceiling")
        out.append(f"| {r['n']} | {r['solver']} | {cell(r.get('tile'))} | {cell(r.get('regblock'))} | "
                   f"{cell(r.get('kernel_arith') or r.get('arith'))} | {cell(r.get('paths'))} | {cell(r.get('launch'))} | "
                   f"{cell(r.get('p12'))} | {cell(r.get('inner'))} | {cell(r.get('unroll'))} | {cell(r.get('stage'))} | "
                   f"{r['median_ms']:.3f} | {r['rate_per_s'] / 1e12:.2f} | {cell(frac and frac * 100, '{:.1f}')} | "
                   f"{r.get('valid')} |")
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", help="folders or NAME-records.tar.gz files holding gpusp bench records")
    ap.add_argument("--ceiling", help="addmin_ceiling.py's ceiling.csv, or the DPX add-min rate per second")
    ap.add_argument("--resources", help="fastfw_resources.py's CSV")
    ap.add_argument("--csv", type=Path, help="write the rows here")
    args = ap.parse_args()
    ceiling, resources = read_ceiling(args.ceiling), read_resources(args.resources)
    rows = ceiling_rows(args.ceiling) + [row_of(r, ceiling, resources) for r in records(args.runs)
                                        if r["problem"] == "apsp"]
    if args.csv:
        with open(args.csv, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=FIELDS)
            w.writeheader()
            w.writerows(rows)
    sys.stdout.write(markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
