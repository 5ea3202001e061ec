"""Every tree over several GPUs (gpusp.measure.alltrees_ranks): the split sweep's reductions equal one process's
exactly (P = 2 and 3, n = 1, unreachable parts, duplicates, both sweeping solvers), the merge's timing and counters,
the refusals (more GPUs than sources, gpus > 1 in a single solve) and the command line. In the simulator the ranks
are processes sharing the CPU; tiny graphs, one trial, no warm-up.
"""

import json
import pickle

import numpy as np
import pytest
from cases import _g, random_graph

from gpusp.cli import main
from gpusp.data.formats import write_graph
from gpusp.errors import SolverError
from gpusp.measure.alltrees import QUANTITIES, sweep
from gpusp.measure.alltrees_ranks import host_cores, merge, slice_bounds
from gpusp.measure.harness import solve
from gpusp.measure.validate import reference_rows
from gpusp.solvers import registry
from gpusp.solvers.multisource.reduce import reduce_rows

SMALL = {"multisource_sssp": {"batch": 32, "block": 32, "split": 2, "regs": 0, "delta": 0},
         "phast_gpu": {"batch": 2, "block": 32}}


def _sweeps(graph, name, sources, targets, gpus):
    spec = registry.get(name)
    one, split = (sweep(graph, spec, spec.resolve({**SMALL[name], "gpus": p}), sources, targets, trials=1, warmup=0)
                  for p in (1, gpus))
    return one, split


def _assert_identical(one, split, graph):
    want = reduce_rows(reference_rows(graph, one.sources).dist, graph.inf, one.width, one.targets)
    for key in QUANTITIES:
        assert np.array_equal(one.values[key], want[key]), key
        assert one.values[key].shape == split.values[key].shape, key
        assert np.array_equal(one.values[key], split.values[key]), (key, one.values[key], split.values[key])


@pytest.mark.parametrize("name,gpus", [("multisource_sssp", 2), ("multisource_sssp", 3), ("phast_gpu", 2)])
def test_a_split_sweep_equals_one_process(name, gpus):
    """Seven vertices with an unreachable pair, a zero weight and a self-loop; duplicate sources in no order: the
    merged reductions and table are one process's, in the order given; counters and timing name every rank."""
    graph = _g(7, [(0, 1, 3), (1, 2, 0), (2, 0, 4), (2, 3, 5), (3, 3, 1), (5, 6, 2)], "split")
    sources, targets = [6, 0, 2, 2, 5, 1, 3], [3, 0, 6]
    one, split = _sweeps(graph, name, sources, targets, gpus)
    _assert_identical(one, split, graph)
    assert split.counters["gpus"] == gpus and split.counters["gpu_ids"] == ["sim"] * gpus
    assert one.counters["gpus"] == 1 and one.counters["gpu_ids"] == ["sim"]
    ranks = split.timing["ranks"]
    assert [r["first"] for r in ranks] == slice_bounds(len(sources), gpus)[:-1]
    assert sum(r["sources"] for r in ranks) == len(sources) and split.counters["batch_sources"] == len(sources)
    assert split.timing["sweep_ms"] == [max(r["sweep_ms"][0] for r in ranks)]  # the slowest rank's trial
    assert split.timing["per_tree_ms"] == split.timing["sweep_ms"][0] / len(sources)
    assert split.counters["batches"] == sum(r["counters"]["batches"] for r in ranks)


def test_phast_ranks_receive_the_upward_spaces_composed_once():
    """upward=closures over two ranks: the parent composes every vertex's upward space before the ranks start and
    ships it with the hierarchy, so no rank composes them (closures_ms 0) and the values are one process's."""
    graph = random_graph(16, 56, seed=4, wmin=0, wmax=9)
    spec = registry.get("phast_gpu")
    params = {**SMALL["phast_gpu"], "upward": "closures", "core_degree": 0}
    sources, targets = list(range(0, 16, 3)), [0, 7, 15]
    one, split = (sweep(graph, spec, spec.resolve({**params, "gpus": p}), sources, targets, trials=1, warmup=0)
                  for p in (1, 2))
    _assert_identical(one, split, graph)
    assert one.counters["closures_ms"] > 0 and split.timing["ranks_shared_s"] > 0
    assert [r["counters"]["upward"] for r in split.timing["ranks"]] == ["closures"] * 2
    assert [r["counters"]["closures_ms"] for r in split.timing["ranks"]] == [0.0, 0.0]


def test_one_vertex_over_two_ranks_and_the_sampled_check():
    """n = 1, its one source twice (one a rank): the validation by the seeded sample runs on the merged result."""
    graph = _g(1, [], "one")
    spec = registry.get("multisource_sssp")
    out = sweep(graph, spec, spec.resolve({**SMALL["multisource_sssp"], "gpus": 2}), [0, 0], [0], trials=1,
                warmup=0, validate=2)
    assert out.values["eccentricity"].tolist() == [0, 0] and out.values["reach"].tolist() == [1, 1]
    assert out.values["od"].tolist() == [[0], [0]] and out.verdict["ok"] is True


def test_more_gpus_than_sources_is_refused_before_any_work():
    graph = random_graph(5, 8, seed=1)
    spec = registry.get("phast_gpu")
    with pytest.raises(SolverError, match=r"gpus=3 splits 2 sources, and a GPU without sources would idle: "
                                          r"use gpus <= 2"):
        sweep(graph, spec, spec.resolve({"gpus": 3}), [0, 1], trials=1, warmup=0)


