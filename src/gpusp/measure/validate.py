"""Check a solver's answer on the CPU (SciPy's reference or the optimality certificate) and return a verdict.

:func:`check_rows` picks the check (docs/timing.md, Validation): the reference while sources x arcs stays within
``reference_max_work``, else :func:`check_certificate` (:mod:`gpusp.measure.certificate`: O(m), no reference solve).
The reference is SciPy's csgraph (Dijkstra, or Johnson when weights are negative) on the simple graph
(parallel edges reduced to the lightest, explicit zero weights kept as edges), computed from the run's
sources only: with negative weights, Johnson runs on the part of the graph the sources reach, so a
negative cycle that no source reaches does not stop a correct run (SciPy's Johnson refuses any negative
cycle in the graph it is given). A source from which a negative cycle is reachable has no shortest
paths: an answer from it fails. Distances are compared exactly. Parents are checked with the five
Graph500 tests adapted to weighted SSSP:

1. ``parent[source] == -1`` and every parent is -1 or a vertex id;
2. following parents from every reachable vertex reaches the source without a cycle;
3. every tree step is a tight edge: ``dist[v] == dist[parent[v]] + w(parent[v], v)`` for some edge;
4. no edge can still be relaxed: ``dist[v] <= dist[u] + w(u, v)`` for reachable ``u``;
5. a vertex has a parent exactly when it is reachable and is not the source.

Failures are recorded (with the first mismatches), never asserted. Where no exact reference can be computed (paths
beyond what SciPy's float64 holds exactly, or no memory for it) the verdict is "not validated" (``ok`` None) with the
reason, and the run stands; method "auto" checks such answers by the certificate instead.

Peer baselines: ``gapbs_sssp`` prints no distances, so none of the above can run on its answers: its verdict is
its own verifier's (:func:`peer_verdict`, method ``"peer verifier"``), which the record labels as such.
``gunrock_sssp`` returns distances but no predecessors (``parent`` None): its distances are compared exactly and the
tree checks are skipped, with that reason in the verdict (method ``"distances"``).

Answer files (``gpusp solve --answer``) are read back by :func:`read_answer`, the one place that decides
whether a file is a gpusp answer of a given graph; every error it raises names the file.
"""

from __future__ import annotations

import json
import os
import struct
import time
import zipfile
import zlib
from dataclasses import asdict, dataclass, field

import numpy as np

from ..data.graph import Graph
from ..errors import GpuspError, NegativeCycleError
from ..solvers.scipy.reference import scipy_matrix, scipy_paths, scipy_rows_parallel
from .certificate import certify, parent_spans, warm

MAX_REPORTED = 10
# SciPy computes in float64: Johnson's reweighted sums stay below 3x the longest simple path, so paths
# shorter than 2^51 keep every intermediate value an exact integer (below 2^53)
EXACT_LIMIT = 2**51
PARALLEL_WORK = 2**24  # source-arc pairs from which the reference is split over forked workers (one per core)
METHODS = ("auto", "reference", "certificate")
# source-arc pairs up to which "auto" checks against SciPy, past which by the certificate (docs/timing.md, Validation,
# says how it was chosen); the config's validate.reference_max_work, whose schema default is this number
REFERENCE_MAX_WORK = 2**22


class ReferenceUnavailable(GpuspError):
    """No exact reference can be computed for this graph here: the verdict is "not validated"."""


class AnswerFormatError(GpuspError, ValueError):
    """A file given as an answer is not a gpusp answer of the graph it is checked against."""


@dataclass
class Verdict:
    """Outcome of one validation: ok (None: not validated, ``reason`` says why), per-check results and the
    first mismatches."""

    ok: bool | None
    checks: dict = field(default_factory=dict)
    mismatches: list = field(default_factory=list)
    reference: str = "scipy"
    # "reference": SciPy distances + tree checks; "distances": the distances alone (a solver without parents);
    # "certificate": the optimality certificate (distances, and the tree checks where there are parents);
    # "peer verifier": the peer's own
    method: str = "reference"
    reason: str | None = None
    seconds: float | None = None  # this answer's own check (a reference solve shared by several is timed apart)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Reference:
    """Reference distances from each source (rows, INF for unreachable) and, per source, whether a
    negative cycle is reachable from it (its row then means nothing)."""

    dist: np.ndarray
    cyclic: np.ndarray


