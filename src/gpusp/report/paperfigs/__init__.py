"""The papers' figures redrawn from our measurements: paper 000's Figures 5-6, paper 001's Figures 10-14 (and its
Table 1 as a figure), paper 002's Figures 4.1-4.3 and paper 004's edges-per-thread, coalescing, pull/push,
transfer and min-plus figures, each with the paper's axes and units, our curves named as the paper names its
variants, the paper's printed values beside ours where it prints them, our machine and the paper's, and a
SIMULATED banner where GPU times came from the CUDA simulator.

A figure is drawn when the run measured the paper's variants it plots (a run of
config/experiments/paper002-fig4.yaml draws paper 002's, the default config none) and says why not otherwise.
Files: ``<out_dir>/<paper>/<figure>.png``; with records of several machines, one file per machine
(``<figure>-<machine>.png``): times of two machines never share a curve. docs/paper-figures.md lists every figure,
what is drawn and what cannot be.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import seaborn as sns

from ..plots import _on_machine, _prepare, _save, machines
from . import p000, p001, p002, p004  # noqa: F401 (each registers its paper's figures)
from .core import FIGURES, View


def _machines(samples: pd.DataFrame, summary: pd.DataFrame) -> list[tuple[str, View]]:
    """(file-name suffix, view) per machine of the summary's timed rows; the suffix is empty for one machine."""
    timed = summary.dropna(subset=["median_ms"]) if "median_ms" in summary else summary.iloc[0:0]
    if timed.empty:
        return [("", View(timed, samples))]
    prepared = _prepare(timed)
    found = machines(prepared)
    out = []
    for gpu, cpu in found:
        part = _on_machine(prepared, gpu, cpu).drop(columns=["config", "_gpu", "_cpu"])
        slug = re.sub(r"[^A-Za-z0-9]+", "-", str(gpu if gpu is not None else cpu)).strip("-").lower()
        out.append((f"-{slug}" if len(found) > 1 else "", View(part, samples)))
    return out


def figure(paper: str, name: str, samples: pd.DataFrame, summary: pd.DataFrame):
    """Paper ``paper``'s figure ``name`` from one machine's tables: a matplotlib Figure, or why not (a string)."""
    if (paper, name) not in FIGURES:
        raise ValueError(f"no figure {paper}/{name} (figures: {', '.join(f'{p}/{n}' for p, n in FIGURES)})")
    sns.set_theme(style="whitegrid", context="paper")
    return FIGURES[(paper, name)].draw(View(summary, samples))


def make_figures(samples: pd.DataFrame, summary: pd.DataFrame, out_dir, reasons=None) -> dict:
    """Write every paper figure the tables have data for as ``<out_dir>/<paper>/<name>.png`` (per machine when
    there are several) and remove older files of figures that now have none; returns "paper/name" -> path.
    ``reasons``, a dict, receives "paper/name" -> why not for the others."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    sns.set_theme(style="whitegrid", context="paper")
    written = {}
    for suffix, view in _machines(samples, summary):
        for (paper, name), spec in FIGURES.items():
            result = spec.draw(view)
            if isinstance(result, str):
                if reasons is not None and f"{paper}/{name}" not in written:
                    reasons[f"{paper}/{name}"] = result
                continue
            path = out_dir / paper / f"{name}{suffix}.png"
            _save(result, path)
            written[f"{paper}/{name}{suffix}"] = path
            if reasons is not None:
                reasons.pop(f"{paper}/{name}", None)
    for old in out_dir.glob("*/*.png"):
        if old not in written.values():
            old.unlink()
    return written


def figures_from_tables(samples_path, summary_path, out_dir, reasons=None) -> dict:
    """:func:`make_figures` from the files ``gpusp aggregate`` wrote (samples.parquet or .csv, summary.csv)."""
    samples_path = Path(samples_path)
    samples = pd.read_parquet(samples_path) if samples_path.suffix == ".parquet" else pd.read_csv(samples_path)
    return make_figures(samples, pd.read_csv(summary_path), out_dir, reasons=reasons)