@pytest.mark.parametrize("name", ["multisource_sssp", "phast_gpu"])
def test_a_single_solve_refuses_several_gpus(name):
    """gpus splits the sources of an every-tree sweep only: a single solve says so rather than run on one GPU."""
    graph = random_graph(5, 8, seed=1)
    with pytest.raises(SolverError, match=rf"{name}: gpus=2 splits the sources of an every-tree sweep .* use gpus=1"):
        solve(graph, name, 0, gpus=2)
    with pytest.raises(SolverError, match="gpus=0: must be >= 1"):
        registry.get(name).resolve({"gpus": 0})


@pytest.mark.parametrize("name", ["multisource_sssp", "phast_gpu"])
def test_a_built_solver_ships_before_its_upload_only(name):
    """What the parent sends each rank: the host state (phast_gpu's hierarchy with it) without the compiled kernel,
    which the copy rebuilds; after the upload, device arrays would go with it, so it refuses."""
    graph = random_graph(9, 20, seed=2)
    spec = registry.get(name)
    solver = spec.load()(graph, **{k: v for k, v in spec.resolve(SMALL[name]).items() if k != "gpus"})
    copy = pickle.loads(pickle.dumps(solver))
    assert copy.kernel is solver.kernel  # the same cached kernel, not a pickled one
    if name == "phast_gpu":
        assert np.array_equal(copy.h.order, solver.h.order) and copy.pool is None
    solver.upload()
    with pytest.raises(SolverError, match="ships to another process before its upload"):
        pickle.dumps(solver)


def _part(ms, counters, rows):
    return {"values": {key: np.asarray(rows) for key in QUANTITIES}, "order_s": ms[0] / 1e4, "h2d_ms": ms[0],
            "compile_s": 0.5, "warmup_s": [ms[0] / 1e3], "sweep_ms": ms, "reduce_ms": [m / 2 for m in ms],
            "d2h_ms": 1.0, "counters": counters, "clock": "wall"}


def test_merge_takes_the_slowest_rank_per_trial_and_concatenates_in_rank_order():
    """Trial by trial the slowest rank's sweep; counters that add up summed, the others the rank of the slowest
    median (rank 0: 7 ms against 5.5 ms)."""
    parts = [_part([5.0, 9.0], {"batches": 2, "grid": 4, "settled": 7}, [0, 1]),
             _part([8.0, 3.0], {"batches": 1, "grid": 6, "settled": 2}, [2])]
    out = merge(parts, ["0", "1"], [0, 2, 3], prepared_s=1.0, measured_s=2.0)
    assert out["sweep_ms"] == [8.0, 9.0] and out["reduce_ms"] == [4.0, 4.5]
    assert out["values"]["total"].tolist() == [0, 1, 2]
    assert out["counters"] == {"batches": 3, "grid": 4, "settled": 9, "gpus": 2, "gpu_ids": ["0", "1"]}
    assert [r["per_tree_ms"] for r in out["timing"]["ranks"]] == [3.5, 5.5]
    assert out["h2d_ms"] == 8.0 and out["timing"]["ranks_measure_s"] == 2.0


def test_slices_are_contiguous_and_near_equal():
    for k, size in ((7, 3), (264346, 4), (2, 2), (5, 1)):
        bounds = slice_bounds(k, size)
        sizes = np.diff(bounds)
        assert bounds[0] == 0 and bounds[-1] == k and sizes.min() >= 1 and sizes.max() - sizes.min() <= 1


def test_command_line_with_two_gpus(tmp_path, capsys):
    """gpusp solve --all-sources --solver phast_gpu --param gpus=2: the record names both ranks, each with half the
    host's cores for its upward searches, and the summary equals a one-GPU run's; without --all-sources, refused."""
    graph = random_graph(6, 14, seed=5, wmin=0, wmax=6)
    write_graph(graph, tmp_path / "g.npz")
    base = ["solve", "--graph", str(tmp_path / "g.npz"), "--solver", "phast_gpu", "--trials", "1", "--warmup", "0",
            "--all-sources", *[f"--param={k}={v}" for k, v in SMALL["phast_gpu"].items()]]
    for gpus in (1, 2):
        code = main(base + [f"--param=gpus={gpus}", "--summary", str(tmp_path / f"s{gpus}.npz"), "--record",
                            str(tmp_path / f"r{gpus}.json"), "--validate", "--validate-rows", "2"])
        assert code == 0, capsys.readouterr().err
        printed = capsys.readouterr().out
        assert "validation: ok" in printed and ("6 trees over 2 GPUs" in printed) == (gpus == 2)
    record = json.loads((tmp_path / "r2.json").read_text())
    assert record["params"]["gpus"] == 2 and record["runs"][0]["counters"]["gpu_ids"] == ["sim", "sim"]
    ranks = record["all_trees"]["timing"]["ranks"]
    assert [r["sources"] for r in ranks] == [3, 3]
    assert [r["counters"]["threads"] for r in ranks] == [max(1, host_cores() // 2)] * 2  # threads=0: cores shared
    with np.load(tmp_path / "s1.npz") as one, np.load(tmp_path / "s2.npz") as two:
        for key in QUANTITIES:
            assert np.array_equal(one[key], two[key]), key
    single = ["solve", "--graph", str(tmp_path / "g.npz"), "--solver", "phast_gpu", "--param=gpus=2"]
    assert main(single) != 0  # a single solve: refused, naming the option
    assert "a single solve runs on one GPU: use gpus=1" in capsys.readouterr().err
