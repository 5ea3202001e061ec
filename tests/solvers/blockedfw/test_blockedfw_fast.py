"""Register-blocked Floyd-Warshall (blockedfw_fast) in the CUDA simulator, at tiny tiles.

Tile 4 with register block 1 or 2 and tile 8 with register block 2 keep blocks at 4-16 simulated
threads; the persistent kernel runs with one block here (the simulator's grid barrier supports no
more), the host-driven kernels with full grids. Every arith (dpx, int32, float32, general) must give
exact answers in the simulator, which does no typing: the formulations stay valid pure Python.
"""

from types import SimpleNamespace

import numpy as np
import pytest
from cases import assert_apsp_ok, negative_cycle_graph, pairwise, random_graph, sssp_cases

import gpusp
from gpusp.errors import NegativeCycleError, SolverError
from gpusp.solvers import registry
from gpusp.solvers.blockedfw.fast import kernels, variants
from gpusp.solvers.blockedfw.fast.solver import FastSolver
from gpusp.measure.validate import reference_distances

SPEC = registry.get("blockedfw_fast")


def direct(graph, **params):
    """The solver built directly, the registry's defaults for what ``params`` leaves out: tiles 4 and 8 (the
    simulator's sizes) are below the registry's choices."""
    return FastSolver(graph, **{**SPEC.defaults(), **params})


def run(graph, **params):
    s = direct(graph, **params)
    s.upload()
    counters = s.run(None)
    dist, parent = s.download()
    return SimpleNamespace(dist=dist, parent=parent, counters=counters)


# n = 1, and n not a multiple of the tile, at the tile and register block each runs with
SHAPES = ((1, 4, 1), (10, 4, 2), (13, 8, 2))
ARITH_DESIGN = pairwise(arith=["dpx", "int32", "float32"], launch=["persistent", "host"], shape=list(SHAPES))


