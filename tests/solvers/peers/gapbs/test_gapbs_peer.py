"""The GAPBS peer (gapbs_sssp): pinned archive from the mirror, safe extraction, the build, runs on
awkward graphs from several sources with GAPBS's own times and verifier verdict recorded, the skip
reasons (no compiler, no OpenMP, negative weights, distances beyond int32), and the workflow's build_gapbs
rule end to end. Needs g++ (or $CXX) with OpenMP and make, and the pinned archive (the offline mirror's, else a
download: tests/conftest.py's needs_mirror); without them the tests that need them skip with the reason. About 30 s.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tarfile
from pathlib import Path

import numpy as np
import pytest
from conftest import failing_tool, mirror_with
from test_workflow import snakemake, write_config

from gpusp.solvers.peers import build as peers
from gpusp.solvers import registry
from gpusp.measure.harness import solve_many
from gpusp.cli import main
from gpusp.data.download import sha256_file
from gpusp.errors import BuildError, DownloadError, SolverUnavailable
from gpusp.data.graph import Graph
from gpusp.solvers.peers.gapbs.solver import hop_eccentricity, parse_output, refusal, source_refusal
from gpusp.measure.validate import reference_distances

pytestmark = pytest.mark.timeout(300)
ENTRY = peers.get_peer("gapbs")
REPO_TINY = Path(__file__).resolve().parents[4] / "src" / "gpusp" / "data" / "tiny.gr"


@pytest.fixture(scope="session")
def gapbs_build(tmp_path_factory):
    """One build of the pinned GAPBS for the whole session (skips with the reason when it cannot be)."""
    reason = peers.probe(peers.compiler())
    if reason:
        pytest.skip(reason)
    mirror = mirror_with("gapbs")
    root = tmp_path_factory.mktemp("gapbs")
    return peers.build("gapbs", root / "build", downloads=root / "downloads", mirror=str(mirror), offline=True)


@pytest.fixture
def gapbs(gapbs_build, monkeypatch):
    """GPUSP_GAPBS names the session's build: the solver finds its binary there."""
    monkeypatch.setenv("GPUSP_GAPBS", str(gapbs_build))
    return gapbs_build


def awkward_graph() -> Graph:
    """Parallel arcs (the lighter must win), self-loops, an unreachable pair and an isolated last vertex."""
    edges = [(0, 1, 7), (0, 1, 3), (1, 1, 2), (1, 2, 4), (0, 2, 9), (2, 3, 1), (3, 0, 2), (2, 2, 0),
             (3, 4, 6), (4, 5, 1), (5, 3, 1), (6, 7, 2), (7, 6, 2), (6, 6, 5)]
    src, dst, w = (np.array(c) for c in zip(*edges))
    return Graph.from_edges(9, src, dst, w, name="awkward")


def long_path_graph() -> Graph:
    """Path lengths beyond 2^30: int64 distances."""
    return Graph.from_edges(4, [0, 1, 2], [1, 2, 3], [2**29, 2**29, 2**29], name="long")


# --- archive: fetched from the mirror, verified, extracted safely -------------------------------------
@pytest.mark.needs_mirror("gapbs")
def test_archive_from_mirror_is_verified(tmp_path, mirror):
    path = peers.fetch_archive("gapbs", tmp_path, mirror=str(mirror), offline=True)
    assert path.name == ENTRY["filename"] and sha256_file(path) == ENTRY["sha256"]
    bad = tmp_path / "bad-mirror" / "peers"
    bad.mkdir(parents=True)
    (bad / ENTRY["filename"]).write_bytes(b"not the archive")
    with pytest.raises(DownloadError, match="offline"):
        peers.fetch_archive("gapbs", tmp_path / "out", mirror=str(bad.parent), offline=True)
    assert not (tmp_path / "out" / ENTRY["filename"]).exists()


