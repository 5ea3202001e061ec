"""Paper 002 (Zuccato & Lena): Figures 4.1-4.3, execution time of the blocked Floyd-Warshall versions against the
matrix side n (80 ... 1200) per blocking factor B. Fig. 4.1: every version but 1.0 (too slow for the paper's
plot), two panels (B = 8 and 24: Fig. 4.2 "added B = 16 and B = 32"); Fig. 4.2: versions 2.0, 2.1 and 3.0 on
four panels, n = 1200 left out; Fig. 4.3: version 2.1 (the text's "2.2") by blocking factor, a curve per B and,
beside it, time against B per n with dashed trend lines. The paper ran only the pairs where B divides n and prints
no values (config/experiments/paper002-fig4.yaml)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from .core import (
    curves,
    finish,
    legend,
    millis,
    missing_points,
    not_run,
    panels,
    paper_figure,
    series,
)

VERSIONS = ["v11", "v12", "v20", "v21", "v30", "v40", "v41"]
BEST = ["v20", "v21", "v30"]
SIZES = plt.get_cmap("viridis")  # Fig. 4.3's colours per n, apart from the left panel's per B (tab10)
PADDED = "B does not divide n: padded here, not run by the paper"
LOG_NOTE = "Time on a log axis (the paper's is linear), so that every version stays visible at every B."
NOTES = ("Times: the median of our timed runs (CUDA events around the device work); the paper timed each run "
         "with std::chrono on the host and prints no values. Its axes' unit is not in the text: ours are ms.",
         "The paper's setting: costs only (paths=false) and, for 4.0 and 4.1, the CUDA graph built inside every run "
         "(capture=per-run); a label names every setting of ours that differs.")


def _version(v: str) -> str:
    return f"version {v[1]}.{v[2]}"


def _rows(view, versions, blocks=None):
    """One row per version, curve, n and B: ``_b`` (the blocking factor) and ``_padded`` (B does not divide n)."""
    wanted = [series(_version(v), f"blockedfw_{v}") for v in versions]
    rows = view.select(wanted, by=("n", "_b"), fixed=("block_size",)) if len(view.rows) else view.rows
    if not len(rows):
        return rows
    rows = rows.assign(_b=[int(p["block_size"]) for p in rows["_p"]])
    rows = rows.assign(_padded=rows["n"].astype(int) % rows["_b"] != 0)
    return rows[rows["_b"].isin(blocks)] if blocks else rows


def _view(view):
    """Our blocked FW rows with their blocking factor (a column for :meth:`View.select` to group by)."""
    view = view.where(view.rows["solver"].astype(str).str.startswith("blockedfw_"))
    view.rows["_b"] = [int(p.get("block_size", 0)) for p in view.rows["_p"]]
    return view


def _by_block(view, versions, blocks, title, max_n=None, extra=()):
    """A panel per blocking factor of ``blocks``: time (ms, log: 2.0 and 2.1 sit 10-40x below 3.0 and the
    per-run graphs) against n, a curve per version; a version without a point where B divides n, not run."""
    view = _view(view)
    if max_n:
        view = view.where(view.rows["n"] <= max_n)
    rows = _rows(view, versions, blocks)
    shown = [b for b in blocks if (rows["_b"] == b).any() and rows.loc[rows["_b"] == b, "n"].nunique() >= 2] \
        if len(rows) else []
    if not shown:
        return (f"no run of {', '.join(_version(v) for v in versions)} with B in {blocks} at two or more sizes"
                + (f" up to n = {max_n}" if max_n else ""))
    rows = millis(rows[rows["_b"].isin(shown)])
    sizes = sorted(rows["n"].unique())
    wanted = [series(_version(v), f"blockedfw_{v}") for v in versions]
    fig, axes = panels(len(shown), width=5.0, height=4.0, cols=min(2, len(shown)))
    for ax, b in zip(axes, shown):
        part = rows[rows["_b"] == b]
        curves(ax, part, "n")
        not_run(ax, missing_points(part, "n", [n for n in sizes if n % b == 0], wanted))
        ax.set_yscale("log")
        ax.set_xticks(sizes)
        ax.tick_params(axis="x", labelrotation=60)
        ax.set_title(f"B = {b}", fontsize=9)
        ax.set_xlabel("number of vertices n")
        ax.set_ylabel("time (ms, log)")
    legend(fig, axes, hollow=PADDED if rows["_padded"].any() else None, not_validated=not rows["_ok"].all())
    return finish(fig, view, rows, "002", title, [*extra, LOG_NOTE, *NOTES])


@paper_figure("002", "fig4-1", "Figure 4.1: execution time of all the versions")
def fig4_1(view):
    return _by_block(view, VERSIONS, [8, 24], "Figure 4.1: execution time of all the versions", extra=[
        "Version 1.0 is left out as in the paper; panels B = 8 and B = 24 (Figure 4.2 adds 16 and 32)."])


@paper_figure("002", "fig4-2", "Figure 4.2: execution time of the best versions")
def fig4_2(view):
    return _by_block(view, BEST, [8, 16, 24, 32], "Figure 4.2: execution time of the best versions", max_n=720,
                     extra=["Versions 2.0, 2.1 and 3.0; n = 1200 left out as in the paper."])


@paper_figure("002", "fig4-3", "Figure 4.3: blocking factors compared (version 2.1)")
def fig4_3(view):
    view = _view(view)
    rows = _rows(view, ["v21"])
    if not len(rows) or rows["_b"].nunique() < 2 or rows["n"].nunique() < 2:
        return "no run of version 2.1 (blockedfw_v21) at two or more blocking factors and sizes"
    rows = millis(rows[rows["_solid"]])
    fig, (left, right) = panels(2, width=5.5, height=4.2)
    blocks, sizes = sorted(rows["_b"].unique()), sorted(rows["n"].unique())
    for i, b in enumerate(blocks):
        part = rows[rows["_b"] == b]
        part = part.assign(_colour=i, _label=f"B = {b}" + part["_label"].str.removeprefix(_version("v21")))
        curves(left, part, "n")
    left.set_xticks(sizes)
    left.tick_params(axis="x", labelrotation=60)
    left.set_xlabel("number of vertices n")
    left.set_ylabel("time (ms)")
    left.set_title("a curve per blocking factor", fontsize=9)
    for i, n in enumerate(sizes):
        part = rows[rows["n"] == n].sort_values("_b")
        colour = SIZES(i / max(1, len(sizes) - 1))  # never a blocking factor's colour (the paper's 8 sizes)
        for _, row in part.iterrows():
            right.plot(row["_b"], row["_y"], marker="o", ls="", color=colour, ms=5,
                       markerfacecolor="none" if row["_padded"] else colour)
        if len(part) >= 2:  # the paper's dashed trend line: a least-squares line through the points of one n
            slope, icept = np.polyfit(part["_b"].astype(float), part["_y"].astype(float), 1)
            xs = np.array([min(blocks), max(blocks)], dtype=float)
            right.plot(xs, slope * xs + icept, ls="--", lw=0.9, color=colour, label=f"n = {int(n)}")
    right.set_xticks(blocks)
    right.set_xlabel("blocking factor B")
    right.set_ylabel("time (ms)")
    right.set_title("time against B per n, dashed: trend lines", fontsize=9)
    legend(fig, [left, right], hollow=PADDED if rows["_padded"].any() else None, not_validated=not rows["_ok"].all())
    return finish(fig, view, rows, "002", "Figure 4.3: blocking factors compared (version 2.1)", [
        "The text compares B on \"version 2.2\", read as 2.1 (the paper describes no 2.2).", *NOTES])
