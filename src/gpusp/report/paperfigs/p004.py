"""Paper 004 (An): the edges-per-thread Figures 1.1 (time against |V|, a curve per number of edges per thread) and
1.2 (time against edges per thread, a curve per |V|), Section IV.B's coalesced vs non-coalesced figure, Figure 2
(incoming vs outgoing vs the basic edge-parallel version on several graphs), Section IV.A's transfer figures
(the matrix upload from pageable and pinned memory, its share of the run, and the streamed upload) and Section
V.C's min-plus squaring against the parallel Floyd-Warshall. The report prints no values; its axes' units are not
in the text, ours are ms (config/experiments/paper004-*.yaml map its kernels to our solvers)."""

from __future__ import annotations

import numpy as np

from ..metrics import metric_median
from .core import (
    against,
    curves,
    enough,
    finish,
    legend,
    log_axis,
    millis,
    missing_points,
    not_run,
    panels,
    paper_figure,
    series,
)

KERNELS = {"edgebf_dense": "adjacency matrix, 2-D grid stride (edgebf_dense, the paper's Alg. 5)",
           "edgebf_coo": "COO arc list, grid stride (edgebf_coo)"}
UNITS = ("Times: medians of our timed runs (bars: quartiles); the report prints no values and its axes' units "
         "are not in the text (ours: ms).")
PUSH_PULL = [series("incoming (pull)", "vertexbf_pull"),
             series("outgoing (push)", "vertexbf_push"),
             series("basic parallel: thread per matrix entry", "edgebf_dense", transfer="pageable"),
             series("basic parallel: thread per arc (COO)", "edgebf_coo", launch="host")]
TRANSFER = [series("pageable", "edgebf_dense", transfer="pageable"),
            series("pinned", "edgebf_dense", transfer="pinned")] + [
    series(f"{k} streams (upload inside the run)", "edgebf_dense", transfer="streams", chunks=k) for k in (2, 4, 8)]
PAPER_LARGEST = 20480  # Section IV.A: matrices from 256 x 256 to 20480 x 20480
TRANSFER_NOTE = ("From each configuration's samples, as the findings (rows 4.1-4.3) compute them: upload = the "
                 "matrix upload (h2d_ms, once per configuration); share = upload / (upload + run); upload + run; "
                 "medians over the runs (bars: quartiles).")
STREAMS_NOTE = ("Streams: the matrix travels inside every timed run in row pieces, each relaxed on its stream behind "
                "its copy; upload + run adds the other arrays' h2d_ms. The paper's matrices go to "
                f"{PAPER_LARGEST:,} x {PAPER_LARGEST:,}.")
SQUARING = [series("matrix squaring, naive", "minplus_naive", transpose="false"),
            series("matrix squaring, tiled 32 x 32", "minplus_tiled", tile=32, transpose="false"),
            series("matrix squaring, naive, transposed operand", "minplus_naive", transpose="true"),
            series("matrix squaring, tiled, transposed operand", "minplus_tiled", tile=32, transpose="true"),
            series("parallel Floyd-Warshall (thread per entry)", "floydwarshall_supernaive"),
            series("tiled shared-memory Floyd-Warshall (ours)", "floydwarshall_tiledshared", paper=False),
            series("SciPy APSP (ours)", "scipy_apsp", paper=False)]


def _complete(view):
    return view.where(view.rows["_generator"] == "complete")


def _per_thread(view):
    """Per kernel of :data:`KERNELS` that swept edges per thread on complete graphs: its rows, one curve per value
    (``_ept``), coloured by the value's place among them."""
    view = _complete(view)
    out = {}
    for solver in KERNELS:
        values = sorted({int(p["edges_per_thread"]) for s, p in zip(view.rows["solver"], view.rows["_p"])
                         if s == solver and "edges_per_thread" in p})
        if len(values) < 2:
            continue
        fixed = {"transfer": "pageable"} if solver == "edgebf_dense" else {"launch": "host"}
        wanted = [series(f"{e} {'edges' if e > 1 else 'edge'} per thread", solver, edges_per_thread=e,
                         **fixed) for e in values]
        rows = view.select(wanted, by=("n",))
        out[solver] = millis(rows.assign(_ept=[int(p["edges_per_thread"]) for p in rows["_p"]]))
    return view, out


