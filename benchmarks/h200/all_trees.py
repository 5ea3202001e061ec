"""Every shortest-path tree of a real graph on the GPU (issue 41, item 2): the sweep of gpusp.measure.alltrees with
its timings apart, a seeded sample of sources checked on the CPU, one JSON object on stdout.

usage (device, repo root, after ``. benchmarks/h200/env.sh``):
  python3 benchmarks/h200/all_trees.py USA-road-d.NY [TRIALS] [PARAMS_JSON or -] [TARGETS] [SOLVER]
TARGETS: that many seeded target vertices besides (an origin-destination table of every source x them).
SOLVER: a solver that sweeps (multisource_sssp, the default, or phast_gpu); phast_gpu's contraction is in setup_s and
its counters (contraction_s, upward_ms: the host's upward searches, which overlap the device's sweeps).
PARAMS_JSON {"gpus": P}: the sources split over P GPUs of the host (one spawned process each, which imports this
script: hence its main guard); each rank's figures under "ranks".
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from road_sweep import load

from gpusp.measure.alltrees import check_sample, sweep
from gpusp.solvers import registry


def main():
    name = sys.argv[1]
    trials = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    params = json.loads(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[3] != "-" else {}
    count = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    t0 = time.perf_counter()
    graph = load(name, Path(".devdata"))
    read_s = time.perf_counter() - t0
    solver = sys.argv[5] if len(sys.argv) > 5 else "multisource_sssp"
    spec = registry.get(solver)
    targets = np.random.default_rng(1).choice(graph.n, size=count, replace=False) if count else []
    t0 = time.perf_counter()
    out = sweep(graph, spec, spec.resolve(params), np.arange(graph.n), targets, trials=trials, warmup=1)
    wall_s = time.perf_counter() - t0  # set-up, bins, upload, the warm-up batch (JIT), every trial, download
    verdict = check_sample(graph, out, 16, seed=1)
    t = out.timing
    print(json.dumps({"graph": name, "solver": solver, "n": graph.n, "m": graph.m, "params": params,
                      "trees": int(out.sources.size),
                      "targets": int(out.targets.size), "read_s": read_s, "preprocess_s": t["preprocess_s"],
                      "setup_s": t["setup_s"], "bins_s": t["bins_s"], "h2d_ms": t["h2d_ms"],
                      "compile_s": t["compile_s"],
                      "sweep_ms": t["sweep_ms"], "reduce_ms": t["reduce_ms"], "d2h_ms": t["d2h_ms"],
                      "per_tree_ms": t["per_tree_ms"], "all_trees_s": t["end_to_end_s"], "wall_s": wall_s,
                      "bin_width": out.width, "bin_bound": out.bound,
                      "max_eccentricity": int(out.values["eccentricity"].max()), "validated": verdict["ok"],
                      "validation_s": verdict.get("seconds"), "mismatches": verdict["mismatches"],
                      "counters": out.counters, "ranks": t.get("ranks"), "ranks_prepare_s": t.get("ranks_prepare_s"),
                      "ranks_measure_s": t.get("ranks_measure_s")}, default=float))


if __name__ == "__main__":
    main()
