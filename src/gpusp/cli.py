"""The ``gpusp`` command line: data preparation, solving, validation and benchmarking.

Every failure prints one line ``gpusp: error: ...`` to stderr and exits non-zero; files are written
atomically, so a failed command leaves no output behind.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from .errors import GpuspError

EXIT_ERROR = 1
EXIT_USAGE = 2


def _kv(items) -> dict:
    """Parse ``key=value`` strings; values become int, float, bool or stay strings."""
    out = {}
    for item in items or ():
        if "=" not in item:
            raise GpuspError(f"expected key=value, got {item!r}")
        key, value = item.split("=", 1)
        out[key.strip().replace("-", "_")] = _scalar(value.strip())
    return out


def _scalar(value: str):
    low = value.lower()
    if low in ("true", "false"):
        return low == "true"
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value


def _read(path, fmt=None, **options):
    from .formats import read_graph

    return read_graph(path, format=fmt, **options)


# --- data commands ---------------------------------------------------------------------------------
def cmd_info(args):
    graph = _read(args.graph, args.format)
    stats = graph.stats()
    if args.json:
        print(json.dumps(stats, indent=1))
        return 0
    kinds = {"real": "real (from the file)", "generated": "generated (seeded)", "unit": "none (unit weights)"}
    print(f"graph            {stats['name']}  ({args.graph})")
    print(f"vertices n       {stats['n']:,}")
    print(f"edges m          {stats['m']:,}")
    print(f"out-degree       min {stats['out_degree_min']}  mean {stats['out_degree_mean']:.2f}  "
          f"max {stats['out_degree_max']}  (zero: {stats['zero_out_degree']:,})")
    print(f"weights          {kinds[stats['weight_kind']]}, range [{stats['weight_min']}, {stats['weight_max']}], "
          f"distances {stats['weight_dtype']}")
    print(f"duplicate edges  {stats['duplicate_edges']:,}")
    print(f"self-loops       {stats['self_loops']:,}")
    print(f"checksum         {stats['checksum']}")
    if graph.meta:
        print(f"meta             {json.dumps(graph.meta, default=str)}")
    return 0


def cmd_convert(args):
    from .formats import write_graph
    from .weights import symmetrize

    graph = _read(args.input, args.from_format)
    if args.symmetrize:
        graph = symmetrize(graph)
    if args.name:
        graph.name = args.name
    write_graph(graph, args.output, format=args.to_format)
    print(f"wrote {args.output}: n={graph.n:,} m={graph.m:,}")
    return 0


def cmd_generate(args):
    from .formats import write_graph
    from .generate import generate

    params = _kv(args.params)
    if args.seed is not None:
        params["seed"] = args.seed
    graph = generate(args.kind, **params)
    if args.name:
        graph.name = args.name
    write_graph(graph, args.output, format=args.to_format)
    print(f"wrote {args.output}: {graph.name} n={graph.n:,} m={graph.m:,}")
    return 0


def cmd_weights(args):
    from .formats import write_graph
    from .weights import add_weights, replace_weights

    graph = _read(args.input, args.from_format)
    fn = add_weights if args.action == "add" else replace_weights
    graph = fn(graph, args.min, args.max, args.seed)
    write_graph(graph, args.output, format=args.to_format)
    print(f"wrote {args.output}: {args.action} weights in [{args.min}, {args.max}] seed {args.seed}")
    return 0


def cmd_datasets(args):
    from . import datasets

    if args.action == "list":
        rows = datasets.list_datasets()
        if args.json:
            print(json.dumps(rows, indent=1))
            return 0
        for row in rows:
            n, m = (f"{v:,}" if v is not None else "-" for v in (row["nodes"], row["edges"]))
            print(f"{row['name']:<24} {row['kind']:<7} {row['format']:<5} n={n:>11} m={m:>11}  {row['url']}")
        return 0
    for name in args.names:
        path = datasets.fetch(name, args.dest, mirror=args.mirror, progress=not args.no_progress)
        print(f"{name}: {path}")
    return 0


def cmd_sources(args):
    from .atomic import atomic_open
    from .sources import pick_sources

    graph = _read(args.graph, args.format)
    sources = pick_sources(graph, args.count, args.seed)
    with atomic_open(args.output) as fh:
        fh.write(f"# {len(sources)} sources of {graph.name} (checksum {graph.checksum()[:16]}), seed {args.seed}\n")
        fh.writelines(f"{s}\n" for s in sources)
    print(f"wrote {args.output}: {len(sources)} sources")
    return 0


# --- solving -----------------------------------------------------------------------------------------
def cmd_solvers(args):
    from . import registry

    specs = [registry.get(n) for n in registry.list_solvers(args.problem)]
    if args.json:
        print(json.dumps([s.info() for s in specs], indent=1))
        return 0
    for s in specs:
        params = ", ".join(f"{p.name}={p.default}" for p in s.params)
        print(f"{s.name:<32} {s.problem} {s.device} paper {s.paper:<3} {params}")
    return 0


def _sources_for(args, graph):
    from .sources import pick_sources, read_sources

    if args.sources:
        return read_sources(args.sources)
    if args.source is not None:
        return [args.source]
    return pick_sources(graph, args.num_sources, args.seed)


def _path_lines(result, graph, source):
    """Paper 000's output: one line per vertex, ``v<-p<-...<-s`` with the distance, or unreachable."""
    from .api import path

    dist = result.dist if result.problem == "sssp" else result.dist[source]
    for v in range(graph.n):
        if dist[v] == result.inf:
            yield f"{source}->{v}: unreachable\n"
        else:
            chain = path(result, v, source)
            yield f"{source}->{v}: {int(dist[v])}: " + "<-".join(str(x) for x in reversed(chain)) + "\n"


