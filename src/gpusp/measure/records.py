"""Benchmark records: one JSON document per (solver, parameters, graph) run, asv-style.

A record keeps every raw sample with its median and IQR, the separately measured JIT, upload and
download costs, the end-to-end samples where they were asked for (allocation to download, paper 000's
window), the counters, the validation verdict per source, and the provenance needed to trust
or reject it later: graph identity and checksum, seeds, the machine (every GPU the job ran on, driver, CUDA, the
host CPU's model and cores, the versions of NumPy, SciPy, Numba), for an external peer the build it ran (commit,
compiler), git commit and a hash of the solver's code (the aggregate refuses to mix code versions of one solver,
or hardware).

Records and ``gpusp validate``'s verdicts are read back by :func:`read_record` and :func:`read_verdict`,
the one place that decides whether a JSON file is one (its schema version, its keys and their types):
every error names the file.
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
from ..errors import GpuspError
from ..ranks import gpu_ids, gpu_names
from .codehash import code_hash

SCHEMA_VERSION = 1
STATUSES = ("ok", "failed-validation", "negative-cycle", "skipped", "error")


class RecordFormatError(GpuspError, ValueError):
    """A file given as a record (or a verdict) is not one this gpusp reads."""


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
                end_to_end: int = 0, status: str = "ok", reason: str | None = None, extra: dict | None = None) -> dict:
    """Assemble a record of solver ``spec`` (its registry entry); ``status`` is ok, failed-validation,
    negative-cycle, skipped or error. ``end_to_end``: the end-to-end runs asked for per source (their samples are
    each run's ``timings.end_to_end_ms``, see :mod:`gpusp.measure.harness`)."""
    medians = [r["timings"]["median_ms"] for r in runs]
    checked = [r["validation"] for r in runs if r.get("validation")]
    verdicts = [v["ok"] for v in checked]
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
        "end_to_end": end_to_end,
        "runs": runs,
        "summary": {
            "sources": len(runs),
            "median_of_medians_ms": float(np.median(medians)) if medians else None,
            "validated": bool(verdicts) and all(ok is True for ok in verdicts),
            "validation_checked": len(verdicts),
            "not_validated": next((v.get("reason") for v in checked if v["ok"] is None), None),
        },
        "machine": {**device_info(), "gpus": job_gpus(spec, runs)},
        "peer": peer_info(spec, runs) if spec.peer else None,
        "gpusp_version": __version__,
        "git_commit": git_commit(),
        "code_hash": code_hash(spec),
        **(extra or {}),
    }


def job_gpus(spec, runs: list) -> list[dict]:
    """Every GPU a job ran on, as ``{"id", "name"}`` (``machine.gpu`` keeps the first one's model): the ranks' GPUs
    that a multi-GPU solver names in its runs' counters (``gpu_ids``), else this process's one GPU; none for a CPU
    solver."""
    if spec.device != "gpu":
        return []
    named = next((r["counters"]["gpu_ids"] for r in runs if (r.get("counters") or {}).get("gpu_ids")), None)
    ids = [str(i) for i in named] if named else (gpu_ids() or ["0"])[:1]
    return [{"id": gpu, "name": name} for gpu, name in zip(ids, gpu_names(ids))]


BUILD_KEYS = ("cxx", "cxx_version", "cxx_flags", "nvcc", "nvcc_version", "nvcc_flags", "arch", "device_fix",
              "driver_sha256", "compile_s")  # what a record keeps of its peer's BUILD.json