@paper_figure("004", "fig1-1", "Figure 1.1: time against |V| for 1 ... 64 edges per thread")
def fig1_1(view):
    view, found = _per_thread(view)
    found = {k: r for k, r in found.items() if r["n"].nunique() >= 2}
    if not found:
        return ("no edge-parallel kernel (edgebf_coo, edgebf_dense) swept edges per thread on two or more complete "
                "graphs")
    fig, axes = panels(len(found), width=6.0, height=4.2)
    for ax, (solver, rows) in zip(axes, found.items()):
        curves(ax, rows, "n")
        log_axis(ax, "x", rows["n"].unique())
        ax.set_yscale("log")
        ax.set_xlabel("number of vertices |V| (complete graph, log)")
        ax.set_ylabel("time (ms, log)")
        ax.set_title(KERNELS[solver], fontsize=9)
    rows = next(iter(found.values()))
    legend(fig, axes, not_validated=not all(r["_ok"].all() for r in found.values()))
    return finish(fig, view, rows, "004", "Figure 1.1: time against |V| per number of edges per thread", [UNITS])


@paper_figure("004", "fig1-2", "Figure 1.2: time against edges per thread, a curve per |V|")
def fig1_2(view):
    view, found = _per_thread(view)
    if not found:
        return "no edge-parallel kernel (edgebf_coo, edgebf_dense) swept edges per thread on a complete graph"
    fig, axes = panels(len(found), width=6.0, height=4.2)
    for ax, (solver, rows) in zip(axes, found.items()):
        sizes = sorted(rows["n"].unique())
        suffix = rows["_label"].str.replace(r"^[^(]*", "", regex=True).str.strip()
        rows = rows.assign(_colour=rows["n"].map({n: i for i, n in enumerate(sizes)}),
                           _label=[f"|V| = {int(n):,}" + (f" {s}" if s else "") for n, s in zip(rows["n"], suffix)])
        curves(ax, rows, "_ept")
        log_axis(ax, "x", rows["_ept"].unique())
        ax.set_yscale("log")
        ax.set_xlabel("edges per thread (log)")
        ax.set_ylabel("time (ms, log)")
        ax.set_title(KERNELS[solver], fontsize=9)
    legend(fig, axes, not_validated=not all(r["_ok"].all() for r in found.values()))
    return finish(fig, view, next(iter(found.values())), "004", "Figure 1.2: time against edges per thread", [
        "Complete graphs; the text: time falls from 1 to 4 edges per thread, then rises to 64.", UNITS])


@paper_figure("004", "coalescing", "Section IV.B: coalesced vs non-coalesced matrix reads")
def coalescing(view):
    view = _complete(view)
    rows = view.select([series("coalesced", "edgebf_dense", layout="coalesced", transfer="pageable"),
                        series("non-coalesced", "edgebf_dense", layout="strided", transfer="pageable")], by=("n",))
    if set(rows["_series"]) != {"coalesced", "non-coalesced"}:
        return "no run of edgebf_dense with layout coalesced and strided on complete graphs"
    why = enough(rows, "n", "edgebf_dense, layout coalesced and strided")
    return why or against(view, rows, "n", "number of vertices |V| (complete graph, log)", "004",
                          "Section IV.B: coalesced vs non-coalesced access", [
                              "Non-coalesced: layout=strided (a warp's reads a matrix row apart).", UNITS],
                          unit="ms")