def _solve_with_budget(args, argv):
    """Run this same solve in a child process; past the budget, record a skip instead of a result."""
    import subprocess

    from . import registry
    from .records import make_record, write_record

    child = [sys.executable, "-m", "gpusp.cli", *argv]
    try:
        return subprocess.run(child, timeout=args.time_budget).returncode
    except subprocess.TimeoutExpired:
        reason = f"exceeded the time budget of {args.time_budget:g} s (trials={args.trials}, warmup={args.warmup})"
        print(f"gpusp: skipped: {reason}", file=sys.stderr)
        if args.record:
            graph = _read(args.graph, args.format)
            params = registry.get(args.solver).resolve(_kv(args.param))
            write_record(make_record(solver=args.solver, params=params, graph=graph, graph_path=args.graph, runs=[],
                                     trials=args.trials, warmup=args.warmup, status="skipped", reason=reason,
                                     extra=_labels(args)), args.record)
        if args.answer:
            _empty_answer(args.answer)
        return 0


def _empty_answer(path):
    """An answer file with no sources, for runs that produced none (skipped, negative cycle)."""
    import numpy as np

    from .atomic import atomic_path

    with atomic_path(path, suffix=".npz") as tmp:
        np.savez(tmp, sources=np.zeros(0, dtype=np.int64), dist=np.zeros((0, 0)), parent=np.zeros((0, 0)))


def _labels(args) -> dict:
    return {"params_label": args.params_label, "graph_label": args.graph_label, "seed": args.seed}


def _verdicts(args, spec, graph, results) -> list:
    """One verdict per result: a peer's own verifier, else SciPy distances and the tree checks."""
    from .validate import check_apsp, check_sssp, peer_verdict, reference_distances, sample_rows

    if spec.peer:
        return [peer_verdict(r) for r in results]
    if spec.problem == "sssp":
        ref = reference_distances(graph, [r.source for r in results])
        return [check_sssp(graph, r.source, r.dist, r.parent, ref[i]) for i, r in enumerate(results)]
    rows = sample_rows(graph.n, args.validate_rows, args.seed)
    return [check_apsp(graph, results[0].dist, results[0].parent, rows)]


def _peer_answer(path, results, runs) -> None:
    """A peer's answer file: its sources and its verifier's verdicts (``peer_verdicts``, JSON), no
    distances; ``gpusp validate`` passes those verdicts on."""
    import numpy as np

    k = len(results)
    np.savez(path, sources=np.array([r.source for r in results]), dist=np.zeros((k, 0)), parent=np.zeros((k, 0)),
             inf=results[0].inf, peer_verdicts=json.dumps([r["validation"] for r in runs]))


