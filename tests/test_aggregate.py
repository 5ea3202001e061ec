"""The report's first page (fastest solver per graph) and the scaling figure's choice of graphs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from gpusp.report.aggregate import graph_family, landing_rst, landing_tables
from gpusp.report.plots import scaling_families


def row(graph, solver, device, ms, validated=True, mode="gpu", problem="sssp", params="default", n=10, m=40,
        family=None):
    return dict(graph=graph, problem=problem, solver=solver, device=device, params=params, median_ms=ms,
                iqr_ms=ms / 10, validated=validated, mode=mode, n=n, m=m, graph_family=family)


def test_landing_takes_the_fastest_validated_gpu_run_and_the_fastest_cpu_baseline():
    summary = pd.DataFrame([
        row("ny", "scipy_dijkstra", "cpu", 50.0), row("ny", "gapbs_sssp", "cpu", 4.0, params="threads-16"),
        row("ny", "deltastep_gpu", "gpu", 5.0), row("ny", "edgebf_coo", "gpu", 1.0, validated=False),
        row("ny", "vertexbf_push", "gpu", 8.0),
        row("rand", "scipy_dijkstra", "cpu", 2.0), row("rand", "edgebf_coo", "gpu", 0.5, mode="sim"),
        row("rand", "floydwarshall_cpu", "cpu", 9.0, problem="apsp"),
        dict(graph="rand", problem="sssp", solver="bellmanford_naive", params="default", status="skipped",
             reason="budget"),  # skipped rows have no median and never win
    ])
    tables = landing_tables(summary)
    assert set(tables) == {"sssp", "apsp"}
    ny = tables["sssp"].set_index("graph").loc["ny"]
    assert ny["gpu_solver"] == "deltastep_gpu default"  # the faster edgebf_coo run was not validated
    assert ny["cpu_baseline"] == "gapbs_sssp threads-16" and ny["cpu_median_ms"] == 4.0
    assert ny["gpu_speedup"] == pytest.approx(4.0 / 5.0) and ny["validated"] == "yes" and ny["timings"] == "GPU"
    rand = tables["sssp"].set_index("graph").loc["rand"]
    assert rand["timings"] == "SIMULATED" and rand["gpu_speedup"] == pytest.approx(4.0)
    apsp = tables["apsp"].iloc[0]
    assert apsp["cpu_baseline"] == "floydwarshall_cpu default" and np.isnan(apsp.get("gpu_speedup", np.nan))


def test_landing_falls_back_to_an_unvalidated_run_and_says_so():
    tables = landing_tables(pd.DataFrame([row("g", "edgebf_coo", "gpu", 1.0, validated=False)]))
    assert tables["sssp"].iloc[0]["validated"] == "no"


def test_landing_rst_renders_one_table_per_problem():
    from docutils.core import publish_parts

    summary = pd.DataFrame([row("ny", "scipy_dijkstra", "cpu", 50.0), row("ny", "deltastep_gpu", "gpu", 5.0),
                            row("k4", "floydwarshall_cpu", "cpu", 3.0, problem="apsp")])
    text = landing_rst(landing_tables(summary), "The intro.")
    assert text.startswith("The intro.") and "{% raw %}" in text  # kept away from the report's Jinja
    html = publish_parts(text.replace("{% raw %}", "").replace("{% endraw %}", ""), writer="html")["body"]
    assert html.count("<table") == 2 and "<td>deltastep_gpu default</td>" in html
    assert "<td>ny (10, 40)</td>" in html and "<td>scipy_dijkstra default (50)</td>" in html
    assert "<td>10x</td>" in html and "<td>5 (0.5)</td>" in html
    assert "<td>k4 (10, 40)</td>" in html and html.count("<td>n/a</td>") >= 3  # APSP: no GPU run
    assert "No timed runs yet" in landing_rst({}, "")


def test_graph_family_is_the_generator_without_its_size():
    random16 = {"meta": {"generator": "random", "params": {"n": 16, "k": 3, "wmax": 20, "seed": 1, "wmin": 1}}}
    random32 = {"meta": {"generator": "random", "params": {"n": 32, "k": 3, "wmax": 20, "seed": 2, "wmin": 1}}}
    assert graph_family(random16) == graph_family(random32) == "random wmax=20 wmin=1"
    assert graph_family({"meta": {"snap_header": {}}}) is None and graph_family({}) is None


def test_scaling_joins_only_sizes_of_one_generator():
    unrelated = pd.DataFrame([row("ny", "scipy_dijkstra", "cpu", 50.0, n=264346, m=733846),
                              row("gnutella", "scipy_dijkstra", "cpu", 5.0, n=36682, m=88328),
                              row("r16", "scipy_dijkstra", "cpu", 1.0, n=16, family="random wmax=20")])
    assert scaling_families(unrelated) == []  # road network, SNAP graph, one random size: no curve
    sweep = pd.concat([unrelated, pd.DataFrame([row("r32", "scipy_dijkstra", "cpu", 2.0, n=32,
                                                    family="random wmax=20")])])
    assert scaling_families(sweep) == ["random wmax=20"]


def test_comparison_with_published_figures():
    from docutils.core import publish_parts

    from gpusp.report.papers import compare, papers_rst, shape_lines

    published = [
        {"paper": "000", "source": "Table 1", "graph": "ny", "solver": "bellmanford_naive", "params": {},
         "value": 2.0, "unit": "s", "hardware": "GTX 1050"},
        {"paper": "000", "source": "Table 1", "graph": "ny", "solver": "bellmanford_flag", "params": {},
         "value": 500.0, "unit": "ms", "hardware": "GTX 1050"},
        {"paper": "000", "source": "Table 1", "graph": "ny", "solver": "bellmanford_stride", "params": {"grid": 0},
         "value": 900.0, "unit": "ms", "hardware": "GTX 1050"},
        {"paper": "002", "source": "Figure 4", "graph": "r80", "solver": "blockedfw_v21",
         "params": {"block_size": 16}, "value": 1.0, "unit": "ms"},  # not in this sweep: left out
        {"paper": "000", "source": "Table 1", "graph": "bay", "solver": "bellmanford_naive", "params": {},
         "value": 1.0, "unit": "s"},  # graph not measured: left out
    ]
    summary = pd.DataFrame([row("ny", "bellmanford_naive", "gpu", 100.0, params="block-32"),
                            row("ny", "bellmanford_flag", "gpu", 40.0, params="rounds-early"),
                            row("ny", "bellmanford_stride", "gpu", 30.0, params="default"),  # grid 0 = default
                            row("r80", "blockedfw_v21", "gpu", 1.0, problem="apsp", params="block_size-32")])
    table = compare(summary, published)
    assert list(table["solver"]) == ["bellmanford_naive", "bellmanford_flag", "bellmanford_stride"]
    assert table["ratio"].tolist() == pytest.approx([20.0, 12.5, 30.0])  # paper time / ours, units converted
    lines = shape_lines(table)
    assert lines == ["paper 000 Table 1, ny: fastest there bellmanford_flag, here bellmanford_stride (differ); "
                     "rank correlation +0.50 over 3 variants"]
    html = publish_parts(papers_rst(table), writer="html")["body"]
    assert "<h1" in html or "Paper 000" in html
    assert html.count("<tr>") == 4 and "GTX 1050" in html and "fastest there bellmanford_flag" in html
    assert compare(summary, []).empty and papers_rst(compare(summary, [])) == ""


def test_ceiling_fraction_counts_the_add_mins_a_run_did():
    """A Floyd-Warshall that skips pivots does fewer add-mins than n^3: its fraction of the ceiling is of those."""
    from gpusp.report.aggregate import summary_table

    base = dict(graph="g30", problem="apsp", solver="blockedfw_fast", family="blockedfw", variant="fast", device="gpu",
                paper="-", n=1000, m=4000, graph_family="g30", source=None, compile_s=0.0, h2d_ms=1.0, d2h_ms=1.0,
                iterations=16, validated=True, status="ok", mode="gpu", clock="cuda-event", gpu="H200", reason=None)
    samples = pd.DataFrame([dict(base, params="pivots-all", time_ms=100.0, relaxations=1024 ** 3),
                            dict(base, params="pivots-useful", time_ms=25.0, relaxations=1024 ** 2 * 256),
                            dict(base, solver="multisource_fast", params="default", time_ms=10.0, relaxations=None)])
    table = summary_table(samples, ceiling=1e10).set_index("params")
    full, pruned, other = table.loc["pivots-all"], table.loc["pivots-useful"], table.loc["default"]
    assert full["ceiling_fraction"] == pytest.approx(1024 ** 3 / 0.1 / 1e10)  # n_pad^3 done
    assert pruned["ceiling_fraction"] == pytest.approx(1024 ** 2 * 256 / 0.025 / 1e10)  # the pruned work, not n^3
    assert pruned["n3_per_s"] == pytest.approx(1000 ** 3 / 0.025)  # the n^3-equivalent rate stays
    assert other["ceiling_fraction"] == pytest.approx(other["n3_per_s"] / 1e10)  # no counter: n^3
