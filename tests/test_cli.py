"""The ``gpusp`` command line, end to end.

Almost everything calls :func:`gpusp.cli.main` in-process (output through ``capsys``) for speed; one test
runs the installed ``gpusp`` console script in a subprocess to prove the entry point and its exit codes.
GPU solvers run in the CUDA simulator (tests/conftest.py). Nothing here touches the network: the only
dataset fetch copies from the offline mirror (the `mirror` fixture of tests/conftest.py, which may download into a
folder of its own before the test starts), with the downloader replaced by a tripwire.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse
import scipy.sparse.csgraph

import gpusp
from gpusp import cli, device
from gpusp.solvers import registry

TINY = Path(gpusp.__file__).parent / "data" / "tiny.gr"
TINY_N, TINY_M, ISOLATED = 21, 63, 20  # vertex 20 (DIMACS 21) has no edges at all


# --------------------------------------------------------------------------------------------- helpers
def run(capsys, *argv):
    """``gpusp argv`` in-process: (exit code, stdout, stderr)."""
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def ok(capsys, *argv) -> str:
    code, out, err = run(capsys, *argv)
    assert code == 0, f"gpusp {' '.join(map(str, argv))} failed ({code}): {err}"
    return out


def fails(capsys, *argv, names=()) -> str:
    """The command exits 1 with exactly one stderr line ``gpusp: error: ...`` containing ``names``."""
    code, out, err = run(capsys, *argv)
    assert code == 1, f"expected exit 1, got {code}; stdout {out!r} stderr {err!r}"
    lines = err.splitlines()
    assert len(lines) == 1, f"expected one stderr line, got {lines}"
    assert lines[0].startswith("gpusp: error: "), lines[0]
    for name in names:
        assert str(name) in lines[0], f"{name!r} not in {lines[0]!r}"
    return lines[0]


def usage_exit(*argv) -> int:
    with pytest.raises(SystemExit) as exc:
        cli.main([str(a) for a in argv])
    return exc.value.code


def checksum(path, **kw) -> str:
    return gpusp.read_graph(path, **kw).checksum()


def tiny_reference(source=0):
    g = gpusp.read_graph(TINY)
    src, dst, w = g.coo()
    mat = scipy.sparse.csr_matrix((w.astype(float), (src, dst)), shape=(g.n, g.n))
    return g, scipy.sparse.csgraph.dijkstra(mat, indices=source)


def _subcommands():
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    out = []
    for name, sp in sub.choices.items():
        out.append((name,))
        for a in sp._actions:
            if isinstance(a, argparse._SubParsersAction):
                out.extend((name, child) for child in a.choices)
    return out


# ------------------------------------------------------------------------------------------------ help
SUBCOMMANDS = _subcommands()


def test_every_documented_subcommand_is_there():
    names = {c[0] for c in SUBCOMMANDS}
    assert {"info", "convert", "generate", "weights", "datasets", "sources", "solvers", "solve", "validate",
            "prepare", "aggregate", "plot", "compile-check"} <= names
    assert {("datasets", "list"), ("datasets", "fetch")} <= set(SUBCOMMANDS)


@pytest.mark.parametrize("command", SUBCOMMANDS, ids=" ".join)
def test_help_of_every_subcommand(capsys, command):
    assert usage_exit(*command, "--help") == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: gpusp {' '.join(command)}")


def test_top_level_help_version_and_usage_errors(capsys):
    assert usage_exit("--help") == 0
    out = capsys.readouterr().out
    assert "usage: gpusp" in out and "solve" in out
    assert usage_exit("--version") == 0
    assert capsys.readouterr().out.strip() == f"gpusp {gpusp.__version__}"
    assert usage_exit() == 2  # no command
    assert usage_exit("frobnicate") == 2
    assert usage_exit("solve", "--graph", TINY) == 2  # --solver missing
    assert usage_exit("solve", "--graph", TINY, "--solver", "dijkstra_cpu", "--source", "0", "--sources", "x") == 2
    assert "usage:" in capsys.readouterr().err


def test_console_script_entry_point(tmp_path):
    """The installed ``gpusp`` script: --help exits 0, a failing command 1 with one error line, usage 2."""
    exe = shutil.which("gpusp") or str(Path(sys.executable).with_name("gpusp"))
    assert Path(exe).exists(), "the gpusp console script is not installed (pip install -e .)"
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    done = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0 and done.stdout.startswith("usage: gpusp"), done
    missing = tmp_path / "missing.gr"
    done = subprocess.run([exe, "info", str(missing)], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 1, done
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpusp: error: ") and "missing.gr" in lines[0], lines
    done = subprocess.run([exe], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 2 and "usage:" in done.stderr


# ------------------------------------------------------------------------------------------------ info
def test_info_tiny(capsys):
    out = ok(capsys, "info", TINY)
    fields = dict(re.findall(r"^(\S.*?\S)\s{2,}(.*)$", out, flags=re.M))
    assert fields["vertices n"] == "21"
    assert fields["edges m"] == "63"
    assert fields["weights"].startswith("real")
    assert "range [1, 200]" in fields["weights"]
    assert fields["duplicate edges"] == "0"
    assert fields["self-loops"] == "0"
    assert "(zero: 1)" in fields["out-degree"]
    assert fields["checksum"] == checksum(TINY)


def test_info_json(capsys):
    stats = json.loads(ok(capsys, "info", TINY, "--json"))
    assert stats["n"] == TINY_N and stats["m"] == TINY_M
    assert stats["weight_kind"] == "real"
    assert stats["duplicate_edges"] == 0 and stats["self_loops"] == 0
    assert stats["zero_out_degree"] == 1
    assert stats["checksum"] == checksum(TINY)


def test_info_counts_duplicates_and_self_loops(capsys, tmp_path):
    f = tmp_path / "dups.plain"
    # (0,1) three times -> 2 duplicates; self-loops on 1 and 2
    f.write_text("4 6\n0 1 5\n0 1 2\n1 1 3\n2 2 0\n1 2 1\n0 1 5\n")
    stats = json.loads(ok(capsys, "info", f, "--json"))
    assert (stats["n"], stats["m"], stats["duplicate_edges"], stats["self_loops"]) == (4, 6, 2, 2)
    out = ok(capsys, "info", f)
    assert re.search(r"^duplicate edges\s+2$", out, flags=re.M)
    assert re.search(r"^self-loops\s+2$", out, flags=re.M)
    # the format flag overrides the extension
    g = tmp_path / "dups.dat"
    g.write_bytes(f.read_bytes())
    assert json.loads(ok(capsys, "info", g, "--json", "--format", "plain"))["checksum"] == stats["checksum"]


# --------------------------------------------------------------------------------------------- convert
def test_convert_round_trip_keeps_the_graph(capsys, tmp_path):
    want = checksum(TINY)
    steps = [(TINY, tmp_path / "t.plain"), (tmp_path / "t.plain", tmp_path / "t.npz"),
             (tmp_path / "t.npz", tmp_path / "t.gr"), (tmp_path / "t.gr", tmp_path / "t.txt")]
    for src, dst in steps:
        out = ok(capsys, "convert", src, dst)
        assert out.strip() == f"wrote {dst}: n=21 m=63"
        assert checksum(dst) == want, f"{src.name} -> {dst.name} changed the graph"
    assert gpusp.read_graph(tmp_path / "t.npz").weight_kind == "real"
    # explicit --from/--to for names without a known extension
    ok(capsys, "convert", tmp_path / "t.plain", tmp_path / "t.dat", "--to", "gr")
    assert (tmp_path / "t.dat").read_bytes() == (tmp_path / "t.gr").read_bytes()
    ok(capsys, "convert", tmp_path / "t.dat", tmp_path / "u.plain", "--from", "gr")
    assert (tmp_path / "u.plain").read_bytes() == (tmp_path / "t.plain").read_bytes()


def test_convert_gz_output(capsys, tmp_path):
    for ext in ("gr", "plain", "txt"):
        plain, gz = tmp_path / f"t.{ext}", tmp_path / f"t.{ext}.gz"
        ok(capsys, "convert", TINY, plain)
        ok(capsys, "convert", TINY, gz)
        raw = gz.read_bytes()
        assert raw[:2] == b"\x1f\x8b"
        assert gzip.decompress(raw) == plain.read_bytes()
        assert checksum(gz) == checksum(TINY)
        ok(capsys, "convert", TINY, gz)  # text formats compress reproducibly
        assert gz.read_bytes() == raw
    # and back from .gz to plain text
    ok(capsys, "convert", tmp_path / "t.gr.gz", tmp_path / "back.gr")
    assert (tmp_path / "back.gr").read_bytes() == (tmp_path / "t.gr").read_bytes()


def test_convert_symmetrize_and_name(capsys, tmp_path):
    f = tmp_path / "d.plain"
    f.write_text("3 2\n0 1 4\n1 2 5\n")
    ok(capsys, "convert", f, tmp_path / "s.npz", "--symmetrize", "--name", "sym")
    g = gpusp.read_graph(tmp_path / "s.npz")
    assert g.name == "sym" and g.m == 4
    src, dst, w = g.coo()
    assert sorted(zip(src.tolist(), dst.tolist(), w.tolist())) == [(0, 1, 4), (1, 0, 4), (1, 2, 5), (2, 1, 5)]


def test_convert_refusal_leaves_no_output(capsys, tmp_path):
    """.gr cannot hold negative weights: the write fails and nothing is left under (or beside) the name."""
    f = tmp_path / "neg.plain"
    f.write_text("3 2\n0 1 -4\n1 2 5\n")
    fails(capsys, "convert", f, tmp_path / "neg.gr", names=["negative"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["neg.plain"]


# -------------------------------------------------------------------------------------------- generate
KINDS = [("complete", ["n=5"], 5, 20), ("random", ["n=20", "k=3"], 20, 60), ("rmat", ["scale=4"], 16, None),
         ("ring", ["n=6"], 6, 6), ("grid", ["rows=3", "cols=4"], 12, 34)]


@pytest.mark.parametrize("kind,params,n,m", KINDS, ids=[k[0] for k in KINDS])
def test_generate_is_seeded(capsys, tmp_path, kind, params, n, m):
    a, b, c = (tmp_path / f"{x}.gr" for x in "abc")
    out = ok(capsys, "generate", kind, a, *params, "--seed", 1)
    assert out.startswith(f"wrote {a}: ")
    ok(capsys, "generate", kind, b, *params, "--seed", 1)
    ok(capsys, "generate", kind, c, *params, "--seed", 2)
    assert a.read_bytes() == b.read_bytes(), "same seed, different files"
    assert a.read_bytes() != c.read_bytes(), "different seeds, same file"
    g = gpusp.read_graph(a)
    assert g.n == n and (m is None or g.m == m) and g.m > 0
    assert g.weight_kind == "generated"


def test_generate_name_format_and_errors(capsys, tmp_path):
    ok(capsys, "generate", "ring", tmp_path / "r.dat", "n=4", "--seed", 3, "--name", "myring", "--to", "npz")
    g = gpusp.read_graph(tmp_path / "r.dat", format="npz")
    assert (g.name, g.n, g.m) == ("myring", 4, 4)
    fails(capsys, "generate", "nope", tmp_path / "x.gr", names=["nope", "ring", "grid"])
    fails(capsys, "generate", "ring", tmp_path / "x.gr", "n=6", "bogus=1", names=["bogus"])
    fails(capsys, "generate", "ring", tmp_path / "x.gr", "n6", names=["key=value"])
    fails(capsys, "generate", "grid", tmp_path / "x.gr", "rows=3", names=["cols"])
    assert not (tmp_path / "x.gr").exists()


# --------------------------------------------------------------------------------------------- weights
SNAP_UNWEIGHTED = "# Directed graph\n# Nodes: 5 Edges: 6\n# FromNodeId\tToNodeId\n0\t1\n1\t2\n2\t0\n2\t3\n3\t4\n4\t0\n"


def test_weights_add_on_unweighted_snap(capsys, tmp_path):
    f = tmp_path / "u.txt"
    f.write_text(SNAP_UNWEIGHTED)
    assert gpusp.read_graph(f).weight_kind == "unit"
    a, b, c = tmp_path / "a.txt", tmp_path / "b.txt", tmp_path / "c.txt"
    out = ok(capsys, "weights", "add", f, a, "--min", 3, "--max", 9, "--seed", 5)
    assert out.strip() == f"wrote {a}: add weights in [3, 9] seed 5"
    ok(capsys, "weights", "add", f, b, "--min", 3, "--max", 9, "--seed", 5)
    ok(capsys, "weights", "add", f, c, "--min", 3, "--max", 9, "--seed", 6)
    assert a.read_bytes() == b.read_bytes()
    before, after = gpusp.read_graph(f), gpusp.read_graph(a)
    assert after.weight_kind == "generated"
    assert np.array_equal(before.indptr, after.indptr) and np.array_equal(before.indices, after.indices)
    assert 3 <= after.weights.min() and after.weights.max() <= 9
    assert not np.array_equal(after.weights, gpusp.read_graph(c).weights)


def test_weights_replace_on_weighted(capsys, tmp_path):
    out = tmp_path / "r.gr"
    ok(capsys, "weights", "replace", TINY, out, "--min", 5, "--max", 6, "--seed", 1)
    before, after = gpusp.read_graph(TINY), gpusp.read_graph(out)
    assert after.weight_kind == "generated"
    assert np.array_equal(before.indptr, after.indptr) and np.array_equal(before.indices, after.indices)
    assert set(after.weights.tolist()) <= {5, 6}


def test_weights_add_on_weighted_fails(capsys, tmp_path):
    out = tmp_path / "x.gr"
    fails(capsys, "weights", "add", TINY, out, names=["replace"])
    assert usage_exit("weights", "replace", TINY, out, "--min", 9, "--max", 1) == 2  # tests/test_arguments.py
    assert "argument --max: must be >= --min (9), got 1" in capsys.readouterr().err
    assert not out.exists()


# -------------------------------------------------------------------------------------------- datasets
def test_datasets_list(capsys):
    out = ok(capsys, "datasets", "list")
    names = [line.split()[0] for line in out.splitlines()]
    assert "USA-road-d.NY" in names and "p2p-Gnutella04" in names
    rows = json.loads(ok(capsys, "datasets", "list", "--json"))
    assert {"USA-road-d.NY", "p2p-Gnutella04", "p2p-Gnutella08"} <= {r["name"] for r in rows}
    assert names[0] == "dataset" and [r["name"] for r in rows] == names[1:]  # a header, then the rows


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to download fails the test loudly (there is no network, and we must not try)."""
    from gpusp.data import datasets

    def tripwire(url, *a, **k):
        raise AssertionError(f"tried to download {url}")

    monkeypatch.setattr(datasets, "download", tripwire)
    monkeypatch.delenv("GPUSP_MIRROR", raising=False)