def cmd_solve(args):
    import numpy as np

    from . import registry
    from .api import solve_many
    from .atomic import atomic_open, atomic_path
    from .errors import NegativeCycleError, SolverUnavailable
    from .records import make_record, run_entry, write_record
    from .validate import sample_rows

    graph = _read(args.graph, args.format)
    spec = registry.get(args.solver)
    params = spec.resolve(_kv(args.param))
    if spec.peer and args.output != "none":
        raise GpuspError(f"{args.solver} is a peer binary that prints no distances: --output has no paths to show")
    sources = _sources_for(args, graph) if spec.problem == "sssp" else [None]
    runs, status, reason, results = [], "ok", None, []
    t0 = time.perf_counter()
    try:
        for result in solve_many(graph, args.solver, sources, trials=args.trials, warmup=args.warmup, **params):
            results.append(result)
            runs.append(run_entry(result))
    except NegativeCycleError as exc:
        status, reason = "negative-cycle", str(exc)
    except SolverUnavailable as exc:
        status, reason = "skipped", str(exc)
    wall_s = time.perf_counter() - t0

    validation_s = None
    if (args.validate or spec.peer) and results:  # a peer's own verifier always ran: record its verdict
        t1 = time.perf_counter()
        verdicts = _verdicts(args, spec, graph, results)
        validation_s = time.perf_counter() - t1
        for entry, verdict in zip(runs, verdicts):
            entry["validation"] = verdict.to_dict()
        if not all(v.ok for v in verdicts):
            status = "failed-validation"
            reason = next(v for v in verdicts if not v.ok).mismatches[:3]

    if args.answer and not results:
        _empty_answer(args.answer)
    if args.answer and results:
        with atomic_path(args.answer, suffix=".npz") as tmp:
            if spec.peer:
                _peer_answer(tmp, results, runs)
            elif spec.problem == "sssp":
                np.savez(tmp, sources=np.array([r.source for r in results]), dist=np.stack([r.dist for r in results]),
                         parent=np.stack([r.parent for r in results]), inf=graph.inf)
            else:
                rows = sample_rows(graph.n, args.validate_rows, args.seed)
                np.savez(tmp, sources=rows, dist=results[0].dist[rows], parent=results[0].parent[rows],
                         inf=graph.inf)
    if args.record:
        record = make_record(solver=args.solver, params=params, graph=graph, graph_path=args.graph, runs=runs,
                             trials=args.trials, warmup=args.warmup, status=status,
                             reason=reason if isinstance(reason, str) or reason is None else "; ".join(reason),
                             extra={"wall_s": wall_s, "validation_s": validation_s, **_labels(args)})
        write_record(record, args.record)

    if args.output != "none" and results:
        lines = (line for r in results for s in ([r.source] if r.problem == "sssp" else range(graph.n))
                 for line in _path_lines(r, graph, s))
        if args.output == "print":
            sys.stdout.writelines(lines)
        else:
            target = args.paths_file or f"{Path(args.graph).name}.{args.solver}.paths.txt"
            with atomic_open(target) as fh:
                fh.writelines(lines)
            print(f"wrote paths to {target}")

    for r in results:
        t = r.timings
        src = "all" if r.source is None else r.source
        print(f"{args.solver} source {src}: median {t.median_ms:.3f} ms (IQR {t.iqr_ms:.3f}, {len(t.samples_ms)} "
              f"trials, {t.clock}), compile {t.compile_s:.2f} s, h2d {t.h2d_ms:.2f} ms, d2h {t.d2h_ms:.2f} ms, "
              f"{r.counters}")
    if validation_s is not None:
        print(f"validation: {'ok' if status == 'ok' else status} ({validation_s:.2f} s)")
    if status in ("negative-cycle", "skipped"):
        if args.record:
            print(f"gpusp: {'skipped: ' if status == 'skipped' else ''}{reason} (recorded)", file=sys.stderr)
            return 0
        print(f"gpusp: error: {reason}", file=sys.stderr)
        return EXIT_ERROR
    if status == "failed-validation":
        print(f"gpusp: error: validation failed: {reason}", file=sys.stderr)
        return EXIT_ERROR
    return 0


