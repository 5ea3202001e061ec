"""The workflow on a cluster and as others use it: how many SLURM jobs a sweep makes, what reruns when what changes,
partial config files, a failed aggregation, the workflow as a Snakemake module, the simulator guard of a GPU job and
memory on retry.

Mostly dry runs (`snakemake -n`, a few seconds each) and three small real runs in the CUDA simulator (about 15-30 s
each), every one with its results in a temporary folder; the whole file takes about 2 minutes. Snakemake runs from
the repository root as in tests/test_workflow.py (whose helpers these tests share), except the module test.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from test_slurm import _need_plugin, cluster_jobs, planned_jobs
from test_workflow import (DEFAULT_CONFIG, REPO, _refused, job_counts, plotless_env, run_snakemake, snakemake_env,
                           write_config)

from gpusp.measure.codehash import code_hash, module_file, solver_modules
from gpusp.data.prepare import graph_size
from gpusp.plan import expand_jobs, load_config, memory_mb
from gpusp.solvers import registry

pytestmark = pytest.mark.timeout(600)

PAPER002 = REPO / "config" / "experiments" / "paper002-fig4.yaml"
# what every sweep plans after its solves
AFTER_SOLVES = {"aggregate_records": 1, "plot_results": 1, "all": 1}


def smk(*args, cwd=REPO, env=None, timeout=300) -> subprocess.CompletedProcess:
    """``python -m snakemake ARGS`` from ``cwd`` with stdout and stderr apart; ``env`` changes the environment of
    tests/test_workflow.py's snakemake_env (a value None removes the variable)."""
    full = snakemake_env()
    for key, value in (env or {}).items():
        if value is None:
            full.pop(key, None)
        else:
            full[key] = value
    return run_snakemake(args, cwd=cwd, env=full, merge=False, timeout=timeout)


def dry(*args, cwd=REPO, env=None) -> tuple[dict[str, int], list[dict], str]:
    """A dry run that must succeed: (job counts by rule, the planned jobs of test_slurm.planned_jobs, its output)."""
    proc = smk("-n", *args, cwd=cwd, env=env)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-5000:]
    counts, jobs = job_counts(proc.stdout), planned_jobs(proc.stdout)
    assert len(jobs) == sum(counts.values()), out[-5000:]
    return counts, jobs, out


def solves(jobs: list[dict]) -> set[tuple[str, str, str]]:
    """(graph, solver, parameter set) of the planned solve jobs."""
    return {(j["wildcards"]["graph"], j["wildcards"]["solver"], j["wildcards"]["params"]) for j in jobs
            if j["rule"] == "solve_graph"}


def nothing_planned(counts: dict, out: str) -> None:
    assert counts == {} and "Nothing to be done" in out, out[-5000:]


