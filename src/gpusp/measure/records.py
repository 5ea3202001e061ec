"""Benchmark records: one JSON document per (solver, parameters, graph) run, asv-style.

A record keeps every raw sample with its median and IQR, the separately measured JIT, upload and
download costs, the counters, the validation verdict per source, and the provenance needed to trust
or reject it later: graph identity and checksum, seeds, machine, GPU, driver, versions, git commit and
a hash of the solver's code (the aggregate refuses to mix code versions of one solver).
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import os
import subprocess
from pathlib import Path

import numpy as np

from .._version import __version__
from ..atomic import atomic_open
from ..device import device_info
from .codehash import code_hash

SCHEMA_VERSION = 1


@functools.cache
def git_commit() -> str:
    """The checkout's commit (``GPUSP_COMMIT`` overrides, for copies without .git), '+dirty' if edited."""
    if os.environ.get("GPUSP_COMMIT"):
        return os.environ["GPUSP_COMMIT"]
    here = Path(__file__).resolve().parents[1]  # the gpusp package folder
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True,
                                timeout=5, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "."], cwd=here, capture_output=True,
                               text=True, timeout=5).stdout.strip()
        return commit + ("+dirty" if dirty else "")
    except Exception:
        return "unknown"


def run_entry(result, verdict=None) -> dict:
    """One source's measurements (and its verdict) as a JSON-ready dict."""
    return {
        "source": result.source,
        "timings": result.timings.to_dict(),
        "counters": result.counters,
        "reachable": (int(np.count_nonzero(result.reachable)) if result.dist is not None
                      else result.counters.get("reachable")),
        "validation": verdict.to_dict() if verdict is not None else None,
    }


def make_record(*, spec, params: dict, graph, graph_path=None, runs: list, trials: int, warmup: int,
                status: str = "ok", reason: str | None = None, extra: dict | None = None) -> dict:
    """Assemble a record of solver ``spec`` (its registry entry); ``status`` is ok, failed-validation,
    negative-cycle, skipped or error."""
    medians = [r["timings"]["median_ms"] for r in runs]
    verdicts = [r["validation"]["ok"] for r in runs if r.get("validation")]
    return {
        "schema": SCHEMA_VERSION,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "solver": spec.name,
        "problem": spec.problem,
        "family": spec.family,
        "variant": spec.variant,
        "device": spec.device,
        "paper": spec.paper,
        "params": params,
        "status": status,
        "reason": reason,
        "graph": {
            "name": graph.name,
            "path": str(graph_path) if graph_path else None,
            "n": graph.n,
            "m": graph.m,
            "weight_kind": graph.weight_kind,
            "weight_dtype": str(graph.dtype),
            "checksum": graph.checksum(),
            "meta": graph.meta,
        },
        "trials": trials,
        "warmup": warmup,
        "runs": runs,
        "summary": {
            "sources": len(runs),
            "median_of_medians_ms": float(np.median(medians)) if medians else None,
            "validated": bool(verdicts) and all(verdicts),
            "validation_checked": len(verdicts),
        },
        "machine": device_info(),
        "gpusp_version": __version__,
        "git_commit": git_commit(),
        "code_hash": code_hash(spec),
        **(extra or {}),
    }


def write_record(record: dict, path) -> None:
    """Write a record as JSON atomically."""
    with atomic_open(path, "w") as fh:
        json.dump(record, fh, indent=1, default=_json_default)
        fh.write("\n")


def _json_default(obj):
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")
