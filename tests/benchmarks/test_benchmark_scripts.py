"""Smoke tests of the scripts that stay under benchmarks/ (the one-off ones are in their write-ups' archives).

Each script runs here on a tiny input where it needs no GPU: the table makers on a `gpusp bench` run of a tiny config
(the CUDA simulator for blockedfw_fast), the CPU tools on src/gpusp/data/tiny.gr, make_configs.py into a temporary
folder. The GPU scripts cannot run here; they parse their arguments (--help) where they have any, and every gpusp name
a script imports must exist, so a module that moves breaks this test, not the next device call. Shell scripts must
parse (bash -n) and every repository path they name must exist.

Scripts import gpusp's public names (gpusp.__all__) only, except the names in INTERNALS: the debt, listed so that it
shrinks (a script that drops one must drop it here too) and never grows silently.
"""

from __future__ import annotations

import ast
import csv
import importlib
import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

import gpusp
from gpusp import cli
from gpusp.data.graph import Graph, dense_predecessors
from gpusp.plan import load_config
from gpusp.solvers import registry

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "benchmarks"
TINY_GR = REPO / "src" / "gpusp" / "data" / "tiny.gr"

# Every script under benchmarks/ and what this file does with it: "run" (on a tiny input), "help" (argument
# parsing and imports: it needs a GPU), "imports" (imports only: it runs its GPU work when started), "bash -n",
# "none" (nothing here: C for nvcc on the device).
SCRIPTS = {
    "sssp_fast_table.py": "run", "apsp_fast_table.py": "run", "make_table.py": "run", "parse_speed.py": "run",
    "large_graph_io.py": "run", "phast_contraction.py": "run", "all_trees_amortisation.py": "run",
    "road_pieces_floor.py": "run", "bucket_work_model.py": "run", "far_pile_model.py": "run",
    "gap_scale_figure.py": "run", "dist_locality_model.py": "run", "scale_rows.py": "run",
    "auto_features.py": "imports",  # reads the mirror's graphs and builds GAP-scale ones: minutes
    "fastfw_sass.py": "help",  # needs nvdisasm and numba-cuda's sm_90 compiler
    "papers/make_configs.py": "run", "papers/cpu_sampled.py": "run", "papers/memory_limits.py": "run",
    "papers/ncu_traffic.py": "run", "papers/fw_sampled.py": "run",
    "h200/addmin_ceiling.py": "help", "h200/barrier.py": "help", "h200/fastfw_resources.py": "help",
    "h200/road_sweep.py": "help", "h200/wave_micro.py": "help", "h200/scale_probe.py": "help",
    "h200/delta_scale.py": "help", "h200/all_trees.py": "imports",
    "h200/multi_gpu_fw.py": "help",
    "h200/launch_micro.py": "imports", "h200/round_floor.py": "imports", "h200/one_source.py": "imports",
    "h200/launch_micro.cu": "none",
    **{f"h200/{name}.sh": "bash -n" for name in ("run", "env", "calls", "compare", "launch", "road", "peers",
                                                 "peers-workflow", "snakemake", "scale", "lanes")},
}
# Scripts moved into their write-up's archive (benchmarks/archive/): unpacking one puts them back beside these.
ARCHIVED = {"sssp_road_table.py", "sssp_round_model.py", "h200/peers_table.py", "h200/cluster_micro.py",
            "papers/assemble.py", "papers/native/assemble.py", "h200/native-rest.sh", "h200/native-owed.sh"}
