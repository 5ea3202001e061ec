"""Run a workflow config's matrix without Snakemake (for a GPU box that has no Snakemake).

``gpusp bench --config CONFIG --out DIR`` validates the config against the workflow's schema
(:func:`gpusp.plan.load_config`), prepares every graph, picks the same seeded sources the workflow
would, runs each (graph, solver, parameter set) job of :func:`gpusp.plan.expand_jobs` through the job
runner (:func:`gpusp.measure.job.run_job`) in a child process with the job's time budget (a job past its
budget is recorded as skipped, with the reason; with ``in_process: true`` in the config, jobs run in this
process instead, without budgets), validates every answer against SciPy, and aggregates the records
into the same tables the workflow writes.
"""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

from .errors import GpuspError
from .measure.job import SolveJob, run_job
from .data.prepare import prepare_graph
from .plan import expand_jobs, source_settings
from .report.aggregate import write_tables


def run_config(config: dict, out: Path, *, only_graphs=None, log=print) -> dict:
    """Execute the whole matrix of a validated config (:func:`gpusp.plan.load_config`); returns the paths
    of the written tables."""
    from .data.formats import read_graph
    from .measure.sources import pick_sources

    out = Path(out)
    jobs, skipped = expand_jobs(config)
    if only_graphs:
        skipped = [s for s in skipped if s["graph"] in only_graphs]
    graphs_dir, runs_dir = out / "graphs", out / "runs"
    graphs_dir.mkdir(parents=True, exist_ok=True)
    records = []
    for gname, gspec in config["graphs"].items():
        if only_graphs and gname not in only_graphs:
            continue
        gpath = graphs_dir / f"{gname}.npz"
        t0 = time.perf_counter()
        if not gpath.exists():
            prepare_graph(gspec, gpath, downloads=str(out / "downloads"), mirror=config["mirror"])
        graph = read_graph(gpath)
        sources = pick_sources(graph, *source_settings(config, gname))
        spath = graphs_dir / f"{gname}.sources.txt"
        spath.write_text("".join(f"{s}\n" for s in sources))
        log(f"== {gname}: n={graph.n:,} m={graph.m:,} sources {sources} (prepared in {time.perf_counter() - t0:.1f} s)")
        for job in (j for j in jobs if j.graph == gname):
            record = runs_dir / gname / job.solver / f"{job.label}.json"
            record.parent.mkdir(parents=True, exist_ok=True)
            solve = SolveJob(graph=gpath, solver=job.solver, params=job.params, sources=spath, seed=job.seed,
                             trials=job.trials, warmup=job.warmup, end_to_end=job.end_to_end, validate=True, validate_rows=job.validate_rows,
                             time_budget=None if config["in_process"] else job.budget, record=record,
                             params_label=job.label, graph_label=gname)
            t1 = time.perf_counter()
            try:
                done = run_job(solve, stream=io.StringIO())
                tail, err = (done.lines or [""])[-1][:160], "" if done.status == "ok" else str(done.reason)[:200]
            except GpuspError as exc:
                tail, err = "", str(exc).splitlines()[0][:200]
            log(f"   {job.solver:<30} {job.label:<28} {time.perf_counter() - t1:6.1f} s  {tail} {err}")
            if record.exists():
                records.append(record)
            else:
                skipped.append({"graph": gname, "solver": job.solver, "params": job.label, "problem": job.problem,
                                "reason": f"error: {err or 'solve failed'}"})
    (out / "skipped.json").write_text(json.dumps(skipped, indent=1))
    return write_tables(records, out / "tables", skipped=skipped, allow_mixed=True)
