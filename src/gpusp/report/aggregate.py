"""Records -> tidy tables (one row per timing sample) and a per-configuration summary, with pandas.

The summary has one row per (graph, solver, parameter set, hardware): median and IQR over every sample of every
source, the median and IQR of the end-to-end samples where a record has them (``end_to_end_median_ms``,
``end_to_end_iqr_ms``: a fresh solver timed from its device allocations to its download, paper 000's window; empty
where not measured; samples.csv carries end-to-end run i beside timed trial i), the separately measured compile and
transfer costs, the validation verdict, the speed-up over the fastest CPU baseline of the same graph on the same
machine, and relaxations per second. A batched solver (registry ``batched=True``: every source of a job in one run,
see :mod:`gpusp.measure.harness`) records per source its share of each batch sample (batch / K); its rows carry
``batch_sources`` (K) and ``batch_median_ms`` (the median of the whole batch's samples; samples.csv carries batch
sample i as ``batch_ms`` beside trial i), empty for every other solver, so that a share is never read as the time of
one source alone. Preprocessing done once before the timed runs (PHAST's contraction hierarchy: the counters
``preprocess_s`` and ``preprocess_bytes``) is in no sample; it has columns of its own, empty where a solver has none,
and an every-tree sweep's end to end (``all_trees_s``: preprocessing, upload, sweep, download) one more.
List counters (edgebf_dense's ``piece_relaxations``, ``piece_improvements``) go to samples.csv as numbers separated
by spaces. ``picked_by`` names the row of auto's table that picked the solver (``auto: <row>``), empty where the
config named it. Skipped combinations appear with their reason. Hardware is a GPU model and a host CPU model: a GPU
solver's row has both, a CPU solver's row only its host CPU. Records of one solver made by different code versions,
or records of different hardware, are refused unless asked for (``allow_mixed``, ``allow_mixed_hardware``); mixed
hardware then stays apart in every table, labelled, and a speed-up never divides times of two machines.

Beside the tables, the run's environment (commit, GPU, driver, CUDA, library versions, host CPU, each graph's
checksum) and an archive of the records themselves, so that the report carries its provenance.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import re
import tarfile
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import GpuspError
from ..measure.records import RecordFormatError, read_record, read_verdict
from ..solvers import registry
from .batches import PREPROCESS_COUNTERS, batch_fields, batch_legend, batch_note, batched_mark, preprocess_note
from .metrics import LIST_COUNTERS
from .rst import field_list, list_table, missing, number, ratio, text

BASELINE = {"sssp": "scipy_dijkstra", "apsp": "scipy_apsp"}
_DATASET_SUFFIX = re.compile(r"(\.[A-Z]+|\d+)$")  # a DIMACS region (.NY, .USA) or a SNAP snapshot number (04, 31)
SIZE_PARAMS = {"n", "m", "k", "scale", "edge_factor", "rows", "cols", "seed"}  # what a generator sweep varies
STORAGE_PARAMS = {"offsets"}  # how the graph is stored, not which graph it is


def graph_family(graph: dict) -> str | None:
    """The generator and its fixed parameters (``random wmax=20``), or the collection of a real graph (``USA-road-d``
    for the DIMACS road networks, ``p2p-Gnutella`` for the Gnutella snapshots): graphs of one family differ only in
    size, so a curve through them is a scaling curve. None for files and graphs of unknown origin."""
    meta = graph.get("meta") or {}
    if "dataset" in meta:
        return _DATASET_SUFFIX.sub("", str(meta["dataset"]))
    if "generator" not in meta:
        return None
    fixed = {k: v for k, v in (meta.get("params") or {}).items() if k not in SIZE_PARAMS | STORAGE_PARAMS}
    return " ".join([meta["generator"]] + [f"{k}={v}" for k, v in sorted(fixed.items())])


# the columns samples.csv and summary.csv always have, so that a sweep in which nothing was timed (every
# combination skipped) still gives tables that the figures and the report read
SAMPLE_COLUMNS = ("graph", "graph_name", "graph_label", "n", "m", "graph_family", "graph_checksum", "solver",
                  "picked_by", "family", "variant", "problem", "device", "paper", "params", "status", "reason", "mode",
                  "gpu", "cpu", "cpu_cores", "hardware", "code_hash", "git_commit", "created", "record", "validated",
                  "source", "sample", "time_ms", "clock", "compile_s", "h2d_ms", "d2h_ms", "iterations",
                  "relaxations", "end_to_end_ms", "end_to_end_h2d_ms", "batch_sources", "batch_ms", "preprocess_s",
                  "preprocess_bytes", "all_trees_s", *LIST_COUNTERS)
NUMERIC_COLUMNS = {"n", "m", "cpu_cores", "sample", "time_ms", "compile_s", "h2d_ms", "d2h_ms", "iterations",
                   "relaxations", "end_to_end_ms", "end_to_end_h2d_ms", "batch_sources", "batch_ms", "preprocess_s",
                   "preprocess_bytes", "all_trees_s"}
SUMMARY_KEYS = ["graph", "problem", "solver", "family", "variant", "device", "paper", "params", "gpu", "cpu"]
SUMMARY_COLUMNS = ("n", "m", "graph_family", "hardware", "median_ms", "q1_ms", "q3_ms", "samples", "sources",
                   "compile_s", "h2d_ms", "d2h_ms", "iterations", "relaxations", "validated", "status", "mode", "clock",
                   "iqr_ms", "end_to_end_median_ms", "end_to_end_iqr_ms", "end_to_end_samples", "relaxations_per_s",
                   "n3_per_s", "ceiling_fraction", "cpu_baseline", "speedup_vs_cpu", "batch_sources",
                   "batch_median_ms", "preprocess_s", "preprocess_bytes", "all_trees_s", "picked_by")
SKIPPED_KEYS = ("graph", "solver", "params", "problem", "reason")
NO_GPU = "-"  # the gpu of a CPU solver's row: its hardware is the host CPU alone
MIXED_HARDWARE_HINT = ("aggregate each machine's records apart, or with --allow-mixed-hardware (config "
                       "allow_mixed_hardware: true) to keep every machine apart in every table, labelled")


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


def host_cpu(machine: dict) -> str:
    """The host CPU's model of a record's machine (records made before gpusp read the model name carry the
    architecture alone)."""
    return machine.get("cpu_model") or machine.get("cpu") or "unknown"


def hardware_of(rec: dict) -> dict:
    """The hardware a record's times belong to: a GPU solver's to the GPU and its host CPU, a CPU solver's to the
    host CPU alone (``gpu`` is then ``NO_GPU``); ``mode`` is gpu or sim for GPU solvers, cpu for CPU solvers,
    whose times are real in the simulator too."""
    machine = rec["machine"]
    cpu = host_cpu(machine)
    if rec["device"] == "cpu":
        return {"gpu": NO_GPU, "cpu": cpu, "hardware": cpu, "mode": "cpu"}
    gpu = machine.get("gpu") or "none"
    return {"gpu": gpu, "cpu": cpu, "hardware": gpu, "mode": machine.get("mode")}


def samples_table(records: list[dict]) -> pd.DataFrame:
    """One row per timing sample (tidy), with provenance columns."""
    rows = []
    for rec in records:
        verdict = rec.get("_verdict")
        machine = rec["machine"]
        base = {
            # the config's name of the graph (paths, skips and the report use it); the name stored in
            # the graph file stays in graph_name
            "graph": rec.get("graph_label") or rec["graph"]["name"], "graph_name": rec["graph"]["name"],
            "graph_label": rec.get("graph_label") or rec["graph"]["name"],
            "n": rec["graph"]["n"], "m": rec["graph"]["m"], "graph_family": graph_family(rec["graph"]),
            "graph_checksum": rec["graph"]["checksum"], "solver": rec["solver"], "family": rec["family"],
            "picked_by": f"auto: {rec['auto']['rule']}" if rec.get("auto") else None,
            "variant": rec["variant"], "problem": rec["problem"], "device": rec["device"], "paper": rec["paper"],
            "params": rec.get("params_label") or json.dumps(rec["params"], sort_keys=True),
            "status": rec["status"], "reason": rec.get("reason"), **hardware_of(rec),
            "cpu_cores": machine.get("cpu_cores_usable", machine.get("cpu_cores")),
            "code_hash": rec["code_hash"], "git_commit": rec["git_commit"], "created": rec["created"],
            "record": rec.get("_path"), "validated": (verdict["ok"] if verdict else rec["summary"].get("validated")),
            # an every-tree sweep's end to end: preprocessing, upload, the median sweep, download (compile apart)
            "all_trees_s": _number((rec.get("all_trees") or {}).get("timing", {}).get("end_to_end_s")),
        }
        for key, value in rec["params"].items():
            base[f"param_{key}"] = value
        if not rec["runs"]:
            rows.append({**base, "source": None, "sample": None, "time_ms": np.nan})
        for run in rec["runs"]:
            t = run["timings"]
            whole = t.get("end_to_end_ms") or []
            uploads = t.get("end_to_end_h2d_ms") or []
            batch = t.get("batch_ms") or []  # a batched solver's whole-batch samples (none: one source per run)
            once = {key: _number(run["counters"].get(key)) for key in PREPROCESS_COUNTERS}
            listed = {key: " ".join(map(str, run["counters"][key])) if isinstance(run["counters"].get(key), list)
                      else None for key in LIST_COUNTERS}
            for i in range(max(len(t["samples_ms"]), len(whole))):  # end-to-end run i beside timed trial i
                rows.append({**base, "source": run["source"], "sample": i,
                             "time_ms": t["samples_ms"][i] if i < len(t["samples_ms"]) else np.nan,
                             "clock": t["clock"], "compile_s": t["compile_s"], "h2d_ms": t["h2d_ms"],
                             "d2h_ms": t["d2h_ms"], "iterations": run["counters"].get("iterations"),
                             "relaxations": run["counters"].get("relaxations"),
                             "end_to_end_ms": whole[i] if i < len(whole) else np.nan,
                             "end_to_end_h2d_ms": uploads[i] if i < len(uploads) else np.nan,
                             "batch_sources": _number(t.get("batch_sources")) if batch else np.nan,
                             "batch_ms": batch[i] if i < len(batch) else np.nan, **once, **listed})
    frame = pd.DataFrame(rows)
    for column in SAMPLE_COLUMNS:
        if column not in frame:
            frame[column] = pd.Series(dtype=float if column in NUMERIC_COLUMNS else object)
    return frame


def _number(value) -> float:
    """A counter as a number for a numeric column (NaN where it is missing or not a number)."""
    return float(value) if isinstance(value, (int, float, np.number)) and not isinstance(value, bool) else np.nan


def check_code_versions(table: pd.DataFrame, allow_mixed: bool = False) -> None:
    """Refuse tables in which one solver was measured by more than one version of its code."""
    if table.empty or allow_mixed:
        return
    versions = table.groupby("solver")["code_hash"].nunique()
    mixed = versions[versions > 1]
    if len(mixed):
        raise GpuspError(f"records of {', '.join(mixed.index)} come from different code versions; re-run them "
                         "or aggregate with --allow-mixed")


def check_hardware(table: pd.DataFrame, allow_mixed: bool = False) -> None:
    """Refuse timings of more than one GPU model or more than one host CPU model (an example record of each);
    ``allow_mixed`` keeps them, apart in every table."""
    timed = table.dropna(subset=["time_ms"])
    if timed.empty or allow_mixed:
        return
    kinds = (("GPU", timed[timed["device"] == "gpu"], "gpu"), ("host CPU", timed, "cpu"))
    for what, part, column in kinds:
        found = part.groupby(column, sort=True)["record"].agg(["first", "nunique"])
        if len(found) > 1:
            each = "; ".join(f"{name} ({n} record{'s' if n != 1 else ''}, e.g. {first})" if n else str(name)
                             for name, (first, n) in found.iterrows())
            raise GpuspError(f"records from different hardware, {what}s: {each}; their times are not comparable: "
                             + MIXED_HARDWARE_HINT)


def check_graphs(table: pd.DataFrame) -> None:
    """Refuse records of different graphs under one graph name (their samples would pool)."""
    if table.empty:
        return
    for graph, checksums in table.groupby("graph", sort=True)["graph_checksum"].unique().items():
        if len(checksums) > 1:
            where = [f"{c[:12]} in {table.loc[table['graph_checksum'] == c, 'record'].iloc[0]}" for c in checksums]
            raise GpuspError(f"graph {graph}: records of different graphs under one name (checksums "
                             f"{', '.join(where)}); re-run them on one graph or aggregate them apart")


def addmin_ceiling(ceiling=None):
    """The add-min ceiling (per second) that APSP rates are compared with: the argument, else the
    environment variable GPUSP_ADDMIN_CEILING (e.g. the DPX rate measured by benchmarks/h200/addmin_ceiling.py),
    else None."""
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
    keys = SUMMARY_KEYS
    timed = samples.dropna(subset=["time_ms"])
    timed = timed.assign(**{c: np.nan for c in ("batch_sources", "batch_ms", "all_trees_s", "picked_by",
                                                *PREPROCESS_COUNTERS) if c not in timed})
    if timed.empty:
        summary = pd.DataFrame(columns=keys + list(SUMMARY_COLUMNS))
    else:
        g = timed.groupby(keys, dropna=False)
        summary = g.agg(n=("n", "first"), m=("m", "first"), graph_family=("graph_family", "first"),
                        hardware=("hardware", "first"), median_ms=("time_ms", "median"),
                        q1_ms=("time_ms", lambda s: s.quantile(0.25)), q3_ms=("time_ms", lambda s: s.quantile(0.75)),
                        samples=("time_ms", "size"), sources=("source", "nunique"),
                        compile_s=("compile_s", "max"), h2d_ms=("h2d_ms", "max"), d2h_ms=("d2h_ms", "median"),
                        iterations=("iterations", "median"), relaxations=("relaxations", "median"),
                        validated=("validated", "all"), status=("status", "first"), mode=("mode", "first"),
                        clock=("clock", "first"), batch_sources=("batch_sources", "max"),
                        batch_median_ms=("batch_ms", "median"), preprocess_s=("preprocess_s", "median"),
                        preprocess_bytes=("preprocess_bytes", "median"),
                        all_trees_s=("all_trees_s", "median"), picked_by=("picked_by", "first")).reset_index()
        summary["iqr_ms"] = summary["q3_ms"] - summary["q1_ms"]
        for column in ("batch_sources", "preprocess_bytes"):  # counts: 1024, not 1024.0; empty where none
            summary[column] = summary[column].round().astype("Int64")
        summary = summary.merge(end_to_end_summary(samples), on=keys, how="left")
        # a batched solver's counters are its whole batch's, so they go over the batch's time, not a source's share
        batch_s = summary["batch_median_ms"].fillna(summary["median_ms"]) / 1e3
        summary["relaxations_per_s"] = summary["relaxations"] / batch_s
        apsp = summary["problem"] == "apsp"
        summary["n3_per_s"] = np.where(apsp, summary["n"].astype(float) ** 3 / (summary["median_ms"] / 1e3), np.nan)
        peak = addmin_ceiling(ceiling)
        done = summary["relaxations_per_s"].where(summary["relaxations"] > 0, summary["n3_per_s"])
        summary["ceiling_fraction"] = np.where(apsp, done / peak, np.nan) if peak else np.nan
        summary = speedups(summary)
    failed = samples[samples["status"].isin(["skipped", "negative-cycle", "error"]) & samples["time_ms"].isna()]
    extra = [{"graph": r["graph"], "solver": r["solver"], "params": r["params"], "problem": r["problem"],
              "status": r["status"], "reason": r["reason"]} for _, r in failed.iterrows()]
    extra += [{**s, "status": "skipped"} for s in (skipped or [])]
    if extra:
        summary = pd.concat([summary, pd.DataFrame(extra)], ignore_index=True)
    return summary.sort_values(["problem", "graph", "median_ms"], na_position="last").reset_index(drop=True)


def end_to_end_summary(samples: pd.DataFrame) -> pd.DataFrame:
    """Per summary key, the median, IQR and count of the end-to-end samples (none: no row)."""
    whole = samples.dropna(subset=["end_to_end_ms"]) if "end_to_end_ms" in samples else samples.iloc[:0]
    if whole.empty:
        return pd.DataFrame({**{k: pd.Series(dtype=object) for k in SUMMARY_KEYS},
                             **{c: pd.Series(dtype=float) for c in ("end_to_end_median_ms", "end_to_end_iqr_ms",
                                                                    "end_to_end_samples")}})
    return whole.groupby(SUMMARY_KEYS, dropna=False)["end_to_end_ms"].agg(
        end_to_end_median_ms="median", end_to_end_iqr_ms=lambda s: s.quantile(0.75) - s.quantile(0.25),
        end_to_end_samples="size").reset_index()


def fastest(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` fastest first, validated ones before the others (a wrong answer is never the fastest)."""
    return rows.assign(_unchecked=rows["validated"] != True).sort_values(  # noqa: E712 (numpy bools, NaN)
        ["_unchecked", "median_ms"], kind="stable").drop(columns="_unchecked")


