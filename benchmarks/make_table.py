"""Merge `gpusp bench` summaries into one CSV and a markdown table (median per solver next to SciPy).

usage: python benchmarks/make_table.py OUT.csv OUT.md SUMMARY.csv [SUMMARY.csv ...] [--title T] [--note N]
"""

import argparse

import pandas as pd


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("md")
    ap.add_argument("summaries", nargs="+")
    ap.add_argument("--title", default="Benchmark")
    ap.add_argument("--note", action="append", default=[])
    args = ap.parse_args()
    table = pd.concat([pd.read_csv(p) for p in args.summaries], ignore_index=True)
    table = table.drop_duplicates(subset=["graph", "solver", "params", "status", "reason"])
    table.to_csv(args.csv, index=False)
    lines = [f"# {args.title}", "", *args.note, ""]
    for graph, part in table.groupby("graph", sort=False):
        base = part[part["solver"].isin(["scipy_dijkstra", "scipy_apsp"])]["median_ms"].min()
        n, m = part["n"].dropna().iloc[0], part["m"].dropna().iloc[0]
        lines += [f"## {graph} (n = {int(n):,}, m = {int(m):,})", "",
                  "| solver | params | median ms | IQR ms | rounds | compile s | validated | SciPy / solver |",
                  "|---|---|---:|---:|---:|---:|---|---:|"]
        ran = part[part["median_ms"].notna()].sort_values("median_ms")
        for _, r in ran.iterrows():
            ratio = base / r["median_ms"] if pd.notna(base) else float("nan")
            lines.append(f"| {r['solver']} | {r['params']} | {r['median_ms']:.3f} | {r['iqr_ms']:.3f} | "
                         f"{r['iterations']:.0f} | {r['compile_s']:.2f} | {bool(r['validated'])} | {ratio:.2f} |")
        for _, r in part[part["median_ms"].isna()].iterrows():
            lines.append(f"| {r['solver']} | {r['params']} | skipped | | | | | {r['reason']} |")
        lines.append("")
    with open(args.md, "w") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
