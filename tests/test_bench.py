"""`gpusp bench`: the project's Snakemake workflow run in the bench process through Snakemake's API (simulator
here): the tables where bench users find them, a config refused in bench's words, a failed job that stops no other.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pandas as pd
import pytest
import snakemake.shell  # noqa: F401  (imported while collecting: see below)
import yaml

from gpusp import bench, cli

# Snakemake's shell binds its jobs' stdout to sys.stdout when it is first imported. Imported here, at collection, that
# is pytest's file for the whole session; first imported inside a test with capsys, it would be that test's buffer,
# which has no file descriptor for the jobs' processes and is closed after the test.

REPO = Path(__file__).parents[1]
TINY = REPO / "tests" / "data" / "workflow-tiny.yaml"
RING = {"generate": "ring", "params": {"n": 6}}

pytestmark = pytest.mark.timeout(600)


def write(tmp_path, config, name="bench.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def _records(folder: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((folder / "runs").rglob("*.json"))
            if not p.name.endswith(".verdict.json")]


def test_bench_runs_the_workflow_on_the_matrix(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)  # the tiny config names its graph file relative to the repository
    config = yaml.safe_load(TINY.read_text())
    config["solvers"][0]["trials"] = 1  # scipy_dijkstra's own trials; the others keep the top-level 2
    out = tmp_path / "out"
    environment = dict(os.environ)
    assert cli.main(["bench", "--config", str(write(tmp_path, config)), "--out", str(out)]) == 0
    assert dict(os.environ) == environment  # the Snakefile's variables and bench's PATH are gone again
    assert capsys.readouterr().out.startswith(f"wrote {out / 'tables'}/")
    summary = pd.read_csv(out / "tables" / "summary.csv")
    assert len(summary) == 6 and (summary["status"] == "ok").all() and summary["validated"].all()
    assert set(summary["graph"]) == {"tiny", "rand16"}
    assert (summary["mode"] == summary["device"].map({"gpu": "sim", "cpu": "cpu"})).all()  # CPU times are real
    assert "Fastest solver per graph" in (out / "tables" / "landing.rst").read_text()
    report = (out / "report.html").read_text()  # Snakemake's report, the figures and tables in it
    assert all(part in report for part in ("plot_results", "landing", "summary.csv", "Figures"))
    assert json.loads((out / "tables" / "skipped.json").read_text()) == []
    assert (out / "tables" / "samples.csv").exists() and (out / "graphs" / "tiny.sources.txt").exists()
    records = _records(out)
    assert len(records) == 6 and len(list((out / "runs").rglob("*.verdict.json"))) == 6  # each answer validated
    # every solve gets its job's resolved values, as the workflow's solve command does
    assert {(r["solver"], r["trials"], r["warmup"], r["seed"]) for r in records} == {
        ("scipy_dijkstra", 1, 1, 1), ("dijkstra_cpu", 2, 1, 1), ("bellmanford_naive", 2, 1, 1)}


def test_bench_runs_only_the_graphs_named_and_records_a_budget_overrun(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    config = yaml.safe_load(TINY.read_text())
    config["solvers"] = [{"name": "scipy_dijkstra"}, {"name": "bellmanford_naive", "time_budget_s": 0.01}]
    out = tmp_path / "out"
    assert cli.main(["bench", "--config", str(write(tmp_path, config)), "--out", str(out), "--set", "trials=1",
                     "--graphs", "tiny"]) == 0
    assert "summary.csv" in capsys.readouterr().out
    summary = pd.read_csv(out / "tables" / "summary.csv").set_index("solver")
    assert set(summary["graph"]) == {"tiny"} and not (out / "graphs" / "rand16.gcsr").exists()
    assert summary.loc["scipy_dijkstra", "status"] == "ok" and summary.loc["scipy_dijkstra", "samples"] == 2  # 1 x 2
    assert summary.loc["bellmanford_naive", "status"] == "skipped"
    assert "time budget of 0.01 s" in summary.loc["bellmanford_naive", "reason"]
    record = json.loads((out / "runs" / "tiny" / "bellmanford_naive" / "default.json").read_text())
    assert record["status"] == "skipped" and record["runs"] == []


def test_a_failed_job_stops_no_other_and_bench_says_so(tmp_path, monkeypatch, capsys):
    """Past a failed job the workflow runs the others to the end (their records are kept); it writes no tables,
    which aggregate complete runs only, and bench exits 1 naming where the logs are."""
    broken = tmp_path / "broken.gr"
    broken.write_text("p sp 4 1\na 1 9 1\n")  # an arc to a vertex the graph does not have
    config = {"trials": 1, "warmup": 0, "sources": {"count": 1}, "graphs": {"ring": RING, "broken": {"file": str(broken)}},
              "solvers": [{"name": "scipy_dijkstra"}]}
    out = tmp_path / "out"
    assert cli.main(["bench", "--config", str(write(tmp_path, config)), "--out", str(out)]) == cli.EXIT_ERROR
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == (f"gpusp: error: the workflow did not finish: At least one job did not complete "
                                    f"successfully. (each job's log is under {out / 'logs'})")
    assert "prepare_graph" in err and (out / "logs" / "prepare_graph" / "broken.log").exists()
    assert [(r["graph_label"], r["status"]) for r in _records(out)] == [("ring", "ok")]
    assert not (out / "tables" / "summary.csv").exists()


def test_bench_keeps_to_its_output_folder_and_refuses_a_second_bench_into_it(tmp_path, monkeypatch, capsys):
    """Other Snakemake runs in the working directory neither stop bench nor lose their locks to it (Snakemake's
    unlock removes the whole lock folder); a second bench into the same output folder is refused, naming it."""
    import fcntl

    work = tmp_path / "work"
    locks = work / ".snakemake" / "locks"
    locks.mkdir(parents=True)
    out = tmp_path / "out"
    claim = locks / "0.output.lock"  # another run's claim on this bench's table: Snakemake's own lock would refuse
    claim.write_text(f"{out / 'tables' / 'summary.csv'}\n")
    monkeypatch.chdir(work)
    config = write(tmp_path, {"trials": 1, "warmup": 0, "sources": {"count": 1}, "graphs": {"ring": RING},
                              "solvers": [{"name": "scipy_dijkstra"}]})
    assert cli.main(["bench", "--config", str(config), "--out", str(out)]) == 0
    assert (out / "tables" / "summary.csv").exists() and claim.read_text().startswith(str(out))
    capsys.readouterr()
    with open(out / ".gpusp-bench.lock") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert cli.main(["bench", "--config", str(config), "--out", str(out)]) == cli.EXIT_ERROR
    assert capsys.readouterr().err.strip() == (f"gpusp: error: {out}: another gpusp bench is writing this folder (it "
                                               f"holds {out / '.gpusp-bench.lock'}); wait for it or give --out "
                                               "another folder")


@pytest.mark.parametrize("change, words", [({"trails": 1}, "top level: Additional properties are not allowed ('trails'"),
                                           ({"trials": "five"}, "key trials: 'five' is not of type 'integer'"),
                                           ({"time_budget_s": -1}, "key time_budget_s: ")],
                         ids=["misspelled-key", "wrong-type", "out-of-range"])
def test_bench_refuses_a_config_the_schema_refuses_before_writing_anything(tmp_path, capsys, change, words):
    config_path = write(tmp_path, {**yaml.safe_load(TINY.read_text()), **change})
    out = tmp_path / "out"
    assert cli.main(["bench", "--config", str(config_path), "--out", str(out)]) == cli.EXIT_ERROR
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and captured.err.startswith(f"gpusp: error: {config_path}: {words}")
    assert not out.exists()


def test_bench_refuses_a_bad_override_and_names_its_own_flags(tmp_path, capsys):
    out = tmp_path / "out"
    assert cli.main(["bench", "--config", str(TINY), "--out", str(out), "--set", "warmup=-1"]) == cli.EXIT_ERROR
    assert capsys.readouterr().err.startswith(f"gpusp: error: {TINY} (with --set warmup): key warmup: -1 is less than "
                                              "the minimum of 0")
    assert cli.main(["bench", "--config", str(TINY), "--out", str(out), "--graphs", "tinny"]) == cli.EXIT_ERROR
    assert capsys.readouterr().err == (f"gpusp: error: {TINY}: --graphs: 'tinny' is not a graph of the config (did you "
                                       "mean 'tiny'?); its graphs: rand16, tiny\n")
    for key, flag in (("results", "--out"), ("only_graphs", "--graphs")):
        assert cli.main(["bench", "--config", str(TINY), "--out", str(out), "--set", f"{key}=x"]) == cli.EXIT_ERROR
        assert capsys.readouterr().err == f"gpusp: error: --set {key}: not a key to set here: use {flag}\n"
    assert cli.main(["bench", "--config", str(tmp_path / "none.yaml"), "--out", str(out)]) == cli.EXIT_ERROR
    assert capsys.readouterr().err == f"gpusp: error: {tmp_path / 'none.yaml'}: cannot read the config: No such file " \
                                      "or directory\n"
    assert not out.exists()


def test_bench_says_what_to_do_without_a_checkout_or_without_snakemake(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(bench, "PACKAGE_ROOT", tmp_path / "site-packages")
    assert cli.main(["bench", "--config", str(TINY), "--out", str(tmp_path / "out")]) == cli.EXIT_ERROR
    err = capsys.readouterr().err
    assert f"{tmp_path / 'Snakefile'} does not exist" in err and "run gpusp from a clone of the repository" in err
    monkeypatch.undo()
    monkeypatch.setitem(sys.modules, "snakemake.api", None)  # as if Snakemake were not installed
    assert cli.main(["bench", "--config", str(TINY), "--out", str(tmp_path / "out")]) == cli.EXIT_ERROR
    assert "runs the workflow with Snakemake, which is not installed: pip install" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


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
        # every end-to-end run's upload is one more upload sample, a part of that run's window
        assert len(t["end_to_end_h2d_ms"]) == 2
        assert all(0 < up < whole for up, whole in zip(t["end_to_end_h2d_ms"], t["end_to_end_ms"]))
    assert all(r["timings"]["end_to_end_ms"] == [] and r["timings"]["end_to_end_h2d_ms"] == []
               and r["timings"]["end_to_end_clock"] is None for r in without["runs"])
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
    uploads = [ms for run in rec["runs"] for ms in run["timings"]["end_to_end_h2d_ms"]]
    assert sorted(samples["end_to_end_h2d_ms"].dropna()) == sorted(uploads)
