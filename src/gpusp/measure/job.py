"""The job runner: one solve from a job description to a record.

A :class:`SolveJob` names the graph (a file, or a :class:`~gpusp.data.graph.Graph` in memory), the solver
and its parameters, the sources, trials and warm-up runs, the validation settings, a time budget and
where the record, the answer and paper 000's path listing go. :func:`run_job` reads the graph, picks
the sources, solves, validates, writes those files atomically and returns a :class:`JobOutcome` with
the record. ``gpusp solve``, ``gpusp bench`` and the workflow's solve rule (through ``gpusp solve``)
all run their jobs here.

With a time budget the job runs in a child process (``python -m gpusp.measure.job``) that is killed at
the budget; the run is then recorded as skipped, with the reason, and nothing half-written is left. The
child writes its files into a temporary folder of the parent's, which moves them into place only when
the child finished and nobody asked the process to stop: SIGINT, SIGTERM and SIGHUP to the parent are
forwarded to the child, the parent waits for it, removes the folder, records nothing and exits with
128 + the signal's number (SIGINT as KeyboardInterrupt, which the command line reports as interrupted).
"""

from __future__ import annotations

import errno
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from ..atomic import atomic_open, atomic_path
from ..device import free_device_memory, mode
from ..ranks import require_gpus
from ..stopping import STOP_SIGNALS, SignalScope, StopOnSignals, Stopped
from ..data.graph import Graph
from ..errors import GpuspError, NegativeCycleError, SolverUnavailable
from ..solvers import auto, registry
from .harness import path, solve_many
from .records import make_record, run_entry, write_record
from .sources import pick_sources, read_sources
from .validate import check_apsp, check_rows, overall, peer_verdict, sample_rows

STOP_GRACE_S = 10.0  # how long a stopped child may take to clean up before it is killed
POLL_S = 0.1  # how often the parent looks at the clock and the stop flag while its child runs
STAGED = {"answer": "answer.npz", "paths": "paths.txt", "summary": "summary.npz",
          "record": "record.json"}  # names in the child's folder
SIM_WARN_ARCS = 1 << 14  # a GPU solver in the simulator on more arcs than this gets a warning first
PROGRESS_AFTER_S = 5.0  # a job running this long reports each source done on stderr, a run this long its time


@dataclass
class SolveJob:
    """What to run and where its results go (paths are written atomically; None: not written)."""

    graph: str | Path | Graph
    solver: str
    params: dict = field(default_factory=dict)
    sources: list[int] | str | Path | None = None  # SSSP sources, or a sources file; None: a seeded pick
    num_sources: int = 1
    seed: int = 0  # seed of the source pick and of the sampled APSP validation rows
    trials: int = 5
    warmup: int = 1
    end_to_end: int = 0  # runs of a fresh solver timed from allocation to download after the trials (harness)
    validate: bool = False
    validate_rows: int = 16
    validation_method: str = "auto"  # auto, reference or certificate (gpusp.measure.validate.check_rows)
    reference_max_work: int | None = None  # "auto"'s limit in source-arc pairs (None: validate's default)
    time_budget: float | None = None  # seconds; past it the run is recorded as skipped
    record: str | Path | None = None
    answer: str | Path | None = None  # distances and parents (.npz) for a later `gpusp validate`
    output: str = "none"  # paper 000's modes: none, print (to ``stream``) or write (``paths_file``)
    paths_file: str | Path | None = None
    format: str | None = None
    params_label: str | None = None
    graph_label: str | None = None
    planned_by_auto: bool = False  # the workflow's auto picked this solver at planning: pick again, record the pick
    staging: str | None = None  # a budgeted run's child writes its files here; the parent puts them in place
    all_sources: bool = False  # every vertex a source, each batch's trees reduced on the device (measure.alltrees)
    targets: list[int] | str | Path | None = None  # origin-destination table: these targets' distances (or a file)
    summary: str | Path | None = None  # the sweep's reductions and table (.npz, measure.alltrees.write_summary)

    def to_json(self) -> str:
        if isinstance(self.graph, Graph):
            raise GpuspError("a job with a time budget needs its graph as a file (it runs in a child process)")
        return json.dumps(asdict(self), default=lambda v: v.item() if hasattr(v, "item") else str(v))


