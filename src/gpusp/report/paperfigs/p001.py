"""Paper 001 (Okuyama, Ino, Hagihara): Figures 10-14 and Table 1 drawn as a figure. Times in seconds against |V|
(Fig. 10), the speed-up over the CPU Dijkstra method (Fig. 11), against |E| at |V| = 4K (Fig. 12) and against
w_max at |V| = 4K, |E| = 16K (Fig. 13), the path-recording overhead in per cent (Fig. 14, the text's 3.0-7.7 % as a
band) and the four topologies of Table 1 with its printed values (config/experiments/paper001-*.yaml map the
paper's methods to our solvers)."""

from __future__ import annotations

from importlib import resources

import numpy as np
import pandas as pd

from .core import (
    against,
    curves,
    enough,
    finish,
    has_paper_series,
    legend,
    log_axis,
    not_run,
    panels,
    paper_figure,
    published,
    seconds,
    series,
    stars,
    unmatched,
)

HARISH, UNSHARED, PROPOSED = "SSSP-based (Harish and Narayanan)", "Proposed w/o shared memory", "Proposed"
METHODS = [series(HARISH, "nsssp_global", sources_per_launch=1, groups_per_block=32),
           series(UNSHARED, "nsssp_global", sources_per_launch=32, groups_per_block=4),
           series(PROPOSED, "nsssp_shared", sources_per_launch=32, groups_per_block=4),
           series("Dijkstra SSSP-based (CPU)", "scipy_apsp"),
           series("Dijkstra, binary heap on 4 threads (dijkstra_cputhreads)", "dijkstra_cputhreads", paper=False)]
# the SSSP side of the Figure 10 sweep, where APSP stops at max_apsp_n: |V| times one source's median
ESTIMATES = [series("SSSP-based: |V| x one SSSP (harish_scattercheck, estimate)", "harish_scattercheck", paper=False,
                    style=":"),
             series("Dijkstra: |V| x one SSSP (scipy_dijkstra, estimate)", "scipy_dijkstra", paper=False, style=":")]
WHAT = "nsssp_global / nsssp_shared with the paper's N and B, scipy_apsp"
CPU = ("scipy_apsp", "dijkstra_cputhreads")
CPU_NOTE = ("Dijkstra SSSP-based: SciPy's Dijkstra from every source with its `workers` processes (the paper: a "
            "binary heap, 4 OpenMP threads on the Xeon); where it ran, the paper's method itself beside it "
            "(dijkstra_cputhreads: a compiled binary heap from every source on 4 threads).")
COST_NOTE = ("The paper times the cost computation only (paths=false); a label names paths=true where our kernels "
             "also recorded the parents.")
TOPOLOGY = {"random-4677": "Random", "powerlaw-4677": "Power law", "ring-4677": "Ring", "complete-4677": "Complete"}
EARLIER = {"powerlaw-4096": "powerlaw-4677"}  # the R-MAT at 2^12 that stood in before the paper's size was possible
TEXT_VALUES = "paper001-published-curves.csv"  # gpusp/data: what the text states of Figs. 10-14 (no points)


def text_values(figure: str) -> pd.DataFrame:
    """The values the paper's text states of ``figure`` (its plotted points are not printed): quantity, x, low,
    high, unit, printed, source."""
    with resources.files("gpusp").joinpath(f"data/{TEXT_VALUES}").open(encoding="utf-8") as fh:
        table = pd.read_csv(fh)
    return table[table["figure"] == figure].reset_index(drop=True)


def _ratios_beside_ours(rows: pd.DataFrame) -> list[str]:
    """Fig. 10's ratios as the text states them ("A over B": B's time over A's), each beside ours on the same
    graphs (the paper's setting, both methods measured)."""
    solid = rows[rows["_solid"]].sort_values("_share", ascending=False).drop_duplicates(["_series", "n"])
    times = {name: part.set_index("n")["median_ms"].astype(float) for name, part in solid.groupby("_series")}
    out = []
    for fact in text_values("fig10").itertuples():
        fast, slow = fact.quantity.split(" over ")
        ours = (times[slow] / times[fast]).dropna() if fast in times and slow in times else pd.Series(dtype=float)
        if fact.x.startswith("|V| = "):
            ours = ours[ours.index == 1024] if fact.x.endswith("1K") else ours.iloc[0:0]
        low, high = (f"{v:.3g}" for v in (ours.min(), ours.max()))
        text = "not run here" if ours.empty else low if low == high else f"{low}-{high}"
        high = "" if fact.high == fact.low else ("+" if np.isinf(fact.high) else f"-{fact.high:g}")
        out.append(f"{fact.quantity}, {fact.x}: paper {fact.low:g}{high}{fact.unit}, ours {text}{fact.unit}")
    return out


