"""The report's first page (fastest solver per graph, one block per machine), the one definition of a speed-up,
the refusal of records from mixed hardware, all-or-nothing tables, the scaling figure's choice of graphs, and a batched
solver's per-source time shown as a share of its batch, its preprocessing apart."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gpusp import cli
from gpusp.report.aggregate import graph_family, landing_rst, landing_tables
from gpusp.report.plots import scaling_families
from test_provenance import copy_sweep, sweep  # noqa: F401  (the records of a small sweep, made once)


H200, A100, XEON, EPYC = "NVIDIA H200", "NVIDIA A100-SXM4-80GB", "Intel(R) Xeon(R) Platinum 8480+", "AMD EPYC 7763"


def row(graph, solver, device, ms, validated=True, mode="gpu", problem="sssp", params="default", n=10, m=40,
        family=None, gpu=H200, cpu=XEON):
    return dict(graph=graph, problem=problem, solver=solver, device=device, params=params, median_ms=ms,
                iqr_ms=ms / 10, validated=validated, mode=mode if device == "gpu" else "cpu", n=n, m=m,
                graph_family=family, gpu=gpu if device == "gpu" else "-", cpu=cpu)


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


@pytest.mark.parametrize("side", ["gpu", "cpu", None])
def test_landing_marks_a_ratio_whose_side_is_too_spread_as_noisy(side):
    from docutils.core import publish_parts

    cpu, gpu = row("ny", "gapbs_sssp", "cpu", 18.0, params="threads-16"), row("ny", "deltastep_gpu", "gpu", 6.0)
    if side:  # an IQR over half the median: a busy host
        (cpu if side == "cpu" else gpu)["iqr_ms"] = 0.6 * (cpu if side == "cpu" else gpu)["median_ms"]
    tables = landing_tables(pd.DataFrame([cpu, gpu]))
    assert bool(tables["sssp"].iloc[0]["noisy"]) is (side is not None)
    html = publish_parts(landing_rst(tables).replace("{% raw %}", "").replace("{% endraw %}", ""),
                         writer="html")["body"]
    assert ("<td>3.00x (noisy)</td>" in html) is (side is not None) and ("<td>3.00x</td>" in html) is (side is None)


def peer_summary(**gunrock_status):
    """One graph on one H200: our deltastep_gpu, Gunrock (a validated setting, and a faster one that failed
    validation), GAPBS and SciPy; ``gunrock_status`` overrides the validated setting's verdict."""
    valid = {"validated": True, "status": "ok", **gunrock_status}
    return pd.DataFrame([
        {**row("ny", "scipy_dijkstra", "cpu", 50.0), "status": "ok"},
        {**row("ny", "gapbs_sssp", "cpu", 4.0, params="threads-16"), "status": "ok"},
        {**row("ny", "deltastep_gpu", "gpu", 5.0), "status": "ok"},
        {**row("ny", "gunrock_sssp", "gpu", 61.4, params="load_balance-block_mapped"), "iqr_ms": 22.4, **valid},
        {**row("ny", "gunrock_sssp", "gpu", 0.5, validated=False, params="load_balance-thread_mapped"),
         "status": "failed-validation"},
    ])


def test_landing_shows_the_fastest_validated_gpu_peer_beside_ours():
    from docutils.core import publish_parts

    ny = landing_tables(peer_summary())["sssp"].iloc[0]
    assert ny["gpu_solver"] == "deltastep_gpu default"  # a peer is the comparison, never our fastest GPU solver
    assert ny["peer"] == "gunrock_sssp load_balance-block_mapped"  # the faster setting failed validation
    assert ny["peer_median_ms"] == 61.4 and ny["peer_over_ours"] == pytest.approx(61.4 / 5.0)
    assert ny["cpu_baseline"] == "gapbs_sssp threads-16" and ny["gpu_speedup"] == pytest.approx(4.0 / 5.0)
    html = publish_parts(landing_rst({"sssp": pd.DataFrame([ny])}).replace("{% raw %}", "").replace(
        "{% endraw %}", ""), writer="html", settings_overrides={"halt_level": 2})["body"]
    assert '<th class="head">GPU peer, median ms (IQR)</th>' in html and '<th class="head">GPU peer / ours</th>' in html
    assert "<td>gunrock_sssp load_balance-block_mapped, 61.4 (22.4)</td>" in html
    assert "<td>12.3x</td>" in html and "<td>0.800x</td>" in html
    noisy = peer_summary().assign(iqr_ms=lambda f: f["iqr_ms"].where(f["solver"] != "gunrock_sssp", 40.0))
    text = landing_rst(landing_tables(noisy))  # Gunrock's IQR over half its median: the ratio is flagged
    assert "- 12.3x (noisy)" in text and "- 0.800x\n" in text