@dataclass
class JobOutcome:
    """status: ok, failed-validation, negative-cycle or skipped; ``lines``: one summary line per result."""

    status: str
    reason: str | None = None
    record: dict | None = None
    lines: list[str] = field(default_factory=list)
    validation_s: float | None = None
    timed_out: bool = False
    results: list = field(default_factory=list)  # the Result objects (in-process runs only)


def _stop(signum: int) -> BaseException:
    return KeyboardInterrupt() if signum == signal.SIGINT else Stopped(signum)


def run_job(job: SolveJob, stream=None) -> JobOutcome:
    """Run ``job`` (in a child process when it has a time budget); path lines go to ``stream``."""
    stream = stream or sys.stdout
    require_job_gpus(job)
    try:
        if job.time_budget:
            return _run_with_budget(job, stream)
        with StopOnSignals(signal.SIGTERM, signal.SIGHUP):  # so that atomic writes clean up what they began
            return _execute(job, stream)
    except Stopped as exc:
        print(f"gpusp: {exc}", file=sys.stderr)
        raise


def require_job_gpus(job: SolveJob) -> None:
    """Before anything starts: a solver taking several GPUs (its ``gpus`` parameter) finds them on this host, else a
    clear error (:func:`gpusp.ranks.require_gpus`) instead of a failure in a worker; auto's pick is checked by the
    solver itself."""
    if job.solver == auto.AUTO:
        return
    spec = registry.get(job.solver)
    gpus = spec.gpus_of(dict(job.params))
    if gpus > 1:
        require_gpus(gpus, f"{spec.name} with gpus={gpus}")


def load_graph(job: SolveJob) -> Graph:
    from ..data.formats import read_graph

    return job.graph if isinstance(job.graph, Graph) else read_graph(job.graph, format=job.format)


def _labels(job: SolveJob, chosen: dict) -> dict:
    """The record's labels; with ``--solver auto`` a parameter-set label names the parameters of the solver picked
    (``chosen``: what :func:`_solver` adds), the label planning gives a job it picked."""
    label = job.params_label
    if job.solver == auto.AUTO and label is not None:
        from ..plan import paramset_label

        label = paramset_label(chosen["auto"]["row_params"])
    return {"params_label": label, "graph_label": job.graph_label, "seed": job.seed}


def _sources(job: SolveJob, graph: Graph) -> list[int]:
    if isinstance(job.sources, (str, Path)):
        return read_sources(job.sources)
    if job.sources is not None:
        return [int(s) for s in job.sources]
    return pick_sources(graph, job.num_sources, job.seed, option="--num-sources")


