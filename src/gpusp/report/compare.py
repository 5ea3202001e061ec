"""``gpusp compare A B``: two sets of results side by side, in the style of asv's compare.

A and B are each a results folder (of the workflow or of ``gpusp bench``: its ``tables/samples.csv``, else its
``runs/`` records, else its ``tables/records.tar.gz``), a samples table (``samples.csv``, ``.csv.gz``,
``.parquet``), a records archive (``records.tar.gz``, as ``gpusp aggregate`` writes it) or one record (``.json``):
two commits, two GPUs, two configs. Per configuration (graph, problem, solver, parameter set) measured on both
sides the table gives the ratio of medians B / A (below 1: B is faster) with a bootstrap confidence interval and
a verdict: faster, slower, or the same within noise (the interval holds 1). The interval resamples each side's
samples with replacement within each source (a source is a different amount of work, not noise), seeded per
configuration, so that a row never depends on which other rows are there.

Each side is named by its commit, code hashes, GPU and host CPU. A ratio answers one question only when the
sides differ in one thing: the code (a commit, and with it the code hashes), the GPU or the host CPU; the
comparison warns when they differ in more than one.
"""

from __future__ import annotations

import contextlib
import tempfile
import textwrap
import zlib
from pathlib import Path, PurePosixPath

import numpy as np
import pandas as pd

from ..errors import GpuspError
from ..measure.records import RecordFormatError
from .aggregate import load_records, samples_table
from .rst import field_list, list_table, missing, number, ratio, text

KEYS = ["graph", "problem", "solver", "params"]
RESAMPLES, CONFIDENCE = 2000, 0.95
FASTER, SLOWER, SAME, WITHIN_FACTOR = "faster", "slower", "same within noise", "same within factor"
ONLY_A, ONLY_B, OTHER_GRAPH = "only in A", "only in B", "different graphs"
COLOURS = {FASTER: "#1a9850", SLOWER: "#d73027", SAME: "#6f6f6f", WITHIN_FACTOR: "#a6a6a6"}
COLUMNS = ("graph", "problem", "solver", "params", "device", "a_median_ms", "b_median_ms", "ratio", "ci_low",
           "ci_high", "verdict", "a_samples", "b_samples", "a_code_hash", "b_code_hash", "a_validated",
           "b_validated", "note")
TICKS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 0.67, 0.8, 0.9, 1, 1.11, 1.25, 1.5, 2, 5, 10, 20, 50, 100)
_CHUNK = 250  # resamples drawn at once: bounds the memory of a configuration with many samples


# --- reading a side --------------------------------------------------------------------------------------
def load_side(path) -> pd.DataFrame:
    """The samples of one side (see the module docstring for what ``path`` may be); errors name the path."""
    path = Path(path)
    if path.is_dir():
        for table in ("tables/samples.csv", "samples.csv", "tables/samples.parquet", "samples.parquet"):
            if (path / table).is_file():
                return read_samples(path / table)
        runs = path / "runs" if (path / "runs").is_dir() else path
        records = sorted(p for p in runs.rglob("*.json") if not p.name.endswith(".verdict.json"))
        if records:
            return samples_table(load_records(records))
        for archive in ("tables/records.tar.gz", "records.tar.gz"):
            if (path / archive).is_file():
                return read_archive(path / archive)
        raise GpuspError(f"{path}: no tables/samples.csv, runs/ records or records.tar.gz in this folder (give a "
                         "results folder of the workflow or `gpusp bench`, a samples table or records)")
    if not path.exists():
        raise GpuspError(f"{path}: no such file or folder")
    name = path.name.lower()
    if name.endswith((".csv", ".csv.gz", ".parquet")):
        return read_samples(path)
    if name.endswith((".tar.gz", ".tgz", ".tar")):
        return read_archive(path)
    if name.endswith(".json"):
        return samples_table(load_records([path]))
    raise GpuspError(f"{path}: not a results folder, a samples table (.csv, .csv.gz, .parquet) or records (.json, "
                     ".tar.gz)")


