"""The papers' figures redrawn from our tables (gpusp.report.paperfigs), from small made-up samples in the layout
`gpusp aggregate` writes (and one real H200 table of benchmarks/papers): each figure is drawn exactly when the run
measured the paper's variants it plots, with the paper's axes and units, our curves under the paper's names, the
paper's printed values beside ours, our machine and SIMULATED where it applies; nothing for the default config."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from gpusp import cli
from gpusp.report import paperfigs
from gpusp.report.aggregate import summary_table
from gpusp.report.paperfigs import p001
from gpusp.report.paperfigs.core import NOT_RUN, PALETTE, PAPER_MARKER
from gpusp.solvers import registry

H200, XEON = "NVIDIA H200", "Intel Xeon Platinum 8480+"
BENCH = Path(__file__).parents[2] / "benchmarks" / "papers"


def runs(graph, solver, times, params="default", n=100, m=400, family=None, mode=None, validated=True, h2d=0.01,
         gpu=H200):
    """The samples of one configuration in samples.csv's columns, one row per time."""
    spec = registry.get(solver)
    mode = mode or ("gpu" if spec.device == "gpu" else "cpu")
    on_gpu = spec.device == "gpu"
    return [dict(graph=graph, graph_name=graph, graph_label=graph, n=n, m=m, graph_family=family,
                 graph_checksum=f"sum-{graph}", solver=solver, family=spec.family, variant=spec.variant,
                 problem=spec.problem, device=spec.device, paper=spec.paper, params=params, status="ok", reason=None,
                 mode=mode, gpu=gpu if on_gpu else "-", cpu=XEON, cpu_cores=16,
                 hardware=gpu if on_gpu else XEON, code_hash="c0de", git_commit="abc", created="now",
                 record=f"{graph}/{solver}/{params}.json", validated=validated, source=i % 2, sample=i,
                 time_ms=float(t), clock="cuda-event" if on_gpu else "wall", compile_s=0.1, h2d_ms=h2d, d2h_ms=0.01,
                 iterations=1.0, relaxations=None) for i, t in enumerate(times)]


def tables(*groups):
    samples = pd.DataFrame([row for group in groups for row in group])
    return samples, summary_table(samples)


def draw(paper, name, samples, summary):
    return paperfigs.figure(paper, name, samples, summary)


def texts(fig) -> list[str]:
    return [t.get_text() for t in fig.findobj(matplotlib.text.Text) if t.get_text()]


def stars(fig) -> list[float]:
    """The y of every printed value of the paper drawn (a star marker)."""
    return sorted(float(y) for ax in fig.axes for line in ax.get_lines() if line.get_marker() == PAPER_MARKER
                  for y in line.get_ydata())


def points(ax, colour_of=None) -> list[tuple[float, float]]:
    """The (x, y) of every single-point marker (our measured points) of a panel."""
    return sorted((float(line.get_xdata()[0]), float(line.get_ydata()[0])) for line in ax.get_lines()
                  if len(line.get_xdata()) == 1 and line.get_marker() in ("o", "x") and line.get_linestyle() == "None")


def not_run_marks(ax) -> list[tuple[float, tuple]]:
    """(x, colour) of every "not run here" mark of a panel."""
    return sorted((float(line.get_xdata()[0]), tuple(line.get_color())) for line in ax.get_lines()
                  if line.get_gid() == NOT_RUN)


def colour_of(ax, label) -> tuple:
    return next(tuple(line.get_color()) for line in ax.get_lines() if line.get_label() == label)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def default_config_tables():
    """What config/config.yaml measures: two tiny graphs, none of the papers' experiment settings."""
    groups = []
    for graph, n, m, family in (("tiny", 6, 9, None), ("random24", 24, 72, "random wmax=20")):
        groups += [runs(graph, "scipy_dijkstra", [1.0, 1.1], n=n, m=m, family=family),
                   runs(graph, "dijkstra_cpu", [0.5, 0.6], n=n, m=m, family=family),
                   runs(graph, "harish_scattercheck", [2.0, 2.1], "block-32", n=n, m=m, family=family),
                   runs(graph, "scipy_apsp", [3.0, 3.1], n=n, m=m, family=family)]
        groups += [runs(graph, "bellmanford_naive", [2.0, 2.2], f"block-32+rounds-{r}", n=n, m=m, family=family)
                   for r in ("early", "fixed")]
        groups += [runs(graph, "edgebf_coo", [2.0, 2.2], f"block-32+edges_per_thread-{e}", n=n, m=m, family=family)
                    for e in (1, 4)]
    groups += [runs("tiny", "blockedfw_v21", [1.0, 1.2], f"block_size-{b}", n=6, m=9) for b in (4, 8)]
    return tables(*groups)