@pytest.mark.needs_mirror("p2p-Gnutella08")
def test_datasets_fetch_from_mirror(capsys, tmp_path, no_network, mirror):
    mirrored = mirror / "p2p-Gnutella08.txt.gz"
    dest = tmp_path / "dl"
    out = ok(capsys, "datasets", "fetch", "p2p-Gnutella08", "--dest", dest, "--mirror", mirror, "--no-progress")
    got = dest / "p2p-Gnutella08.txt.gz"
    assert out.strip() == f"p2p-Gnutella08: {got}"
    assert got.read_bytes() == mirrored.read_bytes()
    g = gpusp.read_graph(got)
    assert (g.n, g.m) == (6301, 20777)
    # a verified file is kept: fetching again needs neither the mirror nor the network
    ok(capsys, "datasets", "fetch", "p2p-Gnutella08", "--dest", dest, "--mirror", tmp_path / "empty", "--no-progress")


def test_datasets_fetch_unknown(capsys, tmp_path, no_network):
    fails(capsys, "datasets", "fetch", "no-such-graph", "--dest", tmp_path, names=["no-such-graph", "p2p-Gnutella04"])
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------------------------- sources
def _read_sources_file(path):
    return [int(x) for x in Path(path).read_text().splitlines() if x and not x.startswith("#")]


