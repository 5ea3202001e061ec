"""Arguments are checked where they are parsed: a count, seed, budget or range out of bounds is refused by
``gpusp``'s parser (exit 2, the usage and one error line naming the option), before anything is read or
written. How many sources a graph can give is decided in one place, :func:`gpusp.measure.sources.pick_sources`:
asking for more than it has is an error, never a silently shorter list. Configs given to ``gpusp bench``
are refused in one line naming the file (the planning checks themselves: tests/test_plan.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from gpusp import cli
from gpusp.data.graph import Graph
from gpusp.errors import GpuspError, SolverError
from gpusp.measure.sources import pick_sources

from test_cli import ISOLATED, TINY, TINY_N, fails, ok

CANDIDATES = TINY_N - 1  # tiny.gr's vertices with out-degree > 0: all but the isolated one
SOLVE = ("solve", "--graph", TINY, "--solver", "dijkstra_cpu")
FLOW = ("paper003", "--png", "f.png", "--record", "f.json")
PLOT = ("plot", "--samples", "s.parquet", "--summary", "s.csv", "--out-dir", "plots")


def usage_error(capsys, *argv) -> str:
    """``gpusp argv`` is refused by its parser: exit 2, nothing on stdout, the usage, then one error line
    ``gpusp COMMAND: error: ...`` (no traceback); returns that line."""
    with pytest.raises(SystemExit) as caught:
        cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert caught.value.code == 2, err
    assert out == "" and "Traceback" not in err, err
    lines = err.splitlines()
    assert lines[0].startswith(f"usage: gpusp {argv[0]}"), lines
    assert lines[-1].startswith(f"gpusp {argv[0]}: error: "), lines
    return lines[-1]


OUT_OF_RANGE = [
    (SOLVE, "--num-sources", "-3", "must be a positive integer, got -3"),  # was NumPy's "negative dimensions"
    (SOLVE, "--num-sources", "0", "must be a positive integer, got 0"),  # was "no sources given" after the read
    (SOLVE, "--num-sources", "two", "expected an integer, got 'two'"),
    (SOLVE, "--trials", "0", "must be a positive integer"),
    (SOLVE, "--warmup", "-1", "must be >= 0, got -1"),
    (SOLVE, "--seed", "-1", "must be >= 0, got -1"),  # was NumPy's "expected non-negative integer"
    (SOLVE, "--source", "-1", "must be >= 0, got -1"),
    (SOLVE, "--validate-rows", "0", "must be a positive integer"),  # was a validation of no row at all: "ok"
    (SOLVE, "--validate-rows", "-2", "must be a positive integer"),
    (SOLVE, "--time-budget", "0", "must be a finite number > 0"),  # was no budget at all
    (SOLVE, "--time-budget", "-1", "must be a finite number > 0"),  # was an immediate "exceeded the time budget"
    (SOLVE, "--time-budget", "nan", "must be a finite number > 0"),
    (SOLVE, "--time-budget", "inf", "must be a finite number > 0"),
    (("sources", TINY, "s.txt"), "--count", "0", "must be a positive integer"),  # was 0 sources written
    (("sources", TINY, "s.txt"), "--count", "-1", "must be a positive integer"),
    (("sources", TINY, "s.txt"), "--seed", "-2", "must be >= 0"),
    (("weights", "replace", TINY, "w.npz"), "--seed", "-1", "must be >= 0"),
    (("weights", "replace", TINY, "w.npz"), "--min", "1.5", "expected an integer"),
    (("generate", "ring", "r.npz", "n=4"), "--seed", "-1", "must be >= 0"),
    (("aggregate", "--out-dir", "tables"), "--ceiling", "0", "must be a finite number > 0"),
    (("aggregate", "--out-dir", "tables"), "--ceiling", "nan", "must be a finite number > 0"),
    (PLOT, "--peak", "-1", "must be a finite number > 0"),
    (FLOW, "--size", "0", "must be a positive integer"),
    (FLOW, "--vmax", "0", "must be a positive integer"),
    (FLOW, "--trials", "0", "must be a positive integer"),
    (FLOW, "--seed", "-1", "must be >= 0"),
    (FLOW, "--tile", "5", "invalid choice: 5 (choose from 4, 8, 16, 32)"),  # as the config schema allows
]


@pytest.mark.parametrize("command, option, value, words", OUT_OF_RANGE,
                         ids=[f"{c[0]}{o}={v}" for c, o, v, _ in OUT_OF_RANGE])
def test_out_of_range_arguments_are_refused_naming_the_option(capsys, tmp_path, monkeypatch, command, option,
                                                              value, words):
    monkeypatch.chdir(tmp_path)  # relative outputs land here: nothing may be written
    line = usage_error(capsys, *command, option, value)
    assert f"argument {option}: {words}" in line, line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("extra, words", [
    (("--source", 0, "--sources", "s.txt"), "argument --sources: not allowed with argument --source"),
    (("--source", 0, "--num-sources", 2), "argument --num-sources: not allowed with argument --source"),
    (("--sources", "s.txt", "--num-sources", 2), "argument --num-sources: not allowed with argument --sources"),
    (("--source", 0, "--paths-file", "p.txt"), "argument --paths-file: only with --output write"),
    (("--source", 0, "--output", "print", "--paths-file", "p.txt"), "argument --paths-file: only with --output"),
], ids=["source+sources", "source+num-sources", "sources+num-sources", "paths-file", "paths-file-print"])
def test_options_that_exclude_each_other_are_refused(capsys, tmp_path, monkeypatch, extra, words):
    """An option that would be silently ignored is refused instead."""
    monkeypatch.chdir(tmp_path)
    assert words in usage_error(capsys, *SOLVE, *extra)
    assert list(tmp_path.iterdir()) == []


def test_weight_range_is_checked_across_options(capsys, tmp_path):
    line = usage_error(capsys, "weights", "replace", TINY, tmp_path / "w.npz", "--min", 10, "--max", 1)
    assert "argument --max: must be >= --min (10), got 1" in line
    assert list(tmp_path.iterdir()) == []
    ok(capsys, "weights", "replace", TINY, tmp_path / "w.npz", "--min", 5, "--max", 5)  # one value: a range
    assert set(np.load(tmp_path / "w.npz")["weights"].tolist()) == {5}


def test_boundary_values_are_accepted(capsys, tmp_path):
    record = tmp_path / "R.json"
    ok(capsys, *SOLVE, "--source", 0, "--warmup", 0, "--seed", 0, "--trials", 1, "--record", record)
    r = json.loads(record.read_text())
    assert (r["warmup"], r["trials"], [run["source"] for run in r["runs"]]) == (0, 1, [0])
    ok(capsys, *SOLVE, "--trials", 1, "--record", record)  # no sources given: one seeded source
    assert len(json.loads(record.read_text())["runs"]) == 1


# --- how many sources: pick_sources decides, for gpusp solve, gpusp sources, bench and the workflow ---------
def test_more_sources_than_the_graph_has_is_refused_not_shortened(capsys, tmp_path):
    """Was: --num-sources 500 on the 21-vertex tiny.gr silently ran 20 sources, exit 0."""
    record = tmp_path / "R.json"
    fails(capsys, *SOLVE, "--num-sources", 500, "--record", record,
          names=["500", f"tiny has only {CANDIDATES} vertices with out-degree > 0", f"at most {CANDIDATES}"])
    fails(capsys, *SOLVE, "--num-sources", CANDIDATES + 1, "--record", record, names=[f"at most {CANDIDATES}"])
    assert list(tmp_path.iterdir()) == []
    ok(capsys, *SOLVE, "--num-sources", CANDIDATES, "--trials", 1, "--record", record)
    sources = [run["source"] for run in json.loads(record.read_text())["runs"]]
    assert sorted(sources) == [v for v in range(TINY_N) if v != ISOLATED]


def _graph(n, arcs) -> Graph:
    src, dst = (np.array(x, dtype=np.int64) for x in zip(*arcs)) if arcs else (np.zeros(0, np.int64),) * 2
    return Graph.from_edges(n, src, dst, np.ones(src.size, dtype=np.int64), name="g")


@pytest.mark.parametrize("count", [0, -3, True, 2.0, "2", None])
def test_pick_sources_refuses_a_count_that_is_not_a_positive_integer(count):
    with pytest.raises(SolverError, match=r"--num-sources must be a positive integer"):
        pick_sources(_graph(4, [(0, 1), (1, 2)]), count, 0, option="--num-sources")


@pytest.mark.parametrize("seed", [-1, 1.5, None])
def test_pick_sources_refuses_a_bad_seed(seed):
    with pytest.raises(SolverError, match="seed of the sources must be a non-negative integer"):
        pick_sources(_graph(4, [(0, 1)]), 1, seed)


def test_pick_sources_counts_vertices_with_out_arcs_only():
    g = _graph(6, [(0, 1), (3, 4), (3, 5)])  # out-arcs from 0 and 3 only
    assert sorted(pick_sources(g, 2, 7)) == [0, 3]
    assert pick_sources(g, 2, 7) == pick_sources(g, 2, 7) and pick_sources(g, np.int64(1), 7)[0] in (0, 3)
    with pytest.raises(SolverError, match=r"sources.count 3: g has only 2 vertices with out-degree > 0.*at most 2"):
        pick_sources(g, 3, 7, option="sources.count")
    assert issubclass(SolverError, GpuspError)


def test_pick_sources_on_a_graph_without_arcs():
    assert sorted(pick_sources(_graph(3, []), 3, 1)) == [0, 1, 2]  # every vertex is a candidate
    with pytest.raises(SolverError, match=r"only 3 vertices \(none has an out-arc\).*at most 3"):
        pick_sources(_graph(3, []), 4, 1)
    with pytest.raises(SolverError, match="has no vertices"):
        pick_sources(_graph(0, []), 1, 1)


# --- gpusp bench, prepare and aggregate: files and configs named in one line ---------------------------------
def _config(tmp_path, **change):
    config = {"in_process": True, "trials": 1, "warmup": 0, "sources": {"count": 1},
              "graphs": {"ring": {"generate": "ring", "params": {"n": 6}}},
              "solvers": [{"name": "scipy_dijkstra"}], **change}
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_bench_refuses_a_bad_config_before_running_anything(capsys, tmp_path):
    out = tmp_path / "out"
    path = _config(tmp_path, solvers=[{"name": "scipy_dijkstra"}, {"name": "bellmanford_naive",
                                                                   "params": {"blok": 32}}])
    fails(capsys, "bench", "--config", path, "--out", out,
          names=[f"{path}: key solvers/1/params:", "no parameter 'blok' (did you mean 'block'?)"])
    path = _config(tmp_path)
    fails(capsys, "bench", "--config", path, "--out", out, "--set", "trials=0",
          names=[f"{path} (with --set trials): key trials:", "less than the minimum of 1"])
    fails(capsys, "bench", "--config", path, "--out", out, "--set", "solvers=[]", names=["key solvers"])
    fails(capsys, "bench", "--config", path, "--out", out, "--graphs", "rign",
          names=["--graphs: 'rign' is not a graph of", str(path), "ring"])
    assert not out.exists()


def test_prepare_names_its_spec_and_aggregate_its_skipped_file(capsys, tmp_path):
    fails(capsys, "prepare", "--spec", "{", "--output", tmp_path / "g.npz", names=["--spec: not valid JSON"])
    fails(capsys, "prepare", "--spec", "[1]", "--output", tmp_path / "g.npz", names=["--spec", "JSON object"])
    for text, words in (('[{"graph": "g"', "not a JSON list"), ('{"graph": "g"}', "not a list"),
                        ("[1, 2]", "entry 0 has no graph")):
        skipped = tmp_path / "skipped.json"
        skipped.write_text(text)
        fails(capsys, "aggregate", "--out-dir", tmp_path / "tables", "--skipped", skipped,
              names=[f"{skipped}: ", words])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["skipped.json"]


def test_a_value_given_twice_is_refused_not_overwritten(capsys, tmp_path):
    """Was: the last --param block=... (or --set, or generator parameter) won silently."""
    fails(capsys, *SOLVE, "--source", 0, "--param", "block=32", "--param", "block=64",
          names=["block given twice: block=32 and 'block=64'"])
    fails(capsys, "generate", "ring", tmp_path / "r.npz", "n=4", "n=5", names=["n given twice"])
    line = usage_error(capsys, "generate", "ring", tmp_path / "r.npz", "n=4", "seed=2", "--seed", 3)
    assert "argument --seed: not allowed with a seed=VALUE parameter" in line
    path = _config(tmp_path)
    fails(capsys, "bench", "--config", path, "--out", tmp_path / "out", "--set", "trials=1", "--set", "trials=2",
          names=["trials given twice"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml"]
