"""`snakemake --profile slurm`: the resources every job asks for (dry runs, no cluster needed), and
a real run of tests/data/workflow-tiny.yaml on a SLURM cluster when one answers.

The real run needs a cluster with partitions `cpu` and `gpu` (one GPU as GRES), e.g. the one-node
test cluster of `.ci/slurm-cluster start` (root; see /work/shared/docs/slurm-local-cluster.md). It
takes 2-5 minutes (each job starts snakemake twice; the plugin waits 5 s per submission) and runs
under `timeout -s KILL`, because a snakemake whose status queries fail never exits on SIGTERM.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from test_workflow import REPO, TINY, job_counts, snakemake, snakemake_env

pytestmark = pytest.mark.timeout(1200)

RULES_ON_CPU = {"prepare_graph", "pick_sources", "validate_answer", "aggregate_records", "plot_results",
                "write_skipped", "all"}


def _need_plugin():
    pytest.importorskip("snakemake_executor_plugin_slurm",
                        reason="snakemake-executor-plugin-slurm is not installed (pip install -e '.[workflow]')")


def planned_resources(output: str) -> list[tuple[str, dict]]:
    """(rule, resources) of every job a dry run prints."""
    jobs, rule = [], None
    for line in output.splitlines():
        m = re.match(r"^(?:local)?rule (\w+):", line)
        if m:
            rule = m.group(1)
            continue
        m = re.match(r"^\s+resources: (.*)$", line)
        if m and rule:
            jobs.append((rule, dict(kv.split("=", 1) for kv in m.group(1).split(", "))))
            rule = None
    return jobs


def _dry(tmp_path, *args, config=()):
    # one --config flag: a second one would replace the first
    proc = snakemake("-n", *args, "--configfile", TINY, "--config", f"results={tmp_path / 'results'}", *config,
                     timeout=300)
    assert proc.returncode == 0, proc.stdout[-5000:]
    jobs = planned_resources(proc.stdout)
    assert len(jobs) == sum(job_counts(proc.stdout).values())
    return jobs


def test_profile_resources_dry_run(tmp_path):
    """`snakemake --profile slurm -n`: solve jobs go to partition gpu with one GPU, the rest to cpu."""
    _need_plugin()
    jobs = _dry(tmp_path, "--profile", "slurm")
    rules = {rule for rule, _ in jobs}
    assert rules == {"prepare_graph", "pick_sources", "solve_graph", "validate_answer", "aggregate_records",
                     "plot_results", "write_skipped", "all"}  # the last two run locally (localrules)
    for rule, res in jobs:
        if rule == "solve_graph":
            assert res["slurm_partition"] == "gpu" and res["gpu"] == "1", res
            assert res["mem_mb"] == "16000" and int(res["runtime"]) >= 10, res
        else:
            assert res["slurm_partition"] == "cpu" and "gpu" not in res, (rule, res)
            assert rule in RULES_ON_CPU
            assert res["mem_mb"] == ("2000" if rule == "plot_results" else "4000"), (rule, res)
    assert sum(rule == "solve_graph" for rule, _ in jobs) == 6


def test_ci_profile_overrides_the_site_profile(tmp_path):
    """`--profile slurm --profile .ci/profile-ci`: the later profile's keys win (small memory for a
    2-core test cluster); the GPU request stays."""
    _need_plugin()
    for rule, res in _dry(tmp_path, "--profile", "slurm", "--profile", ".ci/profile-ci"):
        if rule == "solve_graph":
            assert (res["slurm_partition"], res["gpu"], res["mem_mb"]) == ("gpu", "1", "500"), res
        else:
            assert (res["slurm_partition"], res["mem_mb"]) == ("cpu", "300"), (rule, res)


def test_gpu_partition_comes_from_the_config(tmp_path):
    _need_plugin()
    jobs = _dry(tmp_path, "--profile", "slurm", config=["slurm={'gpu_partition': 'a100'}"])
    assert {res["slurm_partition"] for rule, res in jobs if rule == "solve_graph"} == {"a100"}
    assert {res["slurm_partition"] for rule, res in jobs if rule != "solve_graph"} == {"cpu"}


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
    """The tiny sweep through sbatch: every job completes, solve jobs got `-p gpu --gpus=1`."""
    _need_plugin()
    _cluster_or_skip()
    results = tmp_path / "results"
    log = tmp_path / "snakemake.log"
    cmd = ["timeout", "-s", "KILL", "900", sys.executable, "-m", "snakemake", "--profile", "slurm", "--profile",
           ".ci/profile-ci", "--configfile", str(TINY), "--config", f"results={results}", "--verbose"]
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
    assert (summary["mode"] == "sim").all()
    for path in (results / "runs").rglob("*.verdict.json"):
        assert json.loads(path.read_text())["ok"] is True
    for name in ("time_per_solver", "speedup", "tile_heatmap", "scaling", "throughput"):
        assert (results / "plots" / f"{name}.png").read_bytes()[:4] == b"\x89PNG"

    # what was submitted: one sbatch per remote job, GPU flags on the solve jobs only
    calls = re.findall(r"sbatch call: (sbatch .*)", out)
    by_rule = {}
    for call in calls:
        rule = re.search(r"--comment '?rule_(\w+?)_wildcards", call) or re.search(r"--comment '?rule_(\w+)", call)
        by_rule.setdefault(rule.group(1), []).append(call)
    assert len(by_rule.get("solve_graph", [])) == 6, sorted(by_rule)
    for call in by_rule["solve_graph"]:
        assert re.search(r"(^| )-p '?gpu'?( |$)", call) and "--gpus=1" in call, call
    for rule, rule_calls in by_rule.items():
        assert rule in RULES_ON_CPU | {"solve_graph"}, rule
        if rule != "solve_graph":
            for call in rule_calls:
                assert re.search(r"(^| )-p '?cpu'?( |$)", call) and "--gpus" not in call, call
    assert "write_skipped" not in by_rule  # a local rule
    assert sum(map(len, by_rule.values())) == len(calls) == 6 + 6 + 2 + 2 + 1 + 1
    # the jobs ran on the cluster: every job's SLURM id was reported back as done
    assert len(re.findall(r"Finished job", out)) >= len(calls)
