"""The figures and the HTML report.

The figures (fast, from made-up tables): one panel per problem, graph and machine; one configuration per heat-map
cell; "best" only among validated configurations doing comparable work; a speed-up over the first page's baseline,
as a point with an interval; sweeps in numeric order; GPU and CPU apart; a figure only when it has data; SIMULATED
only where GPU times came from the simulator; a batched solver's configuration labelled as each source's share of its
batch.

The report (`snakemake --report` of the tiny end-to-end run), opened in headless Chromium when it is installed: the
first page opens at its top on the landing table, SIMULATED is a banner above the table, the run's environment
(commit, GPU, CPU, software, graph checksums) follows it, nothing is drawn over the rule graph, its numbers have no
exponents, and the screenshot is a rendered page, not a blank one.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from gpusp.report import plots
from gpusp.report.aggregate import summary_table
from test_workflow import TINY, snakemake, tiny_results

pytestmark = pytest.mark.timeout(600)

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
NO_CHROMIUM = ("chromium is not installed (Debian: apt-get install -y --no-install-recommends chromium); the HTML "
               "itself is still tested")
H200, H100, XEON = "NVIDIA H200", "NVIDIA H100 80GB HBM3", "Intel Xeon Platinum 8480+"
PAPER = {"scipy_dijkstra": "-", "dijkstra_cpu": "000", "scipy_apsp": "-"}
EXPONENT = re.compile(r"\b\d+(\.\d+)?e[-+]\d+")


# --- made-up tables: the columns gpusp aggregate writes --------------------------------------------------
def runs(graph, solver, device, times, params="default", problem="sssp", validated=True, mode=None, gpu=H200,
         cpu=XEON, relaxations=None, n=100, m=400, family=None, **param_columns):
    """The samples of one configuration: one row per time in ``times``."""
    mode = mode or ("gpu" if device == "gpu" else "cpu")
    gpu = gpu if device == "gpu" else "-"
    return [dict(graph=graph, graph_name=graph, problem=problem, solver=solver, family=solver.split("_")[0],
                 variant=solver, device=device, paper=PAPER.get(solver, "000"), params=params, status="ok",
                 mode=mode, gpu=gpu, cpu=cpu, hardware=gpu if device == "gpu" else cpu, validated=validated,
                 source=i % 2, sample=i, time_ms=float(t), clock="cuda-events" if device == "gpu" else "wall",
                 compile_s=0.1, h2d_ms=0.01, d2h_ms=0.01, iterations=1.0, relaxations=relaxations, n=n, m=m,
                 graph_family=family, **{f"param_{k}": v for k, v in param_columns.items()})
            for i, t in enumerate(times)]


def table(*groups) -> pd.DataFrame:
    return pd.DataFrame([row for group in groups for row in group])


def noisy(median, spread, count=12, seed=0):
    return median + spread * np.random.default_rng(seed).standard_normal(count)


def texts(fig) -> list[str]:
    """Every piece of text drawn in a figure (titles, labels, tick labels, annotations, legends)."""
    return [t.get_text() for t in fig.findobj(matplotlib.text.Text) if t.get_text()]


def panel(fig, words):
    """The axes whose title holds every one of ``words``."""
    found = [ax for ax in fig.axes if all(w in ax.get_title() for w in words)]
    assert len(found) == 1, (words, [ax.get_title() for ax in fig.axes])
    return found[0]


def tick_labels(ax) -> list[str]:
    return [t.get_text() for t in ax.get_yticklabels()]


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


# --- heat map ------------------------------------------------------------------------------------------------
def test_tile_heatmap_has_a_panel_per_graph_and_never_pools_graphs():
    """Two graphs, one blocking factor: two cells of their own (11,349 and 5,034 ms), never their mean (8,191)."""
    samples = table(runs("ny", "blockedfw_v21", "gpu", [11349.0] * 3, "block_size-16", problem="apsp", block_size=16),
                    runs("ny", "blockedfw_v21", "gpu", [9000.0] * 3, "block_size-32", problem="apsp", block_size=32),
                    runs("bay", "blockedfw_v21", "gpu", [5034.0] * 3, "block_size-16", problem="apsp", block_size=16),
                    runs("bay", "blockedfw_v21", "gpu", [4000.0] * 3, "block_size-32", problem="apsp", block_size=32))
    tables = {title: t for title, key, t in plots.tile_tables(samples)}
    assert sorted(tables) == ["APSP · bay", "APSP · ny"]
    assert tables["APSP · ny"].loc["blockedfw_v21", 16] == 11349.0
    assert tables["APSP · bay"].loc["blockedfw_v21", 16] == 5034.0
    fig = plots.figure("tile_heatmap", samples, pd.DataFrame())
    shown = texts(fig)
    assert "11,349" in shown and "5,034" in shown and "8,191" not in shown and "8,192" not in shown


def test_tile_heatmap_keeps_other_parameters_apart_and_orders_values_by_number():
    """Each cell is one configuration: rounds early and fixed are two rows; block sizes 8 < 32 < 64 < 256."""
    groups = []
    for i, block in enumerate((64, 8, 256, 32)):
        for rounds, scale in (("early", 1.0), ("fixed", 50.0)):
            groups.append(runs("ny", "bellmanford_naive", "gpu", [scale * (10 - i)] * 2,
                               f"block-{block}+rounds-{rounds}", block=block, rounds=rounds))
    (title, key, heat), = plots.tile_tables(table(*groups))
    assert key == "block" and list(heat.columns) == [8, 32, 64, 256]
    assert list(heat.index) == ["bellmanford_naive rounds-early", "bellmanford_naive rounds-fixed"]
    assert heat.loc["bellmanford_naive rounds-fixed", 64] == 500.0
    assert heat.loc["bellmanford_naive rounds-early", 64] == 10.0


def test_tile_heatmap_marks_a_configuration_that_was_not_validated():
    samples = table(runs("ny", "edgebf_coo", "gpu", [3.0] * 2, "edges_per_thread-1", edges_per_thread=1),
                    runs("ny", "edgebf_coo", "gpu", [1.5] * 2, "edges_per_thread-4", edges_per_thread=4,
                         validated=False))
    shown = texts(plots.figure("tile_heatmap", samples, pd.DataFrame()))
    assert "3" in shown and "1.5\nnot validated" in shown


def test_a_parameter_held_at_one_value_draws_no_heatmap():
    samples = table(runs("ny", "edgebf_coo", "gpu", [3.0] * 2, "block-256", block=256),
                    runs("ny", "vertexbf_pull", "gpu", [4.0] * 2, "block-256", block=256))
    assert plots.tile_tables(samples) == []
    assert "no tile" in plots.figure("tile_heatmap", samples, pd.DataFrame())


# --- order of a sweep, GPU and CPU apart -----------------------------------------------------------------------
def sweep_samples():
    """edges_per_thread 1..16 whose times, fastest first, would read 4, 1, 16, 2, 8."""
    times = {1: 2.0, 2: 4.0, 4: 1.0, 8: 5.0, 16: 3.0}
    return table(runs("ny", "scipy_dijkstra", "cpu", noisy(20, 1)), runs("ny", "dijkstra_cpu", "cpu", noisy(8, 0.5)),
                 *[runs("ny", "edgebf_coo", "gpu", noisy(t, 0.05, seed=e), f"edges_per_thread-{e}", edges_per_thread=e,
                        relaxations=4000.0) for e, t in times.items()])


def test_sweep_values_read_in_numeric_order_in_every_figure():
    samples = sweep_samples()
    expected = [f"edgebf_coo edges_per_thread-{e}" for e in (1, 2, 4, 8, 16)]
    assert [c for c in plots.config_order(plots._timed(samples)) if c.startswith("edgebf")] == expected
    for name in ("time_per_solver", "speedup"):
        labels = tick_labels(panel(plots.figure(name, samples, pd.DataFrame()), ["ny"]))
        assert [lab for lab in labels if lab.startswith("edgebf")] == expected, name
    heat = plots.tile_tables(samples)[0][2]
    assert list(heat.columns) == [1, 2, 4, 8, 16]


def test_gpu_and_cpu_configurations_differ_in_colour_and_marker():
    fig = plots.figure("speedup", sweep_samples(), pd.DataFrame())
    ax = panel(fig, ["ny"])
    points = [bars.lines[0] for bars in ax.containers]  # an error bar's data line: its marker and colour
    styles = {(line.get_marker(), matplotlib.colors.to_hex(line.get_color())) for line in points}
    assert styles == {("o", plots.DEVICE_STYLE["gpu"][1]), ("s", plots.DEVICE_STYLE["cpu"][1])}
    legend = [t.get_text() for leg in fig.legends for t in leg.get_texts()]
    assert "GPU" in legend and "CPU" in legend


def test_a_batched_configuration_is_labelled_as_a_share_of_its_batch_in_every_figure():
    """multisource_sssp's samples are each source's share of a 1,024-source batch: its label says so, the one-source
    solvers' labels stay as they were, and the summary carries the batch beside the share."""
    batched = [{**r, "batch_sources": 1024.0, "batch_ms": r["time_ms"] * 1024}
               for r in runs("ny", "multisource_sssp", "gpu", noisy(0.62, 0.01))]
    alone = [{**r, "batch_sources": np.nan, "batch_ms": np.nan} for r in runs("ny", "deltastep_gpu", "gpu",
                                                                              noisy(5.4, 0.1))]
    samples = table(runs("ny", "gapbs_sssp", "cpu", noisy(4.0, 0.1)), batched, alone)
    summary = summary_table(samples).set_index("solver")
    assert summary.loc["multisource_sssp", "batch_sources"] == 1024
    assert summary.loc["multisource_sssp", "batch_median_ms"] == pytest.approx(
        summary.loc["multisource_sssp", "median_ms"] * 1024)
    assert pd.isna(summary.loc["deltastep_gpu", "batch_sources"]) and pd.isna(summary.loc["gapbs_sssp",
                                                                                           "batch_sources"])
    for name in ("time_per_solver", "speedup"):
        labels = tick_labels(panel(plots.figure(name, samples, summary.reset_index()), ["ny"]))
        assert "multisource_sssp default (batch of 1,024, per source)" in labels, (name, labels)
        assert "deltastep_gpu default" in labels, (name, labels)  # one source per run: unmarked


