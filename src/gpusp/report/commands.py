"""What the command line's report commands do (``gpusp aggregate``, ``compare``, ``plot``, ``paper003``): each takes
the options :mod:`gpusp.cli` parsed, prints what it wrote and returns its exit status (None: 0). Plotting libraries
are imported only by the command that draws."""

from __future__ import annotations

import json


def _wrote(paths, nothing: str = "nothing") -> None:
    print("wrote " + (", ".join(str(p) for p in paths) or nothing))


def aggregate(args) -> None:
    from .aggregate import write_tables

    written = write_tables(args.records, args.out_dir, skipped=args.skipped or [], allow_mixed=args.allow_mixed,
                           ceiling=args.ceiling, intro=args.intro, allow_mixed_hardware=args.allow_mixed_hardware)
    _wrote(written.values())


def compare(args) -> None:
    from .compare import run_compare

    printed, written = run_compare(args.a, args.b, args.out_dir, resamples=args.resamples,
                                   confidence=args.confidence, seed=args.seed, factor=args.factor,
                                   only_changed=args.only_changed)
    print(printed)
    if written:
        _wrote(written.values())


def plot(args) -> None:
    """Our figures from the tables, and with ``--papers-dir`` the papers' figures redrawn from them; a figure the
    tables cannot give is named with the reason."""
    from .plots import figures_from_tables

    reasons = {}
    _drew(figures_from_tables(args.samples, args.summary, args.out_dir, peak=args.peak, reasons=reasons), reasons,
          "no figure")
    if args.papers_dir:
        from .paperfigs import figures_from_tables as paper_figures

        reasons = {}
        _drew(paper_figures(args.samples, args.summary, args.papers_dir, reasons=reasons), reasons, "no paper figure")


def _drew(paths: dict, reasons: dict, nothing: str) -> None:
    _wrote(paths.values(), nothing)
    for name, why in reasons.items():
        print(f"no {name}.png: {why}")


def paper003(args) -> int:
    """Paper 003's flow, run (gpusp.measure.paper003) and drawn; exits 1 when one of its checks failed."""
    from ..measure.paper003 import run_flow
    from .paper003 import write_flow

    out = run_flow(args.size, args.seed, args.vmax, args.tile, args.solver, args.trials)
    write_flow(out, args.png, args.record)
    print(json.dumps({k: v for k, v in out.to_dict().items() if k not in ("machine", "timings")}))
    return 0 if out.ok else 1
