"""Provenance: what a record says about the machine and the peer build it was measured on, and what `gpusp
aggregate` writes so that the report carries it: the run environment (commit and dirty flag, GPU, driver, CUDA,
versions, host CPU and cores, each graph's checksum) on the first page and as tables, and the records themselves."""

from __future__ import annotations

import json
import shutil
import tarfile
from pathlib import Path

import pandas as pd
import pytest

import gpusp
from gpusp import cli
from gpusp.device import cpu_model, device_info
from gpusp.report.aggregate import write_tables

TINY = Path(gpusp.__file__).parent / "data" / "tiny.gr"
SOLVERS = {"scipy_dijkstra": ["--params-label", "default"], "dijkstra_cpu": ["--params-label", "default"],
           "bellmanford_naive": ["--param", "block=32", "--params-label", "block-32"]}


@pytest.fixture(scope="module")
def sweep(tmp_path_factory) -> dict[str, Path]:
    """Records of a small sweep as the workflow lays them out (runs/<graph>/<solver>/<label>.json): two CPU
    baselines and a GPU solver in the CUDA simulator, on one graph; a second GPU record is the first with
    another parameter label, and one record has a verdict beside it."""
    runs = tmp_path_factory.mktemp("sweep") / "runs" / "tiny"
    paths = {}
    for solver, extra in SOLVERS.items():
        path = runs / solver / f"{extra[-1]}.json"
        assert cli.main(["solve", "--graph", str(TINY), "--solver", solver, "--num-sources", "1", "--trials", "2",
                         "--warmup", "0", "--validate", "--graph-label", "tiny", "--record", str(path), *extra]) == 0
        paths[solver] = path
    second = json.loads(paths["bellmanford_naive"].read_text())
    second["params_label"] = "block-64"
    paths["bellmanford_naive/block-64"] = paths["bellmanford_naive"].with_name("block-64.json")
    paths["bellmanford_naive/block-64"].write_text(json.dumps(second))
    rec = json.loads(paths["scipy_dijkstra"].read_text())
    verdict = {"graph_checksum": rec["graph"]["checksum"], "ok": True, "sources": [rec["runs"][0]["source"]],
               "verdicts": []}
    paths["scipy_dijkstra"].with_name("default.verdict.json").write_text(json.dumps(verdict))
    return paths


def copy_sweep(sweep: dict[str, Path], dest: Path, change=None) -> list[Path]:
    """The sweep's records and verdicts copied under ``dest``; ``change(key, record)`` edits a record."""
    top = sweep["scipy_dijkstra"].parents[2]
    out = []
    for key, path in sweep.items():
        target = dest / path.relative_to(top)
        target.parent.mkdir(parents=True, exist_ok=True)
        rec = json.loads(path.read_text())
        if change:
            change(key, rec)
        target.write_text(json.dumps(rec))
        verdict = path.with_name(path.name.replace(".json", ".verdict.json"))
        if verdict.exists():
            shutil.copy(verdict, target.with_name(verdict.name))
        out.append(target)
    return out


def test_cpu_model_from_proc_cpuinfo(tmp_path):
    x86 = tmp_path / "x86"
    x86.write_text("processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R)  Platinum 8480+\n\n"
                   "processor\t: 1\nmodel name\t: Intel(R) Xeon(R)  Platinum 8480+\n")
    assert cpu_model(x86) == "Intel(R) Xeon(R) Platinum 8480+"
    arm = tmp_path / "arm"  # Arm kernels name no model: the implementer and part numbers stand in
    arm.write_text("processor\t: 0\nBogoMIPS\t: 2000.00\nCPU implementer\t: 0x41\nCPU part\t: 0xd4f\n")
    assert "implementer 0x41, part 0xd4f" in cpu_model(arm)
    assert cpu_model(tmp_path / "absent")  # no /proc (macOS): what platform knows, never empty


def test_device_info_names_the_host_cpu_its_cores_and_scipy():
    import numpy
    import scipy

    info = device_info()
    assert info["cpu_model"] == cpu_model() and info["cpu_model"] != info["cpu"]  # the model, not just x86_64
    assert 1 <= info["cpu_cores_usable"] <= info["cpu_cores"]
    assert info["scipy"] == scipy.__version__ and info["numpy"] == numpy.__version__
    assert info["mode"] == "sim" and "simulator" in info["gpu"]


def test_records_carry_the_machine_and_no_peer_block_for_a_solver_of_ours(sweep):
    rec = json.loads(sweep["bellmanford_naive"].read_text())
    import scipy

    machine = rec["machine"]
    assert machine["cpu_model"] == cpu_model() and machine["scipy"] == scipy.__version__
    assert machine["cpu_cores"] >= 1 and machine["cpu_cores_usable"] >= 1
    assert rec["peer"] is None


