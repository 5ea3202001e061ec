"""The GAPBS peer (gapbs_sssp): pinned archive from the mirror, safe extraction, the build (GAPBS's own binaries and
gpusp's driver gapbs_sssp_many compiled against the archive), the driver alone (many sources in one process, its
timings, distances equal to SciPy's on awkward graphs, GAPBS's verifier, clear errors for bad sources and graphs), the
solver through the harness and the CLI (one driver per job, load time apart, distances or GAPBS's verifier), the skip
reasons (no compiler, no OpenMP, negative weights, distances beyond int32), and the workflow's build_gapbs rule end to
end. Needs g++ (or $CXX) with OpenMP and make, and the pinned archive (the offline mirror's, else a download:
tests/conftest.py's needs_mirror); without them the tests that need them skip with the reason. A few minutes (the
build alone takes about 40 s).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import numpy as np
import pytest
from cases import random_graph
from conftest import failing_tool, mirror_with
from test_workflow import plotless_env, snakemake, write_config

from gpusp.solvers.peers import build as peers
from gpusp.solvers.peers import cudabuild
from gpusp.solvers import registry
from gpusp.measure.harness import solve_many
from gpusp.cli import main
from gpusp.data.download import sha256_file
from gpusp.errors import BuildError, DownloadError, GpuspError, SolverError, SolverUnavailable
from gpusp.data.graph import Graph
from gpusp.solvers.peers.gapbs import solver as gapbs_solver
from gpusp.measure.validate import NO_PARENTS, reference_distances

pytestmark = pytest.mark.timeout(600)  # room for a host several times slower than usual
ENTRY = peers.get_peer("gapbs")
DRIVER = "gapbs_sssp_many"
CLOCK_STEP_MS = 1.0  # how far GAPBS's real-time clock may run ahead of our monotonic one within a trial
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
    for target in ("sssp", "converter", DRIVER):
        assert os.access(gapbs_build / target, os.X_OK) and info["binaries"][target] == target
    driver = cudabuild.driver_sha256(ENTRY["driver"])
    assert info["driver_sha256"] == driver == sha256_file(gapbs_build / ENTRY["driver"])
    assert info["driver_flags"] == "-std=c++11 -O3 -Wall -fopenmp" and info["compile_s"] > 0
    assert not list(gapbs_build.parent.glob(".*.build")), "a staging folder was left behind"
    stamp = (gapbs_build / peers.BUILD_INFO).stat().st_mtime_ns
    assert peers.build("gapbs", gapbs_build, mirror=str(tmp_path / "no-mirror"), offline=True) == gapbs_build
    assert (gapbs_build / peers.BUILD_INFO).stat().st_mtime_ns == stamp
    assert peers.source_key("gapbs") == f"commit={ENTRY['commit']} driver_sha256={info['driver_sha256']}"


def test_a_build_of_another_driver_is_refused(tmp_path, monkeypatch):
    """A build made before gpusp's driver changed (or without it) is not used: the error names the rebuild."""
    (tmp_path / peers.BUILD_INFO).write_text(json.dumps({"peer": "gapbs", "commit": ENTRY["commit"], "ok": True,
                                                          "binaries": {"sssp": "sssp", "converter": "converter"}}))
    monkeypatch.setenv("GPUSP_GAPBS", str(tmp_path))
    with pytest.raises(GpuspError, match="gapbs_sssp_many.cc.*--force"):
        peers.locate("gapbs")


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


def test_no_compiler_needs_no_archive(tmp_path):
    """The tools are probed first: with --unavailable-ok, a machine with neither a compiler nor the archive (offline,
    an empty mirror) gets its 'unavailable' build without a download."""
    empty = tmp_path / "empty-mirror"
    empty.mkdir()
    dest = peers.build("gapbs", tmp_path / "b", cxx="no-such-cxx-1234", downloads=tmp_path / "dl", mirror=str(empty),
                       offline=True, unavailable_ok=True)
    info = peers.read_build(dest)
    assert info["ok"] is False and "no C++ compiler" in info["reason"]
    assert not (tmp_path / "dl").exists() or not any((tmp_path / "dl").iterdir())