# gpusp names beyond the facade (gpusp.__all__) that scripts import: public names of their modules, listed here so
# that a script reaching deeper into the package is a decision, not an accident.
INTERNALS = {
    "fastfw_sass.py": {"gpusp.solvers.compilecheck.patch_current_device", "gpusp.solvers.compilecheck.link",
                       "gpusp.solvers.blockedfw.fast.kernels.kernel_sigs", "gpusp.solvers.blockedfw.fast.kernels.kernels",
                       "gpusp.solvers.blockedfw.fast.variants.ARITHS", "gpusp.solvers.blockedfw.fast.variants.SHIPPED"},
    "parse_speed.py": {"gpusp.data.formats.detect_format", "gpusp.data.formats.load_cached"},
    "large_graph_io.py": {"gpusp.data.formats"},
    "papers/cpu_sampled.py": {"gpusp.solvers.dijkstra.cpu.dijkstra_matrix_rows"},
    "papers/memory_limits.py": {"gpusp.solvers.registry"},
    "papers/fw_sampled.py": {"gpusp.data.graph.dense_predecessors", "gpusp.solvers.floydwarshall.cpu.fw_step"},
    "papers/ncu_traffic.py": {"gpusp.atomic.atomic_open"},
    "gap_scale_figure.py": {"gpusp.atomic.atomic_open"},
    "scale_rows.py": {"gpusp.atomic.atomic_open"},
    "dist_locality_model.py": {"gpusp.measure.sources.pick_sources"},
    "papers/make_configs.py": {"gpusp.report.findings.cell_specs", "gpusp.report.findings.expand_cells"},
    "h200/fastfw_resources.py": {"gpusp.solvers.blockedfw.fast.kernels.kernel_sigs", "gpusp.solvers.blockedfw.fast.kernels.kernels"},
    "h200/launch_micro.py": {"gpusp.solvers.common.launch.Launch", "gpusp.solvers.common.launch.NativeRead"},
    "h200/round_floor.py": {"gpusp.solvers.common.launch.capture_graph", "gpusp.solvers.registry.get"},
    "h200/one_source.py": {"gpusp.measure.sources.pick_sources"},
    "road_pieces_floor.py": {"gpusp.data.generate.generate"},
    "bucket_work_model.py": {"gpusp.measure.sources.pick_sources"},
    "far_pile_model.py": {"gpusp.measure.sources.pick_sources", "gpusp.solvers.deltastep.spec.nearfar_split",
                          "gpusp.solvers.deltastep.spec.NEARFAR_BLOCKS_PER_SM"},
    "phast_contraction.py": {"gpusp.data.generate.generate", "gpusp.solvers.phast.contraction",
                             "gpusp.solvers.phast.solver.auto_core_degree"},
    "auto_features.py": {"gpusp.atomic.atomic_open", "gpusp.data.formats.read_graph", "gpusp.data.generate.generate",
                         "gpusp.data.weights.add_weights", "gpusp.solvers.auto.Features"},
    "h200/multi_gpu_fw.py": {"gpusp.measure.validate.reference_rows", "gpusp.solvers.registry"},
    "h200/all_trees.py": {"gpusp.measure.alltrees.check_sample", "gpusp.measure.alltrees.sweep",
                          "gpusp.solvers.registry"},
    "h200/delta_scale.py": {"gpusp.data.generate.generate", "gpusp.measure.harness.solve_many",
                            "gpusp.measure.sources.pick_sources", "gpusp.measure.validate.check_certificate",
                            "gpusp.plan.parse_assignments"},
    "h200/scale_probe.py": {"gpusp.data.formats.read_graph", "gpusp.data.formats.write_graph",
                            "gpusp.data.generate.generate", "gpusp.measure.harness.solve_many",
                            "gpusp.measure.sources.pick_sources", "gpusp.measure.validate.check_certificate",
                            "gpusp.plan.parse_assignments", "gpusp.solvers.peers.build", "gpusp.solvers.registry"},
    "h200/road_sweep.py": {"gpusp.data.generate", "gpusp.data.weights.add_weights", "gpusp.measure.harness.solve_many",
                           "gpusp.measure.sources.pick_sources", "gpusp.measure.validate.check_sssp",
                           "gpusp.measure.validate.reference_rows"},
}
PY_SCRIPTS = sorted(s for s in SCRIPTS if s.endswith(".py"))
SH_SCRIPTS = sorted(s for s in SCRIPTS if s.endswith(".sh"))


def script(name: str, *args, cwd=REPO, check=True, env=None) -> subprocess.CompletedProcess:
    """Run benchmarks/NAME with this interpreter from the repository root, as its usage line says (``env``: variables
    set for it on top of this process's)."""
    proc = subprocess.run([sys.executable, str(BENCH / name), *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=300, env={**os.environ, **env} if env else None)
    if check:
        assert proc.returncode == 0, f"{name} exited {proc.returncode}:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    return proc


def import_script(name: str):
    """Import benchmarks/NAME (a .py path) by its module name, as the script's own run finds it: Numba's cache
    (cache=True, shared with the script's subprocess in one worker) records a module by name, and an entry made by
    an unnamed module cannot be loaded again."""
    folder = str((BENCH / name).parent)
    sys.path.insert(0, folder)
    try:
        return importlib.import_module(Path(name).stem)
    finally:
        sys.path.remove(folder)


def markdown_rows(text: str, first_cell: str) -> list[list[str]]:
    """The cells of the markdown table rows whose first cell is FIRST_CELL."""
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in text.splitlines()
            if line.startswith("|")]
    return [r for r in rows if r[0] == first_cell]


# --- what is here ----------------------------------------------------------------------------------------------
def test_every_script_under_benchmarks_is_listed():
    found = {p.relative_to(BENCH).as_posix() for ext in ("py", "sh", "cu") for p in BENCH.rglob(f"*.{ext}")}
    assert found - ARCHIVED == set(SCRIPTS)


