"""The ``gpusp`` command line: the commands' arguments, parsed and checked, and the dispatch to the layer that does
each command's work (``gpusp.data.commands``, ``gpusp.measure.commands``, ``gpusp.report.commands``,
``gpusp.bench``); only :mod:`gpusp.launch`, the ``gpusp`` command, imports it.

Every failure prints one line ``gpusp: error: ...`` to stderr and exits non-zero; files are written
atomically, so a failed command leaves no output behind.
"""

from __future__ import annotations

import argparse
import json
import math
import sys

from ._version import __version__
from .data import commands as data_commands
from .data.formats import FORMATS
from .data.generate import generate, kinds_listing
from .errors import GpuspError
from .measure import commands as measure_commands
from .plan import parse_assignments
from .report import commands as report_commands
from .solvers import auto, registry
from .solvers.compilecheck import main as compile_check
from .solvers.peers import build as peers

EXIT_ERROR = 1


def cmd_generate(args):
    params = {**parse_assignments(args.params), **({"seed": args.seed} if args.seed is not None else {})}
    graph = generate(args.kind, **params)
    graph.name = args.name or graph.name
    data_commands.write(graph, args, f"{graph.name} n={graph.n:,} m={graph.m:,}")


def cmd_plot(args):
    from .report.paperfigs.command import plot  # plotting libraries only for the command that draws

    return plot(args)


def cmd_peers(args):
    if args.action == "list":
        return print("\n".join(f"{n:<8} {peers.get_peer(n)['commit']}  {peers.get_peer(n)['url']}"
                                for n in peers.names()))
    dest = peers.build(args.name, args.dest, cxx=args.cxx, nvcc=args.nvcc, arch=args.arch,
                       device_fix=not args.without_device_fix, downloads=args.downloads, mirror=args.mirror,
                       offline=args.offline, unavailable_ok=args.unavailable_ok, force=args.force)
    print(peers.describe_build(args.name, dest))


def cmd_solvers(args):
    specs = [registry.get(n) for n in registry.list_solvers(args.problem)]
    picks = args.problem in (None, "sssp")  # auto: an SSSP solver picked from the graph (gpusp.solvers.auto)
    lines = [specs[0].header()] + [s.describe() for s in specs] + ([auto.describe()] if picks else [])
    infos = [s.info() for s in specs] + ([auto.info()] if picks else [])
    print(json.dumps(infos, indent=1) if args.json else "\n".join(lines))


def cmd_bench(args):
    from .bench import run_bench

    report_commands.wrote(run_bench(args.config, args.out, args.set, args.graphs))


# --- argument types: each range is checked where it is parsed, and argparse names the option ---------------
def bounded(kind, ok=None, must: str = ""):
    """An argparse type: a ``kind`` (int or float) for which ``ok`` holds, else "must be ``must``"."""

    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {'an integer' if kind is int else 'a number'}, "
                                             f"got {text!r}") from None
        if ok is not None and not ok(value):
            raise argparse.ArgumentTypeError(f"must be {must}, got {value if kind is int else repr(text)}")
        return value

    return parse


INTEGER, COUNT, NON_NEGATIVE = bounded(int), bounded(int, lambda v: v >= 1, "a positive integer"), \
    bounded(int, lambda v: v >= 0, ">= 0")
# a finite number > 0 (seconds, rates: inf and nan are no budget or ceiling); a confidence level; a factor
POSITIVE = bounded(float, lambda v: math.isfinite(v) and v > 0, "a finite number > 0")
FRACTION = bounded(float, lambda v: 0 < v < 1, "between 0 and 1")
FACTOR = bounded(float, lambda v: math.isfinite(v) and v >= 1, "a finite number >= 1")
SEED = ("--seed", {"type": NON_NEGATIVE, "default": 0})


def check_generate(args) -> str | None:
    if args.seed is not None and any(item.partition("=")[0].strip() == "seed" for item in args.params):
        return "argument --seed: not allowed with a seed=VALUE parameter (the same seed, given twice)"
    return None


def check_weights(args) -> str | None:
    if args.min > args.max:
        return f"argument --max: must be >= --min ({args.min}), got {args.max}"
    return None


CHECKS = {"solve": measure_commands.check_solve, "generate": check_generate, "weights": check_weights}  # across options