def _execute(job: SolveJob, stream) -> JobOutcome:
    """Read, solve, validate, write: the job in this process."""
    graph = load_graph(job)
    spec, params, chosen = _solver(job, graph)
    if spec.peer and job.output != "none":
        raise GpuspError(f"{job.solver} is a peer binary that gives no predecessors: --output has no paths to show")
    targets = _targets(job)
    staged = {name: Path(job.staging) / STAGED[name] if job.staging else target for name, target in targets.items()}
    if job.all_sources or job.targets is not None:  # every tree, or a table: reduced on the device, no rows here
        from .alltrees import run_sweep_job

        sources = np.arange(graph.n) if job.all_sources else _sources(job, graph)
        return JobOutcome(*run_sweep_job(job, graph, spec, params, sources, staged, _labels(job, chosen)))
    sources = _sources(job, graph) if spec.problem == "sssp" else [None]
    runs, status, reason, results = [], "ok", None, []
    _warn_if_slow(spec, graph)
    t0 = time.perf_counter()
    try:
        for result in solve_many(graph, spec, sources, trials=job.trials, warmup=job.warmup,
                                 end_to_end=job.end_to_end, on_run=functools.partial(_run_done, spec.name), **params):
            results.append(result)
            runs.append(run_entry(result))
            _progress(spec.name, len(results), len(sources), time.perf_counter() - t0)
    except NegativeCycleError as exc:
        status, reason = "negative-cycle", str(exc)
    except SolverUnavailable as exc:
        status, reason = "skipped", str(exc)
    wall_s = time.perf_counter() - t0

    validation_s, validation_timing = None, {}
    if (job.validate or _self_verified(spec, results)) and results:  # a peer's own verifier ran: record its verdict
        t1 = time.perf_counter()
        verdicts = _verdicts(job, spec, graph, results, validation_timing)
        validation_s = time.perf_counter() - t1
        for entry, verdict in zip(runs, verdicts):
            entry["validation"] = verdict.to_dict()
        ok = overall(verdicts)
        if ok is False:
            status = "failed-validation"
            reason = "; ".join(map(str, next(v for v in verdicts if v.ok is False).mismatches[:3]))
        elif ok is None and status == "ok":
            reason = next(v.reason for v in verdicts if v.ok is None)

    if job.answer:
        _write_answer(staged["answer"], job, spec, graph, results, runs)
    record = make_record(spec=spec, params=params, graph=graph,
                         graph_path=None if isinstance(job.graph, Graph) else job.graph, runs=runs,
                         trials=job.trials, warmup=job.warmup, end_to_end=job.end_to_end, status=status,
                         reason=reason, extra={"wall_s": wall_s, "validation_s": validation_s,
                                "validation_timing": validation_timing or None, **_labels(job, chosen), **chosen})
    lines = [chosen["auto"]["reason"]] if chosen else []
    if job.output != "none" and results:
        paths = (line for r in results for s in ([r.source] if r.problem == "sssp" else range(graph.n))
                 for line in path_lines(r, graph, s))
        if job.output == "print":
            stream.writelines(paths)
        else:
            with atomic_open(staged["paths"]) as fh:
                fh.writelines(paths)
            lines.append(f"wrote paths to {targets['paths']}")
    if job.record:  # the record last: it says that the run and its files are complete
        write_record(record, staged["record"])
    for r in results:
        t = r.timings
        src = "all" if r.source is None else r.source
        whole = (f", end to end median {float(np.median(t.end_to_end_ms)):.3f} ms ({len(t.end_to_end_ms)} runs)"
                 if t.end_to_end_ms else "")
        lines.append(f"{spec.name} source {src}: median {t.median_ms:.3f} ms (IQR {t.iqr_ms:.3f}, "
                     f"{len(t.samples_ms)} trials, {t.clock}), compile {t.compile_s:.2f} s, h2d {t.h2d_ms:.2f} ms, "
                     f"d2h {t.d2h_ms:.2f} ms{whole}, {r.counters}")
    if len(results) > 1 and results[0].problem == "sssp":
        lines.append(across_sources(spec.name, [r.timings.median_ms for r in results]))
    if validation_s is not None:
        said = "ok" if status == "ok" and not reason else (reason if status == "ok" else status)
        lines.append(f"validation: {said} ({validation_s:.2f} s)")
    return JobOutcome(status, reason, record, lines, validation_s, results=results)


def _solver(job: SolveJob, graph: Graph) -> tuple:
    """(spec, resolved parameters, what the record adds) of the job's solver; ``auto`` is resolved here, on the
    graph (:mod:`gpusp.solvers.auto`), and the record gets the pick, its row and the graph's features."""
    if job.solver == auto.AUTO and job.params:
        raise GpuspError(f"auto picks the solver's parameters too: no --param ({', '.join(sorted(job.params))})")
    if job.solver != auto.AUTO and not job.planned_by_auto:
        spec = registry.get(job.solver)
        return spec, spec.resolve(dict(job.params)), {}
    chosen = auto.pick_for(graph, free_device_memory())
    if job.solver != auto.AUTO:  # planned by auto: the pick must not have changed since
        spec = registry.get(job.solver)
        params = spec.resolve(dict(job.params))
        if (chosen.solver, chosen.params) != (spec.name, params):
            raise GpuspError(f"planning's auto picked {spec.name} {params} for this graph, and on the loaded graph "
                             f"with this device's free memory it picks {chosen.solver} {chosen.params}: "
                             "set gpu_memory_gb to this device's memory, or name the solver in the config")
    return registry.get(chosen.solver), chosen.params, {"auto": {**chosen.info(), "reason": chosen.reason()}}


