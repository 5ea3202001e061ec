import json
import math
import os
import shlex

from gpusp.device import ALLOTTED
from gpusp.errors import GpuspError
from gpusp.plan import (
    ALL_SOURCES,
    PARAMSET,
    SAFE_NAME,
    SOLVER_NAME,
    config_source,
    expand_jobs,
    graph_spec_json,
    layer_configs,
    load_default_config,
    memory_mb,
    results_dir,
    source_settings,
    typed_overrides,
    validate_config,
    write_skipped as write_skipped_json,
)

from gpusp.solvers.peers import build as peers
from gpusp.data.mirror import MIRROR_ENV
from gpusp.measure.codehash import auto_code_hash, code_hash
from gpusp.solvers import auto, registry

# The config: the embedded default (config/config.yaml of this workflow's own folder, its graph files found from
# there, so that the workflow also runs as a module from elsewhere) with what the command line gave laid over it,
# unless that names graphs or solvers: a sweep's config replaces the default (gpusp.plan.layer_configs).
# --replace-workflow-config leaves the default out. Values nested in a --config override are typed as YAML.
DEFAULT_CONFIG = os.path.join(WORKFLOW_DIR, "config", "config.yaml")
SCHEMA = os.path.join(WORKFLOW_DIR, "workflow", "schemas", "config.schema.yaml")
SETTINGS = workflow.config_settings
GIVEN = typed_overrides(dict(config), dict(SETTINGS.config))
USED_DEFAULT = False
if not SETTINGS.replace_workflow_config:
    GIVEN, USED_DEFAULT = layer_configs(
        load_default_config(DEFAULT_CONFIG, WORKFLOW_DIR), GIVEN
    )
# Names end up in file paths and shell commands, so nothing is planned from a config that has not passed
# gpusp.plan's checks: Snakemake's validate() against the schema (its defaults filled in), then what the schema
# cannot say. A config error is the user's, not the workflow's: one line naming the config file and key, and no
# stack frames, which Snakemake prints for any exception raised while it reads the Snakefile (SystemExit prints its
# message alone; gpusp bench, which runs this workflow in its own process, reads the ConfigError it carries).
CONFIG_SOURCE = config_source(
    [os.path.relpath(DEFAULT_CONFIG)] * USED_DEFAULT + list(SETTINGS.configfiles),
    SETTINGS.config,
)
try:
    config.clear()
    config.update(validate_config(GIVEN, CONFIG_SOURCE, schema=SCHEMA))
    JOBS, SKIPPED = expand_jobs(config, CONFIG_SOURCE)
except GpuspError as exc:
    raise SystemExit(f"gpusp: error: {exc}") from exc
RESULTS = str(results_dir(config))
JOB_INDEX = {(j.graph, j.solver, j.label): j for j in JOBS}
GRAPH_SIZES = {j.graph: (j.n, j.m) for j in JOBS}  # as planning found them
# The offline mirror reaches the downloads through the environment, never a rule's params: where the verified
# files come from does not change them, so a different mirror reruns nothing. The config key comes first, as
# --mirror does on the command line; without it a job reads $GPUSP_MIRROR, else the site file (gpusp.data.mirror).
if config["mirror"]:
    os.environ[MIRROR_ENV] = config["mirror"]


wildcard_constraints:
    graph=SAFE_NAME,
    solver=f"{SOLVER_NAME}|{auto.AUTO}",
    params=PARAMSET,
    dataset=SAFE_NAME,


def config_job(wildcards):
    """The configured job behind a solve/validate path (never trust parameters parsed from it)."""
    key = (wildcards.graph, wildcards.solver, wildcards.params)
    if key not in JOB_INDEX:
        raise ValueError(f"no such job in the config: {'/'.join(key)}")
    return JOB_INDEX[key]


def job_params(wildcards):
    """--param flags of one job, from the config matrix (values are schema-checked safe tokens); a job auto picked
    at planning says so, and its record then keeps the pick (as does the record of a job of solver auto).
    """
    job = config_job(wildcards)
    flags = [
        f"--param {k}={shlex.quote(str(v))}" for k, v in sorted(job.params.items())
    ]
    return " ".join(flags + (["--planned-by-auto"] if job.auto else []))


def job_settings(wildcards):
    """The solve settings a job's result depends on (gpusp.plan.Job.settings: trials, warm-up, seed, budget, and
    for APSP the validation rows) as flags: one parameter, so a change reruns exactly the jobs it reaches.
    """
    return " ".join(
        f"--{flag} {value}" for flag, value in config_job(wildcards).settings.items()
    )


def job_code(wildcards):
    """The hash of every file the solver runs on (gpusp.measure.codehash): a parameter of its solve jobs, so that
    editing a solver's code reruns exactly its jobs and the aggregate never meets two versions of one solver. A job
    of solver auto: the hash of the table and of every solver it may pick (auto_code_hash).
    """
    if wildcards.solver == auto.AUTO:
        return f"code_hash={auto_code_hash()}"
    return f"code_hash={code_hash(registry.get(wildcards.solver))}"


def job_threads(wildcards):
    """Cores of a solve job: a CPU solver's workers/threads parameter (0: a whole GPU node), else 1."""
    params = config_job(wildcards).params
    want = int(params.get("workers", params.get("threads", 1)))
    return want or config["slurm"]["gpu_node_cores"]


def job_gpus(wildcards):
    """GPUs a solve asks for: its solver's count under the job's parameters (SolverSpec.gpus_of: a multi-GPU solver's
    gpus parameter, else 1), at least 1, because CPU baselines also run on a GPU node, alone on its host.
    """
    job = config_job(wildcards)
    return max(1, job.spec.gpus_of(job.params))