# --- speed-up --------------------------------------------------------------------------------------------------
def baseline_samples():
    """SSSP and APSP on one graph; SciPy is not the fastest CPU code (dijkstra_cpu is)."""
    return table(runs("ny", "scipy_dijkstra", "cpu", noisy(50, 2)), runs("ny", "dijkstra_cpu", "cpu", noisy(10, 1)),
                 runs("ny", "edgebf_coo", "gpu", noisy(2, 0.3, seed=1), "edges_per_thread-4", edges_per_thread=4),
                 runs("ny", "vertexbf_pull", "gpu", noisy(40, 0.2, seed=2)),
                 runs("ny", "scipy_apsp", "cpu", noisy(900, 10), problem="apsp"),
                 runs("ny", "blockedfw_v21", "gpu", noisy(30, 1), "block_size-16", problem="apsp", block_size=16))


def test_speedup_is_over_the_fastest_cpu_baseline_with_a_bootstrap_interval():
    samples = baseline_samples()
    speed = plots.speedup_table(samples).set_index(["panel", "config"])
    edge = speed.loc[("SSSP · ny", "edgebf_coo edges_per_thread-4")]
    assert edge["baseline"] == "dijkstra_cpu default"  # the fastest CPU code, not SciPy
    dijkstra = samples[samples["solver"] == "dijkstra_cpu"]["time_ms"].median()
    gpu = samples[samples["solver"] == "edgebf_coo"]["time_ms"].median()
    assert edge["speedup"] == pytest.approx(dijkstra / gpu)
    assert edge["low"] < edge["speedup"] < edge["high"]
    # a noisier configuration gets a wider interval (relative to its value)
    steady = speed.loc[("SSSP · ny", "vertexbf_pull default")]
    assert (edge["high"] / edge["low"]) > (steady["high"] / steady["low"])
    assert speed.loc[("SSSP · ny", "scipy_dijkstra default"), "speedup"] < 1  # CPU codes are compared too
    assert speed.loc[("APSP · ny", "blockedfw_v21 block_size-16"), "baseline"] == "scipy_apsp default"