def test_sources_seeded_and_only_with_out_edges(capsys, tmp_path):
    a, b, c = tmp_path / "a.txt", tmp_path / "b.txt", tmp_path / "c.txt"
    assert ok(capsys, "sources", TINY, a, "--count", 5, "--seed", 3).strip() == f"wrote {a}: 5 sources"
    ok(capsys, "sources", TINY, b, "--count", 5, "--seed", 3)
    ok(capsys, "sources", TINY, c, "--count", 5, "--seed", 4)
    assert a.read_bytes() == b.read_bytes()
    sa = _read_sources_file(a)
    assert len(sa) == len(set(sa)) == 5 and _read_sources_file(c) != sa
    assert a.read_text().startswith("# 5 sources of tiny")
    # every vertex with an out-edge: all but the isolated one; one more is refused, and a is left as it was
    ok(capsys, "sources", TINY, a, "--count", TINY_N - 1, "--seed", 0)
    assert sorted(_read_sources_file(a)) == [v for v in range(TINY_N) if v != ISOLATED]
    before = a.read_bytes()
    fails(capsys, "sources", TINY, a, "--count", TINY_N, "--seed", 0,
          names=[f"--count {TINY_N}", f"only {TINY_N - 1} vertices with out-degree > 0", f"at most {TINY_N - 1}"])
    assert a.read_bytes() == before
    # a graph where most vertices have no out-edges: 3 candidates of 10 vertices
    f = tmp_path / "sparse.plain"
    f.write_text("10 4\n2 3 1\n5 6 1\n5 9 1\n7 0 1\n")
    ok(capsys, "sources", f, a, "--count", 3, "--seed", 1)
    assert sorted(_read_sources_file(a)) == [2, 5, 7]
    fails(capsys, "sources", f, a, "--count", 4, "--seed", 1, names=["--count 4", "only 3 vertices", "at most 3"])