def cpu_baselines(summary: pd.DataFrame) -> pd.DataFrame:
    """Per (graph, problem, host CPU): the CPU baseline of every speed-up, the fastest CPU row there (SciPy, the
    serial codes, GAPBS; validated ones first), with its ``cpu_baseline`` label and ``baseline_ms``."""
    timed = summary.dropna(subset=["median_ms"])
    cpu = fastest(timed[timed["device"] == "cpu"])
    best = cpu.groupby(["graph", "problem", "cpu"], sort=True).head(1)
    return pd.DataFrame({"graph": best["graph"], "problem": best["problem"], "cpu": best["cpu"],
                         "cpu_baseline": best["solver"] + " " + best["params"].astype(str),
                         "baseline_ms": best["median_ms"].astype(float)})


def speedups(summary: pd.DataFrame) -> pd.DataFrame:
    """``speedup_vs_cpu``: the median of the fastest CPU baseline of the same graph and problem on the same host CPU
    (:func:`cpu_baselines`) over the row's median, the one definition of a speed-up (the first page's too); rows
    whose host CPU ran no baseline get none."""
    base = cpu_baselines(summary)
    out = summary.drop(columns=["cpu_baseline", "speedup_vs_cpu"], errors="ignore").merge(
        base, on=["graph", "problem", "cpu"], how="left")
    out["speedup_vs_cpu"] = out.pop("baseline_ms") / out["median_ms"]
    return out