def test_speedup_matches_the_summary_and_the_first_page():
    """One definition: the figure's ratio is the summary's speedup_vs_cpu, which the first page prints."""
    samples = baseline_samples()
    summary = summary_table(samples).set_index(["problem", "solver"])
    speed = plots.speedup_table(samples).set_index(["problem", "solver"])
    for key in (("sssp", "edgebf_coo"), ("sssp", "vertexbf_pull"), ("apsp", "blockedfw_v21")):
        assert speed.loc[key, "speedup"] == pytest.approx(summary.loc[key, "speedup_vs_cpu"]), key


def test_speedup_figure_points_with_intervals_sssp_and_apsp_apart():
    fig = plots.figure("speedup", baseline_samples(), pd.DataFrame())
    sssp, apsp = panel(fig, ["SSSP", "ny"]), panel(fig, ["APSP", "ny"])
    assert "dijkstra_cpu" in sssp.get_title() and "scipy_apsp" in apsp.get_title()
    assert "blockedfw_v21 block_size-16" not in tick_labels(sssp) and tick_labels(apsp) == [
        "blockedfw_v21 block_size-16"]
    for ax in (sssp, apsp):
        assert ax.get_xscale() == "log"
        # points with error bars, no bars whose length would depend on where the log axis starts
        assert not [p for p in ax.patches if isinstance(p, matplotlib.patches.Rectangle)]
        assert any(isinstance(c, matplotlib.collections.LineCollection) for c in ax.collections)
    table_ = plots.speedup_table(baseline_samples())
    low, high = sssp.get_xlim()
    assert low < table_["low"].min() and table_["high"].max() < high and low < 1 < high
    # each value written beside its point in one convention, "N x faster" or "N x slower", never as 8.7e-05x
    shown = texts(fig)
    assert all(plots.faster_or_slower(v) in shown for v in table_["speedup"]) and not any(EXPONENT.search(t)
                                                                                        for t in shown)
    assert all(t.endswith(("x faster", "x slower")) for t in shown if t[:1].isdigit())
    assert plots.faster_or_slower(0.117) == "8.55x slower" and plots.faster_or_slower(12.3) == "12.3x faster"


