"""Time gpusp's .gr reader and its binary formats on a seeded random graph of the DIMACS USA road graph's shape.

Usage: python benchmarks/large_graph_io.py [--scale 1.0] [--repeats 2] [--dir DIR] [--no-general]

The graph: USA-road-d.USA's 23,947,347 vertices and 58,333,344 arcs (times --scale), sources sorted as in the
DIMACS file, targets uniform, weights uniform in 1..5999 (about the file's 1.3 GB of text). It is written as .gr and
.gr.gz (gzip level 1: reading speed hardly depends on the level), then read through the block reader (the path a
canonical file takes) and, unless --no-general, the general reader alone; then written and read as .gcsr (the
cache's layout), .wsg and .npz. Prints per step the best and median wall seconds over the repeats, the process's
CPU seconds (every thread) at the best, and MB/s of text or GB/s of CSR arrays at the best; the files go to --dir
(default: a temporary folder, removed after).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import gpusp
from gpusp.data import formats

USA = (23_947_347, 58_333_344)


def usa_shape(scale: float, seed: int = 7) -> gpusp.Graph:
    n, m = max(1, int(USA[0] * scale)), max(1, int(USA[1] * scale))
    rng = np.random.default_rng(seed)
    indptr = np.searchsorted(np.sort(rng.integers(0, n, m)), np.arange(n + 1))
    return gpusp.Graph(n, indptr, rng.integers(0, n, m, dtype=np.int32), rng.integers(1, 6000, m, dtype=np.int32),
                       name="usa-shape")


def timed(fn, repeats: int):
    """(best wall, median wall, CPU seconds at the best, last result)."""
    runs, result = [], None
    for _ in range(repeats):
        result = None  # the last result only: two large graphs at once could outgrow the memory
        wall, cpu = time.perf_counter(), time.process_time()
        result = fn()
        runs.append((time.perf_counter() - wall, time.process_time() - cpu))
    best = min(runs)
    return best[0], statistics.median(r[0] for r in runs), best[1], result


def report(label: str, best: float, median: float, cpu: float, rate: str) -> None:
    print(f"{label:<34} best {best:8.3f} s   median {median:8.3f} s   cpu {cpu:8.3f} s   {rate}", flush=True)


def general_read(path):
    """read_graph with the block reader switched off: what every file took before it."""
    original = formats.read_gr_blocks
    formats.read_gr_blocks = lambda path: None
    try:
        return gpusp.read_graph(path)
    finally:
        formats.read_gr_blocks = original


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--dir", type=Path, default=None)
    ap.add_argument("--no-general", action="store_true", help="skip the general reader (slow, several times the text "
                                                              "in memory)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.dir or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        g = usa_shape(args.scale)
        arrays = g.indptr.nbytes + g.indices.nbytes + g.weights.nbytes
        print(f"usa-shape: n={g.n:,} m={g.m:,}, CSR arrays {arrays / 1e9:.2f} GB, {len(os.sched_getaffinity(0))} "
              f"CPUs, {args.repeats} repeats", flush=True)
        for ext, level in ((".gr", 6), (".gr.gz", 1)):
            path = folder / f"usa{ext}"
            wall = time.perf_counter()
            gpusp.write_graph(g, path, compresslevel=level)
            print(f"wrote {path.name}: {path.stat().st_size / 1e6:,.0f} MB in {time.perf_counter() - wall:.1f} s",
                  flush=True)
        text = (folder / "usa.gr").stat().st_size
        readers = [("block", gpusp.read_graph)] + ([] if args.no_general else [("general", general_read)])
        for ext in (".gr", ".gr.gz"):
            for name, reader in readers:
                best, median, cpu, back = timed(lambda r=reader, e=ext: r(folder / f"usa{e}"), args.repeats)
                assert back.checksum() == g.checksum()
                report(f"read {ext} ({name} reader)", best, median, cpu, f"{text / best / 1e6:7.1f} MB/s of text")
                del back
        for ext in (".gcsr", ".wsg", ".npz"):
            path = folder / f"usa{ext}"
            best, median, cpu, _ = timed(lambda p=path: gpusp.write_graph(g, p), 1)
            report(f"write {ext}", best, median, cpu, f"{path.stat().st_size / 1e9:.2f} GB")
            best, median, cpu, back = timed(lambda p=path: gpusp.read_graph(p), args.repeats)
            assert back.checksum() == g.checksum()
            report(f"read {ext}", best, median, cpu, f"{arrays / best / 1e9:7.2f} GB/s of arrays")
            del back
    return 0


if __name__ == "__main__":
    sys.exit(main())