# --------------------------------------------------------------------------------------------- solvers
def test_solvers_json_and_filter(capsys):
    infos = json.loads(ok(capsys, "solvers", "--json"))
    assert [i["name"] for i in infos] == registry.list_solvers() + ["auto"] == list(registry.REGISTRY) + ["auto"]
    for info in infos[:-1]:
        assert info == registry.get(info["name"]).info()
    assert infos[-1]["rules"] and all(r["solver"] in registry.REGISTRY for r in infos[-1]["rules"])
    apsp = json.loads(ok(capsys, "solvers", "--json", "--problem", "apsp"))
    assert [i["name"] for i in apsp] == registry.list_solvers("apsp")
    assert apsp and all(i["problem"] == "apsp" for i in apsp)
    assert "dijkstra_cpu" not in {i["name"] for i in apsp}
    text = ok(capsys, "solvers")
    assert [line.split()[0] for line in text.splitlines()] == ["solver"] + registry.list_solvers() + ["auto"]
    assert usage_exit("solvers", "--problem", "xyz") == 2


# ----------------------------------------------------------------------------------------------- solve
def test_solve_record_answer_and_validate(capsys, tmp_path):
    rec, ans, ver = tmp_path / "R.json", tmp_path / "A.npz", tmp_path / "V.json"
    out = ok(capsys, "solve", "--graph", TINY, "--solver", "dijkstra_cpu", "--source", 0, "--validate",
             "--trials", 3, "--record", rec, "--answer", ans)
    assert "dijkstra_cpu source 0: median" in out and "validation: ok" in out
    r = json.loads(rec.read_text())
    assert r["solver"] == "dijkstra_cpu" and r["problem"] == "sssp" and r["device"] == "cpu"
    assert r["params"] == {} and r["status"] == "ok" and r["reason"] is None
    assert r["graph"]["checksum"] == checksum(TINY)
    assert (r["graph"]["n"], r["graph"]["m"], r["graph"]["weight_kind"]) == (TINY_N, TINY_M, "real")
    assert r["trials"] == 3 and r["warmup"] == 1
    assert len(r["runs"]) == 1
    run0 = r["runs"][0]
    assert run0["source"] == 0 and len(run0["timings"]["samples_ms"]) == 3
    assert run0["reachable"] == TINY_N - 1
    assert run0["validation"]["ok"] is True
    assert r["summary"]["validated"] is True and r["summary"]["sources"] == 1
    assert isinstance(r["machine"], dict) and r["machine"]["mode"] == device.mode() and r["machine"]["python"]
    assert isinstance(r["git_commit"], str) and r["git_commit"]
    assert re.fullmatch(r"[0-9a-f]{16}", r["code_hash"])
    assert r["gpusp_version"] == gpusp.__version__

    g, ref = tiny_reference(0)
    with np.load(ans) as a:
        assert a["sources"].tolist() == [0]
        dist = a["dist"][0]
        assert dist[ISOLATED] == a["inf"] == g.inf
        assert np.array_equal(dist[:ISOLATED], ref[:ISOLATED].astype(np.int64))

    out = ok(capsys, "validate", "--graph", TINY, "--answer", ans, "--output", ver)
    assert out.startswith("validation ok: 1 sources")
    v = json.loads(ver.read_text())
    assert v["ok"] is True and v["sources"] == [0] and v["graph_checksum"] == checksum(TINY)

    # a wrong answer does not validate
    with np.load(ans) as a:
        parts = {k: a[k] for k in a.files}
    parts["dist"] = parts["dist"].copy()
    parts["dist"][0, 5] += 1
    bad = tmp_path / "bad.npz"
    np.savez(bad, **parts)
    fails(capsys, "validate", "--graph", TINY, "--answer", bad, "--output", ver, names=["validation failed"])
    assert json.loads(ver.read_text())["ok"] is False