# --- parser ------------------------------------------------------------------------------------------
# Each command: (function, help, arguments); an argument is (flags..., {keyword arguments}).
FLAG = {"action": "store_true"}
FMT = ("--format", {"choices": FORMATS, "help": "file format (default: from the extension)"})
FROM = ("--from", {"dest": "from_format", "choices": FORMATS, "help": "input format (default: extension)"})
TO = ("--to", {"dest": "to_format", "choices": FORMATS, "help": "output format (default: extension)"})
MIRROR = ("--mirror", {"help": "offline mirror folder (default: $GPUSP_MIRROR, else `mirror:` in the site file "
                                  "$GPUSP_SITE or ~/.config/gpusp/site.yaml)"})
REQUIRED = {"required": True}
VALIDATION = [("--validation-method", {"choices": ("auto", "reference", "certificate"), "default": "auto", "help":
                                       "reference: SciPy's distances; certificate: the O(m) optimality certificate; "
                                       "auto: the reference up to --reference-max-work source-arc pairs"}),
              ("--reference-max-work", {"type": NON_NEGATIVE, "metavar": "PAIRS", "help": "auto's limit"})]
FLOW = {"size": 64, "seed": 1, "vmax": 10, "tile": 16, "trials": 3}  # paper 003's flow (config key paper003)
FLOW_OPTIONS = {"size": {"type": COUNT}, "seed": {"type": NON_NEGATIVE}, "vmax": {"type": COUNT},
                "tile": {"type": int, "choices": (4, 8, 16, 32)}, "trials": {"type": COUNT}}  # as the config schema
