"""What every paper figure shares: the series a figure names, the summary rows that stand for them, the paper's
printed values, the axes and the caption under the figure (our machine, the paper's, the time window).

A series is one curve of a paper's figure under the paper's name (``Proposed``, ``Stride with Flag``,
``version 2.1``): a registered solver and the parameters that make it the paper's variant (a config header under
config/experiments/ says which). A summary row stands for a series when its solver is the series' and its
parameters, unset ones at the registry's defaults, include the series' (the fastest validated row where several
do). Parameters that the paper fixes but our solvers expose (``paths``, ``graph``, ``launcher``, ``layout``,
``edges_per_thread``, ``streams``, ``workers``) split a series into one curve per value found in the data: the curve at the
paper's setting (:data:`PAPER_SETTING`) is solid, the others dashed, and a label names every setting of ours that
differs from the paper's. Where the paper prints values (``gpusp/data/published.yaml``: paper 000's Tables 1 and 3,
paper 001's Table 1), they are stars in the series' colour beside our points.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ...solvers import registry
from ..papers import UNIT_MS, load_published
from ..plots import _banner, _is_true, _simulated, param_values

# the paper's hardware, as each config header under config/experiments/ states it
PAPER_HARDWARE = {
    "000": "a GeForce GPU of UF's HiPerGator (model not stated), CUDA 10.0",
    "001": "GPU methods on a GeForce 8800 GTS (G92), the Dijkstra method on a Xeon 5440 (4 threads)",
    "002": "a Tesla K80 GPU with a one-core Xeon @ 2.20 GHz (Kaggle)",
    "004": "a GeForce GTX 750 Ti",
}
# parameters the papers fix and our solvers expose, with the paper's setting: 001 and 002 time the cost
# computation only, 002 captures its CUDA graph inside every timed run, the papers launch from C, 004's basic
# kernels read coalesced and relax one edge per thread; streams (004 Sec. V.B) and SciPy's workers (001's CPU
# method ran 4 threads) have no setting of ours that is the paper's
PAPER_SETTING = {"paths": "false", "capture": "per-run", "launcher": "native", "layout": "coalesced",
                 "edges_per_thread": "1", "streams": None, "workers": None}
NOT_VALIDATED = "x"
NOT_RUN, NOT_RUN_MARKER = "not-run", "v"
PAPER_MARKER = "*"
PALETTE = plt.get_cmap("tab10").colors


@dataclass(frozen=True)
class Series:
    """One curve of a paper's figure: the paper's ``name``, our ``solver`` and the ``params`` (key, value) pairs
    that make it the paper's variant; ``paper`` False marks a reference of ours that the paper does not plot, and
    ``style`` its line (':' for an estimate)."""

    name: str
    solver: str
    params: tuple = ()
    paper: bool = True
    style: str = "-"


def series(name: str, solver: str, paper: bool = True, style: str = "-", **params) -> Series:
    return Series(name, solver, tuple(sorted((k, norm(v)) for k, v in params.items())), paper, style)


@dataclass(frozen=True)
class PaperFigure:
    paper: str
    name: str
    title: str
    draw: Callable


FIGURES: dict[tuple[str, str], PaperFigure] = {}


def paper_figure(paper: str, name: str, title: str):
    """Register ``draw(view) -> Figure | str`` (a string: why it was not drawn) as paper ``paper``'s ``name``."""

    def register(draw):
        FIGURES[(paper, name)] = PaperFigure(paper, name, title, draw)
        return draw

    return register


# --- the rows ----------------------------------------------------------------------------------------------------
def norm(value) -> str:
    """A parameter value as one spelling: 8, 8.0 and "8" are "8"; True and "True" are "true"."""
    text = str(value).strip().lower()
    try:
        number = float(text)
    except ValueError:
        return text
    return str(int(number)) if number == int(number) else text


