"""Seaborn figures of a sweep: time per solver with spread, speed-up, tile heat map, scaling, multi-GPU scaling, rates.

What keeps the figures honest:

- nothing from different graphs, problems (SSSP, APSP) or machines (GPU model, host CPU) shares a panel, a cell or
  a curve: every figure has one panel per problem and graph (and machine, when the tables hold several);
- a speed-up has one definition everywhere, the first page's: the median of the fastest CPU configuration of the
  graph over the median of the configuration, drawn as a point with a bootstrap interval from the samples;
- "best" is the best among validated configurations that do comparable work (no more than ``WORK_FACTOR`` times the
  relaxations of the least-work validated configuration of the same device);
- GPU and CPU configurations differ in colour and marker, configurations that were not validated are hollow;
- a solver's parameter sweep reads in numeric order (1, 2, 4, 8), solvers in order of their best time;
- a figure without data is not drawn (:func:`make_figures` says why), and a figure with GPU times from the CUDA
  simulator carries a SIMULATED banner.

Figures are written atomically.
"""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.ticker  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from ..atomic import atomic_path  # noqa: E402
from ..plan import parse_paramset  # noqa: E402
from .aggregate import machines as aggregate_machines  # noqa: E402
from .compare import SIMULATED, bootstrap_ratio, simulated_banner  # noqa: E402
from .compare import simulated_rows as _simulated  # noqa: E402
from .gpuscaling import SCALING_KEYS, gpu_scaling_table  # noqa: E402
from .rst import number  # noqa: E402

FIGURES = ("time_per_solver", "speedup", "tile_heatmap", "scaling", "gpu_scaling", "throughput")
TILE_PARAMS = ("param_block_size", "param_tile", "param_block", "param_edges_per_thread")
DEVICE_STYLE = {"gpu": ("GPU", "#1f77b4", "o"), "cpu": ("CPU", "#d95f02", "s")}
WORK_FACTOR = 2.0
BOOTSTRAP = 2000
CONFIDENCE = 0.95
LABEL_CHARS = 40


# --- the tables the figures share ---------------------------------------------------------------
def _label(samples: pd.DataFrame) -> str:
    """The note a figure's title gets when GPU times came from the CUDA simulator (CPU times are real)."""
    return f" [{SIMULATED}]" if _simulated(samples).any() else ""


def param_values(label) -> dict:
    """The parameters of a configuration from its label (``block-32+rounds-early``, ``default``, or JSON)."""
    label = str(label)
    if label.startswith("{"):
        try:
            return {k: str(v) for k, v in json.loads(label).items()}
        except (ValueError, AttributeError):
            return {"params": label}
    try:
        return parse_paramset(label)
    except ValueError:
        return {"params": label}


def _value_key(value):
    """Numbers before words, numbers by value: 1, 2, 4, 8, 16 (not 1, 16, 2, 4, 8 or the order of the times)."""
    try:
        return (0, float(value), "")
    except (TypeError, ValueError):
        return (1, 0.0, str(value))


def params_key(label) -> tuple:
    return tuple((k, _value_key(v)) for k, v in sorted(param_values(label).items()))


def config_order(frame: pd.DataFrame, time="time_ms") -> list[str]:
    """The ``config`` values of ``frame``: solvers by their best median time, each solver's parameter sets in
    numeric order of their values."""
    medians = frame.groupby(["solver", "params", "config"], dropna=False)[time].median()
    best = medians.groupby(level="solver").min()
    return [config for (solver, params, config), _ in
            sorted(medians.items(), key=lambda item: (best[item[0][0]], item[0][0], params_key(item[0][1])))]


def _is_true(value) -> bool:
    """A validated flag as pandas reads it back (a bool, numpy bool, "True" from a string column; NaN: no)."""
    return value is True or (not isinstance(value, str) and value == True) or str(value) == "True"  # noqa: E712