COMMANDS = {
    "info": (data_commands.info, "print n, m, degree and weight statistics of a graph",
             [("graph", {}), FMT, ("--json", {**FLAG, "help": "machine-readable output"})]),
    "convert": (data_commands.convert, "convert a graph between formats (gr, snap, plain, npz, .gz)",
                [("input", {}), ("output", {}), FROM, TO, ("--name", {"help": "graph name stored in the output"}),
                 ("--symmetrize", {**FLAG, "help": "add the reverse of every edge (undirected input)"})]),
    "generate": (cmd_generate, "a seeded graph (random, rmat, ...): `generate random g.npz n=1000 k=4 --seed 1`\n\n"
                 f"kinds and their KEY=VALUE parameters (a bare name is required):\n{kinds_listing()}",
                 [("kind", {}), ("output", {}), ("params", {"nargs": "*", "metavar": "KEY=VALUE"}),
                  ("--seed", {"type": NON_NEGATIVE}), ("--name", {}), TO]),
    "weights": (data_commands.weights, "add random weights to an unweighted graph, or replace weights",
                [("action", {"choices": ("add", "replace")}), ("input", {}), ("output", {}),
                 ("--min", {"type": INTEGER, "default": 1}), ("--max", {"type": INTEGER, "default": 100}), SEED,
                 FROM, TO]),
    "datasets": (data_commands.list_or_fetch, "list or fetch the real graphs (DIMACS9, SNAP)", {
        "list": ("list the registry, and where a copy of each file already is", [
            ("--json", FLAG), ("--dest", {"default": "results/downloads", "help": "the downloads folder looked in"}),
            MIRROR]),
        "fetch": ("download (or copy from the offline mirror) and verify", [
            ("names", {"nargs": "+"}), ("--dest", {"default": "results/downloads"}), MIRROR,
            ("--no-progress", FLAG)])}),
    "sources": (measure_commands.sources, "write seeded SSSP sources (vertices with out-degree > 0)",
                [("graph", {}), ("output", {}), ("--count", {"type": COUNT, "default": 4}), SEED, FMT]),
    "solvers": (cmd_solvers, "list the registered solvers",
                [("--problem", {"choices": ("sssp", "apsp")}), ("--json", FLAG)]),
    "solve": (measure_commands.solve, "run a solver with timing, optional validation and a JSON record", [
        ("--graph", {"help": "the graph file (or --generate)"}), FMT, ("--solver", REQUIRED),
        ("--generate", {"nargs": "+", "metavar": "WORD",
                        "help": "KIND [KEY=VALUE ...]: a seeded graph made in memory instead of --graph, e.g. "
                                "--generate kron scale=16 (`gpusp generate --help` lists the kinds)"}),
        ("--source", {"type": NON_NEGATIVE, "help": "one SSSP source"}),
        ("--sources", {"help": "file of SSSP sources, one per line"}),
        ("--num-sources", {"type": COUNT, "help": "seeded sources (distinct vertices with out-degree > 0) when "
                                                  "none are given (default 1)"}),
        ("--all-sources", {**FLAG, "help": "every vertex a source, each batch of trees reduced on the device to "
                                           "eccentricity, reach, sum and a histogram per source (a batched solver "
                                           "with a sweep: multisource_sssp; --summary writes them)"}),
        ("--targets", {"help": "file of target vertices, one per line: the sources x targets distance table "
                               "(origin-destination), reduced on the device like --all-sources"}),
        ("--summary", {"help": "write the per-source reductions and the table of --all-sources / --targets here "
                               "(.npz)"}),
        (SEED[0], {**SEED[1], "help": "seed for sources and validation samples"}),
        ("--param", {"action": "append", "metavar": "KEY=VALUE", "help": "solver parameter (repeatable)"}),
        ("--trials", {"type": COUNT, "default": 5}), ("--warmup", {"type": NON_NEGATIVE, "default": 1}),
        ("--end-to-end", {"type": NON_NEGATIVE, "default": 0, "metavar": "RUNS",
                          "help": "after the timed trials, RUNS runs of a fresh solver timed on the host clock from its "
                                  "device allocations to its download (paper 000's window)"}),
        ("--validate", {**FLAG, "help": "check the answers on the CPU (--validation-method)"}),
        ("--validate-rows", {"type": COUNT, "default": 16, "help": "APSP rows sampled for validation"}), *VALIDATION,
        ("--output", {"choices": ("none", "print", "write"), "default": "none",
                      "help": "paper 000's modes: paths v<-p<-...<-s on screen or to a file"}),
        ("--paths-file", {"help": "file for --output write"}), ("--record", {"help": "write the JSON record here"}),
        ("--answer", {"help": "write distances and parents (.npz) for a later `gpusp validate`"}),
        ("--time-budget", {"type": POSITIVE, "metavar": "SECONDS",
                           "help": "stop after this long and record the run as skipped (runs in a child process)"}),
        ("--params-label", {"help": "parameter-set label stored in the record (workflow; with --solver auto the "
                                    "pick's label is stored instead)"}),
        ("--graph-label", {"help": "graph name from the config stored in the record (workflow)"}),
        ("--planned-by-auto", {**FLAG, "help": "the config's auto picked this solver at planning (workflow): the "
                                              "run picks again on the graph, stops if the pick differs, and the "
                                              "record keeps the pick and its reason"})]),
    "validate": (measure_commands.validate, "check a saved answer (.npz from solve --answer) by --validation-method",
                 [("--graph", REQUIRED), FMT, ("--answer", REQUIRED), ("--output", {"help": "verdict JSON file"}),
                  *VALIDATION,
                  ("--failure-ok", {**FLAG, "help": "exit 0 on a failed verdict (written to --output): the workflow "
                                                    "passes it for peers, whose wrong answers are findings the report "
                                                    "shows, where one of ours is an error"})]),
    "peers": (cmd_peers, "list or build the peer baselines (GAPBS, Gunrock) from their pinned archives", {
        "list": ("the pinned peers", []),
        "build": ("fetch (mirror first, sha256 checked), extract and build a peer, atomically", [
        ("name", {"help": "a peer of `gpusp peers list` (gapbs, gunrock)"}),
        ("--dest", {"help": "build folder (default: $GPUSP_CACHE/peers/<name>-<commit>)"}),
        ("--cxx", {"help": "gapbs: C++ compiler (default: $CXX, else g++)"}),
        ("--nvcc", {"help": "gunrock: CUDA compiler (default: $NVCC, else nvcc on PATH, $CUDA_HOME/bin, "
                            "/usr/local/cuda/bin)"}),
        ("--arch", {"help": "gunrock: compute capability x 10 to build for (default: $GPUSP_CUDA_ARCH, else 90)"}),
        ("--without-device-fix", {**FLAG, "help": "gunrock: leave out the driver's __HIP_DEVICE_COMPILE__ fix, to "
                                               "see the wrong distances Gunrock gives without it (docs/peers.md); "
                                               "never for measurements"}),
        ("--downloads", {"help": "where the archive is kept (default: $GPUSP_CACHE/downloads)"}), MIRROR,
        ("--offline", {**FLAG, "help": "never use the network"}),
        ("--force", {**FLAG, "help": "rebuild even if a complete build is there"}),
        ("--unavailable-ok", {**FLAG, "help": "without the tools the peer needs (gapbs: a C++ compiler with OpenMP "
                                             "and make; gunrock: nvcc), write BUILD.json saying why and exit 0 "
                                             "(the solver is then skipped with that reason)"})])}),
    "prepare": (data_commands.prepare, "build a workflow graph (.npz) from its config entry (JSON)",
                [("--spec", {**REQUIRED, "help": "the graph's config entry as JSON"}), ("--output", REQUIRED),
                 ("--downloads", {"default": "results/downloads"}), MIRROR]),
    "aggregate": (report_commands.aggregate, "records -> samples.csv/.parquet, summary.csv, the landing page, the run "
                  "environment and a records archive", [
        ("records", {"nargs": "*"}), ("--out-dir", REQUIRED),
        ("--skipped", {"help": "JSON list of skipped combinations with reasons"}),
        ("--ceiling", {"type": POSITIVE,
                       "help": "measured add-min ceiling (per s) for the APSP ceiling_fraction"}),
        ("--allow-mixed", {**FLAG, "help": "mix records of different code versions"}),
        ("--allow-mixed-hardware", {**FLAG, "help": "keep records of different GPU models or host CPUs (refused "
                                                    "otherwise): every table keeps each machine apart, labelled"}),
        ("--intro", {"help": "reStructuredText put above the landing page's tables (landing.rst)"})]),
    "compare": (report_commands.compare, "B against A per configuration: the ratio of medians with a bootstrap "
                "interval and a verdict (faster, slower, same within noise)", [
        ("a", {"metavar": "A", "help": "results folder, samples table (.csv, .parquet) or records (.json, .tar.gz)"}),
        ("b", {"metavar": "B", "help": "the same for the other side"}),
        ("--out-dir", {"help": "also write compare.csv, compare.rst and compare.png here"}),
        ("--resamples", {"type": COUNT, "default": 2000, "help": "bootstrap resamples"}),
        ("--confidence", {"type": FRACTION, "default": 0.95, "help": "the interval's confidence level"}),
        ("--factor", {"type": FACTOR, "default": 1.0,
                      "help": "a change smaller than this factor counts as the same (asv's --factor)"}),
        (SEED[0], {**SEED[1], "help": "seed of the bootstrap"}),
        ("--only-changed", {**FLAG, "help": "list only the configurations that got faster or slower"})]),
    "plot": (cmd_plot, "seaborn figures from the aggregated tables",
             [("--samples", REQUIRED), ("--summary", REQUIRED), ("--out-dir", REQUIRED),
              ("--peak", {"type": POSITIVE, "help": "measured peak relaxations/s for the rate plot"}),
              ("--papers-dir", {"help": "also redraw the papers' figures from these tables here "
                                        "(<dir>/<paper>/<figure>.png; docs/paper-figures.md)"})]),
    "paper003": (report_commands.paper003, "paper 003's flow: n x n product of entries 0..vmax-1, its two smallest "
                 "cells, the path between them",
                 [(f"--{k}", {**FLOW_OPTIONS[k], "default": v}) for k, v in FLOW.items()] + [
                     ("--solver", {"default": "packed_atomic"}), ("--png", REQUIRED), ("--record", REQUIRED)]),
    "bench": (cmd_bench, "run a workflow config's matrix on this machine (e.g. a GPU box): the workflow, through "
              "Snakemake's API, one job at a time", [
        ("--config", {**REQUIRED, "help": "a workflow config (graphs + solver grids)"}),
        ("--out", {**REQUIRED, "help": "output folder, the workflow's results (graphs, runs, logs, tables, plots)"}),
        ("--graphs", {"nargs": "*", "help": "only these graphs of the config (the config key only_graphs)"}),
        ("--set", {"action": "append", "metavar": "KEY=VALUE", "help": "override a top-level config key"})]),
    "compile-check": (lambda args: compile_check(args.modules), "compile every GPU kernel for sm_90 offline",
                      [("modules", {"nargs": "*"})]),
}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gpusp", description="GPU shortest-path solvers and their benchmarks.")
    p.add_argument("--version", action="version", version=f"gpusp {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (fn, text, arguments) in COMMANDS.items():
        _add(sub, name, fn, text, arguments)
    return p


def _add(sub, name, fn, text, arguments):
    """A subcommand; ``arguments`` as a dict: its own subcommands ``{name: (help, arguments)}``."""
    text, _, listing = text.partition("\n\n")  # a listing after the one-line text keeps its lines
    q = sub.add_parser(name, help=text, description=text, epilog=listing or None,
                       formatter_class=argparse.RawDescriptionHelpFormatter if listing else argparse.HelpFormatter)
    if isinstance(arguments, dict):
        nested = q.add_subparsers(dest="action", required=True)
        for child, (child_text, child_arguments) in arguments.items():
            _add(nested, child, fn, child_text, child_arguments)
    for *flags, options in () if isinstance(arguments, dict) else arguments:
        q.add_argument(*flags, **options)
    q.set_defaults(fn=fn, parser=q)


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    problem = CHECKS[args.command](args) if args.command in CHECKS else None
    if problem:
        args.parser.error(problem)
    try:
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
