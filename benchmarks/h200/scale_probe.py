"""One GAP-scale graph end to end on the device: made by gpusp's generator, written as GAPBS's .wsg, mapped back by
gpusp, solved by deltastep_gpu (or other solvers of ours, ``--variants``) and by GAPBS's driver from that same file,
every answer checked by the certificate and GAPBS's distances compared with ours (its driver saves them after each
source's timed trials), each solver's device memory read beside its spec's formula, and with ``--gcsr`` the
workflow's mapped cache written and read back. One JSON record per graph, rewritten after every step, so a run cut
short still says how far it got. Write-up: benchmarks/sssp-scale-h200.md.

usage (device, repo root, after `. benchmarks/h200/env.sh`):
    python3 benchmarks/h200/scale_probe.py KIND SCALE --out DIR [--sources 4] [--trials 3] [--gapbs-trials 2]
    [--threads 16] [--gcsr] [--variants - paths=false deltastep_lean:paths=false]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import time
from pathlib import Path

import numpy as np
from numba import cuda

from gpusp.data.formats import read_graph, write_graph
from gpusp.data.generate import generate
from gpusp.measure.harness import solve_many
from gpusp.measure.sources import pick_sources
from gpusp.measure.validate import check_certificate
from gpusp.plan import parse_assignments
from gpusp.solvers import registry
from gpusp.solvers.peers import build as peers


GAP_DELTA = {"kron": 2, "urand": 2}  # GAPBS's own benchmark.mk runs its sssp on kron and urand with -d2


def timed(fn, *args, **kwargs):
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0


def driver(wsg: Path, listing: Path, delta: int, threads: int, warmup: int, trials: int, saved: Path | None):
    """Run GAPBS's driver over the sources of ``listing``; (its JSON lines, the process's wall seconds, the command)."""
    binary = peers.binary(peers.locate("gapbs"), "gapbs_sssp_many")
    cmd = [str(binary), str(wsg), "--sources", str(listing), "--warmup", str(warmup), "--trials", str(trials),
           "--threads", str(threads), "--delta", str(delta)] + (["--distances", str(saved)] if saved else [])
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall_s = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr[-2000:]}")
    return [json.loads(x) for x in proc.stdout.splitlines() if x.startswith("{")], wall_s, " ".join(cmd)


def gapbs(wsg: Path, sources, delta: int, threads: int, trials: int, work: Path) -> dict:
    """GAPBS's driver on the same file, once: its load, a warm-up trial, its trials per source and each source's
    distances saved after its last trial. The overhead is the loop's wall time beyond every trial (the warm-up's
    too) and the saves, as a share of the timed trials; the load, paid once a job, is given apart and per source."""
    listing = work / "sources.txt"
    listing.write_text("".join(f"{s}\n" for s in sources))
    saved = work / "gapbs-dist"
    saved.mkdir(exist_ok=True)
    lines, wall_s, cmd = driver(wsg, listing, delta, threads, 1, trials, saved)
    ready = next(x for x in lines if x.get("ready"))
    done = next(x for x in lines if x.get("done"))
    trials_ms = {}
    for x in lines:
        if "trial_ms" in x and not x.get("warmup"):
            trials_ms.setdefault(x["source"], []).append(x["trial_ms"])
    solve_ms = sum(sum(v) for v in trials_ms.values())
    warmup_ms = sum(x["trial_ms"] for x in lines if x.get("warmup"))
    save_ms = sum(x["save_ms"] for x in lines if "save_ms" in x)
    overhead_ms = done["wall_ms"] - solve_ms - warmup_ms - save_ms
    return {"cmd": cmd, "process_wall_s": wall_s, "load_ms": ready["load_ms"], "loop_wall_ms": done["wall_ms"],
            "warmup_ms": warmup_ms, "save_ms": save_ms, "trials_ms": {str(k): v for k, v in trials_ms.items()},
            "median_ms_per_source": {str(k): float(np.median(v)) for k, v in trials_ms.items()},
            "overhead_ms": overhead_ms, "overhead_pct_of_solve": 100.0 * overhead_ms / solve_ms if solve_ms else None,
            "load_pct_of_solve": 100.0 * ready["load_ms"] / solve_ms if solve_ms else None, "saved": str(saved)}


def device_used() -> int | None:
    """Bytes of device memory in use (total - free on the current context) once the arrays no longer referenced are
    freed (an earlier variant's, else counted against the next); None in the simulator (NaN there)."""
    gc.collect()
    context = cuda.current_context()
    if hasattr(context, "deallocations"):
        context.deallocations.clear()
    free, total = context.get_memory_info()
    used = total - free
    return int(used) if used == used else None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kind", choices=("kron", "urand", "delaunay"))
    ap.add_argument("scale", type=int)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--sources", type=int, default=4)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--gapbs-trials", type=int, default=2)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--work", type=Path, default=Path("/tmp/scale-probe"))
    ap.add_argument("--gcsr", action="store_true", help="also write and map back the workflow's .gcsr cache")
    ap.add_argument("--variants", nargs="+", default=["-"],
                    help="runs of every source, each [SOLVER:]KEY=VALUE[,KEY=VALUE] (SOLVER: deltastep_gpu where "
                         "not named; '-' or 'SOLVER:-': its defaults); the first variant's record keeps the key of "
                         "its solver, the others SOLVER+SETTINGS")
    args = ap.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    record = {"kind": args.kind, "scale": args.scale, "threads": args.threads}
    out = args.out / f"{args.kind}{args.scale}.json"

    def save():
        out.write_text(json.dumps(record, indent=1, default=str))

    _, record["generate_compile_s"] = timed(generate, args.kind, seed=1, scale=10)  # Numba's compile or cache load
    graph, record["generate_s"] = timed(generate, args.kind, seed=1, scale=args.scale)
    record.update(n=graph.n, m=graph.m, offsets=str(graph.indptr.dtype), name=graph.name)
    save()
    wsg = args.work / f"{args.kind}{args.scale}.wsg"
    _, record["write_wsg_s"] = timed(write_graph, graph, wsg, undirected=True)
    record["wsg_bytes"] = wsg.stat().st_size
    del graph
    graph, record["read_wsg_s"] = timed(read_graph, wsg)
    record["read_wsg_GBps"] = record["wsg_bytes"] / record["read_wsg_s"] / 1e9
    save()
    sources = pick_sources(graph, args.sources, seed=1)
    record["sources"] = sources
    # deltastep_gpu's automatic lanes read the hop depth: three breadth-first searches, kept on the graph
    (depth, _, _), record["hop_landmarks_s"] = timed(graph.hop_landmarks)
    record["hop_depth"] = depth
    save()
    ours = {}
    for i, variant in enumerate(args.variants):
        solver, _, settings = variant.rpartition(":")
        solver = solver or "deltastep_gpu"
        params = parse_assignments(settings.split(",")) if settings != "-" else {}
        key = solver if i == 0 else f"{solver}+{settings}"
        started = time.perf_counter()
        before = device_used()
        spec = registry.get(solver)
        record[f"{key}_memory_formula_bytes"] = spec.memory(graph.n, graph.m, spec.resolve(params),
                                                            graph.weights.itemsize)
        for r in solve_many(graph, solver, sources, trials=args.trials, warmup=1, **params):
            if r.source == sources[0]:
                record[f"{key}_first_answer_s" if i else "first_answer_s"] = time.perf_counter() - started
                # the solver's arrays are alive while the generator runs: what it holds beyond the context
                record[f"{key}_device_bytes"] = None if before is None else device_used() - before
            ours.setdefault(r.source, r.dist)
            answer = {"source": r.source, "samples_ms": r.timings.samples_ms,
                      "median_ms": float(np.median(r.timings.samples_ms)), "compile_s": r.timings.compile_s,
                      "h2d_ms": r.timings.h2d_ms, "relaxations": r.counters.get("relaxations"), "counters": r.counters,
                      "reached": int((r.dist != graph.inf).sum()), "params": params,
                      "same_as_first": bool(np.array_equal(r.dist, ours[r.source]))}
            record.setdefault(key, []).append(answer)
            save()
            try:
                verdict = check_certificate(graph, r.source, r.dist, r.parent)
                answer.update(certificate_ok=verdict.ok, certificate_s=verdict.seconds, checks=verdict.checks)
            except Exception as exc:  # recorded, so that GAPBS's part still runs
                answer["certificate_error"] = f"{type(exc).__name__}: {exc}"[:2000]
            save()
        medians = [a["median_ms"] for a in record[key]]
        print(f"{graph.name} {key}: median {np.median(medians):.1f} ms a source ({medians})", flush=True)
    delta = GAP_DELTA.get(args.kind) or min(graph.default_delta(), 2**30 - 1)
    record["gapbs"] = gapbs(wsg, sources, delta, args.threads, args.gapbs_trials, args.work)
    record["gapbs"]["delta"] = delta
    saved = record["gapbs"].get("saved")
    if saved:
        same = {}
        for s in sources:
            theirs = np.fromfile(Path(saved) / f"source-{s}.int32", dtype="<i4").astype(np.int64)
            mine = ours[s].astype(np.int64)
            theirs[theirs == 2**30 - 1] = graph.inf
            same[str(s)] = bool(np.array_equal(theirs, mine))
        record["gapbs_equals_ours"] = same
    save()
    wsg.unlink()
    if args.gcsr:
        cache = args.work / f"{args.kind}{args.scale}.gcsr"
        _, record["write_gcsr_s"] = timed(write_graph, graph, cache)
        record["gcsr_bytes"] = cache.stat().st_size
        del graph, ours
        _, record["read_gcsr_s"] = timed(read_graph, cache)
        record["read_gcsr_GBps"] = record["gcsr_bytes"] / record["read_gcsr_s"] / 1e9
        cache.unlink()
        save()
    print(json.dumps({k: v for k, v in record.items() if not k.startswith(("deltastep", "gapbs"))}, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