LINE = re.compile(r"^0->(\d+): (?:(\d+): ((?:\d+<-)*0)|unreachable)$")


def _check_paths(text):
    g, ref = tiny_reference(0)
    dense = g.to_dense(np.int64)
    lines = text.splitlines()
    assert len(lines) == TINY_N
    for v, line in enumerate(lines):
        m = LINE.match(line)
        assert m and int(m.group(1)) == v, line
        if v == ISOLATED:
            assert line == f"0->{v}: unreachable"
            continue
        chain = [int(x) for x in m.group(3).split("<-")]
        assert chain[0] == v and chain[-1] == 0
        hops = list(reversed(chain))
        assert sum(int(dense[a, b]) for a, b in zip(hops, hops[1:])) == int(m.group(2)) == ref[v], line


def test_solve_output_print_and_write(capsys, tmp_path, monkeypatch):
    args = ["solve", "--graph", TINY, "--solver", "dijkstra_cpu", "--source", 0, "--trials", 1]
    out = ok(capsys, *args, "--output", "print")
    printed = "".join(line + "\n" for line in out.splitlines() if line.startswith("0->"))
    assert "0->5: 32: 5<-0\n" in printed and "0->0: 0: 0\n" in printed
    assert f"0->{ISOLATED}: unreachable\n" in printed
    _check_paths(printed)

    p = tmp_path / "P.txt"
    out = ok(capsys, *args, "--output", "write", "--paths-file", p)
    assert f"wrote paths to {p}" in out and "0->" not in out
    assert p.read_text() == printed
    # without --paths-file: <graph file name>.<solver>.paths.txt in the working directory
    monkeypatch.chdir(tmp_path)
    ok(capsys, *args, "--output", "write")
    assert (tmp_path / "tiny.gr.dijkstra_cpu.paths.txt").read_text() == printed