def test_the_default_config_draws_no_paper_figure(tmp_path):
    samples, summary = default_config_tables()
    reasons = {}
    assert paperfigs.make_figures(samples, summary, tmp_path, reasons=reasons) == {}
    assert sorted(reasons) == sorted(f"{p}/{n}" for p, n in paperfigs.FIGURES)
    assert not list(tmp_path.rglob("*.png"))


# --- paper 000 ---------------------------------------------------------------------------------------------------
ROAD = {"USA-road-d.NY": (264346, 733846), "USA-road-d.BAY": (321270, 800172)}


def fig5_tables(extra=()):
    groups = []
    for graph, (n, m) in ROAD.items():
        groups += [runs(graph, "bellmanford_naive", [27000.0], "block-1024+rounds-fixed", n=n, m=m),
                   runs(graph, "bellmanford_stride", [19000.0], "block-1024+grid-129+rounds-fixed", n=n, m=m),
                   runs(graph, "bellmanford_flag", [23000.0], "block-1024+grid-129+rounds-fixed", n=n, m=m),
                   runs(graph, "bellmanford_flag", [160.0, 170.0, 180.0], "rounds-early", n=n, m=m)]
    return tables(*groups, *extra)


def test_paper000_fig5_has_table1s_values_beside_ours_in_seconds():
    samples, summary = fig5_tables()
    fig = draw("000", "fig5", samples, summary)
    ax = fig.axes[0]
    assert ax.get_ylabel() == "time (s, log)" and ax.get_yscale() == "log" and ax.get_xlabel() == "dataset"
    # every value of Table 1 (three variants on six road graphs), in seconds, also where we did not run
    assert stars(fig) == sorted([8.58384, 8.77939, 3.91371, 11.7708, 12.3157, 5.12986, 19.6589, 21.1299, 7.40538,
                                 102.449, 105.376, 45.2268, 216.047, 214.760, 83.5226, 1137.63, 1135.22, 409.138])
    shown = texts(fig)
    assert {"Naive", "Stride", "Stride with Flag", "Stride with Flag, early exit (ours)"} <= set(shown)
    assert any("(not run here)" in t for t in shown) and any("|V| = 264,346" in t for t in shown)
    ys = [y for _, y in points(ax)]
    assert 27.0 in ys and 0.17 in [round(y, 3) for y in ys]  # 27,000 ms -> 27 s; the early-exit median 170 ms
    assert any(f"GPU {H200}, host CPU {XEON}" in t for t in shown)
    assert not any("SIMULATED" in t for t in shown)


def test_paper000_uses_the_end_to_end_window_when_the_summary_has_it():
    samples, summary = fig5_tables()
    summary["end_to_end_median_ms"] = summary["median_ms"] + 1000.0
    fig = draw("000", "fig5", samples, summary)
    assert 28.0 in [y for _, y in points(fig.axes[0])]  # 27 s of kernels + 1 s of allocation and copies
    assert any("end to end" in t for t in texts(fig))
    plain = draw("000", "fig5", *fig5_tables())
    assert not any("Our times are end to end" in t for t in texts(plain))