def compiler_that(tmp_path, then: str) -> str:
    """A C++ compiler that builds the OpenMP probe and answers --version, and runs the shell line ``then`` for any
    other compile (GAPBS's Makefile)."""
    script = tmp_path / "cxx"
    script.write_text("#!/bin/sh\ncase \"$*\" in *omp_probe*) exit 0;; *--version*) echo fake 1.0; exit 0;; esac\n"
                      f"{then}\n")
    script.chmod(0o755)
    return str(script)


@pytest.mark.needs_mirror("gapbs")
def test_a_failed_compile_names_the_compilers_error_and_keeps_its_log(tmp_path, mirror):
    cxx = compiler_that(tmp_path, "echo 'sssp.cc:12:3: error: no member named bad' >&2; "
                                  "for i in 1 2 3 4 5 6 7 8; do echo 'note: noise' >&2; done; exit 1")
    dest = tmp_path / "b"
    with pytest.raises(BuildError) as caught:
        peers.build("gapbs", dest, cxx=cxx, downloads=tmp_path, mirror=str(mirror), offline=True)
    first = str(caught.value).splitlines()[0]  # the line `gpusp peers build` prints
    kept = tmp_path / "b.failed-build.log"
    assert "sssp.cc:12:3: error: no member named bad" in first and str(kept) in first
    assert "error: no member named bad" in kept.read_text()
    assert not dest.exists() and not list(tmp_path.glob(".b.*.build"))


@pytest.mark.needs_mirror("gapbs")
def test_a_stopped_build_ends_its_compiler_and_leaves_no_staging_folder(tmp_path, mirror):
    pid_file = tmp_path / "compiler.pid"
    cxx = compiler_that(tmp_path, f"echo $$ > {pid_file}; sleep 120")
    code = (f"from gpusp.solvers.peers import build as peers\n"
            f"peers.build('gapbs', {str(tmp_path / 'b')!r}, cxx={cxx!r}, downloads={str(tmp_path)!r}, "
            f"mirror={str(mirror)!r}, offline=True)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not pid_file.exists() or not pid_file.read_text().strip():
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.poll() else "slow"
        time.sleep(0.05)
    compiler = int(pid_file.read_text())
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 128 + signal.SIGTERM
    time.sleep(0.2)
    status = Path(f"/proc/{compiler}/status")
    # gone, or a zombie that nobody has reaped yet (a container's first process may reap nothing): not running
    assert not status.exists() or "\nState:\tZ" in status.read_text()
    assert not (tmp_path / "b").exists() and not list(tmp_path.glob(".b.*.build"))


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


# --- the driver alone: many sources in one process, its lines, its distances, its errors --------------------------
def drive(build: Path, *args, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(build / DRIVER), *map(str, args)], input=stdin, capture_output=True, text=True,
                          timeout=120, check=False)


def lines_of(proc: subprocess.CompletedProcess) -> list[dict]:
    return [json.loads(line) for line in proc.stdout.splitlines()]


def gapbs_distances(raw: np.ndarray, graph: Graph) -> np.ndarray:
    """The driver's int32 distances in gpusp's terms (GAPBS's infinity 2^30 - 1 is graph.inf)."""
    return np.where(raw == gapbs_solver.GAPBS_INF, graph.inf, raw.astype(np.int64))


def write_raw_gr(graph: Graph, path: Path) -> Path:
    """Every arc of ``graph`` as DIMACS .gr, parallel arcs and self-loops included (GAPBS's builder drops the
    heavier duplicates and the loops itself), and a weightless loop on the last vertex so that GAPBS counts it."""
    src, dst, w = graph.coo()
    rows = [f"a {u + 1} {v + 1} {x}" for u, v, x in zip(src, dst, w)] + [f"a {graph.n} {graph.n} 0"]
    path.write_text(f"p sp {graph.n} {len(rows)}\n" + "\n".join(rows) + "\n")
    return path


def located(build: Path) -> dict:
    return {**peers.read_build(build), "folder": str(build)}


