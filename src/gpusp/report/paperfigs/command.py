"""``gpusp plot``: our figures from the aggregated tables and, where asked, the papers' figures redrawn from them
(the command sits beside the papers' figures, which draw on :mod:`gpusp.report.plots`, so that nothing in
:mod:`gpusp.report` imports this package)."""

from __future__ import annotations

from ..commands import wrote


def plot(args) -> None:
    """Our figures from the tables, and with ``--papers-dir`` the papers' figures redrawn from them; a figure the
    tables cannot give is named with the reason."""
    from ..plots import figures_from_tables

    reasons = {}
    _drew(figures_from_tables(args.samples, args.summary, args.out_dir, peak=args.peak, reasons=reasons), reasons,
          "no figure")
    if args.papers_dir:
        from . import figures_from_tables as paper_figures

        reasons = {}
        _drew(paper_figures(args.samples, args.summary, args.papers_dir, reasons=reasons), reasons, "no paper figure")


def _drew(paths: dict, reasons: dict, nothing: str) -> None:
    wrote(paths.values(), nothing)
    for name, why in reasons.items():
        print(f"no {name}.png: {why}")