def test_paper000_fig6_only_on_gnutella_with_the_papers_variants():
    samples, summary = tables(runs("p2p-Gnutella04", "floydwarshall_tiledshared", [900.0], "tile-32", n=10876,
                                   m=39994),
                              runs("p2p-Gnutella04", "floydwarshall_naive", [9000.0], "block-1024", n=10876, m=39994))
    fig = draw("000", "fig6", samples, summary)
    assert stars(fig) == sorted([30.1521, 9.73591, 10.4189, 4.8403, 2.37704, 72.3713, 84.4068, 36.2867, 20.4614,
                                 703.358, 314.191, 368.685, 82.3174])
    assert "Tiled with Shared Memory" in texts(fig)
    # the same solvers on another graph, or at other settings, are not the paper's figure
    other, other_summary = tables(runs("rand", "floydwarshall_tiledshared", [1.0], "tile-32"))
    assert "no run" in draw("000", "fig6", other, other_summary)
    assert "no run" in draw("000", "fig6", *tables(runs("p2p-Gnutella04", "floydwarshall_naive", [1.0], "block-256")))


def test_paper000_fig6_draws_one_time_window_per_line_and_marks_the_cells_not_run():
    g04, g25 = {"n": 10876, "m": 39994}, {"n": 22687, "m": 54705}
    samples, summary = tables(runs("p2p-Gnutella04", "floydwarshall_tiledshared", [1900.0], "tile-32", **g04),
                              runs("p2p-Gnutella25", "floydwarshall_tiledshared", [7600.0], "tile-32", **g25),
                              runs("p2p-Gnutella04", "floydwarshall_naive", [30000.0], "block-1024", **g04))
    summary["end_to_end_median_ms"] = np.where(summary["graph"] == "p2p-Gnutella04", summary["median_ms"] / 2, np.nan)
    ax = draw("000", "fig6", samples, summary).axes[0]
    lines = {line.get_label(): sorted(round(float(y), 9) for y in line.get_ydata()) for line in ax.get_lines()
             if not line.get_label().startswith("_")}
    # the end-to-end window where recorded, the solve alone everywhere: never one line through both
    assert lines["Tiled with Shared Memory, end to end"] == [0.95]
    assert lines["Tiled with Shared Memory, solve only"] == [1.9, 7.6]
    assert lines["Naive, end to end"] == [15.0] and lines["Naive, solve only"] == [30.0]
    marks = [colour for _, colour in not_run_marks(ax)]
    naive, tiled_shared = colour_of(ax, "Naive, end to end"), colour_of(ax, "Tiled with Shared Memory, solve only")
    assert marks.count(naive) == 2  # Gnutella25 (printed without a unit) and Gnutella30
    assert marks.count(tiled_shared) == 1  # Gnutella30
    assert len(marks) == 13 + 3 - 3  # Table 3: 13 values and 3 cells drawn as no star, less the 3 cells we ran


def test_paper000_without_an_end_to_end_column_keeps_one_line_per_variant():
    ax = draw("000", "fig5", *fig5_tables()).axes[0]
    labels = {line.get_label() for line in ax.get_lines() if not line.get_label().startswith("_")}
    assert "Naive" in labels and not any("end to end" in label or "solve only" in label for label in labels)


# --- paper 001 ---------------------------------------------------------------------------------------------------
def nsssp(graph, n, k=4, wmax=None, time=1000.0, extra="", solvers=("global1", "global32", "shared32", "scipy")):
    wmax = wmax or n
    family = f"random wmax={wmax}"
    params = {"global1": ("nsssp_global", "groups_per_block-32+sources_per_launch-1"),
              "global32": ("nsssp_global", "groups_per_block-4+sources_per_launch-32"),
              "shared32": ("nsssp_shared", "groups_per_block-4+sources_per_launch-32"),
              "scipy": ("scipy_apsp", "default")}
    return [runs(graph, params[s][0], [time * (i + 1)], params[s][1] + (extra if s != "scipy" else ""), n=n,
                 m=k * n, family=family) for i, s in enumerate(solvers)]


