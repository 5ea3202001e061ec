"""Paper 003's flow in the CUDA simulator: tiled product, two smallest cells, SSSP between them, picture."""

from __future__ import annotations

import json

import numpy as np
import pytest
from numba import cuda

from gpusp.data.generate import value_grid
from gpusp.errors import SolverError
from gpusp.measure.paper003 import run_flow
from gpusp.report.paper003 import write_flow
from gpusp.solvers.packed import matprod


@pytest.mark.parametrize("n,T", [(1, 4), (5, 4), (8, 4), (9, 8)])  # n = 1; n not divisible by the tile
def test_tiled_product_matches_numpy(n, T):
    rng = np.random.default_rng(n)
    a = rng.integers(0, 50, size=(n, n), dtype=np.int32)
    b = rng.integers(0, 50, size=(n, n), dtype=np.int32)
    c = matprod.product(cuda.to_device(a), cuda.to_device(b), n, T).copy_to_host()
    np.testing.assert_array_equal(c, a.astype(np.int64) @ b)


def test_two_smallest_break_ties_by_the_first_index_and_restore_the_keys():
    c = np.array([[5, 3, 9], [3, 7, 3], [8, 4, 6]], dtype=np.int32)  # 3 three times: cells 1, 3, 5
    d_c = cuda.to_device(c)
    assert matprod.two_smallest(d_c, 3, B=4) == [(3, 1), (3, 3)]
    assert matprod.two_smallest(cuda.to_device(np.array([[7]], dtype=np.int32)), 1, B=4) == [(7, 0), (None, None)]
    big = np.random.default_rng(0).integers(1, 1000, size=(20, 20)).astype(np.int32)  # 400 keys, 4-thread blocks
    big[13, 17], big[2, 3] = 0, 0
    assert matprod.two_smallest(cuda.to_device(big), 20, B=4) == [(0, 2 * 20 + 3), (0, 13 * 20 + 17)]


def test_matrices_that_would_overflow_or_go_negative_are_refused():
    with pytest.raises(SolverError, match="overflow"):
        matprod.check_matrices(np.full((4, 4), 40000, np.int32), np.full((4, 4), 40000, np.int32))
    with pytest.raises(SolverError, match="non-negative"):
        matprod.check_matrices(-np.ones((2, 2), np.int32), np.ones((2, 2), np.int32))
    with pytest.raises(SolverError, match="square"):
        matprod.check_matrices(np.ones((2, 3), np.int32), np.ones((2, 3), np.int32))


def test_value_grid_charges_the_entered_cell():
    g = value_grid(np.array([[1, 2], [3, 0]]))
    src, dst, w = g.coo()
    arcs = {(int(s), int(d)): int(x) for s, d, x in zip(src, dst, w)}
    assert arcs == {(0, 1): 2, (1, 0): 1, (0, 2): 3, (2, 0): 1, (1, 3): 0, (3, 1): 2, (2, 3): 0, (3, 2): 3}


def test_flow_end_to_end(tmp_path):
    result = run_flow(size=10, seed=3, vmax=10, tile=4, trials=1)
    assert result.ok, result.checks
    (v1, r1, c1), (v2, r2, c2) = result.smallest
    cells = np.sort(result.product.ravel())
    assert (v1, v2) == (cells[0], cells[1])
    assert result.path[0] == r1 * 10 + c1 and result.path[-1] == r2 * 10 + c2
    steps = np.diff(np.divmod(np.asarray(result.path), 10), axis=1)
    assert (np.abs(steps).sum(axis=0) == 1).all()  # each step moves to a 4-neighbour
    assert result.cost == int(result.product.ravel()[result.path[1:]].sum())
    png, record = tmp_path / "path.png", tmp_path / "flow.json"
    write_flow(result, png, record)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    summary = json.loads(record.read_text())
    assert summary["ok"] is True and summary["mode"] == "sim" and summary["cost"] == result.cost
    assert {"product_ms", "minima_ms", "sssp_ms", "product_compile_s", "clock"} <= set(summary["timings"])


def test_flow_refuses_impossible_settings():
    with pytest.raises(SolverError):
        run_flow(size=0)
    with pytest.raises(SolverError, match="overflow"):
        run_flow(size=4, vmax=50_000)


def test_workflow_rule_and_cli(tmp_path):
    """`paper003:` in the config adds the run_paper003 rule (a GPU job, the simulator here) to the workflow."""
    import yaml
    from test_workflow import TINY, snakemake

    results = tmp_path / "results"
    config = tmp_path / "flow.yaml"
    config.write_text(yaml.safe_dump({**yaml.safe_load(TINY.read_text()), "results": str(results),
                                      "paper003": {"size": 9, "seed": 2, "tile": 4, "trials": 1}}))
    dry = snakemake("-n", "--configfile", config)
    assert dry.returncode == 0 and "run_paper003" in dry.stdout, dry.stdout[-3000:]
    plain = snakemake("-n", "--configfile", TINY, "--config", f"results={results}")
    assert "run_paper003" not in plain.stdout  # absent from the config: not run
    proc = snakemake("run_paper003", "--cores", 1, "--configfile", config, timeout=300)
    assert proc.returncode == 0, proc.stdout[-5000:]
    summary = json.loads((results / "paper003" / "flow.json").read_text())
    assert summary["ok"] is True and summary["size"] == 9 and summary["seed"] == 2 and summary["mode"] == "sim"
    assert (results / "paper003" / "path.png").read_bytes()[:4] == b"\x89PNG"
