"""Blocked Floyd-Warshall (paper 002, versions 1.0 .. 4.1) in the CUDA simulator.

B = 4 keeps every phase cheap (16 simulated threads a block). The graph versions 4.0 / 4.1 cannot
capture CUDA graphs here: they run their DAG one piece at a time in an adversarial order, and the
split / join wiring is checked with stand-in builders. Without paths the kernels get a 1 x 1 placeholder
for the predecessor matrix, so in the simulator any access past its one cell raises: the runs without paths
also check that no kernel touches it. On a GPU (NUMBA_ENABLE_CUDASIM=0) the same tests run the native launches
and the CUDA graphs.
"""

import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest
from cases import assert_apsp_ok, negative_cycle_graph, pairwise, random_graph, sssp_cases

import gpusp
from gpusp.errors import NegativeCycleError
from gpusp.solvers import registry
from gpusp.solvers.common.base import counters_of
from gpusp.solvers.blockedfw import layout
from gpusp.solvers.blockedfw import versions
from gpusp.solvers.common.launch import TARGET

VERSIONS = ["v10", "v11", "v12", "v20", "v21", "v30", "v40", "v41"]
LAUNCHED = VERSIONS[:6]  # the versions with a host loop of launches (parameter ``launcher``)
# the awkward cases at B = 4: n = 1, n not a multiple of B (10, with zero weights) and a multiple (12), the small
# cases of cases.py (unreachable vertices, zero weights and zero-weight cycles, duplicate arcs, self-loops), negative
# weights, and a negative cycle (NegativeCycleError)
CASES = dict([(f"random-{n}", random_graph(n, 3 * n, seed=n, wmin=0 if n == 10 else 1)) for n in (1, 10, 12)]
             + [(label, g) for label, g, _ in sssp_cases() if g.n <= 13]
             + [(label, g) for label, g, _ in sssp_cases(negative=True)[-3:]]
             + [("negative-cycle", negative_cycle_graph())])
# every pair of version, case, paths and launch mode meets at least once; mode 0 / 1 is launcher 'native' / 'numba'
# for v10 ... v30 and capture 'once' / 'per-run' for v40 / v41
DESIGN = pairwise(version=VERSIONS, case=list(CASES), paths=[True, False], mode=[0, 1])


def solve(graph, version, B=4, **params):
    return gpusp.solve(graph, f"blockedfw_{version}", warmup=0, block_size=B, **params)


def build(graph, version, /, B=4, **params):
    """The solver itself, uploaded (``gpusp.solve`` cannot pass the parameter named ``graph``)."""
    spec = registry.get(f"blockedfw_{version}")
    solver = spec.load()(graph, **spec.resolve({"block_size": B, **params}))
    solver.upload()
    return solver


def answer(solver, counters=None):
    dist, parent = solver.download()
    return SimpleNamespace(dist=dist, parent=parent, counters=counters)


def run_class(cls, graph, B):
    """Run a solver class directly (for forced layouts); returns what assert_apsp_ok reads."""
    s = cls(graph, **{**registry.get("blockedfw_v21").defaults(), "block_size": B})
    s.upload()
    counters = s.run(None)
    dist, parent = s.download()
    return SimpleNamespace(dist=dist, parent=parent, counters=counters)


def mode_params(version, mode):
    if version in LAUNCHED:
        return {"launcher": ("native", "numba")[mode]}
    return {"capture": ("once", "per-run")[mode]}


