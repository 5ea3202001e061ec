"""Every tree and origin-destination tables (gpusp.measure.alltrees, multisource/reduce.py): the device reductions
against NumPy over SciPy's rows on the awkward graphs, the table against SciPy's rows, the sampled check catching a
wrong value, the config's ``sources: all`` and the command line. Simulator budget: one warp a block, batches of 32.
"""

import json

import numpy as np
import pytest
from cases import _g, random_graph, sssp_cases

from gpusp.cli import main
from gpusp.data.formats import write_graph
from gpusp.errors import SolverError
from gpusp.measure.alltrees import check_sample, check_summary, histogram_width, sweep
from gpusp.measure.job import SolveJob, run_job
from gpusp.measure.validate import reference_rows
from gpusp.plan import ConfigError, validate_config
from gpusp.solvers import registry
from gpusp.solvers.multisource.reduce import HIST_BINS, Reductions, reduce_rows

SMALL = {"batch": 32, "block": 32, "split": 2, "regs": 0}
SPEC = registry.get("multisource_sssp")


def _sweep(graph, sources, targets=(), **params):
    return sweep(graph, SPEC, SPEC.resolve({**SMALL, **params}), sources, targets, trials=1, warmup=0)


def _expected(graph, sources, width, targets):
    return reduce_rows(reference_rows(graph, sources).dist, graph.inf, width, targets)


def _assert_same(got: dict, want: dict):
    for key, value in want.items():
        assert np.array_equal(got[key], value), (key, got[key], value)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_reduce_kernel_equals_numpy_over_two_batches(dtype):
    """Vertex-major batches of 32 slots (the second with 5 sources only, positions from 32 on) with unreachable
    entries, distances past the open last bin and, for int32, sums far past 2^31: the kernel's per-source
    quantities and target rows equal NumPy's over the same rows."""
    rng = np.random.default_rng(7)
    n, S, width, inf = 23, 32, 3, np.iinfo(dtype).max
    big = 2**31 - 2 if dtype == np.int32 else 2**40
    rows = rng.integers(0, HIST_BINS * width + 40, size=(37, n)).astype(dtype)
    rows[rng.random(rows.shape) < 0.3] = inf
    rows[:, 4] = big  # 23 x 2^31 would wrap an int32 or int32 + int32 sum
    rows[np.arange(37), np.arange(37) % n] = 0  # each source reaches itself
    targets = np.array([4, 0, 22, 4])  # a duplicate target
    red = Reductions(37, targets, np.dtype(dtype), inf, width, block=64)
    for base, count in ((0, 32), (32, 5)):
        batch = np.full((n, S), inf, dtype=dtype)
        batch[:, :count] = rows[base:base + count].T
        red.launch(np.ascontiguousarray(batch).reshape(-1), n, S, base, count)
    got = red.download()
    _assert_same(got, reduce_rows(rows, inf, width, targets))
    assert got["total"].max() > 2**31 and got["histogram"][:, -1].sum() > 0


CASES = [c for c in sssp_cases() if c[0] != "random-37"]


@pytest.mark.parametrize("label,graph,source", CASES, ids=[c[0] for c in CASES])
def test_every_tree_of_the_awkward_graphs(label, graph, source):
    """n = 1, a self-loop, unreachable parts, zero weights, a zero-weight cycle, duplicates: every source's
    reductions and the target rows equal NumPy over SciPy's rows (frontier Bellman-Ford, words)."""
    targets = [graph.n - 1, source]
    out = _sweep(graph, np.arange(graph.n), targets, delta=0)
    _assert_same(out.values, _expected(graph, np.arange(graph.n), out.width, targets))
    assert out.counters["batch_sources"] == graph.n and out.counters["tree_levels"] == 0  # no trees: none needed


def test_a_hub_two_batches_buckets_pairs_and_landmark_order():
    """37 vertices (two batches of 32, the second part-full): a hub of out-degree 30 (chunks over several warps), an
    unreachable tail, buckets with pair items and the landmark order: the rows come back in the order given."""
    n = 37
    hub = [(0, v, v % 5) for v in range(1, 31)]
    edges = hub + [(v, v + 1, 2) for v in range(1, 30)] + [(30, 0, 1), (31, 32, 0), (32, 31, 0), (33, 34, 4)]
    graph = _g(n, edges, "hub")
    sources = np.arange(n)[::-1]
    out = _sweep(graph, sources, [0, 36], delta=3, items="pairs", order="landmarks")
    _assert_same(out.values, _expected(graph, sources, out.width, [0, 36]))
    assert out.counters["batches"] == 2 and out.counters["pair_items"] == 1


def test_origin_destination_table_equals_scipy_rows(tmp_path):
    """--sources A --targets B through the job: the |A| x |B| table is SciPy's rows at B (a duplicate source), the
    record and the summary say its shape, and the sampled check passed."""
    graph = random_graph(13, 40, seed=1, wmin=0, wmax=9)
    sources, targets = [3, 7, 3, 12], [0, 5, 9]
    out = run_job(SolveJob(graph, "multisource_sssp", params=SMALL, sources=sources, targets=targets, trials=1,
                           warmup=0, validate=True, validate_rows=4, summary=tmp_path / "od.npz",
                           record=tmp_path / "r.json"))
    assert out.status == "ok", out.reason
    with np.load(tmp_path / "od.npz") as z:
        assert np.array_equal(z["od"], reference_rows(graph, sources).dist[:, targets])
        assert z["sources"].tolist() == sources
    record = json.loads((tmp_path / "r.json").read_text())
    assert record["all_trees"]["table"] == [4, 3] and record["summary"]["validated"]
    assert check_summary(graph, tmp_path / "od.npz")["ok"] is True  # gpusp validate recomputes a sample


