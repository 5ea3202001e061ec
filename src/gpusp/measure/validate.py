"""Check a solver's answer against a CPU reference, GAPBS/Graph500 style, and return a verdict.

The reference is SciPy's csgraph (Dijkstra, or Johnson when weights are negative) on the simple graph
(parallel edges reduced to the lightest, explicit zero weights kept as edges). Distances are compared
exactly. Parents are checked with the five Graph500 tests adapted to weighted SSSP:

1. ``parent[source] == -1`` and every parent is -1 or a vertex id;
2. following parents from every reachable vertex reaches the source without a cycle;
3. every tree step is a tight edge: ``dist[v] == dist[parent[v]] + w(parent[v], v)`` for some edge;
4. no edge can still be relaxed: ``dist[v] <= dist[u] + w(u, v)`` for reachable ``u``;
5. a vertex has a parent exactly when it is reachable and is not the source.

Failures are recorded (with the first mismatches), never asserted.

Peer baselines (``gapbs_sssp``) print no distances, so none of the above can run on their answers:
their verdict is their own verifier's (:func:`peer_verdict`, method ``"peer verifier"``), which the
record labels as such.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from ..data.graph import Graph
from ..solvers.cpu import scipy_matrix, scipy_paths

MAX_REPORTED = 10


@dataclass
class Verdict:
    """Outcome of one validation: ok, per-check results and the first mismatches."""

    ok: bool
    checks: dict = field(default_factory=dict)
    mismatches: list = field(default_factory=list)
    reference: str = "scipy"
    method: str = "reference"  # "reference": SciPy distances + tree checks; "peer verifier": the peer's own

    def to_dict(self) -> dict:
        return asdict(self)


def reference_distances(graph: Graph, sources) -> np.ndarray:
    """Exact integer distances from each source (rows), INF for unreachable; raises on negative cycles."""
    sources = np.atleast_1d(np.asarray(sources, dtype=np.int64))
    if graph.n == 0:
        return np.zeros((sources.size, 0), dtype=graph.dtype)
    return np.atleast_2d(scipy_paths(graph, scipy_matrix(graph), sources)[0])


def check_sssp(graph: Graph, source: int, dist, parent, reference=None) -> Verdict:
    """Validate one SSSP answer (distances exactly, parents with the five tree checks)."""
    dist = np.asarray(dist)
    parent = np.asarray(parent)
    inf = graph.inf
    n = graph.n
    if reference is None:
        reference = reference_distances(graph, [source])[0]
    checks, bad = {}, []
    if dist.shape != (n,) or parent.shape != (n,):
        return Verdict(False, {"shape": False}, [f"dist {dist.shape} / parent {parent.shape}, expected ({n},)"])

    wrong = np.flatnonzero(dist != reference)
    checks["distances"] = wrong.size == 0
    bad += [f"dist[{v}] = {int(dist[v])}, reference {int(reference[v])}" for v in wrong[:MAX_REPORTED]]

    reach = dist != inf
    in_range = (parent == -1) | ((parent >= 0) & (parent < n))
    checks["parent_range"] = bool(in_range.all() and parent[source] == -1)
    if not checks["parent_range"]:
        bad.append(f"parent[{source}] = {int(parent[source])} (source) or parents out of range")
        return Verdict(False, checks, bad[:MAX_REPORTED])

    has_parent = parent != -1
    expect = reach.copy()
    expect[source] = False
    spans = np.flatnonzero(has_parent != expect)
    checks["tree_spans_reachable"] = spans.size == 0
    bad += [f"vertex {v}: parent {int(parent[v])} but {'reachable' if reach[v] else 'unreachable'}"
            for v in spans[:MAX_REPORTED]]

    # 2. chains reach the source: pointer jumping, log2(n) rounds
    hop = np.where(has_parent, parent, np.arange(n))
    hop[source] = source
    for _ in range(max(1, int(np.ceil(np.log2(max(n, 2)))) + 1)):
        hop = hop[hop]
    stuck = np.flatnonzero(reach & (hop != source))
    checks["chains_reach_source"] = stuck.size == 0
    bad += [f"parent chain from {v} does not reach {source} (cycle or dead end)" for v in stuck[:MAX_REPORTED]]

    # 3. tight tree edges, 4. no relaxable edge
    src, dst, w = graph.coo()
    d64 = dist.astype(np.int64)
    ok_u = reach[src]
    cand = d64[src] + w.astype(np.int64)
    loose = np.flatnonzero(ok_u & (cand < d64[dst]))
    checks["no_relaxable_edge"] = loose.size == 0
    bad += [f"edge {int(src[e])}->{int(dst[e])} (w={int(w[e])}) still relaxes {int(dst[e])}"
            for e in loose[:MAX_REPORTED]]
    tight = ok_u & (cand == d64[dst]) & (parent[dst] == src)
    has_tight = np.zeros(n, dtype=bool)
    has_tight[dst[tight]] = True
    not_tight = np.flatnonzero(has_parent & ~has_tight)
    checks["tree_edges_tight"] = not_tight.size == 0
    bad += [f"vertex {v}: no edge {int(parent[v])}->{v} with dist[{v}] = dist[{int(parent[v])}] + w"
            for v in not_tight[:MAX_REPORTED]]
    return Verdict(all(checks.values()), checks, bad[:MAX_REPORTED])


def peer_verdict(result) -> Verdict:
    """The verdict of a peer's own verifier for one source (from the counters the harness merged)."""
    ok = bool(result.counters.get("peer_verified"))
    return Verdict(ok, {"peer_verifier": ok}, list(result.counters.get("peer_mismatches") or [])[:MAX_REPORTED],
                   reference=f"{result.solver}'s own verifier (GAPBS: a serial Dijkstra inside the binary, "
                             "distances only: no parents to check)",
                   method="peer verifier")


