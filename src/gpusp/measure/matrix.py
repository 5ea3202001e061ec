"""The workflow's logic, kept out of the Snakefile: config -> graphs, parameter matrix, jobs and skips.

The config (``config/config.yaml``, schema ``workflow/schemas/config.schema.yaml``) names graphs and
solvers with parameter grids. :func:`expand_jobs` turns it into one job per (graph, solver, parameter
set) and a list of combinations that cannot run, each with the reason (negative weights on Dijkstra,
an n x n matrix larger than the GPU, a parameter value the solver does not allow). Names end up in
file paths and shell commands, so :func:`check_name` admits safe identifiers only.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import re
from dataclasses import dataclass
from pathlib import Path

from ..solvers import registry
from ..errors import GpuspError, SolverError

SAFE_NAME = r"[A-Za-z0-9][A-Za-z0-9.\-]*"
SOLVER_NAME = r"[a-z0-9]+_[a-z0-9]+"
SAFE_VALUE = r"[A-Za-z0-9][A-Za-z0-9._\-]*"
PARAM_KEY = r"[a-z][a-z0-9_]*"
# a parameter-set label as a wildcard; never one ending like another output of the same job
PARAMSET = r"(?:default|[A-Za-z0-9_.\-+]+)(?<!\.verdict)(?<!\.answer)"
_SAFE = re.compile(rf"^{SAFE_NAME}$")
_SOLVER = re.compile(rf"^{SOLVER_NAME}$")
_SAFE_VALUE = re.compile(rf"^{SAFE_VALUE}$")
_NUMBER = re.compile(r"^-?[0-9][0-9.e\-]*$")
_PARAM_KEY = re.compile(rf"^{PARAM_KEY}$")


def check_name(name: str, what: str = "name", pattern: re.Pattern = _SAFE) -> str:
    """Return ``name`` if it is a safe identifier (letters, digits, '.', '-'), else raise."""
    if not isinstance(name, str) or not pattern.fullmatch(name) or ".." in name:
        allowed = "lower-case letters and digits around one '_'" if pattern is _SOLVER else \
            "letters, digits, '.' and '-' (no '..', not starting with '.' or '-')"
        raise GpuspError(f"{what} {name!r} is not a safe identifier: use {allowed} "
                         "(it becomes part of file paths and shell commands)")
    return name


def check_solver_name(name: str) -> str:
    return check_name(name, "solver name", _SOLVER)


def paramset_label(params: dict) -> str:
    """Stable path label of a parameter set: ``key-value`` pairs joined by '+', sorted by key.

    Values must be safe identifiers (or numbers, which may be negative); booleans become
    ``true``/``false``. :func:`parse_paramset` inverts it (values come back as strings).
    """
    if not params:
        return "default"
    parts = []
    for key in sorted(params):
        value = params[key]
        if not isinstance(key, str) or not _PARAM_KEY.fullmatch(key):
            raise GpuspError(f"parameter name {key!r} is not a safe identifier (use a-z, 0-9 and '_')")
        if isinstance(value, bool):
            text = str(value).lower()
        elif isinstance(value, (int, float)):
            text = str(value)
            if not _NUMBER.fullmatch(text):  # inf, nan, 1e+20 ('+' separates pairs)
                raise GpuspError(f"parameter value {key}={value!r} cannot be part of a path label")
        else:
            text = str(value)
            if not (_SAFE_VALUE.fullmatch(text) or _NUMBER.fullmatch(text)):  # "-3" from parse_paramset
                raise GpuspError(f"parameter value {key}={value!r} is not a safe identifier: use letters, "
                                 "digits, '.', '_' and '-' (it becomes part of file paths and shell commands)")
        parts.append(f"{key}-{text}")
    return "+".join(parts)


def parse_assignments(items) -> dict:
    """``key=value`` strings (solver and generator parameters, config overrides) as a dict; values become
    bool, int or float where they read as one, else stay strings; ``-`` in keys becomes ``_``."""
    bad = [item for item in items or () if "=" not in item]
    if bad:
        raise GpuspError(f"expected key=value, got {bad[0]!r}")
    return {k.strip().replace("-", "_"): _scalar(v.strip()) for k, v in (i.split("=", 1) for i in items or ())}


def _scalar(value: str):
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    for kind in (int, float):
        with contextlib.suppress(ValueError):
            return kind(value)
    return value


def parse_paramset(label: str) -> dict:
    """Inverse of :func:`paramset_label` (values stay strings; the registry converts them)."""
    if label == "default":
        return {}
    return dict(part.split("-", 1) for part in label.split("+"))


@dataclass(frozen=True)
class Job:
    graph: str
    solver: str
    params: dict
    label: str
    budget: float | None = None
    trials: int | None = None
    warmup: int | None = None

    @property
    def problem(self) -> str:
        return registry.get(self.solver).problem


def _file_size_hint(spec: dict) -> tuple[int | None, int | None, bool | None]:
    """(n, m, negative) of a graph file read cheaply at planning time: the ``p sp`` line of DIMACS,
    the ``N M`` header of plain files, the arrays of an npz cache. Anything else: unknown."""
    import gzip

    path = Path(spec["file"])
    fmt = spec.get("format")
    name = path.name.removesuffix(".gz")
    if fmt is None:
        fmt = {".gr": "gr", ".plain": "plain", ".npz": "npz"}.get(Path(name).suffix)
    try:
        if fmt == "npz":
            import numpy as np

            with np.load(path, allow_pickle=False) as z:
                weights = z["weights"]
                return int(z["n"]), int(z["indices"].size), bool(weights.size and weights.min() < 0)
        if fmt not in ("gr", "plain"):
            return None, None, None
        with open(path, "rb") as raw:
            gz = raw.read(2) == b"\x1f\x8b"
        with (gzip.open(path, "rt") if gz else open(path)) as fh:
            for i, line in enumerate(fh):
                if i > 10000:
                    break
                parts = line.split()
                if not parts or parts[0] in ("c", "#"):
                    continue
                if fmt == "gr" and parts[0] == "p" and len(parts) >= 4:
                    return int(parts[2]), int(parts[3]), False  # DIMACS weights are >= 0
                if fmt == "plain" and len(parts) == 2:
                    return int(parts[0]), int(parts[1]), None
                if fmt == "plain":
                    break
    except (OSError, ValueError, KeyError, EOFError):
        pass  # a missing or broken file fails in prepare_graph with a proper message
    return None, None, None


def graph_size(name: str, spec: dict) -> tuple[int | None, int | None, bool]:
    """(n, m, may_have_negative_weights) known before the graph exists, for DAG-time skip decisions."""
    w = spec.get("weights") or {}
    negative = bool(w and w.get("action", "add") != "keep" and int(w.get("min", 1)) < 0)
    if "file" in spec:
        n, m, neg = _file_size_hint(spec)
        if w and w.get("action", "add") != "keep":
            neg = negative  # the weights are replaced
        if n is not None and spec.get("symmetrize"):
            m = None if m is None else 2 * m
        return n, m, bool(neg)
    if "dataset" in spec:
        from ..data.datasets import get_dataset

        entry = get_dataset(spec["dataset"])
        factor = 2 if spec.get("symmetrize") else 1
        return int(entry["nodes"]), int(entry["edges"]) * factor, negative
    if "generate" in spec:
        p = dict(spec.get("params", {}))
        if not (w and w.get("action", "add") != "keep"):  # unless the weights are replaced
            negative = int(p.get("wmin", 1)) < 0
        kind = spec["generate"]
        if kind == "rmat":
            n = 2 ** int(p["scale"])
            return n, n * int(p.get("edge_factor", 16)), negative
        if kind == "grid":
            r, c = int(p["rows"]), int(p["cols"])
            return r * c, 2 * (2 * r * c - r - c), negative
        n = int(p.get("n", 0)) or None
        if n is None:
            return None, None, negative
        m = {"complete": n * (n - 1), "ring": n, "random": n * int(p.get("k", 1))}.get(kind)
        return n, m, negative
    return None, None, negative


def expand_jobs(config: dict) -> tuple[list[Job], list[dict]]:
    """All runnable jobs and the skipped combinations (with reasons) of a validated config."""
    graphs = config.get("graphs") or {}
    for name in graphs:
        check_name(name, "graph name")
    sizes = {name: graph_size(name, spec) for name, spec in graphs.items()}
    free = int(float(config.get("gpu_memory_gb", 80)) * 2**30)
    jobs, skipped, seen = [], [], set()
    for entry in config.get("solvers") or []:
        solver = check_solver_name(entry["name"])
        try:
            spec = registry.get(solver)  # registered names are safe identifiers
        except SolverError as exc:
            raise GpuspError(str(exc)) from None
        grid = entry.get("params", {}) or {}
        keys = sorted(grid)
        values = [v if isinstance(v, list) else [v] for v in (grid[k] for k in keys)]
        only = entry.get("graphs")
        for gname in only or ():
            if gname not in graphs:
                raise GpuspError(f"solver {solver} lists graph {gname!r}, which is not in `graphs` "
                                 f"({', '.join(sorted(graphs)) or 'none'})")
        for combo in itertools.product(*values):
            raw = dict(zip(keys, combo))
            label = paramset_label(raw)
            for gname, gspec in graphs.items():
                if only and gname not in only:
                    continue
                if (gname, solver, label) in seen:
                    continue  # the same combination listed twice
                seen.add((gname, solver, label))
                base = {"graph": gname, "solver": solver, "params": label, "problem": spec.problem}
                try:
                    params = spec.resolve(raw)
                except SolverError as exc:
                    skipped.append({**base, "reason": str(exc)})
                    continue
                n, m, negative = sizes[gname]
                itemsize = 8 if gspec.get("int64") else 4
                reason = None
                if n is None and negative and not spec.negative_weights:
                    reason = f"{solver} does not accept negative weights"
                elif n is not None:
                    reason = spec.why_not(n, m or 0, negative=negative, itemsize=itemsize, params=params,
                                          free_bytes=free if spec.device == "gpu" else None)
                    limit = config.get("max_apsp_n")
                    if reason is None and spec.problem == "apsp" and limit and n > int(limit):
                        reason = f"APSP limited to n <= {limit} by max_apsp_n (n = {n})"
                if reason:
                    skipped.append({**base, "reason": reason})
                else:
                    jobs.append(Job(gname, solver, raw, label, entry.get("time_budget_s"), entry.get("trials"),
                                    entry.get("warmup")))
    return jobs, skipped


def find_job(jobs, graph: str, solver: str, label: str) -> Job:
    """The job a workflow path names (parameters always come from the config, never from the path)."""
    for job in jobs:
        if (job.graph, job.solver, job.label) == (graph, solver, label):
            return job
    raise GpuspError(f"no job {solver}/{label} on graph {graph} in the config")


def graph_spec_json(config: dict, name: str) -> str:
    """The graph's config entry as JSON for ``gpusp prepare --spec``."""
    return json.dumps(config["graphs"][check_name(name, "graph name")], sort_keys=True)


