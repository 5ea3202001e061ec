"""Summarise benchmarks/h200/sssp_fast.py's CSV: one row per graph and configuration, with ratios.

usage: python benchmarks/sssp_fast_table.py sssp-fast-h200.csv > table.md

Per configuration: the median over sources of each source's median time, the spread of those (min-max),
rounds and arcs examined per source (median; relaxations / m), microseconds per round, whether every
source validated, and the ratios against GAPBS with 16 threads (its best delta), GAPBS with one thread and
SciPy on the same graph and sources (ratio > 1: this configuration is faster).
"""

from __future__ import annotations

import sys

import pandas as pd


def summarise(csv_path) -> pd.DataFrame:
    raw = pd.read_csv(csv_path)
    ok = raw.dropna(subset=["median_ms"])
    g = ok.groupby(["graph", "solver", "params"], sort=False)
    table = g.agg(n=("n", "first"), m=("m", "first"), median_ms=("median_ms", "median"),
                  lo_ms=("median_ms", "min"), hi_ms=("median_ms", "max"), rounds=("iterations", "median"),
                  relaxations=("relaxations", "median"), sources=("source", "count"),
                  valid=("valid", "all")).reset_index()
    table["us_per_round"] = table["median_ms"] * 1e3 / table["rounds"].where(table["solver"].str.endswith(
        ("gpu", "push", "coo")))
    table["relax_per_arc"] = table["relaxations"] / table["m"]
    for label, solver, threads in (("gapbs16", "gapbs_sssp", "'threads': 16,"),
                                   ("gapbs1", "gapbs_sssp", "'threads': 1,"), ("scipy", "scipy_dijkstra", "")):
        ref = table[(table["solver"] == solver) & table["params"].str.contains(threads)]
        best = ref.groupby("graph")["median_ms"].min()
        table[f"x_{label}"] = table["graph"].map(best) / table["median_ms"]
    failed = raw[raw["median_ms"].isna()][["graph", "solver", "params", "note"]]
    return table, failed


def markdown(table: pd.DataFrame, failed: pd.DataFrame) -> str:
    cols = ["solver", "params", "median_ms", "lo_ms", "hi_ms", "rounds", "us_per_round", "relax_per_arc",
            "valid", "x_gapbs16", "x_gapbs1", "x_scipy"]
    out = []
    for graph, part in table.groupby("graph", sort=False):
        first = part.iloc[0]
        out.append(f"\n### {graph} (n = {int(first['n']):,}, m = {int(first['m']):,}, "
                   f"{int(first['sources'])} sources)\n")
        out.append(part.sort_values("median_ms")[cols].to_markdown(index=False, floatfmt=".3g"))
    if len(failed):
        out.append("\n### Configurations that did not run\n")
        out.append(failed.drop_duplicates().to_markdown(index=False))
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    t, f = summarise(sys.argv[1])
    sys.stdout.write(markdown(t, f))