def _prepare(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with ``config`` (solver and parameters, marked when not validated and where its times are each
    source's share of a batch) and the machine of each row: ``_gpu`` (a GPU solver's GPU model, None for CPU solvers)
    and ``_cpu`` (the host CPU model; "" in tables that do not name it)."""
    frame = frame.copy()
    params = frame["params"].astype(str)
    params = params.where(params.str.len() <= LABEL_CHARS, params.str.slice(0, LABEL_CHARS - 1) + "…")
    checked = frame["validated"].map(_is_true).astype(bool)
    frame["config"] = frame["solver"] + " " + params + np.where(checked, "", " (not validated)")
    if "batch_sources" in frame:  # a batched solver's times are each source's share of a batch (aggregate)
        k = pd.to_numeric(frame["batch_sources"], errors="coerce")
        frame["config"] += np.where(k.notna(), " (batch of " + k.fillna(0).round().astype(int).map("{:,}".format)
                                    + ", per source)", "")
    gpu = frame["gpu"].astype(str) if "gpu" in frame else pd.Series("GPU", index=frame.index)
    frame["_gpu"] = gpu.where(frame["device"] == "gpu", None)
    frame["_cpu"] = frame["cpu"].fillna("unknown").astype(str) if "cpu" in frame else ""
    return frame


def _timed(samples: pd.DataFrame) -> pd.DataFrame:
    data = samples.dropna(subset=["time_ms"])
    return _prepare(data) if len(data) else data


def machines(frame: pd.DataFrame) -> list[tuple]:
    """The machines of prepared rows as (GPU, host CPU) (:func:`gpusp.report.aggregate.machines`)."""
    return aggregate_machines(frame, gpu="_gpu", cpu="_cpu")


def _on_machine(frame: pd.DataFrame, gpu, cpu) -> pd.DataFrame:
    """The rows of one machine: its GPU's GPU solvers and its host CPU's CPU solvers (a CPU solver's times belong
    to the host CPU alone, so they stand beside every GPU of that host)."""
    host = frame[frame["_cpu"] == cpu]
    return host[(host["device"] != "gpu") | (host["_gpu"] == gpu)] if gpu is not None else host[
        host["device"] != "gpu"]


def _machine_text(gpu, cpu) -> str:
    return (f"{gpu}" + (f" / {cpu}" if cpu else "")) if gpu is not None else f"CPU {cpu or 'unknown'}"


def _panels(frame: pd.DataFrame):
    """(title, part) per panel: one per problem (SSSP, then APSP), graph and machine; the machine is named only
    when the rows hold several."""
    found = machines(frame)
    problems = sorted(frame["problem"].unique(), key=lambda p: ({"sssp": 0, "apsp": 1}.get(p, 2), str(p)))
    for problem in problems:
        for graph in sorted(frame.loc[frame["problem"] == problem, "graph"].unique(), key=str):
            rows = frame[(frame["problem"] == problem) & (frame["graph"] == graph)]
            for gpu, cpu in found:
                part = _on_machine(rows, gpu, cpu)
                if part.empty or (gpu is not None and not (part["device"] == "gpu").any()):
                    continue  # this graph ran on other machines only
                title = f"{str(problem).upper()} · {graph}"
                yield title + (f" · {_machine_text(gpu, cpu)}" if len(found) > 1 else ""), part


def _banner(fig, simulated: bool, title: str):
    fig.suptitle(title)
    if simulated:
        simulated_banner(fig)


def _save(fig, path):
    with atomic_path(path, suffix=".png") as tmp:
        fig.savefig(tmp, dpi=110, bbox_inches="tight", format="png")
    plt.close(fig)


def _legend(fig, devices, hollow=None, lines=()):
    """One legend under the figure (never over the data): GPU and CPU markers, what a hollow marker means,
    and the reference ``lines`` ((label, colour) of dashed lines)."""
    handles = [matplotlib.lines.Line2D([], [], ls="", marker=DEVICE_STYLE[d][2], color=DEVICE_STYLE[d][1],
                                       label=DEVICE_STYLE[d][0]) for d in ("gpu", "cpu") if d in set(devices)]
    if hollow:
        handles.append(matplotlib.lines.Line2D([], [], ls="", marker="o", markerfacecolor="none", color="0.3",
                                               label=hollow))
    handles += [matplotlib.lines.Line2D([], [], ls="--", color=colour, label=text) for text, colour in lines]
    fig.legend(handles=handles, loc="outside lower center", ncol=len(handles), fontsize=8, frameon=False)


def _heights(parts, per_row=0.28, extra=0.9) -> list[float]:
    return [extra + per_row * max(2, n) for n in parts]


# --- time per solver ------------------------------------------------------------------------------
def time_per_solver(samples, summary, peak=None):
    """Every sample of every configuration: one panel per problem and graph, boxes coloured by device."""
    data = _timed(samples)
    if data.empty:
        return "no timed runs"
    panels = list(_panels(data))
    heights = _heights([p["config"].nunique() for _, p in panels])
    fig, axes = plt.subplots(len(panels), 1, figsize=(9, sum(heights) + 0.6), squeeze=False,
                             gridspec_kw={"height_ratios": heights}, layout="constrained")
    for ax, (title, part) in zip(axes[:, 0], panels):
        order = config_order(part)
        device = part.groupby("config")["device"].first()
        palette = {c: DEVICE_STYLE.get(device[c], DEVICE_STYLE["gpu"])[1] for c in order}
        sns.boxplot(data=part, y="config", x="time_ms", order=order, hue="config", palette=palette, ax=ax,
                    fliersize=0, boxprops={"alpha": 0.35}, legend=False)
        sns.stripplot(data=part, y="config", x="time_ms", order=order, hue="config", palette=palette, ax=ax,
                      size=2.5, legend=False)
        ax.set_xscale("log")
        ax.set_xlabel("time per run (ms, log; every sample)")
        ax.set_ylabel("")
        ax.set_title(title, fontsize=9)
    _legend(fig, data["device"])
    _banner(fig, _simulated(data).any(), "Time per solver and parameter set")
    return fig


# --- speed-up -------------------------------------------------------------------------------------
def speedup_table(samples: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Per problem, graph and machine: every configuration's speed-up over the fastest CPU configuration of the
    graph on that host (validated ones first: the first page's baseline), its median over the configuration's
    median, with a bootstrap interval."""
    data = _timed(samples)
    rows = []
    if data.empty:
        return pd.DataFrame(rows)
    for title, part in _panels(data):
        groups = {c: g for c, g in part.groupby("config")}
        medians = {c: float(g["time_ms"].median()) for c, g in groups.items()}
        cpu = [c for c, g in groups.items() if g["device"].iloc[0] == "cpu"]
        if not cpu:
            continue
        base = min(cpu, key=lambda c: (c.endswith("(not validated)"), medians[c]))  # as the first page
        for config in config_order(part):
            if config == base:
                continue
            g = groups[config]
            # median(base) / median(config): compare's ratio with the sides swapped, seeded per row
            _, low, high = bootstrap_ratio(g["time_ms"], groups[base]["time_ms"], resamples=BOOTSTRAP,
                                           confidence=CONFIDENCE, seed=[seed, len(rows)])
            rows.append({"panel": title, "problem": g["problem"].iloc[0], "graph": g["graph"].iloc[0],
                         "config": config, "solver": g["solver"].iloc[0],
                         "params": g["params"].iloc[0], "device": g["device"].iloc[0],
                         "validated": not config.endswith("(not validated)"), "baseline": base,
                         "baseline_ms": medians[base], "median_ms": medians[config],
                         "speedup": medians[base] / medians[config], "low": low, "high": high})
    return pd.DataFrame(rows)


def faster_or_slower(x: float) -> str:
    """A speed-up in one convention for every point of a figure: ``12.3x faster`` from 1 up, ``8.55x slower`` below
    (never 0.117x beside 281x slower)."""
    return f"{number(x)}x faster" if x >= 1 else f"{number(1 / x)}x slower"


def speedup(samples, summary, peak=None):
    """Speed-up over the fastest CPU baseline of the graph: a point and its interval per configuration."""
    table = speedup_table(samples)
    if table.empty:
        return "no speed-up: no graph has a CPU baseline and another configuration timed on it"
    panels = list(table.groupby("panel", sort=False))
    heights = _heights([len(p) for _, p in panels], per_row=0.3, extra=1.0)
    fig, axes = plt.subplots(len(panels), 1, figsize=(9, sum(heights) + 0.8), squeeze=False, sharex=True,
                             gridspec_kw={"height_ratios": heights}, layout="constrained")
    logs = np.log10(np.append(table[["low", "high", "speedup"]].to_numpy(float).ravel(), 1.0))
    margin = max(0.15, 0.08 * (logs.max() - logs.min()))
    for ax, (title, part) in zip(axes[:, 0], panels):
        for i, row in enumerate(part.itertuples()):
            _, colour, marker = DEVICE_STYLE.get(row.device, DEVICE_STYLE["gpu"])
            ax.errorbar(row.speedup, i, xerr=[[row.speedup - row.low], [row.high - row.speedup]], fmt=marker,
                        color=colour, markerfacecolor=colour if row.validated else "none", capsize=2, ms=5)
            # the values in a column right of the panel, clear of the points and the line at 1
            ax.annotate(faster_or_slower(row.speedup), (1, i), xycoords=("axes fraction", "data"), xytext=(6, 0),
                        textcoords="offset points", va="center", fontsize=7)
        ax.axvline(1, color="k", lw=1, ls="--")
        ax.set_yticks(np.arange(len(part)), list(part["config"]))
        ax.set_ylim(len(part) - 0.5, -0.5)
        ax.set_xscale("log")
        ax.set_xlim(10 ** (logs.min() - margin), 10 ** (logs.max() + margin))
        first = part.iloc[0]
        ax.set_title(f"{title}: baseline {first['baseline']} ({number(first['baseline_ms'])} ms)", fontsize=9)
    axes[-1, 0].set_xlabel(f"speed-up over the fastest CPU baseline of the graph (its median / this median, "
                           f"log; {CONFIDENCE:.0%} bootstrap interval)\n\u2190 slower            faster \u2192")
    left_out = [title for title, _ in _panels(_timed(samples)) if title not in set(table["panel"])]
    if left_out:
        axes[-1, 0].annotate("no CPU baseline, not shown: " + ", ".join(left_out), (0, -0.55),
                             xycoords="axes fraction", fontsize=7, color="0.35", va="top")
    _legend(fig, table["device"], hollow="not validated" if not table["validated"].all() else None,
            lines=[("as fast as the baseline", "k")])
    _banner(fig, _simulated(samples.dropna(subset=["time_ms"])).any(),
            "Speed-up over the fastest CPU baseline (the first page's ratio)")
    return fig


# --- tile heat map ---------------------------------------------------------------------------------
def tile_tables(samples: pd.DataFrame) -> list[tuple[str, str, pd.DataFrame]]:
    """(panel, parameter, table) for every tile / block parameter a solver swept over two or more values on one
    graph: rows are the solver with its other parameters, columns the values in numeric order, each cell the
    median of exactly one configuration (never of several graphs or parameter sets)."""
    data = _timed(samples)
    out = []
    for column in TILE_PARAMS:
        if data.empty or column not in data:
            continue
        key = column.removeprefix("param_")
        swept = data[data[column].notna()]
        for title, part in _panels(swept) if len(swept) else ():
            values = part.groupby("solver")[column].nunique()
            part = part[part["solver"].isin(values.index[values > 1])]
            if part.empty:
                continue
            rest = part["params"].map(lambda p, key=key: "+".join(
                f"{k}-{v}" for k, v in sorted(param_values(p).items()) if k != key))
            part = part.assign(row=(part["solver"] + " " + rest).str.strip(), value=part[column].map(_cell_value),
                               checked=~part["config"].str.endswith("(not validated)"))
            cells = part.groupby(["row", "value"])
            table = cells["time_ms"].median().unstack("value")
            table = table[sorted(table.columns, key=_value_key)]
            table.attrs["validated"] = cells["checked"].all().unstack("value")[table.columns]
            out.append((title, key, table))
    return out


def _cell_value(value):
    """A parameter value as a column of the heat map: 16, not 16.0 (a column with NaN is a float column)."""
    kind, amount, _ = _value_key(value)
    return int(amount) if kind == 0 and amount == round(amount) else value


def tile_heatmap(samples, summary, peak=None):
    """Median time per tile / block value: one heat map per problem, graph and parameter."""
    tables = tile_tables(samples)
    if not tables:
        return "no tile or block-size parameter swept over two or more values on one graph"
    heights = [1.2 + 0.42 * t.shape[0] for *_, t in tables]
    width = max(6.0, 4.5 + 0.9 * max(t.shape[1] for *_, t in tables))
    fig, axes = plt.subplots(len(tables), 1, figsize=(width, sum(heights) + 0.6), squeeze=False,
                             gridspec_kw={"height_ratios": heights}, layout="constrained")
    for ax, (title, key, table) in zip(axes[:, 0], tables):
        text = table.apply(lambda col: col.map(number))
        text = text.where(table.attrs["validated"].fillna(True).astype(bool), text + "\nnot validated")
        sns.heatmap(np.log10(table), annot=text, fmt="", cmap="viridis_r", ax=ax, linewidths=0.5,
                    cbar_kws={"label": "log10 median ms"})
        ax.set_xlabel(key)
        ax.set_ylabel("")
        ax.set_title(f"{title}: median ms by {key}", fontsize=9)
    _banner(fig, _simulated(samples.dropna(subset=["time_ms"])).any(), "Median time by tile / block parameter")
    return fig


# --- scaling -----------------------------------------------------------------------------------------
def scaling_families(summary) -> list[str]:
    """Graph families (one generator with fixed parameters, or one collection of real graphs such as the DIMACS road
    networks) measured at two or more sizes: the only graphs a scaling curve may join (a SNAP graph and a road
    network are not two sizes of one thing)."""
    data = summary.dropna(subset=["median_ms"])
    if "graph_family" not in data:
        return []
    sizes = data.dropna(subset=["graph_family"]).groupby("graph_family")[["n", "m"]].nunique()
    return sorted(sizes.index[(sizes["n"] > 1) | (sizes["m"] > 1)])


def _best_per_graph(part: pd.DataFrame) -> pd.DataFrame:
    """Each solver's best configuration per graph (validated ones first), with its device's legend name and GTEPS."""
    ranked = part.assign(_ok=part["validated"].map(_is_true).astype(bool))
    best = ranked.sort_values(["_ok", "median_ms"], ascending=[False, True]).groupby(
        ["solver", "graph"], as_index=False).first()
    best["device"] = best["device"].map(lambda d: DEVICE_STYLE.get(d, DEVICE_STYLE["gpu"])[0])
    best["gteps"] = best["m"] / (best["median_ms"] * 1e-3) / 1e9
    return best


def scaling(samples, summary, peak=None):
    """How cost grows as work grows: each solver's best median time a source and its rate (GTEPS: arcs over that
    time) against the graph's arcs, log-log, peers beside ours: one row of curves per graph family measured at two or
    more sizes and problem, then one row of points over every graph of the problem (families of one size included;
    points, not curves, since unrelated graphs are not sizes of one thing)."""
    data = summary.dropna(subset=["median_ms"]) if "median_ms" in summary else summary.iloc[:0]
    if not len(data):
        return "no scaling figure: nothing was measured"
    data = _prepare(data)
    families = set(scaling_families(summary))
    found = machines(data)
    rows = []
    for problem in sorted(data["problem"].unique()):
        for machine in found:
            part = _on_machine(data[data["problem"] == problem], *machine)
            rows += [(family, problem, machine, part[part["graph_family"] == family], True)
                     for family in sorted(families & set(part["graph_family"].dropna()))
                     if part.loc[part["graph_family"] == family, "m"].nunique() > 1]
            if part["graph"].nunique() > 1 and part["m"].nunique() > 1:
                rows.append(("every graph", problem, machine, part, False))
    if not rows:
        return "no scaling figure: no problem was measured on two or more graphs of different sizes on one machine"
    fig, axes = plt.subplots(len(rows), 2, figsize=(13, 4.2 * len(rows)), squeeze=False, layout="constrained")
    for row, (family, problem, machine, part, curve) in zip(axes, rows):
        best = _best_per_graph(part)
        for ax, y, label in zip(row, ("median_ms", "gteps"), ("best median time a source (ms, log)",
                                                                "GTEPS: arcs / time a source (10^9/s, log)")):
            if curve:
                sns.lineplot(data=best, x="m", y=y, hue="solver", style="device", markers=True, ax=ax,
                             legend=y == "gteps")
            else:
                sns.scatterplot(data=best.fillna({"graph_family": "-"}), x="m", y=y, hue="solver",
                                style="graph_family", s=60, ax=ax, legend=y == "gteps")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("arcs m (log)")
            ax.set_ylabel(label)
            ax.set_title(f"{problem.upper()} · {family}" + (f" · {_machine_text(*machine)}" if len(found) > 1 else ""))
        row[1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1))
    _banner(fig, _simulated(data).any(), "Scaling: time a source and rate against arcs (curves within a graph family)")
    return fig


