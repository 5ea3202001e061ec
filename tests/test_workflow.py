"""The Snakemake workflow: job matrix and skips (gpusp.plan), hostile names, dry runs, and an end
to end run of tests/data/workflow-tiny.yaml in the CUDA simulator (about 30-60 s).

Every snakemake call runs from the repository root, as a user would, with ``--config results=<tmp>``
so that nothing is written into the tree's own results/.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from gpusp.data.prepare import graph_size
from gpusp.solvers import registry
from gpusp.errors import GpuspError
from gpusp.plan import (
    PARAMSET,
    Job,
    check_name,
    expand_jobs,
    load_config,
    parse_paramset,
    paramset_label,
    validate_config,
    write_skipped,
)

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "tests" / "data" / "workflow-tiny.yaml"
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
DEFAULT_CONFIG = REPO / "config" / "config.yaml"

pytestmark = pytest.mark.timeout(600)


# --- helpers (test_report.py and test_slurm.py import these) ---------------------------------------
def snakemake_env() -> dict:
    """The environment of a snakemake subprocess: this interpreter's scripts (gpusp) first on PATH,
    the CUDA simulator on (the records then say mode 'sim')."""
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.setdefault("NUMBA_ENABLE_CUDASIM", "1")
    env["PYTHONUNBUFFERED"] = "1"
    return env


# Each `python -m snakemake` spends about 7 s of CPU importing Snakemake, its plugins and gpusp before it reads the
# Snakefile (a dry run of a small config takes about 2 s more). The tests' snakemake calls therefore go to a fork
# server: one process per pytest process that has imported all that once (and collected Snakemake's plugins) and
# forks a child for every call, which runs `python -m snakemake ARGS` as its __main__ does (snakemake.cli.main with
# sys.argv set), with its own working directory, environment, stdout and stderr, in a process group of its own. A
# child starts from the same state every time (nothing of one call reaches the next). A call whose environment differs
# from the server's in a variable read at import time (IMPORT_TIME_ENV: PYTHONPATH, NUMBA_*, ...) runs as a plain
# subprocess, as does every call when the server cannot start.
_FORK_SERVER = r"""
import json, os, signal, sys

proto = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)  # nothing but the replies reaches the requests' pipe
import snakemake.cli
MAIN = os.path.join(os.path.dirname(snakemake.cli.__file__), "__main__.py")  # argv[0] of python -m snakemake
snakemake.cli.get_argument_parser()  # collects the plugins (registries are singletons): once, here
# what the Snakefile's common.smk imports, and what checking a config against the schema imports
import gpusp.data.mirror, gpusp.device, gpusp.measure.codehash, gpusp.plan, gpusp.solvers.auto  # noqa: E401
import gpusp.solvers.peers.build, gpusp.solvers.registry  # noqa: E401
import jsonschema, snakemake.utils  # noqa: E401


def reap(*_):
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


signal.signal(signal.SIGCHLD, reap)  # reaped by waitpid, so that their CPU time counts as this process's children's
proto.write("ready\n")
proto.flush()


