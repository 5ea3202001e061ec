"""Synthetic generators (gpusp.data.generate) and weight tools (gpusp.data.weights): determinism, exact sizes,
weight ranges, topology rules, symmetrisation and the add/replace contract."""

from __future__ import annotations

import numpy as np
import pytest

from gpusp.data.generate import GENERATORS, MAX_EDGES, GeneratorError, check_params, generate
from gpusp.data.graph import Graph
from gpusp.data.weights import WeightsError, add_weights, check_range, random_weights, replace_weights, symmetrize

SMALL = {
    "complete": {"n": 12},
    "random": {"n": 200, "k": 4},
    "rmat": {"scale": 8},
    "powerlaw": {"n": 300, "m": 2400},
    "ring": {"n": 50},
    "grid": {"rows": 7, "cols": 9},
    "kron": {"scale": 8},
    "urand": {"scale": 8},
    "delaunay": {"scale": 7},
}
DRAWN_AT_MOST = ("kron", "urand", "delaunay")  # check_params' m bounds what the squish or the triangulation keeps


def arrays(g: Graph):
    return g.indptr, g.indices, g.weights


def same(g1: Graph, g2: Graph) -> bool:
    return g1.n == g2.n and all(np.array_equal(x, y) and x.dtype == y.dtype for x, y in zip(arrays(g1), arrays(g2)))


def edge_set(g: Graph):
    src, dst, _ = g.coo()
    return set(zip(src.tolist(), dst.tolist()))


def triples(g: Graph):
    src, dst, w = g.coo()
    return sorted(zip(src.tolist(), dst.tolist(), w.tolist()))


# determinism ------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", sorted(GENERATORS))
def test_same_seed_same_arrays_different_seed_differs(kind):
    params = SMALL[kind]
    a = generate(kind, **params, seed=1)
    b = generate(kind, **params, seed=1)
    c = generate(kind, **params, seed=2)
    assert same(a, b) and a.checksum() == b.checksum()
    assert a.name == b.name and a.meta == b.meta
    assert not same(a, c)
    assert a.name != c.name


@pytest.mark.parametrize("kind", sorted(GENERATORS))
def test_meta_name_and_kind(kind):
    params = SMALL[kind]
    g = generate(kind, **params, seed=5)
    assert g.weight_kind == "generated"
    assert g.meta["generator"] == kind
    if kind == "delaunay":
        assert g.meta["weights"] == {"rule": "max(1, round(length * 2**24))"}
    else:
        low, high = (1, 255) if kind in ("kron", "urand") else (1, 100)
        assert g.meta["weights"] == {"min": low, "max": high, "seed": 5}
    for key, value in params.items():
        assert g.meta["params"][key] == value
    assert g.meta["params"]["seed"] == 5
    assert g.name.endswith("-seed5")
    assert g.m <= MAX_EDGES


@pytest.mark.parametrize("kind", ["random", "rmat", "powerlaw", "kron", "urand"])
def test_weight_range_does_not_change_topology(kind):
    a = generate(kind, **SMALL[kind], seed=3)
    b = generate(kind, **SMALL[kind], seed=3, wmin=5, wmax=9)
    assert np.array_equal(a.indptr, b.indptr) and np.array_equal(a.indices, b.indices)
    assert int(b.weights.min()) >= 5 and int(b.weights.max()) <= 9
    assert b.name != a.name and "w5_9" in b.name


def test_names():
    assert GENERATORS["rmat"](10, edge_factor=16, seed=1).name == "rmat-s10-ef16-seed1"
    assert generate("grid", rows=3, cols=4).name == "grid-3x4-seed0"
    assert generate("ring", n=8, wmin=-2, wmax=3, seed=4).name == "ring-n8-w-2_3-seed4"
    assert generate("random", n=10, k=2, wmax=50).name == "random-n10-k2-w1_50-seed0"
    # the function's name works as a kind too, and gives the same graph
    assert same(generate("random_sparse", n=10, k=2, seed=3), generate("random", n=10, k=2, seed=3))