def reference_rows(graph: Graph, sources) -> Reference:
    """Exact integer distances from each source, computed from the part of the graph the sources reach.

    Raises ReferenceUnavailable where no exact reference can be computed."""
    sources = np.atleast_1d(np.asarray(sources, dtype=np.int64))
    k, n = sources.size, graph.n
    if n == 0 or k == 0:
        return Reference(np.zeros((k, n), dtype=graph.dtype), np.zeros(k, dtype=bool))
    bound = graph.path_bound
    if bound >= EXACT_LIMIT:
        raise ReferenceUnavailable(f"simple paths up to {bound:,} long exceed the 2^51 that SciPy's float64 "
                                   "reference computes exactly")
    try:
        matrix = scipy_matrix(graph)
        if not graph.has_negative_weights:  # Dijkstra from the sources never looks past what they reach
            workers = min(os.cpu_count() or 1, k) if k * graph.m >= PARALLEL_WORK else 1
            dist = (scipy_rows_parallel(graph, matrix, workers, sources, predecessors=False)[0] if workers > 1
                    else scipy_paths(graph, matrix, sources)[0])
            return Reference(np.atleast_2d(dist), np.zeros(k, dtype=bool))
        return _reference_negative(graph, matrix, sources)
    except MemoryError:
        raise ReferenceUnavailable(f"the reference ran out of memory ({k} sources x {n:,} vertices)") from None


def _reference_negative(graph: Graph, matrix, sources: np.ndarray) -> Reference:
    """Johnson on the vertices the sources reach; where that part holds a negative cycle, Johnson again
    per set of sources that reach the same vertices, to tell which sources reach the cycle."""
    from scipy.sparse.csgraph import breadth_first_order

    k = sources.size
    dist = np.full((k, graph.n), graph.inf, dtype=graph.dtype)
    cyclic = np.zeros(k, dtype=bool)
    groups: dict[bytes, tuple[np.ndarray, list[int]]] = {}
    for i, s in enumerate(sources):
        reached = np.sort(breadth_first_order(matrix, int(s), directed=True, return_predecessors=False))
        groups.setdefault(reached.tobytes(), (reached, []))[1].append(i)
    union = np.unique(np.concatenate([reached for reached, _ in groups.values()]))
    try:
        _johnson_within(graph, matrix, union, sources, np.arange(k), dist)
    except NegativeCycleError:
        for reached, members in groups.values():
            try:
                _johnson_within(graph, matrix, reached, sources[members], np.asarray(members), dist)
            except NegativeCycleError:
                cyclic[members] = True
    return Reference(dist, cyclic)


def _johnson_within(graph: Graph, matrix, vertices: np.ndarray, sources, rows, dist) -> None:
    """Distances from ``sources`` in the subgraph on ``vertices`` (closed under arcs: every vertex a source
    reaches) into ``dist[rows]``; raises NegativeCycleError when that subgraph holds one."""
    from scipy.sparse import csr_array

    if vertices.size == graph.n:
        sub = matrix
    else:  # the rows of ``vertices``, renumbered; built from the CSR arrays so explicit zeros stay arcs
        inside = np.zeros(graph.n, dtype=bool)
        inside[vertices] = True
        degree = np.diff(matrix.indptr)
        keep = np.repeat(inside, degree)
        local = np.cumsum(inside) - 1
        indptr = np.concatenate([[0], np.cumsum(degree[vertices])])
        sub = csr_array((matrix.data[keep], local[matrix.indices[keep]], indptr),
                        shape=(vertices.size, vertices.size))
    found, _ = scipy_paths(graph, sub, np.searchsorted(vertices, sources))
    dist[np.ix_(rows, vertices)] = np.atleast_2d(found)


