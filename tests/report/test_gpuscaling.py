"""Multi-GPU scaling (gpusp.report.gpuscaling and the figure gpu_scaling), from made-up sample tables: speed-up and
efficiency against the fewest GPUs measured, per (graph, solver, other parameters, machine) and nothing pooled."""

from __future__ import annotations

import pandas as pd
import pytest
from test_report import H100, H200, runs, table, texts

from gpusp.report import plots
from gpusp.report.aggregate import summary_table
from gpusp.report.gpuscaling import SCALING_COLUMNS, gpu_scaling_table

FW = "blockedfw_dist"


def scaling(graph="g", **fixed):
    """The samples of FW on ``graph`` at 1, 2 and 4 GPUs: 100, 60 and 40 ms (two samples each)."""
    return [runs(graph, FW, "gpu", [ms, ms], problem="apsp", params=f"gpus-{g}", gpus=g, **fixed)
            for g, ms in ((1, 100.0), (2, 60.0), (4, 40.0))]


def test_speedup_and_efficiency_are_against_the_fewest_gpus():
    out = gpu_scaling_table(table(*scaling(tile=32)))
    assert list(out.columns) == SCALING_COLUMNS
    assert out["gpus"].tolist() == [1, 2, 4] and (out["base_gpus"] == 1).all() and (out["base_ms"] == 100).all()
    assert out["speedup"].tolist() == pytest.approx([1.0, 100 / 60, 2.5])
    assert out["efficiency"].tolist() == pytest.approx([1.0, 100 / 60 / 2, 2.5 / 4])
    assert (out["params"] == "tile=32").all() and (out["samples"] == 2).all() and out["validated"].all()


def test_the_fewest_gpus_measured_is_the_base_when_one_gpu_was_not():
    rows = table(*[runs("g", FW, "gpu", [ms], problem="apsp", gpus=g) for g, ms in ((2, 80.0), (8, 30.0))])
    out = gpu_scaling_table(rows).set_index("gpus")
    assert out.loc[8, "speedup"] == pytest.approx(80 / 30) and out.loc[8, "efficiency"] == pytest.approx(80 / 30 / 4)
    assert out.loc[2, "efficiency"] == pytest.approx(1.0)


def test_configurations_graphs_and_machines_scale_apart():
    """Other parameters, graphs and GPU models each make their own curve; a configuration at one GPU count, a solver
    without a gpus parameter and an untimed row make none."""
    rows = table(*scaling(tile=32), *scaling(tile=16), *scaling(tile=32, graph="h"), *scaling(tile=32, gpu=H100),
                 runs("g", FW, "gpu", [5.0], problem="apsp", gpus=2, tile=8),
                 runs("g", "blockedfw_v21", "gpu", [7.0, 7.0], problem="apsp", tile=32),
                 runs("g", FW, "gpu", [float("nan")], problem="apsp", gpus=8, tile=32))
    out = gpu_scaling_table(rows)
    curves = out.groupby(["graph", "params", "gpu"])["gpus"].apply(list).to_dict()
    assert curves == {("g", "tile=16", H200): [1, 2, 4], ("g", "tile=32", H100): [1, 2, 4],
                      ("g", "tile=32", H200): [1, 2, 4], ("h", "tile=32", H200): [1, 2, 4]}
    assert out["speedup"].max() == pytest.approx(2.5)


def test_no_gpus_column_or_one_count_gives_an_empty_table_with_its_columns():
    plain = table(runs("g", "dijkstra_cpu", "cpu", [1.0, 2.0]))
    one = table(runs("g", FW, "gpu", [1.0], gpus=2), runs("g", FW, "gpu", [2.0], gpus=2))
    for rows in (plain, one, plain.iloc[:0]):
        out = gpu_scaling_table(rows)
        assert out.empty and list(out.columns) == SCALING_COLUMNS


def test_not_validated_at_one_count_is_not_validated():
    groups = scaling()
    groups[1] = runs("g", FW, "gpu", [60.0, 60.0], problem="apsp", validated=False, gpus=2)
    out = gpu_scaling_table(table(*groups)).set_index("gpus")
    assert out["validated"].tolist() == [True, False, True]


def test_the_figure_draws_speedup_and_efficiency_per_graph_and_machine(tmp_path):
    samples = table(*scaling(tile=32), *scaling(tile=32, gpu=H100), runs("g", "scipy_apsp", "cpu", [500.0],
                                                                         problem="apsp"))
    fig = plots.figure("gpu_scaling", samples, summary_table(samples))
    words = texts(fig)
    assert sum("APSP · g" in w for w in words) == 4  # two panels for each GPU model
    assert any(H100 in w for w in words) and any(H200 in w for w in words)
    assert "GPUs" in words and "parallel efficiency" in words and "ideal" in words
    speedup_axis = fig.axes[0]
    curve = next(line for line in speedup_axis.get_lines() if line.get_label() != "ideal")
    assert list(curve.get_xdata()) == [1, 2, 4] and list(curve.get_ydata()) == pytest.approx([1.0, 100 / 60, 2.5])
    written = plots.make_figures(samples, summary_table(samples), tmp_path)
    assert (tmp_path / "gpu_scaling.png").read_bytes()[:4] == b"\x89PNG" and "gpu_scaling" in written


def test_without_several_gpu_counts_the_figure_says_why():
    samples = table(runs("g", "dijkstra_cpu", "cpu", [1.0, 2.0]))
    reason = plots.figure("gpu_scaling", samples, summary_table(samples))
    assert isinstance(reason, str) and "gpus" in reason


def test_the_table_reads_the_records_resolved_parameters():
    """samples_table's param_ columns come from each record's resolved parameters: a default gpus=1 record
    (label 'default') joins the curve of its gpus=2 sibling."""
    from gpusp.report.aggregate import samples_table

    def record(gpus, ms):
        return {"graph": {"name": "g", "n": 4, "m": 6, "checksum": "c", "meta": {}}, "solver": FW,
                "family": "blockedfw", "variant": "dist", "problem": "apsp", "device": "gpu", "paper": "-",
                "params": {"gpus": gpus, "tile": 32},
                "params_label": "default" if gpus == 1 else f"gpus-{gpus}", "status": "ok", "code_hash": "h",
                "git_commit": "x", "created": "t", "summary": {"validated": True},
                "machine": {"mode": "gpu", "gpu": H200, "cpu_model": "cpu", "gpus": [{"id": "0", "name": H200}]},
                "runs": [{"source": None, "counters": {}, "timings": {"samples_ms": [ms], "clock": "cuda-events",
                                                                       "compile_s": 0, "h2d_ms": 0, "d2h_ms": 0}}]}

    out = gpu_scaling_table(samples_table([record(1, 90.0), record(2, 50.0)]))
    assert out["gpus"].tolist() == [1, 2] and out["speedup"].tolist() == pytest.approx([1.0, 1.8])
    assert isinstance(out, pd.DataFrame) and (out["params"] == "tile=32").all()
