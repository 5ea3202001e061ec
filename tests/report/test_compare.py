"""`gpusp compare A B`: per configuration the ratio of medians B / A with a seeded bootstrap interval and a verdict,
from results folders, samples tables or record sets; the sides named, and a warning when they differ in more than
one thing."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gpusp import cli
from gpusp.errors import GpuspError
from gpusp.report.aggregate import write_tables
from gpusp.report.compare import (
    FASTER,
    ONLY_A,
    ONLY_B,
    OTHER_GRAPH,
    SAME,
    SLOWER,
    bootstrap_ratio,
    compare_samples,
    load_side,
    run_compare,
)
from test_provenance import copy_sweep, sweep  # noqa: F401  (the records of a small sweep, made once)

REPO = Path(__file__).parents[2]
RAW = REPO / "benchmarks" / "solver-house-h100-raw"


def side(configs: dict, commit="c0ffee1", gpu="NVIDIA H200", cpu="Intel Xeon", seed=0) -> pd.DataFrame:
    """Samples: per (solver, params) ``(median ms, relative spread)``, 4 sources x 10 trials, source s taking
    (1 + s / 10) times as long (sources are different work, not noise)."""
    rng = np.random.default_rng(seed)
    rows = []
    for (solver, params), (ms, spread) in configs.items():
        for source in range(4):
            for trial in range(10):
                t = ms * (1 + source / 10) * (1 + spread * rng.standard_normal())
                rows.append(dict(graph="ny", problem="sssp", solver=solver, params=params, device="gpu",
                                 source=source, sample=trial, time_ms=t, status="ok", validated=True,
                                 code_hash=f"{solver}-{commit}", git_commit=commit, gpu=gpu, cpu=cpu,
                                 graph_checksum="ab" * 32, mode="gpu"))
    return pd.DataFrame(rows)


A = {("edgebf_coo", "default"): (10.0, 0.02), ("deltastep_gpu", "default"): (5.0, 0.02),
     ("vertexbf_push", "default"): (8.0, 0.30), ("harish", "default"): (3.0, 0.01)}
B = {("edgebf_coo", "default"): (5.0, 0.02), ("deltastep_gpu", "default"): (6.0, 0.02),
     ("vertexbf_push", "default"): (8.0, 0.30), ("packed_atomic", "default"): (1.0, 0.01)}


def test_verdicts_intervals_and_one_sided_configurations():
    table = compare_samples(side(A), side(B, seed=1), resamples=1000).set_index("solver")
    assert table.loc["edgebf_coo", "verdict"] == FASTER
    assert table.loc["edgebf_coo", "ratio"] == pytest.approx(0.5, rel=0.03)
    assert table.loc["deltastep_gpu", "verdict"] == SLOWER
    assert table.loc["deltastep_gpu", "ratio"] == pytest.approx(1.2, rel=0.03)
    assert table.loc["vertexbf_push", "verdict"] == SAME  # 30 % noise: the interval holds 1
    compared = table.dropna(subset=["ratio"])
    assert (compared["ci_low"] <= compared["ratio"]).all() and (compared["ratio"] <= compared["ci_high"]).all()
    assert (table.loc["edgebf_coo", "ci_high"] - table.loc["edgebf_coo", "ci_low"]) < 0.05  # sources are strata
    assert table.loc["harish", "verdict"] == ONLY_A and table.loc["packed_atomic", "verdict"] == ONLY_B
    assert np.isnan(table.loc["harish", "ratio"]) and table.loc["packed_atomic", "b_median_ms"] > 0


def test_the_bootstrap_is_seeded_per_configuration():
    a, b = side(A), side(B, seed=1)
    full = compare_samples(a, b, resamples=500, seed=7).set_index("solver")
    alone = compare_samples(a[a["solver"] == "edgebf_coo"], b[b["solver"] == "edgebf_coo"], resamples=500, seed=7)
    assert full.loc["edgebf_coo", ["ci_low", "ci_high"]].tolist() == alone[["ci_low", "ci_high"]].iloc[0].tolist()
    other = compare_samples(a, b, resamples=500, seed=8).set_index("solver")
    assert other.loc["edgebf_coo", "ci_low"] != full.loc["edgebf_coo", "ci_low"]


def test_bootstrap_interval_covers_the_true_ratio():
    """20 repetitions of two samples of 40 from distributions whose medians differ by 1.5x: a 95 % interval
    misses 1.5 rarely (here at most 3 times) and never holds 1."""
    rng = np.random.default_rng(3)
    misses = 0
    for i in range(20):
        a, b = rng.lognormal(0.0, 0.2, 40), 1.5 * rng.lognormal(0.0, 0.2, 40)
        _, low, high = bootstrap_ratio(a, b, resamples=1000, seed=i)
        misses += not low <= 1.5 <= high
        assert low > 1
    assert misses <= 3


def test_a_factor_keeps_small_real_changes_apart_from_changes():
    from gpusp.report.compare import WITHIN_FACTOR, verdict

    assert verdict(0.95, 0.93, 0.97) == FASTER and verdict(0.95, 0.93, 0.97, factor=1.1) == WITHIN_FACTOR
    assert verdict(1.2, 1.15, 1.25, factor=1.1) == SLOWER and verdict(1.02, 0.97, 1.08, factor=1.1) == SAME


def test_different_graphs_under_one_name_get_no_ratio():
    b = side(B, seed=1).assign(graph_checksum="cd" * 32)
    table = compare_samples(side(A), b, resamples=200)
    assert set(table.dropna(subset=["a_median_ms", "b_median_ms"])["verdict"]) == {OTHER_GRAPH}
    assert table["ratio"].isna().all()


def test_the_command_names_both_sides_warns_on_two_differences_and_writes_its_files(tmp_path, capsys):
    from docutils.core import publish_parts

    side(A).to_csv(tmp_path / "a.csv", index=False)
    side(B, commit="fee1bad", gpu="NVIDIA H100 80GB HBM3", seed=1).to_csv(tmp_path / "b.csv", index=False)
    out = tmp_path / "cmp"
    assert cli.main(["compare", str(tmp_path / "a.csv"), str(tmp_path / "b.csv"), "--out-dir", str(out),
                     "--resamples", "300"]) == 0
    printed = capsys.readouterr().out
    assert "A: " in printed and "commit c0ffee1" in printed and "GPU NVIDIA H200" in printed
    assert "commit fee1bad" in printed and "GPU NVIDIA H100 80GB HBM3" in printed
    assert "warning: A and B differ in code and GPU" in printed
    lines = {solver: line for line in printed.splitlines() for solver in ("edgebf_coo", "deltastep_gpu")
             if f" {solver} default" in line}
    assert "faster" in lines["edgebf_coo"] and "0.5" in lines["edgebf_coo"] and "slower" in lines["deltastep_gpu"]
    assert lines["edgebf_coo"].endswith("(code changed)")  # another commit's code hash
    table = pd.read_csv(out / "compare.csv")
    assert len(table) == 5 and set(table["verdict"]) == {FASTER, SLOWER, SAME, ONLY_A, ONLY_B}
    assert (out / "compare.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    html = publish_parts((out / "compare.rst").read_text(), writer="html", settings_overrides={"halt_level": 2})
    assert "differ in code and GPU" in html["body"] and html["body"].count("<tr>") == 6
    assert "wrote" in printed and sorted(p.name for p in out.iterdir()) == ["compare.csv", "compare.png",
                                                                           "compare.rst"]


def test_one_difference_is_no_warning_and_only_changed_lists_the_changes(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    side(A).to_csv(a, index=False)
    side(B, seed=1).to_csv(b, index=False)  # same commit label: the code hashes are equal too
    printed, written = run_compare(a, b, resamples=300, only_changed=True)
    assert "warning" not in printed and written == {} and "code changed" not in printed
    listed = [line for line in printed.splitlines()[3:]]
    assert len(listed) == 2 and all(v in " ".join(listed) for v in ("faster", "slower"))


def test_results_folders_records_and_archives_read_alike(sweep, tmp_path):
    """A results folder with tables, one with runs/ only, a records archive and a record set give the same
    samples."""
    records = copy_sweep(sweep, tmp_path / "res" / "runs")
    write_tables(records, tmp_path / "res" / "tables")
    from_table = load_side(tmp_path / "res")
    from_runs = load_side(tmp_path / "res" / "runs")
    from_archive = load_side(tmp_path / "res" / "tables" / "records.tar.gz")
    one = load_side(records[0])
    key = ["graph", "solver", "params", "source", "sample"]
    for other in (from_runs, from_archive):
        left = from_table.sort_values(key)[key + ["time_ms"]].reset_index(drop=True)
        right = other.sort_values(key)[key + ["time_ms"]].reset_index(drop=True)
        pd.testing.assert_frame_equal(left, right, check_dtype=False)
    assert len(one) and set(one["solver"]) <= set(from_table["solver"])
    assert from_archive["record"].str.contains("records.tar.gz:records/").all()
    table = compare_samples(from_table, from_archive, resamples=200)
    assert (table["ratio"] == 1).all() and (table["verdict"] == SAME).all()


@pytest.mark.parametrize("make, words", [
    (lambda d: d / "absent", "no such file or folder"),
    (lambda d: d, "no tables/samples.csv, runs/ records or records.tar.gz"),
    (lambda d: (d / "x.txt").write_text("hi") and d / "x.txt", "not a results folder"),
    (lambda d: (d / "s.csv").write_text("a,b\n1,2\n") and d / "s.csv", "no column graph, solver, params, time_ms"),
    (lambda d: (d / "r.tar.gz").write_bytes(b"not a tar") and d / "r.tar.gz", "not a records archive"),
])
def test_an_input_that_is_no_results_is_one_error_line(tmp_path, capsys, make, words):
    (tmp_path / "empty").mkdir()
    bad = make(tmp_path / "empty")
    good = tmp_path / "good.csv"
    side(A).to_csv(good, index=False)
    assert cli.main(["compare", str(good), str(bad)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("gpusp: error: ") and words in err[0] and str(bad) in err[0]


def test_a_bad_record_in_an_archive_names_the_archive_and_member(sweep, tmp_path, capsys):
    import tarfile

    archive = tmp_path / "records.tar.gz"
    data = json.dumps({"schema": 1}).encode()
    with tarfile.open(archive, "w:gz") as tar:
        info = tarfile.TarInfo("records/tiny/x/default.json")
        info.size = len(data)
        tar.addfile(info, __import__("io").BytesIO(data))
    assert cli.main(["compare", str(archive), str(archive)]) == 1
    err = capsys.readouterr().err
    assert f"{archive}:records/tiny/x/default.json" in err and "gpusp-compare-" not in err


def test_the_figures_ticks_never_crowd_and_a_simulated_side_gets_the_banner():
    from gpusp.report.compare import compare_plot, spaced_ticks
    from gpusp.report.plots import SIMULATED

    for reach in (0.05, 0.3, 1, 2):
        ticks = np.log10(spaced_ticks(reach))
        assert 0 in ticks and all(abs(t) <= reach for t in ticks)
        assert (np.diff(ticks) >= 2 * reach / 7 - 1e-9).all(), (reach, ticks)
    table = compare_samples(side(A), side(B, seed=1), resamples=200)
    texts = [t.get_text() for t in compare_plot(table, "t", simulated=True).texts]
    assert SIMULATED in texts and SIMULATED not in [t.get_text() for t in compare_plot(table, "t").texts]


def test_a_cut_short_archive_is_one_error_line_naming_it(tmp_path, capsys):
    import io
    import tarfile

    archive = tmp_path / "records.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for k in range(40):  # incompressible records, so that a cut lands inside them
            data = json.dumps({"noise": np.random.default_rng(k).integers(0, 2**62, 400).tolist()}).encode()
            info = tarfile.TarInfo(f"records/g/s{k}/default.json")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    archive.write_bytes(archive.read_bytes()[: archive.stat().st_size // 2])
    good = tmp_path / "good.csv"
    side(A).to_csv(good, index=False)
    assert cli.main(["compare", str(good), str(archive)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{archive}: the records archive is damaged or cut short" in err[0]


def test_an_empty_side_is_refused_and_a_side_of_wrong_answers_is_said(tmp_path):
    good, empty, wrong = tmp_path / "good.csv", tmp_path / "empty.csv", tmp_path / "wrong.csv"
    side(A).to_csv(good, index=False)
    side(A).assign(time_ms=np.nan, status="skipped").to_csv(empty, index=False)
    side(B, seed=1).assign(validated=False).to_csv(wrong, index=False)
    with pytest.raises(GpuspError, match=r"^B \(.*empty.csv\): no timed samples, nothing to compare"):
        run_compare(good, empty)
    printed, _ = run_compare(good, wrong, resamples=200)
    assert "B: every timed configuration failed validation" in printed and "failed validation in B" in printed
    assert "A: every timed" not in printed


@pytest.mark.skipif(not RAW.is_dir(), reason="benchmarks/solver-house-h100-raw is not in this checkout")
def test_two_commits_measured_on_an_h100(tmp_path):
    """Two runs of the same configurations on an H100 at two commits (benchmarks/solver-house-h100-raw, call 1):
    the persistent launch of edgebf_coo got faster (0.59 -> 0.44 ms over 16 sources x 5 trials), the single-
    sample-per-trial APSP runs that barely moved stay the same within noise."""
    printed, written = run_compare(RAW / "call1-base-samples.csv.gz", RAW / "call1-new-samples.csv.gz", tmp_path,
                                   resamples=500)
    table = pd.read_csv(written["compare.csv"]).set_index(["graph", "solver", "params"])
    assert len(table) == 13 and table["ratio"].notna().all()
    persistent = table.loc[("p2p-Gnutella30", "edgebf_coo", "launch-persistent")]
    assert persistent["verdict"] == FASTER and persistent["ratio"] == pytest.approx(0.75, abs=0.03)
    assert table.loc[("random-8192", "blockedfw_fast", "paths-true"), "verdict"] == SAME
    assert "commit da23c7e" in printed and "commit f47c443" in printed and "warning" not in printed  # code only


# --- the workflow's compare_results: the report can carry a comparison with another run -----------------------
def test_the_workflow_compares_its_run_with_the_one_named_by_compare_with(tmp_path):
    from test_workflow import job_counts, snakemake, write_config

    def config(name, **extra):
        return write_config(tmp_path / f"{name}.yaml", {
            "results": str(tmp_path / name), "trials": 3, "warmup": 0, "sources": {"count": 2, "seed": 1},
            "graphs": {"grid": {"generate": "grid", "params": {"rows": 6, "cols": 7}}},
            "solvers": [{"name": "scipy_dijkstra"}, {"name": "dijkstra_cpu"}], **extra})

    # both runs leave out the figures (--omit-from plot_results: plot_results and `all`, which needs them), about 20 s
    # of CPU each; every other job of `all` runs, the comparison's too where compare_with asks for it
    run_a = snakemake("--cores", "2", "--omit-from", "plot_results", "--configfile", config("a"), check=True)
    assert "compare_results" not in job_counts(run_a.stdout) and "aggregate_records" in job_counts(run_a.stdout)
    assert not (tmp_path / "a" / "compare").exists()  # no compare_with: no comparison
    missing = snakemake("-n", "--cores", "1", "--configfile", config("bad", compare_with=str(tmp_path / "nope")))
    assert missing.returncode != 0 and "key compare_with" in missing.stdout and "no such file" in missing.stdout
    b = config("b", compare_with=str(tmp_path / "a"))
    assert job_counts(snakemake("-n", "--cores", "1", "--configfile", b, check=True).stdout)["compare_results"] == 1
    run_b = snakemake("--cores", "2", "--omit-from", "plot_results", "--configfile", b, check=True)
    assert job_counts(run_b.stdout)["compare_results"] == 1
    table = pd.read_csv(tmp_path / "b" / "compare" / "compare.csv")
    assert set(table["solver"]) == {"scipy_dijkstra", "dijkstra_cpu"} and table["ratio"].gt(0).all()
    assert (tmp_path / "b" / "compare" / "compare.png").stat().st_size > 1000