def test_solve_sources_file(capsys, tmp_path):
    srcs, rec, ans = tmp_path / "s.txt", tmp_path / "R.json", tmp_path / "A.npz"
    srcs.write_text("# two sources\n3\n\n12\n")
    out = ok(capsys, "solve", "--graph", TINY, "--solver", "dijkstra_cpu", "--sources", srcs, "--trials", 2,
             "--validate", "--record", rec, "--answer", ans)
    assert "source 3:" in out and "source 12:" in out
    r = json.loads(rec.read_text())
    assert [run["source"] for run in r["runs"]] == [3, 12]
    assert all(len(run["timings"]["samples_ms"]) == 2 for run in r["runs"])
    assert r["summary"]["sources"] == 2 and r["summary"]["validated"] is True
    with np.load(ans) as a:
        assert a["sources"].tolist() == [3, 12] and a["dist"].shape == (2, TINY_N)
    # seeded sources when none are given: deterministic
    picked = []
    for _ in range(2):
        ok(capsys, "solve", "--graph", TINY, "--solver", "dijkstra_cpu", "--num-sources", 3, "--seed", 7,
           "--trials", 1, "--record", rec)
        picked.append([run["source"] for run in json.loads(rec.read_text())["runs"]])
    assert picked[0] == picked[1] and len(set(picked[0])) == 3 and ISOLATED not in picked[0]


def test_solve_apsp_cpu(capsys, tmp_path):
    rec, ans = tmp_path / "R.json", tmp_path / "A.npz"
    ok(capsys, "solve", "--graph", TINY, "--solver", "floydwarshall_cpu", "--validate", "--trials", 1,
       "--validate-rows", 4, "--record", rec, "--answer", ans)
    r = json.loads(rec.read_text())
    assert r["problem"] == "apsp" and r["summary"]["validated"] is True and len(r["runs"]) == 1
    with np.load(ans) as a:
        assert a["dist"].shape == (4, TINY_N)
    assert ok(capsys, "validate", "--graph", TINY, "--answer", ans).startswith("validation ok: 4 sources")


def test_aggregate_apsp_rate_and_ceiling_fraction(capsys, tmp_path, monkeypatch):
    import pandas as pd

    monkeypatch.delenv("GPUSP_ADDMIN_CEILING", raising=False)
    recs = []
    for solver in ("floydwarshall_cpu", "dijkstra_cpu"):
        recs.append(tmp_path / f"{solver}.json")
        where = ["--source", 0] if solver == "dijkstra_cpu" else []
        ok(capsys, "solve", "--graph", TINY, "--solver", solver, *where, "--trials", 2, "--record", recs[-1])
    for ceiling, sub in ((None, "plain"), (1e9, "ceiling")):
        ok(capsys, "aggregate", *recs, "--out-dir", tmp_path / sub, *(["--ceiling", ceiling] if ceiling else []))
        table = pd.read_csv(tmp_path / sub / "summary.csv").set_index("solver")
        fw = table.loc["floydwarshall_cpu"]
        assert fw["n3_per_s"] == pytest.approx(TINY_N ** 3 / (fw["median_ms"] / 1e3))
        assert np.isnan(table.loc["dijkstra_cpu", "n3_per_s"])  # SSSP rows have no n^3 rate
        if ceiling:
            assert fw["ceiling_fraction"] == pytest.approx(fw["n3_per_s"] / ceiling)
        else:
            assert np.isnan(fw["ceiling_fraction"])


def test_solve_gpu_solver_in_simulator(capsys, tmp_path):
    rec = tmp_path / "R.json"
    out = ok(capsys, "solve", "--graph", TINY, "--solver", "bellmanford_naive", "--param", "block=32",
             "--source", 0, "--validate", "--trials", 1, "--warmup", 0, "--record", rec)
    assert "validation: ok" in out
    r = json.loads(rec.read_text())
    assert r["device"] == "gpu" and r["params"] == {"block": 32, "rounds": "early", "launcher": "native", "sync": "none"}
    assert r["status"] == "ok" and r["summary"]["validated"] is True
    assert r["machine"]["mode"] == device.mode()


