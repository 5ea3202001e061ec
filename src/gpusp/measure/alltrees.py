"""Every shortest-path tree of a graph, or an origin-destination table, without the K x n answer on the host:
``gpusp solve --all-sources`` / ``--targets`` (a :class:`~gpusp.measure.job.SolveJob` with ``all_sources`` or
``targets``). A batched solver with a ``sweep`` (``multisource_sssp``, ``phast_gpu``) solves the sources a batch at a
time (``sweep_batch``, ``dist_rows``: its batch and where it keeps each vertex) and
:mod:`gpusp.solvers.multisource.reduce` folds each batch on the device into per-source eccentricity, reach, sum and
histogram and the targets' distances; a seeded sample of sources is solved on the CPU and every quantity recomputed
for it. The results go to one .npz (``--summary``) and the record. Design: docs/solvers/multisource.md, "All trees".
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..atomic import atomic_path
from ..data.graph import Graph
from ..device import require_cuda
from ..errors import SolverError
from ..ranks import gpu_ids
from ..solvers import registry
from .alltrees_ranks import sweep_ranks
from .alltrees_slice import QUANTITIES, SliceSweep
from .harness import Timings, host_compile_s
from .records import make_record, write_record
from .validate import _UNREADABLE, ReferenceUnavailable, reference_rows, sample_rows

MAX_REPORTED = 10  # mismatches kept in a verdict


@dataclass
class Sweep:
    """What a sweep measured: the reductions (``QUANTITIES``, rows in the order of ``sources``), the histogram's bin
    width, timings (``timing``: seconds and milliseconds by phase), the solver's counters and the sampled verdict."""

    sources: np.ndarray
    targets: np.ndarray
    width: int
    bound: int
    values: dict
    timing: dict
    counters: dict
    timings: Timings
    verdict: dict | None = None


def sweeping_solvers() -> list[str]:
    """Registered solvers that sweep every tree (``SolverSpec.sweeps``: batched, with a ``sweep``)."""
    return [spec.name for spec in registry.SPECS if spec.sweeps]


def histogram_width(graph: Graph) -> tuple[int, int]:
    """(bin width, the bound it spreads over HIST_BINS - 1 bins): from the vertex of most arcs x, the longest finite
    distance from x plus the longest to x, which bounds every d(s, t) with s reaching x and x reaching t (all of them
    on a strongly connected graph); a distance past it falls into the last, open bin. Where SciPy cannot compute
    exact distances, the graph's proven bound on a simple path."""
    from ..solvers.multisource.reduce import HIST_BINS

    bound = 0
    if graph.m:
        hub = int(np.argmax(graph.out_degree() + np.bincount(graph.indices, minlength=graph.n)))
        try:
            longest = [row[row != graph.inf].max() for row in
                       (reference_rows(g, [hub]).dist[0] for g in (graph, graph.reverse()))]
            bound = int(longest[0]) + int(longest[1])
        except ReferenceUnavailable:
            bound = int(graph.path_bound)
    return max(1, math.ceil((bound + 1) / (HIST_BINS - 1))), bound


