"""GAP's kron and urand at scale 22, 26 and 27 on the H200 in one figure: `deltastep_lean` and `deltastep_gpu`
(distances alone) beside GAPBS with 16 threads of the same call, time a source and GTEPS against arcs, from the
committed rows (CALLS). Writes benchmarks/sssp-scale-h200-gap.png; write-up: benchmarks/sssp-scale-h200.md.

    python benchmarks/gap_scale_figure.py [--out PNG]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from gpusp.atomic import atomic_open  # noqa: E402

HERE = Path(__file__).parent
# file -> (its column naming the call, the calls drawn): one call a scale, so each point's ratio is that call's own
CALLS = {"sssp-scale-h200-solvers.csv": ("run", ("call l1 (727f624)",)),
         "sssp-scale-kernel-h200.csv": ("call", ("s2", "k27l", "u27l"))}
SERIES = {("deltastep_lean", "paths-false"): "deltastep_lean", ("deltastep_gpu", "paths-false"): "deltastep_gpu",
          ("gapbs_sssp", "delta-2+threads-16"): "GAPBS, 16 threads"}
KINDS = ("kron", "urand")


def rows(folder: Path = HERE) -> pd.DataFrame:
    """One row a (kind, scale, series): n, m, median_ms, q1_ms, q3_ms, gteps, call."""
    parts = []
    for name, (column, calls) in CALLS.items():
        frame = pd.read_csv(folder / name, dtype={"params": str})
        frame = frame[frame[column].isin(calls)].rename(columns={column: "call"})
        frame["series"] = [SERIES.get(key) for key in zip(frame["solver"], frame["params"])]
        frame["kind"] = frame["graph"].str.extract(f"^({'|'.join(KINDS)})", expand=False)
        parts.append(frame.dropna(subset=["series", "kind"]))
    out = pd.concat(parts, ignore_index=True)
    out["scale"] = out["n"].map(lambda n: int(n).bit_length() - 1)
    out["gteps"] = out["m"] / out["median_ms"] / 1e6
    keys = ["kind", "scale", "series"]
    if out.duplicated(keys).any():
        raise SystemExit(f"more than one row a point: {out[out.duplicated(keys, keep=False)][keys + ['call']]}")
    return out.sort_values(keys)[keys + ["n", "m", "median_ms", "q1_ms", "q3_ms", "gteps", "call"]]


def draw(table: pd.DataFrame, out: Path) -> None:
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.8), constrained_layout=True)
    colours = dict(zip(SERIES.values(), plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    for (kind, series), line in table.groupby(["kind", "series"]):
        style = {"color": colours[series], "marker": "o" if kind == "kron" else "s",
                 "linestyle": "-" if kind == "kron" else "--", "label": f"{series}, {kind}"}
        spread = [line["median_ms"] - line["q1_ms"], line["q3_ms"] - line["median_ms"]]
        left.errorbar(line["m"], line["median_ms"], yerr=spread, capsize=3, **style)
        right.plot(line["m"], line["gteps"], **style)
    ticks = table[table["kind"] == "kron"].drop_duplicates("scale")
    labels = [f"scale {s}\n{m / 1e9:.2g}G arcs" for s, m in zip(ticks["scale"], ticks["m"])]
    for ax, ylabel, title in ((left, "median time a source, ms (log; q1-q3 over sources)", "time a source"),
                              (right, "GTEPS: arcs / time a source (10^9/s, log)", "rate")):
        ax.set(xscale="log", yscale="log", xlabel="arcs m (log; kron's marked, urand's within 5 %)", ylabel=ylabel,
               title=title)
        ax.set_xticks(ticks["m"], labels)
        ax.minorticks_off()
        ax.grid(True, which="major", alpha=0.3)
    right.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.suptitle("GAP kron and urand, scales 22 / 26 / 27, one NVIDIA H200 (GAPBS: 16 host threads, the same call)")
    with atomic_open(out, "wb") as fh:
        fig.savefig(fh, format="png", dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=HERE / "sssp-scale-h200-gap.png")
    args = ap.parse_args(argv)
    table = rows()
    draw(table, args.out)
    print(table.to_string(index=False))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
