"""multisource_sssp and the harness's batch protocol: the K sources of a job solved together, one row each.

Simulator budget as in test_multisource_fast.py: one warp per block, batches of 32 or 64 sources, n <= 70.
"""

import numpy as np
import pytest
from cases import _g, pairwise, random_graph, sssp_cases

from gpusp.errors import SolverError
from gpusp.measure.harness import solve_many
from gpusp.measure.job import SolveJob, run_job
from gpusp.measure.validate import check_rows
from gpusp.solvers import registry
from gpusp.solvers.multisource.spec import MULTISOURCE_DEEP, MULTISOURCE_DELTA_WIDTH, multisource_delta

SMALL = dict(batch=32, block=32, split=2, regs=0)
CASES = {c[0]: c for c in sssp_cases() if c[0] != "random-37"}
# every awkward case with and without buckets, over words and pairs, in the given and the landmark order: a pairwise
# design (each pair of values of any two of the four meets at least once)
AWKWARD = [pytest.param(*CASES[c["case"]], c["delta"], c["items"], c["order"],
                        id=f"{c['case']}-delta{c['delta']}-{c['items']}-{c['order']}")
           for c in pairwise(case=list(CASES), delta=[0, 3], items=["words", "pairs"], order=["given", "landmarks"])]


def _run(graph, sources, trials=2, warmup=1, **params):
    return list(solve_many(graph, "multisource_sssp", sources, trials=trials, warmup=warmup, **{**SMALL, **params}))


def _assert_valid(graph, results):
    verdicts = check_rows(graph, [r.source for r in results], [r.dist for r in results],
                          [r.parent for r in results])
    assert all(v.ok for v in verdicts), [v.mismatches[:3] for v in verdicts if not v.ok]


@pytest.mark.parametrize("label,graph,source,delta,items,order", AWKWARD)
def test_awkward_cases_every_source_once(label, graph, source, delta, items, order):
    """Frontier Bellman-Ford (delta 0) or buckets of width 3 (zero weights and zero-weight cycles inside one bucket,
    lanes and pairs waiting for later ones), over 32-source words or (vertex, source) pairs, the sources in the given
    order or reordered by landmarks."""
    sources = list(range(graph.n))[::-1]  # not in vertex order: the rows follow the sources given
    # two trials: the second runs on the first's stamps, lists and piles (run() resets them)
    results = _run(graph, sources, warmup=0, delta=delta, order=order, items=items)
    assert [r.source for r in results] == sources
    _assert_valid(graph, results)
    assert results[0].counters["delta"] == delta
    assert results[0].counters["pair_items"] == int(items == "pairs")


def test_auto_items_and_order_follow_the_buckets():
    """items and order 'auto': pairs and the landmark order where delta buckets are on, words and the given order
    where they are off."""
    graph = random_graph(20, 60, seed=2)
    spec = registry.get("multisource_sssp")
    on, off = spec.build(graph, **SMALL, delta=3), spec.build(graph, **SMALL, delta=0)
    assert (on.pairs, on.landmarks) == (True, True) and (off.pairs, off.landmarks) == (False, False)


def test_buckets_cut_the_relaxations_and_count_themselves():
    """Weights 1..50 on a 12-vertex random graph: width-16 buckets open one after another (more rounds) and expand
    each arc fewer times than frontier Bellman-Ford (196 against 238 here), with the same rows."""
    graph = random_graph(12, 40, seed=3, wmin=1, wmax=50)
    sources = list(range(0, 12, 2))
    plain = _run(graph, sources, trials=1, warmup=0, delta=0)
    buckets = _run(graph, sources, trials=1, warmup=0, delta=16, order="given", items="words")
    pairs = _run(graph, sources, trials=1, warmup=0, delta=16, order="given", items="pairs")
    _assert_valid(graph, buckets)
    _assert_valid(graph, pairs)
    assert all(np.array_equal(a.dist, b.dist) for a, b in zip(plain, buckets))
    cp, cb, cq = plain[0].counters, buckets[0].counters, pairs[0].counters
    assert cb["buckets"] > 0 and cp["buckets"] == 0 and cq["buckets"] > 0
    assert cb["relaxations"] < cp["relaxations"] and cb["iterations"] > cp["iterations"]
    # a pair item is one source's vertex: every reached (source, vertex) is listed at least once, and deferred pairs
    # wait in a far pile instead of being listed every round, so the source-arc pairs examined stay near the words'
    reached = sum(int(np.count_nonzero(r.dist != graph.inf)) for r in pairs)
    assert cq["items"] >= reached and cq["relaxations"] <= cb["relaxations"] * 1.5