def gpusp_names(path: Path) -> set[str]:
    """Every gpusp name the script imports or reads as gpusp.NAME: 'gpusp.module.name' or 'gpusp.module'."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "gpusp":
            names |= {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names if alias.name.split(".")[0] == "gpusp"}
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "gpusp":
            names.add(f"gpusp.{node.attr}")
    return names - {"gpusp"}


@pytest.mark.parametrize("name", PY_SCRIPTS)
def test_a_script_imports_gpusp_names_that_exist_and_public_ones_but_its_listed_internals(name):
    names = gpusp_names(BENCH / name)
    for full in sorted(names):
        module, _, attr = full.rpartition(".")
        try:
            importlib.import_module(full)  # a module: gpusp.data.generate
        except ModuleNotFoundError:
            assert hasattr(importlib.import_module(module), attr), f"{name}: {full} does not exist"
    private = sorted(n for n in names if any(part.startswith("_") for part in n.split(".")))
    assert not private, f"{name} imports private names: {private}"
    public = {f"gpusp.{n}" for n in gpusp.__all__}
    assert names - public == INTERNALS.get(name, set())


# --- the table makers, on a tiny `gpusp bench` run -------------------------------------------------------------
# no warm-up run: nothing here reads one, and a run of blockedfw_fast (auto tile 32: 1024 simulated threads) in the
# simulator costs about 8 s of CPU
TINY_BENCH = {
    "trials": 3, "warmup": 0, "in_process": True, "sources": {"count": 2, "seed": 1}, "validate": {"apsp_rows": 4},
    "graphs": {"tiny": {"file": str(TINY_GR)},
               "rand16": {"generate": "random", "params": {"n": 16, "k": 3, "wmax": 20}, "seed": 2}},
    "solvers": [{"name": "scipy_dijkstra", "graphs": ["tiny"]}, {"name": "dijkstra_cpu", "graphs": ["tiny"]},
                {"name": "scipy_apsp", "graphs": ["rand16"]}, {"name": "floydwarshall_cpu", "graphs": ["rand16"]},
                {"name": "blockedfw_fast", "graphs": ["rand16"]}],
}


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory) -> Path:
    """A `gpusp bench --out` folder: SSSP on tiny.gr, APSP (blockedfw_fast in the simulator) on a random graph."""
    root = tmp_path_factory.mktemp("bench")
    config = root / "tiny.yaml"
    config.write_text(yaml.safe_dump(TINY_BENCH))
    assert cli.main(["bench", "--config", str(config), "--out", str(root / "run")]) == 0
    return root / "run"


def test_sssp_fast_table_gives_the_median_over_sources_and_the_ratio_to_scipy(bench_run):
    out = script("sssp_fast_table.py", bench_run).stdout
    assert "### tiny (n = 21, m = 63, 2 sources)" in out and "rand16" not in out  # SSSP graphs only
    samples = pd.read_csv(bench_run / "tables" / "samples.csv")
    cpu = samples[samples.solver == "dijkstra_cpu"].groupby("source").time_ms.median().median()
    scipy = samples[samples.solver == "scipy_dijkstra"].groupby("source").time_ms.median().median()
    header = markdown_rows(out, "solver")[0]
    (row,) = markdown_rows(out, "dijkstra_cpu")
    assert float(row[header.index("median_ms")]) == pytest.approx(cpu, rel=5e-3)  # printed to 3 figures
    assert float(row[header.index("x_scipy")]) == pytest.approx(scipy / cpu, rel=5e-3)
    assert markdown_rows(out, "scipy_dijkstra")[0][header.index("x_scipy")] == "1"
    assert row[header.index("valid")] == "True"


def test_apsp_fast_table_reads_the_records_and_the_kernel_the_solver_chose(bench_run, tmp_path):
    out = tmp_path / "apsp.csv"
    printed = script("apsp_fast_table.py", bench_run, "--ceiling", "1e12", "--csv", out).stdout
    rows = {r["solver"]: r for r in csv.DictReader(out.open())}
    assert set(rows) == {"scipy_apsp", "floydwarshall_cpu", "blockedfw_fast"}
    summary = pd.read_csv(bench_run / "tables" / "summary.csv").set_index("solver")
    for solver, row in rows.items():
        assert float(row["median_ms"]) == pytest.approx(summary.loc[solver, "median_ms"])
        assert float(row["rate_per_s"]) == pytest.approx(16 ** 3 / (float(row["median_ms"]) / 1e3))
        assert float(row["frac_dpx_ceiling"]) == pytest.approx(float(row["rate_per_s"]) / 1e12)
        assert row["valid"] == "True" and len(row["samples_ms"].split(";")) == 3
    fast = rows["blockedfw_fast"]
    assert fast["kind"] == "fast" and int(fast["tile"]) > 0 and int(fast["regblock"]) > 0 and fast["kernel_arith"]
    assert rows["scipy_apsp"]["kind"] == "anchor"
    assert len(markdown_rows(printed, "16")) == 3


def test_make_table_writes_one_csv_and_one_section_per_graph(bench_run, tmp_path):
    summary = bench_run / "tables" / "summary.csv"
    script("make_table.py", tmp_path / "t.csv", tmp_path / "t.md", summary, "--title", "Tiny")
    md = (tmp_path / "t.md").read_text()
    assert md.startswith("# Tiny\n")
    assert "## tiny (n = 21, m = 63)" in md and "## rand16 (n = 16, m = 48)" in md
    table = pd.read_csv(summary).set_index("solver")
    assert f"SciPy all-sources Dijkstra: {table.loc['scipy_apsp', 'median_ms']:.1f} ms." in md
    assert markdown_rows(md, "scipy_apsp")[0][-1] == "1.00" and markdown_rows(md, "scipy_dijkstra")[0][-1] == "1.00"
    ratio = table.loc["scipy_dijkstra", "median_ms"] / table.loc["dijkstra_cpu", "median_ms"]
    assert markdown_rows(md, "dijkstra_cpu")[0][-1] == f"{ratio:.2f}"
    assert len(pd.read_csv(tmp_path / "t.csv")) == len(table) == 5


# --- the CPU tools ---------------------------------------------------------------------------------------------
def test_parse_speed_times_every_step_on_a_small_graph():
    out = script("parse_speed.py", "--graph", TINY_GR, "--repeats", "1").stdout
    assert out.startswith("tiny.gr: n=21 m=63")
    steps = [line.split(" best ")[0].strip() for line in out.splitlines() if " best " in line]
    assert steps == ["read_graph (text -> CSR)", "read_graph (decompressed)", 'pandas sep=r"\\s+"', 'pandas sep=" "',
                     "write_graph npz", "read_graph npz", "load_cached (cache hit)", "write_graph .gr",
                     "write_graph .plain", "write_graph .txt", "write_graph .gr.gz"]


def test_large_graph_io_times_every_step_on_a_small_copy(tmp_path):
    out = script("large_graph_io.py", "--scale", "0.0002", "--repeats", "1", "--dir", tmp_path).stdout
    assert out.startswith("usa-shape: n=4,789 m=11,666")
    steps = [line.split(" best ")[0].strip() for line in out.splitlines() if " best " in line]
    assert steps == ["read .gr (block reader)", "read .gr (general reader)", "read .gr.gz (block reader)",
                     "read .gr.gz (general reader)", "write .gcsr", "read .gcsr", "write .wsg", "read .wsg",
                     "write .npz", "read .npz"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["usa.gcsr", "usa.gr", "usa.gr.gz", "usa.npz", "usa.wsg"]


def test_all_trees_amortisation_finds_each_crossover_from_the_committed_figures(tmp_path):
    out = script("all_trees_amortisation.py", "--png", str(tmp_path / "a.png")).stdout
    rows = list(csv.DictReader(out.splitlines()))
    trees = {(r["graph"], r["solver"]): r for r in csv.DictReader((BENCH / "all-trees-h200.csv").open())}
    ny = {(r["method"], r["overtakes"]): int(r["after_sources"]) for r in rows if r["graph"] == "USA-road-d.NY"}
    phast, multi = trees[("USA-road-d.NY", "phast_gpu")], trees[("USA-road-d.NY", "multisource_sssp")]
    expected = (float(phast["preprocess_s"]) - float(multi["preprocess_s"])) / (
        (float(multi["per_tree_ms"]) - float(phast["per_tree_ms"])) / 1e3)
    assert abs(ny[("phast_gpu", "multisource_sssp")] - expected) <= 1
    assert ("multisource_sssp", "GAPBS, 16 threads") in ny and (tmp_path / "a.png").stat().st_size > 10_000


def test_gap_scale_figure_draws_one_call_a_scale_with_gapbs_from_that_call(tmp_path):
    out = script("gap_scale_figure.py", "--out", tmp_path / "gap.png").stdout
    assert (tmp_path / "gap.png").stat().st_size > 10_000 and "wrote" in out
    table = import_script("gap_scale_figure.py").rows()
    assert sorted(set(zip(table["kind"], table["scale"]))) == [(k, s) for k in ("kron", "urand") for s in (22, 26, 27)]
    assert (table["n"] == 2 ** table["scale"]).all()
    for _, point in table.groupby(["kind", "scale"]):
        assert len(point) == 3 and point["call"].nunique() == 1  # every series of a point from one call
        ms = dict(zip(point["series"], point["median_ms"]))
        assert ms["deltastep_lean"] < ms["deltastep_gpu"] < ms["GAPBS, 16 threads"] / 10  # the write-up's reading
    kron27 = table[(table["kind"] == "kron") & (table["scale"] == 27)].set_index("series")
    assert kron27.loc["deltastep_lean", "median_ms"] == pytest.approx(439.78)
    assert kron27.loc["deltastep_lean", "gteps"] == pytest.approx(4223273018 / 439.78 / 1e6)


def test_scale_rows_appends_a_call_once_and_leaves_the_other_rows_as_they_are(tmp_path):
    rows = tmp_path / "solvers.csv"
    committed = (BENCH / "sssp-scale-h200-solvers.csv").read_text()
    rows.write_text(committed)
    summary = tmp_path / "summary.csv"
    pd.DataFrame([{"graph": "kron-22", "problem": "sssp", "solver": "deltastep_lean", "params": "paths-false",
                   "gpu": "NVIDIA H200", "n": 4194304, "m": 128305846, "median_ms": 8.123456789, "q1_ms": 8.0,
                   "q3_ms": 8.3, "samples": 48, "sources": 16, "compile_s": 0.3, "h2d_ms": 199.5, "d2h_ms": 6.3,
                   "iterations": 109.5, "relaxations": 1.53e8, "relaxations_per_s": 1.88e10, "validated": True,
                   "status": "ok", "mode": "gpu"}]).to_csv(summary, index=False)
    gpu = tmp_path / "gpu.txt"
    gpu.write_text("name, driver_version, memory.total [MiB]\nNVIDIA H200, 999.1.2, 143771 MiB\nnumpy 2.4.6\n")
    for _ in range(2):  # the second append replaces the first
        out = script("scale_rows.py", summary, gpu, "--run", "call t1 (0000000)", "--date", "2026-12-03",
                     "--out", rows).stdout
    assert "1 rows of call t1 (0000000) (1 replaced)" in out
    lines = rows.read_text().splitlines()
    assert lines[:-1] == committed.splitlines()  # the committed rows untouched, in their order
    assert lines[-1] == ('2026-12-03,"nvidia-h200 (1 GPU, 16 cores)",999.1.2,call t1 (0000000),kron-22,4194304,'
                         '128305846,deltastep_lean,paths-false,NVIDIA H200,8.12346,8,8.3,48,16,0.3,199.5,6.3,109.5,'
                         '1.53e+08,1.88e+10,True,ok')
    summary.write_text("graph,solver\nkron-22,deltastep_lean\n")
    bad = script("scale_rows.py", summary, gpu, "--run", "x", "--date", "y", "--out", rows, check=False)
    assert bad.returncode != 0 and "no column" in bad.stderr and rows.read_text().splitlines() == lines


def test_dist_locality_model_counts_sector_hits_and_keeps_the_search_under_relabelling():
    model = import_script("dist_locality_model.py")
    # vertex 0's arcs read heads 1..8 twice over: sectors of 4 distances, {1,2,3}, {4..7}, {8}
    indptr = np.array([0, 16] + [16] * 8, np.int64)
    indices = np.array(list(range(1, 9)) * 2, np.int32)
    expanded = np.array([0], np.int64)
    assert model.replay(indptr, indices, expanded, 4, 2, 4) == (16, 13)  # 3 first reads miss, the rest hit
    assert model.replay(indptr, indices, expanded, 1, 1, 4) == (16, 10)  # one sector of room: its 6 changes miss
    out = script("dist_locality_model.py", "kron-10", "--sources", "1", "--cache-mb", "0.001", "64").stdout
    rows = [json.loads(line) for line in out.splitlines()]
    assert {(r["order"], r["cache_mb"]) for r in rows} == {(o, c) for o in ("generated", "degree", "bfs")
                                                           for c in (0.001, 64.0)}
    assert len({r["relaxations"] for r in rows}) == 1 and all(r["reads"] == r["relaxations"] for r in rows)
    for r in rows:  # a cache larger than the distances misses each sector once at most
        assert r["cache_mb"] < 1 or r["miss_bytes"] <= -(-r["n"] // 4) * 32


def test_road_pieces_floor_counts_cut_arcs_and_piece_changes_on_a_grid():
    out = script("road_pieces_floor.py", "grid8", "--pieces", "1", "2", "--sources", "2").stdout
    rows = [json.loads(line) for line in out.splitlines()]
    assert [(r["ordering"], r["pieces"]) for r in rows] == [("ids", 1), ("ids", 2), ("rcm", 1), ("rcm", 2)]
    one, two = rows[0], rows[1]
    assert one["cut_arc_share"] == 0 and one["max_piece_changes"] == 0 and one["hop_depth"] >= 7  # 8 x 8 corners
    assert 0 < two["cut_arc_share"] < 0.5 and two["max_piece_changes"] >= 1 and two["hop_depth"] == one["hop_depth"]


def test_bucket_work_model_finds_the_distances_and_counts_more_work_in_wider_buckets():
    from gpusp.data.generate import generate
    from gpusp.measure.validate import reference_rows

    model = import_script("bucket_work_model.py")
    # zero weights, duplicates and unreachable vertices: a sparse random graph with weights from 0
    g = generate("random", n=300, k=2, wmin=0, wmax=9, seed=3)
    ref = reference_rows(g, [0]).dist[0]
    assert (ref == g.inf).any() and (g.weights == 0).any()
    for order in model.ORDERS.values():
        for delta in (1, 7, 10_000):
            relaxed, buckets, dist = model.bucket_work(g.indptr.astype(np.int64), g.indices.astype(np.int64),
                                                       g.weights.astype(np.int64), 0, delta, order)
            reached = dist < np.iinfo(np.int64).max
            assert np.array_equal(reached, ref != g.inf) and np.array_equal(dist[reached], ref[reached])
            assert relaxed >= int(g.indptr[1:][reached].sum() - g.indptr[:-1][reached].sum()) and buckets >= 1
    rows = [json.loads(line) for line in script("bucket_work_model.py", "grid16", "--widths", "1", "64",
                                                "--sources", "2").stdout.splitlines()]
    assert [(r["width"], r["order"]) for r in rows] == [(w, o) for w in (1, 64) for o in ("rounds", "snapshot", "fifo")]
    assert rows[0]["buckets"] > rows[3]["buckets"] and rows[3]["relaxations_per_arc"] > rows[0]["relaxations_per_arc"]
    assert rows[4]["relaxations_per_arc"] >= rows[3]["relaxations_per_arc"]  # stale reads save no work here


def test_far_pile_model_finds_the_distances_and_counts_the_kernels_pile_reads():
    from gpusp.data.generate import generate
    from gpusp.measure.validate import reference_rows

    model = import_script("far_pile_model.py")

    def arrays(g):
        return g.indptr.astype(np.int64), g.indices.astype(np.int64), g.weights.astype(np.int64)

    # zero weights, duplicates and unreachable vertices: every pile layout gives the reference distances
    g = generate("random", n=300, k=2, wmin=0, wmax=9, seed=3)
    ref = reference_rows(g, [0]).dist[0]
    for delta in (1, 4, 10_000):
        for band in (0, 1, 3):
            rounds, splits, scanned, relaxed, dist, order, order_round = model.near_far(*arrays(g), 0, delta, band)
            reached = dist < np.iinfo(np.int64).max
            assert np.array_equal(reached, ref != g.inf) and np.array_equal(dist[reached], ref[reached])
            assert relaxed == int(np.diff(g.indptr)[order].sum()) and reached[order].all()
            assert (np.diff(order_round) >= 0).all() and order_round[-1] == rounds
    # the star of tests/solvers/deltastep (the kernel's far_scanned counter): one leaf leaves the pile per split
    leaves = np.arange(1, 9)
    star = Graph.from_edges(9, np.zeros(8, np.int64), leaves, 2 * leaves, name="heavy-star")
    assert model.near_far(*arrays(star), 0, 1, 0)[1:3] == (8, sum(range(1, 9)))
    banded = model.near_far(*arrays(star), 0, 1, 2)
    assert banded[1] == 8 and banded[2] < sum(range(1, 9))  # the rest is read only when a band is passed
    # the lane groups' dependent loads: 3 an entry, 2 a step of lanes x unroll arcs (expansions of degrees 40, 3, 3, 0)
    d = np.array([40, 3, 3, 0])
    assert model.chains(d, 8, 1, 40, 1.0) == {"split": 0, "steps": 7, "loads": 26, "waits": 208}
    assert model.chains(d, 8, 2, 40, 1.0)["loads"] == 9 + 2 * 5 + 3
    # a hub cut into 16-arc chunks (split 2 x lanes): 62 full chunks and one of 8 arcs
    hub = model.chains(np.array([1000]), 8, 1, 1000, 2.0)
    assert (hub["split"], hub["steps"], hub["loads"]) == (16, 62 * 2 + 1, 3 * 63 + 2 * 125)
    assert model.chains(np.array([1000]), 8, 2, 1000, 2.0)["steps"] == 62 + 1
    # the critical path: one round holds the four expansions; a grid of 2 groups of 8 lanes (one warp) deals them
    # in turn, entries 0 and 1 (5 and 1 steps) in its first pass, 2 and 3 (1 and 0) in its second: the warp waits
    # for the longer group of each pass
    rounds = np.array([1, 1, 1, 1])
    assert model.chains(d, 8, 1, 40, 1.0, rounds, threads=16)["critical"] == (3 + 2 * 5) + (3 + 2 * 1)
    # a round each: nothing waits on anything else, every entry's loads are on the path
    assert model.chains(d, 8, 1, 40, 1.0, np.arange(4), threads=16)["critical"] == 26
    rows = [json.loads(line) for line in script("far_pile_model.py", "kron-8", "--sources", "1", "--bands", "2",
                                                "--lanes", "8", "--unroll", "1", "4").stdout.splitlines()]
    assert len(rows) == 1 and rows[0]["far_scanned"] >= rows[0]["splits"] > 0 and "2" in rows[0]["bands"]
    chain = rows[0]["chains"]
    assert set(chain) == {"8x1", "8x4"} and chain["8x4"]["loads"] < chain["8x1"]["loads"]


def test_phast_contraction_prints_one_build_a_graph_and_thread_count():
    # the script's own logic as plain Python: compiling the contraction (minutes here, and at the same time as
    # tests/solvers/phast compiles it in the other worker) is tested there, not in its benchmark's printout
    out = script("phast_contraction.py", "grid6", "--threads", "1", "2", env={"NUMBA_DISABLE_JIT": "1"}).stdout
    rows = [json.loads(line) for line in out.splitlines()]
    assert [(r["graph"], r["n"], r["threads"]) for r in rows] == [("grid6", 36, 1), ("grid6", 36, 2)]
    assert rows[0]["shortcuts"] == rows[1]["shortcuts"] > 0 and rows[0]["levels"] == rows[1]["levels"] > 1
    assert all(r["seconds"] >= 0 and r["peak_rss_mb"] >= r["rss_before_build_mb"] for r in rows)
    assert all(r["threading_layer"] in ("tbb", "omp", "workqueue") for r in rows)


def test_phast_contraction_core_floor_measures_the_core_a_device_search_would_take():
    env = {"NUMBA_DISABLE_JIT": "1"}
    cored, = (json.loads(x) for x in script("phast_contraction.py", "grid16", "--threads", "1", "--core-degree", "5",
                                             "--core-floor", "4", env=env).stdout.splitlines())
    assert 0 < cored["core"] < cored["n"] and cored["core_arcs"] >= cored["core"]
    assert 1 <= cored["core_hops"] < 30 and cored["outside_levels"] == cored["levels"] - 1  # the core is level 0
    assert 1 <= cored["up_to_core_entries"] < cored["n"] - cored["core"]
    # a vertex's farthest corner is at least 15 hops away
    assert 1 <= cored["core_sp_depth"] <= cored["core"] and 15 <= cored["sp_depth"] < cored["n"]
    full, = (json.loads(x) for x in script("phast_contraction.py", "grid16", "--threads", "1", "--core-degree", "0",
                                           "--core-floor", "4", env=env).stdout.splitlines())
    assert full["core"] == full["core_arcs"] == 0 and "core_hops" not in full and "core_sp_depth" not in full
    assert full["outside_levels"] == full["levels"] and 15 <= full["sp_depth"] < full["n"]


def test_parse_speed_says_when_there_is_no_graph(tmp_path):
    proc = script("parse_speed.py", "--graph", tmp_path / "none.gr", check=False)
    assert proc.returncode == 2 and "no graph at" in proc.stderr


def test_cpu_sampled_scales_the_mean_time_per_sampled_source_to_all_sources(tmp_path):
    out = tmp_path / "sampled.csv"
    printed = script("papers/cpu_sampled.py", TINY_GR, "--sources", 8, "--batches", 2, "--seed", 1, "--out", out).stdout
    rows = list(csv.DictReader(out.open()))
    assert [int(r["sources"]) for r in rows] == [4, 4] and all(int(r["pops"]) > 0 for r in rows)
    mean = statistics.fmean(float(r["s_per_source"]) for r in rows)
    assert float(rows[0]["estimate_s"]) == pytest.approx(mean * 21)
    assert float(rows[0]["ci95_low_s"]) <= float(rows[0]["estimate_s"]) <= float(rows[0]["ci95_high_s"])
    assert "8 sampled sources -> all 21 sources" in printed


def test_fw_sampled_estimates_each_loop_from_its_sampled_steps(tmp_path):
    out = tmp_path / "fw.csv"
    printed = script("papers/fw_sampled.py", TINY_GR, "--ks", 4, "--seed", 1, "--out", out).stdout
    rows = list(csv.DictReader(out.open()))
    assert len({int(r["k"]) for r in rows}) == 4 and all(0 <= int(r["k"]) < 21 for r in rows)
    for loop in ("skip", "paper", "every"):
        mean = statistics.fmean(float(r[f"{loop}_s"]) for r in rows)
        assert float(rows[0][f"{loop}_estimate_s"]) == pytest.approx(mean * 21)
        assert float(rows[0][f"{loop}_ci95_low_s"]) <= mean * 21 <= float(rows[0][f"{loop}_ci95_high_s"])
    assert float(rows[0]["skip_measured_s"]) >= sum(float(r["skip_s"]) for r in rows)  # every step, not a sample
    assert "4 sampled steps of 21" in printed


def test_fw_sampled_steps_each_give_the_solvers_answer():
    """n steps of the skipping loop, the paper's loop and the every-element loop each end where floydwarshall_cpu
    does (distances and predecessors), on a graph with unreachable pairs and zero weights."""
    module = import_script("papers/fw_sampled.py")
    graph = Graph.from_edges(5, [0, 1, 1, 2, 3], [1, 2, 0, 0, 4], [3, 0, 2, 7, 1])
    solver = registry.get("floydwarshall_cpu").build(graph)
    solver.run()
    for step in (module.fw_step, module.paper_step, module.every_step):
        d = graph.to_dense()
        p = dense_predecessors(d, graph.inf)
        for k in range(graph.n):
            assert step(d, p, graph.dtype.type(graph.inf), k)
        assert (d == solver.dist).all() and (p == solver.parent).all(), step.__name__


def test_memory_limits_puts_paper_001s_limits_where_its_word_count_does():
    """Finding 1.23 by arithmetic: (3N + 1)|V| + 2|E| 4-byte words with |E| = 4|V| in 512 MiB."""
    printed = script("papers/memory_limits.py").stdout.splitlines()
    assert f"fits |V| <= {512 * 2**20 // 420:,}" in printed[0] and "stopped at 1,200,000" in printed[0]
    assert f"fits |V| <= {512 * 2**20 // 48:,}" in printed[1] and "stopped at 10,700,000" in printed[1]


def test_ncu_traffic_sums_each_runs_bytes_over_its_launches(tmp_path):
    """Finding 1.5b's table from Nsight Compute's CSV report (tests/benchmarks/fixtures/ncu-csv-format.csv: a format
    fixture written by hand, not data): bytes summed over launches, units and thousands separators read, other
    metrics ignored; a report without ncu's header is refused by name."""
    fixture = REPO / "tests" / "benchmarks" / "fixtures" / "ncu-csv-format.csv"
    out = tmp_path / "traffic.csv"
    script("papers/ncu_traffic.py", out, f"nsssp_global|random-n8-k4-w8={fixture}")
    (row,) = list(csv.DictReader(out.open()))
    assert (row["solver"], row["graph"], row["launches"]) == ("nsssp_global", "random-n8-k4-w8", "2")
    assert row["kernels"] == "check_global scatter_global"
    assert float(row["dram_read_bytes"]) == 1_048_576 + 2_500 and float(row["dram_write_bytes"]) == 65_536
    assert float(row["dram_bytes"]) == 1_048_576 + 2_500 + 65_536 and float(row["l2_bytes"]) == 4_194_304 + 1.5e6
    bad = tmp_path / "not-ncu.csv"
    bad.write_text("solver,bytes\nx,1\n")
    proc = script("papers/ncu_traffic.py", tmp_path / "none.csv", f"a|b={bad}", check=False)
    assert proc.returncode == 1 and "not-ncu.csv: no ncu CSV header" in proc.stderr
    assert not (tmp_path / "none.csv").exists()


