"""The optimality certificate (gpusp.measure.certificate) and the rule that picks it or the SciPy reference: it agrees
with the reference's verdict on the awkward graphs, right and wrong answers alike, catches each planted fault by the
rule that should, fails every answer from a source that reaches a negative cycle, and reaches the records, the
verdict files and the config."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from cases import negative_cycle_graph, random_graph, sssp_cases
from scipy.sparse import csr_array

import gpusp
from gpusp import cli
from gpusp.errors import GpuspError
from gpusp.measure import certificate
from gpusp.measure.validate import (
    EXACT_LIMIT,
    METHODS,
    REFERENCE_MAX_WORK,
    check_apsp,
    check_certificate,
    check_rows,
    pick_method,
    reference_rows,
)
from gpusp.solvers.scipy.reference import scipy_matrix, scipy_paths

REPO = Path(__file__).resolve().parents[2]


def graph(n, edges, name="g"):
    src, dst, w = (np.array(c, dtype=np.int64) for c in zip(*edges)) if edges else ([], [], [])
    return gpusp.Graph.from_edges(n, np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64),
                                  np.asarray(w, dtype=np.int64), name=name)


def answer(g, source):
    """SciPy's distances and parents from ``source`` (a right answer)."""
    dist, parent = scipy_paths(g, scipy_matrix(g), [source], predecessors=True)
    return dist[0], parent[0]


def tree_of(g, source, dist):
    """Parents for exact distances: a breadth-first tree over the tight arcs from ``source``."""
    parent = np.full(g.n, -1, dtype=np.int32)
    seen, queue = {source}, [source]
    for u in queue:
        for e in range(g.indptr[u], g.indptr[u + 1]):
            v = int(g.indices[e])
            if v not in seen and dist[v] != g.inf and int(dist[u]) + int(g.weights[e]) == dist[v]:
                seen.add(v)
                parent[v] = u
                queue.append(v)
    return parent


def verdicts(g, source, dist, parent):
    """(reference verdict, certificate verdict) of one answer."""
    return (check_rows(g, [source], [dist], [parent], method="reference")[0],
            check_rows(g, [source], [dist], [parent], method="certificate")[0])