def test_no_speedup_without_a_cpu_baseline():
    samples = table(runs("ny", "edgebf_coo", "gpu", [1.0, 2.0]))
    assert plots.speedup_table(samples).empty
    assert "no speed-up" in plots.figure("speedup", samples, pd.DataFrame())
    # a graph without one is named under the figure, not silently dropped
    samples = pd.concat([table(runs("bay", "dijkstra_cpu", "cpu", [4.0, 5.0]),
                               runs("bay", "edgebf_coo", "gpu", [1.0, 1.5])), samples])
    fig = plots.figure("speedup", samples, pd.DataFrame())
    assert [ax.get_title() for ax in fig.axes] == ["SSSP · bay: baseline dijkstra_cpu default (4.5 ms)"]
    assert "no CPU baseline, not shown: SSSP · ny" in texts(fig)


# --- machines ----------------------------------------------------------------------------------------------------
def test_two_gpus_never_share_a_panel_and_each_is_compared_with_its_host_cpu():
    samples = table(runs("ny", "dijkstra_cpu", "cpu", noisy(10, 0.2)),
                    runs("ny", "edgebf_coo", "gpu", noisy(2, 0.1), gpu=H200),
                    runs("ny", "edgebf_coo", "gpu", noisy(4, 0.1), gpu=H100))
    fig = plots.figure("time_per_solver", samples, pd.DataFrame())
    h200, h100 = panel(fig, ["ny", H200]), panel(fig, ["ny", H100])
    assert tick_labels(h200) == tick_labels(h100) == ["edgebf_coo default", "dijkstra_cpu default"]
    speed = plots.speedup_table(samples)
    assert sorted(speed["speedup"].round(1)) == [2.5, 5.0]
    assert speed["panel"].nunique() == 2
    # one machine: its name is left out of the titles
    one = plots.figure("time_per_solver", samples[samples["gpu"] != H100], pd.DataFrame())
    assert [ax.get_title() for ax in one.axes] == ["SSSP · ny"]


