"""Records -> tidy tables (one row per timing sample) and a per-configuration summary, with pandas.

The summary has one row per (graph, solver, parameter set): median and IQR over every sample of every
source, the separately measured compile and transfer costs, the validation verdict, speed-up over the
CPU baseline on the same graph (SciPy for the problem), and relaxations per second. Skipped
combinations appear with their reason. Records of one solver made by different code versions are not
mixed unless ``allow_mixed`` is set.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import GpuspError
from ..measure.records import RecordFormatError, read_record, read_verdict
from .rst import list_table

BASELINE = {"sssp": "scipy_dijkstra", "apsp": "scipy_apsp"}
SIZE_PARAMS = {"n", "m", "k", "scale", "edge_factor", "rows", "cols", "seed"}  # what a generator sweep varies


def graph_family(graph: dict) -> str | None:
    """The generator and its fixed parameters (``random wmax=20``): graphs of one family differ only in
    size, so a curve through them is a scaling curve. None for real graphs and files."""
    meta = graph.get("meta") or {}
    if "generator" not in meta:
        return None
    fixed = {k: v for k, v in (meta.get("params") or {}).items() if k not in SIZE_PARAMS}
    return " ".join([meta["generator"]] + [f"{k}={v}" for k, v in sorted(fixed.items())])


# the columns samples.csv and summary.csv always have, so that a sweep in which nothing was timed (every
# combination skipped) still gives tables that the figures and the report read
SAMPLE_COLUMNS = ("graph", "graph_name", "graph_label", "n", "m", "graph_family", "solver", "family", "variant",
                  "problem", "device", "paper", "params", "status", "reason", "mode", "gpu", "code_hash",
                  "git_commit", "created", "validated", "source", "sample", "time_ms", "clock", "compile_s",
                  "h2d_ms", "d2h_ms", "iterations", "relaxations")
NUMERIC_COLUMNS = {"n", "m", "sample", "time_ms", "compile_s", "h2d_ms", "d2h_ms", "iterations", "relaxations"}
SUMMARY_COLUMNS = ("n", "m", "graph_family", "median_ms", "q1_ms", "q3_ms", "samples", "sources", "compile_s", "h2d_ms",
                   "d2h_ms", "iterations", "relaxations", "validated", "status", "mode", "clock", "gpu", "iqr_ms",
                   "relaxations_per_s", "n3_per_s", "ceiling_fraction", "speedup_vs_cpu")
SKIPPED_KEYS = ("graph", "solver", "params", "problem", "reason")


def load_records(paths) -> list[dict]:
    """The records at ``paths`` (each checked by :func:`~gpusp.measure.records.read_record`), each with the
    verdict of ``gpusp validate`` beside it (``NAME.verdict.json``) when there is one, which must be of the
    record's graph."""
    out = []
    for p in paths:
        rec = read_record(p)
        rec["_path"] = str(p)
        verdict_path = Path(str(p).removesuffix(".json") + ".verdict.json")
        if verdict_path.exists():
            verdict = read_verdict(verdict_path)
            if verdict["graph_checksum"] != rec["graph"]["checksum"]:
                raise RecordFormatError(f"{verdict_path}: a verdict of another graph than the record {p} (checksum "
                                        f"{verdict['graph_checksum'][:12]}, the record's "
                                        f"{rec['graph']['checksum'][:12]})")
            rec["_verdict"] = verdict
        out.append(rec)
    return out