@paper_figure("004", "fig2", "Figure 2: incoming vs outgoing vs the basic parallel version")
def fig2(view):
    rows = view.select(PUSH_PULL)
    if not rows["solver"].isin(["vertexbf_pull", "vertexbf_push"]).any():
        return "no run of vertexbf_pull or vertexbf_push"
    rows = millis(rows)
    graphs = rows.drop_duplicates("graph").sort_values(["m", "graph"])
    xs = {g: float(i) for i, g in enumerate(graphs["graph"])}
    spread = {s.name: (i - (len(PUSH_PULL) - 1) / 2) * 0.08 for i, s in enumerate(PUSH_PULL)}
    rows = rows.assign(_x=rows["graph"].map(xs) + rows["_series"].map(spread))
    fig, (ax,) = panels(1, width=max(7.5, 2.0 * len(xs)), height=4.6)
    curves(ax, rows, "_x", join=False)
    ax.set_xticks(list(xs.values()), [f"{g.graph}\n|V| = {int(g.n):,}\n|E| = {int(g.m):,}"
                                      for g in graphs.itertuples()], fontsize=7)
    ax.set_yscale("log")
    ax.set_xlabel("graph (by |E|)")
    ax.set_ylabel("time (ms, log)")
    legend(fig, [ax], not_validated=not rows["_ok"].all())
    return finish(fig, view, rows, "004", "Figure 2: incoming vs outgoing vs the basic parallel version", [
        "Thread per vertex: incoming = vertexbf_pull, outgoing = vertexbf_push (CSR lists where the paper loops "
        "over a matrix row or column); the thread-per-matrix-entry kernel runs on complete graphs only.", UNITS])


def _transfer_metric(view, rows, metric: str, scale: float = 1.0):
    """``rows`` with ``_y``, ``_lo``, ``_hi``: the median and quartiles of ``metric`` over each configuration's
    samples (:func:`gpusp.report.metrics.metric_values`, which the findings read too)."""
    stats = [metric_median(view.samples_of(row), metric) for _, row in rows.iterrows()]
    y, lo, hi = (np.array([s[i] for s in stats], float) * scale for i in range(3))
    return rows.assign(_y=y, _lo=lo, _hi=hi)


@paper_figure("004", "transfer", "Section IV.A: data transfer, pageable vs pinned memory and streams")
def transfer(view):
    view = _complete(view)
    rows = view.select(TRANSFER, by=("n",))
    paired = rows[rows["_series"].isin(["pageable", "pinned"]) & rows["_solid"]]
    if paired["_series"].nunique() < 2 or paired["n"].nunique() < 2:
        return "no run of edgebf_dense with transfer pageable and pinned on two or more complete graphs"
    if view.samples.empty or not any(len(view.samples_of(row)) for _, row in paired.iterrows()):
        return "no samples of edgebf_dense's transfer runs (the figure's values come from the samples)"
    panels_data = ((_transfer_metric(view, paired, "h2d_ms"), "matrix upload time (ms, log)", True),
                   (_transfer_metric(view, paired, "h2d_fraction", 100.0), "transfer share of the run (%)", False),
                   (_transfer_metric(view, rows, "h2d_plus_time"), "upload + run (ms, log)", True))
    fig, axes = panels(3, width=4.6, height=4.0)
    sizes = sorted({*rows["n"].astype(float), PAPER_LARGEST})
    for ax, (part, label, log) in zip(axes, panels_data):
        part = part.dropna(subset=["_y"])
        curves(ax, part, "n")
        not_run(ax, missing_points(part, "n", sizes))
        log_axis(ax, "x", sizes)
        if log:
            ax.set_yscale("log")
        ax.set_xlabel("matrix side n (n x n, complete graph, log)")
        ax.set_ylabel(label)
    axes[1].axhline(50.0, color="0.4", lw=1.0, ls="--", label="paper: \"almost reaches 50%\" (text)")
    axes[0].set_title("left figure: pinned vs pageable", fontsize=9)
    axes[1].set_title("right figure: transfer share", fontsize=9)
    axes[2].set_title("the streamed upload (text)", fontsize=9)
    legend(fig, axes, not_validated=not rows["_ok"].all())
    return finish(fig, view, rows, "004", "Section IV.A: data transfer", [TRANSFER_NOTE, STREAMS_NOTE, UNITS])


@paper_figure("004", "minplus", "Section V.C: APSP by min-plus matrix squaring vs the parallel Floyd-Warshall")
def minplus(view):
    view = view.where(view.rows["_generator"] == "random")
    rows = view.select(SQUARING, by=("n",))
    why = enough(rows, "n", "minplus_naive, minplus_tiled, floydwarshall_supernaive")
    return why or against(view, rows, "n", "number of vertices |V| (random graph, log)", "004",
                          "Section V.C: matrix squaring vs Floyd-Warshall", [UNITS], unit="ms", wanted=SQUARING)
