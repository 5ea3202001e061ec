#!/usr/bin/env bash
# Issue 27 on the lent GPU: build Gunrock's driver (gpusp peers build gunrock, nvcc of the host), run the GPU tests of
# tests/solvers/peers/gunrock/test_gunrock_peer.py (exact distances on the awkward graphs, every load balance
# recorded, the build without the device fix shown wrong), then config/h200-sssp-peers.yaml through `gpusp bench` (benchmarks/h200/run.sh).
# usage (device, repo root): GPUSP_COMMIT=<sha> benchmarks/h200/peers.sh; leaves $OUT/peers-*.
set -u
. benchmarks/h200/env.sh
export GPUSP_CACHE=/tmp/gpusp-cache
O=${OUT:-/tmp/out}
nvcc --version | tail -2 > "$O/peers-build.txt"
{ time python3 -m gpusp.cli peers build gunrock --mirror .devdata --offline; } >> "$O/peers-build.txt" 2>&1
{ time python3 -m gpusp.cli peers build gapbs --mirror .devdata --offline; } >> "$O/peers-build.txt" 2>&1
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/solvers/peers/gunrock/test_gunrock_peer.py -k "not workflow" -rs > "$O/peers-tests.txt" 2>&1
tail -5 "$O/peers-tests.txt"
OUT=$O timeout 330 benchmarks/h200/run.sh config/h200-sssp-peers.yaml peers > /dev/null 2>&1
echo "bench exit $?"; grep -c "validation: ok" "$O/peers-log.txt"; grep -v "validation: ok" "$O/peers-log.txt" | grep -v Warn | grep -v "warn(" | tail -15
