"""Turn what the 2026-11-24 H200 calls brought back into benchmarks/papers/ (summary + samples per experiment,
the comparison with the papers' published values, raw logs) and print the README's markdown tables.

usage (repository root): python benchmarks/papers/assemble.py RESULTS [EXPERIMENT ...]
RESULTS holds the unpacked res.tar.gz of each call (morning: c1/, c2/, c3/; evening: c2b/ and c3b/, the
p002fig4 and p004fig1 files of calls c2 and c3, then c6/, c7/ and c8/) and, for experiments stopped at their time limit (the bench never
wrote their tables), the tables that gpusp.report.aggregate.write_tables made here from their partial records:
p1/tables/ (p001t1), p001fig12/tables/ (call c3), p001fig13/tables/ (call c7). With EXPERIMENTs, only those are rebuilt and their
rows of published-vs-h200.csv replaced.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pandas as pd

from gpusp.report.papers import compare, shape_lines

HERE = Path("benchmarks/papers")
EXPERIMENTS = {  # experiment -> [(call folder, bench name)]
    "paper000-table1": [("c1", "p000t1")],
    "paper000-table2": [("c2", "p000t2")],
    "paper000-table3": [("c1", "p000t3-g04"), ("c2", "p000t3-g30"), ("c2", "p000t3-g25")],
    "paper001-table1": [("p1/tables", None), ("c8", "p001t1c")],
    "paper004-transfer": [("c2", "p004transfer")],
    "paper004-fig2-pull-push": [("c2", "p004fig2")],
    "paper002-fig4": [("c2b", "p002fig4")],
    "paper004-fig1-edges-per-thread": [("c3b", "p004fig1")],
    "paper001-fig12": [("p001fig12/tables", None), ("c8", "p001fig12b")],
    "paper001-fig13": [("p001fig13/tables", None)],
    "paper004-apsp-minplus": [("c6", "p004minplus")],
    "paper004-apsp-allsources": [("c6", "p004allsrc")],
    "paper001-fig14": [("c6", "p001fig14")],
    "paper001-sec52-n-b": [("c6", "p001sec52")],
    "paper001-fig10": [("c7", "p001fig10")],
}
COLS = ["graph", "solver", "params", "n", "m", "median_ms", "q1_ms", "q3_ms", "iqr_ms", "samples", "sources",
        "compile_s", "h2d_ms", "d2h_ms", "iterations", "relaxations", "n3_per_s", "validated", "status", "mode",
        "clock", "gpu"]


def read(res: Path, folder: str, name: str | None, kind: str) -> pd.DataFrame:
    path = res / folder / (f"{kind}.csv" if name is None else f"{name}-{kind}.csv")
    return pd.read_csv(path)


def fmt_ms(v):
    return "" if pd.isna(v) else (f"{v:,.0f}" if v >= 1000 else f"{v:.3g}")


def fmt_s(v):
    return "" if pd.isna(v) else f"{v:.2f}"


def main(res: Path, only: list[str]):
    raw = HERE / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    for f in sorted(res.glob("c[12]/*")):  # call 3 was issue 9's: benchmarks/apsp-fast-h200-raw/
        if f.is_file() and not f.name.endswith(("-summary.csv", "-samples.csv")):
            dest = raw / (f"{f.parent.name}-steps.tsv" if f.name == "steps.tsv" else f.name)
            if f.name.endswith(".sources.txt"):
                dest = raw / f"p001t1-{f.name}"
            shutil.copyfile(f, dest)
    comparisons = []
    for exp, parts in EXPERIMENTS.items():
        if only and exp not in only:
            continue
        summary = pd.concat([read(res, c, n, "summary") for c, n in parts], ignore_index=True)
        samples = pd.concat([read(res, c, n, "samples") for c, n in parts], ignore_index=True)
        summary = summary.sort_values(["graph", "median_ms"], kind="stable")
        summary.to_csv(HERE / f"{exp}.csv", index=False)
        samples.to_csv(HERE / f"{exp}-samples.csv", index=False)
        print(f"\n### {exp}\n")
        print("| graph | solver | params | median ms | IQR ms | trials x sources | compile s | iterations | validated |")
        print("|---|---|---|---:|---:|---:|---:|---:|---|")
        for r in summary.to_dict("records"):
            print(f"| {r['graph']} | {r['solver']} | {r['params']} | {fmt_ms(r['median_ms'])} | {fmt_ms(r['iqr_ms'])} | "
                  f"{int(r['samples']) if pd.notna(r['samples']) else ''} | {fmt_s(r['compile_s'])} | {int(r['iterations']) if pd.notna(r['iterations']) else ''} | "
                  f"{r['status'] if pd.isna(r['median_ms']) else 'yes' if r['validated'] == True else 'NO'} |")  # noqa: E712
        cmp = compare(summary)
        if not cmp.empty:
            comparisons.append(cmp)
            print("\n| graph | solver (params) | paper | ours | ratio (paper / ours) | paper hardware |")
            print("|---|---|---:|---:|---:|---|")
            for r in cmp.to_dict("records"):
                print(f"| {r['graph']} | {r['solver']} ({r['params']}) | {r['paper_value']:g} {r['unit']} | "
                      f"{r['ours_ms'] / 1000:.3g} s | {r['ratio']:.3g} | {r['paper_hardware']} |")
            print()
            for line in shape_lines(cmp):
                print(f"* {line}")
    allcmp = pd.concat(comparisons, ignore_index=True) if comparisons else pd.DataFrame()
    if only:
        kept = pd.read_csv(HERE / "published-vs-h200.csv", dtype={"paper": str})
        allcmp = pd.concat([kept[~kept["experiment"].isin(only)], allcmp], ignore_index=True)
    allcmp.to_csv(HERE / "published-vs-h200.csv", index=False)
    print(f"\n{len(allcmp)} published values compared")


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2:])
