"""`gpusp bench`: a config's job matrix without Snakemake, through the job runner (simulator here)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import yaml

from gpusp import cli
from gpusp.bench import run_config

REPO = Path(__file__).parents[1]
TINY = REPO / "tests" / "data" / "workflow-tiny.yaml"


def test_bench_in_process_matches_the_matrix(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)  # the tiny config names its graph file relative to the repository
    config = {**yaml.safe_load(TINY.read_text()), "in_process": True}
    lines = []
    written = run_config(config, tmp_path, log=lines.append)
    summary = pd.read_csv(written["summary.csv"])
    assert len(summary) == 6 and (summary["status"] == "ok").all() and summary["validated"].all()
    assert set(summary["graph"]) == {"tiny", "rand16"} and (summary["mode"] == "sim").all()
    assert "Fastest solver per graph" in written["landing.rst"].read_text()
    assert len(list((tmp_path / "runs").rglob("*.json"))) == 6
    assert sum(line.startswith("== ") for line in lines) == 2  # one header line per graph


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
