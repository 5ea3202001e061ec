"""What the command line's measuring commands do (``gpusp solve``, ``sources``, ``validate``): each takes the options
:mod:`gpusp.cli` parsed, prints what it did and returns its exit status (None: 0); ``check_solve`` says what no
single option of ``gpusp solve`` can."""

from __future__ import annotations

import sys

from ..data.formats import read_graph
from ..data.generate import generate
from ..plan import parse_assignments
from ..solvers import registry
from ..solvers.auto import AUTO
from .records import write_record
from .sources import pick_sources, write_sources


def sources(args) -> None:
    graph = read_graph(args.graph, format=args.format)
    picked = pick_sources(graph, args.count, args.seed, option="--count")
    write_sources(args.output, graph, picked, args.seed)
    print(f"wrote {args.output}: {len(picked)} sources")


def validate(args) -> int:
    """The verdict on a saved answer, written to ``--output``; a failed one exits 1 unless ``--failure-ok``."""
    from .alltrees import check_summary, is_summary
    from .validate import answer_report, check_answer

    graph = read_graph(args.graph, format=args.format)
    if is_summary(args.answer):  # a sweep's reductions (gpusp solve --summary): a seeded sample recomputed
        out = check_summary(graph, args.answer)
    else:
        out = check_answer(graph, args.answer, args.validation_method, args.reference_max_work)
    if args.output:
        write_record(out, args.output)
    line, error = answer_report(out)
    print(line)
    if error:
        print(error, file=sys.stderr)
        return 0 if args.failure_ok else 1
    return 0


def solve(args) -> int:
    """``gpusp solve``: one job on a graph file or a generated graph, its lines printed; the job's exit status."""
    from .job import SolveJob, exit_status, run_job

    same = {k: v for k, v in vars(args).items() if k in SolveJob.__dataclass_fields__ and k != "sources"}
    same["num_sources"] = args.num_sources or SolveJob.num_sources
    if args.generate:
        same["graph"] = generate(args.generate[0], **parse_assignments(args.generate[1:]))
    job = SolveJob(**same, params=parse_assignments(args.param),
                   sources=args.sources or ([args.source] if args.source is not None else None))
    out = run_job(job)
    print("".join(f"{line}\n" for line in out.lines), end="")
    code, message = exit_status(out, recorded=bool(args.record))
    if message:
        print(message, file=sys.stderr)
    return code


def check_solve(args) -> str | None:
    """What no single option of ``gpusp solve`` can say: options that exclude each other."""
    if (args.graph is None) == (args.generate is None):
        return "one of the arguments --graph --generate is required" if args.graph is None else \
            "argument --generate: not allowed with argument --graph"
    given = [flag for flag, value in (("--source", args.source), ("--sources", args.sources)) if value is not None]
    if len(given) == 2:
        return "argument --sources: not allowed with argument --source"
    if given and args.num_sources is not None:
        return f"argument --num-sources: not allowed with argument {given[0]} (it sets the sources itself)"
    chosen = given + (["--num-sources"] if args.num_sources is not None else [])
    if args.all_sources and chosen:
        return f"argument {chosen[0]}: not allowed with argument --all-sources (every vertex is a source)"
    sweep = "--all-sources" if args.all_sources else ("--targets" if args.targets is not None else None)
    chosen += [sweep] if sweep else []
    if sweep:
        clash = [f for f, on in (("--answer", args.answer), ("--output", args.output != "none"),
                                 ("--end-to-end", args.end_to_end)) if on]
        if clash:
            return f"argument {clash[0]}: not allowed with argument {sweep} (no whole trees come to the host)"
    elif args.summary:
        return "argument --summary: only with --all-sources or --targets (it holds their reductions)"
    if chosen and args.solver in registry.REGISTRY and registry.get(args.solver).problem == "apsp":
        return f"argument {chosen[0]}: {args.solver} solves APSP, from every vertex: sources are for SSSP solvers"
    if args.solver == AUTO and args.param:
        return "argument --param: not allowed with --solver auto (it picks the solver's parameters too)"
    if args.paths_file and args.output != "write":
        return "argument --paths-file: only with --output write (nothing is written otherwise)"
    return None