@pytest.mark.parametrize("verdict", [{"validated": False, "status": "failed-validation"},
                                     {"validated": False, "status": "ok"}])
def test_landing_names_a_gpu_peer_none_of_whose_settings_validated(verdict):
    ny = landing_tables(peer_summary(**verdict))["sssp"].iloc[0]
    failed = verdict["status"] == "failed-validation"
    assert ny["peer"] == ("gunrock_sssp: every setting failed validation" if failed
                          else "gunrock_sssp: no setting validated")
    assert pd.isna(ny.get("peer_median_ms")) and pd.isna(ny.get("peer_over_ours"))
    assert ny["gpu_solver"] == "deltastep_gpu default"
    text = landing_rst({"sssp": pd.DataFrame([ny])})
    assert f"- {ny['peer']}" in text


def test_landing_without_a_gpu_peer_says_n_a():
    from docutils.core import publish_parts

    tables = landing_tables(peer_summary()[lambda f: f["solver"] != "gunrock_sssp"])
    ny = tables["sssp"].iloc[0]
    assert pd.isna(ny.get("peer")) and pd.isna(ny.get("peer_over_ours"))
    html = publish_parts(landing_rst(tables).replace("{% raw %}", "").replace("{% endraw %}", ""),
                         writer="html")["body"]
    cells = html[html.index("<td>ny (10, 40)</td>"):].split("</tr>")[0].split("<td>")[1:]
    assert [c.removesuffix("</td>\n").removesuffix("</td>") for c in cells] == [
        "ny (10, 40)", "deltastep_gpu default", "5 (0.5)", "gapbs_sssp threads-16, 4 (0.4)", "n/a", H200, XEON,
        "0.800x", "n/a", "yes", "GPU"]


def test_landing_keeps_a_graph_that_only_the_gpu_peer_ran_on_its_gpu():
    summary = pd.DataFrame([{**row("ny", "gunrock_sssp", "gpu", 6.0, params="load_balance-block_mapped"),
                             "status": "ok"}])
    ny = landing_tables(summary)["sssp"].iloc[0]
    assert ny["gpu_solver"] == "none: no GPU solver of the config ran on this graph"
    assert ny["peer"] == "gunrock_sssp load_balance-block_mapped" and pd.isna(ny.get("peer_over_ours"))


def test_landing_says_why_a_graph_has_no_gpu_row_and_what_its_cpu_check_gave():
    summary = pd.DataFrame([
        row("road", "scipy_dijkstra", "cpu", 5.0), row("road", "dijkstra_cpu", "cpu", 9.0, validated=False),
        dict(graph="road", problem="sssp", solver="deltastep_cluster", params="default", device="gpu", n=10, m=40,
             status="skipped", reason="deltastep_cluster: 10 vertices need more shared memory"),
        row("snap", "scipy_dijkstra", "cpu", 1.0, validated=False)])
    table = landing_tables(summary)["sssp"].set_index("graph")
    assert table.loc["road", "gpu_solver"] == ("none timed: deltastep_cluster default: deltastep_cluster: 10 "
                                               "vertices need more shared memory")
    assert table.loc["road", "validated"] == "yes (CPU)" and table.loc["snap", "validated"] == "no (CPU)"
    assert table.loc["snap", "gpu_solver"] == "none: no GPU solver of the config ran on this graph"


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
    assert "<td>ny (10, 40)</td>" in html and "<td>scipy_dijkstra default, 50 (5)</td>" in html
    assert "<td>10.0x</td>" in html and "<td>5 (0.5)</td>" in html
    assert "<td>k4 (10, 40)</td>" in html and html.count("<td>n/a</td>") >= 3  # APSP: no GPU run
    assert f"<td>{H200}</td>" in html and html.count(f"<td>{XEON}</td>") == 2  # every row names its GPU and CPU
    assert "No timed runs yet" in landing_rst({}, "")


