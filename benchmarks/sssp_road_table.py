"""Issue 26's tables from the raw H200 files: benchmarks/sssp-road-h200.csv and the markdown tables of its .md.

usage: python benchmarks/sssp_road_table.py [RAW_FOLDER]   (default benchmarks/sssp-road-h200-raw)

* Configurations (``road-*-summary.csv.gz``, gpusp bench of config/h200-sssp-road.yaml): per graph and solver the
  median per source (a batched solver's share of its batch), the quartiles, the batch's median, the preprocessing,
  and against GAPBS with 16 threads of the same run: the ratio of per-source medians and, for the 1,024-source sets,
  the throughput ratio (GAPBS's summed per-source medians over the same sources / the batch's median).
* The grid stand-in (``road-grid-*.csv.gz``, road_sweep.py): per weight seed, deltastep_gpu at its defaults against
  the best swept setting (median over 8 sources, their spread).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

HERE = Path(__file__).parent


def configurations(raw: Path) -> pd.DataFrame:
    summary = pd.concat([pd.read_csv(f) for f in sorted(raw.glob("road-*-summary.csv.gz"))], ignore_index=True)
    samples = pd.concat([pd.read_csv(f, low_memory=False) for f in sorted(raw.glob("road-*-samples.csv.gz"))],
                        ignore_index=True)
    per_source = samples.groupby(["graph", "solver", "params", "source"]).time_ms.median().reset_index()
    summed = per_source.groupby(["graph", "solver", "params"]).time_ms.sum().rename("sum_of_sources_ms")
    out = summary.merge(summed.reset_index(), on=["graph", "solver", "params"], how="left")
    gapbs = out[(out.solver == "gapbs_sssp") & (out.params == "threads-16")].set_index("graph")
    out["x_gapbs16"] = out.graph.map(gapbs.median_ms) / out.median_ms
    whole = out.batch_median_ms.where(out.batch_median_ms.notna(), out.sum_of_sources_ms)
    out["all_sources_ms"] = whole
    out["x_gapbs16_throughput"] = out.graph.map(gapbs.sum_of_sources_ms) / whole
    keep = ["graph", "n", "m", "solver", "params", "sources", "median_ms", "q1_ms", "q3_ms", "batch_sources",
            "batch_median_ms", "all_sources_ms", "preprocess_s", "preprocess_bytes", "iterations", "x_gapbs16",
            "x_gapbs16_throughput", "validated", "gpu", "cpu", "clock"]
    return out[keep].sort_values(["graph", "median_ms"])


def grid(raw: Path) -> pd.DataFrame:
    rows = pd.concat([pd.read_csv(f) for f in sorted(raw.glob("road-grid-*.csv.gz"))], ignore_index=True)
    med = rows.groupby(["graph", "params"]).median_ms.agg(["median", "min", "max"]).reset_index()
    out = []
    for graph, g in med.groupby("graph"):
        default = g[g.params == "{}"].iloc[0]
        best = g.loc[g["median"].idxmin()]
        out.append({"graph": graph, "default_ms": default["median"], "default_lo": default["min"],
                    "default_hi": default["max"], "best_params": best.params, "best_ms": best["median"],
                    "default_over_best": default["median"] / best["median"],
                    "valid": bool(rows[rows.graph == graph].valid.all())})
    return pd.DataFrame(out)


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    raw = Path(args[0]) if args else HERE / "sssp-road-h200-raw"
    table = configurations(raw)
    table.to_csv(HERE / "sssp-road-h200.csv", index=False, float_format="%.6g")
    pd.set_option("display.width", 250)
    cols = ["solver", "params", "sources", "median_ms", "q1_ms", "q3_ms", "batch_median_ms", "all_sources_ms",
            "preprocess_s", "x_gapbs16", "x_gapbs16_throughput", "validated"]
    for graph, g in table.groupby("graph", sort=False):
        print(f"\n### {graph} (n = {g.n.iloc[0]:,}, m = {g.m.iloc[0]:,}, {int(g.sources.iloc[0])} sources)\n")
        print(g[cols].to_markdown(index=False, floatfmt=".4g"))
    print("\n### grid-4096 (4096 x 4096, weights 1..1000), deltastep_gpu, 8 sources per weight seed\n")
    print(grid(raw).to_markdown(index=False, floatfmt=".4g"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