def prepare_graph(spec: dict, output, downloads: str = "results/downloads", mirror=None):
    """Build the binary graph a config entry describes: a file, a dataset or a generator, then weights."""
    from ..data.formats import read_graph, write_graph
    from ..data.weights import add_weights, replace_weights, symmetrize

    if "file" in spec:
        graph = read_graph(spec["file"], format=spec.get("format"))
    elif "dataset" in spec:
        from ..data.datasets import fetch, get_dataset

        entry = get_dataset(spec["dataset"])
        path = fetch(spec["dataset"], downloads, mirror=mirror, progress=False)
        graph = read_graph(path, format=entry.get("format"))
        graph.name = spec["dataset"]
    elif "generate" in spec:
        from ..data.generate import generate

        graph = generate(spec["generate"], seed=spec.get("seed", 0), **spec.get("params", {}))
    else:
        raise GpuspError("a graph needs one of: file, dataset, generate")
    if spec.get("symmetrize"):
        graph = symmetrize(graph)
    w = spec.get("weights")
    if w:
        action = w.get("action", "add" if graph.weight_kind == "unit" else "replace")
        if action != "keep":
            fn = add_weights if action == "add" else replace_weights
            graph = fn(graph, int(w.get("min", 1)), int(w.get("max", 100)), int(w.get("seed", 0)))
    if spec.get("name"):
        graph.name = spec["name"]
    write_graph(graph, output, format="npz")
    return graph


def results_dir(config: dict) -> Path:
    return Path(config.get("results", "results"))


def write_skipped(path, skipped: list[dict], log=None) -> None:
    """Write the skipped combinations (with reasons) as JSON, atomically; one summary line to ``log``."""
    from ..atomic import atomic_open

    with atomic_open(path) as fh:
        json.dump(skipped, fh, sort_keys=True, indent=1)
    if log:
        with open(log, "w") as fh:
            fh.write(f"{len(skipped)} skipped combinations\n")
            fh.writelines(f"{s['graph']} {s['solver']} {s['params']}: {s['reason']}\n" for s in skipped)