def machines(rows: pd.DataFrame, gpu: str = "gpu", cpu: str = "cpu") -> list[tuple]:
    """The machines of timed rows (their GPU and host CPU in columns ``gpu`` and ``cpu``), as (GPU, host CPU):
    every GPU with its host CPU, then each host CPU that ran no GPU solver as (None, CPU)."""
    on_gpu = rows[rows["device"] == "gpu"]
    pairs = sorted(set(zip(on_gpu[gpu], on_gpu[cpu])), key=str)
    cpus = sorted(set(rows[cpu]) - {c for _, c in pairs}, key=str)
    return pairs + [(None, c) for c in cpus]


# a run whose IQR is over this fraction of its median is too spread for its median to carry a ratio alone
NOISY_SPREAD = 0.5


def spread(row) -> float:
    """IQR over median of a summary row (0 where either is missing)."""
    iqr, median = row.get("iqr_ms"), row.get("median_ms")
    return 0.0 if missing(iqr) or missing(median) or not median else float(iqr) / float(median)


def is_peer(solver) -> bool:
    """Whether ``solver`` is an external peer (GAPBS, Gunrock): a comparison, never one of gpusp's own solvers. A
    name the registry does not know (a solver since renamed) counts as gpusp's own."""
    spec = registry.REGISTRY.get(solver)
    return bool(spec and spec.peer)