def _random(view, square=True):
    """Random graphs, with w_max = |V| where ``square`` (Figs. 10, 12, 14); the generator's w_max from its family."""
    rows = view.rows
    keep = rows["_generator"] == "random"
    if square:
        keep &= rows["_wmax"].isna() | (rows["_wmax"] == rows["n"])
    return view.where(keep)


@paper_figure("001", "fig10", "Figure 10: APSP time against |V| (random graphs, |E| = 4|V|)")
def fig10(view):
    view = _random(view)
    view = view.where(view.rows["m"] == 4 * view.rows["n"])
    rows = view.select(METHODS + ESTIMATES, by=("n",))
    why = enough(rows, "n", WHAT)
    if why:
        return why
    rows = seconds(rows)
    estimate = rows["solver"].isin([s.solver for s in ESTIMATES])
    for column in ("_y", "_lo", "_hi"):
        rows.loc[estimate, column] = rows.loc[estimate, column] * rows.loc[estimate, "n"]
    return against(view, rows, "n", "number of vertices |V| (log)", "001", "Figure 10: time against |V|", [
        "Random graphs, |E| = 4|V|, w_max = |V|; our APSP stops at max_apsp_n (the n x n result is returned), the "
        "dotted estimates go on from the SSSP side or from sampled sources.", COST_NOTE, CPU_NOTE,
        f"The text states only ratios of these curves ({TEXT_VALUES}): " + "; ".join(_ratios_beside_ours(rows)) + "."],
        wanted=METHODS)


@paper_figure("001", "fig11", "Figure 11: speed-up over the CPU Dijkstra method")
def fig11(view):
    view = _random(view)
    view = view.where(view.rows["m"] == 4 * view.rows["n"])
    rows = view.select(METHODS, by=("n",))
    base = rows[rows["solver"] == "scipy_apsp"].groupby("n")["median_ms"].min()
    rows = rows[~rows["solver"].isin(CPU) & rows["n"].isin(base.index)]
    why = enough(rows, "n", "a GPU method and scipy_apsp on the same random graphs")
    if why:
        return why
    rows = rows.assign(_y=rows["n"].map(base) / rows["median_ms"].astype(float))
    rows = rows.assign(_lo=rows["_y"], _hi=rows["_y"])
    fig, (ax,) = panels(1, width=9.5, height=4.6)
    curves(ax, rows, "n")
    ax.axhline(1.0, color="k", lw=0.8, ls="--")
    log_axis(ax, "x", rows["n"].unique())
    ax.set_yscale("log")
    ax.set_xlabel("number of vertices |V| (log)")
    ax.set_ylabel("speed-up over the Dijkstra method (CPU time / time, log)")
    legend(fig, [ax], not_validated=not rows["_ok"].all())
    return finish(fig, view, rows, "001", "Figure 11: speed-up over the CPU Dijkstra method", [
        "Speed-up: scipy_apsp's median over the method's, on the same graph and machine (no speed-up where "
        "scipy_apsp did not run).", CPU_NOTE])


def _fixed(rows, vary: str, keys: list, prefer: tuple):
    """The rows of the fixed setting (``keys``) under which ``vary`` took the most values (``prefer`` wins ties,
    the paper's setting), or None."""
    paper = rows[rows["_paper"]]
    counts = paper.groupby(keys)[vary].nunique()
    counts = counts[counts >= 2]
    if counts.empty:
        return None
    pick = prefer if prefer in counts.index else counts.idxmax()
    pick = pick if isinstance(pick, tuple) else (pick,)
    mask = np.logical_and.reduce([rows[k] == v for k, v in zip(keys, pick)])
    return rows[mask], pick


@paper_figure("001", "fig12", "Figure 12: APSP time against |E| at |V| = 4K")
def fig12(view):
    view = _random(view)
    found = _fixed(view.select(METHODS, by=("n", "m")), "m", ["n"], 4096)
    if found is None:
        return f"the paper's variants ({WHAT}) ran on no random graphs of one |V| at two or more |E|"
    rows, (n,) = found
    return against(view, rows, "m", f"number of edges |E| (log), |V| = {int(n):,}", "001",
                   "Figure 12: time against |E|", [f"Random graphs, |V| = {int(n):,}, w_max = |V|.", COST_NOTE,
                                                  CPU_NOTE], wanted=METHODS)


