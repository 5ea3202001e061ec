"""Our figures beside the papers' published ones (``gpusp/data/published.yaml``), per paper and table.

Every published value names the experiment config that reproduces it, the graph, our solver and the
parameters that match the paper's setting. A summary row matches when its graph and solver are the
same and its parameters include those (the fastest such row when several do). The comparison gives
the paper's value, ours, the ratio (paper time / ours: above 1, ours is faster), the paper's hardware
and ours ("not run" for a printed value of a measured table that this sweep did not run), and one line
per (paper, table, graph) on whether the shapes agree: the fastest variant in the paper and here, and
the rank correlation of the variants both measured.
"""

from __future__ import annotations

from importlib import resources

import numpy as np
import pandas as pd
import yaml

from ..plan import parse_paramset
from ..solvers import registry
from .rst import list_table

UNIT_MS = {"ms": 1.0, "s": 1000.0, "us": 1e-3}


def load_published() -> list[dict]:
    """The published figures (an empty list when the file is absent)."""
    res = resources.files("gpusp").joinpath("data/published.yaml")
    if not res.is_file():
        return []
    return list((yaml.safe_load(res.read_text(encoding="utf-8")) or {}).get("figures") or [])


def _matches(solver: str, row_params: str, wanted: dict) -> bool:
    """Whether a row's parameter label (unset keys at the registry's defaults) includes ``wanted``."""
    defaults = {p.name: p.default for p in registry.get(solver).params}
    have = {**defaults, **(parse_paramset(row_params) if isinstance(row_params, str) else {})}
    return all(str(have.get(k)).lower() == str(v).lower() for k, v in (wanted or {}).items())


MEASURED, NOT_RUN = "measured", "not run"
COLUMNS = ["paper", "source", "experiment", "graph", "solver", "params", "paper_value", "unit", "paper_hardware",
           "ours_ms", "ours_hardware", "mode", "ratio", "validated", "status"]


def compare(summary: pd.DataFrame, published: list[dict] | None = None) -> pd.DataFrame:
    """One row per published value that this sweep measured too (status "measured") and, for every paper table
    or figure it measured at least one value of, one row per other printed value of it (status "not run": the
    paper ran that configuration, this sweep did not)."""
    published = load_published() if published is None else published
    timed = summary.dropna(subset=["median_ms"]) if "median_ms" in summary else summary.iloc[0:0]
    rows, missed = [], []
    for fig in published:
        unit = UNIT_MS.get(str(fig.get("unit")))
        if unit is None:
            continue
        cand = timed[(timed["graph"] == fig["graph"]) & (timed["solver"] == fig["solver"])]
        cand = cand[[_matches(fig["solver"], p, fig.get("params") or {}) for p in cand["params"]]]
        row = {"paper": str(fig["paper"]), "source": fig["source"], "experiment": fig.get("experiment"),
               "graph": fig["graph"], "solver": fig["solver"], "paper_value": fig["value"], "unit": fig["unit"],
               "paper_hardware": fig.get("hardware", "")}
        if cand.empty:
            label = "+".join(f"{k}-{v}" for k, v in sorted((fig.get("params") or {}).items())) or "default"
            missed.append(row | {"params": label, "ours_ms": np.nan, "ours_hardware": "", "mode": "",
                                 "ratio": np.nan, "validated": False, "status": NOT_RUN})
            continue
        best = cand.sort_values("median_ms").iloc[0]
        rows.append(row | {"params": best["params"], "ours_ms": float(best["median_ms"]),
                           "ours_hardware": best.get("hardware", ""), "mode": best.get("mode", ""),
                           "ratio": float(fig["value"]) * unit / float(best["median_ms"]),
                           "validated": bool(best.get("validated") == True), "status": MEASURED})  # noqa: E712
    measured = {(r["paper"], r["source"]) for r in rows}
    rows += [r for r in missed if (r["paper"], r["source"]) in measured]
    return pd.DataFrame(rows, columns=COLUMNS)


def shape_lines(table: pd.DataFrame) -> list[str]:
    """Per (paper, table, graph) with two or more variants: who wins there and here, and rank agreement."""
    from scipy.stats import spearmanr

    out = []
    if table.empty:
        return out
    table = table[table["status"] == MEASURED]
    for (paper, source, graph), part in table.groupby(["paper", "source", "graph"], sort=True):
        if len(part) < 2:
            continue
        paper_ms = part["paper_value"].astype(float) * part["unit"].map(UNIT_MS)
        theirs = part.loc[paper_ms.idxmin(), "solver"]
        ours = part.loc[part["ours_ms"].idxmin(), "solver"]
        rho = spearmanr(paper_ms, part["ours_ms"]).statistic if len(part) >= 3 else np.nan
        agree = "agree" if theirs == ours else "differ"
        ranks = "" if rho != rho else f"; rank correlation {rho:+.2f} over {len(part)} variants"
        out.append(f"paper {paper} {source}, {graph}: fastest there {theirs}, here {ours} ({agree}){ranks}")
    return out


def _ours_cell(row: dict) -> str:
    if row["status"] == NOT_RUN:
        return "not run"
    return f"{row['ours_ms']:.3g}" + (" SIMULATED" if row["mode"] == "sim" else "")


def papers_rst(table: pd.DataFrame) -> str:
    """A section per paper: the side-by-side table and the shape lines (reStructuredText)."""
    if table.empty:
        return ""
    out = ["Our figures beside the papers'", "=" * 30, "",
           "Ratio: the paper's time over ours (above 1: ours is faster). Different hardware: read the shapes "
           "(which variant wins, where a curve bends), not the absolute ratio.", ""]
    for paper, part in table.groupby("paper", sort=True):
        head = ["table", "graph", "solver (params)", "paper", "paper hardware", "ours ms", "ratio", "validated"]
        body = [[r["source"], r["graph"], f"{r['solver']} ({r['params']})", f"{r['paper_value']:g} {r['unit']}",
                 r["paper_hardware"] or "n/a", _ours_cell(r), "-" if r["status"] == NOT_RUN else f"{r['ratio']:.3g}",
                 "-" if r["status"] == NOT_RUN else "yes" if r["validated"] else "no"]
                for r in part.to_dict("records")]
        out += list_table(f"Paper {paper}", head, body) + [f"* {line}" for line in shape_lines(part)] + [""]
    return "\n".join(out)