def check_apsp(graph: Graph, dist, parent, rows=None) -> Verdict:
    """Validate APSP rows (all when ``rows`` is None) as SSSP answers from each row's source."""
    rows = np.arange(graph.n) if rows is None else np.asarray(rows)
    ref = reference_distances(graph, rows)
    checks, bad, ok = {}, [], True
    for i, s in enumerate(rows):
        v = check_sssp(graph, int(s), dist[s], parent[s], ref[i])
        if not v.ok:
            ok = False
            bad += [f"row {int(s)}: {m}" for m in v.mismatches]
            for k, good in v.checks.items():
                checks[k] = checks.get(k, True) and good
        else:
            for k in v.checks:
                checks.setdefault(k, True)
        if len(bad) >= MAX_REPORTED:
            break
    checks["rows_checked"] = int(len(rows))
    return Verdict(ok, checks, bad[:MAX_REPORTED])


def sample_rows(n: int, count: int, seed: int) -> np.ndarray:
    """A seeded sample of APSP rows to validate (all rows when count >= n)."""
    if count >= n:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size=count, replace=False))


def check_answer(graph: Graph, answer) -> dict:
    """Check a saved answer (``gpusp solve --answer``'s .npz) against SciPy: the verdict as a JSON-ready
    dict (``ok`` None when the run was skipped; a peer's answer passes on its own verifier's verdicts)."""
    import json
    import time

    from ..errors import GpuspError

    try:
        with np.load(answer) as ans:
            sources, dist, parent = ans["sources"], ans["dist"], ans["parent"]
            peer = json.loads(str(ans["peer_verdicts"])) if "peer_verdicts" in ans.files else None
    except (KeyError, ValueError, OSError) as exc:
        raise GpuspError(f"{answer}: not a gpusp answer (.npz with sources, dist, parent): {exc}") from None
    out = {"graph_checksum": graph.checksum(), "answer": str(answer)}
    if peer is not None and len(sources):
        return {**out, "ok": all(v["ok"] for v in peer), "sources": [int(s) for s in sources], "verdicts": peer,
                "method": "peer verifier", "reference_s": 0.0, "validation_s": 0.0}
    if len(sources) == 0:
        return {**out, "ok": None, "sources": [], "verdicts": [],
                "status": "not validated: the run was skipped (no answer)"}
    t0 = time.perf_counter()
    ref = reference_distances(graph, sources)
    ref_s = time.perf_counter() - t0
    verdicts = [check_sssp(graph, int(s), dist[i], parent[i], ref[i]) for i, s in enumerate(sources)]
    return {**out, "ok": all(v.ok for v in verdicts), "sources": [int(s) for s in sources],
            "verdicts": [v.to_dict() for v in verdicts], "reference_s": ref_s,
            "validation_s": time.perf_counter() - t0}


def answer_report(out: dict) -> tuple[str, str | None]:
    """What ``gpusp validate`` prints for :func:`check_answer`'s verdict: a stdout line and, when the
    answer failed, a stderr line."""
    if out["ok"] is None:
        return "validation: nothing to check (the run was skipped)", None
    peer = out.get("method") == "peer verifier"
    line = (f"validation {'ok' if out['ok'] else 'FAILED'}{' (peer verifier)' if peer else ''}: "
            f"{len(out['sources'])} sources" + ("" if peer else f" in {out['validation_s']:.2f} s"))
    if out["ok"]:
        return line, None
    bad = next(v for v in out["verdicts"] if not v["ok"])
    return line, f"gpusp: error: {'peer verifier' if peer else 'validation'} failed: {bad['mismatches'][:3]}"
