#!/usr/bin/env bash
# One config timed with the working tree's code and with a baseline tree, in one device call on one card, so that a
# change is judged against its own baseline (benchmarks/README.md).
# usage (on the device, repo root): GPUSP_COMMIT=<sha> BASE_COMMIT=<sha> benchmarks/h200/compare.sh CONFIG BASE_DIR
#   [GRAPH ...]   (only these graphs of CONFIG, on both sides)
#   BASE_DIR holds the baseline's checkout, Snakefile, src/, workflow/ and config/ (here: `git archive <sha> Snakefile
#   src workflow config | tar -x -C .old`, carried as .old).
# Needs, carried along: .whl/ (numpy 2.4.6 cp312: the image's NumPy 2.5 breaks numba-cuda 0.30.4; Snakemake 9 and its
# dependencies, which `gpusp bench` runs and the image lacks) and .devdata/ (the graphs of the config).
# Writes to $OUT: gpu.txt, <side>-log.txt, <side>-summary.csv, <side>-samples.csv for side = base, new (in the order
# ORDER gives, default "base new"; run it both ways to tell a code effect from an order effect), and compare.txt
# (median of per-source medians, both sides, one row per job).
set -u
cfg=$1 base=$2
shift 2
graphs=()
[ $# -gt 0 ] && graphs=(--graphs "$@")
out=${OUT:-/tmp/out}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 NUMBA_ENABLE_CUDASIM=0 NUMBA_CACHE_DIR=/tmp/numba-cache
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv > "$out/gpu.txt"
for side in ${ORDER:-base new}; do
    if [ "$side" = base ]; then src=$base/src commit=${BASE_COMMIT:-unknown}; else src=$PWD/src commit=${GPUSP_COMMIT:-unknown}; fi
    echo "=== $side ($src, $commit)"
    rm -rf "/tmp/cmp-$side"  # a fresh run: a workflow's results left by an earlier call would not be measured again
    GPUSP_COMMIT=$commit PYTHONPATH=/tmp/site:$src python3 -m gpusp.cli bench --config "$cfg" --out "/tmp/cmp-$side" \
        --set mirror=.devdata "${graphs[@]}" 2>&1 | tee "$out/$side-log.txt"
    cp "/tmp/cmp-$side/tables/summary.csv" "$out/$side-summary.csv"
    cp "/tmp/cmp-$side/tables/samples.csv" "$out/$side-samples.csv"
done
PYTHONPATH=/tmp/site python3 - "$out" <<'PY' | tee "$out/compare.txt"
import sys
import pandas as pd
out = sys.argv[1]
keys = ["graph", "solver", "params"]
rows = {}
for side in ("base", "new"):
    s = pd.read_csv(f"{out}/{side}-samples.csv")
    per_source = s.groupby(keys + ["source"], dropna=False)["time_ms"].median().reset_index()
    g = per_source.groupby(keys)["time_ms"]
    rows[side] = pd.DataFrame({f"{side}_ms": g.median(), f"{side}_lo": g.min(), f"{side}_hi": g.max()})
    rows[side][f"{side}_valid"] = s.groupby(keys)["validated"].all()
table = rows["base"].join(rows["new"], how="outer")
table["new/base"] = table["new_ms"] / table["base_ms"]
print("median of per-source medians (ms), min and max of the per-source medians, validated")
print(table.reset_index().to_string(index=False, float_format=lambda x: f"{x:.4g}"))
PY