def reference_distances(graph: Graph, sources) -> np.ndarray:
    """Exact integer distances from each source (rows), INF for unreachable; raises NegativeCycleError when
    a negative cycle is reachable from a source (one that no source reaches does not matter)."""
    sources = np.atleast_1d(np.asarray(sources, dtype=np.int64))
    ref = reference_rows(graph, sources)
    if ref.cyclic.any():
        raise NegativeCycleError(f"reference: a negative-weight cycle is reachable from source "
                                 f"{int(sources[np.argmax(ref.cyclic)])}")
    return ref.dist


def not_validated(reason: str) -> Verdict:
    return Verdict(None, {}, [], reason=f"not validated: {reason}")


def pick_method(method: str, graph: Graph, sources: int, reference_max_work: int | None = None) -> str:
    """The check that runs: ``method`` itself, or for "auto" the SciPy reference while ``sources`` x arcs stays within
    ``reference_max_work`` (None: :data:`REFERENCE_MAX_WORK`) and the certificate past it."""
    if method not in METHODS:
        raise GpuspError(f"validation method {method!r} is not one of {', '.join(METHODS)}")
    if method != "auto":
        return method
    limit = REFERENCE_MAX_WORK if reference_max_work is None else reference_max_work
    return "reference" if sources * graph.m <= limit else "certificate"


def check_rows(graph: Graph, sources, dist_rows, parent_rows, timing: dict | None = None, method: str = "auto",
               reference_max_work: int | None = None) -> list[Verdict]:
    """One verdict per source for SSSP answers ``dist_rows[i]``, ``parent_rows[i]`` from ``sources[i]`` by the check
    :func:`pick_method` picks: the reference, computed once for all of them, or the certificate per source.
    ``timing`` gets the method that ran and its seconds: ``reference_s`` (the SciPy solve), ``certificate_s`` (the
    certificates) and ``certificate_compile_s`` (its JIT compile or cache load), each only where it ran. ``parent_rows``
    None (or a row None): a solver without predecessors, whose distances alone are checked. Where "auto" picked the
    reference and none can be computed, the certificate checks the answers instead."""
    timing = {} if timing is None else timing
    if parent_rows is None:
        parent_rows = [None] * len(sources)
    fallback = None
    if pick_method(method, graph, len(sources), reference_max_work) == "reference":
        t0, unavailable = time.perf_counter(), None
        try:
            ref = reference_rows(graph, sources)
        except ReferenceUnavailable as exc:
            unavailable = str(exc)
        timing.update(method="reference", reference_s=time.perf_counter() - t0)
        if unavailable is None:
            return [_cyclic_verdict(int(s)) if ref.cyclic[i] else
                    _timed(check_sssp, graph, int(s), dist_rows[i], parent_rows[i], ref.dist[i])
                    for i, s in enumerate(sources)]
        if method == "reference":
            return [not_validated(unavailable) for _ in sources]
        fallback = f"checked by the certificate: no SciPy reference ({unavailable})"
    timing.update(method="certificate",
                  certificate_compile_s=warm(graph, dist_rows[0], parent_rows[0]) if len(sources) else 0.0)
    t0 = time.perf_counter()
    verdicts = [check_certificate(graph, int(s), dist_rows[i], parent_rows[i]) for i, s in enumerate(sources)]
    timing["certificate_s"] = time.perf_counter() - t0
    if fallback:
        for verdict in verdicts:
            verdict.reason = fallback if verdict.reason is None else f"{verdict.reason}; {fallback}"
    return verdicts


def _timed(check, *args) -> Verdict:
    t0 = time.perf_counter()
    verdict = check(*args)
    verdict.seconds = time.perf_counter() - t0
    return verdict


CERTIFIED = "none: the optimality certificate (docs/timing.md, Validation)"


def check_certificate(graph: Graph, source: int, dist, parent=None) -> Verdict:
    """The verdict on one SSSP answer by the optimality certificate, with no reference solve (``parent`` None: the
    distances alone, the tree checks skipped)."""
    t0 = time.perf_counter()
    checks, bad = certify(graph, source, dist, parent)
    return Verdict(all(checks.values()), checks, bad[:MAX_REPORTED], reference=CERTIFIED, method="certificate",
                   reason=NO_PARENTS_CERTIFIED if parent is None else None, seconds=time.perf_counter() - t0)