def child(req):
    os.setpgrp()
    proto.close()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    out = os.open(req["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    err = os.open(req["err"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC) if req["err"] else out
    os.dup2(out, 1)
    os.dup2(err, 2)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    os.chdir(req["cwd"])
    os.environ.clear()
    os.environ.update(req["env"])
    sys.argv = [MAIN, *req["args"]]
    code = 0
    try:
        snakemake.cli.main()
    except SystemExit as exc:  # as the interpreter ends a script: None 0, a number itself, else printed and 1
        if exc.code is None:
            code = 0
        elif isinstance(exc.code, int):
            code = exc.code
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except BaseException:
        import traceback
        traceback.print_exc()
        code = 1
    try:
        import atexit, logging
        atexit._run_exitfuncs()
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        with open(req["result"] + ".part", "w") as fh:
            fh.write(str(code))
        os.rename(req["result"] + ".part", req["result"])
        os._exit(code & 0xFF)


for line in sys.stdin:
    req = json.loads(line)
    pid = os.fork()
    if pid == 0:
        try:
            child(req)
        finally:
            os._exit(70)
    proto.write(f"{pid}\n")
    proto.flush()
"""


class ServerGone(Exception):
    """The fork server stopped answering."""


class _SnakemakeForkServer:
    def __init__(self, env: dict):
        import tempfile

        self.env = _import_time_env(env)
        self.lock = threading.Lock()
        self.tmp = Path(tempfile.mkdtemp(prefix="gpusp-smk-"))
        self.count = 0
        self.proc = subprocess.Popen([sys.executable, "-c", _FORK_SERVER], cwd=REPO, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        if self.proc.stdout.readline() != "ready\n":
            raise RuntimeError("the snakemake fork server did not start")

    def run(self, args: list[str], cwd, env: dict, merge: bool, timeout: float) -> subprocess.CompletedProcess:
        with self.lock:
            self.count += 1
            base = self.tmp / str(self.count)
        req = {"args": args, "cwd": str(cwd), "env": env, "out": f"{base}.out",
               "err": None if merge else f"{base}.err", "result": f"{base}.rc"}
        with self.lock:
            try:
                self.proc.stdin.write(json.dumps(req) + "\n")
                self.proc.stdin.flush()
                pid = int(self.proc.stdout.readline())
            except (OSError, ValueError):
                raise ServerGone from None
        result, deadline, code = Path(req["result"]), time.monotonic() + timeout, None
        try:
            while code is None:
                if result.exists():
                    code = int(result.read_text())
                    break
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:  # ended (and reaped) without a result: killed
                    code = int(result.read_text()) if result.exists() else -9
                    break
                if time.monotonic() > deadline:
                    raise subprocess.TimeoutExpired([sys.executable, "-m", "snakemake", *args], timeout,
                                                    output=Path(req["out"]).read_text(errors="replace"))
                time.sleep(0.05)
        except BaseException:  # a timeout, or the test stopped: the child goes, as subprocess.run's would
            try:
                os.killpg(pid, 9)
            except ProcessLookupError:
                pass
            raise
        for _ in range(1500):  # the child ends right after writing its result: wait for it (at most 30 s)
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.02)
        files = [Path(req["out"])] + ([] if merge else [Path(req["err"])])
        out, err = (p.read_text() for p in files) if not merge else (files[0].read_text(), None)
        for p in [*files, result]:
            p.unlink(missing_ok=True)
        return subprocess.CompletedProcess([sys.executable, "-m", "snakemake", *args], code, out, err)

    def close(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.tmp, ignore_errors=True)


_server: _SnakemakeForkServer | None | bool = None
_server_lock = threading.Lock()
IMPORT_TIME_ENV = ("PYTHON", "NUMBA_", "LD_", "CUDA_", "NVIDIA_", "OMP_", "MKL_", "OPENBLAS_", "TBB_", "NUMEXPR_")


def _import_time_env(env: dict) -> dict:
    return {k: v for k, v in env.items() if k.startswith(IMPORT_TIME_ENV)}


def run_snakemake(args, *, cwd=REPO, env=None, merge=True, timeout=600) -> subprocess.CompletedProcess:
    """``python -m snakemake ARGS`` from ``cwd`` with ``env`` (default: snakemake_env()): stdout and stderr together
    (``merge``) or apart, as subprocess.run gives them; through the fork server where the environment is its own."""
    global _server
    args = [str(a) for a in args]
    env = snakemake_env() if env is None else env
    with _server_lock:  # test_experiments.py calls from several threads at once
        if _server is None:
            try:
                _server = _SnakemakeForkServer(snakemake_env())
                import atexit

                atexit.register(_server.close)
            except Exception:  # noqa: BLE001  (no server: plain subprocesses)
                _server = False
    if _server and _import_time_env(env) == _server.env:
        try:
            return _server.run(args, cwd, env, merge, timeout)
        except ServerGone:
            _server = False
    return subprocess.run([sys.executable, "-m", "snakemake", *args], cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT if merge else subprocess.PIPE, text=True, timeout=timeout)


def snakemake(*args, timeout=600, check=False, env=None) -> subprocess.CompletedProcess:
    """Run ``python -m snakemake ARGS`` from the repository root (``env``: default snakemake_env()); stdout and stderr
    together."""
    cmd = [sys.executable, "-m", "snakemake", *map(str, args)]
    proc = run_snakemake(args, env=env, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout[-6000:]}")
    return proc


def job_counts(output: str) -> dict[str, int]:
    """The first 'Job stats' table of a snakemake run or dry run, as rule -> count (without 'total')."""
    match = re.search(r"Job stats:\njob\s+count\n[-\s]+\n((?:\S+\s+\d+\n)+)", output)
    if not match:
        return {}
    counts = dict((rule, int(n)) for rule, n in (line.split() for line in match.group(1).splitlines()))
    counts.pop("total", None)
    return counts


def tiny_config() -> dict:
    return yaml.safe_load(TINY.read_text())


def tiny_results(tmp_path_factory) -> Path:
    """Results folder of one end-to-end run of workflow-tiny.yaml, made once per test session and
    shared by test_workflow.py and test_report.py (whichever needs it first runs it)."""
    out = tmp_path_factory.getbasetemp() / "workflow-tiny" / "results"
    done = out.parent / "run.log"
    if not done.exists():
        shutil.rmtree(out, ignore_errors=True)
        out.parent.mkdir(parents=True, exist_ok=True)
        t0 = time.monotonic()
        proc = snakemake("--cores", 2, "--configfile", TINY, "--config", f"results={out}", check=True)
        (out.parent / "first-run.txt").write_text(f"{time.monotonic() - t0:.1f} s\n{proc.stdout}")
        done.write_text(proc.stdout)
    return out


def write_config(path: Path, config: dict) -> Path:
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


# `gpusp plot` for a real run whose figures no test looks at: its two folders made, no figure drawn (about 20 s of CPU
# saved); every other gpusp command is the real one. The plot job itself runs as any other (its outputs, its log and
# Snakemake's records of it are there), so that a later run or dry run of the whole workflow finds it done.
PLOTLESS_GPUSP = """#!/usr/bin/env bash
if [ "$1" = plot ]; then
  while [ $# -gt 0 ]; do case "$1" in --out-dir|--papers-dir) mkdir -p "$2"; shift;; esac; shift; done
  echo "gpusp plot: no figures drawn (tests/test_workflow.py's plotless_env)"
  exit 0
fi
exec {gpusp} "$@"
"""


def plotless_env(folder: Path) -> dict:
    """snakemake_env() with a gpusp whose `plot` draws nothing (PLOTLESS_GPUSP, written into ``folder``) first on
    PATH."""
    env = snakemake_env()
    real = shutil.which("gpusp", path=env["PATH"])
    assert real, "no gpusp on the snakemake PATH"
    folder.mkdir(parents=True, exist_ok=True)
    shim = folder / "gpusp"
    shim.write_text(PLOTLESS_GPUSP.format(gpusp=real))
    shim.chmod(0o755)
    env["PATH"] = f"{folder}{os.pathsep}{env['PATH']}"
    return env


# --- (a) expand_jobs: matrix, skips with reasons, labels -------------------------------------------
def _cfg(graphs, solvers, **extra):
    """A validated config (the schema's defaults filled in), as expand_jobs takes it."""
    return validate_config({"graphs": graphs, "solvers": solvers, **extra})


RANDOM = {"generate": "random", "params": {"n": 16, "k": 3, "wmax": 20}, "seed": 1}
GRID = {"generate": "grid", "params": {"rows": 4, "cols": 5}}


def test_matrix_expansion_counts():
    config = _cfg(
        {"a": RANDOM, "b": GRID},
        [{"name": "scipy_dijkstra"},
         {"name": "bellmanford_naive", "params": {"block": [32, 64], "rounds": ["early", "fixed"]}},
         {"name": "edgebf_coo", "params": {"block": 32, "edges_per_thread": [1, 4]}, "graphs": ["b"]}],
    )
    jobs, skipped = expand_jobs(config)
    assert skipped == []
    by_solver = {}
    for job in jobs:
        by_solver.setdefault(job.solver, []).append(job)
    assert len(by_solver["scipy_dijkstra"]) == 2  # 1 parameter set x 2 graphs
    assert len(by_solver["bellmanford_naive"]) == 8  # 2 x 2 parameter values x 2 graphs
    assert len(by_solver["edgebf_coo"]) == 2  # 2 values x the one graph it is restricted to
    assert {j.graph for j in by_solver["edgebf_coo"]} == {"b"}
    assert len(jobs) == 12
    assert len({(j.graph, j.solver, j.label) for j in jobs}) == len(jobs)
    labels = {j.label for j in by_solver["bellmanford_naive"]}
    assert labels == {"block-32+rounds-early", "block-32+rounds-fixed", "block-64+rounds-early",
                      "block-64+rounds-fixed"}
    assert {j.label for j in by_solver["scipy_dijkstra"]} == {"default"}
    # a Job keeps the raw (configured) parameters; its label is derived from them
    job = next(j for j in jobs if j.label == "block-64+rounds-fixed")
    assert job.params == {"block": 64, "rounds": "fixed"}
    assert isinstance(job, Job) and job.problem == "sssp"


def test_duplicate_combinations_are_run_once():
    config = _cfg({"a": RANDOM}, [{"name": "scipy_dijkstra"}, {"name": "scipy_dijkstra"},
                                 {"name": "bellmanford_naive", "params": {"block": [32, 32]}}])
    jobs, _ = expand_jobs(config)
    assert sorted((j.solver, j.label) for j in jobs) == [("bellmanford_naive", "block-32"),
                                                         ("scipy_dijkstra", "default")]


def test_per_solver_time_budget_reaches_its_jobs():
    jobs, _ = expand_jobs(_cfg({"a": RANDOM}, [{"name": "scipy_dijkstra"},
                                              {"name": "bellmanford_naive", "time_budget_s": 30}],
                               time_budget_s=90))
    assert {j.solver: j.budget for j in jobs} == {"scipy_dijkstra": 90.0, "bellmanford_naive": 30.0}


def test_default_config_expands():
    config = load_config(DEFAULT_CONFIG)
    jobs, skipped = expand_jobs(config)
    assert len(jobs) == 18 and skipped == []


@pytest.mark.parametrize("graph", [
    {**RANDOM, "params": {**RANDOM["params"], "wmin": -5}},  # the generator draws negative weights
    {**RANDOM, "weights": {"action": "replace", "min": -3, "max": 5}},  # weights replaced by negative ones
])
def test_dijkstra_on_negative_weights_is_skipped_with_reason(graph):
    jobs, skipped = expand_jobs(_cfg({"neg": graph}, [{"name": "dijkstra_cpu"}, {"name": "bellmanford_naive"},
                                                     {"name": "scipy_dijkstra"}]))
    assert [(s["graph"], s["solver"], s["params"]) for s in skipped] == [("neg", "dijkstra_cpu", "default")]
    assert "negative weights" in skipped[0]["reason"]
    assert skipped[0]["problem"] == "sssp"
    assert sorted(j.solver for j in jobs) == ["bellmanford_naive", "scipy_dijkstra"]


def test_positive_weights_replacing_negative_ones_are_not_skipped():
    graph = {**RANDOM, "params": {**RANDOM["params"], "wmin": -5}, "weights": {"action": "replace", "min": 1}}
    jobs, skipped = expand_jobs(_cfg({"g": graph}, [{"name": "dijkstra_cpu"}]))
    assert skipped == [] and len(jobs) == 1


def test_apsp_matrix_larger_than_gpu_memory_is_skipped():
    big = {"generate": "ring", "params": {"n": 100_000}}  # a 100000 x 100000 matrix: ~37 GiB at 4 bytes
    small = {"generate": "ring", "params": {"n": 100}}
    config = _cfg({"big": big, "small": small},
                  [{"name": "floydwarshall_naive"}, {"name": "blockedfw_v21", "params": {"block_size": 16}},
                   {"name": "scipy_apsp"}], gpu_memory_gb=16)
    jobs, skipped = expand_jobs(config)
    assert {(s["graph"], s["solver"]) for s in skipped} == {("big", "floydwarshall_naive"), ("big", "blockedfw_v21")}
    for s in skipped:
        assert "GiB of device memory" in s["reason"] and "16.00 GiB free" in s["reason"]
        assert s["problem"] == "apsp"
    # the CPU solver does not use device memory; the small graph fits
    assert {(j.graph, j.solver) for j in jobs} == {("small", "floydwarshall_naive"), ("small", "blockedfw_v21"),
                                                   ("big", "scipy_apsp"), ("small", "scipy_apsp")}
    # with a large enough device the big matrix fits (blocked FW keeps two n x n copies: ~149 GiB)
    jobs, skipped = expand_jobs({**config, "gpu_memory_gb": 192})
    assert skipped == [] and len(jobs) == 6


def test_max_apsp_n_skips_with_reason():
    config = _cfg({"g": {"generate": "ring", "params": {"n": 500}}},
                  [{"name": "scipy_apsp"}, {"name": "scipy_dijkstra"}], max_apsp_n=100)
    jobs, skipped = expand_jobs(config)
    assert [j.solver for j in jobs] == ["scipy_dijkstra"]
    assert skipped[0]["solver"] == "scipy_apsp" and "max_apsp_n" in skipped[0]["reason"]


def test_invalid_parameter_values_are_errors_of_the_config():
    """A value the solver does not allow is an error of the config, like a parameter name it does not have
    (tests/test_plan.py has the cases): no job and no skipped row is planned from it."""
    with pytest.raises(GpuspError, match=r"key solvers/0/params/tile: floydwarshall_tiledglobal: parameter tile=5: "
                                         r"allowed values are \[4, 8, 16, 32\]"):
        _cfg({"a": RANDOM, "b": GRID}, [{"name": "floydwarshall_tiledglobal", "params": {"tile": [16, 5]}}])
    with pytest.raises(GpuspError, match="key solvers/0/params: edgebf_coo has no parameter 'no_such'"):
        _cfg({"a": RANDOM}, [{"name": "edgebf_coo", "params": {"no_such": 1}}])


def test_unknown_solver_and_unknown_graph_reference_fail_early():
    with pytest.raises(GpuspError, match="no_such"):
        expand_jobs(_cfg({"a": RANDOM}, [{"name": "no_such"}]))
    with pytest.raises(GpuspError, match="'zz', which is not in `graphs`"):
        expand_jobs(_cfg({"a": RANDOM}, [{"name": "scipy_dijkstra", "graphs": ["zz"]}]))


def test_graph_sizes_known_at_planning_time():
    assert graph_size("t", {"file": "src/gpusp/data/tiny.gr"}) == (21, 63, False)
    assert graph_size("r", RANDOM) == (16, 48, False)
    assert graph_size("g", GRID) == (20, 62, False)
    assert graph_size("x", {"file": "no/such/file.gr"}) == (None, None, False)


@pytest.mark.parametrize("params, label", [
    ({}, "default"),
    ({"block": 32}, "block-32"),
    ({"rounds": "early", "block": 64}, "block-64+rounds-early"),  # sorted by key
    ({"transpose": True, "tile": 16}, "tile-16+transpose-true"),
    ({"sssp": "edgebf_coo", "block": 256}, "block-256+sssp-edgebf_coo"),
    ({"alpha": 0.5, "shift": -3}, "alpha-0.5+shift--3"),
    ({"method": "min"}, "method-min"),
])
def test_paramset_label_round_trip(params, label):
    assert paramset_label(params) == label
    assert re.fullmatch(PARAMSET, label)
    parsed = parse_paramset(label)
    assert set(parsed) == set(params)
    assert parsed == {k: (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in params.items()}
    assert paramset_label(parsed) == label  # label -> params -> label is the identity


def test_parsed_labels_resolve_like_the_configured_values():
    for solver, params in [("bellmanford_naive", {"block": 64, "rounds": "fixed"}),
                           ("minplus_tiled", {"tile": 16, "transpose": True}),
                           ("bellmanford_allsources", {"sssp": "edgebf_coo", "block": 128})]:
        spec = registry.get(solver)
        assert spec.resolve(parse_paramset(paramset_label(params))) == spec.resolve(params)


@pytest.mark.parametrize("params", [{"block": "32; rm -rf ~"}, {"block": "$(touch x)"}, {"block": "../x"},
                                    {"block": "a b"}, {"block": "a+b"}, {"Block": 1}, {"a-b": 1},
                                    {"x": float("inf")}, {"x": 1e20}])
def test_paramset_label_refuses_unsafe_values(params):
    with pytest.raises(GpuspError):
        paramset_label(params)


def test_paramset_wildcard_never_matches_other_outputs_of_a_job():
    assert not re.fullmatch(PARAMSET, "default.verdict")
    assert not re.fullmatch(PARAMSET, "block-32.answer")
    assert re.fullmatch(PARAMSET, "block_size-8")


# --- (b) hostile names are refused before anything runs --------------------------------------------
HOSTILE = ["x; rm -rf ~", "../etc", "$(touch pwned)", "`touch pwned`", "a/../../b", "x y", "a..b", ".hidden",
           "-rf", "x\nrm", "x\n", "{graph}", ""]


@pytest.mark.parametrize("name", HOSTILE)
def test_check_name_refuses_hostile_names(name):
    with pytest.raises(GpuspError, match="not a safe identifier"):
        check_name(name, "graph name")
    config = _cfg({"safe": RANDOM}, [{"name": "scipy_dijkstra"}])
    config["graphs"] = {name: config["graphs"]["safe"]}  # past the schema: expand_jobs checks names itself
    with pytest.raises(GpuspError, match="not a safe identifier"):
        expand_jobs(config)


@pytest.mark.parametrize("name", ["tiny", "USA-road-d.NY", "rmat-s10", "g1"])
def test_check_name_accepts_safe_names(name):
    assert check_name(name) == name


def _schema_errors(config):
    from snakemake.exceptions import WorkflowError
    from snakemake.utils import validate

    try:
        validate(config, str(SCHEMA))
    except WorkflowError as exc:
        return str(exc)
    return None


def _base():
    return {"graphs": {"tiny": {"file": "src/gpusp/data/tiny.gr"}}, "solvers": [{"name": "scipy_dijkstra"}]}


@pytest.mark.parametrize("name", HOSTILE)
def test_schema_refuses_hostile_graph_names(name):
    config = _base()
    config["graphs"][name] = RANDOM
    assert _schema_errors(config)


@pytest.mark.parametrize("mutate", [
    lambda c: c["solvers"].append({"name": "x; rm -rf ~"}),
    lambda c: c["solvers"].append({"name": "bellmanford_naive", "params": {"block": "32; touch pwned"}}),
    lambda c: c["solvers"].append({"name": "bellmanford_naive", "params": {"block": ["$(touch pwned)"]}}),
    lambda c: c["solvers"].append({"name": "bellmanford_naive", "params": {"$(x)": 1}}),
    lambda c: c["solvers"].append({"name": "scipy_dijkstra", "graphs": ["../etc"]}),
    lambda c: c.update(results="$(touch pwned)"),
    lambda c: c.update(results="out; rm -rf ~"),
    lambda c: c.update(results="res/{graph}"),
    lambda c: c.update(mirror="/m `touch pwned`"),
    lambda c: c["graphs"]["tiny"].update(file="tiny.gr; touch pwned"),
    lambda c: c["graphs"]["tiny"].update(dataset="../../etc/passwd") or c["graphs"]["tiny"].pop("file"),
    lambda c: c.update(slurm={"gpu_partition": "gpu --wrap=id"}),
    lambda c: c.update(unknown_key=1),
], ids=["solver", "param-value", "param-list", "param-key", "solver-graphs", "results-subst", "results-semicolon",
        "results-wildcard", "mirror", "file", "dataset", "partition", "unknown-key"])
def test_schema_refuses_hostile_values(mutate):
    config = _base()
    assert _schema_errors(config) is None
    mutate(config)
    assert _schema_errors(config)


@pytest.mark.parametrize("where", ["graph", "param", "results"])
@pytest.mark.parametrize("dry", [True, False], ids=["dry-run", "run"])
def test_snakemake_refuses_hostile_config_without_running_anything(tmp_path, where, dry):
    marker = tmp_path / "pwned"
    inject = {"graph": f"x; touch {marker}", "param": f"$(touch {marker})", "results": f"`touch {marker}`"}[where]
    config = {"results": str(tmp_path / "results"), "graphs": {"tiny": {"file": "src/gpusp/data/tiny.gr"}},
              "solvers": [{"name": "scipy_dijkstra"}, {"name": "bellmanford_naive", "params": {"block": 32}}]}
    if where == "graph":
        config["graphs"][inject] = dict(RANDOM)
    elif where == "param":
        config["solvers"][1]["params"]["block"] = inject
    else:
        config["results"] = inject
    cfg = write_config(tmp_path / "hostile.yaml", config)
    repo_marker = REPO / "pwned"
    assert not repo_marker.exists()
    args = ["-n"] if dry else ["--cores", 1]
    proc = snakemake(*args, "--configfile", cfg, timeout=120)
    assert proc.returncode != 0, proc.stdout[-3000:]
    assert f"gpusp: error: {cfg}: key " in proc.stdout, proc.stdout[-3000:]
    assert not marker.exists() and not repo_marker.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hostile.yaml"]  # no results folder, nothing else


def test_hostile_names_in_dollar_form_create_no_file_in_the_repo(tmp_path):
    config = {"results": str(tmp_path / "results"), "graphs": {"$(touch pwned)": {"file": "src/gpusp/data/tiny.gr"}},
              "solvers": [{"name": "scipy_dijkstra"}]}
    before = set(os.listdir(REPO))
    proc = snakemake("-n", "--configfile", write_config(tmp_path / "c.yaml", config), timeout=120)
    assert proc.returncode != 0
    assert not (REPO / "pwned").exists()
    assert set(os.listdir(REPO)) - before == set()
    assert not (tmp_path / "results").exists()


# --- (c) dry run of the default config ----------------------------------------------------------------
def test_dry_run_of_default_config(tmp_path):
    proc = snakemake("-n", "--quiet", "rules", "--config", f"results={tmp_path / 'results'}", timeout=300)
    assert proc.returncode == 0, proc.stdout[-5000:]
    jobs, skipped = expand_jobs(load_config(DEFAULT_CONFIG))
    graphs = len(yaml.safe_load(DEFAULT_CONFIG.read_text())["graphs"])
    assert job_counts(proc.stdout) == {"prepare_graph": graphs, "pick_sources": graphs, "write_skipped": 1,
                                       "solve_graph": len(jobs), "validate_answer": len(jobs),
                                       "aggregate_records": 1, "plot_results": 1, "all": 1}
    assert not (tmp_path / "results").exists()


def test_solve_commands_carry_the_planned_jobs_values(tmp_path):
    """Each solve command gets its job's resolved trials, warm-up, budget and seed (gpusp.plan.Job.settings): the
    solver's own values where it has them, else the config's top-level ones. The validation rows reach APSP jobs
    only (an SSSP job solves from its sources file); an SSSP job's seed is the one its graph's sources were picked
    with (the graph's own, else the top-level one), an APSP job's the top-level one. The validation method and its
    limit reach every validate command."""
    config = {"results": str(tmp_path / "results"), "trials": 3, "warmup": 2, "time_budget_s": 50,
              "sources": {"count": 1, "seed": 4},
              "validate": {"apsp_rows": 5, "method": "certificate", "reference_max_work": 123},
              "graphs": {"tiny": {"file": "src/gpusp/data/tiny.gr"},
                         "own": {**RANDOM, "sources": {"seed": 7}}},
              "solvers": [{"name": "scipy_dijkstra"},
                          {"name": "bellmanford_naive", "trials": 1, "warmup": 0, "time_budget_s": 20},
                          {"name": "scipy_apsp"}]}
    proc = snakemake("-n", "--printshellcmds", "--configfile", write_config(tmp_path / "c.yaml", config), timeout=300)
    assert proc.returncode == 0, proc.stdout[-5000:]
    commands = {(graph, solver): rest for graph, solver, rest in
                re.findall(r"gpusp solve --graph \S+/graphs/(\w+)\.gcsr --solver (\S+) (.*)", proc.stdout)}
    jobs = expand_jobs(validate_config(config))[0]
    assert {j.solver: (j.trials, j.warmup, j.budget) for j in jobs} == {"scipy_dijkstra": (3, 2, 50.0),
                                                                        "bellmanford_naive": (1, 0, 20.0),
                                                                        "scipy_apsp": (3, 2, 50.0)}
    assert set(commands) == {(j.graph, j.solver) for j in jobs} and len(jobs) == 6
    for job in jobs:
        command = commands[job.graph, job.solver]
        if job.problem == "apsp":
            expected = f"--trials {job.trials} --warmup {job.warmup} --seed 4 --validate-rows 5 "
        else:
            seed = 7 if job.graph == "own" else 4
            expected = f"--trials {job.trials} --warmup {job.warmup} --seed {seed} "
            assert "--validate-rows" not in command, command
        assert f"{expected}--time-budget {job.budget} " in command, command
    # the validation method reaches the validate commands, never the solves
    validations = re.findall(r"gpusp validate --graph .*", proc.stdout)
    assert len(validations) == len(jobs) and "--validation-method" not in "".join(commands.values())
    assert all("--validation-method certificate --reference-max-work 123 " in v for v in validations), validations
    assert not (tmp_path / "results").exists()


def test_sources_all_sweeps_with_a_summary_and_picks_no_sources(tmp_path):
    """sources: all on a graph: its multisource_sssp solve gets --all-sources and writes its summary where the answer
    goes (which gpusp validate checks by a sample), no sources file is picked, and scipy_dijkstra is skipped."""
    config = {"results": str(tmp_path / "results"), "graphs": {"tiny": {"file": "src/gpusp/data/tiny.gr",
                                                                         "sources": "all"}},
              "solvers": [{"name": "multisource_sssp"}, {"name": "scipy_dijkstra"}]}
    proc = snakemake("-n", "--printshellcmds", "--configfile", write_config(tmp_path / "c.yaml", config), timeout=300)
    assert proc.returncode == 0, proc.stdout[-5000:]
    solves = re.findall(r"gpusp solve --graph .*", proc.stdout)
    assert len(solves) == 1 and "--solver multisource_sssp" in solves[0], solves
    assert "--all-sources" in solves[0] and "--summary" in solves[0] and "--answer" not in solves[0], solves[0]
    assert "gpusp sources" not in proc.stdout and "gpusp validate" in proc.stdout


def test_auto_plans_a_solver_per_graph_and_its_solve_says_so(tmp_path):
    """- name: auto: planning picks a solver for each graph it can read (gpusp.solvers.auto), and that solve command
    says it was planned by auto (the run picks again and its record keeps the pick); a named solver's does not; a
    dataset, which planning does not read, gets a solve of solver auto, which picks on the prepared graph."""
    config = {"results": str(tmp_path / "results"), "graphs": {"tiny": {"file": "src/gpusp/data/tiny.gr"},
                                                               "NY": {"dataset": "USA-road-d.NY"}},
              "solvers": [{"name": "auto"}, {"name": "scipy_dijkstra", "graphs": ["tiny"]}]}
    proc = snakemake("-n", "--printshellcmds", "--configfile", write_config(tmp_path / "c.yaml", config), timeout=300)
    assert proc.returncode == 0, proc.stdout[-5000:]
    solves = {(graph, solver): rest for graph, solver, rest in
              re.findall(r"gpusp solve --graph \S+/graphs/(\S+)\.gcsr --solver (\S+) (.*)", proc.stdout)}
    assert set(solves) == {("tiny", "dijkstra_cpu"), ("tiny", "scipy_dijkstra"), ("NY", "auto")}, solves
    assert "--planned-by-auto" in solves["tiny", "dijkstra_cpu"]
    assert "--planned-by-auto" not in solves["tiny", "scipy_dijkstra"] + solves["NY", "auto"]
    assert "runs/NY/auto/default.json" in solves["NY", "auto"] and "--param " not in solves["NY", "auto"]


def test_e2e_auto_on_a_graph_planning_cannot_read_runs_once_and_says_what_it_picked(tmp_path):
    """A SNAP edge list (a dataset's format: planning knows neither its size nor its features) under `- name: auto`:
    one run prepares it, its solve of solver auto picks on the prepared graph, validation passes, and the summary
    names the solver that ran and the row of auto's table that picked it; nothing is skipped, and nothing is left
    for a second run (its figures are not drawn: plotless_env)."""
    import pandas as pd

    edges = tmp_path / "edges.txt"
    edges.write_text("# FromNodeId\tToNodeId\n0\t1\n1\t2\n2\t3\n3\t0\n1\t3\n3\t4\n4\t5\n5\t1\n")
    results = tmp_path / "results"
    config = {"results": str(results), "trials": 1, "warmup": 0, "sources": {"count": 2, "seed": 1},
              "graphs": {"edges": {"file": str(edges), "format": "snap"}},
              "solvers": [{"name": "auto"}, {"name": "scipy_dijkstra"}]}
    jobs, skipped = expand_jobs(validate_config(config))
    assert sorted(j.solver for j in jobs) == ["auto", "scipy_dijkstra"] and skipped == []
    cfg = write_config(tmp_path / "c.yaml", config)
    snakemake("--cores", 2, "--configfile", cfg, timeout=600, check=True, env=plotless_env(tmp_path / "bin"))
    record = json.loads((results / "runs" / "edges" / "auto" / "default.json").read_text())
    assert record["solver"] == "dijkstra_cpu" and record["status"] == "ok" and record["params_label"] == "default"
    assert record["auto"]["rule"] == "tiny" and record["auto"]["features"]["m"] == 8
    assert record["auto"]["reason"].startswith("auto picked dijkstra_cpu by the row 'tiny'")
    assert json.loads((results / "runs" / "edges" / "auto" / "default.verdict.json").read_text())["ok"] is True
    summary = pd.read_csv(results / "tables" / "summary.csv").set_index("solver")
    assert summary.loc["dijkstra_cpu", "picked_by"] == "auto: tiny" and pd.isna(summary.loc["scipy_dijkstra",
                                                                                           "picked_by"])
    assert bool(summary.loc["dijkstra_cpu", "validated"]) and summary.loc["dijkstra_cpu", "status"] == "ok"
    assert json.loads((results / "tables" / "skipped.json").read_text()) == []
    proc = snakemake("-n", "--configfile", cfg, timeout=300)
    assert proc.returncode == 0 and "Nothing to be done" in proc.stdout, proc.stdout[-3000:]


def test_in_process_and_only_graphs_reach_the_solve_commands(tmp_path):
    """in_process: each solve runs in its `gpusp solve` process, with no --time-budget (no child process killed at
    the budget); only_graphs (gpusp bench --graphs, typed as YAML from --config): the jobs of those graphs alone."""
    config = {"results": str(tmp_path / "results"), "in_process": True, "time_budget_s": 50,
              "graphs": {"tiny": {"file": "src/gpusp/data/tiny.gr"}, "rand": RANDOM},
              "solvers": [{"name": "scipy_dijkstra"}, {"name": "bellmanford_naive", "time_budget_s": 20}]}
    proc = snakemake("-n", "--printshellcmds", "--configfile", write_config(tmp_path / "c.yaml", config),
                     "--config", "only_graphs=[rand]", timeout=300)
    assert proc.returncode == 0, proc.stdout[-5000:]
    commands = re.findall(r"gpusp solve --graph \S+/graphs/(\w+)\.gcsr --solver (\S+) (.*)", proc.stdout)
    assert sorted((graph, solver) for graph, solver, _ in commands) == [("rand", "bellmanford_naive"),
                                                                         ("rand", "scipy_dijkstra")]
    assert all("--time-budget" not in rest and "--trials" in rest for *_, rest in commands), commands
    assert "graphs/tiny.gcsr" not in proc.stdout
    assert not (tmp_path / "results").exists()


# --- (c') a config the planner refuses: one line naming the file and the key, no stack frames ----------------
BAD_CONFIGS = {
    # was: dry run exit 0 with zero solve jobs; the real run then failed in aggregate_records with ['time_ms']
    "param-name": ({"solvers": [{"name": "scipy_dijkstra"}, {"name": "bellmanford_naive", "params": {"blok": 32}}]},
                   "key solvers/1/params: bellmanford_naive has no parameter 'blok' (did you mean 'block'?)"),
    "no-solvers": ({"solvers": []}, "key solvers: the config names no solver"),
    # was: "GpuspError in file .../common.smk" followed by its stack frames
    "solver-name": ({"solvers": [{"name": "dijkstra_cpux"}]}, "key solvers/0/name: unknown solver 'dijkstra_cpux'"),
    # was: a KeyError and its stack frames at parse time
    "generator": ({"graphs": {"r": {"generate": "rmat", "params": {"edge_factor": 4}}}},
                  "key graphs/r: rmat: missing required parameter(s) scale"),
    # was: Snakemake's "Error validating config file" and pages of the schema and the config
    "schema": ({"trails": 3}, "top level: Additional properties are not allowed ('trails' was unexpected)"),
    "unused-graph": ({"graphs": {"tiny": {"file": "src/gpusp/data/tiny.gr"}, "r": RANDOM},
                      "solvers": [{"name": "scipy_dijkstra", "graphs": ["tiny"]}]},
                     "key graphs/r: no solver runs on this graph"),
}


def _refused(proc, source: str, words: str) -> None:
    """Snakemake exited 1 with one ``gpusp: error:`` line on stderr naming ``source`` and ``words`` as its last
    word: no stack frame, no traceback, nothing planned or run."""
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    lines = proc.stderr.splitlines()
    assert lines and lines[-1].startswith(f"gpusp: error: {source}: "), lines
    assert words in lines[-1], lines[-1]
    assert [line for line in lines if line.startswith("gpusp: error:")] == lines[-1:]
    assert "Traceback" not in proc.stderr and not re.search(r'^\s*File "', proc.stderr, re.M), proc.stderr
    assert "Job stats" not in proc.stdout + proc.stderr


def _snakemake_apart(*args) -> subprocess.CompletedProcess:
    """``python -m snakemake ARGS`` from the repository root with stdout and stderr kept apart."""
    return run_snakemake(args, merge=False, timeout=120)


@pytest.mark.parametrize("change, words", BAD_CONFIGS.values(), ids=BAD_CONFIGS.keys())
def test_dry_run_of_a_bad_config_is_one_line(tmp_path, change, words):
    config = {"results": str(tmp_path / "results"), "graphs": {"tiny": {"file": "src/gpusp/data/tiny.gr"}},
              "solvers": [{"name": "scipy_dijkstra"}], **change}
    cfg = write_config(tmp_path / "bad.yaml", config)
    _refused(_snakemake_apart("-n", "--configfile", cfg), str(cfg), words)
    assert not (tmp_path / "results").exists()


def test_a_bad_config_is_refused_before_the_real_run_and_a_bad_override_is_named(tmp_path):
    change, words = BAD_CONFIGS["param-name"]
    config = {"results": str(tmp_path / "results"), "graphs": {"tiny": {"file": "src/gpusp/data/tiny.gr"}}, **change}
    cfg = write_config(tmp_path / "bad.yaml", config)
    _refused(_snakemake_apart("--cores", 1, "--configfile", cfg), str(cfg), words)
    assert not (tmp_path / "results").exists()
    proc = _snakemake_apart("-n", "--configfile", TINY, "--config", f"results={tmp_path / 'results'}", "trials=0")
    _refused(proc, f"{TINY} (with --config results, trials)", "key trials: 0 is less than the minimum of 1")
    proc = _snakemake_apart("-n", "--configfile", TINY, "--config", f"results={tmp_path / 'results'}", "solvers=[]")
    _refused(proc, f"{TINY} (with --config results, solvers)", "key solvers: the config names no solver")
    assert not (tmp_path / "results").exists()


def test_plain_dry_run_succeeds():
    """`snakemake -n` exactly as the README says (whatever state results/ is in)."""
    proc = snakemake("-n", timeout=300)
    assert proc.returncode == 0, proc.stdout[-5000:]


def test_configfile_replaces_the_default_config(tmp_path):
    """--configfile X that names graphs or solvers (a sweep) runs X's graphs only: the embedded default's graphs
    are not merged in (a site file naming neither is laid over the default: test_workflow_cluster.py)."""
    proc = snakemake("-n", "--quiet", "rules", "--configfile", TINY, "--config", f"results={tmp_path}", timeout=300)
    assert proc.returncode == 0, proc.stdout[-5000:]
    counts = job_counts(proc.stdout)
    assert counts["prepare_graph"] == 2 and counts["solve_graph"] == 6


def test_lint_and_format():
    proc = snakemake("--lint", timeout=300)
    assert proc.returncode == 0 and "Lints for" not in proc.stdout, proc.stdout[-5000:]
    snakefmt = shutil.which("snakefmt") or str(Path(sys.executable).parent / "snakefmt")
    if not Path(snakefmt).exists():
        pytest.skip("snakefmt is not installed (pip install -e '.[test]')")
    fmt = subprocess.run([snakefmt, "--check", "Snakefile", "workflow/"], cwd=REPO, capture_output=True, text=True)
    assert fmt.returncode == 0, fmt.stderr + fmt.stdout


# --- (d) end to end on the tiny config ----------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    return tiny_results(tmp_path_factory)


def _records(results: Path):
    return sorted(p for p in (results / "runs").rglob("*.json") if not p.name.endswith(".verdict.json"))


def test_e2e_summary(tiny_run):
    import pandas as pd

    summary = pd.read_csv(tiny_run / "tables" / "summary.csv")
    jobs, skipped = expand_jobs(load_config(TINY))
    assert len(jobs) == 6 and skipped == []
    assert len(summary) == len(jobs)
    got = {(r.graph, r.solver, r.params) for r in summary.itertuples()}
    assert got == {(j.graph, j.solver, j.label) for j in jobs}  # config names, not the graphs' stored names
    assert (summary["status"] == "ok").all()
    assert summary["validated"].astype(bool).all()
    # the GPU solver ran in the simulator ("sim"), the CPU baselines on the CPU ("cpu")
    assert (summary["mode"] == summary["device"].map({"gpu": "sim", "cpu": "cpu"})).all(), summary[["solver", "mode"]]
    assert set(summary["device"]) == {"gpu", "cpu"}
    assert (summary["samples"] == 2 * 2).all()  # trials x sources
    assert summary["median_ms"].gt(0).all()
    # every speed-up divides the graph's fastest CPU baseline (named in cpu_baseline) by the row's median
    for graph, rows in summary.groupby("graph"):
        cpu = rows[rows["device"] == "cpu"]
        best = cpu.loc[cpu["median_ms"].idxmin()]
        assert (rows["cpu_baseline"] == f"{best['solver']} {best['params']}").all(), (graph, rows["cpu_baseline"])
        assert rows["speedup_vs_cpu"].to_numpy() == pytest.approx((best["median_ms"] / rows["median_ms"]).to_numpy())
        assert best["speedup_vs_cpu"] == pytest.approx(1)
        assert (cpu["speedup_vs_cpu"] <= 1 + 1e-9).all()  # no CPU row beats the fastest CPU baseline
    samples = pd.read_parquet(tiny_run / "tables" / "samples.parquet")
    assert len(samples) == 6 * 2 * 2
    assert json.loads((tiny_run / "tables" / "skipped.json").read_text()) == []


def test_e2e_landing_page(tiny_run):
    """The report's first page: the workflow description, then the fastest solver per graph."""
    text = (tiny_run / "tables" / "landing.rst").read_text()
    intro = (Path(__file__).parents[1] / "workflow" / "report" / "workflow.rst").read_text().strip()
    assert text.startswith(intro) and "Fastest solver per graph" in text
    cells = [line.strip().removeprefix("* -").removeprefix("-").strip() for line in text.splitlines()
             if line.strip().startswith(("* -", "- "))]
    width = cells.index("timings") + 1  # the header row ends with the timings column
    rows = {r[0].split()[0]: r for r in (cells[i:i + width] for i in range(width, len(cells), width))}
    assert set(rows) == {"tiny", "rand16"}
    assert rows["tiny"][0] == "tiny (21, 63)"
    for graph, cells in rows.items():
        assert cells[1] == "bellmanford_naive block-32" and cells[3].split()[0] in ("scipy_dijkstra", "dijkstra_cpu")
        assert cells[-2:] == ["yes", "SIMULATED"], cells


def test_e2e_records_are_simulated_and_verdicts_ok(tiny_run):
    records = _records(tiny_run)
    assert len(records) == 6
    for path in records:
        rec = json.loads(path.read_text())
        assert rec["machine"]["mode"] == "sim", path
        assert rec["status"] == "ok", path
        assert rec["trials"] == 2 and rec["graph_label"] == path.parent.parent.name
        verdict = json.loads(path.with_name(path.name.replace(".json", ".verdict.json")).read_text())
        assert verdict["ok"] is True, path
        assert len(verdict["sources"]) == 2
    labels = {p.parent.parent.name + "/" + p.parent.name + "/" + p.stem for p in records}
    assert "tiny/bellmanford_naive/block-32" in labels and "rand16/dijkstra_cpu/default" in labels


# the figures the tiny sweep has data for (no tiled APSP solver: no tile heatmap; graphs of different sizes: the
# scaling plot's points over every graph, though no family has two sizes): plot_results writes only figures with data
TINY_FIGURES = ("scaling", "speedup", "throughput", "time_per_solver")


def test_e2e_plots(tiny_run):
    # (Snakemake keeps a hidden .snakemake_timestamp in a directory output)
    assert sorted(p.name for p in (tiny_run / "plots").iterdir() if not p.name.startswith(".")) == [
        f"{name}.png" for name in TINY_FIGURES]
    for name in TINY_FIGURES:
        path = tiny_run / "plots" / f"{name}.png"
        data = path.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000, path
    log = (tiny_run / "logs" / "plot_results.log").read_text()
    assert "wrote" in log
    # the figures say that these are simulator timings
    import pandas as pd

    from gpusp.report.plots import _label

    assert "SIMULATED" in _label(pd.read_parquet(tiny_run / "tables" / "samples.parquet"))


def test_e2e_every_rule_logged(tiny_run):
    logs = tiny_run / "logs"
    assert len(list((logs / "solve_graph").rglob("*.log"))) == 6
    assert len(list((logs / "validate_answer").rglob("*.log"))) == 6
    for name in ("aggregate_records.log", "plot_results.log", "write_skipped.log"):
        assert (logs / name).exists()
    assert not list(tiny_run.rglob(".*.part*"))  # no temporary files of the atomic writes left


def test_e2e_second_run_has_nothing_to_do(tiny_run):
    proc = snakemake("--cores", 2, "--configfile", TINY, "--config", f"results={tiny_run}", timeout=300)
    assert proc.returncode == 0, proc.stdout[-5000:]
    assert "Nothing to be done" in proc.stdout
    assert job_counts(proc.stdout) == {}
    assert "Finished job" not in proc.stdout


def test_e2e_changing_trials_reruns_solves_only(tiny_run):
    proc = snakemake("-n", "--quiet", "rules", "--configfile", TINY, "--config", f"results={tiny_run}", "trials=3",
                     timeout=300)
    assert proc.returncode == 0, proc.stdout[-5000:]
    # graphs and sources are untouched; every solve (and what depends on it) runs again
    assert job_counts(proc.stdout) == {"solve_graph": 6, "validate_answer": 6, "aggregate_records": 1,
                                       "plot_results": 1, "all": 1}


def test_e2e_changing_one_solver_parameter_runs_only_its_jobs(tiny_run, tmp_path):
    config = tiny_config()
    config["results"] = str(tiny_run)
    config["solvers"][2]["params"]["block"] = 64
    proc = snakemake("-n", "--configfile", write_config(tmp_path / "c.yaml", config), timeout=300)
    assert proc.returncode == 0, proc.stdout[-5000:]
    assert job_counts(proc.stdout) == {"solve_graph": 2, "validate_answer": 2, "aggregate_records": 1,
                                       "plot_results": 1, "all": 1}
    planned = set(re.findall(r"wildcards: graph=(\w+), solver=(\w+), params=(\S+)", proc.stdout))
    assert planned == {(g, "bellmanford_naive", "block-64") for g in ("tiny", "rand16")}


def test_e2e_a_failed_job_leaves_nothing_a_rerun_would_trust(tmp_path):
    """dijkstra_cpu on a file graph whose negative weights are only found when the solver reads it:
    the solve exits non-zero, Snakemake removes its outputs, the other jobs' outputs stay, and a
    re-run plans exactly the failed job (and what depends on it) again."""
    neg = tmp_path / "neg.plain"
    neg.write_text("5 6\n0 1 4\n1 2 -2\n2 3 3\n0 3 9\n3 4 1\n1 4 7\n")
    results = tmp_path / "results"
    config = {"results": str(results), "trials": 1, "warmup": 0, "sources": {"count": 1, "seed": 0},
              "graphs": {"neg": {"file": str(neg)}},
              "solvers": [{"name": "scipy_dijkstra"}, {"name": "dijkstra_cpu"}]}
    jobs, skipped = expand_jobs(validate_config(config))
    assert len(jobs) == 2 and skipped == []  # not knowable from the file's header
    cfg = write_config(tmp_path / "c.yaml", config)
    proc = snakemake("--cores", 2, "--keep-going", "--configfile", cfg, timeout=300)
    assert proc.returncode != 0
    assert "Error in rule solve_graph" in proc.stdout
    bad = results / "runs" / "neg" / "dijkstra_cpu"
    assert not (bad / "default.json").exists() and not (bad / "default.answer.npz").exists()
    assert not list(results.rglob(".*.part*"))  # atomic writes left no temporary files
    log = (results / "logs" / "solve_graph" / "neg" / "dijkstra_cpu" / "default.log").read_text()
    assert "negative weights" in log
    good = results / "runs" / "neg" / "scipy_dijkstra"
    assert (good / "default.json").exists() and (good / "default.verdict.json").exists()
    assert not (results / "tables" / "summary.csv").exists()
    proc = snakemake("-n", "--quiet", "rules", "--configfile", cfg, timeout=300)
    assert proc.returncode == 0, proc.stdout[-5000:]
    assert job_counts(proc.stdout) == {"solve_graph": 1, "validate_answer": 1, "aggregate_records": 1,
                                       "plot_results": 1, "all": 1}


def test_atomic_writes_leave_no_partial_file(tmp_path):
    target = tmp_path / "tables" / "skipped.json"
    with pytest.raises(TypeError):
        write_skipped(target, [{"graph": object()}])
    assert not target.exists()
    assert list(target.parent.iterdir()) == []
    write_skipped(target, [{"graph": "g", "solver": "s", "params": "default", "reason": "r"}], tmp_path / "log")
    assert json.loads(target.read_text())[0]["reason"] == "r"
    assert "1 skipped" in (tmp_path / "log").read_text()


def test_failed_solve_writes_no_record(tmp_path):
    """The CLI's own contract, as the workflow relies on it: an error exits non-zero, no record."""
    neg = tmp_path / "neg.plain"
    neg.write_text("3 2\n0 1 -1\n1 2 2\n")
    record, answer = tmp_path / "r.json", tmp_path / "a.npz"
    proc = subprocess.run([sys.executable, "-m", "gpusp.cli", "solve", "--graph", str(neg), "--solver", "dijkstra_cpu",
                           "--source", "0", "--record", str(record), "--answer", str(answer)],
                          capture_output=True, text=True, env=snakemake_env(), timeout=120)
    assert proc.returncode != 0 and "gpusp: error:" in proc.stderr
    assert not record.exists() and not answer.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["neg.plain"]


@pytest.mark.parametrize("config", sorted(p.name for p in (REPO / "config").glob("*.yaml")))
def test_every_ready_made_config_dry_runs(config, tmp_path):
    """The configs the README points to pass the schema and plan (config/experiments/: test_experiments.py)."""
    proc = snakemake("-n", "--configfile", REPO / "config" / config, "--config", f"results={tmp_path}", timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
