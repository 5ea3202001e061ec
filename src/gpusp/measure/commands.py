"""What the command line's measuring commands do (``gpusp sources``, ``validate``): each takes the options
:mod:`gpusp.cli` parsed, prints what it did and returns its exit status (None: 0)."""

from __future__ import annotations

import sys

from ..data.formats import read_graph
from .records import write_record
from .sources import pick_sources, write_sources


def sources(args) -> None:
    graph = read_graph(args.graph, format=args.format)
    picked = pick_sources(graph, args.count, args.seed, option="--count")
    write_sources(args.output, graph, picked, args.seed)
    print(f"wrote {args.output}: {len(picked)} sources")


def validate(args) -> int:
    """The verdict on a saved answer, written to ``--output``; a failed one exits 1 unless ``--failure-ok``."""
    from .validate import answer_report, check_answer

    out = check_answer(read_graph(args.graph, format=args.format), args.answer, args.validation_method,
                       args.reference_max_work)
    if args.output:
        write_record(out, args.output)
    line, error = answer_report(out)
    print(line)
    if error:
        print(error, file=sys.stderr)
        return 0 if args.failure_ok else 1
    return 0