def read_skipped(path) -> list[dict]:
    """The skipped combinations of a sweep (``skipped.json``), checked by :func:`check_skipped`; errors name
    the file."""
    try:
        skipped = json.loads(Path(path).read_text())
    except OSError as exc:
        raise GpuspError(f"{path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise GpuspError(f"{path}: not a JSON list of skipped combinations ({exc})") from None
    return check_skipped(skipped, path)


def check_skipped(skipped, where="skipped combinations") -> list[dict]:
    """``skipped`` as a list of combinations, each naming its graph, solver, params, problem and reason."""
    if not isinstance(skipped, list):
        raise GpuspError(f"{where}: not a list of skipped combinations")
    for i, entry in enumerate(skipped):
        missing = [k for k in SKIPPED_KEYS if not isinstance(entry, dict) or not isinstance(entry.get(k), str)]
        if missing:
            raise GpuspError(f"{where}: entry {i} has no {', '.join(missing)} (each skipped combination names "
                             f"its {', '.join(SKIPPED_KEYS)})")
    return skipped


def samples_table(records: list[dict]) -> pd.DataFrame:
    """One row per timing sample (tidy), with provenance columns."""
    rows = []
    for rec in records:
        verdict = rec.get("_verdict")
        base = {
            # the config's name of the graph (paths, skips and the report use it); the name stored in
            # the graph file stays in graph_name
            "graph": rec.get("graph_label") or rec["graph"]["name"], "graph_name": rec["graph"]["name"],
            "graph_label": rec.get("graph_label") or rec["graph"]["name"],
            "n": rec["graph"]["n"], "m": rec["graph"]["m"], "graph_family": graph_family(rec["graph"]),
            "solver": rec["solver"], "family": rec["family"],
            "variant": rec["variant"], "problem": rec["problem"], "device": rec["device"], "paper": rec["paper"],
            "params": rec.get("params_label") or json.dumps(rec["params"], sort_keys=True),
            "status": rec["status"], "reason": rec.get("reason"),
            "mode": rec["machine"].get("mode"), "gpu": rec["machine"].get("gpu", "cpu"),
            "code_hash": rec["code_hash"], "git_commit": rec["git_commit"], "created": rec["created"],
            "validated": (verdict["ok"] if verdict else rec["summary"].get("validated")),
        }
        for key, value in rec["params"].items():
            base[f"param_{key}"] = value
        if not rec["runs"]:
            rows.append({**base, "source": None, "sample": None, "time_ms": np.nan})
        for run in rec["runs"]:
            t = run["timings"]
            for i, ms in enumerate(t["samples_ms"]):
                rows.append({**base, "source": run["source"], "sample": i, "time_ms": ms, "clock": t["clock"],
                             "compile_s": t["compile_s"], "h2d_ms": t["h2d_ms"], "d2h_ms": t["d2h_ms"],
                             "iterations": run["counters"].get("iterations"),
                             "relaxations": run["counters"].get("relaxations")})
    frame = pd.DataFrame(rows)
    for column in SAMPLE_COLUMNS:
        if column not in frame:
            frame[column] = pd.Series(dtype=float if column in NUMERIC_COLUMNS else object)
    return frame


def check_code_versions(table: pd.DataFrame, allow_mixed: bool = False) -> None:
    """Refuse tables in which one solver was measured by more than one version of its code."""
    if table.empty or allow_mixed:
        return
    versions = table.groupby("solver")["code_hash"].nunique()
    mixed = versions[versions > 1]
    if len(mixed):
        raise GpuspError(f"records of {', '.join(mixed.index)} come from different code versions; re-run them "
                         "or aggregate with --allow-mixed")


def addmin_ceiling(ceiling=None):
    """The add-min ceiling (per second) that APSP rates are compared with: the argument, else the
    environment variable GPUSP_ADDMIN_CEILING (e.g. the DPX rate measured by benchmarks/h200/addmin_ceiling.py),
    else None."""
    import os

    if ceiling:
        return float(ceiling)
    env = os.environ.get("GPUSP_ADDMIN_CEILING")
    return float(env) if env else None


def summary_table(samples: pd.DataFrame, skipped: list[dict] | None = None, ceiling=None) -> pd.DataFrame:
    """Median, IQR and derived rates per (graph, solver, parameter set), plus skipped rows.

    APSP rows also get ``n3_per_s`` (n^3 / median: Floyd-Warshall relaxations per second, the
    equivalent rate for other APSP solvers and for a Floyd-Warshall that skips pivots) and, when an add-min
    ceiling is known (:func:`addmin_ceiling`), ``ceiling_fraction``: the add-mins the run did per second
    (its ``relaxations`` counter, e.g. n_pad^3 for a full blocked FW; n^3 where it has none) / ceiling."""
    keys = ["graph", "problem", "solver", "family", "variant", "device", "paper", "params"]
    timed = samples.dropna(subset=["time_ms"])
    if timed.empty:
        summary = pd.DataFrame(columns=keys + list(SUMMARY_COLUMNS))
    else:
        g = timed.groupby(keys, dropna=False)
        summary = g.agg(n=("n", "first"), m=("m", "first"), graph_family=("graph_family", "first"), median_ms=("time_ms", "median"),
                        q1_ms=("time_ms", lambda s: s.quantile(0.25)), q3_ms=("time_ms", lambda s: s.quantile(0.75)),
                        samples=("time_ms", "size"), sources=("source", "nunique"),
                        compile_s=("compile_s", "max"), h2d_ms=("h2d_ms", "max"), d2h_ms=("d2h_ms", "median"),
                        iterations=("iterations", "median"), relaxations=("relaxations", "median"),
                        validated=("validated", "all"), status=("status", "first"), mode=("mode", "first"),
                        clock=("clock", "first"), gpu=("gpu", "first")).reset_index()
        summary["iqr_ms"] = summary["q3_ms"] - summary["q1_ms"]
        summary["relaxations_per_s"] = summary["relaxations"] / (summary["median_ms"] / 1e3)
        apsp = summary["problem"] == "apsp"
        summary["n3_per_s"] = np.where(apsp, summary["n"].astype(float) ** 3 / (summary["median_ms"] / 1e3), np.nan)
        peak = addmin_ceiling(ceiling)
        done = summary["relaxations_per_s"].where(summary["relaxations"] > 0, summary["n3_per_s"])
        summary["ceiling_fraction"] = np.where(apsp, done / peak, np.nan) if peak else np.nan
        summary["speedup_vs_cpu"] = np.nan
        for (graph, problem), part in summary.groupby(["graph", "problem"]):
            base = part[part["solver"] == BASELINE[problem]]
            if len(base):
                ref = float(base["median_ms"].min())
                summary.loc[part.index, "speedup_vs_cpu"] = ref / part["median_ms"]
    failed = samples[samples["status"].isin(["skipped", "negative-cycle", "error"]) & samples["time_ms"].isna()]
    extra = [{"graph": r["graph"], "solver": r["solver"], "params": r["params"], "problem": r["problem"],
              "status": r["status"], "reason": r["reason"]} for _, r in failed.iterrows()]
    extra += [{**s, "status": "skipped"} for s in (skipped or [])]
    if extra:
        summary = pd.concat([summary, pd.DataFrame(extra)], ignore_index=True)
    return summary.sort_values(["problem", "graph", "median_ms"], na_position="last").reset_index(drop=True)


def landing_tables(summary: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Per problem, one row per graph: the fastest GPU configuration (validated ones first) with its
    median and IQR, the fastest CPU baseline (SciPy, the serial codes, GAPBS), their ratio, whether the
    GPU answer was validated, and whether its times came from the CUDA simulator."""
    ok = summary.dropna(subset=["median_ms"])
    tables = {}
    for problem, part in ok.groupby("problem", sort=True):
        rows = []
        for graph, g in part.groupby("graph", sort=True):
            gpu = g[g["device"] == "gpu"].sort_values(["validated", "median_ms"], ascending=[False, True])
            cpu = g[g["device"] == "cpu"].sort_values("median_ms")
            row = {"graph": graph, "n": int(g["n"].iloc[0]), "m": int(g["m"].iloc[0])}
            if len(gpu):
                best = gpu.iloc[0]
                valid = best["validated"] == True  # noqa: E712 (a numpy bool, or NaN when not validated)
                row.update(gpu_solver=f"{best['solver']} {best['params']}", gpu_median_ms=best["median_ms"],
                           gpu_iqr_ms=best["iqr_ms"], validated="yes" if valid else "no",
                           timings="SIMULATED" if best["mode"] == "sim" else "GPU")
            if len(cpu):
                base = cpu.iloc[0]
                row.update(cpu_baseline=f"{base['solver']} {base['params']}", cpu_median_ms=base["median_ms"])
            if len(gpu) and len(cpu):
                row["gpu_speedup"] = base["median_ms"] / best["median_ms"]
            rows.append(row)
        tables[problem] = pd.DataFrame(rows)
    return tables


def landing_rst(tables: dict[str, pd.DataFrame], intro: str = "", appendix: str = "") -> str:
    """The report's first page: ``intro``, a table per problem, then ``appendix`` (reStructuredText, all
    but the intro kept out of the report's Jinja templating)."""

    def cell(x, fmt="{}"):
        return "n/a" if x is None or (isinstance(x, float) and x != x) else fmt.format(x)

    out = [intro.rstrip(), "", "{% raw %}", "", "Fastest solver per graph", "=" * 24, ""]
    if not tables:
        out.append("No timed runs yet.")
    for problem, table in tables.items():
        head = ["graph (n, m)", "fastest GPU solver", "median ms (IQR)", "fastest CPU baseline (median ms)",
                "GPU speed-up", "validated", "timings"]
        body = [[f"{r['graph']} ({r['n']:,}, {r['m']:,})", cell(r.get("gpu_solver")),
                 f"{cell(r.get('gpu_median_ms'), '{:.3g}')} ({cell(r.get('gpu_iqr_ms'), '{:.3g}')})",
                 f"{cell(r.get('cpu_baseline'))} ({cell(r.get('cpu_median_ms'), '{:.3g}')})",
                 cell(r.get("gpu_speedup"), "{:.3g}x"), cell(r.get("validated")), cell(r.get("timings"))]
                for r in table.to_dict("records")]
        out += list_table(problem.upper(), head, body)
    out += ["GPU speed-up: the CPU baseline's median over the GPU solver's. SIMULATED rows ran in the CUDA "
            "simulator: their times are not GPU times.", "", appendix, "{% endraw %}", ""]
    return "\n".join(out)


def write_tables(records_paths, out_dir, skipped=None, allow_mixed=False, ceiling=None, intro=None) -> dict:
    """Write samples.csv, samples.parquet, summary.csv, the report's landing page landing.rst (with
    ``intro``, the text of a file, above its tables and the comparison with the papers' figures) and,
    when the sweep measured something a paper published, papers.csv under ``out_dir`` (atomically).
    ``skipped``: the skipped combinations, or the path of their JSON list (:func:`read_skipped`)."""
    from ..atomic import atomic_open, atomic_path

    records_paths = list(records_paths)
    skipped = read_skipped(skipped) if isinstance(skipped, (str, Path)) else check_skipped(skipped or [])
    if not records_paths and not skipped:
        raise GpuspError("no records to aggregate: no run was recorded and none was skipped (records come from "
                         "`gpusp solve --record`)")
    samples = samples_table(load_records(records_paths))
    check_code_versions(samples, allow_mixed)
    summary = summary_table(samples, skipped, ceiling=ceiling)
    out_dir = Path(out_dir)
    written = {}
    for name, frame, kind in (("samples.csv", samples, "csv"), ("samples.parquet", samples, "parquet"),
                              ("summary.csv", summary, "csv")):
        with atomic_path(out_dir / name) as tmp:
            if kind == "csv":
                frame.to_csv(tmp, index=False)
            else:
                frame.astype({c: "string" for c in frame.columns if frame[c].dtype == object}).to_parquet(tmp)
        written[name] = out_dir / name
    from .papers import compare, papers_rst

    comparison = compare(summary)
    if len(comparison):
        with atomic_path(out_dir / "papers.csv") as tmp:
            comparison.to_csv(tmp, index=False)
        written["papers.csv"] = out_dir / "papers.csv"
    with atomic_open(out_dir / "landing.rst") as fh:
        fh.write(landing_rst(landing_tables(summary), Path(intro).read_text() if intro else "",
                             papers_rst(comparison)))
    written["landing.rst"] = out_dir / "landing.rst"
    return written