def test_fixed_topologies_use_replace_weights_stream():
    g = generate("grid", rows=5, cols=6, seed=9, wmin=0, wmax=7)
    unit = Graph.from_edges(g.n, *g.coo()[:2])
    assert same(g, replace_weights(unit, 0, 7, 9))


# exact sizes and topology -----------------------------------------------------------------------
def test_complete():
    n = 13
    g = generate("complete", n=n, seed=2)
    assert g.m == n * (n - 1)
    src, dst, _ = g.coo()
    assert not np.any(src == dst)
    assert edge_set(g) == {(i, j) for i in range(n) for j in range(n) if i != j}
    # row-major: within each row the targets ascend
    expected = [j for i in range(n) for j in range(n) if j != i]
    assert g.indices.tolist() == expected
    one = generate("complete", n=1)
    assert one.n == 1 and one.m == 0


def test_random_sparse_exact_distinct_no_loops():
    n, k = 500, 6
    g = generate("random", n=n, k=k, wmax=1000, seed=4)
    assert g.m == k * n
    src, dst, _ = g.coo()
    assert not np.any(src == dst)
    assert len(edge_set(g)) == k * n
    st = g.stats()
    assert st["duplicate_edges"] == 0 and st["self_loops"] == 0
    # densest possible: k = n - 1 is the complete graph
    full = generate("random", n=9, k=8, seed=1)
    assert edge_set(full) == {(i, j) for i in range(9) for j in range(9) if i != j}
    half = generate("random", n=40, k=20, seed=1)
    assert len(edge_set(half)) == 800 and half.stats()["self_loops"] == 0


def test_ring():
    g = generate("ring", n=10, seed=1)
    assert g.m == 10
    assert np.array_equal(g.out_degree(), np.ones(10))
    assert g.indices.tolist() == [(i + 1) % 10 for i in range(10)]
    one = generate("ring", n=1)
    assert one.m == 1 and one.indices.tolist() == [0]  # n = 1: the self-loop 0 -> 0


@pytest.mark.parametrize("rows,cols", [(1, 1), (1, 5), (4, 1), (6, 7)])
def test_grid(rows, cols):
    g = generate("grid", rows=rows, cols=cols, seed=3)
    assert g.n == rows * cols
    assert g.m == 2 * (2 * rows * cols - rows - cols)
    expected = set()
    for r in range(rows):
        for c in range(cols):
            u = r * cols + c
            for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
                if 0 <= rr < rows and 0 <= cc < cols:
                    expected.add((u, rr * cols + cc))
    assert edge_set(g) == expected
    for u in range(g.n):  # targets listed ascending (up, left, right, down)
        row = g.indices[g.indptr[u]:g.indptr[u + 1]]
        assert np.all(np.diff(row) > 0)
    one_way = generate("grid", rows=rows, cols=cols, directed_both_ways=False)
    assert one_way.m == 2 * rows * cols - rows - cols
    src, dst, _ = one_way.coo()
    assert np.all(dst > src)  # right and down only: a DAG


def test_rmat_sizes_and_skew():
    g = generate("rmat", scale=12, edge_factor=16, seed=1)
    assert g.n == 4096 and g.m == 16 * 4096
    deg = g.out_degree()
    assert deg.max() > 20 * deg.mean()  # power law: a few hubs
    assert (deg == 0).sum() > 0.1 * g.n  # and many empty rows
    # Graph500 relabelling: without it vertex 0 would always be the biggest hub
    assert {int(generate("rmat", scale=8, seed=s).out_degree().argmax()) for s in range(4)} != {0}
    simple = generate("rmat", scale=10, seed=1, simple=True)
    st = simple.stats()
    assert st["self_loops"] == 0 and st["duplicate_edges"] == 0 and simple.m < 16 * 1024
    assert simple.name == "rmat-s10-ef16-simple-seed1"


