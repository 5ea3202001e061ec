"""Registers, shared and local memory of the blockedfw_fast kernels that `gpusp bench` runs used, on this GPU.

usage (on the device, repo root, after benchmarks/h200/run.sh's pip line):
    PYTHONPATH=/tmp/site:src python3 benchmarks/h200/fastfw_resources.py RUN [RUN ...] [--out resources.csv]

RUN is a folder holding gpusp bench records (the --out folder of `gpusp bench`, /tmp/bench-NAME on the device, or an
unpacked NAME-records.tar.gz). Each blockedfw_fast record names the kernel configuration it ran in its counters (tile,
regblock, arith, paths, p12, inner, unroll, stage, persistent); every distinct one is compiled here for the current
device with gpusp.solvers.blockedfw.fast.kernels.kernels() and its main kernel (phase 3's k3, or the persistent kernel) asked
for its registers per thread, static shared memory per block and local memory per thread (numba's compiled-kernel
attributes). Prints a markdown table; --out writes the CSV that benchmarks/apsp_fast_table.py --resources joins on
(tile, regblock, kernel_arith, paths, p12, inner, unroll, stage). Offline, without a GPU, benchmarks/fastfw_sass.py
reads registers and spills from ptxas instead.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

KEY = ["tile", "regblock", "kernel_arith", "paths", "p12", "inner", "unroll", "stage"]
FIELDS = KEY + ["kernel", "regs", "smem", "local", "note"]


def configurations(runs) -> list[dict]:
    """The distinct kernel configurations of the blockedfw_fast records under ``runs``, in the order first seen."""
    seen = {}
    for run in runs:
        for path in sorted(Path(run).rglob("*.json")):
            record = json.loads(path.read_text())
            if not isinstance(record, dict) or record.get("solver") != "blockedfw_fast" or not record.get("runs"):
                continue
            c = record["runs"][0]["counters"]
            row = {"tile": int(c["tile"]), "regblock": int(c["regblock"]), "kernel_arith": c["arith"],
                   "paths": bool(c["paths"]), "p12": c["p12"], "inner": c["inner"], "unroll": int(c["unroll"]),
                   "stage": c["stage"], "kernel": "persistent" if c.get("persistent") else "k3"}
            seen.setdefault(tuple(row.values()), row)
    return list(seen.values())


def resources(row: dict) -> dict:
    """The row with regs, smem and local of its main kernel compiled for the current device."""
    from gpusp.solvers.blockedfw.fast.kernels import kernel_sigs, kernels

    try:
        ks = kernels(row["tile"], row["regblock"], row["kernel_arith"], row["paths"], p12=row["p12"],
                     inner=row["inner"], unroll=row["unroll"], stage=row["stage"])
        compiled = ks[row["kernel"]].compile(kernel_sigs(row["kernel_arith"])[row["kernel"]])
        return dict(row, regs=compiled.regs_per_thread, smem=compiled.shared_mem_per_block,
                    local=compiled.local_mem_per_thread, note="")
    except Exception as exc:  # report and go on: one kernel that numba cannot describe must not hide the others
        return dict(row, note=f"{type(exc).__name__}: {exc}"[:200])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", help="folders holding gpusp bench records")
    ap.add_argument("--out", type=Path, help="CSV to write")
    args = ap.parse_args()
    rows = [resources(row) for row in configurations(args.runs)]
    if not rows:
        print("no blockedfw_fast records found", file=sys.stderr)
        return 1
    print("| " + " | ".join(FIELDS) + " |")
    print("|" + "---|" * len(FIELDS))
    for row in rows:
        print("| " + " | ".join(str(row.get(k, "")) for k in FIELDS) + " |", flush=True)
    if args.out:
        with open(args.out, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=FIELDS)
            w.writeheader()
            w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