def test_solve_bad_parameter_names_allowed_values(capsys, tmp_path):
    rec = tmp_path / "R.json"
    fails(capsys, "solve", "--graph", TINY, "--solver", "bellmanford_naive", "--param", "block=7",
          "--source", 0, "--record", rec, names=["block=7", "[32, 64, 128, 256, 512, 1024]"])
    fails(capsys, "solve", "--graph", TINY, "--solver", "dijkstra_cpu", "--param", "block=32",
          names=["dijkstra_cpu", "block"])
    fails(capsys, "solve", "--graph", TINY, "--solver", "dijkstra_cpu", "--param", "block",
          names=["key=value"])
    assert not rec.exists()


def test_solve_unknown_solver_names_known_ones(capsys):
    line = fails(capsys, "solve", "--graph", TINY, "--solver", "nope", names=["'nope'", "known"])
    for name in ("dijkstra_cpu", "bellmanford_naive", "floydwarshall_cpu"):
        assert name in line
    # a misspelt variant lists its family
    fails(capsys, "solve", "--graph", TINY, "--solver", "dijkstra_gpu", names=["dijkstra_cpu", "dijkstra_gpunaive"])


def test_solve_bad_source(capsys):
    fails(capsys, "solve", "--graph", TINY, "--solver", "dijkstra_cpu", "--source", 99, names=["99", "0..20"])
    assert usage_exit("solve", "--graph", TINY, "--solver", "dijkstra_cpu", "--trials", 0) == 2
    assert "argument --trials: must be a positive integer, got 0" in capsys.readouterr().err


def test_solve_negative_weights_refused_by_dijkstra(capsys, tmp_path):
    f, rec = tmp_path / "neg.plain", tmp_path / "R.json"
    f.write_text("3 3\n0 1 4\n1 2 -2\n0 2 5\n")
    fails(capsys, "solve", "--graph", f, "--solver", "dijkstra_cpu", "--source", 0, "--record", rec,
          names=["dijkstra_cpu", "negative weights"])
    assert not rec.exists()
    # the same graph is fine for Bellman-Ford
    ok(capsys, "solve", "--graph", f, "--solver", "bellmanford_cpu", "--source", 0, "--validate", "--trials", 1)


NEG_CYCLE = "4 4\n0 1 1\n1 2 2\n2 1 -3\n2 3 1\n"


def test_solve_negative_cycle_is_recorded(capsys, tmp_path):
    f, rec, ans = tmp_path / "cyc.plain", tmp_path / "R.json", tmp_path / "A.npz"
    f.write_text(NEG_CYCLE)
    code, out, err = run(capsys, "solve", "--graph", f, "--solver", "bellmanford_cpu", "--source", 0,
                         "--trials", 1, "--record", rec, "--answer", ans)
    assert code == 0, err
    assert "negative" in err
    r = json.loads(rec.read_text())
    assert r["status"] == "negative-cycle" and "negative" in r["reason"]
    assert r["graph"]["checksum"] == checksum(f)
    assert r["summary"]["validated"] is False
    with np.load(ans) as a:  # an empty answer, so a workflow job still has its output
        assert a["sources"].size == 0


def test_solve_negative_cycle_without_record_is_an_error(capsys, tmp_path):
    f = tmp_path / "cyc.plain"
    f.write_text(NEG_CYCLE)
    fails(capsys, "solve", "--graph", f, "--solver", "bellmanford_cpu", "--source", 0, "--trials", 1,
          names=["negative"])


def test_solve_empty_sources_file(capsys, tmp_path):
    f = tmp_path / "s.txt"
    f.write_text("# no sources\n")
    fails(capsys, "solve", "--graph", TINY, "--solver", "dijkstra_cpu", "--sources", f, names=["source"])


def test_solve_on_a_generated_graph_in_one_line(capsys, tmp_path):
    record = tmp_path / "r.json"
    out = ok(capsys, "solve", "--generate", "ring", "n=6", "seed=3", "--solver", "dijkstra_cpu", "--num-sources", 3,
             "--trials", 2, "--validate", "--record", record)
    assert out.count("dijkstra_cpu source ") == 3 and "dijkstra_cpu over 3 sources: median " in out
    assert json.loads(record.read_text())["graph"]["name"].startswith("ring")
    assert usage_exit("solve", "--solver", "dijkstra_cpu") == 2  # neither --graph nor --generate
    assert usage_exit("solve", "--graph", TINY, "--generate", "ring", "n=6", "--solver", "dijkstra_cpu") == 2
    capsys.readouterr()
    fails(capsys, "solve", "--generate", "rign", "n=6", "--solver", "dijkstra_cpu", names=["rign"])