def across_sources(solver: str, medians) -> str:
    """The summary line over a job's sources: the median, q1-q3, mean, min and max of their median times."""
    m = np.asarray(medians, dtype=float)
    q1, med, q3 = np.percentile(m, [25, 50, 75])
    return (f"{solver} over {m.size} sources: median {med:.3f} ms (q1-q3 {q1:.3f}-{q3:.3f}), mean {m.mean():.3f} ms, "
            f"min {m.min():.3f}, max {m.max():.3f}")


def _warn_if_slow(spec, graph: Graph) -> None:
    """A warning on stderr before a GPU solver runs in the CUDA simulator on a graph of more than SIM_WARN_ARCS arcs
    (the simulator runs every thread in Python: minutes where a GPU takes milliseconds)."""
    if spec.device == "gpu" and mode() == "sim" and graph.m > SIM_WARN_ARCS:
        print(f"gpusp: warning: {spec.name} runs in the CUDA simulator (no GPU) on {graph.m:,} arcs: expect minutes "
              f"a source (the simulator suits graphs of a few thousand arcs)", file=sys.stderr, flush=True)


def _progress(solver: str, done: int, total: int, elapsed_s: float) -> None:
    """A progress line on stderr per source done, once a job has run PROGRESS_AFTER_S seconds."""
    if total > 1 and elapsed_s >= PROGRESS_AFTER_S:
        print(f"gpusp: {solver}: {done}/{total} sources in {elapsed_s:.1f} s ({elapsed_s / done:.2f} s a source)",
              file=sys.stderr, flush=True)


def _run_done(solver: str, kind: str, k: int, seconds: float) -> None:
    """A line on stderr for each run of PROGRESS_AFTER_S seconds or more: a job cut short by its step's time limit
    has said what each run took."""
    if seconds >= PROGRESS_AFTER_S:
        print(f"gpusp: {solver}: {kind} {k} took {seconds:.1f} s", file=sys.stderr, flush=True)


def _targets(job: SolveJob) -> dict:
    """Where the job's files go (None: not written), in the order they are put in place."""
    paths = None
    if job.output == "write":
        name = job.graph.name if isinstance(job.graph, Graph) else Path(str(job.graph)).name
        paths = job.paths_file or f"{name}.{job.solver}.paths.txt"
    return {"answer": job.answer, "paths": paths, "summary": job.summary, "record": job.record}


def exit_status(outcome: JobOutcome, recorded: bool) -> tuple[int, str | None]:
    """``gpusp solve``'s exit code for an outcome and its one stderr line (None: nothing to say).
    A skip or a negative cycle that went into a record is a result, not an error."""
    if outcome.timed_out:
        return 0, f"gpusp: skipped: {outcome.reason}"
    if outcome.status in ("negative-cycle", "skipped"):
        if recorded:
            return 0, f"gpusp: {'skipped: ' if outcome.status == 'skipped' else ''}{outcome.reason} (recorded)"
        return 1, f"gpusp: error: {outcome.reason}"
    if outcome.status == "failed-validation":
        return 1, f"gpusp: error: validation failed: {outcome.reason}"
    return 0, f"gpusp: {outcome.reason}" if outcome.reason else None  # ok, but not validated: say why


def _self_verified(spec, results) -> bool:
    """Whether ``results`` come from a peer that verified them itself and handed back no distances (GAPBS)."""
    return spec.peer and bool(results) and results[0].dist is None


def _verdicts(job: SolveJob, spec, graph: Graph, results, timing: dict) -> list:
    """One verdict per result: a peer's own verifier, else the check the job's validation method picks (the SciPy
    reference or the certificate: the distances and, where the solver gives parents, the tree checks); the method
    that ran and its seconds go into ``timing``."""
    if _self_verified(spec, results):
        return [peer_verdict(r) for r in results]
    policy = {"timing": timing, "method": job.validation_method, "reference_max_work": job.reference_max_work}
    if spec.problem == "sssp":
        return check_rows(graph, [r.source for r in results], [r.dist for r in results], [r.parent for r in results],
                          **policy)
    rows, sources = apsp_rows(job, graph, results[0])
    return [check_apsp(graph, results[0].dist, results[0].parent, rows, sources=sources, **policy)]