@pytest.mark.parametrize("version", VERSIONS)
def test_every_version_on_the_awkward_cases(version):
    """The version's rows of the pairwise design: exact distances and valid trees, r rounds of n_pad^3 relaxations,
    the hop tie-break exactly where a weight is <= 0, a negative cycle reported."""
    for row in (row for row in DESIGN if row["version"] == version):
        g, params = CASES[row["case"]], dict(paths=row["paths"], **mode_params(version, row["mode"]))
        if row["case"] == "negative-cycle":
            with pytest.raises(NegativeCycleError):
                solve(g, version, **params)
            continue
        res = solve(g, version, **params)
        assert_apsp_ok(g, res)
        r = -(-g.n // 4)
        assert res.counters["iterations"] == r and res.counters["relaxations"] == (4 * r) ** 3, row
        assert res.counters["paths"] is row["paths"]
        assert res.counters["hop_tiebreak"] == bool(g.m and g.weights.min() <= 0), row


@pytest.mark.parametrize("version", LAUNCHED)
def test_numba_launcher_same_launches(version):
    """launcher='numba' (Numba's dispatcher per launch) issues the native default's launches, with its answers."""
    g = CASES["random-10"]
    res, native = solve(g, version, launcher="numba"), solve(g, version)
    assert_apsp_ok(g, res)
    np.testing.assert_array_equal(res.dist, native.dist)
    assert res.counters["launches"] == native.counters["launches"]


@pytest.mark.parametrize("version", ["v10", "v30", "v40"])
def test_without_paths_no_predecessor_matrix(version):
    """paths=False allocates, copies and resets no predecessor matrix; the runs repeat from a clean matrix."""
    g = random_graph(10, 30, seed=3, wmin=0, wmax=6)
    s = build(g, version, paths=False)
    assert s.p.shape == (1, 1) and s.p0 is None and s.d.shape == s.d0.shape == (12, 12)
    for _ in range(2):
        counters = counters_of(s.run(None))
    res = answer(s, counters)
    assert_apsp_ok(g, res)
    with_paths = solve(g, version)
    np.testing.assert_array_equal(res.dist, with_paths.dist)


@pytest.mark.parametrize("version", ["v12", "v21"])
def test_b8_n10(version):
    g = random_graph(10, 30, seed=4, wmin=0, wmax=5)
    res = solve(g, version, B=8)
    assert_apsp_ok(g, res)
    assert res.counters["iterations"] == 2


def test_forced_conflict_layout_b4():
    """Transposed and padded shared layouts (v21 picks them only from B = 8) checked cheaply at B = 4."""
    forced = {"transpose": True, "pad": True}
    v21 = type("V21Forced", (versions.V21Solver,), {"layout": forced})
    v30 = type("V30Forced", (versions.V30Solver,), {"layout": forced})
    for g in (random_graph(10, 30, seed=5, wmin=0), sssp_cases()[4][1]):
        assert_apsp_ok(g, run_class(v21, g, 4))
        assert_apsp_ok(g, run_class(v30, g, 4))


@pytest.mark.slow
def test_v20_b16_n17():
    g = random_graph(17, 60, seed=6)
    assert_apsp_ok(g, solve(g, "v20", B=16))


def test_conflict_rule():
    # lcm(B, 32) <= (B - 1) B: B = 4 -> 32 > 12 no conflict; 8, 16, 24 (lcm 96), 32 conflict
    assert [layout.column_conflict(B) for B in (4, 8, 16, 24, 32)] == [False, True, True, True, True]
    assert not layout.column_conflict(31)  # the paper's footnote: B = 31 has none ...
    assert layout.column_conflict(31, stride=32)  # ... and padding it to 32 would create one
    assert not any(layout.column_conflict(B, stride=B + 1) for B in (8, 16, 24, 32))
    assert layout.conflict_plan(4) == {"conflict": False, "transpose": False, "pad": False}
    for B in (8, 16, 24, 32):
        assert layout.conflict_plan(B) == {"conflict": True, "transpose": True, "pad": True}
    assert layout.column_conflict(8, banks=16) and not layout.column_conflict(4, banks=64)


def test_launch_counts():
    g = random_graph(12, 36, seed=12)  # r = 3 at B = 4
    launches = {v: solve(g, v).counters["launches"] for v in ("v10", "v11", "v12", "v20", "v30")}
    assert launches["v10"] == 3 ** 3 + 1  # r^2 single-block launches a round, + the check
    assert launches["v11"] == launches["v12"] == launches["v20"] == 3 * 3 + 1
    assert launches["v10"] > launches["v11"]
    # v30: p1 + 2 (t = 0) / 4 (t = 1) / 2 (t = 2) phase-2 pieces + 1 / 4 / 1 quadrants, + the check
    assert launches["v30"] == 3 + (2 + 4 + 2) + (1 + 4 + 1) + 1


def test_layout_sizes_and_memory_without_numba():
    """The registry builds block_size's choices and the memory bound from layout, which must not import Numba."""
    code = ("import sys; from gpusp.solvers.blockedfw import layout; "
            "assert 'numba' not in sys.modules, 'layout imported numba'; print(layout.BLOCK_SIZES)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert registry.get("blockedfw_v21").params[0].choices == layout.BLOCK_SIZES
    assert [layout.padded(n, 8) for n in (0, 1, 8, 9)] == [0, 8, 8, 16]
    spec = registry.get("blockedfw_v40")
    memory = spec.memory  # spec.VERSION_MEMORY: the matrices and their pristine copies, n padded to B
    assert memory(10, 30, spec.resolve({"block_size": 4}), 8) == 2 * (8 + 4) * 12 ** 2  # d, p and their copies
    assert memory(10, 30, spec.resolve({"block_size": 4, "paths": False}), 4) == 2 * 4 * 12 ** 2  # d and its copy


def _paths(dag):
    reach = []
    for v, (_, _, _, deps) in enumerate(dag):
        bits = 0
        for u in deps:
            bits |= (1 << u) | reach[u]
        reach.append(bits)
    return reach


@pytest.mark.parametrize("relaxed", [False, True])
def test_dependency_dags_order_every_conflict(relaxed):
    """Every pair of pieces touching a common block (one writing it) is ordered as in program order."""
    for r in range(1, 7):
        dag = layout.dependency_dag(r, relaxed=relaxed)
        assert dag[0][1] == "start" and dag[-1][1] == "end" and len(dag) - 2 == len(
            [1 for t in range(r) for k in layout.PIECES if all(a < b for a, b in layout.piece_ranges(k, t, r))])
        reach = _paths(dag)
        acc = [layout.piece_access(k, t, r) if k not in ("start", "end") else None for _, k, t, _ in dag]
        for v in range(1, len(dag)):
            assert (reach[v] & 1) and (reach[-1] >> v if v < len(dag) - 1 else 1)  # start -> v -> end
            for u in range(1, v):
                if acc[u] is None or acc[v] is None:
                    continue
                (ru, wu), (rv, wv) = acc[u], acc[v]
                if wu & (rv | wv) or ru & wv:
                    assert (reach[v] >> u) & 1, f"r={r}: {dag[u][0]} -> {dag[v][0]} missing"
    dag = {name: [layout.dependency_dag(4, relaxed)[u][0] for u in deps]
           for name, _, _, deps in layout.dependency_dag(4, relaxed)}
    if relaxed:  # paper 4.1
        assert dag["p12"] == ["dr1"] and sorted(dag["up2"]) == ["p12", "ur1"]
        assert sorted(dag["ul2"]) == ["left2", "ul1", "up2"]
    else:  # round barrier: phase 1 after the previous round's quadrants
        assert sorted(dag["p12"]) == ["dl1", "dr1", "ul1", "ur1"]


def test_adversarial_order_reorders_rounds():
    dag = layout.dependency_dag(4, relaxed=True)
    order = layout.adversarial_order(dag)
    assert sorted(order) == list(range(len(dag))) and order != sorted(order)
    pos = {v: i for i, v in enumerate(order)}
    assert all(pos[u] < pos[v] for v, node in enumerate(dag) for u in node[3])
    names = [dag[v][0] for v in order]
    assert names.index("p13") < names.index("ul1")  # round 3 starts before round 1 is done


class _FakeBuilder:
    """Stand-in for cuda.core's GraphBuilder: tracks which nodes are ordered before its next launch."""

    def __init__(self, primary=False, seen=()):
        self.primary, self.seen, self.closed = primary, set(seen), False

    def split(self, count):
        return (self,) + tuple(_FakeBuilder(seen=self.seen) for _ in range(count - 1))

    @staticmethod
    def join(*builders):
        root = next((b for b in builders if b.primary), builders[0])
        for b in builders:
            assert not b.closed
            if b is not root:
                root.seen |= b.seen
                b.closed = True
        return root


@pytest.mark.parametrize("relaxed", [False, True])
def test_graph_wiring_keeps_every_dependency(relaxed):
    for r in (1, 2, 5):
        dag = layout.dependency_dag(r, relaxed=relaxed)
        reach = _paths(dag)
        root = _FakeBuilder(primary=True)

        def launch(v, b):
            assert not b.closed
            need = {u for u in range(v) if (reach[v] >> u) & 1}
            assert need <= b.seen  # every dependency is ordered before the node
            b.seen.add(v)

        assert layout.wire_dag(dag, root, _FakeBuilder.join, launch) is root
        assert root.seen == set(range(len(dag)))


@pytest.mark.parametrize("launcher", ["native", "numba"])
@pytest.mark.parametrize("mode", ["once", "per-run"])
@pytest.mark.parametrize("version", ["v40", "v41"])
def test_graph_modes(version, mode, launcher):
    """The first run launches the pieces plainly (compiling), then as every run builds and launches the graph:
    'once' keeps it and replays it later, 'per-run' builds, launches and releases one every run, node by node
    through the driver ('native') or recorded from Numba's launches ('numba'). The simulator launches the pieces one
    by one in every mode."""
    g = random_graph(13, 40, seed=2, wmin=0, wmax=9)
    s = build(g, version, capture=mode, paths=mode == "once", launcher=launcher)
    runs = [counters_of(s.run(None)) for _ in range(3)]
    assert_apsp_ok(g, answer(s))
    graph = [c["graph"] for c in runs]
    captured = [c["captured"] for c in runs]
    if TARGET.gpu:
        assert graph == [True, True, True]
        assert captured == ([1, 0, 0] if mode == "once" else [1, 1, 1])
    else:
        assert graph == [False] * 3 and captured == [0] * 3
    s = build(negative_cycle_graph(), version, capture=mode, launcher=launcher)
    for _ in range(2):  # the first run stops at the plain launches' check, the second at the graph's (on a GPU)
        with pytest.raises(NegativeCycleError):
            s.run(None)


class _FakeNodes:
    """NativeGraph's calls, recorded: each node is (what, the DAG piece or array it stands for, the nodes it waits
    for)."""

    def __init__(self):
        self.nodes, self.closed, self.instantiated = [], False, False

    def _add(self, what, deps):
        self.nodes.append((what, list(deps)))
        return len(self.nodes) - 1

    def kernel(self, launch, args, deps=()):
        return self._add(("kernel", launch.kernel.__name__, args[2:]), deps)

    def copy(self, dst, src, deps=()):
        return self._add(("copy", id(dst), id(src)), deps)

    def instantiate(self):
        self.instantiated = True
        return self

    def close(self):
        self.closed = True


@pytest.mark.parametrize("paths", [True, False])
@pytest.mark.parametrize("version", ["v40", "v41"])
def test_native_graph_nodes_wait_for_exactly_their_dependencies(version, paths, monkeypatch):
    """launcher='native' builds one node per DAG piece (the reset's copies, the check's kernel) whose dependencies are
    exactly the graph nodes of the piece's DAG dependencies, then releases the graph once instantiated."""
    made = []
    monkeypatch.setattr(versions, "NativeGraph", lambda: made.append(_FakeNodes()) or made[-1])
    s = build(random_graph(13, 40, seed=2), version, paths=paths)
    s.plan = s.stream_plan()
    assert s.build_nodes() is made[0] and made[0].instantiated and made[0].closed
    nodes, dag = made[0].nodes, s.dag
    copies = 2 if paths else 1
    assert [n[0][0] for n in nodes] == ["copy"] * copies + ["kernel"] * (len(dag) - 1)
    assert {n[0][1:] for n in nodes[:copies]} == {(id(s.d), id(s.d0))} | ({(id(s.p), id(s.p0))} if paths else set())
    of = [list(range(copies))] + [[copies + v - 1] for v in range(1, len(dag))]  # DAG node -> its graph nodes
    for v, (_, kind, t, deps) in enumerate(dag):
        for node in of[v]:
            assert sorted(nodes[node][1]) == sorted(g for u in deps for g in of[u]), (v, kind, t)
    assert nodes[-1][0][1] == "negative_diagonal" and s.kernel_nodes == len(dag) - 2


@pytest.mark.parametrize("capture", ["once", "per-run"])
@pytest.mark.parametrize("version", ["v40", "v41"])
def test_graph_versions_replay_on_a_gpu_and_fall_back_in_simulator(version, capture):
    """After the warm-up a GPU replays the captured graph; the simulator launches the pieces one by one. Both capture
    modes go through the harness like any parameter (its name must not shadow the harness's own arguments)."""
    g = random_graph(13, 40, seed=1, wmin=0, wmax=9)
    res = gpusp.solve(g, f"blockedfw_{version}", warmup=1, trials=1, block_size=4, capture=capture)
    assert res.params["capture"] == capture
    assert_apsp_ok(g, res)
    assert res.counters["graph"] is TARGET.gpu and res.counters["hop_tiebreak"]


def test_hop_tiebreak_only_for_nonpositive_weights():
    spec = registry.get("blockedfw_v12")
    pos = spec.build(random_graph(10, 30, seed=1), block_size=4)
    zero = spec.build(random_graph(10, 30, seed=1, wmin=0), block_size=4)
    assert pos.scale == 0 and pos.dtype == np.int32
    assert zero.scale == 11 and zero.dtype == np.int32
    big = spec.build(random_graph(10, 30, seed=1, wmin=-2**24, wmax=2**24), block_size=4)
    assert big.dtype == np.int64 and big.graph.dtype == np.int32  # w' = w (n + 1) + 1 needs int64


def test_empty_graph():
    g = gpusp.Graph.from_edges(0, np.array([], np.int64), np.array([], np.int64), np.array([], np.int64))
    res = solve(g, "v21")
    assert res.dist.shape == (0, 0) and res.counters["launches"] == 0


@pytest.mark.slow
def test_v21_b24_n25():
    """576-thread blocks with the transposed and padded layout (B = 24 is not a power of two)."""
    g = random_graph(25, 80, seed=8, wmin=0)
    assert_apsp_ok(g, solve(g, "v21", B=24))