def sweep(graph: Graph, spec, params: dict, sources, targets=(), *, trials: int = 1, warmup: int = 1,
          validate: int = 0, seed: int = 0) -> Sweep:
    """Solve from every one of ``sources`` (duplicates allowed) with solver ``spec`` (parameters resolved), reduce
    each batch on the device, ``trials`` timed sweeps after ``warmup`` untimed batches (the first holds the JIT);
    then check ``validate`` seeded sources (0: none) against SciPy's rows. ``params["gpus"]`` > 1: the sources split
    over that many GPUs of this host (:func:`~gpusp.measure.alltrees_ranks.sweep_ranks`), the solver built once here."""
    if not spec.sweeps:
        raise SolverError(f"{spec.name} cannot sweep every tree (--all-sources, --targets): use one of "
                          f"{', '.join(sweeping_solvers())}")
    if graph.has_negative_weights:  # before the solver's potentials and preprocessing are paid for
        raise SolverError(f"{spec.name}: every tree and origin-destination tables take non-negative weights "
                          "(Johnson's reweighting maps back rows, not the reductions)")
    reason = spec.why_not(graph.n, graph.m, itemsize=graph.dtype.itemsize, params=params)
    if reason:
        raise SolverError(reason)
    sources = np.asarray(sources, dtype=np.int64).reshape(-1)
    targets = np.asarray(targets, dtype=np.int64).reshape(-1)
    for what, ids in (("source", sources), ("target", targets)):
        bad = ids[(ids < 0) | (ids >= graph.n)]
        if bad.size:
            raise SolverError(f"{what} {int(bad[0])} out of range 0..{graph.n - 1}")
    if trials < 1 or warmup < 0:
        raise SolverError("trials must be >= 1 and warmup >= 0")
    gpus = int(params.get("gpus", 1))
    if gpus > max(1, sources.size):
        raise SolverError(f"{spec.name}: gpus={gpus} splits {sources.size} sources, and a GPU without sources would "
                          f"idle: use gpus <= {max(1, sources.size)}")
    require_cuda(spec.name)

    timing = {}
    t0 = time.perf_counter()
    solver = spec.load()(graph, **{key: value for key, value in params.items() if key != "gpus"})
    host_jit = host_compile_s(solver)  # the solver's host functions compiled: compile, not set-up
    timing["setup_s"] = time.perf_counter() - t0 - host_jit
    t0 = time.perf_counter()
    width, bound = histogram_width(graph)
    timing["bins_s"] = time.perf_counter() - t0
    if gpus > 1:
        part = sweep_ranks(solver, sources, targets, width, gpus, trials=trials, warmup=warmup, what=spec.name)
    else:
        one = SliceSweep(solver, sources, targets, width)
        one.prepare(warmup)
        part = one.measure(trials)
    timing["setup_s"] += part["order_s"]  # the order of the sources and what the solver prepares for them: set-up
    timing["preprocess_s"] = timing["setup_s"] + timing["bins_s"]
    k, samples = sources.size, part["sweep_ms"]
    median_ms = float(np.median(samples))
    compile_s = part["compile_s"] + host_jit
    timing.update(h2d_ms=part["h2d_ms"], compile_s=compile_s, warmup_s=part["warmup_s"], sweep_ms=samples,
                  reduce_ms=part["reduce_ms"], d2h_ms=part["d2h_ms"], per_tree_ms=median_ms / k,
                  end_to_end_s=timing["preprocess_s"] + (part["h2d_ms"] + median_ms + part["d2h_ms"]) / 1e3,
                  **part.get("timing", {}))
    timings = Timings(samples_ms=[ms / k for ms in samples], warmup_ms=[w * 1e3 for w in part["warmup_s"]],
                      compile_s=compile_s, h2d_ms=part["h2d_ms"], d2h_ms=part["d2h_ms"] / k,
                      clock=part["clock"], batch_sources=k, batch_ms=samples)
    counters = {"gpus": 1, "gpu_ids": gpu_ids()[:1], **part["counters"], "batch_sources": k,
                "preprocess_s": timing["preprocess_s"]}
    out = Sweep(sources, targets, width, bound, part["values"], timing, counters, timings)
    if validate:
        out.verdict = check_sample(graph, out, validate, seed)
    return out


def check_sample(graph: Graph, result: Sweep, count: int, seed: int) -> dict:
    """The verdict of ``count`` seeded sources of ``result`` solved exactly on the CPU (SciPy), every reduction
    recomputed from their rows (:func:`~gpusp.solvers.multisource.reduce.reduce_rows`) and compared exactly."""
    from ..solvers.multisource.reduce import reduce_rows

    t0 = time.perf_counter()
    picked = sample_rows(result.sources.size, count, seed)
    verdict = {"ok": None, "method": "sampled reference", "reference": "scipy", "rows": picked.tolist(),
               "sources": result.sources[picked].tolist(), "checks": {}, "mismatches": [], "reason": None}
    try:
        ref = reference_rows(graph, result.sources[picked]).dist
    except ReferenceUnavailable as exc:
        verdict["reason"] = f"not validated: {exc}"
        return verdict
    expected = reduce_rows(ref, graph.inf, result.width, result.targets)
    for key in QUANTITIES:
        got = result.values[key][picked]
        same = np.all(got.reshape(picked.size, -1) == expected[key].reshape(picked.size, -1), axis=1)
        verdict["checks"][key] = bool(same.all())
        for i in np.flatnonzero(~same)[:MAX_REPORTED - len(verdict["mismatches"])]:
            verdict["mismatches"].append(f"source {int(result.sources[picked[i]])}: {key} {got[i].tolist()} "
                                         f"!= {expected[key][i].tolist()}")
    verdict["ok"] = all(verdict["checks"].values())
    verdict["seconds"] = time.perf_counter() - t0
    return verdict


def is_summary(path) -> bool:
    """Whether ``path`` is an .npz that holds a sweep's reductions (``eccentricity``) rather than rows."""
    try:
        z = np.load(path)
    except _UNREADABLE:
        return False
    if not hasattr(z, "files"):  # a bare .npy array
        return False
    with z:
        return "eccentricity" in z.files


def check_summary(graph: Graph, path, count: int = 16, seed: int = 0) -> dict:
    """``gpusp validate`` of a summary file: :func:`check_sample` on ``count`` seeded sources of it, as
    :func:`~gpusp.measure.validate.check_answer`'s verdict dict."""
    from .validate import AnswerFormatError

    with np.load(path) as z:
        if str(z["graph_checksum"]) != graph.checksum():
            raise AnswerFormatError(f"{path}: a summary of another graph (checksum {str(z['graph_checksum'])[:16]}, "
                                    f"this graph's {graph.checksum()[:16]})")
        result = Sweep(z["sources"], z["targets"], int(z["bin_width"]), 0, {k: z[k] for k in QUANTITIES}, {}, {},
                       None)
    verdict = check_sample(graph, result, count, seed)
    out = {"graph_checksum": graph.checksum(), "answer": str(path), "ok": verdict["ok"], "sources": verdict["sources"],
           "verdicts": [verdict], "method": verdict["method"], "validation_s": verdict.get("seconds", 0.0)}
    return {**out, "status": verdict["reason"]} if verdict["ok"] is None else out