def resolved(solver: str, label) -> dict:
    """Every parameter of a row: its label's, then the registry's defaults for the ones it leaves unset."""
    spec = registry.REGISTRY.get(solver)
    defaults = {p.name: p.default for p in spec.params} if spec else {}
    given = {} if str(label) in ("default", "nan", "None") else param_values(label)
    return {k: norm(v) for k, v in {**defaults, **given}.items()}


WMAX = re.compile(r"\bwmax=(\d+)")
ESTIMATE = "estimate from sampled sources"
SAMPLED_NOTE = (f"'{ESTIMATE}' (dotted): an APSP run from a seeded sample of its source groups (sample_groups of "
                "the ceil(|V| / N) groups of N sources), its time scaled to the whole run by the groups not sampled.")


def sampled_share(params: dict, n) -> float:
    """The share of an APSP's sources a run solved: sample_groups of the ceil(n / N) groups of N sources (nsssp's
    sampled runs), 1 for a whole run."""
    groups = int(params.get("sample_groups") or 0)
    if not groups:
        return 1.0
    per = int(params.get("sources_per_launch") or 1)
    return groups / -(-int(n) // per)


class View:
    """The timed summary rows of one machine, with their resolved parameters, and the samples beside them; a
    sampled APSP's times (``_share`` of its sources) stand for the whole run's, scaled by 1 / ``_share``."""

    def __init__(self, summary: pd.DataFrame, samples: pd.DataFrame | None = None):
        rows = summary.dropna(subset=["median_ms"]) if "median_ms" in summary else summary.iloc[0:0]
        rows = rows.reset_index(drop=True)
        rows["_p"] = [resolved(s, p) for s, p in zip(rows["solver"], rows["params"])] if len(rows) else []
        rows["_share"] = [sampled_share(p, n) for p, n in zip(rows["_p"], rows["n"])] if len(rows) else []
        for column in ("median_ms", "q1_ms", "q3_ms"):  # a sampled APSP's time as the whole run's estimate
            if column in rows and len(rows):
                rows[column] = rows[column].astype(float) / rows["_share"].astype(float)
        family = [str(f) for f in rows["graph_family"]] if "graph_family" in rows else [""] * len(rows)
        rows["_generator"] = pd.Series([f.split(" ")[0] for f in family], index=rows.index, dtype=object)
        rows["_wmax"] = pd.Series([float(m[1]) if (m := WMAX.search(f)) else np.nan for f in family],
                                  index=rows.index, dtype=float)
        rows["_ok"] = rows["validated"].map(_is_true).astype(bool) if "validated" in rows else False
        self.rows = rows
        self.samples = samples if samples is not None else pd.DataFrame()

    def samples_of(self, row) -> pd.DataFrame:
        """The samples of the configuration a summary ``row`` stands for (same graph, solver, parameters and,
        where both record one, GPU)."""
        samples = self.samples
        if samples.empty:
            return samples
        keep = ((samples["graph"] == row["graph"]) & (samples["solver"] == row["solver"])
                & (samples["params"].astype(str) == str(row["params"])))
        if "gpu" in samples and "gpu" in row.index and pd.notna(row["gpu"]):
            keep &= samples["gpu"].astype(str) == str(row["gpu"])
        return samples[keep]

    def where(self, mask) -> View:
        view = View.__new__(View)
        view.rows, view.samples = self.rows[mask].reset_index(drop=True), self.samples
        return view

    def select(self, wanted: list[Series], by=("graph",), fixed=()) -> pd.DataFrame:
        """The rows of ``wanted``, one per series, curve and ``by`` group (the fastest, validated ones first),
        with ``_series``, ``_label``, ``_solid``, ``_colour`` (the series' place in ``wanted``), ``_style`` and
        ``_paper``; ``fixed``: parameters that the figure itself varies (never a curve's split)."""
        parts = []
        for i, s in enumerate(wanted):
            rows = self.rows[self.rows["solver"] == s.solver]
            rows = rows[[all(p.get(k) == v for k, v in s.params) for p in rows["_p"]]]
            if rows.empty:
                continue
            own = dict(s.params)
            keys = [k for k in PAPER_SETTING if k not in own and k not in fixed and any(k in p for p in rows["_p"])]
            values = {k: {p.get(k) for p in rows["_p"]} for k in keys}
            curve = [tuple((k, p.get(k)) for k in keys) for p in rows["_p"]]
            rows = rows.assign(_curve=curve, _estimate=rows["_share"] < 1)
            best = min(sorted(set(curve), key=str), key=lambda c: sum(_differs(k, v, values) for k, v in c))
            for (c, estimate), part in rows.groupby(["_curve", "_estimate"], sort=True):
                shown = [f"{k}={v}" for k, v in c if _differs(k, v, values)] + ([ESTIMATE] if estimate else [])
                part = part.sort_values(["_ok", "median_ms"], ascending=[False, True]).groupby(list(by)).head(1)
                parts.append(part.assign(_series=s.name, _label=s.name + (f" ({', '.join(shown)})" if shown else ""),
                                         _solid=c == best, _colour=i, _style=":" if estimate else s.style,
                                         _paper=s.paper))
        return pd.concat(parts, ignore_index=True) if parts else self.rows.iloc[0:0].assign(
            _series="", _label="", _solid=True, _colour=0, _style="-", _paper=True)


def _differs(key, value, values) -> bool:
    """Whether a curve's label names ``key=value``: it is not the paper's setting (or, where the paper has none,
    the data holds several values)."""
    if value is None:
        return False
    setting = PAPER_SETTING.get(key)
    return value != setting if setting is not None else len(values[key]) > 1


def has_paper_series(rows: pd.DataFrame) -> bool:
    return bool(len(rows) and rows["_paper"].any())


# --- times -------------------------------------------------------------------------------------------------------
END_TO_END = "end_to_end_median_ms"


def seconds(rows: pd.DataFrame, column="median_ms") -> pd.DataFrame:
    """``rows`` with ``_y``, ``_lo``, ``_hi``: the time in seconds and its quartiles."""
    return _scaled(rows, column, 1e-3)


def millis(rows: pd.DataFrame, column="median_ms") -> pd.DataFrame:
    return _scaled(rows, column, 1.0)


def _scaled(rows, column, scale):
    y = rows[column].astype(float)
    if column == END_TO_END:  # quartiles of the kernel samples do not bound the end-to-end median
        return rows.assign(_y=y * scale, _lo=y * scale, _hi=y * scale)
    lo = rows["q1_ms"].astype(float) if "q1_ms" in rows else y
    hi = rows["q3_ms"].astype(float) if "q3_ms" in rows else y
    return rows.assign(_y=y * scale, _lo=lo.fillna(y) * scale, _hi=hi.fillna(y) * scale)


def by_window(rows: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """Paper 000's times in seconds, one time window per line: where the summary has ``end_to_end_median_ms``
    (allocation, copies and kernels, the paper's window) a solid line of those and a dotted one of the solve alone
    (``median_ms``), each curve's label naming its window, never one line through both; (rows, the caption's
    sentence)."""
    if END_TO_END not in rows or not rows[END_TO_END].notna().any():
        return seconds(rows), ("Our times are the solve alone (median, bars: quartiles); the paper's also hold the "
                               "allocation and the copies (no end-to-end column in these tables).")
    whole = seconds(rows[rows[END_TO_END].notna()], END_TO_END)
    solve = seconds(rows).assign(_style=":")
    parts = [whole.assign(_label=whole["_label"] + ", end to end"),
             solve.assign(_label=solve["_label"] + ", solve only")]
    return pd.concat(parts, ignore_index=True), (
        "One window per line: end to end (end_to_end_median_ms: allocation, copies and kernels, the paper's window) "
        "where recorded, solid; the solve alone (median_ms, bars: quartiles), dotted.")


# --- the paper's printed values ----------------------------------------------------------------------------------
def published(paper: str, source: str, wanted: list[Series], unit: str) -> pd.DataFrame:
    """The printed values of ``paper``'s ``source`` that belong to a series of ``wanted`` (same solver, the
    series' parameters among the entry's), in ``unit`` ('s' or 'ms'): graph, series, colour, value."""
    rows = []
    for entry in load_published():
        if str(entry.get("paper")) != paper or entry.get("source") != source:
            continue
        have = {k: norm(v) for k, v in (entry.get("params") or {}).items()}
        for i, s in enumerate(wanted):
            if s.paper and entry["solver"] == s.solver and all(have.get(k) == v for k, v in s.params):
                ms = float(entry["value"]) * UNIT_MS[str(entry["unit"])]
                rows.append({"graph": entry["graph"], "_series": s.name, "_colour": i,
                             "value": ms / UNIT_MS[unit]})
                break
    return pd.DataFrame(rows, columns=["graph", "_series", "_colour", "value"])


def unmatched(printed: pd.DataFrame, rows: pd.DataFrame, xs: dict, offsets: dict | None = None) -> pd.DataFrame:
    """The printed values (of :func:`published`) that no row of ours measured: ``_x`` (their star's x),
    ``_series``, ``_colour``, for :func:`not_run`."""
    have = set(zip(rows["graph"], rows["_series"]))
    gone = printed[[(g, s) not in have and g in xs for g, s in zip(printed["graph"], printed["_series"])]]
    return pd.DataFrame({"_x": [xs[g] + (offsets or {}).get(s, 0.0) for g, s in zip(gone["graph"], gone["_series"])],
                         "_series": gone["_series"].tolist(), "_colour": gone["_colour"].tolist()})


# --- drawing -----------------------------------------------------------------------------------------------------
def curves(ax, rows: pd.DataFrame, x: str, y: str = "_y", bars: bool = True, join: bool = True):
    """One line per curve of ``rows`` against column ``x`` (markers alone unless ``join``): the series' colour,
    solid at the paper's setting, hollow markers where the paper did not run the point (``_padded``), an x where
    it was not validated; ``bars``: the quartiles (``_lo``, ``_hi``)."""
    order = rows.drop_duplicates("_label").sort_values(["_colour", "_solid", "_label"], ascending=[True, False, True])
    for label in order["_label"]:
        part = rows[rows["_label"] == label].sort_values(x)
        first = part.iloc[0]
        colour = PALETTE[int(first["_colour"]) % len(PALETTE)]
        style = first["_style"] if first["_solid"] else "--"
        ax.plot(part[x], part[y], ls=style if join else "", color=colour, lw=1.4 if first["_solid"] else 1.0,
                marker="o" if not join else None, ms=5, label=label)
        for _, row in part.iterrows():
            padded = bool(row.get("_padded", False))
            marker = NOT_VALIDATED if not row["_ok"] else "o"
            ax.plot(row[x], row[y], marker=marker, ls="", color=colour, ms=5,
                    markerfacecolor="none" if padded or marker == NOT_VALIDATED else colour)
            if bars and y == "_y" and row["_hi"] > row["_lo"]:
                ax.plot([row[x]] * 2, [row["_lo"], row["_hi"]], color=colour, lw=0.8)


def stars(ax, points: pd.DataFrame, xs: dict, offsets: dict | None = None):
    """The paper's printed values at the x of their graph (``xs``: graph -> x)."""
    for _, row in points.iterrows():
        if row["graph"] in xs:
            colour = PALETTE[int(row["_colour"]) % len(PALETTE)]
            x = xs[row["graph"]] + (offsets or {}).get(row["_series"], 0.0)
            ax.plot(x, row["value"], marker=PAPER_MARKER, ls="",
                    ms=12, color=colour, markeredgecolor="k", markeredgewidth=0.6)


def missing_points(rows: pd.DataFrame, x: str, xs, wanted: list[Series] | None = None) -> pd.DataFrame:
    """The paper's series (its solid curves; with ``wanted`` also those with no row at all) at each of ``xs``
    where ``rows`` have no point: ``x``, ``_series``, ``_colour``."""
    paper = rows[rows["_paper"] & rows["_solid"]] if len(rows) else rows
    names = dict(zip(paper["_series"], paper["_colour"]))
    for i, s in enumerate(wanted or []):
        if s.paper:
            names.setdefault(s.name, i)
    have = set(zip(paper["_series"], paper[x].astype(float))) if len(paper) else set()
    out = [{x: float(v), "_series": name, "_colour": int(colour)} for name, colour in names.items()
           for v in sorted({float(v) for v in xs}) if (name, float(v)) not in have]
    return pd.DataFrame(out, columns=[x, "_series", "_colour"])


def not_run(ax, missing: pd.DataFrame):
    """A hollow triangle at the foot of the panel, in the series' colour, at every x where the paper ran the
    series and we did not (``missing``: the x in its first column, ``_colour``); stacked by colour."""
    if missing.empty:
        return
    x = missing.columns[0]
    ranks = {c: i for i, c in enumerate(sorted(missing["_colour"].unique()))}
    for _, row in missing.iterrows():
        ax.plot([row[x]], [0.03 + 0.04 * ranks[row["_colour"]]], marker=NOT_RUN_MARKER, ls="", ms=6,
                color=PALETTE[int(row["_colour"]) % len(PALETTE)], markerfacecolor="none",
                transform=ax.get_xaxis_transform(), gid=NOT_RUN, label="_" + NOT_RUN)


def log_axis(ax, axis: str, values, labels=None, base=2):
    """A log ``axis`` ticked at ``values`` (the sweep's points), written out (1K, 4096, 0.5), not as powers."""
    values = sorted({float(v) for v in values})
    (ax.set_xscale if axis == "x" else ax.set_yscale)("log", base=base)
    target = ax.xaxis if axis == "x" else ax.yaxis
    target.set_major_locator(matplotlib.ticker.FixedLocator(values))
    target.set_major_formatter(matplotlib.ticker.FixedFormatter(labels or [size(v) for v in values]))
    target.set_minor_formatter(matplotlib.ticker.NullFormatter())
    if axis == "x" and len(values) > 6:  # a long sweep (1K ... 1M): slanted, so that neighbours do not run together
        ax.tick_params(axis="x", labelrotation=45)


def size(v) -> str:
    """1024 -> 1K, 1048576 -> 1M, 80 -> 80 (the papers' way of writing |V|)."""
    v = float(v)
    for div, suffix in ((2 ** 20, "M"), (2 ** 10, "K")):
        if v >= div and v % div == 0:
            return f"{int(v // div)}{suffix}"
    return f"{v:g}"


def legend(fig, axes, stars_shown=False, hollow=None, not_validated=False):
    """One legend right of the panels (the caption goes under them): the curves of every panel (once each), the
    paper's values, the markers."""
    handles, seen = [], set()
    for ax in np.ravel(axes):
        for handle, label in zip(*ax.get_legend_handles_labels()):
            if label not in seen and not label.startswith("_"):
                seen.add(label)
                handles.append(handle)
    grey = "0.3"
    if stars_shown:
        handles.append(matplotlib.lines.Line2D([], [], ls="", marker=PAPER_MARKER, ms=11, color=grey,
                                               markeredgecolor="k", label="the paper's printed value"))
    if hollow:
        handles.append(matplotlib.lines.Line2D([], [], ls="", marker="o", markerfacecolor="none", color=grey,
                                               label=hollow))
    if not_validated:
        handles.append(matplotlib.lines.Line2D([], [], ls="", marker=NOT_VALIDATED, color=grey, label="not validated"))
    if any(line.get_gid() == NOT_RUN for ax in np.ravel(axes) for line in ax.get_lines()):
        handles.append(matplotlib.lines.Line2D([], [], ls="", marker=NOT_RUN_MARKER, markerfacecolor="none",
                                               color=grey, label="not run here (the paper ran it)"))
    fig.legend(handles=handles, loc="outside right center", fontsize=7, frameon=False)


def machine_text(rows: pd.DataFrame, samples: pd.DataFrame) -> str:
    """Our machine from the rows' (else the samples') gpu and cpu columns; the CUDA simulator says so."""
    def names(frame, column, device=None):
        if column not in frame or frame.empty:
            return []
        part = frame[frame["device"] == device] if device and "device" in frame else frame
        return sorted({str(v) for v in part[column].dropna() if str(v) not in ("", "-", "nan", "None")})

    sim = bool(_simulated(rows).any())
    gpus = names(rows, "gpu", "gpu") or names(samples, "gpu", "gpu")
    cpus = names(rows, "cpu") or names(samples, "cpu")
    gpu = "the CUDA simulator (SIMULATED)" if sim else (", ".join(gpus) or "no GPU")
    return f"GPU {gpu}, host CPU {', '.join(cpus) or 'not recorded'}"


class PlainLogFormatter(matplotlib.ticker.LogFormatter):
    """Matplotlib's choice of which log ticks to label, each label written plainly (0.3, not 3e-01)."""

    def __call__(self, x, pos=None):
        return f"{x:.12g}" if super().__call__(x, pos) else ""


def finish(fig, view: View, rows: pd.DataFrame, paper: str, title: str, notes=()):
    """The SIMULATED banner and the title above, the caption below: our machine beside the paper's, then
    ``notes``."""
    for ax in fig.axes:
        if ax.get_yscale() == "log":  # plain numbers (6, 0.3, 100), also between the decades of a short range
            for setter in (ax.yaxis.set_major_formatter, ax.yaxis.set_minor_formatter):
                setter(PlainLogFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.5)))
    _banner(fig, bool(_simulated(rows).any()), f"Paper {paper}, {title}")
    lines = [f"Ours: {machine_text(rows, view.samples)}. Paper: {PAPER_HARDWARE[paper]}.", *notes]
    if "_share" in rows and (rows["_share"].astype(float) < 1).any():
        lines.append(SAMPLED_NOTE)
    fig.text(0.0, 0.0, "\n".join(lines), ha="left", va="top", fontsize=7, color="0.25", wrap=True,
             transform=fig.transFigure)
    return fig


