"""The job runner: one solve from a job description to a record.

A :class:`SolveJob` names the graph (a file, or a :class:`~gpusp.data.graph.Graph` in memory), the solver
and its parameters, the sources, trials and warm-up runs, the validation settings, a time budget and
where the record, the answer and paper 000's path listing go. :func:`run_job` reads the graph, picks
the sources, solves, validates, writes those files atomically and returns a :class:`JobOutcome` with
the record. ``gpusp solve``, ``gpusp bench`` and the workflow's solve rule (through ``gpusp solve``)
all run their jobs here.

With a time budget the job runs in a child process (``python -m gpusp.measure.job``) that is killed at
the budget; the run is then recorded as skipped, with the reason, and nothing half-written is left.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from ..atomic import atomic_open, atomic_path
from ..data.graph import Graph
from ..errors import GpuspError, NegativeCycleError, SolverUnavailable
from ..solvers import registry
from .harness import path, solve_many
from .records import make_record, run_entry, write_record
from .sources import pick_sources, read_sources
from .validate import check_apsp, check_sssp, peer_verdict, reference_distances, sample_rows


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
    validate: bool = False
    validate_rows: int = 16
    time_budget: float | None = None  # seconds; past it the run is recorded as skipped
    record: str | Path | None = None
    answer: str | Path | None = None  # distances and parents (.npz) for a later `gpusp validate`
    output: str = "none"  # paper 000's modes: none, print (to ``stream``) or write (``paths_file``)
    paths_file: str | Path | None = None
    format: str | None = None
    params_label: str | None = None
    graph_label: str | None = None

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


def run_job(job: SolveJob, stream=None) -> JobOutcome:
    """Run ``job`` (in a child process when it has a time budget); path lines go to ``stream``."""
    stream = stream or sys.stdout
    if job.time_budget:
        return _run_with_budget(job, stream)
    return _execute(job, stream)


def load_graph(job: SolveJob) -> Graph:
    from ..data.formats import read_graph

    return job.graph if isinstance(job.graph, Graph) else read_graph(job.graph, format=job.format)


def _labels(job: SolveJob) -> dict:
    return {"params_label": job.params_label, "graph_label": job.graph_label, "seed": job.seed}


def _sources(job: SolveJob, graph: Graph) -> list[int]:
    if isinstance(job.sources, (str, Path)):
        return read_sources(job.sources)
    if job.sources is not None:
        return [int(s) for s in job.sources]
    return pick_sources(graph, job.num_sources, job.seed)


def _execute(job: SolveJob, stream) -> JobOutcome:
    """Read, solve, validate, write: the job in this process."""
    graph = load_graph(job)
    spec = registry.get(job.solver)
    params = spec.resolve(dict(job.params))
    if spec.peer and job.output != "none":
        raise GpuspError(f"{job.solver} is a peer binary that prints no distances: --output has no paths to show")
    sources = _sources(job, graph) if spec.problem == "sssp" else [None]
    runs, status, reason, results = [], "ok", None, []
    t0 = time.perf_counter()
    try:
        for result in solve_many(graph, spec, sources, trials=job.trials, warmup=job.warmup, **params):
            results.append(result)
            runs.append(run_entry(result))
    except NegativeCycleError as exc:
        status, reason = "negative-cycle", str(exc)
    except SolverUnavailable as exc:
        status, reason = "skipped", str(exc)
    wall_s = time.perf_counter() - t0

    validation_s = None
    if (job.validate or spec.peer) and results:  # a peer's own verifier always ran: record its verdict
        t1 = time.perf_counter()
        verdicts = _verdicts(job, spec, graph, results)
        validation_s = time.perf_counter() - t1
        for entry, verdict in zip(runs, verdicts):
            entry["validation"] = verdict.to_dict()
        if not all(v.ok for v in verdicts):
            status = "failed-validation"
            reason = "; ".join(map(str, next(v for v in verdicts if not v.ok).mismatches[:3]))

    if job.answer:
        _write_answer(job, spec, graph, results, runs)
    record = make_record(spec=spec, params=params, graph=graph,
                         graph_path=None if isinstance(job.graph, Graph) else job.graph, runs=runs,
                         trials=job.trials, warmup=job.warmup, status=status, reason=reason,
                         extra={"wall_s": wall_s, "validation_s": validation_s, **_labels(job)})
    if job.record:
        write_record(record, job.record)
    lines = []
    if job.output != "none" and results:
        paths = (line for r in results for s in ([r.source] if r.problem == "sssp" else range(graph.n))
                 for line in path_lines(r, graph, s))
        if job.output == "print":
            stream.writelines(paths)
        else:
            target = job.paths_file or f"{Path(str(job.graph)).name}.{job.solver}.paths.txt"
            with atomic_open(target) as fh:
                fh.writelines(paths)
            lines.append(f"wrote paths to {target}")
    for r in results:
        t = r.timings
        src = "all" if r.source is None else r.source
        lines.append(f"{job.solver} source {src}: median {t.median_ms:.3f} ms (IQR {t.iqr_ms:.3f}, "
                     f"{len(t.samples_ms)} trials, {t.clock}), compile {t.compile_s:.2f} s, h2d {t.h2d_ms:.2f} ms, "
                     f"d2h {t.d2h_ms:.2f} ms, {r.counters}")
    if validation_s is not None:
        lines.append(f"validation: {'ok' if status == 'ok' else status} ({validation_s:.2f} s)")
    return JobOutcome(status, reason, record, lines, validation_s, results=results)


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
    return 0, None


def _verdicts(job: SolveJob, spec, graph: Graph, results) -> list:
    """One verdict per result: a peer's own verifier, else SciPy distances and the tree checks."""
    if spec.peer:
        return [peer_verdict(r) for r in results]
    if spec.problem == "sssp":
        ref = reference_distances(graph, [r.source for r in results])
        return [check_sssp(graph, r.source, r.dist, r.parent, ref[i]) for i, r in enumerate(results)]
    rows = sample_rows(graph.n, job.validate_rows, job.seed)
    return [check_apsp(graph, results[0].dist, results[0].parent, rows)]


