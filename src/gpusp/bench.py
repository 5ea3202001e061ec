"""``gpusp bench``: a workflow config's matrix on a GPU box, run by the project's Snakemake workflow in this process.

:func:`run_bench` runs the Snakefile of this gpusp checkout through Snakemake's Python API: the config file with the
``--set`` overrides laid over it and ``results`` set to the output folder, one job at a time (every job takes the one
``gpu`` resource, so nothing runs beside a timed solve), past a failed job to the end, then Snakemake's HTML report
(``report.html`` there). The workflow validates and plans the config (:mod:`gpusp.plan`); a config it refuses is
reported in bench's words.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shlex
import sys
import tempfile
from pathlib import Path

from .errors import GpuspError
from .plan import ConfigError, config_source, parse_assignments

REPORT = "report.html"  # Snakemake's report of the run, in the output folder
# the folder that holds the gpusp package: the checkout's src/ (its parent holds the Snakefile), or site-packages
PACKAGE_ROOT = Path(__file__).resolve().parents[1]


def snakefile() -> Path:
    """The workflow of the checkout this gpusp runs from (the package is src/gpusp, the Snakefile at the root)."""
    path = PACKAGE_ROOT.parent / "Snakefile"
    if not path.is_file():
        raise GpuspError(f"gpusp bench runs the workflow of a gpusp checkout, and {path} does not exist (this gpusp "
                         f"is installed from {PACKAGE_ROOT} without it): run gpusp from a clone of the repository "
                         "(pip install -e . there, or PYTHONPATH=<clone>/src)")
    return path


def run_bench(config, out, sets=(), graphs=()) -> list[Path]:
    """Run the workflow on the config file ``config`` into the folder ``out`` (the workflow's ``results``), with
    ``KEY=VALUE`` overrides ``sets`` and, where given, only the ``graphs`` of the config; returns the tables and
    Snakemake's report."""
    overrides = parse_assignments(sets)
    for key, flag in (("results", "--out"), ("only_graphs", "--graphs")):
        if key in overrides:
            raise GpuspError(f"--set {key}: not a key to set here: use {flag}")
    path = snakefile()
    try:
        import snakemake.api  # noqa: F401
    except ImportError:
        raise GpuspError("gpusp bench runs the workflow with Snakemake, which is not installed: pip install -e "
                         "'.[workflow]' (or snakemake>=9 alone)") from None
    given = {**overrides, "results": str(out), **({"only_graphs": list(graphs)} if graphs else {})}
    config_settings = _config_settings(config, given)
    try:
        with _commands_of_this_gpusp():
            _run(path, config_settings, Path(out))
    except SystemExit as exc:
        refused = exc.__cause__
        if not isinstance(refused, ConfigError):
            raise
        detail = refused.detail.replace("key only_graphs: ", "--graphs: ", 1)
        raise GpuspError(f"{config_source([config], overrides, '--set')}: {detail}") from None
    return sorted(p for p in (Path(out) / "tables").iterdir() if p.is_file()) + [Path(out) / REPORT]


def _config_settings(config, given: dict):
    """Snakemake's config settings: the file ``config`` (read here: an error names it) and ``given`` over it."""
    from snakemake.exceptions import WorkflowError
    from snakemake.settings.types import ConfigSettings

    try:
        return ConfigSettings(config=given, configfiles=[Path(config)])
    except OSError as exc:
        raise GpuspError(f"{config}: cannot read the config: {exc.strerror or exc}") from None
    except WorkflowError as exc:
        raise GpuspError(f"{config}: cannot read the config: {' '.join(str(exc).split())}") from None


@contextlib.contextmanager
def _folder_lock(out: Path):
    """One bench at a time into ``out``: an exclusive lock on OUT/.gpusp-bench.lock, held while the workflow runs.
    It stands in for Snakemake's own lock, which bench turns off: that one is kept per working directory, and a
    Snakemake run that ends there removes the lock folder of every other run in it (two benches into different
    folders from one checkout would fail at random)."""
    out.mkdir(parents=True, exist_ok=True)
    lock = out / ".gpusp-bench.lock"
    with open(lock, "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise GpuspError(f"{out}: another gpusp bench is writing this folder (it holds {lock}); wait for it or "
                             "give --out another folder") from None
        yield


def _run(path: Path, config_settings, out: Path) -> None:
    """``snakemake --snakefile PATH --cores all --resources gpu=1 --default-resources gpu=1 --keep-going
    --rerun-incomplete --scheduler greedy --show-failed-logs --nolock``, then ``--report OUT/report.html``: solves
    never share the GPU, and as every job takes the GPU token (its default resource), no job runs beside another (one
    at a time, the greedy scheduler is as good as any); a failed job stops neither the others nor their records; the
    output folder's lock (:func:`_folder_lock`) in place of Snakemake's."""
    from snakemake.api import SnakemakeApi
    from snakemake.report.html_reporter import ReportSettings
    from snakemake.resources import Resources
    from snakemake.scheduling.greedy import SchedulerSettings
    from snakemake.settings.types import (DAGSettings, ExecutionSettings, OutputSettings, ResourceSettings,
                                          SchedulingSettings)
    from snakemake.utils import available_cpu_count

    defaults = Resources.default("bare")
    defaults.update({"gpu": 1})
    with SnakemakeApi(OutputSettings(show_failed_logs=True)) as api:
        try:
            workflow = api.workflow(
                resource_settings=ResourceSettings(cores=available_cpu_count(), resources={"gpu": 1},
                                                   default_resources=defaults),
                config_settings=config_settings, snakefile=path)
            dag = workflow.dag(dag_settings=DAGSettings(force_incomplete=True))
            with _folder_lock(out):  # once the config is checked: a refused one leaves nothing behind
                dag.execute_workflow(executor="local",
                                     execution_settings=ExecutionSettings(keep_going=True, lock=False),
                                     scheduling_settings=SchedulingSettings(scheduler="greedy"),
                                     scheduler_settings=SchedulerSettings())
                dag.create_report(reporter="html", report_settings=ReportSettings(path=out / REPORT))
        except GpuspError:
            raise
        except Exception as exc:
            api.print_exception(exc)
            raise GpuspError(f"the workflow did not finish: {' '.join(str(exc).split()) or type(exc).__name__} "
                             f"(each job's log is under {out / 'logs'})") from None


@contextlib.contextmanager
def _commands_of_this_gpusp():
    """The workflow's commands (``gpusp``, and ``python`` where it asks whether there is a GPU) as this interpreter
    with this gpusp, first on PATH while the workflow runs, so that its jobs run the code this command runs; the
    environment as it was afterwards (the Snakefile sets variables in this process)."""
    saved = dict(os.environ)
    path = os.pathsep.join(filter(None, [str(PACKAGE_ROOT), saved.get("PYTHONPATH")]))
    with tempfile.TemporaryDirectory(prefix="gpusp-bench-") as folder:
        for name, command in (("gpusp", [sys.executable, "-m", "gpusp.cli"]), ("python", [sys.executable])):
            script = Path(folder) / name
            script.write_text(f"#!/bin/sh\nexport PYTHONPATH={shlex.quote(path)}\nexec {shlex.join(command)} \"$@\"\n")
            script.chmod(0o755)
        os.environ["PATH"] = os.pathsep.join(filter(None, [folder, saved.get("PATH")]))
        try:
            yield
        finally:
            os.environ.clear()
            os.environ.update(saved)
