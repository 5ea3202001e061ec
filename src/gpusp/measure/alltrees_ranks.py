"""Every tree over the GPUs of one host (``gpusp solve --all-sources --param gpus=P``): the sources split into P
contiguous slices of near-equal size, one :class:`~gpusp.ranks.Ranks` worker process per GPU sweeping its slice with
the one-GPU machinery (:class:`~gpusp.measure.alltrees_slice.SliceSweep`) on a copy of the solver built once in the
parent, the reductions concatenated back in source order: the same values as one process. Design:
docs/solvers/multisource.md, "All trees".
"""

from __future__ import annotations

import os
import time

import numpy as np

from ..ranks import Ranks
from .alltrees_slice import QUANTITIES, SliceSweep

# counters that add up over the ranks' slices; the others are the slowest rank's
ADDITIVE = ("batches", "launches", "iterations", "tree_levels", "buckets", "items", "relaxations", "settled",
            "barriers", "upward_ms", "space_copy_ms")


def slice_bounds(k: int, size: int) -> list[int]:
    """Where the ``size`` contiguous slices of ``k`` sources start (and the last ends): sizes differ by one at most."""
    return [k * rank // size for rank in range(size + 1)]


def host_cores() -> int:
    """The cores this process may run on (a scheduler's allotment where the OS says it), else every core."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def rank_sweep(rank: int, size: int, solver, sources, targets, width: int) -> SliceSweep:
    """Rank ``rank``'s share (run in its worker): its slice of ``sources`` swept by the solver shipped from the
    parent. Host threads left to the solver's choice (``threads=0``: phast_gpu's upward searches) are the host's
    cores divided among the ranks rather than every core each."""
    bounds = slice_bounds(len(sources), size)
    if solver.params.get("threads") == 0 and hasattr(solver, "threads"):
        solver.threads = max(1, host_cores() // size)
    return SliceSweep(solver, sources[bounds[rank]:bounds[rank + 1]], targets, width)


def sweep_ranks(solver, sources, targets, width: int, gpus: int, *, trials: int, warmup: int,
                what: str = "every tree") -> dict:
    """:meth:`SliceSweep.measure`'s dict for ``sources`` split over ``gpus`` ranks: every rank prepares (order,
    upload, warm-up) before any times a trial, so the ranks' trials run together; ``timing`` adds each rank's
    figures, the parent's wall around what it makes for every rank (a solver's ``share_with_ranks``), around the
    ranks' start and around their trials, and the slices' bounds."""
    bounds = slice_bounds(len(sources), gpus)
    t0 = time.perf_counter()
    share = getattr(solver, "share_with_ranks", None)
    if share is not None:  # what every rank would make alike (phast_gpu's upward spaces), made once and shipped
        share(max(np.diff(bounds)))
    shared_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    with Ranks(gpus, rank_sweep, solver, sources, targets, width, what=f"{what} over gpus={gpus}") as ranks:
        ranks.call("prepare", warmup)
        prepared_s = time.perf_counter() - t0
        t1 = time.perf_counter()
        parts = ranks.call("measure", trials)
        measured_s = time.perf_counter() - t1
    out = merge(parts, ranks.gpus, bounds, prepared_s, measured_s)
    out["timing"]["ranks_shared_s"] = shared_s
    return out


def merge(parts: list[dict], gpu_ids: list[str], bounds: list[int], prepared_s: float, measured_s: float) -> dict:
    """The ranks' dicts (in rank order) as one: values concatenated in source order; a trial's sweep the slowest
    rank's (and its reduction time with it); upload, download, compile and order the slowest rank's; each rank's
    figures under ``timing["ranks"]``."""
    trials = len(parts[0]["sweep_ms"])
    slowest = [max(range(len(parts)), key=lambda r: parts[r]["sweep_ms"][t]) for t in range(trials)]
    by_median = max(range(len(parts)), key=lambda r: float(np.median(parts[r]["sweep_ms"])))
    counters = dict(parts[by_median]["counters"])
    for key in ADDITIVE:
        if key in counters:
            counters[key] = sum(p["counters"][key] for p in parts)
    counters.update(gpus=len(parts), gpu_ids=list(gpu_ids))
    ranks = [{"rank": r, "gpu": gpu_ids[r], "first": bounds[r], "sources": bounds[r + 1] - bounds[r],
              "sweep_ms": p["sweep_ms"], "per_tree_ms": float(np.median(p["sweep_ms"])) / (bounds[r + 1] - bounds[r]),
              "compile_s": p["compile_s"], "order_s": p["order_s"], "h2d_ms": p["h2d_ms"], "d2h_ms": p["d2h_ms"],
              "counters": p["counters"]} for r, p in enumerate(parts)]
    return {"values": {key: np.concatenate([p["values"][key] for p in parts]) for key in QUANTITIES},
            "order_s": max(p["order_s"] for p in parts), "h2d_ms": max(p["h2d_ms"] for p in parts),
            "compile_s": max(p["compile_s"] for p in parts),
            "warmup_s": [max(w) for w in zip(*(p["warmup_s"] for p in parts))],
            "sweep_ms": [parts[r]["sweep_ms"][t] for t, r in enumerate(slowest)],
            "reduce_ms": [parts[r]["reduce_ms"][t] for t, r in enumerate(slowest)],
            "d2h_ms": max(p["d2h_ms"] for p in parts), "counters": counters, "clock": parts[0]["clock"],
            "timing": {"gpus": len(parts), "ranks": ranks, "ranks_prepare_s": prepared_s,
                       "ranks_measure_s": measured_s}}