def test_paper001_fig10_and_fig11_need_two_sizes_and_keep_the_papers_axes():
    one = tables(*nsssp("random-n1024-k4-w1024", 1024))
    assert "fewer than two" in draw("001", "fig10", *one)
    samples, summary = tables(*nsssp("random-n1024-k4-w1024", 1024), *nsssp("random-n2048-k4-w2048", 2048),
                              runs("random-n2048-k4-w2048", "harish_scattercheck", [2.0], n=2048, m=8192,
                                   family="random wmax=2048"))
    fig = draw("001", "fig10", samples, summary)
    ax = fig.axes[0]
    assert ax.get_xlabel() == "number of vertices |V| (log)" and ax.get_ylabel() == "time (s, log)"
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1K", "2K"]
    shown = texts(fig)
    assert {"Proposed (paths=true)", "Proposed w/o shared memory (paths=true)", "Dijkstra SSSP-based (CPU)"} <= set(
        shown)
    assert (2048.0, 2.0 * 2048 / 1000) in points(ax)  # the estimate: |V| x one source's 2 ms, in seconds
    # the text's ratios of these curves beside ours: Harish's 1000 ms over Proposed's 3000 ms at 1K
    caption = next(t for t in shown if "The text states only ratios" in t)
    assert "Proposed over SSSP-based (Harish and Narayanan), |V| = 1K: paper 13x, ours 0.333x" in caption
    assert "Proposed over Proposed w/o shared memory, every |V| of Fig. 10: paper 1.2-1.4x, ours 0.667x" in caption
    speedup = draw("001", "fig11", samples, summary)
    # scipy_apsp (4000 ms at 1K) over Proposed (3000 ms): 4/3
    assert (1024.0, pytest.approx(4 / 3)) in points(speedup.axes[0])
    assert "speed-up" in speedup.axes[0].get_ylabel()


def test_paper001_fig12_fig13_pick_one_fixed_setting():
    samples, summary = tables(*nsssp("random-n4096-k2-w4096", 4096, k=2), *nsssp("random-n4096-k8-w4096", 4096, k=8),
                              *nsssp("random-n4096-k4-w16", 4096, wmax=16),
                              *nsssp("random-n4096-k4-w64", 4096, wmax=64))
    fig12 = draw("001", "fig12", samples, summary)
    assert fig12.axes[0].get_xlabel() == "number of edges |E| (log), |V| = 4,096"
    assert sorted({x for x, _ in points(fig12.axes[0])}) == [8192.0, 32768.0]  # not the w_max graphs (w_max != |V|)
    fig13 = draw("001", "fig13", samples, summary)
    assert fig13.axes[0].get_xlabel().startswith("maximum weight w_max (log), |V| = 4,096, |E| = 16,384")
    assert sorted({x for x, _ in points(fig13.axes[0])}) == [16.0, 64.0]


def test_paper001_sampled_apsp_runs_stand_for_the_whole_run_as_dotted_estimates():
    sampled = "groups_per_block-4+sample_groups-8+sources_per_launch-32"
    samples, summary = tables(*nsssp("random-n1024-k4-w1024", 1024), *nsssp("random-n2048-k4-w2048", 2048),
                              runs("random-n4096-k4-w4096", "nsssp_shared", [10.0, 10.0], sampled, n=4096, m=16384,
                                   family="random wmax=4096"),
                              *[runs(f"random-n{n}-k4-w{n}", "dijkstra_cputhreads", [500.0], "threads-4", n=n, m=4 * n,
                                     family=f"random wmax={n}") for n in (1024, 2048)])
    fig = draw("001", "fig10", samples, summary)
    ax = fig.axes[0]
    # 8 of the 4096 / 32 = 128 groups took 10 ms: the whole APSP 160 ms, drawn in seconds
    assert (4096.0, pytest.approx(0.16)) in points(ax) and (4096.0, 0.01) not in points(ax)
    styles = {line.get_label(): line.get_linestyle() for line in ax.get_lines()}
    assert styles["Proposed (paths=true, estimate from sampled sources)"] == ":"
    assert styles["Proposed (paths=true)"] == "-"
    assert styles["Dijkstra, binary heap on 4 threads (dijkstra_cputhreads)"] == "-"  # the paper's CPU method
    assert any("its time scaled to the whole run" in t for t in texts(fig))
    speedup = draw("001", "fig11", samples, summary)  # over SciPy: the 4-thread heap is a CPU method, not a curve
    assert not any("dijkstra_cputhreads" in line.get_label() for line in speedup.axes[0].get_lines())