# --- (a) how many SLURM jobs a sweep makes ---------------------------------------------------------------------
def test_paper002_fig4_is_at_most_40_cluster_jobs(tmp_path):
    """`snakemake -n --profile slurm` of Zuccato's Figure 4 (328 solves, 328 validations): the solves and
    validations travel in group jobs of at most 16 (solve, validation) pairs, aggregation and figures in one, and
    the local rules make no SLURM job: 21 + 1 group jobs and 8 graph preparations, not 676 sbatch calls."""
    _need_plugin()
    counts, jobs, out = dry("--profile", "slurm", "--configfile", PAPER002, "--config", f"results={tmp_path / 'r'}")
    planned = expand_jobs(load_config(PAPER002))[0]
    assert counts["solve_graph"] == counts["validate_answer"] == len(planned) == 328
    total, groups, single = cluster_jobs(jobs)
    assert out.count("Group job ") == groups
    assert single == {"prepare_graph": 8}, single
    assert total <= 40, (total, groups, single)
    members: dict[int, list[str]] = {}
    for job in jobs:
        if job["group"] is not None:
            members.setdefault(job["group_index"], []).append(job["rule"])
        else:
            assert job["rule"] not in ("solve_graph", "validate_answer", "aggregate_records", "plot_results"), job
    gpu = [rules for rules in members.values() if "solve_graph" in rules]
    assert all(len(rules) <= 2 * 16 and rules.count("solve_graph") == rules.count("validate_answer") for rules in gpu)
    assert len(gpu) == -(-328 // 16) == 21 and groups == len(gpu) + 1


# --- (b) reruns exactly when results change ------------------------------------------------------------------------
RUN_CONFIG = {
    "simulate": "always", "trials": 1, "warmup": 0, "time_budget_s": 60,
    "sources": {"count": 1, "seed": 1}, "validate": {"apsp_rows": 4},
    "graphs": {"tiny": {"file": "src/gpusp/data/tiny.gr"},
               "rand16": {"generate": "random", "params": {"n": 16, "k": 3, "wmax": 20}, "seed": 2,
                          "sources": {"count": 1, "seed": 3}}},
    "solvers": [{"name": "scipy_dijkstra"}, {"name": "bellmanford_naive", "params": {"block": 32}},
                {"name": "scipy_apsp"}],
}
GRAPHS = tuple(RUN_CONFIG["graphs"])
SSSP = {(g, s, p) for g in GRAPHS for s, p in (("scipy_dijkstra", "default"), ("bellmanford_naive", "block-32"))}
APSP = {(g, "scipy_apsp", "default") for g in GRAPHS}


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    """A real run (simulator, 2 cores) of two tiny graphs, two SSSP solvers and one APSP solver: (its config, the
    config file, the results folder). Its plot job draws no figure (test_workflow.plotless_env: nothing here looks at
    them). A dry run right after it plans nothing."""
    base = tmp_path_factory.mktemp("small-run")
    config = {"results": str(base / "results"), **RUN_CONFIG}
    cfg = write_config(base / "config.yaml", config)
    proc = smk("--cores", 2, "--configfile", cfg, timeout=600, env=plotless_env(base / "bin"))
    if proc.returncode != 0:
        pytest.fail(f"the small run failed:\n{(proc.stdout + proc.stderr)[-6000:]}")
    nothing_planned(*dry("--configfile", cfg)[::2])
    return config, cfg, Path(config["results"])


def changed(small_run, tmp_path, change) -> Path:
    """A copy of the small run's config file, ``change`` applied to its config."""
    config = yaml.safe_load(yaml.safe_dump(small_run[0]))
    change(config)
    return write_config(tmp_path / "changed.yaml", config)


def test_changing_the_mirror_reruns_nothing(small_run, tmp_path):
    """The mirror reaches the downloads through $GPUSP_MIRROR, not a rule parameter: where verified files come from
    changes no result, so neither another `mirror` key nor another $GPUSP_MIRROR plans a job."""
    _, cfg, _ = small_run
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    nothing_planned(*dry("--configfile", changed(small_run, tmp_path, lambda c: c.update(mirror=str(mirror))))[::2])
    nothing_planned(*dry("--configfile", cfg, env={"GPUSP_MIRROR": str(mirror)})[::2])
    nothing_planned(*dry("--configfile", cfg, env={"GPUSP_MIRROR": None})[::2])


def test_changing_the_apsp_validation_rows_reruns_only_apsp_solves(small_run, tmp_path):
    """validate.apsp_rows is a setting of APSP solves only (gpusp.plan.Job.settings): its change reruns the APSP
    solves (and what depends on them), no SSSP solve and no graph."""
    cfg = changed(small_run, tmp_path, lambda c: c["validate"].update(apsp_rows=3))
    counts, jobs, out = dry("--configfile", cfg)
    assert solves(jobs) == APSP, out[-5000:]
    assert counts == {"solve_graph": 2, "validate_answer": 2, **AFTER_SOLVES}, counts
    assert all(j["reason"].startswith("Params have changed") for j in jobs if j["rule"] == "solve_graph"), jobs


def test_a_solver_code_change_reruns_exactly_its_jobs(small_run, tmp_path):
    """Editing one solver's source reruns its jobs and no other.

    A test cannot edit the package that other tests import, so the dry runs import a copy of src/gpusp (first on
    PYTHONPATH: the Snakefile's `gpusp` and its code hashes then come from the copy). Unchanged, the copy plans
    nothing (the code hash covers file contents and module names, not where the files lie); with one line added to
    bellmanford_naive's module, exactly bellmanford_naive's solves rerun, since the `code` parameter of solve_graph
    (gpusp.measure.codehash.code_hash of the solver's import closure) changed for it alone."""
    _, cfg, _ = small_run
    pkg = tmp_path / "pkg"
    shutil.copytree(REPO / "src" / "gpusp", pkg / "gpusp", ignore=shutil.ignore_patterns("__pycache__"))
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(pkg), os.environ.get("PYTHONPATH")]))}
    nothing_planned(*dry("--configfile", cfg, env=env)[::2])

    spec = registry.get("bellmanford_naive")
    module = spec.impl.split(":")[0]
    others = [registry.get(s["name"]) for s in RUN_CONFIG["solvers"] if s["name"] != spec.name]
    assert all(module not in solver_modules(other) for other in others)  # the edit reaches bellmanford_naive only
    source = module_file(module, pkg / "gpusp")
    source.write_text(source.read_text() + "\n# an edit: a different version of the solver\n")
    assert code_hash(spec, pkg / "gpusp") != code_hash(spec)
    assert all(code_hash(other, pkg / "gpusp") == code_hash(other) for other in others)

    counts, jobs, out = dry("--configfile", cfg, env=env)
    assert solves(jobs) == {(g, "bellmanford_naive", "block-32") for g in GRAPHS}, out[-5000:]
    assert counts == {"solve_graph": 2, "validate_answer": 2, **AFTER_SOLVES}, counts


@pytest.fixture(scope="module")
def sources_changed(small_run, tmp_path_factory):
    """The dry run of the small run's config with rand16's sources seed changed (the next two tests ask it)."""
    cfg = changed(small_run, tmp_path_factory.mktemp("sources"),
                  lambda c: c["graphs"]["rand16"]["sources"].update(seed=5))
    return dry("--configfile", cfg)


def test_changing_one_graphs_sources_does_not_prepare_it_again(sources_changed):
    """A graph's `sources` are planning settings (gpusp.plan.PLANNING_ONLY): their change picks that graph's sources
    again and reruns its SSSP solves, but prepares no graph and touches no other graph's jobs."""
    counts, jobs, out = sources_changed
    assert "prepare_graph" not in counts, out[-5000:]
    assert [j["wildcards"]["graph"] for j in jobs if j["rule"] == "pick_sources"] == ["rand16"]
    assert {g for g, _, _ in solves(jobs)} == {"rand16"}
    assert {job for job in SSSP if job[0] == "rand16"} <= solves(jobs)


def test_changing_one_graphs_sources_reruns_no_apsp_solve(sources_changed):
    """An APSP solve solves from every vertex: a graph's SSSP sources change nothing of its result."""
    counts, jobs, out = sources_changed
    assert solves(jobs) == {job for job in SSSP if job[0] == "rand16"}, sorted(solves(jobs))


# --- (c) partial config files and nested overrides ----------------------------------------------------------------
def test_a_site_file_without_graphs_or_solvers_is_laid_over_the_default(tmp_path):
    """A --configfile naming neither graphs nor solvers (results, trials) runs the embedded default's jobs with its
    values, never zero jobs."""
    site = write_config(tmp_path / "site.yaml", {"results": str(tmp_path / "results"), "trials": 2})
    counts, jobs, out = dry("-p", "--configfile", site)
    default = load_config(DEFAULT_CONFIG)
    planned = expand_jobs(default)[0]
    assert len(planned) == 18
    assert solves(jobs) == {(j.graph, j.solver, j.label) for j in planned}
    assert counts == {"prepare_graph": len(default["graphs"]), "pick_sources": len(default["graphs"]),
                      "write_skipped": 1, "solve_graph": 18, "validate_answer": 18, **AFTER_SOLVES}, counts
    commands = re.findall(r"gpusp solve .*", out)
    assert len(commands) == 18 and all(" --trials 2 " in c for c in commands), commands[:2]
    assert all(str(tmp_path / "results") in c for c in commands)
    assert not (tmp_path / "results").exists()


def test_a_gpu_partition_in_a_site_file_is_refused(tmp_path):
    """`slurm: {gpu_partition: ...}` moved to the SLURM profile: a site file that still sets it is refused in one
    line that names slurm/config.yaml."""
    site = write_config(tmp_path / "site.yaml", {"slurm": {"gpu_partition": "gpu"}})
    proc = smk("-n", "--configfile", site, timeout=120)
    _refused(proc, f"config/config.yaml + {site}", "slurm/config.yaml")
    assert "key slurm/gpu_partition" in proc.stderr.splitlines()[-1]


def test_a_nested_config_override_is_typed(tmp_path):
    """`--config 'sources={count: 3, seed: 1}'`: Snakemake reads the nested values as text; they reach the schema
    and the jobs as numbers."""
    counts, jobs, out = dry("-p", "--config", f"results={tmp_path / 'results'}", "sources={count: 3, seed: 1}")
    assert counts["solve_graph"] == 18
    picks = re.findall(r"gpusp sources .* --count (\S+) --seed (\S+) ", out)
    assert picks and set(picks) == {("3", "1")}, picks


# --- (d) a failed aggregation ----------------------------------------------------------------------------------------
@pytest.fixture
def one_solve_run(tmp_path):
    """A real run of one CPU solver on the tiny graph up to its tables (aggregate_records; no figures): (config file,
    results folder)."""
    config = {"results": str(tmp_path / "results"), "simulate": "always", "trials": 1, "warmup": 0,
              "sources": {"count": 1, "seed": 1}, "graphs": {"tiny": {"file": "src/gpusp/data/tiny.gr"}},
              "solvers": [{"name": "scipy_dijkstra"}]}
    cfg = write_config(tmp_path / "config.yaml", config)
    proc = smk("aggregate_records", "--cores", 2, "--configfile", cfg, timeout=600)
    if proc.returncode != 0:
        pytest.fail(f"the run before the aggregation failed:\n{(proc.stdout + proc.stderr)[-6000:]}")
    return cfg, tmp_path / "results"


def test_a_failed_aggregation_leaves_the_earlier_tables(one_solve_run):
    """Aggregation that fails (here: a record file damaged after the run) leaves the tables of the previous
    aggregation in place, with their content (update() outputs: Snakemake restores its copy of them)."""
    cfg, results = one_solve_run
    tables = results / "tables"
    kept = {name: (tables / name).read_bytes() for name in ("summary.csv", "landing.rst", "samples.csv")}
    record = results / "runs" / "tiny" / "scipy_dijkstra" / "default.json"
    record.write_text('{"broken')
    proc = smk("--cores", 1, "--configfile", cfg, "--forcerun", "aggregate_records", timeout=300)
    log = (results / "logs" / "aggregate_records.log").read_text()
    if proc.returncode == 0 or "Error in rule aggregate_records" not in proc.stdout + proc.stderr \
            or "not valid JSON" not in log:  # the aggregation must have failed, and for the damaged record
        pytest.fail(f"not the failed aggregation this test needs:\n{(proc.stdout + proc.stderr)[-3000:]}\n{log}")
    left = {name: (tables / name).read_bytes() if (tables / name).exists() else None for name in kept}
    assert left == kept, sorted(p.name for p in tables.iterdir())


# --- (e) the workflow as a Snakemake module ---------------------------------------------------------------------------
MODULE_SNAKEFILE = """\
module gpusp:
    snakefile:
        "{snakefile}"
    config:
        config


use rule * from gpusp
"""


def test_the_workflow_runs_as_a_module_from_another_folder(tmp_path):
    """`module gpusp: snakefile: <this Snakefile>` + `use rule * from gpusp` in another folder plans the embedded
    default there: its graph files are found from the workflow's own folder, not the working directory."""
    (tmp_path / "Snakefile").write_text(MODULE_SNAKEFILE.format(snakefile=REPO / "Snakefile"))
    counts, jobs, out = dry("--cores", 1, cwd=tmp_path)
    assert "MissingInputException" not in out
    default = load_config(DEFAULT_CONFIG)
    assert counts == {"prepare_graph": len(default["graphs"]), "pick_sources": len(default["graphs"]),
                      "write_skipped": 1, "solve_graph": 18, "validate_answer": 18, **AFTER_SOLVES}, counts
    assert re.search(rf"input: {re.escape(str(REPO / 'src' / 'gpusp' / 'data' / 'tiny.gr'))}\n", out), out[-5000:]
    assert not (tmp_path / "results").exists()


# --- (f) simulate: auto never falls back to the simulator in a job given a GPU -------------------------------------
@pytest.fixture(scope="module")
def solve_env_prefix(tmp_path_factory) -> str:
    """The environment prefix of the rendered solve commands of the default config (simulate: auto)."""
    counts, _, out = dry("-p", "--config", f"results={tmp_path_factory.mktemp('auto') / 'results'}")
    assert counts["solve_graph"] == 18
    prefixes = set(re.findall(r"^Shell command: (.*?)\s+gpusp solve ", out, re.M))
    assert len(prefixes) == 1, prefixes
    return prefixes.pop()


@pytest.mark.parametrize("allotted, expected", [
    ({"CUDA_VISIBLE_DEVICES": "0"}, "0"),
    ({"SLURM_JOB_GPUS": "3"}, "0"),
    ({"SLURM_STEP_GPUS": "1"}, "0"),
    ({}, "1"),  # no GPU allotted and none found here: the simulator stands in
], ids=["CUDA_VISIBLE_DEVICES", "SLURM_JOB_GPUS", "SLURM_STEP_GPUS", "none"])
def test_simulate_auto_never_simulates_in_a_job_given_a_gpu(solve_env_prefix, allotted, expected):
    """The rendered solve command decides on the job's machine: a job that SLURM or CUDA_VISIBLE_DEVICES gave a GPU
    runs with NUMBA_ENABLE_CUDASIM=0 (it fails if it cannot use the GPU rather than timing the simulator); only a
    job given none asks gpusp.device whether a GPU is there (none here: the simulator)."""
    prefix = solve_env_prefix
    assert prefix.startswith("NUMBA_ENABLE_CUDASIM=$(") and "CUDA_VISIBLE_DEVICES" in prefix
    assert "SLURM_JOB_GPUS" in prefix
    env = {k: v for k, v in snakemake_env().items()
           if k not in ("CUDA_VISIBLE_DEVICES", "SLURM_JOB_GPUS", "SLURM_STEP_GPUS", "NUMBA_ENABLE_CUDASIM")}
    env.update(allotted)
    proc = subprocess.run(["bash", "-c", f"set -euo pipefail; {prefix} printenv NUMBA_ENABLE_CUDASIM"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == expected, (allotted, proc.stdout, proc.stderr)


# --- (g) memory on retry -------------------------------------------------------------------------------------------------
def test_memory_doubles_per_attempt_and_the_profile_retries():
    for problem, n, m in (("sssp", 21, 63), ("apsp", 1200, 360_000), (None, 16, 48), ("sssp", None, None)):
        first = memory_mb(problem, n, m)
        assert first == memory_mb(problem, n, m, attempt=1) > 0
        assert [memory_mb(problem, n, m, attempt=a) for a in (2, 3, 4)] == [2 * first, 4 * first, 8 * first]
    assert memory_mb("apsp", 1200, 10) > memory_mb("sssp", 1200, 10)  # the n x n matrix
    profile = yaml.safe_load((REPO / "slurm" / "config.yaml").read_text())
    assert int(profile["retries"]) >= 1


def test_a_retried_solve_asks_for_twice_the_memory_and_runtime(tmp_path):
    """A real run whose solve fails (dijkstra_cpu meets negative weights only when it reads the file), with the SLURM
    profile's retries: every attempt asks for twice the memory and runtime of the one before."""
    retries = int(yaml.safe_load((REPO / "slurm" / "config.yaml").read_text())["retries"])
    neg = tmp_path / "neg.plain"
    neg.write_text("5 6\n0 1 4\n1 2 -2\n2 3 3\n0 3 9\n3 4 1\n1 4 7\n")
    config = {"results": str(tmp_path / "results"), "simulate": "always", "trials": 1, "warmup": 0,
              "time_budget_s": 60, "sources": {"count": 1, "seed": 0}, "graphs": {"neg": {"file": str(neg)}},
              "solvers": [{"name": "dijkstra_cpu"}]}
    cfg = write_config(tmp_path / "c.yaml", config)
    proc = smk("--cores", 1, "--retries", retries, "--configfile", cfg, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "Error in rule solve_graph" in out, out[-3000:]
    attempts = [job["resources"] for job in planned_jobs(proc.stdout + proc.stderr) if job["rule"] == "solve_graph"]
    assert len(attempts) == retries + 1, out[-5000:]
    n, m, _ = graph_size("neg", config["graphs"]["neg"])
    for attempt, res in enumerate(attempts, start=1):
        assert int(res["mem_mb"]) == memory_mb("sssp", n, m, attempt) == memory_mb("sssp", n, m) * 2 ** (attempt - 1)
        assert int(res["runtime"]) == 2 * attempt  # a minute to start and one of work at the first attempt
