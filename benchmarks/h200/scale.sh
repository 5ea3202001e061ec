#!/usr/bin/env bash
# Issue 37 on the lent H200: GAP-scale graphs end to end (benchmarks/h200/scale_probe.py: generated, written as .wsg,
# mapped back, deltastep_gpu and GAPBS's driver from the same file, the certificate on every answer), then
# config/scale-h200.yaml's graphs named in SWEEP through `gpusp bench` (benchmarks/h200/run.sh), its figures kept.
# usage (device, repo root): GPUSP_COMMIT=<sha> [SWEEP="kron-20 ..."] [SWEEP_LIMIT=3600] [PROBE_LIMIT=560]
#     [PROBE_ARGS="--gcsr"] benchmarks/h200/scale.sh ["kron 26" ...]
set -u
. benchmarks/h200/env.sh
export GPUSP_CACHE=/tmp/gpusp-cache
O=${OUT:-/tmp/out}
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; nproc; free -g | head -2; df -h /tmp | tail -1
  python3 -c "import numpy, numba; print('numpy', numpy.__version__, 'numba', numba.__version__)"; } > "$O/scale-host.txt"
{ time python3 -m gpusp.cli peers build gapbs --mirror .devdata --offline; } > "$O/scale-build.txt" 2>&1
for spec in "$@"; do
    read -r kind scale <<< "$spec"
    # shellcheck disable=SC2086
    timeout "${PROBE_LIMIT:-560}" python3 benchmarks/h200/scale_probe.py "$kind" "$scale" --out "$O" \
        --threads "$(nproc)" ${PROBE_ARGS:-} > "$O/probe-$kind$scale.log" 2>&1
    echo "probe $kind $scale exit $?"; tail -3 "$O/probe-$kind$scale.log"
done
if [ -n "${SWEEP:-}" ]; then
    # shellcheck disable=SC2086
    OUT=$O timeout "${SWEEP_LIMIT:-3600}" benchmarks/h200/run.sh config/scale-h200.yaml sweep $SWEEP > /dev/null 2>&1
    echo "sweep exit $?"; tail -5 "$O/sweep-log.txt"
    cp /tmp/bench-sweep/plots/scaling.png "$O/" 2>/dev/null || echo "no scaling figure"
fi
