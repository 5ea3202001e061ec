"""A configuration's metric from its timed samples: the time, the rounds, the graph's upload, upload + run, the
upload's share of it and one entry of a list counter (``piece_improvements[1]``: the second streamed piece's). The
findings (benchmarks/papers/findings.yaml, paper 004's rows 4.1-4.3) and paper 004's transfer figure both read these
values here, so a figure and a verdict cannot disagree.

The graph is uploaded once per configuration, before the first source's trials: that sample carries h2d_ms and
the others 0, so the upload is the median of the distinct non-zero h2d_ms values and of every end-to-end run's
own upload (end_to_end_h2d_ms).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

METRICS = ("time_ms", "iterations", "end_to_end_ms", "h2d_ms", "h2d_plus_time", "h2d_fraction")
# counters that are a list per run (edgebf_dense's streamed pieces, in upload order): in samples.csv as the numbers
# separated by spaces, read as a metric entry by entry, ``name[i]``
LIST_COUNTERS = ("piece_relaxations", "piece_improvements")
LIST_METRIC = re.compile(rf"({'|'.join(LIST_COUNTERS)})\[(\d+)\]")


def list_entry(rows: pd.DataFrame, metric: str) -> tuple[np.ndarray, np.ndarray] | None:
    """(entry i of the list counter that ``metric``, ``name[i]``, names, per sample that has the counter; which
    samples have it); None when ``metric`` names no list counter."""
    if not (match := LIST_METRIC.fullmatch(metric)):
        return None
    column, index = match.group(1), int(match.group(2))
    kept = rows[column].notna().to_numpy(bool) if column in rows else np.zeros(len(rows), bool)
    entries = [str(text).split() for text in rows.loc[kept, column]] if kept.any() else []
    if any(len(e) <= index for e in entries):
        raise ValueError(f"{metric}: a sample has fewer than {index + 1} entries in {column}")
    return np.array([float(e[index]) for e in entries]), kept


def metric_values(rows: pd.DataFrame, metric: str) -> tuple[np.ndarray, np.ndarray, int]:
    """The values of ``metric`` over one configuration's samples ``rows``, their strata (the source) and the
    number of independent measurements behind them (for an upload: the distinct uploads)."""
    time = rows["time_ms"].to_numpy(float)
    strata = rows["source"].fillna(-1).to_numpy()
    if (listed := list_entry(rows, metric)) is not None:
        entries, kept = listed
        return entries, strata[kept], len(entries)
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric} (metrics: {', '.join(METRICS)}, or a list counter's entry "
                         f"{'[i], '.join(LIST_COUNTERS)}[i])")
    if metric in ("time_ms", "iterations"):
        return rows[metric].to_numpy(float), strata, len(rows)
    if metric == "end_to_end_ms":
        values = rows[metric].dropna()
        return values.to_numpy(float), strata[rows[metric].notna().to_numpy()], len(values)
    uploads = rows.loc[rows["h2d_ms"] > 0, "h2d_ms"].drop_duplicates().to_numpy(float)
    if "end_to_end_h2d_ms" in rows:  # every end-to-end run uploads once more
        uploads = np.concatenate([uploads, rows["end_to_end_h2d_ms"].dropna().to_numpy(float)])
    if metric == "h2d_ms":
        return uploads, np.zeros(len(uploads)), len(uploads)
    upload = float(np.median(uploads)) if len(uploads) else 0.0
    if metric == "h2d_plus_time":
        return upload + time, strata, min(len(uploads), len(rows))
    return upload / (upload + time), strata, min(len(uploads), len(rows))


def metric_median(rows: pd.DataFrame, metric: str) -> tuple[float, float, float]:
    """(median, first quartile, third quartile) of :func:`metric_values`; NaNs when there are none."""
    values = metric_values(rows, metric)[0]
    if not len(values):
        return (np.nan,) * 3
    q1, median, q3 = np.quantile(values, [0.25, 0.5, 0.75])
    return float(median), float(q1), float(q3)