def _cyclic_verdict(source: int) -> Verdict:
    why = (f"a negative-weight cycle is reachable from source {source}: its shortest paths are undefined, yet "
           "the solver returned distances")
    return Verdict(False, {"no_reachable_negative_cycle": False}, [why])


def check_sssp(graph: Graph, source: int, dist, parent, reference=None) -> Verdict:
    """Validate one SSSP answer (distances exactly, parents with the five tree checks; ``parent`` None: the distances
    alone) against the reference row ``reference`` (None: :func:`check_rows` checks it by the default rule)."""
    if reference is None:
        return check_rows(graph, [source], [dist], [parent])[0]
    if parent is None:
        return check_distances(graph, dist, reference)
    dist = np.asarray(dist)
    parent = np.asarray(parent)
    inf = graph.inf
    n = graph.n
    checks, bad = {}, []
    if dist.shape != (n,) or parent.shape != (n,):
        return Verdict(False, {"shape": False}, [f"dist {dist.shape} / parent {parent.shape}, expected ({n},)"])

    wrong = np.flatnonzero(dist != reference)
    checks["distances"] = wrong.size == 0
    bad += [f"dist[{v}] = {int(dist[v])}, reference {int(reference[v])}" for v in wrong[:MAX_REPORTED]]

    reach = dist != inf
    has_parent = parent_spans(parent, parent, reach, source, checks, bad)
    if has_parent is None:
        return Verdict(False, checks, bad[:MAX_REPORTED])

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


NO_PARENTS = "tree checks skipped: the solver computes no predecessors (distances compared exactly)"
NO_PARENTS_CERTIFIED = "tree checks skipped: the solver computes no predecessors (distances checked by the certificate)"


def check_distances(graph: Graph, dist, reference) -> Verdict:
    """The verdict on the distances of a solver that computes no predecessors (Gunrock's SSSP): exact equality with
    the reference row; the tree checks are skipped, and the verdict says so."""
    dist = np.asarray(dist)
    if dist.shape != (graph.n,):
        return Verdict(False, {"shape": False}, [f"dist {dist.shape}, expected ({graph.n},)"], method="distances",
                       reason=NO_PARENTS)
    wrong = np.flatnonzero(dist != reference)
    bad = [f"dist[{v}] = {int(dist[v])}, reference {int(reference[v])}" for v in wrong[:MAX_REPORTED]]
    return Verdict(wrong.size == 0, {"distances": wrong.size == 0}, bad, method="distances", reason=NO_PARENTS)


def peer_verdict(result) -> Verdict:
    """The verdict of a peer's own verifier for one source (from the counters the harness merged)."""
    ok = bool(result.counters.get("peer_verified"))
    return Verdict(ok, {"peer_verifier": ok}, list(result.counters.get("peer_mismatches") or [])[:MAX_REPORTED],
                   reference=f"{result.solver}'s own verifier (GAPBS: a serial Dijkstra inside the binary, "
                             "distances only: no parents to check)",
                   method="peer verifier")


