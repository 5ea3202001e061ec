"""What comes back into gpusp after a run never yields a wrong verdict, a traceback or a run that goes on
after it was stopped (issue 23): answer files read back by ``gpusp validate``, records and verdicts read
back by ``gpusp aggregate``, the validation reference on graphs with negative cycles, and a budgeted solve
told to stop by a signal.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import gpusp
from gpusp import cli
from gpusp.errors import NegativeCycleError
from gpusp.measure.records import RecordFormatError, read_record
from gpusp.measure.validate import (
    EXACT_LIMIT,
    check_apsp,
    check_sssp,
    read_answer,
    reference_distances,
    reference_rows,
)
from gpusp.report.aggregate import write_tables

TINY = Path(gpusp.__file__).parent / "data" / "tiny.gr"
GPUSP = Path(sys.executable).with_name("gpusp")
# 0 -> 1 -> 2 with a negative arc; the cycle 3 <-> 4 (weight -1) feeds into 1 but 0 never reaches it
UNREACHED_CYCLE = "5 6\n0 1 2\n1 2 -1\n0 2 5\n3 4 -2\n4 3 1\n4 1 7\n"
UNREACHED_CYCLE_DIST = [0, 2, 1, None, None]  # from 0; None: unreachable


def run(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def fails(capsys, *argv, names=()) -> str:
    """Exit 1 with exactly one stderr line ``gpusp: error: ...`` that contains every one of ``names``."""
    code, out, err = run(capsys, *argv)
    lines = err.splitlines()
    assert code == 1 and len(lines) == 1 and lines[0].startswith("gpusp: error: "), (code, out, err)
    for name in names:
        assert str(name) in lines[0], f"{name!r} not in {lines[0]!r}"
    return lines[0]


def succeeds(capsys, *argv) -> tuple[str, str]:
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    return out, err


def graph_file(tmp_path, text, name="g.plain") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# ------------------------------------------------------------------------------------------------ answers
@pytest.fixture(scope="module")
def tiny_answer(tmp_path_factory):
    """A good answer of TINY from sources 0 and 3, and its arrays."""
    folder = tmp_path_factory.mktemp("answer")
    sources = folder / "s.txt"
    sources.write_text("0\n3\n")
    answer = folder / "A.npz"
    assert cli.main(["solve", "--graph", str(TINY), "--solver", "dijkstra_cpu", "--sources", str(sources),
                     "--trials", "1", "--answer", str(answer)]) == 0
    with np.load(answer) as a:
        return answer, {k: a[k] for k in a.files}


def _edit(parts, **changes):
    out = {k: v for k, v in parts.items() if k not in changes}
    out.update({k: v for k, v in changes.items() if v is not None})
    return out


BAD_ANSWERS = {
    # name: (how the file is made from the good answer's bytes and arrays, what the error says)
    "truncated": (lambda raw, parts, path: path.write_bytes(raw[: len(raw) // 2]), "not a readable .npz"),
    "cut-short": (lambda raw, parts, path: path.write_bytes(raw[:10]), "not a readable .npz"),
    "bit-flip": (lambda raw, parts, path: path.write_bytes(_flip_in_dist(raw)), "Bad CRC-32"),
    "empty": (lambda raw, parts, path: path.write_bytes(b""), "empty file"),
    "text": (lambda raw, parts, path: path.write_text("0 1 2\n"), "not an .npz archive"),
    "npy": (lambda raw, parts, path: path.write_bytes(_npy_bytes()), "not an .npz archive"),
    "graph-cache": (lambda raw, parts, path: gpusp.write_graph(gpusp.read_graph(TINY), path),
                    "no sources, dist, parent"),
    "no-parent": (lambda raw, parts, path: np.savez(path, **_edit(parts, parent=None)), "no parent"),
    "object-arrays": (lambda raw, parts, path: np.savez(path, **_edit(parts, dist=np.array([None, 1], dtype=object))),
                      "Object arrays"),
    "float-dist": (lambda raw, parts, path: np.savez(path, **_edit(parts, dist=parts["dist"].astype(float))),
                   "dist holds float64"),
    "float-sources": (lambda raw, parts, path: np.savez(path, **_edit(parts, sources=parts["sources"] + 0.5)),
                      "sources are float64"),
    "bool-parent": (lambda raw, parts, path: np.savez(path, **_edit(parts, parent=parts["parent"] > 0)),
                    "parent holds bool"),
    "other-graph": (lambda raw, parts, path: np.savez(path, **_edit(parts, graph_checksum=np.array("0" * 64))),
                    "an answer of another graph (checksum 000000000000"),
    # answers of another graph written before answers carried the checksum: the shapes give it away
    "source-out-of-range": (lambda raw, parts, path: np.savez(path, **_edit(
        parts, graph_checksum=None, sources=np.array([0, 21]))), "source 21 out of range 0..20"),
    "short-rows": (lambda raw, parts, path: np.savez(path, **_edit(
        parts, graph_checksum=None, dist=parts["dist"][:, :7])), "dist has shape (2, 7)"),
    "rows-per-source": (lambda raw, parts, path: np.savez(path, **_edit(
        parts, graph_checksum=None, parent=parts["parent"][:1])), "parent has shape (1, 21)"),
    "int64-marker": (lambda raw, parts, path: np.savez(path, **_edit(
        parts, graph_checksum=None, inf=np.int64(2**62 - 1))), "unreachable marker 4611686018427387903"),
    "peer-verdicts": (lambda raw, parts, path: np.savez(path, **_edit(parts, peer_verdicts=np.array("[{"))),
                      "peer_verdicts is not JSON"),
    "peer-verdict-count": (lambda raw, parts, path: np.savez(path, **_edit(
        parts, peer_verdicts=np.array('[{"ok": true}]'))), "a list of 2 verdicts"),
}


def _flip_in_dist(raw: bytes) -> bytes:
    """One bit flipped inside the distances (past the .npy header of 128 bytes): only the CRC can tell."""
    at = raw.index(b"\x93NUMPY", raw.index(b"dist.npy")) + 128 + 40
    return raw[:at] + bytes([raw[at] ^ 0x01]) + raw[at + 1:]


def _npy_bytes() -> bytes:
    import io

    buf = io.BytesIO()
    np.save(buf, np.arange(3))
    return buf.getvalue()


@pytest.mark.parametrize("case", sorted(BAD_ANSWERS))
def test_a_bad_answer_is_one_error_line_naming_the_file(capsys, tmp_path, tiny_answer, case):
    good, parts = tiny_answer
    make, expect = BAD_ANSWERS[case]
    bad = tmp_path / f"{case}.npz"
    make(good.read_bytes(), parts, bad)
    verdict = tmp_path / "V.json"
    fails(capsys, "validate", "--graph", TINY, "--answer", bad, "--output", verdict, names=[bad, expect])
    assert not verdict.exists()


def test_a_missing_answer_or_a_folder_names_the_path(capsys, tmp_path):
    fails(capsys, "validate", "--graph", TINY, "--answer", tmp_path / "nope.npz", names=["nope.npz", "No such file"])
    fails(capsys, "validate", "--graph", TINY, "--answer", tmp_path, names=[tmp_path, "directory"])


def test_the_good_answer_passes_and_records_its_graph(capsys, tmp_path, tiny_answer):
    good, parts = tiny_answer
    assert str(parts["graph_checksum"]) == gpusp.read_graph(TINY).checksum()
    out, _ = succeeds(capsys, "validate", "--graph", TINY, "--answer", good)
    assert out.startswith("validation ok: 2 sources")
    # an answer of a graph that differs from TINY in one weight only is refused, not checked
    other = tmp_path / "other.gr"
    text = TINY.read_text().splitlines()
    arc = next(i for i, line in enumerate(text) if line.startswith("a "))
    *head, weight = text[arc].split()
    text[arc] = " ".join(head + [str(int(weight) + 1)])
    other.write_text("\n".join(text) + "\n")
    fails(capsys, "validate", "--graph", other, "--answer", good, names=[good, "another graph"])


def test_read_answer_is_the_one_reader(tmp_path, tiny_answer):
    good, _ = tiny_answer
    answer = read_answer(good, gpusp.read_graph(TINY))
    assert answer.sources.tolist() == [0, 3] and answer.dist.shape == (2, 21)
    with pytest.raises(ValueError, match="another graph"):  # an AnswerFormatError is also a ValueError
        read_answer(good, gpusp.read_graph(graph_file(tmp_path, UNREACHED_CYCLE)))


# ------------------------------------------------------------------------------------------------ records
@pytest.fixture(scope="module")
def tiny_record(tmp_path_factory):
    folder = tmp_path_factory.mktemp("record")
    record = folder / "R.json"
    assert cli.main(["solve", "--graph", str(TINY), "--solver", "dijkstra_cpu", "--source", "0", "--trials", "2",
                     "--validate", "--record", str(record)]) == 0
    return record, json.loads(record.read_text())


def _without(doc, *path):
    doc = json.loads(json.dumps(doc))
    *parents, last = path
    inner = doc
    for key in parents:
        inner = inner[key]
    del inner[last]
    return doc


def _with(doc, value, *path):
    doc = json.loads(json.dumps(doc))
    *parents, last = path
    inner = doc
    for key in parents:
        inner = inner[key]
    inner[last] = value
    return doc


BAD_RECORDS = {
    "truncated": (lambda raw, rec: raw[: len(raw) // 2], "not valid JSON (truncated?)"),
    "empty": (lambda raw, rec: b"", "empty file"),
    "binary": (lambda raw, rec: bytes(range(256)), "binary data, not a JSON record"),
    "foreign": (lambda raw, rec: b'{"graph": 1}', 'no "schema" key'),
    "a-list": (lambda raw, rec: b"[1, 2]", 'no "schema" key'),
    "newer-schema": (lambda raw, rec: json.dumps(_with(rec, 2, "schema")).encode(), "schema version 2"),
    "schema-true": (lambda raw, rec: json.dumps(_with(rec, True, "schema")).encode(), "schema version True"),
    "no-graph": (lambda raw, rec: json.dumps(_without(rec, "graph")).encode(), "'graph' is a required property"),
    "no-checksum": (lambda raw, rec: json.dumps(_without(rec, "graph", "checksum")).encode(),
                    "graph: 'checksum' is a required property"),
    "no-timings": (lambda raw, rec: json.dumps(_without(rec, "runs", 0, "timings")).encode(),
                   "runs[0]: 'timings' is a required property"),
    "text-sample": (lambda raw, rec: json.dumps(_with(rec, "x", "runs", 0, "timings", "samples_ms", 1)).encode(),
                    "runs[0].timings.samples_ms[1]: 'x' is not of type 'number'"),
    "no-samples": (lambda raw, rec: json.dumps(_with(rec, [], "runs", 0, "timings", "samples_ms")).encode(),
                   "runs[0].timings.samples_ms"),
    "unknown-status": (lambda raw, rec: json.dumps(_with(rec, "fine", "status")).encode(), "status: 'fine'"),
    "params-list": (lambda raw, rec: json.dumps(_with(rec, [], "params")).encode(), "params: [] is not of type"),
}


@pytest.mark.parametrize("case", sorted(BAD_RECORDS))
def test_a_bad_record_is_one_error_line_naming_the_file(capsys, tmp_path, tiny_record, case):
    good, rec = tiny_record
    make, expect = BAD_RECORDS[case]
    bad = tmp_path / f"{case}.json"
    bad.write_bytes(make(good.read_bytes(), rec))
    out = tmp_path / "tables"
    fails(capsys, "aggregate", good, bad, "--out-dir", out, names=[bad, expect])
    assert not out.exists(), "a refused aggregate must write no table"


def test_every_kind_of_record_reads_back(capsys, tmp_path):
    """What `gpusp solve` writes passes the reader: SSSP and APSP runs, a negative cycle, a failed validation,
    a run that could not be validated, a skip at the budget; and aggregates."""
    neg, cycle, long = (graph_file(tmp_path, text, name) for text, name in (
        (UNREACHED_CYCLE, "neg.plain"), ("3 3\n0 1 1\n1 2 -3\n2 1 1\n", "cycle.plain"),
        (f"3 2\n0 1 {EXACT_LIMIT // 2}\n1 2 {EXACT_LIMIT // 2}\n", "long.plain")))
    runs = {"sssp": (TINY, "dijkstra_cpu", "--source", 0), "apsp": (TINY, "floydwarshall_cpu"),
            "negative-cycle": (cycle, "bellmanford_cpu", "--source", 0),
            "not-validated": (long, "dijkstra_cpu", "--source", 0),
            "skipped": (neg, "bellmanford_cpu", "--source", 0, "--time-budget", 0.001)}
    records = []
    for name, (graph, solver, *more) in runs.items():
        records.append(tmp_path / f"{name}.json")
        succeeds(capsys, "solve", "--graph", graph, "--solver", solver, *more, "--validate", "--trials", 1,
                 "--record", records[-1])
    failed = tmp_path / "failed.json"  # a record whose verdict failed, as a broken solver's would be
    failed.write_text(json.dumps(_with(_with(read_record(records[0]), "failed-validation", "status"), False,
                                       "runs", 0, "validation", "ok")))
    records.append(failed)
    statuses = [read_record(r)["status"] for r in records]
    assert statuses == ["ok", "ok", "negative-cycle", "ok", "skipped", "failed-validation"]
    assert read_record(records[1])["runs"][0]["source"] is None  # APSP
    written = write_tables(records, tmp_path / "t")
    summary = pd.read_csv(written["summary.csv"])
    assert len(summary) == 5  # the failed copy is of the SSSP run's configuration: one row for both
    assert "negative-weight cycle" in " ".join(summary["reason"].dropna())


def test_a_record_cut_anywhere_says_truncated_and_a_broken_one_where(tmp_path, tiny_record):
    good, _ = tiny_record
    raw = good.read_bytes()
    cut = tmp_path / "cut.json"
    for end in range(1, len(raw) - 2, 7):
        cut.write_bytes(raw[:end])
        with pytest.raises(RecordFormatError, match=re.escape(f"{cut}:") + r"\d+: not valid JSON \(truncated\?\)"):
            read_record(cut)
    broken = tmp_path / "broken.json"
    broken.write_bytes(raw.replace(b'"status": "ok"', b'"status": ok'))
    line = 1 + raw[: raw.index(b'"status"')].count(b"\n")
    with pytest.raises(RecordFormatError, match=re.escape(f"{broken}:{line}: not valid JSON: Expecting value")):
        read_record(broken)


def test_a_verdict_is_checked_and_must_be_of_the_records_graph(capsys, tmp_path, tiny_record):
    good, rec = tiny_record
    record = tmp_path / "R.json"
    record.write_bytes(good.read_bytes())
    verdict = tmp_path / "R.verdict.json"
    verdict.write_text('{"ok": true')
    fails(capsys, "aggregate", record, "--out-dir", tmp_path / "t", names=[verdict, "not valid JSON"])
    verdict.write_text(json.dumps({"ok": "yes", "graph_checksum": rec["graph"]["checksum"], "sources": [0],
                                   "verdicts": []}))
    fails(capsys, "aggregate", record, "--out-dir", tmp_path / "t", names=[verdict, "ok: 'yes'"])
    verdict.write_text(json.dumps({"ok": True, "graph_checksum": "f" * 64, "sources": [0], "verdicts": []}))
    fails(capsys, "aggregate", record, "--out-dir", tmp_path / "t", names=[verdict, "another graph", record])
    verdict.write_text(json.dumps({"ok": False, "graph_checksum": rec["graph"]["checksum"], "sources": [0],
                                   "verdicts": []}))
    succeeds(capsys, "aggregate", record, "--out-dir", tmp_path / "t")
    assert read_record(record)["summary"]["validated"] is True  # the record alone says validated ...
    summary = pd.read_csv(tmp_path / "t" / "summary.csv")
    assert summary["validated"].tolist() == [False]  # ... the verdict beside it overrules it


def test_aggregate_with_no_records_says_so(capsys, tmp_path):
    fails(capsys, "aggregate", "--out-dir", tmp_path / "t", names=["no records to aggregate"])
    assert not (tmp_path / "t").exists()


def test_aggregate_of_skips_alone_writes_tables_that_plot(capsys, tmp_path):
    """A sweep in which nothing ran (every combination skipped, or every run past its budget) still gets its
    tables, with the reasons, and its figures."""
    skipped = [{"graph": "g", "solver": "dijkstra_cpu", "params": "default", "problem": "sssp",
                "reason": "dijkstra_cpu does not accept negative weights"}]
    written = write_tables([], tmp_path / "t", skipped=skipped)
    summary = (tmp_path / "t" / "summary.csv").read_text()
    assert "does not accept negative weights" in summary and set(written) >= {"summary.csv", "landing.rst"}
    assert "No timed runs yet" in (tmp_path / "t" / "landing.rst").read_text()
    succeeds(capsys, "plot", "--samples", written["samples.parquet"], "--summary", written["summary.csv"],
             "--out-dir", tmp_path / "plots")
    # a record of a run skipped at its budget, with no timings at all
    rec = tmp_path / "R.json"
    succeeds(capsys, "solve", "--graph", TINY, "--solver", "bellmanford_cpu", "--source", 0, "--time-budget",
             "0.001", "--record", rec)
    written = write_tables([rec], tmp_path / "t2")
    succeeds(capsys, "plot", "--samples", written["samples.parquet"], "--summary", written["summary.csv"],
             "--out-dir", tmp_path / "plots2")


@pytest.mark.parametrize("skipped,expect", [
    ([{"graph": "g", "solver": "s", "params": "p", "problem": "sssp"}], "entry 0 has no reason"),
    ({"graph": "g"}, "not a list"),
    ([["g", "s"]], "entry 0 has no graph"),
])
def test_skipped_combinations_are_checked(tmp_path, tiny_record, skipped, expect):
    good, _ = tiny_record
    with pytest.raises(gpusp.errors.GpuspError, match=expect):
        write_tables([good], tmp_path / "t", skipped=skipped)
    path = tmp_path / "skipped.json"
    path.write_text(json.dumps(skipped))
    with pytest.raises(gpusp.errors.GpuspError, match=re.escape(str(path))):
        write_tables([good], tmp_path / "t", skipped=path)
    path.write_text("[{")
    with pytest.raises(gpusp.errors.GpuspError, match=re.escape(f"{path}: not a JSON list")):
        write_tables([good], tmp_path / "t", skipped=path)
    assert not (tmp_path / "t").exists()


# ---------------------------------------------------------------------------------------- the reference
def _plain(text) -> gpusp.Graph:
    lines = text.split("\n")
    n, _ = map(int, lines[0].split())
    arcs = np.array([list(map(int, line.split())) for line in lines[1:] if line.strip()], dtype=np.int64)
    return gpusp.Graph.from_edges(n, arcs[:, 0], arcs[:, 1], arcs[:, 2], name="plain")


def _brute_force(graph: gpusp.Graph, source: int):
    """Bellman-Ford in plain Python on the arc list: (distances, None for unreachable) or None when a negative
    cycle is reachable from ``source``."""
    src, dst, w = (a.tolist() for a in graph.coo())
    dist = [None] * graph.n
    dist[source] = 0
    for _ in range(graph.n):
        changed = False
        for u, v, weight in zip(src, dst, w):
            if dist[u] is not None and (dist[v] is None or dist[u] + weight < dist[v]):
                dist[v], changed = dist[u] + weight, True
        if not changed:
            return dist
    return None


def test_an_unreached_negative_cycle_does_not_stop_the_reference():
    graph = _plain(UNREACHED_CYCLE)
    ref = reference_distances(graph, [0])[0]
    assert [None if d == graph.inf else int(d) for d in ref] == UNREACHED_CYCLE_DIST
    with pytest.raises(NegativeCycleError, match="source 3"):
        reference_distances(graph, [0, 3])
    rows = reference_rows(graph, [3, 0, 4, 1])
    assert rows.cyclic.tolist() == [True, False, True, False]
    assert rows.dist[1].tolist() == ref.tolist() and rows.dist[3].tolist() == [graph.inf, 0, -1, graph.inf, graph.inf]


@pytest.mark.parametrize("seed", range(12))
def test_the_reference_agrees_with_bellman_ford_from_each_source(seed):
    """Random small graphs with negative arcs, zero arcs, self-loops and often negative cycles: each source's
    row is Bellman-Ford's from that source, and a source is cyclic exactly when Bellman-Ford finds a cycle."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 12))
    m = int(rng.integers(n, 3 * n))
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    weights = rng.integers(-3, 8, m)
    weights[rng.random(m) < 0.15] = 0
    graph = gpusp.Graph.from_edges(n, src, dst, weights, name=f"random-{seed}")
    rows = reference_rows(graph, np.arange(n))
    for s in range(n):
        expect = _brute_force(graph, s)
        assert rows.cyclic[s] == (expect is None), (seed, s)
        if expect is not None:
            assert [None if d == graph.inf else int(d) for d in rows.dist[s]] == expect, (seed, s)