def test_graph_family_is_the_generator_without_its_size():
    random16 = {"meta": {"generator": "random", "params": {"n": 16, "k": 3, "wmax": 20, "seed": 1, "wmin": 1}}}
    random32 = {"meta": {"generator": "random", "params": {"n": 32, "k": 3, "wmax": 20, "seed": 2, "wmin": 1}}}
    assert graph_family(random16) == graph_family(random32) == "random wmax=20 wmin=1"
    assert graph_family({"meta": {"snap_header": {}}}) is None and graph_family({}) is None
    assert graph_family({"meta": {"dataset": "USA-road-d.NY"}}) == graph_family({"meta": {"dataset": "USA-road-d.USA"}})
    kron = {"meta": {"generator": "kron", "params": {"scale": 20, "offsets": "auto", "wmin": 1, "wmax": 255}}}
    assert graph_family(kron) == "kron wmax=255 wmin=1"  # the offsets dtype is storage, not part of the family
    assert graph_family({"meta": {"dataset": "USA-road-d.BAY"}}) == "USA-road-d"
    assert graph_family({"meta": {"dataset": "p2p-Gnutella04"}}) == "p2p-Gnutella"
    assert graph_family({"meta": {"dataset": "wiki-Vote"}}) == "wiki-Vote"


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
        {"paper": "000", "source": "Table 1", "graph": "bay", "solver": "bellmanford_naive",
         "params": {"rounds": "fixed"}, "value": 1.0, "unit": "s"},  # a printed cell of a measured table: not run
    ]
    summary = pd.DataFrame([row("ny", "bellmanford_naive", "gpu", 100.0, params="block-32"),
                            row("ny", "bellmanford_flag", "gpu", 40.0, params="rounds-early"),
                            row("ny", "bellmanford_stride", "gpu", 30.0, params="default"),  # grid 0 = default
                            row("r80", "blockedfw_v21", "gpu", 1.0, problem="apsp", params="block_size-32")])
    table = compare(summary, published)
    assert list(zip(table["graph"], table["solver"], table["status"])) == [
        ("ny", "bellmanford_naive", "measured"), ("ny", "bellmanford_flag", "measured"),
        ("ny", "bellmanford_stride", "measured"), ("bay", "bellmanford_naive", "not run")]
    assert table["ratio"].tolist()[:3] == pytest.approx([20.0, 12.5, 30.0])  # paper time / ours, units converted
    assert table.iloc[3]["params"] == "rounds-fixed"
    assert table.iloc[3][["ours_ms", "ratio"]].isna().all()
    lines = shape_lines(table)
    assert lines == ["paper 000 Table 1, ny: fastest there bellmanford_flag, here bellmanford_stride (differ); "
                     "rank correlation +0.50 over 3 variants"]
    html = publish_parts(papers_rst(table), writer="html")["body"]
    assert "<h1" in html or "Paper 000" in html
    assert html.count("<tr>") == 5 and "GTX 1050" in html and "fastest there bellmanford_flag" in html
    assert "not run" in html
    assert compare(summary, []).empty and papers_rst(compare(summary, [])) == ""


def test_ceiling_fraction_counts_the_add_mins_a_run_did():
    """A Floyd-Warshall that skips pivots does fewer add-mins than n^3: its fraction of the ceiling is of those."""
    from gpusp.report.aggregate import summary_table

    base = dict(graph="g30", problem="apsp", solver="blockedfw_fast", family="blockedfw", variant="fast", device="gpu",
                paper="-", n=1000, m=4000, graph_family="g30", source=None, compile_s=0.0, h2d_ms=1.0, d2h_ms=1.0,
                iterations=16, validated=True, status="ok", mode="gpu", clock="cuda-event", gpu="H200", cpu=XEON,
                hardware="H200", reason=None)
    samples = pd.DataFrame([dict(base, params="pivots-all", time_ms=100.0, relaxations=1024 ** 3),
                            dict(base, params="pivots-useful", time_ms=25.0, relaxations=1024 ** 2 * 256),
                            dict(base, solver="multisource_fast", params="default", time_ms=10.0, relaxations=None)])
    table = summary_table(samples, ceiling=1e10).set_index("params")
    full, pruned, other = table.loc["pivots-all"], table.loc["pivots-useful"], table.loc["default"]
    assert full["ceiling_fraction"] == pytest.approx(1024 ** 3 / 0.1 / 1e10)  # n_pad^3 done
    assert pruned["ceiling_fraction"] == pytest.approx(1024 ** 2 * 256 / 0.025 / 1e10)  # the pruned work, not n^3
    assert pruned["n3_per_s"] == pytest.approx(1000 ** 3 / 0.025)  # the n^3-equivalent rate stays
    assert other["ceiling_fraction"] == pytest.approx(other["n3_per_s"] / 1e10)  # no counter: n^3


