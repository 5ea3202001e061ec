"""Paper 000 (Bodra): Figure 5 (Bellman-Ford on the DIMACS road graphs, the values of Table 1) and Figure 6
(Floyd-Warshall on SNAP's Gnutella graphs, the values of Table 3): time in seconds per dataset, a curve per
variant, the tables' printed values as stars (config/experiments/paper000-table1.yaml and -table3.yaml map the
paper's variants to our solvers)."""

from __future__ import annotations

import pandas as pd

from .core import (
    by_window,
    curves,
    finish,
    has_paper_series,
    legend,
    not_run,
    panels,
    paper_figure,
    published,
    series,
    stars,
    unmatched,
)

ROAD = ["USA-road-d.NY", "USA-road-d.BAY", "USA-road-d.COL", "USA-road-d.FLA", "USA-road-d.NE", "USA-road-d.E"]
GNUTELLA = ["p2p-Gnutella04", "p2p-Gnutella25", "p2p-Gnutella30"]
FIG5 = [series("Naive", "bellmanford_naive", block=1024, rounds="fixed"),
        series("Stride", "bellmanford_stride", block=1024, rounds="fixed"),
        series("Stride with Flag", "bellmanford_flag", block=1024, rounds="fixed"),
        series("CPU", "bellmanford_cpu", rounds="fixed"),
        series("Naive, early exit (ours)", "bellmanford_naive", paper=False, rounds="early"),
        series("Stride, early exit (ours)", "bellmanford_stride", paper=False, rounds="early"),
        series("Stride with Flag, early exit (ours)", "bellmanford_flag", paper=False, rounds="early")]
FIG6 = [series("Naive", "floydwarshall_naive", block=1024),
        series("Super Naive", "floydwarshall_supernaive", tile=32),
        series("Super Naive Shared", "floydwarshall_supernaiveshared", block=1024),
        series("Tiled", "floydwarshall_tiledglobal", tile=32),
        series("Tiled with Shared Memory", "floydwarshall_tiledshared", tile=32),
        series("CPU", "floydwarshall_cpu"),
        series("SciPy APSP (ours)", "scipy_apsp", paper=False)]

# cells the paper ran whose printed value is no star: in minutes, a bound (">1hr") or without a unit
FIG5_UNPRINTED = [("USA-road-d.NY", "CPU")]
FIG6_UNPRINTED = [("p2p-Gnutella04", "CPU"), ("p2p-Gnutella25", "Naive"), ("p2p-Gnutella30", "Tiled")]


def _by_dataset(view, paper_graphs, marker, wanted, source, title, notes, unprinted=()):
    """Time (s, log) per dataset, the paper's datasets in its table's order and ours after them by size; a printed
    value without our point is marked not run, as are the cells of ``unprinted`` ((graph, series): the paper ran
    them, its table prints no drawable value)."""
    view = view.where(view.rows["graph"].astype(str).str.contains(marker, regex=False))
    rows = view.select(wanted)
    if not has_paper_series(rows):
        return f"no run of the paper's variants ({', '.join(s.solver for s in wanted if s.paper)}) on a {marker} graph"
    rows, window = by_window(rows)
    ours = rows.drop_duplicates("graph").sort_values("n")["graph"].tolist()
    order = paper_graphs + [g for g in ours if g not in paper_graphs]
    xs = {g: float(i) for i, g in enumerate(order)}
    spread = {s.name: (i - (len(wanted) - 1) / 2) * 0.07 for i, s in enumerate(wanted)}
    rows = rows.assign(_x=rows["graph"].map(xs) + rows["_series"].map(spread))
    fig, (ax,) = panels(1, width=9.0, height=4.6)
    curves(ax, rows, "_x")
    printed = published("000", source, wanted, "s")
    stars(ax, printed, xs, spread)
    colour = {s.name: i for i, s in enumerate(wanted)}
    ran = pd.concat([printed, pd.DataFrame([{"graph": g, "_series": name, "_colour": colour[name]}
                                            for g, name in unprinted])], ignore_index=True)
    not_run(ax, unmatched(ran, rows, xs, spread))
    sizes = rows.drop_duplicates("graph").set_index("graph")["n"]
    ax.set_xticks(list(xs.values()), [g.split(".")[-1].removeprefix("p2p-") + (
        f"\n|V| = {int(sizes[g]):,}" if g in sizes.index else "\n(not run here)") for g in order])
    ax.set_yscale("log")
    ax.set_xlabel("dataset")
    ax.set_ylabel("time (s, log)")
    legend(fig, [ax], stars_shown=len(printed) > 0, not_validated=not rows["_ok"].all())
    return finish(fig, view, rows, "000", title, [window, *notes])


@paper_figure("000", "fig5", "Figure 5: Bellman-Ford on the US road networks (Table 1)")
def fig5(view):
    return _by_dataset(view, ROAD, "USA-road", FIG5, "Table 1", "Figure 5: Bellman-Ford (Table 1's values)", [
        "The paper's variants: block 1024, |V|-1 rounds (rounds=fixed), the strided ones on a grid of half the "
        "blocks; the early-exit curves are ours (not in the paper).",
        "The CPU column (22 min on NY) is printed in minutes and is not among the stars."], FIG5_UNPRINTED)


@paper_figure("000", "fig6", "Figure 6: Floyd-Warshall on SNAP's Gnutella graphs (Table 3)")
def fig6(view):
    return _by_dataset(view, GNUTELLA, "Gnutella", FIG6, "Table 3", "Figure 6: Floyd-Warshall (Table 3's values)", [
        "Stars: Table 3's values; the CPU cell (>1hr) and two cells printed without a unit (Gnutella25 Naive, "
        "Gnutella30 Tiled) are not drawn."], FIG6_UNPRINTED)