def test_a_negative_self_loop_counts_only_where_it_is_reached():
    graph = _plain("4 4\n0 1 3\n1 2 -2\n3 3 -1\n3 0 1\n")
    assert reference_rows(graph, [0, 3]).cyclic.tolist() == [False, True]
    assert reference_distances(graph, [0])[0].tolist()[:3] == [0, 3, 1]


def test_an_answer_from_a_source_that_reaches_a_negative_cycle_fails():
    """A solver that misses a reachable cycle and returns numbers has answered wrongly: the verdict says so
    (SSSP, and each APSP row that reaches the cycle; rows that do not reach it are checked as usual)."""
    graph = _plain(UNREACHED_CYCLE)
    rows = reference_rows(graph, np.arange(graph.n))
    dist = np.where(rows.cyclic[:, None], 0, rows.dist).astype(graph.dtype)
    parent = np.full((graph.n, graph.n), -1, dtype=np.int32)
    for s in range(graph.n):  # the tree of the reference distances, where there is one
        if not rows.cyclic[s]:
            for u, v, w in zip(*graph.coo()):
                if v != s and dist[s, u] != graph.inf and dist[s, u] + w == dist[s, v]:
                    parent[s, v] = u
    verdict = check_sssp(graph, 3, dist[3], parent[3])
    assert verdict.ok is False and "reachable from source 3" in verdict.mismatches[0]
    assert check_sssp(graph, 0, dist[0], parent[0]).ok is True
    apsp = check_apsp(graph, dist, parent)
    assert apsp.ok is False and {m.split(":")[0] for m in apsp.mismatches} == {"row 3", "row 4"}
    assert check_apsp(graph, dist, parent, rows=[0, 1, 2]).ok is True


