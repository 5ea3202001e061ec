"""A device call's `gpusp bench` summary as rows of benchmarks/sssp-scale-h200-solvers.csv: the summary's columns
that the file keeps, behind the call's date, host, driver (from the step's GPU line, `nvidia-smi`'s CSV) and run label.
Rows already there for the same run, graph, solver and params are replaced, so a call appended twice stays once.

    python benchmarks/scale_rows.py SUMMARY.csv GPU.txt --run "call r2 (abc1234)" --date 2026-12-03 \
        [--host "nvidia-h200 (1 GPU, 16 cores)"] [--out benchmarks/sssp-scale-h200-solvers.csv]
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import pandas as pd

from gpusp.atomic import atomic_open

OUT = Path(__file__).parent / "sssp-scale-h200-solvers.csv"
CALL = ["date", "host", "driver", "run"]
KEY = ["run", "graph", "solver", "params"]


def driver_of(gpu_txt: Path) -> str:
    """The driver version of the first GPU in a step's GPU line (`nvidia-smi --query-gpu=name,driver_version,...
    --format=csv`)."""
    lines = list(csv.DictReader(gpu_txt.read_text().splitlines(), skipinitialspace=True))
    if not lines or "driver_version" not in lines[0]:
        raise SystemExit(f"{gpu_txt}: no driver_version column in nvidia-smi's CSV")
    return lines[0]["driver_version"].strip()


def rows(summary: Path, driver: str, *, run: str, date: str, host: str, columns: list[str]) -> pd.DataFrame:
    """The summary's rows in the file's ``columns``: the call's four first, then the summary's own."""
    table = pd.read_csv(summary, dtype={"params": str})
    missing = [c for c in columns if c not in CALL and c not in table]
    if missing:
        raise SystemExit(f"{summary}: no column {', '.join(missing)}")
    for name, value in zip(CALL, (date, host, driver, run)):
        table[name] = value
    return table[columns]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("summary", type=Path, help="the step's summary.csv (gpusp bench)")
    ap.add_argument("gpu", type=Path, help="the step's GPU line (nvidia-smi CSV), for the driver")
    ap.add_argument("--run", required=True, help='the call and commit, e.g. "call r2 (abc1234)"')
    ap.add_argument("--date", required=True, help="the call's date, YYYY-MM-DD")
    ap.add_argument("--host", default="nvidia-h200 (1 GPU, 16 cores)", help="the machine kind, as the file names it")
    ap.add_argument("--out", type=Path, default=OUT, help="the rows' file (rewritten with the call's rows at its end)")
    args = ap.parse_args(argv)
    with args.out.open(newline="") as f:
        header, *old = list(csv.reader(f))
    new = rows(args.summary, driver_of(args.gpu), run=args.run, date=args.date, host=args.host, columns=header)
    replaced = set(new[KEY].astype(str).itertuples(index=False, name=None))
    at = [header.index(c) for c in KEY]
    kept = [r for r in old if tuple(r[i] for i in at) not in replaced]  # the other rows stay as they are
    with atomic_open(args.out, "w", newline="") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(header)
        out.writerows(kept)
        new.to_csv(f, index=False, header=False, float_format="%.6g", lineterminator="\n")
    print(f"{args.out}: {len(new)} rows of {args.run} ({len(old) - len(kept)} replaced), {len(kept) + len(new)} in all")


if __name__ == "__main__":
    main()
