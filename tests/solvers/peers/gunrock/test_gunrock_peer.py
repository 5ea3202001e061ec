"""The Gunrock peer (gunrock_sssp): the pinned archive from the mirror, gpusp's driver compiled for sm_90 (one nvcc
build per session, shared by every test that needs it; skipped with the reason without nvcc), the binary CSR and
distance files, the skip paths (no nvcc, no GPU, the simulator, negative weights), the harness, job and validation
with a stand-in driver that speaks the real one's protocol (right and wrong answers), the workflow's build_gunrock
rule without nvcc, and on a real GPU (``NUMBA_ENABLE_CUDASIM=0``) exact distances on awkward graphs, every load
balance run and recorded, and wrong distances from a build without the device-pass fix.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from cases import random_graph, sssp_cases
from conftest import failing_tool, mirror_with
from test_workflow import plotless_env, snakemake, write_config

from gpusp.cli import main
from gpusp.solvers.peers import cudabuild
from gpusp.solvers.peers import build as peers
from gpusp.data.download import sha256_file
from gpusp.data.formats import write_graph
from gpusp.data.graph import Graph
from gpusp.errors import DownloadError, GpuspError, SolverError, SolverUnavailable
from gpusp.measure.harness import solve_many
from gpusp.measure.validate import NO_PARENTS, check_sssp, reference_distances
from gpusp.solvers import registry
from gpusp.solvers.peers.gunrock import solver as gunrock
from gpusp.solvers.common.launch import TARGET

pytestmark = pytest.mark.timeout(600)
ENTRY = peers.get_peer("gunrock")
REPO_TINY = Path(__file__).resolve().parents[4] / "src" / "gpusp" / "data" / "tiny.gr"
gpu_only = pytest.mark.skipif(not TARGET.gpu,
                              reason="Gunrock's driver runs only on a real GPU (NUMBA_ENABLE_CUDASIM=0)")
LOAD_BALANCES = registry.get("gunrock_sssp").params[0].choices


@pytest.fixture(scope="session")
def gunrock_build(tmp_path_factory):
    """The one nvcc build of the driver in this session (skips with the reason where nvcc cannot build it)."""
    nvcc = cudabuild.nvcc_command()
    reason = cudabuild.probe(nvcc, cudabuild.DEFAULT_ARCH)
    if reason:
        pytest.skip(reason)
    mirror = mirror_with("gunrock")
    root = tmp_path_factory.mktemp("gunrock")
    return peers.build("gunrock", root / "build", arch=cudabuild.DEFAULT_ARCH, downloads=root / "downloads",
                       mirror=str(mirror), offline=True)


@pytest.fixture
def gunrock_real(gunrock_build, monkeypatch):
    """GPUSP_GUNROCK names the session's build: the solver finds its driver there."""
    monkeypatch.setenv("GPUSP_GUNROCK", str(gunrock_build))
    return gunrock_build


def long_path_graph() -> Graph:
    """Path lengths beyond 2^30: int64 distances (the driver's long long instantiation)."""
    return Graph.from_edges(4, [0, 1, 2], [1, 2, 3], [2**29, 2**29, 2**29], name="long")


# --- archive and build: verified, compiled once for sm_90, reused ---------------------------------------------------
@pytest.mark.needs_mirror("gunrock")
def test_archive_from_mirror_is_verified(tmp_path, mirror):
    path = peers.fetch_archive("gunrock", tmp_path, mirror=str(mirror), offline=True)
    assert path.name == ENTRY["filename"] and sha256_file(path) == ENTRY["sha256"]
    with pytest.raises(DownloadError, match="offline"):
        peers.fetch_archive("gunrock", tmp_path / "out", mirror=str(tmp_path / "none"), offline=True)