def cmd_validate(args):
    import numpy as np

    from .records import write_record
    from .validate import check_sssp, reference_distances

    graph = _read(args.graph, args.format)
    try:
        with np.load(args.answer) as ans:
            sources, dist, parent = ans["sources"], ans["dist"], ans["parent"]
            peer = json.loads(str(ans["peer_verdicts"])) if "peer_verdicts" in ans.files else None
    except (KeyError, ValueError, OSError) as exc:
        raise GpuspError(f"{args.answer}: not a gpusp answer (.npz with sources, dist, parent): {exc}") from None
    if peer is not None and len(sources):
        return _validate_peer(args, graph, sources, peer)
    if len(sources) == 0:
        out = {"graph_checksum": graph.checksum(), "answer": str(args.answer), "ok": None, "sources": [],
               "verdicts": [], "status": "not validated: the run was skipped (no answer)"}
        if args.output:
            write_record(out, args.output)
        print("validation: nothing to check (the run was skipped)")
        return 0
    t0 = time.perf_counter()
    ref = reference_distances(graph, sources)
    ref_s = time.perf_counter() - t0
    verdicts = [check_sssp(graph, int(s), dist[i], parent[i], ref[i]) for i, s in enumerate(sources)]
    total_s = time.perf_counter() - t0
    ok = all(v.ok for v in verdicts)
    out = {"graph_checksum": graph.checksum(), "answer": str(args.answer), "ok": ok,
           "sources": [int(s) for s in sources], "verdicts": [v.to_dict() for v in verdicts],
           "reference_s": ref_s, "validation_s": total_s}
    if args.output:
        write_record(out, args.output)
    print(f"validation {'ok' if ok else 'FAILED'}: {len(sources)} sources in {total_s:.2f} s")
    if not ok:
        bad = next(v for v in verdicts if not v.ok)
        print(f"gpusp: error: validation failed: {bad.mismatches[:3]}", file=sys.stderr)
        return EXIT_ERROR
    return 0


def _validate_peer(args, graph, sources, verdicts) -> int:
    """A peer's answer holds its own verifier's verdicts, not distances: pass them on, labelled."""
    from .records import write_record

    ok = all(v["ok"] for v in verdicts)
    out = {"graph_checksum": graph.checksum(), "answer": str(args.answer), "ok": ok,
           "sources": [int(s) for s in sources], "verdicts": verdicts, "method": "peer verifier",
           "reference_s": 0.0, "validation_s": 0.0}
    if args.output:
        write_record(out, args.output)
    print(f"validation {'ok' if ok else 'FAILED'} (peer verifier): {len(sources)} sources")
    if not ok:
        bad = next(v for v in verdicts if not v["ok"])
        print(f"gpusp: error: peer verifier failed: {bad['mismatches'][:3]}", file=sys.stderr)
        return EXIT_ERROR
    return 0


def cmd_peers(args):
    from . import peers

    if args.action == "list":
        for name in peers.names():
            entry = peers.get_peer(name)
            print(f"{name:<8} {entry['commit']}  {entry['url']}")
        return 0
    dest = peers.build(args.name, args.dest, cxx=args.cxx, downloads=args.downloads, mirror=args.mirror,
                       offline=args.offline, unavailable_ok=args.unavailable_ok, force=args.force)
    info = peers.read_build(dest)
    if info.get("ok"):
        print(f"{args.name}: built {', '.join(info['binaries'])} in {dest} ({info['cxx_version'] or info['cxx']})")
    else:
        print(f"{args.name}: unavailable, recorded in {dest / peers.BUILD_INFO}: {info['reason']}")
    return 0


def cmd_prepare(args):
    from .workflow import prepare_graph

    graph = prepare_graph(json.loads(args.spec), args.output, downloads=args.downloads, mirror=args.mirror)
    print(f"wrote {args.output}: {graph.name} n={graph.n:,} m={graph.m:,} weights {graph.weight_kind}")
    return 0


def cmd_aggregate(args):
    from .aggregate import write_tables

    skipped = json.loads(Path(args.skipped).read_text()) if args.skipped else []
    written = write_tables(args.records, args.out_dir, skipped=skipped, allow_mixed=args.allow_mixed,
                           ceiling=args.ceiling)
    print("wrote " + ", ".join(str(p) for p in written.values()))
    return 0


def cmd_plot(args):
    import pandas as pd

    from .plots import make_figures

    samples = pd.read_parquet(args.samples)
    summary = pd.read_csv(args.summary)
    paths = make_figures(samples, summary, args.out_dir, peak=args.peak)
    print("wrote " + ", ".join(str(p) for p in paths.values()))
    return 0


def cmd_bench(args):
    import yaml

    from .bench import run_config

    config = yaml.safe_load(Path(args.config).read_text())
    for item in args.set or ():
        key, value = item.split("=", 1)
        config[key] = _scalar(value)
    written = run_config(config, Path(args.out), only_graphs=args.graphs)
    print("wrote " + ", ".join(str(p) for p in written.values()))
    return 0


def cmd_compile_check(args):
    from .compilecheck import main

    return main(args.modules)