# --- one definition of a speed-up, one block per machine ---------------------------------------------------------
def sample(graph, solver, device, ms, gpu=H200, cpu=XEON, validated=True, params="default", problem="sssp"):
    """Samples of one configuration (three, around ``ms``) as samples_table writes them."""
    return [dict(graph=graph, problem=problem, solver=solver, family=solver, variant="-", device=device, paper="-",
                 params=params, n=10, m=40, graph_family=None, source=0, sample=i, time_ms=ms * f, compile_s=0.0,
                 h2d_ms=0.0, d2h_ms=0.0, iterations=1, relaxations=40, validated=validated, status="ok",
                 reason=None, clock="wall", mode="gpu" if device == "gpu" else "cpu",
                 gpu=gpu if device == "gpu" else "-", cpu=cpu, hardware=gpu if device == "gpu" else cpu)
            for i, f in enumerate((0.9, 1.0, 1.1))]


def mixed_summary():
    from gpusp.report.aggregate import summary_table

    samples = pd.DataFrame(
        sample("ny", "scipy_dijkstra", "cpu", 50.0) + sample("ny", "gapbs_sssp", "cpu", 4.0)
        + sample("ny", "bellmanford_cpu", "cpu", 2.0, validated=False)  # faster, but a wrong answer
        + sample("ny", "deltastep_gpu", "gpu", 1.0)
        + sample("ny", "scipy_dijkstra", "cpu", 30.0, cpu=EPYC) + sample("ny", "deltastep_gpu", "gpu", 3.0, A100, EPYC)
        + sample("ny", "deltastep_gpu", "gpu", 0.5, "NVIDIA H100", "Grace"))  # its host CPU ran no baseline
    return summary_table(samples)


def test_a_speed_up_divides_by_the_fastest_validated_cpu_baseline_of_the_same_host():
    summary = mixed_summary().set_index(["solver", "gpu", "cpu"])
    h200 = summary.loc[("deltastep_gpu", H200, XEON)]
    assert h200["cpu_baseline"] == "gapbs_sssp default" and h200["speedup_vs_cpu"] == pytest.approx(4.0)
    a100 = summary.loc[("deltastep_gpu", A100, EPYC)]
    assert a100["cpu_baseline"] == "scipy_dijkstra default" and a100["speedup_vs_cpu"] == pytest.approx(10.0)
    assert np.isnan(summary.loc[("deltastep_gpu", "NVIDIA H100", "Grace"), "speedup_vs_cpu"])  # never across hosts
    assert summary.loc[("gapbs_sssp", "-", XEON), "speedup_vs_cpu"] == 1.0  # the baseline over itself
    assert summary.loc[("scipy_dijkstra", "-", XEON), "hardware"] == XEON


def test_the_first_page_has_one_block_per_gpu_model_and_the_same_speed_ups():
    from docutils.core import publish_parts

    tables = landing_tables(mixed_summary())
    sssp = tables["sssp"].set_index("gpu")
    assert sssp.loc[H200, "cpu"] == XEON and sssp.loc[H200, "gpu_speedup"] == pytest.approx(4.0)
    assert sssp.loc[A100, "cpu_baseline"] == "scipy_dijkstra default" and sssp.loc[A100, "gpu_speedup"] == 10.0
    assert np.isnan(sssp.loc["NVIDIA H100", "gpu_speedup"]) and pd.isna(sssp.loc["NVIDIA H100", "cpu_baseline"])
    text = landing_rst(tables)
    html = publish_parts(text.replace("{% raw %}", "").replace("{% endraw %}", ""), writer="html",
                         settings_overrides={"halt_level": 2})["body"]
    assert html.count('class="rubric"') == 3 and html.count("<table") == 3
    for gpu, cpu in ((H200, XEON), (A100, EPYC), ("NVIDIA H100", "Grace")):
        assert f"GPU {gpu}, host CPU {cpu}" in html and f"<td>{gpu}</td>" in html and f"<td>{cpu}</td>" in html
        assert f"SSSP: {gpu}" in html  # each table says whose it is
    assert "SIMULATED" not in html