def test_automatic_delta_follows_the_hop_depth():
    """-1: no buckets on a shallow graph, Davidson's rule x 4 on a deep chain (hop depth >= the rule's bound)."""
    shallow = random_graph(50, 400, seed=1)
    assert shallow.hop_landmarks()[0] < MULTISOURCE_DEEP and multisource_delta(shallow, -1) == 0
    chain = _g(MULTISOURCE_DEEP + 5, [(i, i + 1, 3) for i in range(MULTISOURCE_DEEP + 4)], "chain")
    assert chain.hop_landmarks()[0] >= MULTISOURCE_DEEP
    assert multisource_delta(chain, -1) == chain.default_delta(MULTISOURCE_DELTA_WIDTH)
    assert multisource_delta(chain, 7) == 7


def test_duplicate_sources_several_batches_and_words():
    """70 sources (some twice, also within one word) in batches of 64: two batches, the second partial, two 32-source
    words. A small graph: the batches' cost is the sources' rounds and items, not n."""
    graph = random_graph(20, 40, seed=5, wmin=0, wmax=30)
    rng = np.random.default_rng(3)
    sources = [int(s) for s in rng.integers(0, graph.n, 70)]
    assert len(set(sources)) < len(sources)
    results = _run(graph, sources, trials=1, warmup=0, batch=64, block=64)
    _assert_valid(graph, results)
    c = results[0].counters
    assert c["batch_sources"] == 70 and c["batches"] == 2 and c["batch"] == 64


@pytest.mark.parametrize("items", ["words", "pairs"])
def test_one_source_and_a_long_chain(items):
    """K = 1 (one lane of one word, or one pair) on a chain of 60 vertices with zero weights: 59 rounds, the
    deepest tree the simulator allows; pairs with buckets of width 2."""
    graph = _g(60, [(i, i + 1, i % 3) for i in range(59)], "chain-60")
    (result,) = _run(graph, [0], trials=1, warmup=0, items=items, delta=2 if items == "pairs" else 0)
    _assert_valid(graph, [result])
    assert result.dist[59] == sum(i % 3 for i in range(59))
    assert result.counters["iterations"] >= 59


@pytest.mark.parametrize("items", ["words", "pairs"])
def test_a_hub_zero_cycle_and_unreachable_vertex(items):
    edges = [(0, v, v % 7 + 1) for v in range(1, 21)] + [(3, 4, 0), (4, 5, 0), (5, 3, 0), (5, 21, 0),
                                                           (21, 0, 2), (2, 6, 1), (2, 6, 1), (6, 6, 0)]
    graph = _g(23, edges, "hub-zero-cycle")
    results = _run(graph, [0, 3, 22, 3], items=items, delta=3 if items == "pairs" else 0)
    _assert_valid(graph, results)
    assert results[2].dist[0] == graph.inf and results[2].parent[0] == -1  # 22 has no out-arcs
    assert results[1].dist[5] == 0 and results[1].parent[5] == 4  # along the zero cycle, not around it


def test_batch_timings_are_the_batch_shared():
    graph = random_graph(12, 30, seed=8)
    results = _run(graph, [1, 2, 3, 4])
    first, rest = results[0].timings, [r.timings for r in results[1:]]
    assert first.batch_sources == 4 and len(first.batch_ms) == 2
    assert first.samples_ms == pytest.approx([ms / 4 for ms in first.batch_ms])
    assert all(t.samples_ms == first.samples_ms and t.batch_ms == first.batch_ms for t in rest)
    assert len(first.warmup_ms) == 1 and all(not t.warmup_ms and t.h2d_ms == 0 and t.compile_s == 0 for t in rest)


def test_a_job_records_every_source_validated(tmp_path):
    graph = random_graph(20, 50, seed=9, wmin=0, wmax=10)
    job = SolveJob(graph=graph, solver="multisource_sssp", params=SMALL, num_sources=5, seed=2, trials=1, warmup=0,
                   validate=True, record=tmp_path / "r.json", answer=tmp_path / "a.npz")
    outcome = run_job(job)
    assert outcome.status == "ok"
    runs = outcome.record["runs"]
    assert len(runs) == 5 and all(r["validation"]["ok"] for r in runs)
    assert all(r["timings"]["batch_sources"] == 5 for r in runs)
    answer = np.load(tmp_path / "a.npz")
    assert answer["dist"].shape == (5, graph.n)


def test_refusals():
    neg = _g(3, [(0, 1, -1), (1, 2, 1)], "neg")
    with pytest.raises(SolverError, match="negative weights with reweight=never"):
        _run(neg, [0], reweight="never")
    graph = random_graph(10, 20, seed=1)
    with pytest.raises(SolverError, match="out of range"):
        _run(graph, [0, 10])
    assert registry.get("multisource_sssp").batched and not registry.get("deltastep_gpu").batched
