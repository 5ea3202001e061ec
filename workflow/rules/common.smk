import json
import os
import shlex
import sys

from gpusp.errors import GpuspError
from gpusp.plan import (
    PARAMSET,
    SAFE_NAME,
    SOLVER_NAME,
    config_source,
    expand_jobs,
    graph_spec_json,
    results_dir,
    source_settings,
    validate_config,
    write_skipped as write_skipped_json,
)

from gpusp.data import peers
from gpusp.solvers import registry

# Names end up in file paths and shell commands, so nothing is planned from a config that has not passed
# gpusp.plan's checks (the schema, with its defaults filled in, then what the schema cannot say). A config
# error is the user's, not the workflow's: one line naming the config file and key, and no stack frames,
# which Snakemake prints for any exception raised while it reads the Snakefile.
CONFIG_SOURCE = config_source(workflow.configfiles, workflow.config_settings.config)
try:
    config.update(validate_config(config, CONFIG_SOURCE))
    JOBS, SKIPPED = expand_jobs(config, CONFIG_SOURCE)
except GpuspError as exc:
    sys.exit(f"gpusp: error: {exc}")
RESULTS = str(results_dir(config))
JOB_INDEX = {(j.graph, j.solver, j.label): j for j in JOBS}
MIRROR = config["mirror"] or os.environ.get("GPUSP_MIRROR") or ""
# the figures of plot_results (gpusp.report.plots.FIGURES; not imported here: that would load matplotlib)
FIGURES = ("time_per_solver", "speedup", "tile_heatmap", "scaling", "throughput")


wildcard_constraints:
    graph=SAFE_NAME,
    solver=SOLVER_NAME,
    params=PARAMSET,
    dataset=SAFE_NAME,


def config_job(wildcards):
    """The configured job behind a solve/validate path (never trust parameters parsed from it)."""
    key = (wildcards.graph, wildcards.solver, wildcards.params)
    if key not in JOB_INDEX:
        raise ValueError(f"no such job in the config: {'/'.join(key)}")
    return JOB_INDEX[key]


def job_params(wildcards):
    """--param flags of one job, from the config matrix (values are schema-checked safe tokens)."""
    job = config_job(wildcards)
    return " ".join(
        f"--param {k}={shlex.quote(str(v))}" for k, v in sorted(job.params.items())
    )


def job_budget(wildcards):
    """Seconds one solve may take: the solver's time_budget_s, else the top-level one."""
    return config_job(wildcards).budget


def job_trials(wildcards):
    """Timed runs per source: the solver's trials, else the top-level value."""
    return config_job(wildcards).trials


def job_warmup(wildcards):
    """Warm-up runs: the solver's warmup, else the top-level value."""
    return config_job(wildcards).warmup


def job_seed(wildcards):
    """Seed of the solve's sampled APSP validation rows (the top-level sources seed)."""
    return config_job(wildcards).seed


def job_validate_rows(wildcards):
    """APSP rows a solve checks against SciPy (validate.apsp_rows)."""
    return config_job(wildcards).validate_rows


def job_threads(wildcards):
    """Cores of a solve job: a CPU solver's workers/threads parameter (0: a whole GPU node), else 1."""
    params = config_job(wildcards).params
    want = int(params.get("workers", params.get("threads", 1)))
    return want or config["slurm"]["gpu_node_cores"]


def job_runtime(wildcards, attempt):
    """SLURM minutes of a solve job: the budget plus start-up slack, more on a retry."""
    return 10 + int(job_budget(wildcards) / 60 + 1) * attempt


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
    """The peer a solve job runs (its solver family, e.g. gapbs), or None for gpusp's own solvers."""
    spec = registry.get(wildcards.solver)
    return spec.family if spec.peer else None


def peer_input(wildcards):
    """A peer's solve job waits for its build (BUILD.json: built, or unavailable with the reason)."""
    name = peer_of(wildcards)
    return [f"{peer_build_dir(name)}/{peers.BUILD_INFO}"] if name else []


def peer_env(wildcards):
    """GPUSP_<PEER>=<build folder> for a peer's solve job: the one way its solver finds the binary."""
    name = peer_of(wildcards)
    return f"{peers.env_var(name)}={shlex.quote(peer_build_dir(name))}" if name else ""


def mirror_flag():
    return f"--mirror {shlex.quote(MIRROR)}" if MIRROR else ""


def solve_env():
    """The CUDA simulator stands in for a GPU when none is found (records then say 'sim')."""
    sim = config["simulate"]
    if sim is True or sim == "always":
        return "NUMBA_ENABLE_CUDASIM=1"
    if sim == "auto":
        # decided on the machine that runs the job (a GPU node on a cluster), not at planning time
        return (
            'NUMBA_ENABLE_CUDASIM=$(python -c "import gpusp.device as d; '
            "print(int(d.mode() != 'gpu'))\")"
        )
    return "NUMBA_ENABLE_CUDASIM=0"