@paper_figure("001", "fig13", "Figure 13: APSP time against w_max at |V| = 4K, |E| = 16K")
def fig13(view):
    view = _random(view, square=False)
    view = view.where(view.rows["_wmax"].notna())
    found = _fixed(view.select(METHODS, by=("n", "m", "_wmax")), "_wmax", ["n", "m"], (4096, 16384))
    if found is None:
        return f"the paper's variants ({WHAT}) ran on no random graphs of one |V| and |E| at two or more w_max"
    rows, (n, m) = found
    return against(view, rows, "_wmax", f"maximum weight w_max (log), |V| = {int(n):,}, |E| = {int(m):,}", "001",
                   "Figure 13: time against w_max", ["Random graphs, weights 1..w_max.", COST_NOTE, CPU_NOTE],
                   wanted=METHODS)


@paper_figure("001", "fig14", "Figure 14: overhead of path recording against |V|")
def fig14(view):
    view = _random(view)
    kernels = [(PROPOSED, "nsssp_shared"), (UNSHARED, "nsssp_global")]
    wanted = [series(name, solver, sources_per_launch=32, groups_per_block=4, paths=paths)
              for name, solver in kernels for paths in ("true", "false")]
    rows = view.select(wanted, by=("n",), fixed=("paths",))
    rows = rows.assign(_paths=[p["paths"] for p in rows["_p"]], _colour=rows["_colour"] // 2)
    keys = ["_series", "n", "_label"]
    recorded = rows[rows["_paths"] == "true"].set_index(keys)
    cost = rows[rows["_paths"] == "false"].set_index(keys)
    both = recorded.index.intersection(cost.index)
    if not len(both):
        return "no run of nsssp_shared / nsssp_global (N = 32, B = 4) with paths true and false on one graph"
    over = recorded.loc[both].assign(
        _y=(recorded.loc[both, "median_ms"] / cost.loc[both, "median_ms"] - 1.0) * 100.0,
        _ok=recorded.loc[both, "_ok"] & cost.loc[both, "_ok"]).reset_index()
    fig, (ax,) = panels(1, width=9.5, height=4.6)
    (band,) = text_values("fig14").itertuples()
    where = band.source.split(":")[0]
    ax.axhspan(band.low, band.high, color="0.85", label=f"paper: {band.low:.1f}-{band.high:.1f} % ({where})")
    curves(ax, over.assign(_lo=over["_y"], _hi=over["_y"]), "n")
    log_axis(ax, "x", over["n"].unique())
    ax.set_xlabel("number of vertices |V| (log)")
    ax.set_ylabel("overhead of path recording (%)")
    legend(fig, [ax], not_validated=not over["_ok"].all())
    return finish(fig, view, over, "001", "Figure 14: overhead of path recording", [
        "Overhead: the median with the recording kernel (paths=true) over the median of the cost computation alone "
        "(paths=false), minus one, on the same graph and machine.",
        "The band is the range the paper's text prints; the figure's own points are not printed."])


@paper_figure("001", "table1", "Table 1 drawn: APSP time on four topologies")
def table1(view):
    view = view.where(view.rows["graph"].isin(list(TOPOLOGY) + list(EARLIER)))
    rows = view.select(METHODS)
    if not has_paper_series(rows):
        return f"no run of the paper's variants ({WHAT}) on Table 1's graphs ({', '.join(TOPOLOGY)})"
    rows = seconds(rows)
    xs = {g: float(i) for i, g in enumerate(TOPOLOGY)}
    xs.update({old: xs[new] for old, new in EARLIER.items()})
    spread = {s.name: (i - (len(METHODS) - 1) / 2) * 0.12 for i, s in enumerate(METHODS)}
    rows = rows.assign(_x=rows["graph"].map(xs) + rows["_series"].map(spread))
    fig, (ax,) = panels(1, width=8.0, height=4.6)
    curves(ax, rows, "_x", join=False)
    printed = published("001", "Table 1", METHODS, "s")
    stars(ax, printed, xs, spread)
    not_run(ax, unmatched(printed, rows.assign(graph=rows["graph"].replace(EARLIER)), xs, spread))
    run = {EARLIER.get(g, g) for g in rows["graph"]}
    # "(not run here)" on a line of its own: on the graph's line it runs into the neighbouring column's name
    ax.set_xticks([xs[g] for g in TOPOLOGY], [f"{t}\n{g}" + ("" if g in run else "\n(not run here)")
                                              for g, t in TOPOLOGY.items()])
    ax.set_yscale("log")
    ax.set_xlabel("topology (our graph)")
    ax.set_ylabel("time (s, log)")
    legend(fig, [ax], stars_shown=len(printed) > 0, not_validated=not rows["_ok"].all())
    return finish(fig, view, rows, "001", "Table 1 as a figure: four topologies (stars: the table's values)", [
        "Paper: |V| = 4677 for every topology (its power-law graph from GTgraph); ours: R-MAT folded to |V| = 4677 "
        "(before that generator, R-MAT at |V| = 4096: drawn at the same place).",
        COST_NOTE, CPU_NOTE])
