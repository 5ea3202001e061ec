"""`gpusp bench`: a config's job matrix without Snakemake, through the job runner (simulator here)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from gpusp import cli
from gpusp.bench import run_config
from gpusp.plan import load_config

REPO = Path(__file__).parents[1]
TINY = REPO / "tests" / "data" / "workflow-tiny.yaml"


def test_bench_in_process_matches_the_matrix(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)  # the tiny config names its graph file relative to the repository
    config = load_config(TINY, ["in_process=true"])
    config["solvers"][0]["trials"] = 1  # scipy_dijkstra's own trials; the others keep the top-level 2
    lines = []
    written = run_config(config, tmp_path, log=lines.append)
    summary = pd.read_csv(written["summary.csv"])
    assert len(summary) == 6 and (summary["status"] == "ok").all() and summary["validated"].all()
    assert set(summary["graph"]) == {"tiny", "rand16"}
    assert (summary["mode"] == summary["device"].map({"gpu": "sim", "cpu": "cpu"})).all()  # CPU times are real
    assert "Fastest solver per graph" in written["landing.rst"].read_text()
    records = [json.loads(p.read_text()) for p in sorted((tmp_path / "runs").rglob("*.json"))]
    assert len(records) == 6
    assert sum(line.startswith("== ") for line in lines) == 2  # one header line per graph
    # every solve gets its job's resolved values, as the workflow's solve command does
    assert {(r["solver"], r["trials"], r["warmup"], r["seed"]) for r in records} == {
        ("scipy_dijkstra", 1, 1, 1), ("dijkstra_cpu", 2, 1, 1), ("bellmanford_naive", 2, 1, 1)}


def test_bench_budget_runs_jobs_in_child_processes_and_records_overruns(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    config = yaml.safe_load(TINY.read_text())
    config["graphs"] = {"tiny": config["graphs"]["tiny"]}
    config["solvers"] = [{"name": "scipy_dijkstra"}, {"name": "bellmanford_naive", "time_budget_s": 0.01}]
    config_path = tmp_path / "bench.yaml"
    config_path.write_text(yaml.safe_dump(config))
    assert cli.main(["bench", "--config", str(config_path), "--out", str(tmp_path / "out"), "--set", "trials=1"]) == 0
    assert "summary.csv" in capsys.readouterr().out
    summary = pd.read_csv(tmp_path / "out" / "tables" / "summary.csv").set_index("solver")
    assert summary.loc["scipy_dijkstra", "status"] == "ok" and summary.loc["scipy_dijkstra", "samples"] == 2  # 1 x 2
    assert summary.loc["bellmanford_naive", "status"] == "skipped"
    assert "time budget of 0.01 s" in summary.loc["bellmanford_naive", "reason"]
    record = json.loads((tmp_path / "out" / "runs" / "tiny" / "bellmanford_naive" / "default.json").read_text())
    assert record["status"] == "skipped" and record["runs"] == []


@pytest.mark.parametrize("change, words", [({"trails": 1}, "top level: Additional properties are not allowed ('trails'"),
                                           ({"trials": "five"}, "key trials: 'five' is not of type 'integer'"),
                                           ({"time_budget_s": -1}, "key time_budget_s: ")],
                         ids=["misspelled-key", "wrong-type", "out-of-range"])
def test_bench_refuses_a_config_the_schema_refuses_before_writing_anything(tmp_path, capsys, change, words):
    config = {**yaml.safe_load(TINY.read_text()), **change}
    config_path = tmp_path / "bench.yaml"
    config_path.write_text(yaml.safe_dump(config))
    out = tmp_path / "out"
    assert cli.main(["bench", "--config", str(config_path), "--out", str(out)]) == cli.EXIT_ERROR
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and captured.err.startswith(f"gpusp: error: {config_path}: {words}")
    assert not out.exists()


def test_bench_refuses_a_bad_override(tmp_path, capsys):
    out = tmp_path / "out"
    assert cli.main(["bench", "--config", str(TINY), "--out", str(out), "--set", "warmup=-1"]) == cli.EXIT_ERROR
    assert capsys.readouterr().err.startswith(f"gpusp: error: {TINY} (with --set warmup): key warmup: -1 is less than "
                                              "the minimum of 0")
    assert not out.exists()


def _end_to_end_records(tmp_path):
    """harish_scattercheck on the tiny graph in the simulator, with and without end-to-end runs, recorded."""
    from gpusp.measure.job import SolveJob, run_job

    out = {}
    for runs in (0, 2):
        record = tmp_path / f"e2e-{runs}.json"
        done = run_job(SolveJob(graph=REPO / "src" / "gpusp" / "data" / "tiny.gr", solver="harish_scattercheck",
                                params={"block": 32}, sources=[0, 1], trials=2, warmup=0, end_to_end=runs,
                                validate=True, record=record, params_label=f"e2e-{runs}", graph_label="tiny"),
                       stream=None)
        assert done.status == "ok", done.reason
        out[runs] = record
    return out


def test_end_to_end_runs_are_recorded_per_source_only_when_asked_for(tmp_path, monkeypatch):
    import gpusp
    from gpusp.errors import SolverError
    from gpusp.solvers import registry

    built, load = [], registry.SolverSpec.load

    def counted(self):
        cls = load(self)
        return (lambda *a, **k: built.append(self.name) or cls(*a, **k)) if self.name == "harish_scattercheck" else cls

    monkeypatch.setattr(registry.SolverSpec, "load", counted)
    records = _end_to_end_records(tmp_path)
    assert len(built) == 1 + (1 + 2 * 2)  # one solver without, then one plus a fresh one per end-to-end run
    with_runs, without = (json.loads(records[k].read_text()) for k in (2, 0))
    assert with_runs["end_to_end"] == 2 and without["end_to_end"] == 0
    for run in with_runs["runs"]:
        t = run["timings"]
        assert len(t["end_to_end_ms"]) == 2 and all(ms > 0 for ms in t["end_to_end_ms"])
        assert t["end_to_end_clock"] == "wall-simulated" and len(t["samples_ms"]) == 2
    assert all(r["timings"]["end_to_end_ms"] == [] and r["timings"]["end_to_end_clock"] is None
               for r in without["runs"])
    with pytest.raises(SolverError, match="end_to_end"):
        gpusp.solve(gpusp.Graph.from_edges(2, [0], [1], [1]), "scipy_dijkstra", 0, end_to_end=-1)


def test_the_summary_carries_the_end_to_end_median_and_iqr(tmp_path):
    from gpusp.report.aggregate import write_tables

    records = _end_to_end_records(tmp_path)
    written = write_tables(list(records.values()), tmp_path / "tables")
    summary = pd.read_csv(written["summary.csv"]).set_index("params")
    assert {"end_to_end_median_ms", "end_to_end_iqr_ms", "end_to_end_samples"} <= set(summary.columns)
    rec = json.loads(records[2].read_text())
    whole = [ms for run in rec["runs"] for ms in run["timings"]["end_to_end_ms"]]
    assert summary.loc["e2e-2", "end_to_end_median_ms"] == pytest.approx(float(pd.Series(whole).median()))
    assert summary.loc["e2e-2", "end_to_end_iqr_ms"] == pytest.approx(
        float(pd.Series(whole).quantile(0.75) - pd.Series(whole).quantile(0.25)))
    assert summary.loc["e2e-2", "end_to_end_samples"] == 4 and summary.loc["e2e-2", "samples"] == 4
    assert pd.isna(summary.loc["e2e-0", "end_to_end_median_ms"]) and pd.isna(summary.loc["e2e-0", "end_to_end_iqr_ms"])
    samples = pd.read_csv(written["samples.csv"])
    assert samples["end_to_end_ms"].notna().sum() == 4 and samples["time_ms"].notna().sum() == 8