# --- multi-GPU scaling ------------------------------------------------------------------------------
def gpu_scaling(samples, summary, peak=None):
    """Speed-up and parallel efficiency against GPUs (:func:`gpusp.report.gpuscaling.gpu_scaling_table`): a row of
    two panels per problem, graph and machine, a line per configuration measured at several GPU counts; dashed: ideal
    scaling. A configuration that was not validated at every count is drawn dotted and says so."""
    table = gpu_scaling_table(samples)
    if table.empty:
        return "no multi-GPU scaling: no configuration was measured at two or more values of its gpus parameter"
    panels = list(table.groupby(["problem", "graph", "gpu", "cpu"], sort=True))
    fig, axes = plt.subplots(len(panels), 2, figsize=(12, 3.8 * len(panels)), squeeze=False, layout="constrained")
    for row, ((problem, graph, gpu, cpu), part) in zip(axes, panels):
        counts = sorted(part["gpus"].unique())
        for key, line in part.groupby([k for k in SCALING_KEYS if k not in ("problem", "graph", "gpu", "cpu")]):
            checked = bool(line["validated"].all())
            label = " ".join(map(str, key)) + ("" if checked else " (not validated)")
            for ax, y in zip(row, ("speedup", "efficiency")):
                ax.plot(line["gpus"], line[y], marker="o", ls="-" if checked else ":", label=label)
        base = part["base_gpus"].min()
        row[0].plot(counts, [g / base for g in counts], ls="--", color="0.5", label="ideal")
        row[1].axhline(1.0, ls="--", color="0.5")
        for ax, label in zip(row, (f"speed-up over {base} GPU(s)", "parallel efficiency")):
            ax.set_xticks(counts)
            ax.set_xlabel("GPUs")
            ax.set_ylabel(label)
            ax.set_title(f"{str(problem).upper()} · {graph} · {_machine_text(gpu, cpu)}", fontsize=9)
        row[1].set_ylim(bottom=0)
        row[0].legend(fontsize=7)
    _banner(fig, (table["mode"] == "sim").any(), "Multi-GPU scaling: speed-up and efficiency against GPUs")
    return fig