def test_a_peer_record_names_the_build_it_ran(tmp_path, monkeypatch):
    """GAPBS: the commit its runs report, the pinned one, and the compiler of the build in use."""
    from gpusp.solvers.peers import build as peers, cudabuild
    from gpusp.data.formats import read_graph
    from gpusp.measure.records import make_record
    from gpusp.report.aggregate import environment_table
    from gpusp.solvers import registry

    pinned = peers.get_peer("gapbs")["commit"]
    driver = cudabuild.driver_sha256(peers.get_peer("gapbs")["driver"])
    build = tmp_path / "gapbs"
    build.mkdir()
    (build / "BUILD.json").write_text(json.dumps({"peer": "gapbs", "commit": pinned, "ok": True, "cxx": "g++",
                                                  "cxx_version": "g++ (Debian 12.2.0-14) 12.2.0",
                                                  "cxx_flags": "-std=c++11 -O3 -Wall -fopenmp",
                                                  "driver_sha256": driver, "compile_s": 12.5}))
    monkeypatch.setenv("GPUSP_GAPBS", str(build))
    run = {"source": 0, "timings": {"samples_ms": [1.0], "clock": "peer:gapbs", "compile_s": 0.0, "h2d_ms": 0.1,
                                    "d2h_ms": 0.0, "median_ms": 1.0},
           "counters": {"threads": 2, "delta": 1, "gapbs_commit": pinned}, "validation": {"ok": True}}
    rec = make_record(spec=registry.get("gapbs_sssp"), params={"threads": 2, "delta": 0}, graph=read_graph(TINY),
                      runs=[run], trials=1, warmup=0)
    assert rec["peer"] == {"name": "gapbs", "commit": pinned, "pinned_commit": pinned, "cxx": "g++",
                           "cxx_version": "g++ (Debian 12.2.0-14) 12.2.0", "cxx_flags": "-std=c++11 -O3 -Wall -fopenmp",
                           "driver_sha256": driver, "compile_s": 12.5}
    env = environment_table([rec])
    assert env["peers"].tolist() == [f"gapbs {pinned} (g++ (Debian 12.2.0-14) 12.2.0)"]
    monkeypatch.setenv("GPUSP_GAPBS", str(tmp_path / "nothing-built-here"))
    skipped = make_record(spec=registry.get("gapbs_sssp"), params={}, graph=read_graph(TINY), runs=[], trials=1,
                          warmup=0, status="skipped", reason="no compiler")
    assert skipped["peer"] == {"name": "gapbs", "commit": None, "pinned_commit": pinned}  # nothing ran, no build


def test_aggregate_writes_the_run_environment_and_the_first_page_shows_it(sweep, tmp_path):
    import scipy
    from docutils.core import publish_parts

    def dirty(key, rec):
        rec["git_commit"] = "0123abcd+dirty"

    written = write_tables(copy_sweep(sweep, tmp_path / "runs", dirty), tmp_path / "tables")
    assert {"environment.csv", "graphs.csv", "environment.rst", "records.tar.gz"} <= set(written)
    env = pd.read_csv(written["environment.csv"])
    assert len(env) == 1  # one machine, one checkout
    e = env.iloc[0]
    assert e["commit"] == "0123abcd" and bool(e["dirty"]) and e["records"] == len(sweep)
    assert e["cpu"] == cpu_model() and e["scipy"] == scipy.__version__ and e["mode"] == "sim"
    graphs = pd.read_csv(written["graphs.csv"])
    checksum = json.loads(sweep["scipy_dijkstra"].read_text())["graph"]["checksum"]
    assert graphs[["graph", "n", "m", "checksum"]].values.tolist() == [["tiny", 21, 63, checksum]]
    landing = written["landing.rst"].read_text()
    for shown in ("Run environment", "0123abcd", "uncommitted changes (dirty)", f"SciPy {scipy.__version__}",
                  cpu_model(), checksum):
        assert shown in landing, shown
    assert written["environment.rst"].read_text() in landing
    body = landing.replace("{% raw %}", "").replace("{% endraw %}", "")
    html = publish_parts(body, writer="html", settings_overrides={"halt_level": 2})["body"]  # a warning raises
    assert "Run environment" in html and checksum in html


def test_the_records_travel_in_a_reproducible_archive(sweep, tmp_path):
    """records.tar.gz holds every record and verdict as they are on disk; the same records give the same bytes."""
    paths = copy_sweep(sweep, tmp_path / "runs")
    first = write_tables(paths, tmp_path / "t1")["records.tar.gz"]
    second = write_tables(paths, tmp_path / "t2")["records.tar.gz"]
    assert first.read_bytes() == second.read_bytes()
    with tarfile.open(first) as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}
    top = tmp_path / "runs"
    expect = {"records/" + p.relative_to(top).as_posix(): p.read_bytes() for p in top.rglob("*.json")}
    assert members == expect and any(name.endswith(".verdict.json") for name in members)


def test_samples_carry_hardware_and_the_record_they_come_from(sweep, tmp_path):
    written = write_tables(copy_sweep(sweep, tmp_path / "runs"), tmp_path / "tables")
    samples = pd.read_csv(written["samples.csv"])
    gpu, cpu = samples[samples["device"] == "gpu"], samples[samples["device"] == "cpu"]
    assert (gpu["mode"] == "sim").all() and gpu["gpu"].str.contains("simulator").all()
    assert (cpu["mode"] == "cpu").all() and (cpu["gpu"] == "-").all()  # real CPU times, the host CPU's alone
    assert (samples["cpu"] == cpu_model()).all() and samples["record"].str.endswith(".json").all()
    assert samples["graph_checksum"].nunique() == 1


def test_a_commit_nobody_knows_is_not_called_clean(sweep):
    from gpusp.report.aggregate import environment_rst, environment_table, graphs_table

    records = [json.loads(p.read_text()) for p in sweep.values()]
    for rec in records:
        rec["git_commit"] = "unknown"  # a copy without .git and without GPUSP_COMMIT
    env = environment_table(records)
    assert env["dirty"].isna().all()
    text = environment_rst(env, graphs_table(records))
    assert "``unknown`` (not a git checkout, and GPUSP_COMMIT unset)" in text and "clean" not in text
