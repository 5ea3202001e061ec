"""After how many sources each many-source method beats the others (issue 41, item 5): time for k sources of a graph
as its preprocessing plus k times its time a source, from the committed H200 figures: `phast_gpu` and
`multisource_sssp` sweeping every tree (all-trees-h200.csv: preprocessing_s, per_tree_ms; a graph and solver's last
row), `deltastep_gpu` and
GAPBS with 16 threads one source after another (sssp-scale-h200.csv's sweep medians, no preprocessing). Writes the
figure and prints the crossovers (the k past which a method with more preprocessing is faster), one CSV row each.

usage: python benchmarks/all_trees_amortisation.py [--png benchmarks/all-trees-h200-amortisation.png]
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ONE_SOURCE = {"gapbs_sssp threads-16 a source (sweep median)": "GAPBS, 16 threads",
              "deltastep_gpu default a source (sweep median)": "deltastep_gpu"}


def methods(trees_csv: Path, scale_csv: Path) -> dict[str, list[tuple[str, float, float, int]]]:
    """Per graph: (method, preprocessing s, s a source, n) for every method measured on it."""
    latest: dict[tuple[str, str], tuple] = {}
    for row in csv.DictReader(trees_csv.open()):  # in date order: a later row of a graph and solver supersedes
        latest[row["graph"], row["solver"]] = (row["solver"], float(row["preprocess_s"]),
                                                float(row["per_tree_ms"]) / 1e3, int(row["n"]))
    out: dict[str, list] = {}
    for (graph, _), method in latest.items():
        out.setdefault(graph, []).append(method)
    for row in csv.DictReader(scale_csv.open()):
        if row["graph"] in out and row["step"] in ONE_SOURCE:
            out[row["graph"]].append((ONE_SOURCE[row["step"]], 0.0, float(row["seconds"]), int(row["n"])))
    return out


def crossovers(rows) -> list[tuple[str, str, float]]:
    """(slower-to-start method, the one it overtakes, k) for every pair where the one with more preprocessing has the
    lower time a source."""
    out = []
    for a, pre_a, per_a, _ in rows:
        for b, pre_b, per_b, _ in rows:
            if pre_a > pre_b and per_a < per_b:
                out.append((a, b, (pre_a - pre_b) / (per_b - per_a)))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trees", type=Path, default=HERE / "all-trees-h200.csv")
    ap.add_argument("--scale", type=Path, default=HERE / "sssp-scale-h200.csv")
    ap.add_argument("--png", type=Path, default=None, help="write the figure here")
    args = ap.parse_args(argv)
    table = methods(args.trees, args.scale)
    writer = csv.writer(sys.stdout)
    writer.writerow(["graph", "method", "overtakes", "after_sources", "all_trees_s"])
    for graph, rows in table.items():
        n = rows[0][3]
        totals = {m: pre + n * per for m, pre, per, _ in rows}
        for a, b, k in crossovers(rows):
            writer.writerow([graph, a, b, int(np.ceil(k)), f"{totals[a]:.2f}"])
    if args.png:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, len(table), figsize=(6.5 * len(table), 4.8), squeeze=False)
        for ax, (graph, rows) in zip(axes[0], table.items()):
            n = rows[0][3]
            k = np.unique(np.geomspace(1, n, 200).astype(int))
            for m, pre, per, _ in sorted(rows, key=lambda r: r[2]):
                ax.plot(k, pre + k * per, label=f"{m} ({pre:.1f} s + {per * 1e3:.4g} ms a source)")
            for _, _, x in crossovers(rows):  # the crossovers themselves: the printed table
                if x <= n:
                    ax.axvline(x, color="grey", lw=0.6, ls=":")
            ax.set(xscale="log", yscale="log", xlabel="sources", ylabel="seconds (preprocessing + sources x a source)",
                   title=f"{graph}: every tree up to n = {n:,}")
            ax.legend(fontsize=7, loc="upper left")
            ax.grid(True, which="both", lw=0.3)
        fig.suptitle("Many sources on one H200: when preprocessing pays (committed figures)")
        fig.tight_layout()
        args.png.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(args.png, dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