# --- relaxation rate ---------------------------------------------------------------------------------------------
def rate_summary():
    rows = [  # solver, params, device, validated, relaxations, rate per second
        ("bellmanford_naive", "rounds-early", "gpu", True, 1.0e6, 1.0e9),
        ("bellmanford_naive", "rounds-fixed", "gpu", True, 3.0e8, 1.2e10),  # wasted relaxations: fastest rate
        ("edgebf_coo", "edges_per_thread-4", "gpu", True, 1.2e6, 2.0e9),
        ("edgebf_dense", "default", "gpu", True, 5.0e9, 4.0e11),  # examines n^2 arcs a round
        ("vertexbf_push", "default", "gpu", False, 1.0e6, 5.0e10),  # not validated
        ("dijkstra_cpu", "default", "cpu", True, 4.0e2, 1.0e7),
    ]
    return pd.DataFrame([dict(graph="ny", problem="sssp", solver=s, params=p, device=d, validated=v, relaxations=r,
                              relaxations_per_s=rate, median_ms=r / rate * 1e3, mode="gpu" if d == "gpu" else "cpu",
                              gpu=H200 if d == "gpu" else "-", cpu=XEON, n=100, m=400)
                         for s, p, d, v, r, rate in rows])


def test_throughput_best_is_among_validated_configurations_doing_comparable_work():
    rates = plots.rate_table(rate_summary()).set_index("config")
    assert list(rates.index[rates["best"]]) == ["edgebf_coo edges_per_thread-4"]
    assert not rates.loc["bellmanford_naive rounds-fixed", "comparable"]
    assert rates.loc["bellmanford_naive rounds-fixed", "work"] == pytest.approx(300)
    assert not rates.loc["vertexbf_push default (not validated)", "comparable"]
    assert rates.loc["dijkstra_cpu default", "comparable"]  # the CPU's least work is its own
    fig = plots.figure("throughput", pd.DataFrame(), rate_summary())
    ax = panel(fig, ["SSSP", "ny"])
    lines = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
    assert [line.get_xdata()[0] for line in lines] == [2.0e9]
    assert "bellmanford_naive rounds-fixed (300x work)" in tick_labels(ax)
    assert "measured peak" not in " ".join(texts(fig))
    uncounted = rate_summary().iloc[[0]].assign(solver="scipy_dijkstra", params="default", relaxations_per_s=np.nan)
    fig = plots.figure("throughput", pd.DataFrame(), pd.concat([rate_summary(), uncounted], ignore_index=True))
    assert any("no relaxation count, not shown: scipy_dijkstra default" in t for t in texts(fig))


def test_throughput_draws_the_measured_peak_on_apsp_panels_only():
    summary = pd.concat([rate_summary(), rate_summary().assign(problem="apsp", graph="r64")], ignore_index=True)
    fig = plots.figure("throughput", pd.DataFrame(), summary, peak=3.0e11)
    peaks = {ax.get_title(): [line.get_xdata()[0] for line in ax.get_lines() if line.get_color() == "r"]
             for ax in fig.axes}
    assert peaks == {"SSSP · ny": [], "APSP · r64": [3.0e11]}


