"""The ``gpusp`` command's launch (:mod:`gpusp.launch`): the CUDA simulator stands in where no GPU is usable and none
was allotted, a GPU solver refused names the switches that would run it, and a long solve says how far it got."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import gpusp
from gpusp import launch
from gpusp.data.generate import generate
from gpusp.measure import job
from gpusp.solvers import registry

TINY = Path(gpusp.__file__).parent / "data" / "tiny.gr"
NO_GPU = pytest.mark.skipif(launch.cuda_devices() > 0, reason="a CUDA GPU is usable here: nothing stands in for it")


def bare_environment(**extra) -> dict:
    """This environment without the simulator's variable or any allotted GPU."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM" and k not in launch.ALLOTTED}
    return {**env, "PYTHONPATH": str(Path(gpusp.__file__).parents[1]), **extra}


@pytest.mark.parametrize("environ, devices, chosen", [
    ({}, 0, True),  # nothing said, no GPU: the simulator
    ({}, 1, False),  # a GPU: kept
    ({"NUMBA_ENABLE_CUDASIM": "0"}, 0, False),  # said explicitly: kept, even without a GPU
    ({"NUMBA_ENABLE_CUDASIM": "1"}, 1, False),
    ({"SLURM_JOB_GPUS": "0"}, 0, False),  # allotted but unusable: the job fails rather than simulating
    ({"CUDA_VISIBLE_DEVICES": "1"}, 0, False),
    ({"CUDA_VISIBLE_DEVICES": ""}, 0, True),  # empty: nothing allotted
])
def test_the_simulator_stands_in_only_where_nothing_was_said_or_allotted(monkeypatch, environ, devices, chosen):
    monkeypatch.setattr(launch, "cuda_devices", lambda: devices)
    env = dict(environ)
    assert launch.simulate_without_gpu(env) is chosen
    assert env == ({**environ, "NUMBA_ENABLE_CUDASIM": "1"} if chosen else environ)


@NO_GPU
def test_gpusp_solve_without_a_gpu_runs_simulated_and_sums_up_its_sources():
    done = subprocess.run([sys.executable, "-m", "gpusp", "solve", "--graph", str(TINY), "--solver", "deltastep_gpu",
                           "--num-sources", "3", "--trials", "1", "--warmup", "0", "--validate"],
                          capture_output=True, text=True, env=bare_environment(), timeout=300)
    assert done.returncode == 0, done.stderr
    assert "CUDA simulator (times are SIMULATED" in done.stderr
    lines = done.stdout.splitlines()
    assert sum(" source " in line and "wall-simulated" in line for line in lines) == 3
    assert any(line.startswith("deltastep_gpu over 3 sources: median ") for line in lines)
    assert "validation: ok" in done.stdout


@NO_GPU
def test_a_gpu_solver_refused_names_the_switches_and_the_allotted_gpu():
    done = subprocess.run([sys.executable, "-m", "gpusp", "solve", "--graph", str(TINY), "--solver", "deltastep_gpu"],
                          capture_output=True, text=True, env=bare_environment(SLURM_JOB_GPUS="3"), timeout=300)
    assert done.returncode == 1
    error = done.stderr.strip().splitlines()[-1]
    assert "one was allotted (SLURM_JOB_GPUS=3)" in error and "--config simulate=always" in error
    assert "NUMBA_ENABLE_CUDASIM=1" in error and "Traceback" not in done.stderr


def test_summary_across_sources_gives_median_quartiles_mean_and_range():
    line = job.across_sources("s", [4.0, 1.0, 3.0, 2.0])
    assert line == "s over 4 sources: median 2.500 ms (q1-q3 1.750-3.250), mean 2.500 ms, min 1.000, max 4.000"


def test_each_run_is_heard_as_it_ends_and_a_long_one_is_logged(capsys):
    """solve_many reports every warm-up and trial as it ends, a batch's too, with the time the record keeps; the job
    writes a line for each run of PROGRESS_AFTER_S or more, so a step killed mid-job has said how far it got."""
    from gpusp.measure.harness import solve_many

    graph = generate("grid", rows=4, cols=5, seed=1)
    for name, sources in (("dijkstra_cpu", [0, 3]), ("multisource_sssp", [0, 3, 7])):
        heard = []
        results = list(solve_many(graph, name, sources, trials=3, warmup=2,
                                  on_run=lambda *run: heard.append(run)))
        trials = len(sources) if not registry.get(name).batched else 1
        assert [(kind, k) for kind, k, _ in heard] == [("warm-up", 1), ("warm-up", 2)] + [("trial", 1), ("trial", 2),
                                                                                        ("trial", 3)] * trials
        if trials > 1:  # each trial's seconds are the sample the record keeps
            assert [s * 1e3 for kind, _, s in heard if kind == "trial"] == [
                ms for r in results for ms in r.timings.samples_ms]
        assert all(s >= 0 for *_, s in heard)
    job._run_done("s", "trial", 2, job.PROGRESS_AFTER_S - 0.1)
    assert capsys.readouterr().err == ""
    job._run_done("s", "warm-up", 1, 71.34)
    assert capsys.readouterr().err == "gpusp: s: warm-up 1 took 71.3 s\n"


def test_progress_and_the_simulator_warning_go_to_stderr(monkeypatch, capsys):
    job._progress("s", 1, 4, 0.5)
    assert capsys.readouterr().err == ""  # a short job stays quiet
    job._progress("s", 2, 4, job.PROGRESS_AFTER_S + 1)
    assert "s: 2/4 sources in 6.0 s (3.00 s a source)" in capsys.readouterr().err
    job._progress("s", 1, 1, 60.0)
    assert capsys.readouterr().err == ""  # one source: its own line says it all
    monkeypatch.setattr(job, "mode", lambda: "sim")
    big = generate("grid", rows=100, cols=100, seed=1)
    job._warn_if_slow(registry.get("deltastep_gpu"), big)
    assert f"runs in the CUDA simulator (no GPU) on {big.m:,} arcs" in capsys.readouterr().err
    job._warn_if_slow(registry.get("dijkstra_cpu"), big)  # a CPU solver: nothing to warn about
    job._warn_if_slow(registry.get("deltastep_gpu"), generate("ring", n=8))
    assert capsys.readouterr().err == ""