def test_paper001_a_method_missing_at_a_size_of_the_sweep_is_marked_not_run():
    samples, summary = tables(*nsssp("random-n1024-k4-w1024", 1024),
                              *nsssp("random-n2048-k4-w2048", 2048, solvers=("global32", "shared32", "scipy")),
                              *nsssp("random-n4096-k4-w4096", 4096, solvers=("global32", "shared32")))
    ax = draw("001", "fig10", samples, summary).axes[0]
    harish, scipy = PALETTE[0], PALETTE[3]  # the first and last of the paper's four methods
    assert not_run_marks(ax) == sorted([(2048.0, harish), (4096.0, harish), (4096.0, scipy)])


def test_paper001_text_values_are_the_papers():
    """Every value of gpusp/data/paper001-published-curves.csv is printed in paper 001's text as written."""
    seeds = Path(__file__).parents[3] / "shared" / "seeds"
    if not seeds.is_dir():
        pytest.skip("the papers' text (../shared/seeds) is not here")
    text = next(seeds.glob("001_*.txt")).read_text()
    table = pd.concat([p001.text_values(f) for f in ("fig10", "fig14")])
    assert len(table) == 5 and set(table["unit"]) == {"x", "%"}
    for row in table.itertuples():
        assert row.printed in text, row
        assert row.low <= row.high


def test_paper001_fig14_overhead_in_per_cent_beside_the_papers_range():
    groups = []
    for n in (1024, 2048):
        for paths, t in (("true", 105.0), ("false", 100.0)):
            groups.append(runs(f"random-n{n}-k4-w{n}", "nsssp_shared", [t],
                               f"groups_per_block-4+paths-{paths}+sources_per_launch-32", n=n, m=4 * n,
                               family=f"random wmax={n}"))
    samples, summary = tables(*groups)
    fig = draw("001", "fig14", samples, summary)
    ax = fig.axes[0]
    assert ax.get_ylabel() == "overhead of path recording (%)"
    assert [round(y, 6) for _, y in points(ax)] == [5.0, 5.0]
    assert any("3.0-7.7 %" in t for t in texts(fig))
    one_side = tables(*groups[::2])
    assert "paths true and false" in draw("001", "fig14", *one_side)


def test_paper001_table1_draws_every_printed_cell():
    samples, summary = tables(*nsssp("random-4677", 4677, wmax=4096), *nsssp("ring-4677", 4677, k=1, wmax=1))
    summary.loc[summary["graph"] == "ring-4677", "graph_family"] = "ring wmax=1 wmin=1"
    fig = draw("001", "table1", samples, summary)
    assert len(stars(fig)) == 16 and 5730.0 in stars(fig) and 0.0962 in stars(fig)
    assert len(not_run_marks(fig.axes[0])) == 8  # the power-law and complete columns
    assert fig.axes[0].get_ylabel() == "time (s, log)"
    assert "Power law\npowerlaw-4677\n(not run here)" in texts(fig)  # a line of its own: no overlap


# --- paper 002 ---------------------------------------------------------------------------------------------------
def blocked(versions, sizes=(80, 160, 240), blocks=(8, 16, 24, 32), extra="", mode=None):
    return [runs(f"random-{n}", f"blockedfw_{v}", [float(n) / b + i], f"block_size-{b}" + extra, n=n, m=n * n // 4,
                 family="random wmax=100 wmin=1", mode=mode)
            for i, v in enumerate(versions) for n in sizes for b in blocks]