def test_solve_validates_against_the_reached_part_only(capsys, tmp_path):
    """`gpusp solve --validate` from a source that does not reach the graph's negative cycle: a validated record
    with exact distances, on the CPU and on a GPU solver; `gpusp validate` agrees. A source that reaches the
    cycle is the solver's negative-cycle result, and the sources before it stay validated."""
    g = graph_file(tmp_path, UNREACHED_CYCLE)
    for solver in ("bellmanford_cpu", "bellmanford_naive"):
        rec, ans = tmp_path / f"{solver}.json", tmp_path / f"{solver}.npz"
        out, err = succeeds(capsys, "solve", "--graph", g, "--solver", solver, "--source", 0, "--validate",
                            "--trials", 1, "--warmup", 0, "--record", rec, "--answer", ans)
        r = json.loads(rec.read_text())
        assert r["status"] == "ok" and r["reason"] is None and r["summary"]["validated"] is True, (solver, err)
        assert r["runs"][0]["validation"]["checks"]["distances"] is True
        with np.load(ans) as a:
            assert [None if d == a["inf"] else int(d) for d in a["dist"][0]] == UNREACHED_CYCLE_DIST
        out, _ = succeeds(capsys, "validate", "--graph", g, "--answer", ans)
        assert out.startswith("validation ok: 1 sources")
    sources = tmp_path / "s.txt"
    sources.write_text("0\n3\n")
    rec = tmp_path / "both.json"
    succeeds(capsys, "solve", "--graph", g, "--solver", "bellmanford_cpu", "--sources", sources, "--validate",
             "--trials", 1, "--record", rec)
    r = json.loads(rec.read_text())
    assert r["status"] == "negative-cycle" and [run["source"] for run in r["runs"]] == [0]
    assert r["runs"][0]["validation"]["ok"] is True