def test_driver_compiles_for_sm90(gunrock_build, tmp_path):
    """The compile gate: the driver builds against the pinned headers, and its PTX has the atomic minima."""
    info = peers.read_build(gunrock_build)
    assert info["ok"] and info["commit"] == ENTRY["commit"] and info["archive_sha256"] == ENTRY["sha256"]
    assert info["arch"] == 90 and info["device_fix"] is True and "-arch=sm_90" in info["nvcc_flags"]
    assert info["compile_s"] > 0 and info["nvcc_version"]
    assert info["ptx_atomic_min"] > 0, "the device-pass fix did not reach the kernels"
    assert os.access(gunrock_build / "gunrock_sssp", os.X_OK)
    assert (gunrock_build / ENTRY["driver"]).read_bytes() == cudabuild.driver_text(ENTRY["driver"])
    assert info["driver_sha256"] == cudabuild.driver_sha256(ENTRY["driver"])
    assert not list(gunrock_build.parent.glob(".*.build")) and not (gunrock_build / ".nvcc-keep").exists()
    stamp = (gunrock_build / peers.BUILD_INFO).stat().st_mtime_ns
    kept = peers.build("gunrock", gunrock_build, arch=90, mirror=str(tmp_path / "no-mirror"), offline=True)
    assert kept == gunrock_build and (gunrock_build / peers.BUILD_INFO).stat().st_mtime_ns == stamp
    assert "sm_90" in peers.describe_build("gunrock", gunrock_build)


