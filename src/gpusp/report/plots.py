"""Seaborn figures of a sweep: time per solver with spread, speed-up, tile heat map, scaling, rates.

Every figure says in its title when the timings come from the CUDA simulator, so nobody reads them as
GPU timings. Figures are written atomically; a figure with no data says so instead of failing.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.ticker  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from ..solvers import registry  # noqa: E402
from ..atomic import atomic_path  # noqa: E402

FIGURES = ("time_per_solver", "speedup", "tile_heatmap", "scaling", "throughput")
TILE_PARAMS = ("param_block_size", "param_tile", "param_block", "param_edges_per_thread")


def _label(samples: pd.DataFrame) -> str:
    modes = set(samples.get("mode", pd.Series(dtype=str)).dropna())
    return " [SIMULATED: CUDA simulator, not GPU timings]" if "sim" in modes else ""


def _save(fig, path):
    with atomic_path(path, suffix=".png") as tmp:
        fig.savefig(tmp, dpi=110, bbox_inches="tight", format="png")
    plt.close(fig)


def _empty(path, text):
    fig, ax = plt.subplots(figsize=(6, 2))
    ax.axis("off")
    ax.text(0.5, 0.5, text, ha="center", va="center")
    _save(fig, path)


def time_per_solver(samples, summary, path, note):
    data = samples.dropna(subset=["time_ms"])
    if data.empty:
        return _empty(path, "no timings")
    data = data.assign(config=data["solver"] + " " + data["params"].astype(str).str.slice(0, 28))
    graphs = sorted(data["graph"].unique())
    rows = [max(2, data.loc[data["graph"] == g, "config"].nunique()) for g in graphs]
    # one panel per graph, stacked: long configuration labels never run into the next panel
    fig, axes = plt.subplots(len(graphs), 1, figsize=(9, 1.2 + 0.3 * sum(rows) + 0.6 * len(graphs)),
                             squeeze=False, gridspec_kw={"height_ratios": rows}, layout="constrained")
    for ax, graph in zip(axes[:, 0], graphs):
        part = data[data["graph"] == graph]
        order = part.groupby("config")["time_ms"].median().sort_values().index
        sns.boxplot(data=part, y="config", x="time_ms", order=order, ax=ax, color="#9ecae1", fliersize=2)
        sns.stripplot(data=part, y="config", x="time_ms", order=order, ax=ax, color="#08306b", size=2.5)
        ax.set_xscale("log")
        ax.set_xlabel("time per run (ms, log; every sample)")
        ax.set_ylabel("")
        ax.set_title(graph)
    fig.suptitle("Time per solver and parameter set" + note)
    _save(fig, path)


def speedup(samples, summary, path, note):
    data = summary.dropna(subset=["speedup_vs_cpu"])
    if "device" in data:  # GPU solvers, and the external CPU peers (GAPBS) beside them
        peers = {spec.name for spec in registry.SPECS if spec.peer}
        data = data[(data["device"] == "gpu") | data["solver"].isin(peers)]
    if data.empty:
        return _empty(path, "no speed-up: the CPU baseline (scipy) was not in the sweep")
    data = data.assign(config=data["solver"] + " " + data["params"].astype(str).str.slice(0, 28))
    fig, ax = plt.subplots(figsize=(8, max(2.5, 0.3 * len(data))))
    sns.barplot(data=data, y="config", x="speedup_vs_cpu", hue="graph", ax=ax)
    ax.axvline(1, color="k", lw=1, ls="--")
    ax.set_xscale("log")
    ax.set_xlabel("speed-up over SciPy on the same graph and sources (median / median, log)")
    ax.set_ylabel("")
    ax.set_title("Speed-up over the CPU baseline (GPU solvers and CPU peers)" + note)
    _save(fig, path)


def tile_heatmap(samples, summary, path, note):
    data = samples.dropna(subset=["time_ms"])
    col = next((c for c in TILE_PARAMS if c in data and data[c].notna().any()), None)
    if col is None:
        return _empty(path, "no tile/block-size parameter in the sweep")
    data = data[data[col].notna()]
    values = pd.to_numeric(data[col], errors="coerce")
    if values.notna().all() and (values == values.round()).all():
        data = data.assign(**{col: values.astype(int)})  # 4, not 4.0 (NaN made the column float)
    table = data.groupby(["solver", col])["time_ms"].median().unstack(col)
    fig, ax = plt.subplots(figsize=(1.2 * table.shape[1] + 4, 0.45 * table.shape[0] + 1.5))
    sns.heatmap(np.log10(table), annot=table.round(2), fmt="", cmap="viridis_r", ax=ax,
                cbar_kws={"label": "log10 median ms"})
    ax.set_xlabel(col.removeprefix("param_"))
    ax.set_title(f"Median time by {col.removeprefix('param_')} (all graphs)" + note)
    _save(fig, path)


def scaling_families(summary) -> list[str]:
    """Graph families (one generator, fixed parameters) swept over at least two sizes: the only graphs
    a scaling curve may join (a SNAP graph and a road network are not two sizes of one thing)."""
    data = summary.dropna(subset=["median_ms"])
    if "graph_family" not in data:
        return []
    sizes = data.dropna(subset=["graph_family"]).groupby("graph_family")[["n", "m"]].nunique()
    return sorted(sizes.index[(sizes["n"] > 1) | (sizes["m"] > 1)])


def scaling(samples, summary, path, note):
    families = scaling_families(summary)
    if not families:
        return _empty(path, "no scaling curve: no generator was swept over two or more sizes\n"
                            "(curves never join unrelated graphs)")
    data = summary.dropna(subset=["median_ms"])
    fig, axes = plt.subplots(len(families), 2, figsize=(13, 4.2 * len(families)), squeeze=False,
                             layout="constrained")
    for row, family in zip(axes, families):
        part = data[data["graph_family"] == family]
        best = part.sort_values("median_ms").groupby(["solver", "graph"], as_index=False).first()
        for ax, x in zip(row, ("n", "m")):
            sns.lineplot(data=best, x=x, y="median_ms", hue="solver", marker="o", ax=ax, legend=x == "m")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
            ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
            ax.set_xticks(sorted(best[x].unique()))
            ax.set_ylabel("best median time (ms)")
            ax.set_title(family)
        row[1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1), title="solver")
    fig.suptitle("Scaling with n and m within each generator sweep" + note)
    _save(fig, path)


def throughput(samples, summary, path, note, peak=None):
    data = summary.dropna(subset=["relaxations_per_s"])
    data = data[data["relaxations_per_s"] > 0]
    if data.empty:
        return _empty(path, "no relaxation counts recorded")
    data = data.assign(config=data["solver"] + " " + data["params"].astype(str).str.slice(0, 28))
    fig, ax = plt.subplots(figsize=(8, max(2.5, 0.3 * len(data))))
    sns.barplot(data=data, y="config", x="relaxations_per_s", hue="graph", ax=ax)
    ref = peak or float(data["relaxations_per_s"].max())
    ax.axvline(ref, color="r", lw=1, ls="--")
    ax.text(ref, -0.6, " measured peak" if peak else " best in this sweep", color="r", fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("relaxations (edges examined; n^3 for FW) per second, log")
    ax.set_ylabel("")
    ax.set_title("Relaxation rate" + note)
    _save(fig, path)


def make_figures(samples: pd.DataFrame, summary: pd.DataFrame, out_dir, peak=None) -> dict:
    """Write every figure as ``<out_dir>/<name>.png``; returns name -> path."""
    out_dir = Path(out_dir)
    note = _label(samples)
    sns.set_theme(style="whitegrid", context="paper")
    paths = {}
    for name in FIGURES:
        path = out_dir / f"{name}.png"
        fn = globals()[name]
        if name == "throughput":
            fn(samples, summary, path, note, peak)
        else:
            fn(samples, summary, path, note)
        paths[name] = path
    return paths


def figures_from_tables(samples_path, summary_path, out_dir, peak=None) -> dict:
    """:func:`make_figures` from the files ``gpusp aggregate`` wrote (samples.parquet, summary.csv)."""
    return make_figures(pd.read_parquet(samples_path), pd.read_csv(summary_path), out_dir, peak=peak)
