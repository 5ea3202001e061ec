#!/usr/bin/env bash
# Launch paths on the lent GPU, in one process order: the real-GPU tests of the native launch path and of the
# families named (CUDASIM=0), the C reference, the Python microbenchmark, the C reference again, and paper 000's
# Bellman-Ford variants on NY (round_floor.py: kernel time per round and the C floor; gpusp bench: both launchers).
# usage (device, repo root):
#   GPUSP_COMMIT=<sha> benchmarks/h200/launch.sh NAME [test files...]
# Needs .whl/ (numpy 2.4.6 cp312) and .devdata/ (USA-road-d.NY) carried. Writes $OUT/NAME.tar.gz.
set -u
name=$1; shift
out=/tmp/o/$name; mkdir -p "$out" /tmp/bin
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
printf '#!/bin/sh\nexec python3 -m gpusp.cli "$@"\n' > /tmp/bin/gpusp && chmod +x /tmp/bin/gpusp
export PATH=/tmp/bin:$PATH PYTHONPATH=/tmp/site:$PWD/src PYTHONUNBUFFERED=1 NUMBA_ENABLE_CUDASIM=0 \
    NUMBA_CACHE_DIR=/tmp/numba-cache GPUSP_MIRROR=$PWD/.devdata
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv > "$out/gpu.txt"
cat "$out/gpu.txt"
python3 -m pytest -q -p no:cacheprovider tests/solvers/common/test_common_launch.py "$@" > "$out/pytest-gpu.txt" 2>&1
echo "pytest on the GPU: exit $?"; tail -3 "$out/pytest-gpu.txt"
nvcc -O2 -arch=sm_90 benchmarks/h200/launch_micro.cu -o /tmp/launch_micro && /tmp/launch_micro > "$out/launch-c.csv"
python3 benchmarks/h200/launch_micro.py > "$out/launch-py.csv"
/tmp/launch_micro > "$out/launch-c-after.csv"
cat "$out"/launch-c.csv "$out"/launch-py.csv "$out"/launch-c-after.csv
python3 benchmarks/h200/round_floor.py .devdata/USA-road-d.NY.gr.gz "$out/launch-c.csv" > "$out/round-floor.csv" \
    2> "$out/round-floor-log.txt"
echo "round floor: exit $?"; cat "$out/round-floor.csv"
timeout 200 gpusp bench --config config/sweeps/launchers-ny.yaml --out "$out/ny" > "$out/ny-log.txt" 2>&1
echo "bench NY: exit $?"
python3 - "$out/ny" <<'PY'
import sys, pandas as pd
t = pd.read_csv(f"{sys.argv[1]}/tables/summary.csv")
print(t[[c for c in ("solver", "params", "median_ms", "iqr_ms", "iterations", "validated") if c in t]].to_string())
PY
tar -czf "$OUT/$name.tar.gz" -C /tmp/o "$name"
