"""The workflow's planning, kept out of the Snakefile: config -> validated config -> jobs and skips.

:func:`validate_config` checks a config against the workflow's schema (``workflow/schemas/config.schema.yaml``,
shipped in the package as ``gpusp/schemas/config.schema.yaml``) with Snakemake's own
``validate(config, schema, set_default=True)``, which fills in the schema's defaults (the one place a default is
written), then refuses what the schema cannot say (a parameter name its solver does not have, a graph no solver
runs on, a parameter value its solver does not allow, bad generator parameters, more sources than a graph has, ...);
every refusal is one :class:`ConfigError` line naming the config and the key. :func:`expand_jobs` turns a validated
config into fully resolved jobs, one per (graph, solver, parameter set), and the valid combinations that cannot run
on their graph or machine, each with the reason (negative weights on Dijkstra, an n x n matrix larger than the GPU).
Names end up in file paths and shell commands, so :func:`check_name` admits safe identifiers only.
"""

from __future__ import annotations

import contextlib
import copy
import difflib
import itertools
import json
import math
import os
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import yaml

from .data.prepare import generator_params, graph_size, has_weights
from .errors import GpuspError, SolverError
from .solvers import auto, registry
from .solvers.registry import SolverSpec

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
    out = {}
    for item in items or ():
        key, equals, value = item.partition("=")
        if not equals:
            raise GpuspError(f"expected key=value, got {item!r}")
        key = key.strip().replace("-", "_")
        if key in out:  # the last would win silently
            raise GpuspError(f"{key} given twice: {key}={out[key]!r} and {item!r}")
        out[key] = _scalar(value.strip())
    return out


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


SCHEMA = "schemas/config.schema.yaml"  # in the package: a link to the workflow's workflow/schemas/ file


def load_config(path, overrides=None) -> dict:
    """The config file at ``path`` with ``key=value`` overrides of top-level keys laid over it, validated
    (:func:`validate_config`); an error names the file and the key."""
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise GpuspError(f"{path}: cannot read the config: {exc.strerror or exc}") from None
    try:
        config = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise GpuspError(f"{path}: not valid YAML: {' '.join(str(exc).split())}") from None
    if not isinstance(config, dict):
        raise GpuspError(f"{path}: a config is a YAML mapping (graphs, solvers, ...), not {type(config).__name__}")
    laid_over = parse_assignments(overrides)
    return validate_config({**config, **laid_over}, source=config_source([path], laid_over, "--set"))


def config_source(files, overrides=(), flag: str = "--config") -> str:
    """How an error names a config: its file(s), and the keys a command line laid over them
    (``snakemake --config``, ``gpusp bench --set``), since a bad value may come from either."""
    where = " + ".join(str(f) for f in files) or "the config"
    keys = sorted(overrides)
    return f"{where} (with {flag} {', '.join(keys)})" if keys else where


# what a config runs: a config that names either replaces the embedded default (see layer_configs)
WHAT_TO_RUN = ("graphs", "solvers")


