"""benchmarks/sssp-peers-h200.csv and .md from a `gpusp bench` run of config/h200-sssp-peers.yaml (benchmarks/h200/peers.sh).

Per graph and configuration: the median over sources of each source's median trial (and the quartiles of those
per-source medians), Gunrock's own enact time the same way, the share of validated sources, and the ratios to
deltastep_gpu and to GAPBS on 16 threads of the same run.

usage (repository root): python benchmarks/h200/peers_table.py RAW_DIR   (RAW_DIR: summary.csv, samples.csv.gz,
records.tar.gz as benchmarks/sssp-peers-h200-raw/ holds them)
"""

from __future__ import annotations

import json
import sys
import tarfile
from pathlib import Path

import numpy as np
import pandas as pd

OUT = Path("benchmarks/sssp-peers-h200")


def enact_medians(records: Path) -> dict:
    """(graph, solver, params) -> median over sources of each source's median Gunrock enact time."""
    out = {}
    with tarfile.open(records) as tar:
        for m in tar.getmembers():
            if not m.name.endswith(".json") or "/gunrock_sssp/" not in m.name:
                continue
            rec = json.load(tar.extractfile(m))
            per = [np.median(r["counters"]["gunrock_enact_ms"]) for r in rec["runs"] if "gunrock_enact_ms" in r["counters"]]
            if per:
                out[(rec["graph_label"], rec["solver"], rec["params_label"])] = float(np.median(per))
    return out


def main(raw: Path) -> None:
    samples = pd.read_csv(raw / "samples.csv.gz")
    summary = pd.read_csv(raw / "summary.csv")
    per_source = samples.groupby(["graph", "solver", "params", "source"], as_index=False)["time_ms"].median()
    q = per_source.groupby(["graph", "solver", "params"])["time_ms"]
    table = pd.DataFrame({"median_ms": q.median(), "q1_ms": q.quantile(0.25), "q3_ms": q.quantile(0.75),
                          "sources": q.size()}).reset_index()
    table = table.merge(summary[["graph", "solver", "params", "n", "m", "gpu", "cpu", "validated", "status", "samples"]],
                        on=["graph", "solver", "params"])
    enact = enact_medians(raw / "records.tar.gz")
    table["gunrock_enact_ms"] = [enact.get((g, s, p)) for g, s, p in zip(table.graph, table.solver, table.params)]
    ours = table[table.solver == "deltastep_gpu"].set_index("graph")["median_ms"]
    gapbs = table[(table.solver == "gapbs_sssp") & (table.params == "threads-16")].set_index("graph")["median_ms"]
    table["over_deltastep_gpu"] = table.median_ms / table.graph.map(ours)
    table["over_gapbs_16t"] = table.median_ms / table.graph.map(gapbs)
    gpu_line = (raw / "gpu.txt").read_text().splitlines()
    table.insert(0, "driver", gpu_line[1].split(", ")[1])
    table.insert(0, "date", "2026-11-26")
    table = table.sort_values(["graph", "median_ms"])
    table.to_csv(OUT.with_suffix(".csv"), index=False, float_format="%.4g")
    lines = []
    for graph, g in table.groupby("graph", sort=False):
        lines += [f"### {graph} (n = {int(g.n.iloc[0]):,}, m = {int(g.m.iloc[0]):,})", "",
                  "| solver | params | median ms (q1-q3 over sources) | Gunrock enact ms | / deltastep_gpu | / GAPBS 16t | validated |",
                  "|---|---|---:|---:|---:|---:|---|"]
        for r in g.itertuples():
            enact_ms = "" if pd.isna(r.gunrock_enact_ms) else f"{r.gunrock_enact_ms:.3g}"
            ok = "yes" if r.validated == True else f"**no** ({r.status})"  # noqa: E712
            lines.append(f"| {r.solver} | {r.params} | {r.median_ms:.3g} ({r.q1_ms:.3g}-{r.q3_ms:.3g}) | {enact_ms} | "
                         f"{r.over_deltastep_gpu:.2f} | {r.over_gapbs_16t:.2f} | {ok} |")
        lines.append("")
    print("\n".join(lines))  # the tables of benchmarks/sssp-peers-h200.md


if __name__ == "__main__":
    main(Path(sys.argv[1]))