def test_the_first_page_prints_readable_numbers_and_a_simulated_banner():
    from docutils.core import publish_parts

    summary = pd.DataFrame([row("ny", "dijkstra_cpu", "cpu", 0.0987),
                            row("ny", "edgebf_coo", "gpu", 11349.2, mode="sim", gpu="CUDA simulator")])
    text = landing_rst(landing_tables(summary))
    html = publish_parts(text.replace("{% raw %}", "").replace("{% endraw %}", ""), writer="html")["body"]
    assert "<td>11,349 (1,135)</td>" in html and "<td>dijkstra_cpu default, 0.0987 (0.00987)</td>" in html
    assert "<td>114,987x slower</td>" in html and "e-0" not in html and "e+0" not in html
    banner = html.index('class="admonition warning"')
    assert "SIMULATED" in html[banner:banner + 300] and banner < html.index("<table")


# --- no silent mixing, and tables that survive a failed aggregate -------------------------------------------------
TABLES = ("samples.csv", "samples.parquet", "summary.csv", "gpu_scaling.csv", "landing.rst", "environment.csv",
          "graphs.csv", "environment.rst", "records.tar.gz")


def relabel(solver_key, field, value):
    def change(key, rec):
        if key == solver_key:
            rec["machine"][field] = value
    return change


def snapshot(folder: Path) -> dict:
    return {p.name: p.read_bytes() for p in folder.iterdir()}


@pytest.fixture
def yesterday(sweep, tmp_path):
    """Tables an earlier aggregate wrote, and their bytes."""
    from gpusp.report.aggregate import write_tables

    tables = tmp_path / "tables"
    write_tables(copy_sweep(sweep, tmp_path / "good"), tables)
    before = snapshot(tables)
    assert set(before) == set(TABLES)
    return tables, before