def _write_answer(job: SolveJob, spec, graph: Graph, results, runs) -> None:
    """The answer file: SSSP rows, sampled APSP rows, a peer's verdicts, or no sources at all."""
    with atomic_path(job.answer, suffix=".npz") as tmp:
        if not results:  # skipped or negative cycle: an answer with no sources
            np.savez(tmp, sources=np.zeros(0, dtype=np.int64), dist=np.zeros((0, 0)), parent=np.zeros((0, 0)))
        elif spec.peer:  # no distances: the sources and the verifier's verdicts, for `gpusp validate`
            k = len(results)
            np.savez(tmp, sources=np.array([r.source for r in results]), dist=np.zeros((k, 0)),
                     parent=np.zeros((k, 0)), inf=results[0].inf,
                     peer_verdicts=json.dumps([r["validation"] for r in runs]))
        elif spec.problem == "sssp":
            np.savez(tmp, sources=np.array([r.source for r in results]), dist=np.stack([r.dist for r in results]),
                     parent=np.stack([r.parent for r in results]), inf=graph.inf)
        else:
            rows = sample_rows(graph.n, job.validate_rows, job.seed)
            np.savez(tmp, sources=rows, dist=results[0].dist[rows], parent=results[0].parent[rows], inf=graph.inf)


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
    """The job in a child process; past the budget, the child is killed and a skip is recorded."""
    child_job = SolveJob(**{**asdict(job), "time_budget": None})
    with tempfile.TemporaryDirectory(prefix="gpusp-job-") as tmp:
        outcome_path = Path(tmp) / "outcome.json"
        cmd = [sys.executable, "-m", "gpusp.measure.job", child_job.to_json(), str(outcome_path)]
        try:
            proc = subprocess.run(cmd, timeout=job.time_budget, capture_output=True, text=True)
        except subprocess.TimeoutExpired:
            return _record_timeout(job)
        stream.write(proc.stdout)
        if not outcome_path.exists():
            last = (proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}"])[-1]
            raise GpuspError(f"the solve process failed: {last}")
        data = json.loads(outcome_path.read_text())
    if "error" in data:
        raise GpuspError(data["error"])
    record = json.loads(Path(job.record).read_text()) if job.record else None
    return JobOutcome(**data, record=record)


def _record_timeout(job: SolveJob) -> JobOutcome:
    reason = f"exceeded the time budget of {job.time_budget:g} s (trials={job.trials}, warmup={job.warmup})"
    record = None
    if job.record:
        graph = load_graph(job)
        spec = registry.get(job.solver)
        record = make_record(spec=spec, params=spec.resolve(dict(job.params)), graph=graph, graph_path=job.graph,
                             runs=[], trials=job.trials, warmup=job.warmup, status="skipped", reason=reason,
                             extra=_labels(job))
        write_record(record, job.record)
    if job.answer:
        _write_answer(job, None, None, [], [])
    return JobOutcome("skipped", reason, record, timed_out=True)


def _child(argv) -> int:
    """``python -m gpusp.measure.job JOB_JSON OUTCOME_PATH``: run the job, write its outcome as JSON."""
    job_json, outcome_path = argv
    try:
        done = _execute(SolveJob(**json.loads(job_json)), sys.stdout)
        out = {"status": done.status, "reason": done.reason, "lines": done.lines, "validation_s": done.validation_s}
    except (GpuspError, OSError, ValueError, KeyError) as exc:
        out = {"error": str(exc).splitlines()[0] if str(exc) else type(exc).__name__}
    with atomic_open(outcome_path) as fh:
        json.dump(out, fh)
    return 0


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1:]))