def read_samples(path) -> pd.DataFrame:
    """A samples table written by ``gpusp aggregate``; tables of older gpusp versions lack some provenance
    columns, which then read as unknown."""
    try:
        frame = pd.read_parquet(path) if str(path).endswith(".parquet") else pd.read_csv(path, low_memory=False)
    except (OSError, ValueError, ImportError) as exc:
        raise GpuspError(f"{path}: not a samples table ({exc})") from None
    needed = [c for c in ("graph", "solver", "params", "time_ms") if c not in frame]
    if needed:
        raise GpuspError(f"{path}: not a samples table of `gpusp aggregate` (no column {', '.join(needed)})")
    for column, default in (("problem", "sssp"), ("device", "gpu"), ("source", 0), ("code_hash", "unknown"),
                            ("git_commit", "unknown"), ("gpu", "unknown"), ("cpu", "unknown"),
                            ("validated", np.nan), ("graph_checksum", np.nan)):
        if column not in frame:
            frame[column] = default
    return frame


def read_archive(path) -> pd.DataFrame:
    """The samples of a records archive (``records.tar.gz``); a record's errors name the archive and member."""
    import tarfile

    try:
        tar = tarfile.open(path)
    except (OSError, tarfile.TarError) as exc:
        raise GpuspError(f"{path}: not a records archive ({exc})") from None
    with tar, tempfile.TemporaryDirectory(prefix="gpusp-compare-") as tmp:
        records = []
        try:
            for member in tar.getmembers():
                parts = PurePosixPath(member.name).parts
                if not member.isfile() or not member.name.endswith(".json"):
                    continue
                if member.name.startswith("/") or ".." in parts:
                    raise GpuspError(f"{path}: member {member.name} points outside the archive")
                dest = Path(tmp).joinpath(*parts)
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(tar.extractfile(member).read())
                if not member.name.endswith(".verdict.json"):
                    records.append(dest)
        except (EOFError, zlib.error, tarfile.TarError) as exc:
            raise GpuspError(f"{path}: the records archive is damaged or cut short ({exc or type(exc).__name__}); "
                             "write it again (gpusp aggregate) or give the results folder") from None
        if not records:
            raise GpuspError(f"{path}: no records in this archive")
        try:
            frame = samples_table(load_records(sorted(records)))
        except RecordFormatError as exc:
            raise GpuspError(str(exc).replace(f"{tmp}/", f"{path}:")) from None
    return frame.assign(record=frame["record"].str.replace(f"{tmp}/", f"{path}:", regex=False))


# --- the statistics -----------------------------------------------------------------------------------------
def _resampled_medians(values: np.ndarray, strata: np.ndarray, rng, resamples: int) -> np.ndarray:
    """Medians of ``resamples`` bootstrap resamples of ``values``, each stratum resampled within itself."""
    groups = [values[strata == s] for s in pd.unique(strata)]
    out = np.empty(resamples)
    for start in range(0, resamples, _CHUNK):
        count = min(_CHUNK, resamples - start)
        draws = [g[rng.integers(0, len(g), size=(count, len(g)))] for g in groups]
        out[start:start + count] = np.median(np.concatenate(draws, axis=1), axis=1)
    return out