def test_paper002_figures_per_blocking_factor_with_padded_pairs_hollow():
    samples, summary = tables(*blocked(["v11", "v12", "v20", "v21", "v30"]))
    fig1 = draw("002", "fig4-1", samples, summary)
    assert sorted(ax.get_title() for ax in fig1.axes) == ["B = 24", "B = 8"]
    assert all(ax.get_xlabel() == "number of vertices n" and ax.get_ylabel() == "time (ms, log)" for ax in fig1.axes)
    shown = texts(fig1)
    assert "version 1.1 (paths=true)" in shown and not any("version 1.0" in t for t in shown)
    assert any("not run by the paper" in t for t in shown)  # B = 24 does not divide 80 or 160
    hollow = [line for ax in fig1.axes for line in ax.get_lines() if line.get_markerfacecolor() == "none"
              and line.get_marker() == "o"]
    assert len(hollow) == 2 * 5  # n = 80 and 160 at B = 24, five versions
    fig2 = draw("002", "fig4-2", samples, summary)
    assert sorted(ax.get_title() for ax in fig2.axes) == ["B = 16", "B = 24", "B = 32", "B = 8"]
    assert all(ax.get_yscale() == "log" and ax.get_ylabel() == "time (ms, log)" for ax in fig2.axes)
    assert "version 1.1 (paths=true)" not in texts(fig2)
    fig3 = draw("002", "fig4-3", samples, summary)
    assert [ax.get_xlabel() for ax in fig3.axes] == ["number of vertices n", "blocking factor B"]
    assert {"B = 8 (paths=true)", "n = 80"} <= set(texts(fig3))


def test_paper002_fig4_3_gives_every_size_a_colour_of_its_own_apart_from_the_blocking_factors():
    fig = draw("002", "fig4-3", *tables(*blocked(["v21"], sizes=(80, 160, 240, 320, 480, 640, 720, 1200))))
    left, right = fig.axes
    rgb = matplotlib.colors.to_rgb
    per_block = {rgb(colour_of(left, f"B = {b} (paths=true)")) for b in (8, 16, 24, 32)}
    per_size = [rgb(colour_of(right, f"n = {n}")) for n in (80, 160, 240, 320, 480, 640, 720, 1200)]
    assert len(set(per_size)) == 8 and not per_block & set(per_size)