def panels(n: int, width=6.0, height=4.0, cols=None):
    cols = cols or n
    rows = -(-n // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows + 1.0), squeeze=False,
                             layout="constrained")
    return fig, axes.ravel()


def against(view: View, rows: pd.DataFrame, x: str, xlabel: str, paper: str, title: str, notes=(), unit="s",
            ylog=True, hollow=None, wanted: list[Series] | None = None):
    """The common figure: one panel, a curve per series against ``x`` on a log-2 axis ticked at the sweep's
    points, time in ``unit`` (``rows`` may bring their own ``_y``); a paper series of ``wanted`` without a point at
    one of the sweep's x is marked not run there."""
    if "_y" not in rows:
        rows = (seconds if unit == "s" else millis)(rows)
    fig, (ax,) = panels(1, width=9.5, height=4.6)
    curves(ax, rows, x)
    not_run(ax, missing_points(rows, x, rows[x].unique(), wanted))
    log_axis(ax, "x", rows[x].unique())
    if ylog:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(f"time ({unit}{', log' if ylog else ''})")
    legend(fig, [ax], hollow=hollow, not_validated=not rows["_ok"].all())
    return finish(fig, view, rows, paper, title, notes)


def enough(rows: pd.DataFrame, x: str, what: str) -> str | None:
    """Why a curve figure is not drawn: no paper variant in ``rows``, or its rows at fewer than two ``x``."""
    if not has_paper_series(rows):
        return f"no run of the paper's variants ({what})"
    if rows.loc[rows["_paper"], x].nunique() < 2:
        return f"the paper's variants ({what}) ran at fewer than two values of {x.strip('_')}"
    return None