def peer_failures(rows: pd.DataFrame) -> str:
    """Why none of a GPU peer's configurations ``rows`` (none validated) can stand as its time, per peer solver."""
    said = []
    for solver, runs in rows.groupby("solver", sort=True):
        failed = runs["status"] == "failed-validation" if "status" in runs else pd.Series(False, index=runs.index)
        said.append(f"{solver}: every setting failed validation" if failed.all()
                    else f"{solver}: no setting validated")
    return "; ".join(said)


def landing_tables(summary: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Per problem, one row per (machine, graph) (:func:`machines`): gpusp's fastest GPU configuration on that GPU
    (validated ones first; never a peer) with its median and IQR, the fastest CPU baseline on its host CPU (SciPy,
    the serial codes, GAPBS; validated ones first, as :func:`cpu_baselines`), their ratio, the fastest validated
    configuration of a GPU peer (Gunrock) on the same GPU and its median over ours (``peer_over_ours``; where every
    peer configuration failed or went unchecked, ``peer`` says so and has no time), whether the GPU answer was
    validated, and whether its times came from the CUDA simulator; ``gpu`` and ``cpu`` name the machine. Where a
    chosen configuration is batched or preprocessed, its row says so (:func:`batch_fields`: ``gpu_batch_sources``,
    ``gpu_batch_median_ms``, ``gpu_preprocess_s``, ``gpu_preprocess_bytes``, and the same with ``cpu_`` and
    ``peer_``)."""
    ok = summary.dropna(subset=["median_ms"])
    ok = ok.assign(**{c: ok[c] if c in ok else "unknown" for c in ("gpu", "cpu")})
    ok = ok.assign(_peer=ok["solver"].map(is_peer).astype(bool))
    tables, blocks = {}, machines(ok)
    for problem, part in ok.groupby("problem", sort=True):
        rows = []
        for gpu_name, cpu_name in blocks:
            for graph, g in part[part["cpu"] == cpu_name].groupby("graph", sort=True):
                on_gpu = g[(g["device"] == "gpu") & (g["gpu"] == gpu_name)]
                gpu = fastest(on_gpu[~on_gpu["_peer"]])
                peers = on_gpu[on_gpu["_peer"]]
                checked = fastest(peers[peers["validated"] == True])  # noqa: E712 (a failed peer never wins)
                cpu = fastest(g[g["device"] == "cpu"])
                if gpu.empty and cpu.empty and peers.empty:  # this graph ran on other GPUs only
                    continue
                row = {"graph": graph, "n": int(g["n"].iloc[0]), "m": int(g["m"].iloc[0]), "gpu": gpu_name,
                       "cpu": cpu_name}
                if len(gpu):
                    best = gpu.iloc[0]
                    valid = best["validated"] == True  # noqa: E712 (a numpy bool, or NaN when not validated)
                    row.update(gpu_solver=f"{best['solver']} {best['params']}", gpu_median_ms=best["median_ms"],
                               gpu_iqr_ms=best["iqr_ms"], validated="yes" if valid else "no",
                               timings="SIMULATED" if best["mode"] == "sim" else "GPU", **batch_fields("gpu", best))
                else:  # say why the GPU column is empty, and what the CPU baseline's check gave
                    row["gpu_solver"] = _no_gpu_reason(summary, problem, graph)
                    if len(cpu):
                        row["validated"] = ("yes" if cpu.iloc[0]["validated"] == True else "no") + " (CPU)"  # noqa: E712
                if len(cpu):
                    base = cpu.iloc[0]
                    row.update(cpu_baseline=f"{base['solver']} {base['params']}", cpu_median_ms=base["median_ms"],
                               cpu_iqr_ms=base["iqr_ms"], **batch_fields("cpu", base))
                if len(gpu) and len(cpu):
                    row["gpu_speedup"] = base["median_ms"] / best["median_ms"]
                    row["noisy"] = bool(spread(best) > NOISY_SPREAD or spread(base) > NOISY_SPREAD)
                if len(checked):
                    peer = checked.iloc[0]
                    row.update(peer=f"{peer['solver']} {peer['params']}", peer_median_ms=peer["median_ms"],
                               peer_iqr_ms=peer["iqr_ms"], **batch_fields("peer", peer))
                elif len(peers):
                    row["peer"] = peer_failures(peers)
                if len(checked) and len(gpu):
                    row["peer_over_ours"] = peer["median_ms"] / best["median_ms"]
                    row["peer_noisy"] = bool(spread(best) > NOISY_SPREAD or spread(peer) > NOISY_SPREAD)
                rows.append(row)
        tables[problem] = pd.DataFrame(rows)
    return tables


def _no_gpu_reason(summary: pd.DataFrame, problem: str, graph: str) -> str:
    """The landing's GPU cell of a graph that no gpusp GPU solver timed: the first reason one was skipped or failed
    for, else that none was configured for it."""
    mine = summary[(summary["graph"] == graph) & (summary["problem"] == problem) & (summary["device"] == "gpu")]
    mine = mine[~mine["solver"].map(is_peer).astype(bool)]
    if mine.empty:
        return "none: no GPU solver of the config ran on this graph"
    first = mine.iloc[0]
    why = first.get("reason") if "reason" in mine and not missing(first.get("reason")) else first.get("status")
    more = f" (and {len(mine) - 1} more)" if len(mine) > 1 else ""
    return f"none timed: {first['solver']} {first['params']}: {why}{more}"


# the report's stylesheet styles no admonition: without this a SIMULATED warning reads as a plain paragraph
# Snakemake shows this page centred in a narrow column beside the rule graph: a page taller than the window loses its
# top, and a table wider than the column runs into the graph. The rules after the banner's start the page at the top,
# at the window's width, with the rule graph below it.
BANNER_STYLE = """.. raw:: html

   <style>.admonition.warning{background:#fef3c7;border-left:6px solid #d97706;padding:.5em 1em;margin:1em 0}
   .admonition.warning .admonition-title{font-weight:700;letter-spacing:.05em;margin:0}
   div.h-screen:has(#rulegraph){align-items:flex-start;justify-content:flex-start;flex-basis:0;min-width:0}
   div:has(> #rulegraph){flex-direction:column}
   div:has(> #rulegraph) > div{align-self:stretch}
   div:has(> #rulegraph) .prose{max-width:none}
   div:has(> #rulegraph) .prose table{display:block;overflow-x:auto}</style>"""
LANDING_HEAD = ["graph (n, m)", "fastest GPU solver", "median ms (IQR)", "fastest CPU baseline, median ms (IQR)",
                "GPU peer, median ms (IQR)", "GPU", "CPU", "GPU speed-up", "GPU peer / ours", "validated", "timings"]


def landing_rst(tables: dict[str, pd.DataFrame], intro: str = "", appendix: str = "", environment: str = "") -> str:
    """The report's first page: ``intro``, then per machine (one GPU model and its host CPU, or a host CPU
    alone) a table per problem whose every row names its GPU and CPU, a SIMULATED banner above a machine that
    was the CUDA simulator, then ``environment`` and ``appendix`` (reStructuredText, all but the intro kept out
    of the report's Jinja templating)."""

    def cell(x):
        return "n/a" if missing(x) else str(x)

    def noisy(x):
        return " (noisy)" if not missing(x) and x else ""

    def peer_cell(r):
        if missing(r.get("peer")) or missing(r.get("peer_median_ms")):  # no peer ran, or none of it validated
            return cell(r.get("peer"))
        return (f"{r['peer']}{preprocess_note(r, 'peer')}, {number(r['peer_median_ms'])} "
                f"({number(r.get('peer_iqr_ms'))}){batch_note(r, 'peer')}")

    def solver_cell(r, prefix, name):
        return cell(r.get(name)) + ("" if missing(r.get(name)) else preprocess_note(r, prefix))

    rows = pd.concat([t.assign(problem=p) for p, t in tables.items()], ignore_index=True) if tables else None
    out = [intro.rstrip(), "", "{% raw %}", "", BANNER_STYLE, "", "Fastest solver per graph", "=" * 24, ""]
    if rows is None or rows.empty:
        out += ["No timed runs yet.", ""]
        blocks = []
    else:
        rows["gpu"] = rows["gpu"].astype(object).where(rows["gpu"].notna(), None)
        blocks = sorted(set(zip(rows["gpu"], rows["cpu"])), key=lambda b: (b[0] is None, str(b[0]), str(b[1])))
    for gpu_name, cpu_name in blocks:
        block = rows[(rows["cpu"] == cpu_name) & (rows["gpu"].isna() if gpu_name is None else rows["gpu"] == gpu_name)]
        where = f"GPU {text(gpu_name)}, host CPU {text(cpu_name)}" if gpu_name else f"CPU {text(cpu_name)} (no GPU)"
        out += [f".. rubric:: {where}", ""]
        simulated = "timings" in block and (block["timings"] == "SIMULATED").any()
        if simulated:
            out += [".. admonition:: SIMULATED", "   :class: warning", "",
                    "   The GPU solvers of this block ran in Numba's CUDA simulator: their times are not GPU times "
                    "(the CPU baselines' times are real).", ""]
        gpu_cell = "CUDA simulator" if simulated else text(gpu_name) if gpu_name else "none"
        for problem, table in block.groupby("problem", sort=True):
            body = [[f"{r['graph']} ({r['n']:,}, {r['m']:,})", solver_cell(r, "gpu", "gpu_solver"),
                     f"{number(r.get('gpu_median_ms'))} ({number(r.get('gpu_iqr_ms'))}){batch_note(r, 'gpu')}",
                     f"{solver_cell(r, 'cpu', 'cpu_baseline')}, {number(r.get('cpu_median_ms'))} "
                     f"({number(r.get('cpu_iqr_ms'))}){batch_note(r, 'cpu')}", peer_cell(r),
                     gpu_cell, text(cpu_name),
                     ratio(r.get("gpu_speedup")) + noisy(r.get("noisy")) + batched_mark(r, "gpu_speedup", "gpu", "cpu"),
                     ratio(r.get("peer_over_ours")) + noisy(r.get("peer_noisy"))
                     + batched_mark(r, "peer_over_ours", "gpu", "peer"),
                     cell(r.get("validated")), cell(r.get("timings"))] for r in table.to_dict("records")]
            title = problem.upper() if len(blocks) == 1 else f"{problem.upper()}: {gpu_name or cpu_name}"
            out += list_table(text(title), LANDING_HEAD, body)
    out += ["GPU speed-up: the median of the fastest CPU baseline on the GPU's host CPU over the GPU solver's "
            "median (validated runs first on both sides); times of different machines are never divided. "
            "GPU peer: the fastest validated configuration of an external GPU code (Gunrock's SSSP) on the same GPU, "
            "a comparison never counted as ours; GPU peer / ours is its median over our fastest GPU solver's (above "
            "1x: ours is faster), n/a where no peer ran or none of its settings validated (the cell says which). "
            f"(noisy): the IQR of either side of a ratio is over {NOISY_SPREAD:.0%} of its median, so the ratio "
            "is no stable figure (a busy host, or too few trials): read the samples.", "",
            *batch_legend(rows), environment, appendix, "{% endraw %}", ""]
    return "\n".join(out)


# --- the run's environment: what a reader needs to trust (or reproduce) the numbers --------------------------
ENVIRONMENT_KEYS = ("commit", "dirty", "gpusp_version", "mode", "gpu", "compute_capability", "multiprocessors",
                    "driver", "cuda_driver_api", "cuda_runtime", "numba_cuda", "numba", "numpy", "scipy", "python",
                    "cpu", "cpu_cores", "cpu_cores_usable")
ENVIRONMENT_COLUMNS = (*ENVIRONMENT_KEYS, "peers", "hosts", "records")
GRAPH_COLUMNS = ("graph", "graph_name", "n", "m", "weight_kind", "weight_dtype", "checksum", "records")


def _peer_label(peer) -> str | None:
    if not isinstance(peer, dict) or not peer.get("name"):
        return None
    commit = peer.get("commit") or peer.get("pinned_commit")
    built = f" ({peer['cxx_version']})" if peer.get("cxx_version") else ""
    return f"{peer['name']} {commit or 'not run'}{built}"


def environment_table(records: list[dict]) -> pd.DataFrame:
    """One row per distinct environment the records were measured in (commit and its dirty flag, GPU, driver,
    CUDA, versions, host CPU and cores), with the peers' builds it ran (GAPBS's commit and compiler), its hosts
    and its number of records; one row when the whole sweep ran on one machine from one checkout."""
    groups = {}
    for rec in records:
        machine, commit = rec["machine"], str(rec["git_commit"])
        row = {**{k: machine.get(k) for k in ENVIRONMENT_KEYS}, "commit": commit.removesuffix("+dirty"),
               "dirty": None if commit == "unknown" else commit.endswith("+dirty"),
               "gpusp_version": rec.get("gpusp_version"), "cpu": host_cpu(machine),
               "gpu": machine.get("gpu") or "none"}
        key = tuple(str(row[k]) for k in ENVIRONMENT_KEYS)
        seen = groups.setdefault(key, {**row, "peers": set(), "hosts": set(), "records": 0})
        seen["records"] += 1
        seen["hosts"].add(str(machine.get("host")))
        if _peer_label(rec.get("peer")):
            seen["peers"].add(_peer_label(rec.get("peer")))
    rows = [{**g, "peers": "; ".join(sorted(g["peers"])), "hosts": " ".join(sorted(g["hosts"]))}
            for g in groups.values()]
    return pd.DataFrame(rows, columns=list(ENVIRONMENT_COLUMNS))


def graphs_table(records: list[dict]) -> pd.DataFrame:
    """One row per graph of the sweep (the config's name): its file's name, size, weights and checksum."""
    rows = {}
    for rec in records:
        graph = rec["graph"]
        label = rec.get("graph_label") or graph["name"]
        row = rows.setdefault(label, {"graph": label, "graph_name": graph["name"], "n": graph["n"], "m": graph["m"],
                                      "weight_kind": graph.get("weight_kind"),
                                      "weight_dtype": graph.get("weight_dtype"), "checksum": graph["checksum"],
                                      "records": 0})
        row["records"] += 1
    return pd.DataFrame(sorted(rows.values(), key=lambda r: r["graph"]), columns=list(GRAPH_COLUMNS))


def environment_rst(env: pd.DataFrame, graphs: pd.DataFrame) -> str:
    """The run-environment section (reStructuredText field lists: the first page keeps its tables alone)."""
    out = ["Run environment", "=" * 15, ""]
    if env.empty:
        return "\n".join(out + ["No records.", ""])

    def has(*values):
        return [v for v in values if not missing(v) and str(v) not in ("", "None")]

    for i, e in enumerate(env.to_dict("records"), 1):
        if len(env) > 1:
            out += [f".. rubric:: Environment {i} of {len(env)}", ""]
        gpu = text(e["gpu"])
        if has(e["compute_capability"]):
            gpu += f" (compute capability {e['compute_capability']}, {e['multiprocessors']} multiprocessors)"
        gpu = ", ".join([gpu] + [f"{name} {text(e[key])}" for name, key in (
            ("driver", "driver"), ("CUDA driver API", "cuda_driver_api"), ("CUDA runtime", "cuda_runtime"))
            if has(e[key])])
        cores = (f", {e['cpu_cores_usable']} of {e['cpu_cores']} cores usable" if has(e["cpu_cores"]) else "")
        software = ", ".join(f"{name} {text(e[key])}" for name, key in (
            ("Python", "python"), ("NumPy", "numpy"), ("SciPy", "scipy"), ("Numba", "numba"),
            ("numba-cuda", "numba_cuda"), ("gpusp", "gpusp_version")) if has(e[key]))
        commit = f"``{e['commit']}``" + (" (not a git checkout, and GPUSP_COMMIT unset)" if missing(e["dirty"])
                                          else " with uncommitted changes (dirty)" if e["dirty"] else " (clean)")
        out += field_list([("commit", commit), ("GPU", gpu), ("CPU", text(e["cpu"]) + cores),
                           ("software", software), ("peers", text(e["peers"]) if has(e["peers"]) else ""),
                           ("hosts", text(e["hosts"])), ("records", str(e["records"]))])
    out += [".. rubric:: Graphs (sha256 of n and the CSR arrays)", ""]
    out += field_list([(g["graph"], f"n {g['n']:,}, m {g['m']:,}, weights {text(g['weight_kind'])}, "
                                    f"``{g['checksum']}``") for g in graphs.to_dict("records")])
    return "\n".join(out)


def write_records_archive(paths, dest) -> None:
    """Every record, and the verdict beside it, in a gzipped tar under ``records/`` (their paths from the folder
    they share, that folder's name included), byte-identical for the same files: no time stamps, owners or modes
    of this machine."""
    files = [Path(p) for p in paths]
    files += [v for p in files if (v := Path(str(p).removesuffix(".json") + ".verdict.json")).exists()]
    top = Path(os.path.commonpath([str(p.resolve().parent) for p in files])).parent if files else Path(".")
    with open(dest, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz, \
            tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(set(files), key=lambda p: str(p.resolve())):
            info = tarfile.TarInfo("records/" + path.resolve().relative_to(top).as_posix())
            data = path.read_bytes()
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))


def write_tables(records_paths, out_dir, skipped=None, allow_mixed=False, ceiling=None, intro=None,
                 allow_mixed_hardware=False) -> dict:
    """Write under ``out_dir``: samples.csv and samples.parquet (every sample), summary.csv, gpu_scaling.csv (speed-up
    and efficiency against GPUs, :mod:`gpusp.report.gpuscaling`; only a header without such data), the report's
    landing page landing.rst (with ``intro``, the text of a file, above its tables, the run environment and the
    comparison with the papers' figures), environment.csv, graphs.csv and environment.rst (the run environment),
    records.tar.gz (the records and verdicts themselves) and, when the sweep measured something a paper
    published, papers.csv. All or nothing: every file is written under a temporary name and renamed into place
    only when all of them were written, so a refused or failed aggregate leaves the earlier tables as they were.
    ``skipped``: the skipped combinations, or the path of their JSON list (:func:`read_skipped`)."""
    from ..atomic import atomic_path
    from .gpuscaling import gpu_scaling_table
    from .papers import compare, papers_rst

    records_paths = list(records_paths)
    skipped = read_skipped(skipped) if isinstance(skipped, (str, Path)) else check_skipped(skipped or [])
    if not records_paths and not skipped:
        raise GpuspError("no records to aggregate: no run was recorded and none was skipped (records come from "
                         "`gpusp solve --record`)")
    records = load_records(records_paths)
    samples = samples_table(records)
    check_code_versions(samples, allow_mixed)
    check_hardware(samples, allow_mixed_hardware)
    check_graphs(samples)
    summary = summary_table(samples, skipped, ceiling=ceiling)
    comparison = compare(summary)
    env, graphs = environment_table(records), graphs_table(records)
    environment = environment_rst(env, graphs)
    landing = landing_rst(landing_tables(summary), Path(intro).read_text() if intro else "", papers_rst(comparison),
                          environment)
    parquet = samples.astype({c: "string" for c in samples.columns if samples[c].dtype == object})
    writers = {"samples.csv": lambda tmp: samples.to_csv(tmp, index=False),
               "samples.parquet": parquet.to_parquet,
               "summary.csv": lambda tmp: summary.to_csv(tmp, index=False),
               "gpu_scaling.csv": lambda tmp: gpu_scaling_table(samples).to_csv(tmp, index=False),
               "environment.csv": lambda tmp: env.to_csv(tmp, index=False),
               "graphs.csv": lambda tmp: graphs.to_csv(tmp, index=False),
               "environment.rst": lambda tmp: tmp.write_text(environment),
               "records.tar.gz": lambda tmp: write_records_archive(records_paths, tmp),
               "landing.rst": lambda tmp: tmp.write_text(landing)}
    if len(comparison):
        writers["papers.csv"] = lambda tmp: comparison.to_csv(tmp, index=False)
    out_dir = Path(out_dir)
    with contextlib.ExitStack() as staged:  # on leaving, every temporary file is renamed, or on an error removed
        for name, write in writers.items():
            write(staged.enter_context(atomic_path(out_dir / name)))
    return {name: out_dir / name for name in writers}
