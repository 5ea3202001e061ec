"""One solve of one source of a real graph, for a profiler (ncu) to watch: no warm-up, one trial.

usage (device, repo root, after ``. benchmarks/h200/env.sh``):
  ncu --page source --print-source sass --csv python3 benchmarks/h200/one_source.py USA-road-d.NY \
      deltastep_clusterasync '{"block": 512}'
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import gpusp  # noqa: E402
from gpusp.measure.sources import pick_sources  # noqa: E402
from road_sweep import load  # noqa: E402

graph = load(sys.argv[1], Path(".devdata"))
source = int(pick_sources(graph, 1, seed=1)[0])
res = gpusp.solve(graph, sys.argv[2], source, warmup=0, trials=1, **json.loads(sys.argv[3] if len(sys.argv) > 3 else "{}"))
print(sys.argv[2], source, res.timings.median_ms, res.counters)
