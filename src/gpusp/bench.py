"""Run a workflow config's matrix without Snakemake (for a GPU box that has no Snakemake).

``gpusp bench --config CONFIG --out DIR`` prepares every graph, picks the same seeded sources the
workflow would, runs each (graph, solver, parameter set) job as its own ``gpusp solve`` process with
the config's time budget (a job past its budget is recorded as skipped, with the reason; with
``in_process: true`` in the config, jobs run in this process instead, without budgets), validates
every answer against SciPy, and aggregates the records into the same tables the workflow writes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from .aggregate import write_tables
from .workflow import expand_jobs, prepare_graph


def _in_process(argv):
    """Run one `gpusp solve` in this process (no time budget: for sweeps of small, quick jobs)."""
    import contextlib
    import io

    from .cli import main

    i = argv.index("--time-budget")
    argv = argv[:i] + argv[i + 2:]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    return rc, out.getvalue(), err.getvalue()


def run_config(config: dict, out: Path, *, only_graphs=None, log=print) -> dict:
    """Execute the whole matrix; returns the paths of the written tables."""
    from .formats import read_graph
    from .sources import pick_sources

    out = Path(out)
    jobs, skipped = expand_jobs(config)
    if only_graphs:
        skipped = [s for s in skipped if s["graph"] in only_graphs]
    graphs_dir, runs_dir = out / "graphs", out / "runs"
    graphs_dir.mkdir(parents=True, exist_ok=True)
    default_src = config.get("sources", {})
    records = []
    for gname, gspec in config["graphs"].items():
        if only_graphs and gname not in only_graphs:
            continue
        gpath = graphs_dir / f"{gname}.npz"
        t0 = time.perf_counter()
        if not gpath.exists():
            prepare_graph(gspec, gpath, downloads=str(out / "downloads"), mirror=config.get("mirror"))
        graph = read_graph(gpath)
        src_cfg = {**default_src, **gspec.get("sources", {})}
        sources = pick_sources(graph, int(src_cfg.get("count", 2)), int(src_cfg.get("seed", 0)))
        spath = graphs_dir / f"{gname}.sources.txt"
        spath.write_text("".join(f"{s}\n" for s in sources))
        log(f"== {gname}: n={graph.n:,} m={graph.m:,} sources {sources} (prepared in {time.perf_counter() - t0:.1f} s)")
        for job in (j for j in jobs if j.graph == gname):
            record = runs_dir / gname / job.solver / f"{job.label}.json"
            record.parent.mkdir(parents=True, exist_ok=True)
            budget = float(job.budget or config.get("time_budget_s", 600))
            cmd = [sys.executable, "-m", "gpusp.cli", "solve", "--graph", str(gpath), "--solver", job.solver,
                   "--sources", str(spath), "--trials", str(job.trials or config.get("trials", 5)),
                   "--warmup", str(job.warmup if job.warmup is not None else config.get("warmup", 1)), "--validate",
                   "--validate-rows", str(config.get("validate", {}).get("apsp_rows", 16)),
                   "--time-budget", str(budget), "--params-label", job.label, "--graph-label", gname,
                   "--record", str(record)]
            for k, v in sorted(job.params.items()):
                cmd += ["--param", f"{k}={v}"]
            t1 = time.perf_counter()
            if config.get("in_process"):
                rc, stdout, stderr = _in_process(cmd[3:])
            else:
                proc = subprocess.run(cmd, capture_output=True, text=True, env=os.environ.copy())
                rc, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
            tail = (stdout.strip().splitlines() or [""])[-1][:160]
            err = stderr.strip().splitlines()[-1][:200] if stderr.strip() else ""
            log(f"   {job.solver:<30} {job.label:<28} rc={rc} {time.perf_counter() - t1:6.1f} s  {tail} {err}")
            if record.exists():
                records.append(record)
            else:
                skipped.append({"graph": gname, "solver": job.solver, "params": job.label, "problem": job.problem,
                                "reason": f"error: {err or 'solve failed'}"})
    (out / "skipped.json").write_text(json.dumps(skipped, indent=1))
    return write_tables(records, out / "tables", skipped=skipped, allow_mixed=True)