def test_powerlaw_any_n():
    g = generate("powerlaw", n=1000, m=16000, seed=3)
    assert g.n == 1000 and g.m == 16000
    assert g.out_degree().max() > 10 * g.out_degree().mean()
    # n a power of two: the same edges and weights as rmat
    assert same(generate("powerlaw", n=1024, m=8 * 1024, seed=2), generate("rmat", scale=10, edge_factor=8, seed=2))


# weights ----------------------------------------------------------------------------------------
def test_random_weights_inclusive_and_deterministic():
    w = random_weights(20000, 1, 100, seed=7)
    assert w.dtype == np.int64 and w.shape == (20000,)
    assert int(w.min()) == 1 and int(w.max()) == 100
    assert np.array_equal(w, random_weights(20000, 1, 100, seed=7))
    assert not np.array_equal(w, random_weights(20000, 1, 100, seed=8))
    neg = random_weights(5000, -3, 2, seed=1)
    assert set(np.unique(neg).tolist()) == {-3, -2, -1, 0, 1, 2}
    assert np.all(random_weights(10, 4, 4, seed=0) == 4)
    assert random_weights(0, 1, 2, seed=0).size == 0


@pytest.mark.parametrize("kind", ["complete", "random", "grid"])
def test_generator_weights_inclusive(kind):
    params = {"complete": {"n": 40}, "random": {"n": 300, "k": 5}, "grid": {"rows": 30, "cols": 30}}[kind]
    g = generate(kind, **params, wmin=-2, wmax=6, seed=1)
    assert int(g.weights.min()) == -2 and int(g.weights.max()) == 6
    g = generate(kind, **params, seed=1)
    assert int(g.weights.min()) == 1 and int(g.weights.max()) == 100


@pytest.mark.parametrize("bad", [dict(wmin=5, wmax=4), dict(wmin=1.5, wmax=4), dict(wmin=1, wmax=4, seed=-1),
                                 dict(wmin="1", wmax=4)])
def test_random_weights_bad(bad):
    with pytest.raises(ValueError):
        random_weights(10, **{"seed": 0, **bad})


def unweighted():
    src = np.array([0, 0, 1, 2, 3, 3, 3])
    dst = np.array([1, 2, 2, 0, 0, 1, 3])
    return Graph.from_edges(4, src, dst, name="toy", meta={"source": "test"})


def test_add_weights():
    g = unweighted()
    assert g.weight_kind == "unit"
    w = add_weights(g, 10, 20, seed=3)
    assert w.weight_kind == "generated"
    assert np.array_equal(w.indptr, g.indptr) and np.array_equal(w.indices, g.indices)
    assert np.array_equal(w.weights, random_weights(g.m, 10, 20, 3))  # CSR order
    assert w.meta == {"source": "test", "weights": {"min": 10, "max": 20, "seed": 3}}
    assert g.meta == {"source": "test"} and g.weight_kind == "unit"  # input untouched
    assert w.name == "toy"
    with pytest.raises(ValueError, match="replace_weights"):
        add_weights(w, 1, 5, seed=0)
    real = Graph.from_edges(2, [0], [1], [7], weight_kind="real")
    with pytest.raises(WeightsError, match="real"):
        add_weights(real, 1, 5, seed=0)


def test_replace_weights_only_changes_weights():
    g = generate("random", n=100, k=3, seed=1)
    r = replace_weights(g, 500, 600, seed=9)
    assert np.array_equal(r.indptr, g.indptr) and np.array_equal(r.indices, g.indices)
    assert int(r.weights.min()) >= 500 and int(r.weights.max()) <= 600
    assert r.weight_kind == "generated" and r.name == g.name
    assert r.meta["weights"] == {"min": 500, "max": 600, "seed": 9}
    assert r.meta["generator"] == "random"
    assert g.meta["weights"] == {"min": 1, "max": 100, "seed": 1}
    assert same(r, replace_weights(g, 500, 600, seed=9))
    real = Graph.from_edges(3, [0, 1], [1, 2], [4, 5], weight_kind="real")
    assert replace_weights(real, 1, 1, seed=0).weights.tolist() == [1, 1]