def bootstrap_ratio(a, b, a_strata=None, b_strata=None, *, resamples: int = RESAMPLES,
                    confidence: float = CONFIDENCE, seed=0) -> tuple[float, float, float]:
    """median(b) / median(a) and its percentile bootstrap interval at ``confidence``."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    a_strata = np.zeros(len(a)) if a_strata is None else np.asarray(a_strata)
    b_strata = np.zeros(len(b)) if b_strata is None else np.asarray(b_strata)
    rng = np.random.default_rng(seed)
    ratios = (_resampled_medians(b, b_strata, rng, resamples) / _resampled_medians(a, a_strata, rng, resamples))
    tail = (1 - confidence) / 2
    low, high = np.quantile(ratios, [tail, 1 - tail])
    return float(np.median(b) / np.median(a)), float(low), float(high)


def verdict(point: float, low: float, high: float, factor: float = 1.0) -> str:
    """faster / slower when the interval excludes 1 and the ratio is beyond ``factor``; else the same, within
    noise (the interval holds 1) or within the factor (a real change, but smaller than asked for)."""
    if high < 1 and point <= 1 / factor:
        return FASTER
    if low > 1 and point >= factor:
        return SLOWER
    return SAME if low <= 1 <= high else WITHIN_FACTOR


def _seed(seed: int, key: tuple) -> list[int]:
    return [seed, zlib.crc32("\x1f".join(map(str, key)).encode())]


def _timed(samples: pd.DataFrame) -> pd.DataFrame:
    timed = samples.dropna(subset=["time_ms"])
    return timed.assign(params=timed["params"].astype(str), source=timed["source"].fillna(-1))


def _one(rows: pd.DataFrame, column: str) -> str:
    values = sorted({str(v) for v in rows[column] if not missing(v)})
    return ", ".join(values) if values else "unknown"


def _validated(rows: pd.DataFrame) -> bool | None:
    values = [v for v in rows["validated"] if not missing(v)]
    return None if not values else all(str(v).lower() in ("true", "1", "1.0") for v in values)


def compare_samples(a: pd.DataFrame, b: pd.DataFrame, *, resamples: int = RESAMPLES, confidence: float = CONFIDENCE,
                    seed: int = 0, factor: float = 1.0) -> pd.DataFrame:
    """One row per configuration of either side (see the module docstring); configurations of one side only
    are listed with their verdict and no ratio."""
    a, b = _timed(a), _timed(b)
    groups_a, groups_b = (dict(list(side.groupby(KEYS, sort=True, dropna=False))) for side in (a, b))
    rows = []
    for key in sorted(set(groups_a) | set(groups_b), key=str):
        ra, rb = groups_a.get(key), groups_b.get(key)
        first = ra if ra is not None else rb
        row = dict(zip(KEYS, key), device=first["device"].iloc[0], note="")
        for side, part in (("a", ra), ("b", rb)):
            if part is not None:
                row.update({f"{side}_median_ms": float(part["time_ms"].median()), f"{side}_samples": len(part),
                            f"{side}_code_hash": _one(part, "code_hash"), f"{side}_validated": _validated(part)})
        if ra is None or rb is None:
            rows.append({**row, "verdict": ONLY_B if ra is None else ONLY_A})
            continue
        notes = ["code changed"] if row["a_code_hash"] != row["b_code_hash"] else []
        notes += [f"failed validation in {s.upper()}" for s, part in (("a", ra), ("b", rb))
                  if _validated(part) is False]
        notes += [f"{s.upper()} mixes {what}" for s, part in (("a", ra), ("b", rb))
                  for c, what in (("gpu", "GPUs"), ("cpu", "host CPUs")) if part[c].nunique() > 1]
        if set(ra["source"]) != set(rb["source"]):
            notes.append("different sources")
        checksums = [set(part["graph_checksum"].dropna()) for part in (ra, rb)]
        if all(checksums) and checksums[0] != checksums[1]:
            rows.append({**row, "verdict": OTHER_GRAPH, "note": "; ".join(notes)})
            continue
        point, low, high = bootstrap_ratio(ra["time_ms"], rb["time_ms"], ra["source"], rb["source"],
                                           resamples=resamples, confidence=confidence, seed=_seed(seed, key))
        rows.append({**row, "ratio": point, "ci_low": low, "ci_high": high,
                     "verdict": verdict(point, low, high, factor), "note": "; ".join(notes)})
    return pd.DataFrame(rows, columns=list(COLUMNS))


# --- the two sides ------------------------------------------------------------------------------------------
def describe_side(samples: pd.DataFrame) -> dict:
    """Commit(s), code hashes, GPU(s) and host CPU(s) of one side's timed samples."""
    timed = _timed(samples)
    gpu_rows = timed[timed["device"] == "gpu"]
    return {"commit": _one(timed, "git_commit"), "code hashes": timed["code_hash"].nunique(),
            "gpu": _one(gpu_rows, "gpu") if len(gpu_rows) else "none", "cpu": _one(timed, "cpu")}


def differences(side_a: dict, side_b: dict, table: pd.DataFrame) -> list[str]:
    """What differs between the sides: the code (the commit, or a compared solver's code hash), the GPU, the
    host CPU."""
    compared = table.dropna(subset=["ratio"])
    code = side_a["commit"] != side_b["commit"] or (compared["a_code_hash"] != compared["b_code_hash"]).any()
    return [what for what, differs in (("code", code), ("GPU", side_a["gpu"] != side_b["gpu"]),
                                       ("host CPU", side_a["cpu"] != side_b["cpu"])) if differs]


def warnings_for(differ: list[str]) -> list[str]:
    if len(differ) > 1:
        return [f"A and B differ in {' and '.join(differ)}: each ratio mixes their effects, so it answers none "
                "of the questions alone"]
    return []


# --- output ----------------------------------------------------------------------------------------------------
def _interval(r) -> str:
    return "" if missing(r.get("ratio")) else f"[{number(r['ci_low'], trim=False)}, {number(r['ci_high'], trim=False)}]"


