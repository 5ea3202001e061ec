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
    for col in ("status", "reason"):
        if col not in table:
            table[col] = None
    table = table.drop_duplicates(subset=["graph", "solver", "params", "status", "reason"])
    table.to_csv(args.csv, index=False)
    lines = [f"# {args.title}", "", *args.note, ""]
    order = {g: i for i, g in enumerate(table["graph"].drop_duplicates())}
    if "n" in table:
        order = {g: table.loc[table["graph"] == g, "n"].max() for g in order}
    for graph in sorted(order, key=order.get):
        part = table[table["graph"] == graph]
        n, m = part["n"].dropna().iloc[0], part["m"].dropna().iloc[0]
        apsp = (part["problem"] == "apsp").any()
        base, base_note = part[part["solver"] == ("scipy_apsp" if apsp else "scipy_dijkstra")]["median_ms"].min(), ""
        if apsp and pd.isna(base):
            sssp = part[part["solver"] == "scipy_dijkstra"]["median_ms"].min()
            base, base_note = sssp * n, f" (estimated: SciPy Dijkstra median over sampled sources x n = {sssp * n / 1e3:.1f} s)"
        lines += [f"## {graph} (n = {int(n):,}, m = {int(m):,})", ""]
        if apsp:
            lines += [f"SciPy all-sources Dijkstra: {base:.1f} ms{base_note}.", "",
                      "| solver | params | median ms | IQR ms | n^3/t (G/s) | iterations | validated | SciPy / solver |",
                      "|---|---|---:|---:|---:|---:|---|---:|"]
        else:
            lines += ["| solver | params | median ms | IQR ms | iterations | compile s | validated | SciPy / solver |",
                      "|---|---|---:|---:|---:|---:|---|---:|"]
        ran = part[part["median_ms"].notna() & (part["problem"] == ("apsp" if apsp else "sssp"))]
        for _, r in ran.sort_values("median_ms").iterrows():
            ratio = base / r["median_ms"] if pd.notna(base) else float("nan")
            if apsp:
                rate = n ** 3 / (r["median_ms"] / 1e3) / 1e9
                lines.append(f"| {r['solver']} | {r['params']} | {r['median_ms']:.3f} | {r['iqr_ms']:.3f} | "
                             f"{rate:.1f} | {r['iterations']:.0f} | {bool(r['validated'])} | {ratio:.2f} |")
            else:
                lines.append(f"| {r['solver']} | {r['params']} | {r['median_ms']:.3f} | {r['iqr_ms']:.3f} | "
                             f"{r['iterations']:.0f} | {r['compile_s']:.2f} | {bool(r['validated'])} | {ratio:.2f} |")
        for _, r in part[part["median_ms"].isna()].iterrows():
            lines.append(f"| {r['solver']} | {r['params']} | skipped | | | | | {r['reason']} |")
        lines.append("")
    with open(args.md, "w") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
