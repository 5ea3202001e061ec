"""Small graphs with the awkward cases every solver must survive, and one check for any answer.

Each case is (label, graph, source). Sizes stay tiny because the CUDA simulator costs about a
millisecond per simulated thread.
"""

from __future__ import annotations

import numpy as np

import gpusp
from gpusp.measure.validate import check_apsp, check_sssp


def _g(n, edges, name):
    src, dst, w = (np.array(c, dtype=np.int64) for c in zip(*edges)) if edges else ([], [], [])
    return gpusp.Graph.from_edges(n, np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64),
                                  np.asarray(w, dtype=np.int64), name=name)


def random_graph(n, m, seed, wmin=1, wmax=20, name=None):
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    w = rng.integers(wmin, wmax + 1, m)
    return gpusp.Graph.from_edges(n, src, dst, w, name=name or f"random-{n}-{m}-{seed}")


def weighted_grid(side, seed=4):
    """A ``side`` x ``side`` grid with an arc each way between neighbours, weights drawn from [1, 29]."""
    rng = np.random.default_rng(seed)
    edges = []
    for r in range(side):
        for c in range(side):
            v = r * side + c
            if c + 1 < side:
                edges += [(v, v + 1, int(rng.integers(1, 30))), (v + 1, v, int(rng.integers(1, 30)))]
            if r + 1 < side:
                edges += [(v, v + side, int(rng.integers(1, 30))), (v + side, v, int(rng.integers(1, 30)))]
    return _g(side * side, edges, f"grid{side}")


def solver(label, **defaults):
    """``solve(graph, source=0, **kw)``: ``gpusp.solve`` of solver ``label`` without warm-up, its keywords defaulting
    to ``defaults``."""

    def solve(graph, source=0, **kw):
        return gpusp.solve(graph, label, source, **{"warmup": 0, **defaults, **kw})

    return solve


def sssp_cases(negative: bool = False):
    """Graphs with unreachable vertices, zero weights, duplicates, self-loops, n = 1, odd sizes."""
    cases = [
        ("n1", _g(1, [], "n1"), 0),
        ("n1-selfloop", _g(1, [(0, 0, 3)], "n1-loop"), 0),
        ("unreachable", _g(6, [(0, 1, 2), (1, 2, 2), (3, 4, 1), (4, 5, 1)], "unreach"), 0),
        ("zero-weights", _g(5, [(0, 1, 0), (1, 2, 0), (2, 3, 4), (0, 3, 4), (3, 4, 0)], "zeros"), 0),
        ("zero-cycle", _g(5, [(0, 1, 1), (1, 2, 0), (2, 1, 0), (2, 3, 0), (3, 1, 0), (3, 4, 2)], "zcycle"), 0),
        ("duplicates-selfloops", _g(4, [(0, 1, 5), (0, 1, 2), (0, 1, 9), (1, 1, 1), (1, 2, 3), (2, 2, 0),
                                        (1, 3, 7), (2, 3, 1), (2, 3, 1)], "dups"), 0),
        ("random-13", random_graph(13, 40, seed=1, wmin=0, wmax=9), 3),
        ("random-37", random_graph(37, 110, seed=2), 5),
    ]
    if negative:
        cases += [
            ("negative", _g(5, [(0, 1, 4), (0, 2, 2), (2, 1, -3), (1, 3, 2), (3, 4, -1), (2, 4, 5)], "neg"), 0),
            ("negative-zero-cycle", _g(4, [(0, 1, 1), (1, 2, -2), (2, 1, 2), (2, 3, 1)], "negzero"), 0),
            ("random-neg", _random_dag_negative(17, 50, seed=3), 0),
        ]
    return cases


def _random_dag_negative(n, m, seed):
    """Random DAG (edges low -> high id) with weights in [-5, 9]: negative but no cycles."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, n, m)
    b = rng.integers(0, n, m)
    keep = a != b
    src, dst = np.minimum(a, b)[keep], np.maximum(a, b)[keep]
    return gpusp.Graph.from_edges(n, src, dst, rng.integers(-5, 10, src.size), name=f"dagneg-{n}")


def negative_cycle_graph():
    """0 -> 1 -> 2 -> 1 with the 1-2-1 cycle of weight -1, reachable from 0; vertex 3 hangs off it."""
    return _g(4, [(0, 1, 1), (1, 2, 2), (2, 1, -3), (2, 3, 1)], "negcycle")


def assert_sssp_ok(graph, source, result):
    """The result's distances equal SciPy's and its parents pass the five tree checks."""
    verdict = check_sssp(graph, source, result.dist, result.parent)
    assert verdict.ok, f"{graph.name} from {source}: {verdict.checks} {verdict.mismatches}"


def assert_apsp_ok(graph, result):
    verdict = check_apsp(graph, result.dist, result.parent)
    assert verdict.ok, f"{graph.name}: {verdict.checks} {verdict.mismatches}"


class CountedLaunches:
    """Records every Launch / NativeRead a solver builds (its ``native`` request) and how often each is called."""

    def __init__(self, monkeypatch, *modules):
        from gpusp.solvers.common import launch

        self.launches, self.reads = [], []
        made = self

        class CountedLaunch(launch.Launch):
            __slots__ = ("asked", "calls")

            def __init__(self, *args, native=True, **kw):
                super().__init__(*args, native=native, **kw)
                self.asked, self.calls = native, 0
                made.launches.append(self)

            def __call__(self, *args):
                self.calls += 1
                return super().__call__(*args)

        class CountedRead(launch.NativeRead):
            __slots__ = ("asked", "calls")

            def __init__(self, *args, native=True, **kw):
                super().__init__(*args, native=native, **kw)
                self.asked, self.calls = native, 0
                made.reads.append(self)

            def __call__(self):
                self.calls += 1
                return super().__call__()

        for module in modules:
            monkeypatch.setattr(module, "Launch", CountedLaunch)
            monkeypatch.setattr(module, "NativeRead", CountedRead)

    def calls(self):
        return sum(x.calls for x in self.launches), sum(x.calls for x in self.reads)


def pairwise(**values) -> list[dict]:
    """A small set of combinations of ``values`` (name -> list of values) that holds every pair of values of every
    two names at least once (a pairwise design): the cells of a cross-product grid that repeat one behaviour become
    a few, while each pair of settings still meets. Deterministic: greedy, in the order given."""
    names = list(values)
    if len(names) < 2:
        return [{names[0]: v} for v in values[names[0]]] if names else [{}]
    todo = {(a, i, b, j) for x, a in enumerate(names) for b in names[x + 1:]
            for i in range(len(values[a])) for j in range(len(values[b]))}
    rows = []
    while todo:
        row = {}
        for a in names:  # each name takes the value that covers the most pairs still open with the row so far
            def gain(i):
                return sum((b, row[b], a, i) in todo if names.index(b) < names.index(a) else (a, i, b, row[b]) in todo
                           for b in row) + sum(1 for (p, q, _, _) in todo if p == a and q == i)
            row[a] = max(range(len(values[a])), key=gain)
        covered = {(a, row[a], b, row[b]) for x, a in enumerate(names) for b in names[x + 1:]}
        if not covered & todo:  # cannot happen with the greedy above; guards against an endless loop
            raise AssertionError("pairwise: no progress")
        todo -= covered
        rows.append({a: values[a][i] for a, i in row.items()})
    return rows