# --- parser ------------------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gpusp", description="GPU shortest-path solvers and their benchmarks.")
    p.add_argument("--version", action="version", version=f"gpusp {__import__('gpusp').__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def fmt(q, name="--format", dest=None):
        q.add_argument(name, dest=dest, default=None, choices=("gr", "co", "snap", "plain", "npz"),
                       help="file format (default: from the extension)")

    q = sub.add_parser("info", help="print n, m, degree and weight statistics of a graph")
    q.add_argument("graph")
    fmt(q)
    q.add_argument("--json", action="store_true", help="machine-readable output")
    q.set_defaults(fn=cmd_info)

    q = sub.add_parser("convert", help="convert a graph between formats (gr, snap, plain, npz, .gz)")
    q.add_argument("input")
    q.add_argument("output")
    fmt(q, "--from", "from_format")
    fmt(q, "--to", "to_format")
    q.add_argument("--symmetrize", action="store_true", help="add the reverse of every edge (undirected input)")
    q.add_argument("--name", help="graph name stored in the output")
    q.set_defaults(fn=cmd_convert)

    q = sub.add_parser("generate", help="generate a seeded graph: complete, random, rmat, ring, grid, ...",
                       description="KEY=VALUE parameters go to the generator, e.g. "
                                   "`gpusp generate random g.npz n=1000 k=4 wmax=100 --seed 1`.")
    q.add_argument("kind")
    q.add_argument("output")
    q.add_argument("params", nargs="*", metavar="KEY=VALUE")
    q.add_argument("--seed", type=int, default=None)
    q.add_argument("--name")
    fmt(q, "--to", "to_format")
    q.set_defaults(fn=cmd_generate)

    q = sub.add_parser("weights", help="add random weights to an unweighted graph, or replace weights")
    q.add_argument("action", choices=("add", "replace"))
    q.add_argument("input")
    q.add_argument("output")
    q.add_argument("--min", type=int, default=1)
    q.add_argument("--max", type=int, default=100)
    q.add_argument("--seed", type=int, default=0)
    fmt(q, "--from", "from_format")
    fmt(q, "--to", "to_format")
    q.set_defaults(fn=cmd_weights)

    q = sub.add_parser("datasets", help="list or fetch the real graphs (DIMACS9, SNAP)")
    dsub = q.add_subparsers(dest="action", required=True)
    d = dsub.add_parser("list", help="list the registry")
    d.add_argument("--json", action="store_true")
    d.set_defaults(fn=cmd_datasets)
    d = dsub.add_parser("fetch", help="download (or copy from the offline mirror) and verify")
    d.add_argument("names", nargs="+")
    d.add_argument("--dest", default="results/downloads")
    d.add_argument("--mirror", default=None, help="offline mirror folder (default: $GPUSP_MIRROR)")
    d.add_argument("--no-progress", action="store_true")
    d.set_defaults(fn=cmd_datasets)

    q = sub.add_parser("sources", help="write seeded SSSP sources (vertices with out-degree > 0)")
    q.add_argument("graph")
    q.add_argument("output")
    q.add_argument("--count", type=int, default=4)
    q.add_argument("--seed", type=int, default=0)
    fmt(q)
    q.set_defaults(fn=cmd_sources)

    q = sub.add_parser("solvers", help="list the registered solvers")
    q.add_argument("--problem", choices=("sssp", "apsp"))
    q.add_argument("--json", action="store_true")
    q.set_defaults(fn=cmd_solvers)

    q = sub.add_parser("solve", help="run a solver with timing, optional validation and a JSON record")
    q.add_argument("--graph", required=True)
    fmt(q)
    q.add_argument("--solver", required=True)
    src = q.add_mutually_exclusive_group()
    src.add_argument("--source", type=int, help="one SSSP source")
    src.add_argument("--sources", help="file of SSSP sources, one per line")
    q.add_argument("--num-sources", type=int, default=1, help="seeded sources when none are given")
    q.add_argument("--seed", type=int, default=0, help="seed for sources and validation samples")
    q.add_argument("--param", action="append", metavar="KEY=VALUE", help="solver parameter (repeatable)")
    q.add_argument("--trials", type=int, default=5)
    q.add_argument("--warmup", type=int, default=1)
    q.add_argument("--validate", action="store_true", help="check against the CPU reference")
    q.add_argument("--validate-rows", type=int, default=16, help="APSP rows sampled for validation")
    q.add_argument("--output", choices=("none", "print", "write"), default="none",
                   help="paper 000's modes: paths v<-p<-...<-s on screen or to a file")
    q.add_argument("--paths-file", help="file for --output write")
    q.add_argument("--record", help="write the JSON record here")
    q.add_argument("--answer", help="write distances and parents (.npz) for a later `gpusp validate`")
    q.add_argument("--time-budget", type=float, default=None, metavar="SECONDS",
                   help="stop after this long and record the run as skipped (runs in a child process)")
    q.add_argument("--params-label", help="parameter-set label stored in the record (workflow)")
    q.add_argument("--graph-label", help="graph name from the config stored in the record (workflow)")
    q.set_defaults(fn=cmd_solve)

    q = sub.add_parser("validate", help="check a saved answer (.npz from solve --answer) against SciPy")
    q.add_argument("--graph", required=True)
    fmt(q)
    q.add_argument("--answer", required=True)
    q.add_argument("--output", help="write the verdict JSON here")
    q.set_defaults(fn=cmd_validate)

    q = sub.add_parser("peers", help="list or build the peer baselines (GAPBS) from their pinned archives")
    psub = q.add_subparsers(dest="action", required=True)
    d = psub.add_parser("list", help="the pinned peers")
    d.set_defaults(fn=cmd_peers)
    d = psub.add_parser("build", help="fetch (mirror first, sha256 checked), extract and make a peer, atomically")
    d.add_argument("name", help="a peer of `gpusp peers list` (gapbs)")
    d.add_argument("--dest", default=None, help="build folder (default: $GPUSP_CACHE/peers/<name>-<commit>)")
    d.add_argument("--cxx", default=None, help="C++ compiler (default: $CXX, else g++)")
    d.add_argument("--downloads", default=None, help="where the archive is kept (default: $GPUSP_CACHE/downloads)")
    d.add_argument("--mirror", default=None, help="offline mirror folder (default: $GPUSP_MIRROR)")
    d.add_argument("--offline", action="store_true", help="never use the network")
    d.add_argument("--force", action="store_true", help="rebuild even if a complete build is there")
    d.add_argument("--unavailable-ok", action="store_true",
                   help="without a compiler, OpenMP or make, write BUILD.json saying why and exit 0 "
                        "(the solver is then skipped with that reason)")
    d.set_defaults(fn=cmd_peers)

    q = sub.add_parser("prepare", help="build a workflow graph (.npz) from its config entry (JSON)")
    q.add_argument("--spec", required=True, help="the graph's config entry as JSON")
    q.add_argument("--output", required=True)
    q.add_argument("--downloads", default="results/downloads")
    q.add_argument("--mirror", default=None)
    q.set_defaults(fn=cmd_prepare)

    q = sub.add_parser("aggregate", help="records -> samples.csv/.parquet and summary.csv")
    q.add_argument("records", nargs="*")
    q.add_argument("--out-dir", required=True)
    q.add_argument("--skipped", help="JSON list of skipped combinations with reasons")
    q.add_argument("--ceiling", type=float, default=None,
                   help="measured add-min ceiling (per s) for the APSP ceiling_fraction column")
    q.add_argument("--allow-mixed", action="store_true", help="mix records of different code versions")
    q.set_defaults(fn=cmd_aggregate)

    q = sub.add_parser("plot", help="seaborn figures from the aggregated tables")
    q.add_argument("--samples", required=True)
    q.add_argument("--summary", required=True)
    q.add_argument("--out-dir", required=True)
    q.add_argument("--peak", type=float, default=None, help="measured peak relaxations/s for the rate plot")
    q.set_defaults(fn=cmd_plot)

    q = sub.add_parser("bench", help="run a workflow config's matrix without Snakemake (e.g. on a GPU box)")
    q.add_argument("--config", required=True, help="a workflow config (graphs + solver grids)")
    q.add_argument("--out", required=True, help="output folder (graphs, runs, tables)")
    q.add_argument("--graphs", nargs="*", help="only these graphs of the config")
    q.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a top-level config key")
    q.set_defaults(fn=cmd_bench)

    q = sub.add_parser("compile-check", help="compile every GPU kernel for sm_90 offline (needs [cu13])")
    q.add_argument("modules", nargs="*")
    q.set_defaults(fn=cmd_compile_check)
    return p


def main(argv=None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    try:
        if args.command == "solve" and args.time_budget:
            child, skip = [], False
            for a in argv:
                if skip or a.startswith("--time-budget="):
                    skip = False
                    continue
                if a == "--time-budget":
                    skip = True
                    continue
                child.append(a)
            return _solve_with_budget(args, child)
        return int(args.fn(args) or 0)
    except BrokenPipeError:
        sys.stdout = open(__import__("os").devnull, "w")
        return 0
    except (GpuspError, OSError, ValueError, KeyError) as exc:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"gpusp: error: {msg}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("gpusp: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
