"""Time gpusp.read_graph and gpusp.write_graph on a real road graph: text parse against bare pandas, npz cache load.

Usage: python benchmarks/parse_speed.py [--graph PATH] [--repeats 7]

The graph defaults to USA-road-d.NY.gr.gz in the data mirror ($GPUSP_MIRROR, else ../shared/data
relative to the repository root). Prints best and median seconds per step; the box may be shared, so
the best time is the fairest figure.

The text parse is compared with a bare ``pandas.read_csv`` of the same decompressed text (written to a
temporary file first, so neither side pays for gunzip): the whitespace-separated read
(``sep=r"\\s+"``, the blanks gpusp accepts) and the single-space read (``sep=" "``, the fastest pandas
offers, which a tab or a double space would break). Both skip the header lines and return the
columns and nothing more: no CSR, no id or weight checks. gpusp's read (every check, the CSR graph,
the distance dtype) and a bare read are timed in turn, repeat after repeat, so that both see the same
load; the ratio is gpusp's time over pandas' (best over best, median over median).
"""

from __future__ import annotations

import argparse
import gzip
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

import gpusp
from gpusp.data.formats import detect_format, load_cached  # no public name for these two

ROOT = Path(__file__).resolve().parents[1]
MIRROR = Path(os.environ.get("GPUSP_MIRROR", ROOT.parent / "shared" / "data"))


def timed(fn, repeats):
    times, result = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times), result


def interleaved(fns: dict, repeats: int) -> dict:
    """{name: (best, median)}, the functions run in turn on every repeat (one warm-up round first)."""
    for fn in fns.values():
        fn()
    times = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {name: (min(ts), statistics.median(ts)) for name, ts in times.items()}


def report(label, best, median, extra=""):
    print(f"{label:<28} best {best:8.4f} s   median {median:8.4f} s   {extra}")


def header_lines(text_path: Path) -> int:
    """Lines before the first data line: comments and the problem line (.gr), comments (SNAP)."""
    count = 0
    with open(text_path, "rb") as fh:
        for count, line in enumerate(fh):
            if line[:1] not in (b"c", b"p", b"#", b"\n"):
                break
    return count


def compare_with_pandas(graph_path: Path, tmp: Path, repeats: int) -> None:
    text = tmp / graph_path.name.removesuffix(".gz")
    with open(graph_path, "rb") as fh:
        raw = fh.read()
    text.write_bytes(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    skip = header_lines(text)
    results = interleaved({
        "gpusp": lambda: gpusp.read_graph(text),
        "whitespace": lambda: pd.read_csv(text, sep=r"\s+", header=None, skiprows=skip),
        "single space": lambda: pd.read_csv(text, sep=" ", header=None, skiprows=skip),
    }, repeats)
    print(f"decompressed text {text.stat().st_size / 2**20:.1f} MiB, {skip} header lines, {repeats} rounds in turn")
    best, median = results["gpusp"]
    report("read_graph (decompressed)", best, median)
    for name, label in (("whitespace", 'pandas sep=r"\\s+"'), ("single space", 'pandas sep=" "')):
        b, md = results[name]
        report(label, b, md, f"gpusp / pandas: {best / b:.2f}x best, {median / md:.2f}x median")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graph", type=Path, default=MIRROR / "USA-road-d.NY.gr.gz")
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args(argv)
    if not args.graph.exists():
        print(f"no graph at {args.graph} (set GPUSP_MIRROR or pass --graph)", file=sys.stderr)
        return 2

    best, median, g = timed(lambda: gpusp.read_graph(args.graph), args.repeats)
    print(f"{args.graph.name}: n={g.n} m={g.m} ({args.graph.stat().st_size / 2**20:.1f} MiB on disk), "
          f"{args.repeats} repeats, {os.cpu_count()} CPUs")
    report("read_graph (text -> CSR)", best, median, f"{g.m / best / 1e6:.2f} M arcs/s at best")

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        if detect_format(args.graph) in ("gr", "snap"):
            compare_with_pandas(args.graph, tmp, args.repeats)
        npz = tmp / "g.npz"
        b, md, _ = timed(lambda: gpusp.write_graph(g, npz), args.repeats)
        report("write_graph npz", b, md, f"{npz.stat().st_size / 2**20:.1f} MiB")
        b, md, h = timed(lambda: gpusp.read_graph(npz), args.repeats)
        assert h.checksum() == g.checksum()
        report("read_graph npz", b, md, f"{b * 1000:.1f} ms at best")
        load_cached(args.graph, cache_dir=tmp)  # builds the cache
        b, md, _ = timed(lambda: load_cached(args.graph, cache_dir=tmp), args.repeats)
        report("load_cached (cache hit)", b, md)
        for ext in (".gr", ".plain", ".txt", ".gr.gz"):
            out = tmp / f"g{ext}"
            reps = max(1, args.repeats // 3) if ext.endswith(".gz") else args.repeats
            b, md, _ = timed(lambda out=out: gpusp.write_graph(g, out), reps)
            report(f"write_graph {ext}", b, md, f"{out.stat().st_size / 2**20:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