def gpu_group(wildcards):
    """The group job of a solve and its validation: "gpu" for the 1-GPU solves, which share a group job one after the
    other (the profile's group-components), "gpus<g>" for a solve taking g > 1 GPUs, so that a SLURM job holding g
    GPUs never spends them on 1-GPU solves (a profile may bundle them too: group-components gpus<g>=N).
    """
    gpus = job_gpus(wildcards)
    return "gpu" if gpus == 1 else f"gpus{gpus}"


def job_runtime(wildcards, attempt):
    """SLURM minutes of a solve: its expected time from the graph's size and where it runs (gpusp.plan's
    Job.runtime_minutes), at most its budget and two minutes, doubled on a retry (a group job asks for the sum of
    its solves' and validations' minutes)."""
    job = config_job(wildcards)
    return (
        job.runtime_minutes(graph_sources(wildcards.graph)[0], always_simulated())
        * attempt
    )


def job_memory(wildcards, attempt):
    """MB of host memory of a solve or validation (gpusp.plan.memory_mb), doubled on each retry."""
    job = config_job(wildcards)
    return memory_mb(job.problem, job.n, job.m, attempt)


def graph_memory(wildcards, attempt):
    """MB of host memory of preparing a graph (its size as planning found it), doubled on each retry."""
    n, m = GRAPH_SIZES.get(wildcards.graph, (None, None))
    return memory_mb(None, n, m, attempt)


def graph_runtime(wildcards, attempt):
    """SLURM minutes of preparing a graph: five, and one more per 2^25 arcs (a parse at 0.5 GB/s of text, a
    generator, the binary file written), doubled on a retry; an hour where planning could not size it.
    """
    n, m = GRAPH_SIZES.get(wildcards.graph, (None, None))
    return (60 if m is None else 5 + math.ceil(m / 2**25)) * attempt


def record_paths():
    return [f"{RESULTS}/runs/{j.graph}/{j.solver}/{j.label}.json" for j in JOBS]


def verdict_paths():
    return [f"{RESULTS}/runs/{j.graph}/{j.solver}/{j.label}.verdict.json" for j in JOBS]


def graph_sources(graph):
    """(count, seed) of a graph's SSSP sources: its own, else the top-level ones."""
    return source_settings(config, graph)


def dataset_input(wildcards):
    spec = config["graphs"][wildcards.graph]
    if "dataset" in spec:
        return {"download": f"{RESULTS}/downloads/{spec['dataset']}"}
    if "file" in spec:
        return {"file": spec["file"]}
    return {}


def peer_build_dir(name):
    """The workflow's build folder of a pinned peer: results/peers/<name>-<commit>."""
    return f"{RESULTS}/peers/{peers.folder_name(name)}"


def peer_of(wildcards):
    """The peer a solve job runs (its solver family, e.g. gapbs), or None for gpusp's own solvers (auto picks only
    those)."""
    spec = config_job(wildcards).spec
    return spec.family if spec.peer else None


def sources_input(wildcards):
    """An SSSP solve's sources file (pick_sources). None for APSP, which solves from every vertex: a graph's new
    sources then rerun only its SSSP solves, and an APSP-only sweep picks no sources."""
    if config_job(wildcards).problem == "sssp" and not every_source(wildcards):
        return [f"{RESULTS}/graphs/{wildcards.graph}.sources.txt"]
    return []


def every_source(wildcards):
    """Whether an SSSP job sweeps every vertex's tree (its graph's sources: all): no sources file, a summary."""
    return (
        config_job(wildcards).problem == "sssp"
        and graph_sources(wildcards.graph)[0] == ALL_SOURCES
    )


def sources_flag(wildcards, input):
    if every_source(wildcards):
        return "--all-sources"
    return f"--sources {shlex.quote(input.sources[0])}" if input.sources else ""


def answer_flag(wildcards):
    """The flag that writes a solve's answer file: a sweep's reductions (--summary) or the rows (--answer)."""
    return "--summary" if every_source(wildcards) else "--answer"


def peer_input(wildcards):
    """A peer's solve job waits for its build (BUILD.json: built, or unavailable with the reason)."""
    name = peer_of(wildcards)
    return [f"{peer_build_dir(name)}/{peers.BUILD_INFO}"] if name else []


def peer_env(wildcards):
    """GPUSP_<PEER>=<build folder> for a peer's solve job: the one way its solver finds the binary."""
    name = peer_of(wildcards)
    return f"{peers.env_var(name)}={shlex.quote(peer_build_dir(name))}" if name else ""


def solve_env():
    """The CUDA simulator stands in for a GPU when none is found (records then say 'sim'), but never where one
    was allotted: a job given a GPU by SLURM (or CUDA_VISIBLE_DEVICES) that cannot use it fails instead of wasting
    the allocation in the simulator."""
    if always_simulated():
        return "NUMBA_ENABLE_CUDASIM=1"
    if config["simulate"] == "auto":
        # decided on the machine that runs the job (a GPU node on a cluster), not at planning time
        allotted = "".join(f"${{{name}:-}}" for name in ALLOTTED)
        return (
            f'NUMBA_ENABLE_CUDASIM=$(if [ -n "{allotted}" ]; '
            "then echo 0; else python -c \"import gpusp.device as d; print(int(d.mode() != 'gpu'))\"; fi)"
        )
    return "NUMBA_ENABLE_CUDASIM=0"


def always_simulated():
    """Whether the config runs every GPU solver in the CUDA simulator (simulate: always)."""
    return config["simulate"] in (True, "always")