def test_records_relabelled_as_another_gpu_are_refused_and_yesterdays_tables_stay(sweep, tmp_path, yesterday, capsys):
    tables, before = yesterday
    records = copy_sweep(sweep, tmp_path / "relabelled", relabel("bellmanford_naive/block-64", "gpu", A100))
    code = cli.main(["aggregate", *map(str, records), "--out-dir", str(tables)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1 and err[0].startswith("gpusp: error: records from different hardware, GPUs")
    assert A100 in err[0] and "CUDA simulator" in err[0] and "block-64.json" in err[0]
    assert "--allow-mixed-hardware" in err[0] and "allow_mixed_hardware" in err[0]
    assert snapshot(tables) == before  # byte-identical, and no temporary file left behind


def test_records_of_another_host_cpu_are_refused(sweep, tmp_path):
    from gpusp.errors import GpuspError
    from gpusp.report.aggregate import write_tables

    # a model no host reports: this host's own name (e.g. "AMD EPYC") may sort before or after it in the message
    other = "Relabelled CPU 7763"
    records = copy_sweep(sweep, tmp_path / "runs", relabel("scipy_dijkstra", "cpu_model", other))
    with pytest.raises(GpuspError, match=f"host CPUs: .*{other} \\(1 record, e.g. .*scipy_dijkstra"):
        write_tables(records, tmp_path / "tables")
    assert not (tmp_path / "tables").exists()


def test_mixed_hardware_when_asked_for_stays_apart_and_labelled(sweep, tmp_path, capsys):
    records = copy_sweep(sweep, tmp_path / "runs", relabel("bellmanford_naive/block-64", "gpu", A100))
    out = tmp_path / "tables"
    assert cli.main(["aggregate", *map(str, records), "--out-dir", str(out), "--allow-mixed-hardware"]) == 0
    summary = pd.read_csv(out / "summary.csv")
    gpu = summary[summary["device"] == "gpu"].set_index("params")
    assert gpu.loc["block-64", "gpu"] == A100 and "simulator" in gpu.loc["block-32", "gpu"]
    assert set(gpu["hardware"]) == set(gpu["gpu"]) and gpu["speedup_vs_cpu"].notna().all()  # both on this host CPU
    landing = (out / "landing.rst").read_text()
    assert f".. rubric:: GPU {A100}, host CPU" in landing and ".. rubric:: GPU CUDA simulator" in landing
    assert landing.count("   * - graph (n, m)") == 2  # a table per machine


def test_a_graph_name_with_two_graphs_behind_it_is_refused(sweep, tmp_path):
    from gpusp.errors import GpuspError
    from gpusp.report.aggregate import write_tables

    def other_graph(key, rec):
        if key == "dijkstra_cpu":
            rec["graph"]["checksum"] = "f" * 64

    with pytest.raises(GpuspError, match="graph tiny: records of different graphs under one name"):
        write_tables(copy_sweep(sweep, tmp_path / "runs", other_graph), tmp_path / "tables")


def test_a_failure_while_writing_leaves_every_earlier_table(sweep, tmp_path, yesterday, monkeypatch):
    """The archive is written after samples and summary: they must not replace yesterday's alone."""
    from gpusp.report import aggregate

    tables, before = yesterday

    def full_disk(paths, dest):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(aggregate, "write_records_archive", full_disk)
    records = copy_sweep(sweep, tmp_path / "today")
    records[0].write_text(records[0].read_text().replace('"trials": 2', '"trials": 3'))  # today's tables differ
    with pytest.raises(OSError, match="No space left"):
        aggregate.write_tables(records, tables)
    assert snapshot(tables) == before


# --- batched solvers and preprocessing: a per-source time that is a share of a batch says so --------------------
def record(solver, device, batch=None, per_source=None, sources=(0,), counters=None, validated=True):
    """A record as `gpusp solve --record` writes it (no solve run): ``batch`` the whole batch's samples of a
    batched solver (each source's samples then its share, batch / K, as the harness's batch protocol records them),
    else ``per_source`` one source's samples; ``counters`` every run's counters."""
    from gpusp.measure.harness import Timings

    k = len(sources)
    runs = []
    for i, source in enumerate(sources):
        if batch is not None:
            timings = Timings(samples_ms=[ms / k for ms in batch], warmup_ms=[], compile_s=0.0,
                              h2d_ms=1.0 if i == 0 else 0.0, d2h_ms=0.1, clock="cuda-events", batch_sources=k,
                              batch_ms=list(batch))
        else:
            timings = Timings(samples_ms=list(per_source), warmup_ms=[], compile_s=0.0, h2d_ms=0.0, d2h_ms=0.0,
                              clock="cuda-events" if device == "gpu" else "wall")
        runs.append({"source": source, "timings": timings.to_dict(),
                     "counters": {"iterations": 3, **(counters or {}), **({"batch_sources": k} if batch else {})},
                     "reachable": 10, "validation": {"ok": validated}})
    machine = {"mode": "gpu", "host": "node1", "cpu": "x86_64", "cpu_model": XEON, "cpu_cores": 16, "gpu": H200}
    return {"schema": 1, "created": "2000-01-01T00:00:00+00:00", "solver": solver, "problem": "sssp",
            "family": solver.split("_")[0], "variant": solver.split("_", 1)[1], "device": device, "paper": "-",
            "params": {}, "params_label": "default", "status": "ok", "reason": None,
            "graph": {"name": "ny", "n": 10, "m": 40, "weight_kind": "real", "weight_dtype": "int32",
                      "checksum": "c" * 64, "meta": {}},
            "graph_label": "ny", "trials": len(batch or per_source), "warmup": 1, "end_to_end": 0, "runs": runs,
            "summary": {"validated": validated, "sources": k}, "machine": machine, "peer": None,
            "git_commit": "abc", "code_hash": f"hash-{solver}"}


PHAST = {"preprocess_s": 53.8, "preprocess_bytes": 37_000_000, "upward_ms": 0.4, "batch": 4}


@pytest.fixture
def batched_tables(tmp_path):
    """Tables of one graph on one H200: PHAST (4 sources in one batch, with preprocessing), multisource_sssp (4 in
    one batch), deltastep_gpu (one source at a time) and GAPBS on the host CPU."""
    records = {"phast_gpu": record("phast_gpu", "gpu", batch=[0.8, 1.0, 1.2], sources=(0, 3, 5, 7), counters=PHAST),
               "multisource_sssp": {**record("multisource_sssp", "gpu", batch=[2.0, 2.4, 2.8], sources=(0, 3, 5, 7),
                                             counters={"relaxations": 4_800_000}),
                                    "all_trees": {"sources": 4, "timing": {"end_to_end_s": 12.5}}},
               "deltastep_gpu": record("deltastep_gpu", "gpu", per_source=[5.0, 5.4, 5.8], sources=(0, 3),
                                       counters={"relaxations": 1_080_000}),
               "gapbs_sssp": record("gapbs_sssp", "cpu", per_source=[4.0, 4.03, 4.1], sources=(0, 3))}
    return written_tables(tmp_path, records)


def written_tables(tmp_path, records: dict) -> Path:
    """``records`` (solver -> record) written as a sweep's runs of graph ny and aggregated into tmp_path/tables."""
    from gpusp.report.aggregate import write_tables

    paths = []
    for solver, rec in records.items():
        path = tmp_path / "runs" / "ny" / solver / "default.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(rec))
        paths.append(path)
    write_tables(paths, tmp_path / "tables")
    return tmp_path / "tables"


def test_summary_carries_the_batch_and_the_preprocessing_of_batched_solvers(batched_tables):
    summary = pd.read_csv(batched_tables / "summary.csv").set_index("solver")
    for column in ("batch_sources", "batch_median_ms", "preprocess_s", "preprocess_bytes"):
        assert column in summary.columns
    phast, multi, delta = summary.loc["phast_gpu"], summary.loc["multisource_sssp"], summary.loc["deltastep_gpu"]
    assert phast["median_ms"] == pytest.approx(0.25) and phast["sources"] == 4  # each source's share: 1.0 / 4
    assert phast["batch_sources"] == 4 and phast["batch_median_ms"] == pytest.approx(1.0)
    assert phast["preprocess_s"] == pytest.approx(53.8) and phast["preprocess_bytes"] == 37_000_000
    assert multi["median_ms"] == pytest.approx(0.6) and multi["batch_sources"] == 4
    assert multi["batch_median_ms"] == pytest.approx(2.4)
    assert np.isnan(multi["preprocess_s"]) and np.isnan(multi["preprocess_bytes"])  # no preprocessing
    for solver in ("deltastep_gpu", "gapbs_sssp"):  # one source per run: every batch column empty
        assert summary.loc[solver, ["batch_sources", "batch_median_ms", "preprocess_s",
                                    "preprocess_bytes"]].isna().all(), solver
    assert delta["median_ms"] == pytest.approx(5.4)
    # the batch's relaxations over the batch's time (2.4 ms), not over a source's share of it; one source's over its own
    assert multi["relaxations_per_s"] == pytest.approx(2e9) and delta["relaxations_per_s"] == pytest.approx(2e8)
    # an every-tree sweep's end to end beside its per-source share; nothing for a solver that did not sweep
    assert multi["all_trees_s"] == pytest.approx(12.5) and np.isnan(delta["all_trees_s"])
    text = pd.read_csv(batched_tables / "summary.csv", dtype=str).set_index("solver")
    assert text.loc["phast_gpu", "batch_sources"] == "4" and text.loc["phast_gpu", "preprocess_bytes"] == "37000000"


def test_samples_carry_each_batch_sample_beside_its_share(batched_tables):
    samples = pd.read_csv(batched_tables / "samples.csv")
    phast = samples[samples["solver"] == "phast_gpu"]
    assert len(phast) == 12 and set(phast["batch_sources"]) == {4}
    for _, s in phast.iterrows():  # trial i of every source: its share of batch sample i
        assert s["time_ms"] == pytest.approx(s["batch_ms"] / 4)
    assert sorted(set(phast["batch_ms"])) == pytest.approx([0.8, 1.0, 1.2])
    assert set(phast["preprocess_s"]) == {53.8} and set(phast["preprocess_bytes"]) == {37_000_000}
    alone = samples[samples["solver"] == "deltastep_gpu"]
    assert alone[["batch_sources", "batch_ms", "preprocess_s", "preprocess_bytes"]].isna().all().all()


def test_the_first_page_says_a_batched_time_is_a_share_and_names_the_preprocessing(batched_tables):
    from docutils.core import publish_parts

    landing = (batched_tables / "landing.rst").read_text()
    html = publish_parts(landing.replace("{% raw %}", "").replace("{% endraw %}", ""), writer="html",
                         settings_overrides={"halt_level": 2})["body"]
    cells = html[html.index("<td>ny (10, 40)</td>"):].split("</tr>")[0].split("<td>")[1:]
    cells = [c.removesuffix("</td>\n").removesuffix("</td>") for c in cells]
    assert cells[1] == "phast_gpu default + preprocessing 53.8 s, 37 MB (not in the times)"
    assert cells[2] == "0.25 (0.1), per source of a batch of 4 (batch 1 ms)"
    assert cells[3] == "gapbs_sssp default, 4.03 (0.075)"  # one source at a time: no note
    assert cells[7] == "16.1x (batched)"
    assert "Per source of a batch of K (batch T ms)" in html and "preprocess_s" in html and "batch_median_ms" in html


def test_a_first_page_without_batched_solvers_has_no_batch_notes():
    tables = landing_tables(peer_summary())
    assert not any(c.startswith(("gpu_batch", "gpu_preprocess")) for c in tables["sssp"].columns)
    text = landing_rst(tables)
    assert "batch" not in text and "preprocessing" not in text


def test_a_batched_gpu_solver_on_the_first_page_keeps_its_fields():
    summary = pd.DataFrame([row("ny", "gapbs_sssp", "cpu", 4.03, params="threads-16"),
                            {**row("ny", "multisource_sssp", "gpu", 0.62), "batch_sources": 1024,
                             "batch_median_ms": 634.9, "preprocess_s": np.nan, "preprocess_bytes": pd.NA},
                            {**row("ny", "deltastep_gpu", "gpu", 5.4), "batch_sources": np.nan}])
    ny = landing_tables(summary)["sssp"].iloc[0]
    assert ny["gpu_solver"] == "multisource_sssp default" and ny["gpu_batch_sources"] == 1024
    assert ny["gpu_batch_median_ms"] == 634.9 and "gpu_preprocess_s" not in ny and "cpu_batch_sources" not in ny
    text = landing_rst(landing_tables(summary))
    assert "- 0.62 (0.062), per source of a batch of 1,024 (batch 635 ms)\n" in text
    assert "- multisource_sssp default\n" in text and "- 6.50x (batched)\n" in text


def test_list_counters_go_to_the_samples_as_numbers_and_read_back_entry_by_entry(tmp_path):
    """edgebf_dense's streamed pieces: each run's piece_relaxations / piece_improvements in samples.csv as numbers
    separated by spaces, empty for a solver without them; the findings' metric ``name[i]`` reads entry i."""
    from gpusp.report.metrics import metric_values

    records = {"edgebf_dense": record("edgebf_dense", "gpu", per_source=[1.0, 1.1, 1.2], sources=(0, 7),
                                      counters={"piece_relaxations": [10, 0], "piece_improvements": [9, 0]}),
               "deltastep_gpu": record("deltastep_gpu", "gpu", per_source=[5.0], sources=(0,))}
    samples = pd.read_csv(written_tables(tmp_path, records) / "samples.csv")
    dense = samples[samples["solver"] == "edgebf_dense"]
    assert list(dense["piece_improvements"]) == ["9 0"] * 6 and set(dense["piece_relaxations"]) == {"10 0"}
    alone = samples[samples["solver"] == "deltastep_gpu"]
    assert alone[["piece_relaxations", "piece_improvements"]].isna().all().all()
    values, strata, n = metric_values(dense, "piece_improvements[0]")
    assert list(values) == [9.0] * 6 and list(strata) == [0, 0, 0, 7, 7, 7] and n == 6
    assert list(metric_values(dense, "piece_relaxations[1]")[0]) == [0.0] * 6
    with pytest.raises(ValueError, match="fewer than 3 entries"):
        metric_values(dense, "piece_improvements[2]")
    assert len(metric_values(alone, "piece_improvements[0]")[0]) == 0