def test_paper002_fig4_2_keeps_the_fast_versions_visible_on_a_log_axis():
    samples, summary = tables(*blocked(["v20", "v21"], blocks=(8, 24)),
                              *[runs(f"random-{n}", "blockedfw_v30", [200.0 * n], f"block_size-{b}", n=n,
                                     m=n * n // 4, family="random wmax=100 wmin=1") for n in (80, 160, 240)
                                for b in (8, 24)])
    fig = draw("002", "fig4-2", samples, summary)
    for ax in fig.axes:
        low, high = ax.get_ylim()
        assert ax.get_yscale() == "log"
        ys = [y for _, y in points(ax)]
        # versions 2.0 / 2.1 (about 10 ms) and 3.0 (16-48 s) span three decades: all inside the panel
        assert low <= min(ys) and max(ys) <= high and max(ys) / min(ys) > 1000


def test_paper002_a_version_missing_where_b_divides_n_is_marked_not_run():
    groups = [g for g in blocked(["v20", "v21"], sizes=(80, 160, 240), blocks=(8, 16, 24))
              if (g[0]["solver"], g[0]["n"], g[0]["params"]) != ("blockedfw_v21", 160, "block_size-8")]
    fig = draw("002", "fig4-2", *tables(*groups))
    panel = {ax.get_title(): ax for ax in fig.axes}
    v21, v30 = PALETTE[1], PALETTE[2]  # versions 2.0, 2.1, 3.0 in the figure's order
    # version 2.1 lacks n = 160 at B = 8; version 3.0 never ran: marked at every n that B divides, only there
    assert not_run_marks(panel["B = 8"]) == sorted([(80.0, v30), (160.0, v21), (160.0, v30), (240.0, v30)])
    assert not_run_marks(panel["B = 24"]) == [(240.0, v30)]


def test_paper002_new_parameters_split_curves_the_papers_setting_solid():
    rows = [runs(f"random-{n}", "blockedfw_v40", [10.0 + n / 100], f"block_size-8+capture-{g}+paths-false", n=n,
                 m=n * n // 4, family="random wmax=100 wmin=1") for n in (80, 160) for g in ("once", "per-run")]
    samples, summary = tables(*rows)
    fig = draw("002", "fig4-1", samples, summary)
    ax = fig.axes[0]
    styles = {line.get_label(): line.get_linestyle() for line in ax.get_lines() if not line.get_label().startswith("_")}
    assert styles == {"version 4.0": "-", "version 4.0 (capture=once)": "--"}
    assert "no run" in draw("002", "fig4-1", *tables(*blocked(["v21"], blocks=(16, 32))))


def test_a_real_h200_table_draws_paper_002s_figures_only(tmp_path):
    summary = pd.read_csv(BENCH / "paper002-fig4.csv")
    samples = pd.read_csv(BENCH / "paper002-fig4-samples.csv")
    written = paperfigs.make_figures(samples, summary, tmp_path)
    assert sorted(written) == ["002/fig4-1", "002/fig4-2", "002/fig4-3"]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in written.values())


# --- paper 004 ---------------------------------------------------------------------------------------------------
def complete(n):
    return {"n": n, "m": n * (n - 1), "family": "complete wmax=100 wmin=1"}


def test_paper004_edges_per_thread_on_complete_graphs_only():
    rows = [runs(f"complete-{n}", "edgebf_coo", [n / 100 * (1 + abs(e - 4) / 8)], f"edges_per_thread-{e}",
                 **complete(n)) for n in (512, 1024) for e in (1, 4, 64)]
    samples, summary = tables(*rows)
    fig = draw("004", "fig1-1", samples, summary)
    ax = fig.axes[0]
    assert ax.get_xlabel().startswith("number of vertices |V|") and ax.get_ylabel() == "time (ms, log)"
    assert {"1 edge per thread", "4 edges per thread", "64 edges per thread"} <= set(texts(fig))
    fig2 = draw("004", "fig1-2", samples, summary)
    assert fig2.axes[0].get_xlabel() == "edges per thread (log)"
    assert [t.get_text() for t in fig2.axes[0].get_xticklabels()] == ["1", "4", "64"]
    assert {"|V| = 512", "|V| = 1,024"} <= set(texts(fig2))
    sparse = tables(*[runs("r", "edgebf_coo", [1.0], f"edges_per_thread-{e}", family="random wmax=20") for e in (1, 4)])
    assert "no edge-parallel kernel" in draw("004", "fig1-2", *sparse)


def test_paper004_transfer_share_is_upload_over_upload_plus_run():
    rows = []
    for n in (256, 1024):
        rows.append(runs(f"complete-{n}", "edgebf_dense", [3.0, 3.0], "transfer-pageable", h2d=9.0, **complete(n)))
        rows.append(runs(f"complete-{n}", "edgebf_dense", [3.0, 3.0], "transfer-pinned", h2d=1.0, **complete(n)))
        rows.append(runs(f"complete-{n}", "edgebf_dense", [5.0, 5.0], "chunks-2+transfer-streams", h2d=0.5,
                         **complete(n)))
    samples, summary = tables(*rows)
    fig = draw("004", "transfer", samples, summary)
    upload, share, total = fig.axes[:3]
    assert upload.get_ylabel() == "matrix upload time (ms, log)"
    assert sorted({y for _, y in points(upload)}) == [1.0, 9.0]
    assert sorted({y for _, y in points(share)}) == [25.0, 75.0]  # 1 / (1 + 3), 9 / (9 + 3)
    assert sorted({y for _, y in points(total)}) == [4.0, 5.5, 12.0]
    assert any("almost reaches 50%" in t for t in texts(fig))
    assert "pageable and pinned" in draw("004", "transfer", *tables(*rows[::3]))


def test_paper004_transfer_reads_each_configurations_samples_and_marks_sizes_not_run():
    """As the sweep records it: the upload on the first sample of a configuration only, 0 on the others."""
    def upload_once(rows, upload):
        return [{**r, "h2d_ms": upload if i == 0 else 0.0} for i, r in enumerate(rows)]

    rows = []
    for n, pageable, pinned in ((1024, 8.0, 2.0), (4096, 30.0, 6.0)):
        rows.append(upload_once(runs(f"complete-{n}", "edgebf_dense", [1.0, 2.0, 3.0, 4.0, 5.0], "transfer-pageable",
                                     **complete(n)), pageable))
        rows.append(upload_once(runs(f"complete-{n}", "edgebf_dense", [1.0, 1.0, 1.0], "transfer-pinned",
                                     **complete(n)), pinned))
    rows.append(upload_once(runs("complete-16384", "edgebf_dense", [10.0], "transfer-pageable", **complete(16384)),
                            100.0))
    samples, summary = tables(*rows)
    fig = draw("004", "transfer", samples, summary)
    upload, share, total = fig.axes[:3]
    assert sorted({y for _, y in points(upload)}) == [2.0, 6.0, 8.0, 30.0, 100.0]  # the upload, not a median of zeros
    assert (1024.0, pytest.approx(100 * 8 / 11)) in points(share)  # upload / (upload + run), the median run: 3 ms
    assert (4096.0, 33.0) in points(total) and (1024.0, 3.0) in points(total)
    pinned = colour_of(upload, "pinned")
    # pinned did not run at 16384, nothing at the paper's largest matrix, 20480
    assert [x for x, c in not_run_marks(upload) if c == pinned] == [16384.0, 20480.0]
    assert [x for x, _ in not_run_marks(upload)] == [16384.0, 20480.0, 20480.0]
    assert "no samples" in draw("004", "transfer", samples.iloc[0:0], summary)


def test_paper004_pull_push_and_simulated_banner():
    rows = [runs(g, s, [t], mode="sim", **complete(1024)) for g in ("complete-1024",)
            for s, t in (("vertexbf_pull", 5.0), ("vertexbf_push", 9.0), ("edgebf_coo", 1.0))]
    samples, summary = tables(*rows)
    fig = draw("004", "fig2", samples, summary)
    shown = texts(fig)
    assert {"incoming (pull)", "outgoing (push)", "basic parallel: thread per arc (COO)"} <= set(shown)
    assert any("SIMULATED" in t for t in shown) and any("the CUDA simulator" in t for t in shown)
    assert "vertexbf" in draw("004", "fig2", *tables(rows[2]))


# --- files, machines, the command line ----------------------------------------------------------------------------
def test_files_per_paper_stale_ones_removed_and_machines_kept_apart(tmp_path):
    samples, summary = fig5_tables()
    (tmp_path / "002").mkdir()
    (tmp_path / "002" / "fig4-1.png").write_bytes(b"old")
    written = paperfigs.make_figures(samples, summary, tmp_path)
    assert sorted(written) == ["000/fig5"] and (tmp_path / "000" / "fig5.png").exists()
    assert not (tmp_path / "002" / "fig4-1.png").exists()
    other = pd.DataFrame([row for group in [runs("USA-road-d.NY", "bellmanford_naive", [9000.0],
                                                 "block-1024+rounds-fixed", *ROAD["USA-road-d.NY"],
                                                 gpu="NVIDIA H100 80GB HBM3")] for row in group])
    both = pd.concat([samples, other], ignore_index=True)
    written = paperfigs.make_figures(both, summary_table(both), tmp_path / "two")
    assert sorted(written) == ["000/fig5-nvidia-h100-80gb-hbm3", "000/fig5-nvidia-h200"]


def test_gpusp_plot_writes_the_paper_figures(tmp_path, capsys):
    samples, summary = fig5_tables()
    samples.astype({c: "string" for c in samples.columns if samples[c].dtype == object}).to_parquet(
        tmp_path / "samples.parquet")
    summary.to_csv(tmp_path / "summary.csv", index=False)
    assert cli.main(["plot", "--samples", str(tmp_path / "samples.parquet"), "--summary", str(tmp_path / "summary.csv"),
                     "--out-dir", str(tmp_path / "plots"), "--papers-dir", str(tmp_path / "papers")]) == 0
    out = capsys.readouterr().out
    assert (tmp_path / "papers" / "000" / "fig5.png").exists() and "no 002/fig4-1.png" in out
    assert np.all([p.stat().st_size > 5000 for p in (tmp_path / "papers").rglob("*.png")])