def test_the_sampled_check_names_a_wrong_value():
    """A sweep with one eccentricity off by one fails its sampled check, naming the source and the quantity."""
    graph = random_graph(13, 40, seed=1)
    out = _sweep(graph, np.arange(13), [2])
    out.values["eccentricity"][5] += 1
    verdict = check_sample(graph, out, 13, seed=0)
    assert verdict["ok"] is False and verdict["checks"]["eccentricity"] is False and verdict["checks"]["od"]
    assert verdict["mismatches"][0].startswith("source 5: eccentricity")


def test_histogram_width_covers_a_strongly_connected_graph():
    """A directed ring of weights 5: the bound is the longest distance from the hub plus the longest to it, and no
    distance lands in the open last bin."""
    n = 200
    graph = _g(n, [(v, (v + 1) % n, 5) for v in range(n)], "ring")
    width, bound = histogram_width(graph)
    assert bound == 2 * 5 * (n - 1) and width * (HIST_BINS - 1) > bound
    assert histogram_width(_g(1, [], "one")) == (1, 0)


def test_solvers_that_cannot_sweep_are_refused():
    graph = random_graph(5, 8, seed=1)
    with pytest.raises(SolverError, match="multisource_sssp"):
        sweep(graph, registry.get("scipy_dijkstra"), {}, [0, 1])
    with pytest.raises(SolverError, match="target 9 out of range"):
        _sweep(graph, [0], [9])
    negative = _g(3, [(0, 1, 2), (1, 2, -1)], "negative")  # Johnson's reweighting maps back rows only
    with pytest.raises(SolverError, match="take non-negative weights"):
        _sweep(negative, [0, 1, 2])
    phast = registry.get("phast_gpu")
    with pytest.raises(SolverError, match="phast_gpu: every tree .* take non-negative weights"):
        sweep(negative, phast, phast.resolve({}), [0, 1, 2], trials=1, warmup=0)


def _config(sources, graph_sources=None):
    graph = {"generate": "ring", "params": {"n": 8}} | ({"sources": graph_sources} if graph_sources else {})
    return {"graphs": {"r": graph}, "solvers": [{"name": "multisource_sssp"}], "sources": sources}


def test_sources_all_validates_and_a_bad_value_is_refused():
    assert validate_config(_config("all"))["sources"]["count"] == "all"
    assert validate_config(_config({"count": 2}, "all"))["graphs"]["r"]["sources"] == {"count": "all"}
    with pytest.raises(ConfigError, match="key sources: 'every' is neither a mapping"):
        validate_config(_config("every"))
    with pytest.raises(ConfigError, match="sources/count"):
        validate_config(_config({"count": "most"}))


def test_sources_all_skips_solvers_that_cannot_sweep():
    from gpusp.plan import expand_jobs

    config = validate_config({**_config("all"), "solvers": [{"name": "multisource_sssp"}, {"name": "scipy_dijkstra"}]})
    jobs, skipped = expand_jobs(config)
    assert [j.solver for j in jobs] == ["multisource_sssp"]
    assert "cannot" in skipped[0]["reason"] and skipped[0]["solver"] == "scipy_dijkstra"


def test_command_line_round_trip(tmp_path, capsys):
    """gpusp solve --all-sources --targets --summary --record --validate, then gpusp validate on the summary; the
    option clashes are refused by name."""
    graph = random_graph(11, 30, seed=4, wmin=0, wmax=6)
    write_graph(graph, tmp_path / "g.npz")
    (tmp_path / "t.txt").write_text("# targets\n0\n10\n")
    base = ["solve", "--graph", str(tmp_path / "g.npz"), "--solver", "multisource_sssp", "--trials", "1",
            "--warmup", "0", *[f"--param={k}={v}" for k, v in SMALL.items()]]
    code = main(base + ["--all-sources", "--targets", str(tmp_path / "t.txt"), "--summary", str(tmp_path / "s.npz"),
                        "--record", str(tmp_path / "r.json"), "--validate", "--validate-rows", "3"])
    assert code == 0, capsys.readouterr().err
    printed = capsys.readouterr().out
    assert "11 trees x 2 targets" in printed and "validation: ok" in printed
    with np.load(tmp_path / "s.npz") as z:
        assert np.array_equal(z["od"], reference_rows(graph, np.arange(11)).dist[:, [0, 10]])
    assert main(["validate", "--graph", str(tmp_path / "g.npz"), "--answer", str(tmp_path / "s.npz")]) == 0
    answer = "--answer: not allowed with argument --all-sources"
    for extra, message in ((["--all-sources", "--num-sources", "2"], "--num-sources: not allowed with "),
                           (["--all-sources", "--answer", "a.npz"], answer),
                           (["--summary", "s.npz"], "--summary: only with --all-sources or --targets")):
        with pytest.raises(SystemExit):
            main(base + extra)
        assert message in capsys.readouterr().err