# symmetrize -------------------------------------------------------------------------------------
def test_symmetrize_rules():
    # 0->1 (w3) has no reverse; 1->2 (w5) has its reverse with the same weight; 2->3 (w1) has a reverse
    # with another weight; 3->3 is a self-loop; 0->4 (w2) appears twice (parallel edges kept)
    edges = [(0, 1, 3), (1, 2, 5), (2, 1, 5), (2, 3, 1), (3, 2, 9), (3, 3, 4), (0, 4, 2), (0, 4, 2)]
    src, dst, w = (np.array(c) for c in zip(*edges))
    g = Graph.from_edges(5, src, dst, w, name="sym", weight_kind="real", meta={"k": 1})
    s = symmetrize(g)
    expected = sorted(edges + [(1, 0, 3), (3, 2, 1), (2, 3, 9), (4, 0, 2), (4, 0, 2)])
    assert triples(s) == expected
    assert s.name == "sym" and s.weight_kind == "real"
    assert s.meta == {"k": 1, "symmetrized": True} and g.meta == {"k": 1}
    # each vertex keeps its original edges first, in their order
    for u in range(g.n):
        orig = g.indices[g.indptr[u]:g.indptr[u + 1]].tolist()
        assert s.indices[s.indptr[u]:s.indptr[u] + len(orig)].tolist() == orig
    # idempotent, and a symmetric graph is unchanged
    assert triples(symmetrize(s)) == triples(s)


def test_symmetrize_random_is_symmetric():
    g = generate("random", n=60, k=5, wmax=3, seed=2)
    s = symmetrize(g)
    from collections import Counter

    cnt = Counter(triples(s))
    orig = Counter(triples(g))
    for (u, v, w), c in cnt.items():
        assert cnt[(v, u, w)] == c
        assert c == max(orig[(u, v, w)], orig[(v, u, w)])
    assert s.m >= g.m
    unit = symmetrize(generate("ring", n=5).with_weights(np.ones(5, dtype=np.int64), "unit"))
    assert unit.m == 10 and unit.weight_kind == "unit"
    empty = symmetrize(Graph.from_edges(3, [], [], None))
    assert empty.m == 0 and empty.n == 3


# errors -----------------------------------------------------------------------------------------
BAD_PARAMETERS = [
    ("nope", {}, "unknown generator"),
    ("ring", {"n": 0}, "n must be >= 1"),
    ("ring", {"n": 3, "colour": 1}, "unknown parameter"),
    ("random", {"n": 10}, "missing"),
    ("random", {"n": 10, "k": 0}, "k must be >= 1"),
    ("random", {"n": 10, "k": 10}, "k must be <= n - 1"),
    ("random", {"n": 1, "k": 1}, "do not fit"),
    ("complete", {"n": 5, "wmin": 9, "wmax": 3}, "wmin"),
    ("complete", {"n": 100_000}, "limit"),
    ("grid", {"rows": 0, "cols": 3}, "rows"),
    ("grid", {"rows": 2, "cols": 3, "directed_both_ways": "yes"}, "True or False"),
    ("rmat", {"scale": 4, "a": 0.6, "b": 0.3, "c": 0.3}, "a \\+ b \\+ c <= 1"),
    ("rmat", {"scale": 4, "a": -0.1}, ">= 0"),
    ("rmat", {"scale": 40}, "scale"),
    ("rmat", {"scale": 4, "seed": -1}, "seed"),
    ("powerlaw", {"n": 10, "m": -1}, "m must be >= 0"),
    ("ring", {"n": 2.5}, "integer"),
]


