"""Memory traffic of profiled kernels (finding 1.5b: paper 001's shared memory against device-memory traffic) from
Nsight Compute's CSV report: each input is one profiled run (``ncu --csv --print-units base --metrics ...
--log-file FILE``), named ``SOLVER|GRAPH=FILE``; the output has one row per run with the bytes summed over every
profiled launch. Run from the repository root:

    PYTHONPATH=src python benchmarks/papers/ncu_traffic.py OUT.csv 'nsssp_global|random-n4096-k4-w4096=global.csv' ...

gpusp.report.findings reads OUT.csv (experiment 'profile'). ncu's report has one row per launch and metric (columns
"ID", "Kernel Name", "Metric Name", "Metric Unit", "Metric Value", among others); lines before its header (ncu's
own ==PROF== lines) are skipped, a value may carry thousands separators, a unit a decimal or binary prefix.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from pathlib import Path

from gpusp.atomic import atomic_open

METRICS = {"dram__bytes_read.sum": "dram_read_bytes", "dram__bytes_write.sum": "dram_write_bytes",
           "lts__t_bytes.sum": "l2_bytes"}
COLUMNS = ("solver", "graph", "launches", "kernels", "dram_read_bytes", "dram_write_bytes", "dram_bytes", "l2_bytes")
UNITS = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12,
         "Kibyte": 2**10, "Mibyte": 2**20, "Gibyte": 2**30, "Tibyte": 2**40}
HEADER = ("ID", "Kernel Name", "Metric Name", "Metric Unit", "Metric Value")


class ReportError(ValueError):
    """A report ncu did not write as documented, named by its file and line."""


def read_report(path) -> dict:
    """{'launches', 'kernels', and each METRICS column: the sum over launches} of one ncu CSV report."""
    lines = Path(path).read_text().splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        raise ReportError(f"{path}: no ncu CSV header (a line starting with \"ID\")")
    rows = csv.DictReader(io.StringIO("\n".join(lines[start:])))
    if missing := [c for c in HEADER if c not in (rows.fieldnames or [])]:
        raise ReportError(f"{path}, line {start + 1}: the header has no column {', '.join(missing)}")
    totals = dict.fromkeys(METRICS.values(), None)  # a metric the report lacks stays empty, never 0
    launches, kernels = set(), set()
    for number, row in enumerate(rows, start + 2):
        if row["Metric Name"] not in METRICS:
            continue
        unit, text = row["Metric Unit"], row["Metric Value"].replace(",", "")
        try:
            value = float(text) * UNITS[unit]
        except (KeyError, ValueError):
            raise ReportError(f"{path}, line {number}: {row['Metric Name']} = {row['Metric Value']!r} "
                              f"{unit!r} is not a byte count") from None
        totals[METRICS[row["Metric Name"]]] = (totals[METRICS[row["Metric Name"]]] or 0.0) + value
        launches.add(row["ID"])
        kernels.add(row["Kernel Name"].split("(")[0])
    if not launches:
        raise ReportError(f"{path}: no launch with any of {', '.join(METRICS)}")
    return {"launches": len(launches), "kernels": " ".join(sorted(kernels)), **totals,
            "dram_bytes": None if None in (totals["dram_read_bytes"], totals["dram_write_bytes"]) else
            totals["dram_read_bytes"] + totals["dram_write_bytes"]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, help="the CSV to write (one row per run)")
    ap.add_argument("runs", nargs="+", help="SOLVER|GRAPH=NCU_CSV: one profiled run's report")
    args = ap.parse_args(argv)
    rows = []
    for run in args.runs:
        label, eq, path = run.rpartition("=")
        if not eq or label.count("|") != 1:
            ap.error(f"{run!r}: expected SOLVER|GRAPH=NCU_CSV")
        solver, graph = label.split("|")
        try:
            rows.append({"solver": solver, "graph": graph, **read_report(path)})
        except (OSError, ReportError) as err:
            print(f"ncu_traffic: {err}", file=sys.stderr)
            return 1
    with atomic_open(args.out, newline="") as fh:
        writer = csv.DictWriter(fh, COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    for row in rows:
        print(f"{row['solver']} {row['graph']}: {row['launches']} launches, DRAM {row['dram_bytes']} B, "
              f"L2 {row['l2_bytes']} B")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
