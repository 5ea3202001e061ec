"""The features gpusp.solvers.auto reads, of the graphs the committed benchmarks measured: builds each graph as its
config does (the datasets from a folder of the DIMACS9/SNAP files, the generators seeded) and writes
benchmarks/auto-features.csv, which tests/solvers/test_auto.py checks the rule table against.

    PYTHONPATH=src python benchmarks/auto_features.py /work/shared/data [GRAPH ...]
"""

from __future__ import annotations

import csv
import sys
import time
from pathlib import Path

from gpusp.atomic import atomic_open
from gpusp.data.formats import read_graph
from gpusp.data.generate import generate
from gpusp.data.weights import add_weights
from gpusp.solvers.auto import Features

OUT = Path(__file__).with_name("auto-features.csv")
SNAP = {"weights": (1, 100, 1)}  # the configs' {action: add, min: 1, max: 100, seed: 1}
GRAPHS = {
    "USA-road-d.NY": ("file", "USA-road-d.NY.gr.gz", {}),
    "USA-road-d.BAY": ("file", "USA-road-d.BAY.gr.gz", {}),
    "p2p-Gnutella30": ("file", "p2p-Gnutella30.txt.gz", SNAP),
    "email-Enron": ("file", "email-Enron.txt.gz", SNAP),
    "ring-4096": ("generate", "ring", {"params": {"n": 4096, "wmin": 1, "wmax": 100}}),
    "kron-20": ("generate", "kron", {"params": {"scale": 20}}),
    "kron-22": ("generate", "kron", {"params": {"scale": 22}}),
    "urand-20": ("generate", "urand", {"params": {"scale": 20}}),
    "urand-22": ("generate", "urand", {"params": {"scale": 22}}),
    "delaunay-20": ("generate", "delaunay", {"params": {"scale": 20}}),
    "grid-4096": ("generate", "grid", {"params": {"rows": 4096, "cols": 4096, "wmin": 1, "wmax": 1000}}),
    "grid-1024": ("generate", "grid", {"params": {"rows": 1024, "cols": 1024, "wmin": 1, "wmax": 100}, "seed": 0}),
}


def build(data: Path, how: str, what: str, extra: dict):
    if how == "file":
        graph = read_graph(data / what)
    else:
        graph = generate(what, seed=extra.get("seed", 1), **extra["params"])
    if "weights" in extra:
        graph = add_weights(graph, *extra["weights"])
    return graph


def main(argv) -> int:
    data, names = Path(argv[0]), argv[1:] or list(GRAPHS)
    rows = {r["graph"]: r for r in csv.DictReader(OUT.open())} if OUT.exists() else {}
    for name in names:
        t0 = time.perf_counter()
        features = Features.of(build(data, *GRAPHS[name]))
        rows[name] = {"graph": name, **{k: getattr(features, k) for k in Features.__dataclass_fields__}}
        print(f"{name}: {features.info()} ({time.perf_counter() - t0:.1f} s)", flush=True)
    with atomic_open(OUT, newline="") as fh:
        writer = csv.DictWriter(fh, ["graph", *Features.__dataclass_fields__])
        writer.writeheader()
        writer.writerows(rows[name] for name in GRAPHS if name in rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
