"""Multi-GPU scaling: where a sweep measured one (graph, solver, other parameters, machine) at several ``gpus`` values
(a multi-GPU solver's parameter), its speed-up (median time at the fewest GPUs over the median at g) and parallel
efficiency (speed-up x fewest / g) at each count: the table tables/gpu_scaling.csv and the figure gpu_scaling.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

GPUS_COLUMN = "param_gpus"  # samples.csv's column of the records' resolved gpus parameter
SCALING_KEYS = ["problem", "graph", "solver", "params", "gpu", "cpu"]  # params: every parameter but gpus
SCALING_COLUMNS = [*SCALING_KEYS, "gpus", "median_ms", "samples", "validated", "mode", "base_gpus", "base_ms",
                   "speedup", "efficiency"]


def other_params(rows: pd.DataFrame) -> pd.Series:
    """Each row's parameters but ``gpus``, as ``name=value`` joined by ``+`` in name order ('default': none)."""
    names = sorted(c for c in rows.columns if c.startswith("param_") and c != GPUS_COLUMN)

    def label(row) -> str:
        return "+".join(f"{name[6:]}={row[name]}" for name in names if pd.notna(row[name])) or "default"

    return rows.apply(label, axis=1) if len(rows) else pd.Series(dtype=object)


def gpu_scaling_table(samples: pd.DataFrame) -> pd.DataFrame:
    """One row per configuration measured at two or more GPU counts and per count (:data:`SCALING_COLUMNS`):
    ``median_ms`` over every timed sample, ``base_gpus`` and ``base_ms`` the fewest GPUs measured and their median,
    ``speedup`` = base_ms / median_ms, ``efficiency`` = speedup x base_gpus / gpus (1: perfect scaling). Rows of
    different machines (GPU model, host CPU) never share a configuration."""
    if GPUS_COLUMN not in samples:
        return pd.DataFrame(columns=SCALING_COLUMNS)
    timed = samples.dropna(subset=["time_ms", GPUS_COLUMN])
    if timed.empty:
        return pd.DataFrame(columns=SCALING_COLUMNS)
    timed = timed.assign(params=other_params(timed), gpus=pd.to_numeric(timed[GPUS_COLUMN]).astype(int),
                         validated=timed["validated"].map(lambda v: v is True or str(v) == "True"))
    for column in ("gpu", "cpu", "mode"):
        timed[column] = timed[column].fillna("unknown") if column in timed else "unknown"
    per_count = timed.groupby([*SCALING_KEYS, "gpus"], sort=True).agg(
        median_ms=("time_ms", "median"), samples=("time_ms", "size"), validated=("validated", "all"),
        mode=("mode", "first")).reset_index()
    counts = per_count.groupby(SCALING_KEYS)["gpus"].transform("nunique")
    scaled = per_count[counts > 1].copy()
    if scaled.empty:
        return pd.DataFrame(columns=SCALING_COLUMNS)
    base = scaled.loc[scaled.groupby(SCALING_KEYS)["gpus"].idxmin(), [*SCALING_KEYS, "gpus", "median_ms"]]
    scaled = scaled.merge(base.rename(columns={"gpus": "base_gpus", "median_ms": "base_ms"}), on=SCALING_KEYS)
    scaled["speedup"] = scaled["base_ms"] / scaled["median_ms"]
    scaled["efficiency"] = scaled["speedup"] * scaled["base_gpus"] / scaled["gpus"]
    scaled["speedup"] = scaled["speedup"].where(np.isfinite(scaled["speedup"]))  # a zero time gives no ratio
    scaled["efficiency"] = scaled["efficiency"].where(np.isfinite(scaled["efficiency"]))
    return scaled[SCALING_COLUMNS].sort_values([*SCALING_KEYS, "gpus"]).reset_index(drop=True)