def test_driver_refuses_bad_input_with_reasons(gunrock_build, tmp_path):
    binary = gunrock_build / "gunrock_sssp"
    good = gunrock.write_csr(Graph.from_edges(3, [0, 1], [1, 2], [4, 5]), tmp_path / "g.csr")
    (tmp_path / "bad.csr").write_bytes(b"not a graph at all, no header")
    for args, said in (([good], "usage"), ([good, "--serve", "--load-balance", "nope"], "--load-balance nope"),
                       ([tmp_path / "none.csr", "--serve"], "cannot open"),
                       ([tmp_path / "bad.csr", "--serve"], "magic"),
                       ([good, "--sources", tmp_path / "s.txt", "--trials", "0"], "--trials 0")):
        proc = subprocess.run([binary, *map(str, args)], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2 and said in proc.stderr, (args, proc.stderr)


# --- without nvcc: unavailable, recorded, skipped ------------------------------------------------------------------
def fake_nvcc(tmp_path) -> str:
    return failing_tool(tmp_path, "fake-nvcc", "fake-nvcc: sm_90 is not a supported architecture")


@pytest.mark.needs_mirror("gunrock")
def test_no_nvcc_is_unavailable(tmp_path, mirror):
    with pytest.raises(SolverUnavailable, match="no CUDA compiler"):
        peers.build("gunrock", tmp_path / "b1", nvcc="no-such-nvcc-1234", downloads=tmp_path, mirror=str(mirror),
                    offline=True)
    with pytest.raises(SolverUnavailable, match="cannot compile C\\+\\+17 for sm_90.*not a supported"):
        peers.build("gunrock", tmp_path / "b2", nvcc=fake_nvcc(tmp_path), downloads=tmp_path, mirror=str(mirror),
                    offline=True)
    assert not (tmp_path / "b1").exists() and not (tmp_path / "b2").exists()


@pytest.mark.needs_mirror("gunrock")
def test_unavailable_build_is_kept_rebuilt_on_request_and_makes_the_solver_skip(tmp_path, monkeypatch, capsys,
                                                                                 mirror):
    dest = tmp_path / "build"
    common = ["--dest", str(dest), "--downloads", str(tmp_path), "--mirror", str(mirror), "--offline"]
    assert main(["peers", "build", "gunrock", "--nvcc", "no-such-nvcc-1234", "--unavailable-ok", *common]) == 0
    info = peers.read_build(dest)
    assert info["ok"] is False and "no CUDA compiler" in info["reason"] and info["arch"] == 90
    assert info["driver_sha256"] == cudabuild.driver_sha256(ENTRY["driver"])
    assert "unavailable" in capsys.readouterr().out
    stamp = (dest / peers.BUILD_INFO).stat().st_mtime_ns
    peers.build("gunrock", dest, nvcc="no-such-nvcc-1234", unavailable_ok=True, mirror=str(mirror), offline=True)
    assert (dest / peers.BUILD_INFO).stat().st_mtime_ns == stamp  # same driver, arch and fix: kept
    assert main(["peers", "build", "gunrock", "--nvcc", "no-such-nvcc-1234", "--arch", "80", "--unavailable-ok",
                 *common]) == 0
    assert peers.read_build(dest)["arch"] == 80  # another architecture asked for: built again
    monkeypatch.setenv("GPUSP_GUNROCK", str(dest))
    rec = tmp_path / "r.json"
    assert main(["solve", "--graph", str(REPO_TINY), "--solver", "gunrock_sssp", "--source", "0", "--record",
                 str(rec)]) == 0
    r = json.loads(rec.read_text())
    assert r["status"] == "skipped" and "no CUDA compiler" in r["reason"] and r["runs"] == []
    assert "skipped" in capsys.readouterr().err


def test_a_build_of_another_driver_is_refused(tmp_path, monkeypatch):
    dest = tmp_path / "build"
    dest.mkdir()
    info = {"peer": "gunrock", "commit": ENTRY["commit"], "ok": True, "driver_sha256": "0" * 64,
            "binaries": {"gunrock_sssp": "gunrock_sssp"}}
    (dest / peers.BUILD_INFO).write_text(json.dumps(info))
    monkeypatch.setenv("GPUSP_GUNROCK", str(dest))
    with pytest.raises(GpuspError, match="gunrock_sssp.cu.*--force"):
        peers.locate("gunrock")


def test_the_pinned_list_and_the_driver_ship_beside_the_build_code():
    """peers.yaml and gpusp's driver live in gpusp/solvers/peers (where build and cudabuild read them), the wheel's
    package data names them, and the code hash of gunrock_sssp reads the same driver."""
    import tomllib

    from gpusp.measure import codehash

    here = Path(peers.__file__).parent
    assert (here / peers.PINNED).is_file() and (here / ENTRY["driver"]).is_file()
    assert cudabuild.driver_text(ENTRY["driver"]) == (here / ENTRY["driver"]).read_bytes()
    pyproject = tomllib.loads((REPO_TINY.parents[3] / "pyproject.toml").read_text())
    shipped = pyproject["tool"]["setuptools"]["package-data"]["gpusp"]
    assert {"solvers/peers/*.yaml", "solvers/peers/*.cu"} <= set(shipped)
    assert len(codehash.code_hash(registry.get("gunrock_sssp"))) == 16


def test_without_device_fix_only_for_gunrock():
    with pytest.raises(GpuspError, match="no device-pass fix"):
        peers.build("gapbs", device_fix=False)
    assert cudabuild.NO_FIX_DEFINE in " ".join(cudabuild.flags(90, device_fix=False))
    assert cudabuild.NO_FIX_DEFINE not in " ".join(cudabuild.flags(90))
    assert cudabuild.arch_of("sm_80") == 80
    with pytest.raises(GpuspError, match="compute capability"):
        cudabuild.arch_of("hopper")


# --- the driver's files: binary CSR in, distances out ------------------------------------------------------------
@pytest.mark.parametrize("label, graph, source", [*sssp_cases(), ("long", long_path_graph(), 0)],
                         ids=[c[0] for c in sssp_cases()] + ["long"])
def test_binary_csr_round_trip_keeps_every_arc(tmp_path, label, graph, source):
    path = gunrock.write_csr(graph, tmp_path / "g.csr")
    back = gunrock.read_csr(path, name=graph.name)
    assert back.n == graph.n and back.dtype == graph.dtype and back.checksum() == graph.checksum()
    data = path.read_bytes()
    assert data[:8] == b"GPUSPCSR"
    assert list(np.frombuffer(data, "<i8", 3, 8)) == [graph.n, graph.m, graph.dtype.itemsize]


def test_binary_csr_errors_name_the_file(tmp_path):
    path = gunrock.write_csr(Graph.from_edges(3, [0, 1], [1, 2], [4, 5]), tmp_path / "g.csr")
    path.write_bytes(path.read_bytes()[:-2])
    with pytest.raises(GpuspError, match="g.csr: .*bytes do not hold"):
        gunrock.read_csr(path)
    (tmp_path / "x.csr").write_bytes(b"XXXXXXXX" + bytes(40))
    with pytest.raises(GpuspError, match="x.csr: not a gpusp binary CSR"):
        gunrock.read_csr(tmp_path / "x.csr")


def distance_file(path, n: int, rows: dict, itemsize: int = 4) -> Path:
    """A distance file as the driver writes it."""
    with open(path, "wb") as fh:
        fh.write(b"GPUSPDST" + np.array([n, itemsize], "<i8").tobytes())
        for source, values in rows.items():
            fh.write(np.array([source], "<i8").tobytes() + np.asarray(values, f"<i{itemsize}").tobytes())
    return Path(path)


def test_distance_file_reader(tmp_path):
    g = Graph.from_edges(3, [0, 1], [1, 2], [4, 5])
    big = np.iinfo(np.int32).max
    sources, dist = gunrock.read_distances(distance_file(tmp_path / "d", 3, {0: [0, 4, 9], 2: [big, big, 0]}), g)
    assert list(sources) == [0, 2] and dist.dtype == g.dtype
    assert dist.tolist() == [[0, 4, 9], [g.inf, g.inf, 0]]
    long = long_path_graph()
    path = distance_file(tmp_path / "l", 4, {3: [np.iinfo(np.int64).max] * 3 + [0]}, itemsize=8)
    assert gunrock.read_distances(path, long)[1].tolist() == [[long.inf] * 3 + [0]]
    with pytest.raises(GpuspError, match="d: distances of n = 3 in 4-byte"):
        gunrock.read_distances(tmp_path / "d", long)
    (tmp_path / "t").write_bytes((tmp_path / "d").read_bytes()[:-3])
    with pytest.raises(GpuspError, match="t: .*not whole records"):
        gunrock.read_distances(tmp_path / "t", g)


# --- refusals: negative weights, no GPU, the simulator ----------------------------------------------------------------
def test_refusals_are_skips_with_reasons(monkeypatch):
    neg = Graph.from_edges(3, [0, 1], [1, 2], [4, -2])
    assert "negative weights" in registry.get("gunrock_sssp").why_not(3, 2, negative=True)
    with pytest.raises(SolverUnavailable, match="negative weights"):
        list(solve_many(neg, "gunrock_sssp", [0]))
    assert "negative weights" in gunrock.refusal(neg)
    monkeypatch.setattr(gunrock.device, "mode", lambda: "sim")
    assert "simulator" in gunrock.gpu_refusal()
    monkeypatch.setattr(gunrock.device, "mode", lambda: "none")
    assert "needs a CUDA GPU" in gunrock.gpu_refusal()


# --- the harness, job and validation, with a stand-in driver of the same protocol ---------------------------------
FAKE_DRIVER = '''
import json, os, sys
import numpy as np
from gpusp.measure.validate import reference_distances
from gpusp.solvers.peers.gunrock.solver import DIST_MAGIC, read_csr

if os.environ.get("FAKE_GUNROCK_EXIT"):
    print("gunrock_sssp: unavailable: no CUDA GPU is usable (stand-in)", file=sys.stderr)
    sys.exit(int(os.environ["FAKE_GUNROCK_EXIT"]))
graph = read_csr(sys.argv[1])
wrong = bool(os.environ.get("FAKE_GUNROCK_WRONG"))  # as without the device-pass fix: nothing but the source lowered
big = np.iinfo(graph.dtype).max
print(json.dumps({"ready": True, "n": graph.n, "m": graph.m, "distance_bytes": graph.dtype.itemsize,
                  "gpu": "stand-in", "device_fix": not wrong, "atomic_min_ok": not wrong, "upload_ms": 0.5}),
      flush=True)
last = None
for line in sys.stdin:
    command, _, argument = line.strip().partition(" ")
    if command == "run":
        source = int(argument)
        if not 0 <= source < graph.n:
            print(json.dumps({"error": f"source {argument} is no vertex"}), flush=True)
            continue
        dist = reference_distances(graph, [source])[0].astype(graph.dtype)
        dist[dist == graph.inf] = big
        if wrong:
            dist[:] = big
            dist[source] = 0
        last = (source, dist)
        print(json.dumps({"source": source, "trial": 0, "warmup": False, "call_ms": 1.5, "enact_ms": 1.25,
                          "host_ms": 1.6, "iterations": 3}), flush=True)
    elif command == "save":
        with open(argument, "wb") as fh:
            fh.write(DIST_MAGIC + np.array([graph.n, graph.dtype.itemsize], "<i8").tobytes())
            fh.write(np.array([last[0]], "<i8").tobytes() + last[1].tobytes())
        print(json.dumps({"saved": argument}), flush=True)
    elif command == "quit":
        break
'''


@pytest.fixture
def stand_in(tmp_path, monkeypatch):
    """A build folder whose gunrock_sssp is a Python stand-in of the driver (exact distances from SciPy), as if a
    GPU were there."""
    dest = tmp_path / "stand-in"
    dest.mkdir()
    script = dest / "gunrock_sssp"
    script.write_text(f"#!{sys.executable}\n{FAKE_DRIVER}")
    script.chmod(0o755)
    info = {"peer": "gunrock", "commit": ENTRY["commit"], "ok": True, "binaries": {"gunrock_sssp": "gunrock_sssp"},
            "driver_sha256": cudabuild.driver_sha256(ENTRY["driver"]), "arch": 90, "device_fix": True,
            "compile_s": 20.0, "nvcc": "nvcc", "nvcc_version": "stand-in"}
    (dest / peers.BUILD_INFO).write_text(json.dumps(info))
    monkeypatch.setenv("GPUSP_GUNROCK", str(dest))
    monkeypatch.setattr(gunrock, "gpu_refusal", lambda: None)
    return dest


def tiny_graph() -> Graph:
    from gpusp.data.formats import read_graph

    return read_graph(REPO_TINY)


def test_the_simulator_is_refused_before_the_driver_runs(tmp_path, monkeypatch):
    (tmp_path / peers.BUILD_INFO).write_text(json.dumps({"peer": "gunrock", "commit": ENTRY["commit"], "ok": True,
                                                          "driver_sha256": cudabuild.driver_sha256(ENTRY["driver"]),
                                                          "binaries": {"gunrock_sssp": "gunrock_sssp"}}))
    monkeypatch.setenv("GPUSP_GUNROCK", str(tmp_path))
    monkeypatch.setattr(gunrock.device, "mode", lambda: "sim")
    with pytest.raises(SolverUnavailable, match="simulator"):
        list(solve_many(tiny_graph(), "gunrock_sssp", [0]))


def test_harness_times_the_peer_and_keeps_its_series(stand_in):
    g = sssp_cases()[5][1]  # duplicates and self-loops
    sources = [0, 1, 3]
    results = list(solve_many(g, "gunrock_sssp", sources, trials=3, warmup=2, load_balance="thread_mapped"))
    for r in results:
        assert check_sssp(g, r.source, r.dist, r.parent).ok and r.parent is None
        t, c = r.timings, r.counters
        assert t.clock == "peer:gunrock" and t.samples_ms == [1.5] * 3 and t.compile_s == 0.0
        assert c["gunrock_enact_ms"] == [1.25] * 3 and c["host_ms"] == [1.6] * 3 and len(c["wall_ms"]) == 3
        assert c["iterations"] == 3 and c["load_balance"] == "thread_mapped" and c["uniquify"] is False
        assert c["gunrock_commit"] == ENTRY["commit"] and "peer_series" not in c and "peer_verified" not in c
    assert len(results[0].timings.warmup_ms) == 2 and results[0].timings.h2d_ms > 0
    assert np.array_equal(results[2].dist, reference_distances(g, [3])[0])


def test_cli_validates_distances_and_skips_the_tree_checks(stand_in, tmp_path, capsys):
    rec, ans, verdict = tmp_path / "r.json", tmp_path / "a.npz", tmp_path / "v.json"
    assert main(["solve", "--graph", str(REPO_TINY), "--solver", "gunrock_sssp", "--num-sources", "3", "--trials",
                 "2", "--param", "uniquify=true", "--validate", "--record", str(rec), "--answer", str(ans)]) == 0
    r = json.loads(rec.read_text())
    assert r["status"] == "ok" and r["summary"]["validated"] is True and r["device"] == "gpu"
    for run in r["runs"]:
        assert run["validation"]["ok"] is True and run["validation"]["method"] == "distances"
        assert run["validation"]["reason"] == NO_PARENTS and run["counters"]["uniquify"] is True
    assert r["peer"]["name"] == "gunrock" and r["peer"]["commit"] == ENTRY["commit"]
    assert r["peer"]["compile_s"] == 20.0 and r["peer"]["device_fix"] is True
    assert main(["validate", "--graph", str(REPO_TINY), "--answer", str(ans), "--output", str(verdict)]) == 0
    v = json.loads(verdict.read_text())
    assert v["ok"] is True and all(x["method"] == "distances" for x in v["verdicts"])
    assert main(["solve", "--graph", str(REPO_TINY), "--solver", "gunrock_sssp", "--output", "print"]) == 1
    assert "no predecessors" in capsys.readouterr().err


def test_wrong_distances_are_recorded_as_failed(stand_in, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_GUNROCK_WRONG", "1")
    rec, ans = tmp_path / "r.json", tmp_path / "a.npz"
    assert main(["solve", "--graph", str(REPO_TINY), "--solver", "gunrock_sssp", "--param",
                 "load_balance=merge_path_v2", "--num-sources", "2", "--validate", "--record", str(rec),
                 "--answer", str(ans)]) == 1
    r = json.loads(rec.read_text())
    assert r["status"] == "failed-validation" and len(r["runs"]) == 2 and r["params"]["load_balance"] == "merge_path_v2"
    assert all(run["validation"]["ok"] is False and run["validation"]["mismatches"] for run in r["runs"])
    assert r["runs"][0]["counters"]["atomic_min_ok"] is False
    assert main(["validate", "--graph", str(REPO_TINY), "--answer", str(ans)]) == 1
    verdict = tmp_path / "v.json"  # as the workflow validates a peer: the failure recorded, the run not stopped
    assert main(["validate", "--graph", str(REPO_TINY), "--answer", str(ans), "--output", str(verdict),
                 "--failure-ok"]) == 0
    assert json.loads(verdict.read_text())["ok"] is False


@pytest.mark.needs_mirror("gunrock")
def test_the_workflow_lets_a_peer_fail_validation_and_stops_on_ours(tmp_path, mirror):
    config = {"results": str(tmp_path / "results"), "mirror": str(mirror), "simulate": "always",
              "sources": {"count": 2, "seed": 1},
              "graphs": {"grid": {"generate": "grid", "params": {"rows": 6, "cols": 6}}},
              "solvers": [{"name": "scipy_dijkstra"}, {"name": "gunrock_sssp"}]}
    proc = snakemake("-n", "-p", "--configfile", write_config(tmp_path / "c.yaml", config), timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    validations = [line for line in proc.stdout.splitlines() if line.startswith("Shell command: gpusp validate")]
    assert len(validations) == 2
    assert [("--failure-ok" in line, "gunrock_sssp" in line) for line in sorted(validations)] == [(True, True),
                                                                                                  (False, False)]


@pytest.mark.parametrize("code, error", [(3, SolverUnavailable), (1, SolverError)])
def test_a_driver_that_stops_says_why(stand_in, monkeypatch, code, error):
    """Exit 3 (no GPU the build can run on) is a skip; any other exit is an error of the run."""
    monkeypatch.setenv("FAKE_GUNROCK_EXIT", str(code))
    with pytest.raises(SolverError, match=f"exited {code}: .*no CUDA GPU is usable") as caught:
        list(solve_many(tiny_graph(), "gunrock_sssp", [0]))
    assert type(caught.value) is error


# --- the workflow: build_gunrock runs, and without nvcc the solve jobs are skipped with the reason ------------------
@pytest.mark.needs_mirror("gunrock")
def test_workflow_builds_gunrock_and_skips_without_nvcc(tmp_path, mirror, monkeypatch):
    monkeypatch.setenv("NVCC", "no-such-nvcc-1234")
    results = tmp_path / "results"
    config = {"results": str(results), "mirror": str(mirror), "simulate": "always", "trials": 1, "warmup": 0,
              "sources": {"count": 2, "seed": 1},
              "graphs": {"grid": {"generate": "grid", "params": {"rows": 6, "cols": 6}}},
              "solvers": [{"name": "scipy_dijkstra"}, {"name": "gunrock_sssp"}]}
    cfg = write_config(tmp_path / "config.yaml", config)
    snakemake("--cores", 2, "--configfile", cfg, check=True, env=plotless_env(tmp_path / "bin"))  # no figures drawn
    info = peers.read_build(results / "peers" / peers.folder_name("gunrock"))
    assert info["ok"] is False and "no CUDA compiler" in info["reason"]
    assert (results / "logs" / "build_gunrock.log").exists()
    record = json.loads((results / "runs" / "grid" / "gunrock_sssp" / "default.json").read_text())
    assert record["status"] == "skipped" and "no CUDA compiler" in record["reason"]
    assert "gunrock_sssp" in (results / "tables" / "summary.csv").read_text()


# --- on a real GPU: exact distances, every setting run and recorded, and the fix shown to matter ----------------------
def gpu_cases():
    return [*sssp_cases(), ("long-int64", long_path_graph(), 0), ("random-2000", random_graph(2000, 12000, seed=4), 7)]


@gpu_only
@pytest.mark.parametrize("load_balance", [lb for lb in LOAD_BALANCES if lb != "merge_path_v2"])
@pytest.mark.parametrize("uniquify", [False, True])
def test_exact_distances_on_awkward_graphs(gunrock_real, load_balance, uniquify):
    for label, graph, source in gpu_cases():
        sources = sorted({source, 0, graph.n - 1})
        for r in solve_many(graph, "gunrock_sssp", sources, trials=2, load_balance=load_balance, uniquify=uniquify):
            verdict = check_sssp(graph, r.source, r.dist, None)
            assert verdict.ok, (label, r.source, load_balance, uniquify, verdict.mismatches)
            assert r.counters["atomic_min_ok"] is True and r.timings.median_ms > 0


@gpu_only
def test_every_load_balance_is_run_and_recorded(gunrock_real, tmp_path):
    """merge_path_v2 gave wrong distances on the road and SNAP graphs: whatever it gives is recorded, not hidden."""
    gfile = tmp_path / "r.npz"
    write_graph(random_graph(3000, 20000, seed=5), gfile, format="npz")
    for lb in LOAD_BALANCES:
        rec = tmp_path / f"{lb}.json"
        code = main(["solve", "--graph", str(gfile), "--solver", "gunrock_sssp", "--param", f"load_balance={lb}",
                     "--num-sources", "4", "--trials", "2", "--validate", "--record", str(rec)])
        r = json.loads(rec.read_text())
        assert r["status"] in ("ok", "failed-validation") and code == (0 if r["status"] == "ok" else 1)
        assert len(r["runs"]) == 4 and all(run["validation"] is not None for run in r["runs"])
        assert r["status"] == "ok" or lb == "merge_path_v2", (lb, r["reason"])


@gpu_only
def test_batch_mode_writes_every_source(gunrock_build, tmp_path):
    g = random_graph(500, 3000, seed=6)
    csr = gunrock.write_csr(g, tmp_path / "g.csr")
    (tmp_path / "s.txt").write_text("0\n17\n499\n")
    proc = subprocess.run([gunrock_build / "gunrock_sssp", csr, "--sources", tmp_path / "s.txt", "--warmup", "1",
                           "--trials", "2", "--distances", tmp_path / "d.bin"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert lines[0]["ready"] and lines[0]["n"] == 500 and lines[0]["device_fix"] and lines[0]["atomic_min_ok"]
    assert len(lines) == 1 + 3 * 3 and sum(not x["warmup"] for x in lines[1:]) == 6
    assert all(x["call_ms"] >= x["enact_ms"] > 0 for x in lines[1:])
    sources, dist = gunrock.read_distances(tmp_path / "d.bin", g)
    assert list(sources) == [0, 17, 499] and np.array_equal(dist, reference_distances(g, sources))


@gpu_only
def test_without_the_device_fix_distances_are_wrong(gunrock_build, tmp_path, monkeypatch):
    """The second build of the session, on a GPU only: nvcc alone leaves Gunrock's atomic minimum a plain read."""
    broken = peers.build("gunrock", tmp_path / "no-fix", device_fix=False, downloads=tmp_path,
                         mirror=str(mirror_with("gunrock")), offline=True)
    info = peers.read_build(broken)
    assert info["device_fix"] is False and info["ptx_atomic_min"] == 0
    g = random_graph(200, 1500, seed=7)
    monkeypatch.setenv("GPUSP_GUNROCK", str(broken))
    (r,) = solve_many(g, "gunrock_sssp", [0])
    assert r.counters["atomic_min_ok"] is False and r.counters["device_fix"] is False
    reference = reference_distances(g, [0])[0]
    assert not check_sssp(g, 0, r.dist, None).ok
    assert np.count_nonzero(r.dist != reference) > 0.5 * np.count_nonzero(reference != g.inf)
    monkeypatch.setenv("GPUSP_GUNROCK", str(gunrock_build))
    (fixed,) = solve_many(g, "gunrock_sssp", [0])
    assert np.array_equal(fixed.dist, reference) and fixed.counters["atomic_min_ok"] is True