def check_apsp(graph: Graph, dist, parent, rows=None, timing: dict | None = None, method: str = "auto",
               reference_max_work: int | None = None, sources=None) -> Verdict:
    """Validate APSP rows (all when ``rows`` is None) as SSSP answers from each row's source (the rows are the
    sources of :func:`check_rows`' rule; ``sources``: the source of each row of a sampled answer, None: row s is
    from source s); a row whose source reaches a negative cycle fails (its answer is undefined), the other rows are
    checked."""
    rows = np.arange(len(dist) if sources is not None else graph.n) if rows is None else np.asarray(rows)
    of = rows if sources is None else np.asarray(sources)[rows]
    timing = {} if timing is None else timing
    verdicts = check_rows(graph, of, [dist[r] for r in rows], [parent[r] for r in rows], timing, method,
                          reference_max_work)
    checks, bad = {}, []
    for s, v in zip(of, verdicts):
        for k, good in v.checks.items():
            checks[k] = checks.get(k, True) and good
        bad += [f"row {int(s)}: {m}" for m in v.mismatches[:MAX_REPORTED - len(bad)]]
    checks["rows_checked"] = int(len(rows))
    ok = overall(verdicts)
    reason = next((v.reason for v in verdicts if v.ok is None), None) if ok is None else None
    certified = timing.get("method") == "certificate"
    return Verdict(ok, checks, bad[:MAX_REPORTED], reference=CERTIFIED if certified else "scipy",
                   method=timing.get("method", "reference"), reason=reason,
                   seconds=sum(v.seconds or 0.0 for v in verdicts) + timing.get("reference_s", 0.0))


def overall(verdicts) -> bool | None:
    """One verdict for several: False if any failed, else None if any was not validated, else True."""
    oks = [v.ok for v in verdicts]
    if any(ok is False for ok in oks):
        return False
    return None if any(ok is None for ok in oks) else True


def sample_rows(n: int, count: int, seed: int) -> np.ndarray:
    """A seeded sample of APSP rows to validate (all rows when count >= n)."""
    if count >= n:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size=count, replace=False))


@dataclass
class Answer:
    """An answer file's contents, checked against its graph: row i holds the answer from ``sources[i]``
    (a peer's answer has its verifier's verdicts instead of distances; ``parent`` is None where the solver computes
    no predecessors)."""

    sources: np.ndarray
    dist: np.ndarray
    parent: np.ndarray | None
    peer_verdicts: list | None = None


ANSWER_KEYS = ("sources", "dist", "parent")
ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")  # an archive with members, an empty archive
# what NumPy and zipfile raise on a truncated or corrupt archive
_UNREADABLE = (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zlib.error, struct.error)


def read_answer(path, graph: Graph) -> Answer:
    """Read ``gpusp solve --answer``'s .npz and check that it is an answer of ``graph``: the arrays, their
    dtypes and shapes, the sources' range, the unreachable marker and (when stored) the graph's checksum.
    Raises AnswerFormatError naming the file."""

    def bad(problem: str) -> AnswerFormatError:
        return AnswerFormatError(f"{path}: {problem}")

    try:
        with open(path, "rb") as fh:
            magic = fh.read(4)
    except OSError as exc:
        raise bad(exc.strerror or str(exc)) from None
    if magic not in ZIP_MAGIC:
        raise bad("empty file, not a gpusp answer" if not magic else
                  "not an .npz archive (a gpusp answer holds the arrays sources, dist, parent)")
    try:
        with np.load(path, allow_pickle=False) as archive:
            missing = [key for key in ANSWER_KEYS if key not in archive.files]
            if missing:
                raise bad(f"not a gpusp answer: no {', '.join(missing)} (it holds "
                          f"{', '.join(archive.files) or 'nothing'})")
            arrays = {key: archive[key] for key in archive.files}
    except AnswerFormatError:
        raise
    except _UNREADABLE as exc:
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise bad(f"not a readable .npz archive (truncated or corrupt?): {why}") from None
    sources, dist, parent = (arrays[key] for key in ANSWER_KEYS)
    n = graph.n
    if sources.ndim != 1 or not _integers(sources):
        raise bad(f"sources are {sources.dtype} of shape {sources.shape}, not a list of vertex ids")
    if "graph_checksum" in arrays and str(arrays["graph_checksum"]) != graph.checksum():
        raise bad(f"an answer of another graph (checksum {str(arrays['graph_checksum'])[:12]}, "
                  f"{graph.name}'s is {graph.checksum()[:12]})")
    outside = sources[(sources < 0) | (sources >= n)]
    if outside.size:
        raise bad(f"source {int(outside[0])} out of range 0..{n - 1}: an answer of another graph")
    k = sources.size
    if "peer_verdicts" in arrays:
        return Answer(sources, dist, parent, _peer_verdicts(arrays["peer_verdicts"], k, bad))
    if k == 0:  # a skipped run: nothing to check
        return Answer(sources, dist, parent)
    without_parents = "no_parents" in arrays  # a solver without predecessors (gunrock_sssp): distances alone
    if without_parents and parent.shape != (k, 0):
        raise bad(f"no_parents is set, yet parent has shape {parent.shape}, not ({k}, 0)")
    for name, array in (("dist", dist),) if without_parents else (("dist", dist), ("parent", parent)):
        if array.shape != (k, n):
            raise bad(f"{name} has shape {array.shape}; {k} source(s) on this graph (n={n:,}) need ({k}, {n}): "
                      "an answer of another graph?")
        if not _integers(array):
            raise bad(f"{name} holds {array.dtype}, not integers")
    if "inf" in arrays:
        inf = arrays["inf"]
        if inf.shape != () or not _integers(inf) or int(inf) != graph.inf:
            raise bad(f"unreachable marker {inf} is not this graph's {graph.inf} ({graph.dtype} distances): "
                      "an answer of another graph?")
    return Answer(sources, dist, None if without_parents else parent)