def peer_info(spec, runs: list) -> dict:
    """Which build of an external peer (GAPBS, Gunrock) a record measured: the commit it ran (its runs' counters
    say, e.g. ``gapbs_commit``), the pinned commit, and the compiler of the build in use when one is found (for a
    driver built by nvcc also its architecture, whether the device-pass fix is in, its sha256 and compile time)."""
    from ..solvers.peers import build as peers

    ran = {name: r["counters"][f"{name}_commit"] for name in peers.names() for r in runs
           if f"{name}_commit" in (r.get("counters") or {})}
    name = next(iter(ran), None) or next((n for n in peers.names() if spec.name.startswith(n)), None)
    if name is None:
        return {"name": spec.name, "commit": None}
    info = {"name": name, "commit": ran.get(name), "pinned_commit": peers.get_peer(name)["commit"]}
    try:
        build = peers.locate(name, build_missing=False)
    except GpuspError:  # not built here, or unavailable: the record's status and reason say so
        return info
    return {**info, **{key: build.get(key) for key in BUILD_KEYS if key in build}}


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


# What the readers rely on (report.aggregate reads these keys; other keys may come and go), in the part of
# JSON Schema that _misfit reads.
_NUMBER = {"type": "number"}
_TEXT = {"type": "string"}
_TIMINGS = {"type": "object", "required": ["samples_ms", "clock", "compile_s", "h2d_ms", "d2h_ms", "median_ms"],
            "properties": {"samples_ms": {"type": "array", "minItems": 1, "items": _NUMBER}, "clock": _TEXT,
                           "compile_s": _NUMBER, "h2d_ms": _NUMBER, "d2h_ms": _NUMBER, "median_ms": _NUMBER,
                           "end_to_end_ms": {"type": "array", "items": _NUMBER},
                           "end_to_end_clock": {"type": ["string", "null"]},
                           "end_to_end_h2d_ms": {"type": "array", "items": _NUMBER}}}
_VALIDATION = {"type": ["object", "null"], "required": ["ok"], "properties": {"ok": {"type": ["boolean", "null"]}}}
_RUN = {"type": "object", "required": ["source", "timings", "counters"],
        "properties": {"source": {"type": ["integer", "null"], "minimum": 0}, "timings": _TIMINGS,
                       "counters": {"type": "object"}, "validation": _VALIDATION}}
RECORD_SCHEMA = {
    "type": "object",
    "required": ["schema", "created", "solver", "problem", "family", "variant", "device", "paper", "params",
                 "status", "graph", "trials", "warmup", "runs", "summary", "machine", "git_commit", "code_hash"],
    "properties": {
        "created": _TEXT, "solver": _TEXT, "problem": {"enum": ["sssp", "apsp"]}, "family": _TEXT,
        "variant": _TEXT, "device": {"enum": ["cpu", "gpu"]}, "paper": _TEXT, "params": {"type": "object"},
        "status": {"enum": list(STATUSES)}, "reason": {"type": ["string", "null"]},
        "graph": {"type": "object", "required": ["name", "n", "m", "checksum"],
                  "properties": {"name": _TEXT, "n": {"type": "integer", "minimum": 0},
                                 "m": {"type": "integer", "minimum": 0}, "checksum": _TEXT,
                                 "meta": {"type": ["object", "null"]}}},
        "trials": {"type": "integer", "minimum": 0}, "warmup": {"type": "integer", "minimum": 0},
        "end_to_end": {"type": "integer", "minimum": 0},
        "runs": {"type": "array", "items": _RUN},
        "summary": {"type": "object", "required": ["validated"], "properties": {"validated": {"type": "boolean"}}},
        "machine": {"type": "object"}, "peer": {"type": ["object", "null"]}, "git_commit": _TEXT, "code_hash": _TEXT,
        "params_label": {"type": ["string", "null"]}, "graph_label": {"type": ["string", "null"]},
    },
}
VERDICT_SCHEMA = {
    "type": "object",
    "required": ["graph_checksum", "ok", "sources", "verdicts"],
    "properties": {"graph_checksum": _TEXT, "ok": {"type": ["boolean", "null"]},
                   "sources": {"type": "array", "items": {"type": "integer", "minimum": 0}},
                   "verdicts": {"type": "array", "items": {"type": "object"}}},
}


