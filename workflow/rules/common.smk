import json
import os

from gpusp.workflow import (
    PARAMSET,
    SAFE_NAME,
    expand_jobs,
    graph_spec_json,
    results_dir,
)

RESULTS = str(results_dir(config))
JOBS, SKIPPED = expand_jobs(config)
MIRROR = config.get("mirror") or os.environ.get("GPUSP_MIRROR") or ""


wildcard_constraints:
    graph=SAFE_NAME,
    solver=r"[a-z0-9]+_[a-z0-9]+",
    params=PARAMSET,
    dataset=SAFE_NAME,


def job_params(wildcards):
    """--param flags of one job, from the config matrix (never from the path)."""
    for job in JOBS:
        if (job.graph, job.solver, job.label) == (
            wildcards.graph,
            wildcards.solver,
            wildcards.params,
        ):
            return " ".join(f"--param {k}={v}" for k, v in sorted(job.params.items()))
    raise ValueError(f"no such job in the config: {wildcards}")


def record_paths():
    return [f"{RESULTS}/runs/{j.graph}/{j.solver}/{j.label}.json" for j in JOBS]


def verdict_paths():
    return [f"{RESULTS}/runs/{j.graph}/{j.solver}/{j.label}.verdict.json" for j in JOBS]


def graph_sources(graph):
    spec = config["graphs"][graph].get("sources", {})
    default = config.get("sources", {})
    return int(spec.get("count", default.get("count", 2))), int(
        spec.get("seed", default.get("seed", 0))
    )


def solve_env():
    """The CUDA simulator stands in for a GPU when none is found (records then say 'sim')."""
    sim = config.get("simulate", "auto")
    if sim is True or sim == "always":
        return "NUMBA_ENABLE_CUDASIM=1"
    if sim == "auto":
        return 'NUMBA_ENABLE_CUDASIM=$(python -c "import gpusp.device as d; print(int(d.mode() != \'gpu\'))")'
    return "NUMBA_ENABLE_CUDASIM=0"