def _integers(array: np.ndarray) -> bool:
    return np.issubdtype(array.dtype, np.integer)


def _peer_verdicts(stored: np.ndarray, k: int, bad) -> list:
    """A peer answer's verdicts: a JSON list of one {"ok": bool, ...} per source."""
    try:
        verdicts = json.loads(str(stored))
    except ValueError as exc:
        raise bad(f"peer_verdicts is not JSON ({exc})") from None
    if (not isinstance(verdicts, list) or len(verdicts) != k
            or not all(isinstance(v, dict) and isinstance(v.get("ok"), bool) for v in verdicts)):
        raise bad(f"peer_verdicts must be a list of {k} verdicts, each with ok true or false")
    return verdicts


def check_answer(graph: Graph, answer, method: str = "auto", reference_max_work: int | None = None) -> dict:
    """Check a saved answer (``gpusp solve --answer``'s .npz) by :func:`check_rows`' rule: the verdict as a JSON-ready
    dict (``ok`` None when there was nothing to check, or no reference: ``status`` says which; a peer's
    answer passes on its own verifier's verdicts)."""
    ans = read_answer(answer, graph)
    out = {"graph_checksum": graph.checksum(), "answer": str(answer)}
    sources = [int(s) for s in ans.sources]
    if ans.peer_verdicts is not None and sources:
        return {**out, "ok": all(v["ok"] for v in ans.peer_verdicts), "sources": sources,
                "verdicts": ans.peer_verdicts, "method": "peer verifier", "reference_s": 0.0, "validation_s": 0.0}
    if not sources:
        return {**out, "ok": None, "sources": [], "verdicts": [],
                "status": "not validated: the run was skipped (no answer)"}
    t0, timing = time.perf_counter(), {}
    verdicts = check_rows(graph, ans.sources, ans.dist, ans.parent, timing, method, reference_max_work)
    ok = overall(verdicts)
    status = {"status": next(v.reason for v in verdicts if v.ok is None)} if ok is None else {}
    return {**out, "ok": ok, **status, "sources": sources, "verdicts": [v.to_dict() for v in verdicts],
            **timing, "validation_s": time.perf_counter() - t0}


def answer_report(out: dict) -> tuple[str, str | None]:
    """What ``gpusp validate`` prints for :func:`check_answer`'s verdict: a stdout line and, when the
    answer failed, a stderr line."""
    if out["ok"] is None:
        return f"validation: {out['status']}", None
    peer = out.get("method") == "peer verifier"
    line = (f"validation {'ok' if out['ok'] else 'FAILED'}{' (peer verifier)' if peer else ''}: "
            f"{len(out['sources'])} sources" + ("" if peer else f" in {out['validation_s']:.2f} s"))
    if out["ok"]:
        return line, None
    bad = next(v for v in out["verdicts"] if not v["ok"])
    return line, f"gpusp: error: {'peer verifier' if peer else 'validation'} failed: {bad['mismatches'][:3]}"