def compare_text(table: pd.DataFrame, sides: dict, warnings: list[str], confidence: float = CONFIDENCE) -> str:
    """The table as printed: a line per side, the warnings, then one line per configuration."""
    lines = [f"{name}: {label}  (commit {d['commit']}; {d['code hashes']} code hashes; GPU {d['gpu']}; "
             f"CPU {d['cpu']})" for name, (label, d) in sides.items()]
    lines += [f"warning: {w}" for w in warnings]
    head = ["A ms", "B ms", "B/A", f"{confidence:.0%} interval", "verdict", "configuration"]
    body = [[number(r["a_median_ms"]), number(r["b_median_ms"]), ratio(r["ratio"]), _interval(r), r["verdict"],
             f"{r['graph']} {r['solver']} {r['params']}" + (f"  ({r['note']})" if r["note"] else "")]
            for r in table.to_dict("records")]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *body)]
    for cells in [head] + body:
        lines.append("  ".join(f"{c:>{w}}" if i < 4 else f"{c:<{w}}" for i, (c, w) in
                               enumerate(zip(cells, widths))).rstrip())
    return "\n".join(lines)


def compare_rst(table: pd.DataFrame, sides: dict, warnings: list[str], confidence: float = CONFIDENCE) -> str:
    """The comparison as a reStructuredText page (the report can include it)."""
    out = ["B against A", "=" * 11, ""]
    for name, (label, d) in sides.items():
        out += [f".. rubric:: {name}: {text(label)}", ""]
        out += field_list([("commit", text(d["commit"])), ("code hashes", str(d["code hashes"])),
                           ("GPU", text(d["gpu"])), ("CPU", text(d["cpu"]))])
    for w in warnings:
        out += [".. warning::", "", f"   {text(w)}", ""]
    head = ["graph", "solver (params)", "A ms", "B ms", "B/A", f"{confidence:.0%} interval", "verdict", "note"]
    body = [[text(r["graph"]), text(f"{r['solver']} ({r['params']})"), number(r["a_median_ms"]),
             number(r["b_median_ms"]), ratio(r["ratio"]), _interval(r) or "n/a", r["verdict"], text(r["note"]) or "-"]
            for r in table.to_dict("records")]
    out += list_table("Ratio of medians per configuration", head, body)
    out += [f"B/A: B's median time over A's (below 1: B is faster); the interval is a {confidence:.0%} bootstrap "
            "interval of that ratio (the samples of each side resampled within each source); same within noise: "
            "the interval holds 1.", ""]
    return "\n".join(out)


def spaced_ticks(reach: float, count: int = 7) -> list[float]:
    """Of TICKS within ``reach`` decades of 1, those at least ``2 * reach / count`` decades from the one kept before
    (from 1 outwards both ways), so that labels never run into each other however wide the axis."""
    gap = 2 * reach / count
    kept = [1.0]
    for side in ([t for t in TICKS if t > 1], sorted((t for t in TICKS if t < 1), reverse=True)):
        last = 0.0
        for t in side:
            if abs(np.log10(t)) <= reach and abs(np.log10(t)) - last >= gap:
                kept.append(t)
                last = abs(np.log10(t))
    return sorted(kept)


def compare_figure(table: pd.DataFrame, path, title: str, confidence: float = CONFIDENCE,
                   simulated: bool = False) -> None:
    """:func:`compare_plot` as a PNG, written atomically."""
    from ..atomic import atomic_path

    fig = compare_plot(table, title, confidence, simulated)
    import matplotlib.pyplot as plt  # loaded by compare_plot, after it chose the Agg backend
    with atomic_path(path, suffix=".png") as tmp:
        fig.savefig(tmp, dpi=110, bbox_inches="tight", format="png")
    plt.close(fig)


