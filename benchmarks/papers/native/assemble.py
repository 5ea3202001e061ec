"""Turn the calls of the native-launch re-run (H200) into benchmarks/papers/native/: per experiment its summary and
samples, the comparison with the papers' printed values, and the papers' figures redrawn by the workflow's own code
(gpusp.report.paperfigs), then print a short table per experiment.

usage (repository root): python benchmarks/papers/native/assemble.py RESULTS [EXPERIMENT ...]
RESULTS holds each call's unpacked res.tar.gz: a1/ and b1/ (2026-11-25, benchmarks/h200/calls.sh: NAME-records.tar.gz
of the steps that finished, NAME-partial-records.tar.gz of those stopped at their cap), c1/ (2026-11-25,
benchmarks/h200/native-rest.sh: NAME-runs.tar.gz) and d1/, d2/, d3/, d6/ (2026-11-26, benchmarks/h200/native-owed.sh).
Records of one experiment from several calls are pooled; a configuration measured twice keeps the later call's
record. With EXPERIMENT names only those folders are rebuilt.
"""

from __future__ import annotations

import shutil
import sys
import tarfile
import tempfile
from pathlib import Path

import pandas as pd

from gpusp.report.aggregate import write_tables
from gpusp.report.paperfigs import figures_from_tables

HERE = Path("benchmarks/papers/native")
PARTS = {  # experiment -> [(call, archive)] in call order
    "paper000-table1": [("a1", "n000t1-records.tar.gz")],
    "paper000-table2": [("d1", "n000t2-records.tar.gz")],
    "paper000-table3": [("a1", "n000t3-records.tar.gz"), ("d1", "n000t3b-records.tar.gz")],
    "paper001-table1": [("a1", "n001t1-partial-records.tar.gz"), ("d6", "n001t1c-records.tar.gz")],
    "paper001-fig10": [("d2", "n001fig10-records.tar.gz")],
    "paper001-fig12": [("d2", "n001fig12-records.tar.gz")],
    "paper001-fig13": [("d2", "n001fig13-records.tar.gz")],
    "paper001-fig14": [("c1", "n001fig14-runs.tar.gz")],
    "paper001-sec52-n-b": [("d2", "n001sec52-records.tar.gz")],
    "paper002-fig4": [("a1", "n002fig4-partial-records.tar.gz")],
    "paper004-fig1-edges-per-thread": [("b1", "n004fig1-partial-records.tar.gz"), ("c1", "n004fig1c-runs.tar.gz")],
    "paper004-fig2-pull-push": [("b1", "n004fig2-records.tar.gz")],
    "paper004-transfer": [("b1", "n004transfer-partial-records.tar.gz"), ("d3", "n004transferbig-partial-records.tar.gz")],
    "paper004-apsp-minplus": [("d3", "n004minplus-records.tar.gz")],
    "paper004-apsp-allsources": [("b1", "n004allsrc-records.tar.gz")],
}


def records(results: Path, parts, work: Path) -> list[Path]:
    """The record files of an experiment, later calls replacing earlier ones of the same configuration."""
    chosen = {}
    for i, (call, archive) in enumerate(parts):
        dest = work / f"{i}"
        with tarfile.open(results / call / archive) as tar:
            tar.extractall(dest, filter="data")
        for path in sorted(dest.rglob("*.json")):
            if path.parent.name != "verdicts" and "skipped" not in path.name:
                chosen[path.relative_to(dest).as_posix().split("runs/", 1)[-1]] = path
    return list(chosen.values())


def main(results: Path, only=()) -> None:
    for experiment, parts in PARTS.items():
        if only and experiment not in only:
            continue
        out = HERE / experiment
        shutil.rmtree(out, ignore_errors=True)
        with tempfile.TemporaryDirectory() as tmp:
            tables = Path(tmp) / "tables"
            write_tables(records(results, parts, Path(tmp)), tables, allow_mixed=True)
            out.mkdir(parents=True)
            shutil.copy(tables / "summary.csv", out / "summary.csv")
            pd.read_csv(tables / "samples.csv").to_csv(out / "samples.csv.gz", index=False)
            if (tables / "papers.csv").exists():
                shutil.copy(tables / "papers.csv", out / "papers.csv")
            figures_from_tables(tables / "samples.parquet", tables / "summary.csv", out / "figures")
        summary = pd.read_csv(out / "summary.csv")
        print(f"\n## {experiment}: {len(summary)} configurations, {int(summary['validated'].sum())} validated")
        cols = [c for c in ("graph", "solver", "params", "median_ms", "iqr_ms", "end_to_end_median_ms", "h2d_ms")
                if c in summary]
        print(summary[cols].to_string(index=False, max_rows=400))


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2:])
