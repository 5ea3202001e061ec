"""One deltastep_gpu source under Nsight Compute (issue 8: where an email-Enron round spends its time).

usage (on the device, repo root): ncu --kernel-name regex:nearfar --launch-skip 1 --launch-count 1 --section ...
    python3 benchmarks/h200/sssp_profile.py --data .devdata [--graph email-Enron] [--param key=value ...]
Loads the graph as sssp_fast.py does, runs the solver once untimed (JIT, the skipped launch), then once from the
first seeded source (the profiled launch), with launch=direct so that the profiler sees a plain kernel launch.
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

from sssp_fast import GRAPHS

from gpusp.measure.sources import pick_sources
from gpusp.solvers.deltastep import DeltaStepSolver


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--data", default=".devdata")
    p.add_argument("--graph", default="email-Enron", choices=list(GRAPHS))
    p.add_argument("--param", nargs="*", default=[], help="solver parameters as key=value")
    args = p.parse_args()
    graph = GRAPHS[args.graph][0](Path(args.data))
    params = {k: ast.literal_eval(v) for k, v in (kv.split("=", 1) for kv in args.param)}
    solver = DeltaStepSolver(graph, launch="direct", **params)
    solver.upload()
    source = pick_sources(graph, 16, 1)[0]
    solver.run(source)()  # compiles; the launch the profiler skips
    counters = solver.run(source)()
    print(args.graph, params, counters, flush=True)


if __name__ == "__main__":
    main()