def compare_plot(table: pd.DataFrame, title: str, confidence: float = CONFIDENCE, simulated: bool = False):
    """Ratio and interval per configuration on a log axis centred on 1; ``simulated``: a side's GPU times came from
    the CUDA simulator, which a banner says as on every figure of the report."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker
    import seaborn as sns

    data = table.dropna(subset=["ratio"]).reset_index(drop=True)
    sns.set_theme(style="whitegrid", context="paper")
    fig, ax = plt.subplots(figsize=(8, 1.4 + 0.32 * max(len(data), 2)), layout="constrained")
    if data.empty:
        ax.axis("off")
        ax.text(0.5, 0.5, "no configuration was measured on both sides", ha="center", va="center")
    else:
        labels = data["graph"] + ": " + data["solver"] + " " + data["params"].str.slice(0, 32)
        data = data.assign(config=labels)
        ax.hlines(data.index, data["ci_low"], data["ci_high"], colors=data["verdict"].map(COLOURS), lw=2)
        sns.scatterplot(data=data, x="ratio", y=data.index, hue="verdict", palette=COLOURS, ax=ax, s=40, zorder=3)
        ax.axvline(1, color="k", lw=1, ls="--")
        ax.set_xscale("log")
        reach = float(np.nanmax(np.abs(np.log10(data[["ci_low", "ci_high", "ratio"]].to_numpy()))))
        reach = max(reach * 1.15, np.log10(1.05))  # symmetric: a halving and a doubling lie equally far from 1
        ax.set_xlim(10 ** -reach, 10 ** reach)
        ax.xaxis.set_major_locator(matplotlib.ticker.FixedLocator(spaced_ticks(reach)))
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda x, _: f"{x:g}x"))
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_yticks(data.index, data["config"])
        ax.invert_yaxis()
        ax.set_ylabel("")
        ax.set_xlabel(f"B / A, median time (log axis; below 1x B is faster; bars: {confidence:.0%} interval)")
        ax.legend(title="", loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)
    ax.set_title(textwrap.fill(title, 90), fontsize=9)
    if simulated:
        simulated_banner(fig)
    return fig


SIMULATED = "SIMULATED: GPU times from the CUDA simulator, not GPU timings"


def simulated_rows(frame: pd.DataFrame) -> pd.Series:
    """Which rows are GPU times from the CUDA simulator (mode 'sim' on a GPU solver)."""
    mode = frame["mode"] if "mode" in frame else pd.Series("", index=frame.index)
    device = frame["device"] if "device" in frame else pd.Series("gpu", index=frame.index)
    return (mode == "sim") & (device == "gpu")


def simulated_banner(fig) -> None:
    """The red SIMULATED banner at the top of a figure (every figure of the report whose GPU times are simulated)."""
    fig.text(0.5, 1.0, SIMULATED, ha="center", va="bottom", color="white", fontsize=10, weight="bold",
             bbox={"facecolor": "#b30000", "edgecolor": "none", "pad": 4})


def run_compare(a_path, b_path, out_dir=None, *, resamples: int = RESAMPLES, confidence: float = CONFIDENCE,
                seed: int = 0, factor: float = 1.0, only_changed: bool = False) -> tuple[str, dict]:
    """Compare the results at ``a_path`` and ``b_path``: the printed text, and (with ``out_dir``)
    compare.csv, compare.rst and compare.png written there, all or none."""
    from ..atomic import atomic_path

    a, b = load_side(a_path), load_side(b_path)
    for side, path, samples in (("A", a_path, a), ("B", b_path, b)):
        if _timed(samples).empty:
            raise GpuspError(f"{side} ({path}): no timed samples, nothing to compare (every run there was skipped or "
                             "failed)")
    table = compare_samples(a, b, resamples=resamples, confidence=confidence, seed=seed, factor=factor)
    sides = {"A": (str(a_path), describe_side(a)), "B": (str(b_path), describe_side(b))}
    warnings = warnings_for(differences(sides["A"][1], sides["B"][1], table))
    for side in "ab":
        checked = [bool(v) for v in table[f"{side}_validated"] if not missing(v)]
        if checked and not any(checked):
            warnings.append(f"{side.upper()}: every timed configuration failed validation: its times are those of "
                            "wrong answers")
    shown = table[table["verdict"].isin([FASTER, SLOWER])] if only_changed else table
    printed = compare_text(shown, sides, warnings, confidence)
    if out_dir is None:
        return printed, {}
    out_dir, title = Path(out_dir), f"B / A per configuration.  A: {a_path}  B: {b_path}"
    simulated = simulated_rows(a).any() or simulated_rows(b).any()
    writers = {"compare.csv": lambda tmp: table.to_csv(tmp, index=False),
               "compare.rst": lambda tmp: tmp.write_text(compare_rst(shown, sides, warnings, confidence)),
               "compare.png": lambda tmp: compare_figure(shown, tmp, title, confidence, simulated)}
    with contextlib.ExitStack() as staged:
        for name, write in writers.items():
            write(staged.enter_context(atomic_path(out_dir / name, suffix=Path(name).suffix)))
    return printed, {name: out_dir / name for name in writers}