def test_no_exact_reference_is_recorded_as_not_validated(capsys, tmp_path):
    """Paths too long for SciPy's float64 to hold exactly: with the reference asked for, the run stands, its verdict
    is "not validated" with the reason, in the record, on stderr and in `gpusp validate`; "auto" (the default) checks
    the answer by the certificate instead and says why."""
    half = EXACT_LIMIT // 2
    g = graph_file(tmp_path, f"3 2\n0 1 {half}\n1 2 {half}\n")
    rec, ans = tmp_path / "R.json", tmp_path / "A.npz"
    out, err = succeeds(capsys, "solve", "--graph", g, "--solver", "dijkstra_cpu", "--source", 0, "--validate",
                        "--validation-method", "reference", "--trials", 1, "--record", rec, "--answer", ans)
    assert err.startswith("gpusp: not validated: ") and "2^51" in err and "validation: not validated" in out
    r = json.loads(rec.read_text())
    assert r["status"] == "ok" and r["summary"]["validated"] is False
    assert r["runs"][0]["validation"]["ok"] is None and "2^51" in r["summary"]["not_validated"]
    verdict = tmp_path / "V.json"
    out, _ = succeeds(capsys, "validate", "--graph", g, "--answer", ans, "--output", verdict,
                      "--validation-method", "reference")
    assert out.startswith("validation: not validated: ")
    v = json.loads(verdict.read_text())
    assert v["ok"] is None and "2^51" in v["status"]

    out, _ = succeeds(capsys, "validate", "--graph", g, "--answer", ans, "--output", verdict)
    v = json.loads(verdict.read_text())
    assert out.startswith("validation ok: 1 sources") and v["ok"] is True and v["method"] == "certificate"
    assert "no SciPy reference" in v["verdicts"][0]["reason"] and "2^51" in v["verdicts"][0]["reason"]
    out, err = succeeds(capsys, "solve", "--graph", g, "--solver", "dijkstra_cpu", "--source", 0, "--validate",
                        "--trials", 1, "--record", rec)
    r = json.loads(rec.read_text())
    assert "validation: ok" in out and not err and r["summary"]["validated"] is True
    assert r["validation_timing"]["method"] == "certificate"