# --- figures only with data, SIMULATED only where it applies ----------------------------------------------------
def test_a_figure_is_written_only_when_it_has_data(tmp_path):
    samples = table(runs("ny", "scipy_dijkstra", "cpu", noisy(20, 1)), runs("ny", "dijkstra_cpu", "cpu", noisy(8, 1)))
    stale = tmp_path / "scaling.png"
    stale.write_bytes(b"an older run's figure")
    reasons = {}
    written = plots.make_figures(samples, summary_table(samples), tmp_path, reasons=reasons)
    assert sorted(written) == ["speedup", "time_per_solver"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["speedup.png", "time_per_solver.png"]
    assert sorted(reasons) == ["gpu_scaling", "scaling", "throughput", "tile_heatmap"]
    assert "no relaxation" in reasons["throughput"]
    nothing = samples.iloc[:0]
    reasons = {}
    assert plots.make_figures(nothing, summary_table(nothing), tmp_path / "none", reasons=reasons) == {}
    assert sorted(reasons) == sorted(plots.FIGURES)


def test_scaling_joins_sizes_of_one_generator_only_and_splits_problems():
    groups = [runs(f"r{n}", solver, device, [t * n] * 2, problem=problem, n=n, m=4 * n, family="random wmax=20")
              for n in (16, 32) for solver, device, problem, t in (("dijkstra_cpu", "cpu", "sssp", 0.01),
                                                                  ("edgebf_coo", "gpu", "sssp", 0.1),
                                                                  ("blockedfw_v21", "gpu", "apsp", 1.0))]
    groups.append(runs("ny", "edgebf_coo", "gpu", [5.0] * 2, n=264346, m=733846))
    samples = table(*groups)
    fig = plots.figure("scaling", samples, summary_table(samples))
    titles = sorted({ax.get_title() for ax in fig.axes if ax.get_title()})
    assert titles == ["APSP · every graph", "APSP · random wmax=20", "SSSP · every graph", "SSSP · random wmax=20"]
    assert "no scaling" in plots.figure("scaling", samples[samples["graph"] == "ny"],
                                        summary_table(samples[samples["graph"] == "ny"]))


def test_scaling_shows_graphs_of_one_size_as_points_never_joined():
    """kron-22 and a road network, one size each: no family curve, but every graph's solvers as points."""
    samples = table(runs("ny", "deltastep_gpu", "gpu", [5.0] * 2, n=264346, m=733846),
                    runs("ny", "gapbs_sssp", "cpu", [4.0] * 2, n=264346, m=733846),
                    runs("kron-22", "deltastep_gpu", "gpu", [18.0] * 2, n=4194304, m=128305846, family="kron"),
                    runs("kron-22", "gapbs_sssp", "cpu", [158.0] * 2, n=4194304, m=128305846, family="kron"))
    fig = plots.figure("scaling", samples, summary_table(samples))
    drawn = [ax for ax in fig.axes if ax.get_title()]
    assert sorted({ax.get_title() for ax in drawn}) == ["SSSP · every graph"]
    for ax in drawn:
        assert sum(len(c.get_offsets()) for c in ax.collections) == 4  # two solvers on two graphs
        assert all(len(line.get_xdata()) < 2 for line in ax.get_lines())  # no curve joins the two graphs


def test_simulated_is_said_for_simulated_gpu_times_only():
    cpu_only = table(runs("ny", "scipy_dijkstra", "cpu", [3.0, 4.0], mode="sim"),
                     runs("ny", "dijkstra_cpu", "cpu", [1.0, 2.0], mode="sim"))
    assert plots._label(cpu_only) == ""  # CPU times are real, even in a simulated run
    fig = plots.figure("time_per_solver", cpu_only, pd.DataFrame())
    assert not any("SIMULATED" in t for t in texts(fig))
    simulated = pd.concat([cpu_only, table(runs("ny", "edgebf_coo", "gpu", [90.0, 95.0], mode="sim"))])
    assert "SIMULATED" in plots._label(simulated)
    for name in ("time_per_solver", "speedup"):
        assert any("SIMULATED" in t for t in texts(plots.figure(name, simulated, pd.DataFrame()))), name


# --- the HTML report ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def report(tmp_path_factory):
    results = tiny_results(tmp_path_factory)
    html = tmp_path_factory.mktemp("report") / "report.html"
    proc = snakemake("--report", html, "--configfile", TINY, "--config", f"results={results}", timeout=300)
    assert proc.returncode == 0, proc.stdout[-5000:]
    return html


def test_report_html(report):
    text = report.read_text(errors="replace")
    assert report.stat().st_size > 50_000
    assert text.lstrip().lower().startswith("<!doctype html") or "<html" in text[:2000].lower()
    # the workflow description, the table and every figure that has data are in it
    assert "SIMULATED" in text
    assert "Fastest solver per graph" in text and "bellmanford_naive block-32" in text  # the landing page
    # with the run's provenance and raw data as report items
    # (scaling.png: the tiny sweep's graphs differ in size, so its every-graph row of points is drawn)
    for name in ("summary.csv", "time_per_solver.png", "speedup.png", "throughput.png", "scaling.png",
                 "environment.csv", "graphs.csv", "records.tar.gz", "samples.csv"):
        assert name in text, name
    # the tiny sweep has no tile sweep: no empty placeholder of that figure
    assert "tile_heatmap.png" not in text


def chromium(url, tmp_path, *flags, timeout=180) -> subprocess.CompletedProcess:
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--disable-dev-shm-usage", f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1400,1000",
           "--virtual-time-budget=15000", *flags, url]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=tmp_path)