@pytest.mark.parametrize("kind,params,match", BAD_PARAMETERS)
def test_bad_parameters(kind, params, match):
    with pytest.raises(GeneratorError, match=match):
        generate(kind, **params)
    assert issubclass(GeneratorError, ValueError)


# check_params: the generator's parameter check alone, as the config planner takes it ------------------------
@pytest.mark.parametrize("kind,params,match", BAD_PARAMETERS)
def test_check_params_refuses_what_generate_refuses(kind, params, match):
    with pytest.raises(GeneratorError, match=match) as by_generate:
        generate(kind, **params)
    with pytest.raises(GeneratorError) as by_check:
        check_params(kind, params)
    assert str(by_check.value) == str(by_generate.value)


@pytest.mark.parametrize("kind", sorted(GENERATORS))
def test_check_params_gives_the_size_generate_builds(kind):
    checked_kind, params, n, m = check_params(kind, {**SMALL[kind], "seed": 3})
    g = generate(kind, **SMALL[kind], seed=3)
    assert checked_kind == kind and n == g.n
    assert (m // 3 < g.m <= m) if kind in DRAWN_AT_MOST else m == g.m  # kron squishes half of its arcs at scale 8
    assert params == g.meta["params"]  # every parameter, the defaults filled in, as the graph records them


def test_check_params_builds_nothing():
    """A graph of 2**30 vertices is checked, not drawn; one past the edge limit is refused the same way."""
    assert check_params("rmat", {"scale": 30, "edge_factor": 1})[2:] == (2**30, 2**30)
    with pytest.raises(GeneratorError, match="limit"):
        check_params("rmat", {"scale": 30, "edge_factor": 2})
    assert check_params("random_sparse", {"n": 5, "k": 2})[0] == "random"  # the alias names its kind
    _, params, _, _ = check_params("grid", {"rows": 2, "cols": 3, "directed_both_ways": np.bool_(False)})
    assert params["directed_both_ways"] is False and params["wmin"] == 1 and params["seed"] == 0


def test_weight_range_errors_name_what_the_caller_calls_them():
    with pytest.raises(WeightsError, match=r"^--min \(10\) must be <= --max \(1\)$"):
        check_range(10, 1, 0, names=("--min", "--max", "--seed"))
    with pytest.raises(WeightsError, match=r"^weights/seed must be >= 0, got -1$"):
        check_range(1, 2, -1, names=("weights/min", "weights/max", "weights/seed"))
    assert check_range(np.int64(-3), 3.0, 0) == (-3, 3, 0)


def test_the_config_schema_admits_every_generator_and_plans_paper_001s_power_law_size(tmp_path):
    """Every kind of GENERATORS is a config's `generate` (paper 001's power-law graph has |V| = 4677, not a power
    of two: kind powerlaw), and planning sizes it as the generator builds it."""
    from pathlib import Path

    import yaml

    from gpusp.plan import expand_jobs, graph_size, load_config

    schema = yaml.safe_load((Path(__file__).parents[2] / "workflow" / "schemas" / "config.schema.yaml").read_text())
    kinds = schema["properties"]["graphs"]["additionalProperties"]["properties"]["generate"]["enum"]
    assert set(kinds) == set(GENERATORS)
    spec = {"generate": "powerlaw", "params": {"n": 4677, "m": 16384, "wmax": 4096}, "seed": 1}
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"graphs": {"powerlaw-4677": spec}, "solvers": [{"name": "scipy_dijkstra"}]}))
    config = load_config(path)
    assert expand_jobs(config)[0][0].n == 4677
    g = generate("powerlaw", seed=1, n=4677, m=16384, wmax=4096)
    assert (g.n, g.m) == (4677, 16384) and graph_size("powerlaw-4677", config["graphs"]["powerlaw-4677"])[:2] == (
        4677, 16384)
    degree = g.out_degree()
    assert degree.max() > 50 * degree.mean()  # heavy-tailed, as the paper's (max 834, average 3.5)