# ---------------------------------------------------------------------------------------- stop signals
def _children(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def _catches(pid: int, signum: int) -> bool:
    """Whether process ``pid`` has a handler for ``signum`` (gpusp installs its own once the job runs)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    mask = next(int(line.split()[1], 16) for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(mask >> (signum - 1) & 1)


def _staging(temp: Path) -> list[str]:
    return [p.name for p in temp.iterdir() if p.name.startswith("gpusp-job-")]


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads process state from /proc")
@pytest.mark.parametrize("signum,budget", [(signal.SIGTERM, "60"), (signal.SIGHUP, "60"), (signal.SIGINT, "60"),
                                          (signal.SIGTERM, None)],
                         ids=["SIGTERM", "SIGHUP", "SIGINT", "SIGTERM-no-budget"])
def test_a_stopped_solve_records_nothing_and_leaves_nothing(tmp_path, signum, budget):
    """`gpusp solve --time-budget` told to stop while its child solves: the child is stopped and waited for,
    its temporary folder removed, no record and no answer written (then or later), exit 128 + signal."""
    folder, temp = tmp_path / "out", tmp_path / "temp"
    folder.mkdir()
    temp.mkdir()
    rec, ans = folder / "R.json", folder / "A.npz"
    cmd = [GPUSP, "solve", "--graph", TINY, "--solver", "bellmanford_cpu", "--source", "0", "--trials", "10000000",
           "--record", rec, "--answer", ans] + (["--time-budget", budget] if budget else [])
    # the signal at its default in the solve, whatever the test runs under: gpusp keeps a signal its caller
    # ignores ignored (under nohup, SIGHUP), which this test is not about
    proc = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "TMPDIR": str(temp)},
                            preexec_fn=lambda: signal.signal(signum, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 60
        solver = None
        while solver is None and time.monotonic() < deadline and proc.poll() is None:
            solver = next(iter(_children(proc.pid) if budget else [proc.pid]), None)
            time.sleep(0.05)
        assert solver is not None and proc.poll() is None, "the solve never started"
        started = time.monotonic() + 10  # gpusp catches SIGTERM once the job runs; a bare process never does
        while not _catches(solver, signal.SIGTERM) and time.monotonic() < started:
            time.sleep(0.05)
        assert bool(_staging(temp)) == bool(budget)
        time.sleep(0.5)  # well inside the solve
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signum, err
    assert err.splitlines() == ["gpusp: interrupted" if signum == signal.SIGINT else
                                f"gpusp: stopped by {signal.Signals(signum).name}: the run was not recorded"]
    time.sleep(1.0)  # an orphaned child would write its record about now
    if budget:
        assert not Path(f"/proc/{solver}").exists(), "the child outlived its parent (or was never reaped)"
    assert list(folder.iterdir()) == [], "nothing may be written, not even a temporary file"
    assert _staging(temp) == [], "the child's temporary folder must be removed"


def test_a_budgeted_solve_puts_its_files_in_place_and_cleans_up(capsys, tmp_path, monkeypatch):
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(temp))
    out = tmp_path / "out"
    rec, ans, paths = out / "R.json", out / "A.npz", out / "P.txt"
    printed, _ = succeeds(capsys, "solve", "--graph", TINY, "--solver", "bellmanford_cpu", "--source", 0,
                          "--validate", "--trials", 1, "--time-budget", 60, "--record", rec, "--answer", ans,
                          "--output", "write", "--paths-file", paths)
    assert f"wrote paths to {paths}" in printed and "validation: ok" in printed
    assert read_record(rec)["summary"]["validated"] is True
    assert read_answer(ans, gpusp.read_graph(TINY)).sources.tolist() == [0]
    assert paths.read_text().startswith("0->0: 0")
    assert sorted(p.name for p in out.iterdir()) == ["A.npz", "P.txt", "R.json"] and list(temp.iterdir()) == []
    # a child that fails writes nothing in place
    for p in out.iterdir():
        p.unlink()
    fails(capsys, "solve", "--graph", TINY, "--solver", "bellmanford_cpu", "--source", 0, "--param", "rounds=x",
          "--time-budget", 60, "--record", rec, "--answer", ans, names=["rounds"])
    assert list(out.iterdir()) == [] and list(temp.iterdir()) == []


def test_an_ignored_signal_stays_ignored():
    """Under ``nohup`` (SIGHUP ignored) a budgeted solve must not stop when the terminal goes away."""
    from gpusp.measure.job import STOP_SIGNALS, _Forwarder

    before = {s: signal.getsignal(s) for s in STOP_SIGNALS}
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with _Forwarder() as forwarder:
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
            assert signal.getsignal(signal.SIGTERM) == forwarder._handle
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
        assert signal.getsignal(signal.SIGTERM) == before[signal.SIGTERM]
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)