@pytest.mark.parametrize("arith", ["dpx", "int32", "float32"])
@pytest.mark.parametrize("launch", ["persistent", "host"])
def test_awkward_n_every_arith(arith, launch):
    """Pairwise over arith x launch x shape: every arith and launch meets every shape."""
    for n, T, R in (row["shape"] for row in ARITH_DESIGN if (row["arith"], row["launch"]) == (arith, launch)):
        g = random_graph(n, 3 * n, seed=n, wmin=1, wmax=9)
        res = run(g, tile=T, regblock=R, arith=arith, launch=launch, pivots="all")
        assert_apsp_ok(g, res)
        assert res.counters["arith"] == arith and res.counters["iterations"] == -(-n // T)
        assert res.counters["relaxations"] == (T * -(-n // T)) ** 3


def test_paths_off_distances_and_counters():
    g = random_graph(12, 40, seed=3)
    res = run(g, tile=4, regblock=1, arith="int32", paths=False, launch="host")
    ref = reference_distances(g, np.arange(g.n))
    assert np.array_equal(res.dist, ref) and res.counters["paths"] is False
    assert_apsp_ok(g, res)  # parents derived on the host from the distances


def test_negative_cycle_every_launch():
    for launch in ("persistent", "host", "graph"):
        with pytest.raises(NegativeCycleError):
            run(negative_cycle_graph(), tile=4, regblock=1 if launch == "host" else 2, launch=launch)


def test_general_kernels_when_keys_do_not_fit():
    g = random_graph(9, 30, seed=9, wmin=1, wmax=100_000_000)  # 2 L T > 2^30: no packed keys
    res = run(g, tile=4, regblock=2, arith="dpx")
    assert res.counters["arith"] == "gen32"
    assert_apsp_ok(g, res)
    res = run(g, tile=4, regblock=2, arith="float32", paths=False)
    assert res.counters["arith"] == "gen32"
    g = random_graph(9, 30, seed=9, wmin=1, wmax=600_000)  # fits int32 keys, not float32's 2^24
    res = run(g, tile=4, regblock=2, arith="float32")
    assert res.counters["arith"] == variants.AUTO_ARITH
    assert_apsp_ok(g, res)


def test_registry_and_shapes():
    g = random_graph(6, 12, seed=1)
    res = gpusp.solve(g, "blockedfw_fast", warmup=0, tile=16, regblock=8)  # 4 threads per block
    assert_apsp_ok(g, res)
    with pytest.raises(SolverError):
        SPEC.build(g, tile=128, regblock=2)  # 4096 threads per block
    assert variants.pick(8192) == (64, 4) and variants.pick(1200, paths=False) == (64, 4)  # the H200 sweeps' winners
    assert variants.pick(1200) == (32, 2) and variants.pick(2048) == (64, 4)  # with paths: T 32 up to n = 1200
    assert res.counters["persistent"] is False  # graph replay by default (host loop in the simulator): fastest on the H200
    assert SPEC.build(g).launch == "graph"
    assert variants.chunk(128, 4) == 32 and variants.chunk(128, 8) == 16 and variants.chunk(4, 4) == 4


def test_graph_launch_in_the_simulator_runs_the_host_loop():
    g = random_graph(10, 30, seed=5, wmin=0, wmax=9)
    res = run(g, tile=4, regblock=2, launch="graph")  # r = 3 rounds: 3 launches each, no graph to capture
    assert_apsp_ok(g, res)
    assert res.counters["graph"] is False and res.counters["launches"] == 9
    with pytest.raises(SolverError, match="parameter launch='stream': allowed values"):
        SPEC.build(g, launch="stream")


def test_persistent_launch_is_refused_where_its_shared_memory_would_not_load():
    """Tile 128's persistent kernel would declare phases 1-2's pivot marks (16 KB) beside phase 3's 32 KB of operand
    chunks: past the 48 KB a block may declare statically, so the module would not load on the GPU."""
    assert variants.persistent_shared(128, 4) > variants.SMEM_MAX >= variants.persistent_shared(64, 4)
    assert variants.persistent_shared(64, 8) <= variants.SMEM_MAX
    g = random_graph(23, 80, seed=3, wmin=1, wmax=9)
    with pytest.raises(SolverError, match=r"launch=persistent: tile 128 needs \d+ bytes of static shared memory"):
        direct(g, tile=128, regblock=8, launch="persistent")
    direct(g, tile=128, regblock=8, launch="graph")  # the same tile with launches per phase
    direct(g, tile=64, regblock=4, launch="persistent")


def test_auto_variant_is_the_measured_one_where_it_fits():
    AUTO, REF = variants.AUTO_VARIANT, variants.DEFAULTS
    assert variants.resolve_variant(64, 4, "dpx", True) == AUTO[True]
    assert variants.resolve_variant(64, 4, "int32", False) == AUTO[False]
    assert variants.resolve_variant(64, 4, "dpx", False, launch="persistent")["p12"] == "global"
    assert variants.resolve_variant(64, 4, "dpx", True, unroll=2) == dict(AUTO[True], unroll=2)
    assert variants.resolve_variant(4, 2, "dpx", True) == REF  # unroll 8 does not fit a 4-pivot chunk
    assert variants.resolve_variant(64, 4, "gen32", True) == REF  # the general kernels keep the reference
    assert variants.resolve_variant(64, 4, "gen32", True, stage="double") == dict(REF, stage="double")
    g = random_graph(23, 80, seed=3, wmin=1, wmax=9)  # r = 2 at tile 16, the last tile ragged
    for paths in (True, False):
        res = run(g, tile=16, regblock=4, paths=paths)
        assert_apsp_ok(g, res)
        assert {k: res.counters[k] for k in REF} == AUTO[paths]


# --- phase 2 as a min-plus product with the closed pivot tile ------------------------------------------------
PRODUCT_DESIGN = pairwise(arith=["dpx", "int32", "float32"], paths=[True, False],
                          shape=[(1, 4, 1), (10, 4, 2), (13, 8, 2), (23, 4, 2)])


@pytest.mark.parametrize("arith", ["dpx", "int32", "float32"])
@pytest.mark.parametrize("paths", [True, False])
def test_phase2_product_matches_serial(arith, paths):
    """Row tiles read (and rewrite) their own predecessors: zero weights (hop tie-break), awkward n, one tile;
    pairwise over arith x paths x shape."""
    for n, T, R in (row["shape"] for row in PRODUCT_DESIGN if (row["arith"], row["paths"]) == (arith, paths)):
        g = random_graph(n, 3 * n, seed=n + 40, wmin=0, wmax=9)
        serial = run(g, tile=T, regblock=R, arith=arith, paths=paths, launch="host", phase2="serial")
        product = run(g, tile=T, regblock=R, arith=arith, paths=paths, launch="host", phase2="product")
        assert_apsp_ok(g, product)
        assert np.array_equal(product.dist, serial.dist)
        assert (serial.counters["phase2"], product.counters["phase2"]) == ("serial", "product")


def test_phase2_product_tuned_kernels_and_where_it_is_refused():
    g = random_graph(23, 80, seed=7, wmin=1, wmax=9)
    for paths in (True, False):  # phase 3's tuned layout (phase3x) at tile 16 does phase 2 too
        res = run(g, tile=16, regblock=4, paths=paths, phase2="product")
        assert_apsp_ok(g, res)
        assert res.counters["phase2"] == "product" and res.counters["unroll"] == 8  # the tuned layout
    assert SPEC.build(g, launch="persistent").phase2 == "serial"  # auto: the persistent kernel is serial
    neg = sssp_cases(negative=True)[-1][1]
    assert direct(neg, tile=4, regblock=2).phase2 == "serial"  # general kernels
    for bad in (dict(graph=neg, phase2="product"), dict(graph=g, launch="persistent", phase2="product")):
        with pytest.raises(SolverError, match="phase2=product"):
            direct(tile=4, regblock=2, **bad)
    with pytest.raises(SolverError, match="parameter phase2='tiles': allowed values"):
        SPEC.build(g, phase2="tiles")


# --- pivots=useful: sinks and sources are no pivots ---------------------------------------------------------
def _hub_graph(seed=4, outer=(0, 9), cycle=None):
    """(graph, core ids): 14 vertices, ids shuffled: 6 core vertices with random arcs among them (weights 0..9),
    4 sinks (arcs in only, one with a self-loop) and 4 sources (arcs out only; sink and source arcs weigh
    ``outer``), duplicate arcs; ``cycle`` adds a core cycle of that total weight."""
    rng = np.random.default_rng(seed)
    ids = rng.permutation(14)
    core, sinks, sources = ids[:6], ids[6:10], ids[10:]
    lo, hi = outer
    edges = [(int(a), int(b), int(rng.integers(0, 10))) for a, b in rng.choice(core, (16, 2))]
    edges += [(int(rng.choice(core)), int(t), int(rng.integers(lo, hi + 1))) for t in sinks for _ in range(2)]
    edges += [(int(s), int(rng.choice(core)), int(rng.integers(lo, hi + 1))) for s in sources]
    edges += [(int(sinks[0]), int(sinks[0]), 3), edges[0], (int(sources[0]), int(sinks[1]), 1)]
    if cycle is not None:
        edges += [(int(core[0]), int(core[1]), 1), (int(core[1]), int(core[2]), 1), (int(core[2]), int(core[0]), cycle - 2)]
    return gpusp.Graph.from_edges(14, *map(np.array, zip(*edges)), name=f"hubs-{seed}"), set(core.tolist())


PIVOT_DESIGN = pairwise(launch=["persistent", "host"], paths=[True, False], seed=[4, 5])


@pytest.mark.parametrize("launch,paths,seed", [(row["launch"], row["paths"], row["seed"]) for row in PIVOT_DESIGN])
def test_useful_pivots_exact_and_fewer_rounds(launch, paths, seed):
    """Pairwise over launch x paths x graph."""
    g, _ = _hub_graph(seed=seed)
    order, useful = variants.useful_first(g)
    assert useful <= 6 and sorted(order) == list(range(14))
    full = run(g, tile=4, regblock=2, launch=launch, paths=paths, pivots="all")
    assert_apsp_ok(g, full)
    for pivots in ("useful", "auto"):
        res = run(g, tile=4, regblock=2, launch=launch, paths=paths, pivots=pivots)
        assert_apsp_ok(g, res)
        assert np.array_equal(res.dist, full.dist)
        assert res.counters["iterations"] == -(-useful // 4) < full.counters["iterations"] == 4
        assert res.counters["relaxations"] == 16 ** 2 * 4 * res.counters["iterations"]


def test_useful_pivots_negative_weights_cycles_and_no_pivot_at_all():
    g, _ = _hub_graph(seed=6, outer=(-3, 9))  # negative arcs, no negative cycle (the general kernels)
    res = run(g, tile=4, regblock=2, pivots="useful")
    assert_apsp_ok(g, res)
    assert res.counters["arith"].startswith("gen") and res.counters["iterations"] < 4
    g, core = _hub_graph(seed=6, cycle=-1)
    with pytest.raises(NegativeCycleError) as err:
        run(g, tile=4, regblock=2, pivots="useful")
    assert err.value.vertex in core  # reported in the graph's ids, not the renumbered ones
    star = gpusp.Graph.from_edges(5, np.array([0, 0, 0, 0]), np.array([1, 2, 3, 4]), np.array([3, 0, 2, 2]))
    res = run(star, tile=4, regblock=2, pivots="auto")  # no vertex has arcs in and out: no round at all
    assert res.counters["iterations"] == 0 and res.counters["launches"] == 0
    assert_apsp_ok(star, res)
    with pytest.raises(SolverError, match="parameter pivots='some': allowed values"):
        SPEC.build(star, pivots="some")


# --- kernel variants (p12 / inner / unroll / stage) at tile 16 -------------------------------------------------
# r = 3 tiles a side (a tile neither in the pivot row nor column at every offset) comes with random-37 below, which the
# design gives every kernel; the other tile-16 tests run r = 2 (23 vertices)
VARIANTS = {"shared-vec4-u8-double": dict(p12="shared", inner="vec4", unroll=8, stage="double"),
            "vec2-u2": dict(p12="global", inner="vec2", unroll=2, stage="single"),
            "scalar-u4-double": dict(p12="global", inner="scalar", unroll=4, stage="double"),
            "shared-only": dict(p12="shared", inner="scalar", unroll=1, stage="single")}
# the awkward cases: n = 1, unreachable vertices, zero-weight cycles, duplicate arcs, self-loops, n not a multiple of
# the tile (13, 37), negative weights (the general kernels) and a negative cycle
CASES = dict([(label, g) for label, g, _ in sssp_cases()]
             + [(label, g) for label, g, _ in sssp_cases(negative=True)[-3:]]
             + [("negative-cycle", negative_cycle_graph())])
# every pair of kernel (the reference at tile 4, or a variant at tile 16), case and paths meets at least once
DESIGN = pairwise(kernel=["reference"] + list(VARIANTS), case=list(CASES), paths=[True, False])


@pytest.mark.parametrize("kernel", ["reference"] + list(VARIANTS))
def test_kernels_on_the_awkward_cases(kernel):
    """The kernel's rows of the pairwise design, dpx on packed keys or the general kernels for negative weights."""
    variant = VARIANTS.get(kernel, {})
    shape = dict(tile=16, regblock=4, launch="host") if variant else dict(tile=4, regblock=2)
    for row in (row for row in DESIGN if row["kernel"] == kernel):
        g = CASES[row["case"]]
        if row["case"] == "negative-cycle":
            with pytest.raises(NegativeCycleError):
                run(g, arith="dpx", paths=row["paths"], **shape, **variant)
            continue
        res = run(g, arith="dpx", paths=row["paths"], **shape, **variant)
        assert_apsp_ok(g, res)
        assert {k: res.counters[k] for k in variant} == variant
        negative = bool(g.m and g.weights.min() < 0)
        assert res.counters["arith"] == ("gen32" if negative else "dpx"), row
        assert res.counters["hop_tiebreak"] == bool(g.m and g.weights.min() <= 0), row


@pytest.mark.parametrize("arith", ["int32", "float32"])
def test_variants_other_ariths_and_persistent(arith):
    g = random_graph(23, 80, seed=7, wmin=1, wmax=9)
    assert_apsp_ok(g, run(g, tile=16, regblock=4, arith=arith, launch="host", **VARIANTS["shared-vec4-u8-double"]))
    assert_apsp_ok(g, run(g, tile=16, regblock=4, arith=arith, paths=False, launch="persistent",
                          **VARIANTS["scalar-u4-double"]))


@pytest.mark.parametrize("stage", ["single", "double"])
def test_variants_many_chunks(monkeypatch, stage):
    """A small shared-memory budget: 8-pivot (single) or 4-pivot (double) chunks at tile 16, so single staging
    reloads and double alternates its buffers."""
    monkeypatch.setattr(variants, "SMEM_BUDGET", 2 * 2 * 16 * 4 * 4)
    kernels.kernels.cache_clear()
    try:
        assert variants.chunk(16, 4, 2 if stage == "double" else 1) < 16
        g = random_graph(23, 80, seed=11, wmin=0, wmax=9)  # zero weights: the hop tie-break too
        for paths in (True, False):
            res = run(g, tile=16, regblock=4, paths=paths, inner="vec4", unroll=4, stage=stage, launch="host")
            assert_apsp_ok(g, res)
    finally:
        kernels.kernels.cache_clear()


def test_variants_rejected():
    g = random_graph(6, 12, seed=1)
    for kw in (dict(tile=16, regblock=2, inner="vec4"),  # 4-wide loads need 4 consecutive cells per thread
               dict(tile=128, regblock=4, p12="shared"),  # 2 x 128 x 129 x 4 bytes > 48 KiB
               dict(tile=16, regblock=4, p12="shared", launch="persistent"),
               dict(tile=16, regblock=4, unroll=3), dict(tile=16, regblock=4, stage="triple")):
        with pytest.raises(SolverError):
            SPEC.build(g, **kw)
    res = gpusp.solve(g, "blockedfw_fast", warmup=0, tile=16, regblock=4, inner="vec4", unroll=8, stage="double",
                      p12="shared")
    assert_apsp_ok(g, res)
    assert res.counters["inner"] == "vec4" and res.counters["unroll"] == 8


# --- the package's layout: rules without Numba, parameters only from the registry --------------------------------
def test_variants_import_without_numba_and_parameters_are_required():
    """The registry imports the rules module without Numba; the class takes every registry parameter by keyword and
    restates no default."""
    import subprocess
    import sys

    code = ("import sys; import gpusp.solvers.blockedfw.fast.variants, gpusp.solvers.registry; "
            "assert 'numba' not in sys.modules, 'numba imported'")
    subprocess.run([sys.executable, "-c", code], check=True)
    g = random_graph(6, 12, seed=1)
    with pytest.raises(TypeError):
        FastSolver(g)
    with pytest.raises(TypeError):
        FastSolver(g, 0, 0, **{k: v for k, v in SPEC.defaults().items() if k not in ("tile", "regblock")})
    assert variants.tile_shape(100, True, 0, 0) == variants.pick(100)
    assert variants.tile_shape(100, True, 32, 0) == (32, 2)  # a tile given: 16 x 16 threads
    shape = dict(tile=64, regblock=4)  # variants.MEMORY: the matrices and their pristine copies, n padded to T
    assert variants.MEMORY(60, 0, dict(shape, paths=True), 4) == 2 * 64 * 64 * 8
    assert variants.MEMORY(60, 0, dict(shape, paths=False), 4) == 2 * 64 * 64 * 4
    assert registry.get("blockedfw_fast").memory is variants.MEMORY