def test_solve_sources_for_an_apsp_solver_are_refused(tmp_path):
    f = tmp_path / "s.txt"
    f.write_text("99999\n")
    for extra in (["--source", "99999"], ["--sources", str(f)], ["--num-sources", "3"]):
        assert usage_exit("solve", "--graph", TINY, "--solver", "floydwarshall_cpu", *extra) == 2


def test_solve_sources_file_that_is_not_text_names_the_file_and_line(capsys, tmp_path):
    f = tmp_path / "s.txt"
    f.write_bytes(b"3\n4\n\xff\xfe5\n")
    fails(capsys, "solve", "--graph", TINY, "--solver", "dijkstra_cpu", "--sources", f,
          names=[f"{f}:3", "not UTF-8 text", "0xff"])


def test_solve_time_budget_records_a_skip(capsys, tmp_path, monkeypatch):
    """The solve runs in a child process that is killed at the budget; the record says why it was skipped."""
    spawned = []
    real_popen = subprocess.Popen

    class Spy(real_popen):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            spawned.append(self)

    monkeypatch.setattr(subprocess, "Popen", Spy)
    rec, ans, paths = tmp_path / "R.json", tmp_path / "A.npz", tmp_path / "P.txt"
    code, out, err = run(capsys, "solve", "--graph", TINY, "--solver", "bellmanford_cpu", "--source", 0,
                         "--time-budget", "0.001", "--record", rec, "--answer", ans,
                         "--output", "write", "--paths-file", paths)
    assert code == 0, err
    assert "gpusp: skipped: exceeded the time budget of 0.001 s" in err
    assert len(spawned) == 1
    child = spawned[0]
    assert child.returncode is not None and child.returncode != 0, "the child was not stopped"
    assert "--time-budget" not in child.args and "0.001" not in child.args  # no endless recursion
    r = json.loads(rec.read_text())
    assert r["status"] == "skipped" and "time budget" in r["reason"] and "0.001" in r["reason"]
    assert r["runs"] == [] and r["summary"]["validated"] is False
    assert r["graph"]["checksum"] == checksum(TINY) and r["params"] == {"rounds": "early"}
    assert not paths.exists(), "the killed child must not have written its output"


# ----------------------------------------------------------------------------------------- bad input
BAD_INPUTS = [
    ("truncated.gr", b"p sp 3 3\na 1 2 1\na 2 3 1\n", "truncated.gr:1:"),
    ("zero-id.gr", b"p sp 3 2\na 0 2 1\na 2 3 1\n", "zero-id.gr:2:"),
    ("fake.gr.gz", b"p sp 2 1\na 1 2 1\n", "gzip"),
    ("corrupt.gr", b"\x1f\x8b" + bytes(range(200)), "gzip"),
    ("empty.gr", b"", "empty"),
    ("junk.gr", bytes(range(256)) * 4, "junk.gr:"),
    ("nul.plain", b"3 1\n0 1 \x00\n", "nul.plain:2:"),
]


@pytest.mark.parametrize("name,content,expect", BAD_INPUTS, ids=[b[0] for b in BAD_INPUTS])
def test_bad_input_is_one_error_line(capsys, tmp_path, name, content, expect):
    bad = tmp_path / name
    bad.write_bytes(content)
    for out_name in ("out.plain", "out.npz", "out.gr.gz"):
        line = fails(capsys, "convert", bad, tmp_path / out_name, names=[name, expect])
        assert sorted(p.name for p in tmp_path.iterdir()) == [name], f"convert left files behind ({line})"
    fails(capsys, "info", bad, names=[name, expect])
    fails(capsys, "solve", "--graph", bad, "--solver", "dijkstra_cpu", "--record", tmp_path / "R.json",
          names=[name, expect])
    fails(capsys, "weights", "replace", bad, tmp_path / "w.gr", names=[name, expect])
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_missing_input_file(capsys, tmp_path):
    fails(capsys, "info", tmp_path / "nope.gr", names=["nope.gr"])
    fails(capsys, "convert", tmp_path / "nope.gr", tmp_path / "out.plain", names=["nope.gr"])
    fails(capsys, "info", tmp_path / "graph.xyz", names=["graph.xyz", "format"])
    assert list(tmp_path.iterdir()) == []


def test_validate_bad_answer_names_the_file(capsys, tmp_path):
    np.savez(tmp_path / "other.npz", x=np.arange(3))
    fails(capsys, "validate", "--graph", TINY, "--answer", tmp_path / "other.npz", names=["other.npz"])


def test_written_files_follow_the_umask(capsys, tmp_path):
    out = tmp_path / "t.plain"
    ok(capsys, "convert", TINY, out)
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask
