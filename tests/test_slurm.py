"""`snakemake --profile slurm`: the resources every job asks for (dry runs, no cluster needed), and
a real run of tests/data/workflow-tiny.yaml on a SLURM cluster when one answers.

The real run needs a cluster with partitions `cpu` and `gpu` (one GPU as GRES), e.g. the one-node
test cluster of `.ci/slurm-cluster start` (root; see /work/shared/docs/slurm-local-cluster.md). It
takes 2-5 minutes (each job starts snakemake twice; the plugin waits 5 s per submission) and runs
under `timeout -s KILL`, because a snakemake whose status queries fail never exits on SIGTERM.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from test_workflow import REPO, TINY, TINY_FIGURES, _refused, job_counts, snakemake, snakemake_env

from gpusp.data.prepare import graph_size
from gpusp.plan import expand_jobs, load_config, memory_mb, source_settings

pytestmark = pytest.mark.timeout(1200)

# rules whose jobs go to the GPU partition (in group jobs "gpu"); every other job goes to partition cpu
RULES_ON_GPU = {"solve_graph", "validate_answer"}
RULES_ON_CPU = {"prepare_graph", "pick_sources", "aggregate_records", "plot_results", "write_skipped", "all"}
# the Snakefile's localrules: they run where snakemake runs, never as SLURM jobs
LOCAL_RULES = {"all", "write_skipped", "fetch_dataset", "build_gapbs", "build_gunrock", "pick_sources"}
GROUPS = {"solve_graph": "gpu", "validate_answer": "gpu", "aggregate_records": "report", "plot_results": "report"}


def _need_plugin():
    pytest.importorskip("snakemake_executor_plugin_slurm",
                        reason="snakemake-executor-plugin-slurm is not installed (pip install -e '.[workflow]')")


def planned_jobs(output: str) -> list[dict]:
    """Every job a dry run prints: {rule, group (the group's name, None outside one), group_index (the how-many-th
    group job it belongs to, None outside one), resources, wildcards, reason (text)}. Jobs of a group job are printed indented
    after its "Group job NAME" line; the next unindented job ends the group."""
    jobs, group, index, job = [], None, -1, None
    for line in output.splitlines():
        m = re.search(r"\bGroup job (\S+) \(jobs", line)
        if m:
            group, index, job = m.group(1), index + 1, None
            continue
        m = re.match(r"^(\s*)(?:local)?rule (\w+):$", line)
        if m:
            if not m.group(1):
                group = None
            job = {"rule": m.group(2), "group": group, "group_index": index if group else None,
                   "resources": {}, "wildcards": {}, "reason": ""}
            jobs.append(job)
            continue
        m = re.match(r"^\s+(resources|wildcards|reason): (.*)$", line)
        if m and job is not None:
            key, value = m.groups()
            job[key] = value if key == "reason" else dict(kv.split("=", 1) for kv in value.split(", "))
    return jobs


def planned_resources(output: str) -> list[tuple[str, dict]]:
    """(rule, resources) of every job a dry run prints."""
    return [(job["rule"], job["resources"]) for job in planned_jobs(output)]


def cluster_jobs(jobs: list[dict]) -> tuple[int, int, dict[str, int]]:
    """What `--profile slurm` would submit to SLURM for a dry run's plan (:func:`planned_jobs`): (SLURM jobs in all,
    group jobs, ungrouped non-local jobs by rule). A group job is one SLURM job; a local rule's job none."""
    groups = len({job["group_index"] for job in jobs if job["group"] is not None})
    single: dict[str, int] = {}
    for job in jobs:
        if job["group"] is None and job["rule"] not in LOCAL_RULES:
            single[job["rule"]] = single.get(job["rule"], 0) + 1
    return groups + sum(single.values()), groups, single


def test_local_rules_are_the_snakefiles():
    """LOCAL_RULES (what cluster_jobs leaves out) is the Snakefile's localrules directive."""
    block = re.search(r"^localrules:\n((?:[ \t]+\w+,?\n)+)", (REPO / "Snakefile").read_text(), re.M)
    assert block, "no localrules directive in the Snakefile"
    assert set(re.findall(r"\w+", block.group(1))) == LOCAL_RULES


def _dry(tmp_path, *args, config=()):
    # one --config flag: a second one would replace the first
    proc = snakemake("-n", *args, "--configfile", TINY, "--config", f"results={tmp_path / 'results'}", *config,
                     timeout=300)
    assert proc.returncode == 0, proc.stdout[-5000:]
    jobs = planned_jobs(proc.stdout)
    assert len(jobs) == sum(job_counts(proc.stdout).values()), proc.stdout[-5000:]
    assert all(job["resources"] for job in jobs), [job for job in jobs if not job["resources"]]
    return jobs


def test_profile_resources_dry_run(tmp_path):
    """`snakemake --profile slurm -n`: solves and their validations go to partition gpu, in group jobs "gpu" (both
    take the GPU token, so a group job runs them one at a time and no validation runs beside a timed solve), with
    the host memory gpusp.plan.memory_mb gives their graph and problem and the solve's expected runtime; the rest go
    to partition cpu, aggregation and figures together in one group job "report"."""
    _need_plugin()
    jobs = _dry(tmp_path, "--profile", "slurm")
    rules = {job["rule"] for job in jobs}
    assert rules == {"prepare_graph", "pick_sources", "solve_graph", "validate_answer", "aggregate_records",
                     "plot_results", "write_skipped", "all"}
    config = load_config(TINY)
    planned = {(j.graph, j.solver, j.label): j for j in expand_jobs(config)[0]}
    for job in jobs:
        rule, res, wc = job["rule"], job["resources"], job["wildcards"]
        assert job["group"] == GROUPS.get(rule), job
        if rule in RULES_ON_GPU:
            plan = planned[wc["graph"], wc["solver"], wc["params"]]
            assert res["slurm_partition"] == "gpu", job
            assert res.get("gpu") == ("1" if rule in ("solve_graph", "validate_answer") else None), job
            assert int(res["mem_mb"]) == plan.memory_mb == memory_mb(plan.problem, plan.n, plan.m), job
            # a solve: its expected minutes (a tiny graph: start-up and one more), under its budget's 2 + 2
            simulated = config["simulate"] in (True, "always")
            expected = plan.runtime_minutes(source_settings(config, wc["graph"])[0], simulated)
            assert int(res["runtime"]) == (expected if rule == "solve_graph" else 5) and expected <= 2 + 2, job
        else:
            assert rule in RULES_ON_CPU, job
            assert res["slurm_partition"] == "cpu" and "gpu" not in res, job
            if rule == "prepare_graph":
                n, m, _ = graph_size(wc["graph"], config["graphs"][wc["graph"]])
                assert int(res["mem_mb"]) == memory_mb(None, n, m) < 4000, job
                assert int(res["runtime"]) == 5 + -(-m // 2**25), job  # a tiny graph: 6 minutes
            else:
                assert res["mem_mb"] == "4000", job
    assert sum(job["rule"] == "solve_graph" for job in jobs) == 6
    # 6 solves + 6 validations: 6 connected components, at most 16 per group job: one SLURM job; the report one
    assert cluster_jobs(jobs) == (2 + 2, 2, {"prepare_graph": 2})
    group = sum(int(j["resources"]["runtime"]) for j in jobs if j["rule"] in ("solve_graph", "validate_answer"))
    assert group <= 6 * 2 + 6 * 5, group  # the solves ask their expected minutes, not their budgets' 6 x 4
    by_group = {}
    for job in jobs:
        if job["group"]:
            by_group.setdefault((job["group"], job["group_index"]), []).append(job["rule"])
    assert sorted((name, sorted(members)) for (name, _), members in by_group.items()) == [
        ("gpu", sorted(["solve_graph"] * 6 + ["validate_answer"] * 6)),
        ("report", ["aggregate_records", "plot_results"])]


# bellmanford_naive given a gpus parameter in the snakemake process (a multi-GPU solver made for the test, so that
# it depends on no multi-GPU solver being registered)
MULTI_GPU_SITE = """
import dataclasses
from gpusp.solvers import registry
from gpusp.solvers.common.spec import Param
spec = registry.REGISTRY["bellmanford_naive"]
multi = dataclasses.replace(spec, params=spec.params + (Param("gpus", 1, "GPUs", minimum=1),))
registry.REGISTRY[spec.name] = multi
registry.SPECS = tuple(multi if s.name == spec.name else s for s in registry.SPECS)
"""


def _group_request(jobs: list[dict], constraints: dict) -> dict:
    """What Snakemake adds up for one group job of planned jobs (solves first, then their validations) under the
    profile's limits: its resources, as the SLURM plugin reads them."""
    from snakemake.resources import GroupResources, Resources

    def fake(job):
        res = {k: int(v) if v.isdigit() else v for k, v in job["resources"].items()
               if v.isdigit() or k == "slurm_partition"}
        return SimpleNamespace(resources=res, pipe_group=None)

    levels = [[fake(j) for j in jobs if j["rule"] == rule] for rule in ("solve_graph", "validate_answer")]
    return GroupResources.basic_layered(levels, Resources.from_mapping(constraints), run_local=False)


def test_a_multi_gpu_solve_asks_for_its_gpus(tmp_path):
    """A solve asks for its solver's GPUs: with a gpus parameter, the gpus=2 solve asks gpu=2 and goes with its
    validation into a group job "gpus2" of its own, which sbatch asks for 2 GPUs (--gpus=2); the 1-GPU solves stay in
    group "gpu", asking for one. Inside each group job the gpu_turn puts the jobs in series (their runtimes add)."""
    _need_plugin()
    from snakemake_executor_plugin_slurm.utils import set_gres_string

    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(MULTI_GPU_SITE)
    config = tmp_path / "multi.yaml"
    config.write_text(yaml.safe_dump({
        "results": str(tmp_path / "results"), "trials": 2, "warmup": 1, "sources": {"count": 2, "seed": 1},
        "graphs": {"tiny": {"file": "src/gpusp/data/tiny.gr"}},
        "solvers": [{"name": "dijkstra_cpu"}, {"name": "bellmanford_naive", "params": {"block": 32}},
                    {"name": "bellmanford_naive", "params": {"block": 32, "gpus": 2}}]}))
    env = {**snakemake_env(), "PYTHONPATH": os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])])}
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--profile", "slurm", "--configfile", str(config)],
                          cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300,
                          check=False)
    assert proc.returncode == 0, proc.stdout[-5000:]
    jobs = planned_jobs(proc.stdout)
    solves = {job["wildcards"]["params"]: job for job in jobs if job["rule"] == "solve_graph"}
    assert set(solves) == {"default", "block-32", "block-32+gpus-2"}
    for job in jobs:
        if job["rule"] in RULES_ON_GPU:
            two = job["wildcards"]["params"] == "block-32+gpus-2"
            want = "2" if two and job["rule"] == "solve_graph" else "1"
            assert (job["group"], job["resources"]["gpu"], job["resources"]["gpu_turn"]) == (
                "gpus2" if two else "gpu", want, "1"), job
    profile = yaml.safe_load((REPO / "slurm" / "config.yaml").read_text())
    limits = dict(item.split("=") for item in profile["resources"])
    assert "gpu" not in limits  # a limit on gpu would cap what a job asks for
    groups = {}
    for job in jobs:
        if job["group"] in ("gpu", "gpus2"):
            groups.setdefault(job["group"], []).append(job)
    assert sorted(len(members) for members in groups.values()) == [2, 4]
    for name, members in groups.items():
        request = _group_request(members, {k: int(v) for k, v in limits.items()})
        gpus = 2 if name == "gpus2" else 1
        assert set_gres_string(SimpleNamespace(resources=request)).strip() == f"--gpus={gpus}", request
        assert request["gpu_turn"] == 1 and request["runtime"] == sum(int(j["resources"]["runtime"]) for j in members)


def test_ci_profile_overrides_the_site_profile(tmp_path):
    """`--profile slurm --profile .ci/profile-ci`: the later profile's keys win (small memory for a
    2-core test cluster); the GPU partition and request stay."""
    _need_plugin()
    for job in _dry(tmp_path, "--profile", "slurm", "--profile", ".ci/profile-ci"):
        rule, res = job["rule"], job["resources"]
        if rule in RULES_ON_GPU:
            assert (res["slurm_partition"], res.get("gpu"), res["mem_mb"]) == (
                "gpu", "1" if rule in ("solve_graph", "validate_answer") else None, "500"), job
        else:
            assert (res["slurm_partition"], res["mem_mb"]) == ("cpu", "300"), job
        assert job["group"] == GROUPS.get(rule), job


def test_gpu_partition_comes_from_the_profile(tmp_path):
    """The GPU partition is the SLURM profile's (set-resources of solve_graph, validate_answer and run_paper003,
    which one group job must agree on): a site profile that names another partition moves every GPU job there and
    nothing else."""
    _need_plugin()
    site = yaml.safe_load((REPO / "slurm" / "config.yaml").read_text())
    for rule in ("solve_graph", "validate_answer", "run_paper003"):
        assert site["set-resources"][rule]["slurm_partition"] == "gpu", rule
    text = (REPO / "slurm" / "config.yaml").read_text()
    assert text.count("slurm_partition: gpu") == 1  # one anchor for the three rules
    profile = tmp_path / "site"
    profile.mkdir()
    (profile / "config.yaml").write_text(text.replace("slurm_partition: gpu", "slurm_partition: a100"))
    jobs = _dry(tmp_path, "--profile", profile)
    assert {job["resources"]["slurm_partition"] for job in jobs if job["rule"] in RULES_ON_GPU} == {"a100"}
    assert {job["resources"]["slurm_partition"] for job in jobs if job["rule"] not in RULES_ON_GPU} == {"cpu"}


def test_gpu_partition_in_the_config_is_refused(tmp_path):
    """`slurm: {gpu_partition: ...}` is no longer a config key: one line that says where the partition is set."""
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--configfile", str(TINY), "--config",
                           f"results={tmp_path / 'results'}", "slurm={'gpu_partition': 'a100'}"],
                          cwd=REPO, env=snakemake_env(), capture_output=True, text=True, timeout=120)
    _refused(proc, f"{TINY} (with --config results, slurm)", "slurm/config.yaml")
    assert "key slurm/gpu_partition" in proc.stderr
    assert not (tmp_path / "results").exists()


# --- a real cluster ---------------------------------------------------------------------------------
def _cluster_or_skip() -> str:
    sinfo = shutil.which("sinfo")
    if not sinfo:
        pytest.skip("no SLURM cluster: `sinfo` is not installed (start one with `bash .ci/slurm-cluster start`)")
    try:
        proc = subprocess.run([sinfo, "-h", "-o", "%P %a %T"], capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        pytest.skip("no SLURM cluster: `sinfo` did not answer within 20 s")
    if proc.returncode != 0:
        why = " ".join((proc.stderr or proc.stdout).split())[:200]
        pytest.skip(f"no SLURM cluster answers (start one: `bash .ci/slurm-cluster start`): sinfo: {why}")
    states = {}
    for line in proc.stdout.splitlines():
        part, avail, state = line.split()
        states.setdefault(part.rstrip("*"), set()).add((avail, state))
    for part in ("cpu", "gpu"):
        if not any(a == "up" and s.rstrip("*~#") in ("idle", "mixed", "allocated") for a, s in states.get(part, ())):
            pytest.skip(f"the SLURM cluster has no usable partition {part!r} (sinfo: {proc.stdout.strip()!r})")
    return sinfo


def test_workflow_on_slurm(tmp_path):
    """The tiny sweep through sbatch: every job completes, the group job of the solves and validations got
    `-p gpu --gpus=1`."""
    _need_plugin()
    _cluster_or_skip()
    results = tmp_path / "results"
    log = tmp_path / "snakemake.log"
    cmd = ["timeout", "-s", "KILL", "900", sys.executable, "-m", "snakemake", "--profile", "slurm", "--profile",
           ".ci/profile-ci", "--configfile", str(TINY), "--config", f"results={results}",
           # the test cluster's GPU is a fake one: a job given it would (rightly) refuse to fall back to the simulator
           "simulate=always", "--verbose"]
    t0 = time.monotonic()
    with open(log, "w") as fh:
        proc = subprocess.run(cmd, cwd=REPO, env=snakemake_env(), stdout=fh, stderr=subprocess.STDOUT)
    elapsed = time.monotonic() - t0
    out = log.read_text()
    print(f"snakemake on SLURM: exit {proc.returncode} after {elapsed:.0f} s")
    if proc.returncode != 0:
        ctld = Path("/var/log/slurm/slurmctld.log")
        tail = "\n".join(ctld.read_text(errors="replace").splitlines()[-30:]) if ctld.exists() else ""
        pytest.fail(f"exit {proc.returncode} after {elapsed:.0f} s (137: killed by the 900 s timeout)\n"
                    f"{out[-8000:]}\n--- slurmctld.log ---\n{tail}")

    # outputs, as on a workstation
    import pandas as pd

    summary = pd.read_csv(results / "tables" / "summary.csv")
    assert len(summary) == 6 and (summary["status"] == "ok").all() and summary["validated"].all()
    assert (summary["mode"] == summary["device"].map({"gpu": "sim", "cpu": "cpu"})).all()
    for path in (results / "runs").rglob("*.verdict.json"):
        assert json.loads(path.read_text())["ok"] is True
    assert sorted(p.name for p in (results / "plots").iterdir() if not p.name.startswith(".")) == [
        f"{name}.png" for name in TINY_FIGURES]
    for name in TINY_FIGURES:
        assert (results / "plots" / f"{name}.png").read_bytes()[:4] == b"\x89PNG"

    # what was submitted: one sbatch per group job or ungrouped remote job (a group job's comment is
    # rule_<group>_<its rules>), GPU flags on the group jobs of solves only, nothing for the local rules
    calls = re.findall(r"sbatch call: (sbatch .*)", out)
    by_rule = {}
    for call in calls:
        name = re.search(r"--comment '?rule_(\w+)", call).group(1)
        group = next((g for g in ("gpu", "report") if name.startswith(f"{g}_")), None)
        key = f"group {group}" if group else name.split("_wildcards_")[0]
        by_rule.setdefault(key, []).append(call)
    assert set(by_rule) == {"prepare_graph", "group gpu", "group report"}, sorted(by_rule)
    for call in by_rule["group gpu"]:
        assert re.search(r"(^| )-p '?gpu'?( |$)", call) and "--gpus=1" in call, call
    for rule in ("prepare_graph", "group report"):
        for call in by_rule[rule]:
            assert re.search(r"(^| )-p '?cpu'?( |$)", call) and "--gpus" not in call, call
    # 6 solves with their validations: 6 connected components, up to 16 per group job
    assert (len(by_rule["prepare_graph"]), len(by_rule["group gpu"]), len(by_rule["group report"])) == (2, 1, 1)
    assert len(calls) == 4
    # the jobs ran on the cluster: every job's SLURM id was reported back as done
    assert len(re.findall(r"Finished job", out)) >= len(calls)
