"""What the command line's report commands do (``gpusp aggregate``, ``compare``, ``paper003``; ``plot``, which
also draws the papers' figures, is :func:`gpusp.report.paperfigs.command.plot`): each takes the options
:mod:`gpusp.cli` parsed, prints what it wrote and returns its exit status (None: 0). Plotting libraries are
imported only by the command that draws."""

from __future__ import annotations

import json


def wrote(paths, nothing: str = "nothing") -> None:
    print("wrote " + (", ".join(str(p) for p in paths) or nothing))


def aggregate(args) -> None:
    from .aggregate import write_tables

    written = write_tables(args.records, args.out_dir, skipped=args.skipped or [], allow_mixed=args.allow_mixed,
                           ceiling=args.ceiling, intro=args.intro, allow_mixed_hardware=args.allow_mixed_hardware)
    wrote(written.values())


def compare(args) -> None:
    from .compare import run_compare

    printed, written = run_compare(args.a, args.b, args.out_dir, resamples=args.resamples,
                                   confidence=args.confidence, seed=args.seed, factor=args.factor,
                                   only_changed=args.only_changed)
    print(printed)
    if written:
        wrote(written.values())


def paper003(args) -> int:
    """Paper 003's flow, run (gpusp.measure.paper003) and drawn; exits 1 when one of its checks failed."""
    from ..measure.paper003 import run_flow
    from .paper003 import write_flow

    out = run_flow(args.size, args.seed, args.vmax, args.tile, args.solver, args.trials)
    write_flow(out, args.png, args.record)
    print(json.dumps({k: v for k, v in out.to_dict().items() if k not in ("machine", "timings")}))
    return 0 if out.ok else 1