def read_record(path) -> dict:
    """A record written by :func:`write_record`, checked: JSON, this schema version, the keys the
    aggregate reads with their types. Raises RecordFormatError naming the file."""
    doc = _read_json(path, "record")
    if not isinstance(doc, dict) or "schema" not in doc:
        raise RecordFormatError(f"{path}: not a gpusp run record (no \"schema\" key; records come from "
                                "`gpusp solve --record`)")
    if type(doc["schema"]) is not int or doc["schema"] != SCHEMA_VERSION:
        raise RecordFormatError(f"{path}: a record of schema version {doc['schema']!r}; this gpusp "
                                f"({__version__}) reads version {SCHEMA_VERSION}: re-run the solve")
    _conform(doc, "record", path)
    return doc


def read_verdict(path) -> dict:
    """A verdict written by ``gpusp validate --output``, checked like :func:`read_record`."""
    doc = _read_json(path, "verdict")
    _conform(doc, "verdict", path)
    return doc


def _read_json(path, what: str):
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise RecordFormatError(f"{path}: {exc.strerror or exc}") from None
    if not data.strip():
        raise RecordFormatError(f"{path}: empty file, not a gpusp {what}")
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise RecordFormatError(f"{path}: binary data, not a JSON {what}") from None
    except json.JSONDecodeError as exc:
        # a record has one value per line: a file cut short fails on its last line, or in a string that
        # runs to its end
        last_line = data.decode("utf-8").rstrip().count("\n") + 1
        cut = " (truncated?)" if exc.lineno >= last_line or exc.msg.startswith("Unterminated string") else ""
        raise RecordFormatError(f"{path}:{exc.lineno}: not valid JSON{cut}: {exc}") from None


SCHEMAS = {"record": (RECORD_SCHEMA, "run record"),
           "verdict": (VERDICT_SCHEMA, "validation verdict (from `gpusp validate --output`)")}
_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def _conform(doc, kind: str, path) -> None:
    """Raise RecordFormatError naming the file and the first key that does not fit the schema."""
    schema, what = SCHEMAS[kind]
    found = _misfit(doc, schema, ())
    if found is not None:
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in found[0]).lstrip(".")
        raise RecordFormatError(f"{path}: not a gpusp {what}: {where + ': ' if where else ''}{found[1]}")


def _misfit(value, schema: dict, where: tuple):
    """The first place (a key path) where ``value`` does not fit ``schema`` and why, or None. Covers the part of
    JSON Schema the schemas above use (type, enum, minimum, required, properties, items, minItems), in plain
    Python: reading a record back costs about what parsing its JSON does."""
    types = schema.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else types
        if not any(_is(value, name) for name in names):
            return where, f"{_short(value)} is not of type {' or '.join(map(repr, names))}"
    if "enum" in schema and not any(value == v and type(value) is type(v) for v in schema["enum"]):
        return where, f"{_short(value)} is not one of {schema['enum']}"
    if "minimum" in schema and _is(value, "number") and value < schema["minimum"]:
        return where, f"{value} is less than the minimum of {schema['minimum']}"
    if isinstance(value, dict):
        missing = next((key for key in schema.get("required", ()) if key not in value), None)
        if missing is not None:
            return where, f"{missing!r} is a required property"
        for key, inner in schema.get("properties", {}).items():
            found = _misfit(value[key], inner, (*where, key)) if key in value else None
            if found is not None:
                return found
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            return where, f"{_short(value)} should have at least {schema['minItems']} item(s)"
        if "items" in schema:
            for i, item in enumerate(value):
                found = _misfit(item, schema["items"], (*where, i))
                if found is not None:
                    return found
    return None


def _is(value, name: str) -> bool:
    if name in ("integer", "number"):  # JSON's true and false are not numbers
        kinds = int if name == "integer" else (int, float)
        return isinstance(value, kinds) and not isinstance(value, bool)
    return isinstance(value, _TYPES[name])


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