def apsp_rows(job: SolveJob, graph: Graph, result) -> tuple[np.ndarray, np.ndarray | None]:
    """The APSP answer's rows checked and kept (a seeded sample) and each row's source, None where row s is from
    source s; a solver run from sampled sources names its rows' sources in the counter ``row_sources``."""
    sources = result.counters.get("row_sources")
    if sources is None:
        return sample_rows(graph.n, job.validate_rows, job.seed), None
    return sample_rows(len(sources), job.validate_rows, job.seed), np.asarray(sources, dtype=np.int64)


def _write_answer(path, job: SolveJob, spec, graph: Graph | None, results, runs) -> None:
    """The answer file: SSSP rows, sampled APSP rows, a peer's verdicts, or no sources at all; with the
    checksum of its graph, so that it is never checked against another."""
    identity = {"graph_checksum": graph.checksum()} if graph is not None else {}
    with atomic_path(path, suffix=".npz") as tmp:
        if not results:  # skipped or negative cycle: an answer with no sources
            n, dtype = (graph.n, graph.dtype) if graph is not None else (0, np.int64)
            np.savez(tmp, sources=np.zeros(0, dtype=np.int64), dist=np.zeros((0, n), dtype=dtype),
                     parent=np.zeros((0, n), dtype=np.int32), **identity)
        elif _self_verified(spec, results):  # no distances: the sources and the verifier's verdicts
            k = len(results)
            np.savez(tmp, sources=np.array([r.source for r in results]), dist=np.zeros((k, 0)),
                     parent=np.zeros((k, 0)), inf=results[0].inf,
                     peer_verdicts=json.dumps([r["validation"] for r in runs]), **identity)
        elif spec.problem == "sssp" and results[0].parent is None:  # distances alone: no tree to check
            np.savez(tmp, sources=np.array([r.source for r in results]), dist=np.stack([r.dist for r in results]),
                     parent=np.zeros((len(results), 0), dtype=np.int32), inf=graph.inf,
                     no_parents=f"{spec.name} computes no predecessors", **identity)
        elif spec.problem == "sssp":
            np.savez(tmp, sources=np.array([r.source for r in results]), dist=np.stack([r.dist for r in results]),
                     parent=np.stack([r.parent for r in results]), inf=graph.inf, **identity)
        else:
            rows, sources = apsp_rows(job, graph, results[0])
            np.savez(tmp, sources=rows if sources is None else sources[rows], dist=results[0].dist[rows],
                     parent=results[0].parent[rows], inf=graph.inf, **identity)


def path_lines(result, graph: Graph, source):
    """Paper 000's output: one line per vertex, ``v<-p<-...<-s`` with the distance, or unreachable."""
    dist = result.dist if result.problem == "sssp" else result.dist[source]
    for v in range(graph.n):
        if dist[v] == result.inf:
            yield f"{source}->{v}: unreachable\n"
        else:
            chain = path(result, v, source)
            yield f"{source}->{v}: {int(dist[v])}: " + "<-".join(str(x) for x in reversed(chain)) + "\n"


def _run_with_budget(job: SolveJob, stream) -> JobOutcome:
    """The job in a child process that writes into a temporary folder; past the budget, the child is
    killed and a skip is recorded; told to stop, nothing is recorded (see the module docstring)."""
    with _Forwarder() as stop, tempfile.TemporaryDirectory(prefix="gpusp-job-") as staging:
        child_job = SolveJob(**{**asdict(job), "time_budget": None, "staging": staging})
        outcome_path = Path(staging) / "outcome.json"
        cmd = [sys.executable, "-m", "gpusp.measure.job", child_job.to_json(), str(outcome_path)]
        stdout, stderr, timed_out = _wait_for_child(cmd, job.time_budget, stop)
        if stop.signum is not None:
            raise _stop(stop.signum)
        if timed_out:
            return _record_timeout(job)
        stream.write(stdout)
        if not outcome_path.exists():
            raise GpuspError(f"the solve process failed: {(stderr.strip().splitlines() or ['no output'])[-1]}")
        data = json.loads(outcome_path.read_text())
        if "error" in data:
            raise GpuspError(data["error"])
        for name, target in _targets(job).items():
            if target and (Path(staging) / STAGED[name]).exists():
                _publish(Path(staging) / STAGED[name], target)
    record = json.loads(Path(job.record).read_text()) if job.record else None
    return JobOutcome(**data, record=record)


