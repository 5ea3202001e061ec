#!/usr/bin/env bash
# The workflow itself on the lent GPU: snakemake over a config (none: the embedded default), then its HTML report.
# usage (on the device, repo root): GPUSP_COMMIT=<sha> benchmarks/h200/snakemake.sh NAME [snakemake arguments]
# Needs, carried along: .whl/ (numpy 2.4.6 cp312, jsonschema and its dependencies, Snakemake 9 and its
# dependencies but pulp, hence the greedy scheduler) and .devdata/ (the config's graphs and peers/ with the GAPBS
# archive: the mirror). Solves and validations take the resource gpu=1 both, so that no validation shares the
# host with a timed CPU baseline. Writes to $OUT/NAME: gpu.txt, snakemake-log.txt, report.html, tables/, plots/.
set -u
name=$1; shift
out=${OUT:-/tmp/out}/$name results=results/$name
mkdir -p "$out" /tmp/bin
[ -d /tmp/site/snakemake ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit
printf '#!/bin/sh\nexec python3 -m gpusp.cli "$@"\n' > /tmp/bin/gpusp && chmod +x /tmp/bin/gpusp
export PATH=/tmp/bin:$PATH PYTHONPATH=/tmp/site:$PWD/src PYTHONUNBUFFERED=1 NUMBA_CACHE_DIR=/tmp/numba-cache \
    GPUSP_MIRROR=$PWD/.devdata
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv > "$out/gpu.txt"
start=$(date +%s)
python3 -m snakemake --cores 16 --resources gpu=1 --set-resources validate_answer:gpu=1 --scheduler greedy \
    --config results="$results" simulate=never "$@" > "$out/snakemake-log.txt" 2>&1
echo "snakemake ($name): exit $? in $(( $(date +%s) - start )) s"
python3 -m snakemake --cores 1 --config results="$results" simulate=never "$@" --report "$out/report.html" \
    > "$out/report-log.txt" 2>&1
echo "report ($name): exit $?"
cp -r "$results/tables" "$results/plots" "$out/" 2>/dev/null
grep -l -i "error\|traceback" "$results"/logs/*/*/*/*.log "$results"/logs/*.log 2>/dev/null | head -5 | while read -r f; do
    echo "== $f"; tail -5 "$f"; done