@pytest.mark.parametrize("kind", ["wsg", "gr"])
def test_the_driver_runs_every_source_in_one_process(gapbs_build, tmp_path, kind):
    """Distances of every source equal SciPy's on graphs with parallel arcs, self-loops and unreachable vertices, read
    from the serialized .wsg the solver writes or from a .gr GAPBS builds itself; the lines parse."""
    for graph in (awkward_graph(), random_graph(40, 160, seed=5, wmin=0, wmax=30)):
        folder = tmp_path / f"{kind}-{graph.name}"
        folder.mkdir()
        path = (gapbs_solver.write_input(graph, folder) if kind == "wsg"
                else write_raw_gr(graph, folder / "g.gr"))
        sources = [0, 3, graph.n - 1, 3]
        (folder / "sources.txt").write_text("# seeded\n" + "".join(f" {s}\n" for s in sources) + "\n")
        proc = drive(gapbs_build, path, "--sources", folder / "sources.txt", "--warmup", 2, "--trials", 3,
                     "--delta", 4, "--threads", 2, "--verify", "--distances", folder / "dist")
        assert proc.returncode == 0, proc.stderr
        out = lines_of(proc)
        ready, done = out[0], out[-1]
        assert ready["ready"] and ready["n"] == graph.n and ready["m"] == graph.simple().m and ready["load_ms"] >= 0
        assert ready["threads"] == 2 and ready["delta"] == 4
        trials = [x for x in out if "trial_ms" in x]
        assert [(x["source"], x["warmup"]) for x in trials] == [(0, True)] * 2 + [(s, False) for s in sources
                                                                                  for _ in range(3)]
        assert all(isinstance(x["trial_ms"], float) and x["trial_ms"] >= 0 for x in trials)
        assert done == {"done": True, "sources": 4, "wall_ms": done["wall_ms"]}
        assert done["wall_ms"] >= sum(x["trial_ms"] for x in trials)
        ref = reference_distances(graph, sources)
        verdicts = [x for x in out if "verified" in x]
        saved = [x for x in out if "saved" in x]
        assert [x["source"] for x in verdicts] == [x["source"] for x in saved] == sources
        for i, s in enumerate(sources):
            raw = np.fromfile(folder / "dist" / f"source-{s}.int32", dtype="<i4")
            assert np.array_equal(gapbs_distances(raw, graph), ref[i]), (graph.name, s)
            reached = int(np.count_nonzero(ref[i] != graph.inf))
            assert verdicts[i]["verified"] is True and verdicts[i]["mismatch_count"] == 0
            assert verdicts[i]["reached"] == saved[i]["reached"] == reached
            assert saved[i]["max_distance"] == int(ref[i][ref[i] != graph.inf].max())
        assert not list((folder / "dist").glob("*.part"))
        assert "Read Time" in proc.stderr  # GAPBS's own prints go to stderr, never among the answers


def test_the_served_driver_answers_runs_checks_and_saves(gapbs_build, tmp_path):
    graph = awkward_graph()
    path = gapbs_solver.write_input(graph, tmp_path)
    commands = ["save early.bin", "run 6", "verify", f"save {tmp_path / 'six.bin'}", "run 9", "run x", "bogus",
                "run 0", f"save {tmp_path / 'zero.bin'}", "quit", "run 1"]
    proc = drive(gapbs_build, path, "--serve", "--delta", 2, "--threads", 1, stdin="\n".join(commands) + "\n")
    assert proc.returncode == 0, proc.stderr
    ready, early, six, verdict, saved, nine, x, bogus, zero, saved0 = lines_of(proc)  # nothing after quit
    assert ready["threads"] == 1 and "before any run" in early["error"]
    assert six["source"] == 6 and six["trial_ms"] >= 0 and verdict["verified"] and verdict["reached"] == 2
    assert saved["reached"] == 2 and saved["max_distance"] == 2
    assert "no vertex of 0..8" in nine["error"] and "'x'" in x["error"] and "unknown command" in bogus["error"]
    assert zero["source"] == 0 and saved0["reached"] == 6
    for source, name in ((6, "six.bin"), (0, "zero.bin")):
        raw = np.fromfile(tmp_path / name, dtype="<i4")
        assert np.array_equal(gapbs_distances(raw, graph), reference_distances(graph, [source])[0])


@pytest.mark.parametrize("text, said", [
    ("0\n3\nx\n", ":3: 'x' is no vertex of 0..8"),
    ("0\n9\n", ":2: '9' is no vertex of 0..8"),
    ("-1\n", ":1: '-1' is no vertex"),
    ("2 3\n", ":1: '2 3' is no vertex"),
    ("# nothing\n\n", ": no sources"),
])
def test_a_bad_sources_file_is_named_with_its_line(gapbs_build, tmp_path, text, said):
    path = gapbs_solver.write_input(awkward_graph(), tmp_path)
    sources = tmp_path / "sources.txt"
    sources.write_text(text)
    proc = drive(gapbs_build, path, "--sources", sources)
    assert proc.returncode == 2 and f"gapbs_sssp_many: error: {sources}{said}" in proc.stderr, proc.stderr
    assert not [x for x in lines_of(proc) if "trial_ms" in x]