# --- relaxation rate ---------------------------------------------------------------------------------
def rate_table(summary: pd.DataFrame) -> pd.DataFrame:
    """The configurations that counted relaxations, per panel, with ``work`` (their relaxations over the fewest
    any validated configuration of the same device needed), ``comparable`` (validated, at most WORK_FACTOR times
    that work) and ``best`` (the highest rate among the comparable GPU configurations, else CPU ones)."""
    data = summary.dropna(subset=["relaxations_per_s", "median_ms"])
    data = data[data["relaxations_per_s"] > 0]
    if data.empty:
        return data
    parts = []
    for title, part in _panels(_prepare(data)):
        valid = part["validated"].map(_is_true).astype(bool)
        floor = part["relaxations"].where(valid).groupby(part["device"]).transform("min")
        part = part.assign(panel=title, work=part["relaxations"] / floor, best=False)
        part["comparable"] = valid & (part["work"] <= WORK_FACTOR)
        pick = part[part["comparable"]]
        pick = pick[pick["device"] == "gpu"] if (pick["device"] == "gpu").any() else pick
        if len(pick):
            part.loc[pick["relaxations_per_s"].idxmax(), "best"] = True
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def throughput(samples, summary, peak=None):
    """Relaxations per second: a point per configuration, hollow where it was not validated or did more than
    WORK_FACTOR times the least work; the best comparable rate (or the measured APSP peak) as a line."""
    data = rate_table(summary)
    if data.empty:
        return "no relaxation counts recorded"
    panels = list(data.groupby("panel", sort=False))
    heights = _heights([len(p) for _, p in panels], per_row=0.3, extra=1.0)
    fig, axes = plt.subplots(len(panels), 1, figsize=(9, sum(heights) + 0.8), squeeze=False,
                             gridspec_kw={"height_ratios": heights}, layout="constrained")
    for ax, (title, part) in zip(axes[:, 0], panels):
        part = part.set_index("config").loc[config_order(part.reset_index(drop=True), "median_ms")]
        labels = []
        for i, (config, row) in enumerate(part.iterrows()):
            _, colour, marker = DEVICE_STYLE.get(row["device"], DEVICE_STYLE["gpu"])
            ax.plot(row["relaxations_per_s"], i, marker=marker, ls="", color=colour, ms=6,
                    markerfacecolor=colour if row["comparable"] else "none")
            extra = row["work"] > WORK_FACTOR
            labels.append(config + (f" ({number(row['work'])}x work)" if extra else ""))
        ax.set_yticks(np.arange(len(part)), labels)
        ax.set_ylim(len(part) - 0.5, -0.5)
        ax.set_xscale("log")
        lines = [(float(v), "#2ca02c") for v in part.loc[part["best"], "relaxations_per_s"]]
        if peak and part["problem"].iloc[0] == "apsp":  # an add-min ceiling: what an APSP relaxation is
            lines.append((float(peak), "r"))
        for value, colour in lines:
            ax.axvline(value, color=colour, lw=1, ls="--")
        ax.set_title(title, fontsize=9)
    axes[-1, 0].set_xlabel("relaxations (edges examined; n^3 for FW) per second, log")
    hollow = f"not validated, or more than {WORK_FACTOR:g}x the least work of its device"
    refs = [("best comparable rate", "#2ca02c")] * bool(data["best"].any()) + [("measured peak (APSP)", "r")] * bool(
        peak and (data["problem"] == "apsp").any())
    counted = set(zip(data["solver"], data["params"]))
    uncounted = sorted({f"{r.solver} {r.params}" for r in summary.dropna(subset=["median_ms"]).itertuples()
                        if (r.solver, r.params) not in counted})
    if uncounted:  # peers and SciPy report no relaxations: say which configurations the figure cannot show
        axes[-1, 0].annotate("no relaxation count, not shown: " + ", ".join(uncounted), (0, -0.55),
                             xycoords="axes fraction", fontsize=7, color="0.35", va="top", wrap=True)
    _legend(fig, data["device"], hollow=hollow if not data["comparable"].all() else None, lines=refs)
    _banner(fig, _simulated(data).any(), "Relaxation rate")
    return fig