def merged(base: dict, over: dict) -> dict:
    """A copy of ``base`` with ``over`` laid over it: mappings merged key by key, at every depth (as Snakemake lays
    ``--configfile`` and ``--config`` over a workflow's config), anything else replaced."""
    out = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merged(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def layer_configs(default: dict, given: dict) -> tuple[dict, bool]:
    """The config a run plans from, and whether the default is part of it. A config that says what to run (names
    ``graphs`` or ``solvers``) replaces the embedded ``default`` whole, so a sweep runs exactly its own graphs and
    solvers with the schema's defaults; any other (a site file with only ``slurm``, ``results`` or ``mirror``,
    ``--config trials=3``) is laid over the default, so it can never plan zero jobs."""
    if any(key in given for key in WHAT_TO_RUN):
        return copy.deepcopy(given), False
    return merged(default, given), True


def load_default_config(path, base) -> dict:
    """The embedded default config at ``path``, its relative graph files resolved from the folder ``base`` (the
    workflow's own folder) rather than the working directory, so that the workflow runs its default from anywhere
    (e.g. as a Snakemake module); kept relative where they lie under the working directory."""
    config = yaml.safe_load(Path(path).read_text()) or {}
    for spec in (config.get("graphs") or {}).values():
        if isinstance(spec, dict) and isinstance(spec.get("file"), str) and not os.path.isabs(spec["file"]):
            full = os.path.normpath(os.path.join(base, spec["file"]))
            near = os.path.relpath(full)
            spec["file"] = full if near.startswith("..") else near
    return config


def typed_overrides(config: dict, overrides: dict) -> dict:
    """``config`` with the values nested in ``--config`` overrides typed as YAML reads them. Snakemake types a
    top-level value (``trials=3``: 3) but reads one nested in a YAML value as text (``sources={count: 3}``:
    ``"3"``), which the schema would then refuse; a value is retyped only where ``config`` still holds the text
    the command line gave."""
    def retype(value):
        if isinstance(value, dict):
            return {key: retype(item) for key, item in value.items()}
        if isinstance(value, list):
            return [retype(item) for item in value]
        if isinstance(value, str) and value.strip():
            with contextlib.suppress(yaml.YAMLError):
                return yaml.safe_load(value)
        return value

    def lay(target: dict, over: dict) -> None:  # over: a mapping nested in an override, at target's place
        for key, value in over.items():
            if isinstance(value, dict) and isinstance(target.get(key), dict):
                lay(target[key], value)
            elif key in target and target[key] == value:
                target[key] = retype(value)

    out = copy.deepcopy(config)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            lay(out[key], value)
        elif isinstance(value, list) and out.get(key) == value:
            out[key] = retype(value)
    return out


# keys that moved out of the config, with where they live now
MOVED = {("slurm", "gpu_partition"): "the GPU partition is set in the SLURM profile, slurm/config.yaml "
                                     "(set-resources: solve_graph: slurm_partition)"}


class ConfigError(GpuspError):
    """A config refused, in one line: ``source`` names the config (its files and the keys laid over them),
    ``detail`` the key and what is wrong with it; apart, so that a front end (``gpusp bench``) can name the
    config in its own words."""

    def __init__(self, source: str, detail: str):
        super().__init__(f"{source}: {detail}")
        self.source, self.detail = source, detail


def validate_config(config: dict, source: str = "config", schema=None) -> dict:
    """A copy of ``config`` checked against the schema (``schema``: its path, by default the package's) by
    Snakemake's ``validate(config, schema, set_default=True)``, which fills in its defaults, nested objects too;
    then checked for what the schema cannot say (:func:`check_config`). Every error is a :class:`ConfigError`."""
    for path, where in MOVED.items():
        node = config
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        if node is not None:
            raise ConfigError(source, f"key {'/'.join(path)}: no longer a config key: {where}")
    filled = _every_source_shorthand(copy.deepcopy(config), source)
    _check_schema(filled, source, schema or resources.files(__package__).joinpath(SCHEMA))
    check_config(filled, source)
    return filled


ALL_SOURCES = "all"  # sources: all, or sources/count: all: every vertex a source, swept (gpusp.measure.alltrees)


def _every_source_shorthand(config: dict, source: str) -> dict:
    """``sources: all`` (top level or a graph's) as ``{count: all}``; any other word is refused here, by name."""
    graphs = config.get("graphs") if isinstance(config.get("graphs"), dict) else {}
    places = [("sources", config)] + [(f"graphs/{g}/sources", spec) for g, spec in graphs.items()
                                      if isinstance(spec, dict)]
    for where, node in places:
        value = node.get("sources")
        if value == ALL_SOURCES:
            node["sources"] = {"count": ALL_SOURCES}
        elif isinstance(value, str):
            raise ConfigError(source, f"key {where}: {value!r} is neither a mapping {{count, seed}} nor "
                                      f"{ALL_SOURCES!r} (every vertex a source, its trees swept by a batched solver)")
    return config


def _check_schema(config: dict, source: str, schema) -> None:
    """Snakemake's validation of ``config`` in place (defaults filled in), its error as one line naming the key."""
    try:
        from jsonschema.exceptions import ValidationError
        from snakemake.exceptions import WorkflowError
        from snakemake.utils import validate
    except ImportError:
        raise GpuspError("checking a config against the workflow's schema needs Snakemake: "
                         "pip install -e '.[workflow]'") from None
    try:
        validate(config, str(schema), set_default=True)
    except WorkflowError as exc:
        error = exc.__context__  # Snakemake raises its WorkflowError while handling jsonschema's error
        if not isinstance(error, ValidationError):
            raise ConfigError(source, " ".join(str(exc).split())) from None
        where = "/".join(str(part) for part in error.absolute_path)
        raise ConfigError(source, f"{f'key {where}' if where else 'top level'}: {_schema_words(error)} "
                                  "(schema workflow/schemas/config.schema.yaml)") from None


def _inside(path: Path, folder: Path) -> bool:
    """Whether ``path`` is ``folder`` or lies under it (links and relative parts resolved)."""
    path, folder = path.resolve(), folder.resolve()
    return path == folder or folder in path.parents


def _schema_words(error) -> str:
    """jsonschema's message, except where it cannot say what is wrong: a choice between required keys (a graph is a
    file, a dataset or a generator) then names the keys and those the entry has."""
    alternatives = error.validator_value if error.validator in ("oneOf", "anyOf") else None
    if alternatives and all(set(a) == {"required"} and len(a["required"]) == 1 for a in alternatives) \
            and isinstance(error.instance, dict):
        keys = [a["required"][0] for a in alternatives]
        present = [k for k in keys if k in error.instance]
        return (f"needs exactly one of the keys {', '.join(keys)}; it has "
                f"{' and '.join(present) if present else 'none of them'}")
    return " ".join(error.message.split())


@dataclass(frozen=True)
class Job:
    """One solve of the plan, fully resolved: what the workflow's ``gpusp solve`` command gets."""

    graph: str
    solver: str
    params: dict  # as configured (the path label is derived from these, the solver resolves defaults)
    label: str
    spec: SolverSpec = field(repr=False)  # solver auto: the first of auto.candidate_specs() (see runtime_minutes)
    budget: float  # seconds: the solver's time_budget_s, else the top-level one
    trials: int  # timed runs per source: the solver's trials, else the top-level one
    warmup: int  # untimed runs: the solver's warmup, else the top-level one
    validate_rows: int  # APSP rows checked against SciPy (validate.apsp_rows)
    # stored in the record; SSSP: the seed its graph's sources were picked with; APSP: the seed of the sampled
    # validation rows (the top-level sources seed)
    seed: int
    n: int | None = None  # the graph's size where planning knows it (a file it cannot read: None)
    m: int | None = None
    end_to_end: int = 0  # runs timed from allocation to download after the trials (the solver's end_to_end: trials)
    in_process: bool = False  # the config's in_process: solved in the solve command's own process, without a budget
    auto: dict | None = None  # picked by a config's `auto` at planning: the pick, its row and the graph's features

    @property
    def problem(self) -> str:
        return self.spec.problem

    @property
    def settings(self) -> dict:
        """The ``gpusp solve`` settings this job's result depends on, by flag, and nothing else: a settings change
        reruns exactly the jobs it reaches (the workflow passes them as one rule parameter, so Snakemake compares
        them by name). An SSSP job solves from its sources file, so the APSP validation rows reach APSP jobs only;
        its seed is the one its sources were picked with."""
        out = {"trials": self.trials, "warmup": self.warmup, "seed": self.seed}
        if self.end_to_end:  # only where asked for: a config without it reruns nothing
            out["end-to-end"] = self.end_to_end
        if self.problem == "apsp":
            out["validate-rows"] = self.validate_rows
        if not self.in_process:  # a budget runs the solve in a child process that is killed at the budget
            out["time-budget"] = self.budget
        return out

    @property
    def memory_mb(self) -> int:
        """Host memory of this job's solve or validation at the first attempt (see :func:`memory_mb`)."""
        return memory_mb(self.problem, self.n, self.m)

    def runtime_minutes(self, sources: int, simulated: bool) -> int:
        """SLURM minutes of this solve at the first attempt: its expected time (:func:`expected_minutes`), at most
        its budget and two minutes of start-up, which the solve itself enforces."""
        cap = 2 + math.ceil(self.budget / 60)
        if self.n is None:
            return cap
        sources = self.n if sources == ALL_SOURCES else sources
        # a job of solver auto asks for the minutes of the slowest solver its run may pick (host memory is the same)
        places = {"cpu" if spec.device == "cpu" else ("sim" if simulated else "gpu")
                  for spec in (auto.candidate_specs() if self.solver == auto.AUTO else (self.spec,))}
        return min(cap, max(expected_minutes(self.problem, self.n, self.m or 0, where, sources,
                                             self.trials + self.warmup) for where in places))


# host memory of a job: the Python, Numba and CUDA start-up, then bytes per vertex (answers, parents, the
# certificate's and the automatic settings' arrays), per arc (the CSR with int64 weights and offsets, and one transient
# copy of its arc arrays: a generator's build, a reader's split, a peer's file written in blocks) and per matrix cell
# (APSP: distances and parents, their host copies); unknown sizes get the fallback. Small graphs, the only ones the
# SciPy reference solves (validate.reference_max_work), stay within the start-up's share.
MEMORY_BASE_MB, MEMORY_UNKNOWN_MB = 2000, 16000
BYTES_PER_VERTEX, BYTES_PER_ARC, BYTES_PER_CELL = 64, 24, 32


def memory_mb(problem: str | None, n: int | None, m: int | None, attempt: int = 1) -> int:
    """MB of host memory a job on a graph of n vertices and m arcs asks for, doubled on each retry (a job killed
    for memory gets twice as much the next time). ``problem`` None: a job that only reads and writes the graph."""
    if n is None:
        base = MEMORY_UNKNOWN_MB
    else:
        cells = n * n if problem == "apsp" else 0
        base = MEMORY_BASE_MB + -(-(BYTES_PER_VERTEX * n + BYTES_PER_ARC * (m or 0) + BYTES_PER_CELL * cells) // 10**6)
    return int(base * 2 ** (max(int(attempt), 1) - 1))


# expected time of a solve, so that a SLURM request fits the work: a minute to start (Python, the imports, the graph
# mapped, Numba's compile or its cache), then every run at a rate of arcs a second that the solvers of each place
# beat (the GPU solvers' 1-5e9 on the H200, the CPU peers' and SciPy's 1e7-1e8, the simulator's 1e3-1e4), times a margin
START_MINUTES, RUNTIME_MARGIN = 1, 4
ARCS_PER_S = {"gpu": 10**8, "cpu": 10**6, "sim": 10**3}


def expected_minutes(problem: str, n: int, m: int, where: str, sources: int, runs: int) -> int:
    """Minutes a solve is expected to take at most: START_MINUTES, then ``runs`` runs (warm-up and trials) per source
    (SSSP; an APSP run is one search from every vertex) of m arcs at ``ARCS_PER_S[where]``, times RUNTIME_MARGIN."""
    work = runs * m * (n if problem == "apsp" else max(1, sources))
    return START_MINUTES + math.ceil(RUNTIME_MARGIN * work / ARCS_PER_S[where] / 60)


# the keys expand_jobs reads; a validated config always has them (the schema gives each a default)
PLANNING_KEYS = ("graphs", "solvers", "gpu_memory_gb", "max_apsp_n", "max_cpu_arcs", "time_budget_s", "trials",
                 "warmup", "sources", "validate", "in_process", "only_graphs")
# top-level numbers the schema types but does not bound: (key, test, what it must be)
_BOUNDS = (("gpu_memory_gb", lambda v: v > 0, "> 0"),
           ("max_apsp_n", lambda v: v is None or v >= 1, ">= 1 or null"),
           ("max_cpu_arcs", lambda v: v is None or v >= 0, ">= 0 or null"),
           ("gpu_peak_relaxations_per_s", lambda v: v is None or v > 0, "> 0 or null"))


def _hint(name, known) -> str:
    close = difflib.get_close_matches(str(name), list(known), n=2)
    return f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""


def check_config(config: dict, source: str = "config") -> dict:
    """Refuse, in one :class:`ConfigError` line naming ``source`` and the key, a config the schema lets through but
    that cannot plan what it says: no graphs or no solvers; a solver name, a parameter name or a parameter value
    (outside its choices or range, or of the wrong type) its solver does not have, with "did you mean"; a
    solver's ``graphs`` naming no graph of the config, or empty; a graph that no solver runs on; an ``only_graphs``
    name that is no graph; bad generator parameters, weight ranges, source seeds; more sources than a graph known
    at planning time has; a ``compare_with`` that does not exist. :func:`validate_config` and :func:`expand_jobs`
    both call it, so what reaches a job has passed here.
    Returns each graph's :func:`~gpusp.data.prepare.graph_size`, which the sources check needs and expand_jobs
    plans with."""
    try:
        return _graph_sizes(config)
    except GpuspError as exc:
        raise ConfigError(source, str(exc)) from None


def _graph_sizes(config: dict) -> dict:
    graphs, solvers = config.get("graphs") or {}, config.get("solvers") or []
    if not graphs:
        raise GpuspError("key graphs: the config names no graph (a file, a dataset or a generator)")
    if not solvers:
        raise GpuspError("key solvers: the config names no solver (`gpusp solvers` lists them)")
    for key, test, must in _BOUNDS:
        if key in config and not test(config[key]):
            raise GpuspError(f"key {key}: must be {must}, got {config[key]!r}")
    if config.get("compare_with") and not Path(config["compare_with"]).exists():
        raise GpuspError(f"key compare_with: {config['compare_with']}: no such file or folder (a results "
                         "folder, a samples table or a records archive of the run to compare with)")
    if config.get("compare_with") and _inside(Path(config["compare_with"]), Path(config.get("results") or "results")):
        raise GpuspError(f"key compare_with: {config['compare_with']} is this run's own results "
                         f"({config.get('results') or 'results'}), which the run rewrites: copy it elsewhere first, "
                         "or name another run's results")
    for name in config.get("only_graphs") or ():
        if name not in graphs:
            raise GpuspError(f"key only_graphs: {name!r} is not a graph of the config{_hint(name, graphs)}; its "
                             f"graphs: {', '.join(sorted(graphs))}")
    used, sizes = set(), {}
    for i, entry in enumerate(solvers):
        used |= _check_solver_entry(entry, graphs, f"key solvers/{i}")
    for name, spec in graphs.items():
        try:
            check_name(name, "graph name")
            sizes[name] = _check_graph(config, name, spec)
        except GpuspError as exc:
            raise GpuspError(f"key graphs/{name}: {exc}") from None
        if name not in used:
            raise GpuspError(f"key graphs/{name}: no solver runs on this graph (every solver's `graphs` leaves it "
                             "out): remove it, or name it in a solver's `graphs`")
    return sizes


def _check_solver_entry(entry: dict, graphs: dict, where: str) -> set:
    """The graphs one `solvers` entry runs on, after checking its name, parameter names and `graphs`."""
    name = entry.get("name")
    if name == auto.AUTO and entry.get("params"):
        raise GpuspError(f"{where}/params: auto picks the solver's parameters too: leave params out")
    try:
        spec = registry.get(check_solver_name(name)) if name != auto.AUTO else None
    except SolverError:
        raise GpuspError(f"{where}/name: unknown solver {name!r}{_hint(name, registry.REGISTRY)} "
                         "(`gpusp solvers` lists them)") from None
    except GpuspError as exc:
        raise GpuspError(f"{where}/name: {exc}") from None
    known = {p.name: p for p in spec.params} if spec else {}
    for key, values in sorted((entry.get("params") or {}).items()):
        if key not in known:
            raise GpuspError(f"{where}/params: {spec.name} has no parameter {key!r}{_hint(key, known)}; it takes "
                             f"{', '.join(known) or 'none'}")
        for value in values if isinstance(values, list) else [values]:
            try:
                paramset_label({key: value})
                known[key].check(value)
            except SolverError as exc:
                choices = known[key].choices or ()
                hint = _hint(value, [str(c) for c in choices]) if isinstance(value, str) else ""
                raise GpuspError(f"{where}/params/{key}: {spec.name}: {exc}{hint}") from None
            except GpuspError as exc:
                raise GpuspError(f"{where}/params/{key}: {exc}") from None
    only = entry.get("graphs")
    if only is None:
        return set(graphs)
    if not only:
        raise GpuspError(f"{where}/graphs: an empty list runs {name} on no graph: name graphs, or leave "
                         "`graphs` out to run it on every graph")
    for gname in only:
        if gname not in graphs:
            raise GpuspError(f"{where}/graphs: {name} names graph {gname!r}{_hint(gname, graphs)}, which is "
                             f"not in `graphs` ({', '.join(sorted(graphs))})")
    return set(only)


def _check_graph(config: dict, name: str, spec: dict) -> tuple[int | None, int | None, bool]:
    """One graph entry: its dataset or generator, its weights, and its sources against its size (returned)."""
    from .data.weights import check_range

    if "generate" in spec:
        generator_params(spec)
    w = spec.get("weights") or {}
    if w.get("action", "add") != "keep":
        if w:
            check_range(w.get("min", 1), w.get("max", 100), w.get("seed", 0), error=GpuspError,
                        names=("weights/min", "weights/max", "weights/seed"))
        if w.get("action") == "add" and has_weights(spec):
            raise GpuspError("weights/action: add weights an unweighted graph, and this one has weights: use "
                             "replace (new weights) or keep")
    count, seed = source_settings(config, name)
    if seed < 0:
        raise GpuspError(f"sources/seed: must be >= 0, got {seed}")
    size = graph_size(name, spec)
    n = size[0]
    if n is not None and count != ALL_SOURCES and count > n:
        own = "count" in (spec.get("sources") or {})
        raise GpuspError(f"{count} sources asked for (by {'its own' if own else 'the top-level'} sources: {{count: "
                         f"{count}}}), but the graph has n = {n} and sources are distinct vertices: give it its own "
                         f"sources: {{count: {n}}} or fewer")
    return size


def expand_jobs(config: dict, source: str = "config") -> tuple[list[Job], list[dict]]:
    """All runnable jobs and the skipped combinations (with reasons) of a validated config (of the graphs its
    ``only_graphs`` names, where it names some).

    ``config`` is what :func:`load_config` or :func:`validate_config` returns (or the workflow's config after
    :func:`validate_config`): every top-level value a job needs is read from it, so each default is written
    once, in the schema. It is checked again (:func:`check_config`; errors name ``source``), so a config
    changed after its validation cannot plan jobs the checks would refuse.
    """
    missing = [key for key in PLANNING_KEYS if key not in config]
    if missing:
        raise ConfigError(source, f"the config has no {missing[0]!r}: plan jobs from a validated config "
                                  "(gpusp.plan.load_config or validate_config fills in the schema's defaults)")
    sizes = check_config(config, source)
    graphs = {name: spec for name, spec in config["graphs"].items()
              if not config["only_graphs"] or name in config["only_graphs"]}
    free = int(float(config["gpu_memory_gb"]) * 2**30)
    limit, cpu_arcs = config["max_apsp_n"], config["max_cpu_arcs"]
    jobs, skipped, seen = [], [], set()
    for entry in _with_auto_picked(config, graphs, free, skipped):
        solver = entry["name"]
        spec = auto.candidate_specs()[0] if solver == auto.AUTO else registry.get(solver)  # auto: the run picks
        grid = entry.get("params", {}) or {}
        keys = sorted(grid)
        values = [v if isinstance(v, list) else [v] for v in (grid[k] for k in keys)]
        only = entry.get("graphs")
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
                params = spec.resolve(raw)  # every value passed check_config
                n, m, negative = sizes[gname]
                itemsize = 8 if gspec.get("int64") else 4
                reason = None
                if solver == auto.AUTO:  # the run picks a solver that takes the graph, or says why none does
                    reason = _cannot_sweep(config, gname, "auto picks single-source solvers")
                elif n is None and negative and not spec.takes_negative(params):
                    reason = f"{solver} does not accept negative weights"
                elif n is not None:
                    reason = spec.why_not(n, m or 0, negative=negative, itemsize=itemsize, params=params,
                                          free_bytes=free if spec.device == "gpu" else None)
                    if reason is None and spec.problem == "sssp" and not spec.sweeps:
                        reason = _cannot_sweep(config, gname, f"{solver} cannot")
                    if reason is None and spec.problem == "apsp" and limit and n > int(limit):
                        reason = f"APSP limited to n <= {limit} by max_apsp_n (n = {n})"
                    if reason is None and cpu_arcs is not None and spec.device == "cpu" and not spec.peer \
                            and (m or 0) > int(cpu_arcs):
                        reason = (f"{solver} runs on one CPU thread: skipped on graphs of more than {cpu_arcs} arcs "
                                  f"by max_cpu_arcs (m = {m})")
                if reason:
                    skipped.append({**base, "reason": reason})
                else:
                    seed = config["sources"]["seed"] if spec.problem == "apsp" else source_settings(config, gname)[1]
                    trials = int(entry.get("trials", config["trials"]))
                    jobs.append(Job(gname, solver, raw, label, spec,
                                    budget=float(entry.get("time_budget_s", config["time_budget_s"])),
                                    trials=trials, warmup=int(entry.get("warmup", config["warmup"])),
                                    validate_rows=int(config["validate"]["apsp_rows"]),
                                    seed=int(seed), n=n, m=m, end_to_end=trials if entry.get("end_to_end") else 0,
                                    in_process=bool(config["in_process"]), auto=entry.get("auto")))
    return jobs, skipped


def _cannot_sweep(config: dict, graph: str, why: str) -> str | None:
    """Why a single-source solve cannot run on ``graph`` where its sources are all (``why``: who cannot), else None."""
    if source_settings(config, graph)[0] != ALL_SOURCES:
        return None
    return f"sources: all sweeps every tree, and {why}: {', '.join(s.name for s in registry.SPECS if s.sweeps)} can"


# the largest file or generated graph planning builds in memory for auto's features (others: picked by the run)
AUTO_BUILD_ARCS = 1 << 22


def _with_auto_picked(config: dict, graphs: dict, free: int, skipped: list) -> list[dict]:
    """The config's solver entries with each ``auto`` entry replaced by one entry per graph: where planning reads the
    graph's features (:func:`auto_features`), the solver and the parameters the table of :mod:`gpusp.solvers.auto`
    picks (``auto`` set to the pick's :meth:`~gpusp.solvers.auto.Pick.info`; a graph that no row runs on is added to
    ``skipped`` with the reason); elsewhere ``auto`` itself, which the solve resolves on the prepared graph."""
    out = []
    for entry in config["solvers"]:
        if entry["name"] != auto.AUTO:
            out.append(entry)
            continue
        for gname in entry.get("graphs") or graphs:
            if gname not in graphs:
                continue
            features = auto_features(config, gname)
            if features is None:
                out.append({**entry, "graphs": [gname]})
                continue
            try:
                chosen = auto.pick(features, free)
            except GpuspError as exc:
                skipped.append({"graph": gname, "solver": auto.AUTO, "params": "default", "problem": "sssp",
                                "reason": str(exc)})
                continue
            out.append({**entry, "name": chosen.solver, "params": dict(chosen.rule.params), "graphs": [gname],
                        "auto": chosen.info()})
    return out


def auto_features(config: dict, name: str) -> auto.Features | None:
    """The features auto reads of a config's graph at planning, where it is a file or a generator of at most
    AUTO_BUILD_ARCS arcs: from its prepared graph (``results/graphs/NAME.gcsr``) where that exists, else from the
    graph built in memory. None for any other graph (a dataset, a larger graph, a file of unknown size), whatever is
    prepared already, so that its job is the same on every run: auto resolved by the solve."""
    from .data.formats import read_graph
    from .data.prepare import build_graph

    spec = config["graphs"][name]
    m = graph_size(name, spec)[1]
    if "dataset" in spec or m is None or m > AUTO_BUILD_ARCS:
        return None
    prepared = results_dir(config) / "graphs" / f"{name}.gcsr"
    return auto.Features.of(read_graph(prepared) if prepared.exists() else build_graph(spec))


def source_settings(config: dict, graph: str) -> tuple[int | str, int]:
    """(count, seed) of a graph's SSSP sources in a validated config: the graph's own, else the top level; count
    is ALL_SOURCES for every vertex."""
    settings = {**config["sources"], **(config["graphs"][graph].get("sources") or {})}
    count = settings["count"]
    return count if count == ALL_SOURCES else int(count), int(settings.get("seed", 0))


def find_job(jobs, graph: str, solver: str, label: str) -> Job:
    """The job a workflow path names (parameters always come from the config, never from the path)."""
    for job in jobs:
        if (job.graph, job.solver, job.label) == (graph, solver, label):
            return job
    raise GpuspError(f"no job {solver}/{label} on graph {graph} in the config")


# keys of a graph's config entry that planning reads and the prepared graph does not depend on
PLANNING_ONLY = ("sources", "int64")


def graph_spec_json(config: dict, name: str) -> str:
    """The graph's config entry as JSON for ``gpusp prepare --spec``: what the prepared graph depends on, so that
    changing a graph's sources or its planning hints does not prepare it again."""
    spec = config["graphs"][check_name(name, "graph name")]
    return json.dumps({k: v for k, v in spec.items() if k not in PLANNING_ONLY}, sort_keys=True)


def results_dir(config: dict) -> Path:
    return Path(config["results"])


def write_skipped(path, skipped: list[dict], log=None) -> None:
    """Write the skipped combinations (with reasons) as JSON, atomically; one summary line to ``log``."""
    from .atomic import atomic_open

    with atomic_open(path) as fh:
        json.dump(skipped, fh, sort_keys=True, indent=1)
    if log:
        with open(log, "w") as fh:
            fh.write(f"{len(skipped)} skipped combinations\n")
            fh.writelines(f"{s['graph']} {s['solver']} {s['params']}: {s['reason']}\n" for s in skipped)