def _tar(path: Path, members: list[tarfile.TarInfo]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for info in members:
            tar.addfile(info, io.BytesIO(b"x" * info.size) if info.isfile() else None)
    return path


@pytest.mark.parametrize("member", ["../evil", "/abs/evil", "other/file", "top/link"])
def test_extract_refuses_unsafe_members(tmp_path, member):
    info = tarfile.TarInfo(member)
    if member == "top/link":
        info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
    else:
        info.size = 1
    archive = _tar(tmp_path / "a.tar.gz", [info])
    with pytest.raises(BuildError, match="member"):
        peers.extract(archive, tmp_path / "x", "top")
    assert not (tmp_path / "x").exists() or not any((tmp_path / "x").iterdir())


# --- build: atomic, recorded, reused; unavailable without a compiler ------------------------------------
def test_build_is_complete_and_reused(gapbs_build, tmp_path):
    info = peers.read_build(gapbs_build)
    assert info["ok"] and info["commit"] == ENTRY["commit"] and info["archive_sha256"] == ENTRY["sha256"]
    for target in ("sssp", "converter"):
        assert os.access(gapbs_build / target, os.X_OK)
    assert not list(gapbs_build.parent.glob(".*.build")), "a staging folder was left behind"
    stamp = (gapbs_build / peers.BUILD_INFO).stat().st_mtime_ns
    assert peers.build("gapbs", gapbs_build, mirror=str(tmp_path / "no-mirror"), offline=True) == gapbs_build
    assert (gapbs_build / peers.BUILD_INFO).stat().st_mtime_ns == stamp


def fake_cxx(tmp_path) -> str:
    return failing_tool(tmp_path, "fake-cxx", "fake-cxx: no OpenMP here")


@pytest.mark.needs_mirror("gapbs")
def test_no_compiler_or_no_openmp_is_unavailable(tmp_path, mirror):
    with pytest.raises(SolverUnavailable, match="no C\\+\\+ compiler"):
        peers.build("gapbs", tmp_path / "b1", cxx="no-such-cxx-1234", downloads=tmp_path, mirror=str(mirror),
                    offline=True)
    with pytest.raises(SolverUnavailable, match="OpenMP.*no OpenMP here"):
        peers.build("gapbs", tmp_path / "b2", cxx=fake_cxx(tmp_path), downloads=tmp_path, mirror=str(mirror),
                    offline=True)
    assert not (tmp_path / "b1").exists() and not (tmp_path / "b2").exists()


@pytest.mark.needs_mirror("gapbs")
def test_unavailable_build_makes_the_solver_skip(tmp_path, monkeypatch, capsys, mirror):
    monkeypatch.setenv("CXX", fake_cxx(tmp_path))
    dest = tmp_path / "build"
    assert main(["peers", "build", "gapbs", "--dest", str(dest), "--downloads", str(tmp_path), "--mirror",
                 str(mirror), "--offline", "--unavailable-ok"]) == 0
    info = peers.read_build(dest)
    assert info["ok"] is False and "OpenMP" in info["reason"]
    monkeypatch.setenv("GPUSP_GAPBS", str(dest))
    rec, ans = tmp_path / "r.json", tmp_path / "a.npz"
    assert main(["solve", "--graph", str(REPO_TINY), "--solver", "gapbs_sssp", "--source", "0", "--record",
                 str(rec), "--answer", str(ans)]) == 0
    r = json.loads(rec.read_text())
    assert r["status"] == "skipped" and "OpenMP" in r["reason"] and r["runs"] == []
    assert "skipped" in capsys.readouterr().err


# --- runs: GAPBS's own times and verdict, on awkward graphs from several sources -------------------------
@pytest.mark.parametrize("threads", [1, 2])
def test_runs_from_several_sources(gapbs, threads):
    g = awkward_graph()
    sources = [0, 3, 6, 8]
    results = list(solve_many(g, "gapbs_sssp", sources, trials=2, warmup=1, threads=threads))
    ref = reference_distances(g, sources)
    for i, r in enumerate(results):
        c, t = r.counters, r.timings
        assert r.source == sources[i] and r.dist is None
        assert c["peer_verified"] is True and c["peer_mismatches"] == []
        assert c["reachable"] == int(np.count_nonzero(ref[i] != g.inf)), (r.source, c)
        assert c["arcs"] == g.simple().m and c["threads"] == threads and c["delta"] == g.default_delta()
        assert t.clock == "peer:gapbs" and len(t.samples_ms) == 2 and t.compile_s == 0.0
        assert all(0 <= s <= w for s, w in zip(t.samples_ms, c["wall_ms"])), (t.samples_ms, c["wall_ms"])
    assert results[0].timings.h2d_ms > 0 and len(results[0].timings.warmup_ms) == 1


def test_cli_records_times_and_verdict(gapbs, tmp_path, capsys):
    rec, ans, verdict = tmp_path / "r.json", tmp_path / "a.npz", tmp_path / "v.json"
    assert main(["solve", "--graph", str(REPO_TINY), "--solver", "gapbs_sssp", "--num-sources", "3",
                 "--trials", "2", "--param", "threads=2", "--param", "delta=50", "--record", str(rec),
                 "--answer", str(ans)]) == 0
    r = json.loads(rec.read_text())
    assert r["status"] == "ok" and r["summary"]["validated"] is True and len(r["runs"]) == 3
    for run in r["runs"]:
        assert run["validation"]["method"] == "peer verifier" and run["validation"]["ok"] is True
        assert run["timings"]["clock"] == "peer:gapbs" and len(run["counters"]["wall_ms"]) == 2
        assert run["counters"]["delta"] == 50 and run["reachable"] == 20
    assert main(["validate", "--graph", str(REPO_TINY), "--answer", str(ans), "--output", str(verdict)]) == 0
    v = json.loads(verdict.read_text())
    assert v["ok"] is True and v["method"] == "peer verifier" and len(v["verdicts"]) == 3
    assert "peer verifier" in capsys.readouterr().out


def test_failed_verification_is_parsed():
    text = ("Graph has 4 nodes and 3 directed edges for degree: 0\nTrial Time:          0.00002\n"
            "Verification:           PASS\nTrial Time:          0.00001\nSSSP Tree reaches 3 nodes\n"
            "2: 9 != 7\nVerification:           FAIL\n")
    c = parse_output(text, 4)
    assert c["peer_verified"] is False and c["peer_mismatches"] == ["dist[2] = 9, gapbs verifier 7"]
    assert c["peer_trial_ms"] == pytest.approx(0.01) and c["cold_trial_ms"] == pytest.approx(0.02)
    with pytest.raises(Exception, match="vertices"):
        parse_output(text, 5)


# --- refusals: negative weights, distances beyond GAPBS's int32 ------------------------------------------
def test_negative_weights_and_long_distances_are_skipped_with_reason(gapbs, tmp_path):
    neg = Graph.from_edges(3, [0, 1], [1, 2], [4, -2])
    spec = registry.get("gapbs_sssp")
    assert "negative weights" in spec.why_not(3, 2, negative=True)
    with pytest.raises(SolverUnavailable, match="negative weights"):
        list(solve_many(neg, "gapbs_sssp", [0]))
    long = long_path_graph()
    assert long.dtype == np.int64 and refusal(long) is None and spec.why_not(4, 3, itemsize=8) is None
    assert hop_eccentricity(long, 0) == 3 and hop_eccentricity(long, 3) == 0
    assert "int32" in source_refusal(long, 0, 1) and source_refusal(long, 3, 1) is None
    with pytest.raises(SolverUnavailable, match="int32"):
        list(solve_many(long, "gapbs_sssp", [0]))
    (res,) = solve_many(long, "gapbs_sssp", [3], delta=1)  # int64 in gpusp, but vertex 3 reaches nothing
    assert res.counters["peer_verified"] and res.counters["reachable"] == 1
    gfile, rec = tmp_path / "long.npz", tmp_path / "r.json"
    from gpusp.data.formats import write_graph

    write_graph(long, gfile, format="npz")
    assert main(["solve", "--graph", str(gfile), "--solver", "gapbs_sssp", "--source", "0",
                 "--record", str(rec)]) == 0
    record = json.loads(rec.read_text())
    assert record["status"] == "skipped" and "int32" in record["reason"]


def test_hop_eccentricity_bounds_the_distances():
    """h x w_max bounds every distance from the source on a seeded random graph (the bound GAPBS needs)."""
    rng = np.random.default_rng(3)
    g = Graph.from_edges(60, rng.integers(0, 60, 150), rng.integers(0, 60, 150), rng.integers(0, 50, 150))
    for s in (0, 7, 59):
        d = reference_distances(g, [s])[0]
        h = hop_eccentricity(g, s)
        assert d[d != g.inf].max() <= h * int(g.weights.max())
        hops = reference_distances(g.with_weights(np.ones(g.m, dtype=g.weights.dtype)), [s])[0]
        assert h == hops[hops != g.inf].max()


# --- the workflow: build_gapbs builds, the solve jobs find it through GPUSP_GAPBS ------------------------
@pytest.mark.needs_mirror("gapbs")
def test_workflow_builds_and_runs_gapbs(tmp_path, mirror):
    if peers.probe(peers.compiler()):
        pytest.skip(peers.probe(peers.compiler()))
    results = tmp_path / "results"
    config = {"results": str(results), "mirror": str(mirror), "simulate": "always", "trials": 2, "warmup": 1,
              "sources": {"count": 2, "seed": 1},
              "graphs": {"grid": {"generate": "grid", "params": {"rows": 30, "cols": 30}}},
              "solvers": [{"name": "scipy_dijkstra"}, {"name": "gapbs_sssp", "params": {"threads": 1}}]}
    cfg = write_config(tmp_path / "config.yaml", config)
    snakemake("--cores", 2, "--configfile", cfg, check=True)
    build = results / "peers" / peers.folder_name("gapbs")
    assert peers.read_build(build)["ok"] and (results / "logs" / "build_gapbs.log").exists()
    run = results / "runs" / "grid" / "gapbs_sssp" / "threads-1"
    record = json.loads(run.with_suffix(".json").read_text())
    assert record["status"] == "ok" and all(r["validation"]["method"] == "peer verifier" for r in record["runs"])
    assert json.loads(Path(f"{run}.verdict.json").read_text())["ok"] is True
    summary = (results / "tables" / "summary.csv").read_text()
    assert "gapbs_sssp" in summary
    shutil.rmtree(results / "peers")  # a few MB of build output