def test_bad_graphs_and_arguments_are_refused_with_reasons(gapbs_build, tmp_path):
    wsg = gapbs_solver.write_input(awkward_graph(), tmp_path)
    sources = tmp_path / "s.txt"
    sources.write_text("0\n")
    cut = tmp_path / "cut.wsg"
    cut.write_bytes(wsg.read_bytes()[:-4])
    other = tmp_path / "g.txt"
    other.write_text("a 1 2 3\n")
    cases = [((tmp_path / "none.wsg", "--sources", sources), "none.wsg: cannot open"),
             ((cut, "--sources", sources), f"{wsg.stat().st_size - 4} bytes; a directed .wsg of n = 9"),
             ((other, "--sources", sources), "not '.txt'"),
             ((wsg, "--sources", tmp_path / "missing.txt"), "missing.txt: cannot open"),
             ((wsg,), "usage:"), ((wsg, "--serve", "--verify"), "go with --sources"),
             ((wsg, "--serve", "--delta", 0), "--delta 0: expected an integer from 1"),
             ((wsg, "--serve", "--frobnicate"), "unknown option --frobnicate")]
    for args, said in cases:
        proc = drive(gapbs_build, *args, stdin="")
        assert proc.returncode == 2 and said in proc.stderr, (args, proc.stderr)
    loops = tmp_path / "loops.gr"
    loops.write_text("p sp 2 2\na 1 1 3\na 2 2 1\n")
    proc = drive(gapbs_build, loops, "--serve", stdin="")
    assert proc.returncode == 2 and "no arc that is not a self-loop" in proc.stderr


# --- the solver: one driver per job, GAPBS's own times, distances or its verifier's verdict ----------------------
@pytest.fixture
def drivers(monkeypatch) -> list:
    """Every driver process the solver starts."""
    started = []

    class Counted(gapbs_solver.Served):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            started.append(self)

    monkeypatch.setattr(gapbs_solver, "Served", Counted)
    return started


@pytest.mark.parametrize("threads", [1, 2])
def test_runs_from_several_sources_in_one_driver(gapbs, drivers, threads):
    g = awkward_graph()
    sources = [0, 3, 6, 8, 3]
    results = list(solve_many(g, "gapbs_sssp", sources, trials=2, warmup=1, threads=threads))
    assert len(drivers) == 1 and drivers[0].proc.poll() is None  # one process, still serving
    ref = reference_distances(g, sources)
    load = results[0].counters["driver_load_ms"]
    for i, r in enumerate(results):
        c, t = r.counters, r.timings
        assert r.source == sources[i] and np.array_equal(r.dist, ref[i]) and r.parent is None
        assert c["arcs"] == g.simple().m and c["threads"] == threads and c["delta"] == g.default_delta()
        assert c["driver_load_ms"] == load >= 0 and "peer_verified" not in c and c["gapbs_commit"] == ENTRY["commit"]
        assert t.clock == "peer:gapbs" and len(t.samples_ms) == 2 and t.compile_s == 0.0 and t.d2h_ms > 0
        # GAPBS times a trial on the real-time clock (gettimeofday), ours around the call on the monotonic one; an
        # adjustment of the real-time clock during a trial can put a sample above its wall time (one CI run saw it)
        walls = c["wall_ms"]
        assert all(0 <= s <= w + CLOCK_STEP_MS for s, w in zip(t.samples_ms, walls)), (t.samples_ms, walls)
    assert results[0].timings.h2d_ms > 0 and len(results[0].timings.warmup_ms) == 1
    assert all(r.timings.h2d_ms == 0 and not r.timings.warmup_ms for r in results[1:])