def _distinct_colours(png) -> tuple[int, float, np.ndarray]:
    """(number of distinct RGB colours, standard deviation of the grey levels, the pixels) of a PNG."""
    try:
        from PIL import Image

        img = np.asarray(Image.open(png).convert("RGB"), dtype=np.uint8)
    except ImportError:
        import matplotlib.image

        img = (matplotlib.image.imread(png)[..., :3] * 255).astype(np.uint8)
    flat = img.reshape(-1, 3)
    colours = len(np.unique(flat[:, 0].astype(np.int64) << 16 | flat[:, 1].astype(np.int64) << 8 | flat[:, 2]))
    return colours, float(flat.mean(axis=1).std()), img


@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
def test_report_renders_in_headless_chromium(report, first_page, tmp_path):
    png = tmp_path / "report.png"
    proc = chromium(report.as_uri(), tmp_path, "--hide-scrollbars", f"--screenshot={png}")
    assert png.exists(), f"no screenshot (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    colours, spread, img = _distinct_colours(png)
    # a blank (white) page has 1 colour; the rendered report has text, a menu and coloured widgets
    assert colours > 50 and spread > 5, (colours, spread)
    # the SIMULATED banner is drawn where the page says it is: a coloured block on the first screen
    box = first_page["banner"]
    assert box and 0 <= box["top"] and box["bottom"] <= img.shape[0], box
    block = img[int(box["top"]) + 2:int(box["bottom"]) - 2, int(box["left"]) + 2:int(box["right"]) - 2].reshape(-1, 3)
    tinted = (block.max(axis=1).astype(int) - block.min(axis=1)) > 20  # not white, grey or black
    assert tinted.mean() > 0.5, f"the banner is not coloured in the screenshot {png}"
    print(f"screenshot: {png} ({colours} colours)")


# read back from the rendered page by a script appended to a copy of the report: where the first page's
# heading, tables and SIMULATED banner are, and where the rule graph is
LAYOUT_SCRIPT = """<script>
setTimeout(function () {
  function box(el) { if (!el) { return null; } var r = el.getBoundingClientRect();
                     return {left: r.left, top: r.top, right: r.right, bottom: r.bottom}; }
  function painted(el) { for (var e = el; e && e !== document.body; e = e.parentElement) {
      var bg = getComputedStyle(e).backgroundColor;
      if (bg !== 'rgba(0, 0, 0, 0)' && bg !== 'transparent') { return [e, bg]; } } return [null, null]; }
  var title = Array.from(document.querySelectorAll('h1, h2')).filter(function (e) {
      return /Fastest solver per graph/.test(e.textContent); })[0];
  var word = Array.from(document.querySelectorAll('p, div, span, strong')).filter(function (e) {
      return e.children.length === 0 && /SIMULATED/.test(e.textContent) && e.closest('.prose') &&
             !e.closest('table'); });
  var banner = word.map(painted).filter(function (p) { return p[0] && p[0].closest('.prose'); })[0] || [null, null];
  var graph = document.querySelector('#rulegraph canvas') || document.querySelector('#rulegraph svg');
  var out = {title: box(title), banner: box(banner[0]), banner_colour: banner[1],
             tables: Array.from(document.querySelectorAll('.prose table')).map(box), rulegraph: box(graph),
             column: box(document.querySelector('.prose')),
             width: window.innerWidth, first_page: (document.querySelector('.prose') || {}).innerText || ''};
  var pre = document.createElement('pre'); pre.id = 'gpusp-layout'; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
}, 4000);
</script>"""


