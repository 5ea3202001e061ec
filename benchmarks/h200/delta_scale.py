"""deltastep_gpu's bucket width (and other settings) on one GAP-scale graph in one process: the graph generated once
(seed 1, the sources of scale_probe.py: pick_sources seed 1), then each width's median a source, relaxations and rounds
for each variant (settings such as ``split=0`` beside the width), the answers of the widths named in --certify checked
by the certificate. One JSON record, rewritten after every step. Write-up: benchmarks/sssp-scale-h200.md ("Bucket
width at scale", "Hub chunks at scale").

usage (device, repo root, after `. benchmarks/h200/env.sh`):
    python3 benchmarks/h200/delta_scale.py KIND SCALE --out DIR [--deltas 0 8] [--certify 8] [--sources 4]
        [--variants - split=0,push=thread]
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from pathlib import Path

import numpy as np

from gpusp.data.generate import generate
from gpusp.measure.harness import solve_many
from gpusp.measure.sources import pick_sources
from gpusp.measure.validate import check_certificate
from gpusp.plan import parse_assignments


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kind", choices=("kron", "urand", "delaunay"))
    ap.add_argument("scale", type=int)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--deltas", type=int, nargs="+", default=[0, 8])
    ap.add_argument("--certify", type=int, nargs="*", default=[8])
    ap.add_argument("--sources", type=int, default=4)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--variants", nargs="+", default=["-"],
                    help="settings run at every width, each KEY=VALUE[,KEY=VALUE] ('-': the defaults)")
    args = ap.parse_args(argv)
    record = {"kind": args.kind, "scale": args.scale, "widths": {}}
    out = args.out / f"delta-{args.kind}{args.scale}.json"

    def save():
        out.write_text(json.dumps(record, indent=1, default=str))

    generate(args.kind, seed=1, scale=10)  # Numba's compile or cache load, untimed
    t0 = time.perf_counter()
    graph = generate(args.kind, seed=1, scale=args.scale)
    record.update(generate_s=time.perf_counter() - t0, n=graph.n, m=graph.m, name=graph.name,
                  distances=str(graph.dtype), default_delta=graph.default_delta())
    sources = pick_sources(graph, args.sources, seed=1)
    record["sources"] = sources
    t0 = time.perf_counter()
    record["hop_depth"] = graph.hop_landmarks()[0]
    record["hop_landmarks_s"] = time.perf_counter() - t0
    save()
    for delta, variant in itertools.product(args.deltas, args.variants):
        params = parse_assignments(variant.split(",")) if variant != "-" else {}
        key = str(delta) if variant == "-" else f"{delta}+{variant}"
        rows = record["widths"][key] = []
        for r in solve_many(graph, "deltastep_gpu", sources, trials=args.trials, warmup=1, delta=delta, **params):
            row = {"source": r.source, "samples_ms": r.timings.samples_ms,
                   "median_ms": float(np.median(r.timings.samples_ms)), "compile_s": r.timings.compile_s,
                   "relaxations": r.counters.get("relaxations"), "iterations": r.counters.get("iterations"),
                   "delta": r.counters.get("delta"), "split": r.counters.get("split"),
                   "reached": int((r.dist != graph.inf).sum())}
            rows.append(row)
            save()
            if delta in args.certify:
                verdict = check_certificate(graph, r.source, r.dist, r.parent)
                row.update(certificate_ok=verdict.ok, certificate_s=verdict.seconds)
                save()
        medians = [row["median_ms"] for row in rows]
        print(f"{graph.name} delta {delta} {variant}: median {np.median(medians):.1f} ms a source ({medians}), "
              f"{np.mean([row['relaxations'] for row in rows]) / graph.m:.2f} relaxations an arc, split "
              f"{rows[0]['split']}, certified {[row.get('certificate_ok') for row in rows]}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
