"""Summarise `gpusp bench` runs of the fast-SSSP configs: one table per graph, one row per configuration, with ratios.

usage: python benchmarks/sssp_fast_table.py RUN [RUN ...] > table.md

RUN is a `gpusp bench --out` folder (its tables/samples.csv and tables/summary.csv) or the copies that
benchmarks/h200/run.sh brings back (NAME-samples.csv, with NAME-summary.csv beside it); several RUNs are merged.
The configs are config/sweeps/sssp-fast-*.yaml.

Per configuration: the median over sources of each source's median time, the spread of those (min-max), rounds and
arcs examined per source (median; relaxations / m), microseconds per round, whether every source validated, and the
ratios against GAPBS with 16 threads (its best delta), GAPBS with one thread and SciPy on the same graph and sources
(ratio > 1: this configuration is faster). Configurations without a timed run (skipped, failed) are listed after the
tables with the reason.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

ROUND_SOLVERS = ("gpu", "push", "coo")  # solvers whose iterations counter is a round of the whole graph
BASELINES = (("gapbs16", "gapbs_sssp", 16), ("gapbs1", "gapbs_sssp", 1), ("scipy", "scipy_dijkstra", None))
COLUMNS = ["solver", "params", "median_ms", "lo_ms", "hi_ms", "rounds", "us_per_round", "relax_per_arc", "valid",
           "x_gapbs16", "x_gapbs1", "x_scipy"]


def tables_of(run: str) -> tuple[Path, Path]:
    """(samples.csv, summary.csv) of a bench folder or of run.sh's NAME-samples.csv."""
    path = Path(run)
    if path.is_dir():
        return path / "tables" / "samples.csv", path / "tables" / "summary.csv"
    if not path.name.endswith("samples.csv"):
        raise SystemExit(f"{run}: expected a gpusp bench folder or a *samples.csv file")
    return path, path.with_name(path.name[: -len("samples.csv")] + "summary.csv")


def load(runs) -> tuple[pd.DataFrame, pd.DataFrame]:
    samples, summaries = [], []
    for run in runs:
        sample_path, summary_path = tables_of(run)
        samples.append(pd.read_csv(sample_path))
        if summary_path.exists():
            summaries.append(pd.read_csv(summary_path))
    return pd.concat(samples, ignore_index=True), pd.concat(summaries, ignore_index=True) if summaries else None


def summarise(samples: pd.DataFrame, summary: pd.DataFrame | None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The per-configuration table and the configurations that did not run."""
    timed = samples.dropna(subset=["time_ms"])
    timed = timed.assign(param_threads=timed.get("param_threads"))  # GAPBS's threads; absent without GAPBS runs
    keys = ["graph", "solver", "params"]
    per_source = timed.groupby(keys + ["source"], sort=False).agg(
        n=("n", "first"), m=("m", "first"), median_ms=("time_ms", "median"), iterations=("iterations", "median"),
        relaxations=("relaxations", "median"), valid=("validated", "all"),
        threads=("param_threads", "first")).reset_index()
    table = per_source.groupby(keys, sort=False).agg(
        n=("n", "first"), m=("m", "first"), median_ms=("median_ms", "median"), lo_ms=("median_ms", "min"),
        hi_ms=("median_ms", "max"), rounds=("iterations", "median"), relaxations=("relaxations", "median"),
        sources=("source", "count"), valid=("valid", "all"), threads=("threads", "first")).reset_index()
    rounds = table["rounds"].where(table["solver"].str.endswith(ROUND_SOLVERS))
    table["us_per_round"] = table["median_ms"] * 1e3 / rounds
    table["relax_per_arc"] = table["relaxations"] / table["m"]
    for label, solver, threads in BASELINES:
        ref = table[(table["solver"] == solver) & ((table["threads"] == threads) if threads else True)]
        best = ref.groupby("graph")["median_ms"].min()
        table[f"x_{label}"] = table["graph"].map(best) / table["median_ms"]
    failed = pd.DataFrame(columns=keys + ["status", "reason"])
    if summary is not None and "reason" in summary:
        failed = summary[summary["median_ms"].isna()][keys + ["status", "reason"]].drop_duplicates()
    return table, failed


def markdown(table: pd.DataFrame, failed: pd.DataFrame) -> str:
    out = []
    for graph, part in table.groupby("graph", sort=False):
        first = part.iloc[0]
        out.append(f"\n### {graph} (n = {int(first['n']):,}, m = {int(first['m']):,}, "
                   f"{int(first['sources'])} sources)\n")
        out.append(part.sort_values("median_ms")[COLUMNS].to_markdown(index=False, floatfmt=".3g"))
    if len(failed):
        out.append("\n### Configurations that did not run\n")
        out.append(failed.to_markdown(index=False))
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    runs = sys.argv[1:] if argv is None else argv
    if not runs or runs[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if runs else 2
    samples, summary = load(runs)
    sys.stdout.write(markdown(*summarise(samples, summary)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