def write_summary(path, graph: Graph, result: Sweep, solver: str, params: dict) -> None:
    """The .npz (atomically): per source (rows in the order of ``sources``) eccentricity, reach (the vertices
    reached, itself included), total (the sum of their distances), histogram (HIST_BINS counts: bin i holds
    distances in [bin_edges[i], bin_edges[i] + bin_width), the last bin every distance from bin_edges[-1] on), and
    od (sources x targets, ``inf`` where unreachable); the graph's checksum and the timings as JSON."""
    from ..solvers.multisource.reduce import HIST_BINS

    meta = {"solver": solver, "params": params, "graph": graph.name, "timing": result.timing,
            "bin_bound": result.bound, "verdict": result.verdict}
    with atomic_path(path, suffix=".npz") as tmp:
        np.savez(tmp, sources=result.sources, targets=result.targets, **{k: result.values[k] for k in QUANTITIES},
                 bin_width=np.int64(result.width), bin_edges=np.arange(HIST_BINS, dtype=np.int64) * result.width,
                 inf=graph.inf, graph_checksum=graph.checksum(), meta=json.dumps(meta, default=float))


def shape(result: Sweep) -> dict:
    """The record's ``all_trees`` entry: how many sources and targets, the table's shape, the bins and timings."""
    return {"sources": int(result.sources.size), "targets": int(result.targets.size),
            "table": [int(result.sources.size), int(result.targets.size)], "bin_width": result.width,
            "bin_bound": result.bound, "timing": result.timing}


def run_sweep_job(job, graph: Graph, spec, params: dict, sources, staged: dict, labels: dict):
    """A :class:`~gpusp.measure.job.SolveJob` with ``all_sources`` or ``targets``: the sweep, its summary file and
    record (``staged``: where they are written); (status, reason, record, lines, validation seconds), the fields of
    a :class:`~gpusp.measure.job.JobOutcome`."""
    t0 = time.perf_counter()
    result = sweep(graph, spec, params, sources, job_targets(job), trials=job.trials, warmup=job.warmup,
                   validate=job.validate_rows if job.validate else 0, seed=job.seed)
    status, reason, verdict = "ok", None, result.verdict
    if verdict and verdict["ok"] is False:
        status, reason = "failed-validation", "; ".join(verdict["mismatches"][:3])
    elif verdict and verdict["ok"] is None:
        reason = verdict["reason"]
    if staged.get("summary"):
        write_summary(staged["summary"], graph, result, spec.name, params)
    run = {"source": None, "timings": result.timings.to_dict(), "counters": result.counters, "reachable": None,
           "validation": verdict}
    record = make_record(spec=spec, params=params, graph=graph, graph_path=None if isinstance(job.graph, Graph)
                         else job.graph, runs=[run], trials=job.trials, warmup=job.warmup, status=status,
                         reason=reason, extra={"wall_s": time.perf_counter() - t0,
                                               "validation_s": verdict.get("seconds") if verdict else None,
                                               "all_trees": shape(result), **labels})
    if staged.get("record"):
        write_record(record, staged["record"])
    t, k = result.timing, result.sources.size
    gpus = result.counters.get("gpus", 1)
    over = f" over {gpus} GPUs (the slowest rank's sweep)" if gpus > 1 else ""
    lines = [(f"{spec.name} {k} trees{f' x {result.targets.size} targets' if result.targets.size else ''}{over}: sweep "
             f"median {float(np.median(t['sweep_ms'])):.3f} ms ({t['per_tree_ms']:.5f} ms a tree, "
             f"{len(t['sweep_ms'])} trials, {result.timings.clock}), preprocessing {t['preprocess_s']:.2f} s "
             f"(solver set-up {t['setup_s']:.2f} s, histogram bound {t['bins_s']:.2f} s), compile {t['compile_s']:.2f} "
             f"s, h2d {t['h2d_ms']:.2f} ms, d2h {t['d2h_ms']:.2f} ms, all trees end to end {t['end_to_end_s']:.3f} s "
             f"(compile apart), {result.counters}")]
    if job.summary:
        lines.append(f"wrote {job.summary}: {k} sources x {result.targets.size} targets, bins of {result.width}")
    if verdict:
        said = "ok" if verdict["ok"] else (verdict["reason"] or f"failed: {reason}")
        lines.append(f"validation: {said} ({len(verdict['rows'])} sampled sources, "
                     f"{verdict.get('seconds', 0.0):.2f} s)")
    return status, reason, record, lines, verdict.get("seconds") if verdict else None


def job_targets(job) -> np.ndarray:
    """The job's targets: a list, or a file of one vertex id per line (as sources files); none: empty."""
    from .sources import read_sources

    if job.targets is None:
        return np.zeros(0, dtype=np.int64)
    ids = read_sources(job.targets) if isinstance(job.targets, (str, Path)) else job.targets
    return np.asarray(ids, dtype=np.int64).reshape(-1)