def test_the_verifier_checks_every_trial_apart(gapbs, drivers):
    g = awkward_graph()
    results = list(solve_many(g, "gapbs_sssp", [0, 6, 8], trials=3, warmup=1, threads=1, check="verifier"))
    assert len(drivers) == 1
    for r, reached in zip(results, (6, 2, 1)):
        c = r.counters
        assert r.dist is None and c["peer_verified"] is True and c["peer_mismatches"] == []
        assert c["peer_trials_verified"] == 3 and len(c["verify_ms"]) == 3 and c["reachable"] == reached


def test_cli_validates_distances_or_records_the_verifier(gapbs, tmp_path, capsys):
    for check, method in (("distances", "distances"), ("verifier", "peer verifier")):
        rec, ans, verdict = tmp_path / f"{check}.json", tmp_path / f"{check}.npz", tmp_path / f"{check}.v.json"
        assert main(["solve", "--graph", str(REPO_TINY), "--solver", "gapbs_sssp", "--num-sources", "3", "--trials",
                     "2", "--param", "threads=2", "--param", "delta=50", "--param", f"check={check}", "--validate",
                     "--record", str(rec), "--answer", str(ans)]) == 0
        r = json.loads(rec.read_text())
        assert r["status"] == "ok" and r["summary"]["validated"] is True and len(r["runs"]) == 3
        for run in r["runs"]:
            assert run["validation"]["method"] == method and run["validation"]["ok"] is True
            assert run["timings"]["clock"] == "peer:gapbs" and len(run["counters"]["wall_ms"]) == 2
            assert run["counters"]["delta"] == 50 and run["reachable"] == 20 and run["counters"]["driver_load_ms"] >= 0
        if check == "distances":
            assert all(run["validation"]["reason"] == NO_PARENTS for run in r["runs"])
        assert r["peer"]["driver_sha256"] == cudabuild.driver_sha256(ENTRY["driver"])
        assert main(["validate", "--graph", str(REPO_TINY), "--answer", str(ans), "--output", str(verdict)]) == 0
        v = json.loads(verdict.read_text())
        assert v["ok"] is True and len(v["verdicts"]) == 3 and all(x["method"] == method for x in v["verdicts"])
    capsys.readouterr()


def test_a_driver_that_stops_says_why(gapbs_build, tmp_path, monkeypatch):
    """A stand-in driver that exits at once: the error names its exit status and its last words."""
    stand_in = tmp_path / "stand-in"
    stand_in.mkdir()
    shutil.copy(gapbs_build / peers.BUILD_INFO, stand_in)
    shutil.copy(gapbs_build / "converter", stand_in)
    failing_tool(stand_in, DRIVER, "gapbs_sssp_many: failed: std::bad_alloc")
    monkeypatch.setenv("GPUSP_GAPBS", str(stand_in))
    with pytest.raises(SolverError, match="exited 1: gapbs_sssp_many: failed: std::bad_alloc"):
        list(solve_many(awkward_graph(), "gapbs_sssp", [0]))


def test_distance_files_and_verifier_lines_are_read_back(tmp_path):
    g = awkward_graph()
    path = tmp_path / "d.int32"
    np.array([0, 5, gapbs_solver.GAPBS_INF, 7, 1, 2, 3, 4, gapbs_solver.GAPBS_INF], dtype="<i4").tofile(path)
    dist = gapbs_solver.read_distances(path, g)
    assert dist.dtype == g.dtype and dist[2] == dist[8] == g.inf and dist[1] == 5
    path.write_bytes(path.read_bytes()[:-4])
    with pytest.raises(GpuspError, match=f"{path}: 32 bytes, not the 9 int32"):
        gapbs_solver.read_distances(path, g)
    verdict = {"mismatches": ["2: 9 != 7", "5: 1073741823 != 12"], "mismatch_count": 14}
    assert gapbs_solver.mismatches(verdict) == ["dist[2] = 9, gapbs verifier 7",
                                                "dist[5] = 1073741823, gapbs verifier 12", "and 12 more"]