def random_awkward(seed, negative=False):
    """A small random graph with zero weights, duplicate arcs, self-loops and (often) unreachable vertices; with
    ``negative``, negative arcs on a DAG's order plus non-negative arcs back (negative cycles are possible)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 40))
    m = int(rng.integers(0, 3 * n))
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    w = rng.integers(-4 if negative else 0, 9, m)
    w[rng.random(m) < 0.2] = 0
    dup = rng.random(m) < 0.1  # duplicates: the same arc again with another weight
    src, dst, w = np.concatenate([src, src[dup]]), np.concatenate([dst, dst[dup]]), np.concatenate([w, w[dup] + 1])
    return gpusp.Graph.from_edges(n, src, dst, w, name=f"awkward-{seed}")


def mutations(g, dist, parent, rng):
    """Wrong (and one right) variants of an answer: each (label, dist, parent)."""
    inf, n = g.inf, g.n
    finite = np.flatnonzero(dist != inf)
    out = [("right", dist, parent)]
    for label, change in (("+1", 1), ("-1", -1)):
        d = dist.copy()
        d[rng.choice(finite)] += change
        out.append((label, d, parent))
    d = dist.copy()
    d[rng.integers(n)] = inf
    out.append(("unreachable", d, parent))
    d = dist.copy()
    d[rng.integers(n)] = int(rng.integers(-5, 30))
    out.append(("finite", d, parent))
    p = parent.copy()
    p[rng.integers(n)] = int(rng.integers(-1, n))
    out.append(("parent", dist, p))
    return out


# --------------------------------------------------------------------------------- agreement with SciPy
@pytest.mark.parametrize("label,g,source", sssp_cases(negative=True), ids=lambda c: c if isinstance(c, str) else "")
def test_a_right_answer_passes_on_every_awkward_case(label, g, source):
    dist, parent = answer(g, source)
    for p in (parent, None):
        ref, cert = verdicts(g, source, dist, p)
        assert ref.ok is True and cert.ok is True, (label, cert.checks, cert.mismatches)
        assert cert.method == "certificate" and cert.seconds >= 0


@pytest.mark.parametrize("seed", range(24))
def test_the_certificate_agrees_with_the_reference_on_random_answers(seed):
    """Random graphs (half with negative arcs), a few sources (one that reaches a negative cycle where there is one), a
    right answer and its wrong variants: the two verdicts agree, with parents and without; a source that reaches a
    negative cycle fails both ways, whatever it answered."""
    g = random_awkward(seed, negative=seed % 2 == 1)
    rng = np.random.default_rng(seed)
    ref_rows = reference_rows(g, np.arange(g.n))
    cyclic = np.flatnonzero(ref_rows.cyclic)[:1]
    for s in np.unique(np.r_[cyclic, rng.choice(g.n, min(g.n, 5), replace=False)]):
        if ref_rows.cyclic[s]:
            dist, parent = np.zeros(g.n, dtype=g.dtype), np.full(g.n, -1, dtype=np.int32)
        else:
            dist = ref_rows.dist[s]
            parent = tree_of(g, s, dist)
        for label, d, p in mutations(g, dist, parent, rng):
            for with_parent in (p, None):
                ref, cert = verdicts(g, s, d, with_parent)
                assert ref.ok == cert.ok, (seed, s, label, with_parent is None, ref.mismatches, cert.mismatches)
                if ref_rows.cyclic[s]:
                    assert cert.ok is False


def test_n_1_and_graphs_without_arcs():
    one = graph(1, [])
    assert check_certificate(one, 0, np.array([0]), np.array([-1])).ok is True
    assert check_certificate(one, 0, np.array([1]), np.array([-1])).checks["source_zero"] is False
    loop = graph(1, [(0, 0, 0)])
    assert check_certificate(loop, 0, np.array([0]), np.array([-1])).ok is True
    assert check_certificate(loop, 0, np.array([0]), np.array([0])).ok is False  # the source's parent is -1
    empty = graph(5, [])
    inf = empty.inf
    assert check_certificate(empty, 2, np.array([inf, inf, 0, inf, inf])).ok is True
    bad = check_certificate(empty, 2, np.array([inf, 3, 0, inf, inf]))
    assert bad.ok is False and bad.checks["finite_exactly_tight_reachable"] is False and "dist[1] = 3" in \
        bad.mismatches[0]


def test_every_answer_from_a_source_that_reaches_a_negative_cycle_fails():
    g = negative_cycle_graph()
    inf = g.inf
    rng = np.random.default_rng(0)
    tries = [np.zeros(4), np.array([0, 1, 3, 4]), np.array([0, -5, -3, -2]), np.array([0, inf, inf, inf]),
             np.array([inf] * 4)] + [np.r_[0, rng.integers(-50, 50, 3)] for _ in range(50)]
    for dist in tries:
        verdict = check_certificate(g, 0, dist.astype(g.dtype))
        assert verdict.ok is False, dist
    # the reference says why; the certificate names the arc that still relaxes
    ref, cert = verdicts(g, 0, np.array([0, 1, 3, 4], dtype=g.dtype), np.array([-1, 0, 1, 2], dtype=np.int32))
    assert ref.ok is False and "negative-weight cycle is reachable" in ref.mismatches[0]
    assert cert.ok is False and cert.checks["no_relaxable_edge"] is False


# ------------------------------------------------------------------------------------------ planted faults
CHAIN = [(0, 1, 3), (1, 2, 4), (0, 2, 9), (2, 3, 1), (3, 4, 0), (1, 4, 8), (5, 6, 1), (6, 5, 2)]  # 5, 6 unreachable


@pytest.fixture
def chain():
    g = graph(7, CHAIN, "chain")
    dist, parent = answer(g, 0)
    assert dist.tolist()[:5] == [0, 3, 7, 8, 8] and (dist[5:] == g.inf).all()
    return g, dist, parent


@pytest.mark.parametrize("with_parents", [True, False])
@pytest.mark.parametrize("fault,check,named", [
    ("+1", "no_relaxable_edge", "dist[2] + w = 8 < dist[3] = 9"),
    ("-1", None, "3"),
    ("reported-unreachable", "no_relaxable_edge", "yet dist[3] is unreachable"),
    ("unreachable-finite", "finite_exactly_tight_reachable", "dist[5] = 4, yet no path of tight edges"),
    ("source", "source_zero", "dist[0] = 1"),
])
def test_each_planted_distance_fault_is_caught(chain, fault, check, named, with_parents):
    g, dist, parent = chain
    d = dist.copy()
    if fault in ("+1", "-1"):
        d[3] += 1 if fault == "+1" else -1
    elif fault == "reported-unreachable":
        d[3] = g.inf
    elif fault == "unreachable-finite":
        d[5] = 4
    else:
        d[0] = 1
    ref, cert = verdicts(g, 0, d, parent if with_parents else None)
    assert ref.ok is False and cert.ok is False
    if check:
        assert cert.checks[check] is False, cert.checks
    assert any(named in m for m in cert.mismatches), cert.mismatches


def test_distances_shifted_by_one_fail_on_the_source_alone(chain):
    """Every finite distance + 1 keeps every arc tight or loose as it was: only dist[s] == 0 tells."""
    g, dist, _ = chain
    d = np.where(dist == g.inf, dist, dist + 1).astype(dist.dtype)
    cert = check_certificate(g, 0, d)
    assert cert.ok is False and [k for k, ok in cert.checks.items() if not ok] == ["source_zero"]


@pytest.mark.parametrize("reachable", [True, False])
def test_the_zero_weight_cycle_trap(reachable):
    """Two vertices on a zero-weight cycle with the same wrong distance: no arc relaxes and each has a tight arc in
    (from the other), so a per-vertex test passes; no tight path from the source reaches them, and the certificate
    fails. Reachable (true distance 5, answered 3) and unreachable (answered 7)."""
    g = graph(4, [(0, 1, 5), (1, 2, 0), (2, 1, 0), (0, 3, 1)] if reachable else
              [(0, 3, 1), (1, 2, 0), (2, 1, 0)], "trap")
    d = np.array([0, 3, 3, 1] if reachable else [0, 7, 7, 1], dtype=g.dtype)
    src, dst, w = g.coo()
    tight_in = {int(v) for u, v, x in zip(src, dst, w) if d[u] + x == d[v]}
    assert {1, 2} <= tight_in  # the per-vertex test is fooled
    for parent in (np.array([-1, 2, 1, 0], dtype=np.int32), None):
        cert = check_certificate(g, 0, d, parent)
        assert cert.ok is False and cert.checks["no_relaxable_edge"] is True
        assert cert.checks["finite_exactly_tight_reachable"] is False
        assert any("dist[1] = " in m for m in cert.mismatches) and any("dist[2] = " in m for m in cert.mismatches)
        assert check_rows(g, [0], [d], [parent], method="reference")[0].ok is False


def test_a_parent_on_a_loose_arc_or_no_arc_is_caught():
    g = graph(4, [(0, 1, 4), (0, 2, 2), (2, 1, -3), (1, 3, 2)], "neg")
    dist, parent = answer(g, 0)
    assert dist.tolist() == [0, -1, 2, 1] and parent[1] == 2
    for wrong in (0, 3):  # 0 -> 1 exists but is not tight; 3 -> 1 is no arc
        p = parent.copy()
        p[1] = wrong
        cert = check_certificate(g, 0, dist, p)
        assert cert.ok is False and cert.checks["tree_edges_tight"] is False
        assert cert.checks["finite_exactly_tight_reachable"] is True  # the distances are right
        assert any(f"no edge {wrong}->1" in m for m in cert.mismatches)


def test_a_parent_cycle_of_tight_arcs_is_caught():
    """Right distances, every parent arc tight, yet 1 -> 3 -> 2 -> 1 is a cycle (zero-weight arcs): the chains
    check fails, the distance checks pass."""
    g = graph(5, [(0, 1, 1), (1, 2, 0), (2, 1, 0), (2, 3, 0), (3, 1, 0), (3, 4, 2)], "zcycle")
    dist, parent = answer(g, 0)
    p = parent.copy()
    p[1], p[2], p[3] = 3, 1, 2
    cert = check_certificate(g, 0, dist, p)
    assert cert.ok is False and cert.checks["tree_edges_tight"] is True and cert.checks["chains_reach_source"] is False
    assert cert.checks["finite_exactly_tight_reachable"] is True and cert.checks["no_relaxable_edge"] is True
    assert any("parent chain from 1 does not reach 0" in m for m in cert.mismatches)


def test_parents_of_unreachable_vertices_and_out_of_range():
    g = graph(4, [(0, 1, 1), (2, 3, 1)])
    dist, parent = answer(g, 0)
    p = parent.copy()
    p[3] = 2  # an arc, but 3 is unreachable
    assert check_certificate(g, 0, dist, p).checks["tree_spans_reachable"] is False
    for bad in (7, -2):
        p = parent.copy()
        p[1] = bad
        assert check_certificate(g, 0, dist, p).checks["parent_range"] is False
    p = parent.copy()
    p[0] = 0
    assert check_certificate(g, 0, dist, p).checks["parent_range"] is False


def test_shape_dtype_and_range_faults():
    g = graph(3, [(0, 1, 1), (1, 2, 1)])
    dist, parent = answer(g, 0)
    assert check_certificate(g, 0, dist[:2], parent).checks == {"shape": False}
    assert check_certificate(g, 0, dist, parent[:2]).checks == {"shape": False}
    assert check_certificate(g, 0, dist.astype(float), parent).checks == {"dist_range": False}
    huge = dist.astype(np.int64)
    huge[2] = 2**62  # beyond the int32 graph's INF: no distance, and int64 sums near it could wrap
    cert = check_certificate(g, 0, huge, parent)
    assert cert.ok is False and cert.checks == {"dist_range": False} and "dist[2]" in cert.mismatches[0]


# --------------------------------------------------------------------------------- int64 and big graphs
def test_int64_distances_and_int64_indptr():
    """Weights that need int64 distances (and paths past SciPy's exact 2^51, where the reference gives up); the
    same graph with an int64 indptr (graphs of 2^31 arcs and more) gives the same verdicts."""
    big = 2**40
    g = graph(5, [(0, 1, big), (1, 2, big), (0, 2, 3 * big), (2, 3, 1), (4, 3, 1)], "big")
    assert g.dtype == np.int64
    dist, parent = answer(g, 0)
    assert dist.tolist()[:4] == [0, big, 2 * big, 2 * big + 1]
    wide = graph(5, [(0, 1, big), (1, 2, big), (0, 2, 3 * big), (2, 3, 1), (4, 3, 1)], "big")
    wide.indptr = wide.indptr.astype(np.int64)
    for h in (g, wide):
        assert check_certificate(h, 0, dist, parent).ok is True
        assert check_certificate(h, 0, dist, None).ok is True
        d = dist.copy()
        d[2] -= 1
        assert check_certificate(h, 0, d, parent).ok is False
    long = graph(3, [(0, 1, EXACT_LIMIT // 2), (1, 2, EXACT_LIMIT // 2)], "long")
    d = np.array([0, EXACT_LIMIT // 2, EXACT_LIMIT], dtype=np.int64)
    p = np.array([-1, 0, 1], dtype=np.int32)
    assert check_rows(long, [0], [d], [p], method="reference")[0].ok is None
    timing = {}
    verdict = check_rows(long, [0], [d], [p], timing)  # auto: no reference, so the certificate
    assert verdict[0].ok is True and verdict[0].method == "certificate" and "no SciPy reference" in verdict[0].reason
    assert timing["method"] == "certificate" and timing["certificate_s"] >= 0
    d[2] += 1
    assert check_rows(long, [0], [d], [p])[0].ok is False


def test_the_parallel_search_reaches_what_a_breadth_first_search_of_the_tight_arcs_reaches():
    """A graph whose middle levels have more arcs than SERIAL_ARCS, so the search cuts them into pieces: its reach
    over the tight arcs is a breadth-first search's over the same arcs, for several piece counts."""
    g = random_graph(30000, 300000, seed=5, wmin=0, wmax=3)
    dist, _ = answer(g, 0)
    src, dst, w = g.coo()
    finite = dist != g.inf
    tight = finite[src] & (dist[src].astype(np.int64) + w == dist[dst])
    sub = csr_array((np.ones(int(tight.sum())), (src[tight], dst[tight])), shape=(g.n, g.n))
    expect = np.zeros(g.n, dtype=bool)
    frontier, widest = np.array([0]), 0
    expect[0] = True
    while frontier.size:  # level by level, to see that some level is wide enough for the pieces
        widest = max(widest, int(np.diff(g.indptr)[frontier].sum()))
        heads = np.unique(sub[frontier].indices)
        frontier = heads[~expect[heads]]
        expect[frontier] = True
    assert widest >= certificate.SERIAL_ARCS and expect.sum() > g.n // 2
    for pieces in (1, 3, 64):
        seen = np.zeros(g.n, dtype=np.uint8)
        certificate._tight_reach(g.indptr, g.indices, g.weights, dist, g.inf, 0, seen, pieces)
        assert np.array_equal(seen.astype(bool), expect), pieces


# ------------------------------------------------------------------------------------------- the rule
def test_auto_picks_the_reference_while_the_work_is_small():
    g = graph(3, [(0, 1, 1), (1, 2, 1)])  # 2 arcs
    assert pick_method("auto", g, 4, reference_max_work=8) == "reference"
    assert pick_method("auto", g, 5, reference_max_work=8) == "certificate"
    assert pick_method("auto", g, 1) == "reference" and REFERENCE_MAX_WORK >= 2
    assert pick_method("reference", g, 10**9, 0) == "reference"
    assert pick_method("certificate", g, 1) == "certificate"
    with pytest.raises(GpuspError, match="'scipy' is not one of auto, reference, certificate"):
        pick_method("scipy", g, 1)


def test_check_rows_says_which_check_ran_and_times_it_apart():
    g = random_graph(50, 200, seed=3)
    sources = [0, 7, 9]
    rows = [answer(g, s) for s in sources]
    dists, parents = [r[0] for r in rows], [r[1] for r in rows]
    timing = {}
    ref = check_rows(g, sources, dists, parents, timing, method="auto", reference_max_work=3 * g.m)
    assert timing["method"] == "reference" and set(timing) == {"method", "reference_s"}
    assert all(v.ok and v.method == "reference" and v.seconds >= 0 for v in ref)
    timing = {}
    cert = check_rows(g, sources, dists, parents, timing, method="auto", reference_max_work=3 * g.m - 1)
    assert timing["method"] == "certificate" and set(timing) == {"method", "certificate_s", "certificate_compile_s"}
    assert all(v.ok and v.method == "certificate" and v.reference.startswith("none") for v in cert)
    assert [v.checks["tree_edges_tight"] for v in cert] == [True] * 3


def test_apsp_rows_use_the_rule_too():
    g = random_graph(12, 40, seed=4, wmin=0)
    dist, parent = scipy_paths(g, scipy_matrix(g), None, predecessors=True)
    timing = {}
    verdict = check_apsp(g, dist, parent, rows=[1, 4, 5], timing=timing, method="certificate")
    assert verdict.ok is True and verdict.method == "certificate" and verdict.checks["rows_checked"] == 3
    bad = dist.copy()
    bad[4, np.flatnonzero(bad[4] != g.inf)[-1]] += 1
    wrong = check_apsp(g, bad, parent, rows=[1, 4, 5], method="certificate")
    assert wrong.ok is False and all(m.startswith("row 4:") for m in wrong.mismatches)
    assert check_apsp(g, dist, parent, rows=[1, 4, 5]).method == "reference"


def test_the_config_schema_and_the_command_line_name_the_same_methods_and_default():
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    validate = schema["properties"]["validate"]
    assert tuple(validate["properties"]["method"]["enum"]) == METHODS
    assert validate["properties"]["reference_max_work"]["default"] == REFERENCE_MAX_WORK
    assert validate["default"]["reference_max_work"] == REFERENCE_MAX_WORK
    assert validate["default"]["method"] == validate["properties"]["method"]["default"] == "auto"
    assert dict(cli.VALIDATION)["--validation-method"]["choices"] == METHODS


def test_solve_and_validate_record_the_method_and_its_seconds(capsys, tmp_path):
    tiny = Path(gpusp.__file__).parent / "data" / "tiny.gr"
    rec, ans, ver = tmp_path / "R.json", tmp_path / "A.npz", tmp_path / "V.json"
    assert cli.main(["solve", "--graph", str(tiny), "--solver", "dijkstra_cpu", "--num-sources", "2", "--validate",
                     "--validation-method", "certificate", "--trials", "1", "--record", str(rec),
                     "--answer", str(ans)]) == 0
    r = json.loads(rec.read_text())
    assert r["summary"]["validated"] is True and r["validation_timing"]["method"] == "certificate"
    assert all(run["validation"]["method"] == "certificate" for run in r["runs"])
    for method, seconds in (("certificate", "certificate_s"), ("reference", "reference_s")):
        assert cli.main(["validate", "--graph", str(tiny), "--answer", str(ans), "--validation-method", method,
                         "--output", str(ver)]) == 0
        v = json.loads(ver.read_text())
        assert v["ok"] is True and v["method"] == method and v[seconds] >= 0
        assert {d["method"] for d in v["verdicts"]} == {method}
    assert cli.main(["validate", "--graph", str(tiny), "--answer", str(ans), "--reference-max-work", "0",
                     "--output", str(ver)]) == 0
    assert json.loads(ver.read_text())["method"] == "certificate"
    capsys.readouterr()