def _wait_for_child(cmd, budget: float, stop: _Forwarder) -> tuple[str, str, bool]:
    """Run ``cmd`` to its end: (stdout, stderr, whether it was killed at the budget). A child that was
    sent a stop signal gets STOP_GRACE_S to clean up, then is killed; any error here kills it too."""
    stop.starting = True
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        stop.child, stop.starting = proc, False
        try:
            if stop.signum is not None:  # it came while the child was starting
                proc.send_signal(stop.signum)
            deadline = time.monotonic() + budget
            while True:
                left = (stop.at + STOP_GRACE_S if stop.signum is not None else deadline) - time.monotonic()
                if left <= 0:
                    proc.kill()
                    stdout, stderr = proc.communicate()
                    return stdout, stderr, stop.signum is None
                try:
                    stdout, stderr = proc.communicate(timeout=min(left, POLL_S))
                    return stdout, stderr, False
                except subprocess.TimeoutExpired:
                    continue
        except BaseException:
            proc.kill()
            proc.communicate()
            raise
        finally:
            stop.child = None


class _Forwarder(SignalScope):
    """While the parent's child runs, a stop signal is forwarded to it and remembered (a second one kills
    the child); before and after that, it stops the parent at once (so atomic writes clean up)."""

    def __init__(self):
        self.child: subprocess.Popen | None = None
        self.starting = False
        self.signum: int | None = None
        self.at = 0.0

    def _handle(self, signum, frame) -> None:
        again = self.signum is not None
        if not again:
            self.signum, self.at = signum, time.monotonic()
        if self.child is not None:
            if self.child.poll() is None and again:  # a second signal does not wait for the child's clean-up
                self.child.kill()
            elif self.child.poll() is None:
                self.child.send_signal(signum)
        elif not self.starting:
            raise _stop(signum)


def _publish(staged: Path, target) -> None:
    """Move a file the child wrote into place: a rename, or across file systems a copy renamed into place."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.replace(staged, target)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        with atomic_path(target) as tmp:
            shutil.copyfile(staged, tmp)


def _record_timeout(job: SolveJob) -> JobOutcome:
    runs = f", end_to_end={job.end_to_end}" if job.end_to_end else ""
    reason = f"exceeded the time budget of {job.time_budget:g} s (trials={job.trials}, warmup={job.warmup}{runs})"
    record = None
    graph = load_graph(job) if job.record or job.answer else None
    if job.answer:
        _write_answer(job.answer, job, None, graph, [], [])
    if job.record:
        spec, params, chosen = _solver(job, graph)
        record = make_record(spec=spec, params=params, graph=graph, graph_path=job.graph,
                             runs=[], trials=job.trials, warmup=job.warmup, end_to_end=job.end_to_end,
                             status="skipped", reason=reason, extra={**_labels(job, chosen), **chosen})
        write_record(record, job.record)
    return JobOutcome("skipped", reason, record, timed_out=True)


def _child(argv) -> int:
    """``python -m gpusp.measure.job JOB_JSON OUTCOME_PATH``: run the job, write its outcome as JSON (none
    when it was told to stop: the parent then records nothing)."""
    job_json, outcome_path = argv
    try:
        with StopOnSignals(*STOP_SIGNALS):
            done = _execute(SolveJob(**json.loads(job_json)), sys.stdout)
        out = {"status": done.status, "reason": done.reason, "lines": done.lines, "validation_s": done.validation_s}
    except Stopped as exc:
        return exc.code
    except (GpuspError, OSError, ValueError, KeyError) as exc:
        out = {"error": str(exc).splitlines()[0] if str(exc) else type(exc).__name__}
    with atomic_open(outcome_path) as fh:
        json.dump(out, fh)
    return 0


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1:]))