def overlap(a, b) -> bool:
    return a["left"] < b["right"] and b["left"] < a["right"] and a["top"] < b["bottom"] and b["top"] < a["bottom"]


@pytest.fixture(scope="module")
def first_page(report, tmp_path_factory):
    """The layout of the report's first page as Chromium draws it in a 1400 x 1000 window."""
    if CHROMIUM is None:
        pytest.skip(NO_CHROMIUM)
    tmp = tmp_path_factory.mktemp("layout")
    html = report.read_text()
    end = html.rfind("</body>")
    page = tmp / "report.html"
    page.write_text(html[:end] + LAYOUT_SCRIPT + html[end:])
    proc = chromium(page.as_uri(), tmp, "--dump-dom")
    found = re.search(r'<pre id="gpusp-layout">(.*?)</pre>', proc.stdout, re.S)
    assert found, f"the page did not render (exit {proc.returncode}): {proc.stderr[-2000:]}"
    import html as entities

    return json.loads(entities.unescape(found.group(1)))


@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
def test_report_opens_on_the_landing_table(report, tmp_path):
    """Rendered by Chromium (the report is a JavaScript app): its first page holds the results table."""
    proc = chromium(report.as_uri(), tmp_path, "--dump-dom")
    dom = proc.stdout
    assert "<table" in dom, f"no table on the first page (exit {proc.returncode}): {proc.stderr[-2000:]}"
    first = dom[dom.find("Fastest solver per graph"):]
    assert dom.count("Fastest solver per graph") >= 1 and "bellmanford_naive block-32" in first
    assert "SIMULATED" in first and "fastest CPU baseline" in first
    # the provenance of every number: commit, GPU (here the simulator), CPU, software, per-graph checksums
    environment = first[first.find("Run environment"):]
    assert "Run environment" in first and ("(clean)" in environment or "(dirty)" in environment), environment[:500]
    for words in ("CPU", "Python", "numba-cuda", "SciPy", "tiny", "sha256"):
        assert words in environment, words


def test_first_page_opens_at_its_top(first_page):
    """Its heading is on the first screen (Snakemake centres a page taller than the window, cutting off its top)."""
    title = first_page["title"]
    assert title and 0 <= title["top"] < 1000, title


def test_first_page_says_simulated_in_a_banner_above_the_tables(first_page):
    banner, tables = first_page["banner"], first_page["tables"]
    assert banner, "SIMULATED is not in a coloured block of the first page"
    assert tables and banner["bottom"] <= tables[0]["top"], (banner, tables[0])
    assert banner["right"] - banner["left"] > 400, banner  # a banner across the page, not a word in a cell


def test_first_page_draws_nothing_over_the_rule_graph(first_page):
    graph = first_page["rulegraph"]
    assert graph, "no rule graph on the first page"
    column = first_page["column"]
    for item in [box for box in first_page["tables"] + [first_page["banner"]] if box]:
        assert not overlap(item, graph), (item, graph)
        # nor out of its column (into the graph's) or off the window
        assert item["right"] <= min(column["right"], first_page["width"]) + 1, (item, column)


def test_first_page_numbers_have_no_exponents(first_page):
    text = first_page["first_page"]
    assert "Fastest solver per graph" in text and "x slower" in text  # the tiny run: the simulator is slow
    assert not EXPONENT.search(text), EXPONENT.search(text).group(0)