# --- refusals: negative weights, distances beyond GAPBS's int32 ------------------------------------------
def test_negative_weights_and_long_distances_are_skipped_with_reason(gapbs, tmp_path):
    neg = Graph.from_edges(3, [0, 1], [1, 2], [4, -2])
    spec = registry.get("gapbs_sssp")
    assert "negative weights" in spec.why_not(3, 2, negative=True)
    with pytest.raises(SolverUnavailable, match="negative weights"):
        list(solve_many(neg, "gapbs_sssp", [0]))
    long = long_path_graph()
    assert long.dtype == np.int64 and gapbs_solver.refusal(long) is None and spec.why_not(4, 3, itemsize=8) is None
    # A wide delta: GAPBS keeps one bin per delta up to the farthest distance, 2^29 bins (about 13 GB) at delta 1.
    for check in ("distances", "verifier"):
        with pytest.raises(SolverUnavailable, match="int32.*reached distance 536870912"):
            list(solve_many(long, "gapbs_sssp", [0], delta=2**24, check=check))
    (res,) = solve_many(long, "gapbs_sssp", [3], delta=1)  # int64 in gpusp, but vertex 3 reaches nothing
    assert np.array_equal(res.dist, [long.inf] * 3 + [0])
    assert long.default_delta() > gapbs_solver.GAPBS_INF  # the default delta is narrowed to what GAPBS takes
    (res,) = solve_many(long, "gapbs_sssp", [3])
    assert res.counters["delta"] == gapbs_solver.GAPBS_INF
    with pytest.raises(SolverError, match="delta 1073741824 is beyond"):
        list(solve_many(long, "gapbs_sssp", [3], delta=2**30))
    gfile, rec = tmp_path / "long.npz", tmp_path / "r.json"
    from gpusp.data.formats import write_graph

    write_graph(long, gfile, format="npz")
    assert main(["solve", "--graph", str(gfile), "--solver", "gapbs_sssp", "--source", "0",
                 "--record", str(rec)]) == 0
    record = json.loads(rec.read_text())
    assert record["status"] == "skipped" and "int32" in record["reason"]


def test_an_answer_is_whole_when_one_more_arc_fits_below_infinity():
    """The certificate (docs/peers.md): the largest distance plus the heaviest arc below 2^30 - 1; checked against a
    graph whose true distances pass 2^30 - 1, where GAPBS would leave the far vertex at infinity."""
    g = long_path_graph()
    w = int(g.weights.max())
    assert gapbs_solver.answer_refusal(g, 0, gapbs_solver.GAPBS_INF - 1 - w, w) is None
    assert "one more arc of up to" in gapbs_solver.answer_refusal(g, 0, gapbs_solver.GAPBS_INF - w, w)
    assert reference_distances(g, [0])[0][2] >= gapbs_solver.GAPBS_INF  # what the refusal guards against


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
    snakemake("--cores", 2, "--configfile", cfg, check=True, env=plotless_env(tmp_path / "bin"))  # no figures drawn
    build = results / "peers" / peers.folder_name("gapbs")
    assert peers.read_build(build)["ok"] and (results / "logs" / "build_gapbs.log").exists()
    run = results / "runs" / "grid" / "gapbs_sssp" / "threads-1"
    record = json.loads(run.with_suffix(".json").read_text())
    assert record["status"] == "ok" and all(r["counters"]["driver_load_ms"] >= 0 for r in record["runs"])
    verdict = json.loads(Path(f"{run}.verdict.json").read_text())
    assert verdict["ok"] is True and all(v["method"] == "distances" for v in verdict["verdicts"])
    summary = (results / "tables" / "summary.csv").read_text()
    assert "gapbs_sssp" in summary
    shutil.rmtree(results / "peers")  # a few MB of build output


@pytest.mark.needs_mirror("gapbs")
def test_a_working_build_in_the_cache_is_copied_not_rebuilt(tmp_path, monkeypatch, mirror):
    monkeypatch.setenv("GPUSP_CACHE", str(tmp_path / "cache"))
    first = peers.build("gapbs", tmp_path / "results-a" / "gapbs", downloads=tmp_path / "dl", mirror=str(mirror),
                        offline=True)
    shared = tmp_path / "cache" / "peers" / peers.folder_name("gapbs")
    assert peers.read_build(shared) == peers.read_build(first)  # the build made for one results folder is cached
    monkeypatch.setattr(peers, "_stage", lambda *a: pytest.fail("a second results folder must not build again"))
    second = peers.build("gapbs", tmp_path / "results-b" / "gapbs", downloads=tmp_path / "dl", mirror=str(mirror),
                         offline=True)
    assert peers.read_build(second) == peers.read_build(first)
    driver = peers.binary(peers.read_build(second) | {"folder": str(second)}, "gapbs_sssp_many")
    assert os.access(driver, os.X_OK)