# --- all figures ------------------------------------------------------------------------------------
def figure(name: str, samples: pd.DataFrame, summary: pd.DataFrame, peak=None):
    """The figure ``name`` of :data:`FIGURES` (a matplotlib Figure), or why it has no data (a string)."""
    if name not in FIGURES:
        raise ValueError(f"no figure {name!r} (figures: {', '.join(FIGURES)})")
    sns.set_theme(style="whitegrid", context="paper")
    return globals()[name](samples, summary, peak=peak)


def make_figures(samples: pd.DataFrame, summary: pd.DataFrame, out_dir, peak=None, reasons=None) -> dict:
    """Write every figure that has data as ``<out_dir>/<name>.png`` and remove an older file of a figure that
    has none; returns name -> path of those written. ``reasons``, a dict, receives name -> why not for the
    others."""
    out_dir = Path(out_dir)
    paths = {}
    for name in FIGURES:
        path = out_dir / f"{name}.png"
        result = figure(name, samples, summary, peak=peak)
        if isinstance(result, str):
            path.unlink(missing_ok=True)
            if reasons is not None:
                reasons[name] = result
            continue
        _save(result, path)
        paths[name] = path
    return paths


def figures_from_tables(samples_path, summary_path, out_dir, peak=None, reasons=None) -> dict:
    """:func:`make_figures` from the files ``gpusp aggregate`` wrote (samples.parquet, summary.csv)."""
    return make_figures(pd.read_parquet(samples_path), pd.read_csv(summary_path), out_dir, peak=peak,
                        reasons=reasons)
