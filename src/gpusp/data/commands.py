"""What the command line's graph commands do (``gpusp info``, ``convert``, ``weights``, ``datasets``, ``prepare``):
each takes the options :mod:`gpusp.cli` parsed and prints what it did."""

from __future__ import annotations

import json

from . import datasets
from .formats import read_graph, write_graph
from .mirror import resolve
from .prepare import prepare_graph, read_spec
from .weights import add_weights, replace_weights, symmetrize


def write(graph, args, message: str) -> None:
    """``graph`` to ``args.output`` in ``args.to_format`` (None: by the extension), and the line that says so."""
    write_graph(graph, args.output, format=args.to_format)
    print(f"wrote {args.output}: {message}")


def info(args) -> None:
    graph = read_graph(args.graph, format=args.format)
    print(json.dumps(graph.stats(), indent=1) if args.json else graph.describe(args.graph))


def convert(args) -> None:
    graph = read_graph(args.input, format=args.from_format)
    graph = symmetrize(graph) if args.symmetrize else graph
    graph.name = args.name or graph.name
    write(graph, args, f"n={graph.n:,} m={graph.m:,}")


def weights(args) -> None:
    fn = add_weights if args.action == "add" else replace_weights
    graph = fn(read_graph(args.input, format=args.from_format), args.min, args.max, args.seed)
    write(graph, args, f"{args.action} weights in [{args.min}, {args.max}] seed {args.seed}")


def list_or_fetch(args) -> None:
    """``gpusp datasets list`` or ``gpusp datasets fetch NAME ...``."""
    if args.action == "fetch":
        for name in args.names:
            print(f"{name}: {datasets.fetch(name, args.dest, mirror=args.mirror, progress=not args.no_progress)}")
        return
    folders = resolve(args.mirror).folders
    rows = [{**row, "here": datasets.where_held(row, args.dest, folders)} for row in datasets.list_datasets()]
    print(json.dumps(rows, indent=1) if args.json else
          "\n".join([datasets.LIST_HEADER] + [datasets.describe(row, row["here"]) for row in rows]))


def prepare(args) -> None:
    graph = prepare_graph(read_spec(args.spec, "--spec"), args.output, downloads=args.downloads, mirror=args.mirror)
    print(f"wrote {args.output}: {graph.name} n={graph.n:,} m={graph.m:,} weights {graph.weight_kind}")
