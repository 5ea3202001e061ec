"""Time gpusp.data.formats on a real road graph: text parse, npz cache load and the writers.

Usage: python benchmarks/parse_speed.py [--graph PATH] [--repeats 7]

The graph defaults to USA-road-d.NY.gr.gz in the data mirror ($GPUSP_MIRROR, else ../shared/data
relative to the repository root). Prints best and median seconds per step; the box may be shared, so
the best time is the fairest figure.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from gpusp.data.formats import load_cached, read_graph, write_graph

ROOT = Path(__file__).resolve().parents[1]
MIRROR = Path(os.environ.get("GPUSP_MIRROR", ROOT.parent / "shared" / "data"))


def timed(fn, repeats):
    times, result = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times), result


def report(label, best, median, extra=""):
    print(f"{label:<28} best {best:8.4f} s   median {median:8.4f} s   {extra}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graph", type=Path, default=MIRROR / "USA-road-d.NY.gr.gz")
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args(argv)
    if not args.graph.exists():
        print(f"no graph at {args.graph} (set GPUSP_MIRROR or pass --graph)", file=sys.stderr)
        return 2

    best, median, g = timed(lambda: read_graph(args.graph), args.repeats)
    print(f"{args.graph.name}: n={g.n} m={g.m} ({args.graph.stat().st_size / 2**20:.1f} MiB on disk), "
          f"{args.repeats} repeats, {os.cpu_count()} CPUs")
    report("read_graph (text -> CSR)", best, median, f"{g.m / best / 1e6:.2f} M arcs/s at best")

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        npz = tmp / "g.npz"
        b, md, _ = timed(lambda: write_graph(g, npz), args.repeats)
        report("write_graph npz", b, md, f"{npz.stat().st_size / 2**20:.1f} MiB")
        b, md, h = timed(lambda: read_graph(npz), args.repeats)
        assert h.checksum() == g.checksum()
        report("read_graph npz", b, md, f"{b * 1000:.1f} ms at best")
        load_cached(args.graph, cache_dir=tmp)  # builds the cache
        b, md, _ = timed(lambda: load_cached(args.graph, cache_dir=tmp), args.repeats)
        report("load_cached (cache hit)", b, md)
        for ext in (".gr", ".plain", ".txt", ".gr.gz"):
            out = tmp / f"g{ext}"
            reps = max(1, args.repeats // 3) if ext.endswith(".gz") else args.repeats
            b, md, _ = timed(lambda out=out: write_graph(g, out), reps)
            report(f"write_graph {ext}", b, md, f"{out.stat().st_size / 2**20:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