def test_make_configs_derives_every_native_copy_with_its_changes_in_the_header(tmp_path):
    printed = script("papers/make_configs.py", "--native", "--out", tmp_path).stdout
    made = sorted(p.name for p in tmp_path.glob("*.yaml"))
    assert made == sorted(p.name for p in (REPO / "config" / "experiments" / "native").glob("*.yaml"))
    assert len(printed.splitlines()) == len(made)
    for path in tmp_path.glob("*.yaml"):
        head = path.read_text().splitlines()
        original = re.match(r"# Derived from (config/experiments/[\w-]+\.yaml) by benchmarks/papers/make_configs.py",
                            head[0])
        assert original and (REPO / original.group(1)).is_file(), head[0]
        assert head[2] == "# Changes:" and head[3] == "#  - in_process: true"
        assert load_config(path)["in_process"] is True


# --- scripts that need a GPU: their arguments ------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(s for s, how in SCRIPTS.items() if how == "help"))
def test_a_gpu_script_parses_its_arguments(name):
    assert script(name, "--help").stdout.startswith("usage: ")


# --- shell scripts ---------------------------------------------------------------------------------------------
REPO_PATH = re.compile(r"(?<![\w$/.-])((?:benchmarks|config|tests|src)/[\w./-]*\.(?:py|sh|cu|yaml))")


@pytest.mark.parametrize("name", SH_SCRIPTS)
def test_a_shell_script_parses_and_names_paths_that_exist(name):
    text = (BENCH / name).read_text()
    proc = subprocess.run(["bash", "-n", str(BENCH / name)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    missing = sorted({p for p in REPO_PATH.findall(text) if not (REPO / p).exists()})
    assert not missing, f"{name} names paths that do not exist: {missing}"


def test_calls_sh_steps_name_configs_that_exist():
    """calls.sh's steps: the native ones run config/experiments/native/STEP.yaml, the others name their config."""
    text = (BENCH / "h200" / "calls.sh").read_text()
    folders = dict(re.findall(r"\b([CN])=(config/[\w/]+)", text))
    assert folders == {"C": "config/experiments/trimmed", "N": "config/experiments/native"}
    native = re.search(r"^\s*(n000t1\|[\w|]+)\)", text, re.M).group(1).split("|")
    assert sorted(f"{s}.yaml" for s in native) == sorted(p.name for p in (REPO / folders["N"]).glob("*.yaml"))
    trimmed = set(re.findall(r"\$C/([\w-]+\.yaml)", text))
    assert trimmed and all((REPO / folders["C"] / f).is_file() for f in trimmed)
